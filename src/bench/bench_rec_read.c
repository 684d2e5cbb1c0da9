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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "base/numfmt.h"
#include "base/readall.h"
#include "ttsbuf/error.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/trace.h"

/* A number field: finite, or null (NaN) when null_ok. */
static int get_num(const cJSON *o, const char *k, int null_ok, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (null_ok && (v == NULL || cJSON_IsNull(v))) {
        *out = NAN;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -1;
    *out = v->valuedouble;
    return 0;
}

/* Largest whole number a double holds exactly: counts above it cannot
 * have been written by ttsbuf. */
#define WHOLE_MAX 9007199254740992.0

/* A whole-number field in 0..max, checked as a double before any
 * conversion: casting an out-of-range double to an integer type is
 * undefined, and a wrapped value would index past arrays sized by another
 * field.  null_ok: null or absent gives NaN. */
static int get_count(const cJSON *o, const char *k, int null_ok, double max, double *out)
{
    if (get_num(o, k, null_ok, out) != 0)
        return -1;
    if (isnan(*out))
        return 0;
    return *out >= 0 && *out <= max && *out == floor(*out) ? 0 : -1;
}

static int parse_level(const cJSON *l, struct tb_bench_level *out)
{
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(l, "mode");
    double c, rate;
    if (!cJSON_IsString(mode) || get_count(l, "concurrency", 0, TB_BENCH_CONC_MAX, &c) != 0 ||
        get_num(l, "rate", 0, &rate) != 0)
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

/* A record's message (warning 0) or warning (1) from key k of o, cut as
 * the record keeps it.  0 or TB_ENOMEM. */
static int copy_text(const cJSON *o, const char *k, struct tb_bench_rec *r, int warning)
{
    char buf[TB_BENCH_MESSAGE_MAX];
    tb_jsonfield_text(buf, warning ? TB_BENCH_WARNING_MAX : TB_BENCH_MESSAGE_MAX,
                      cJSON_GetObjectItemCaseSensitive(o, k));
    return warning ? tb_bench_rec_warning(r, "%s", buf) : tb_bench_rec_message(r, "%s", buf);
}

/* parse_header's answer for a bad "slo" (any other fault: -1). */
#define SLO_BAD (-2)

static int parse_header(const cJSON *o, struct tb_bench_meta *m)
{
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(o, "levels"), *l;
    double shard, shards;
    memset(m, 0, sizeof(*m));
    if (get_count(o, "shard", 0, TB_BENCH_SHARDS_MAX, &shard) != 0 ||
        get_count(o, "shards", 0, TB_BENCH_SHARDS_MAX, &shards) != 0 || shards < 1 ||
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
    {
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "options");
        char *t = cJSON_IsObject(op) ? cJSON_PrintUnformatted(op) : NULL;
        if (t == NULL || strlen(t) >= sizeof(m->options)) {
            free(t);
            return -1;
        }
        memcpy(m->options, t, strlen(t) + 1);
        free(t);
    }
    {
        const cJSON *cv = cJSON_GetObjectItemCaseSensitive(o, "conversations");
        char *t = cJSON_IsObject(cv) ? cJSON_PrintUnformatted(cv) : NULL;
        if (cv != NULL && (t == NULL || strlen(t) >= sizeof(m->conversations))) {
            free(t);
            return -1;
        }
        if (t != NULL)
            memcpy(m->conversations, t, strlen(t) + 1);
        free(t);
    }
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

/* The record's level index: version 3 names the level ("c=10", as the
 * report does), version 2 gave its index.  0 or -1. */
static int rec_level(const cJSON *o, const struct tb_bench_meta *m, int version, double *level)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "level");
    if (version == 2)
        return get_count(o, "level", 0, TB_BENCH_LEVELS_MAX, level) == 0 && *level < m->nlevels
                   ? 0
                   : -1;
    if (!cJSON_IsString(l))
        return -1;
    for (uint32_t i = 0; i < m->nlevels; i++) {
        char name[64];
        tb_bench_level_name(&m->levels[i], name, sizeof(name));
        if (strcmp(name, l->valuestring) == 0) {
            *level = i;
            return 0;
        }
    }
    return -1;
}

/* What parse_rec returns when memory ran out (not the file's fault). */
static const char no_memory[] = "out of memory";

/* A sample array of "tts" (non-negative, finite): *out malloc'd. */
static const char *read_samples(const cJSON *t, const char *key, double **out, size_t *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(t, key), *v;
    size_t i = 0;
    if (!cJSON_IsArray(a))
        return "\"tts\" lacks an array of samples";
    *n = (size_t)cJSON_GetArraySize(a);
    *out = malloc((*n + 1) * sizeof(double));
    if (*out == NULL)
        return no_memory;
    cJSON_ArrayForEach(v, a)
    {
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= TB_TIME_MAX))
            return "\"tts\" holds a sample that is negative, past 1e9 or not a number";
        (*out)[i++] = v->valuedouble;
    }
    return NULL;
}

