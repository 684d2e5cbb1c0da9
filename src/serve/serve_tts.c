/*
 * serve_tts.c - the mock TTS's routes (see serve.h for what they answer
 * and when, serve_tts.h for the calls): the key, the request in its
 * dialect (serve_ttsreq.c), the faults, the synthesis job
 * (serve_speech.c), then the response head and the PCM in HTTP chunks on
 * the schedule.
 *
 * Schedule: the i-th TTS request that passed its checks (i from 1) is
 * due at T + L_i; its head and first piece go then (or when synthesis
 * ends, if later).  Piece k, with b_k bytes (a_k seconds of audio) before
 * it, is due at T + L_i + max(rtf x a_k, b_k / drip): the audio made at
 * the real-time factor, or dripped.  A piece is 20 ms of audio, or 20 ms
 * of a drip (at least one sample).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve_conn.h"
#include "serve_http.h"
#include "serve_priv.h"
#include "serve_reply.h"
#include "serve_speech.h"
#include "serve_tts.h"
#include "serve_ttsreq.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

#define PIECE_S 0.020

struct tb_serve_tts_conn {
    enum tb_serve_tts_api api;
    struct tb_serve_speech_job *job; /* queued; NULL once back */
    unsigned char *pcm;              /* s16le */
    size_t bytes, limit, off, piece;
    unsigned rate;
    int64_t first; /* the first byte's due time, ns */
    double drip, cutf;
    int cut, head_sent;
};

static int path_is(const struct tb_serve_conn *c, const char *path)
{
    return c->head.path_len == strlen(path) &&
           memcmp(c->in + c->head.path_off, path, c->head.path_len) == 0;
}

/* ElevenLabs: /v1/text-to-speech/{voice_id} or .../{voice_id}/stream;
 * the voice id's length in *vlen (0 when empty). */
static int eleven_path(const struct tb_serve_conn *c, size_t *vlen)
{
    static const char pre[] = "/v1/text-to-speech/";
    const char *p = c->in + c->head.path_off, *v, *slash;
    size_t n = c->head.path_len, rest;
    if (n < sizeof(pre) - 1 || memcmp(p, pre, sizeof(pre) - 1) != 0)
        return 0;
    v = p + sizeof(pre) - 1;
    rest = n - (sizeof(pre) - 1);
    slash = memchr(v, '/', rest);
    if (slash == NULL) {
        *vlen = rest;
        return 1;
    }
    *vlen = (size_t)(slash - v);
    return (size_t)(p + n - slash) == 7 && memcmp(slash, "/stream", 7) == 0;
}

/* The route's dialect, or -1. */
static int route_api(const struct tb_serve_conn *c, size_t *vlen)
{
    *vlen = 0;
    if (path_is(c, "/v1/audio/speech"))
        return TB_SERVE_TTS_OPENAI;
    if (eleven_path(c, vlen))
        return TB_SERVE_TTS_ELEVENLABS;
    if (path_is(c, "/v1/speak"))
        return TB_SERVE_TTS_DEEPGRAM;
    if (path_is(c, "/tts/bytes"))
        return TB_SERVE_TTS_CARTESIA;
    return -1;
}

int tb_serve_tts_is_route(const struct tb_serve_conn *c)
{
    size_t vlen;
    return route_api(c, &vlen) >= 0;
}

/* An error in the dialect's shape; ends the connection. */
static int tts_error(struct tb_serve_loop *s, struct tb_serve_conn *c, enum tb_serve_tts_api api,
                     const struct tb_serve_tts_err *e, const char *extra)
{
    char *body = tb_serve_tts_error_body(api, e, c->ctx.id);
    char ex[160];
    int rc;
    if (body == NULL)
        return tb_serve_conn_close(s, c, 1);
    snprintf(ex, sizeof(ex), "X-Ttsbuf-Mock: tts\r\n%s", extra != NULL ? extra : "");
    rc = tb_serve_respond(s, c, e->status, "application/json", body, strlen(body), ex);
    free(body);
    return rc;
}

/* A TTS request over tts_max_inflight: 429 with the dialect's error
 * (the codes are the mock's: OpenAI's "requests" as for chat). */
static int tts_over_inflight(struct tb_serve_loop *s, struct tb_serve_conn *c,
                             enum tb_serve_tts_api api)
{
    static const char *const codes[] = {"requests", "too_many_concurrent_requests",
                                        "TOO_MANY_REQUESTS", "rate_limited"};
    struct tb_serve_tts_err e;
    char extra[40];
    memset(&e, 0, sizeof(e));
    tb_serve_tts_err_set(&e, 429, codes[api], NULL,
                         "Too many concurrent requests: at most %zu in flight at once (ttsbuf "
                         "serve --tts-max-inflight). Please try again in %us.",
                         s->srv->tts_max_inflight, s->srv->retry_after);
    tb_serve_retry_after(s->srv, extra, sizeof(extra));
    return tts_error(s, c, api, &e, extra);
}

