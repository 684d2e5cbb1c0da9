/*
 * jsonout.h - what every JSON document ttsbuf writes shares: the
 * self-describing head (schema name and version, ttsbuf version, start
 * time, command), the statistics block, the error object and the
 * playout options.  The schemas are in schema/.
 */
#ifndef TB_CLI_JSONOUT_H
#define TB_CLI_JSONOUT_H

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "ttsbuf/jsonline.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stats.h"

/* Schema names and the versions this ttsbuf writes. */
#define TB_SCHEMA_RESULT "ttsbuf.result"
#define TB_SCHEMA_RESULT_V 1
#define TB_SCHEMA_BENCH_SUMMARY "ttsbuf.bench_summary"
#define TB_SCHEMA_BENCH_SUMMARY_V 1
#define TB_SCHEMA_SWEEP "ttsbuf.sweep"
#define TB_SCHEMA_SWEEP_V 1
#define TB_SCHEMA_COMPARE "ttsbuf.compare"
#define TB_SCHEMA_COMPARE_V 1

/* When this command started, UTC RFC 3339 ("2026-11-30T21:55:38Z"): the
 * wall clock read once, on the first call (main makes it at start). */
const char *tb_cli_started_at(void);

/* A new object with the head: schema {name, version}, ttsbuf_version,
 * started_at, command.  NULL when out of memory. */
cJSON *tb_cli_json_doc(const char *schema, int version, const char *command);

/* key: {count, mean, std, min, p5, p50, p90, p95, p99, max}; every
 * statistic null when count is 0. */
void tb_cli_json_stats(cJSON *o, const char *key, const struct tb_stats *s);

/* The playout options, the same keys in every document: chunk,
 * min_chars, wpm, tts_latency_s (null when the latency is not a constant:
 * opts.tts says what it is), preroll_s, rebuffer. */
void tb_cli_json_playout(cJSON *opts, const struct tb_sim_opts *o);

/* opts.tts: the TTS stage's options as used (tts_opts.h): latency (the
 * canonical spec), seed (null when the draws do not depend on it),
 * connect_s, concurrency (null: unlimited), rtf, preset (null: none).
 * Nothing when no option of the stage was given (the v1 model). */
struct tb_cli_tts;
void tb_cli_json_tts(cJSON *opts, const struct tb_cli_tts *t);

/* root.tts_draws with --tts-draws (tts_draws.h): the draws' object, or
 * null when they were not run; nothing without the option.  seed is the
 * base seed, written as an exact integer. */
struct tb_cli_draws;
void tb_cli_json_draws(cJSON *root, const struct tb_cli_draws *d, uint64_t seed);

/* key: a number, or null when it is not finite (not measured). */
void tb_cli_json_num(cJSON *o, const char *key, double v);

/* key: a string, or null for NULL or "" (a name that was not sent).
 * Returns the item added, NULL when memory ran out. */
cJSON *tb_cli_json_str_or_null(cJSON *o, const char *key, const char *v);

/* A key and its number, a row of tb_cli_json_nums. */
struct tb_cli_json_field {
    const char *key;
    double v;
};

/* Adds n numbers to o in the rows' order (a number that is not finite
 * is written null, as cJSON writes it). */
void tb_cli_json_nums(cJSON *o, const struct tb_cli_json_field *rows, size_t n);

/* A document is written with tb_json_put_line (ttsbuf/jsonline.h). */

#endif
