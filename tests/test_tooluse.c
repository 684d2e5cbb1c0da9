/*
 * test_tooluse.c - calls that use tools (bench_calls.h, Tool calls): the
 * tool exchange each dialect sends (api.h, tools_json), then `ttsbuf
 * bench --conversations` against `ttsbuf serve --tool-call-rate 1` in
 * every chat dialect: the model's call answered after the drawn tool
 * latency with the result in the dialect's shape (the server's log says
 * so), the answer spoken, tool_s and the filler's effect in the records,
 * and the latency parts summing to v2v_s exactly; the call sent back
 * carries the arguments the model streamed (serve's log has both).  Bad
 * values of the options exit 2 with one line.  With a real TTS:
 * test_toolfill.c.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lag.h"
#include "tests.h"
#include "ttsbuf/api.h"
#include "ttsbuf/bench_calls.h"
#include "ttsbuf/convo.h"
#include "ttsbuf/svg.h"

#define TOOL_WAIT 0.3 /* --tool-latency, s */
/* The loop's overhead a busy machine may add to the wait: the stream's
 * end read, the timer's wake-up, the send. */
#define LOOP_LAG (0.25 * TB_TEST_TIME_SCALE)

static const char tools_json[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"forecast\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"when\":{\"type\":\"string\"}}}}}]";
static const char exchange[] =
    "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Rain?\"},"
    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":"
    "\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"when\\\":\\\"now\\\"}"
    "\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"sunny\"}]";

static cJSON *body_of(enum tb_api api)
{
    struct tb_api_request q = {.api = api,
                               .model = "m",
                               .messages_json = exchange,
                               .max_tokens = -1,
                               .temperature = -1,
                               .tools_json = tools_json};
    char *out = NULL, err[256];
    cJSON *j;
    assert_int_equal(tb_api_request_body(&q, &out, err, sizeof(err)), 0);
    j = cJSON_Parse(out);
    assert_non_null(j);
    free(out);
    return j;
}

static const cJSON *at(const cJSON *o, const char *path)
{
    char key[64];
    while (o != NULL && *path != '\0') {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof(key), "%.*s", (int)n, path);
        o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(key))
                             : cJSON_GetObjectItemCaseSensitive(o, key);
        path += n + (path[n] == '.');
    }
    if (o == NULL)
        fail_msg("no %s", path);
    return o;
}

static void str_at(const cJSON *o, const char *path, const char *want)
{
    const cJSON *v = at(o, path);
    if (!cJSON_IsString(v) || strcmp(v->valuestring, want) != 0)
        fail_msg("%s is not \"%s\"", path, want);
}

/* The tools and the exchange, as each dialect's documentation shows them. */
static void exchange_per_dialect(void **state)
{
    cJSON *j;
    (void)state;
    /* OpenAI: as given. */
    j = body_of(TB_API_CHAT);
    str_at(j, "tools.0.function.name", "get_weather");
    str_at(j, "messages.2.tool_calls.0.id", "call_1");
    str_at(j, "messages.3.role", "tool");
    str_at(j, "messages.3.tool_call_id", "call_1");
    cJSON_Delete(j);
    /* Anthropic: tools {name, input_schema}; tool_use and tool_result blocks. */
    j = body_of(TB_API_ANTHROPIC);
    str_at(j, "system", "Be brief.");
    str_at(j, "tools.0.name", "get_weather");
    str_at(j, "tools.0.description", "forecast");
    str_at(j, "tools.0.input_schema.type", "object");
    assert_null(cJSON_GetObjectItem(at(j, "tools.0"), "function"));
    str_at(j, "messages.1.role", "assistant");
    str_at(j, "messages.1.content.0.type", "tool_use");
    str_at(j, "messages.1.content.0.id", "call_1");
    str_at(j, "messages.1.content.0.input.when", "now");
    str_at(j, "messages.2.role", "user");
    str_at(j, "messages.2.content.0.type", "tool_result");
    str_at(j, "messages.2.content.0.tool_use_id", "call_1");
    str_at(j, "messages.2.content.0.content", "sunny");
    assert_int_equal(cJSON_GetArraySize(at(j, "messages")), 3);
    cJSON_Delete(j);
    /* Ollama: arguments an object, the tool message names its tool. */
    j = body_of(TB_API_OLLAMA);
    str_at(j, "messages.2.tool_calls.0.function.arguments.when", "now");
    assert_null(cJSON_GetObjectItem(at(j, "messages.2.tool_calls.0"), "id"));
    str_at(j, "messages.3.role", "tool");
    str_at(j, "messages.3.tool_name", "get_weather");
    cJSON_Delete(j);
}

