/*
 * test_api.c - provider dialects (api.h): Anthropic Messages and Ollama
 * streams from hand-written captures in their documented shapes
 * (tests/data/api/), fed whole, split at every byte, and a byte at a
 * time; error events, bad JSON, caps and cut streams; request bodies;
 * then the real binary end to end: `ttsbuf run --api anthropic|ollama
 * --base-url http://127.0.0.1:PORT` against `ttsbuf serve`, clean and
 * under every fault, with the key in no output.
 */
#include <arpa/inet.h>
#include <cJSON.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../src/base/jsontext.h"
#include "tests.h"
#include "ttsbuf/api.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/error.h"

#define ERRLEN 512

/* What a whole stream said. */
struct seen {
    char content[256], reasoning[256];
    size_t deltas;
    uint32_t tool_calls;
    long long usage_completion, usage_prompt;
    char finish[32];
    int done, errors, have_server;
    char error_type[64], error_message[512];
    struct tb_server_timing server;
};

static int collect(void *ud, const struct tb_api_delta *ad, uint64_t offset)
{
    struct seen *w = ud;
    const struct tb_api_delta *d = ad;
    (void)offset;
    w->deltas++;
    if (d->content != NULL)
        strncat(w->content, d->content, d->content_len);
    if (d->reasoning != NULL)
        strncat(w->reasoning, d->reasoning, d->reasoning_len);
    w->tool_calls += d->tool_calls;
    if (d->usage_completion >= 0)
        w->usage_completion = d->usage_completion;
    if (d->usage_prompt >= 0)
        w->usage_prompt = d->usage_prompt;
    if (d->finish_reason[0])
        snprintf(w->finish, sizeof(w->finish), "%s", d->finish_reason);
    w->done |= d->done;
    if (d->error) {
        w->errors++;
        snprintf(w->error_type, sizeof(w->error_type), "%s", d->error_type);
        snprintf(w->error_message, sizeof(w->error_message), "%s", d->error_message);
    }
    if (ad->have_server) {
        w->have_server = 1;
        w->server = ad->server;
    }
    return 0;
}

/* Feeds buf in pieces cut at the given points (sorted, < len). */
static int feed_cuts(enum tb_api api, const char *buf, size_t len, const size_t *cuts, size_t nc,
                     struct seen *w, char *err)
{
    struct tb_api_parser *p;
    size_t at = 0;
    int rc = 0;
    memset(w, 0, sizeof(*w));
    w->usage_completion = w->usage_prompt = -1;
    assert_int_equal(tb_api_parser_create(api, &p), 0);
    for (size_t i = 0; i <= nc && rc == 0; i++) {
        size_t end = i < nc ? cuts[i] : len;
        rc = tb_api_feed(p, buf + at, end - at, collect, w, err, ERRLEN);
        at = end;
    }
    if (rc == 0)
        assert_int_equal(tb_api_pending(p), 0);
    tb_api_parser_destroy(p);
    return rc;
}

static void check_anthropic(const struct seen *w)
{
    assert_string_equal(w->content, "Hello w\xc3\xb6rld.");
    assert_string_equal(w->reasoning, "Let me think");
    assert_int_equal(w->tool_calls, 1);
    assert_int_equal(w->usage_prompt, 25);
    assert_int_equal(w->usage_completion, 89);
    assert_string_equal(w->finish, "tool_use");
    assert_true(w->done);
    assert_int_equal(w->errors, 0);
}

static void check_ollama(const struct seen *w)
{
    assert_string_equal(w->content, "Hello w\xc3\xb6rld.");
    assert_string_equal(w->reasoning, "Hmm");
    assert_int_equal(w->tool_calls, 1);
    assert_int_equal(w->usage_prompt, 26);
    assert_int_equal(w->usage_completion, 282);
    assert_string_equal(w->finish, "stop");
    assert_true(w->done);
    assert_true(w->have_server);
    assert_int_equal(w->server.total_ns, 4883583458LL);
    assert_int_equal(w->server.load_ns, 1334875);
    assert_int_equal(w->server.prompt_eval_ns, 342546000);
    assert_int_equal(w->server.eval_count, 282);
    assert_int_equal(w->server.eval_ns, 4535599000LL);
}

static void every_split(enum tb_api api, const char *file, void (*check)(const struct seen *))
{
    size_t len, one[1];
    char *buf = tb_test_slurp(tb_test_data(file), &len), err[ERRLEN];
    size_t *bytes = malloc(len * sizeof(*bytes));
    struct seen w;
    assert_non_null(bytes);
    assert_int_equal(feed_cuts(api, buf, len, NULL, 0, &w, err), 0);
    check(&w);
    for (size_t c = 1; c < len; c++) {
        one[0] = c;
        if (feed_cuts(api, buf, len, one, 1, &w, err) != 0)
            fail_msg("%s cut at %zu: %s", file, c, err);
        check(&w);
    }
    for (size_t c = 0; c + 1 < len; c++)
        bytes[c] = c + 1;
    assert_int_equal(feed_cuts(api, buf, len, bytes, len - 1, &w, err), 0);
    check(&w);
    free(bytes);
    free(buf);
}

static void anthropic_stream(void **state)
{
    (void)state;
    every_split(TB_API_ANTHROPIC, "api/anthropic/stream.sse", check_anthropic);
}

