/*
 * bench_cli.h - the parts of `ttsbuf bench` (cmd_bench.c runs them in
 * order): its options and their checks (bench_opts.c), the --out
 * directory (bench_out.c), and playing one stream after the run
 * (bench_play.c).  CLI code: errors are printed here, exit codes returned.
 */
#ifndef TTSBUF_CLI_BENCH_CLI_H
#define TTSBUF_CLI_BENCH_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "audio.h"
#include "bench_report.h"
#include "common.h"
#include "request.h"
#include "ttsbuf/bench.h"

#define TB_CLI_BENCH_MAX_TOKENS 300   /* --max-tokens' default */
#define TB_CLI_BENCH_OPEN_REQUESTS 50 /* --requests' default with --rate */

/* What the command line asked for. */
struct tb_cli_bench {
    struct tb_cli_common c;
    struct tb_cli_audio au;
    const char *play;
    struct tb_cli_request q;
    const char *prompts_file, *out, *conc, *rates, *shard;
    double duration;
    size_t requests, warmup, max_conc, seed, shards;
    int quiet, csv, poisson, force;
    const char *html;
    size_t html_streams;
    struct tb_gate gates[TB_GATES_MAX];
    size_t ngates;
};

/* Parses and checks the options into *a (initialised here).  Returns -1
 * to go on, or an exit code (--help printed, or the error). */
int tb_cli_bench_parse(int argc, char **argv, struct tb_cli_bench *a);

/* --require G=V (bench and merge): adds a gate to gates[*n] (at most
 * TB_GATES_MAX).  1, or -1 with the error printed (an option handler's
 * answer). */
int tb_cli_gate_option(struct tb_gate *gates, size_t *n, const char *arg);

/* The levels (-c or --rate) and the shard (--shard, else an index from
 * Kubernetes or Slurm with --shards, else 0/1) into m.  0 or an exit code
 * (the error printed). */
int tb_cli_bench_plan(const struct tb_cli_bench *a, struct tb_bench_meta *m);

/* The options that shape the records (they must match to merge) as a JSON
 * object's canonical text into m->options, and when and by which ttsbuf
 * the run began.  0, or -1 when out of memory or too long. */
int tb_cli_bench_meta_options(struct tb_bench_meta *m, const struct tb_sim_opts *o, long max_tokens,
                              const char *api);

/* --out DIR: makes DIR and DIR/traces with no earlier run's files in them
 * (refused, or removed with force: a later `sweep DIR/traces` must not mix
 * runs) and opens the records file with its header into *rf.  0 or an exit
 * code (the error printed). */
int tb_cli_bench_out_open(const char *dir, const struct tb_bench_meta *m, int force, FILE **rf);

/* A level's name (tb_bench_level_name: "c=10", "rate=5/s (poisson)", as
 * the report, the records and the page name it) as a file name's part:
 * "c=10", "rate=5ps-poisson", "rate=5ps-constant-max8". */
void tb_cli_bench_level_stem(const struct tb_bench_level *l, char *out, size_t len);

/* Writes recs from index `from` to rf, each with its trace in
 * DIR/traces/STEM-ID.jsonl (STEM: its level's).  0 or -1 (printed). */
int tb_cli_bench_out_level(FILE *rf, const char *dir, const struct tb_bench_meta *m,
                           struct tb_bench_recs *recs, size_t from);

/* Writes DIR's summary (the --json object); a failure is printed. */
void tb_cli_bench_out_summary(const char *dir, const struct tb_bench_meta *m,
                              const struct tb_bench_summary *sums);

/* --audio: plays one stream of the run through the sink (--play: the
 * most silence, or a request id).  Returns -1 when it played, or an exit
 * code (the error printed). */
int tb_cli_bench_play(struct tb_cli_bench *a, const struct tb_bench_recs *recs);

#endif
