/*
 * compare.h - `ttsbuf compare`'s runs side by side, as its parts share
 * them (types only): the command reads the runs, holds their options
 * against each other and summarises each level of each (cmd_compare.c);
 * the rows table, --json and --csv write them (compare_rows.h); --html
 * draws them (compare_html.h).
 */
#ifndef TTSBUF_CLI_COMPARE_H
#define TTSBUF_CLI_COMPARE_H

#include <cJSON.h>
#include <stddef.h>

#include "ttsbuf/bench.h"

#define TB_CLI_CMP_RUNS_MAX 12 /* the palette's colours: one a run */

/* One run: its label, its path as given, its records (shards merged) and
 * their header, and its options parsed. */
struct tb_cli_cmp_run {
    char label[64];
    const char *path; /* as given (argv) */
    struct tb_bench_meta meta;
    struct tb_bench_recs recs;
    cJSON *opts; /* meta.options parsed */
};

/* One option whose value differs between runs: its values by run (JSON
 * text, or NULL when the run does not have it). */
struct tb_cli_cmp_diff {
    char key[64];
    char *val[TB_CLI_CMP_RUNS_MAX];
    int refuses;
};

/* Everything one `ttsbuf compare` holds. */
struct tb_cli_compare {
    int json, csv, force;
    const char *html;
    struct tb_cli_cmp_run run[TB_CLI_CMP_RUNS_MAX];
    size_t nrun;
    char levels[TB_BENCH_LEVELS_MAX * TB_CLI_CMP_RUNS_MAX][64]; /* union, first seen first */
    size_t nlevels;
    struct tb_bench_summary *sum; /* [level][run]; requests 0 + lidx -1: not run */
    int *lidx;                    /* [level][run]: the run's level index, or -1 */
    struct tb_cli_cmp_diff diff[64];
    size_t ndiff;
};

/* The summary of run r at the level k of the union, or NULL when the run
 * did not run that level. */
static inline const struct tb_bench_summary *tb_cli_compare_sum(const struct tb_cli_compare *x,
                                                                size_t k, size_t r)
{
    return x->lidx[k * x->nrun + r] >= 0 ? &x->sum[k * x->nrun + r] : NULL;
}

#endif
