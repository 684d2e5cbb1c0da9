/*
 * bench_rec_parse.h - private to src/bench: one line of a records file
 * read into a record (bench_rec_parse.c), and the two field readers the
 * header's reader (bench_rec_read.c) shares with it.
 *
 * Threads: any; pure but for the record it fills.  Errors: a reason (a
 * static string naming the key), or NULL.
 */
#ifndef TTSBUF_BENCH_REC_PARSE_H
#define TTSBUF_BENCH_REC_PARSE_H

#include "ttsbuf/bench_rec.h"

struct cJSON;

/* A number field of o: finite, or null (NaN) when null_ok (absent is null
 * too).  0, or -1 when it is neither. */
int tb_bench_json_num(const struct cJSON *o, const char *k, int null_ok, double *out);

/* A whole-number field in 0..max, checked as a double before any
 * conversion; null_ok: null or absent gives NaN.  0 or -1. */
int tb_bench_json_count(const struct cJSON *o, const char *k, int null_ok, double max, double *out);

/* What tb_bench_rec_parse returns when memory ran out (not the file's
 * fault): compare the pointer. */
extern const char tb_bench_rec_no_memory[];

/*
 * tb_bench_rec_parse - fills r (from tb_bench_recs_add) from one record
 * line's object o of a file whose header is m, schema version `version`,
 * step by step: the first fault found is the one named.  Returns NULL, a
 * reason, or tb_bench_rec_no_memory.
 */
const char *tb_bench_rec_parse(const struct cJSON *o, const struct tb_bench_meta *m, int version,
                               struct tb_bench_rec *r);

#endif
