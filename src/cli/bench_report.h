/*
 * bench_report.h - what `ttsbuf bench` and `ttsbuf merge` print: the
 * per-level summary (human, --json, --csv); the --require gates they
 * check are bench_gate.h's.
 */
#ifndef TTSBUF_CLI_BENCH_REPORT_H
#define TTSBUF_CLI_BENCH_REPORT_H

#include <cJSON.h>
#include <stdio.h>

#include "bench_gate.h"
#include "ttsbuf/bench.h"

/* The three outputs.  s has m->nlevels entries.  The human report is
 * headed "ttsbuf COMMAND:", says per level how its calls went when calls
 * (m->nlevels counts, bench_calls.h) is not NULL, and ends with the ng
 * gates in force (none: g NULL, ng 0). */
void tb_cli_bench_report_human(FILE *f, const char *command, const struct tb_bench_meta *m,
                               const struct tb_bench_summary *s,
                               const struct tb_bench_calls_count *calls,
                               const struct tb_cli_gate *g, size_t ng);
/* The summary document (schema/bench_summary.schema.json); command is
 * "bench" or "merge".  Returns 0, TB_ENOMEM or TB_EIO. */
int tb_cli_bench_report_json(FILE *f, const char *command, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s);
void tb_cli_bench_report_csv(FILE *f, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s);

/* A level's gapless share as every output gives it: NaN ("-", null, an
 * empty cell) when no turn was heard to its end (none ok, or every one
 * interrupted: bench_stats.h), else the summary's gapless_share. */
double tb_cli_bench_gapless(const struct tb_bench_summary *x);
/* A share as a percentage with one decimal ("45.0%"), or "-" when NaN;
 * returns buf. */
const char *tb_cli_bench_pct(char *buf, size_t len, double share);

/* What the JSON documents of bench, merge and compare share: a level's
 * "barge_in" block, always (bench_stats.h's counts of the turns the caller
 * interrupted: interruptions, interrupted_share, interrupted_gapless,
 * heard_whole, good, tokens_unheard, chars_unplayed; each null without
 * barge-in, good null without SLOs), and its "by_turn" rows (calls only:
 * nothing when the level has no turn). */
void tb_cli_bench_barge_json(cJSON *o, const struct tb_bench_summary *x);
void tb_cli_bench_turns_json(cJSON *o, const struct tb_bench_summary *x);
/* The table by turn index, as bench, merge and compare print it: the
 * headings after the first column(s), and a row's cells: n, ok, TTFT and
 * first audio p50 and p95, silence p95, the good share ("-" without
 * SLOs) and, when barge, the turns interrupted ("-" when x had no
 * barge-in); each ends its line. */
void tb_cli_bench_turn_head(FILE *f, int barge);
void tb_cli_bench_turn_cells(FILE *f, const struct tb_bench_summary *x,
                             const struct tb_bench_turn *r, int barge);
/* A CSV cell after a comma: the number, or empty when not finite. */
void tb_cli_bench_csv_num(FILE *f, double v);
/* The barge-in block as CSV cells (barge_in_KEY): its header when x is
 * NULL, else x's values, each after a comma. */
void tb_cli_bench_barge_csv(FILE *f, const struct tb_bench_summary *x);

/* One note on stderr when records carry a reader's warning: how many,
 * and the first one's text (nothing when quiet: -q is errors only).
 * bench and merge say it alike. */
void tb_cli_bench_report_warnings(const struct tb_bench_recs *recs, int quiet);

/* Summaries of every level of recs (s must hold m->nlevels), with the
 * run's SLOs (m->slo).  0 or TB_ENOMEM (printed).  Free them with
 * tb_cli_bench_summaries_free (s may be NULL). */
int tb_cli_bench_summaries(const struct tb_bench_meta *m, const struct tb_bench_recs *recs,
                           struct tb_bench_summary *s);
void tb_cli_bench_summaries_free(const struct tb_bench_meta *m, struct tb_bench_summary *s);

#endif