static void ollama_stream(void **state)
{
    (void)state;
    every_split(TB_API_OLLAMA, "api/ollama/stream.ndjson", check_ollama);
}

static int feed_str(enum tb_api api, const char *s, struct seen *w, char *err)
{
    return feed_cuts(api, s, strlen(s), NULL, 0, w, err);
}

static void error_events(void **state)
{
    struct seen w;
    char err[ERRLEN];
    (void)state;
    assert_int_equal(feed_str(TB_API_ANTHROPIC,
                              "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": "
                              "\"overloaded_error\", \"message\": \"Overloaded\"}}\n\n",
                              &w, err),
                     0);
    assert_int_equal(w.errors, 1);
    assert_string_equal(w.error_type, "overloaded_error");
    assert_string_equal(w.error_message, "Overloaded");
    assert_int_equal(feed_str(TB_API_OLLAMA, "{\"error\":\"model 'x' not found\"}\n", &w, err), 0);
    assert_int_equal(w.errors, 1);
    assert_string_equal(w.error_message, "model 'x' not found");
    /* The OpenAI pair still reads through the same interface. */
    assert_int_equal(feed_str(TB_API_CHAT,
                              "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"
                              "data: [DONE]\n\n",
                              &w, err),
                     0);
    assert_string_equal(w.content, "Hi");
    assert_true(w.done);
}

/* ---- UTF-16 surrogate halves split across events ----------------------- */

/* Text with astral characters (emoji, CJK extension B) and BMP ones. */
static const char astral[] = "Hi \xF0\x9F\x98\x80, \xF0\xA0\x80\x80 \xE6\xBC\xA2\xC3\xA9 "
                             "\xF0\x9F\x8E\x89!";

/* astral as UTF-16 code units. */
static size_t utf16_of(const char *s, unsigned *u, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (*p != '\0' && n + 2 <= cap) {
        unsigned long cp;
        int extra = *p < 0x80 ? 0 : *p < 0xE0 ? 1 : *p < 0xF0 ? 2 : 3;
        cp = extra == 0 ? *p : (unsigned long)(*p & (0x3F >> extra));
        for (int i = 1; i <= extra; i++)
            cp = (cp << 6) | (p[i] & 0x3F);
        p += extra + 1;
        if (cp >= 0x10000) {
            u[n++] = (unsigned)(0xD800 + ((cp - 0x10000) >> 10));
            u[n++] = (unsigned)(0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            u[n++] = (unsigned)cp;
        }
    }
    return n;
}

/* Appends one text event in the dialect's shape; the text is u[a..b),
 * every non-ASCII unit escaped as \uXXXX, as a JavaScript server that
 * slices by code units would write it. */
static void put_event(enum tb_api api, char *out, const unsigned *u, size_t a, size_t b)
{
    static const char *const pre[] = {"data: {\"choices\":[{\"delta\":{\"content\":\"",
                                      "data: {\"choices\":[{\"text\":\"",
                                      "event: content_block_delta\ndata: {\"type\":"
                                      "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                                      "\"text_delta\",\"text\":\"",
                                      "{\"message\":{\"role\":\"assistant\",\"content\":\""};
    static const char *const post[] = {"\"}}]}\n\n", "\"}]}\n\n", "\"}}\n\n",
                                       "\"},\"done\":false}\n"};
    char *o = out + strlen(out);
    o += sprintf(o, "%s", pre[api]);
    for (size_t i = a; i < b; i++)
        o += u[i] < 0x80 ? sprintf(o, "%c", (char)u[i]) : sprintf(o, "\\u%04x", u[i]);
    sprintf(o, "%s", post[api]);
}

/* Appends the dialect's end of stream to the string in out[0..cap). */
static void put_end(enum tb_api api, char *out, size_t cap)
{
    static const char *const end[] = {"data: [DONE]\n\n", "data: [DONE]\n\n",
                                      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
                                      "{\"done\":true,\"done_reason\":\"stop\"}\n"};
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "%s", end[api]);
}

/* Feeds a whole stream; returns the halves the parser replaced. */
static uint64_t feed_count(enum tb_api api, const char *buf, struct seen *w)
{
    struct tb_api_parser *p;
    char err[ERRLEN] = "";
    uint64_t n;
    memset(w, 0, sizeof(*w));
    w->usage_completion = w->usage_prompt = -1;
    assert_int_equal(tb_api_parser_create(api, &p), 0);
    if (tb_api_feed(p, buf, strlen(buf), collect, w, err, ERRLEN) != 0)
        fail_msg("%s: %s", tb_api_info(api)->name, err);
    n = tb_api_replaced(p);
    tb_api_parser_destroy(p);
    return n;
}

/* Every dialect, the text cut at every UTF-16 boundary (two events), then
 * one code unit per event: the same text comes out, nothing replaced. */
