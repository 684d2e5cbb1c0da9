/*
 * ttsws_rx.c - what a WebSocket TTS sent back, in the client's step
 * (ttsws_priv.h): each event the connection's callbacks queued, each message
 * decoded (JSON, base64), its audio attributed to the chunk the protocol
 * names, and the chunks' ends.
 *
 * A chunk's audio is only what the peer sent for it after its text was
 * written and before its end marker: Cartesia names the chunk by
 * flush_id, the count of flushes sent (blank chunks are never sent, so
 * the k-th flush is c->wire[k - 1], not the k-th chunk); ElevenLabs
 * speaks in text order, so a message's audio is the oldest chunk's in
 * flight, and its alignment says where that chunk ends.  Anything else
 * (audio for a chunk whose text was not written yet, audio or an end
 * for a chunk that has ended, audio with no chunk in flight, a
 * flush_id of no chunk sent) is the peer breaking the protocol: a
 * "format" failure of the chunk in flight, or, with none, of every chunk
 * sent later (nothing is ever booked to a chunk it was not for).
 */
#include <cJSON.h>
#include <errno.h>
#include <libwebsockets.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttscheck.h"
#include "ttsbuf/utf8.h"
#include "ttsbuf/ttsws.h"
#include "ttsws_rx.h"

void tb_ttsws_conclude(struct tb_ttsws *c, uint32_t j, int kind, long status, const char *fmt, ...)
{
    struct tb_tts_chunk *r = tb_ttscore_rec(&c->k, j);
    char msg[TB_TTS_MESSAGE_MAX];
    va_list ap;
    if (c->k.state[j - 1] == TB_TTSCORE_ENDED)
        return;
    msg[0] = '\0';
    if (kind == TB_TTS_OK) {
        /* Whole samples, and audio for a text with something to say. */
        kind = tb_ttscheck_end(r, tb_tts_log_text(&c->k.log, j - 1), c->cy[j - 1].has, msg,
                               sizeof(msg));
        fmt = NULL;
        if (isnan(r->sent)) {
            /* An end for a text not written yet: no answer to it. */
            kind = TB_TTS_FORMAT;
            snprintf(msg, sizeof(msg), "the end of chunk %u before its text was sent", (unsigned)j);
        }
    }
    /* Sent means written: a chunk whose text never reached the wire (its
     * connection failed or was refused first, the run stopped while it
     * waited in the out queue) has neither a sent nor an end time, as a
     * chunk never sent (ttsmeas.h), whatever ended it. */
    if (!isnan(r->sent))
        r->end = tb_ttscore_now(&c->k);
    r->fail = kind;
    if (status != 0)
        r->status = status;
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
    }
    if (msg[0] != '\0')
        tb_ttscore_say(&c->k, r, "%s", msg);
    tb_ttscore_ended(&c->k, j);
}

/* The oldest chunk in flight (its j), or 0. */
static uint32_t oldest_flying(const struct tb_ttsws *c)
{
    for (size_t i = 0; i < c->k.next; i++)
        if (c->k.state[i] == TB_TTSCORE_FLYING)
            return (uint32_t)i + 1;
    return 0;
}

void tb_ttsws_fail_flying(struct tb_ttsws *c, int kind, long status, const char *why)
{
    for (size_t i = 0; i < c->k.next; i++) {
        const struct tb_tts_chunk *r = &c->k.log.c[i];
        if (c->k.state[i] != TB_TTSCORE_FLYING)
            continue;
        if (!isnan(r->sent))
            tb_ttsws_conclude(c, (uint32_t)i + 1, kind, status, "%s, after %llu bytes", why,
                              (unsigned long long)r->bytes);
        else if (kind == TB_TTS_CANCELED)
            tb_ttsws_conclude(c, (uint32_t)i + 1, kind, status, "not sent: %s", why);
        else
            tb_ttsws_conclude(c, (uint32_t)i + 1, kind, status, "%s, before this chunk was sent",
                              why);
    }
}

