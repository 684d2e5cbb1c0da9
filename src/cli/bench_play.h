/*
 * bench_play.h - `ttsbuf bench --audio SINK` (bench_play.c): one stream of the
 * run, heard.
 */
#ifndef TTSBUF_CLI_BENCH_PLAY_H
#define TTSBUF_CLI_BENCH_PLAY_H

#include "bench_opts.h"
#include "ttsbuf/bench.h"

/* --audio: plays one stream of the run through the sink (--play: the
 * most silence, or a request id).  0 when it played, or an error
 * (printed). */
int tb_cli_bench_play(struct tb_cli_bench *a, const struct tb_bench_recs *recs);

#endif
