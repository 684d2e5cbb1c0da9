/*
 * ttsnet.c - the TTS client (ttsnet.h): a stream's chunks sent in order,
 * at most N at once, over one libcurl multi handle on the caller's
 * thread, each transfer set up and ended by the rules every request of
 * ttsbuf follows (net/http_xfer.h: redirects, TLS, the key kept to its
 * origin, the error body's cap), its PCM handed on in whole samples and
 * what happened recorded in the log (ttsmeas.h).
 *
 * The idle timeout is watched here, in tb_ttsnet_step, rather than in
 * libcurl's progress callback: libcurl calls that about once a second
 * when nothing arrives, so the timeout would fire up to a second late;
 * step bounds its wait by the nearest idle deadline instead.  The total
 * timeout is libcurl's own (CURLOPT_TIMEOUT_MS), exact.
 */
#include "ttsbuf/ttsnet.h"

#include <curl/curl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_xfer.h"
#include "ttsbuf/error.h"
#include "ttscheck.h"
#include "ttsmsg.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/ttsws.h"
#include "ttsbuf/utf8.h"

/* A chunk's state in the client. */
enum { QUEUED = 0, FLYING, ENDED };

/* One chunk in flight: its request, its transfer and its response. */
struct slot {
    struct tb_ttsnet *c;
    int busy;
    uint32_t j; /* 1-based */
    struct tb_ttsapi_req ar;
    const char *hdrs[TB_TTSAPI_HEADERS_MAX + 1]; /* ar's and "Expect:" */
    struct tb_http_req q;
    struct tb_http_xfer hx;
    struct tb_http_resp hr;
    unsigned char odd; /* a byte waiting for its pair */
    int has_odd;
    int media;                                    /* enum tb_ttscheck_media, once read */
    int checked;                                  /* media read (at the first body byte) */
    size_t head_len;                              /* WAV: header bytes held so far */
    int head_done;                                /* WAV: its header read; PCM follows */
    unsigned char head[TB_TTSCHECK_WAV_HEAD_MAX]; /* WAV: the header, until it is whole */
    char bad[TB_TTS_MESSAGE_MAX];                 /* the body is not the audio asked: why */
};

struct tb_ttsnet {
    struct tb_ttsws *ws; /* a WebSocket dialect's client: every call goes there */
    int api;
    char *url, *key, *model, *voice; /* copies; key zeroed when freed */
    unsigned rate;
    int n; /* concurrency */
    double connect_timeout, idle_timeout, total_timeout;
    int insecure;
    long max_redirects;
    struct tb_clock own_clock, *clk;
    double origin;
    struct tb_secrets *own;       /* the key and the URL's secrets */
    const struct tb_secrets *run; /* the run's, or NULL */
    tb_ttsnet_audio_fn on_audio;
    tb_ttsnet_end_fn on_end;
    void *ud;
    tb_http_log_fn log_fn;
    void *log_ud;
    const atomic_int *cancel;

    CURLM *m;
    struct slot *slots; /* n of them */
    struct tb_tts_log log;
    unsigned char *state; /* per chunk: QUEUED, FLYING, ENDED */
    size_t state_cap;
    size_t next;        /* index of the next chunk to send */
    size_t ended;       /* chunks ended */
    uint32_t failed;    /* first failed chunk, or 0 */
    int stopping;       /* no more sends: a failure, or canceled */
    int stop_requested; /* on_audio asked to stop (acted on after perform) */
    int closed;         /* finish, cancel or take_log: no more submits */
};

static double now(const struct tb_ttsnet *c)
{
    return c->clk->now(c->clk) - c->origin;
}

void tb_ttsnet_opts_init(struct tb_ttsnet_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->api = TB_TTSAPI_OPENAI;
    o->rate = TB_TTSAPI_RATE;
    o->concurrency = 1;
    o->max_redirects = -1;
}

static char *dup_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? strdup(s) : NULL;
}

