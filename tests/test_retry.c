/*
 * test_retry.c - a provider's concurrency limit and the client's retries,
 * through the real binary on 127.0.0.1: `serve --max-inflight N` (and
 * --tts-max-inflight) answers a request over N in flight with 429,
 * Retry-After and the dialect's rate-limit error, counts it in its stop
 * summary and its --log, on one loop or several; `bench --retry` against
 * it: none (the refusals are the records' errors, with the server's
 * message), after (every wait is what Retry-After said, and each retry
 * reached the server no sooner: judged against the server's own log of
 * the refusals, not the test's clock), exp (each wait within
 * [0, BASE x 2^k], the same for the same seed, as the library draws it);
 * the openai npm SDK's own retries honour our Retry-After;
 * bad values refused with one line, exit 2.  Logs and records are kept
 * for the schema group.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "raw_http.h"
#include "tests.h"
#include "ttsbuf/bench.h"

/* A 1 s answer: the first of -c 4 is still in flight when the others come. */
#define SHORT "--synth tps=20,ttft=0.05,tokens=20,jitter=0"
#define CHAT "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"

static void path_of(char *buf, size_t len, const char *tag, const char *ext)
{
    snprintf(buf, len, "/tmp/ttsbuf-retry-%s-%d.%s", tag, (int)getpid(), ext);
}

/* A streamed chat request left open (its response under way): its fd. */
static int hold_stream(int port, const char *path, const char *json)
{
    struct raw_reply r;
    char *q = raw_post_req(path, json);
    int fd = raw_connect(port);
    /* Not inherited by a command the case starts: its close is the test's. */
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    memset(&r, 0, sizeof(r));
    raw_send(fd, q, strlen(q));
    free(q);
    if (raw_read(fd, &r, 0) <= 0) /* its head: the server has taken it */
        fail_msg("no response to the held request");
    if (strncmp(r.raw, "HTTP/1.1 200", 12) != 0)
        fail_msg("the held request: %.100s", r.raw);
    raw_reply_free(&r);
    return fd;
}

static void keep(const char *what, const char *ext, const char *path)
{
    size_t n = 0;
    char *text = tb_test_slurp_text(path, &n);
    tb_test_collect_bytes(what, ext, text, n);
    free(text);
}

/* The server's stop summary (its stderr), once it has stopped. */
static char *summary(void)
{
    char log[96];
    snprintf(log, sizeof(log), "/tmp/ttsbuf-serveup-%d.log", (int)getpid());
    return tb_test_slurp_str(log);
}

/* Over the cap, each dialect gets 429 with Retry-After and its own
 * rate-limit error; the held stream's end frees its place; the summary
 * and the log count the refusals, the log with each one's stream flag. */
