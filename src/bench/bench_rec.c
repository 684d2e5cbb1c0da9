/*
 * bench_rec.c - `ttsbuf bench` records (see bench.h): each request's
 * playout, and the records file they are written to and read back from
 * (`ttsbuf merge`).  Doubles are printed by tb_numfmt_double, so they read
 * back bit-identical (cJSON's own printing accepts a 15-digit form within
 * an epsilon, which can be one unit in the last place off), and a summary
 * computed from a file equals the one computed in memory.
 */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/jsonfield.h"
#include "base/numfmt.h"
#include "base/readall.h"
#include "ttsbuf/bench_rec.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/jsonline.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/trace.h"

void tb_bench_level_name(const struct tb_bench_level *l, char *out, size_t outlen)
{
    if (l->mode == TB_BENCH_CLOSED)
        snprintf(out, outlen, "c=%u", l->concurrency);
    else if (l->mode == TB_BENCH_CALLS)
        snprintf(out, outlen, "calls=%u", l->concurrency);
    else if (l->mode == TB_BENCH_CALLS_POISSON)
        snprintf(out, outlen, "calls=%g/s (poisson)", l->rate);
    else if (l->concurrency > 0)
        snprintf(out, outlen, "rate=%g/s (%s, max %u)", l->rate,
                 l->mode == TB_BENCH_POISSON ? "poisson" : "constant", l->concurrency);
    else
        snprintf(out, outlen, "rate=%g/s (%s)", l->rate,
                 l->mode == TB_BENCH_POISSON ? "poisson" : "constant");
}

/* The text of a record's empty message or warning: no memory of its own. */
static const char none[] = "";

/* A message or warning back to "", its memory freed. */
static void unsay(const char **slot)
{
    if (*slot != NULL && *slot != none)
        free((void *)(uintptr_t)*slot); /* owned: made by say's strdup */
    *slot = none;
}

/* *slot set to fmt's text, cut to cap - 1 bytes (cap <= TB_BENCH_MESSAGE_MAX),
 * the text before freed.  0 or TB_ENOMEM (then ""). */
__attribute__((format(printf, 3, 0))) static int say(const char **slot, size_t cap,
                                                     const char *fmt, va_list ap)
{
    char buf[TB_BENCH_MESSAGE_MAX];
    char *t;
    vsnprintf(buf, cap, fmt, ap);
    unsay(slot);
    if (buf[0] == '\0')
        return 0;
    t = strdup(buf);
    if (t == NULL)
        return TB_ENOMEM;
    *slot = t;
    return 0;
}

int tb_bench_rec_message(struct tb_bench_rec *rec, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = say(&rec->message, TB_BENCH_MESSAGE_MAX, fmt, ap);
    va_end(ap);
    return rc;
}

int tb_bench_rec_warning(struct tb_bench_rec *rec, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = say(&rec->warning, TB_BENCH_WARNING_MAX, fmt, ap);
    va_end(ap);
    return rc;
}

void tb_bench_recs_init(struct tb_bench_recs *r)
{
    memset(r, 0, sizeof(*r));
}

void tb_bench_recs_free(struct tb_bench_recs *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].itl);
        free(r->v[i].tts_fb);
        free(r->v[i].tts_rtf);
        tb_stream_free(r->v[i].stream);
        free(r->v[i].stream);
        unsay(&r->v[i].message);
        unsay(&r->v[i].warning);
    }
    free(r->v);
    tb_bench_recs_init(r);
}

size_t tb_bench_recs_warned(const struct tb_bench_recs *r, const char **first)
{
    size_t n = 0;
    if (first != NULL)
        *first = NULL;
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].warning[0] == '\0')
            continue;
        if (n++ == 0 && first != NULL)
            *first = r->v[i].warning;
    }
    return n;
}

struct tb_bench_rec *tb_bench_recs_add(struct tb_bench_recs *r)
{
    struct tb_bench_rec *rec;
    struct tb_stream *s = malloc(sizeof(*s));
    if (s == NULL)
        return NULL;
    if (r->n == r->cap) {
        struct tb_bench_rec *nv = tb_grow(r->v, &r->cap, sizeof(*nv), 64);
        if (nv == NULL) {
            free(s);
            return NULL;
        }
        r->v = nv;
    }
    rec = &r->v[r->n++];
    memset(rec, 0, sizeof(*rec));
    rec->usage_tokens = rec->usage_ignored = -1;
    rec->call = -1;
    rec->turn = -1;
    rec->ttft = rec->ttfa = rec->decode_tps = rec->decode_tps_usage = NAN;
    rec->gap_total = rec->gap_max = rec->min_tps = rec->speedup = NAN;
    rec->gap_llm = rec->gap_tts = NAN;
    rec->play_end = NAN;
    rec->barge_in = rec->cancel_s = rec->cancel_mono_s = NAN;
    rec->message = rec->warning = none;
    rec->stream = s;
    tb_stream_init(rec->stream);
    rec->stream->usage_tokens = -1;
    return rec;
}