/* Arguments that are not a JSON object: as received in OpenAI's shape,
 * {} in Anthropic's and Ollama's (objects there). */
static void exchange_bad_args(void **state)
{
    static const char bad[] =
        "[{\"role\":\"user\",\"content\":\"Rain?\"},{\"role\":\"assistant\",\"content\":null,"
        "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
        "\"get_weather\",\"arguments\":\"{\\\"when\\\":\"}}]},{\"role\":\"tool\","
        "\"tool_call_id\":\"call_1\",\"content\":\"sunny\"}]";
    static const enum tb_api apis[3] = {TB_API_CHAT, TB_API_ANTHROPIC, TB_API_OLLAMA};
    (void)state;
    for (int i = 0; i < 3; i++) {
        struct tb_api_request q = {.api = apis[i],
                                   .model = "m",
                                   .messages_json = bad,
                                   .max_tokens = -1,
                                   .temperature = -1,
                                   .tools_json = tools_json};
        char *out = NULL, err[256], *p;
        cJSON *j;
        assert_int_equal(tb_api_request_body(&q, &out, err, sizeof(err)), 0);
        j = cJSON_Parse(out);
        assert_non_null(j);
        free(out);
        if (i == 0) {
            str_at(j, "messages.1.tool_calls.0.function.arguments", "{\"when\":");
        } else {
            const cJSON *in = at(j, i == 1 ? "messages.1.content.0.input"
                                           : "messages.1.tool_calls.0.function.arguments");
            p = cJSON_PrintUnformatted(in);
            if (!cJSON_IsObject(in) || strcmp(p, "{}") != 0)
                fail_msg("dialect %d: the bad arguments went as %s", i, p);
            cJSON_free(p);
        }
        cJSON_Delete(j);
    }
}

