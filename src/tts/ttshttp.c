/*
 * ttshttp.c - the TTS client's HTTP wire (ttshttp.h): a stream's chunks
 * sent in order, at most N at once, over one libcurl multi handle on the
 * caller's thread, each transfer set up and ended by the rules every
 * request of ttsbuf follows (net/http_xfer.h: redirects, TLS, the key
 * kept to its origin, the error body's cap), the body judged as it comes
 * (ttscheck.h); the records, the PCM handed on and the chunks' ends are
 * the engine's (ttscore.h).
 *
 * The idle timeout is watched here, in tb_ttshttp_step_fd, rather than
 * in libcurl's progress callback: libcurl calls that about once a second
 * when nothing arrives, so the timeout would fire up to a second late;
 * step bounds its wait by the nearest idle deadline instead.  The total
 * timeout is libcurl's own (CURLOPT_TIMEOUT_MS), exact.
 */
#include "ttshttp.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_xfer.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/utf8.h"
#include "ttscheck.h"
#include "ttscore.h"

/* One chunk in flight: its request, its transfer and its response. */
struct slot {
    struct tb_ttshttp *c;
    int busy;
    uint32_t j; /* 1-based */
    struct tb_ttsapi_req ar;
    const char *hdrs[TB_TTSAPI_HEADERS_MAX + 2]; /* ar's, "Expect:", the id */
    char rid[TB_TTSNET_RID_MAX + 48];            /* the request id header */
    struct tb_http_req q;
    struct tb_http_xfer hx;
    struct tb_http_resp hr;
    struct tb_ttscore_carry cy;                   /* a byte waiting for its pair */
    int media;                                    /* enum tb_ttscheck_media, once read */
    int checked;                                  /* media read (at the first body byte) */
    size_t head_len;                              /* WAV: header bytes held so far */
    int head_done;                                /* WAV: its header read; PCM follows */
    unsigned char head[TB_TTSCHECK_WAV_HEAD_MAX]; /* WAV: the header, until it is whole */
    char bad[TB_TTS_MESSAGE_MAX];                 /* the body is not the audio asked: why */
};

struct tb_ttshttp {
    struct tb_ttscore k; /* the chunks, their records, the callbacks, the key */
    /* The options as given, but for their strings: url, model and voice
     * point to the copies below, key is NULL (the engine holds it). */
    struct tb_ttsnet_opts o;
    char *url, *model, *voice; /* copies */
    char rid[TB_TTSNET_RID_MAX + 1]; /* opts.request_id, or "" */
    CURLM *m;
    struct slot *slots; /* k.n of them */
    int stop_requested; /* on_audio asked to stop (acted on after perform) */
};

static int send_one(void *ud, size_t i);
static void stop_flying(void *ud, int kind, const char *why);
static int step(void *ud, int timeout_ms);
static const struct tb_ttscore_ops ops = {send_one, stop_flying, step, NULL};

static char *dup_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? strdup(s) : NULL;
}

/* The parameters of every request of c. */
static void params(const struct tb_ttshttp *c, struct tb_ttsapi_params *p)
{
    memset(p, 0, sizeof(*p));
    p->base = c->url;
    p->key = c->k.key;
    p->model = c->model;
    p->voice = c->voice;
    p->rate = c->k.rate;
}

/* The log's provider fields, from a request built for no text (which
 * also checks the options the way every request will be built). */
static int fill_log_head(struct tb_ttshttp *c, char *err, size_t errlen)
{
    struct tb_ttsapi_params p;
    struct tb_ttsapi_req r;
    const struct tb_ttsapi_info *in = tb_ttsapi_info(c->o.api);
    int rc;
    params(c, &p);
    rc = tb_ttsapi_build(c->o.api, &p, "", 0, &r, err, errlen);
    if (rc != 0)
        return rc;
    snprintf(c->k.log.api, sizeof(c->k.log.api), "%s", in->name);
    tb_http_redact(r.url, strlen(r.url), c->k.log.url, sizeof(c->k.log.url));
    tb_secrets_scrub(c->k.own, c->k.log.url);
    tb_secrets_scrub(c->k.run, c->k.log.url);
    /* What was sent: the option, or the dialect's default. */
    tb_utf8_copy(c->k.log.model, sizeof(c->k.log.model), c->model != NULL ? c->model : in->model);
    tb_utf8_copy(c->k.log.voice, sizeof(c->k.log.voice), c->voice != NULL ? c->voice : in->voice);
    c->k.log.concurrency = c->k.n;
    /* The key's own set: the key, and whatever else of the URL is secret. */
    {
        struct tb_http_req q;
        tb_http_req_init(&q);
        q.url = r.url;
        q.bearer = c->k.key;
        rc = tb_http_secrets(&q, c->k.own);
    }
    tb_ttsapi_req_free(&r);
    return rc;
}

