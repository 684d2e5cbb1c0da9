/*
 * bench_out.h - `ttsbuf bench --out DIR` (bench_out.c): the directory (never
 * mixing two runs), the records file, each stream's trace, the summary.
 * Helpers as cli.h says.
 */
#ifndef TTSBUF_CLI_BENCH_OUT_H
#define TTSBUF_CLI_BENCH_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "ttsbuf/bench.h"
#include "ttsbuf/sim.h"

/* The options that shape the records (they must match to merge) as a JSON
 * object's canonical text into m->options, and when and by which ttsbuf
 * the run began.  0, or (printed) TB_ENOMEM, TB_EINVAL for options too
 * long to hold (a long --tts-latency FILE path).  A --retry policy other
 * than none is its "retry" key; --llm-capacity (llm_capacity > 0) its
 * "llm_capacity". */
struct tb_cli_tts;
struct tb_cli_turn;
struct tb_bench_retry;
struct tb_cli_tool;
int tb_cli_bench_meta_options(struct tb_bench_meta *m, const struct tb_sim_opts *o,
                              const struct tb_cli_tts *tts, const struct tb_cli_turn *turn,
                              const struct tb_bench_retry *retry, size_t llm_capacity, const struct tb_cli_tool *tool,
                              long max_tokens, const char *api);

/* --out DIR: makes DIR and DIR/traces with no earlier run's files in them
 * (refused, or removed with force: a later `sweep DIR/traces` must not mix
 * runs) and opens the records file with its header into *rf.  0, or
 * (printed) TB_EINVAL for a directory that cannot be used, TB_EIO. */
int tb_cli_bench_out_open(const char *dir, const struct tb_bench_meta *m, int force, FILE **rf);

/* A level's name (tb_bench_level_name: "c=10", "rate=5/s (poisson)", as
 * the report, the records and the page name it) as a file name's part:
 * "c=10", "rate=5ps-poisson", "rate=5ps-constant-max8". */
void tb_cli_bench_level_stem(const struct tb_bench_level *l, char *out, size_t len);

/* The traces file of the level --out is writing: a level's traces one
 * after another, each naming its request, in DIR/traces/STEM.jsonl
 * (STEM: the level's; STEM-I-of-N.jsonl for shard I of N), which each
 * record names.  Zeroed: none open. */
struct tb_cli_bench_traces {
    FILE *tf;
    uint32_t level;
    char path[4200], rel[160];
};

/* Writes record r (its stream in it) to rf, and its trace at the end of
 * its level's file (opened at the level's first record, the previous
 * level's closed; the stream's header is set from m).  0 or an error
 * (printed): TB_EINVAL (a file that cannot be created), TB_EIO,
 * TB_ENOMEM.  As each request ends (bench.h's record callback) or when
 * its level has ended. */
int tb_cli_bench_out_rec(FILE *rf, struct tb_cli_bench_traces *t, const char *dir,
                         const struct tb_bench_meta *m, struct tb_bench_rec *r);

/* Closes t's file, if open: 0, or TB_EIO / TB_ENOMEM (printed);
 * trc: the error a write to it already met (reported here), or 0. */
int tb_cli_bench_traces_close(struct tb_cli_bench_traces *t, int trc);

/* tb_cli_bench_out_rec for recs from index `from` on (one level's), its
 * traces file closed, then rf flushed. */
int tb_cli_bench_out_level(FILE *rf, const char *dir, const struct tb_bench_meta *m,
                           struct tb_bench_recs *recs, size_t from);

/* Writes DIR's summary (the --json object).  0 or an error (printed). */
int tb_cli_bench_out_summary(const char *dir, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *sums);

#endif