/* Bad values: exit 2, one line naming the option. */
static void bad_values(void **state)
{
    static const struct {
        const char *args, *names;
    } cases[] = {
        {"--conversations builtin --tool-latency junk", "--tool-latency"},
        {"--conversations builtin --tool-latency -1", "--tool-latency"},
        {"--conversations builtin --filler ''", "--filler"},
        {"--conversations builtin --filler '   '", "--filler"},
        {"--conversations builtin --filler '...'", "with a word in it"},
        {"--conversations builtin --filler \"$(printf 'a\\nb')\"", "on one line"},
        {"--tool-latency 0.5", "--tool-latency"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[512];
        struct tb_test_out o;
        snprintf(args, sizeof(args), "bench --base-url http://127.0.0.1:9/v1 --model m %s",
                 cases[i].args);
        o = tb_test_run(args);
        if (o.code != 2 || strstr(o.se, cases[i].names) == NULL ||
            strchr(o.se, '\n') != o.se + strlen(o.se) - 1)
            fail_msg("%s: exit %d, stderr %s", cases[i].args, o.code, o.se);
        tb_test_out_free(&o);
    }
}

/* The record of turn 0, which called the tool: tool_s the drawn wait
 * and the loop's overhead, the parts summing to v2v in their order, the
 * filler's figures consistent. */
static void check_tool_turn(const cJSON *r, const char *api)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(r, "latency");
    double sum, tool = tb_test_num_or_nan(r, "tool_s"), heard, w[3], f[3], all = 0, left = 0;
    static const char *const win[3] = {"before", "during", "after"};
    if (tb_test_num_or_nan(r, "tool_calls") != 1 || !(tool >= TOOL_WAIT) ||
        !(tool < TOOL_WAIT + LOOP_LAG))
        fail_msg("%s: tool_calls %g, tool_s %g (drawn %g)", api,
                 tb_test_num_or_nan(r, "tool_calls"), tool, TOOL_WAIT);
    assert_true(tb_test_num_or_nan(l, "tool_s") == tool);
    sum = tb_test_num_or_nan(l, "eou_s") + tb_test_num_or_nan(l, "ttft_s") +
          tb_test_num_or_nan(l, "tool_s") + tb_test_num_or_nan(l, "aggregation_s") +
          tb_test_num_or_nan(l, "tts_queue_s") + tb_test_num_or_nan(l, "tts_ttfb_s") +
          tb_test_num_or_nan(l, "preroll_s") + tb_test_num_or_nan(l, "leading_silence_s");
    if (!(sum == tb_test_num_or_nan(l, "v2v_s")))
        fail_msg("%s: the parts sum to %.17g, v2v_s %.17g", api, sum,
                 tb_test_num_or_nan(l, "v2v_s"));
    /* ttft: the first request to the call's end, then the second to its token */
    assert_true(tb_test_num_or_nan(l, "ttft_s") ==
                tb_test_num_or_nan(r, "tool_end_s") + tb_test_num_or_nan(r, "ttft_s"));
    assert_true(tb_test_num_or_nan(l, "v2v_s") > tool && tb_test_num_or_nan(r, "events") > 0);
    /* the silence around the tool, and the filler's share */
    heard = tb_test_num_or_nan(l, "v2v_s") - tb_test_num_or_nan(l, "eou_s");
    assert_true(tb_test_num_or_nan(r, "tool_silence_during_s") == tool);
    assert_true(fabs(tb_test_num_or_nan(r, "tool_silence_before_s") -
                     (tb_test_num_or_nan(r, "tool_end_s") -
                      tb_test_num_or_nan(r, "tool_start_s"))) < 1e-12);
    assert_true(fabs(tb_test_num_or_nan(r, "tool_silence_after_s") -
                     (heard - tb_test_num_or_nan(r, "tool_end_s") - tool)) < 1e-9);
    assert_true(tb_test_num_or_nan(r, "filler_at_s") ==
                tb_test_num_or_nan(r, "tool_start_s")); /* no TTS latency modelled */
    assert_true(fabs(tb_test_num_or_nan(r, "filler_s") - 25 * 10.0 / 150) <
                1e-12); /* 25 code points, 150 wpm */
    for (int i = 0; i < 3; i++) {
        char k[48];
        snprintf(k, sizeof(k), "tool_silence_%s_s", win[i]);
        w[i] = tb_test_num_or_nan(r, k);
        snprintf(k, sizeof(k), "filler_silence_%s_s", win[i]);
        f[i] = tb_test_num_or_nan(r, k);
        assert_true(f[i] >= 0 && f[i] <= w[i]);
        all += w[i];
        left += f[i];
    }
    assert_true(fabs(tb_test_num_or_nan(r, "filler_covered") - (all - left) / all) < 1e-9);
    /* a 1.7 s phrase from the call's start covers the 0.3 s wait whole */
    assert_true(f[0] == 0 && f[1] == 0 && f[2] == 0 &&
                tb_test_num_or_nan(r, "filler_covered") == 1);
    assert_true(
        fabs(tb_test_num_or_nan(r, "filler_delay_s") -
             fmax(tb_test_num_or_nan(r, "filler_at_s") + tb_test_num_or_nan(r, "filler_s") - heard,
                  0)) < 1e-9);
}

/* The server's lines of one dialect: the call, the result in the
 * dialect's shape after the drawn wait (as the server saw it), the next
 * turn offering nothing.  tool_s: the record's. */