static void serve_refuses_over_inflight(void **state)
{
    static const struct {
        const char *path, *json, *shape;
    } rows[] = {
        {"/v1/chat/completions", CHAT,
         "{\"error\":{\"message\":\"Rate limit reached for requests: at most 1 in flight at once "
         "(ttsbuf serve --max-inflight). Please try again in 2s.\",\"type\":\"requests\","
         "\"param\":null,\"code\":\"rate_limit_exceeded\"}}"},
        {"/v1/messages",
         "{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
         "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Rate limit "
         "reached for requests: at most 1 in flight at once (ttsbuf serve --max-inflight). Please "
         "try again in 2s.\"}}"},
        {"/api/chat", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
         "{\"error\":\"Rate limit reached for requests: at most 1 in flight at once (ttsbuf serve "
         "--max-inflight). Please try again in 2s.\"}"},
    };
    char log[128], args[256], *text;
    cJSON *v[8];
    size_t n;
    int port, fd;
    (void)state;
    path_of(log, sizeof(log), "serve", "jsonl");
    snprintf(args, sizeof(args),
             "--synth tps=5,ttft=0.01,tokens=50,jitter=0 --max-inflight 1 --retry-after 2 "
             "--log %s",
             log);
    tb_test_serve_up(args, &port);
    fd = hold_stream(port, "/v1/chat/completions", CHAT);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct raw_reply r;
        memset(&r, 0, sizeof(r));
        raw_post(port, rows[i].path, rows[i].json, &r);
        assert_int_equal(r.status, 429);
        assert_raw_has(r.raw, "\r\nRetry-After: 2\r\n");
        assert_string_equal(r.body, rows[i].shape);
        raw_reply_free(&r);
    }
    close(fd); /* the held stream ends: its place is free once the server has seen it */
    if (!tb_test_wait_text(log, "\"end\":\"client_closed\"", 5.0))
        fail_msg("%s: the held stream's close not logged in 5 s", log);
    {
        struct raw_reply r;
        memset(&r, 0, sizeof(r));
        raw_post(port, "/v1/chat/completions",
                 "{\"model\":\"m\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\","
                 "\"content\":\"hi\"}]}",
                 &r);
        assert_int_equal(r.status, 200);
        raw_reply_free(&r);
    }
    tb_test_serve_down(NULL);
    text = summary();
    if (strstr(text, "max-inflight 1: ") == NULL ||
        strstr(text, " completion requests refused (429)") == NULL)
        fail_msg("serve's summary: %s", text);
    free(text);
    n = tb_test_jsonl_with(log, "refused_over", v, 8);
    assert_true(n >= 3);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(tb_test_str(v[i], "refused_over"), "max_inflight");
        assert_int_equal((int)tb_test_num(v[i], "retry_after_s"), 2);
        assert_int_equal((int)tb_test_num(v[i], "http_status"), 429);
        assert_string_equal(tb_test_str(v[i], "end"), "error");
        /* what the request asked: CHAT streams, Ollama streams by default,
         * the Messages request does not */
        assert_int_equal(tb_test_is_true(v[i], "stream"),
                         strcmp(tb_test_str(v[i], "route"), "anthropic") != 0);
    }
    tb_test_json_free(v, n);
    keep("serve_log", "jsonl", log);
    remove(log);
}

/* --tts-max-inflight: a TTS request while one is waiting for its speech
 * gets 429 with Retry-After in the dialect's shape. */
static void serve_refuses_tts_over_inflight(void **state)
{
    static const char tts[] =
        "{\"model\":\"tts-1\",\"input\":\"Hello there.\",\"voice\":\"alloy\",\"response_format\":"
        "\"pcm\"}";
    struct raw_reply r;
    char *text;
    int port, fd;
    (void)state;
    tb_test_serve_up("--tts-latency 3 --tts-max-inflight 1", &port);
    {
        char *q = raw_post_req("/v1/audio/speech", tts);
        fd = raw_connect(port);
        raw_send(fd, q, strlen(q));
        free(q);
    }
    /* Its first byte is 3 s away: ask until the server has read it. */
    for (int k = 0;; k++) {
        memset(&r, 0, sizeof(r));
        raw_post(port, "/v1/audio/speech", tts, &r);
        if (r.status == 429)
            break;
        raw_reply_free(&r);
        if (k == 20)
            fail_msg("no 429 while a TTS request was in flight");
    }
    assert_raw_has(r.raw, "\r\nRetry-After: 1\r\n");
    assert_raw_has(r.body, "\"type\":\"requests\"");
    assert_raw_has(r.body, "at most 1 in flight at once (ttsbuf serve --tts-max-inflight)");
    raw_reply_free(&r);
    close(fd);
    tb_test_serve_down(NULL);
    text = summary();
    if (strstr(text, "tts-max-inflight 1: ") == NULL)
        fail_msg("serve's summary: %s", text);
    free(text);
}

/* bench -c 4 against --max-inflight 1 (threads loops), up to 10 retries
 * (--retry-max, which --retry none refuses); returns bench's exit code;
 * the records in dir. */
static int bench_against(int port, const char *retry, const char *dir, const char *seed)
{
    char args[768];
    struct tb_test_out o;
    int code;
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 4 --requests 4 -q --force "
             "--seed %s --retry %s%s --out %s",
             port, seed, retry, strcmp(retry, "none") != 0 ? " --retry-max 10" : "", dir);
    o = tb_test_run(args);
    code = o.code;
    tb_test_out_free(&o);
    return code;
}

/* The records of a bench --out dir (those with an id), at most max. */
static size_t records(const char *dir, cJSON **v, size_t max)
{
    char path[256];
    size_t n;
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    n = tb_test_jsonl_with(path, "id", v, max);
    keep("bench_records", "jsonl", path);
    return n;
}

/* --retry none: the three over the cap fail with 429 and the server's
 * message; the level's summary counts three refusals, no retry. */
