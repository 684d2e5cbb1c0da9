/*
 * test_servelog.c - `ttsbuf serve --log FILE`, the mock server's request
 * log (serve.h, src/cli/serve_log.c), through the real binary: a line
 * for each way a request ends (complete, client_closed, fault, error,
 * TTS), the request id carried or refused, no key in the log, a log that
 * cannot be written; and close detection: a client that closes between
 * tokens (the next 500 ms away), in a stall, in the prefill or while its
 * body is due is seen by the server within 10 ms of the close (both
 * clocks CLOCK_MONOTONIC: the log's closed_s against the time the test
 * read just before close()).  Every log is kept for the schema group.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lag.h"
#include "raw_http.h"
#include "tests.h"
#include "ttsbuf/clock.h"

/* The close is seen within this (s); the sanitizers slow the server. */
#define CLOSE_SEEN_S (0.010 * TB_TEST_TIME_SCALE)

static void log_path(char *buf, size_t len, const char *tag)
{
    snprintf(buf, len, "/tmp/ttsbuf-servelog-%s-%d.jsonl", tag, (int)getpid());
}

/* A request with extra header lines (each ending in CRLF; "" none). */
static char *req_with(const char *path, const char *headers, const char *json)
{
    size_t n = strlen(json) + strlen(path) + strlen(headers) + 200;
    char *q = malloc(n);
    assert_non_null(q);
    snprintf(q, n,
             "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n%s"
             "Content-Length: %zu\r\n\r\n%s",
             path, headers, strlen(json), json);
    return q;
}

/* One whole exchange; returns the status. */
static int exchange(int port, const char *path, const char *headers, const char *json)
{
    struct raw_reply r;
    char *q = req_with(path, headers, json);
    int st;
    memset(&r, 0, sizeof(r));
    raw_exchange(port, q, strlen(q), &r); /* parsed too */
    st = r.status;
    raw_reply_free(&r);
    free(q);
    return st;
}

/* The log's lines parsed (at most max); returns the count. */
static size_t log_lines(const char *path, cJSON **out, size_t max)
{
    char *text = tb_test_slurp_str(path), *p = text, *nl;
    size_t n = 0;
    while (n < max && (nl = strchr(p, '\n')) != NULL) {
        *nl = '\0';
        out[n] = cJSON_Parse(p);
        if (out[n] == NULL)
            fail_msg("%s: line %zu is not JSON: %.200s", path, n + 1, p);
        n++;
        p = nl + 1;
    }
    if (*p != '\0')
        fail_msg("%s: a line without its newline: %.200s", path, p);
    free(text);
    return n;
}

static void lines_free(cJSON **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(v[i]);
}

/* The line whose request_id is id, or fails. */
static cJSON *line_of(cJSON **v, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(v[i], "request_id");
        if (cJSON_IsString(r) && strcmp(r->valuestring, id) == 0)
            return v[i];
    }
    fail_msg("no log line for request id %s", id);
    return NULL;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("\"%s\" is not a number", key);
    return v->valuedouble;
}

static int is_null(const cJSON *o, const char *key)
{
    return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

static void expect_str(const cJSON *o, const char *key, const char *want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || strcmp(v->valuestring, want) != 0)
        fail_msg("\"%s\" is %s, wanted \"%s\"", key,
                 cJSON_IsString(v) ? v->valuestring : "not a string", want);
}

/* Waits (up to 3 s) until the log holds a line with this request id:
 * lines are flushed as requests end. */
static void wait_line(const char *path, const char *id)
{
    char needle[128];
    snprintf(needle, sizeof(needle), "\"request_id\":\"%s\"", id);
    if (!tb_test_wait_text(path, needle, 3.0))
        fail_msg("%s: no line for %s after 3 s", path, id);
}

/* Stops the server, keeps its log for the schema group. */
static void stop_and_keep(const char *path)
{
    size_t n = 0;
    char *text;
    tb_test_serve_down(NULL);
    text = tb_test_slurp_text(path, &n);
    tb_test_collect_bytes("serve_log", "jsonl", text, n);
    free(text);
}

