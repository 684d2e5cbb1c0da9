/*
 * ttsws.c - the WebSocket TTS client (ttsws.h) on libwebsockets.
 *
 * libwebsockets runs its own poll loop, and Debian builds it without the
 * external-poll hooks, so the connection lives on a thread of its own
 * (the only thread that calls libwebsockets once the connection is
 * started).  It writes the messages the caller's thread queued, stamps
 * each on the run's clock when written, and hands every received message
 * (stamped when its last fragment came) back through a queue and a pipe;
 * the caller's thread reads that pipe in tb_ttsws_step_fd beside its own
 * descriptor, and does everything else there: JSON, base64, attributing
 * audio to chunks, the records, the callbacks, the timeouts.  So the
 * run's clock is read on both threads: it must be the monotonic one (a
 * pure read), as every live run's is.
 */
#include "ttsbuf/ttsws.h"

#include <cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttsbuf/error.h"
#include "ttsmsg.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/utf8.h"

/* Cartesia's version: the HTTP row's (ttsapi_cartesia.c). */
#define CARTESIA_VERSION "2026-03-01"
/* A received message larger than this fails the chunk ("format"). */
#define MSG_MAX (16u << 20)

enum { QUEUED = 0, FLYING, ENDED };

/* What the connection thread hands the caller's thread. */
enum ev_kind { EV_UP = 1, EV_SENT, EV_TEXT, EV_BINARY, EV_TOOBIG, EV_REFUSED, EV_CLOSED };

struct ev {
    struct ev *next;
    int kind;
    double t;    /* on the run's clock */
    uint32_t j;  /* EV_SENT: the chunk */
    long status; /* EV_REFUSED: the HTTP status (0: none); EV_CLOSED: the close code */
    char *data;  /* EV_TEXT: the message, NUL-terminated; EV_REFUSED / EV_CLOSED: why */
    size_t len;
};

/* A message to write: LWS_PRE bytes, then the payload. */
struct out {
    struct out *next;
    uint32_t j; /* the chunk whose text this is (its "sent"), or 0 */
    size_t len;
    unsigned char buf[];
};

struct tb_ttsws {
    int api;
    char *key; /* zeroed when freed */
    char model[128], voice[128];
    unsigned rate;
    int n;
    double connect_timeout, idle_timeout, total_timeout;
    struct tb_clock own_clock, *clk;
    double origin, created;
    struct tb_secrets *own;
    const struct tb_secrets *run;
    tb_ttsnet_audio_fn on_audio;
    tb_ttsnet_end_fn on_end;
    void *ud;
    const atomic_int *cancel;

    /* The connection (its thread's, but for start and join). */
    struct lws_context *ctx;
    struct lws *wsi;
    char *conn_url; /* the parse buffer lws_parse_uri cut up */
    char *path;     /* the request's path and query */
    pthread_t thr;
    int thr_up;
    unsigned char *rx; /* the message being received */
    size_t rx_len, rx_cap;
    int rx_binary, rx_toobig;
    long close_code;
    char close_why[124];

    /* Shared between the two threads, under mu. */
    pthread_mutex_t mu;
    struct out *oq, **oq_tail;
    struct ev *eq, **eq_tail;
    int quit;       /* the thread ends */
    int want_close; /* close once the queue is written */
    int pipe_fd[2]; /* the thread writes a byte after each event */

    /* The caller's thread. */
    struct tb_tts_log log;
    unsigned char *state;
    size_t state_cap;
    double *last;      /* per chunk: its send or its last audio (idle) */
    uint32_t *counted; /* per chunk (ElevenLabs): non-blank characters spoken */
    uint32_t *need;    /* per chunk (ElevenLabs): its non-blank characters */
    unsigned char *odd, *has_odd;
    size_t next, ended;
    uint32_t failed;
    int stopping, closed, up, down, end_sent;
    int fail_kind; /* the connection failed: how (every chunk then ends so) */
    long fail_status;
    char fail_msg[TB_TTS_MESSAGE_MAX];
    char context_id[40];
};

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

static double now(const struct tb_ttsws *c)
{
    return c->clk->now(c->clk) - c->origin;
}