static void retry_none(const char *dir, int port)
{
    cJSON *v[8];
    size_t n, failed = 0;
    assert_int_equal(bench_against(port, "none", dir, "1"), 1); /* the default gate failed */
    n = records(dir, v, 8);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(v[i], "error");
        if (cJSON_IsNull(e))
            continue;
        failed++;
        assert_int_equal((int)tb_test_num(v[i], "http_status"), 429);
        assert_raw_has(tb_test_str(e, "message"),
                       "HTTP 429: Rate limit reached for requests: at most 1 "
                       "in flight at once (ttsbuf serve --max-inflight)");
        assert_int_equal((int)tb_test_num(v[i], "refusals"), 1);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v[i], "retry_waits_s")),
                         0);
    }
    assert_int_equal(failed, 3);
    tb_test_json_free(v, n);
}

/* The server's log lines of request rid, in seq order (the file's). */
static size_t log_of(cJSON **all, size_t n, const char *rid, cJSON **out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(all[i], "request_id");
        if (cJSON_IsString(r) && strcmp(r->valuestring, rid) == 0)
            out[k++] = all[i];
    }
    return k;
}

/* The server's log lines once every one of the run before is written: a
 * connection's line goes out as the server closes it, which a busy
 * machine may do after bench has ended; the count is taken when it held
 * still for 0.2 s (at most 10 s). */
static size_t log_settled(const char *log, cJSON **lg, size_t max)
{
    size_t n = tb_test_jsonl_with(log, "seq", lg, max), m;
    const struct timespec pause = {0, 200000000L};
    for (int i = 0; i < 50; i++) {
        tb_test_json_free(lg, n);
        nanosleep(&pause, NULL);
        m = tb_test_jsonl_with(log, "seq", lg, max);
        if (m == n)
            return m;
        n = m;
    }
    return n;
}

/* --retry after: every request succeeds; each recorded wait is what the
 * server's Retry-After said, and in the server's log each retry of a
 * request was received no sooner than its refusal's end + Retry-After. */
static void retry_after(const char *dir, int port, const char *log)
{
    cJSON *v[8], *lg[64], *mine[16];
    size_t n, nl, before, refusals = 0;
    before = log_settled(log, lg, 64); /* the run before's, with the same ids */
    tb_test_json_free(lg, before);
    assert_int_equal(bench_against(port, "after", dir, "1"), 0);
    n = records(dir, v, 8);
    nl = log_settled(log, lg, 64);
    tb_test_json_free(lg, before);
    memmove(lg, lg + before, (nl - before) * sizeof(cJSON *));
    nl -= before;
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(v[i], "retry_waits_s");
        char rid[32];
        size_t k, m;
        assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(v[i], "error")));
        snprintf(rid, sizeof(rid), "r%d", (int)tb_test_num(v[i], "id"));
        m = log_of(lg, nl, rid, mine);
        if (w == NULL) {
            assert_int_equal(m, 1); /* never refused */
            continue;
        }
        assert_int_equal((size_t)cJSON_GetArraySize(w), m - 1);
        assert_int_equal((int)tb_test_num(v[i], "refusals"), (int)(m - 1));
        for (k = 0; k + 1 < m; k++) {
            double ra = tb_test_num(mine[k], "retry_after_s");
            double wait = cJSON_GetArrayItem(w, (int)k)->valuedouble;
            assert_int_equal((int)tb_test_num(mine[k], "http_status"), 429);
            if (wait < ra)
                fail_msg("%s: wait %g s before retry %zu, Retry-After said %g", rid, wait, k, ra);
            if (tb_test_num(mine[k + 1], "received_s") < tb_test_num(mine[k], "end_s") + ra)
                fail_msg("%s: retry %zu received %.6f s, its refusal ended %.6f s + %g", rid, k,
                         tb_test_num(mine[k + 1], "received_s"), tb_test_num(mine[k], "end_s"), ra);
            refusals++;
        }
        assert_int_equal((int)tb_test_num(mine[m - 1], "http_status"), 200);
    }
    assert_true(refusals >= 3);
    tb_test_json_free(v, n);
    tb_test_json_free(lg, nl);
}

/* --retry exp: each wait within [0, min(MAX, BASE x 2^k)], the library's
 * draw for (seed, id, k); the same seed gives the same waits. */
