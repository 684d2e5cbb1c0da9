/*
 * ttsws.c - the WebSocket TTS client (ttsws.h): the caller's side
 * (ttsws_priv.h).  Chunks are submitted, sent in order at most N at once
 * (a blank chunk is skipped: never sent, never given a wire id), and
 * their timeouts kept; the connection is ttsws_conn.c's, what comes back
 * ttsws_rx.c's, the bookkeeping the HTTP client shares the engine's
 * (ttscore.h).
 */
#include "ttsbuf/ttsws.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttsbuf/error.h"
#include "ttsbuf/http.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/utf8.h"
#include "ttsws_conn.h"
#include "ttsws_loop.h"
#include "ttsws_priv.h"
#include "ttsws_rx.h"

static const char *const names[TB_TTSWS__COUNT] = {"elevenlabs-ws", "cartesia-ws"};

const char *tb_ttsws_name(int api)
{
    return api >= 0 && api < TB_TTSWS__COUNT ? names[api] : "?";
}

int tb_ttsws_parse(const char *name)
{
    for (int i = 0; name != NULL && i < TB_TTSWS__COUNT; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

int tb_ttsws_base_api(int api)
{
    return api == TB_TTSWS_ELEVENLABS ? TB_TTSAPI_ELEVENLABS
           : api == TB_TTSWS_CARTESIA ? TB_TTSAPI_CARTESIA
                                      : -1;
}

const char *tb_ttsws_path(int api)
{
    return api == TB_TTSWS_ELEVENLABS ? "/v1/text-to-speech/{voice}/stream-input"
           : api == TB_TTSWS_CARTESIA ? "/tts/websocket"
                                      : NULL;
}

/* Queues a message (payload copied).  0 or TB_ENOMEM. */
static int enqueue(struct tb_ttsws *c, const char *s, uint32_t j)
{
    size_t len = strlen(s);
    struct tb_ttsws_out *o = malloc(sizeof(*o) + TB_TTSWS_PRE + len);
    if (o == NULL)
        return TB_ENOMEM;
    o->next = NULL;
    o->j = j;
    o->len = len;
    memcpy(o->buf + TB_TTSWS_PRE, s, len);
    *c->oq_tail = o;
    c->oq_tail = &o->next;
    tb_ttsws_conn_wake(c);
    return 0;
}

/* Queues a JSON object as a message and frees it. */
static int enqueue_json(struct tb_ttsws *c, cJSON *o, uint32_t j)
{
    char *s = o != NULL ? cJSON_PrintUnformatted(o) : NULL;
    int rc;
    cJSON_Delete(o);
    if (s == NULL)
        return TB_ENOMEM;
    rc = enqueue(c, s, j);
    free(s);
    return rc;
}

/* Cartesia's message for a transcript. */
static cJSON *cartesia_msg(const struct tb_ttsws *c, const char *text, int cont, int flush)
{
    cJSON *o = cJSON_CreateObject(), *v, *f;
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "model_id", c->model);
    cJSON_AddStringToObject(o, "transcript", text);
    v = cJSON_AddObjectToObject(o, "voice");
    if (v != NULL) {
        cJSON_AddStringToObject(v, "mode", "id");
        cJSON_AddStringToObject(v, "id", c->voice);
    }
    f = cJSON_AddObjectToObject(o, "output_format");
    if (f != NULL) {
        cJSON_AddStringToObject(f, "container", "raw");
        cJSON_AddStringToObject(f, "encoding", "pcm_s16le");
        cJSON_AddNumberToObject(f, "sample_rate", c->k.rate);
    }
    cJSON_AddStringToObject(o, "context_id", c->context_id);
    cJSON_AddBoolToObject(o, "continue", cont);
    if (flush)
        cJSON_AddBoolToObject(o, "flush", 1);
    return o;
}

/* Queues chunk index i's messages.  0 or TB_ENOMEM. */
static int send_one(void *ud, size_t i)
{
    struct tb_ttsws *c = ud;
    struct tb_tts_chunk *r = &c->k.log.c[i];
    uint32_t j = (uint32_t)i + 1;
    const char *t = tb_tts_log_text(&c->k.log, i);
    char *text;
    int rc;
    c->k.state[i] = TB_TTSCORE_FLYING;
    if (tb_tts_blank(t, r->len)) {
        /* Skipped (ttsmeas.h): its turn, no message, no wire id. */
        r->sent = r->end = tb_ttscore_now(&c->k);
        tb_ttscore_ended(&c->k, j);
        return 0;
    }
    c->last[i] = tb_ttscore_now(&c->k);
    if (c->fail_kind != 0) {
        tb_ttsws_conclude(c, j, c->fail_kind, c->fail_status, "%s, before this chunk was sent",
                          c->fail_msg);
        return 0;
    }
    c->wire[c->nwire++] = j; /* Cartesia's flush_id c->nwire names it */
    c->need[i] = tb_ttsws_nonblank(t, r->len);
    /* ElevenLabs: "the text should always end with a single space". */
    text = malloc((size_t)r->len + 2);
    if (text == NULL)
        return TB_ENOMEM;
    memcpy(text, t, r->len);
    text[r->len] = '\0';
    if (c->api == TB_TTSWS_ELEVENLABS) {
        cJSON *o = cJSON_CreateObject();
        if (r->len == 0 || text[r->len - 1] != ' ')
            memcpy(text + r->len, " ", 2); /* text has len + 2 bytes */
        if (o != NULL) {
            cJSON_AddStringToObject(o, "text", text);
            cJSON_AddBoolToObject(o, "flush", 1);
        }
        rc = enqueue_json(c, o, j);
    } else {
        rc = enqueue_json(c, cartesia_msg(c, text, 1, 0), j);
        if (rc == 0)
            rc = enqueue_json(c, cartesia_msg(c, "", 1, 1), 0);
    }
    free(text);
    return rc;
}

/* Timeouts of the chunks in flight (and of the upgrade); the wait in ms
 * until the nearest, or cap. */
static int timeouts(struct tb_ttsws *c, int cap)
{
    double t = tb_ttscore_now(&c->k);
    int wait = cap;
    if (!c->up && !c->down && c->connect_timeout > 0) {
        double left = c->created + c->connect_timeout - t;
        if (left <= 0) {
            char why[96];
            snprintf(why, sizeof(why), "no WebSocket upgrade within %g s (the connect timeout)",
                     c->connect_timeout);
            tb_ttsws_conn_down(c, TB_TTS_TIMEOUT, 0, why);
        } else if (left * 1000 < wait) {
            wait = (int)(left * 1000) + 1;
        }
    }
    for (size_t i = 0; i < c->k.next; i++) {
        struct tb_tts_chunk *r = &c->k.log.c[i];
        double left = INFINITY;
        char why[96];
        if (c->k.state[i] != TB_TTSCORE_FLYING)
            continue;
        if (c->idle_timeout > 0) {
            left = c->last[i] + c->idle_timeout - t;
            if (left <= 0) {
                snprintf(why, sizeof(why), "no audio for %g s (the idle timeout)", c->idle_timeout);
                if (isnan(r->sent)) /* its message still waits to be written */
                    tb_ttsws_conclude(c, (uint32_t)i + 1, TB_TTS_TIMEOUT, 0,
                                      "%s, before this chunk was sent", why);
                else
                    tb_ttsws_conclude(c, (uint32_t)i + 1, TB_TTS_TIMEOUT, 0, "%s, after %llu bytes",
                                      why, (unsigned long long)r->bytes);
                continue;
            }
        }
        if (c->total_timeout > 0 && !isnan(r->sent)) {
            double l2 = r->sent + c->total_timeout - t;
            if (l2 <= 0) {
                tb_ttsws_conclude(c, (uint32_t)i + 1, TB_TTS_TIMEOUT, 0,
                                  "not done after %g s (the total timeout), after %llu bytes",
                                  c->total_timeout, (unsigned long long)r->bytes);
                continue;
            }
            if (l2 < left)
                left = l2;
        }
        if (left * 1000 < wait)
            wait = (int)(left * 1000) + 1;
    }
    return wait;
}

void tb_ttsws_cancel(struct tb_ttsws *c)
{
    /* What the loop already posted first: a text written before the
     * cancel is sent (its EV_SENT may still wait in the queue).  Inside
     * a drain (on_audio asked to stop) the queue is the drain's: none. */
    tb_ttsws_drain(c);
    tb_ttscore_cancel(&c->k);
    c->want_close = 1;
    tb_ttsws_conn_wake(c);
}

int tb_ttsws_step(struct tb_ttsws *c, int timeout_ms)
{
    return tb_ttsws_step_fd(c, -1, timeout_ms);
}

int tb_ttsws_loop_create(struct tb_ttsws_loop **out, int tls, char *err, size_t errlen)
{
    return tb_ttsws_loop_open(out, tb_ttsws_conn_protocols(), tls, err, errlen);
}

int tb_ttsws_url_tls(const char *url)
{
    return url != NULL && (strncmp(url, "wss://", 6) == 0 || strncmp(url, "https://", 8) == 0);
}

/* Whether this step services the loop: its own always, a shared one
 * only when the step may wait (ttsws.h). */
static int services(const struct tb_ttsws *c, int timeout_ms)
{
    return c->loop != NULL && (c->own_loop || timeout_ms > 0);
}

int tb_ttsws_step_fd(struct tb_ttsws *c, int fd, int timeout_ms)
{
    int rc, wait;
    if (tb_ttscore_cancel_asked(&c->k)) {
        tb_ttsws_cancel(c);
        return tb_ttscore_left(&c->k);
    }
    if (timeout_ms < 0)
        timeout_ms = 0;
    tb_ttsws_drain(c);
    rc = tb_ttscore_send_ready(&c->k);
    if (rc != 0)
        return rc;
    if (services(c, timeout_ms)) {
        tb_ttsws_loop_service(c->loop); /* what was queued goes out before the wait */
        tb_ttsws_drain(c);
    }
    wait = timeouts(c, timeout_ms);
    if (!c->k.stopping && tb_ttscore_may_send(&c->k))
        wait = 0;
    if (wait > 0 && c->loop != NULL && tb_ttsws_loop_wait(c->loop, fd, wait) != 0 && errno != EINTR)
        return TB_EIO;
    if (services(c, wait))
        tb_ttsws_loop_service(c->loop);
    tb_ttsws_drain(c);
    timeouts(c, 0);
    rc = tb_ttscore_send_ready(&c->k);
    if (rc != 0)
        return rc;
    return tb_ttscore_left(&c->k);
}

/* a grown to nc items of size bytes; a when memory ran out (*bad set). */
static void *grown(void *a, size_t nc, size_t size, int *bad)
{
    void *p = realloc(a, nc * size);
    if (p == NULL) {
        *bad = 1;
        return a;
    }
    return p;
}

/* The per-chunk arrays beside the engine's, twice as large (when memory
 * runs out, every array keeps at least its old size).  0 or TB_ENOMEM. */
static int grow(struct tb_ttsws *c)
{
    size_t nc = c->cap ? c->cap * 2 : 64;
    int bad = 0;
    c->cy = grown(c->cy, nc, sizeof(*c->cy), &bad);
    c->last = grown(c->last, nc, sizeof(*c->last), &bad);
    c->counted = grown(c->counted, nc, sizeof(*c->counted), &bad);
    c->need = grown(c->need, nc, sizeof(*c->need), &bad);
    c->wire = grown(c->wire, nc, sizeof(*c->wire), &bad);
    if (bad)
        return TB_ENOMEM;
    c->cap = nc;
    return 0;
}

int tb_ttsws_submit(struct tb_ttsws *c, const char *text, size_t len)
{
    size_t n = c->k.log.n + 1;
    int rc = tb_ttscore_text(&c->k, &text, len);
    if (rc == 0 && n > c->cap)
        rc = grow(c);
    if (rc == 0)
        rc = tb_ttscore_add(&c->k, text, len);
    if (rc != 0)
        return rc;
    c->cy[n - 1].has = 0;
    c->counted[n - 1] = c->need[n - 1] = 0;
    c->last[n - 1] = NAN;
    if (c->k.stopping)
        return 0;
    if (n - 1 == c->k.next && c->fail_kind == 0 && tb_ttscore_may_send(&c->k) &&
        !tb_tts_blank(text, len) && tb_ttscore_cap_ready(&c->k))
        return send_one(c, c->k.next++);
    return 0;
}

/* Every chunk is written: the stream's end, so the provider speaks what
 * it holds and finishes (finish, before each step).  0 or TB_ENOMEM. */
static int finishing(void *ud)
{
    struct tb_ttsws *c = ud;
    cJSON *o;
    if (c->end_sent || c->k.next != c->k.log.n || c->k.stopping || c->down)
        return 0;
    c->end_sent = 1;
    if (c->api != TB_TTSWS_ELEVENLABS)
        return enqueue_json(c, cartesia_msg(c, "", 0, 0), 0);
    o = cJSON_CreateObject();
    if (o != NULL)
        cJSON_AddStringToObject(o, "text", "");
    return enqueue_json(c, o, 0);
}

static void stop_flying(void *ud, int kind, const char *why)
{
    tb_ttsws_fail_flying(ud, kind, 0, why);
}

static int step(void *ud, int timeout_ms)
{
    return tb_ttsws_step_fd(ud, -1, timeout_ms);
}

static const struct tb_ttscore_ops ops = {send_one, stop_flying, step, finishing};

int tb_ttsws_finish(struct tb_ttsws *c, double deadline)
{
    return tb_ttscore_finish(&c->k, deadline);
}

const struct tb_tts_log *tb_ttsws_log(const struct tb_ttsws *c)
{
    return &c->k.log;
}

void tb_ttsws_take_log(struct tb_ttsws *c, struct tb_tts_log *out)
{
    tb_ttscore_take_log(&c->k, out);
}

uint32_t tb_ttsws_failed(const struct tb_ttsws *c)
{
    return c->k.failed;
}

/* ---- create, destroy ---------------------------------------------------- */

static int url_ok_char(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7F)
            return 0;
    return 1;
}