static void set_message(struct tb_ttsws *c, struct tb_tts_chunk *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void set_message(struct tb_ttsws *c, struct tb_tts_chunk *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tb_tts_message_v(r, c->own, c->run, fmt, ap);
    va_end(ap);
}

/* ---- the connection's thread ------------------------------------------ */

static void post(struct tb_ttsws *c, struct ev *e)
{
    char b = 1;
    pthread_mutex_lock(&c->mu);
    *c->eq_tail = e;
    c->eq_tail = &e->next;
    pthread_mutex_unlock(&c->mu);
    /* Full pipe: the reader is behind and will see the queue anyway. */
    if (write(c->pipe_fd[1], &b, 1) < 0 && errno != EAGAIN)
        return;
}

static void post_kind(struct tb_ttsws *c, int kind, long status, const char *why)
{
    struct ev *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return; /* the caller's timeouts end what this would have */
    e->kind = kind;
    e->t = now(c);
    e->status = status;
    if (why != NULL) {
        e->data = strdup(why);
        e->len = e->data != NULL ? strlen(e->data) : 0;
    }
    post(c, e);
}

static int cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    struct tb_ttsws *c = lws_context_user(lws_get_context(wsi));
    (void)user;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
        unsigned char **p = in, *end = *p + len;
        const struct tb_ttsapi_info *in_ = tb_ttsapi_info(tb_ttsws_base_api(c->api));
        char name[64];
        if (c->key != NULL) {
            snprintf(name, sizeof(name), "%s:", in_->key_header);
            if (lws_add_http_header_by_name(wsi, (const unsigned char *)name,
                                            (const unsigned char *)c->key, (int)strlen(c->key), p,
                                            end))
                return -1;
        }
        if (c->api == TB_TTSWS_CARTESIA &&
            lws_add_http_header_by_name(wsi, (const unsigned char *)"Cartesia-Version:",
                                        (const unsigned char *)CARTESIA_VERSION,
                                        (int)strlen(CARTESIA_VERSION), p, end))
            return -1;
        break;
    }
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        post_kind(c, EV_UP, 101, NULL);
        lws_callback_on_writable(wsi);
        break;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: {
        long st = (long)lws_http_client_http_response(wsi);
        c->wsi = NULL;
        post_kind(c, EV_REFUSED, st, in != NULL && len > 0 ? (const char *)in : "no connection");
        break;
    }
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        if (len >= 2) {
            const unsigned char *b = in;
            size_t k = len - 2 < sizeof(c->close_why) - 1 ? len - 2 : sizeof(c->close_why) - 1;
            c->close_code = (long)((b[0] << 8) | b[1]);
            memcpy(c->close_why, b + 2, k);
            c->close_why[k] = '\0';
        }
        break;
    case LWS_CALLBACK_CLIENT_CLOSED:
        c->wsi = NULL;
        post_kind(c, EV_CLOSED, c->close_code, c->close_why);
        break;
    case LWS_CALLBACK_CLIENT_RECEIVE: {
        if (lws_is_first_fragment(wsi)) {
            c->rx_len = 0;
            c->rx_binary = lws_frame_is_binary(wsi);
            c->rx_toobig = 0;
        }
        if (!c->rx_toobig && c->rx_len + len + 1 > c->rx_cap) {
            size_t nc = c->rx_cap ? c->rx_cap : 4096;
            unsigned char *nb;
            while (nc < c->rx_len + len + 1)
                nc *= 2;
            nb = nc <= MSG_MAX ? realloc(c->rx, nc) : NULL;
            if (nb == NULL)
                c->rx_toobig = 1;
            else {
                c->rx = nb;
                c->rx_cap = nc;
            }
        }
        if (!c->rx_toobig) {
            memcpy(c->rx + c->rx_len, in, len);
            c->rx_len += len;
        }
        if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
            struct ev *e = calloc(1, sizeof(*e));
            if (e == NULL)
                break;
            e->t = now(c);
            e->kind = c->rx_toobig ? EV_TOOBIG : c->rx_binary ? EV_BINARY : EV_TEXT;
            if (e->kind == EV_TEXT) {
                c->rx[c->rx_len] = '\0';
                e->data = (char *)c->rx;
                e->len = c->rx_len;
                c->rx = NULL;
                c->rx_cap = 0;
            } else {
                e->len = c->rx_len;
            }
            c->rx_len = 0;
            post(c, e);
        }
        break;
    }
    case LWS_CALLBACK_CLIENT_WRITEABLE: {
        struct out *o;
        int close_now;
        pthread_mutex_lock(&c->mu);
        o = c->oq;
        if (o != NULL) {
            c->oq = o->next;
            if (c->oq == NULL)
                c->oq_tail = &c->oq;
        }
        close_now = o == NULL && c->want_close;
        pthread_mutex_unlock(&c->mu);
        if (close_now) {
            lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
            return -1;
        }
        if (o == NULL)
            break;
        if (lws_write(wsi, o->buf + LWS_PRE, o->len, LWS_WRITE_TEXT) < (int)o->len) {
            free(o);
            return -1;
        }
        if (o->j != 0) {
            struct ev *e = calloc(1, sizeof(*e));
            if (e != NULL) {
                e->kind = EV_SENT;
                e->t = now(c);
                e->j = o->j;
                post(c, e);
            }
        }
        free(o);
        lws_callback_on_writable(wsi);
        break;
    }
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        if (c != NULL && c->wsi != NULL)
            lws_callback_on_writable(c->wsi);
        break;
    default: break;
    }
    return 0;
}