static void zero_free(char *s)
{
    if (s == NULL)
        return;
    for (volatile char *v = s; *v; v++)
        *v = 0;
    free(s);
}

/* The parameters of every request of c. */
static void params(const struct tb_ttsnet *c, struct tb_ttsapi_params *p)
{
    memset(p, 0, sizeof(*p));
    p->base = c->url;
    p->key = c->key;
    p->model = c->model;
    p->voice = c->voice;
    p->rate = c->rate;
}

/* The log's provider fields, from a request built for no text (which
 * also checks the options the way every request will be built). */
static int fill_log_head(struct tb_ttsnet *c, char *err, size_t errlen)
{
    struct tb_ttsapi_params p;
    struct tb_ttsapi_req r;
    const struct tb_ttsapi_info *in = tb_ttsapi_info(c->api);
    int rc;
    params(c, &p);
    rc = tb_ttsapi_build(c->api, &p, "", 0, &r, err, errlen);
    if (rc != 0)
        return rc;
    snprintf(c->log.api, sizeof(c->log.api), "%s", in->name);
    tb_http_redact(r.url, strlen(r.url), c->log.url, sizeof(c->log.url));
    tb_secrets_scrub(c->own, c->log.url);
    tb_secrets_scrub(c->run, c->log.url);
    /* What was sent: the option, or the dialect's default. */
    tb_utf8_copy(c->log.model, sizeof(c->log.model), c->model != NULL ? c->model : in->model);
    tb_utf8_copy(c->log.voice, sizeof(c->log.voice), c->voice != NULL ? c->voice : in->voice);
    c->log.concurrency = c->n;
    /* The key's own set: the key, and whatever else of the URL is secret. */
    {
        struct tb_http_req q;
        tb_http_req_init(&q);
        q.url = r.url;
        q.bearer = c->key;
        rc = tb_http_secrets(&q, c->own);
    }
    tb_ttsapi_req_free(&r);
    return rc;
}

/* The client of o, whose url and voice are the resolved ones (tb_ttsnet_create). */
static int create(const struct tb_ttsnet_opts *o, struct tb_ttsnet **out, char *err,
                  size_t errlen);

/* The endpoint, for -v: once, as the client starts. */
static void say_endpoint(const struct tb_ttsnet_opts *o, const struct tb_tts_log *l)
{
    char line[700];
    if (o->log == NULL)
        return;
    snprintf(line, sizeof(line), "* TTS %s: %s %s, voice %s, model %s", l->api,
             o->ws ? "each chunk on one WebSocket to" : "each chunk POSTed to", l->url,
             l->voice[0] ? l->voice : "(none)", l->model[0] ? l->model : "(none)");
    o->log(o->log_ud, line);
}

/* o with the URL a user wrote resolved (tb_ttsapi_base): *r is o with
 * url and voice set to *base and *voice, which the caller frees. */
static int resolve(const struct tb_ttsnet_opts *o, struct tb_ttsnet_opts *r, char **base,
                   char **voice, char *err, size_t errlen)
{
    const struct tb_ttsapi_info *in = tb_ttsapi_info(o->api);
    const char *path = o->ws != 0 ? tb_ttsws_path(o->ws - 1) : in != NULL ? in->path : NULL;
    int rc;
    *r = *o;
    *base = *voice = NULL;
    if (o->url == NULL || o->url[0] == '\0')
        return tb_seterr(err, errlen, TB_EINVAL, "no TTS URL (the provider's base URL)");
    if (path == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS API %d",
                         o->ws != 0 ? o->ws - 1 : o->api);
    rc = tb_ttsapi_base(path, o->url, o->voice, base, voice, err, errlen);
    if (rc == 0 && *base == NULL)
        rc = TB_ENOMEM; /* cannot be: for the analyzer */
    r->url = *base;
    r->voice = *voice;
    return rc;
}

