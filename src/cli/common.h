/*
 * common.h - what the subcommands share: the source options (--trace,
 * --synth, --preset), the playout and report options, their --help text,
 * loading the chosen stream, and recording it.
 */
#ifndef TTSBUF_CLI_COMMON_H
#define TTSBUF_CLI_COMMON_H

#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>

#include "cli.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"

enum {
    TB_O_TRACE = 256,
    TB_O_SYNTH,
    TB_O_PRESET,
    TB_O_CHUNK,
    TB_O_MINCHARS,
    TB_O_WPM,
    TB_O_LAT,
    TB_O_PREROLL,
    TB_O_SLOTS,
    TB_O_BYTES,
    TB_O_JSON,
    TB_O_GAPS,
    TB_O_RECORD,
    TB_O_FAILU,
    TB_O_REBUFFER,
    TB_O_SVG,
    TB_O__COMMON_END
};

/* Option tables read best one entry per line. */
/* clang-format off */
#define TB_SOURCE_LONGOPTS                                       \
    {"trace", required_argument, NULL, TB_O_TRACE},              \
    {"synth", required_argument, NULL, TB_O_SYNTH},              \
    {"preset", required_argument, NULL, TB_O_PRESET}

#define TB_PLAYOUT_LONGOPTS                                      \
    {"chunk", required_argument, NULL, TB_O_CHUNK},              \
    {"min-chars", required_argument, NULL, TB_O_MINCHARS},       \
    {"wpm", required_argument, NULL, TB_O_WPM},                  \
    {"tts-latency", required_argument, NULL, TB_O_LAT},          \
    {"preroll", required_argument, NULL, TB_O_PREROLL},          \
    {"ring-slots", required_argument, NULL, TB_O_SLOTS},         \
    {"ring-bytes", required_argument, NULL, TB_O_BYTES},         \
    {"json", no_argument, NULL, TB_O_JSON},                      \
    {"gaps", required_argument, NULL, TB_O_GAPS},                \
    {"record", required_argument, NULL, TB_O_RECORD},            \
    {"fail-on-underrun", no_argument, NULL, TB_O_FAILU},         \
    {"rebuffer", no_argument, NULL, TB_O_REBUFFER},              \
    {"svg", required_argument, NULL, TB_O_SVG}
/* clang-format on */

struct tb_cli_common {
    struct tb_sim_opts o;
    const char *trace, *synth, *preset, *record;
    const char *svg; /* --svg FILE: the timeline picture */
    int nsources, json, fail_on_underrun;
    size_t max_gaps;
};

void tb_cli_common_init(struct tb_cli_common *a);

/* Handles one shared option: 1 handled, 0 not a shared option, -1 a bad
 * value (the error is printed). */
int tb_cli_common_option(struct tb_cli_common *a, int c, const char *arg);

/* The error for getopt's ':' (missing value) or '?' (unknown option);
 * returns TB_EXIT_USAGE. */
int tb_cli_bad_option(const char *cmd, int c, char **argv);

/* Installs the SIGINT/SIGTERM handler of `run` and `bench` (idempotent)
 * and returns the flag it sets: a lock-free atomic, async-signal-safe, set
 * on whichever thread takes the signal and read by the network loop, which
 * then ends the run and flushes what it has. */
atomic_int *tb_cli_catch_interrupts(void);

/* Loads the chosen source (default_preset when none was given).  Returns
 * -1 to go on, or an exit code (the error is printed).  label holds the
 * source's name for the report. */
int tb_cli_load_source(const struct tb_cli_common *a, const char *default_preset,
                       struct tb_stream *s, struct tb_report_src *src, char *label,
                       size_t labellen);

/*
 * tb_cli_out_close - ends a write to path that a writer returned rc for:
 * closes f (flushes it when it is stdout) and, when rc or the close
 * failed, prints "FLAG: writing PATH failed: REASON" and returns
 * TB_EXIT_USAGE; else -1 (go on).  For an I/O error REASON is the
 * system's (errno of the failed write or close: "No space left on
 * device"), not a generic "input/output error".
 */
int tb_cli_out_close(const char *flag, const char *path, FILE *f, int rc);

/* Writes the stream as a trace to path ("-": stdout).  Returns -1 to go
 * on, or TB_EXIT_USAGE (the error is printed). */
int tb_cli_record(const char *path, const struct tb_stream *s);

/* tb_play_fn that collects underrun chunks into a struct tb_gap_list. */
void tb_cli_collect_gap(void *ud, const struct tb_play *pl);

/* Every chunk's schedule (for --svg) and the underruns among them. */
struct tb_cli_plays {
    struct tb_gap_list *gaps;
    struct tb_gap_list all; /* every chunk, when keep_all */
    int keep_all;
};

/* tb_play_fn over a struct tb_cli_plays. */
void tb_cli_collect_play(void *ud, const struct tb_play *pl);

/* Writes the --svg timeline of one run to path.  Returns -1 to go on, or
 * TB_EXIT_USAGE (the error is printed). */
int tb_cli_svg_timeline(const char *path, const struct tb_report_src *src,
                        const struct tb_sim_opts *o, const struct tb_stream *s,
                        const struct tb_gap_list *all, const struct tb_sim_result *r);
/* sim --import SPEC (cmd_import.c): loads the file; with one request to
 * play (the only one, or `request` >= 0) moves it into *s and returns -1
 * to go on; with several and request < 0 prints the per-request table
 * (or JSON lines) and returns an exit code, as it does on errors. */
int tb_cli_import(const struct tb_cli_common *a, const char *spec, long request,
                  struct tb_stream *s, struct tb_report_src *src, char *label, size_t labellen);

/* --help fragments. */
void tb_cli_usage_sources(FILE *f, const char *default_preset);
void tb_cli_usage_playout(FILE *f);
void tb_cli_usage_tables(FILE *f);

#endif
