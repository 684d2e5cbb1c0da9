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

/* The shares: the wait's parts in the order of a turn, the tool's wait
 * (tool_s, tool turns only) after ttft_s, v2v_s aside. */
#define TB_CLI_WAIT_SHARES (TB_TURN_LAT_PARTS)
/* Share i's key ("eou_s", "ttft_s", "tool_s", ...; "?" out of range). */
const char *tb_cli_bench_wait_share_key(int share);

/* Share i's value at a percentile (50 or 95): the part's percentile over
 * v2v_s's (NAN when either is not measured or v2v_s's is 0; tool_s's is
 * over the tool turns alone).  Percentiles do not add, so the shares need
 * not sum to 1; on a level of tool turns alone, one turn each, they do. */
double tb_cli_bench_wait_share(const struct tb_bench_summary *x, int share, int pct);

/* The report's lines: nothing when no record measured v2v_s; tool only
 * when a turn had a tool call. */
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