int tb_ttsnet_create(const struct tb_ttsnet_opts *o, struct tb_ttsnet **out, char *err,
                     size_t errlen)
{
    struct tb_ttsnet_opts r;
    char *base, *voice;
    int rc = resolve(o, &r, &base, &voice, err, errlen);
    *out = NULL;
    if (rc == 0)
        rc = create(&r, out, err, errlen);
    if (rc == 0 && *out != NULL)
        say_endpoint(o, tb_ttsnet_log(*out));
    free(base);
    free(voice);
    return rc;
}

int tb_ttsnet_describe(const struct tb_ttsnet_opts *o, struct tb_tts_log *head, char *err,
                       size_t errlen)
{
    struct tb_ttsnet_opts r;
    struct tb_ttsapi_params p;
    struct tb_ttsapi_req q;
    char *base, *voice;
    int api = o->ws != 0 ? tb_ttsws_base_api(o->ws - 1) : o->api;
    const struct tb_ttsapi_info *in = tb_ttsapi_info(api);
    int rc;
    tb_tts_log_init(head);
    if (in == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS API %d", api);
    rc = resolve(o, &r, &base, &voice, err, errlen);
    if (rc == 0 && base == NULL)
        rc = TB_ENOMEM; /* cannot be: for the analyzer */
    if (rc == 0 && o->ws != 0) {
        tb_http_redact(base, strlen(base), head->url, sizeof(head->url));
    } else if (rc == 0) {
        memset(&p, 0, sizeof(p));
        p.base = base;
        p.model = r.model;
        p.voice = voice;
        p.rate = r.rate;
        rc = tb_ttsapi_build(api, &p, "", 0, &q, err, errlen);
        if (rc == 0)
            tb_http_redact(q.url, strlen(q.url), head->url, sizeof(head->url));
        tb_ttsapi_req_free(&q);
    }
    if (rc == 0) {
        snprintf(head->api, sizeof(head->api), "%s",
                 o->ws != 0 ? tb_ttsws_name(o->ws - 1) : in->name);
        tb_utf8_copy(head->model, sizeof(head->model),
                     r.model != NULL && r.model[0] != '\0' ? r.model : in->model);
        tb_utf8_copy(head->voice, sizeof(head->voice), voice != NULL ? voice : in->voice);
        head->concurrency = o->concurrency > 0 ? o->concurrency : 1;
        head->mock = o->mock;
    }
    free(base);
    free(voice);
    return rc;
}

static int create(const struct tb_ttsnet_opts *o, struct tb_ttsnet **out, char *err,
                  size_t errlen)
{
    struct tb_ttsnet *c;
    int rc = TB_ENOMEM;
    if (o->ws != 0) {
        c = calloc(1, sizeof(*c));
        if (c == NULL)
            return TB_ENOMEM;
        rc = tb_ttsws_create(o->ws - 1, o, &c->ws, err, errlen);
        if (rc != 0) {
            free(c);
            return rc;
        }
        *out = c;
        return 0;
    }
    if (tb_ttsapi_info(o->api) == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS API %d", o->api);
    if (o->concurrency < 0 || o->concurrency > 1024)
        return tb_seterr(err, errlen, TB_EINVAL, "TTS concurrency %d: from 1 to 1024",
                         o->concurrency);
    if (!(o->idle_timeout >= 0) || !(o->total_timeout >= 0) || !(o->connect_timeout >= 0))
        return tb_seterr(err, errlen, TB_EINVAL, "a TTS timeout is negative");
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return TB_ENOMEM;
    tb_tts_log_init(&c->log);
    c->api = o->api;
    c->rate = o->rate != 0 ? o->rate : TB_TTSAPI_RATE;
    c->n = o->concurrency > 0 ? o->concurrency : 1;
    c->connect_timeout = o->connect_timeout;
    c->idle_timeout = o->idle_timeout;
    c->total_timeout = o->total_timeout;
    c->insecure = o->insecure;
    c->max_redirects = o->max_redirects;
    if (o->clock != NULL) {
        c->clk = o->clock;
        c->origin = o->origin;
    } else {
        tb_clock_monotonic_init(&c->own_clock);
        c->clk = &c->own_clock;
        c->origin = 0;
    }
    c->run = o->secrets;
    c->on_audio = o->on_audio;
    c->on_end = o->on_end;
    c->ud = o->ud;
    c->log_fn = o->log;
    c->log_ud = o->log_ud;
    c->cancel = o->cancel;
    c->log.mock = o->mock;
    c->url = strdup(o->url);
    c->key = dup_or_null(o->key);
    c->model = dup_or_null(o->model);
    c->voice = dup_or_null(o->voice);
    c->slots = calloc((size_t)c->n, sizeof(*c->slots));
    if (c->url == NULL || (o->key != NULL && o->key[0] != '\0' && c->key == NULL) ||
        (o->model != NULL && o->model[0] != '\0' && c->model == NULL) ||
        (o->voice != NULL && o->voice[0] != '\0' && c->voice == NULL) || c->slots == NULL)
        goto fail;
    if (tb_secrets_create(&c->own) != 0)
        goto fail;
    rc = fill_log_head(c, err, errlen);
    if (rc != 0)
        goto fail;
    c->m = curl_multi_init();
    if (c->m == NULL) {
        rc = TB_ENOMEM;
        goto fail;
    }
    for (int i = 0; i < c->n; i++)
        c->slots[i].c = c;
    *out = c;
    return 0;
fail:
    tb_ttsnet_destroy(c);
    return rc;
}

/* Releases what a slot holds once its transfer has ended. */
static void slot_clear(struct slot *s)
{
    tb_ttsapi_req_free(&s->ar);
    tb_http_resp_free(&s->hr);
    s->busy = 0;
    s->has_odd = 0;
}

/* Stops a slot's transfer without a record (destroy, take_log). */
static void slot_drop(struct tb_ttsnet *c, struct slot *s)
{
    if (!s->busy)
        return;
    curl_multi_remove_handle(c->m, s->hx.h);
    tb_http_xfer_end(&s->hx, CURLE_ABORTED_BY_CALLBACK);
    slot_clear(s);
}

void tb_ttsnet_destroy(struct tb_ttsnet *c)
{
    if (c == NULL)
        return;
    if (c->ws != NULL) {
        tb_ttsws_destroy(c->ws);
        free(c);
        return;
    }
    for (int i = 0; c->slots != NULL && i < c->n; i++)
        slot_drop(c, &c->slots[i]);
    if (c->m != NULL)
        curl_multi_cleanup(c->m);
    free(c->slots);
    free(c->state);
    tb_tts_log_free(&c->log);
    tb_secrets_destroy(c->own);
    zero_free(c->key);
    free(c->url);
    free(c->model);
    free(c->voice);
    free(c);
}

static struct tb_tts_chunk *rec(struct tb_ttsnet *c, uint32_t j)
{
    return &c->log.c[j - 1];
}

/* Chunk j has ended (its record complete): the callback, and the run's
 * speech ends with a failure. */
static void ended(struct tb_ttsnet *c, uint32_t j)
{
    struct tb_tts_chunk *r = rec(c, j);
    c->state[j - 1] = ENDED;
    c->ended++;
    if (r->fail != TB_TTS_OK && r->fail != TB_TTS_CANCELED && c->failed == 0) {
        c->failed = j;
        c->stopping = 1;
    }
    if (c->on_end != NULL)
        c->on_end(c->ud, j, r);
}

/* PCM bytes of slot s: whole samples handed on.  Non-zero: on_audio
 * asked to stop. */
static int pcm(struct slot *s, const char *buf, size_t len, double tr)
{
    struct tb_ttsnet *c = s->c;
    size_t even;
    int stop = 0;
    if (len == 0)
        return 0;
    if (s->has_odd) {
        char pair[2] = {(char)s->odd, buf[0]};
        s->has_odd = 0;
        tb_tts_chunk_pcm(rec(c, s->j), tr, pair, 2);
        if (c->on_audio != NULL)
            stop = c->on_audio(c->ud, s->j, pair, 2, tr);
        buf++;
        len--;
    }
    even = len & ~(size_t)1;
    if (!stop && even > 0) {
        tb_tts_chunk_pcm(rec(c, s->j), tr, buf, even);
        if (c->on_audio != NULL)
            stop = c->on_audio(c->ud, s->j, buf, even, tr);
    }
    if (len & 1) {
        s->odd = (unsigned char)buf[len - 1];
        s->has_odd = 1;
    }
    return stop;
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
    v = tb_ttscheck_wav(s->head, s->head_len, s->c->rate, &head, why, sizeof(why));
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
    struct tb_ttsnet *c = s->c;
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
    if (pcm(s, buf + at, len - at, t - c->origin) != 0) {
        c->stop_requested = 1;
        return 1;
    }
    return 0;
}

/* The verdict on a 2xx audio body that came whole: the media type (an
 * empty body never reached on_body), a WAV's header, whole samples, some
 * audio for a text with something to say.  TB_TTS_OK, or TB_TTS_FORMAT
 * with r's message set. */
static int audio_verdict(struct tb_ttsnet *c, struct slot *s, struct tb_tts_chunk *r)
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
        tb_tts_message(r, c->own, c->run, "%s", s->bad);
        return TB_TTS_FORMAT;
    }
    kind = tb_ttscheck_end(r, tb_tts_log_text(&c->log, s->j - 1), s->has_odd, why, sizeof(why));
    if (kind != TB_TTS_OK)
        tb_tts_message(r, c->own, c->run, "HTTP %ld: %s", s->hr.status, why);
    return kind;
}

