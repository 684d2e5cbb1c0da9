/*
 * bench_rec_read.c - a records file read back (`ttsbuf merge`, `compare`):
 * its header, then each record, every field checked (its kind, its range,
 * null where the writer writes null) and refused naming the file, the
 * line and the key.  The writer is bench_rec.c; a summary computed from
 * what this reads equals the one computed in memory (the doubles were
 * printed to read back bit-identical).
 */
#include "ttsbuf/bench_rec.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "bench_rec_parse.h"
#include "base/numfmt.h"
#include "base/readall.h"
#include "ttsbuf/error.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/trace.h"

static int parse_level(const cJSON *l, struct tb_bench_level *out)
{
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(l, "mode");
    double c, rate;
    if (!cJSON_IsString(mode) ||
        tb_bench_json_count(l, "concurrency", 0, TB_BENCH_CONC_MAX, &c) != 0 ||
        tb_bench_json_num(l, "rate", 0, &rate) != 0)
        return -1;
    if (strcmp(mode->valuestring, "closed") == 0)
        out->mode = TB_BENCH_CLOSED;
    else if (strcmp(mode->valuestring, "poisson") == 0)
        out->mode = TB_BENCH_POISSON;
    else if (strcmp(mode->valuestring, "constant") == 0)
        out->mode = TB_BENCH_CONSTANT;
    else if (strcmp(mode->valuestring, "calls") == 0)
        out->mode = TB_BENCH_CALLS;
    else if (strcmp(mode->valuestring, "calls_poisson") == 0)
        out->mode = TB_BENCH_CALLS_POISSON;
    else
        return -1;
    out->concurrency = (uint32_t)c;
    out->rate = rate;
    return 0;
}

/* The string at key k, cut at a UTF-8 boundary (jsonfield.h, as every
 * reader of outside JSON does); "" when it is not a string. */