/* A request that ends each way, and the header. */
static void lines_for_each_end(void **state)
{
    char path[128], args[512], *text;
    cJSON *v[32], *l;
    size_t n;
    int port;
    (void)state;
    log_path(path, sizeof(path), "ends");
    snprintf(args, sizeof(args), "--synth tps=200,tokens=10,ttft=0.01,jitter=0 --log %s", path);
    tb_test_serve_up(args, &port);
    assert_int_equal(exchange(port, "/v1/chat/completions", "X-Ttsbuf-Request-Id: done-1\r\n",
                              "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\","
                              "\"content\":\"twelve bytes\"}]}"),
                     200);
    assert_int_equal(exchange(port, "/v1/messages", "X-Ttsbuf-Request-Id: drop-1\r\n",
                              "{\"model\":\"m+drop@3\",\"stream\":true,\"max_tokens\":100,"
                              "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"),
                     200);
    assert_int_equal(exchange(port, "/v1/chat/completions", "X-Ttsbuf-Request-Id: st-1\r\n",
                              "{\"model\":\"m+status@429\",\"messages\":[{\"role\":\"user\","
                              "\"content\":\"hi\"}]}"),
                     429);
    assert_int_equal(exchange(port, "/v1/nowhere", "X-Ttsbuf-Request-Id: lost-1\r\n", "{}"), 404);
    assert_int_equal(exchange(port, "/v1/chat/completions", "X-Ttsbuf-Request-Id: body-1\r\n",
                              "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\","
                              "\"content\":\"hi\"}]}"),
                     200);
    assert_int_equal(exchange(port, "/v1/audio/speech", "X-Ttsbuf-Request-Id: tts-1\r\n",
                              "{\"model\":\"tts-1\",\"input\":\"Hello, w\\u00f6rld.\",\"voice\":"
                              "\"alloy\",\"response_format\":\"pcm\"}"),
                     200);
    wait_line(path, "tts-1");
    stop_and_keep(path);

    n = log_lines(path, v, 32);
    assert_int_equal(n, 7);
    /* The header. */
    text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(v[0], "schema"));
    assert_string_equal(text, "{\"name\":\"ttsbuf.serve_log\",\"version\":2}");
    free(text);
    expect_str(v[0], "command", "serve");
    expect_str(v[0], "clock", "CLOCK_MONOTONIC");
    expect_str(cJSON_GetObjectItemCaseSensitive(v[0], "source"), "kind", "synth");
    for (size_t i = 1; i < n; i++)
        assert_int_equal((int)num(v[i], "seq"), (int)i);

    l = line_of(v, n, "done-1");
    expect_str(l, "route", "chat");
    expect_str(l, "end", "complete");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "stream")));
    assert_int_equal((int)num(l, "http_status"), 200);
    assert_int_equal((int)num(l, "prompt_tokens"), 3); /* 12 bytes / 4 */
    assert_int_equal((int)num(l, "tokens_sent"), 10);
    assert_int_equal((int)num(l, "tokens_planned"), 10);
    assert_int_equal((int)num(l, "tokens_unsent"), 0);
    assert_true(is_null(l, "closed_s"));
    assert_true(is_null(l, "tts_chars"));
    assert_true(num(l, "received_s") <= num(l, "first_byte_s"));
    assert_true(num(l, "first_byte_s") <= num(l, "end_s"));
    /* The last token is due 0.01 + 9 / 200 s after the request. */
    assert_true(num(l, "end_s") - num(l, "received_s") >= 0.05);
    assert_true(num(l, "bytes_sent") > 1000);

    l = line_of(v, n, "drop-1");
    expect_str(l, "route", "anthropic");
    expect_str(l, "end", "fault");
    assert_int_equal((int)num(l, "tokens_sent"), 3);
    assert_int_equal((int)num(l, "tokens_planned"), 3);

    l = line_of(v, n, "st-1");
    expect_str(l, "end", "fault");
    assert_int_equal((int)num(l, "http_status"), 429);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(l, "stream")));
    assert_true(is_null(l, "tokens_sent")); /* answered before any schedule */

    l = line_of(v, n, "lost-1");
    assert_true(is_null(l, "route"));
    expect_str(l, "end", "error");
    assert_int_equal((int)num(l, "http_status"), 404);
    assert_true(is_null(l, "tokens_sent"));

    l = line_of(v, n, "body-1");
    expect_str(l, "end", "complete");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(l, "stream")));
    assert_int_equal((int)num(l, "tokens_sent"), 4); /* max_tokens */
    assert_int_equal((int)num(l, "tokens_planned"), 4);

    l = line_of(v, n, "tts-1");
    expect_str(l, "route", "tts_openai");
    expect_str(l, "end", "complete");
    assert_int_equal((int)num(l, "tts_chars"), 13); /* code points, not bytes */
    assert_true(num(l, "audio_bytes_sent") > 1000);
    assert_true(num(l, "audio_bytes_sent") == num(l, "audio_bytes_planned"));
    assert_true(num(l, "bytes_sent") > num(l, "audio_bytes_sent"));
    assert_true(is_null(l, "tokens_sent"));
    lines_free(v, n);
    remove(path);
}

