/*
 * test_ttswire.c - what a TTS sends back, judged alike on every path:
 *
 *   over HTTP (tests/tcp_peer.c scripting the answer byte by byte): the
 *   media types that are raw PCM (audio/pcm, audio/L16,
 *   application/octet-stream), a WAV of mono 16-bit PCM at the rate asked
 *   (its header not counted as audio, even cut across reads), and what is
 *   not (a WAV of another format, audio/mpeg, nothing at all for a text);
 *   no descriptor left for the socket, said with the process's limit;
 *
 *   over a WebSocket, the message decoder on a client with no connection
 *   (ttsws_priv.h's detached client, events handed in on a virtual clock):
 *   Cartesia's flush_id names the chunk sent, whatever blank chunks came
 *   between; audio before a chunk's text was written, after its end, for
 *   a flush never sent or with nothing in flight is a "format" failure of
 *   the peer, booked to no chunk; an end marker with no audio is one too;
 *   the peer's bytes that are not UTF-8 never reach a record;
 *
 *   the PCM hand-on both clients share (ttscore.h's tb_ttscore_pcm):
 *   whole samples only, an odd byte carried to the next piece, nothing
 *   more handed on once the callback asked to stop.
 *
 * The hostile WebSocket peers end to end are test_ttsws.c's (the npm ws
 * peer), the hostile HTTP TTS through the binary test_ttsfault.c's rows.
 */
#include <cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tcp_peer.h"
#include "tests.h"
#include "tts/ttscore.h"
#include "tts/ttsws_priv.h"
#include "tts/ttsws_rx.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/ttsnet.h"
#include "ttsbuf/ttsws.h"
#include "ttsbuf/utf8.h"

#define KEY "sk-ttswire-KEY-77d1c0ffee9a"

/* ---- HTTP: media types and WAV headers ---- */

/* The answer: a head (status line and headers, Content-Length added),
 * then body[0..len) in writes of `piece` bytes. */
static struct {
    const char *head;
    unsigned char body[8192];
    size_t len, piece;
} ans;

static void s_answer(struct peer *pe, int fd, int conn)
{
    char head[512];
    (void)pe;
    (void)conn;
    snprintf(head, sizeof(head), "%sContent-Length: %zu\r\nConnection: close\r\n\r\n", ans.head,
             ans.len);
    if (peer_send_str(fd, head) != 0)
        return;
    for (size_t at = 0; at < ans.len;) {
        size_t k = ans.piece > 0 && ans.piece < ans.len - at ? ans.piece : ans.len - at;
        if (peer_send(fd, ans.body + at, k) != 0)
            return;
        at += k;
    }
}

static void le16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v & 0xFF);
    p[1] = (unsigned char)(v >> 8);
}

static void le32(unsigned char *p, unsigned long v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i) & 0xFF);
}

/* A WAV header of fmt (tag, channels, rate, bits), a LIST chunk of
 * `list` bytes first when list > 0, and a streamed data chunk (size
 * 0xFFFFFFFF) into ans.body; then pcm bytes of samples.  Its length. */
static size_t wav(unsigned tag, unsigned ch, unsigned long rate, unsigned bits, size_t list,
                  size_t pcm)
{
    unsigned char *b = ans.body;
    size_t at = 12;
    memcpy(b, "RIFF\xFF\xFF\xFF\xFFWAVE", 12);
    if (list > 0) {
        memcpy(b + at, "LIST", 4);
        le32(b + at + 4, list);
        memset(b + at + 8, 'x', list);
        at += 8 + list + (list & 1);
    }
    memcpy(b + at, "fmt ", 4);
    le32(b + at + 4, 16);
    le16(b + at + 8, tag);
    le16(b + at + 10, ch);
    le32(b + at + 12, rate);
    le32(b + at + 16, rate * ch * bits / 8);
    le16(b + at + 20, ch * bits / 8);
    le16(b + at + 22, bits);
    at += 24;
    memcpy(b + at, "data\xFF\xFF\xFF\xFF", 8);
    at += 8;
    for (size_t i = 0; i < pcm; i++)
        b[at + i] = (unsigned char)(i * 7);
    ans.len = at + pcm;
    return ans.len;
}

struct got {
    size_t bytes;
    unsigned char first[4];
    int calls;
};

static int on_audio(void *ud, uint32_t j, const char *pcm, size_t n, double t)
{
    struct got *g = ud;
    (void)j;
    (void)t;
    for (size_t i = 0; i < n && g->bytes + i < sizeof(g->first); i++)
        g->first[g->bytes + i] = (unsigned char)pcm[i];
    g->bytes += n;
    g->calls++;
    return 0;
}

