/*
 * ttscore.c - the engine both TTS clients share (see ttscore.h): the
 * chunks' records and states, their ends, messages, PCM, cancel and
 * finish.  Nothing here knows the wire.
 */
#include "ttscore.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "ttsbuf/error.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/utf8.h"

int tb_ttscore_check(const struct tb_ttsnet_opts *o, char *err, size_t errlen)
{
    if (o->concurrency < 0 || o->concurrency > 1024)
        return tb_seterr(err, errlen, TB_EINVAL, "TTS concurrency %d: from 1 to 1024",
                         o->concurrency);
    if (!(o->idle_timeout >= 0) || !(o->total_timeout >= 0) || !(o->connect_timeout >= 0))
        return tb_seterr(err, errlen, TB_EINVAL, "a TTS timeout is negative");
    if (o->request_id != NULL) {
        size_t n = strlen(o->request_id);
        if (n == 0 || n > TB_TTSNET_RID_MAX ||
            strspn(o->request_id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789._:-") != n)
            return tb_seterr(err, errlen, TB_EINVAL,
                             "TTS request id '%.60s': 1 to %d of A-Z a-z 0-9 . _ : -",
                             o->request_id, TB_TTSNET_RID_MAX);
    }
    return 0;
}

int tb_ttscore_init(struct tb_ttscore *k, const struct tb_ttsnet_opts *o,
                    const struct tb_ttscore_ops *ops, void *ops_ud)
{
    tb_tts_log_init(&k->log);
    k->ops = ops;
    k->ops_ud = ops_ud;
    k->rate = o->rate != 0 ? o->rate : TB_TTSAPI_RATE;
    k->n = o->concurrency > 0 ? o->concurrency : 1;
    if (o->clock != NULL) {
        k->clk = o->clock;
        k->origin = o->origin;
    } else {
        tb_clock_monotonic_init(&k->own_clock);
        k->clk = &k->own_clock;
        k->origin = 0;
    }
    k->run = o->secrets;
    k->on_audio = o->on_audio;
    k->on_end = o->on_end;
    k->ud = o->ud;
    k->cancel = o->cancel;
    k->log.mock = o->mock;
    if (o->capacity != NULL) {
        k->cap = o->capacity;
        k->log.capacity = tb_capq_capacity(o->capacity);
        k->slots = calloc((size_t)k->n, sizeof(*k->slots));
        k->slot_of = calloc((size_t)k->n, sizeof(*k->slot_of));
        if (k->slots == NULL || k->slot_of == NULL)
            return TB_ENOMEM;
    }
    if (o->key != NULL && o->key[0] != '\0' && (k->key = strdup(o->key)) == NULL)
        return TB_ENOMEM;
    return tb_secrets_create(&k->own) != 0 ? TB_ENOMEM : 0;
}

/* Chunk j's slot of the shared capacity given back (or its place in the
 * queue left), when it has one. */
static void cap_leave(struct tb_ttscore *k, uint32_t j)
{
    size_t i;
    if (k->cap == NULL || j == 0)
        return;
    i = (size_t)(j - 1) % (size_t)k->n;
    if (k->slot_of[i] != j)
        return;
    tb_capq_leave(k->cap, &k->slots[i]);
    k->slot_of[i] = 0;
}

void tb_ttscore_free(struct tb_ttscore *k)
{
    if (k->cap != NULL && k->slots != NULL && k->slot_of != NULL)
        for (size_t i = 0; i < (size_t)k->n; i++)
            cap_leave(k, k->slot_of[i]);
    free(k->slots);
    free(k->slot_of);
    k->slots = NULL;
    k->slot_of = NULL;
    free(k->state);
    tb_tts_log_free(&k->log);
    tb_secrets_destroy(k->own);
    if (k->key != NULL) {
        for (volatile char *v = k->key; *v; v++)
            *v = 0;
        free(k->key);
    }
    k->state = NULL;
    k->own = NULL;
    k->key = NULL;
}

int tb_ttscore_may_send(const struct tb_ttscore *k)
{
    return k->next < k->log.n &&
           (k->next < (size_t)k->n || k->state[k->next - (size_t)k->n] == TB_TTSCORE_ENDED);
}

int tb_ttscore_text(const struct tb_ttscore *k, const char **text, size_t len)
{
    if (k->closed || (*text == NULL && len > 0))
        return TB_EINVAL;
    if (len > TB_EVENT_TEXT_MAX)
        return TB_ETOOBIG;
    if (*text == NULL)
        *text = "";
    if (tb_utf8_check(*text, len) != len || memchr(*text, '\0', len) != NULL)
        return TB_EINVAL;
    return 0;
}

int tb_ttscore_add(struct tb_ttscore *k, const char *text, size_t len)
{
    struct tb_tts_chunk *r;
    int rc;
    if (k->log.n + 1 > k->state_cap) {
        size_t nc = k->state_cap ? k->state_cap * 2 : 64;
        unsigned char *ns = realloc(k->state, nc);
        if (ns == NULL)
            return TB_ENOMEM;
        k->state = ns;
        k->state_cap = nc;
    }
    rc = tb_tts_log_add(&k->log, text, len, (uint32_t)tb_utf8_count(text, len), k->rate, &r);
    if (rc != 0)
        return rc;
    k->state[k->log.n - 1] = TB_TTSCORE_QUEUED;
    return 0;
}

void tb_ttscore_ended(struct tb_ttscore *k, uint32_t j)
{
    struct tb_tts_chunk *r = tb_ttscore_rec(k, j);
    if (k->state[j - 1] == TB_TTSCORE_ENDED)
        return;
    k->state[j - 1] = TB_TTSCORE_ENDED;
    k->ended++;
    cap_leave(k, j);
    if (j == k->entered) /* left the queue unsent */
        k->entered = 0;
    if (r->fail != TB_TTS_OK && r->fail != TB_TTS_CANCELED && k->failed == 0) {
        k->failed = j;
        k->stopping = 1;
    }
    if (r->fail == TB_TTS_OK)
        k->last_end = j;
    if (k->on_end != NULL)
        k->on_end(k->ud, j, r);
}

void tb_ttscore_say(const struct tb_ttscore *k, struct tb_tts_chunk *r, const char *fmt, ...)
{
    /* Room for the peer's words before the cut, so a key near the end is
     * still whole when the scrubber reads it. */
    char raw[4 * TB_TTS_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    tb_secrets_scrub(k->own, raw);
    tb_secrets_scrub(k->run, raw);
    tb_jsonfield_line_of(raw, strlen(raw), r->message, sizeof(r->message));
}

int tb_ttscore_pcm(struct tb_tts_chunk *r, struct tb_ttscore_carry *cy, const char *buf, size_t len,
                   double t, tb_ttsnet_audio_fn on_audio, void *ud, uint32_t j)
{
    size_t even;
    int stop = 0;
    if (len == 0)
        return 0;
    if (cy->has) {
        char pair[2] = {(char)cy->odd, buf[0]};
        cy->has = 0;
        tb_tts_chunk_pcm(r, t, pair, 2);
        if (on_audio != NULL)
            stop = on_audio(ud, j, pair, 2, t);
        buf++;
        len--;
    }
    even = len & ~(size_t)1;
    if (!stop && even > 0) {
        tb_tts_chunk_pcm(r, t, buf, even);
        if (on_audio != NULL)
            stop = on_audio(ud, j, buf, even, t);
    }
    if (len & 1) {
        cy->odd = (unsigned char)buf[len - 1];
        cy->has = 1;
    }
    return stop;
}

void tb_ttscore_cancel_queued(struct tb_ttscore *k)
{
    while (k->next < k->log.n) {
        size_t i = k->next++;
        k->log.c[i].fail = TB_TTS_CANCELED;
        tb_ttscore_say(k, &k->log.c[i], "not sent: %s",
                       k->failed != 0 ? "an earlier chunk failed" : "the run was stopped");
        tb_ttscore_ended(k, (uint32_t)i + 1);
    }
}

int tb_ttscore_cap_ready(struct tb_ttscore *k)
{
    struct tb_tts_chunk *r = &k->log.c[k->next];
    size_t i = k->next % (size_t)k->n;
    double grant;
    if (k->cap == NULL || tb_tts_blank(k->log.arena + r->text, r->len))
        return 1;
    if (k->entered != (uint32_t)k->next + 1) {
        r->cap_ready = tb_ttscore_now(k);
        k->slot_of[i] = (uint32_t)k->next + 1;
        k->entered = (uint32_t)k->next + 1;
        tb_capq_enter(k->cap, &k->slots[i]);
    }
    if (!tb_capq_held(k->cap, &k->slots[i], &grant))
        return 0;
    r->cap_wait = grant - k->slots[i].enter;
    k->entered = 0;
    return 1;
}

int tb_ttscore_send_ready(struct tb_ttscore *k)
{
    int rc = 0;
    while (rc == 0 && !k->stopping && tb_ttscore_may_send(k) && tb_ttscore_cap_ready(k)) {
        rc = k->ops->send(k->ops_ud, k->next++);
    }
    if (k->stopping)
        tb_ttscore_halt(k, TB_TTS_CANCELED, "stopped: an earlier chunk failed");
    return rc;
}

void tb_ttscore_halt(struct tb_ttscore *k, int kind, const char *why)
{
    k->ops->stop_flying(k->ops_ud, kind, why);
    tb_ttscore_cancel_queued(k);
}

int tb_ttscore_cancel_asked(const struct tb_ttscore *k)
{
    return k->cancel != NULL && atomic_load_explicit(k->cancel, memory_order_relaxed) &&
           !k->stopping;
}

void tb_ttscore_cancel(struct tb_ttscore *k)
{
    k->closed = 1;
    k->stopping = 1;
    tb_ttscore_halt(k, TB_TTS_CANCELED, "the run was stopped");
}

int tb_ttscore_finish(struct tb_ttscore *k, double deadline)
{
    k->closed = 1;
    while (k->ended < k->log.n) {
        double left = deadline - tb_ttscore_now(k);
        int rc;
        if (!(left > 0)) {
            k->ops->stop_flying(k->ops_ud, TB_TTS_TIMEOUT, "not done by the run's deadline");
            k->stopping = 1;
            tb_ttscore_cancel_queued(k);
            break;
        }
        if (k->ops->finishing != NULL && (rc = k->ops->finishing(k->ops_ud)) != 0)
            return rc;
        rc = k->ops->step(k->ops_ud, left > 0.1 ? 100 : (int)(left * 1000) + 1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void tb_ttscore_take_log(struct tb_ttscore *k, struct tb_tts_log *out)
{
    k->closed = 1;
    k->stopping = 1;
    *out = k->log;
    tb_tts_log_init(&k->log);
    k->next = k->ended = 0;
}