/* The record of a transfer that ended by itself (forced: -1) or was
 * stopped here with the kind `forced` (why: the message's words). */
static void conclude(struct tb_ttsnet *c, struct slot *s, int forced, const char *why)
{
    struct tb_tts_chunk *r = rec(c, s->j);
    const struct tb_http_resp *hr = &s->hr;
    int audio = hr->sse; /* a 2xx that is not text */
    char msg[TB_TTS_MESSAGE_MAX];
    r->end = now(c);
    r->status = hr->status;
    if (forced >= 0) {
        r->fail = forced;
        tb_tts_message(r, c->own, c->run, "%s, after %llu bytes", why,
                       (unsigned long long)r->bytes);
    } else if (s->bad[0] != '\0') {
        r->fail = TB_TTS_FORMAT; /* on_body stopped it: not the audio asked */
        tb_tts_message(r, c->own, c->run, "%s", s->bad);
    } else if (hr->aborted) {
        r->fail = TB_TTS_CANCELED;
        tb_tts_message(r, c->own, c->run, "stopped by the caller, after %llu bytes",
                       (unsigned long long)r->bytes);
    } else if (hr->total_timeout) {
        r->fail = TB_TTS_TIMEOUT;
        tb_tts_message(r, c->own, c->run,
                       "not done after %g s (the total timeout), after %llu bytes",
                       c->total_timeout, (unsigned long long)r->bytes);
    } else if (hr->status == 0) {
        r->fail = TB_TTS_TRANSPORT;
        tb_tts_message(r, c->own, c->run, "%s", hr->error[0] != '\0' ? hr->error : "no response");
    } else if (hr->status < 200 || hr->status >= 300) {
        r->fail = TB_TTS_HTTP;
        tb_ttsapi_error_text(c->api, hr->body, hr->body_len, msg, sizeof(msg));
        tb_tts_message(r, c->own, c->run, "%s", msg[0] != '\0' ? msg : "(empty body)");
    } else if (!audio && (hr->body_len > 0 || hr->content_type[0] != '\0')) {
        r->fail = TB_TTS_FORMAT;
        tb_ttsapi_error_text(c->api, hr->body, hr->body_len, msg, sizeof(msg));
        tb_tts_message(r, c->own, c->run, "HTTP %ld with Content-Type '%s', not audio: %s",
                       hr->status, hr->content_type[0] != '\0' ? hr->content_type : "(none)",
                       msg[0] != '\0' ? msg : "(empty body)");
    } else if (hr->curl_code != 0) {
        /* The answer had begun: the body was cut (closed, reset, fewer
         * bytes than Content-Length). */
        r->fail = TB_TTS_CUT;
        tb_tts_message(r, c->own, c->run, "the audio stopped after %llu bytes: %s",
                       (unsigned long long)hr->bytes, hr->error);
    } else {
        r->fail = audio_verdict(c, s, r);
    }
    slot_clear(s);
    ended(c, s->j);
}

