/*
 * evjson.h - private to libttsbuf: one streamed event's JSON object, parsed
 * the same way by every dialect's reader (oai.c, api.c).
 */
#ifndef TTSBUF_EVJSON_H
#define TTSBUF_EVJSON_H

#include <cJSON.h>
#include <stddef.h>

/*
 * tb_evjson_parse - parses data[0..len) (need not be NUL-terminated) as
 * one JSON object.  Returns the tree (caller deletes), or NULL with *rc =
 * TB_EFORMAT and "invalid JSON near byte N of the event", "unexpected data
 * after the JSON object at byte N of the event", "a NUL byte at
 * byte N of the event" (never valid JSON; cJSON would silently cut a string
 * there) or "event data is not a JSON object" in err.
 */
cJSON *tb_evjson_parse(const char *data, size_t len, int *rc, char *err, size_t errlen);

/*
 * tb_evjson_line - copies s[0..n) as one trimmed line that is safe to
 * print and to put in JSON: control characters (C0, DEL, C1) become
 * spaces, bytes that are not valid UTF-8 '?', and the cut that makes it
 * fit outlen (> 0) never splits a character.  Every dialect copies a
 * server's words (error messages, finish reasons) through it.
 */
void tb_evjson_line(const char *s, size_t n, char *out, size_t outlen);

#endif