static void surrogate_halves(void **state)
{
    unsigned u[64];
    size_t n = utf16_of(astral, u, 64);
    static char buf[16384];
    struct seen w;
    (void)state;
    assert_int_equal(n, 16); /* 4 astral characters: 8 of the units */
    for (int api = 0; api < TB_API__COUNT; api++) {
        for (size_t k = 1; k < n; k++) {
            buf[0] = '\0';
            put_event((enum tb_api)api, buf, u, 0, k);
            put_event((enum tb_api)api, buf, u, k, n);
            put_end((enum tb_api)api, buf, sizeof(buf));
            assert_int_equal(feed_count((enum tb_api)api, buf, &w), 0);
            assert_string_equal(w.content, astral);
            assert_true(w.done);
        }
        buf[0] = '\0';
        for (size_t k = 0; k < n; k++)
            put_event((enum tb_api)api, buf, u, k, k + 1);
        put_end((enum tb_api)api, buf, sizeof(buf));
        assert_int_equal(feed_count((enum tb_api)api, buf, &w), 0);
        assert_string_equal(w.content, astral);
    }
}

/* A half that never finds its partner becomes U+FFFD, counted: a high
 * half at the end of the stream, a low one alone, a high one followed by
 * text that does not start with its low half.  A half waits across
 * events without text (an Anthropic ping). */
static void surrogate_orphans(void **state)
{
    static const char *const anth_ping = "event: ping\ndata: {\"type\":\"ping\"}\n\n";
    unsigned u[] = {'a', 0xD83D};
    unsigned v[] = {0xDE00, 'b', 0xDC00, 'c', 0xD83D};
    unsigned x[] = {'d'};
    char buf[4096];
    struct seen w;
    (void)state;
    for (int api = 0; api < TB_API__COUNT; api++) {
        buf[0] = '\0';
        put_event((enum tb_api)api, buf, u, 0, 2);
        if (api == TB_API_ANTHROPIC)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s", anth_ping);
        put_event((enum tb_api)api, buf, v, 0, 5);
        put_event((enum tb_api)api, buf, x, 0, 1);
        put_event((enum tb_api)api, buf, u, 0, 2);
        put_end((enum tb_api)api, buf, sizeof(buf));
        assert_int_equal(feed_count((enum tb_api)api, buf, &w), 3);
        assert_string_equal(w.content, "a\xF0\x9F\x98\x80"
                                       "b\xEF\xBF\xBD"
                                       "c\xEF\xBF\xBD"
                                       "da\xEF\xBF\xBD");
    }
}

/* Errors in the shapes real servers send, in every dialect's stream and
 * as an HTTP error body: the server's message is found in each. */
static void error_shapes(void **state)
{
    static const struct {
        const char *json, *message, *type;
        int in_stream; /* an event this shape is an error event */
    } rows[] = {
        {"{\"error\":{\"message\":\"A b\",\"type\":\"invalid_request_error\",\"code\":\"x\"}}",
         "A b", "invalid_request_error", 1},
        {"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}"
         "}",
         "Overloaded", "overloaded_error", 1},
        {"{\"type\":\"error\",\"message\":{\"type\":\"api_error\",\"message\":\"upstream gone\"}}",
         "upstream gone", "api_error", 1},
        {"{\"type\":\"error\",\"message\":\"plain words\"}", "plain words", "", 1},
        {"{\"detail\":\"Not authenticated\"}", "Not authenticated", "", 1},
        {"{\"detail\":[{\"loc\":[\"body\",\"model\"],\"msg\":\"Field required\",\"type\":"
         "\"missing\"}]}",
         "Field required", "", 1},
        {"{\"error\":\"model 'x' not found\"}", "model 'x' not found", "", 1},
        {"{\"message\":\"bare\",\"status\":404}", "bare", "", 0},
        {"{\"message\":{\"message\":\"nested\"}}", "nested", "", 0},
    };
    static const char *const pre[] = {"data: ", "data: ", "event: error\ndata: ", ""};
    static const char *const post[] = {"\n\n", "\n\n", "\n\n", "\n"};
    char buf[1024], err[ERRLEN], out[128];
    struct seen w;
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tb_reader_error_text(rows[i].json, strlen(rows[i].json), out, sizeof(out));
        if (strcmp(out, rows[i].message) != 0)
            fail_msg("HTTP body %s: message '%s', want '%s'", rows[i].json, out, rows[i].message);
        if (!rows[i].in_stream)
            continue;
        for (int api = 0; api < TB_API__COUNT; api++) {
            snprintf(buf, sizeof(buf), "%s%s%s", pre[api], rows[i].json, post[api]);
            assert_int_equal(feed_str((enum tb_api)api, buf, &w, err), 0);
            if (w.errors != 1 || strcmp(w.error_message, rows[i].message) != 0 ||
                strcmp(w.error_type, rows[i].type) != 0)
                fail_msg("%s event %s: %d errors, message '%s' type '%s'",
                         tb_api_info((enum tb_api)api)->name, rows[i].json, w.errors,
                         w.error_message, w.error_type);
        }
    }
}

/* The pre-pass: a lone half is rewritten, a pair and an escaped
 * backslash are not; a whole document gets U+FFFD at the same offsets;
 * raw surrogate bytes are refused where halves are kept for pairing.
 * And the rule for a usage count that contradicts the events. */