int tb_bench_rec_tts(struct tb_bench_rec *rec, const struct tb_tts_log *log)
{
    struct tb_tts_stats st;
    size_t n = log->n > 0 ? log->n : 1;
    int rc = tb_tts_stats_of(log, &st);
    if (rc != 0)
        return rc;
    free(rec->tts_fb);
    free(rec->tts_rtf);
    rec->ntts_fb = rec->ntts_rtf = 0;
    rec->tts_fb = malloc(n * sizeof(double));
    rec->tts_rtf = malloc(n * sizeof(double));
    if (rec->tts_fb == NULL || rec->tts_rtf == NULL)
        return TB_ENOMEM;
    /* the samples tb_tts_stats_of takes, in chunk order */
    for (size_t i = 0; i < log->n; i++) {
        const struct tb_tts_chunk *c = &log->c[i];
        double lat, rtf, dur;
        if (!isnan(c->sent) && !isnan(c->first_byte) && c->first_byte >= c->sent)
            rec->tts_fb[rec->ntts_fb++] = c->first_byte - c->sent;
        if (tb_tts_chunk_model(c, &lat, &rtf, &dur) == 0 && dur > 0)
            rec->tts_rtf[rec->ntts_rtf++] = rtf;
    }
    rec->tts = 1;
    rec->tts_chunks = st.chunks;
    rec->tts_sent = st.sent;
    rec->tts_failed = st.failed;
    rec->tts_canceled = st.canceled;
    rec->tts_chars = st.chars;
    rec->tts_audio_s = st.audio_s;
    return 0;
}

int tb_bench_analyze(struct tb_bench_rec *rec, const struct tb_sim_opts *o, char *err,
                     size_t errlen)
{
    return tb_bench_analyze_play(rec, rec->stream, o, err, errlen);
}

int tb_bench_analyze_play(struct tb_bench_rec *rec, const struct tb_stream *play,
                          const struct tb_sim_opts *o, char *err, size_t errlen)
{
    struct tb_sim_result r;
    struct tb_clock clk;
    const struct tb_stream *s = rec->stream;
    double prev = NAN;
    size_t k = 0;
    int rc;

    rec->events = rec->content_tokens = 0;
    rec->staged = tb_playout_has_stage(&o->play);
    for (size_t i = 0; i < s->n; i++) {
        if (s->ev[i].kind != TB_KIND_CONTENT)
            continue;
        rec->events++;
        rec->content_tokens += s->ev[i].tokens;
    }
    free(rec->itl);
    rec->itl = NULL;
    rec->nitl = 0;
    if (rec->events == 0)
        return 0;
    if (rec->events > 1) {
        rec->itl = malloc((rec->events - 1) * sizeof(double));
        if (rec->itl == NULL)
            return TB_ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (s->ev[i].kind != TB_KIND_CONTENT)
            continue;
        if (k++ > 0)
            rec->itl[rec->nitl++] = s->ev[i].t - prev;
        prev = s->ev[i].t;
    }
    tb_clock_virtual_init(&clk);
    rc = tb_sim_run(play, o, &clk, NULL, NULL, &r, err, errlen);
    if (rc != 0)
        return rc;
    rec->ttft = r.ttft;
    rec->ttfa = r.play.ttfa;
    rec->decode_tps = r.content_events > 1 ? r.decode_tps : NAN;
    rec->decode_tps_usage = r.decode_tps_usage > 0 ? r.decode_tps_usage : NAN;
    rec->underruns = r.play.underruns;
    rec->gap_total = r.play.gap_total;
    rec->gap_max = r.play.gap_max;
    /* A what-if needs the whole answer: none for a failed request (the
     * records, the summaries and the page then agree). */
    rec->min_tps = rec->error == 0 ? r.play.min_tps : NAN;
    rec->speedup = rec->error == 0 ? r.play.speedup : NAN;
    rec->play_end = r.play.chunks > 0 ? r.play.end : NAN;
    rec->gap_llm = r.play.gap_llm;
    rec->gap_tts = r.play.gap_tts;
    rec->min_tps_none = rec->error == 0 && r.play.min_tps_none;
    return 0;
}

