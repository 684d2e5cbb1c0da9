/*
 * test_live.c - live runs end to end over real HTTP on loopback: the
 * library's tb_live_run against the mock provider (tb_serve) started in a
 * thread, one case per fault; and the ttsbuf binary's `run` and `serve`
 * commands, including a check that the API key appears in no output.
 */
#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf.h"
#include "ttsbuf/live.h"
#include "ttsbuf/serve.h"

/* Runs one live request against the mock (model may carry faults). */
static void live(const struct tb_test_mock *m, const char *model, double idle, int include_usage,
                 enum tb_api api, struct tb_live_result *r)
{
    struct tb_live_opts o;
    char url[128];
    tb_live_opts_default(&o);
    snprintf(url, sizeof(url), "%s%s", m->base,
             api == TB_API_CHAT ? "/chat/completions" : "/completions");
    o.http.url = url;
    o.http.idle_timeout = idle;
    o.req.api = api;
    o.req.model = model;
    o.req.prompt = "hi";
    o.req.include_usage = include_usage;
    o.sim.seg.policy = TB_CHUNK_TOKEN;
    assert_int_equal(tb_live_run(&o, r, NULL, NULL), 0);
}

/* The recorded stream holds exactly events 0..n-1 of the mock's stream. */
static void holds_first(const struct tb_live_result *r, const struct tb_test_mock *m, size_t n)
{
    if (r->stream.n != n)
        fail_msg("recorded %zu deltas, want %zu (error %s: %s)", r->stream.n, n,
                 tb_reader_error_name(r->error), r->message);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(r->stream.ev[k].len, m->s.ev[k].len);
        assert_memory_equal(tb_stream_text(&r->stream, k), tb_stream_text(&m->s, k),
                            m->s.ev[k].len);
    }
}

static void clean_stream(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_live_result r;
    tb_test_mock_start(&m, 20, 0.05, 0.005, NULL);
    live(&m, "ttsbuf-mock", 10, 1, TB_API_CHAT, &r);
    assert_int_equal(r.error, TB_READER_OK);
    assert_int_equal(r.http_status, 200);
    assert_true(r.done_seen);
    assert_int_equal(r.usage_completion, 20);
    assert_int_equal(r.sim.usage_tokens, 20);
    assert_string_equal(r.finish_reason, "stop");
    holds_first(&r, &m, 20);
    assert_int_equal(r.sim.content_events, 20);
    /* The empty role chunk is not the first token: TTFT is event 0's. */
    assert_true(r.sim.ttft >= 0.05);
    tb_live_result_free(&r);
    tb_test_mock_stop(&m);
}

/* Recorded arrival times follow the server's schedule: each event arrives
 * after it was due, and not much later (a loose bound: this checks the
 * timestamps are taken on arrival, it is not a benchmark). */
static void arrival_times_follow_schedule(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_live_result r;
    double worst = 0;
    tb_test_mock_start(&m, 30, 0.1, 0.01, NULL);
    live(&m, "ttsbuf-mock", 10, 1, TB_API_CHAT, &r);
    assert_int_equal(r.error, TB_READER_OK);
    holds_first(&r, &m, 30);
    for (size_t k = 0; k < 30; k++) {
        double late = r.stream.ev[k].t - m.s.ev[k].t;
        assert_true(late >= 0.0);
        if (late > worst)
            worst = late;
    }
    print_message("    arrival lateness vs schedule: max %.2f ms (includes connect)\n",
                  worst * 1e3);
    assert_true(worst < 0.25);
    tb_live_result_free(&r);
    tb_test_mock_stop(&m);
}

/* The live numbers equal `sim` on the recorded stream: one truth. */
static void live_equals_sim_on_recording(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_live_result r;
    struct tb_sim_result s;
    struct tb_sim_opts o;
    struct tb_clock clk;
    char err[128];
    tb_test_mock_start(&m, 40, 0.05, 0.002, "stall@2:1");
    live(&m, "ttsbuf-mock", 10, 1, TB_API_CHAT, &r);
    assert_int_equal(r.error, TB_READER_OK);
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_TOKEN;
    tb_clock_virtual_init(&clk);
    assert_int_equal(tb_sim_run(&r.stream, &o, &clk, NULL, NULL, &s, err, sizeof(err)), 0);
    assert_int_equal(s.play.chunks, r.sim.play.chunks);
    assert_int_equal(s.play.underruns, r.sim.play.underruns);
    assert_true(s.play.ttfa == r.sim.play.ttfa);
    assert_true(s.play.gap_total == r.sim.play.gap_total);
    assert_true(s.play.min_tps == r.sim.play.min_tps);
    assert_true(s.play.end == r.sim.play.end);
    assert_true(r.sim.play.underruns >= 1); /* the 1 s stall shows */
    tb_live_result_free(&r);
    tb_test_mock_stop(&m);
}