static void jsontext_and_usage(void **state)
{
    const char *pair = "{\"a\":\"\\ud83d\\ude00\\\\ud83d\"}";
    const char *lone = "{\"a\":\"x\\ud83dy\",\"b\":\"\\uDE00\"}";
    char *out = NULL;
    size_t n = 0, at = 0;
    const char *end = NULL;
    cJSON *j;
    (void)state;
    assert_int_equal(tb_jsontext_fix(pair, strlen(pair), TB_JSONTEXT_HALVES, &out, &n, &at), 0);
    assert_null(out);
    assert_int_equal(tb_jsontext_fix(lone, strlen(lone), TB_JSONTEXT_HALVES, &out, &n, &at), 0);
    assert_non_null(out);
    assert_string_equal(out, "{\"a\":\"x\xed\xa0\xbdy\",\"b\":\"\xed\xb8\x80\"}");
    free(out);
    assert_int_equal(tb_jsontext_fix(lone, strlen(lone), TB_JSONTEXT_REPLACE, &out, &n, &at), 0);
    assert_int_equal(n, strlen(lone));
    assert_string_equal(out, "{\"a\":\"x\\ufffdy\",\"b\":\"\\ufffd\"}");
    free(out);
    assert_int_equal(tb_jsontext_fix("\"\xed\xa0\xbd\"", 5, TB_JSONTEXT_HALVES, &out, &n, &at),
                     TB_EFORMAT);
    assert_int_equal(at, 2);
    j = tb_jsontext_parse(lone, strlen(lone), &end);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "a")->valuestring, "x\xEF\xBF\xBDy");
    assert_ptr_equal(end, lone + strlen(lone));
    cJSON_Delete(j);
    j = tb_jsontext_parse(pair, strlen(pair), NULL);
    assert_string_equal(cJSON_GetObjectItem(j, "a")->valuestring, "\xF0\x9F\x98\x80\\ud83d");
    cJSON_Delete(j);
    /* Usage: 0 for any events, or under an eighth of them, is not trusted. */
    assert_true(tb_stream_usage_credible(0, 0));
    assert_false(tb_stream_usage_credible(0, 1));
    assert_false(tb_stream_usage_credible(-1, 0));
    assert_true(tb_stream_usage_credible(1, 8));
    assert_false(tb_stream_usage_credible(1, 9));
    assert_true(tb_stream_usage_credible(345, 2760));
    assert_false(tb_stream_usage_credible(344, 2760));
}

/* The wrong dialect: every stream read as another dialect stops with an
 * error that says so (ollama's NDJSON read as SSE has no "data:" lines:
 * no event at all, which live runs report as a stream with no end). */
static void wrong_dialect(void **state)
{
    unsigned u[] = {'o', 'k'};
    char buf[1024], err[ERRLEN];
    struct seen w;
    (void)state;
    for (int sent = 0; sent < TB_API__COUNT; sent++) {
        buf[0] = '\0';
        put_event((enum tb_api)sent, buf, u, 0, 2);
        put_end((enum tb_api)sent, buf, sizeof(buf));
        for (int asked = 0; asked < TB_API__COUNT; asked++) {
            int rc = feed_str((enum tb_api)asked, buf, &w, err);
            if (asked == sent) {
                assert_int_equal(rc, 0);
                assert_string_equal(w.content, "ok");
            } else if (sent == TB_API_OLLAMA) {
                assert_int_equal(rc, 0);
                assert_int_equal(w.deltas, 0);
            } else {
                assert_int_equal(rc, TB_EFORMAT);
                assert_int_equal(w.deltas, 0);
                assert_non_null(strstr(err, "is --api right?"));
                if (asked != TB_API_OLLAMA)
                    assert_non_null(strstr(err, tb_api_info((enum tb_api)sent)->name));
            }
        }
    }
}

static void bad_input(void **state)
{
    struct seen w;
    char err[ERRLEN];
    struct tb_api_parser *p;
    char *big;
    (void)state;
    assert_int_equal(feed_str(TB_API_ANTHROPIC, "event: x\ndata: {\"type\":\n\n", &w, err),
                     TB_EFORMAT);
    assert_non_null(strstr(err, "bad event JSON ending at stream byte 25"));
    assert_int_equal(feed_str(TB_API_OLLAMA, "{\"done\":false}\n[1,2]\n", &w, err), TB_EFORMAT);
    assert_non_null(strstr(err, "not a JSON object"));
    /* Raw surrogate bytes are not UTF-8 (an escaped lone half is
     * another matter: surrogate_halves below). */
    assert_int_equal(
        feed_str(TB_API_OLLAMA, "{\"message\":{\"content\":\"\xed\xb0\x80\"}}\n", &w, err),
        TB_EFORMAT);
    assert_non_null(strstr(err, "raw UTF-16 surrogate"));
    /* A line over the cap: an error naming the byte, memory bounded. */
    big = malloc(TB_API_LINE_MAX + 2);
    assert_non_null(big);
    memset(big, 'a', TB_API_LINE_MAX + 1);
    big[TB_API_LINE_MAX + 1] = '\n';
    assert_int_equal(tb_api_parser_create(TB_API_OLLAMA, &p), 0);
    assert_int_equal(tb_api_feed(p, big, TB_API_LINE_MAX + 2, collect, &w, err, ERRLEN),
                     TB_ETOOBIG);
    assert_non_null(strstr(err, "at byte 4194304"));
    tb_api_parser_destroy(p);
    free(big);
    /* A cut stream leaves bytes pending. */
    assert_int_equal(tb_api_parser_create(TB_API_OLLAMA, &p), 0);
    assert_int_equal(tb_api_feed(p, "{\"done\":fal", 11, collect, &w, err, ERRLEN), 0);
    assert_int_equal(tb_api_pending(p), 11);
    tb_api_parser_reset(p);
    assert_int_equal(tb_api_pending(p), 0);
    tb_api_parser_destroy(p);
    tb_api_parser_destroy(NULL);
    assert_int_equal(tb_api_parser_create(TB_API__COUNT, &p), TB_EINVAL);
}

