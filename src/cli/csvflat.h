/*
 * csvflat.h - a JSON object as CSV columns (csvflat.c): the rule of
 * ttsbuf(1), OUTPUT, for blocks a summary writes as JSON first: nested
 * objects joined by '_', lists left out, null an empty cell.  Output only;
 * any thread.
 */
#ifndef TTSBUF_CLI_CSVFLAT_H
#define TTSBUF_CLI_CSVFLAT_H

#include <stddef.h>
#include <stdio.h>

struct cJSON;

/* Writes o's leaves as CSV cells, each after a ',': their names
 * ("PREFIX_key_sub", "key_sub" when prefix is NULL) when names is non-zero, else their values (a number
 * as %.17g, a string quoted with its '"' doubled, true or false, null
 * empty).  Returns how many cells; o NULL or not an object writes none,
 * f NULL only counts them. */
size_t tb_cli_csv_flat(FILE *f, const struct cJSON *o, const char *prefix, int names);

/* n empty cells: a level without a block the header has. */
void tb_cli_csv_blank(FILE *f, size_t n);

#endif
