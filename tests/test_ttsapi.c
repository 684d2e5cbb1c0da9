/*
 * test_ttsapi.c - the TTS providers' requests and the TTS client.
 *
 * Each dialect's request is held field by field against the provider's
 * documented request, kept in tests/data/ttsapi/DIALECT.json with its
 * source and the date it was read: once as tb_ttsapi_build makes it, and
 * once as libcurl really sent it to a scripted loopback peer
 * (tests/tcp_peer.c), which captures the raw request and answers with
 * scripted bytes and timing.  The client's measurements are checked
 * against the script: the first audio byte within 5 ms of the peer's
 * delay, the bytes and the duration, the order and concurrency of the
 * sends, and every way a chunk can fail, with the provider's message and
 * never the key.  Each dialect's default model is a preset's engine.
 */
#include <cJSON.h>
#include <ctype.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tclock.h"
#include "tcp_peer.h"
#include "lag.h"
#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsnet.h"
#include "ttsbuf/ttspreset.h"
#include "ttsbuf/ttsws.h"

#define KEY "sk-test-KEY-0123456789abcdef"
#define TEXT "Hello \"world\" \xC3\xA9t\xC3\xA9 & <ok>\n"

/* What a request was made of: the fixture's placeholders. */
struct vars {
    const char *key, *model, *voice, *text;
    unsigned rate;
};

/* One request as sent: method, path (decoded), query pairs (decoded),
 * header lines, body. */
struct wire {
    char method[16];
    char path[512], raw_path[512];
    char qk[8][64], qv[8][256];
    int nq;
    char hn[32][64], hv[32][512];
    int nh;
    cJSON *body;
};

static cJSON *fixture(const char *dialect)
{
    char name[64], *s;
    cJSON *j;
    snprintf(name, sizeof(name), "ttsapi/%s.json", dialect);
    s = tb_test_slurp_str(tb_test_data(name));
    j = cJSON_Parse(s);
    if (j == NULL)
        fail_msg("%s is not JSON", name);
    free(s);
    /* Every fixture names where it comes from and when it was read. */
    assert_true(cJSON_IsString(cJSON_GetObjectItem(j, "source")));
    assert_true(strncmp(cJSON_GetObjectItem(j, "source")->valuestring, "https://", 8) == 0);
    assert_true(cJSON_IsString(cJSON_GetObjectItem(j, "retrieved")));
    return j;
}

/* t with {key}, {model}, {voice}, {text}, {rate} put in. */
static void subst(const char *t, const struct vars *v, char *out, size_t outlen)
{
    size_t k = 0;
    out[0] = '\0';
    while (*t && k + 1 < outlen) {
        const char *val = NULL;
        char num[16];
        size_t skip = 0;
        if (strncmp(t, "{key}", 5) == 0)
            val = v->key, skip = 5;
        else if (strncmp(t, "{model}", 7) == 0)
            val = v->model, skip = 7;
        else if (strncmp(t, "{voice}", 7) == 0)
            val = v->voice, skip = 7;
        else if (strncmp(t, "{text}", 6) == 0)
            val = v->text, skip = 6;
        else if (strncmp(t, "{rate}", 6) == 0) {
            snprintf(num, sizeof(num), "%u", v->rate);
            val = num, skip = 6;
        }
        if (val != NULL) {
            k += (size_t)snprintf(out + k, outlen - k, "%s", val);
            t += skip;
        } else {
            out[k++] = *t++;
            out[k] = '\0';
        }
    }
}

/* got is the template want with the placeholders put in, field by field
 * (the same fields, the same types). */
static void expect_json(const cJSON *want, const cJSON *got, const struct vars *v, const char *at)
{
    char buf[1024];
    if (cJSON_IsObject(want)) {
        const cJSON *w;
        if (!cJSON_IsObject(got))
            fail_msg("%s: want an object", at);
        assert_int_equal(cJSON_GetArraySize(got), cJSON_GetArraySize(want));
        cJSON_ArrayForEach(w, want)
        {
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(got, w->string);
            char sub[256];
            snprintf(sub, sizeof(sub), "%s.%s", at, w->string);
            if (g == NULL)
                fail_msg("%s: missing", sub);
            expect_json(w, g, v, sub);
        }
        return;
    }
    assert_true(cJSON_IsString(want));
    if (strcmp(want->valuestring, "{rate:number}") == 0) {
        if (!cJSON_IsNumber(got) || got->valuedouble != (double)v->rate)
            fail_msg("%s: want the number %u", at, v->rate);
        return;
    }
    subst(want->valuestring, v, buf, sizeof(buf));
    if (!cJSON_IsString(got))
        fail_msg("%s: want the string \"%s\"", at, buf);
    if (strcmp(got->valuestring, buf) != 0)
        fail_msg("%s: \"%s\", want \"%s\"", at, got->valuestring, buf);
}

static void unescape(const char *s, size_t n, char *out, size_t outlen)
{
    int dn = 0;
    char *d = curl_easy_unescape(NULL, s, (int)n, &dn);
    assert_non_null(d);
    snprintf(out, outlen, "%s", d);
    curl_free(d);
}

/* Path and query of a request target ("/p/a%20b?x=1&y=2"). */
static void split_target(struct wire *w, const char *target, size_t n)
{
    const char *q = memchr(target, '?', n);
    size_t pl = q != NULL ? (size_t)(q - target) : n;
    snprintf(w->raw_path, sizeof(w->raw_path), "%.*s", (int)pl, target);
    unescape(target, pl, w->path, sizeof(w->path));
    if (q == NULL)
        return;
    q++;
    while (q < target + n) {
        const char *amp = memchr(q, '&', (size_t)(target + n - q));
        const char *end = amp != NULL ? amp : target + n;
        const char *eq = memchr(q, '=', (size_t)(end - q));
        assert_non_null(eq);
        assert_true(w->nq < 8);
        unescape(q, (size_t)(eq - q), w->qk[w->nq], sizeof(w->qk[0]));
        unescape(eq + 1, (size_t)(end - eq - 1), w->qv[w->nq], sizeof(w->qv[0]));
        w->nq++;
        q = end + 1;
    }
}