static void retry_exp(const char *dir, int port)
{
    const struct tb_bench_retry r = {TB_BENCH_RETRY_EXP, 0.1, 0.5, 10};
    cJSON *v[8];
    size_t n, waits = 0;
    for (int run = 0; run < 2; run++) {
        /* Its waits are short beside the 1 s answers: a request may give up
         * (the gate then fails, exit 1); its waits are still the draws. */
        int code = bench_against(port, "exp:0.1,0.5", dir, "7");
        assert_true(code == 0 || code == 1);
        n = records(dir, v, 8);
        assert_int_equal(n, 4);
        for (size_t i = 0; i < n; i++) {
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(v[i], "retry_waits_s"), *e;
            uint64_t id = (uint64_t)tb_test_num(v[i], "id");
            unsigned k = 0;
            cJSON_ArrayForEach(e, w)
            {
                double top = fmin(0.5, 0.1 * ldexp(1.0, (int)k));
                if (!(e->valuedouble >= 0 && e->valuedouble <= top))
                    fail_msg("r%llu: wait %g before retry %u, not in [0, %g]",
                             (unsigned long long)id, e->valuedouble, k, top);
                if (fabs(e->valuedouble - tb_bench_retry_wait(&r, 7, id, k, -1)) > 1e-12)
                    fail_msg("r%llu: wait %.17g before retry %u, the draw is %.17g",
                             (unsigned long long)id, e->valuedouble, k,
                             tb_bench_retry_wait(&r, 7, id, k, -1));
                k++;
                waits++;
            }
        }
        tb_test_json_free(v, n);
    }
    assert_true(waits >= 6);
    /* A different seed, different draws. */
    assert_true(tb_bench_retry_wait(&r, 7, 1, 0, -1) != tb_bench_retry_wait(&r, 8, 1, 0, -1));
}

/* The summary's options.retry, as unformatted JSON ("" when absent):
 * the policy is one of the options that must match for merge and that
 * compare names when it differs. */
static void assert_retry_option(const char *dir, const char *want)
{
    char path[256], *text, *got;
    cJSON *root, *r;
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    text = tb_test_slurp_str(path);
    root = cJSON_Parse(text);
    assert_non_null(root);
    r = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "options"),
                                         "retry");
    got = r != NULL ? cJSON_PrintUnformatted(r) : NULL;
    if (strcmp(got != NULL ? got : "", want) != 0)
        fail_msg("options.retry is '%s', want '%s'", got != NULL ? got : "", want);
    cJSON_free(got);
    cJSON_Delete(root);
    free(text);
}

static void bench_retries(void **state)
{
    char dir[128], log[128], args[256];
    int port;
    (void)state;
    path_of(dir, sizeof(dir), "bench", "d");
    path_of(log, sizeof(log), "bench", "jsonl");
    snprintf(args, sizeof(args), SHORT " --max-inflight 1 --threads 2 --log %s", log);
    tb_test_serve_up(args, &port);
    retry_none(dir, port);
    assert_retry_option(dir, "");
    retry_after(dir, port, log);
    assert_retry_option(dir, "{\"policy\":\"after\",\"max_retries\":10}");
    retry_exp(dir, port);
    assert_retry_option(dir,
                        "{\"policy\":\"exp\",\"base_s\":0.1,\"max_s\":0.5,\"max_retries\":10}");
    tb_test_serve_down(NULL);
    keep("serve_log", "jsonl", log);
    {
        char sum[256];
        snprintf(sum, sizeof(sum), "%s/summary.json", dir);
        keep("bench_summary", "json", sum);
    }
    remove(log);
    tb_test_rm_rf(dir);
}

/* Software others wrote: the openai npm SDK's own retries honour our
 * 429's Retry-After (tests/node/openai-retry.mjs): its request refused
 * while another stream is in flight, then answered; in the server's log
 * the retry came no sooner than the refusal's end + Retry-After. */
