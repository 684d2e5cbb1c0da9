/*
 * bench_priv.h - private to libttsbuf: what a load level asks of this
 * shard (bench.c), for the level's run (bench_run.c, bench_threads.c).
 * Pure; any thread.
 */
#ifndef TTSBUF_BENCH_PRIV_H
#define TTSBUF_BENCH_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/bench.h"

/* Returns 0, or TB_EINVAL with the reason in err: no URL, no prompts, a
 * shard outside its count, neither a request count nor a duration, a
 * concurrency outside 1..TB_BENCH_CONC_MAX, a bad rate or cap, an unknown
 * dialect. */
int tb_bench_opts_check(const struct tb_bench_opts *o, char *err, size_t errlen);

/* This shard's share of the level (bench.h): *target measured requests
 * (SIZE_MAX: until the duration), or calls for a level of calls, *cap
 * streams (or calls) in flight, *rate arrivals per second. */
void tb_bench_shard_share(const struct tb_bench_opts *o, size_t *target, size_t *cap, double *rate);

/* An exponential variate with mean 1 from *rng (xorshift64*, a 53-bit
 * uniform; *rng never 0). */
double tb_bench_expo(uint64_t *rng);

#endif
