/*
 * compare_html.h - `ttsbuf compare --html` (compare_html.c).
 */
#ifndef TTSBUF_CLI_COMPARE_HTML_H
#define TTSBUF_CLI_COMPARE_HTML_H

#include "compare.h"

/* The page to x->html: the table, the JSON document's text (json), the
 * charts (the gapless share and goodput per level; per level the
 * distributions of first audio and of silence and, for calls, first
 * audio by turn; runs with equal values stay visible).  0 or an error
 * (printed). */
int tb_cli_compare_html(const struct tb_cli_compare *x, const char *json);

#endif
