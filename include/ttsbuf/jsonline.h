/*
 * jsonline.h - one JSON object written as one line: every JSON and JSONL
 * document ttsbuf writes (traces, bench records, the CLI's results) ends
 * here.  Any thread, one FILE each.
 */
#ifndef TTSBUF_JSONLINE_H
#define TTSBUF_JSONLINE_H

#include <stdio.h>

struct cJSON; /* the caller's; this header does not include cJSON.h */

/* Prints o unformatted and a newline to f, and deletes o (NULL: out of
 * memory).  Returns 0, TB_ENOMEM or TB_EIO. */
int tb_json_put_line(FILE *f, struct cJSON *o);

#endif