static cJSON *body(enum tb_api api, const char *messages, const char *extra, long max_tokens,
                   double temp)
{
    struct tb_api_request q;
    char *s, err[ERRLEN];
    cJSON *j;
    memset(&q, 0, sizeof(q));
    q.api = api;
    q.model = "m";
    q.prompt = "Say hi.";
    q.messages_json = messages;
    q.extra_json = extra;
    q.max_tokens = max_tokens;
    q.temperature = temp;
    q.include_usage = 1;
    assert_int_equal(tb_api_request_body(&q, &s, err, sizeof(err)), 0);
    j = cJSON_Parse(s);
    free(s);
    assert_non_null(j);
    return j;
}

static void request_bodies(void **state)
{
    struct tb_api_request q;
    char *s, err[ERRLEN];
    cJSON *j, *o;
    (void)state;
    j = body(TB_API_ANTHROPIC,
             "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":"
             "\"Hi\"}]",
             NULL, -1, 0.5);
    assert_int_equal(cJSON_GetObjectItem(j, "max_tokens")->valueint, 1024);
    assert_string_equal(cJSON_GetObjectItem(j, "system")->valuestring, "Be brief.");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "messages")), 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "stream")));
    assert_null(cJSON_GetObjectItem(j, "stream_options"));
    assert_near(cJSON_GetObjectItem(j, "temperature")->valuedouble, 0.5, 1e-12);
    cJSON_Delete(j);
    j = body(TB_API_OLLAMA, NULL, "{\"think\":true}", 300, 0.7);
    o = cJSON_GetObjectItem(j, "options");
    assert_int_equal(cJSON_GetObjectItem(o, "num_predict")->valueint, 300);
    assert_near(cJSON_GetObjectItem(o, "temperature")->valuedouble, 0.7, 1e-12);
    assert_null(cJSON_GetObjectItem(j, "max_tokens"));
    assert_null(cJSON_GetObjectItem(j, "stream_options"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "think")));
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "messages"), 0), "content")
            ->valuestring,
        "Say hi.");
    cJSON_Delete(j);
    /* --body-json's own options win over the flags. */
    j = body(TB_API_OLLAMA, NULL, "{\"options\":{\"num_predict\":5}}", 300, -1);
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "num_predict")->valueint, 5);
    cJSON_Delete(j);
    tb_api_request_init(&q);
    q.api = TB_API_ANTHROPIC;
    q.messages_json = "{}";
    assert_int_equal(tb_api_request_body(&q, &s, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "--messages"));
    /* The completions API sends one prompt: messages are refused, not
     * dropped for an empty prompt. */
    tb_api_request_init(&q);
    q.api = TB_API_COMPLETIONS;
    q.messages_json = "[{\"role\":\"user\",\"content\":\"Hi.\"}]";
    s = NULL;
    assert_int_equal(tb_api_request_body(&q, &s, err, sizeof(err)), TB_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err, "chat API"));
}

static void table(void **state)
{
    enum tb_api a;
    (void)state;
    for (int i = 0; i < TB_API__COUNT; i++) {
        const struct tb_api_info *in = tb_api_info((enum tb_api)i);
        assert_non_null(in);
        assert_int_equal(tb_api_by_name(in->name, &a), 0);
        assert_int_equal(a, i);
    }
    assert_null(tb_api_info(TB_API__COUNT));
    assert_int_equal(tb_api_by_name("gemini", &a), TB_EINVAL);
    assert_string_equal(tb_api_info(TB_API_ANTHROPIC)->key_header, "x-api-key");
    assert_string_equal(tb_api_info(TB_API_ANTHROPIC)->key_env, "ANTHROPIC_API_KEY");
    assert_int_equal(tb_api_info(TB_API_OLLAMA)->framing, TB_API_NDJSON);
}

/* ---- the binary against `ttsbuf serve` ---------------------------------- */

#define SECRET "sk-ant-TTSBUF-TEST-9c2e71"

struct e2e {
    int pid, port;
    char log[160], dir[96];
};

static void e2e_start(struct e2e *e)
{
    char cmd[256];
    snprintf(e->dir, sizeof(e->dir), "/tmp/ttsbuf-api-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", e->dir);
    assert_int_equal(system(cmd), 0);
    snprintf(e->log, sizeof(e->log), "%s/serve.log", e->dir);
    e->pid = tb_test_serve_spawn("tps=400,tokens=30,ttft=0.02,seed=5", e->log, &e->port);
}

static void e2e_stop(struct e2e *e)
{
    char cmd[256];
    assert_int_equal(tb_test_serve_stop(e->pid), 0);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
    assert_int_equal(system(cmd), 0);
}