/* Stops slot s's transfer now and records it as `kind`, why. */
static void slot_stop(struct tb_ttsnet *c, struct slot *s, int kind, const char *why)
{
    curl_multi_remove_handle(c->m, s->hx.h);
    tb_http_xfer_end(&s->hx, CURLE_ABORTED_BY_CALLBACK);
    conclude(c, s, kind, why);
}

/* Hands chunk index i to libcurl in a free slot.  0, or TB_ENOMEM. */
static int send_one(struct tb_ttsnet *c, size_t i)
{
    struct tb_tts_chunk *r = &c->log.c[i];
    uint32_t j = (uint32_t)i + 1;
    struct tb_ttsapi_params p;
    struct slot *s = NULL;
    char err[200];
    int rc;
    c->state[i] = FLYING;
    r->sent = now(c);
    if (tb_tts_blank(tb_tts_log_text(&c->log, i), r->len)) {
        /* Nothing to speak: no request (a provider refuses empty input). */
        r->end = r->sent; /* no first byte: none came (ttsmeas.h) */
        ended(c, j);
        return 0;
    }
    for (int k = 0; k < c->n && s == NULL; k++)
        if (!c->slots[k].busy)
            s = &c->slots[k];
    if (s == NULL) { /* cannot happen: at most N in flight */
        r->end = r->sent;
        r->fail = TB_TTS_TRANSPORT;
        tb_tts_message(r, c->own, c->run, "no free transfer slot");
        ended(c, j);
        return 0;
    }
    memset(&s->hr, 0, sizeof(s->hr));
    s->busy = 1;
    s->j = j;
    s->has_odd = 0;
    s->checked = 0;
    s->head_len = 0;
    s->head_done = 0;
    s->bad[0] = '\0';
    params(c, &p);
    rc = tb_ttsapi_build(c->api, &p, tb_tts_log_text(&c->log, i), r->len, &s->ar, err, sizeof(err));
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
        s->q.any_stream = 1;
        s->q.stream_type = "*/*";
        s->q.connect_timeout = c->connect_timeout;
        s->q.total_timeout = c->total_timeout;
        s->q.insecure = c->insecure;
        s->q.max_redirects = c->max_redirects;
        s->q.log = c->log_fn;
        s->q.log_ud = c->log_ud;
        s->q.secrets = c->own;
        rc = tb_http_xfer_begin(&s->hx, &s->q, c->clk, on_body, s, &s->hr);
        if (rc == 0) {
            curl_easy_setopt(s->hx.h, CURLOPT_PRIVATE, (void *)s);
            if (curl_multi_add_handle(c->m, s->hx.h) != CURLM_OK) {
                tb_http_xfer_end(&s->hx, CURLE_FAILED_INIT);
                rc = TB_ENOMEM;
            }
        }
    }
    if (rc != 0) {
        r->end = now(c);
        r->fail = TB_TTS_TRANSPORT;
        tb_tts_message(r, c->own, c->run, "the request could not be made: %s",
                       rc == TB_ENOMEM ? "out of memory" : err);
        slot_clear(s);
        ended(c, j);
        return rc == TB_ENOMEM ? rc : 0;
    }
    return 0;
}