/* ---- the file ---- */

static const char *mode_name(enum tb_bench_mode m)
{
    switch (m) {
    case TB_BENCH_POISSON: return "poisson";
    case TB_BENCH_CONSTANT: return "constant";
    case TB_BENCH_CALLS: return "calls";
    case TB_BENCH_CALLS_POISSON: return "calls_poisson";
    default: return "closed";
    }
}

int tb_bench_write_header(FILE *f, const struct tb_bench_meta *m)
{
    cJSON *o = cJSON_CreateObject(), *lv = cJSON_CreateArray(), *sc = cJSON_CreateObject();
    cJSON *opts = cJSON_Parse(m->options);
    if (o == NULL || lv == NULL || sc == NULL) {
        cJSON_Delete(o);
        cJSON_Delete(lv);
        cJSON_Delete(sc);
        cJSON_Delete(opts);
        return TB_ENOMEM;
    }
    if (!cJSON_IsObject(opts)) {
        cJSON_Delete(opts);
        opts = cJSON_CreateObject();
    }
    cJSON_AddStringToObject(sc, "name", TB_BENCH_RECORDS_SCHEMA);
    cJSON_AddNumberToObject(sc, "version", TB_BENCH_RECORDS_VERSION);
    cJSON_AddItemToObject(o, "schema", sc);
    cJSON_AddStringToObject(o, "ttsbuf_version", m->ttsbuf_version);
    cJSON_AddStringToObject(o, "started_at", m->started_at);
    cJSON_AddStringToObject(o, "command", "bench");
    cJSON_AddItemToObject(o, "options", opts);
    cJSON_AddNumberToObject(o, "shard", m->shard);
    cJSON_AddNumberToObject(o, "shards", m->nshards);
    for (uint32_t i = 0; i < m->nlevels; i++) {
        cJSON *l = cJSON_CreateObject();
        if (l == NULL)
            break;
        cJSON_AddStringToObject(l, "mode", mode_name(m->levels[i].mode));
        cJSON_AddNumberToObject(l, "concurrency", m->levels[i].concurrency);
        tb_json_add_num(l, "rate", m->levels[i].rate);
        cJSON_AddItemToArray(lv, l);
    }
    cJSON_AddItemToObject(o, "levels", lv);
    cJSON_AddStringToObject(o, "model", m->model);
    cJSON_AddStringToObject(o, "base_url", m->base_url);
    cJSON_AddStringToObject(o, "provider", m->provider[0] ? m->provider : "remote");
    if (m->conversations[0] != '\0') {
        /* Only in a run of calls, so that the headers of requests are as before. */
        cJSON *cv = cJSON_Parse(m->conversations);
        if (cv != NULL && !cJSON_AddItemToObject(o, "conversations", cv))
            cJSON_Delete(cv);
    }
    if (m->slo.set != 0) {
        /* Only with SLOs, so that records without them are as before. */
        cJSON *slo = tb_bench_slo_json(&m->slo);
        if (slo == NULL) {
            cJSON_Delete(o);
            return TB_ENOMEM;
        }
        cJSON_AddItemToObject(o, "slo", slo);
    }
    return tb_json_put_line(f, o);
}

/* A real TTS's "tts" object: the counts and the samples (bench_rec.h). */
static void write_tts(cJSON *o, const struct tb_bench_rec *r)
{
    cJSON *t = cJSON_AddObjectToObject(o, "tts"), *a;
    if (t == NULL)
        return;
    cJSON_AddNumberToObject(t, "chunks", r->tts_chunks);
    cJSON_AddNumberToObject(t, "sent", r->tts_sent);
    cJSON_AddNumberToObject(t, "failed", r->tts_failed);
    cJSON_AddNumberToObject(t, "canceled", r->tts_canceled);
    cJSON_AddNumberToObject(t, "chars", (double)r->tts_chars);
    tb_json_add_num(t, "audio_s", r->tts_audio_s);
    a = cJSON_AddArrayToObject(t, "first_byte_s");
    for (size_t i = 0; a != NULL && i < r->ntts_fb; i++)
        cJSON_AddItemToArray(a, tb_json_num(r->tts_fb[i]));
    a = cJSON_AddArrayToObject(t, "rtf");
    for (size_t i = 0; a != NULL && i < r->ntts_rtf; i++)
        cJSON_AddItemToArray(a, tb_json_num(r->tts_rtf[i]));
}