/* Sends a streamed request and reads until `events` SSE data lines have
 * come (0: the response head); returns the connection. */
static int open_stream(int port, const char *id, const char *model, const char *content, int stream,
                       int events)
{
    char hdr[128], json[512], buf[8192];
    char *q;
    size_t have = 0;
    int fd = raw_connect(port);
    snprintf(hdr, sizeof(hdr), "X-Ttsbuf-Request-Id: %s\r\n", id);
    snprintf(
        json, sizeof(json),
        "{\"model\":\"%s\",\"stream\":%s,\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}]}",
        model, stream ? "true" : "false", content);
    q = req_with("/v1/chat/completions", hdr, json);
    raw_send(fd, q, strlen(q));
    free(q);
    if (!stream)
        return fd;
    for (;;) {
        int seen = 0;
        const char *p;
        ssize_t r;
        buf[have] = '\0';
        if (strstr(buf, "\r\n\r\n") != NULL) {
            for (p = buf; (p = strstr(p, "data: ")) != NULL; p++)
                seen++;
            if (seen >= events + (events > 0)) /* the role chunk first */
                return fd;
        }
        if (have + 1 >= sizeof(buf))
            fail_msg("%s: no %d events in %zu bytes", id, events, have);
        r = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
        if (r <= 0)
            fail_msg("%s: the stream ended before %d events", id, events);
        have += (size_t)r;
    }
}

/* Closes fd; returns when (CLOCK_MONOTONIC s), read just before. */
static double close_now(int fd)
{
    double t = (double)tb_clock_mono_ns() / 1e9;
    close(fd);
    return t;
}

/* The server saw the close within CLOSE_SEEN_S (and the wake-up delay
 * the probe of lag.h measured meanwhile: the server's loop is woken by
 * the close), and stopped the stream there with `sent` of `planned`
 * tokens. */
static void expect_closed(cJSON **v, size_t n, const char *id, double t_close, int sent,
                          int planned, double lag)
{
    cJSON *l = line_of(v, n, id);
    double seen = num(l, "closed_s") - t_close;
    print_message("servelog: %s: the server saw the close %.3f ms after it\n", id, seen * 1e3);
    expect_str(l, "end", "client_closed");
    if (!(seen >= 0 && seen <= CLOSE_SEEN_S + lag))
        fail_msg("%s: closed_s - client close = %.6f s, wanted 0..%.3f (the machine's wake-up "
                 "delay %.6f s)",
                 id, seen, CLOSE_SEEN_S + lag, lag);
    assert_true(num(l, "end_s") == num(l, "closed_s"));
    assert_int_equal((int)num(l, "tokens_sent"), sent);
    assert_int_equal((int)num(l, "tokens_planned"), planned);
    assert_int_equal((int)num(l, "tokens_unsent"), planned - sent);
}

/* Tokens 500 ms apart: a close between them, in a 5 s stall, in a 1 s
 * prefill, and while a whole body is due, each seen at once. */