static void expect_fault(const char *faults, size_t n_before, int kind, const char *msg,
                         long status)
{
    struct tb_test_mock m;
    struct tb_live_result r;
    char model[128];
    tb_test_mock_start(&m, 20, 0.02, 0.002, NULL);
    snprintf(model, sizeof(model), "mock+%s", faults);
    live(&m, model, 2, 1, TB_API_CHAT, &r);
    if (r.error != kind || strstr(r.message, msg) == NULL)
        fail_msg("fault %s: error %s '%s'; want %s '%s'", faults, tb_reader_error_name(r.error),
                 r.message, tb_reader_error_name(kind), msg);
    assert_null(strchr(r.message, '\n'));
    if (status >= 0)
        assert_int_equal(r.http_status, status);
    holds_first(&r, &m, n_before);
    assert_int_equal(r.sim.content_events, n_before);
    tb_live_result_free(&r);
    tb_test_mock_stop(&m);
}

static void faults_end_the_run_and_keep_what_came(void **state)
{
    (void)state;
    expect_fault("drop@7", 7, TB_READER_TRANSPORT, "connection lost after 7 deltas", 200);
    expect_fault("error@5", 5, TB_READER_ERROR_EVENT, "the server sent an error event", 200);
    expect_fault("malformed@3", 3, TB_READER_JSON, "bad event JSON ending at stream byte", 200);
    expect_fault("nodone", 20, TB_READER_OK, "", 200);
    expect_fault("status@429", 0, TB_READER_HTTP, "HTTP 429: ", 429);
    expect_fault("status@401", 0, TB_READER_HTTP, "HTTP 401: ", 401);
    expect_fault("status@503:html", 0, TB_READER_HTTP, "HTTP 503: ", 503);
    expect_fault("html", 0, TB_READER_NOT_SSE, "not an event stream", 200);
    expect_fault("stall@4:30", 4, TB_READER_IDLE, "no data for 2 s (--idle-timeout)", 200);
}

static void framing_variants_are_transparent(void **state)
{
    (void)state;
    const char *variants[] = {"crlf", "comments", "burst@3", "crlf+comments+burst@2"};
    for (size_t i = 0; i < 4; i++) {
        struct tb_test_mock m;
        struct tb_live_result r;
        char model[64];
        tb_test_mock_start(&m, 12, 0.01, 0.002, NULL);
        snprintf(model, sizeof(model), "mock+%s", variants[i]);
        live(&m, model, 5, 1, TB_API_CHAT, &r);
        if (r.error != TB_READER_OK)
            fail_msg("%s: %s", variants[i], r.message);
        /* Same text, whatever the framing and grouping. */
        {
            size_t a = 0, b = 0;
            for (size_t k = 0; k < r.stream.n; k++)
                a += r.stream.ev[k].len;
            for (size_t k = 0; k < m.s.n; k++)
                b += m.s.ev[k].len;
            assert_int_equal(a, b);
        }
        assert_int_equal(r.usage_completion, 12);
        tb_live_result_free(&r);
        tb_test_mock_stop(&m);
    }
}

static void reasoning_counted_not_spoken(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_live_result r;
    tb_test_mock_start(&m, 10, 0.01, 0.002, NULL);
    live(&m, "mock+reasoning@4", 5, 1, TB_API_CHAT, &r);
    assert_int_equal(r.error, TB_READER_OK);
    assert_int_equal(r.sim.reasoning_events, 4);
    assert_int_equal(r.sim.content_events, 10);
    assert_true(r.sim.ttft >= r.stream.ev[4].t); /* first content, not reasoning */
    tb_live_result_free(&r);
    tb_test_mock_stop(&m);
}

static void usage_rejected_retried_once(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_live_result r;
    tb_test_mock_start(&m, 8, 0.01, 0.002, NULL);
    live(&m, "mock+reject-usage", 5, 1, TB_API_CHAT, &r);
    assert_int_equal(r.error, TB_READER_OK);
    assert_true(r.usage_retried);
    assert_int_equal(r.usage_completion, -1);
    holds_first(&r, &m, 8);
    tb_live_result_free(&r);
    tb_test_mock_stop(&m);
}

