/*
 * test_servethreads.c - `ttsbuf serve --threads N`: the mock server on
 * several event loops (serve.h: Threads), through the real binary.  A
 * bench level against two loops: every request served, both loops
 * taking a share, the request log one well-formed line per request
 * (distinct ids, seq in file order: one writer at a time), and each
 * request's schedule kept as the server logged it (never early, late by
 * no more than the lateness it measured); the mock TTS answered on each
 * loop (the speech thread hands each loop its own audio back).  Bad
 * --threads values are refused with the other bad options
 * (ttsserve: fault_specs_refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raw_http.h"
#include "tests.h"

#define SPEC_TPS 100.0
#define SPEC_TTFT 0.05
#define SPEC_TOKENS 10
#define REQUESTS 96
#define AT_ONCE 24

/* What serve printed on stderr (tb_test_serve_up's file), once stopped. */
static char *serve_said(void)
{
    char path[96];
    snprintf(path, sizeof(path), "/tmp/ttsbuf-serveup-%d.log", (int)getpid());
    return tb_test_slurp_str(path);
}

/* "N loops took A, B connections": the two counts, their sum returned. */
static unsigned long loops_took(const char *said, unsigned long *a, unsigned long *b)
{
    const char *p = strstr(said, "ttsbuf serve: 2 loops took ");
    if (p == NULL || sscanf(p, "ttsbuf serve: 2 loops took %lu, %lu connections\n", a, b) != 2)
        fail_msg("serve's summary does not say what each loop took: %s", said);
    return *a + *b;
}

/* Stops the server and keeps its log for the schema group; returns it. */
static char *stop_and_keep(const char *path)
{
    size_t n = 0;
    char *text;
    tb_test_serve_down(NULL);
    text = tb_test_slurp_text(path, &n);
    tb_test_collect_bytes("serve_log", "jsonl", text, n);
    return text;
}

/* Every line of the log is whole: a JSON object and its newline, the
 * header first; returns the request lines' count. */
static size_t whole_lines(const char *text)
{
    size_t n = 0;
    const char *p = text, *nl;
    while ((nl = strchr(p, '\n')) != NULL) {
        char *line = strndup(p, (size_t)(nl - p));
        cJSON *o = cJSON_Parse(line);
        if (!cJSON_IsObject(o))
            fail_msg("line %zu is not one JSON object: %.300s", n + 1, line);
        if (n == 0 && cJSON_GetObjectItemCaseSensitive(o, "schema") == NULL)
            fail_msg("the first line is not the header: %.300s", line);
        if (n > 0) {
            const cJSON *seq = cJSON_GetObjectItemCaseSensitive(o, "seq");
            /* One writer at a time: lines come in the order of their seq. */
            if (!cJSON_IsNumber(seq) || seq->valuedouble != (double)n)
                fail_msg("line %zu has seq %s", n + 1, line);
        }
        cJSON_Delete(o);
        free(line);
        n++;
        p = nl + 1;
    }
    if (*p != '\0')
        fail_msg("a line without its newline: %.300s", p);
    return n > 0 ? n - 1 : 0;
}

/* A bench level against two loops: every request served, each loop a
 * share, one whole log line per request with its own id, and each
 * request's last token sent no earlier than due (received + ttft + 9 /
 * tps) and no later than the lateness the server measured allows. */