/* Whether the header's value is "<scheme> KEY" (scheme NULL: KEY). */
static int header_is(const struct tb_serve_conn *c, const char *name, const char *scheme,
                     const char *key)
{
    const char *v;
    size_t n, sl = scheme != NULL ? strlen(scheme) : 0, kl = strlen(key);
    if (!tb_serve_http_header(c->in, c->head.len, name, &v, &n))
        return 0;
    if (scheme != NULL) {
        if (n < sl + 1 || strncasecmp(v, scheme, sl) != 0 || v[sl] != ' ')
            return 0;
        v += sl + 1;
        n -= sl + 1;
    }
    return n == kl && memcmp(v, key, kl) == 0;
}

/* The dialect's key header carries the server's key (no key: any). */
static int key_ok(const struct tb_serve_loop *s, const struct tb_serve_conn *c, int api)
{
    const char *k = s->srv->tts_key;
    if (k == NULL)
        return 1;
    switch (api) {
    case TB_SERVE_TTS_OPENAI: return header_is(c, "authorization", "Bearer", k);
    case TB_SERVE_TTS_ELEVENLABS: return header_is(c, "xi-api-key", NULL, k);
    case TB_SERVE_TTS_DEEPGRAM: return header_is(c, "authorization", "Token", k);
    default:
        return header_is(c, "x-api-key", NULL, k) || header_is(c, "authorization", "Bearer", k);
    }
}

static void unauthorized(int api, struct tb_serve_tts_err *e)
{
    switch (api) {
    case TB_SERVE_TTS_OPENAI:
        tb_serve_tts_err_set(e, 401, "invalid_request_error", NULL,
                             "Incorrect API key provided. (ttsbuf's mock TTS was given a key "
                             "with --tts-api-key-file.)");
        break;
    case TB_SERVE_TTS_ELEVENLABS:
        tb_serve_tts_err_set(e, 401, "invalid_api_key", NULL, "Invalid API key");
        break;
    case TB_SERVE_TTS_DEEPGRAM:
        tb_serve_tts_err_set(e, 401, "INVALID_AUTH", NULL,
                             "Invalid credentials. (Authorization: Token KEY)");
        break;
    default:
        tb_serve_tts_err_set(e, 401, "unauthorized", NULL, "Invalid API key (X-API-Key).");
        break;
    }
}

static const char *ctype(int api)
{
    return api == TB_SERVE_TTS_OPENAI || api == TB_SERVE_TTS_ELEVENLABS
               ? "audio/pcm"
               : "application/octet-stream";
}

/* A TTS request that passed every check: its connection's state and its
 * job for the speech thread (the request's text handed to it), its first
 * byte due at its drawn latency.  0, or the error reply's. */
static int tts_start(struct tb_serve_loop *s, struct tb_serve_conn *c, int api,
                     struct tb_serve_tts_req *rq, const struct tb_tts_faults *f)
{
    struct tb_serve_tts_err e;
    struct tb_serve_tts_conn *t;
    struct tb_serve_speech_job *j;
    uint32_t i;
    double lat;
    memset(&e, 0, sizeof(e));
    i = (uint32_t)(atomic_fetch_add(&s->srv->tts_next, 1) + 1);
    lat = s->srv->tts_latency_at != NULL ? s->srv->tts_latency_at(s->srv->tts_latency_ud, i) : 0;
    t = calloc(1, sizeof(*t));
    j = calloc(1, sizeof(*j));
    if (t == NULL || j == NULL) {
        free(t);
        free(j);
        tb_serve_tts_req_free(rq);
        return tb_serve_conn_close(s, c, 1);
    }
    t->api = (enum tb_serve_tts_api)api;
    t->rate = rq->rate;
    t->first = c->t0 + (int64_t)(lat * NS + 0.5);
    t->drip = f->drip_bps;
    t->cut = f->has_cut;
    c->tts = t;
    c->on_close = tb_serve_tts_conn_free;
    t->cutf = f->cut;
    c->st = C_TTS;
    c->lg.audio_sent = 0;
    tb_serve_in_free(c); /* the head's offsets die here */
    if (f->stall) {
        /* No job, no deadline: the client's close ends it (drain). */
        free(j);
        tb_serve_tts_req_free(rq);
        return 0;
    }
    j->owner = c;
    j->box = s->index;
    j->text = rq->text;
    j->len = rq->len;
    j->rate = rq->rate;
    j->lead = s->srv->tts_lead;
    if (tb_serve_speech_submit(s->srv->speech, j) != 0) {
        tb_serve_speech_job_free(j);
        tb_serve_tts_err_set(&e, 500, api == TB_SERVE_TTS_OPENAI ? "server_error" : "error", NULL,
                             "ttsbuf's mock TTS could not start its speech thread");
        return tts_error(s, c, t->api, &e, NULL);
    }
    t->job = j;
    return 0;
}