static void legacy_completions(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_live_result r;
    tb_test_mock_start(&m, 9, 0.01, 0.002, NULL);
    live(&m, "ttsbuf-mock", 5, 1, TB_API_COMPLETIONS, &r);
    assert_int_equal(r.error, TB_READER_OK);
    holds_first(&r, &m, 9);
    tb_live_result_free(&r);
    tb_test_mock_stop(&m);
}

static void connection_refused(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_live_result r;
    tb_test_mock_start(&m, 1, 0, 0, NULL);
    snprintf(m.base, sizeof(m.base), "http://127.0.0.1:1/v1"); /* nobody listens there */
    live(&m, "x", 5, 1, TB_API_CHAT, &r);
    assert_int_equal(r.error, TB_READER_TRANSPORT);
    assert_non_null(strstr(r.message, "request failed: "));
    assert_int_equal(r.stream.n, 0);
    tb_live_result_free(&r);
    tb_test_mock_stop(&m);
}

/* ---- the binary ---- */

#define SECRET "sk-ttsbuf-TEST-SECRET-4b1d9e"

/* `run` with a key against `ttsbuf serve`: the report, the trace, the exit
 * code, and the API key in no output at all (stdout, stderr with
 * --verbose, the trace, the JSON). */
static void run_cli_key_never_leaks(void **state)
{
    (void)state;
    char cmd[2048], dir[64];
    char *out, *err, *trace;
    int port, pid;
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-live-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", dir);
    tb_test_sh(cmd);
    snprintf(cmd, sizeof(cmd), "%s/serve.log", dir);
    pid = tb_test_serve_spawn("tps=200,tokens=40,ttft=0.05,seed=3", cmd, &port);
    snprintf(cmd, sizeof(cmd),
             "OPENAI_API_KEY=%s '%s' run --base-url http://127.0.0.1:%d/v1 --model m "
             "--verbose --json --record %s/t.jsonl >%s/out 2>%s/err",
             SECRET, tb_test_bin(), port, dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    tb_test_serve_stop(pid);
    snprintf(cmd, sizeof(cmd), "%s/out", dir);
    out = tb_test_slurp_str(cmd);
    snprintf(cmd, sizeof(cmd), "%s/err", dir);
    err = tb_test_slurp_str(cmd);
    snprintf(cmd, sizeof(cmd), "%s/t.jsonl", dir);
    trace = tb_test_slurp_str(cmd);
    assert_null(strstr(out, SECRET));
    assert_null(strstr(err, SECRET));
    assert_null(strstr(trace, SECRET));
    assert_null(strstr(err, "4b1d9e"));
    assert_non_null(strstr(err, "Authorization: Bearer ***")); /* verbose did log it, masked */
    {
        cJSON *j = cJSON_Parse(out);
        assert_non_null(j);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "provider")), "remote");
        assert_int_equal(cJSON_GetObjectItem(j, "http_status")->valueint, 200);
        assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 40);
        assert_int_equal(cJSON_GetObjectItem(j, "usage_tokens")->valueint, 40);
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "error")));
        cJSON_Delete(j);
    }
    /* The recording replays through sim to the same numbers. */
    snprintf(cmd, sizeof(cmd),
             "'%s' sim --trace %s/t.jsonl --json > %s/sim && python3 -c \"import json,sys; "
             "a=json.load(open('%s/out')); b=json.load(open('%s/sim')); "
             "ks=['ttfa_s','underruns','gap_total_s','min_tps','speedup_needed','end_s','chunks'];"
             "sys.exit(0 if all(a[k]==b[k] for k in ks) else 1)\"",
             tb_test_bin(), dir, dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    free(out);
    free(err);
    free(trace);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
}

/* A failing stream: exit 3, one-line error, partial trace and report. */
static void run_cli_failure_keeps_partial(void **state)
{
    (void)state;
    char cmd[1024], path[96];
    char *trace, *out;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-live-%d.jsonl", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "'%s' run --synth tps=400,tokens=50,ttft=0.02 --fault drop@20 --record %s "
             ">%s.out 2>%s.err",
             tb_test_bin(), path, path, path);
    assert_int_equal(tb_test_sh(cmd), 3);
    trace = tb_test_slurp_str(path);
    {
        size_t lines = 0;
        for (char *p = trace; *p; p++)
            lines += *p == '\n';
        assert_int_equal(lines, 1 + 20 + 1); /* header + the 20 events sent + the end */
    }
    snprintf(cmd, sizeof(cmd), "%s.out", path);
    out = tb_test_slurp_str(cmd);
    /* Cut off, not failed: what arrived, no verdict; the trace says so. */
    assert_non_null(strstr(out, "incomplete: "));
    assert_non_null(strstr(out, " before it was cut at "));
    assert_non_null(strstr(out, "(connection_lost: connection lost after 20 deltas"));
    assert_non_null(strstr(trace, "{\"end\":{\"kind\":\"connection_lost\","));
    free(out);
    snprintf(cmd, sizeof(cmd), "%s.err", path);
    out = tb_test_slurp_str(cmd);
    assert_non_null(strstr(out, "ttsbuf: connection lost after 20 deltas"));
    free(out);
    free(trace);
    snprintf(cmd, sizeof(cmd), "rm -f %s %s.out %s.err", path, path, path);
    tb_test_sh(cmd);
}