/* `run --api API` at the server with `model` (faults after '+'). */
static struct tb_test_out e2e_run(const struct e2e *e, const char *api, const char *model,
                                  const char *more)
{
    char args[1024];
    snprintf(args, sizeof(args),
             "run --api %s --base-url http://127.0.0.1:%d%s --model '%s' --chunk token %s", api,
             e->port, strcmp(api, "ollama") == 0 ? "" : "/v1", model, more);
    return tb_test_run(args);
}

static cJSON *json_of(const struct tb_test_out *o)
{
    cJSON *j = cJSON_Parse(o->so);
    if (j == NULL)
        fail_msg("not JSON: '%s' (stderr '%s')", o->so, o->se);
    return j;
}

static int num(const cJSON *j, const char *k)
{
    return cJSON_GetObjectItem(j, k)->valueint;
}

static void e2e_clean(void **state)
{
    struct e2e e = {0};
    struct tb_test_out o;
    cJSON *j, *st;
    char path[160], *trace;
    (void)state;
    e2e_start(&e);
    /* Anthropic: thinking recorded as reasoning, the key sent as x-api-key
     * and never shown. */
    snprintf(path, sizeof(path), "--json -v --record %s/a.jsonl", e.dir);
    setenv("ANTHROPIC_API_KEY", SECRET, 1);
    o = e2e_run(&e, "anthropic", "mock+reasoning@3", path);
    unsetenv("ANTHROPIC_API_KEY");
    assert_int_equal(o.code, 0);
    j = json_of(&o);
    assert_string_equal(cJSON_GetObjectItem(j, "api")->valuestring, "anthropic");
    assert_int_equal(num(j, "events"), 30);
    assert_int_equal(num(j, "reasoning_events"), 3);
    assert_int_equal(num(j, "usage_tokens"), 33);
    assert_string_equal(cJSON_GetObjectItem(j, "finish_reason")->valuestring, "end_turn");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "error")));
    cJSON_Delete(j);
    assert_null(strstr(o.so, "9c2e71"));
    assert_null(strstr(o.se, "9c2e71"));
    assert_non_null(strstr(o.se, "x-api-key: ***"));
    assert_non_null(strstr(o.se, "anthropic-version: 2023-06-01"));
    snprintf(path, sizeof(path), "%s/a.jsonl", e.dir);
    trace = tb_test_slurp_str(path);
    assert_null(strstr(trace, "9c2e71"));
    assert_non_null(strstr(trace, "\"kind\":\"reasoning\""));
    free(trace);
    tb_test_out_free(&o);
    /* Ollama: NDJSON, the server's durations in the report and trace. */
    snprintf(path, sizeof(path), "--json --record %s/o.jsonl", e.dir);
    o = e2e_run(&e, "ollama", "mock+reasoning@2", path);
    assert_int_equal(o.code, 0);
    j = json_of(&o);
    assert_string_equal(cJSON_GetObjectItem(j, "api")->valuestring, "ollama");
    assert_int_equal(num(j, "events"), 30);
    assert_int_equal(num(j, "reasoning_events"), 2);
    st = cJSON_GetObjectItem(j, "server_timing");
    assert_non_null(st);
    assert_int_equal(num(st, "eval_count"), 32);
    assert_true(cJSON_GetObjectItem(st, "total_s")->valuedouble > 0.02);
    assert_near(cJSON_GetObjectItem(st, "prompt_eval_s")->valuedouble, 0.0, 0.02);
    cJSON_Delete(j);
    tb_test_out_free(&o);
    snprintf(path, sizeof(path), "sim --trace %s/o.jsonl", e.dir);
    o = tb_test_run(path);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    snprintf(path, sizeof(path), "%s/o.jsonl", e.dir);
    trace = tb_test_slurp_str(path);
    assert_non_null(strstr(trace, "\"server\":{\"total_ns\":"));
    assert_non_null(strstr(trace, "\"eval_count\":32"));
    free(trace);
    /* The human report says what the server said. */
    o = e2e_run(&e, "ollama", "mock", "");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "(ollama API)"));
    assert_non_null(strstr(o.so, "server says: total"));
    assert_non_null(strstr(o.so, "eval 30 tokens in"));
    tb_test_out_free(&o);
    e2e_stop(&e);
}