/* A client with its options checked and copied, its key in its own
 * secrets, no connection yet.  0, TB_EINVAL (why in err) or TB_ENOMEM. */
static int init(int api, const struct tb_ttsnet_opts *o, struct tb_ttsws **out, char *err,
                size_t errlen)
{
    struct tb_ttsws *c;
    const struct tb_ttsapi_info *in;
    int base = tb_ttsws_base_api(api);
    *out = NULL;
    if (base < 0)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS WebSocket API %d", api);
    in = tb_ttsapi_info(base);
    if (o->url == NULL || o->url[0] == '\0')
        return tb_seterr(err, errlen, TB_EINVAL, "no TTS URL (the provider's base URL)");
    if (tb_ttscore_check(o, err, errlen) != 0)
        return TB_EINVAL;
    if (!tb_ttsapi_rate_ok(base, o->rate != 0 ? o->rate : TB_TTSAPI_RATE))
        return tb_seterr(err, errlen, TB_EINVAL, "%s does not take PCM at %u Hz",
                         tb_ttsws_name(api), o->rate);
    if ((o->model != NULL && (!url_ok_char(o->model) || strlen(o->model) >= 128)) ||
        (o->voice != NULL && (!url_ok_char(o->voice) || strlen(o->voice) >= 128)))
        return tb_seterr(err, errlen, TB_EINVAL,
                         "a TTS model or voice with a control character or over 127 bytes");
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return TB_ENOMEM;
    c->oq_tail = &c->oq;
    c->eq_tail = &c->eq;
    c->api = api;
    c->connect_timeout = o->connect_timeout > 0 ? o->connect_timeout : 10;
    c->idle_timeout = o->idle_timeout;
    c->total_timeout = o->total_timeout;
    *out = c;
    if (tb_ttscore_init(&c->k, o, &ops, c) != 0)
        return TB_ENOMEM;
    snprintf(c->model, sizeof(c->model), "%s",
             o->model != NULL && o->model[0] != '\0' ? o->model : in->model);
    snprintf(c->voice, sizeof(c->voice), "%s",
             o->voice != NULL && o->voice[0] != '\0' ? o->voice : in->voice);
    snprintf(c->k.log.api, sizeof(c->k.log.api), "%s", tb_ttsws_name(api));
    tb_utf8_copy(c->k.log.model, sizeof(c->k.log.model), c->model);
    tb_utf8_copy(c->k.log.voice, sizeof(c->k.log.voice), c->voice);
    c->k.log.concurrency = c->k.n;
    snprintf(c->context_id, sizeof(c->context_id), "ttsbuf-%ld-%p", (long)getpid(), (void *)c);
    if (c->k.key != NULL && tb_secrets_add(c->k.own, c->k.key, strlen(c->k.key)) != 0)
        return TB_ENOMEM;
    return 0;
}