void tb_ttsws_conn_down(struct tb_ttsws *c, int kind, long status, const char *why)
{
    c->down = 1;
    if (c->fail_kind == 0) {
        c->fail_kind = kind;
        c->fail_status = status;
        snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", why);
    }
    tb_ttsws_fail_flying(c, kind, status, why);
}

/* Nothing in flight to fail: every chunk sent later ends as kind, why
 * (the first such reason is kept). */
static void spoil(struct tb_ttsws *c, int kind, long status, const char *why)
{
    if (c->fail_kind != 0)
        return;
    c->fail_kind = kind;
    c->fail_status = status;
    snprintf(c->fail_msg, sizeof(c->fail_msg), "%.200s", why);
}

/*
 * The peer broke the protocol (the file's head): chunk j (0: the oldest
 * in flight) fails "format", why; with no chunk in flight, every chunk
 * sent later fails so (the audio is booked to none).
 */
static void protocol_error(struct tb_ttsws *c, uint32_t j, const char *why)
{
    if (j == 0)
        j = oldest_flying(c);
    if (j != 0)
        tb_ttsws_conclude(c, j, TB_TTS_FORMAT, 0, "%s", why);
    else
        spoil(c, TB_TTS_FORMAT, 0, why);
}

/* A message that is not the protocol's (what, and its first bytes). */
static void bad_message(struct tb_ttsws *c, const char *what, const char *data, size_t len)
{
    char why[TB_TTS_MESSAGE_MAX];
    int k = (int)(len < 64 ? len : 64);
    if (data != NULL && k > 0)
        snprintf(why, sizeof(why), "%s: '%.*s'", what, k, data); /* made one line later */
    else
        snprintf(why, sizeof(why), "%s", what);
    protocol_error(c, 0, why);
}

/* A JSON object that is not the dialect's shape: a protocol break
 * naming the format expected and the message's head. */
static void not_the_dialect(struct tb_ttsws *c, const char *format, const char *lacks,
                            const cJSON *o)
{
    char what[160];
    char *s = cJSON_PrintUnformatted(o);
    snprintf(what, sizeof(what), "a message not in %s format (no %s)", format, lacks);
    bad_message(c, what, s, s != NULL ? strlen(s) : 0);
    free(s);
}

/* Audio for chunk j: whole samples handed on, once its text was sent. */
static void audio(struct tb_ttsws *c, uint32_t j, const unsigned char *b, size_t len, double t)
{
    char why[160];
    if (isnan(tb_ttscore_rec(&c->k, j)->sent)) {
        snprintf(why, sizeof(why), "audio for chunk %u before its text was sent", (unsigned)j);
        protocol_error(c, j, why);
        return;
    }
    c->last[j - 1] = t;
    if (tb_ttscore_pcm(tb_ttscore_rec(&c->k, j), &c->cy[j - 1], (const char *)b, len, t,
                       c->k.on_audio, c->k.ud, j) != 0)
        tb_ttsws_cancel(c);
}

/* Decodes base64 (or base64url) s into *out (malloc'd).  Its length, or
 * -1 (not base64, or out of memory). */
static long b64(const char *s, unsigned char **out)
{
    size_t n = strlen(s);
    long k;
    if (n > (size_t)INT32_MAX) {
        *out = NULL;
        return -1;
    }
    *out = malloc(n / 4 * 3 + 4);
    if (*out == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '/' || s[i] == '=' ||
              s[i] == '-' || s[i] == '_')) {
            free(*out);
            *out = NULL;
            return -1;
        }
    k = n == 0 ? 0 : lws_b64_decode_string_len(s, (int)n, (char *)*out, (int)(n / 4 * 3 + 4));
    if (k < 0) {
        free(*out);
        *out = NULL;
    }
    return k;
}

uint32_t tb_ttsws_nonblank(const char *t, size_t n)
{
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] != ' ' && t[i] != '\t' && t[i] != '\n' && t[i] != '\r' && t[i] != '\f' &&
            t[i] != '\v' && ((unsigned char)t[i] & 0xC0) != 0x80)
            k++;
    return k;
}