int tb_bench_write_rec(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_rec *r,
                       const char *trace)
{
    cJSON *o;
    cJSON *itl;
    char level[64];
    if (r->level >= m->nlevels)
        return TB_EINVAL;
    o = cJSON_CreateObject();
    if (o == NULL)
        return TB_ENOMEM;
    tb_bench_level_name(&m->levels[r->level], level, sizeof(level));
    cJSON_AddStringToObject(o, "level", level);
    cJSON_AddNumberToObject(o, "id", (double)r->id);
    cJSON_AddNumberToObject(o, "prompt", r->prompt);
    if (r->call >= 0) {
        /* Only in a run of calls, so that one-shot records are as before. */
        cJSON_AddNumberToObject(o, "call", (double)r->call);
        cJSON_AddNumberToObject(o, "turn", r->turn);
    }
    if (r->call >= 0)
        tb_json_add_num(o, "play_end_s", r->play_end);
    if (r->call >= 0 && r->barge) {
        /* Only in a run of calls with --barge-in. */
        cJSON_AddBoolToObject(o, "interrupted", r->interrupted != 0);
        tb_json_add_num(o, "barge_in_s", r->barge_in);
        tb_json_add_num(o, "cancel_s", r->cancel_s);
        tb_json_add_num(o, "cancel_mono_s", r->cancel_mono_s);
        cJSON_AddNumberToObject(o, "tokens_received", (double)r->tokens_received);
        cJSON_AddNumberToObject(o, "tokens_unheard", (double)r->tokens_unheard);
        cJSON_AddNumberToObject(o, "chars_unplayed", (double)r->chars_unplayed);
    }
    tb_json_add_num(o, "t_sched", r->t_sched);
    tb_json_add_num(o, "t_start", r->t_start);
    tb_json_add_num(o, "t_end", r->t_end);
    tb_json_add_error(o, r->error != 0 ? tb_reader_error_name(r->error) : NULL, r->message,
                      r->http_status);
    if (r->warning[0] != '\0')
        cJSON_AddStringToObject(o, "warning", r->warning);
    cJSON_AddStringToObject(o, "end", tb_end_name(r->end));
    cJSON_AddNumberToObject(o, "http_status", (double)r->http_status);
    cJSON_AddNumberToObject(o, "events", (double)r->events);
    cJSON_AddNumberToObject(o, "content_tokens", (double)r->content_tokens);
    tb_json_add_num(o, "usage_tokens", r->usage_tokens >= 0 ? (double)r->usage_tokens : NAN);
    tb_json_add_num(o, "usage_ignored", r->usage_ignored >= 0 ? (double)r->usage_ignored : NAN);
    cJSON_AddNumberToObject(o, "surrogates_replaced", (double)r->surrogates_replaced);
    tb_json_add_num(o, "ttft_s", r->ttft);
    tb_json_add_num(o, "ttfa_s", r->ttfa);
    tb_json_add_num(o, "decode_tps", r->decode_tps);
    tb_json_add_num(o, "decode_tps_usage", r->decode_tps_usage);
    cJSON_AddNumberToObject(o, "underruns", r->underruns);
    tb_json_add_num(o, "gap_total_s", r->gap_total);
    tb_json_add_num(o, "gap_max_s", r->gap_max);
    /* A what-if needs the whole answer: none for a failed request. */
    tb_json_add_num(o, "min_tps", r->error == 0 ? r->min_tps : NAN);
    tb_json_add_num(o, "speedup_needed", r->error == 0 ? r->speedup : NAN);
    if (m->slo.set != 0)
        cJSON_AddBoolToObject(o, "good", tb_bench_slo_good(&m->slo, r));
    if (r->staged) {
        /* Only with a TTS stage, so that records without one are as before. */
        tb_json_add_num(o, "gap_llm_s", r->gap_llm);
        tb_json_add_num(o, "gap_tts_s", r->gap_tts);
        if (r->min_tps_none)
            cJSON_AddStringToObject(o, "min_tps_reason", TB_MIN_TPS_NONE_REASON);
        else
            cJSON_AddNullToObject(o, "min_tps_reason");
    }
    itl = cJSON_AddArrayToObject(o, "itl_s");
    for (size_t i = 0; itl != NULL && i < r->nitl; i++)
        cJSON_AddItemToArray(itl, tb_json_num(r->itl[i]));
    if (r->tts)
        write_tts(o, r); /* only with a real TTS, so that records without one are as before */
    if (trace != NULL)
        cJSON_AddStringToObject(o, "trace", trace);
    return tb_json_put_line(f, o);
}

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
