/*
 * bench_csv.h - the blocks of bench's and merge's CSV summary that the
 * JSON summary writes first (bench_csv.c), flattened by csvflat.h's rule.
 * Output only; any thread.
 */
#ifndef TTSBUF_CLI_BENCH_CSV_H
#define TTSBUF_CLI_BENCH_CSV_H

#include <stdio.h>

#include "ttsbuf/bench.h"

struct cJSON;

/* A level's "retry" block, as the JSON summary writes it (and its CSV
 * cells retry_*). */
void tb_cli_bench_retry_json(struct cJSON *o, const struct tb_bench_summary *x);

/* The CSV's cells of those blocks: with post 0 tts_stats_* (when a level
 * had a real TTS), with post 1 retry_* and llm_capacity_wait_s_* (with
 * --llm-capacity); their names when x is NULL, else x's values (empty
 * cells for a block x lacks).  s has m->nlevels entries. */
void tb_cli_bench_csv_blocks(FILE *f, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s, const struct tb_bench_summary *x,
                             int post);

#endif
