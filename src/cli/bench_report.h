/*
 * bench_report.h - what `ttsbuf bench` and `ttsbuf merge` print: the
 * per-level summary (human, --json, --csv), and the --require gates.
 */
#ifndef TTSBUF_CLI_BENCH_REPORT_H
#define TTSBUF_CLI_BENCH_REPORT_H

#include <stdio.h>

#include "ttsbuf/bench.h"

#define TB_GATES_MAX 32

/* A --require gate: NAME=VALUE. */
struct tb_gate {
    char name[32];
    int metric;   /* enum tb_bench_metric, or -1 for the level-wide ones */
    int stat;     /* 0 p50, 1 p95, 2 p99, 3 min, 4 max */
    int which;    /* level-wide: 0 gapless, 1 success, 2 errors, 3 system-tps */
    int at_least; /* value must be >= limit (else <=) */
    double limit;
};

/* Parses "ttfa-p95=0.8"; 0, or -1 with the error printed. */
int tb_gate_parse(const char *s, struct tb_gate *g);

/* Checks every gate on every level; prints one line per failure to
 * stderr.  Returns the failures. */
size_t tb_gates_check(const struct tb_gate *g, size_t ng, const struct tb_bench_meta *m,
                      const struct tb_bench_summary *s);

/* The three outputs.  s has m->nlevels entries. */
void tb_bench_report_human(FILE *f, const struct tb_bench_meta *m,
                           const struct tb_bench_summary *s);
void tb_bench_report_json(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_summary *s);
void tb_bench_report_csv(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_summary *s);

/* Summaries of every level of recs (s must hold m->nlevels).  Returns 0
 * or -1 with the error printed. */
int tb_bench_summaries(const struct tb_bench_meta *m, const struct tb_bench_recs *recs,
                       struct tb_bench_summary *s);

#endif