/* One chunk of text through the HTTP client against s_answer: its
 * record (copied) and what on_audio saw. */
static struct tb_tts_chunk http_chunk(const char *text, struct got *g)
{
    struct peer pe;
    struct tb_ttsnet_opts o;
    struct tb_ttsnet *c = NULL;
    struct tb_tts_chunk r;
    char url[64], err[256];
    memset(g, 0, sizeof(*g));
    peer_start(&pe, "127.0.0.1", s_answer);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", pe.port);
    tb_ttsnet_opts_init(&o);
    o.api = TB_TTSAPI_OPENAI;
    o.url = url;
    o.key = KEY;
    o.idle_timeout = 5;
    o.on_audio = on_audio;
    o.ud = g;
    if (tb_ttsnet_create(&o, &c, err, sizeof(err)) != 0)
        fail_msg("create: %s", err);
    assert_int_equal(tb_ttsnet_submit(c, text, strlen(text)), 0);
    assert_int_equal(tb_ttsnet_finish(c, 20.0), 0);
    peer_stop(&pe);
    r = tb_ttsnet_log(c)->c[0];
    r.arr = NULL; /* the log's */
    r.narr = 0;
    assert_null(strstr(r.message, KEY));
    assert_int_equal(tb_utf8_check(r.message, strlen(r.message)), strlen(r.message));
    tb_ttsnet_destroy(c);
    return r;
}

static void expect(const struct tb_tts_chunk *r, int fail, const char *word)
{
    if (r->fail != fail || (word != NULL && strstr(r->message, word) == NULL))
        fail_msg("ended %s (%s), want %s with '%s'", tb_tts_fail_name(r->fail), r->message,
                 tb_tts_fail_name(fail), word != NULL ? word : "");
}

static void raw_types_are_pcm(void **state)
{
    static const char *const heads[] = {
        "HTTP/1.1 200 OK\r\nContent-Type: audio/pcm\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: audio/L16; rate=24000; channels=1\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n",
        "HTTP/1.1 200 OK\r\n", /* none named */
    };
    struct got g;
    (void)state;
    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
        struct tb_tts_chunk r;
        ans.head = heads[i];
        ans.len = 4800;
        ans.piece = 1000;
        memset(ans.body, 1, ans.len);
        r = http_chunk("Say this.", &g);
        expect(&r, TB_TTS_OK, NULL);
        assert_int_equal(r.bytes, 4800);
        assert_int_equal(g.bytes, 4800);
    }
}

/* A WAV of mono 16-bit PCM at 24000 Hz: its header (here with a LIST
 * chunk before fmt, and cut across 7-byte reads) is not audio; the
 * samples after it are, from the first. */
static void wav_of_pcm(void **state)
{
    struct got g;
    struct tb_tts_chunk r;
    (void)state;
    for (size_t list = 0; list <= 26; list += 13) {
        size_t head;
        ans.head = "HTTP/1.1 200 OK\r\nContent-Type: audio/wav\r\n";
        head = wav(1, 1, 24000, 16, list, 4800) - 4800;
        ans.piece = 7;
        r = http_chunk("Say this.", &g);
        expect(&r, TB_TTS_OK, NULL);
        assert_int_equal(r.bytes, 4800);
        assert_int_equal(g.bytes, 4800);
        assert_memory_equal(g.first, ans.body + head, 4);
        assert_true(fabs(r.duration - 0.1) < 1e-12);
    }
}

/* What is not the PCM asked: a format failure naming it, nothing handed
 * on as audio. */