static void close_seen_promptly(void **state)
{
    char path[128], args[512], big[96];
    cJSON *v[16];
    size_t n;
    double t_between, t_stall, t_prefill, t_body, lag;
    int port, fd;
    (void)state;
    log_path(path, sizeof(path), "close");
    /* Token k at 0.1 + 0.5 k s; prefill 0.05 s per input token. */
    snprintf(args, sizeof(args),
             "--synth tps=2,tokens=10,ttft=0.1,jitter=0 --prefill-per-token 0.05 --log %s", path);
    tb_test_serve_up(args, &port);
    tb_test_lag_start();

    fd = open_stream(port, "between", "m", "hi", 1, 2);
    t_between = close_now(fd);
    fd = open_stream(port, "stall", "m+stall@2:5", "hi", 1, 2);
    t_stall = close_now(fd);
    /* 80 bytes: 20 input tokens, 1 s of prefill before token 0. */
    memset(big, 'x', 80);
    big[80] = '\0';
    fd = open_stream(port, "prefill", "m", big, 1, 0);
    nanosleep(&(struct timespec){0, 200L * 1000 * 1000}, NULL);
    t_prefill = close_now(fd);
    fd = open_stream(port, "body", "m", "hi", 0, 0);
    nanosleep(&(struct timespec){0, 300L * 1000 * 1000}, NULL);
    t_body = close_now(fd);
    wait_line(path, "body");
    lag = tb_test_lag_stop();
    stop_and_keep(path);

    n = log_lines(path, v, 16);
    assert_int_equal(n, 5);
    expect_closed(v, n, "between", t_between, 2, 10, lag);
    expect_closed(v, n, "stall", t_stall, 2, 10, lag);
    expect_closed(v, n, "prefill", t_prefill, 0, 10, lag);
    expect_closed(v, n, "body", t_body, 0, 10, lag);
    assert_int_equal((int)num(line_of(v, n, "prefill"), "prompt_tokens"), 20);
    lines_free(v, n);
    remove(path);
}

/* 65 characters: one over the cap. */
#define ID65                                                                                       \
    "X-Ttsbuf-Request-Id: a234567890123456789012345678901234567890123456789012345678901234X\r\n"

/* A request id is a short token: a valid one is logged, anything else
 * gets 400 and its bytes are not. */
static void request_id_checked(void **state)
{
    static const char *const bad[] = {
        "X-Ttsbuf-Request-Id: has space\r\n", "X-Ttsbuf-Request-Id: <script>\r\n",
        "X-Ttsbuf-Request-Id: quote\"d\r\n",  "X-Ttsbuf-Request-Id: caf\xc3\xa9\r\n",
        "X-Ttsbuf-Request-Id:\r\n",           ID65,
    };
    static const char *const leak[] = {"has space", "<script>", "quote", "caf"};
    const char *ok64 = "a234567890123456789012345678901234567890123456789012345678901234";
    char path[128], args[256], hdr[128], *text;
    cJSON *v[16], *l;
    size_t n;
    int port;
    (void)state;
    log_path(path, sizeof(path), "rid");
    snprintf(args, sizeof(args), "--synth tps=1000,tokens=3,ttft=0 --log %s", path);
    tb_test_serve_up(args, &port);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (exchange(port, "/v1/chat/completions", bad[i],
                     "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}") !=
            400)
            fail_msg("request id header %s was not refused", bad[i]);
    snprintf(hdr, sizeof(hdr), "x-ttsbuf-request-id:  %s \r\n", ok64);
    assert_int_equal(
        exchange(port, "/v1/chat/completions", hdr,
                 "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"),
        200);
    wait_line(path, ok64);
    stop_and_keep(path);
    n = log_lines(path, v, 16);
    assert_int_equal(n, 1 + sizeof(bad) / sizeof(bad[0]) + 1);
    for (size_t i = 1; i + 1 < n; i++) {
        assert_true(is_null(v[i], "request_id"));
        expect_str(v[i], "end", "error");
        assert_int_equal((int)num(v[i], "http_status"), 400);
    }
    l = line_of(v, n, ok64);
    expect_str(l, "end", "complete");
    lines_free(v, n);
    text = tb_test_slurp_str(path);
    for (size_t i = 0; i < sizeof(leak) / sizeof(leak[0]); i++)
        if (strstr(text, leak[i]) != NULL)
            fail_msg("the log holds a refused id's bytes (%s):\n%s", leak[i], text);
    /* The 65-character id's prefix appears only as the valid id. */
    assert_non_null(strstr(text, ok64));
    assert_null(strstr(text, "1234X"));
    free(text);
    remove(path);
}

