/*
 * bench_report.h - what `ttsbuf bench` and `ttsbuf merge` print: the
 * per-level summary (human, --json, --csv), and the --require gates.
 */
#ifndef TTSBUF_CLI_BENCH_REPORT_H
#define TTSBUF_CLI_BENCH_REPORT_H

#include <stdio.h>

#include "ttsbuf/bench.h"

#define TB_CLI_GATES_MAX 32

/* A --require gate: NAME=VALUE. */
struct tb_cli_gate {
    char name[32];
    int metric;     /* enum tb_bench_metric, or -1 for the level-wide ones */
    int stat;       /* index into tb_stats_fields */
    int which;      /* level-wide: 0 gapless_share, 1 success_share, 2 errors, 3 system_tps,
                     * 4 goodput (the share), 5 goodput_per_s */
    int goodput;    /* which is 4 or 5: needs SLOs */
    int at_least;   /* value must be >= limit (else <=) */
    int is_default; /* added by tb_cli_gates_default, not asked for */
    double limit;
};

/* Parses "ttfa_s_p95=0.8" (or a pre-vocabulary name such as "ttfa-p95");
 * 0, or TB_EINVAL / TB_ERANGE (printed). */
int tb_cli_gate_parse(const char *s, struct tb_cli_gate *g);

/* The default gate: success_share=1 (every request must succeed), added
 * to g (n gates, room for TB_CLI_GATES_MAX) unless a success_share or errors
 * gate says which failures are allowed.  bench and merge use it. */
void tb_cli_gates_default(struct tb_cli_gate *g, size_t *n);

/* Checks every gate on every level; prints one line per failure to
 * stderr, after flushing stdout (so that on one terminal or log the
 * failures come after the report).  Returns the failures. */
size_t tb_cli_gates_check(const struct tb_cli_gate *g, size_t ng, const struct tb_bench_meta *m,
                          const struct tb_bench_summary *s);

/* The three outputs.  s has m->nlevels entries.  The human report is
 * headed "ttsbuf COMMAND:" and ends with the ng gates in force (none:
 * g NULL, ng 0). */
void tb_cli_bench_report_human(FILE *f, const char *command, const struct tb_bench_meta *m,
                               const struct tb_bench_summary *s, const struct tb_cli_gate *g,
                               size_t ng);
/* The summary document (schema/bench_summary.schema.json); command is
 * "bench" or "merge".  Returns 0, TB_ENOMEM or TB_EIO. */
int tb_cli_bench_report_json(FILE *f, const char *command, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s);
void tb_cli_bench_report_csv(FILE *f, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s);

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