static void threads_serve_every_request(void **state)
{
    char path[128], args[512], dir[128], *text, *said;
    struct tb_test_slog *v = calloc(REQUESTS + 1, sizeof(*v));
    const double due = SPEC_TTFT + (SPEC_TOKENS - 1) / SPEC_TPS;
    unsigned long a = 0, b = 0;
    struct tb_test_out o;
    size_t n;
    int port;
    (void)state;
    assert_non_null(v);
    snprintf(path, sizeof(path), "/tmp/ttsbuf-servethreads-%d.jsonl", (int)getpid());
    snprintf(args, sizeof(args), "--threads 2 --synth tps=%g,ttft=%g,tokens=%d,jitter=0 --log %s",
             SPEC_TPS, SPEC_TTFT, SPEC_TOKENS, path);
    tb_test_serve_up_draws(args, &port);
    tb_test_tmpdir(dir, sizeof(dir), "servethreads", "bench");
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c %d --requests %d --out %s -q",
             port, AT_ONCE, REQUESTS, dir);
    o = tb_test_run(args);
    if (o.code != 0) /* the default gate: every request succeeded */
        fail_msg("%s: exit %d: %s", args, o.code, o.se);
    tb_test_out_free(&o);
    tb_test_rm_rf(dir);
    text = stop_and_keep(path);
    said = serve_said();
    assert_int_equal(loops_took(said, &a, &b), REQUESTS);
    if (a == 0 || b == 0)
        fail_msg("a loop took no connection: %s", said);
    assert_int_equal(whole_lines(text), REQUESTS);

    n = tb_test_slog_read(path, v, REQUESTS + 1);
    assert_int_equal(n, REQUESTS);
    for (size_t i = 0; i < n; i++) {
        const struct tb_test_slog *l = &v[i];
        assert_string_equal(l->route, "chat");
        assert_true(l->rid[0] != '\0');
        for (size_t k = 0; k < i; k++)
            if (strcmp(v[k].rid, l->rid) == 0)
                fail_msg("request id %s logged twice", l->rid);
        if (!(l->late_max >= 0) || !(l->first_byte >= l->received))
            fail_msg("%s: late_max %g, first byte %g before received %g", l->rid, l->late_max,
                     l->first_byte, l->received);
        /* Timed from its own receipt, whichever loop it was on. */
        if (l->end - l->received < due - 1e-6)
            fail_msg("%s: ended %.6f s after its request, before its last token's %.3f", l->rid,
                     l->end - l->received, due);
        if (l->end - l->received > due + l->late_max + 0.25 * TB_TEST_TIME_SCALE)
            fail_msg("%s: ended %.6f s after its request: its last token was due at %.3f and "
                     "the server logged it at most %.6f s late",
                     l->rid, l->end - l->received, due, l->late_max);
    }
    assert_non_null(strstr(text, "\"end\":\"complete\""));
    assert_null(strstr(text, "\"end\":\"dropped\""));
    assert_null(strstr(text, "\"tokens_unsent\":1"));
    free(said);
    free(text);
    free(v);
    remove(path);
}

/* The mock TTS on two loops: requests one after another go to the loop
 * with the fewest open (round robin among equals), so both loops speak;
 * each answer is the whole audio it announced. */
static void threads_speak_on_each_loop(void **state)
{
    static const char json[] = "{\"model\":\"tts-1\",\"input\":\"Hello there.\",\"voice\":"
                               "\"alloy\",\"response_format\":\"pcm\"}";
    unsigned long a = 0, b = 0;
    char *said;
    int port;
    (void)state;
    tb_test_serve_up("--threads 2", &port);
    for (int i = 0; i < 4; i++) {
        struct raw_reply r;
        char head[2048];
        const char *bytes;
        memset(&r, 0, sizeof(r));
        raw_post(port, "/v1/audio/speech", json, &r);
        assert_int_equal(r.status, 200);
        assert_true(r.head_len < sizeof(head));
        memcpy(head, r.raw, r.head_len);
        head[r.head_len] = '\0';
        bytes = strstr(head, "X-Ttsbuf-Audio-Bytes: ");
        if (bytes == NULL)
            fail_msg("no X-Ttsbuf-Audio-Bytes in %s", head);
        assert_true(r.body_len > 1000);
        assert_int_equal(strtol(bytes + 22, NULL, 10), (long)r.body_len);
        raw_reply_free(&r);
    }
    tb_test_serve_down(NULL);
    said = serve_said();
    assert_int_equal(loops_took(said, &a, &b), 4);
    if (a == 0 || b == 0)
        fail_msg("a loop took no TTS request: %s", said);
    assert_non_null(strstr(said, "mock TTS: 4 responses with audio"));
    free(said);
}

int tb_test_servethreads(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(threads_serve_every_request, tb_test_serve_down),
        cmocka_unit_test_teardown(threads_speak_on_each_loop, tb_test_serve_down),
    };
    return TB_RUN_GROUP("servethreads", tests);
}
