/*
 * import_json.h - private to the import module: the JSON and line helpers the
 * readers share (import_json.c): what a reader reads, typed fields, one
 * JSON text or the next of several, and non-blank lines.  cJSON stays
 * inside the module: these helpers take cJSON values, the public header
 * never sees one.
 */
#ifndef TTSBUF_IMPORT_JSON_H
#define TTSBUF_IMPORT_JSON_H

#include <cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "base/jsonfield.h"
#include "ttsbuf/import.h"

/* What a reader reads: a buffer, or (f not NULL; the JSONL formats only)
 * a stream read a line at a time. */
struct tb_import_in {
    const char *buf;
    size_t len;
    FILE *f;
};

/* Parses one JSON text, a piece of a file (a line, a request, a member):
 * priced first (base/jsonscan.h), its tree at most TB_JSON_PIECE_MAX;
 * NULL with "invalid JSON near byte N" or "would take about N MiB to
 * read, over the cap ..." in err.  Python's Infinity, -Infinity and NaN
 * outside strings read as null.  A whole document is walked
 * (jsonscan.h), never parsed here at once. */
cJSON *tb_import_parse(const char *buf, size_t len, char *err, size_t errlen);

/* Calls fn for each non-blank line of the input (1-based line numbers);
 * stops at the first non-zero return, which it returns.  A stream is read
 * a line at a time: a line over TB_IMPORT_LINE_MAX stops the read there
 * (TB_ETOOBIG, "NAME:LINE: ..." in err), as does a read error (TB_EIO). */
int tb_import_lines(const struct tb_import_in *in, const char *name, char *err, size_t errlen,
                    int (*fn)(void *ud, const char *line, size_t n, size_t lineno), void *ud);

#endif