static void add_header(struct wire *w, const char *line, size_t n)
{
    const char *colon = memchr(line, ':', n);
    const char *v;
    assert_non_null(colon);
    assert_true(w->nh < 32);
    snprintf(w->hn[w->nh], sizeof(w->hn[0]), "%.*s", (int)(colon - line), line);
    v = colon + 1;
    while (v < line + n && *v == ' ')
        v++;
    snprintf(w->hv[w->nh], sizeof(w->hv[0]), "%.*s", (int)(line + n - v), v);
    w->nh++;
}

/* The request as tb_ttsapi_build made it (the transfer adds
 * Content-Type). */
static void wire_of_build(struct wire *w, const struct tb_ttsapi_req *r)
{
    const char *p = strstr(r->url, "://");
    memset(w, 0, sizeof(*w));
    snprintf(w->method, sizeof(w->method), "POST");
    assert_non_null(p);
    p = strchr(p + 3, '/');
    assert_non_null(p);
    split_target(w, p, strlen(p));
    for (size_t i = 0; i < r->nheaders; i++)
        add_header(w, r->headers[i], strlen(r->headers[i]));
    add_header(w, "Content-Type: application/json", 30);
    w->body = cJSON_Parse(r->body);
    assert_non_null(w->body);
}

/* The request as a peer received it: "POST /target HTTP/1.1", headers,
 * body. */
static void wire_of_raw(struct wire *w, const char *raw)
{
    const char *sp1, *sp2, *line, *end = strstr(raw, "\r\n\r\n");
    memset(w, 0, sizeof(*w));
    assert_non_null(end);
    sp1 = strchr(raw, ' ');
    assert_non_null(sp1);
    sp2 = strchr(sp1 + 1, ' ');
    assert_non_null(sp2);
    snprintf(w->method, sizeof(w->method), "%.*s", (int)(sp1 - raw), raw);
    split_target(w, sp1 + 1, (size_t)(sp2 - sp1 - 1));
    line = strstr(raw, "\r\n") + 2;
    while (line < end) {
        const char *nl = strstr(line, "\r\n");
        add_header(w, line, (size_t)(nl - line));
        line = nl + 2;
    }
    w->body = cJSON_Parse(end + 4);
    if (w->body == NULL)
        fail_msg("the body sent is not JSON: '%s'", end + 4);
}

static const char *header(const struct wire *w, const char *name)
{
    for (int i = 0; i < w->nh; i++)
        if (strcasecmp(w->hn[i], name) == 0)
            return w->hv[i];
    return NULL;
}

/* The request against the dialect's fixture: method, path, query, the
 * headers it names, the body.  strict: no header beyond them. */
static void expect_fixture(const cJSON *fx, const struct wire *w, const struct vars *v, int strict)
{
    char want[1024];
    const cJSON *q = cJSON_GetObjectItem(fx, "query"), *h = cJSON_GetObjectItem(fx, "headers"), *e;
    assert_string_equal(w->method, cJSON_GetObjectItem(fx, "method")->valuestring);
    subst(cJSON_GetObjectItem(fx, "path")->valuestring, v, want, sizeof(want));
    if (strcmp(w->path, want) != 0)
        fail_msg("path %s, want %s", w->path, want);
    assert_int_equal(w->nq, cJSON_GetArraySize(q));
    cJSON_ArrayForEach(e, q)
    {
        int found = 0;
        subst(e->valuestring, v, want, sizeof(want));
        for (int i = 0; i < w->nq; i++)
            if (strcmp(w->qk[i], e->string) == 0) {
                found = 1;
                if (strcmp(w->qv[i], want) != 0)
                    fail_msg("query %s=%s, want %s", e->string, w->qv[i], want);
            }
        if (!found)
            fail_msg("query %s missing", e->string);
    }
    cJSON_ArrayForEach(e, h)
    {
        const char *got = header(w, e->string);
        subst(e->valuestring, v, want, sizeof(want));
        if (got == NULL)
            fail_msg("header %s missing", e->string);
        if (strcmp(got, want) != 0)
            fail_msg("header %s: '%s', want '%s'", e->string, got, want);
    }
    if (strict)
        assert_int_equal(w->nh, cJSON_GetArraySize(h));
    expect_json(cJSON_GetObjectItem(fx, "body"), w->body, v, "body");
}

static const char *const dialects[] = {"openai", "elevenlabs", "deepgram", "cartesia"};

/* The test's request parts for dialect a (the defaults where the test
 * gives none: Deepgram's voice is its model). */
static void test_vars(int a, struct vars *v, unsigned rate)
{
    v->key = KEY;
    v->model = "model-1 x";
    v->voice = a == TB_TTSAPI_DEEPGRAM ? "" : "Voice 1/\xC3\xA9";
    v->text = TEXT;
    v->rate = rate;
}

