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
 * TB_EFORMAT and "invalid JSON near byte N of the event" or "event data is
 * not a JSON object" in err.
 */
cJSON *tb_evjson_parse(const char *data, size_t len, int *rc, char *err, size_t errlen);

#endif