/* A real TTS's "tts" object, read back (absent: none). */
static const char *read_tts(const cJSON *o, struct tb_bench_rec *r)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "tts");
    double c[5], audio;
    static const char *const keys[5] = {"chunks", "sent", "failed", "canceled", "chars"};
    const char *why;
    if (t == NULL)
        return NULL;
    if (!cJSON_IsObject(t))
        return "\"tts\" is not an object";
    for (int i = 0; i < 5; i++)
        if (get_count(t, keys[i], 0, i < 4 ? 4294967295.0 : 9007199254740992.0, &c[i]) != 0)
            return "\"tts\" lacks a count (chunks, sent, failed, canceled, chars)";
    if (get_num(t, "audio_s", 1, &audio) != 0 || audio < 0)
        return "\"tts\" has no audio_s, or a negative one";
    r->tts = 1;
    r->tts_chunks = (uint32_t)c[0];
    r->tts_sent = (uint32_t)c[1];
    r->tts_failed = (uint32_t)c[2];
    r->tts_canceled = (uint32_t)c[3];
    r->tts_chars = (uint64_t)c[4];
    r->tts_audio_s = audio;
    why = read_samples(t, "first_byte_s", &r->tts_fb, &r->ntts_fb);
    return why != NULL ? why : read_samples(t, "rtf", &r->tts_rtf, &r->ntts_rtf);
}

/* Where the wait went (absent: a record of an older version, every part
 * null): each part a time or null, and v2v their sum. */
static const char *read_latency(const cJSON *o, struct tb_bench_rec *r)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "latency");
    double sum = 0.0;
    tb_turn_lat_clear(&r->lat);
    if (l == NULL)
        return NULL;
    if (!cJSON_IsObject(l))
        return "\"latency\" is not an object";
    for (int i = 0; i < TB_TURN_LAT_PARTS; i++) {
        double v;
        if (get_num(l, tb_turn_lat_keys[i], 1, &v) != 0 ||
            !(isnan(v) || (v >= 0 && v <= TB_TIME_MAX)))
            return "a part of \"latency\" is not null or a time in 0..1e9 s";
        tb_turn_lat_set(&r->lat, i, v);
        if (i < TB_TURN_LAT_PARTS - 1)
            sum += v;
    }
    if (!(isnan(sum) && isnan(r->lat.v2v)) && !(fabs(sum - r->lat.v2v) <= 1e-9))
        return "\"latency.v2v_s\" is not the sum of its parts";
    return NULL;
}

/* A call's barge-in keys (bench_rec.h), when "interrupted" is there:
 * all of them, consistent.  Returns a reason or NULL. */