static void build_matches_fixture(void **state)
{
    (void)state;
    for (int a = 0; a < TB_TTSAPI__COUNT; a++) {
        cJSON *fx = fixture(dialects[a]), *rate;
        assert_int_equal(tb_ttsapi_parse(dialects[a]), a);
        assert_string_equal(tb_ttsapi_name(a), dialects[a]);
        cJSON_ArrayForEach(rate, cJSON_GetObjectItem(fx, "rates"))
        {
            struct tb_ttsapi_params p = {0};
            struct tb_ttsapi_req r;
            struct wire w;
            struct vars v;
            char err[256];
            test_vars(a, &v, (unsigned)rate->valuedouble);
            p.base = "http://example.test:8080/";
            p.key = v.key;
            p.model = v.model;
            p.voice = a == TB_TTSAPI_DEEPGRAM ? NULL : v.voice;
            p.rate = v.rate;
            if (tb_ttsapi_build(a, &p, TEXT, strlen(TEXT), &r, err, sizeof(err)) != 0)
                fail_msg("%s at %u Hz: %s", dialects[a], v.rate, err);
            assert_true(tb_ttsapi_rate_ok(a, v.rate));
            wire_of_build(&w, &r);
            expect_fixture(fx, &w, &v, 1);
            /* The key is in the header marked secret, and only there. */
            assert_true(r.secret >= 0);
            assert_non_null(strstr(r.headers[r.secret], KEY));
            assert_null(strstr(r.url, KEY));
            assert_null(strstr(r.body, KEY));
            /* Escaped in the URL: no raw space, slash or byte above 127. */
            assert_null(strchr(w.raw_path, ' '));
            assert_null(strchr(r.url, ' '));
            if (a == TB_TTSAPI_ELEVENLABS) {
                char low[512];
                size_t k;
                for (k = 0; w.raw_path[k] != '\0' && k + 1 < sizeof(low); k++)
                    low[k] = (char)tolower((unsigned char)w.raw_path[k]);
                low[k] = '\0';
                assert_non_null(strstr(low, "/voice%201%2f%c3%a9/"));
            }
            if (a == TB_TTSAPI_DEEPGRAM)
                assert_non_null(strstr(r.url, "model=model-1%20x&"));
            cJSON_Delete(w.body);
            tb_ttsapi_req_free(&r);
        }
        cJSON_Delete(fx);
    }
}

/* Each dialect's default model is the engine of a preset of that
 * provider (named in its engine line), so a run that names no model
 * measures what the preset models: Deepgram's is an Aura-2 voice, as
 * deepgram-aura-2 (not the REST reference's Aura-1 aura-asteria-en). */
static void default_model_is_a_presets(void **state)
{
    struct tb_ttspreset_set *set = NULL;
    const struct tb_ttspreset *ps;
    char err[256];
    size_t n;
    (void)state;
    assert_int_equal(tb_ttspreset_load(&set, err, sizeof(err)), 0);
    ps = tb_ttspreset_all(set, &n);
    for (int a = 0; a < TB_TTSAPI__COUNT; a++) {
        const char *model = tb_ttsapi_info(a)->model;
        size_t k = 0;
        while (k < n && strstr(ps[k].engine, model) == NULL)
            k++;
        if (k == n)
            fail_msg("%s: the default model %s is no preset's engine", dialects[a], model);
    }
    assert_string_equal(tb_ttsapi_info(TB_TTSAPI_DEEPGRAM)->model, "aura-2-thalia-en");
    assert_non_null(strstr(tb_ttspreset_find(set, "deepgram-aura-2")->engine, "aura-2-thalia-en"));
    tb_ttspreset_destroy(set);
}

static void build_refuses_bad_input(void **state)
{
    struct tb_ttsapi_params p = {0};
    struct tb_ttsapi_req r;
    char err[256];
    (void)state;
    p.base = "http://127.0.0.1:1";
    /* OpenAI's PCM is 24 kHz only; a rate nobody gives. */
    p.rate = 16000;
    assert_int_equal(tb_ttsapi_build(TB_TTSAPI_OPENAI, &p, "a", 1, &r, err, sizeof(err)),
                     TB_EINVAL);
    assert_non_null(strstr(err, "24000"));
    p.rate = 11025;
    for (int a = 0; a < TB_TTSAPI__COUNT; a++)
        assert_int_equal(tb_ttsapi_build(a, &p, "a", 1, &r, err, sizeof(err)), TB_EINVAL);
    p.rate = 0; /* the default, 24000: every dialect takes it */
    for (int a = 0; a < TB_TTSAPI__COUNT; a++) {
        assert_int_equal(tb_ttsapi_build(a, &p, "a", 1, &r, err, sizeof(err)), 0);
        assert_int_equal(r.secret, -1); /* no key, no key header */
        tb_ttsapi_req_free(&r);
    }
    assert_int_equal(tb_ttsapi_build(TB_TTSAPI_OPENAI, &p, "\xC3", 1, &r, err, sizeof(err)),
                     TB_EINVAL);
    assert_non_null(strstr(err, "UTF-8"));
    assert_int_equal(tb_ttsapi_build(TB_TTSAPI__COUNT, &p, "a", 1, &r, err, sizeof(err)),
                     TB_EINVAL);
    p.voice = "aura-2-thalia-en";
    assert_int_equal(tb_ttsapi_build(TB_TTSAPI_DEEPGRAM, &p, "a", 1, &r, err, sizeof(err)),
                     TB_EINVAL);
    p.voice = "a\r\nX-Evil: 1";
    assert_int_equal(tb_ttsapi_build(TB_TTSAPI_CARTESIA, &p, "a", 1, &r, err, sizeof(err)),
                     TB_EINVAL);
    p.voice = NULL;
    p.base = "not a url";
    assert_int_equal(tb_ttsapi_build(TB_TTSAPI_OPENAI, &p, "a", 1, &r, err, sizeof(err)),
                     TB_EINVAL);
    assert_int_equal(tb_ttsapi_parse("OpenAI"), -1);
    assert_int_equal(tb_ttsapi_parse("azure"), -1);
    assert_string_equal(tb_ttsapi_name(-1), "?");
}

