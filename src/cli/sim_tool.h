/*
 * sim_tool.h - `sim` of a tool turn's answer (sim_tool.c): the trace of
 * the answer's request that bench --out keeps for a call's turn whose
 * model called a tool carries the turn's tool part (its header's
 * "tool_turn", ttsbuf-trace(5)); sim plays the answer and reports the
 * turn as bench's record does (the latency parts with tool_s, the
 * silence before, during and after the tool, the filler's effect),
 * and answers a what-if: --tool-latency SPEC replaces the recorded wait
 * by a draw (the answer's stream moved by the difference), --filler
 * TEXT|builtin says a filler by the modelled TTS.  Option handlers
 * answer as cli.h says; errors are printed (one line).
 */
#ifndef TTSBUF_CLI_SIM_TOOL_H
#define TTSBUF_CLI_SIM_TOOL_H

#include <stdint.h>
#include <stdio.h>

#include "optdoc.h"
#include "tool_opts.h"
#include "ttsbuf/bench_rec.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"

extern const struct tb_optdoc tb_opt_sim_tool[];

struct tb_cli_sim_tool {
    struct tb_cli_tool opt;  /* --tool-latency, --filler as given */
    int on;                  /* the stream is a tool turn's answer: rec holds it */
    double wait;             /* the tool's wait played: recorded or drawn */
    struct tb_bench_rec rec; /* the turn, as bench's record says it */
};

/* One of the rows' options: 0, TB_CLI_NOT_MINE, or TB_EINVAL (printed). */
int tb_cli_sim_tool_option(struct tb_cli_sim_tool *t, int c, const char *arg);

/* After the stream s (named name) is loaded and the TTS options applied:
 * whether it is a tool turn's answer (t->on), and the wait to play
 * (--tool-latency's draw from seed, or the recorded one).  A bad SPEC,
 * or --tool-latency or --filler for a stream without a tool part, is
 * TB_EINVAL (printed).  0 otherwise. */
int tb_cli_sim_tool_prepare(struct tb_cli_sim_tool *t, const struct tb_stream *s, uint64_t seed,
                            const char *name);

/* After the play r of the answer under o: the turn's record (t->rec):
 * the parts on the turn's clock with tool_s, the silence around the
 * tool and the filler's (recorded, or --filler by o's modelled TTS).
 * Nothing when t->on is 0. */
void tb_cli_sim_tool_play(struct tb_cli_sim_tool *t, const struct tb_stream *s,
                          const struct tb_sim_result *r, const struct tb_sim_opts *o);

/* --json's "tool_turn" object added to root: 0 or TB_ENOMEM. */
struct cJSON;
int tb_cli_sim_tool_json(struct cJSON *root, const struct tb_cli_sim_tool *t);

/* The human report's tool part. */
void tb_cli_sim_tool_human(FILE *f, const struct tb_cli_sim_tool *t);

void tb_cli_sim_tool_free(struct tb_cli_sim_tool *t);

#endif
