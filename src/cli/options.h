/*
 * options.h - the options every command that plays a stream shares
 * (options.c): the source (--trace, --synth, --preset), the playout and
 * the report options, the option groups a command takes, and their --help
 * tables.  Option handlers answer as cli.h says (0, TB_CLI_NOT_MINE, or
 * an error printed).
 */
#ifndef TTSBUF_CLI_OPTIONS_H
#define TTSBUF_CLI_OPTIONS_H

#include <stdio.h>

#include "optdoc.h"
#include "tts_opts.h"
#include "turn_opts.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"

enum {
    TB_O_TRACE = 256,
    TB_O_SYNTH,
    TB_O_PRESET,
    TB_O_CHUNK,
    TB_O_MINCHARS,
    TB_O_WPM,
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
    TB_O_MAXDELAY,
    TB_O_IDLEFLUSH,
    TB_O__COMMON_END
};

/* Their rows: tb_opt_sources, tb_opt_playout, tb_opt_report (optdoc.h),
 * and tb_opt_tts (tts_opts.h). */

struct tb_cli_common {
    struct tb_sim_opts o;
    const char *trace, *synth, *preset, *record;
    const char *svg;  /* --svg FILE: the timeline picture */
    const char *html; /* --html FILE: the self-contained page */
    int nsources, json, fail_on_underrun;
    long long request; /* sim --request with --trace: the trace of that
                        * request in a file of several (bench's); -1 */
    int failed_ok; /* a --trace that holds no event loads when it is the
                    * recording of a request that failed or was cut off
                    * (its end says so): sim reports it */
    size_t max_gaps;
    struct tb_cli_tts tts; /* the TTS stage's options (tts_opts.h) */
    struct tb_cli_turn turn; /* --eou, --tts-lead (turn_opts.h) */
};

void tb_cli_common_init(struct tb_cli_common *a);
void tb_cli_common_free(struct tb_cli_common *a); /* what the options made */

/* Handles one shared option (an option handler, cli.h). */
int tb_cli_common_option(struct tb_cli_common *a, int c, const char *arg);

/* One option of the shared groups a command takes, tried in turn: the
 * common options (a), the request's (q) and the speech's (au); NULL for a
 * group the command does not take.  An option handler (cli.h). */
struct tb_cli_request;
struct tb_cli_audio;
int tb_cli_groups_option(struct tb_cli_common *a, struct tb_cli_request *q, struct tb_cli_audio *au,
                         int c, const char *arg);

/* tb_cli_output_probe over --record and --svg; --json with --record -
 * (two outputs on standard output) is refused.  cmd names the command.
 * 0, or TB_EINVAL (printed). */
int tb_cli_outputs_check(const char *cmd, const struct tb_cli_common *a);

/* Where the human report goes: standard error when --record - holds
 * standard output, else standard output. */
FILE *tb_cli_report_file(const struct tb_cli_common *a);

/* --help tables: the chunk policies, and the presets. */
void tb_cli_usage_chunks(FILE *f);
void tb_cli_usage_presets(FILE *f);
/* Both and the TTS presets, the --help tail of the commands that play one
 * stream out (sim, run). */
void tb_cli_usage_playout(FILE *f);

#endif
