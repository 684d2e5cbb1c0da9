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
#include "optdoc.h"
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
    TB_O_HTML,
    TB_O__COMMON_END
};

/* Their rows: tb_opt_sources, tb_opt_playout, tb_opt_report (optdoc.h). */

struct tb_cli_common {
    struct tb_sim_opts o;
    const char *trace, *synth, *preset, *record;
    const char *svg;  /* --svg FILE: the timeline picture */
    const char *html; /* --html FILE: the self-contained page */
    int nsources, json, fail_on_underrun;
    int failed_ok; /* a --trace that holds no event loads when it is the
                    * recording of a request that failed or was cut off
                    * (its end says so): sim reports it */
    size_t max_gaps;
};

void tb_cli_common_init(struct tb_cli_common *a);

/* Handles one shared option: 1 handled, 0 not a shared option, -1 a bad
 * value (the error is printed). */
int tb_cli_common_option(struct tb_cli_common *a, int c, const char *arg);

/* One option of the shared groups a command takes, tried in turn: the
 * common options (a), the request's (q) and the speech's (au); NULL for a
 * group the command does not take.  1 handled, 0 none of theirs, -1 a bad
 * value (the error printed): an option handler's answer for
 * tb_cli_parse. */
struct tb_cli_request;
struct tb_cli_audio;
int tb_cli_groups_option(struct tb_cli_common *a, struct tb_cli_request *q, struct tb_cli_audio *au,
                         int c, const char *arg);

/* Installs the SIGINT/SIGTERM handler of `run` and `bench` (idempotent)
 * and returns the flag it sets: a lock-free atomic, async-signal-safe, set
 * on whichever thread takes the signal and read by the network loop, which
 * then ends the run and flushes what it has. */
atomic_int *tb_cli_catch_interrupts(void);

/* Prints the error rc, err of loading the trace at path; when the file is
 * another tool's benchmark result (tb_import_detect), adds that it is and
 * how to read it: `ttsbuf CMD --import PATH` (cmd: "sim" or "sweep"). */
void tb_cli_trace_error(const char *cmd, const char *path, int rc, const char *err);

/* The operands of sim and serve (argv[first..argc)): none, or one FILE,
 * taken as --trace FILE.  Returns -1 to go on, or TB_EXIT_USAGE (printed)
 * for more than one. */
int tb_cli_source_operand(struct tb_cli_common *a, const char *cmd, int argc, char **argv,
                          int first);

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

/* Writes the stream as a trace to path ("-": stdout), its header naming
 * command and this run's start unless the stream kept its own from a
 * trace.  Returns -1 to go on, or TB_EXIT_USAGE (the error is printed). */
int tb_cli_record(const char *path, const char *command, const struct tb_sim_opts *o,
                  const struct tb_stream *s);

/* Before the work (a paid request above all): can path be written?  "-"
 * (standard output) can.  An existing path must be a writable
 * non-directory; a new one is created and removed again (a probe: the real
 * write comes after the work).  Returns -1 to go on, or TB_EXIT_USAGE
 * (printed: "OPT: PATH: reason"). */
int tb_cli_output_probe(const char *opt, const char *path);

/* tb_cli_output_probe over --record and --svg; --json with --record -
 * (two outputs on standard output) is refused.  cmd names the command.
 * Returns -1 to go on, or TB_EXIT_USAGE (printed). */
int tb_cli_outputs_check(const char *cmd, const struct tb_cli_common *a);

/* Where the human report goes: standard error when --record - holds
 * standard output, else standard output. */
FILE *tb_cli_report_file(const struct tb_cli_common *a);

/* 1 when standard output has failed because its reader went away (EPIPE,
 * or a pipe with no reader left): not the user's error, the output ends
 * quietly. */
int tb_cli_stdout_gone(void);

/* tb_play_fn that collects underrun chunks into a struct tb_gap_list. */
void tb_cli_collect_gap(void *ud, const struct tb_play *pl);