/* ElevenLabs opens the stream with a space (its documented first
 * message); the key is in the handshake's header, not here. */
static int elevenlabs_open(struct tb_ttsws *c)
{
    cJSON *m = cJSON_CreateObject();
    if (m == NULL || cJSON_AddStringToObject(m, "text", " ") == NULL) {
        cJSON_Delete(m);
        return TB_ENOMEM;
    }
    return enqueue_json(c, m, 0);
}

int tb_ttsws_create(int api, const struct tb_ttsnet_opts *o, struct tb_ttsws **out, char *err,
                    size_t errlen)
{
    struct tb_ttsws *c;
    int rc = init(api, o, &c, err, errlen);
    *out = NULL;
    if (rc != 0 || c == NULL) /* c NULL: init's codes are never 0 then */
        goto fail;
    c->loop = o->ws_loop;
    if (c->loop == NULL) {
        rc = tb_ttsws_loop_create(&c->loop, tb_ttsws_url_tls(o->url), err, errlen);
        if (rc != 0)
            goto fail;
        c->own_loop = 1;
    }
    if (api == TB_TTSWS_ELEVENLABS && (rc = elevenlabs_open(c)) != 0)
        goto fail;
    rc = tb_ttsws_conn_start(c, o->url, o->insecure, err, errlen);
    if (rc != 0)
        goto fail;
    *out = c;
    return 0;
fail:
    tb_ttsws_destroy(c);
    return rc;
}

