/*
 * bench_rec.c - `ttsbuf bench` records (see bench.h): each request's
 * playout, and the records file they are written to; bench_rec_read.c
 * reads them back (`ttsbuf merge`).  Doubles are printed by
 * tb_numfmt_double, so they read back bit-identical (cJSON's own printing
 * accepts a 15-digit form within an epsilon, which can be one unit in the
 * last place off), and a summary computed from a file equals the one
 * computed in memory.
 */
#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/numfmt.h"
#include "ttsbuf/bench_rec.h"
#include "ttsbuf/bench_stats.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/jsonline.h"
#include "ttsbuf/reader.h"

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
    while (r->n > 0)
        tb_bench_recs_pop(r);
    free(r->v);
    tb_bench_folds_free(r);
    tb_bench_recs_init(r);
}

void tb_bench_recs_pop(struct tb_bench_recs *r)
{
    struct tb_bench_rec *x = &r->v[--r->n];
    free(x->itl);
    free(x->tts_fb);
    free(x->tts_rtf);
    free(x->tts_cw);
    tb_tts_log_free(x->filler_log);
    free(x->filler_log);
    tb_stream_free(x->stream);
    free(x->stream);
    unsay(&x->message);
    unsay(&x->warning);
}

size_t tb_bench_recs_warned(const struct tb_bench_recs *r, const char **first)
{
    size_t n = 0;
    if (first != NULL)
        *first = NULL;
    for (size_t i = 0; i < r->nfolds; i++) {
        if (r->folds[i].warned > 0 && n == 0 && first != NULL)
            *first = r->folds[i].warning;
        n += r->folds[i].warned;
    }
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
    rec->llm_wait = NAN;
    rec->barge_tts_close = rec->barge_inflight = rec->barge_stop = NAN;
    tb_turn_lat_clear(&rec->lat);
    tb_bench_rec_tool_clear(rec);
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
    free(rec->tts_cw);
    rec->ntts_fb = rec->ntts_rtf = rec->ntts_cw = 0;
    rec->tts_fb = malloc(n * sizeof(double));
    rec->tts_rtf = malloc(n * sizeof(double));
    rec->tts_cw = malloc(n * sizeof(double));
    if (rec->tts_fb == NULL || rec->tts_rtf == NULL || rec->tts_cw == NULL)
        return TB_ENOMEM;
    rec->tts_cap = log->capacity > 0;
    /* the samples tb_tts_stats_of takes, in chunk order */
    for (size_t i = 0; i < log->n; i++) {
        const struct tb_tts_chunk *c = &log->c[i];
        double lat, rtf, dur;
        if (!isnan(c->sent) && !isnan(c->first_byte) && c->first_byte >= c->sent)
            rec->tts_fb[rec->ntts_fb++] = c->first_byte - c->sent;
        if (tb_tts_chunk_model(c, &lat, &rtf, &dur) == 0 && dur > 0)
            rec->tts_rtf[rec->ntts_rtf++] = rtf;
        if (!isnan(c->cap_wait))
            rec->tts_cw[rec->ntts_cw++] = c->cap_wait;
    }
    rec->tts = 1;
    rec->tts_chunks = st.chunks;
    rec->tts_sent = st.sent;
    rec->tts_skipped = st.skipped;
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

int tb_bench_rec_llm(struct tb_bench_rec *rec)
{
    const struct tb_stream *s = rec->stream;
    double first = NAN, prev = NAN;
    uint32_t first_tokens = 0;

    rec->events = rec->content_tokens = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->ev[i].kind != TB_KIND_CONTENT)
            continue;
        if (rec->events++ == 0) {
            first = s->ev[i].t;
            first_tokens = s->ev[i].tokens;
        }
        rec->content_tokens += s->ev[i].tokens;
    }
    free(rec->itl);
    rec->itl = NULL;
    rec->nitl = 0;
    rec->ttft = first;
    rec->decode_tps = rec->decode_tps_usage = NAN;
    if (rec->events <= 1)
        return 0;
    rec->itl = malloc((size_t)(rec->events - 1) * sizeof(double));
    if (rec->itl == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        if (s->ev[i].kind != TB_KIND_CONTENT)
            continue;
        if (!isnan(prev))
            rec->itl[rec->nitl++] = s->ev[i].t - prev;
        prev = s->ev[i].t;
    }
    /* sim.h's decode rates, over the content events as they arrived */
    if (prev > first) {
        rec->decode_tps = (double)(rec->events - 1) / (prev - first);
        if (s->usage_tokens > (long long)first_tokens)
            rec->decode_tps_usage = (double)(s->usage_tokens - first_tokens) / (prev - first);
    }
    return 0;
}