int tb_ttshttp_create(const struct tb_ttsnet_opts *o, struct tb_ttshttp **out, char *err,
                      size_t errlen)
{
    struct tb_ttshttp *c;
    int rc = TB_ENOMEM;
    if (tb_ttsapi_info(o->api) == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS API %d", o->api);
    rc = tb_ttscore_check(o, err, errlen);
    if (rc != 0)
        return rc;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return TB_ENOMEM;
    rc = tb_ttscore_init(&c->k, o, &ops, c);
    c->url = strdup(o->url);
    c->model = dup_or_null(o->model);
    c->voice = dup_or_null(o->voice);
    c->o = *o;
    c->o.url = c->url;
    c->o.model = c->model;
    c->o.voice = c->voice;
    c->o.key = NULL;
    if (o->request_id != NULL)
        snprintf(c->rid, sizeof(c->rid), "%s", o->request_id);
    c->o.request_id = NULL;
    c->slots = calloc((size_t)c->k.n, sizeof(*c->slots));
    if (rc != 0 || c->url == NULL ||
        (o->model != NULL && o->model[0] != '\0' && c->model == NULL) ||
        (o->voice != NULL && o->voice[0] != '\0' && c->voice == NULL) || c->slots == NULL) {
        rc = TB_ENOMEM;
        goto fail;
    }
    rc = fill_log_head(c, err, errlen);
    if (rc != 0)
        goto fail;
    c->m = curl_multi_init();
    if (c->m == NULL) {
        rc = TB_ENOMEM;
        goto fail;
    }
    for (int i = 0; i < c->k.n; i++)
        c->slots[i].c = c;
    *out = c;
    return 0;
fail:
    tb_ttshttp_destroy(c);
    return rc;
}

/* Releases what a slot holds once its transfer has ended. */
static void slot_clear(struct slot *s)
{
    tb_ttsapi_req_free(&s->ar);
    tb_http_resp_free(&s->hr);
    s->busy = 0;
    s->cy.has = 0;
}

/* Stops a slot's transfer without a record (destroy, take_log). */
static void slot_drop(struct tb_ttshttp *c, struct slot *s)
{
    if (!s->busy)
        return;
    curl_multi_remove_handle(c->m, s->hx.h);
    tb_http_xfer_end(&s->hx, CURLE_ABORTED_BY_CALLBACK);
    slot_clear(s);
}

void tb_ttshttp_destroy(struct tb_ttshttp *c)
{
    if (c == NULL)
        return;
    for (int i = 0; c->slots != NULL && i < c->k.n; i++)
        slot_drop(c, &c->slots[i]);
    if (c->m != NULL)
        curl_multi_cleanup(c->m);
    free(c->slots);
    tb_ttscore_free(&c->k);
    free(c->url);
    free(c->model);
    free(c->voice);
    free(c);
}

/* Why the media type ct is not the audio asked (into s->bad). */
static void bad_media(struct slot *s, const char *ct)
{
    snprintf(s->bad, sizeof(s->bad),
             "HTTP %ld with Content-Type '%s', not the raw 16-bit PCM asked (audio/pcm, "
             "audio/L16, or a WAV of it)",
             s->hr.status, ct);
}

/* A WAV's header bytes, held until it is whole: 0 to go on (*pcm_at the
 * first PCM byte of buf, len when none yet), 1 when it is not the audio
 * asked (s->bad). */
static int wav_head(struct slot *s, const char *buf, size_t len, size_t *pcm_at)
{
    size_t take = sizeof(s->head) - s->head_len, head;
    char why[160];
    int v;
    *pcm_at = len;
    if (take > len)
        take = len;
    memcpy(s->head + s->head_len, buf, take);
    s->head_len += take;
    v = tb_ttscheck_wav(s->head, s->head_len, s->c->k.rate, &head, why, sizeof(why));
    if (v < 0) {
        snprintf(s->bad, sizeof(s->bad), "HTTP %ld with Content-Type '%.64s': %.150s", s->hr.status,
                 s->hr.content_type, why);
        return 1;
    }
    if (v == 1) {
        /* The PCM starts head bytes into the body: in this piece. */
        s->head_done = 1;
        *pcm_at = take - (s->head_len - head);
    }
    return 0;
}

/* Body bytes of a 2xx audio response: its media type checked once, a
 * WAV's header read, whole samples handed on. */
static int on_body(void *ud, const char *buf, size_t len, double t)
{
    struct slot *s = ud;
    struct tb_ttshttp *c = s->c;
    size_t at = 0;
    if (len == 0)
        return 0;
    if (!s->checked) {
        s->checked = 1;
        s->media = tb_ttscheck_media(s->hr.content_type);
        if (s->media == TB_TTSCHECK_OTHER) {
            bad_media(s, s->hr.content_type);
            return 1; /* conclude says why: s->bad */
        }
    }
    if (s->media == TB_TTSCHECK_WAV && !s->head_done && wav_head(s, buf, len, &at) != 0)
        return 1;
    if (tb_ttscore_pcm(tb_ttscore_rec(&c->k, s->j), &s->cy, buf + at, len - at, t - c->k.origin,
                       c->k.on_audio, c->k.ud, s->j) != 0) {
        c->stop_requested = 1;
        return 1;
    }
    return 0;
}

/* The verdict on a 2xx audio body that came whole: the media type (an
 * empty body never reached on_body), a WAV's header, whole samples, some
 * audio for a text with something to say.  TB_TTS_OK, or TB_TTS_FORMAT
 * with r's message set. */
static int audio_verdict(struct tb_ttshttp *c, struct slot *s, struct tb_tts_chunk *r)
{
    char why[TB_TTS_MESSAGE_MAX];
    int kind;
    if (!s->checked && tb_ttscheck_media(s->hr.content_type) == TB_TTSCHECK_OTHER)
        bad_media(s, s->hr.content_type);
    else if (s->checked && s->media == TB_TTSCHECK_WAV && !s->head_done)
        snprintf(s->bad, sizeof(s->bad),
                 "HTTP %ld with Content-Type '%s': the body (%zu bytes) "
                 "ended inside its WAV header",
                 s->hr.status, s->hr.content_type, s->head_len);
    if (s->bad[0] != '\0') {
        tb_ttscore_say(&c->k, r, "%s", s->bad);
        return TB_TTS_FORMAT;
    }
    kind = tb_ttscheck_end(r, tb_tts_log_text(&c->k.log, s->j - 1), s->cy.has, why, sizeof(why));
    if (kind != TB_TTS_OK)
        tb_ttscore_say(&c->k, r, "HTTP %ld: %s", s->hr.status, why);
    return kind;
}

/* The record of a transfer that ended by itself (forced: -1) or was
 * stopped here with the kind `forced` (why: the message's words). */
static void conclude(struct tb_ttshttp *c, struct slot *s, int forced, const char *why)
{
    struct tb_tts_chunk *r = tb_ttscore_rec(&c->k, s->j);
    const struct tb_http_resp *hr = &s->hr;
    int audio = hr->sse; /* a 2xx that is not text */
    char msg[TB_TTS_MESSAGE_MAX];
    r->end = tb_ttscore_now(&c->k);
    r->status = hr->status;
    if (forced >= 0) {
        r->fail = forced;
        tb_ttscore_say(&c->k, r, "%s, after %llu bytes", why, (unsigned long long)r->bytes);
    } else if (s->bad[0] != '\0') {
        r->fail = TB_TTS_FORMAT; /* on_body stopped it: not the audio asked */
        tb_ttscore_say(&c->k, r, "%s", s->bad);
    } else if (hr->aborted) {
        r->fail = TB_TTS_CANCELED;
        tb_ttscore_say(&c->k, r, "stopped by the caller, after %llu bytes",
                       (unsigned long long)r->bytes);
    } else if (hr->total_timeout) {
        r->fail = TB_TTS_TIMEOUT;
        tb_ttscore_say(&c->k, r, "not done after %g s (the total timeout), after %llu bytes",
                       c->o.total_timeout, (unsigned long long)r->bytes);
    } else if (hr->status == 0) {
        r->fail = TB_TTS_TRANSPORT;
        tb_ttscore_say(&c->k, r, "%s", hr->error[0] != '\0' ? hr->error : "no response");
    } else if (hr->status < 200 || hr->status >= 300) {
        r->fail = TB_TTS_HTTP;
        tb_ttsapi_error_text(c->o.api, hr->body, hr->body_len, msg, sizeof(msg));
        tb_ttscore_say(&c->k, r, "%s", msg[0] != '\0' ? msg : "(empty body)");
    } else if (!audio && (hr->body_len > 0 || hr->content_type[0] != '\0')) {
        r->fail = TB_TTS_FORMAT;
        tb_ttsapi_error_text(c->o.api, hr->body, hr->body_len, msg, sizeof(msg));
        tb_ttscore_say(&c->k, r, "HTTP %ld with Content-Type '%s', not audio: %s", hr->status,
                       hr->content_type[0] != '\0' ? hr->content_type : "(none)",
                       msg[0] != '\0' ? msg : "(empty body)");
    } else if (hr->curl_code != 0) {
        /* The answer had begun: the body was cut (closed, reset, fewer
         * bytes than Content-Length). */
        r->fail = TB_TTS_CUT;
        tb_ttscore_say(&c->k, r, "the audio stopped after %llu bytes: %s",
                       (unsigned long long)hr->bytes, hr->error);
    } else {
        r->fail = audio_verdict(c, s, r);
    }
    slot_clear(s);
    tb_ttscore_ended(&c->k, s->j);
}

/* Stops slot s's transfer now and records it as `kind`, why. */
static void slot_stop(struct tb_ttshttp *c, struct slot *s, int kind, const char *why)
{
    curl_multi_remove_handle(c->m, s->hx.h);
    tb_http_xfer_end(&s->hx, CURLE_ABORTED_BY_CALLBACK);
    conclude(c, s, kind, why);
}

/* Hands chunk index i to libcurl in a free slot.  0, or TB_ENOMEM. */
static int send_one(void *ud, size_t i)
{
    struct tb_ttshttp *c = ud;
    struct tb_tts_chunk *r = &c->k.log.c[i];
    uint32_t j = (uint32_t)i + 1;
    struct tb_ttsapi_params p;
    struct slot *s = NULL;
    char err[200];
    int rc;
    c->k.state[i] = TB_TTSCORE_FLYING;
    r->sent = tb_ttscore_now(&c->k);
    if (tb_tts_blank(tb_tts_log_text(&c->k.log, i), r->len)) {
        /* Nothing to speak: no request (a provider refuses empty input). */
        r->end = r->sent; /* no first byte: none came (ttsmeas.h) */
        tb_ttscore_ended(&c->k, j);
        return 0;
    }
    for (int k = 0; k < c->k.n && s == NULL; k++)
        if (!c->slots[k].busy)
            s = &c->slots[k];
    if (s == NULL) { /* cannot happen: at most N in flight */
        r->end = r->sent;
        r->fail = TB_TTS_TRANSPORT;
        tb_ttscore_say(&c->k, r, "no free transfer slot");
        tb_ttscore_ended(&c->k, j);
        return 0;
    }
    memset(&s->hr, 0, sizeof(s->hr));
    s->busy = 1;
    s->j = j;
    s->cy.has = 0;
    s->checked = 0;
    s->head_len = 0;
    s->head_done = 0;
    s->bad[0] = '\0';
    params(c, &p);
    rc = tb_ttsapi_build(c->o.api, &p, tb_tts_log_text(&c->k.log, i), r->len, &s->ar, err,
                         sizeof(err));
    if (rc == 0) {
        tb_http_req_init(&s->q);
        s->q.url = s->ar.url;
        s->q.body = s->ar.body;
        for (size_t h = 0; h < s->ar.nheaders; h++)
            s->hdrs[h] = s->ar.headers[h];
        /* No "Expect: 100-continue" wait before a long text is sent:
         * the wait would count as the provider's latency. */
        s->hdrs[s->ar.nheaders] = "Expect:";
        s->q.headers = s->hdrs;
        s->q.nheaders = s->ar.nheaders + 1;
        if (c->rid[0] != '\0') {
            snprintf(s->rid, sizeof(s->rid), "X-Ttsbuf-Request-Id: %s.j%u", c->rid, j);
            s->hdrs[s->q.nheaders++] = s->rid;
        }
        s->q.any_stream = 1;
        s->q.stream_type = "*/*";
        s->q.connect_timeout = c->o.connect_timeout;
        s->q.total_timeout = c->o.total_timeout;
        s->q.insecure = c->o.insecure;
        s->q.max_redirects = c->o.max_redirects;
        s->q.log = c->o.log;
        s->q.log_ud = c->o.log_ud;
        s->q.secrets = c->k.own;
        rc = tb_http_xfer_begin(&s->hx, &s->q, c->k.clk, on_body, s, &s->hr);
        if (rc == 0) {
            curl_easy_setopt(s->hx.h, CURLOPT_PRIVATE, (void *)s);
            if (curl_multi_add_handle(c->m, s->hx.h) != CURLM_OK) {
                tb_http_xfer_end(&s->hx, CURLE_FAILED_INIT);
                rc = TB_ENOMEM;
            }
        }
    }
    if (rc != 0) {
        r->end = tb_ttscore_now(&c->k);
        r->fail = TB_TTS_TRANSPORT;
        tb_ttscore_say(&c->k, r, "the request could not be made: %s",
                       rc == TB_ENOMEM ? "out of memory" : err);
        slot_clear(s);
        tb_ttscore_ended(&c->k, j);
        return rc == TB_ENOMEM ? rc : 0;
    }
    return 0;
}

int tb_ttshttp_submit(struct tb_ttshttp *c, const char *text, size_t len)
{
    int rc = tb_ttscore_text(&c->k, &text, len);
    if (rc == 0)
        rc = tb_ttscore_add(&c->k, text, len);
    if (rc != 0)
        return rc;
    /* Callbacks run in step: a chunk that cannot be sent now waits, and
     * one sent now ends there at the earliest. */
    if (c->k.stopping)
        return 0;
    if (c->k.log.n - 1 == c->k.next && tb_ttscore_may_send(&c->k)) {
        const char *t = tb_tts_log_text(&c->k.log, c->k.next);
        if (tb_tts_blank(t, c->k.log.c[c->k.next].len))
            return 0; /* ended at the next step, with its callback */
        if (!tb_ttscore_cap_ready(&c->k))
            return 0; /* a step sends it once the shared capacity grants it */
        return send_one(c, c->k.next++);
    }
    return 0;
}

/* Transfers that ended in libcurl: redirects followed, the rest
 * recorded. */
static void read_done(struct tb_ttshttp *c)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->m, &left)) != NULL) {
        struct slot *s;
        char *priv = NULL;
        int cc;
        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        s = (struct slot *)(void *)priv;
        cc = (int)msg->data.result;
        if (s == NULL || !s->busy)
            continue;
        curl_multi_remove_handle(c->m, s->hx.h);
        if (tb_http_xfer_redirect(&s->hx, &cc)) {
            if (curl_multi_add_handle(c->m, s->hx.h) == CURLM_OK)
                continue;
            cc = CURLE_FAILED_INIT;
        }
        tb_http_xfer_end(&s->hx, cc);
        conclude(c, s, -1, NULL);
    }
}

