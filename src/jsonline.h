/*
 * jsonline.h - private to libttsbuf: one JSON object written as one line
 * (the JSONL files: traces, bench records).  Any thread, one FILE each.
 */
#ifndef TTSBUF_JSONLINE_H
#define TTSBUF_JSONLINE_H

#include <cJSON.h>
#include <stdio.h>

/* Prints o unformatted and a newline to f, and deletes o (NULL: out of
 * memory).  Returns 0, TB_ENOMEM or TB_EIO. */
int tb_json_put_line(FILE *f, cJSON *o);

#endif