/* Every fault, in both dialects: what the run says and exits with. */
static void e2e_faults(void **state)
{
    static const struct {
        const char *model;
        int code[2];                    /* anthropic, ollama */
        const char *anthropic, *ollama; /* in the JSON "error" message (or warning) */
        int events;                     /* events recorded, -1: unchecked */
    } cases[] = {
        {"mock+stall@1:1", {0, 0}, NULL, NULL, 30},
        {"mock+burst@4", {0, 0}, NULL, NULL, 8},
        {"mock+crlf+comments", {0, 0}, NULL, NULL, 30},
        {"mock+drop@10",
         {3, 3},
         "connection lost after 10 deltas",
         "connection lost after 10 deltas",
         10},
        {"mock+error@7",
         {3, 3},
         "(api_error): Internal server error",
         "(error): Internal server error",
         7},
        {"mock+malformed@4",
         {3, 3},
         "bad event JSON ending at stream byte",
         "bad event JSON ending at stream byte",
         4},
        {"mock+nodone",
         {0, 3},
         "without message_stop (finish_reason end_turn)",
         "before a \"done\": true line",
         30},
        {"mock+status@429",
         {3, 3},
         "HTTP 429: Rate limit reached",
         "HTTP 429: Rate limit reached",
         0},
        {"mock+status@503:html",
         {3, 3},
         "HTTP 503: 503 Service Unavailable",
         "HTTP 503: 503 Service Unavailable",
         0},
        {"mock+html", {3, 3}, "not an event stream", "not an event stream", 0},
    };
    static const char *const apis[] = {"anthropic", "ollama"};
    struct e2e e = {0};
    char bad[1024] = ""; /* the first failure: reported once the server is stopped */
    (void)state;
    e2e_start(&e);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && bad[0] == '\0'; i++) {
        for (size_t a = 0; a < 2 && bad[0] == '\0'; a++) {
            const char *want = a == 0 ? cases[i].anthropic : cases[i].ollama;
            struct tb_test_out o = e2e_run(&e, apis[a], cases[i].model, "--json");
            cJSON *j = cJSON_Parse(o.so), *err = cJSON_GetObjectItem(j, "error");
            const cJSON *m = cJSON_GetObjectItem(err, "message");
            const cJSON *ev = cJSON_GetObjectItem(j, "events");
            const cJSON *un = cJSON_GetObjectItem(j, "underruns");
            if (o.code != cases[i].code[a] || j == NULL)
                snprintf(bad, sizeof(bad), "%s %s: exit %d, stderr '%.300s'", apis[a],
                         cases[i].model, o.code, o.se);
            else if (want != NULL && o.code == 0) {
                /* A warning, not an error: the run succeeded. */
                const cJSON *w = cJSON_GetObjectItem(j, "warning");
                if (!cJSON_IsString(w) || strstr(w->valuestring, want) == NULL)
                    snprintf(bad, sizeof(bad), "%s %s: no warning '%s'", apis[a], cases[i].model,
                             want);
            } else if (want == NULL && !cJSON_IsNull(err))
                snprintf(bad, sizeof(bad), "%s %s: unexpected error", apis[a], cases[i].model);
            else if (want != NULL && (!cJSON_IsString(m) || strstr(m->valuestring, want) == NULL ||
                                      strstr(o.se, want) == NULL))
                snprintf(bad, sizeof(bad), "%s %s: error '%.300s', want '%s'", apis[a],
                         cases[i].model, o.se, want);
            else if (cases[i].events >= 0 && ev->valueint != cases[i].events)
                snprintf(bad, sizeof(bad), "%s %s: %d events, want %d", apis[a], cases[i].model,
                         ev->valueint, cases[i].events);
            else if (strstr(cases[i].model, "stall") != NULL && un->valueint < 1)
                snprintf(bad, sizeof(bad), "%s %s: no underrun", apis[a], cases[i].model);
            cJSON_Delete(j);
            tb_test_out_free(&o);
        }
    }
    e2e_stop(&e);
    if (bad[0] != '\0')
        fail_msg("%s", bad);
}

/* With no base URL the built-in mock speaks the dialect too. */
static void e2e_embedded_and_usage(void **state)
{
    struct tb_test_out o;
    (void)state;
    o = tb_test_run("run --api ollama --synth tps=500,tokens=12,ttft=0.01 -q --json");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "\"events\":12"));
    assert_non_null(strstr(o.so, "\"server_timing\""));
    tb_test_out_free(&o);
    o = tb_test_run("run --api anthropic --synth tps=500,tokens=12,ttft=0.01 -q --json");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "\"usage_tokens\":12"));
    tb_test_out_free(&o);
    tb_test_expect_error("run --api anthropic --base-url http://127.0.0.1:1/v1", 2,
                         "run: --model is required");
    tb_test_expect_error("run --api gemini", 2, "--api: 'gemini' is not chat, completions");
}

/* ---- the credential each dialect sends ---------------------------------- */

/* A one-connection server that records the request head it gets and
 * answers 401 (the run fails; only what it sent matters). */
struct recorder {
    int lfd, port;
    pthread_t th;
    char head[8192];
};

static void *recorder_main(void *arg)
{
    static const char resp[] = "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                               "Content-Length: 37\r\nConnection: close\r\n\r\n"
                               "{\"error\":{\"message\":\"recorded\"}}\r\n\r\n";
    struct recorder *r = arg;
    size_t n = 0;
    int fd = accept(r->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    while (n + 1 < sizeof(r->head) && strstr(r->head, "\r\n\r\n") == NULL) {
        ssize_t k = recv(fd, r->head + n, sizeof(r->head) - 1 - n, 0);
        if (k <= 0)
            break;
        n += (size_t)k;
        r->head[n] = '\0';
    }
    /* If the client went, the head is all that matters. */
    (void)send(fd, resp, sizeof(resp) - 1, MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    {
        char junk[4096];
        while (recv(fd, junk, sizeof(junk), 0) > 0) {
        }
    }
    close(fd);
    return NULL;
}

static void recorder_start(struct recorder *r)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    memset(r, 0, sizeof(*r));
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    r->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(r->lfd >= 0);
    assert_int_equal(bind(r->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(r->lfd, 4), 0);
    assert_int_equal(getsockname(r->lfd, (struct sockaddr *)&sa, &len), 0);
    r->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&r->th, NULL, recorder_main, r), 0);
}