/* Chunks with no byte for the idle timeout; the wait, in ms, until the
 * nearest idle deadline (or `cap`). */
static int idle_check(struct tb_ttshttp *c, int cap)
{
    double t = c->k.clk->now(c->k.clk);
    int wait = cap;
    if (!(c->o.idle_timeout > 0))
        return cap;
    for (int k = 0; k < c->k.n; k++) {
        struct slot *s = &c->slots[k];
        double left;
        if (!s->busy)
            continue;
        left = s->hx.last + c->o.idle_timeout - t;
        if (left <= 0) {
            char why[96];
            snprintf(why, sizeof(why), "no audio byte for %g s (the idle timeout)",
                     c->o.idle_timeout);
            slot_stop(c, s, TB_TTS_TIMEOUT, why);
            continue;
        }
        if (left * 1000 < wait)
            wait = (int)(left * 1000) + 1;
    }
    return wait;
}

static int flying(const struct tb_ttshttp *c)
{
    int k = 0;
    for (int i = 0; i < c->k.n; i++)
        k += c->slots[i].busy;
    return k;
}

/* libcurl's multi handle failed: the chunks in flight end there. */
static int multi_failed(struct tb_ttshttp *c, CURLMcode mc)
{
    char why[160];
    snprintf(why, sizeof(why), "libcurl's multi interface failed: %s", curl_multi_strerror(mc));
    stop_flying(c, TB_TTS_TRANSPORT, why);
    return mc == CURLM_OUT_OF_MEMORY ? TB_ENOMEM : TB_EIO;
}