static void openai_sdk_honours_retry_after(void **state)
{
    char log[128], args[256], cmd[768], out[128], *text;
    cJSON *v[16], *refused = NULL, *ok = NULL;
    const char *dir = getenv("TB_NODEDIR");
    size_t n;
    int port, fd, rc;
    (void)state;
    if (dir == NULL)
        dir = "tests/node";
    path_of(log, sizeof(log), "sdk", "jsonl");
    path_of(out, sizeof(out), "sdk", "out");
    /* A 100 s stream holds the one place until the SDK has been refused. */
    snprintf(args, sizeof(args),
             "--synth tps=20,ttft=0.05,tokens=2000,jitter=0 --max-inflight 1 --retry-after 2 "
             "--log %s",
             log);
    tb_test_serve_up(args, &port);
    fd = hold_stream(port, "/v1/chat/completions", CHAT);
    snprintf(cmd, sizeof(cmd),
             "(node %s/openai-retry.mjs http://127.0.0.1:%d/v1 >%s 2>&1; echo \"exit $?\" >>%s) "
             "</dev/null >/dev/null 2>&1 &",
             dir, port, out, out);
    assert_int_equal(tb_test_sh(cmd), 0);
    if (!tb_test_wait_text(log, "\"refused_over\":\"max_inflight\"", 30.0))
        fail_msg("%s: the SDK's request not refused in 30 s", log);
    close(fd); /* the place is free: the SDK's retry is answered */
    if (!tb_test_wait_text(out, "exit ", 30.0))
        fail_msg("the openai SDK did not end in 30 s");
    text = tb_test_slurp_str(out);
    rc = strstr(text, "exit 0") != NULL;
    if (!rc || strstr(text, "\"chars\":") == NULL)
        fail_msg("the openai SDK: %s", text);
    free(text);
    tb_test_serve_down(NULL);
    n = tb_test_jsonl_with(log, "seq", v, 16);
    for (size_t i = 0; i < n; i++) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(v[i], "stream");
        if (!cJSON_IsFalse(st))
            continue; /* the held stream */
        if ((int)tb_test_num(v[i], "http_status") == 429 && refused == NULL)
            refused = v[i];
        else if ((int)tb_test_num(v[i], "http_status") == 200)
            ok = v[i];
    }
    if (refused == NULL || ok == NULL)
        fail_msg("%s: no refusal then answer of the SDK's request", log);
    if (tb_test_num(ok, "received_s") <
        tb_test_num(refused, "end_s") + tb_test_num(refused, "retry_after_s"))
        fail_msg("the SDK retried at %.6f s, its refusal ended %.6f s, Retry-After %g s",
                 tb_test_num(ok, "received_s"), tb_test_num(refused, "end_s"),
                 tb_test_num(refused, "retry_after_s"));
    tb_test_json_free(v, n);
    remove(log);
    remove(out);
}

static void bad_values(void **state)
{
    (void)state;
    tb_test_expect_error("bench --mock --retry foo", 2,
                         "--retry: 'foo' is not none, after or exp[:BASE,MAX]");
    tb_test_expect_error("bench --mock --retry exp:0,-1", 2,
                         "--retry: 'exp:0,-1': exp takes BASE,MAX seconds with 0 < BASE <= MAX");
    tb_test_expect_error("bench --mock --retry exp:1", 2, "--retry: 'exp:1': exp takes BASE,MAX");
    tb_test_expect_error("bench --mock --retry-max 0", 2, "--retry-max");
    tb_test_expect_error("bench --mock --retry-max 11", 2, "--retry-max");
    tb_test_expect_error("serve --max-inflight 0", 2, "--max-inflight");
    tb_test_expect_error("serve --max-inflight -1", 2, "--max-inflight");
    tb_test_expect_error("serve --tts-max-inflight 0", 2, "--tts-max-inflight");
    tb_test_expect_error("serve --retry-after 0", 2, "--retry-after");
    tb_test_expect_error("serve --retry-after 2", 2,
                         "serve: --retry-after is what a 429 over --max-inflight or "
                         "--tts-max-inflight says: give one of them");
    tb_test_expect_error("bench --mock --requests 1 --retry-max 3", 2,
                         "bench: --retry-max bounds the retries of --retry after or exp");
    tb_test_expect_error("bench --mock --requests 1 --retry none --retry-max 3", 2,
                         "with --retry none (the default) nothing is retried");
}

int tb_test_retry(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(serve_refuses_over_inflight, tb_test_serve_down),
        cmocka_unit_test_teardown(serve_refuses_tts_over_inflight, tb_test_serve_down),
        cmocka_unit_test_teardown(bench_retries, tb_test_serve_down),
        cmocka_unit_test_teardown(openai_sdk_honours_retry_after, tb_test_serve_down),
        cmocka_unit_test(bad_values),
    };
    return TB_RUN_GROUP("retry", tests);
}
