/*
 * fuzz_ttsws.c - the WebSocket TTS client's message decoder (ttsws_rx.c)
 * on a client with no connection (ttsws_priv.h's detached client), driven
 * on a virtual clock by a program the input spells.
 *
 * Input: byte 0 picks the dialect (bit 0: ElevenLabs or Cartesia) and the
 * concurrency (1 + (b >> 1) % 3); then operations, each a byte and its
 * operands:
 *   0 LEN TEXT    submit a chunk of LEN (0..31) bytes (any bytes: invalid
 *                 UTF-8 is refused, as the client's contract says)
 *   1             the oldest text queued on the out queue is written: its
 *                 chunk's "sent" (EV_SENT)
 *   2 HI LO BYTES a text message of (HI << 8 | LO) bytes, as they are
 *   3 FLUSH N     Cartesia's {"type":"chunk","data":BASE64 of 2N bytes,
 *                 "flush_id":FLUSH} (FLUSH 0: no flush_id)
 *   4 FLUSH       Cartesia's flush_done (FLUSH 0: none), or "done" for 255
 *   5 K N         ElevenLabs' audio of 2N bytes with K characters of the
 *                 oldest chunk in flight as its alignment (K 0: null)
 *   6             ElevenLabs' {"isFinal": true}
 *   7 MS          the clock moves on MS x 10 ms (timeouts fire)
 *   8 / 9 / 10    a binary frame, a message over the cap, the close
 *   11            an in-band error whose text is not UTF-8
 * then the run is stopped (tb_ttsws_cancel).
 *
 * Properties: every chunk submitted ends exactly once; audio is handed on
 * only for a chunk whose text was written and that has not ended, in
 * whole samples, and adds up to its record's bytes; a first byte is never
 * before its send; a chunk that ended complete had audio, or nothing to
 * say; every record's message is one line of valid UTF-8 without the key.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "../../src/tts/ttsws_priv.h"
#include "../../src/tts/ttsws_rx.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsws.h"

#define KEY "sk-fuzz-ttsws-SECRET-0f9e8d"
#define CHUNKS_MAX 64

struct seen {
    struct tb_ttsws *c;
    uint64_t bytes[CHUNKS_MAX + 1];
    int ends[CHUNKS_MAX + 1];
};

static int on_audio(void *ud, uint32_t j, const char *pcm, size_t n, double t)
{
    struct seen *s = ud;
    const struct tb_tts_chunk *r;
    (void)pcm;
    FUZZ_CHECK(j >= 1 && j <= tb_ttsws_log(s->c)->n && j <= CHUNKS_MAX);
    r = &tb_ttsws_log(s->c)->c[j - 1];
    FUZZ_CHECK(n % 2 == 0 && n > 0);
    FUZZ_CHECK(s->ends[j] == 0);                 /* not after its end */
    FUZZ_CHECK(!isnan(r->sent) && t >= r->sent); /* not before its text */
    s->bytes[j] += n;
    return 0;
}

static void on_end(void *ud, uint32_t j, const struct tb_tts_chunk *r)
{
    struct seen *s = ud;
    (void)r;
    FUZZ_CHECK(j >= 1 && j <= CHUNKS_MAX);
    s->ends[j]++;
}

static void event(struct tb_ttsws *c, struct tb_clock *clk, int kind, uint32_t j, const char *d,
                  size_t len, long status)
{
    struct tb_ttsws_ev e;
    memset(&e, 0, sizeof(e));
    e.kind = kind;
    e.t = clk->now(clk);
    e.j = j;
    e.data = (char *)(uintptr_t)d;
    e.len = len;
    e.status = status;
    tb_ttsws_rx_event(c, &e);
}

