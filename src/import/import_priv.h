/*
 * import_priv.h - private to the import module: what the per-format
 * readers build with (import.c): a request of the import, and text spread
 * over its chunks.  The readers' other shared parts: import_json.h (JSON
 * and lines), import_sse.h (raw SSE bytes).
 */
#ifndef TTSBUF_IMPORT_PRIV_H
#define TTSBUF_IMPORT_PRIV_H

#include <stddef.h>

#include "ttsbuf/import.h"
#include "ttsbuf/stream.h"

/* The end of the message for a time past TB_TIME_MAX (stream.h). */
#define TB_IMPORT_LATE "past 1e9 s, the latest time ttsbuf takes"
/* What tb_import_spread's TB_ETOOBIG means. */
#define TB_IMPORT_OVER_CAP                                                                         \
    "over a cap (1,000,000 tokens a chunk; estimated text: 256 MiB a request, 1 GiB an import)"

/* Appends an empty request named by fmt; NULL when memory or the
 * request cap ran out (*rc says which). */
struct tb_import_request *tb_import_add(struct tb_import *im, int *rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * tb_import_spread - appends n events of kind `kind` at times t[0..n) to
 * s, with text[0..tlen) cut into token-like pieces spread evenly over
 * them, and `tokens` tokens spread the same way (at least one an event;
 * tokens < 0: one an event).  Events left without text are dropped and
 * added to im->empty_chunks.  text NULL: no text was recorded; each event
 * gets its tokens times im->chars_per_token characters of synthetic
 * prose, the same prose for every request (speech time estimated from
 * tokens), counted in im->estimated_bytes before anything is built.  Sets
 * s->usage_tokens when tokens >= 0.  Returns 0, TB_ETOOBIG (an event over
 * TB_EVENT_TOKENS_MAX tokens, or estimated text over a request's or the
 * import's cap: TB_IMPORT_ESTIMATED_MAX) or TB_ENOMEM.
 */
int tb_import_spread(struct tb_import *im, struct tb_stream *s, const double *t, size_t n,
                     const char *text, size_t tlen, long long tokens, enum tb_kind kind);

#endif