/* Keys sent in headers (the mock accepts any) never reach the log, nor
 * the TTS's own key. */
static void key_never_logged(void **state)
{
    char path[128], keyf[128], args[512], *text;
    FILE *f;
    int port;
    (void)state;
    log_path(path, sizeof(path), "key");
    snprintf(keyf, sizeof(keyf), "/tmp/ttsbuf-servelog-key-%d", (int)getpid());
    f = fopen(keyf, "w");
    assert_non_null(f);
    fputs("tts-KEYSECRET-77\n", f);
    assert_int_equal(fclose(f), 0);
    snprintf(args, sizeof(args), "--synth tps=1000,tokens=3,ttft=0 --tts-api-key-file %s --log %s",
             keyf, path);
    tb_test_serve_up(args, &port);
    assert_int_equal(exchange(port, "/v1/chat/completions",
                              "Authorization: Bearer sk-KEYSECRET-11\r\n"
                              "X-Ttsbuf-Request-Id: k1\r\n",
                              "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\","
                              "\"content\":\"x\"}]}"),
                     200);
    assert_int_equal(exchange(port, "/v1/messages",
                              "x-api-key: sk-ant-KEYSECRET-22\r\nX-Ttsbuf-Request-Id: k2\r\n",
                              "{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\","
                              "\"content\":\"x\"}]}"),
                     200);
    assert_int_equal(
        exchange(port, "/v1/audio/speech",
                 "Authorization: Bearer tts-KEYSECRET-77\r\nX-Ttsbuf-Request-Id: k3\r\n",
                 "{\"model\":\"tts-1\",\"input\":\"Hi.\",\"voice\":\"alloy\","
                 "\"response_format\":\"pcm\"}"),
        200);
    assert_int_equal(exchange(port, "/v1/audio/speech",
                              "Authorization: Bearer tts-KEYSECRET-wrong\r\n"
                              "X-Ttsbuf-Request-Id: k4\r\n",
                              "{\"model\":\"tts-1\",\"input\":\"Hi.\",\"voice\":\"alloy\","
                              "\"response_format\":\"pcm\"}"),
                     401);
    wait_line(path, "k4");
    stop_and_keep(path);
    text = tb_test_slurp_str(path);
    assert_non_null(strstr(text, "\"request_id\":\"k3\""));
    if (strstr(text, "KEYSECRET") != NULL || strstr(text, "Bearer") != NULL)
        fail_msg("a key is in the log:\n%s", text);
    free(text);
    remove(path);
    remove(keyf);
}

/* --log -: the lines on stdout, the header first. */
static void log_to_stdout(void **state)
{
    char path[128], args[512], *text;
    int port;
    (void)state;
    log_path(path, sizeof(path), "stdout");
    snprintf(args, sizeof(args), "--synth tps=1000,tokens=3,ttft=0 --log - >%s", path);
    tb_test_serve_up(args, &port);
    assert_int_equal(
        exchange(port, "/v1/chat/completions", "X-Ttsbuf-Request-Id: out-1\r\n",
                 "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"),
        200);
    wait_line(path, "out-1");
    stop_and_keep(path);
    text = tb_test_slurp_str(path);
    assert_int_equal(strncmp(text, "{\"schema\":{\"name\":\"ttsbuf.serve_log\"", 36), 0);
    free(text);
    remove(path);
}

/* A log that cannot be made is a usage error, before anything is bound;
 * one whose writes fail ends the server with exit 3. */
static void log_unwritable(void **state)
{
    (void)state;
    tb_test_expect_error("serve --listen 127.0.0.1:0 --log /nonexistent-ttsbuf-dir/x.jsonl", 2,
                         "--log: /nonexistent-ttsbuf-dir/x.jsonl: No such file or directory");
    tb_test_expect_error("serve --listen 127.0.0.1:0 --log /tmp", 2, "--log: /tmp: Is a directory");
    tb_test_expect_error("serve --listen 127.0.0.1:0 --log", 2, "--log");
    /* One that cannot be written is a runtime failure. */
    tb_test_expect_error("serve --listen 127.0.0.1:0 --log /dev/full", 3,
                         "--log: /dev/full: No space left on device");
}