/* The oldest chunk's text on the out queue is written. */
static void written(struct tb_ttsws *c, struct tb_clock *clk)
{
    struct tb_ttsws_out **p = &c->oq, *o;
    while (*p != NULL && (*p)->j == 0)
        p = &(*p)->next;
    if (*p == NULL)
        return;
    o = *p;
    *p = o->next;
    for (c->oq_tail = &c->oq; *c->oq_tail != NULL;)
        c->oq_tail = &(*c->oq_tail)->next;
    event(c, clk, TB_TTSWS_EV_SENT, o->j, NULL, 0, 0);
    free(o);
}

static void b64(char *out, size_t bytes)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t k = 0;
    for (size_t i = 0; i < bytes; i += 3) {
        size_t left = bytes - i;
        out[k++] = a[(i * 7) % 64];
        out[k++] = a[(i * 11) % 64];
        out[k++] = a[(i * 13) % 64];
        out[k++] = a[(i * 17) % 64];
        if (left < 3)
            out[k - 1] = '=';
        if (left < 2)
            out[k - 2] = '=';
    }
    out[k] = '\0';
}

/* ElevenLabs' alignment: k characters of the oldest chunk in flight. */
static void alignment(struct tb_ttsws *c, size_t k, char *out, size_t cap)
{
    size_t at = 0, n = 0;
    const char *t = NULL;
    uint32_t len = 0;
    for (size_t i = 0; i < c->k.next; i++)
        if (c->k.state[i] == TB_TTSCORE_FLYING) {
            t = tb_tts_log_text(&c->k.log, i);
            len = c->k.log.c[i].len;
            break;
        }
    at += (size_t)snprintf(out, cap, "[");
    for (uint32_t i = 0; t != NULL && i < len && n < k && at + 16 < cap; i++) {
        unsigned char ch = (unsigned char)t[i];
        if (ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x80)
            continue;
        at += (size_t)snprintf(out + at, cap - at, "%s\"%c\"", n > 0 ? "," : "", ch);
        n++;
    }
    snprintf(out + at, cap - at, "]");
}