/* Ends every chunk not sent yet as "canceled" (never sent: times NAN). */
static void cancel_queued(struct tb_ttsnet *c)
{
    while (c->next < c->log.n) {
        size_t i = c->next++;
        c->log.c[i].fail = TB_TTS_CANCELED;
        tb_tts_message(&c->log.c[i], c->own, c->run, "not sent: %s",
                       c->failed != 0 ? "an earlier chunk failed" : "the run was stopped");
        ended(c, (uint32_t)i + 1);
    }
}

/* Sends, in order, every chunk now allowed: chunk j once chunk j-N has
 * ended.  After a failure nothing more is sent. */
static int send_ready(struct tb_ttsnet *c)
{
    int rc = 0;
    while (rc == 0 && !c->stopping && c->next < c->log.n &&
           (c->next < (size_t)c->n || c->state[c->next - (size_t)c->n] == ENDED))
        rc = send_one(c, c->next++);
    if (c->stopping) {
        for (int k = 0; k < c->n; k++)
            if (c->slots[k].busy)
                slot_stop(c, &c->slots[k], TB_TTS_CANCELED, "stopped: an earlier chunk failed");
        cancel_queued(c);
    }
    return rc;
}

int tb_ttsnet_submit(struct tb_ttsnet *c, const char *text, size_t len)
{
    struct tb_tts_chunk *r;
    int rc;
    if (c->ws != NULL)
        return tb_ttsws_submit(c->ws, text, len);
    if (c->closed || (text == NULL && len > 0))
        return TB_EINVAL;
    if (len > TB_EVENT_TEXT_MAX)
        return TB_ETOOBIG;
    if (text == NULL)
        text = "";
    if (tb_utf8_check(text, len) != len || memchr(text, '\0', len) != NULL)
        return TB_EINVAL;
    if (c->log.n + 1 > c->state_cap) {
        size_t nc = c->state_cap ? c->state_cap * 2 : 64;
        unsigned char *ns = realloc(c->state, nc);
        if (ns == NULL)
            return TB_ENOMEM;
        c->state = ns;
        c->state_cap = nc;
    }
    rc = tb_tts_log_add(&c->log, text, len, (uint32_t)tb_utf8_count(text, len), c->rate, &r);
    if (rc != 0)
        return rc;
    c->state[c->log.n - 1] = QUEUED;
    /* Callbacks run in step: a chunk that cannot be sent now waits, and
     * one sent now ends there at the earliest. */
    if (c->stopping)
        return 0;
    if (c->log.n - 1 == c->next &&
        (c->next < (size_t)c->n || c->state[c->next - (size_t)c->n] == ENDED)) {
        const char *t = tb_tts_log_text(&c->log, c->next);
        if (tb_tts_blank(t, c->log.c[c->next].len))
            return 0; /* ended at the next step, with its callback */
        return send_one(c, c->next++);
    }
    return 0;
}