/* `ttsbuf serve` as its own process, `run` pointed at it by
 * OPENAI_BASE_URL, faults through the model name; SIGINT stops it. */
static void serve_cli_and_run_cli(void **state)
{
    (void)state;
    char cmd[1024], path[96];
    char *log;
    int port = 0, rc, st, pid;
    cJSON *j;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-serve-%d.log", (int)getpid());
    pid = tb_test_serve_spawn("tps=300,tokens=30,ttft=0.02", path, &port);
    snprintf(cmd, sizeof(cmd),
             "OPENAI_BASE_URL=http://127.0.0.1:%d/v1 '%s' run --model 'mock+stall@2:1' "
             "--chunk token --json >%s.out 2>&1",
             port, tb_test_bin(), path);
    rc = tb_test_sh(cmd);
    snprintf(cmd, sizeof(cmd), "%s.out", path);
    log = tb_test_slurp_str(cmd);
    j = cJSON_Parse(log);
    free(log);
    /* Stop the server before any assertion can end the test. */
    st = tb_test_serve_stop(pid);
    assert_int_equal(rc, 0);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 30);
    assert_true(cJSON_GetObjectItem(j, "underruns")->valueint >= 1);
    cJSON_Delete(j);
    assert_int_equal(st, 0);
    log = tb_test_slurp_str(path);
    assert_non_null(strstr(log, "1 requests"));
    free(log);
    snprintf(cmd, sizeof(cmd), "rm -f %s %s.out", path, path);
    tb_test_sh(cmd);
}

/* Where run and bench send a request: with a key and no base URL the
 * vendor's API (never the mock); the mock with --mock, or with neither,
 * and then the report's first line, the JSON and the trace header say so.
 * The vendor's API is reached through a proxy on a closed loopback port
 * (libcurl's standard https_proxy): no packet leaves the machine. */
static void run_cli_endpoint_resolution(void **state)
{
    (void)state;
    char env[256], args[256], path[64];
    struct tb_test_out o;
    char *trace;
    cJSON *j;
    int port = tb_test_refused_port();
    snprintf(env, sizeof(env),
             "-u ALL_PROXY -u all_proxy NO_PROXY= no_proxy= HTTPS_PROXY=http://127.0.0.1:%d "
             "https_proxy=http://127.0.0.1:%d OPENAI_API_KEY=sk-x",
             port, port);

    /* A key, no base URL: the OpenAI API, a transport failure offline. */
    j = tb_test_run_json(env, "run --model gpt-4o-mini -q --json", 3);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "provider")), "remote");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "base_url")),
                        "https://api.openai.com/v1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "model")), "gpt-4o-mini");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "kind")),
        "transport");
    cJSON_Delete(j);
    /* The human report names the endpoint in its first line. */
    o = tb_test_run_env(env, "run --model gpt-4o-mini");
    assert_int_equal(o.code, 3);
    assert_non_null(strstr(o.so, "at https://api.openai.com/v1 (chat API)"));
    assert_null(strstr(o.so, "mock"));
    tb_test_out_free(&o);

    /* --mock with a key in the environment: the mock, said everywhere. */
    snprintf(path, sizeof(path), "/tmp/ttsbuf-ep-%d.jsonl", (int)getpid());
    snprintf(args, sizeof(args), "run --mock --synth tps=400,tokens=20,ttft=0.01 --record %s",
             path);
    o = tb_test_run_env("OPENAI_API_KEY=sk-x", args);
    assert_int_equal(o.code, 0);
    assert_true(strncmp(o.so, "ttsbuf run: the built-in MOCK provider", 38) == 0);
    tb_test_out_free(&o);
    trace = tb_test_slurp_str(path);
    assert_non_null(strstr(strtok(trace, "\n"), "\"provider\":\"mock\""));
    free(trace);
    remove(path);
    /* Neither key nor URL: the mock, in the JSON too. */
    j = tb_test_run_json(NULL, "run --synth tps=400,tokens=20,ttft=0.01 -q --json", 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "provider")), "mock");
    cJSON_Delete(j);
    tb_test_expect_error("run --mock --base-url http://127.0.0.1:1/v1", 2,
                         "--mock and --base-url exclude each other");
    tb_test_expect_error("run --synth tokens=5 --base-url http://127.0.0.1:1/v1 --model m", 2,
                         "drive the built-in mock");

    /* bench: an endpoint or --mock is required; --mock says so. */
    tb_test_expect_error("bench -c 1", 2, "no endpoint");
    j = tb_test_run_json("OPENAI_API_KEY=sk-x",
                         "bench --mock -c 1 --requests 1 --max-tokens 8 -q --json", 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "provider")), "mock");
    cJSON_Delete(j);
    j = tb_test_run_json(env, "bench --model m -c 1 --requests 1 -q --json", 3);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "base_url")),
                        "https://api.openai.com/v1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "provider")), "remote");
    cJSON_Delete(j);
}

