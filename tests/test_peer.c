/*
 * test_peer.c - ttsbuf against an OpenAI-compatible server that someone
 * else wrote: @dwmkerr/mock-llm from npm, at the version pinned in
 * tests/node/package.json (make deps installs it), configured by
 * tests/node/mock-llm.yaml and started here on 127.0.0.1 only.  It
 * echoes the prompt one UTF-16 code unit a chunk, 20 ms apart, so every
 * astral character arrives as two escaped surrogate halves in two
 * events.  `run` and `bench` must rebuild the text, count the events the
 * server sent, and see the first token no sooner than the server's
 * schedule allows; the official openai SDK (tests/node/peer-stream.mjs)
 * reading the same server must get the same text and chunks.  The same
 * server's /v1/completions streams chat chunks: ttsbuf must name the
 * wrong dialect.  And its streamed error must reach the one-line error.
 *
 * The server speaks only the OpenAI chat dialect.  The case is skipped,
 * saying so, only when node is not installed (CI has it).
 */
#include <cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/trace.h"

/* Three astral characters (emoji, CJK extension B), BMP ones, ASCII:
 * 16 UTF-16 code units, so 16 chunks of which 3 are lone high halves. */
#define PROMPT                                                                                     \
    "Hi \xF0\x9F\x98\x80, \xF0\xA0\x80\x80 \xE6\xBC\xA2\xC3\xA9 "                                  \
    "\xF0\x9F\x8E\x89!"
#define UNITS 16
#define ASTRAL 3
#define INTERVAL 0.020 /* chunkIntervalMs in mock-llm.yaml */

struct peer {
    pid_t pid;
    int port;
    char dir[64], base[96];
    const char *node_dir;
};

static void peer_start(struct peer *p)
{
    char main_js[512], conf[512], log[128];
    p->node_dir = getenv("TB_NODEDIR") != NULL ? getenv("TB_NODEDIR") : "tests/node";
    snprintf(main_js, sizeof(main_js), "%s/node_modules/@dwmkerr/mock-llm/dist/main.js",
             p->node_dir);
    if (access(main_js, R_OK) != 0)
        fail_msg("@dwmkerr/mock-llm is missing in %s/node_modules: run `make deps`", p->node_dir);
    snprintf(conf, sizeof(conf), "%s/mock-llm.yaml", p->node_dir);
    snprintf(p->dir, sizeof(p->dir), "/tmp/ttsbuf-peer-%d", (int)getpid());
    snprintf(log, sizeof(log), "mkdir -p %s", p->dir);
    assert_int_equal(tb_test_sh(log), 0);
    snprintf(log, sizeof(log), "%s/server.log", p->dir);
    p->port = tb_test_free_port();
    snprintf(p->base, sizeof(p->base), "http://127.0.0.1:%d/v1", p->port);
    p->pid = fork();
    assert_true(p->pid >= 0);
    if (p->pid == 0) {
        char port[16];
        snprintf(port, sizeof(port), "%d", p->port);
        /* Loopback only: its default is every interface. */
        setenv("HOST", "127.0.0.1", 1);
        setenv("PORT", port, 1);
        if (freopen(log, "w", stdout) == NULL || freopen(log, "a", stderr) == NULL)
            _exit(126);
        execlp("node", "node", main_js, "--config", conf, (char *)NULL);
        _exit(127);
    }
    tb_test_wait_port(p->port);
}

/* The teardown: the server goes even when a check failed. */
static int peer_stop(void **state)
{
    struct peer *p = *state;
    char cmd[128];
    if (p == NULL || p->pid <= 0)
        return 0;
    kill(p->pid, SIGTERM);
    waitpid(p->pid, NULL, 0);
    p->pid = 0;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", p->dir);
    tb_test_sh(cmd);
    return 0;
}

static cJSON *json_file(const char *path)
{
    char *s = tb_test_slurp_str(path);
    cJSON *j = cJSON_Parse(s);
    if (j == NULL)
        fail_msg("%s is not JSON: '%.400s'", path, s);
    free(s);
    return j;
}

static double num(const cJSON *j, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(j, k);
    if (!cJSON_IsNumber(v))
        fail_msg("\"%s\" is not a number", k);
    return v->valuedouble;
}

/* The official SDK's view: text, chunks, first and last chunk times. */
static cJSON *sdk_stream(const struct peer *p)
{
    char cmd[1024], path[128];
    int rc;
    snprintf(path, sizeof(path), "%s/sdk.json", p->dir);
    snprintf(cmd, sizeof(cmd), "node %s/peer-stream.mjs %s '%s' >%s 2>&1", p->node_dir, p->base,
             PROMPT, path);
    rc = tb_test_sh(cmd);
    if (rc != 0) {
        char *out = tb_test_slurp_str(path);
        fail_msg("the openai SDK failed on the peer: %s", out);
    }
    return json_file(path);
}

/* `ttsbuf run` against the peer: the report, and the recorded trace's
 * text and time span. */
