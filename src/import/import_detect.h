/*
 * import_detect.h - private to the import module: a format checked against a
 * file's content (import_detect.c, which also tells the formats apart:
 * tb_import_detect, import.h).
 */
#ifndef TTSBUF_IMPORT_DETECT_H
#define TTSBUF_IMPORT_DETECT_H

#include <stddef.h>

#include "ttsbuf/import.h"

/* Whether the content of buf says it is not in format f (a named one):
 * 1 with *what (static) saying what it looks like, else 0 (also when the
 * content is not recognised: the reader then judges). */
int tb_import_mismatch(enum tb_import_format f, const char *buf, size_t len, const char **what);

#endif
