/*
 * bench_tool.h - private to libttsbuf: a call's tool turn (bench_tool.c;
 * what it is in bench_calls.h, Tool calls): the first request's tool call
 * taken instead of a record, the wait drawn, the exchange the second
 * request carries, and what the record of the second says of the tool.
 *
 * Threads: the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_TOOL_H
#define TTSBUF_BENCH_TOOL_H

#include <cJSON.h>

#include "bench_state.h"

/* Whether x, a finished transfer (out of the multi handle, unlinked),
 * is a call's turn's first request whose stream ended complete (stream.h's
 * end classes), made a tool call and spoke nothing: then the call keeps the call, waits for the
 * tool (its next send scheduled through b->call_wait) and 1 is returned: the caller drops x's
 * stream and TTS, makes no record and gives x back.  0 otherwise; an error (out of memory) goes to
 * b->calls.rc and ends nothing (1 is returned and the call waits in vain: the level stops on
 * b->calls.rc). */
int tb_bench_tool_taken(struct bench *b, struct xf *x);

/* Call c's kept arguments freed (a turn's tool exchange is over, or the
 * call's slot is freed). */
void tb_bench_tool_forget(struct call *c);

/* The tool exchange call c's second request adds after the caller's
 * words (c->tool set): the assistant's call, with the first call's
 * arguments as the model streamed them (c->tool_args; {} when none were
 * kept), and the result, in OpenAI's shape (api_toolmsg.h makes it
 * another dialect's: arguments that are not a JSON object go as {}
 * there).  0 or -1 (no memory). */
int tb_bench_tool_exchange(cJSON *msgs, const struct call *c);

/* The record of call c's turn, made by its second request (c->tool 2):
 * its tool fields and, with --filler, the filler's: modelled, or with a
 * real TTS its log taken from the call's filler job (bench_filler.h;
 * before the playout, which sets the rest: tb_bench_rec_tool_lat). */
void tb_bench_tool_rec(struct bench *b, const struct call *c, struct tb_bench_rec *rec);

#endif
