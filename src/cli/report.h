/*
 * report.h - what `sim` and `run` print about one stream played out
 * (report.c): the types the human report (report_human.h) and the --json
 * object (report_json.h, schema ttsbuf.result) read, the
 * --fail-on-underrun verdict, and run's status line.
 */
#ifndef TTSBUF_CLI_REPORT_H
#define TTSBUF_CLI_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plays.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsmeas.h"

struct tb_cli_turn;
struct tb_cli_sim_tool;

/* What the report needs to say about where the stream came from. */
struct tb_report_src {
    const char *kind;                /* "trace", "synth", "preset", "import", "live" */
    const char *name;                /* file, spec, or preset name */
    const char *note;                /* NULL, or how the source was read ("note" in JSON) */
    const char *warning;             /* NULL, or the stream reader's warning on an imported
                                      * stream ("warning" in JSON, as a live run's) */
    const struct tb_stream_end *end; /* how the stream ended (a recorded or live
                                      * one), or NULL: a whole answer */
    const struct tb_cli_tts *tts;    /* the TTS stage's options (tts_opts.h), or
                                      * NULL: none given */
    const struct tb_cli_turn *turn;  /* --eou, --tts-lead (turn_opts.h), or NULL:
                                      * no "where the wait went" */
    /* Where the TTS's numbers came from: "measured" (a real TTS, live or
     * replayed from a trace), "model" (the TTS stage's options), or NULL
     * (no TTS stage: the rate model and a constant latency). */
    const char *tts_source;
    const struct tb_tts_log *tts_log;        /* measured: its log (the provider), or NULL */
    const struct tb_tts_stats *tts_stats;    /* measured: its statistics, or NULL */
    const struct tb_tts_chunk *tts_fail;     /* the record whose failure ended the
                                              * speech, or NULL */
    size_t tool_calls;                       /* the stream's tool calls (a trace's
                                              * "tool" lines; never spoken) */
    const struct tb_cli_sim_tool *tool_turn; /* sim of a tool turn's answer:
                                              * the turn (sim_tool.h), or NULL */
    const char *min_tps_reason;              /* why there is no minimum TPS (a
                                              * measured TTS under a time-based
                                              * policy), or NULL */
};

struct tb_cli_tts;

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
    double tool_first_start, tool_first_end; /* the first tool call's, s; NaN: none */
    const char *finish_reason;
    int usage_retried;
    long long usage_ignored;               /* usage not credible beside the events, or -1 */
    uint64_t surrogates_replaced;          /* lone UTF-16 halves made U+FFFD */
    const struct tb_server_timing *server; /* the provider's own timings, or NULL */
};

/* A gap's cause: "llm" (the text had not arrived), "tts" (it had, its
 * audio had not) or "both". */
const char *tb_cli_gap_cause(const struct tb_play *g);

/* Whether the run's what-if numbers (minimum TPS, speed-up, the pre-roll
 * curve's minimum TPS) were measured: the report prints "-" and the JSON
 * null where not, and the pictures leave them out. */
int tb_cli_report_whatif_measured(const struct tb_report_src *src, const struct tb_sim_result *r,
                                  const struct tb_report_live *live);

/* --fail-on-underrun on a played stream, the command's verdict (cli.h):
 * TB_EXIT_GATE (the reason printed) when it was given and r has any
 * underrun, or the stream (its end, NULL: a whole answer) was cut off or
 * failed, which gives no verdict to pass; else TB_EXIT_OK. */
int tb_cli_underrun_verdict(int fail_on_underrun, const struct tb_sim_result *r,
                            const struct tb_stream_end *end);

/* run's status line (without the carriage return): time, tokens, buffer,
 * playing / waiting / SILENT, and the underruns with the gap in progress
 * counted. */
struct tb_live_status;
void tb_cli_report_status(char *buf, size_t len, const struct tb_live_status *st);

/* A measured TTS's statistics (ttsmeas.h): the report's three lines, and
 * its "tts_stats" object (null for NULL) added to root.  bench prints
 * them per level. */
struct cJSON;
void tb_cli_report_tts_lines(FILE *f, const struct tb_tts_stats *t);
void tb_cli_report_tts_json(struct cJSON *root, const struct tb_tts_stats *t);

#endif
