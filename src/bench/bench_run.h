/*
 * bench_run.h - private to libttsbuf: one load level of `ttsbuf bench` on
 * one event loop (bench_run.c), which tb_bench_run (bench_threads.c) runs
 * on the calling thread or on each loop thread.
 *
 * Threads: the calling thread runs the loop; one call per loop thread.
 */
#ifndef TTSBUF_BENCH_RUN_H
#define TTSBUF_BENCH_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/bench.h"
#include "ttsbuf/bench_rec.h"

/* tb_bench_level - tb_bench_run's level on one event loop, on the calling
 * thread (bench_run.c): o's shard of the level, its records appended to
 * out.  origin: CLOCK_MONOTONIC seconds (tb_clock's) where level time
 * starts when there is no warm-up (loop threads share it), or 0: when the
 * loop is ready.  Returns as tb_bench_run. */
int tb_bench_level(const struct tb_bench_opts *o, uint32_t level, struct tb_bench_recs *out,
                   double origin, char *err, size_t errlen);

#endif
