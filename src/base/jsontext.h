/*
 * jsontext.h - private to libttsbuf: JSON text written by others, made
 * fit for cJSON, and the UTF-16 surrogate halves that servers written in
 * JavaScript leave in it.
 *
 * A server that slices text by UTF-16 code units sends "\ud83d" at the
 * end of one event and "\ude00..." at the start of the next.  That is
 * valid JSON (RFC 8259 allows any \uXXXX) but not a valid string, and
 * cJSON rejects a lone surrogate escape.  The pre-pass below rewrites
 * such an escape before cJSON sees the text: either into U+FFFD at once
 * (a whole document: nothing can follow it), or into the half's WTF-8
 * bytes (ED A0..BF xx: never valid UTF-8, so they cannot be confused
 * with real text) for a stream, where struct tb_jsontext_texts pairs a
 * high half with the low half that starts the next event.
 *
 * Pure functions; one thread per struct tb_jsontext_texts.
 */
#ifndef TTSBUF_JSONTEXT_H
#define TTSBUF_JSONTEXT_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

enum tb_jsontext_mode {
    TB_JSONTEXT_REPLACE = 0, /* a lone half becomes \ufffd (same length) */
    TB_JSONTEXT_HALVES       /* a lone half becomes its raw WTF-8 bytes */
};

/* The value of the hexadecimal digit c (0-9, a-f, A-F), or -1. */
int tb_jsontext_hex(int c);

/*
 * tb_jsontext_fix - rewrites every lone surrogate escape in the JSON
 * text s[0..len) as mode says (an escaped pair is left alone: cJSON
 * reads it).  Returns 0 with *out NULL when there was nothing to rewrite;
 * 0 with *out malloc'd (caller frees, *outlen bytes, NUL-terminated);
 * TB_ENOMEM; in TB_JSONTEXT_HALVES mode TB_EFORMAT when s itself holds
 * raw surrogate bytes (invalid UTF-8 that would pass for a half), with
 * *at the byte offset.
 */
int tb_jsontext_fix(const char *s, size_t len, enum tb_jsontext_mode mode, char **out,
                    size_t *outlen, size_t *at);

/*
 * tb_jsontext_parse - cJSON_ParseWithLengthOpts (no NUL required) after
 * tb_jsontext_fix in TB_JSONTEXT_REPLACE mode: a document read whole.
 * *end as cJSON's (into s: the rewrite keeps every offset).  NULL when
 * cJSON fails or memory runs out.
 */
cJSON *tb_jsontext_parse(const char *s, size_t len, const char **end);

/* One text field of a stream: a high half waiting for its low half. */
struct tb_jsontext_half {
    unsigned char b[3];
    int have;
};

/* The text fields of one stream's events, copied out of the JSON tree. */
struct tb_jsontext_texts {
    struct tb_jsontext_half content, reasoning;
    uint64_t replaced; /* halves that never found a partner: U+FFFD */
    char *buf;         /* content then reasoning, handed out */
    size_t cap;
};

/*
 * tb_jsontext_keep - copies one event's content c[0..cl) and reasoning
 * r[0..rl) (either may be NULL) into t->buf, pairing surrogate halves
 * with the ones the previous events left: a high half at the end of a
 * text waits for the next text of the same field; a half without a
 * partner becomes U+FFFD and is counted.  last: the stream ends here,
 * so a waiting half is replaced now (appended to its own field).  On
 * return *co and *ro point into t->buf (NULL when empty; valid until the
 * next call).  Returns 0; TB_ENOMEM; TB_EFORMAT with *bad = 'c' or 'r'
 * when that text is not valid UTF-8 once its halves are resolved.
 */
int tb_jsontext_keep(struct tb_jsontext_texts *t, const char *c, size_t cl, const char *r,
                     size_t rl, int last, const char **co, size_t *col, const char **ro,
                     size_t *rol, char *bad);

/* Halves replaced so far, counting one still waiting. */
uint64_t tb_jsontext_replaced(const struct tb_jsontext_texts *t);

/* A new stream: drops a waiting half and the count; keeps the buffer. */
void tb_jsontext_reset(struct tb_jsontext_texts *t);

/* Frees the buffer; t may then be reused after tb_jsontext_reset. */
void tb_jsontext_free(struct tb_jsontext_texts *t);

#endif