/* Every chunk in flight ends now as kind, why (the engine's stop). */
static void stop_flying(void *ud, int kind, const char *why)
{
    struct tb_ttshttp *c = ud;
    for (int k = 0; k < c->k.n; k++)
        if (c->slots[k].busy)
            slot_stop(c, &c->slots[k], kind, why);
}

static int step(void *ud, int timeout_ms)
{
    return tb_ttshttp_step_fd(ud, -1, timeout_ms);
}

int tb_ttshttp_step_fd(struct tb_ttshttp *c, int fd, int timeout_ms)
{
    struct curl_waitfd extra = {fd, CURL_WAIT_POLLIN, 0};
    CURLMcode mc;
    int running = 0, wait, rc;
    if (tb_ttscore_cancel_asked(&c->k)) {
        tb_ttshttp_cancel(c);
        return tb_ttscore_left(&c->k);
    }
    if (timeout_ms < 0)
        timeout_ms = 0;
    rc = tb_ttscore_send_ready(&c->k);
    if (rc != 0)
        return rc;
    wait = idle_check(c, timeout_ms);
    if (flying(c) > 0 || wait > 0) {
        if (flying(c) == 0 && c->k.next < c->k.log.n)
            wait = 0; /* a chunk to send at once (a blank one) */
        mc = curl_multi_poll(c->m, fd >= 0 ? &extra : NULL, fd >= 0 ? 1 : 0, wait, NULL);
        if (mc != CURLM_OK)
            return multi_failed(c, mc);
    }
    if ((mc = curl_multi_perform(c->m, &running)) != CURLM_OK)
        return multi_failed(c, mc);
    if (c->stop_requested) {
        c->stop_requested = 0;
        read_done(c);
        tb_ttshttp_cancel(c);
        return tb_ttscore_left(&c->k);
    }
    read_done(c);
    idle_check(c, 0);
    rc = tb_ttscore_send_ready(&c->k);
    if (rc != 0)
        return rc;
    if (flying(c) > 0 && (mc = curl_multi_perform(c->m, &running)) != CURLM_OK)
        return multi_failed(c, mc);
    return tb_ttscore_left(&c->k);
}

int tb_ttshttp_finish(struct tb_ttshttp *c, double deadline)
{
    return tb_ttscore_finish(&c->k, deadline);
}

void tb_ttshttp_cancel(struct tb_ttshttp *c)
{
    tb_ttscore_cancel(&c->k);
}

const struct tb_tts_log *tb_ttshttp_log(const struct tb_ttshttp *c)
{
    return &c->k.log;
}

void tb_ttshttp_take_log(struct tb_ttshttp *c, struct tb_tts_log *out)
{
    for (int k = 0; k < c->k.n; k++)
        slot_drop(c, &c->slots[k]);
    tb_ttscore_take_log(&c->k, out);
}

uint32_t tb_ttshttp_failed(const struct tb_ttshttp *c)
{
    return c->k.failed;
}