static void error_bodies(void **state)
{
    static const struct {
        int api;
        const char *body, *want;
    } cases[] = {
        {TB_TTSAPI_OPENAI,
         "{\"error\":{\"message\":\"Invalid voice\",\"type\":\"invalid_request_error\"}}",
         "Invalid voice"},
        {TB_TTSAPI_ELEVENLABS,
         "{\"detail\":{\"status\":\"invalid_api_key\",\"message\":\"Invalid API key\"}}",
         "invalid_api_key: Invalid API key"},
        {TB_TTSAPI_ELEVENLABS, "{\"detail\":\"Not Found\"}", "Not Found"},
        {TB_TTSAPI_ELEVENLABS,
         "{\"detail\":[{\"loc\":[\"body\",\"text\"],\"msg\":\"field required\"}]}",
         "field required"},
        {TB_TTSAPI_DEEPGRAM,
         "{\"err_code\":\"INVALID_AUTH\",\"err_msg\":\"Invalid "
         "credentials.\",\"request_id\":\"u\"}",
         "INVALID_AUTH: Invalid credentials."},
        {TB_TTSAPI_DEEPGRAM,
         "{\"category\":\"INVALID_JSON\",\"message\":\"Invalid JSON "
         "submitted.\",\"details\":\"x\"}",
         "Invalid JSON submitted. (x)"},
        {TB_TTSAPI_CARTESIA,
         "{\"error_code\":\"concurrency_limited\",\"title\":\"Too many concurrent requests\","
         "\"message\":\"You have exceeded your plan's concurrency limit.\",\"request_id\":\"u\"}",
         "Too many concurrent requests: You have exceeded your plan's concurrency limit."},
        {TB_TTSAPI_CARTESIA, "{\"error\":\"Invalid voice id\"}", "Invalid voice id"},
        {TB_TTSAPI_CARTESIA, "Bad Request: transcript\nis empty", "Bad Request: transcript"},
        {TB_TTSAPI_OPENAI, "<html><title>502 Bad Gateway</title></html>", "502 Bad Gateway"},
        {TB_TTSAPI_DEEPGRAM, "", ""},
    };
    char out[TB_TTS_MESSAGE_MAX];
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tb_ttsapi_error_text(cases[i].api, cases[i].body, strlen(cases[i].body), out, sizeof(out));
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("case %zu: '%s', want '%s'", i, out, cases[i].want);
    }
    /* One line, whatever the server put in it. */
    tb_ttsapi_error_text(TB_TTSAPI_OPENAI, "{\"error\":{\"message\":\"a\\nb\\u0007c\"}}", 33, out,
                         sizeof(out));
    assert_null(strchr(out, '\n'));
    assert_null(strchr(out, '\a'));
}

/* ---- the client against scripted peers ---- */

/* What the peer does with each connection. */
struct script {
    const char *head; /* status line and headers but Content-Length, sent at once */
    const char *body; /* bytes sent after `delay` (NULL: `pcm` bytes of audio) */
    size_t pcm;       /* audio bytes, in `pieces` writes `gap` apart */
    int pieces;
    double delay, gap;
    int hold;              /* after the body, hold the connection (a stall) */
    int cut;               /* close after half the audio */
    double t_req, t_first; /* the request read, the first body byte written
                            * (tclock_now) */
};

static struct script sc;

static void scripted(struct peer *pe, int fd, int conn)
{
    char head[512];
    struct timeval tv = {5, 0}; /* a client that stopped reading ends the script */
    (void)conn;
    sc.t_req = tclock_now();
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    snprintf(head, sizeof(head), "%sContent-Length: %zu\r\n\r\n", sc.head,
             sc.body != NULL ? strlen(sc.body) : sc.pcm);
    peer_send_str(fd, head);
    if (sc.body != NULL) {
        tclock_sleep(sc.delay);
        peer_send_str(fd, sc.body);
        return;
    }
    tclock_sleep(sc.delay);
    sc.t_first = tclock_now();
    {
        size_t n = sc.cut ? sc.pcm / 2 : sc.pcm, k = (size_t)(sc.pieces > 0 ? sc.pieces : 1);
        char *buf = calloc(1, n + 1);
        size_t at = 0;
        assert_non_null(buf);
        for (size_t i = 0; i < k; i++) {
            size_t part = i + 1 == k ? n - at : n / k;
            if (i > 0)
                tclock_sleep(sc.gap);
            if (peer_send(fd, buf + at, part) != 0)
                break;
            at += part;
        }
        free(buf);
    }
    if (sc.hold)
        peer_hold(pe, fd);
}

#define AUDIO_HEAD "HTTP/1.1 200 OK\r\nContent-Type: audio/pcm\r\n"

/* What the callbacks saw. */
struct seen {
    uint64_t bytes[8];
    int odd_calls;     /* on_audio with an odd count (must stay 0) */
    uint32_t order[8]; /* chunks in the order they ended */
    int nended;
    struct tb_tts_chunk last[8];
};

static int on_audio(void *ud, uint32_t j, const char *pcm, size_t n, double t)
{
    struct seen *s = ud;
    (void)pcm;
    (void)t;
    if (n % 2 != 0)
        s->odd_calls++;
    if (j >= 1 && j <= 8)
        s->bytes[j - 1] += n;
    return 0;
}

static void on_end(void *ud, uint32_t j, const struct tb_tts_chunk *c)
{
    struct seen *s = ud;
    if (s->nended < 8)
        s->order[s->nended++] = j;
    if (j >= 1 && j <= 8)
        s->last[j - 1] = *c;
}

/* The runs' clock: monotonic, so the peer's tclock_now() times are
 * on it less its origin. */
static struct tb_clock run_clock;

static struct tb_ttsnet *client(int api, int port, int n, struct seen *s)
{
    struct tb_ttsnet_opts o;
    struct tb_ttsnet *c = NULL;
    char url[64], err[256];
    tb_ttsnet_opts_init(&o);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    o.api = api;
    o.url = url;
    o.key = KEY;
    o.model = "model-1 x";
    o.voice = api == TB_TTSAPI_DEEPGRAM ? NULL : "Voice 1/\xC3\xA9";
    o.concurrency = n;
    o.idle_timeout = 0.3;
    o.total_timeout = 5;
    o.on_audio = on_audio;
    o.on_end = on_end;
    o.ud = s;
    tb_clock_monotonic_init(&run_clock);
    o.clock = &run_clock;
    o.origin = 0;
    memset(s, 0, sizeof(*s));
    if (tb_ttsnet_create(&o, &c, err, sizeof(err)) != 0)
        fail_msg("create: %s", err);
    return c;
}

/* Submits n texts at once, finishes, and checks every chunk ended once. */
static void run_chunks(struct tb_ttsnet *c, const char *const *texts, int n, struct seen *s)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(tb_ttsnet_submit(c, texts[i], strlen(texts[i])), 0);
    assert_int_equal(tb_ttsnet_finish(c, 20.0), 0);
    assert_int_equal(s->nended, n);
    assert_int_equal(tb_ttsnet_log(c)->n, (size_t)n);
    assert_int_equal(tb_ttsnet_submit(c, "late", 4), TB_EINVAL);
}

