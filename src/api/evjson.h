/*
 * evjson.h - private to libttsbuf: one streamed event's JSON object,
 * parsed the same way for every dialect (api_parser.c's parser); defined
 * in evjson.c.
 */
#ifndef TTSBUF_EVJSON_H
#define TTSBUF_EVJSON_H

#include <cJSON.h>
#include <stddef.h>

#include "base/jsontext.h"
#include "ttsbuf/api.h"

/*
 * tb_evjson_parse - parses data[0..len) (need not be NUL-terminated) as
 * one JSON object, after tb_jsontext_fix (TB_JSONTEXT_HALVES: a lone
 * surrogate escape becomes its half's bytes, for tb_evjson_keep to pair;
 * raw surrogate bytes are "a raw UTF-16 surrogate ... at byte N of the
 * event").  Returns the tree (caller deletes), or NULL with *rc =
 * TB_EFORMAT and "invalid JSON near byte N of the event", "unexpected data
 * after the JSON object at byte N of the event", "a NUL byte at
 * byte N of the event" (never valid JSON; cJSON would silently cut a string
 * there) or "event data is not a JSON object" in err.
 */
cJSON *tb_evjson_parse(const char *data, size_t len, int *rc, char *err, size_t errlen);

/* tb_evjson_message - the server's own words in root (a string in v's
 * tree: error.message, a string "error", "message", FastAPI's "detail"
 * and its [{msg}], a few levels down), or NULL. */
const cJSON *tb_evjson_message(const cJSON *root);

/*
 * tb_evjson_error - whether the event root is an error: a non-null
 * "error", "type": "error", or FastAPI's "detail".  When it is, sets
 * d->error and copies the server's message (found in the shapes servers
 * use: error.message, a string "error", a "message" string or object,
 * "detail" as a string or a list of {msg}), and error.type / error.code
 * (or message.type / message.code) into d.  tb_api_error_text finds an
 * HTTP error body's message the same way.
 */
int tb_evjson_error(const cJSON *root, struct tb_api_delta *d);

/* tb_evjson_shape - the dialect (enum tb_api) whose fields root has, as
 * tb_api_delta.shape says; -1 when it cannot be told. */
int tb_evjson_shape(const cJSON *root);

/* tb_evjson_text - a text field's bytes (in v's tree), or NULL and 0
 * when it is absent, not a string or empty.  Not checked as UTF-8 here:
 * tb_evjson_keep does that once surrogate halves are resolved. */
void tb_evjson_text(const cJSON *v, const char **s, size_t *len);

/*
 * tb_evjson_keep - hands one event's texts out through d->content and
 * d->reasoning (tb_jsontext_keep: surrogate halves paired across the
 * stream's events, U+FFFD for one without a partner; last: the stream's
 * end).  Returns 0, TB_ENOMEM, or TB_EFORMAT "<what> is not valid UTF-8"
 * (what names the content field) / "the reasoning text is not valid UTF-8".
 */
int tb_evjson_keep(struct tb_jsontext_texts *t, const char *c, size_t cl, const char *r, size_t rl,
                   int last, const char *what, struct tb_api_delta *d, char *err, size_t errlen);

#endif