/* A failed request has no verdict: what was not measured is null in JSON
 * and "-" in the report, never 0; what did arrive is shown. */
static void run_cli_failed_request_has_no_verdict(void **state)
{
    (void)state;
    struct tb_test_out o;
    cJSON *j;
    static const char *const unmeasured[] = {"ttft_s", "ttfa_s",  "decode_tps",
                                             "end_s",  "min_tps", "speedup_needed"};
    o = tb_test_run("run --mock --model 'mock+status@429'");
    assert_int_equal(o.code, 3);
    assert_non_null(strstr(o.so, "no verdict: the request failed (http: HTTP 429"));
    assert_non_null(strstr(o.so, "what arrived (the numbers below): 0 events"));
    assert_null(strstr(o.so, "verdict: no gaps"));
    assert_non_null(strstr(o.so, "time to first token         - s"));
    assert_non_null(strstr(o.so, "minimum TPS                 - tokens/s"));
    assert_null(strstr(o.so, "0.00x"));
    tb_test_out_free(&o);
    j = tb_test_run_json(NULL, "run --mock --model 'mock+status@429' -q --json", 3);
    for (size_t i = 0; i < sizeof(unmeasured) / sizeof(unmeasured[0]); i++)
        if (!cJSON_IsNull(cJSON_GetObjectItem(j, unmeasured[i])))
            fail_msg("%s is not null after a failed request", unmeasured[i]);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(j, "preroll_curve"), 0), "min_tps")));
    cJSON_Delete(j);
    /* Cut after 20 events: the first token was measured, the what-if not. */
    j = tb_test_run_json(NULL, "run --synth tps=400,tokens=50,ttft=0.02 --fault drop@20 -q --json",
                         3);
    assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 20);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(j, "ttft_s")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(j, "decode_tps")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "min_tps")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "speedup_needed")));
    cJSON_Delete(j);
}

/* An output that cannot be written fails before the request is sent
 * (the server counts none), in one line, exit 2; two outputs on stdout
 * are refused. */
static void run_cli_outputs_checked_first(void **state)
{
    (void)state;
    static const char *const bad[] = {"--record /nonexistent/a.jsonl", "--svg /nonexistent/a.svg",
                                      "--record /tmp"};
    char cmd[1024], log[96], args[512];
    char *s;
    int port, pid;
    snprintf(log, sizeof(log), "/tmp/ttsbuf-oc-%d.log", (int)getpid());
    pid = tb_test_serve_spawn("tps=300,tokens=20,ttft=0.01", log, &port);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(args, sizeof(args), "run --base-url http://127.0.0.1:%d/v1 --model m -q %s", port,
                 bad[i]);
        tb_test_expect_error(args, 2, strchr(bad[i], ' ') + 1);
    }
    snprintf(args, sizeof(args),
             "run --base-url http://127.0.0.1:%d/v1 --model m --json --record -", port);
    tb_test_expect_error(args, 2, "--json and --record - would both write to stdout");
    assert_int_equal(tb_test_serve_stop(pid), 0);
    s = tb_test_slurp_str(log);
    if (strstr(s, " 0 requests") == NULL)
        fail_msg("the server saw a request: %s", s);
    free(s);
    snprintf(cmd, sizeof(cmd), "rm -f %s", log);
    tb_test_sh(cmd);
}