/* --fail-on-underrun on a played stream: TB_EXIT_GATE (the reason
 * printed) when it was given and r has any underrun, or the stream (its
 * end, NULL: a whole answer) was cut off or failed, which gives no
 * verdict to pass; else TB_EXIT_OK. */
int tb_cli_underrun_gate(const struct tb_cli_common *a, const struct tb_sim_result *r,
                         const struct tb_stream_end *end);

/* Every chunk's schedule (for --svg) and the underruns among them. */
struct tb_cli_plays {
    struct tb_gap_list gaps; /* the underrun chunks */
    struct tb_gap_list all;  /* every chunk, when keep_all */
    int keep_all;
};

/* Empty lists; keep_all: keep every chunk, not only the underruns.  The
 * lists are freed with tb_cli_plays_free. */
void tb_cli_plays_init(struct tb_cli_plays *p, int keep_all);
void tb_cli_plays_free(struct tb_cli_plays *p);

/* tb_play_fn over a struct tb_cli_plays. */
void tb_cli_collect_play(void *ud, const struct tb_play *pl);

/* The timeline picture of one run into f (live: run's account, or NULL).
 * What the report calls not measured (a failed run's minimum TPS) is not
 * drawn.  Returns 0, TB_ENOMEM (the schedule was not all kept) or
 * tb_svg_timeline's error. */
int tb_cli_svg_timeline_to(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                           const struct tb_stream *s, const struct tb_gap_list *all,
                           const struct tb_sim_result *r, const struct tb_report_live *live);

/* Writes the --svg timeline of one run to path.  Returns -1 to go on, or
 * TB_EXIT_USAGE (the error is printed). */
int tb_cli_svg_timeline(const char *path, const struct tb_report_src *src,
                        const struct tb_sim_opts *o, const struct tb_stream *s,
                        const struct tb_gap_list *all, const struct tb_sim_result *r,
                        const struct tb_report_live *live);
/* --import's companions (sim and sweep): --run N and --chars-per-token X. */
struct tb_cli_import_opts {
    unsigned run;           /* 0: every run; N: only run N of a file of several */
    double chars_per_token; /* text-less imports (TB_IMPORT_CPT_DEFAULT) */
};
void tb_cli_import_opts_init(struct tb_cli_import_opts *io);

/* Parses --run / --chars-per-token (c is the option's id: 'r' or 'c').
 * Returns 0, or TB_EXIT_USAGE (the error is printed). */
int tb_cli_import_option(struct tb_cli_import_opts *io, int c, const char *arg);

/* Loads [FORMAT:]FILE into *im (tb_import_init'ed here; the caller frees
 * it) with io's settings; *path is the file.  Returns -1 to go on, or an
 * exit code (the error is printed). */
struct tb_import;
int tb_cli_import_load(const char *spec, const struct tb_cli_import_opts *io, struct tb_import *im,
                       const char **path);

/* How an import of spec was read, for the report: the format when it was
 * told from the content, estimated speech time, not streamed.  "" when
 * there is nothing to say. */
void tb_cli_import_note(const struct tb_import *im, const char *spec, char *buf, size_t len);

/* sim --import SPEC (cmd_import.c): loads the file; with one request to
 * play (the only one, or `request` >= 0) moves it into *s and returns -1
 * to go on; with several and request < 0 prints the per-request table
 * (or JSON lines) and returns an exit code, as it does on errors (and
 * TB_EXIT_FAILED when every request failed). */
int tb_cli_import(const struct tb_cli_common *a, const char *spec,
                  const struct tb_cli_import_opts *io, long request, struct tb_stream *s,
                  struct tb_report_src *src, char *label, size_t labellen);

/* --help tables: the chunk policies, and the presets. */
void tb_cli_usage_chunks(FILE *f);
void tb_cli_usage_presets(FILE *f);
/* Both, the --help tail of the commands that play a stream out (sim,
 * run). */
void tb_cli_usage_playout(FILE *f);

#endif