static void check_log(const char *path, const char *route, double tool_s, double lag)
{
    struct tb_test_slog lines[8];
    char *text, *line, *save = NULL;
    cJSON *v[3] = {NULL, NULL, NULL};
    size_t n = 0;
    /* the server writes a request's line once it has closed it, which
     * can come after bench has read the answer and exited */
    (void)tb_test_slog_wait(path, lines, 8, 0, route, 3);
    text = tb_test_slurp_str(path);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        const cJSON *rt = cJSON_GetObjectItemCaseSensitive(j, "route");
        if (cJSON_IsString(rt) && strcmp(rt->valuestring, route) == 0 && n < 3)
            v[n++] = j;
        else
            cJSON_Delete(j);
    }
    free(text);
    if (n != 3)
        fail_msg("%s: %zu lines in the server's log, not 3", route, n);
    str_at(v[0], "request_id", "c0.t0");
    assert_true(cJSON_IsTrue(at(v[0], "tool_call")));
    assert_true(cJSON_IsNull(at(v[0], "tool_result")));
    assert_true(tb_test_num_or_nan(v[0], "tokens_sent") == 0);
    str_at(v[1], "request_id", "c0.t0");
    if (!cJSON_IsTrue(at(v[1], "tool_result")) || !cJSON_IsFalse(at(v[1], "tool_call")))
        fail_msg("%s: the second request's result is not in the dialect's shape", route);
    {
        /* the call sent back carries the arguments the model streamed */
        const cJSON *a0 = at(v[0], "tool_args"), *a1 = at(v[1], "tool_args");
        if (!cJSON_IsString(a0) || strncmp(a0->valuestring, "{\"query\":\"", 10) != 0 ||
            !cJSON_IsString(a1) || strcmp(a0->valuestring, a1->valuestring) != 0)
            fail_msg("%s: the call's arguments %s, sent back %s", route, cJSON_Print(a0),
                     cJSON_Print(a1));
    }
    assert_true(tb_test_num_or_nan(v[1], "tokens_sent") > 0);
    {
        /* the server's own view of the wait: the call's end to the result */
        double gap = tb_test_num_or_nan(v[1], "received_s") - tb_test_num_or_nan(v[0], "end_s");
        /* both ends are stamped by a loop that may wake late: twice the
         * wake-up delay the probe measured while bench ran (lag.h) */
        double allow = 0.05 * TB_TEST_TIME_SCALE + 2 * lag;
        if (!(gap >= TOOL_WAIT) || !(fabs(gap - tool_s) < allow))
            fail_msg("%s: the server saw %g s between the call and the result, tool_s %g "
                     "(allowed %g)",
                     route, gap, tool_s, allow);
    }
    str_at(v[2], "request_id", "c0.t1");
    assert_true(cJSON_IsNull(at(v[2], "tool_call")) && cJSON_IsNull(at(v[2], "tool_result")));
    for (size_t i = 0; i < 3; i++)
        cJSON_Delete(v[i]);
}

static void bench_dialect(const char *api, const char *path, int port, const char *dir,
                          const char *log)
{
    char args[1024], rp[256];
    cJSON *v[8], *sum;
    size_t n;
    double tool = NAN, lag;
    snprintf(args, sizeof(args),
             "bench --api %s --base-url http://127.0.0.1:%d%s --model m --conversations "
             "%s/convo.jsonl --calls 1 --tool-latency %g --filler builtin --user-turn 0.05 "
             "--out %s/%s --json --quiet",
             api, port, path, dir, TOOL_WAIT, dir, api);
    tb_test_lag_start();
    sum = tb_test_run_json(NULL, args, 0);
    lag = tb_test_lag_stop();
    {
        const cJSON *lv = at(sum, "levels.0");
        assert_true(tb_test_num_or_nan(at(lv, "tool_s"), "count") == 1);
        assert_true(tb_test_num_or_nan(at(lv, "filler_covered"), "count") == 1);
        assert_true(tb_test_num_or_nan(at(lv, "tool_silence_s"), "count") == 1);
        assert_true(tb_test_num_or_nan(at(lv, "filler_delay_s"), "count") == 1);
        /* per turn index: turn 0's tool wait, none at turn 1 */
        assert_true(tb_test_num_or_nan(at(lv, "by_turn.0.latency.tool_s"), "count") == 1);
        assert_true(tb_test_num_or_nan(at(lv, "by_turn.0.latency.tool_s"), "p50") ==
                    tb_test_num_or_nan(at(lv, "tool_s"), "p50"));
        assert_true(tb_test_num_or_nan(at(lv, "by_turn.1.latency.tool_s"), "count") == 0);
    }
    cJSON_Delete(sum);
    snprintf(rp, sizeof(rp), "%s/%s/records.jsonl", dir, api);
    n = tb_test_jsonl_records(rp, v, 8);
    assert_int_equal(n, 2); /* a record a turn: none of the call's first request */
    for (size_t i = 0; i < n; i++) {
        if (tb_test_num_or_nan(v[i], "turn") == 0) {
            check_tool_turn(v[i], api);
            tool = tb_test_num_or_nan(v[i], "tool_s");
        } else {
            assert_true(tb_test_num_or_nan(v[i], "tool_calls") == 0 &&
                        isnan(tb_test_num_or_nan(v[i], "tool_s")));
            assert_true(isnan(tb_test_num_or_nan(at(v[i], "latency"), "tool_s")));
        }
        cJSON_Delete(v[i]);
    }
    check_log(log, strcmp(api, "chat") == 0 ? "chat" : api, tool, lag);
    /* merge reads the records back, the sums checked again */
    snprintf(args, sizeof(args), "merge --json %s/%s/records.jsonl >/dev/null", dir, api);
    {
        struct tb_test_out o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("merge: %s", o.se);
        tb_test_out_free(&o);
    }
}