/* One operation at data[*i]; returns 0 when the input is used up. */
static int op(struct tb_ttsws *c, struct tb_clock *clk, const uint8_t *data, size_t size, size_t *i)
{
    static char msg[9000], pcm[700], al[600];
    uint8_t o, a, b;
    if (*i >= size)
        return 0;
    o = data[(*i)++] % 12;
    a = *i < size ? data[*i] : 0;
    b = *i + 1 < size ? data[*i + 1] : 0;
    switch (o) {
    case 0: {
        size_t len = a % 32u;
        *i = *i < size ? *i + 1 : size;
        if (len > size - *i)
            len = size - *i;
        if (tb_ttsws_log(c)->n < CHUNKS_MAX)
            tb_ttsws_submit(c, (const char *)data + *i, len);
        *i += len;
        break;
    }
    case 1: written(c, clk); break;
    case 2: {
        size_t len = (size_t)(a << 8 | b) % (sizeof(msg) - 1);
        *i = *i + 2 < size ? *i + 2 : size;
        if (len > size - *i)
            len = size - *i;
        memcpy(msg, data + *i, len);
        msg[len] = '\0';
        *i += len;
        event(c, clk, TB_TTSWS_EV_TEXT, 0, msg, len, 0);
        break;
    }
    case 3:
        *i += 2;
        b64(pcm, (size_t)(b % 200u) * 2);
        if (a != 0)
            snprintf(msg, sizeof(msg), "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":%u}", pcm,
                     a);
        else
            snprintf(msg, sizeof(msg), "{\"type\":\"chunk\",\"data\":\"%s\"}", pcm);
        event(c, clk, TB_TTSWS_EV_TEXT, 0, msg, strlen(msg), 0);
        break;
    case 4:
        (*i)++;
        if (a == 255)
            snprintf(msg, sizeof(msg), "{\"type\":\"done\"}");
        else if (a != 0)
            snprintf(msg, sizeof(msg), "{\"type\":\"flush_done\",\"flush_id\":%u}", a);
        else
            snprintf(msg, sizeof(msg), "{\"type\":\"flush_done\"}");
        event(c, clk, TB_TTSWS_EV_TEXT, 0, msg, strlen(msg), 0);
        break;
    case 5:
        *i += 2;
        b64(pcm, (size_t)(b % 200u) * 2);
        alignment(c, a % 40u, al, sizeof(al));
        snprintf(msg, sizeof(msg), "{\"audio\":\"%s\",\"alignment\":%s%s%s}", pcm,
                 a == 0 ? "null" : "{\"chars\":", a == 0 ? "" : al, a == 0 ? "" : "}");
        event(c, clk, TB_TTSWS_EV_TEXT, 0, msg, strlen(msg), 0);
        break;
    case 6:
        snprintf(msg, sizeof(msg), "{\"audio\":null,\"isFinal\":true}");
        event(c, clk, TB_TTSWS_EV_TEXT, 0, msg, strlen(msg), 0);
        break;
    case 7:
        (*i)++;
        clk->sleep_until(clk, clk->now(clk) + a * 0.01);
        break;
    case 8: event(c, clk, TB_TTSWS_EV_BINARY, 0, NULL, 4, 0); break;
    case 9: event(c, clk, TB_TTSWS_EV_TOOBIG, 0, NULL, 0, 0); break;
    case 10: event(c, clk, TB_TTSWS_EV_CLOSED, 0, "bye \xff " KEY, 0, 1000 + a); break;
    default:
        snprintf(msg, sizeof(msg),
                 "{\"type\":\"error\",\"error\":\"bad \xc3\x28 \\u0007 " KEY "\","
                 "\"message\":\"m\",\"status_code\":%u}",
                 a);
        event(c, clk, TB_TTSWS_EV_TEXT, 0, msg, strlen(msg), 0);
        break;
    }
    tb_ttsws_step(c, 0);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_ttsnet_opts o;
    struct tb_clock clk;
    struct seen s;
    struct tb_ttsws *c = NULL;
    char err[256];
    size_t i = 1;
    const struct tb_tts_log *l;
    if (size < 1)
        return 0;
    memset(&s, 0, sizeof(s));
    tb_clock_virtual_init(&clk);
    tb_ttsnet_opts_init(&o);
    o.url = "ws://127.0.0.1:9";
    o.key = KEY;
    o.clock = &clk;
    o.concurrency = 1 + (data[0] >> 1) % 3;
    o.idle_timeout = 2;
    o.total_timeout = 5;
    o.on_audio = on_audio;
    o.on_end = on_end;
    o.ud = &s;
    FUZZ_CHECK(tb_ttsws_create_detached(data[0] & 1 ? TB_TTSWS_CARTESIA : TB_TTSWS_ELEVENLABS, &o,
                                        &c, err, sizeof(err)) == 0);
    s.c = c;
    while (op(c, &clk, data, size, &i))
        ;
    tb_ttsws_cancel(c);
    l = tb_ttsws_log(c);
    for (size_t j = 0; j < l->n; j++) {
        const struct tb_tts_chunk *r = &l->c[j];
        size_t m = strlen(r->message);
        FUZZ_CHECK(s.ends[j + 1] == 1);
        FUZZ_CHECK(r->bytes == s.bytes[j + 1] && r->bytes % 2 == 0);
        FUZZ_CHECK(isnan(r->first_byte) || (!isnan(r->sent) && r->first_byte >= r->sent));
        if (r->fail == TB_TTS_OK)
            FUZZ_CHECK(r->bytes > 0 || tb_tts_blank(tb_tts_log_text(l, j), r->len));
        FUZZ_CHECK(tb_utf8_check(r->message, m) == m);
        for (size_t k = 0; k < m; k++)
            FUZZ_CHECK((unsigned char)r->message[k] >= 0x20 && r->message[k] != 0x7F);
        FUZZ_CHECK(strstr(r->message, KEY) == NULL);
    }
    tb_ttsws_destroy(c);
    return 0;
}