static void run_cli_bad_usage(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "'%s' run --base-url http://127.0.0.1:1/v1 >/dev/null 2>/tmp/ttsbuf-e-%d; "
             "grep -q 'run: --model is required' /tmp/ttsbuf-e-%d",
             tb_test_bin(), (int)getpid(), (int)getpid());
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd),
             "'%s' run --base-url http://x/v1 --model m --preset demo "
             ">/dev/null 2>&1",
             tb_test_bin());
    assert_int_equal(tb_test_sh(cmd), 2);
    snprintf(cmd, sizeof(cmd), "'%s' run --api-key-file /nonexistent >/dev/null 2>&1",
             tb_test_bin());
    assert_int_equal(tb_test_sh(cmd), 2);
    snprintf(cmd, sizeof(cmd), "'%s' run -H 'no colon' >/dev/null 2>&1", tb_test_bin());
    assert_int_equal(tb_test_sh(cmd), 2);
    snprintf(cmd, sizeof(cmd), "rm -f /tmp/ttsbuf-e-%d", (int)getpid());
    tb_test_sh(cmd);
}

/* The official openai npm SDK streams a chat completion from the mock,
 * the way the TPS article's benchmark does (tests/node/openai-stream.mjs). */
static void openai_sdk_streams_from_mock(void **state)
{
    (void)state;
    struct tb_test_mock m;
    char cmd[1024], path[96];
    const char *dir = getenv("TB_NODEDIR");
    char *out;
    cJSON *j;
    int rc;
    if (dir == NULL)
        dir = "tests/node";
    snprintf(cmd, sizeof(cmd), "%s/node_modules/openai/package.json", dir);
    if (access(cmd, R_OK) != 0)
        fail_msg("the openai npm package is missing in %s/node_modules: run `make test` (or sh "
                 ".ci/deps test)",
                 dir);
    tb_test_mock_start(&m, 25, 0.01, 0.002, NULL);
    snprintf(path, sizeof(path), "/tmp/ttsbuf-sdk-%d.json", (int)getpid());
    snprintf(cmd, sizeof(cmd), "node %s/openai-stream.mjs %s >%s 2>&1", dir, m.base, path);
    rc = tb_test_sh(cmd);
    out = tb_test_slurp_str(path);
    remove(path);
    if (rc != 0) {
        tb_test_mock_stop(&m);
        fail_msg("openai SDK failed: %s", out);
    }
    j = cJSON_Parse(out);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "chunks")->valueint, 25);
    assert_string_equal(cJSON_GetObjectItem(j, "finish")->valuestring, "stop");
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "usage"), "completion_tokens")->valueint, 25);
    {
        /* Exactly the mock's text, in order. */
        const char *text = cJSON_GetObjectItem(j, "text")->valuestring;
        size_t off = 0;
        for (size_t k = 0; k < m.s.n; k++) {
            assert_memory_equal(text + off, tb_stream_text(&m.s, k), m.s.ev[k].len);
            off += m.s.ev[k].len;
        }
        assert_int_equal(strlen(text), off);
    }
    cJSON_Delete(j);
    free(out);
    tb_test_mock_stop(&m);
}

/* The fault matrix at the command line: exit status, the one-line error
 * on stderr, and the recorded trace holding exactly the events sent
 * before the fault (the mock's stream is deterministic). */