/* A call of one tool turn: the summary's latency_share has the tool's
 * wait, and with one turn the shares sum to 1 (the parts sum to v2v_s);
 * the report names it; compare shows tool_s; the page's wait bars draw it. */
static void shares_have_tool(const char *dir, int port)
{
    char args[1024], path[320];
    cJSON *sum, *rec[1];
    const cJSON *lv, *sh;
    double total = 0.0, miss;
    struct tb_test_out o;
    char *page;
    snprintf(path, sizeof(path), "%s/one.jsonl", dir);
    {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "{\"id\":\"w\",\"turns\":[{\"text\":\"Rain?\",\"tools\":%s}]}\n", tools_json);
        fclose(f);
    }
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m --conversations %s --calls 1 "
             "--tool-latency %g --user-turn 0.05 --eou 0.2 --tts-latency 0.15 --out %s/one "
             "--html %s/one.html --json --quiet",
             port, path, TOOL_WAIT, dir, dir);
    sum = tb_test_run_json(NULL, args, 0);
    lv = at(sum, "levels.0");
    assert_true(tb_test_num_or_nan(at(lv, "tool_s"), "count") == 1);
    sh = at(lv, "latency_share.p50");
    if (fabs(tb_test_num_or_nan(sh, "tool_s") - tb_test_num_or_nan(at(lv, "tool_s"), "p50") /
                                                    tb_test_num_or_nan(at(lv, "v2v_s"), "p50")) >
        1e-12)
        fail_msg("latency_share.p50.tool_s %.17g, not tool_s's p50 over v2v_s's",
                 tb_test_num_or_nan(sh, "tool_s"));
    for (const cJSON *e = sh->child; e != NULL; e = e->next)
        total += e->valuedouble;
    /* ttft_s's share is the level's ttft_s (the second request's), the
     * part's ttft runs from the first request (turnlat.h): the sum misses
     * their difference, the first request's time to its call */
    snprintf(path, sizeof(path), "%s/one/records.jsonl", dir);
    assert_int_equal(tb_test_jsonl_records(path, rec, 1), 1);
    miss = (tb_test_num_or_nan(at(rec[0], "latency"), "ttft_s") -
            tb_test_num_or_nan(rec[0], "ttft_s")) /
           tb_test_num_or_nan(at(lv, "v2v_s"), "p50");
    /* its trace keeps the turn's tool part (tool_turn): sim of it replays the
     * tool's wait (sim_tool.h; test_simtool.c), so no warning that it is not */
    snprintf(args, sizeof(args), "sim --trace '%s/one/%s' --request %.0f", dir,
             at(rec[0], "trace")->valuestring, tb_test_num_or_nan(rec[0], "id"));
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    if (strstr(o.se, "warning") != NULL || strstr(o.so, "the tool turn (1 call") == NULL)
        fail_msg("sim of a tool turn's trace: %s%s", o.so, o.se);
    tb_test_out_free(&o);
    cJSON_Delete(rec[0]);
    if (!(miss >= 0.0) || fabs(total + miss - 1.0) > 1e-9)
        fail_msg("one turn's shares sum to %.9f, not 1 - %.9f", total, miss);
    cJSON_Delete(sum);
    snprintf(args, sizeof(args), "merge %s/one/records.jsonl", dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, " ttft "));                   /* the share line ... */
    assert_non_null(strstr(strstr(o.so, " ttft "), " tool ")); /* ... names the tool after it */
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "compare a=%s/one b=%s/one", dir, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "\n  tool_s "));
    tb_test_out_free(&o);
    snprintf(path, sizeof(path), "%s/one.html", dir);
    page = tb_test_slurp_str(path);
    snprintf(path, sizeof(path), "data-part=\"%d\"", TB_SVG_WAIT_TOOL);
    assert_non_null(strstr(page, path));
    free(page);
}