static const char *parse_barge(const cJSON *o, struct tb_bench_rec *r)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "interrupted");
    double recv, unheard, chars;
    if (in == NULL)
        return NULL;
    if (!cJSON_IsBool(in))
        return "\"interrupted\" is not true or false";
    r->barge = 1;
    r->interrupted = cJSON_IsTrue(in);
    if (get_num(o, "barge_in_s", 1, &r->barge_in) != 0 ||
        get_num(o, "cancel_s", 1, &r->cancel_s) != 0 ||
        get_num(o, "cancel_mono_s", 1, &r->cancel_mono_s) != 0)
        return "\"barge_in_s\", \"cancel_s\" or \"cancel_mono_s\" is missing or not a number or "
               "null";
    if (r->interrupted != !isnan(r->barge_in) ||
        !(isnan(r->barge_in) || (r->barge_in >= 0 && r->barge_in <= TB_TIME_MAX)))
        return "\"barge_in_s\" is a time (0..1e9 s) when \"interrupted\", null otherwise";
    if (isnan(r->cancel_s) != isnan(r->cancel_mono_s) ||
        (!isnan(r->cancel_s) && (!r->interrupted || !(r->cancel_s >= 0) ||
                                 r->cancel_s > TB_TIME_MAX || !(r->cancel_mono_s >= 0))))
        return "\"cancel_s\" and \"cancel_mono_s\" are times of an interrupted turn, together";
    if (get_count(o, "tokens_received", 0, WHOLE_MAX, &recv) != 0 ||
        get_count(o, "tokens_unheard", 0, WHOLE_MAX, &unheard) != 0 ||
        get_count(o, "chars_unplayed", 0, WHOLE_MAX, &chars) != 0)
        return "\"tokens_received\", \"tokens_unheard\" or \"chars_unplayed\" is missing, "
               "negative, fractional or out of range";
    if (unheard > recv || (!r->interrupted && (unheard > 0 || chars > 0)))
        return "\"tokens_unheard\" is more than \"tokens_received\", or a turn not interrupted "
               "left something unheard";
    r->tokens_received = (uint64_t)recv;
    r->tokens_unheard = (uint64_t)unheard;
    r->chars_unplayed = (uint64_t)chars;
    return NULL;
}

