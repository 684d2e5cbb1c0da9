/*
 * import_sse.h - private to the import module: raw SSE bytes -> the stream
 * reader (reader.h, the OpenAI pair) -> a request's stream, for the
 * formats that kept the bytes (genai-perf, aiperf-raw); import_sse.c.
 */
#ifndef TTSBUF_IMPORT_SSE_H
#define TTSBUF_IMPORT_SSE_H

#include <stddef.h>

#include "ttsbuf/import.h"
#include "ttsbuf/reader.h"

struct tb_import_sse {
    struct tb_reader rd;
    int fed;       /* bytes came for this request */
    char err[640]; /* a feed error's detail */
};

int tb_import_sse_open(struct tb_import_sse *x); /* 0 or TB_ENOMEM */
void tb_import_sse_close(struct tb_import_sse *x);

/* Starts a request's stream: every event fed next goes to s. */
void tb_import_sse_begin(struct tb_import_sse *x, struct tb_stream *s);

/* Feeds bytes that arrived at time t.  Returns 0 (also after an error
 * event: the stream stops there, tb_import_sse_end says so), or
 * TB_EFORMAT / TB_ETOOBIG / TB_ENOMEM with the detail in x->err. */
int tb_import_sse_feed(struct tb_import_sse *x, const char *buf, size_t len, double t);

/* The request's bytes are all fed: how its stream ended goes into
 * r->stream_error (and r->error, unless the tool recorded one; or
 * r->warning when it ended well), its usage into r->stream.  Nothing when
 * no bytes were fed. */
void tb_import_sse_end(struct tb_import_sse *x, struct tb_import_request *r);

#endif