static void not_the_audio_asked(void **state)
{
    struct got g;
    struct tb_tts_chunk r;
    (void)state;
    ans.head = "HTTP/1.1 200 OK\r\nContent-Type: audio/wav\r\n";
    wav(1, 2, 44100, 16, 0, 4800);
    ans.piece = 0;
    r = http_chunk("Say this.", &g);
    expect(&r, TB_TTS_FORMAT, "2 channels, 16 bits at 44100 Hz, not mono 16-bit PCM");
    assert_int_equal(g.bytes, 0);
    wav(3, 1, 24000, 32, 0, 4800); /* IEEE float */
    r = http_chunk("Say this.", &g);
    expect(&r, TB_TTS_FORMAT, "a WAV of format 3");
    memcpy(ans.body, "RIFX", 4);
    r = http_chunk("Say this.", &g);
    expect(&r, TB_TTS_FORMAT, "does not begin with RIFF");
    wav(1, 1, 24000, 16, 0, 0);
    ans.len = 30; /* the body ends inside the header */
    r = http_chunk("Say this.", &g);
    expect(&r, TB_TTS_FORMAT, "ended inside its WAV header");

    ans.head = "HTTP/1.1 200 OK\r\nContent-Type: audio/mpeg\r\n";
    ans.len = 4800;
    memset(ans.body, 0xFF, ans.len);
    r = http_chunk("Say this.", &g);
    expect(&r, TB_TTS_FORMAT, "Content-Type 'audio/mpeg'");
    assert_int_equal(r.bytes, 0);
    assert_int_equal(g.bytes, 0);
    ans.len = 0; /* an empty body says what it is too */
    r = http_chunk("Say this.", &g);
    expect(&r, TB_TTS_FORMAT, "Content-Type 'audio/mpeg'");

    /* No byte for a text with something to say. */
    ans.head = "HTTP/1.1 200 OK\r\nContent-Type: audio/pcm\r\n";
    r = http_chunk("Say this.", &g);
    expect(&r, TB_TTS_FORMAT, "no audio for a chunk of 9 characters");
    assert_true(isnan(r.first_byte));
}

/* No descriptor left for the socket: the message says so, and the
 * process's limit (a child with a limit of 64, all of them open). */
static void out_of_descriptors(void **state)
{
    int p[2];
    pid_t pid;
    char msg[TB_TTS_MESSAGE_MAX + 1] = "";
    ssize_t n;
    (void)state;
    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {64, 64};
        struct tb_ttsnet_opts o;
        struct tb_ttsnet *c = NULL;
        char err[256];
        close(p[0]);
        tb_ttsnet_opts_init(&o);
        o.url = "http://127.0.0.1:9";
        o.key = KEY;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || tb_ttsnet_create(&o, &c, err, sizeof(err)) != 0)
            _exit(1);
        while (dup(p[1]) >= 0)
            ;
        if (tb_ttsnet_submit(c, "Say.", 4) != 0 || tb_ttsnet_finish(c, 20.0) != 0)
            _exit(2);
        n = write(p[1], tb_ttsnet_log(c)->c[0].message, strlen(tb_ttsnet_log(c)->c[0].message));
        _exit(n > 0 && tb_ttsnet_log(c)->c[0].fail == TB_TTS_TRANSPORT ? 0 : 3);
    }
    close(p[1]);
    n = read(p[0], msg, sizeof(msg) - 1);
    close(p[0]);
    msg[n > 0 ? n : 0] = '\0';
    {
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
            strstr(msg, "out of file descriptors (EMFILE") == NULL ||
            strstr(msg, "its limit of 64 (ulimit -n)") == NULL)
            fail_msg("child exit %d, message '%s'", WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
    }
}

/* ---- WebSocket: the decoder on a detached client ---- */

struct ws {
    struct tb_ttsws *c;
    struct tb_clock clk;
    struct got g;
};

static void ws_open(struct ws *w, int api)
{
    struct tb_ttsnet_opts o;
    char err[256];
    memset(w, 0, sizeof(*w));
    tb_clock_virtual_init(&w->clk);
    tb_ttsnet_opts_init(&o);
    o.url = "ws://127.0.0.1:9";
    o.key = KEY;
    o.clock = &w->clk;
    o.on_audio = on_audio;
    o.ud = &w->g;
    if (tb_ttsws_create_detached(api, &o, &w->c, err, sizeof(err)) != 0)
        fail_msg("create: %s", err);
}

/* Time moves on by dt; then the event. */
static void ws_ev(struct ws *w, double dt, int kind, uint32_t j, const char *data)
{
    struct tb_ttsws_ev e;
    w->clk.sleep_until(&w->clk, w->clk.now(&w->clk) + dt);
    memset(&e, 0, sizeof(e));
    e.kind = kind;
    e.t = w->clk.now(&w->clk);
    e.j = j;
    e.data = (char *)(uintptr_t)data;
    e.len = data != NULL ? strlen(data) : 0;
    tb_ttsws_rx_event(w->c, &e);
    assert_true(tb_ttsws_step(w->c, 0) >= 0);
}

/* Chunk j's text was written (as the connection thread says). */
static void ws_sent(struct ws *w, uint32_t j)
{
    ws_ev(w, 0.01, TB_TTSWS_EV_SENT, j, NULL);
}

static void ws_text(struct ws *w, const char *fmt, ...)
{
    char m[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof(m), fmt, ap);
    va_end(ap);
    ws_ev(w, 0.01, TB_TTSWS_EV_TEXT, 0, m);
}