/* ---- streams that differ by request (serve.h's Streams) ---- */

#define DRAW_SPEC "tps=300,ttft=0.01,tokens=30,jitter=0.5,seed=11"
#define DRAW_N 8

/* The text a trace's events carry, joined (owned). */
static char *trace_text(const char *path)
{
    char *t = tb_test_slurp_str(path), *save = NULL, *out = calloc(1, strlen(t) + 1);
    size_t n = 0;
    assert_non_null(out);
    for (char *l = strtok_r(t, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
        cJSON *j = strncmp(l, "{\"t\":", 5) == 0 ? cJSON_Parse(l) : NULL;
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, "text");
        if (cJSON_IsString(x)) { /* never longer than the line that holds it */
            size_t k = strlen(x->valuestring);
            memcpy(out + n, x->valuestring, k + 1);
            n += k;
        }
        cJSON_Delete(j);
    }
    free(t);
    return out;
}

#define TEXT_MAX 2048

/* `bench` of DRAW_N requests against the server on port, each request's
 * text by its id into texts[id] (ids once each: "" before). */
static void bench_texts(int port, const char *tag, char texts[][TEXT_MAX])
{
    char dir[128], args[512], path[256];
    cJSON *v[DRAW_N + 1];
    struct tb_test_out o;
    size_t n;
    tb_test_tmpdir(dir, sizeof(dir), "servelog", tag);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 4 --requests %d --out %s -q",
             port, DRAW_N, dir);
    o = tb_test_run(args);
    if (o.code != 0)
        fail_msg("%s: exit %d: %s", args, o.code, o.se);
    tb_test_out_free(&o);
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    n = tb_test_jsonl_records(path, v, DRAW_N + 1);
    assert_int_equal(n, DRAW_N);
    for (size_t i = 0; i < n; i++) {
        int id = (int)num(v[i], "id");
        char *t;
        assert_true(id >= 0 && id < DRAW_N && texts[id][0] == '\0');
        tb_test_rec_trace(dir, v[i], path, sizeof(path));
        t = trace_text(path);
        assert_true(strlen(t) > 0 && strlen(t) < TEXT_MAX);
        memcpy(texts[id], t, strlen(t) + 1);
        free(t);
        cJSON_Delete(v[i]);
    }
    tb_test_rm_rf(dir);
}

static size_t distinct(char texts[][TEXT_MAX])
{
    size_t d = 0;
    for (size_t i = 0; i < DRAW_N; i++) {
        int seen = 0;
        for (size_t k = 0; k < i; k++)
            seen |= strcmp(texts[k], texts[i]) == 0;
        d += !seen;
    }
    return d;
}

/* The log's header names the seed and the mode; each request line names
 * its stream's seed (distinct per request), or null with one stream. */
static void log_seeds(const char *path, int per_request)
{
    cJSON *v[32];
    size_t n = log_lines(path, v, 32), seeded = 0;
    const cJSON *src;
    assert_true(n >= 1);
    src = cJSON_GetObjectItemCaseSensitive(v[0], "source");
    assert_int_equal((int)num(src, "seed"), 11);
    expect_str(src, "streams", per_request ? "per_request" : "same");
    for (size_t i = 1; i < n; i++) {
        const cJSON *sd = cJSON_GetObjectItemCaseSensitive(v[i], "seed");
        if (!per_request) {
            assert_true(cJSON_IsNull(sd));
            continue;
        }
        assert_true(cJSON_IsNumber(sd));
        for (size_t k = 1; k < i; k++)
            assert_true(num(v[k], "seed") != sd->valuedouble);
        seeded++;
    }
    assert_true(per_request ? seeded == DRAW_N + 1 : n == DRAW_N + 2);
    lines_free(v, n);
}

/* A bench level against serve has a stream per request by default, the
 * same again from a server of the same seed (request by request), and
 * one stream with --same-stream; a request without an id, the first,
 * streams the source itself, as sim plays it. */