static void wire_matches_fixture(void **state)
{
    (void)state;
    for (int a = 0; a < TB_TTSAPI__COUNT; a++) {
        struct peer pe;
        struct seen s;
        struct tb_ttsnet *c;
        struct wire w;
        struct vars v;
        const char *texts[] = {TEXT};
        cJSON *fx = fixture(dialects[a]);
        const struct tb_tts_chunk *r;
        memset(&sc, 0, sizeof(sc));
        sc.head = AUDIO_HEAD;
        sc.pcm = 4800;
        peer_start(&pe, "127.0.0.1", scripted);
        c = client(a, pe.port, 1, &s);
        run_chunks(c, texts, 1, &s);
        peer_halt(&pe);
        test_vars(a, &v, 24000);
        wire_of_raw(&w, peer_req(&pe, 0));
        expect_fixture(fx, &w, &v, 0);
        r = &tb_ttsnet_log(c)->c[0];
        assert_int_equal(r->fail, TB_TTS_OK);
        assert_int_equal(r->status, 200);
        assert_int_equal(r->bytes, 4800);
        assert_int_equal(s.bytes[0], 4800);
        assert_true(fabs(r->duration - 0.1) < 1e-12);
        /* The log names the provider and never the key. */
        assert_string_equal(tb_ttsnet_log(c)->api, dialects[a]);
        assert_null(strstr(tb_ttsnet_log(c)->url, KEY));
        assert_string_equal(tb_ttsnet_log(c)->model, "model-1 x");
        cJSON_Delete(w.body);
        cJSON_Delete(fx);
        tb_ttsnet_destroy(c);
        peer_free(&pe);
    }
}

static void first_byte_and_duration(void **state)
{
    struct peer pe;
    struct seen s;
    struct tb_ttsnet *c;
    const char *texts[] = {"One sentence to say."};
    const struct tb_tts_chunk *r;
    double lat, rtf, dur, lag;
    (void)state;
    memset(&sc, 0, sizeof(sc));
    sc.head = AUDIO_HEAD;
    sc.pcm = 48000 + 4; /* 1.0000833 s at 24 kHz */
    sc.pieces = 4;
    sc.delay = 0.120;
    sc.gap = 0.030;
    peer_start(&pe, "127.0.0.1", scripted);
    c = client(TB_TTSAPI_OPENAI, pe.port, 1, &s);
    tb_test_lag_start();
    run_chunks(c, texts, 1, &s);
    lag = tb_test_lag_stop();
    peer_stop(&pe);
    r = &tb_ttsnet_log(c)->c[0];
    assert_int_equal(r->fail, TB_TTS_OK);
    assert_int_equal(r->chunk, 1);
    assert_int_equal(r->chars, 20);
    assert_int_equal(r->rate, 24000);
    assert_int_equal(r->bytes, 48004);
    assert_int_equal(s.bytes[0], 48004);
    assert_int_equal(s.odd_calls, 0);
    assert_true(fabs(r->duration - 48004.0 / 2 / 24000) < 1e-12);
    /* The first byte measured within 5 ms of when the peer wrote it (and
     * never before), its scripted delay after it had read the request;
     * the latency no shorter than the delay, and longer only by the
     * request's own way there (connect, write) and by how late the peer
     * itself woke to write (its own timestamps say, not judged).  On a busy machine
     * each 5 ms grows by twice the wake-up delay the probe measured
     * meanwhile (lag.h): the peer stamps its write before it makes it, and
     * the client wakes to read it, two wake-ups (CI under ASan, eight
     * groups at once: 9.4 ms late with a probe's 3.8 ms). */
    {
        double first = sc.t_first - run_clock.origin, req = sc.t_req - run_clock.origin;
        double peer_late = first - req - sc.delay;
        if (r->first_byte < first - 0.0002 || r->first_byte > first + 0.005 + 2 * lag)
            fail_msg("first byte measured at %.4f s, written at %.4f s (the machine's wake-up "
                     "delay %.4f s)",
                     r->first_byte, first, lag);
        /* The peer is never early; how late it woke is its own (a thread
         * of this process on a loaded machine) and is allowed for below,
         * by its own timestamps, not judged. */
        if (peer_late < -0.0002)
            fail_msg("the peer wrote %.4f s before its scripted delay", -peer_late);
        if (r->first_byte - r->sent < sc.delay ||
            r->first_byte - r->sent > sc.delay + (req - r->sent) + peer_late + 0.005 + 2 * lag)
            fail_msg("first byte %.4f s after the send: the script's %.4f s, the request's "
                     "%.4f s on its way, the peer %.4f s late (the machine's wake-up delay "
                     "%.4f s)",
                     r->first_byte - r->sent, sc.delay, req - r->sent, peer_late, lag);
    }
    /* The arrivals: non-decreasing, the last one all the bytes, the
     * transfer's end after the last gap. */
    assert_true(r->narr >= 2);
    for (uint32_t i = 1; i < r->narr; i++)
        assert_true(r->arr[i].t >= r->arr[i - 1].t && r->arr[i].bytes >= r->arr[i - 1].bytes);
    assert_int_equal(r->arr[r->narr - 1].bytes, 48004);
    assert_true(r->end - r->first_byte >= 3 * sc.gap - 0.005 - 2 * lag);
    assert_int_equal(tb_tts_chunk_model(r, &lat, &rtf, &dur), 0);
    assert_true(fabs(dur - r->duration) < 1e-12);
    tb_ttsnet_destroy(c);
}

/* Two peers on one listener: two connections served at once. */
static void two_peers_start(struct peer *a, struct peer *b)
{
    peer_bind(a, "127.0.0.1", scripted);
    /* Both threads poll the one listener: the one that loses the race to
     * accept must not block in accept(). */
    assert_int_equal(fcntl(a->lfd, F_SETFL, fcntl(a->lfd, F_GETFL) | O_NONBLOCK), 0);
    *b = *a;
    peer_go(a);
    peer_go(b);
}

