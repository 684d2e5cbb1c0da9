/*
 * sweep_tool.h - `sweep --tool-latency LIST` (sweep_tool.c): the tool
 * turns among the streams (the traces of tool turns' answers that bench
 * --out keeps, whose header says the turn's tool part: ttsbuf-trace(5),
 * TOOL TURNS) swept again once per value W of the tool's wait in place
 * of the recorded one, at the sweep's one setting: the turn's v2v and
 * the silence around the tool (the three windows summed) per value.
 * Option handlers answer as cli.h says; errors are printed (one line).
 */
#ifndef TTSBUF_CLI_SWEEP_TOOL_H
#define TTSBUF_CLI_SWEEP_TOOL_H

#include <stdio.h>

#include "optdoc.h"
#include "sweep_axis.h"
#include "ttsbuf/stats.h"
#include "ttsbuf/sweep.h"

/* Not tool_opts.h's id: sweep_cap.h's options take 600.. in sweep. */
enum { TB_O_SWEEP_TOOL_LATENCY = 620 };

extern const struct tb_optdoc tb_opt_sweep_tool[];

struct tb_cli_sweep_tool {
    struct tb_cli_axis ax;          /* the waits, s */
    size_t turns, of;               /* tool turns, of the streams swept */
    struct tb_stats *v2v, *silence; /* per wait, made by run */
};

/* --tool-latency LIST: 0 or TB_EINVAL (printed). */
int tb_cli_sweep_tool_option(struct tb_cli_sweep_tool *t, const char *arg);

/* The waits swept over the tool turns of in[0..n) under so (one
 * setting: an axis of several values, or a shared capacity, is
 * refused), threads at once; *shown set to t (sweep_out.h's info).
 * Nothing without --tool-latency.  0; TB_EINVAL (printed: several
 * settings, no tool turn); the sweep's error (printed); TB_ENOMEM. */
int tb_cli_sweep_tool_run(struct tb_cli_sweep_tool *t, const struct tb_sweep_opts *so,
                          const struct tb_sweep_input *in, size_t n, unsigned threads,
                          const struct tb_cli_sweep_tool **shown);

/* The table, one row a wait (nothing without --tool-latency). */
void tb_cli_sweep_tool_print(FILE *f, const struct tb_cli_sweep_tool *t);

/* --json's "tool_turns" object added to root: 0 or TB_ENOMEM. */
struct cJSON;
int tb_cli_sweep_tool_json(struct cJSON *root, const struct tb_cli_sweep_tool *t);

void tb_cli_sweep_tool_free(struct tb_cli_sweep_tool *t);

#endif
