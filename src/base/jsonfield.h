/*
 * jsonfield.h - private to libttsbuf: reading one field of a parsed JSON
 * value into a plain C value, the same way for every dialect's event
 * reader (api_*.c) and every importer (import_*.c), so a number or a
 * server's string is accepted and capped alike wherever it comes from.
 *
 * Threads: any; no state.
 */
#ifndef TTSBUF_JSONFIELD_H
#define TTSBUF_JSONFIELD_H

#include <cJSON.h>
#include <stddef.h>

/* A count (tokens, nanoseconds): a number in [0, 1e15), truncated; -1
 * when v is absent, not a number or out of that range. */
long long tb_jsonfield_count(const cJSON *v);

/* A finite number: 0 and *out, or -1 (absent, not a number, NaN, inf). */
int tb_jsonfield_num(const cJSON *v, double *out);

/* A server's words for a one-line message: a string (or a number, as
 * %g) made safe by tb_jsonfield_line_of; "" when v is neither.  cap > 0. */
void tb_jsonfield_line(char *dst, size_t cap, const cJSON *v);

/*
 * tb_jsonfield_line_of - copies s[0..n) as one trimmed line that is safe
 * to print and to put in JSON: control characters (C0, DEL, C1) become
 * spaces, bytes that are not valid UTF-8 '?', and the cut that makes it
 * fit outlen (> 0) never splits a character.  Linear.
 */
void tb_jsonfield_line_of(const char *s, size_t n, char *out, size_t outlen);

/* A string kept as it is (a name, a model): copied, cut at a UTF-8
 * boundary to fit cap; "" when v is not a string. */
void tb_jsonfield_text(char *dst, size_t cap, const cJSON *v);

#endif