static void two_peers_stop(struct peer *a, struct peer *b)
{
    atomic_store(&a->stop, 1);
    atomic_store(&b->stop, 1);
    pthread_join(a->th, NULL);
    pthread_join(b->th, NULL);
    close(a->lfd);
    peer_free(a);
    peer_free(b);
}

static void concurrency_in_order(void **state)
{
    const char *texts[] = {"First.", "Second.", "Third."};
    (void)state;
    for (int n = 1; n <= 2; n++) {
        struct peer pa, pb;
        struct seen s;
        struct tb_ttsnet *c;
        const struct tb_tts_chunk *r;
        double lag;
        memset(&sc, 0, sizeof(sc));
        sc.head = AUDIO_HEAD;
        sc.pcm = 2400;
        sc.delay = 0.150;
        two_peers_start(&pa, &pb);
        c = client(TB_TTSAPI_OPENAI, pa.port, n, &s);
        tb_test_lag_start();
        run_chunks(c, texts, 3, &s);
        /* Each bound below allows two wake-ups the probe measured (a
         * peer's and the client's; lag.h). */
        lag = 2 * tb_test_lag_stop();
        two_peers_stop(&pa, &pb);
        r = tb_ttsnet_log(c)->c;
        for (int i = 0; i < 3; i++) {
            assert_int_equal(r[i].fail, TB_TTS_OK);
            assert_int_equal(r[i].bytes, 2400);
        }
        assert_int_equal(tb_ttsnet_log(c)->concurrency, n);
        /* In order, b_j = max(c_j, end_{j-N}): every chunk was closed at
         * 0, so chunk j went when chunk j-N ended. */
        assert_true(r[0].sent < 0.01 + lag);
        if (n == 1) {
            assert_true(r[1].sent >= r[0].end);
            assert_true(r[2].sent >= r[1].end);
            assert_true(r[1].sent - r[0].end < 0.01 + lag);
        } else {
            assert_true(r[1].sent < r[0].end); /* two at once */
            assert_true(r[1].first_byte < r[0].end + 0.1 + lag);
            assert_true(r[2].sent >= r[0].end);
            assert_true(r[2].sent - r[0].end < 0.01 + lag);
        }
        tb_ttsnet_destroy(c);
    }
}

/* One chunk answered by the script; its record. */
static struct tb_tts_chunk one_chunk(int api, struct seen *s, struct tb_ttsnet **out)
{
    struct peer pe;
    const char *texts[] = {"Say this.", "And this."};
    struct tb_ttsnet *c;
    peer_start(&pe, "127.0.0.1", scripted);
    c = client(api, pe.port, 1, s);
    run_chunks(c, texts, 2, s);
    peer_stop(&pe);
    /* A failure ends the speech: the next chunk was never sent. */
    if (tb_ttsnet_log(c)->c[0].fail != TB_TTS_OK) {
        assert_int_equal(tb_ttsnet_failed(c), 1);
        assert_int_equal(tb_ttsnet_log(c)->c[1].fail, TB_TTS_CANCELED);
        assert_true(isnan(tb_ttsnet_log(c)->c[1].sent));
        assert_true(isnan(tb_ttsnet_log(c)->c[1].end));
        assert_int_equal(s->order[0], 1);
    }
    *out = c;
    return tb_ttsnet_log(c)->c[0];
}

static void expect_message(const struct tb_tts_chunk *r, const char *want)
{
    if (strstr(r->message, want) == NULL)
        fail_msg("message '%s' lacks '%s'", r->message, want);
    assert_null(strstr(r->message, KEY));
    assert_null(strstr(r->message, "0123456789abcdef"));
}

#define ERR_HEAD(status) "HTTP/1.1 " status "\r\nContent-Type: application/json\r\n"