static void copy_str(const cJSON *o, const char *k, char *dst, size_t cap)
{
    tb_jsonfield_text(dst, cap, cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The object at key k of o, printed into dst (cap bytes): 0, or -1 when
 * it is not an object (absent: only when required) or does not fit. */
static int copy_object(const cJSON *o, const char *k, int required, char *dst, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    char *t = cJSON_IsObject(v) ? cJSON_PrintUnformatted(v) : NULL;
    int rc = (v != NULL || required) && (t == NULL || strlen(t) >= cap) ? -1 : 0;
    if (rc == 0 && t != NULL)
        memcpy(dst, t, strlen(t) + 1);
    free(t);
    return rc;
}

/* parse_header's answer for a bad "slo" (any other fault: -1). */
#define SLO_BAD (-2)

static int parse_header(const cJSON *o, struct tb_bench_meta *m)
{
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(o, "levels"), *l;
    double shard, shards;
    memset(m, 0, sizeof(*m));
    if (tb_bench_json_count(o, "shard", 0, TB_BENCH_SHARDS_MAX, &shard) != 0 ||
        tb_bench_json_count(o, "shards", 0, TB_BENCH_SHARDS_MAX, &shards) != 0 || shards < 1 ||
        shard >= shards || !cJSON_IsArray(lv))
        return -1;
    m->shard = (uint32_t)shard;
    m->nshards = (uint32_t)shards;
    cJSON_ArrayForEach(l, lv)
    {
        if (m->nlevels == TB_BENCH_LEVELS_MAX || parse_level(l, &m->levels[m->nlevels]) != 0)
            return -1;
        m->nlevels++;
    }
    /* A record names its level (version 3): two levels of one name
     * would make it ambiguous. */
    for (uint32_t i = 0; i < m->nlevels; i++)
        for (uint32_t j = 0; j < i; j++) {
            char a[64], b[64];
            tb_bench_level_name(&m->levels[i], a, sizeof(a));
            tb_bench_level_name(&m->levels[j], b, sizeof(b));
            if (strcmp(a, b) == 0)
                return -1;
        }
    if (copy_object(o, "options", 1, m->options, sizeof(m->options)) != 0 ||
        copy_object(o, "conversations", 0, m->conversations, sizeof(m->conversations)) != 0)
        return -1;
    copy_str(o, "started_at", m->started_at, sizeof(m->started_at));
    copy_str(o, "ttsbuf_version", m->ttsbuf_version, sizeof(m->ttsbuf_version));
    copy_str(o, "model", m->model, sizeof(m->model));
    copy_str(o, "base_url", m->base_url, sizeof(m->base_url));
    copy_str(o, "provider", m->provider, sizeof(m->provider));
    {
        /* bench --slo: absent when none was given */
        const cJSON *slo = cJSON_GetObjectItemCaseSensitive(o, "slo");
        if (slo != NULL && tb_bench_slo_from_json(slo, &m->slo) != 0)
            return SLO_BAD;
    }
    return 0;
}

/* NULL when the header is of the schema version this reads; else why not
 * (naming the version the file has and the one this needs). */
static const char *header_version(const cJSON *o, int *version, char *buf, size_t len)
{
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(o, "schema");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(sc, "name");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sc, "version");
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(o, "ttsbuf_bench");
    char have[32];
    if (cJSON_IsNumber(old) && sc == NULL) {
        /* The version as written, to the last digit: %g would call 2.0000001 "2". */
        tb_numfmt_double(have, sizeof(have), old->valuedouble);
        snprintf(buf, len,
                 "bench records of schema version %s (\"ttsbuf_bench\": %s, an older ttsbuf); "
                 "this ttsbuf reads %s version %d: record them again with this version",
                 have, have, TB_BENCH_RECORDS_SCHEMA, TB_BENCH_RECORDS_VERSION);
        return buf;
    }
    if (!cJSON_IsString(nm) || strcmp(nm->valuestring, TB_BENCH_RECORDS_SCHEMA) != 0 ||
        !cJSON_IsNumber(v))
        return "not a ttsbuf bench records header (no \"schema\": {\"name\": "
               "\"ttsbuf.bench_records\", \"version\": N})";
    /* Version 2 differs only in naming a record's level by its index. */
    if (v->valuedouble != TB_BENCH_RECORDS_VERSION && v->valuedouble != 2) {
        snprintf(buf, len,
                 "bench records of schema version %s; this ttsbuf reads %s versions 2 and %d",
                 tb_numfmt_double(have, sizeof(have), v->valuedouble), TB_BENCH_RECORDS_SCHEMA,
                 TB_BENCH_RECORDS_VERSION);
        return buf;
    }
    *version = (int)v->valuedouble;
    return NULL;
}

int tb_bench_read_stream(FILE *f, const char *name, struct tb_bench_meta *m,
                         struct tb_bench_recs *out, char *err, size_t errlen)
{
    char vwhy[256];
    struct tb_lines in;
    int rc = 0, got, have_header = 0, version = TB_BENCH_RECORDS_VERSION;
    tb_lines_init(&in, f, TB_TRACE_LINE_MAX);
    while (rc == 0 && (got = tb_lines_next(&in)) == 1) {
        char *line = in.line;
        size_t len = in.len;
        cJSON *o;
        const char *why = NULL;
        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = '\0';
        if (len == 0)
            continue;
        o = cJSON_ParseWithLength(line, len);
        if (!cJSON_IsObject(o)) {
            cJSON_Delete(o);
            rc = tb_seterr(err, errlen, TB_EFORMAT, "%s:%zu: not a JSON object", name, in.lineno);
            break;
        }
        if (!have_header) {
            why = header_version(o, &version, vwhy, sizeof(vwhy));
            int hrc = why == NULL ? parse_header(o, m) : 0;
            if (hrc == SLO_BAD)
                why = "\"slo\" is not an object of SLOs (ttft_s, ttfa_s, gap_total_s, gap_max_s, "
                      "underruns, decode_tps, decode_tps_usage, min_tps, speedup_needed: a "
                      "number in 0..1e12; gapless: true)";
            else if (hrc != 0)
                why = "not a ttsbuf bench records header (schema, options, shard, shards, "
                      "levels of distinct names)";
            have_header = 1;
        } else {
            struct tb_bench_rec *r = tb_bench_recs_add(out);
            why = r == NULL ? tb_bench_rec_no_memory : tb_bench_rec_parse(o, m, version, r);
        }
        cJSON_Delete(o);
        if (why != NULL)
            rc = tb_seterr(err, errlen, why == tb_bench_rec_no_memory ? TB_ENOMEM : TB_EFORMAT,
                           "%s:%zu: %s", name, in.lineno, why);
    }
    if (rc == 0 && got < 0)
        rc = tb_lines_fail(&in, got, name, TB_TRACE_LINE_MAX, err, errlen);
    if (rc == 0 && !have_header)
        rc = tb_seterr(err, errlen, TB_EEMPTY, "%s: empty (no header)", name);
    tb_lines_free(&in);
    return rc;
}

int tb_bench_read(const char *path, struct tb_bench_meta *m, struct tb_bench_recs *out, char *err,
                  size_t errlen)
{
    FILE *f = fopen(path, "rb");
    int rc;
    if (f == NULL)
        return tb_seterr(err, errlen, TB_EIO, "%s: %s", path, strerror(errno));
    rc = tb_bench_read_stream(f, path, m, out, err, errlen);
    fclose(f);
    return rc;
}