static const struct lws_protocols protocols[] = {
    {"ttsbuf-tts", cb, 0, 1 << 16, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void *loop(void *arg)
{
    struct tb_ttsws *c = arg;
    for (;;) {
        int quit;
        pthread_mutex_lock(&c->mu);
        quit = c->quit;
        pthread_mutex_unlock(&c->mu);
        if (quit || lws_service(c->ctx, 0) < 0)
            break;
    }
    return NULL;
}

/* ---- the caller's thread ----------------------------------------------- */

/* Queues a message (payload copied).  0 or TB_ENOMEM. */
static int enqueue(struct tb_ttsws *c, const char *s, uint32_t j)
{
    size_t len = strlen(s);
    struct out *o = malloc(sizeof(*o) + LWS_PRE + len);
    if (o == NULL)
        return TB_ENOMEM;
    o->next = NULL;
    o->j = j;
    o->len = len;
    memcpy(o->buf + LWS_PRE, s, len);
    pthread_mutex_lock(&c->mu);
    *c->oq_tail = o;
    c->oq_tail = &o->next;
    pthread_mutex_unlock(&c->mu);
    lws_cancel_service(c->ctx);
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
        cJSON_AddNumberToObject(f, "sample_rate", c->rate);
    }
    cJSON_AddStringToObject(o, "context_id", c->context_id);
    cJSON_AddBoolToObject(o, "continue", cont);
    if (flush)
        cJSON_AddBoolToObject(o, "flush", 1);
    return o;
}

static struct tb_tts_chunk *rec(struct tb_ttsws *c, uint32_t j)
{
    return &c->log.c[j - 1];
}

static void ended(struct tb_ttsws *c, uint32_t j)
{
    struct tb_tts_chunk *r = rec(c, j);
    if (c->state[j - 1] == ENDED)
        return;
    c->state[j - 1] = ENDED;
    c->ended++;
    if (r->fail != TB_TTS_OK && r->fail != TB_TTS_CANCELED && c->failed == 0) {
        c->failed = j;
        c->stopping = 1;
    }
    if (c->on_end != NULL)
        c->on_end(c->ud, j, r);
}

/* Ends chunk j now as kind (a message, printf-like). */
static void conclude(struct tb_ttsws *c, uint32_t j, int kind, long status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static void conclude(struct tb_ttsws *c, uint32_t j, int kind, long status, const char *fmt, ...)
{
    struct tb_tts_chunk *r = rec(c, j);
    char msg[TB_TTS_MESSAGE_MAX];
    va_list ap;
    if (c->state[j - 1] == ENDED)
        return;
    if (kind == TB_TTS_OK && c->has_odd[j - 1]) {
        kind = TB_TTS_FORMAT;
        fmt = NULL;
    }
    r->end = now(c);
    if (isnan(r->sent) && kind != TB_TTS_CANCELED)
        r->sent = r->end; /* the attempt: it never reached the wire */
    r->fail = kind;
    if (status != 0)
        r->status = status;
    msg[0] = '\0';
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
    } else if (kind == TB_TTS_FORMAT) {
        snprintf(msg, sizeof(msg), "an odd number of PCM bytes (%llu): not 16-bit samples",
                 (unsigned long long)r->bytes + 1);
    }
    if (msg[0] != '\0')
        set_message(c, r, "%s", msg);
    ended(c, j);
}

/* The oldest chunk in flight (its j), or 0. */
static uint32_t oldest_flying(const struct tb_ttsws *c)
{
    for (size_t i = 0; i < c->next; i++)
        if (c->state[i] == FLYING)
            return (uint32_t)i + 1;
    return 0;
}

/* Every chunk in flight ends as kind. */
static void fail_flying(struct tb_ttsws *c, int kind, long status, const char *why)
{
    for (size_t i = 0; i < c->next; i++)
        if (c->state[i] == FLYING)
            conclude(c, (uint32_t)i + 1, kind, status, "%s, after %llu bytes", why,
                     (unsigned long long)c->log.c[i].bytes);
}

static void cancel_queued(struct tb_ttsws *c)
{
    while (c->next < c->log.n) {
        size_t i = c->next++;
        c->log.c[i].fail = TB_TTS_CANCELED;
        set_message(c, &c->log.c[i], "not sent: %s",
                    c->failed != 0 ? "an earlier chunk failed" : "the run was stopped");
        c->state[i] = FLYING;
        ended(c, (uint32_t)i + 1);
    }
}

/* Audio for chunk j: whole samples handed on. */
static void audio(struct tb_ttsws *c, uint32_t j, const unsigned char *b, size_t len, double t)
{
    size_t i = j - 1, even;
    int stop = 0;
    c->last[i] = t;
    if (len == 0)
        return;
    if (c->has_odd[i]) {
        char pair[2] = {(char)c->odd[i], (char)b[0]};
        c->has_odd[i] = 0;
        tb_tts_chunk_received(rec(c, j), t, 2);
        if (c->on_audio != NULL)
            stop = c->on_audio(c->ud, j, pair, 2, t);
        b++;
        len--;
    }
    even = len & ~(size_t)1;
    if (!stop && even > 0) {
        tb_tts_chunk_received(rec(c, j), t, even);
        if (c->on_audio != NULL)
            stop = c->on_audio(c->ud, j, (const char *)b, even, t);
    }
    if (len & 1) {
        c->odd[i] = b[len - 1];
        c->has_odd[i] = 1;
    }
    if (stop)
        tb_ttsws_cancel(c);
}

/* Decodes base64 s into *out (malloc'd).  Its length, or -1. */
static long b64(const char *s, unsigned char **out)
{
    size_t n = strlen(s);
    long k;
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

static uint32_t nonblank(const char *t, size_t n)
{
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] != ' ' && t[i] != '\t' && t[i] != '\n' && t[i] != '\r' && t[i] != '\f' &&
            t[i] != '\v' && ((unsigned char)t[i] & 0xC0) != 0x80)
            k++;
    return k;
}

/* A message that is not the protocol's: the chunk in flight fails. */
static void bad_message(struct tb_ttsws *c, const char *what, const char *data, size_t len)
{
    uint32_t j = oldest_flying(c);
    char raw[80], head[80];
    size_t k = len < sizeof(raw) - 1 ? len : sizeof(raw) - 1;
    if (j == 0)
        return; /* between chunks: nothing of a chunk's is lost or misread */
    memcpy(raw, data != NULL ? data : "", data != NULL ? k : 0);
    raw[data != NULL ? k : 0] = '\0';
    tb_utf8_copy(head, sizeof(head), raw);
    conclude(c, j, TB_TTS_FORMAT, 0, "%s%s%s%s", what, head[0] ? ": '" : "", head,
             head[0] ? "'" : "");
}