static void run_checks(const struct peer *p, const cJSON *sdk)
{
    char cmd[1024], path[160], text[256] = "";
    struct tb_stream s;
    cJSON *j;
    double span, sdk_span = num(sdk, "last") - num(sdk, "ttft");
    snprintf(cmd, sizeof(cmd),
             "'%s' run --base-url %s --model peer --prompt '%s' --json -q --record %s/t.jsonl "
             ">%s/run.json 2>%s/run.err",
             tb_test_bin(), p->base, PROMPT, p->dir, p->dir, p->dir);
    if (tb_test_sh(cmd) != 0) {
        snprintf(path, sizeof(path), "%s/run.err", p->dir);
        fail_msg("ttsbuf run against the peer failed: %s", tb_test_slurp_str(path));
    }
    snprintf(path, sizeof(path), "%s/run.json", p->dir);
    j = json_file(path);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "error")));
    /* Every event the server sent, as the SDK saw them (+ [DONE]); the
     * lone high halves carry no text of their own. */
    assert_int_equal((int)num(j, "sse_events"), (int)num(sdk, "chunks") + 1);
    assert_int_equal((int)num(j, "events"), UNITS - ASTRAL);
    assert_int_equal((int)num(j, "surrogates_replaced"), 0);
    /* Not before the server's first tick. */
    if (!(num(j, "ttft_s") >= INTERVAL * 0.75))
        fail_msg("TTFT %g s, before the server's first chunk at %g s", num(j, "ttft_s"), INTERVAL);
    cJSON_Delete(j);

    tb_stream_init(&s);
    snprintf(path, sizeof(path), "%s/t.jsonl", p->dir);
    assert_int_equal(tb_trace_load_file(path, &s, cmd, sizeof(cmd)), 0);
    for (size_t k = 0; k < s.n; k++)
        strncat(text, tb_stream_text(&s, k), s.ev[k].len);
    assert_string_equal(text, PROMPT);
    assert_string_equal(text, cJSON_GetObjectItem(sdk, "text")->valuestring);
    span = s.ev[s.n - 1].t - s.ev[0].t;
    tb_stream_free(&s);
    /* 15 intervals between the first and last chunk (the last high half
     * is 2 chunks before the end; timers never fire early). */
    print_message("    peer: ttsbuf span %.3f s, SDK span %.3f s (schedule %.3f s)\n", span,
                  sdk_span, (UNITS - 1) * INTERVAL);
    if (span < (UNITS - 2) * INTERVAL * 0.75 || fabs(span - sdk_span) > 0.25)
        fail_msg("first to last event %.3f s; the SDK saw %.3f s; the schedule %.3f s", span,
                 sdk_span, (UNITS - 1) * INTERVAL);
}

/* `ttsbuf bench` against the peer: two requests, every event, no half
 * replaced, TTFT after the first tick. */
static void bench_checks(const struct peer *p)
{
    char cmd[1024], path[160];
    cJSON *j, *l, *ttft;
    FILE *f;
    snprintf(path, sizeof(path), "%s/prompts.jsonl", p->dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"prompt\": \"%s\"}\n", PROMPT);
    fclose(f);
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model peer --prompts %s -c 1 --requests 2 --json -q "
             ">%s/bench.json 2>%s/bench.err",
             tb_test_bin(), p->base, path, p->dir, p->dir);
    if (tb_test_sh(cmd) != 0) {
        snprintf(path, sizeof(path), "%s/bench.err", p->dir);
        fail_msg("ttsbuf bench against the peer failed: %s", tb_test_slurp_str(path));
    }
    snprintf(path, sizeof(path), "%s/bench.json", p->dir);
    j = json_file(path);
    l = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "levels"), 0);
    assert_non_null(l);
    assert_int_equal((int)num(l, "ok"), 2);
    assert_int_equal((int)num(l, "events"), 2 * (UNITS - ASTRAL));
    assert_int_equal((int)num(l, "surrogates_replaced"), 0);
    ttft = cJSON_GetObjectItem(l, "ttft_s");
    assert_non_null(ttft);
    if (!(num(ttft, "min") >= INTERVAL * 0.75))
        fail_msg("bench TTFT min %g s, before the server's first chunk at %g s", num(ttft, "min"),
                 INTERVAL);
    cJSON_Delete(j);
}

/* The peer's /v1/completions streams chat chunks; and its error event. */
static void dialect_and_error_checks(const struct peer *p)
{
    char cmd[1024], path[160], *err;
    int rc;
    snprintf(path, sizeof(path), "%s/e.err", p->dir);
    snprintf(cmd, sizeof(cmd),
             "'%s' run --api completions --base-url %s --model peer --prompt hello -q "
             ">/dev/null 2>%s",
             tb_test_bin(), p->base, path);
    rc = tb_test_sh(cmd);
    err = tb_test_slurp_str(path);
    if (rc != 3 || strstr(err, "has the chat dialect's fields, not those of the completions "
                               "dialect asked for: is --api right?") == NULL)
        fail_msg("run --api completions on a chat stream: exit %d, stderr '%s'", rc, err);
    free(err);
    snprintf(cmd, sizeof(cmd),
             "'%s' run --base-url %s --model peer --prompt error-401 -q >/dev/null 2>%s",
             tb_test_bin(), p->base, path);
    rc = tb_test_sh(cmd);
    err = tb_test_slurp_str(path);
    if (rc != 3 || strstr(err, "(invalid_request_error invalid_api_key): Incorrect API key "
                               "provided.") == NULL)
        fail_msg("the peer's error event: exit %d, stderr '%s'", rc, err);
    free(err);
}

static void mock_llm_from_npm(void **state)
{
    static struct peer p;
    cJSON *sdk;
    *state = &p;
    memset(&p, 0, sizeof(p));
    if (tb_test_sh("command -v node >/dev/null 2>&1") != 0) {
        print_message("    node is not installed: the third-party peer test is skipped\n");
        skip();
    }
    peer_start(&p);
    sdk = sdk_stream(&p);
    assert_string_equal(cJSON_GetObjectItem(sdk, "text")->valuestring, PROMPT);
    assert_int_equal((int)num(sdk, "chunks"), UNITS);
    assert_true(num(sdk, "ttft") >= INTERVAL * 0.75);
    run_checks(&p, sdk);
    bench_checks(&p);
    dialect_and_error_checks(&p);
    cJSON_Delete(sdk);
}

int tb_test_peer(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(mock_llm_from_npm, peer_stop),
    };
    return TB_RUN_GROUP("peer", tests);
}
