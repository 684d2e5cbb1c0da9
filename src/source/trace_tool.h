/*
 * trace_tool.h - private to src/source: a trace's tool-call lines
 * (ttsbuf-trace(5), version 4): {"t": T, "tool": {"phase": "start"|"end",
 * "name": N, "id": I, "args_bytes": B}}, one line when a call starts and
 * one when it ends, after the events in time order, read into and written
 * from a stream's tools (stream.h).  trace.c calls these; the reader puts
 * the reason, the key named, in msg without a place (trace.c adds
 * FILE:LINE).  Threads: any, no shared state.
 */
#ifndef TTSBUF_SOURCE_TRACE_TOOL_H
#define TTSBUF_SOURCE_TRACE_TOOL_H

#include <stddef.h>
#include <stdio.h>

#include "ttsbuf/stream.h"

struct cJSON;

/*
 * tb_trace_tool_read - one line's time t and "tool" object v into s: a
 * start adds a call, an end ends the latest call with its id and name
 * still open.  Returns 0, TB_EFORMAT, TB_ETOOBIG (reason in msg) or
 * TB_ENOMEM.
 */
int tb_trace_tool_read(const struct cJSON *t, const struct cJSON *v, struct tb_stream *s,
                       char *msg, size_t msglen);

/* Writes s's tool calls' lines to f, in time order (a call never ended
 * has its start line only).  Returns 0, TB_ENOMEM or TB_EIO. */
int tb_trace_tool_write(FILE *f, const struct tb_stream *s);

/*
 * The header's "tool_turn" object (version 4): {"calls": N, "start_s",
 * "end_s", "tool_s", and with a filler "filler_at_s", "filler_s" (null
 * when none was heard)}, a tool turn's answer's part before it
 * (stream.h's tb_stream_toolturn).  read: v the key's value (NULL:
 * absent, nothing set); 0 or TB_EFORMAT (reason in msg).  add: the key
 * added to the header object o when s->turn_tool.calls > 0; 0 or
 * TB_ENOMEM.
 */
int tb_trace_toolturn_read(const struct cJSON *v, struct tb_stream *s, char *msg, size_t msglen);
int tb_trace_toolturn_add(struct cJSON *o, const struct tb_stream *s);

#endif
