/*
 * bench_wait.h - where a bench level's wait went (bench_wait.c): each part
 * of the turns' voice-to-voice wait (turnlat.h) as a share of v2v_s at its
 * p50 and p95, in the report and the JSON summary, and the parts' blocks
 * per turn index.  Output only; any thread.
 */
#ifndef TTSBUF_CLI_BENCH_WAIT_H
#define TTSBUF_CLI_BENCH_WAIT_H

#include <stdio.h>

#include "ttsbuf/bench_stats.h"
#include "ttsbuf/turnlat.h"

struct cJSON;

/* Part i's share of the wait at a percentile (50 or 95): the part's
 * percentile over v2v_s's (NAN when either is not measured or v2v_s's is
 * 0).  Percentiles do not add, so the shares need not sum to 1. */
double tb_cli_bench_wait_share(const struct tb_bench_summary *x, int part, int pct);

/* The report's lines: nothing when no record measured v2v_s. */
void tb_cli_bench_wait_lines(FILE *f, const struct tb_bench_summary *x);

/* The level's "latency_share": {"p50": {part: share}, "p95": {...}}. */
void tb_cli_bench_wait_json(struct cJSON *o, const struct tb_bench_summary *x);

/* A bar of the wait's picture (svg.h): one turn's parts (l), or a level's
 * parts at a percentile (50 or 95) with v2v_s's as its total. */
struct tb_svg_wait;
void tb_cli_wait_bar(struct tb_svg_wait *b, const char *label, const struct tb_turn_lat *l);
void tb_cli_wait_bar_pct(struct tb_svg_wait *b, const char *label, const struct tb_bench_summary *x,
                         int pct);

/* A turn index's "latency": {part: its block}. */
void tb_cli_bench_wait_turn_json(struct cJSON *o, const struct tb_bench_turn *r);

#endif