/* The provider's in-band error: the chunk in flight fails "http". */
static void provider_error(struct tb_ttsws *c, const cJSON *o)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status_code");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
    uint32_t j = oldest_flying(c);
    long status = 0;
    char line[TB_TTS_MESSAGE_MAX];
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
    if (j != 0)
        conclude(c, j, TB_TTS_HTTP, status, "the provider's error: %s", line);
}

/* An "error" field that says something (not null, not false). */
static int has_error(const cJSON *o)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    return e != NULL && !cJSON_IsNull(e) && !cJSON_IsFalse(e);
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
    if (a != NULL && cJSON_IsString(a) && a->valuestring[0] != '\0') {
        unsigned char *pcm;
        long k = b64(a->valuestring, &pcm);
        if (k < 0) {
            bad_message(c, "audio that is not base64", a->valuestring, strlen(a->valuestring));
            return;
        }
        if (j == 0) {
            free(pcm);
            bad_message(c, "audio with no chunk in flight", NULL, 0);
            return;
        }
        audio(c, j, pcm, (size_t)k, t);
        free(pcm);
        if (c->state[j - 1] == ENDED)
            return;
        /* The characters this audio speaks complete chunk j (and the
         * next ones, when a message spans them). */
        if (cJSON_IsArray(chars)) {
            const cJSON *ch;
            cJSON_ArrayForEach(ch, chars)
            {
                if (!cJSON_IsString(ch) || nonblank(ch->valuestring, strlen(ch->valuestring)) == 0)
                    continue;
                while (j != 0 && j <= c->next && c->counted[j - 1] >= c->need[j - 1])
                    j++;
                if (j == 0 || j > c->next || c->state[j - 1] != FLYING)
                    break;
                c->counted[j - 1] += nonblank(ch->valuestring, strlen(ch->valuestring));
            }
            for (j = oldest_flying(c); j != 0 && c->counted[j - 1] >= c->need[j - 1];
                 j = oldest_flying(c))
                conclude(c, j, TB_TTS_OK, 0, NULL);
        }
    }
    if (cJSON_IsTrue(fin))
        for (j = oldest_flying(c); j != 0; j = oldest_flying(c))
            conclude(c, j, TB_TTS_OK, 0, NULL);
}

static void on_cartesia(struct tb_ttsws *c, const cJSON *o, double t)
{
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
    const cJSON *fid = cJSON_GetObjectItemCaseSensitive(o, "flush_id");
    const char *type = ty != NULL && cJSON_IsString(ty) ? ty->valuestring : "";
    uint32_t j = oldest_flying(c);
    if (cJSON_IsNumber(fid)) {
        double f = fid->valuedouble;
        if (!(f >= 1 && f <= (double)c->next) || c->state[(size_t)f - 1] != FLYING) {
            char why[96];
            snprintf(why, sizeof(why), "a flush_id (%g) of no chunk in flight", f);
            bad_message(c, why, NULL, 0);
            return;
        }
        j = (uint32_t)f;
    }
    if (strcmp(type, "error") == 0 || has_error(o)) {
        provider_error(c, o);
    } else if (strcmp(type, "chunk") == 0) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "data");
        unsigned char *pcm;
        long k;
        if (d == NULL || !cJSON_IsString(d)) {
            bad_message(c, "a chunk message without data", NULL, 0);
            return;
        }
        k = b64(d->valuestring, &pcm);
        if (k < 0) {
            bad_message(c, "audio that is not base64", d->valuestring, strlen(d->valuestring));
            return;
        }
        if (j == 0)
            bad_message(c, "audio with no chunk in flight", NULL, 0);
        else
            audio(c, j, pcm, (size_t)k, t);
        free(pcm);
    } else if (strcmp(type, "flush_done") == 0) {
        if (j != 0)
            conclude(c, j, TB_TTS_OK, 0, NULL);
    } else if (strcmp(type, "done") == 0) {
        for (j = oldest_flying(c); j != 0; j = oldest_flying(c))
            conclude(c, j, TB_TTS_OK, 0, NULL);
    }
    /* "timestamps" and types to come: nothing to measure. */
}

/* The connection failed or closed: what is in flight ends, and every
 * chunk sent later would fail the same way. */
static void conn_down(struct tb_ttsws *c, int kind, long status, const char *why)
{
    c->down = 1;
    if (c->fail_kind == 0) {
        c->fail_kind = kind;
        c->fail_status = status;
        snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", why);
    }
    fail_flying(c, kind, status, why);
}