/* Fills a record from one line's object; returns a reason or NULL. */
static const char *parse_rec(const cJSON *o, const struct tb_bench_meta *m, int version,
                             struct tb_bench_rec *r)
{
    double level, id, prompt, status, events, tokens, usage, under, ignored, sur;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "warning");
    const cJSON *end = cJSON_GetObjectItemCaseSensitive(o, "end");
    const cJSON *itl = cJSON_GetObjectItemCaseSensitive(o, "itl_s"), *v;
    if (rec_level(o, m, version, &level) != 0)
        return version == 2 ? "\"level\" is missing or not one of the header's levels"
                            : "\"level\" is missing or not the name of one of the header's "
                              "levels (c=10, rate=5/s (poisson))";
    if (get_count(o, "id", 0, WHOLE_MAX, &id) != 0 ||
        get_count(o, "prompt", 0, UINT32_MAX, &prompt) != 0)
        return "\"id\" or \"prompt\" is missing or not a whole number in range";
    {
        /* A call's turn: both keys or neither. */
        const cJSON *call = cJSON_GetObjectItemCaseSensitive(o, "call");
        const cJSON *turn = cJSON_GetObjectItemCaseSensitive(o, "turn");
        double c, t;
        if ((call != NULL) != (turn != NULL))
            return "\"call\" and \"turn\" come together";
        if (call != NULL) {
            if (get_count(o, "call", 0, WHOLE_MAX, &c) != 0 ||
                get_count(o, "turn", 0, INT32_MAX, &t) != 0)
                return "\"call\" or \"turn\" is not a whole number in range";
            r->call = (int64_t)c;
            r->turn = (int32_t)t;
            if (get_num(o, "play_end_s", 1, &r->play_end) != 0 ||
                !(isnan(r->play_end) || (r->play_end >= 0 && r->play_end <= TB_TIME_MAX)))
                return "\"play_end_s\" is negative, past 1e9 s or not a number";
            {
                const char *why = parse_barge(o, r);
                if (why != NULL)
                    return why;
            }
        }
    }
    if (get_num(o, "t_sched", 0, &r->t_sched) != 0 || get_num(o, "t_start", 0, &r->t_start) != 0 ||
        get_num(o, "t_end", 0, &r->t_end) != 0)
        return "\"t_sched\", \"t_start\" or \"t_end\" is missing";
    if (!(r->t_sched >= 0 && r->t_sched <= TB_TIME_MAX) ||
        !(r->t_start >= 0 && r->t_start <= TB_TIME_MAX) ||
        !(r->t_end >= 0 && r->t_end <= TB_TIME_MAX))
        return "\"t_sched\", \"t_start\" or \"t_end\" is negative or past 1e9 s";
    if (get_count(o, "http_status", 0, 999, &status) != 0 ||
        get_count(o, "events", 0, WHOLE_MAX, &events) != 0 ||
        get_count(o, "content_tokens", 0, WHOLE_MAX, &tokens) != 0 ||
        get_count(o, "underruns", 0, UINT32_MAX, &under) != 0 ||
        get_count(o, "usage_tokens", 1, WHOLE_MAX, &usage) != 0 ||
        get_count(o, "usage_ignored", 1, WHOLE_MAX, &ignored) != 0 ||
        get_count(o, "surrogates_replaced", 1, WHOLE_MAX, &sur) != 0)
        return "a count is missing, negative, fractional or out of range";
    {
        /* Every metric is a time, a rate or a ratio: none can be negative
         * (a summary of them would be quietly wrong). */
        const struct {
            const char *key, *why;
            double *dst, max;
        } metrics[] = {
#define TIME(k, field)                                                                             \
    {k, "\"" k "\" is negative or past 1e9 s, or not a number or null", &r->field, TB_TIME_MAX}
#define RATE(k, field)                                                                             \
    {                                                                                              \
        k, "\"" k "\" is negative, or not a number or null", &r->field, HUGE_VAL                   \
    }
            TIME("ttft_s", ttft),           TIME("ttfa_s", ttfa),
            RATE("decode_tps", decode_tps), RATE("decode_tps_usage", decode_tps_usage),
            TIME("gap_total_s", gap_total), TIME("gap_max_s", gap_max),
            RATE("min_tps", min_tps),       RATE("speedup_needed", speedup),
#undef TIME
#undef RATE
        };
        for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
            if (get_num(o, metrics[i].key, 1, metrics[i].dst) != 0 || *metrics[i].dst < 0 ||
                *metrics[i].dst > metrics[i].max)
                return metrics[i].why;
    }
    r->level = (uint32_t)level;
    r->id = (uint64_t)id;
    r->prompt = (uint32_t)prompt;
    r->http_status = (long)status;
    r->events = (uint64_t)events;
    r->content_tokens = (uint64_t)tokens;
    r->usage_tokens = isnan(usage) ? -1 : (long long)usage;
    r->usage_ignored = isnan(ignored) ? -1 : (long long)ignored;
    r->surrogates_replaced = isnan(sur) ? 0 : (uint64_t)sur;
    r->underruns = (uint32_t)under;
    if (cJSON_IsObject(e)) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
        r->error = -1;
        for (int i = 1; cJSON_IsString(k) && i < TB_READER__COUNT; i++)
            if (strcmp(k->valuestring, tb_reader_error_name(i)) == 0)
                r->error = i;
        if (r->error < 0)
            return "\"error.kind\" is not a known kind";
        if (copy_text(e, "message", r, 0) != 0)
            return no_memory;
    } else if (e != NULL && !cJSON_IsNull(e)) {
        return "\"error\" is neither null nor an object";
    }
    if (w != NULL && !cJSON_IsString(w))
        return "\"warning\" is not a string";
    /* How the stream ended; records written before the key derive it
     * from the error, as the stream reader would have. */
    if (end != NULL) {
        r->end = cJSON_IsString(end) ? tb_end_parse(end->valuestring) : -1;
        if (r->end < 0)
            return "\"end\" is not a stream end (complete, connection_lost, error, ...)";
    } else {
        r->end = tb_reader_end_kind(r->error, 1, r->events > 0);
    }
    /* a real TTS that failed fails a stream that came whole */
    /* ... and a stream the caller closed at its barge-in ended
     * "interrupted" with no error */
    if ((r->error == 0 || r->error == TB_READER_TTS) !=
            (tb_end_class(r->end) == TB_END_CLASS_COMPLETE) &&
        !(r->error == 0 && r->end == TB_END_INTERRUPTED && !isnan(r->cancel_s)))
        return "\"end\" contradicts \"error\" (a complete end has no error but tts, and only "
               "it)";
    /* A what-if needs the whole answer: a failed request has none, as the
     * writer says (whatever the file holds). */
    if (r->error != 0)
        r->min_tps = r->speedup = NAN;
    {
        /* A TTS stage's keys come together, or not at all. */
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(o, "min_tps_reason");
        if (why != NULL) {
            if (!cJSON_IsNull(why) &&
                !(cJSON_IsString(why) && strcmp(why->valuestring, TB_MIN_TPS_NONE_REASON) == 0))
                return "\"min_tps_reason\" is neither null nor \"" TB_MIN_TPS_NONE_REASON "\"";
            if (get_num(o, "gap_llm_s", 1, &r->gap_llm) != 0 || r->gap_llm < 0 ||
                r->gap_llm > TB_TIME_MAX || get_num(o, "gap_tts_s", 1, &r->gap_tts) != 0 ||
                r->gap_tts < 0 || r->gap_tts > TB_TIME_MAX)
                return "\"gap_llm_s\" or \"gap_tts_s\" is missing, negative or past 1e9 s";
            r->staged = 1;
            r->min_tps_none = r->error == 0 && cJSON_IsString(why);
            if (r->min_tps_none && !isnan(r->min_tps))
                return "\"min_tps\" is a number beside a reason why there is none";
        }
    }
    if (copy_text(o, "warning", r, 1) != 0)
        return no_memory;
    {
        const char *why = read_tts(o, r);
        if (why == NULL)
            why = read_latency(o, r);
        if (why != NULL)
            return why;
    }
    {
        /* "good" is derived: it must be what the fields and the header's
         * SLOs give (a file edited by hand, or another definition). */
        const cJSON *good = cJSON_GetObjectItemCaseSensitive(o, "good");
        if (m->slo.set == 0 && good != NULL)
            return "\"good\" without SLOs in the header (\"slo\")";
        if (m->slo.set != 0 && !cJSON_IsBool(good))
            return "\"good\" (true or false) is missing: the header has SLOs";
        if (m->slo.set != 0 && cJSON_IsTrue(good) != tb_bench_slo_good(&m->slo, r))
            return cJSON_IsTrue(good) ? "\"good\" is true, but the record misses the header's "
                                        "SLOs (or failed, or did not measure one)"
                                      : "\"good\" is false, but the record meets the header's "
                                        "SLOs";
    }
    if (!cJSON_IsArray(itl))
        return "\"itl_s\" is not an array";
    r->nitl = (size_t)cJSON_GetArraySize(itl);
    if (r->nitl > 0) {
        size_t i = 0;
        r->itl = malloc(r->nitl * sizeof(double));
        if (r->itl == NULL)
            return no_memory;
        cJSON_ArrayForEach(v, itl)
        {
            if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= TB_TIME_MAX))
                return "\"itl_s\" holds a negative number, one past 1e9 s or a non-number";
            r->itl[i++] = v->valuedouble;
        }
    }
    return NULL;
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
            why = r == NULL ? no_memory : parse_rec(o, m, version, r);
        }
        cJSON_Delete(o);
        if (why != NULL)
            rc = tb_seterr(err, errlen, why == no_memory ? TB_ENOMEM : TB_EFORMAT, "%s:%zu: %s",
                           name, in.lineno, why);
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