/* Transfers that ended in libcurl: redirects followed, the rest
 * recorded. */
static void read_done(struct tb_ttsnet *c)
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
static int idle_check(struct tb_ttsnet *c, int cap)
{
    double t = c->clk->now(c->clk);
    int wait = cap;
    if (!(c->idle_timeout > 0))
        return cap;
    for (int k = 0; k < c->n; k++) {
        struct slot *s = &c->slots[k];
        double left;
        if (!s->busy)
            continue;
        left = s->hx.last + c->idle_timeout - t;
        if (left <= 0) {
            char why[96];
            snprintf(why, sizeof(why), "no audio byte for %g s (the idle timeout)",
                     c->idle_timeout);
            slot_stop(c, s, TB_TTS_TIMEOUT, why);
            continue;
        }
        if (left * 1000 < wait)
            wait = (int)(left * 1000) + 1;
    }
    return wait;
}

static int flying(const struct tb_ttsnet *c)
{
    int k = 0;
    for (int i = 0; i < c->n; i++)
        k += c->slots[i].busy;
    return k;
}

/* libcurl's multi handle failed: the chunks in flight end there. */
static int multi_failed(struct tb_ttsnet *c, CURLMcode mc)
{
    char why[160];
    snprintf(why, sizeof(why), "libcurl's multi interface failed: %s", curl_multi_strerror(mc));
    for (int k = 0; k < c->n; k++)
        if (c->slots[k].busy)
            slot_stop(c, &c->slots[k], TB_TTS_TRANSPORT, why);
    return mc == CURLM_OUT_OF_MEMORY ? TB_ENOMEM : TB_EIO;
}