static void handle(struct tb_ttsws *c, struct ev *e)
{
    switch (e->kind) {
    case EV_UP: c->up = 1; break;
    case EV_SENT:
        if (e->j >= 1 && e->j <= c->log.n && c->state[e->j - 1] == FLYING) {
            rec(c, e->j)->sent = e->t;
            c->last[e->j - 1] = e->t;
        }
        break;
    case EV_TEXT: {
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
    case EV_BINARY:
        bad_message(c, "a binary frame where the protocol sends JSON text", NULL, 0);
        break;
    case EV_TOOBIG: bad_message(c, "a message over 16 MiB", NULL, 0); break;
    case EV_REFUSED: {
        char why[200];
        if (e->status > 0 && e->status != 101) {
            snprintf(why, sizeof(why), "the WebSocket upgrade was refused: HTTP %ld (%s)",
                     e->status, e->data != NULL ? e->data : "");
            conn_down(c, TB_TTS_HTTP, e->status, why);
        } else {
            snprintf(why, sizeof(why), "no WebSocket connection: %s",
                     e->data != NULL ? e->data : "");
            conn_down(c, TB_TTS_TRANSPORT, 0, why);
        }
        break;
    }
    case EV_CLOSED: {
        char why[200];
        if (oldest_flying(c) == 0) {
            /* Between chunks (an idle connection the provider ended):
             * the next chunk cannot be sent. */
            snprintf(why, sizeof(why), "the WebSocket connection had closed (code %ld%s%s)",
                     e->status, e->data != NULL && e->data[0] ? ": " : "",
                     e->data != NULL ? e->data : "");
            conn_down(c, TB_TTS_TRANSPORT, 0, why);
            break;
        }
        if (e->status != 0)
            snprintf(why, sizeof(why), "the connection closed mid-audio (code %ld%s%s)", e->status,
                     e->data != NULL && e->data[0] ? ": " : "", e->data != NULL ? e->data : "");
        else
            snprintf(why, sizeof(why), "the connection closed mid-audio");
        conn_down(c, TB_TTS_CUT, 0, why);
        break;
    }
    default: break;
    }
}

/* Takes and handles every event the connection thread posted. */
static void drain(struct tb_ttsws *c)
{
    struct ev *e;
    char buf[64];
    while (read(c->pipe_fd[0], buf, sizeof(buf)) > 0)
        ;
    pthread_mutex_lock(&c->mu);
    e = c->eq;
    c->eq = NULL;
    c->eq_tail = &c->eq;
    pthread_mutex_unlock(&c->mu);
    while (e != NULL) {
        struct ev *nx = e->next;
        handle(c, e);
        free(e->data);
        free(e);
        e = nx;
    }
}

static int is_blank(const char *t, size_t n)
{
    return nonblank(t, n) == 0;
}

/* Queues chunk index i's messages.  0 or TB_ENOMEM. */
static int send_one(struct tb_ttsws *c, size_t i)
{
    struct tb_tts_chunk *r = &c->log.c[i];
    uint32_t j = (uint32_t)i + 1;
    const char *t = tb_tts_log_text(&c->log, i);
    char *text;
    int rc;
    c->state[i] = FLYING;
    if (is_blank(t, r->len)) {
        r->sent = r->end = now(c);
        ended(c, j);
        return 0;
    }
    c->last[i] = now(c);
    if (c->fail_kind != 0) {
        conclude(c, j, c->fail_kind, c->fail_status, "%s", c->fail_msg);
        return 0;
    }
    c->need[i] = nonblank(t, r->len);
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

static int send_ready(struct tb_ttsws *c)
{
    int rc = 0;
    while (rc == 0 && !c->stopping && c->next < c->log.n &&
           (c->next < (size_t)c->n || c->state[c->next - (size_t)c->n] == ENDED))
        rc = send_one(c, c->next++);
    if (c->stopping) {
        fail_flying(c, TB_TTS_CANCELED, 0, "stopped: an earlier chunk failed");
        cancel_queued(c);
    }
    return rc;
}

/* Timeouts of the chunks in flight (and of the upgrade); the wait in ms
 * until the nearest, or cap. */
static int timeouts(struct tb_ttsws *c, int cap)
{
    double t = now(c);
    int wait = cap;
    if (!c->up && !c->down && c->connect_timeout > 0) {
        double left = c->created + c->connect_timeout - t;
        if (left <= 0) {
            char why[96];
            snprintf(why, sizeof(why), "no WebSocket upgrade within %g s (the connect timeout)",
                     c->connect_timeout);
            conn_down(c, TB_TTS_TIMEOUT, 0, why);
        } else if (left * 1000 < wait) {
            wait = (int)(left * 1000) + 1;
        }
    }
    for (size_t i = 0; i < c->next; i++) {
        struct tb_tts_chunk *r = &c->log.c[i];
        double left = INFINITY;
        char why[96];
        if (c->state[i] != FLYING)
            continue;
        if (c->idle_timeout > 0) {
            left = c->last[i] + c->idle_timeout - t;
            if (left <= 0) {
                snprintf(why, sizeof(why), "no audio for %g s (the idle timeout)", c->idle_timeout);
                conclude(c, (uint32_t)i + 1, TB_TTS_TIMEOUT, 0, "%s, after %llu bytes", why,
                         (unsigned long long)r->bytes);
                continue;
            }
        }
        if (c->total_timeout > 0 && !isnan(r->sent)) {
            double l2 = r->sent + c->total_timeout - t;
            if (l2 <= 0) {
                conclude(c, (uint32_t)i + 1, TB_TTS_TIMEOUT, 0,
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
    c->closed = 1;
    c->stopping = 1;
    fail_flying(c, TB_TTS_CANCELED, 0, "the run was stopped");
    cancel_queued(c);
    pthread_mutex_lock(&c->mu);
    c->want_close = 1;
    pthread_mutex_unlock(&c->mu);
    lws_cancel_service(c->ctx);
}

int tb_ttsws_step(struct tb_ttsws *c, int timeout_ms)
{
    return tb_ttsws_step_fd(c, -1, timeout_ms);
}

int tb_ttsws_step_fd(struct tb_ttsws *c, int fd, int timeout_ms)
{
    struct pollfd p[2];
    int rc, wait;
    if (c->cancel != NULL && atomic_load_explicit(c->cancel, memory_order_relaxed) &&
        !c->stopping) {
        tb_ttsws_cancel(c);
        return (int)(c->log.n - c->ended);
    }
    if (timeout_ms < 0)
        timeout_ms = 0;
    drain(c);
    rc = send_ready(c);
    if (rc != 0)
        return rc;
    wait = timeouts(c, timeout_ms);
    if (c->next < c->log.n && !c->stopping &&
        (c->next < (size_t)c->n || c->state[c->next - (size_t)c->n] == ENDED))
        wait = 0;
    p[0].fd = c->pipe_fd[0];
    p[0].events = POLLIN;
    p[1].fd = fd;
    p[1].events = POLLIN;
    if (wait > 0 && poll(p, fd >= 0 ? 2 : 1, wait) < 0 && errno != EINTR)
        return TB_EIO;
    drain(c);
    timeouts(c, 0);
    rc = send_ready(c);
    if (rc != 0)
        return rc;
    return (int)(c->log.n - c->ended);
}

int tb_ttsws_submit(struct tb_ttsws *c, const char *text, size_t len)
{
    struct tb_tts_chunk *r;
    int rc;
    size_t n;
    if (c->closed || (text == NULL && len > 0))
        return TB_EINVAL;
    if (len > TB_EVENT_TEXT_MAX)
        return TB_ETOOBIG;
    if (text == NULL)
        text = "";
    if (tb_utf8_check(text, len) != len || memchr(text, '\0', len) != NULL)
        return TB_EINVAL;
    n = c->log.n + 1;
    if (n > c->state_cap) {
        size_t nc = c->state_cap ? c->state_cap * 2 : 64;
        unsigned char *s = realloc(c->state, nc), *o, *h;
        double *l;
        uint32_t *k, *nd;
        if (s != NULL)
            c->state = s;
        o = realloc(c->odd, nc);
        if (o != NULL)
            c->odd = o;
        h = realloc(c->has_odd, nc);
        if (h != NULL)
            c->has_odd = h;
        l = realloc(c->last, nc * sizeof(*l));
        if (l != NULL)
            c->last = l;
        k = realloc(c->counted, nc * sizeof(*k));
        if (k != NULL)
            c->counted = k;
        nd = realloc(c->need, nc * sizeof(*nd));
        if (nd != NULL)
            c->need = nd;
        if (s == NULL || o == NULL || h == NULL || l == NULL || k == NULL || nd == NULL)
            return TB_ENOMEM;
        c->state_cap = nc;
    }
    rc = tb_tts_log_add(&c->log, text, len, (uint32_t)tb_utf8_count(text, len), c->rate, &r);
    if (rc != 0)
        return rc;
    c->state[n - 1] = QUEUED;
    c->has_odd[n - 1] = 0;
    c->counted[n - 1] = c->need[n - 1] = 0;
    c->last[n - 1] = NAN;
    if (c->stopping)
        return 0;
    if (n - 1 == c->next && c->fail_kind == 0 &&
        (c->next < (size_t)c->n || c->state[c->next - (size_t)c->n] == ENDED) &&
        !is_blank(text, len))
        return send_one(c, c->next++);
    return 0;
}

int tb_ttsws_finish(struct tb_ttsws *c, double deadline)
{
    c->closed = 1;
    while (c->ended < c->log.n) {
        double left = deadline - now(c);
        int rc;
        if (!(left > 0)) {
            fail_flying(c, TB_TTS_TIMEOUT, 0, "not done by the run's deadline");
            c->stopping = 1;
            cancel_queued(c);
            break;
        }
        if (!c->end_sent && c->next == c->log.n && !c->stopping && !c->down) {
            /* Every chunk is written: the stream's end, so the provider
             * speaks what it holds and finishes. */
            c->end_sent = 1;
            if (c->api == TB_TTSWS_ELEVENLABS) {
                cJSON *o = cJSON_CreateObject();
                if (o != NULL)
                    cJSON_AddStringToObject(o, "text", "");
                rc = enqueue_json(c, o, 0);
            } else {
                rc = enqueue_json(c, cartesia_msg(c, "", 0, 0), 0);
            }
            if (rc != 0)
                return rc;
        }
        rc = tb_ttsws_step(c, left > 0.1 ? 100 : (int)(left * 1000) + 1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

const struct tb_tts_log *tb_ttsws_log(const struct tb_ttsws *c)
{
    return &c->log;
}

void tb_ttsws_take_log(struct tb_ttsws *c, struct tb_tts_log *out)
{
    c->closed = 1;
    c->stopping = 1;
    *out = c->log;
    tb_tts_log_init(&c->log);
    c->next = c->ended = 0;
}

uint32_t tb_ttsws_failed(const struct tb_ttsws *c)
{
    return c->failed;
}

/* ---- create, destroy ---------------------------------------------------- */

static int url_ok_char(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7F)
            return 0;
    return 1;
}

/* The connection: parses the base URL, builds the path, starts the
 * context, the connect and the thread.  0, TB_EINVAL or TB_ENOMEM. */
static int start(struct tb_ttsws *c, const char *url, int insecure, char *err, size_t errlen)
{
    struct lws_context_creation_info ci;
    struct lws_client_connect_info cc;
    const char *prot = NULL, *ads = NULL, *bpath = NULL;
    int port = 0, tls;
    char *ev = NULL, *em = NULL, base_path[512];
    size_t bl;

    c->conn_url = strdup(url);
    if (c->conn_url == NULL)
        return TB_ENOMEM;
    if (lws_parse_uri(c->conn_url, &prot, &ads, &port, &bpath) != 0 || ads == NULL ||
        ads[0] == '\0')
        return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: not a URL");
    if (strcmp(prot, "wss") == 0 || strcmp(prot, "https") == 0)
        tls = 1;
    else if (strcmp(prot, "ws") == 0 || strcmp(prot, "http") == 0)
        tls = 0;
    else
        return tb_seterr(err, errlen, TB_EINVAL,
                         "TTS URL: scheme '%s' (a WebSocket dialect takes ws, wss, http or https)",
                         prot);
    if (strchr(url + strlen(prot) + 3, '@') != NULL)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "TTS URL: credentials in the URL (the key goes in its variable)");
    if (strchr(url, '?') != NULL || strchr(url, '#') != NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: a query or fragment in the base URL");
    if (strcmp(prot, "http") == 0 || strcmp(prot, "ws") == 0)
        port = port == 0 ? 80 : port;
    snprintf(base_path, sizeof(base_path), "/%s", bpath != NULL ? bpath : "");
    bl = strlen(base_path);
    while (bl > 0 && base_path[bl - 1] == '/')
        base_path[--bl] = '\0';
    ev = curl_easy_escape(NULL, c->voice, 0);
    em = curl_easy_escape(NULL, c->model, 0);
    if (ev == NULL || em == NULL) {
        curl_free(ev);
        curl_free(em);
        return TB_ENOMEM;
    }
    {
        size_t need = bl + strlen(ev) + strlen(em) + 160;
        c->path = malloc(need);
        if (c->path != NULL) {
            if (c->api == TB_TTSWS_ELEVENLABS)
                snprintf(c->path, need,
                         "%s/v1/text-to-speech/%s/stream-input?model_id=%s&output_format=pcm_%u"
                         "&inactivity_timeout=180",
                         base_path, ev, em, c->rate);
            else
                snprintf(c->path, need, "%s/tts/websocket?cartesia_version=%s", base_path,
                         CARTESIA_VERSION);
        }
    }
    curl_free(ev);
    curl_free(em);
    if (c->path == NULL)
        return TB_ENOMEM;
    /* The log's url: scheme, host, path, no secret (none is in it). */
    if (port != 0 && port != (tls ? 443 : 80))
        snprintf(c->log.url, sizeof(c->log.url), "%s://%s:%d%s", tls ? "wss" : "ws", ads, port,
                 c->path);
    else
        snprintf(c->log.url, sizeof(c->log.url), "%s://%s%s", tls ? "wss" : "ws", ads, c->path);
    tb_secrets_scrub(c->own, c->log.url);
    tb_secrets_scrub(c->run, c->log.url);
    if (port == 0)
        port = tls ? 443 : 80;

    lws_set_log_level(0, NULL); /* the library prints nothing */
    memset(&ci, 0, sizeof(ci));
    ci.port = CONTEXT_PORT_NO_LISTEN;
    ci.protocols = protocols;
    ci.user = c;
    ci.gid = -1;
    ci.uid = -1;
    ci.options = tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0;
    c->ctx = lws_create_context(&ci);
    if (c->ctx == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "libwebsockets: no context");
    memset(&cc, 0, sizeof(cc));
    cc.context = c->ctx;
    cc.address = ads;
    cc.port = port;
    cc.path = c->path;
    cc.host = ads;
    cc.origin = ads;
    cc.protocol = NULL;
    cc.ietf_version_or_minus_one = -1;
    cc.local_protocol_name = protocols[0].name;
    cc.ssl_connection = tls ? LCCSCF_USE_SSL : 0;
    if (tls && insecure)
        cc.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK |
                             LCCSCF_ALLOW_INSECURE | LCCSCF_ALLOW_EXPIRED;
    cc.pwsi = &c->wsi;
    c->created = now(c);
    if (lws_client_connect_via_info(&cc) == NULL && c->wsi == NULL) {
        /* Failed at once (its error callback may have posted why). */
        if (c->eq == NULL)
            post_kind(c, EV_REFUSED, 0, "the connection could not be started");
    }
    if (pthread_create(&c->thr, NULL, loop, c) != 0)
        return TB_ENOMEM;
    c->thr_up = 1;
    return 0;
}

int tb_ttsws_create(int api, const struct tb_ttsnet_opts *o, struct tb_ttsws **out, char *err,
                    size_t errlen)
{
    struct tb_ttsws *c;
    const struct tb_ttsapi_info *in;
    int rc = TB_ENOMEM, base = tb_ttsws_base_api(api);
    *out = NULL;
    if (base < 0)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS WebSocket API %d", api);
    in = tb_ttsapi_info(base);
    if (o->url == NULL || o->url[0] == '\0')
        return tb_seterr(err, errlen, TB_EINVAL, "no TTS URL (the provider's base URL)");
    if (o->concurrency < 0 || o->concurrency > 1024)
        return tb_seterr(err, errlen, TB_EINVAL, "TTS concurrency %d: from 1 to 1024",
                         o->concurrency);
    if (!(o->idle_timeout >= 0) || !(o->total_timeout >= 0) || !(o->connect_timeout >= 0))
        return tb_seterr(err, errlen, TB_EINVAL, "a TTS timeout is negative");
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
    tb_tts_log_init(&c->log);
    c->pipe_fd[0] = c->pipe_fd[1] = -1;
    pthread_mutex_init(&c->mu, NULL);
    c->oq_tail = &c->oq;
    c->eq_tail = &c->eq;
    c->api = api;
    c->rate = o->rate != 0 ? o->rate : TB_TTSAPI_RATE;
    c->n = o->concurrency > 0 ? o->concurrency : 1;
    c->connect_timeout = o->connect_timeout > 0 ? o->connect_timeout : 10;
    c->idle_timeout = o->idle_timeout;
    c->total_timeout = o->total_timeout;
    if (o->clock != NULL) {
        c->clk = o->clock;
        c->origin = o->origin;
    } else {
        tb_clock_monotonic_init(&c->own_clock);
        c->clk = &c->own_clock;
    }
    c->run = o->secrets;
    c->on_audio = o->on_audio;
    c->on_end = o->on_end;
    c->ud = o->ud;
    c->cancel = o->cancel;
    c->log.mock = o->mock;
    snprintf(c->model, sizeof(c->model), "%s",
             o->model != NULL && o->model[0] != '\0' ? o->model : in->model);
    snprintf(c->voice, sizeof(c->voice), "%s",
             o->voice != NULL && o->voice[0] != '\0' ? o->voice : in->voice);
    snprintf(c->log.api, sizeof(c->log.api), "%s", tb_ttsws_name(api));
    tb_utf8_copy(c->log.model, sizeof(c->log.model), c->model);
    tb_utf8_copy(c->log.voice, sizeof(c->log.voice), c->voice);
    c->log.concurrency = c->n;
    snprintf(c->context_id, sizeof(c->context_id), "ttsbuf-%ld-%p", (long)getpid(), (void *)c);
    if (o->key != NULL && o->key[0] != '\0' && (c->key = strdup(o->key)) == NULL)
        goto fail;
    if (tb_secrets_create(&c->own) != 0)
        goto fail;
    if (c->key != NULL && tb_secrets_add(c->own, c->key, strlen(c->key)) != 0)
        goto fail;
    if (pipe(c->pipe_fd) != 0 || fcntl(c->pipe_fd[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(c->pipe_fd[1], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(c->pipe_fd[0], F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(c->pipe_fd[1], F_SETFD, FD_CLOEXEC) != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "no pipe: %s", strerror(errno));
        goto fail;
    }
    /* ElevenLabs opens the stream with a space (its documented first
     * message); the key is in the handshake's header, not here. */
    if (api == TB_TTSWS_ELEVENLABS) {
        cJSON *m = cJSON_CreateObject();
        if (m != NULL)
            cJSON_AddStringToObject(m, "text", " ");
        if (m == NULL)
            goto fail;
        {
            char *s = cJSON_PrintUnformatted(m);
            struct out *q = s != NULL ? malloc(sizeof(*q) + LWS_PRE + strlen(s)) : NULL;
            cJSON_Delete(m);
            if (q == NULL) {
                free(s);
                goto fail;
            }
            q->next = NULL;
            q->j = 0;
            q->len = strlen(s);
            memcpy(q->buf + LWS_PRE, s, q->len);
            free(s);
            c->oq = q;
            c->oq_tail = &q->next;
        }
    }
    rc = start(c, o->url, o->insecure, err, errlen);
    if (rc != 0)
        goto fail;
    *out = c;
    return 0;
fail:
    tb_ttsws_destroy(c);
    return rc;
}

void tb_ttsws_destroy(struct tb_ttsws *c)
{
    struct out *o;
    struct ev *e;
    if (c == NULL)
        return;
    if (c->thr_up) {
        pthread_mutex_lock(&c->mu);
        c->quit = 1;
        pthread_mutex_unlock(&c->mu);
        lws_cancel_service(c->ctx);
        pthread_join(c->thr, NULL);
    }
    if (c->ctx != NULL)
        lws_context_destroy(c->ctx);
    for (o = c->oq; o != NULL;) {
        struct out *nx = o->next;
        free(o);
        o = nx;
    }
    for (e = c->eq; e != NULL;) {
        struct ev *nx = e->next;
        free(e->data);
        free(e);
        e = nx;
    }
    if (c->pipe_fd[0] >= 0)
        close(c->pipe_fd[0]);
    if (c->pipe_fd[1] >= 0)
        close(c->pipe_fd[1]);
    pthread_mutex_destroy(&c->mu);
    free(c->rx);
    free(c->state);
    free(c->odd);
    free(c->has_odd);
    free(c->last);
    free(c->counted);
    free(c->need);
    tb_tts_log_free(&c->log);
    tb_secrets_destroy(c->own);
    if (c->key != NULL) {
        for (volatile char *v = c->key; *v; v++)
            *v = 0;
        free(c->key);
    }
    free(c->conn_url);
    free(c->path);
    free(c);
}
