/*
 * jsonline.h - one JSON object written as one line: every JSON and JSONL
 * document ttsbuf writes (traces, bench records, the CLI's results) ends
 * here; and the members every such document writes alike (a measurement
 * or null, the error object).  Any thread, one FILE (object) each.
 */
#ifndef TTSBUF_JSONLINE_H
#define TTSBUF_JSONLINE_H

#include <stdio.h>

struct cJSON; /* the caller's; this header does not include cJSON.h */

/* Prints o unformatted and a newline to f, and deletes o (NULL: out of
 * memory).  Returns 0, TB_ENOMEM or TB_EIO. */
int tb_json_put_line(FILE *f, struct cJSON *o);

/*
 * tb_json_num - a new JSON item for v, written so that it reads back as
 * exactly v, or null when v is not finite (NaN: not measured).  The
 * caller owns it (adds it to an object or array); NULL when out of memory.
 */
struct cJSON *tb_json_num(double v);

/*
 * tb_json_add_num - adds key: tb_json_num(v) to the object o, written so
 * that it reads back as exactly v, or key: null when v is not finite (NaN:
 * not measured).  Out of memory leaves the key out (tb_json_put_line still
 * writes the rest).
 */
void tb_json_add_num(struct cJSON *o, const char *key, double v);

/*
 * tb_json_add_error - adds the "error" member every result shares:
 * {kind, message ("" for NULL), http_status (null when not > 0)}, or
 * "error": null when kind is NULL (no error).  Out of memory leaves it
 * out, as tb_json_add_num.
 */
void tb_json_add_error(struct cJSON *o, const char *kind, const char *message, long http_status);

#endif