static void run_cli_fault_matrix(void **state)
{
    (void)state;
    static const struct {
        const char *fault;
        int code;
        const char *err; /* on stderr */
        int events;      /* in the trace */
    } rows[] = {
        {"drop@10", 3, "ttsbuf: connection lost after 10 deltas", 10},
        {"error@8", 3, "ttsbuf: the server sent an error event", 8},
        {"malformed@5", 3, "ttsbuf: bad event JSON ending at stream byte", 5},
        {"status@429", 3, "ttsbuf: HTTP 429: ", 0},
        {"status@400", 3, "ttsbuf: HTTP 400: ", 0},
        {"status@401", 3, "ttsbuf: HTTP 401: ", 0},
        {"status@403", 3, "ttsbuf: HTTP 403: ", 0},
        {"status@404", 3, "ttsbuf: HTTP 404: ", 0},
        {"status@500", 3, "ttsbuf: HTTP 500: ", 0},
        {"status@503:html", 3, "ttsbuf: HTTP 503: ", 0},
        {"html", 3, "not an event stream", 0},
        {"stall@6:30", 3, "ttsbuf: no data for 1 s (--idle-timeout) after 6 deltas", 6},
        {"reject-usage", 0, "retried once without it", 30},
        {"nodone", 0, "", 30},
        {"crlf+comments", 0, "", 30},
    };
    char dir[64], cmd[1024];
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-fm-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", dir);
    tb_test_sh(cmd);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *err, *trace;
        int code, lines = 0;
        snprintf(cmd, sizeof(cmd),
                 "'%s' run --synth tps=400,tokens=30,ttft=0.02,jitter=0 --fault '%s' "
                 "--idle-timeout 1 --record %s/t.jsonl >%s/out 2>%s/err",
                 tb_test_bin(), rows[i].fault, dir, dir, dir);
        code = tb_test_sh(cmd);
        snprintf(cmd, sizeof(cmd), "%s/err", dir);
        err = tb_test_slurp_str(cmd);
        snprintf(cmd, sizeof(cmd), "%s/t.jsonl", dir);
        trace = tb_test_slurp_str(cmd);
        for (char *p = trace; *p; p++)
            lines += *p == '\n';
        /* header + events (+ a usage line when the server sent usage) + the end */
        if (code != rows[i].code || strstr(err, rows[i].err) == NULL ||
            (lines != 2 + rows[i].events && lines != 3 + rows[i].events))
            fail_msg("--fault %s: exit %d, %d trace lines, stderr '%s'; want exit %d, "
                     "%d events, '%s'",
                     rows[i].fault, code, lines, err, rows[i].code, rows[i].events, rows[i].err);
        free(err);
        free(trace);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
}

/* Ctrl-C during a live run: a clean stop, exit 3, the partial trace and
 * report written. */
static void run_cli_sigint_keeps_partial(void **state)
{
    (void)state;
    char path[96], cmd[512];
    char *trace, *out, *err;
    pid_t pid;
    int st, lines = 0;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-int-%d", (int)getpid());
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char rec[128], o[128], e[128];
        snprintf(rec, sizeof(rec), "%s.jsonl", path);
        snprintf(o, sizeof(o), "%s.out", path);
        snprintf(e, sizeof(e), "%s.err", path);
        if (freopen(o, "w", stdout) == NULL || freopen(e, "w", stderr) == NULL)
            _exit(126);
        execl(tb_test_bin(), tb_test_bin(), "run", "--synth",
              "tps=400,tokens=30,ttft=0.02,jitter=0", "--fault", "stall@12:60", "--record", rec,
              (char *)NULL);
        _exit(127);
    }
    {
        /* The stall is reached 0.05 s into the schedule, once the mock is
         * up (its line on stderr): wait for that line, then 2 s (a slow
         * start, a sanitizer's on a loaded machine, is not the stall). */
        char e[128];
        struct timespec ts = {2, 0};
        snprintf(e, sizeof(e), "%s.err", path);
        tb_test_wait_text(e, "built-in mock", 30.0);
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGINT);
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    snprintf(cmd, sizeof(cmd), "%s.jsonl", path);
    trace = tb_test_slurp_str(cmd);
    for (char *p = trace; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1 + 12 + 1); /* header, events, the end: interrupted */
    assert_non_null(strstr(trace, "{\"end\":{\"kind\":\"interrupted\","));
    snprintf(cmd, sizeof(cmd), "%s.out", path);
    out = tb_test_slurp_str(cmd);
    assert_non_null(strstr(out, " before it was cut at "));
    assert_non_null(strstr(out, "(interrupted: interrupted after 12 deltas"));
    snprintf(cmd, sizeof(cmd), "%s.err", path);
    err = tb_test_slurp_str(cmd);
    assert_non_null(strstr(err, "ttsbuf: interrupted after 12 deltas"));
    free(trace);
    free(out);
    free(err);
    snprintf(cmd, sizeof(cmd), "rm -f %s.jsonl %s.out %s.err", path, path, path);
    tb_test_sh(cmd);
}

/* Every request option of `run`, against the built-in mock; and their bad
 * values, each a one-line error and exit 2. */
