/*
 * import_priv.h - private to the import module (src/import*.c): what the
 * per-format readers share.  cJSON stays inside the module: these helpers
 * take cJSON values, the public header never sees one.
 */
#ifndef TTSBUF_IMPORT_PRIV_H
#define TTSBUF_IMPORT_PRIV_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/jsonfield.h"
#include "ttsbuf/import.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/sse.h"

/* The end of the message for a time past TB_TIME_MAX (stream.h). */
#define TB_IMPORT_LATE "past 1e9 s, the latest time ttsbuf takes"
/* What tb_import_spread's TB_ETOOBIG means. */
#define TB_IMPORT_OVER_CAP                                                                         \
    "over a cap (1,000,000 tokens a chunk; estimated text: 256 MiB a request, 1 GiB an import)"

/* What a reader reads: a buffer, or (f not NULL; the JSONL formats only)
 * a stream read a line at a time. */
struct tb_import_in {
    const char *buf;
    size_t len;
    FILE *f;
};

/* Readers, one per format (import_*.c); the other arguments as
 * tb_import_mem.  tb_import_vllm reads a stream only when jsonl. */
int tb_import_vllm(const struct tb_import_in *in, const char *name, int jsonl,
                   struct tb_import *out, char *err, size_t errlen);
int tb_import_genai(const char *buf, size_t len, const char *name, struct tb_import *out, char *err,
                    size_t errlen);
int tb_import_aiperf(const struct tb_import_in *in, const char *name, int raw,
                     struct tb_import *out, char *err, size_t errlen);

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

/* Raw SSE bytes -> the stream reader (reader.h, the OpenAI pair) -> a
 * stream, for the formats that kept the bytes (genai-perf, aiperf-raw). */
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

/* Whether the content of buf says it is not in format f (a named one):
 * 1 with *what (static) saying what it looks like, else 0 (also when the
 * content is not recognised: the reader then judges).  import_detect.c. */
int tb_import_mismatch(enum tb_import_format f, const char *buf, size_t len, const char **what);

/* Parses one JSON text; NULL with "invalid JSON near byte N" in err.
 * Python's Infinity, -Infinity and NaN outside strings read as null. */
cJSON *tb_import_parse(const char *buf, size_t len, char *err, size_t errlen);

/* Parses the JSON value at the start of buf (more may follow); *used is
 * the bytes it took with the blanks after it.  Errors as tb_import_parse.
 * O(len) per call, as the Python tokens are looked for in the rest. */
cJSON *tb_import_parse_next(const char *buf, size_t len, size_t *used, char *err, size_t errlen);

/* Calls fn for each non-blank line of the input (1-based line numbers);
 * stops at the first non-zero return, which it returns.  A stream is read
 * a line at a time: a line over TB_IMPORT_LINE_MAX stops the read there
 * (TB_ETOOBIG, "NAME:LINE: ..." in err), as does a read error (TB_EIO). */
int tb_import_lines(const struct tb_import_in *in, const char *name, char *err, size_t errlen,
                    int (*fn)(void *ud, const char *line, size_t n, size_t lineno), void *ud);

#endif