static void failures(void **state)
{
    static const struct {
        int api;
        const char *status, *body, *want;
    } http[] = {
        {TB_TTSAPI_OPENAI, "401 Unauthorized",
         "{\"error\":{\"message\":\"Incorrect API key provided: " KEY "\",\"type\":\"x\"}}",
         "Incorrect API key provided: ***"},
        {TB_TTSAPI_ELEVENLABS, "401 Unauthorized",
         "{\"detail\":{\"status\":\"invalid_api_key\",\"message\":\"Invalid API key\"}}",
         "invalid_api_key: Invalid API key"},
        {TB_TTSAPI_DEEPGRAM, "400 Bad Request",
         "{\"err_code\":\"Bad Request\",\"err_msg\":\"Unknown model " KEY "\"}",
         "Bad Request: Unknown model ***"},
        {TB_TTSAPI_CARTESIA, "429 Too Many Requests",
         "{\"error_code\":\"concurrency_limited\",\"title\":\"Too many concurrent requests\","
         "\"message\":\"Slow down.\",\"request_id\":\"u\"}",
         "Too many concurrent requests: Slow down."},
    };
    struct seen s;
    struct tb_ttsnet *c;
    struct tb_tts_chunk r;
    (void)state;
    for (size_t i = 0; i < sizeof(http) / sizeof(http[0]); i++) {
        static char head[256];
        memset(&sc, 0, sizeof(sc));
        snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: application/json\r\n",
                 http[i].status);
        sc.head = head;
        sc.body = http[i].body;
        r = one_chunk(http[i].api, &s, &c);
        assert_int_equal(r.fail, TB_TTS_HTTP);
        assert_int_equal(r.status, atoi(http[i].status));
        expect_message(&r, http[i].want);
        assert_true(isnan(r.first_byte));
        assert_int_equal(r.bytes, 0);
        tb_ttsnet_destroy(c);
    }

    /* A 200 with a JSON body: not audio. */
    memset(&sc, 0, sizeof(sc));
    sc.head = ERR_HEAD("200 OK");
    sc.body = "{\"error\":{\"message\":\"quota exceeded\"}}";
    r = one_chunk(TB_TTSAPI_OPENAI, &s, &c);
    assert_int_equal(r.fail, TB_TTS_FORMAT);
    assert_int_equal(r.status, 200);
    expect_message(&r, "quota exceeded");
    expect_message(&r, "application/json");
    tb_ttsnet_destroy(c);

    /* The body cut mid-audio: what came is kept. */
    memset(&sc, 0, sizeof(sc));
    sc.head = AUDIO_HEAD;
    sc.pcm = 9600;
    sc.cut = 1;
    r = one_chunk(TB_TTSAPI_ELEVENLABS, &s, &c);
    assert_int_equal(r.fail, TB_TTS_CUT);
    assert_int_equal(r.bytes, 4800);
    assert_int_equal(s.bytes[0], 4800);
    assert_false(isnan(r.first_byte));
    expect_message(&r, "after 4800 bytes");
    tb_ttsnet_destroy(c);

    /* A stall after the first bytes: the idle timeout (0.3 s). */
    memset(&sc, 0, sizeof(sc));
    sc.head = AUDIO_HEAD;
    sc.pcm = 9600;
    sc.cut = 1;
    sc.hold = 1;
    r = one_chunk(TB_TTSAPI_DEEPGRAM, &s, &c);
    assert_int_equal(r.fail, TB_TTS_TIMEOUT);
    assert_int_equal(r.bytes, 4800);
    if (r.end - r.first_byte < 0.3 || r.end - r.first_byte > 0.4)
        fail_msg("the idle timeout fired %.3f s after the last byte, want 0.3",
                 r.end - r.first_byte);
    expect_message(&r, "idle timeout");
    tb_ttsnet_destroy(c);

    /* An odd number of bytes: the last one is not half a sample handed on. */
    memset(&sc, 0, sizeof(sc));
    sc.head = AUDIO_HEAD;
    sc.pcm = 4801;
    sc.pieces = 3; /* 1600, 1600, 1601: odd pieces */
    r = one_chunk(TB_TTSAPI_CARTESIA, &s, &c);
    assert_int_equal(r.fail, TB_TTS_FORMAT);
    assert_int_equal(r.bytes, 4800);
    assert_int_equal(s.bytes[0], 4800);
    assert_int_equal(s.odd_calls, 0);
    expect_message(&r, "odd number");
    tb_ttsnet_destroy(c);
}

static void odd_pieces_pair_up(void **state)
{
    struct seen s;
    struct tb_ttsnet *c;
    struct tb_tts_chunk r;
    (void)state;
    memset(&sc, 0, sizeof(sc));
    sc.head = AUDIO_HEAD;
    sc.pcm = 4802;
    sc.pieces = 2; /* 2401 and 2401 bytes: a sample split across reads */
    sc.gap = 0.02;
    r = one_chunk(TB_TTSAPI_OPENAI, &s, &c);
    assert_int_equal(r.fail, TB_TTS_OK);
    assert_int_equal(r.bytes, 4802);
    assert_int_equal(s.bytes[0], 4802);
    assert_int_equal(s.odd_calls, 0);
    tb_ttsnet_destroy(c);
}

static void refused_is_transport(void **state)
{
    struct seen s;
    struct tb_ttsnet *c;
    const char *texts[] = {"Nobody listens.", "Nor here."};
    int port, fd = peer_listen("127.0.0.1", &port);
    const struct tb_tts_chunk *r;
    (void)state;
    close(fd); /* the port is free again: connecting is refused */
    c = client(TB_TTSAPI_OPENAI, port, 2, &s);
    run_chunks(c, texts, 2, &s);
    r = tb_ttsnet_log(c)->c;
    assert_int_equal(r[0].fail, TB_TTS_TRANSPORT);
    assert_int_equal(r[0].status, 0);
    assert_true(r[0].message[0] != '\0');
    /* With N = 2 both went at once; the second failed too, or was
     * stopped when the first did. */
    assert_true(r[1].fail == TB_TTS_TRANSPORT || r[1].fail == TB_TTS_CANCELED);
    assert_int_equal(tb_ttsnet_failed(c), s.order[0]);
    tb_ttsnet_destroy(c);
}

static void blank_chunk_and_cancel(void **state)
{
    struct peer pe;
    struct seen s;
    struct tb_ttsnet *c;
    const struct tb_tts_chunk *r;
    struct tb_tts_log taken;
    (void)state;
    memset(&sc, 0, sizeof(sc));
    sc.head = AUDIO_HEAD;
    sc.pcm = 2400;
    sc.delay = 0.05;
    peer_start(&pe, "127.0.0.1", scripted);
    c = client(TB_TTSAPI_OPENAI, pe.port, 1, &s);
    assert_int_equal(tb_ttsnet_submit(c, " \n", 2), 0);
    assert_int_equal(tb_ttsnet_submit(c, "Words.", 6), 0);
    assert_int_equal(tb_ttsnet_submit(c, "\xC3", 1), TB_EINVAL);
    assert_int_equal(tb_ttsnet_submit(c, "More.", 5), 0);
    while (s.nended < 2)
        assert_true(tb_ttsnet_step(c, 50) >= 0);
    tb_ttsnet_cancel(c);
    peer_halt(&pe); /* its requests are read below */
    r = tb_ttsnet_log(c)->c;
    assert_int_equal(tb_ttsnet_log(c)->n, 3);
    /* The blank chunk: no request, ended complete with no audio. */
    assert_int_equal(r[0].fail, TB_TTS_OK);
    assert_int_equal(r[0].bytes, 0);
    assert_true(isnan(r[0].first_byte) && r[0].end == r[0].sent);
    if (pe.conns < 1 || strstr(peer_req(&pe, 0), "Words.") == NULL)
        fail_msg("chunk 2 (%s: %s) was not the first request: '%s'", tb_tts_fail_name(r[1].fail),
                 r[1].message, peer_req(&pe, 0));
    assert_int_equal(r[1].fail, TB_TTS_OK);
    /* The third was in flight or queued: canceled, nothing else. */
    assert_int_equal(r[2].fail, TB_TTS_CANCELED);
    assert_int_equal(s.nended, 3);
    assert_int_equal(tb_ttsnet_failed(c), 0);
    assert_int_equal(tb_ttsnet_submit(c, "x", 1), TB_EINVAL);
    tb_ttsnet_take_log(c, &taken);
    assert_int_equal(taken.n, 3);
    assert_int_equal(tb_ttsnet_log(c)->n, 0);
    tb_tts_log_free(&taken);
    tb_ttsnet_destroy(c);
    peer_free(&pe);
}