/* The provider's in-band error: the chunk in flight fails "http" (none
 * in flight: every chunk sent later). */
static void provider_error(struct tb_ttsws *c, const cJSON *o)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status_code");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
    uint32_t j = oldest_flying(c);
    long status = 0;
    char line[TB_TTS_MESSAGE_MAX], why[TB_TTS_MESSAGE_MAX + 32];
    if (!cJSON_IsNumber(st))
        st = cJSON_GetObjectItemCaseSensitive(o, "code");
    if (cJSON_IsNumber(st) && st->valuedouble >= 0 && st->valuedouble < 1000)
        status = (long)st->valuedouble;
    if (m != NULL && e != NULL && cJSON_IsString(m) && cJSON_IsString(e))
        snprintf(line, sizeof(line), "%s: %s", e->valuestring, m->valuestring);
    else if (e != NULL && cJSON_IsString(e))
        snprintf(line, sizeof(line), "%s", e->valuestring);
    else if (m != NULL && cJSON_IsString(m))
        snprintf(line, sizeof(line), "%s", m->valuestring);
    else {
        char *s = cJSON_PrintUnformatted(o);
        snprintf(line, sizeof(line), "%s", s != NULL ? s : "an error");
        free(s);
    }
    snprintf(why, sizeof(why), "the provider's error: %s", line);
    if (j != 0)
        tb_ttsws_conclude(c, j, TB_TTS_HTTP, status, "%s", why);
    else
        spoil(c, TB_TTS_HTTP, status, why);
}

/* An "error" field that says something (not null, not false). */
static int has_error(const cJSON *o)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    return e != NULL && !cJSON_IsNull(e) && !cJSON_IsFalse(e);
}

/* The audio of a message, decoded: 0 with *pcm (maybe empty), -1 when it
 * is not base64 (said). */
static int decode_audio(struct tb_ttsws *c, const char *s, unsigned char **pcm, long *k)
{
    *k = b64(s, pcm);
    if (*k >= 0)
        return 0;
    bad_message(c, "audio that is not base64", s, strlen(s));
    return -1;
}

/* Audio with no chunk in flight: for none. */
static void stray_audio(struct tb_ttsws *c)
{
    char why[96];
    if (c->k.last_end != 0)
        snprintf(why, sizeof(why), "audio with no chunk in flight (after chunk %u's end)",
                 (unsigned)c->k.last_end);
    else
        snprintf(why, sizeof(why), "audio with no chunk in flight (before any chunk's end)");
    protocol_error(c, 0, why);
}

/* ElevenLabs: the characters a message's alignment names complete the
 * chunks in flight, in text order. */
static void elevenlabs_alignment(struct tb_ttsws *c, uint32_t j, const cJSON *chars)
{
    const cJSON *ch;
    cJSON_ArrayForEach(ch, chars)
    {
        uint32_t k;
        if (!cJSON_IsString(ch) ||
            (k = tb_ttsws_nonblank(ch->valuestring, strlen(ch->valuestring))) == 0)
            continue;
        while (j != 0 && j <= c->k.next && c->counted[j - 1] >= c->need[j - 1])
            j++;
        if (j == 0 || j > c->k.next || c->k.state[j - 1] != TB_TTSCORE_FLYING)
            break;
        c->counted[j - 1] += k;
    }
    for (j = oldest_flying(c); j != 0 && c->counted[j - 1] >= c->need[j - 1]; j = oldest_flying(c))
        tb_ttsws_conclude(c, j, TB_TTS_OK, 0, NULL);
}