int tb_bench_analyze_play(struct tb_bench_rec *rec, const struct tb_stream *play,
                          const struct tb_sim_opts *o, char *err, size_t errlen)
{
    struct tb_sim_result r;
    struct tb_clock clk;
    int rc;

    rec->staged = tb_playout_has_stage(&o->play);
    tb_turn_lat_clear(&rec->lat);
    rc = tb_bench_rec_llm(rec);
    if (rc != 0 || rec->events == 0)
        return rc;
    tb_clock_virtual_init(&clk);
    {
        /* the turn's own end of speech and TTS draws: turn id + 1 */
        struct tb_sim_opts ot = *o;
        tb_sim_opts_turn(&ot, (uint32_t)(rec->id + 1));
        if (o->eou_at != NULL)
            rec->stream->eou_s = ot.eou_s; /* its trace says it: sim of it plays this turn */
        rc = tb_sim_run(play, &ot, &clk, NULL, NULL, &r, err, errlen);
    }
    if (rc != 0)
        return rc;
    rec->lat = r.lat;
    tb_bench_rec_tool_lat(rec);
    tb_bench_rec_tool_stream(rec); /* its trace keeps the tool part: sim's what-if */
    rec->ttfa = r.play.ttfa;
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
    cJSON_AddNumberToObject(t, "skipped", r->tts_skipped);
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
    if (!r->tts_cap) /* only with a shared capacity: records as before without */
        return;
    a = cJSON_AddArrayToObject(t, "capacity_wait_s");
    for (size_t i = 0; a != NULL && i < r->ntts_cw; i++)
        cJSON_AddItemToArray(a, tb_json_num(r->tts_cw[i]));
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
        tb_json_add_num(o, "barge_tts_close_s", r->barge_tts_close);
        tb_json_add_num(o, "barge_inflight_s", r->barge_inflight);
        tb_json_add_num(o, "barge_stop_s", r->barge_stop);
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
    if (r->refusals > 0) {
        /* Only when the server refused it, so that other records are as before. */
        cJSON *w = cJSON_AddArrayToObject(o, "retry_waits_s");
        cJSON_AddNumberToObject(o, "refusals", (double)r->refusals);
        for (uint32_t i = 0; w != NULL && i < r->nretries; i++)
            cJSON_AddItemToArray(w, tb_json_num(r->retry_wait[i]));
    }
    if (!isnan(r->llm_wait)) /* only with --llm-capacity: other records as before */
        tb_json_add_num(o, "llm_capacity_wait_s", r->llm_wait);
    tb_json_add_num(o, "ttft_s", r->ttft);
    tb_json_add_num(o, "ttfa_s", r->ttfa);
    tb_json_add_num(o, "decode_tps", r->decode_tps);
    tb_json_add_num(o, "decode_tps_usage", r->decode_tps_usage);
    /* Counted by a playout: unmeasured (null) when no audio played, as
     * ttfa_s and the gaps beside it (bench_stats.c reads it so). */
    tb_json_add_num(o, "underruns", isnan(r->ttfa) ? NAN : (double)r->underruns);
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
    {
        cJSON *l = cJSON_AddObjectToObject(o, "latency"); /* where the wait went */
        if (l != NULL)
            tb_turn_lat_json(l, &r->lat);
        if (r->call >= 0)
            tb_bench_rec_tool_json(o, l, r);
    }
    if (trace != NULL)
        cJSON_AddStringToObject(o, "trace", trace);
    return tb_json_put_line(f, o);
}