static void ws_submit(struct ws *w, const char *text)
{
    assert_int_equal(tb_ttsws_submit(w->c, text, strlen(text)), 0);
    assert_true(tb_ttsws_step(w->c, 0) >= 0);
}

static const struct tb_tts_chunk *ws_rec(struct ws *w, uint32_t j)
{
    return &tb_ttsws_log(w->c)->c[j - 1];
}

static void ws_expect(struct ws *w, uint32_t j, int fail, const char *word)
{
    const struct tb_tts_chunk *r = ws_rec(w, j);
    if (w->c->k.state[j - 1] != TB_TTSCORE_ENDED)
        fail_msg("chunk %u has not ended", j);
    expect(r, fail, word);
    assert_int_equal(tb_utf8_check(r->message, strlen(r->message)), strlen(r->message));
    assert_null(strstr(r->message, KEY));
    if (!isnan(r->first_byte))
        assert_true(r->first_byte >= r->sent);
}

/* 1600 bytes of PCM, base64. */
static const char *pcm64(void)
{
    static char s[2200];
    if (s[0] == '\0') {
        for (int i = 0; i < 2132; i++)
            s[i] = 'A';
        memcpy(s + 2132, "AA==", 5); /* 2136 characters: 1600 bytes */
    }
    return s;
}

/* Cartesia: flush ids count the chunks sent, so a blank chunk between
 * two others shifts nothing; each chunk gets its own audio. */
static void cartesia_flush_ids_skip_blanks(void **state)
{
    struct ws w;
    (void)state;
    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":1}", pcm64());
    ws_text(&w, "{\"type\":\"flush_done\",\"flush_id\":1}");
    ws_submit(&w, "\n\n");
    ws_submit(&w, "Two.");
    ws_submit(&w, " ");
    ws_submit(&w, "Three.");
    ws_sent(&w, 3);
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":2}", pcm64());
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":2}", pcm64());
    ws_text(&w, "{\"type\":\"flush_done\",\"flush_id\":2}");
    ws_sent(&w, 5);
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":3}", pcm64());
    ws_text(&w, "{\"type\":\"flush_done\",\"flush_id\":3}");
    ws_expect(&w, 1, TB_TTS_OK, NULL);
    ws_expect(&w, 2, TB_TTS_OK, NULL);
    ws_expect(&w, 3, TB_TTS_OK, NULL);
    ws_expect(&w, 5, TB_TTS_OK, NULL);
    assert_int_equal(ws_rec(&w, 1)->bytes, 1600);
    assert_int_equal(ws_rec(&w, 2)->bytes, 0);
    assert_int_equal(ws_rec(&w, 3)->bytes, 3200);
    assert_int_equal(ws_rec(&w, 5)->bytes, 1600);
    assert_int_equal(w.c->nwire, 3);
    tb_ttsws_destroy(w.c);
}

/* Each protocol break, in a fresh client: the chunk that fails, how, and
 * that no audio was booked to it. */
static void protocol_breaks(void **state)
{
    struct ws w;
    (void)state;
    /* Audio before chunk 1's text was written (queued, not yet sent). */
    ws_open(&w, TB_TTSWS_ELEVENLABS);
    ws_submit(&w, "Hello there.");
    ws_text(&w, "{\"audio\":\"%s\",\"alignment\":null}", pcm64());
    ws_expect(&w, 1, TB_TTS_FORMAT, "audio for chunk 1 before its text was sent");
    assert_int_equal(ws_rec(&w, 1)->bytes, 0);
    assert_int_equal(w.g.bytes, 0);
    tb_ttsws_destroy(w.c);

    /* Cartesia: a flush_id of a flush not sent yet. */
    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_submit(&w, "Hello there.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":2}", pcm64());
    ws_expect(&w, 1, TB_TTS_FORMAT, "a flush_id (2) of no chunk sent (1 sent)");
    assert_int_equal(w.g.bytes, 0);
    tb_ttsws_destroy(w.c);

    /* Cartesia: audio for chunk 1 after its flush_done, chunk 2 in
     * flight: chunk 2 fails, chunk 1 keeps what it had. */
    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":1}", pcm64());
    ws_text(&w, "{\"type\":\"flush_done\",\"flush_id\":1}");
    ws_submit(&w, "Two.");
    ws_sent(&w, 2);
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":1}", pcm64());
    ws_expect(&w, 1, TB_TTS_OK, NULL);
    ws_expect(&w, 2, TB_TTS_FORMAT, "for chunk 1 (flush_id 1) after its end");
    assert_int_equal(ws_rec(&w, 1)->bytes, 1600);
    assert_int_equal(ws_rec(&w, 2)->bytes, 0);
    tb_ttsws_destroy(w.c);

    /* ElevenLabs: audio with nothing in flight, between chunks: booked to
     * none; the next chunk fails saying so, before anything is written. */
    ws_open(&w, TB_TTSWS_ELEVENLABS);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"audio\":\"%s\",\"alignment\":{\"chars\":[\"O\",\"n\",\"e\",\".\"]}}", pcm64());
    ws_expect(&w, 1, TB_TTS_OK, NULL);
    ws_text(&w, "{\"audio\":\"%s\",\"alignment\":null}", pcm64());
    ws_submit(&w, "Two.");
    ws_expect(&w, 2, TB_TTS_FORMAT, "audio with no chunk in flight (after chunk 1's end)");
    assert_int_equal(ws_rec(&w, 1)->bytes, 1600);
    assert_int_equal(ws_rec(&w, 2)->bytes, 0);
    tb_ttsws_destroy(w.c);

    /* The end marker with no audio: nothing was spoken. */
    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"type\":\"flush_done\",\"flush_id\":1}");
    ws_expect(&w, 1, TB_TTS_FORMAT, "no audio for a chunk of 4 characters");
    tb_ttsws_destroy(w.c);
}