/* bench --conversations against serve --tool-call-rate 1, each dialect. */
static void calls_use_tools(void **state)
{
    char dir[128], path[256], log[256], srv[512];
    FILE *f;
    int port;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "tooluse", "bench");
    snprintf(path, sizeof(path), "%s/convo.jsonl", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"id\":\"w\",\"turns\":[{\"text\":\"Is it going to rain?\",\"tools\":%s},"
            "\"Thanks.\"]}\n",
            tools_json);
    fclose(f);
    for (int i = 0; i < 3; i++) {
        static const char *const apis[3] = {"chat", "anthropic", "ollama"};
        static const char *const paths[3] = {"/v1", "/v1", ""};
        snprintf(log, sizeof(log), "%s/serve-%s.jsonl", dir, apis[i]);
        snprintf(srv, sizeof(srv),
                 "--synth tps=400,tokens=10,ttft=0.02,seed=5 --tool-call-rate 1 --log %s", log);
        tb_test_serve_up(srv, &port);
        bench_dialect(apis[i], paths[i], port, dir, log);
        if (i == 0)
            shares_have_tool(dir, port);
        tb_test_serve_down(NULL);
    }
    tb_test_rm_rf(dir);
}

/* A result that answers no call of the conversation (an id the
 * assistant never gave) is answered all the same, and the server's log
 * says it is not in the dialect's shape. */
static void result_out_of_shape(void **state)
{
    char dir[128], path[256], log[256], args[1024], srv[400];
    struct tb_test_slog lines[4];
    char *text;
    FILE *f;
    int port;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "tooluse", "shape");
    snprintf(path, sizeof(path), "%s/msgs.json", dir);
    snprintf(log, sizeof(log), "%s/serve.jsonl", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("[{\"role\":\"user\",\"content\":\"Rain?\"},{\"role\":\"assistant\",\"content\":null,"
          "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
          "\"get_weather\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":"
          "\"call_9\",\"content\":\"sunny\"}]",
          f);
    fclose(f);
    snprintf(srv, sizeof(srv),
             "--synth tps=400,tokens=10,ttft=0.02,seed=5 --tool-call-rate 1 --log %s", log);
    tb_test_serve_up(srv, &port);
    snprintf(args, sizeof(args),
             "run --api chat --base-url http://127.0.0.1:%d/v1 --model m --json --messages %s "
             "--body-json '{\"tools\":%s}' >/dev/null",
             port, path, tools_json);
    {
        struct tb_test_out o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("run: %s", o.se);
        tb_test_out_free(&o);
    }
    assert_int_equal(tb_test_slog_wait(log, lines, 4, 0, "chat", 1), 1);
    tb_test_serve_down(NULL);
    text = tb_test_slurp_str(log);
    if (strstr(text, "\"tool_call\":false,\"tool_result\":false") == NULL)
        fail_msg("the log does not say the result is out of shape: %s", text);
    free(text);
    tb_test_rm_rf(dir);
}

/* The built-in conversations offer tools on some turns. */
static void builtin_has_tools(void **state)
{
    struct tb_convos c;
    char err[256];
    size_t with = 0;
    (void)state;
    assert_int_equal(tb_convos_builtin(&c, err, sizeof(err)), 0);
    for (size_t i = 0; i < c.n; i++)
        for (size_t k = 0; c.v[i].tools != NULL && k < c.v[i].n_turns; k++)
            with += c.v[i].tools[k] != NULL;
    assert_true(with >= 3);
    tb_convos_free(&c);
}

/* A run given --tool-latency in which no turn called a tool says so (a
 * tool_s block of count 0 alone reads like a measurement). */
static void no_tool_called_said(void **state)
{
    char args[512], log[300], dir[256];
    struct tb_test_out o;
    int port, pid;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "tooluse", "none");
    snprintf(log, sizeof(log), "%s/serve.log", dir);
    pid = tb_test_serve_spawn("tps=200,ttft=0.02,tokens=8,jitter=0", log, &port);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m --conversations builtin --calls 1 "
             "--turns 1 --user-turn 0.05 --wpm 1000 --tool-latency 0.3",
             port);
    o = tb_test_run(args);
    tb_test_serve_stop(pid);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "  note: no turn called a tool (a turn calls one when its "
                                 "conversation offers tools and the model chooses to"));
    tb_test_out_free(&o);
}

int tb_test_tooluse(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exchange_per_dialect),
        cmocka_unit_test(exchange_bad_args),
        cmocka_unit_test(bad_values),
        cmocka_unit_test(builtin_has_tools),
        cmocka_unit_test(no_tool_called_said),
        cmocka_unit_test_teardown(calls_use_tools, tb_test_serve_down),
        /* the two long cases in different shards (main.c) */
        cmocka_unit_test_teardown(tb_test_tooluse_filler_live, tb_test_serve_down),
        cmocka_unit_test_teardown(result_out_of_shape, tb_test_serve_down),
    };
    return TB_RUN_GROUP("tooluse", tests);
}