static void on_elevenlabs(struct tb_ttsws *c, const cJSON *o, double t)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "audio");
    const cJSON *fin = cJSON_GetObjectItemCaseSensitive(o, "isFinal");
    const cJSON *al = cJSON_GetObjectItemCaseSensitive(o, "alignment");
    const cJSON *chars = al != NULL ? cJSON_GetObjectItemCaseSensitive(al, "chars") : NULL;
    uint32_t j = oldest_flying(c);
    if (has_error(o) ||
        (a == NULL && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "message")))) {
        provider_error(c, o);
        return;
    }
    if (a == NULL && fin == NULL) {
        /* Valid JSON, not this protocol's shape (another dialect's peer,
         * say): a format failure now, not a silent wait for the idle
         * timeout. */
        not_the_dialect(c, "ElevenLabs' stream-input", "\"audio\" or \"isFinal\"", o);
        return;
    }
    if (a != NULL && cJSON_IsString(a) && a->valuestring[0] != '\0') {
        unsigned char *pcm;
        long k;
        if (decode_audio(c, a->valuestring, &pcm, &k) != 0)
            return;
        if (j == 0) {
            free(pcm);
            stray_audio(c);
            return;
        }
        audio(c, j, pcm, (size_t)k, t);
        free(pcm);
        if (c->k.state[j - 1] == TB_TTSCORE_ENDED)
            return;
        if (cJSON_IsArray(chars))
            elevenlabs_alignment(c, j, chars);
    }
    if (cJSON_IsTrue(fin))
        for (j = oldest_flying(c); j != 0; j = oldest_flying(c))
            tb_ttsws_conclude(c, j, TB_TTS_OK, 0, NULL);
}

/* Cartesia's flush_id f: the chunk it names (*j), 0 to go on; -1 when it
 * names no chunk sent, or one that has ended (said). */
static int cartesia_chunk(struct tb_ttsws *c, const char *type, double f, uint32_t *j)
{
    char why[160];
    if (!(f >= 1 && f <= (double)c->nwire) || f != floor(f)) {
        snprintf(why, sizeof(why), "a %s message with a flush_id (%g) of no chunk sent (%zu sent)",
                 type, f, c->nwire);
        protocol_error(c, 0, why);
        return -1;
    }
    *j = c->wire[(size_t)f - 1];
    if (c->k.state[*j - 1] == TB_TTSCORE_ENDED) {
        snprintf(why, sizeof(why), "a %s message for chunk %u (flush_id %g) after its end", type,
                 (unsigned)*j, f);
        protocol_error(c, 0, why);
        return -1;
    }
    return 0;
}

static void on_cartesia(struct tb_ttsws *c, const cJSON *o, double t)
{
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
    const cJSON *fid = cJSON_GetObjectItemCaseSensitive(o, "flush_id");
    const char *type = ty != NULL && cJSON_IsString(ty) ? ty->valuestring : "";
    uint32_t j = oldest_flying(c);
    char why[96];
    if (strcmp(type, "error") == 0 || has_error(o)) {
        provider_error(c, o);
        return;
    }
    if (!cJSON_IsString(ty)) {
        not_the_dialect(c, "Cartesia's contexts", "\"type\"", o);
        return;
    }
    if ((strcmp(type, "chunk") == 0 || strcmp(type, "flush_done") == 0) && cJSON_IsNumber(fid) &&
        cartesia_chunk(c, type, fid->valuedouble, &j) != 0)
        return;
    if (strcmp(type, "chunk") == 0) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "data");
        unsigned char *pcm;
        long k;
        if (!cJSON_IsString(d)) {
            bad_message(c, "a chunk message without data", NULL, 0);
            return;
        }
        if (decode_audio(c, d->valuestring, &pcm, &k) != 0)
            return;
        if (j == 0) {
            stray_audio(c);
        } else {
            audio(c, j, pcm, (size_t)k, t);
        }
        free(pcm);
    } else if (strcmp(type, "flush_done") == 0) {
        if (j != 0 && isnan(tb_ttscore_rec(&c->k, j)->sent)) {
            snprintf(why, sizeof(why), "a flush_done for chunk %u before its text was sent",
                     (unsigned)j);
            protocol_error(c, j, why);
        } else if (j != 0) {
            tb_ttsws_conclude(c, j, TB_TTS_OK, 0, NULL);
        }
    } else if (strcmp(type, "done") == 0) {
        for (j = oldest_flying(c); j != 0; j = oldest_flying(c))
            tb_ttsws_conclude(c, j, TB_TTS_OK, 0, NULL);
    }
    /* "timestamps" and types to come: nothing to measure. */
}