int tb_ttsws_create_detached(int api, const struct tb_ttsnet_opts *o, struct tb_ttsws **out,
                             char *err, size_t errlen)
{
    struct tb_ttsws *c;
    int rc = init(api, o, &c, err, errlen);
    *out = NULL;
    if (rc == 0 && c == NULL)
        rc = TB_ENOMEM; /* cannot happen: init's codes are never 0 then */
    if (rc == 0 && api == TB_TTSWS_ELEVENLABS)
        rc = elevenlabs_open(c);
    if (rc != 0) {
        tb_ttsws_destroy(c);
        return rc;
    }
    c->up = 1;
    *out = c;
    return 0;
}

void tb_ttsws_destroy(struct tb_ttsws *c)
{
    struct tb_ttsws_out *o;
    struct tb_ttsws_ev *e;
    if (c == NULL)
        return;
    tb_ttsws_conn_stop(c);
    if (c->own_loop)
        tb_ttsws_loop_destroy(c->loop);
    for (o = c->oq; o != NULL;) {
        struct tb_ttsws_out *nx = o->next;
        free(o);
        o = nx;
    }
    for (e = c->eq; e != NULL;) {
        struct tb_ttsws_ev *nx = e->next;
        free(e->data);
        free(e);
        e = nx;
    }
    free(c->rx);
    free(c->cy);
    free(c->last);
    free(c->counted);
    free(c->need);
    free(c->wire);
    tb_ttscore_free(&c->k);
    free(c->conn_url);
    free(c->path);
    free(c);
}