static void run_cli_request_options(void **state)
{
    (void)state;
    char cmd[1024], dir[64], path[96];
    char *out;
    cJSON *j;
    FILE *f;
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-ro-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", dir);
    tb_test_sh(cmd);
    snprintf(path, sizeof(path), "%s/m.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("[{\"role\":\"system\",\"content\":\"brief\"},{\"role\":\"user\",\"content\":\"hi\"}]",
          f);
    fclose(f);
    /* chat with --messages, the rest of the request options */
    snprintf(cmd, sizeof(cmd),
             "'%s' run --synth tps=500,tokens=20,ttft=0.01 --messages %s --max-tokens 12 "
             "--temperature 0.3 --body-json '{\"top_p\":0.5}' --no-usage -H 'X-Test: 1' "
             "--timeout 30 --connect-timeout 5 --idle-timeout 10 --json -q >%s/out 2>%s/err",
             tb_test_bin(), path, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/out", dir);
    out = tb_test_slurp_str(cmd);
    j = cJSON_Parse(out);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 12);  /* --max-tokens */
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "usage_tokens"))); /* --no-usage */
    assert_string_equal(cJSON_GetObjectItem(j, "finish_reason")->valuestring, "length");
    cJSON_Delete(j);
    free(out);
    /* the legacy API */
    snprintf(cmd, sizeof(cmd),
             "'%s' run --synth tps=500,tokens=15,ttft=0.01 --api completions --prompt hello "
             "--json -q >%s/out 2>%s/err",
             tb_test_bin(), dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/out", dir);
    out = tb_test_slurp_str(cmd);
    j = cJSON_Parse(out);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "api")->valuestring, "completions");
    assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 15);
    assert_int_equal(cJSON_GetObjectItem(j, "usage_tokens")->valueint, 15);
    cJSON_Delete(j);
    free(out);
    /* ... which sends one prompt: chat messages are refused before any
     * request (they used to be dropped for an empty prompt). */
    snprintf(cmd, sizeof(cmd),
             "'%s' run --synth tps=500,tokens=15,ttft=0.01 --api completions --messages %s "
             "-q >%s/out 2>%s/err",
             tb_test_bin(), path, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 2);
    snprintf(cmd, sizeof(cmd), "%s/err", dir);
    out = tb_test_slurp_str(cmd);
    assert_non_null(strstr(out, "ttsbuf: run: --messages needs a chat API"));
    assert_null(strchr(out, '\n') == NULL ? NULL : strchr(strchr(out, '\n') + 1, '\n'));
    free(out);
    /* bad values */
    {
        static const struct {
            const char *args, *err;
        } bad[] = {
            {"--api chatty", "--api: 'chatty' is not chat, completions, anthropic or ollama"},
            {"--temperature 3", "--temperature: '3' is outside 0..2"},
            {"--max-tokens 0", "--max-tokens: '0' is outside"},
            {"--idle-timeout -1", "--idle-timeout: '-1' is outside"},
            {"--body-json '[1]'", "--body-json: not a JSON object"},
            {"--fault bogus@1", "--fault: "},
            {"--insecure --base-url http://127.0.0.1:1/v1 --model m --preset demo",
             "drive the built-in mock"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            int code;
            snprintf(cmd, sizeof(cmd), "'%s' run %s -q >%s/out 2>%s/err", tb_test_bin(),
                     bad[i].args, dir, dir);
            code = tb_test_sh(cmd);
            snprintf(cmd, sizeof(cmd), "%s/err", dir);
            out = tb_test_slurp_str(cmd);
            if ((code != 2 && code != 3) || strstr(out, bad[i].err) == NULL)
                fail_msg("run %s: exit %d, stderr '%s'; want '%s'", bad[i].args, code, out,
                         bad[i].err);
            free(out);
        }
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
}

int tb_test_live(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clean_stream),
        cmocka_unit_test(arrival_times_follow_schedule),
        cmocka_unit_test(live_equals_sim_on_recording),
        cmocka_unit_test(faults_end_the_run_and_keep_what_came),
        cmocka_unit_test(framing_variants_are_transparent),
        cmocka_unit_test(reasoning_counted_not_spoken),
        cmocka_unit_test(usage_rejected_retried_once),
        cmocka_unit_test(legacy_completions),
        cmocka_unit_test(connection_refused),
        cmocka_unit_test(run_cli_key_never_leaks),
        cmocka_unit_test(run_cli_failure_keeps_partial),
        cmocka_unit_test(serve_cli_and_run_cli),
        cmocka_unit_test(run_cli_bad_usage),
        cmocka_unit_test(run_cli_endpoint_resolution),
        cmocka_unit_test(run_cli_failed_request_has_no_verdict),
        cmocka_unit_test(run_cli_outputs_checked_first),
        cmocka_unit_test(run_cli_fault_matrix),
        cmocka_unit_test(run_cli_request_options),
        cmocka_unit_test(run_cli_sigint_keeps_partial),
        cmocka_unit_test(openai_sdk_streams_from_mock),
    };
    signal(SIGPIPE, SIG_IGN);
    return TB_RUN_GROUP("live", tests);
}