/* The peer's words that are not UTF-8 (an error, a close reason, a bad
 * message's head) reach the record replaced, on one line. */
static void peer_bytes_made_safe(void **state)
{
    struct ws w;
    struct tb_ttsws_ev e;
    (void)state;
    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"type\":\"error\",\"error\":\"bad \xff\xfe\xc3 voice\\n\\u001b[31m\","
                "\"status_code\":404}");
    ws_expect(&w, 1, TB_TTS_HTTP, "bad ??? voice");
    assert_null(strchr(ws_rec(&w, 1)->message, '\x1b'));
    tb_ttsws_destroy(w.c);

    ws_open(&w, TB_TTSWS_ELEVENLABS);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "not json \xc0\xaf at all");
    ws_expect(&w, 1, TB_TTS_FORMAT, "not a JSON object: 'not json ?? at all'");
    tb_ttsws_destroy(w.c);

    ws_open(&w, TB_TTSWS_ELEVENLABS);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    memset(&e, 0, sizeof(e));
    e.kind = TB_TTSWS_EV_CLOSED;
    e.status = 4000;
    e.data = (char *)(uintptr_t) "quota \xe2\x82 gone " KEY;
    tb_ttsws_rx_event(w.c, &e);
    ws_expect(&w, 1, TB_TTS_CUT, "(code 4000: quota ?? gone ***)");
    tb_ttsws_destroy(w.c);
}

/* An event the loop posted and no step has taken yet (as ws_ev, but
 * queued: the client's next drain reads it). */
static void ws_post(struct ws *w, double dt, int kind, uint32_t j)
{
    struct tb_ttsws_ev *e = calloc(1, sizeof(*e));
    assert_non_null(e);
    w->clk.sleep_until(&w->clk, w->clk.now(&w->clk) + dt);
    e->kind = kind;
    e->t = w->clk.now(&w->clk);
    e->j = j;
    *w->c->eq_tail = e;
    w->c->eq_tail = &e->next;
}

/* A chunk never sent: no sent, no end (what sim's reader demands of a
 * record: "tts.end" without "tts.sent" is refused). */
static void never_sent(struct ws *w, uint32_t j)
{
    const struct tb_tts_chunk *r = ws_rec(w, j);
    if (!isnan(r->sent) || !isnan(r->end))
        fail_msg("chunk %u never written: sent %g, end %g (%s)", j, r->sent, r->end, r->message);
    assert_null(strstr(r->message, "after 0 bytes"));
}

/* Sent means written: a chunk whose text was queued but not written when
 * the run stopped or the upgrade was refused has neither a sent nor an
 * end time, says "not sent", and is not counted as sent; one written
 * (its EV_SENT posted, not yet drained) keeps its times. */