int tb_serve_tts_dispatch(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    const struct tb_serve_http_head *h = &c->head;
    struct tb_serve_tts_req rq;
    struct tb_serve_tts_err e;
    struct tb_tts_faults f = s->srv->tts_faults;
    const char *plus, *v;
    size_t vlen, n;
    int api = route_api(c, &vlen), rc;
    char why[300];
    static const char *const routes[] = {"tts_openai", "tts_elevenlabs", "tts_deepgram",
                                         "tts_cartesia"};

    memset(&e, 0, sizeof(e));
    /* Cannot happen (dispatch asked tb_serve_tts_is_route): for the analyzer. */
    if (api < 0)
        return tb_serve_conn_close(s, c, 1);
    c->lg.route = routes[api];
    c->lg.stream = 1;
    if (h->method != TB_SERVE_HTTP_POST) {
        tb_serve_tts_err_set(
            &e, 405, api == TB_SERVE_TTS_OPENAI ? "invalid_request_error" : "method_not_allowed",
            NULL, "Method not allowed: use POST");
        return tts_error(s, c, (enum tb_serve_tts_api)api, &e, "Allow: POST\r\n");
    }
    if (!key_ok(s, c, api)) {
        unauthorized(api, &e);
        return tts_error(s, c, (enum tb_serve_tts_api)api, &e, NULL);
    }
    if (tb_serve_slot_take(s, c, 1) != 0)
        return tts_over_inflight(s, c, (enum tb_serve_tts_api)api);
    if (api == TB_SERVE_TTS_CARTESIA &&
        !tb_serve_http_header(c->in, h->len, "cartesia-version", &v, &n)) {
        tb_serve_tts_err_set(&e, 400, "missing_version", NULL,
                             "The Cartesia-Version header is required (e.g. 2025-04-16).");
        return tts_error(s, c, (enum tb_serve_tts_api)api, &e, NULL);
    }
    rc = tb_serve_tts_parse((enum tb_serve_tts_api)api, c->in + h->query_off, h->query_len, vlen,
                            c->in + h->len, c->need - h->len, &rq, &e);
    if (rc < 0)
        return tb_serve_conn_close(s, c, 1);
    if (rc > 0)
        return tts_error(s, c, (enum tb_serve_tts_api)api, &e, NULL);
    c->lg.tts_chars = (int64_t)tb_utf8_count(rq.text, rq.len);
    plus = strchr(rq.model, '+');
    if (plus != NULL && tb_tts_faults_parse(plus + 1, &f, why, sizeof(why)) != 0) {
        tb_serve_tts_err_set(&e, 400,
                             api == TB_SERVE_TTS_OPENAI     ? "invalid_request_error"
                             : api == TB_SERVE_TTS_DEEPGRAM ? "INVALID_QUERY_PARAMETER"
                                                            : "invalid_request",
                             "model", "Invalid fault spec in the model name: %s", why);
        tb_serve_tts_req_free(&rq);
        return tts_error(s, c, (enum tb_serve_tts_api)api, &e, NULL);
    }
    if (f.status != 0) {
        int st = f.status;
        c->lg.fault = 1;
        tb_serve_tts_err_set(&e, st,
                             api == TB_SERVE_TTS_OPENAI     ? (st == 429   ? "requests"
                                                               : st >= 500 ? "server_error"
                                                                           : "invalid_request_error")
                             : api == TB_SERVE_TTS_DEEPGRAM ? "FAULT"
                                                            : "fault",
                             NULL, "%s (ttsbuf fault status@%d)", tb_serve_http_reason(st), st);
        tb_serve_tts_req_free(&rq);
        return tts_error(s, c, (enum tb_serve_tts_api)api, &e,
                         st == 429 || st == 503 ? "Retry-After: 1\r\n" : NULL);
    }

    return tts_start(s, c, api, &rq, &f);
}