int tb_ttsnet_step(struct tb_ttsnet *c, int timeout_ms)
{
    if (c->ws != NULL)
        return tb_ttsws_step(c->ws, timeout_ms);
    return tb_ttsnet_step_fd(c, -1, timeout_ms);
}

int tb_ttsnet_step_fd(struct tb_ttsnet *c, int fd, int timeout_ms)
{
    struct curl_waitfd extra = {fd, CURL_WAIT_POLLIN, 0};
    CURLMcode mc;
    int running = 0, wait, rc;
    if (c->ws != NULL)
        return tb_ttsws_step_fd(c->ws, fd, timeout_ms);
    if (c->cancel != NULL && atomic_load_explicit(c->cancel, memory_order_relaxed) &&
        !c->stopping) {
        tb_ttsnet_cancel(c);
        return (int)(c->log.n - c->ended);
    }
    if (timeout_ms < 0)
        timeout_ms = 0;
    rc = send_ready(c);
    if (rc != 0)
        return rc;
    wait = idle_check(c, timeout_ms);
    if (flying(c) > 0 || wait > 0) {
        if (flying(c) == 0 && c->next < c->log.n)
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
        tb_ttsnet_cancel(c);
        return (int)(c->log.n - c->ended);
    }
    read_done(c);
    idle_check(c, 0);
    rc = send_ready(c);
    if (rc != 0)
        return rc;
    if (flying(c) > 0 && (mc = curl_multi_perform(c->m, &running)) != CURLM_OK)
        return multi_failed(c, mc);
    return (int)(c->log.n - c->ended);
}

int tb_ttsnet_finish(struct tb_ttsnet *c, double deadline)
{
    if (c->ws != NULL)
        return tb_ttsws_finish(c->ws, deadline);
    c->closed = 1;
    while (c->ended < c->log.n) {
        double left = deadline - now(c);
        int rc;
        if (!(left > 0)) {
            for (int k = 0; k < c->n; k++)
                if (c->slots[k].busy)
                    slot_stop(c, &c->slots[k], TB_TTS_TIMEOUT, "not done by the run's deadline");
            c->stopping = 1;
            cancel_queued(c);
            break;
        }
        rc = tb_ttsnet_step(c, left > 0.1 ? 100 : (int)(left * 1000) + 1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void tb_ttsnet_cancel(struct tb_ttsnet *c)
{
    if (c->ws != NULL) {
        tb_ttsws_cancel(c->ws);
        return;
    }
    c->closed = 1;
    c->stopping = 1;
    for (int k = 0; k < c->n; k++)
        if (c->slots[k].busy)
            slot_stop(c, &c->slots[k], TB_TTS_CANCELED, "the run was stopped");
    cancel_queued(c);
}

const struct tb_tts_log *tb_ttsnet_log(const struct tb_ttsnet *c)
{
    if (c->ws != NULL)
        return tb_ttsws_log(c->ws);
    return &c->log;
}

void tb_ttsnet_take_log(struct tb_ttsnet *c, struct tb_tts_log *out)
{
    if (c->ws != NULL) {
        tb_ttsws_take_log(c->ws, out);
        return;
    }
    for (int k = 0; k < c->n; k++)
        slot_drop(c, &c->slots[k]);
    c->closed = 1;
    c->stopping = 1;
    *out = c->log;
    tb_tts_log_init(&c->log);
    c->next = c->ended = 0;
}

uint32_t tb_ttsnet_failed(const struct tb_ttsnet *c)
{
    if (c->ws != NULL)
        return tb_ttsws_failed(c->ws);
    return c->failed;
}