static void unwritten_chunks_are_not_sent(void **state)
{
    struct ws w;
    struct tb_tts_stats st;
    struct tb_ttsws_ev e;
    (void)state;
    /* The run stopped (barge-in) while chunk 1 waited to be written. */
    ws_open(&w, TB_TTSWS_ELEVENLABS);
    ws_submit(&w, "One.");
    ws_submit(&w, "Two.");
    tb_ttsws_cancel(w.c);
    ws_expect(&w, 1, TB_TTS_CANCELED, "not sent: the run was stopped");
    ws_expect(&w, 2, TB_TTS_CANCELED, "not sent");
    never_sent(&w, 1);
    never_sent(&w, 2);
    tb_ttsws_destroy(w.c);

    /* Written just before the stop, its EV_SENT still queued: sent. */
    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_submit(&w, "One.");
    ws_post(&w, 0.01, TB_TTSWS_EV_SENT, 1);
    w.clk.sleep_until(&w.clk, w.clk.now(&w.clk) + 0.05);
    tb_ttsws_cancel(w.c);
    ws_expect(&w, 1, TB_TTS_CANCELED, "the run was stopped, after 0 bytes");
    assert_true(fabs(ws_rec(&w, 1)->sent - 0.01) < 1e-9);
    assert_true(fabs(ws_rec(&w, 1)->end - 0.06) < 1e-9);
    tb_ttsws_destroy(w.c);

    /* The upgrade refused: nothing written, nothing counted as sent. */
    ws_open(&w, TB_TTSWS_ELEVENLABS);
    w.c->up = 0;
    ws_submit(&w, "One.");
    ws_submit(&w, "Two.");
    memset(&e, 0, sizeof(e));
    e.kind = TB_TTSWS_EV_REFUSED;
    e.status = 401;
    e.data = (char *)(uintptr_t) "HS: ws upgrade unauthorized";
    tb_ttsws_rx_event(w.c, &e);
    assert_true(tb_ttsws_step(w.c, 0) >= 0);
    ws_expect(&w, 1, TB_TTS_HTTP, "HTTP 401");
    assert_int_equal(ws_rec(&w, 1)->status, 401);
    ws_expect(&w, 2, TB_TTS_CANCELED, NULL);
    never_sent(&w, 1);
    never_sent(&w, 2);
    assert_int_equal(tb_tts_stats_of(tb_ttsws_log(w.c), &st), 0);
    assert_int_equal(st.sent, 0);
    assert_int_equal(st.failed, 1);
    tb_ttsws_destroy(w.c);

    /* The idle timeout of a chunk whose message was never written. */
    ws_open(&w, TB_TTSWS_ELEVENLABS);
    w.c->idle_timeout = 5;
    ws_submit(&w, "One.");
    w.clk.sleep_until(&w.clk, w.clk.now(&w.clk) + 6);
    assert_true(tb_ttsws_step(w.c, 0) >= 0);
    ws_expect(&w, 1, TB_TTS_TIMEOUT,
              "no audio for 5 s (the idle timeout), before this chunk was sent");
    never_sent(&w, 1);
    tb_ttsws_destroy(w.c);

    /* Audio with nothing in flight spoils the next chunk before it is
     * written: "before this chunk was sent", and so no sent time. */
    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\"}", pcm64());
    ws_submit(&w, "One.");
    ws_expect(&w, 1, TB_TTS_FORMAT, "before this chunk was sent");
    never_sent(&w, 1);
    tb_ttsws_destroy(w.c);
}

/* A message that is valid JSON but not the dialect's (the other
 * dialect's peer): a format failure at once, naming the format; a close
 * before any audio of the chunk is not "mid-audio". */
static void wrong_dialect_and_early_close(void **state)
{
    struct ws w;
    struct tb_ttsws_ev e;
    (void)state;
    ws_open(&w, TB_TTSWS_ELEVENLABS);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"type\":\"chunk\",\"data\":\"%s\",\"flush_id\":1}", pcm64());
    ws_expect(&w, 1, TB_TTS_FORMAT, "not in ElevenLabs' stream-input format");
    assert_int_equal(w.g.bytes, 0);
    tb_ttsws_destroy(w.c);

    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"audio\":\"%s\",\"isFinal\":null,\"alignment\":null}", pcm64());
    ws_expect(&w, 1, TB_TTS_FORMAT, "not in Cartesia's contexts format");
    assert_int_equal(w.g.bytes, 0);
    tb_ttsws_destroy(w.c);

    /* Cartesia's types to come still pass (nothing to measure). */
    ws_open(&w, TB_TTSWS_CARTESIA);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    ws_text(&w, "{\"type\":\"timestamps\",\"flush_id\":1}");
    assert_int_equal(w.c->k.state[0], TB_TTSCORE_FLYING);
    tb_ttsws_destroy(w.c);

    ws_open(&w, TB_TTSWS_ELEVENLABS);
    ws_submit(&w, "One.");
    ws_sent(&w, 1);
    memset(&e, 0, sizeof(e));
    e.kind = TB_TTSWS_EV_CLOSED;
    e.status = 1006;
    tb_ttsws_rx_event(w.c, &e);
    ws_expect(&w, 1, TB_TTS_CUT, "the connection closed before the chunk's audio");
    assert_null(strstr(ws_rec(&w, 1)->message, "mid-audio"));
    tb_ttsws_destroy(w.c);
}