static void streams_per_request(void **state)
{
    static char a[DRAW_N][TEXT_MAX], b[DRAW_N][TEXT_MAX], c[DRAW_N][TEXT_MAX];
    char path[128], args[512], tr[128], *first, *own;
    struct tb_test_out o;
    int port;
    (void)state;
    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    memset(c, 0, sizeof(c));
    log_path(path, sizeof(path), "draws");
    snprintf(tr, sizeof(tr), "/tmp/ttsbuf-servelog-draws-%d.trace", (int)getpid());
    snprintf(args, sizeof(args), "--synth " DRAW_SPEC " --log %s", path);
    tb_test_serve_up_draws(args, &port);
    bench_texts(port, "d1", a);
    snprintf(args, sizeof(args), "run --base-url http://127.0.0.1:%d/v1 --model m -q --record %s",
             port, tr);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    first = trace_text(tr);
    stop_and_keep(path);
    log_seeds(path, 1);
    if (distinct(a) < DRAW_N / 2)
        fail_msg("%zu distinct streams among %d requests", distinct(a), DRAW_N);
    snprintf(args, sizeof(args), "sim --synth " DRAW_SPEC " --record %s", tr);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    own = trace_text(tr);
    assert_string_equal(first, own); /* the first request without an id: the source's stream */

    snprintf(args, sizeof(args), "--synth " DRAW_SPEC " --log %s", path);
    tb_test_serve_up_draws(args, &port);
    bench_texts(port, "d2", b);
    stop_and_keep(path);
    for (size_t i = 0; i < DRAW_N; i++)
        assert_string_equal(a[i], b[i]); /* the same seed, the same stream per request */

    snprintf(args, sizeof(args), "--synth " DRAW_SPEC " --same-stream --log %s", path);
    tb_test_serve_up_draws(args, &port);
    bench_texts(port, "d3", c);
    snprintf(args, sizeof(args), "run --base-url http://127.0.0.1:%d/v1 --model m -q", port);
    o = tb_test_run(args);
    tb_test_out_free(&o);
    stop_and_keep(path);
    log_seeds(path, 0);
    assert_int_equal(distinct(c), 1);
    assert_string_equal(c[0], own);
    free(first);
    free(own);
    remove(path);
    remove(tr);
}

/* serve's closing summary counts a client that closed early with the
 * word its log uses, client_closed, apart from the ones it dropped. */
static void summary_says_client_closed(void **state)
{
    char errlog[128], *text;
    int port, pid, fd;
    (void)state;
    snprintf(errlog, sizeof(errlog), "/tmp/ttsbuf-servelog-sum-%d.err", (int)getpid());
    pid = tb_test_serve_spawn("tps=5,ttft=0.01,tokens=50,jitter=0", errlog, &port);
    fd = open_stream(port, "cc-1", "m", "hi", 1, 2);
    close(fd);
    /* One more exchange: the loop has seen the close by its answer. */
    assert_int_equal(exchange(port, "/v1/chat/completions", "",
                              "{\"model\":\"m\",\"max_tokens\":1,\"messages\":[{\"role\":"
                              "\"user\",\"content\":\"hi\"}]}"),
                     200);
    assert_int_equal(tb_test_serve_stop(pid), 0);
    text = tb_test_slurp_str(errlog);
    if (strstr(text, " 1 client_closed, 0 dropped;") == NULL)
        fail_msg("serve's summary: %s", text);
    free(text);
    remove(errlog);
}

int tb_test_servelog(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(lines_for_each_end, tb_test_serve_down),
        cmocka_unit_test_teardown(close_seen_promptly, tb_test_serve_down),
        cmocka_unit_test_teardown(request_id_checked, tb_test_serve_down),
        cmocka_unit_test_teardown(key_never_logged, tb_test_serve_down),
        cmocka_unit_test_teardown(log_to_stdout, tb_test_serve_down),
        cmocka_unit_test(log_unwritable),
        cmocka_unit_test_teardown(streams_per_request, tb_test_serve_down),
        cmocka_unit_test(summary_says_client_closed),
    };
    return TB_RUN_GROUP("servelog", tests);
}
