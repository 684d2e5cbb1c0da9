/*
 * trace_tts.h - private to src/source: the TTS parts of a trace
 * (ttsbuf-trace(5), version 3): the header's "tts" object and the
 * {"tts": {...}} line of each chunk, read into and written from a
 * struct tb_tts_log (ttsmeas.h).  trace.c calls these; cJSON stays in
 * src/source.
 *
 * The readers check every rule the manual lists and put the reason, with
 * the key named ("tts.first_byte" ...), in msg without a place: trace.c
 * adds FILE:LINE.  Threads: any, no shared state.
 */
#ifndef TTSBUF_SOURCE_TRACE_TTS_H
#define TTSBUF_SOURCE_TRACE_TTS_H

#include <stddef.h>
#include <stdio.h>

#include "ttsbuf/ttsmeas.h"

struct cJSON;

/* The apis a trace may name (the TTS dialects). */
int tb_trace_tts_api_known(const char *name);

/*
 * tb_trace_tts_read_header - the header's "tts" object v into l (an
 * empty log): api, url, model, voice, concurrency, mock.  Returns 0,
 * TB_EFORMAT (reason in msg).
 */
int tb_trace_tts_read_header(const struct cJSON *v, struct tb_tts_log *l, char *msg, size_t msglen);

/*
 * tb_trace_tts_read_line - one line's "tts" object v appended to l as
 * record l->n + 1; events is how many events the trace has so far (a
 * trace holds at most one record an event).  Returns 0, TB_EFORMAT,
 * TB_ETOOBIG (reason in msg) or TB_ENOMEM.
 */
int tb_trace_tts_read_line(const struct cJSON *v, struct tb_tts_log *l, size_t events, char *msg,
                           size_t msglen);

/* Adds the header's "tts" object for l to the header object o.  Returns
 * 0 or TB_ENOMEM. */
int tb_trace_tts_add_header(struct cJSON *o, const struct tb_tts_log *l);

/* Writes l's records, one line each, to f.  Returns 0, TB_ENOMEM or
 * TB_EIO. */
int tb_trace_tts_write(FILE *f, const struct tb_tts_log *l);

#endif
