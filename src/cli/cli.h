/*
 * cli.h - the command-line layer: the only code that parses arguments,
 * prints, or decides exit codes.
 *
 * Exit codes: 0 ran (whatever it found), 1 a requested gate failed,
 * 2 bad usage or bad input, 3 a live request or stream failed (its partial
 * report and trace are still written).
 */
#ifndef TTSBUF_CLI_H
#define TTSBUF_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"

enum { TB_EXIT_OK = 0, TB_EXIT_GATE = 1, TB_EXIT_USAGE = 2, TB_EXIT_FAILED = 3 };

/* Subcommands: each returns an exit code. */
int tb_cmd_sim(int argc, char **argv);

/* Prints "ttsbuf: <message>\n" to stderr. */
void tb_cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/*
 * Number options: parse the whole string, check the range, and on failure
 * write "--flag: 'value' is not a number" or "--flag: 'value' is outside
 * LO..HI" into err.  Return 0 or TB_EINVAL / TB_ERANGE.
 */
int tb_opt_double(const char *flag, const char *s, double lo, double hi, double *out, char *err,
                  size_t errlen);
int tb_opt_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out, char *err,
                size_t errlen);

/* As tb_opt_double and tb_opt_size, answering as an option handler does
 * (tb_cli_parse): 1 taken, or -1 with the error printed ("ttsbuf: --flag:
 * ..."). */
int tb_cli_opt_double(const char *flag, const char *s, double lo, double hi, double *out);
int tb_cli_opt_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out);

/* What the report needs to say about where the stream came from. */
struct tb_report_src {
    const char *kind; /* "trace", "synth", "preset" */
    const char *name; /* file, spec, or preset name */
    const char *note; /* NULL, or how the source was read ("note" in JSON) */
    const char *warning; /* NULL, or the stream reader's warning on an imported
                          * stream ("warning" in JSON, as a live run's) */
    const struct tb_stream_end *end; /* how the stream ended (a recorded or live
                                      * one), or NULL: a whole answer */
};

struct tb_gap_list {
    struct tb_play *v; /* underrun chunks, in order */
    size_t n, cap;
};

/* What a live run adds to the report (never the API key). */
struct tb_report_live {
    const char *model;
    const char *base_url; /* redacted */
    const char *api;      /* "chat", "completions", "anthropic", "ollama" */
    const char *provider; /* "mock" (the built-in mock answered) or "remote" */
    long http_status;
    const char *error_kind; /* NULL when the run succeeded */
    const char *error;
    const char *warning; /* NULL or "" when none */
    uint64_t sse_events, tool_calls;
    const char *finish_reason;
    int usage_retried;
    long long usage_ignored;               /* usage not credible beside the events, or -1 */
    uint64_t surrogates_replaced;          /* lone UTF-16 halves made U+FFFD */
    const struct tb_server_timing *server; /* the provider's own timings, or NULL */
};

/* The human report (stdout).  max_gaps limits the gap list; live is NULL
 * for `sim`. */
void tb_report_human(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                     const struct tb_sim_result *r, const struct tb_gap_list *gaps, size_t max_gaps,
                     const struct tb_report_live *live);

/* Whether the run's what-if numbers (minimum TPS, speed-up, the pre-roll
 * curve's minimum TPS) were measured: the report prints "-" and the JSON
 * null where not, and the pictures leave them out. */
int tb_report_whatif_measured(const struct tb_report_src *src, const struct tb_sim_result *r,
                              const struct tb_report_live *live);

/* The --json report: one object and a newline.  Returns 0 or TB_ENOMEM. */
int tb_report_json(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                   const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                   const struct tb_report_live *live);

/* The --json report with the speech part ("audio": null when audio is
 * NULL or unused). */
struct tb_cli_audio;
int tb_report_json_audio(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                         const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                         const struct tb_report_live *live, const struct tb_cli_audio *audio);
/* As tb_report_json_audio, plus the "chunks" array (sim --chunks) when
 * chunks is not NULL. */
struct tb_cli_chunks;
int tb_report_json_chunks(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                          const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                          const struct tb_report_live *live, const struct tb_cli_audio *audio,
                          const struct tb_cli_chunks *chunks);
/* run's status line (without the carriage return): time, tokens, buffer,
 * playing / waiting / SILENT, and the underruns with the gap in progress
 * counted. */
struct tb_live_status;
void tb_cli_status_text(char *buf, size_t len, const struct tb_live_status *st);

/* Subcommands. */
int tb_cmd_run(int argc, char **argv);
int tb_cmd_serve(int argc, char **argv);
int tb_cmd_sweep(int argc, char **argv);

/* Load levels and shards. */
int tb_cmd_bench(int argc, char **argv);
int tb_cmd_merge(int argc, char **argv);

#endif