void tb_serve_tts_ready(struct tb_serve_loop *s)
{
    struct tb_serve_speech_job *j = tb_serve_speech_take(s->srv->speech, s->index), *next;
    for (; j != NULL; j = next) {
        struct tb_serve_conn *c = j->owner;
        struct tb_serve_tts_conn *t;
        next = j->next;
        if (c == NULL || c->tts == NULL) {
            tb_serve_speech_job_free(j);
            continue;
        }
        t = c->tts;
        t->job = NULL;
        if (j->rc != 0) {
            struct tb_serve_tts_err e;
            memset(&e, 0, sizeof(e));
            tb_serve_tts_err_set(&e, 500, t->api == TB_SERVE_TTS_OPENAI ? "server_error" : "error",
                                 NULL, "ttsbuf's mock TTS could not speak: %s", j->err);
            tb_serve_speech_job_free(j);
            tts_error(s, c, t->api, &e, NULL);
            continue;
        }
        t->bytes = j->frames * 2;
        t->pcm = (unsigned char *)j->pcm;
        j->pcm = NULL;
        tb_serve_speech_job_free(j);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        for (size_t k = 0; k + 1 < t->bytes; k += 2) {
            unsigned char b = t->pcm[k];
            t->pcm[k] = t->pcm[k + 1];
            t->pcm[k + 1] = b;
        }
#endif
        t->limit = t->cut ? (size_t)(t->cutf * (double)(t->bytes / 2)) * 2 : t->bytes;
        if (t->limit > t->bytes)
            t->limit = t->bytes;
        c->lg.audio_planned = (int64_t)t->limit;
        t->piece = (size_t)(t->rate * PIECE_S + 0.5) * 2;
        if (t->drip > 0) {
            t->piece = (size_t)(t->drip * PIECE_S / 2) * 2;
            if (t->piece < 2)
                t->piece = 2;
        }
        if (tb_serve_heap_set(&s->heap, &c->hn, t->first) != 0)
            tb_serve_conn_close(s, c, 1);
    }
}

/* One HTTP chunk of n audio bytes. */
static void put_chunk(struct tb_serve_conn *c, const unsigned char *p, size_t n)
{
    char hex[24];
    int hl = snprintf(hex, sizeof(hex), "%zx\r\n", n);
    if (tb_serve_out_room(c, (size_t)hl + n + 2) != 0)
        return;
    tb_serve_out_add(c, hex, (size_t)hl);
    tb_serve_out_add(c, (const char *)p, n);
    tb_serve_out_add(c, "\r\n", 2);
}

int tb_serve_tts_advance(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    struct tb_serve_tts_conn *t = c->tts;
    int64_t now = tb_clock_mono_ns();
    size_t made = 0;

    c->yielded = 0;
    if (!t->head_sent) {
        char head[512], extra[256];
        size_t hl;
        snprintf(extra, sizeof(extra),
                 "X-Ttsbuf-Mock: tts\r\nX-Ttsbuf-Audio-Bytes: %zu\r\nX-Ttsbuf-Sample-Rate: %u\r\n"
                 "Cache-Control: no-cache\r\n",
                 t->limit, t->rate);
        hl = tb_serve_http_resp(head, sizeof(head), 200, ctype(t->api), -1, extra);
        tb_serve_out_put(c, head, hl);
        c->lg.status = 200;
        t->head_sent = 1;
        s->st.requests++;
        s->st.streams++;
        s->st.tts++;
    }
    for (;;) {
        double a = (double)(t->off / 2) / t->rate, b = (double)t->off;
        double wait = s->srv->tts_rtf * a;
        int64_t due;
        size_t n;
        if (c->broken)
            return tb_serve_flush(s, c);
        if (t->off >= t->limit) {
            if (t->cut && t->limit < t->bytes)
                c->hard_close = c->lg.fault = 1; /* no terminator: the body was cut */
            else
                tb_serve_out_put(c, "0\r\n\r\n", 5);
            return tb_serve_finish(s, c);
        }
        if (t->drip > 0 && b / t->drip > wait)
            wait = b / t->drip;
        due = t->first + (int64_t)(wait * NS + 0.5);
        if (due > now) {
            if (tb_serve_heap_set(&s->heap, &c->hn, due) != 0)
                return tb_serve_conn_close(s, c, 1);
            return tb_serve_flush(s, c);
        }
        n = t->limit - t->off < t->piece ? t->limit - t->off : t->piece;
        put_chunk(c, t->pcm + t->off, n);
        tb_serve_late_record(s, c, now - due);
        t->off += n;
        c->lg.audio_sent += (int64_t)n;
        s->st.tts_bytes += n;
        made += n;
        int rc = tb_serve_piece_made(s, c, made);
        if (rc != 1)
            return rc;
    }
}

void tb_serve_tts_conn_free(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    struct tb_serve_tts_conn *t = c->tts;
    if (t == NULL)
        return;
    if (t->job != NULL)
        tb_serve_speech_abandon(s->srv->speech, t->job);
    free(t->pcm);
    free(t);
    c->tts = NULL;
}