static void recorder_stop(struct recorder *r)
{
    shutdown(r->lfd, SHUT_RDWR); /* an accept() still waiting returns */
    pthread_join(r->th, NULL);
    close(r->lfd);
}

/* How many header lines named `name` (with its colon) the head has; the
 * last one's value in val. */
static int header_count(const char *head, const char *name, char *val, size_t vlen)
{
    size_t nl = strlen(name);
    int n = 0;
    for (const char *p = head; p != NULL && *p != '\0'; p = strstr(p, "\r\n"), p = p ? p + 2 : p) {
        if (strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl, *e = strstr(v, "\r\n");
            while (*v == ' ')
                v++;
            snprintf(val, vlen, "%.*s", (int)(e != NULL ? e - v : (long)strlen(v)), v);
            n++;
        }
    }
    return n;
}

/* run and bench, in every dialect: exactly the dialect's credential
 * reaches the server (Bearer, or x-api-key with anthropic-version; none
 * when no key is given), checked on the head a server recorded.  The key
 * itself is never printed, even when a check fails. */
static void credential_per_dialect(void **state)
{
    static const struct {
        const char *api, *env; /* env NULL: the key comes from --api-key-file */
        int bearer, xkey;      /* expected counts */
        int keyed;             /* a key is given */
    } cases[] = {
        {"chat", "OPENAI_API_KEY", 1, 0, 1},
        {"completions", "OPENAI_API_KEY", 1, 0, 1},
        {"anthropic", "ANTHROPIC_API_KEY", 0, 1, 1},
        {"ollama", NULL, 1, 0, 1},
        {"ollama", NULL, 0, 0, 0},
    };
    static const char *const cmds[] = {"run", "bench"};
    char dir[96], keyfile[160], args[1024], val[512];
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-cred-%d", (int)getpid());
    snprintf(args, sizeof(args), "mkdir -p %s", dir);
    assert_int_equal(system(args), 0);
    snprintf(keyfile, sizeof(keyfile), "%s/key", dir);
    {
        FILE *f = fopen(keyfile, "w");
        assert_non_null(f);
        fprintf(f, "%s\n", SECRET);
        fclose(f);
    }
    for (size_t c = 0; c < 2; c++) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            struct recorder r;
            struct tb_test_out o;
            int nb, nx;
            char what[64];
            snprintf(what, sizeof(what), "%s --api %s%s", cmds[c], cases[i].api,
                     cases[i].keyed ? "" : " (no key)");
            recorder_start(&r);
            if (cases[i].env != NULL)
                setenv(cases[i].env, SECRET, 1);
            snprintf(args, sizeof(args),
                     "%s --api %s --base-url http://127.0.0.1:%d%s --model m -q %s %s%s", cmds[c],
                     cases[i].api, r.port, strcmp(cases[i].api, "ollama") == 0 ? "" : "/v1",
                     c == 1 ? "-c 1 --requests 1" : "",
                     cases[i].env == NULL && cases[i].keyed ? "--api-key-file " : "",
                     cases[i].env == NULL && cases[i].keyed ? keyfile : "");
            o = tb_test_run(args);
            if (cases[i].env != NULL)
                unsetenv(cases[i].env);
            recorder_stop(&r);
            if (strstr(o.so, "TTSBUF-TEST") != NULL || strstr(o.se, "TTSBUF-TEST") != NULL)
                fail_msg("%s: the key was printed", what);
            tb_test_out_free(&o);
            if (strstr(r.head, "\r\n\r\n") == NULL)
                fail_msg("%s: no request head reached the server", what);
            nb = header_count(r.head, "authorization:", val, sizeof(val));
            if (nb != cases[i].bearer)
                fail_msg("%s: %d Authorization headers, want %d", what, nb, cases[i].bearer);
            if (nb == 1 && strcmp(val, "Bearer " SECRET) != 0)
                fail_msg("%s: Authorization is not 'Bearer <the key>'", what);
            nx = header_count(r.head, "x-api-key:", val, sizeof(val));
            if (nx != cases[i].xkey)
                fail_msg("%s: %d x-api-key headers, want %d", what, nx, cases[i].xkey);
            if (nx == 1 && strcmp(val, SECRET) != 0)
                fail_msg("%s: x-api-key is not the key", what);
            assert_int_equal(header_count(r.head, "anthropic-version:", val, sizeof(val)),
                             cases[i].xkey);
        }
    }
    snprintf(args, sizeof(args), "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

int tb_test_api(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(anthropic_stream),
        cmocka_unit_test(ollama_stream),
        cmocka_unit_test(error_events),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(surrogate_halves),
        cmocka_unit_test(surrogate_orphans),
        cmocka_unit_test(wrong_dialect),
        cmocka_unit_test(jsontext_and_usage),
        cmocka_unit_test(error_shapes),
        cmocka_unit_test(request_bodies),
        cmocka_unit_test(table),
        cmocka_unit_test(e2e_clean),
        cmocka_unit_test(e2e_faults),
        cmocka_unit_test(e2e_embedded_and_usage),
        cmocka_unit_test(credential_per_dialect),
    };
    return TB_RUN_GROUP("api", tests);
}
