/*
 * compare_rows.h - what `ttsbuf compare` writes of its runs
 * (compare_rows.c): the table, a block per level (a row per run, the
 * statistics, the barge-in rows and the rows by turn when a run has
 * them), the JSON document and the CSV rows.
 */
#ifndef TTSBUF_CLI_COMPARE_ROWS_H
#define TTSBUF_CLI_COMPARE_ROWS_H

#include <cJSON.h>
#include <stdio.h>

#include "compare.h"

/* The table on f. */
void tb_cli_compare_human(FILE *f, const struct tb_cli_compare *x);
/* The JSON document (schema ttsbuf.compare), or NULL when out of memory;
 * the caller owns it. */
cJSON *tb_cli_compare_json(const struct tb_cli_compare *x);
/* The CSV rows on f, a header line first. */
void tb_cli_compare_csv(FILE *f, const struct tb_cli_compare *x);

#endif