/* The base URL a user writes, in every form, resolves to the same
 * endpoint: the root, with "/v1", with a trailing '/', the whole
 * endpoint; never a path twice; a proxy's own prefix kept; a voice the
 * endpoint names taken, or refused beside another --tts-voice. */
static void base_url_forms(void **state)
{
    static const struct {
        const char *path, *url, *voice_opt, *base, *voice;
        int rc;
    } rows[] = {
        {"/v1/audio/speech", "http://h:1", NULL, "http://h:1", NULL, 0},
        {"/v1/audio/speech", "http://h:1/", NULL, "http://h:1/", NULL, 0},
        {"/v1/audio/speech", "http://h:1/v1", NULL, "http://h:1", NULL, 0},
        {"/v1/audio/speech", "http://h:1/v1/", NULL, "http://h:1", NULL, 0},
        {"/v1/audio/speech", "https://h/v1/audio/speech", NULL, "https://h", NULL, 0},
        {"/v1/audio/speech", "https://h/v1/audio", NULL, "https://h", NULL, 0},
        {"/v1/audio/speech", "https://h/proxy/openai/v1", NULL, "https://h/proxy/openai", NULL,
         0},
        {"/v1/audio/speech", "https://h/proxy", NULL, "https://h/proxy", NULL, 0},
        {"/v1/audio/speech", "https://h/v1?x=1", NULL, "https://h?x=1", NULL, 0},
        {"/v1/speak", "https://api.deepgram.com/v1/speak", NULL, "https://api.deepgram.com", NULL,
         0},
        {"/tts/bytes", "https://api.cartesia.ai/tts/bytes", NULL, "https://api.cartesia.ai", NULL,
         0},
        {"/tts/bytes", "http://h:1/v1", NULL, "http://h:1", NULL, 0},
        {"/tts/bytes", "http://h:1/tts", NULL, "http://h:1", NULL, 0},
        {"/v1/text-to-speech/{voice}/stream", "https://api.elevenlabs.io/v1", NULL,
         "https://api.elevenlabs.io", NULL, 0},
        {"/v1/text-to-speech/{voice}/stream", "https://api.elevenlabs.io/v1/text-to-speech/V%20x/stream",
         NULL, "https://api.elevenlabs.io", "V x", 0},
        {"/v1/text-to-speech/{voice}/stream", "https://h/v1/text-to-speech/abc", "abc", "https://h",
         "abc", 0},
        {"/v1/text-to-speech/{voice}/stream", "https://h/v1/text-to-speech/abc/stream", "xyz",
         NULL, NULL, TB_EINVAL},
        {"/v1/text-to-speech/{voice}/stream", "https://h", "xyz", "https://h", "xyz", 0},
        {"/v1/text-to-speech/{voice}/stream-input", "wss://api.elevenlabs.io/v1/text-to-speech/abc/stream-input",
         NULL, "wss://api.elevenlabs.io", "abc", 0},
        {"/tts/websocket", "ws://127.0.0.1:9/v1", NULL, "ws://127.0.0.1:9", NULL, 0},
        {"/tts/websocket", "wss://api.cartesia.ai/tts/websocket", NULL, "wss://api.cartesia.ai",
         NULL, 0},
        {"/v1/audio/speech", "127.0.0.1:8788", NULL, NULL, NULL, TB_EINVAL},
        {"/v1/audio/speech", "http://", NULL, NULL, NULL, TB_EINVAL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *base = NULL, *voice = NULL, err[256] = "";
        int rc = tb_ttsapi_base(rows[i].path, rows[i].url, rows[i].voice_opt, &base, &voice, err,
                                sizeof(err));
        if (rc != rows[i].rc || (rc == 0 && strcmp(base, rows[i].base) != 0) ||
            (rows[i].voice == NULL) != (voice == NULL) ||
            (voice != NULL && strcmp(voice, rows[i].voice) != 0))
            fail_msg("%s under %s: rc %d base %s voice %s (%s); want rc %d base %s voice %s",
                     rows[i].url, rows[i].path, rc, base ? base : "-", voice ? voice : "-", err,
                     rows[i].rc, rows[i].base ? rows[i].base : "-",
                     rows[i].voice ? rows[i].voice : "-");
        if (rc != 0)
            assert_true(err[0] != '\0' && strchr(err, '\n') == NULL);
        free(base);
        free(voice);
    }
    /* The rows' paths are the dialects' own. */
    assert_string_equal(tb_ttsapi_info(TB_TTSAPI_ELEVENLABS)->path, rows[13].path);
    assert_string_equal(tb_ttsws_path(TB_TTSWS_ELEVENLABS), rows[18].path);
    assert_string_equal(tb_ttsws_path(TB_TTSWS_CARTESIA), rows[19].path);
}

int tb_test_ttsapi(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(build_matches_fixture),   cmocka_unit_test(default_model_is_a_presets),
        cmocka_unit_test(build_refuses_bad_input), cmocka_unit_test(error_bodies),
        cmocka_unit_test(wire_matches_fixture),    cmocka_unit_test(first_byte_and_duration),
        cmocka_unit_test(concurrency_in_order),    cmocka_unit_test(failures),
        cmocka_unit_test(odd_pieces_pair_up),      cmocka_unit_test(refused_is_transport),
        cmocka_unit_test(blank_chunk_and_cancel),
        cmocka_unit_test(base_url_forms),
    };
    return TB_RUN_GROUP("ttsapi", tests);
}