/* A live client's URL (ws_open's are detached): refused with a reason
 * (rc TB_EINVAL, the reason holding want), or made. */
static void url_refused(const char *url, const char *want)
{
    struct tb_ttsnet_opts o;
    struct tb_ttsws *c = NULL;
    char err[256] = "";
    tb_ttsnet_opts_init(&o);
    o.url = url;
    if (tb_ttsws_create(TB_TTSWS_CARTESIA, &o, &c, err, sizeof(err)) != TB_EINVAL ||
        strstr(err, want) == NULL)
        fail_msg("%s: made, or refused saying '%s' (want '%s')", url, err, want);
    assert_null(c);
}

/* The connection's errors in a user's words: a port nobody listens at
 * is "connection refused" (not lws's "closed before established"); a
 * port out of range or a second colon is not a URL; an IPv6 host keeps
 * its brackets in the log's url. */
static void connection_errors_said_plainly(void **state)
{
    struct tb_ttsnet_opts o;
    struct tb_ttsws *c = NULL;
    char err[256], url[64];
    const struct tb_tts_chunk *r;
    (void)state;
    url_refused("ws://127.0.0.1:99999", "port '99999': from 1 to 65535");
    url_refused("ws://127.0.0.1:0", "port '0'");
    url_refused("ws://127.0.0.1:8080:5", "not a URL (two ':'");
    url_refused("ws://127.0.0.1:80x", "port '80x'");
    url_refused("ws://[::1:80", "without its ']'");
    for (int v6 = 0; v6 < 2; v6++) {
        tb_ttsnet_opts_init(&o);
        snprintf(url, sizeof(url), v6 ? "ws://[::1]:%d" : "ws://127.0.0.1:%d",
                 tb_test_refused_port());
        o.url = url;
        if (tb_ttsws_create(TB_TTSWS_ELEVENLABS, &o, &c, err, sizeof(err)) != 0)
            fail_msg("%s: %s", url, err);
        assert_int_equal(strncmp(tb_ttsws_log(c)->url, url, strlen(url)), 0);
        assert_int_equal(tb_ttsws_submit(c, "Hi.", 3), 0);
        assert_int_equal(tb_ttsws_finish(c, 20.0), 0);
        r = &tb_ttsws_log(c)->c[0];
        /* ::1 may not be there at all (no IPv6): then it is not refused. */
        if (r->fail != TB_TTS_TRANSPORT ||
            (!v6 && strstr(r->message, "connection refused") == NULL))
            fail_msg("%s: %s (%s)", url, tb_tts_fail_name(r->fail), r->message);
        assert_null(strstr(r->message, "closed before established"));
        assert_true(isnan(r->sent) && isnan(r->end));
        tb_ttsws_destroy(c);
    }
}

/* What tb_ttscore_pcm handed on: the pieces, their bytes, and when to
 * ask for a stop. */
struct handed {
    char bytes[16];
    size_t n, calls;
    size_t stop_at; /* the call that returns non-zero (1-based), or 0 */
};

static int hand(void *ud, uint32_t j, const char *pcm, size_t n, double t)
{
    struct handed *h = ud;
    assert_int_equal(j, 3);
    assert_true(t == 0.5);
    assert_int_equal(n % 2, 0);
    assert_true(h->n + n <= sizeof(h->bytes));
    memcpy(h->bytes + h->n, pcm, n);
    h->n += n;
    h->calls++;
    return h->calls == h->stop_at;
}

