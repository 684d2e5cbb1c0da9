/*
 * bench_gate.h - the --require gates of `ttsbuf bench` and `ttsbuf
 * merge` (bench_gate.c): parsed from NAME=VALUE, the default one, and
 * checked on every level's summary.
 */
#ifndef TTSBUF_CLI_BENCH_GATE_H
#define TTSBUF_CLI_BENCH_GATE_H

#include <stddef.h>

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

/* The gate as the report's last line says it: "success_share >= 1",
 * "ttft_s_p95 <= 0.8". */
void tb_cli_gate_text(char *buf, size_t len, const struct tb_cli_gate *g);

#endif
