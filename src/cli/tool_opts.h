/*
 * tool_opts.h - bench's tool turns (tool_opts.c): --tool-latency SPEC,
 * the wait of the tool a call's turn calls, and --filler TEXT|builtin, a
 * phrase spoken from the tool call's start; their rows, their reading
 * and what the options object says of them.  Option handlers answer as
 * cli.h says.
 */
#ifndef TTSBUF_CLI_TOOL_OPTS_H
#define TTSBUF_CLI_TOOL_OPTS_H

#include <stdint.h>

#include "optdoc.h"
#include "ttsbuf/ttslat.h"

enum { TB_O_TOOL_LATENCY = 600, TB_O_FILLER };

extern const struct tb_optdoc tb_opt_tool[];

struct tb_cli_tool {
    const char *latency;                /* --tool-latency as given, or NULL */
    const char *filler;                 /* --filler's phrase (builtin resolved), or NULL */
    struct tb_ttslat *lat;              /* made by tb_cli_tool_apply */
    char spec[TB_TTSLAT_SPEC_MAX + 64]; /* canonical */
};

/* One of the rows' options: 0, TB_CLI_NOT_MINE, or TB_EINVAL (printed:
 * --filler "" or a blank phrase, one over 200 bytes or not UTF-8). */
int tb_cli_tool_option(struct tb_cli_tool *t, int c, const char *arg);

/* After the options: the latency read (seeded with seed; default
 * TB_TOOL_LATENCY_DEFAULT), or its error printed (exit 2).  calls: the
 * run drives calls (else the options are refused).  The filler is said
 * by the modelled TTS, or by the real one (--tts-url) as the answer's
 * chunks are.  0 or TB_EINVAL. */
int tb_cli_tool_apply(struct tb_cli_tool *t, uint64_t seed, int calls);

void tb_cli_tool_free(struct tb_cli_tool *t);

/* The options object's "tool_latency" (the canonical spec) and "filler"
 * (the phrase), when given. */
struct cJSON;
void tb_cli_tool_json_opts(struct cJSON *opts, const struct tb_cli_tool *t);

#endif