static void pcm_whole_samples_odd_byte_carried(void **state)
{
    struct tb_tts_log l;
    struct tb_tts_chunk *r;
    struct tb_ttscore_carry cy = {0, 0};
    struct handed h;
    (void)state;
    tb_tts_log_init(&l);
    assert_int_equal(tb_tts_log_add(&l, "hi", 2, 2, 24000, &r), 0);
    memset(&h, 0, sizeof(h));
    /* 1 byte: held; 4 more: the pair, then one sample, one byte held. */
    assert_int_equal(tb_ttscore_pcm(r, &cy, "a", 1, 0.5, hand, &h, 3), 0);
    assert_int_equal(h.calls, 0);
    assert_int_equal(cy.has, 1);
    assert_int_equal(tb_ttscore_pcm(r, &cy, "bcde", 4, 0.5, hand, &h, 3), 0);
    assert_int_equal(h.calls, 2);
    assert_int_equal(h.n, 4);
    assert_memory_equal(h.bytes, "abcd", 4);
    assert_int_equal(cy.has, 1);
    assert_int_equal(cy.odd, 'e');
    assert_int_equal(r->bytes, 4);
    assert_true(r->first_byte == 0.5);
    /* Nothing: nothing changes. */
    assert_int_equal(tb_ttscore_pcm(r, &cy, "", 0, 0.5, hand, &h, 3), 0);
    assert_int_equal(h.calls, 2);
    /* A stop asked on the pair: the rest of the piece is not handed on. */
    h.stop_at = 3;
    assert_int_not_equal(tb_ttscore_pcm(r, &cy, "fgh", 3, 0.5, hand, &h, 3), 0);
    assert_int_equal(h.calls, 3);
    assert_int_equal(h.n, 6);
    assert_memory_equal(h.bytes, "abcdef", 6);
    assert_int_equal(r->bytes, 6);
    /* No callback: still counted. */
    cy.has = 0;
    assert_int_equal(tb_ttscore_pcm(r, &cy, "ij", 2, 0.5, NULL, NULL, 3), 0);
    assert_int_equal(r->bytes, 8);
    tb_tts_log_free(&l);
}

/* The message that stops a stream for a dead TTS fits a record's message
 * (TB_END_MESSAGE_MAX) whole: a long provider message and a long URL are
 * shortened with "..." where a reader sees it (the URL without its query),
 * and the sentence keeps its end. */
static void dead_message_fits_whole(void **state)
{
    struct tb_tts_log l;
    struct tb_tts_chunk *r;
    char msg[640], big[TB_TTS_MESSAGE_MAX];
    (void)state;
    tb_tts_log_init(&l);
    snprintf(l.api, sizeof(l.api), "elevenlabs-ws");
    snprintf(l.url, sizeof(l.url),
             "wss://api.elevenlabs.io/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream-input"
             "?model_id=eleven_flash_v2_5&output_format=pcm_24000&inactivity_timeout=180");
    assert_int_equal(tb_tts_log_add(&l, "hi", 2, 2, 24000, &r), 0);
    for (size_t i = 0; i + 1 < sizeof(big); i++)
        big[i] = i % 7 == 6 ? ' ' : 'w';
    big[sizeof(big) - 1] = '\0';
    snprintf(r->message, sizeof(r->message), "%s", big);
    r->fail = TB_TTS_TRANSPORT;
    assert_int_equal(tb_tts_log_dead(&l, msg, sizeof(msg)), 1);
    assert_true(strlen(msg) < TB_END_MESSAGE_MAX);
    assert_non_null(strstr(msg, "TTS chunk 1: transport: w"));
    assert_non_null(strstr(msg, "... (the TTS: elevenlabs-ws at wss://api.elevenlabs.io/"));
    assert_null(strstr(msg, "output_format"));
    assert_non_null(strstr(msg, "...); the LLM stream was stopped"));
    /* A short message and URL: whole, no dots. */
    snprintf(r->message, sizeof(r->message), "connection refused");
    snprintf(l.url, sizeof(l.url), "ws://127.0.0.1:9/v1?x=1");
    assert_int_equal(tb_tts_log_dead(&l, msg, sizeof(msg)), 1);
    assert_string_equal(msg, "TTS chunk 1: transport: connection refused (the TTS: elevenlabs-ws "
                             "at ws://127.0.0.1:9/v1); the LLM stream was stopped");
    tb_tts_log_free(&l);
}

int tb_test_ttswire(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(raw_types_are_pcm),
        cmocka_unit_test(wav_of_pcm),
        cmocka_unit_test(not_the_audio_asked),
        cmocka_unit_test(out_of_descriptors),
        cmocka_unit_test(cartesia_flush_ids_skip_blanks),
        cmocka_unit_test(protocol_breaks),
        cmocka_unit_test(peer_bytes_made_safe),
        cmocka_unit_test(pcm_whole_samples_odd_byte_carried),
        cmocka_unit_test(dead_message_fits_whole),
        cmocka_unit_test(unwritten_chunks_are_not_sent),
        cmocka_unit_test(wrong_dialect_and_early_close),
        cmocka_unit_test(connection_errors_said_plainly),
    };
    return TB_RUN_GROUP("ttswire", tests);
}
