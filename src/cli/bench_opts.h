/*
 * bench_opts.h - `ttsbuf bench`'s options (bench_opts.c): their rows, parsing
 * and checking them, and the plan they make: the load levels and this
 * process's shard.  Helpers as cli.h says.
 */
#ifndef TTSBUF_CLI_BENCH_OPTS_H
#define TTSBUF_CLI_BENCH_OPTS_H

#include <stddef.h>

#include "audio.h"
#include "bench_report.h"
#include "optdoc.h"
#include "options.h"
#include "request.h"
#include "retry_opts.h"
#include "tool_opts.h"
#include "tts_live.h"
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
    struct tb_cli_gate gates[TB_CLI_GATES_MAX];
    size_t ngates;
    struct tb_bench_slo slo;   /* --slo: voice goodput */
    struct tb_cli_tts_live tl; /* --tts-url: a real TTS per stream */
    /* Calls (--conversations FILE|builtin): the levels (--calls or
     * --call-rate), the measured calls per level (0: the default), the
     * turns per call (0: all) and the caller's speaking time. */
    const char *convos, *calls, *call_rates, *user_turn;
    size_t call_count, turns;
    struct tb_uturn uturn;
    const char *barge_in, *barge_in_at; /* --barge-in P, --barge-in-at SPEC */
    double barge_p;
    struct tb_uturn barge_at;
    size_t threads; /* --threads N; 0: auto */
    struct tb_bench_retry retry; /* --retry, --retry-max */
    struct tb_cli_tool tool;     /* --tool-latency, --filler */
    size_t tts_capacity;         /* --tts-capacity N (0: none) */
    size_t llm_capacity;         /* --llm-capacity N (0: none) */
};

#define TB_CLI_BENCH_OPEN_CALLS 10 /* --call-count's default with --call-rate */

/* Parses and checks the options into *a (initialised here) with doc's
 * rows (tb_cli_bench_secs).  0, TB_CLI_DONE (--help printed), or an error
 * (printed). */
int tb_cli_bench_parse(int argc, char **argv, const struct tb_cmddoc *doc, struct tb_cli_bench *a);

/* bench's option rows and its man page's notes, for its tb_cmddoc. */
extern const struct tb_optsec tb_cli_bench_secs[];
extern const char *const tb_cli_bench_notes[];

/* --require G=V (bench and merge): adds a gate to gates[*n] (at most
 * TB_CLI_GATES_MAX).  0, or an error (printed). */
int tb_cli_gate_option(struct tb_cli_gate *gates, size_t *n, const char *arg);

/* --slo KEY=VALUE (bench): adds an SLO to *s.  0, or TB_EINVAL (printed:
 * one line naming the key and the value). */
int tb_cli_slo_option(struct tb_bench_slo *s, const char *arg);

/* The levels (-c or --rate), the SLOs and the shard (--shard, else an index from
 * Kubernetes or Slurm with --shards, else 0/1) into m.  0 or TB_EINVAL
 * (printed). */
int tb_cli_bench_plan(const struct tb_cli_bench *a, struct tb_bench_meta *m);

#endif