static void on_refused(struct tb_ttsws *c, const struct tb_ttsws_ev *e)
{
    char why[200];
    if (e->status > 0 && e->status != 101) {
        /* The status says it all; libwebsockets' own words ("HS: ws
         * upgrade unauthorized") are its internals, not the server's. */
        snprintf(why, sizeof(why), "the server refused the WebSocket upgrade (HTTP %ld)",
                 e->status);
        tb_ttsws_conn_down(c, TB_TTS_HTTP, e->status, why);
    } else {
        snprintf(why, sizeof(why), "no WebSocket connection: %s", e->data != NULL ? e->data : "");
        tb_ttsws_conn_down(c, TB_TTS_TRANSPORT, 0, why);
    }
}

static void on_closed(struct tb_ttsws *c, const struct tb_ttsws_ev *e)
{
    char why[200];
    const char *sep = e->data != NULL && e->data[0] ? ": " : "";
    const char *d = e->data != NULL ? e->data : "";
    const char *where;
    if (oldest_flying(c) == 0) {
        /* Between chunks (an idle connection the provider ended): the
         * next chunk cannot be sent. */
        snprintf(why, sizeof(why), "the WebSocket connection had closed (code %ld%s%s)", e->status,
                 sep, d);
        tb_ttsws_conn_down(c, TB_TTS_TRANSPORT, 0, why);
        return;
    }
    /* "mid-audio" only once some came for the chunk in flight. */
    where = tb_ttscore_rec(&c->k, oldest_flying(c))->bytes > 0 ? "mid-audio"
                                                               : "before the chunk's audio";
    if (e->status != 0)
        snprintf(why, sizeof(why), "the connection closed %s (code %ld%s%s)", where, e->status, sep,
                 d);
    else
        snprintf(why, sizeof(why), "the connection closed %s", where);
    tb_ttsws_conn_down(c, TB_TTS_CUT, 0, why);
}

void tb_ttsws_rx_event(struct tb_ttsws *c, const struct tb_ttsws_ev *e)
{
    switch (e->kind) {
    case TB_TTSWS_EV_UP: c->up = 1; break;
    case TB_TTSWS_EV_SENT:
        if (e->j >= 1 && e->j <= c->k.log.n && c->k.state[e->j - 1] == TB_TTSCORE_FLYING) {
            tb_ttscore_rec(&c->k, e->j)->sent = e->t;
            c->last[e->j - 1] = e->t;
        }
        break;
    case TB_TTSWS_EV_TEXT: {
        cJSON *o = cJSON_ParseWithLength(e->data, e->len);
        if (!cJSON_IsObject(o))
            bad_message(c, "a message that is not a JSON object", e->data, e->len);
        else if (c->api == TB_TTSWS_ELEVENLABS)
            on_elevenlabs(c, o, e->t);
        else
            on_cartesia(c, o, e->t);
        cJSON_Delete(o);
        break;
    }
    case TB_TTSWS_EV_BINARY:
        bad_message(c, "a binary frame where the protocol sends JSON text", NULL, 0);
        break;
    case TB_TTSWS_EV_TOOBIG: bad_message(c, "a message over 16 MiB", NULL, 0); break;
    case TB_TTSWS_EV_REFUSED: on_refused(c, e); break;
    case TB_TTSWS_EV_CLOSED: on_closed(c, e); break;
    default: break;
    }
}

void tb_ttsws_drain(struct tb_ttsws *c)
{
    struct tb_ttsws_ev *e = c->eq;
    c->eq = NULL;
    c->eq_tail = &c->eq;
    while (e != NULL) {
        struct tb_ttsws_ev *nx = e->next;
        tb_ttsws_rx_event(c, e);
        free(e->data);
        free(e);
        e = nx;
    }
}
