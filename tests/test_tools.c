/*
 * test_tools.c - tool calls read from a stream (api.h's tool items, the
 * reader's calls, the trace's "tool" lines): each chat dialect's
 * documented tool-call stream (tests/data/api/tools, README there) fed
 * whole and a byte at a time, with every call's name, id, arguments
 * (their bytes, and their text kept), start and end, and nothing of it
 * spoken; a malformed item per dialect and oversized arguments stop the
 * stream naming the stream byte (the text past 16 KiB not kept); the
 * calls kept in a trace read back the same; then `ttsbuf run` against
 * `ttsbuf serve --tool-call-rate 1` in every dialect.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/trace.h"

struct sample {
    enum tb_api api;
    const char *file, *name, *id, *spoken;
    uint64_t args;
};

static const struct sample samples[] = {
    {TB_API_CHAT, "api/tools/openai_chat.sse", "get_weather", "call_DdmO9pD3xa9XTPNJ32zg2hcA", "",
     28},
    {TB_API_ANTHROPIC, "api/tools/anthropic.sse", "get_weather", "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
     "Okay, let me check.", 55},
    {TB_API_OLLAMA, "api/tools/ollama.ndjson", "get_current_weather", "", "", 41},
};

/* Reads buf through a reader of api, step bytes at a time (0: whole),
 * the clock one millisecond a piece; returns the conclusion. */
static int read_stream(enum tb_api api, const char *buf, size_t len, size_t step,
                       struct tb_reader *rd, struct tb_stream *s)
{
    size_t at = 0;
    double t = 0;
    assert_int_equal(tb_reader_init(rd, api), 0);
    tb_stream_init(s);
    tb_reader_begin(rd, s, 0);
    while (at < len) {
        size_t n = step == 0 || len - at < step ? len - at : step;
        t += 0.001;
        if (tb_reader_feed(rd, buf + at, n, t) != 0)
            break;
        at += n;
    }
    return tb_reader_end(rd);
}

/* Every dialect's documented tool-call stream: one call, named, its
 * arguments counted, started and ended; the arguments never spoken. */
static void dialect_streams(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        const struct sample *x = &samples[i];
        size_t len;
        char *buf = tb_test_slurp(tb_test_data(x->file), &len);
        for (size_t step = 0; step <= 1; step++) {
            struct tb_reader rd;
            struct tb_stream s;
            char *spoken;
            int rc = read_stream(x->api, buf, len, step, &rd, &s);
            if (rc != 0)
                fail_msg("%s: %s", x->file, rd.message);
            assert_true(rd.done_seen);
            assert_int_equal(rd.tool_calls, 1);
            assert_int_equal(s.ntools, 1);
            assert_string_equal(s.tools[0].name, x->name);
            assert_string_equal(s.tools[0].id, x->id);
            assert_int_equal(s.tools[0].args_bytes, x->args);
            {
                /* the arguments kept as they came: the fragments joined
                 * (Ollama's object printed), a JSON object */
                cJSON *a = s.tools[0].args != NULL ? cJSON_Parse(s.tools[0].args) : NULL;
                assert_non_null(s.tools[0].args);
                assert_int_equal(strlen(s.tools[0].args), x->args);
                assert_true(cJSON_IsObject(a) && cJSON_GetObjectItem(a, "location") != NULL);
                cJSON_Delete(a);
            }
            assert_true(isfinite(s.tools[0].t_end));
            assert_true(s.tools[0].t_end >= s.tools[0].t_start);
            if (step == 1 && x->api != TB_API_OLLAMA) /* fragments over several events */
                assert_true(s.tools[0].t_end > s.tools[0].t_start);
            spoken = tb_stream_content_text(&s);
            assert_non_null(spoken);
            assert_string_equal(spoken, x->spoken);
            assert_null(strstr(spoken, "location"));
            free(spoken);
            tb_stream_free(&s);
            tb_reader_free(&rd);
        }
        free(buf);
    }
}

/* A malformed tool item per dialect is bad event JSON naming the field
 * and the stream byte; the call started before it is kept. */
static void malformed_per_dialect(void **state)
{
    static const struct {
        enum tb_api api;
        const char *stream, *field;
        size_t calls;
    } rows[] = {
        {TB_API_CHAT,
         "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\","
         "\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n"
         "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
         "\"function\":{\"arguments\":42}}]}}]}\n\n",
         "tool_calls[].function.arguments is not a string", 1},
        {TB_API_CHAT,
         "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":\"0\"}]}}]}\n\n",
         "tool_calls[].index is not a whole number", 0},
        {TB_API_ANTHROPIC,
         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
         "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}\n\n"
         "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
         "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":{\"a\":1}}}\n\n",
         "delta.partial_json is not a string", 1},
        {TB_API_ANTHROPIC,
         "data: {\"type\":\"content_block_start\",\"index\":-1,"
         "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\"}}\n\n",
         "index is not a whole number", 0},
        {TB_API_OLLAMA,
         "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":"
         "{\"name\":7,\"arguments\":{}}}]},\"done\":false}\n",
         "message.tool_calls[].function.name is not a string", 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct tb_reader rd;
        struct tb_stream s;
        char at[64];
        int rc = read_stream(rows[i].api, rows[i].stream, strlen(rows[i].stream), 0, &rd, &s);
        snprintf(at, sizeof(at), "stream byte %zu", strlen(rows[i].stream));
        if (rc != TB_READER_JSON || strstr(rd.message, rows[i].field) == NULL ||
            strstr(rd.message, at) == NULL)
            fail_msg("row %zu: %d '%s'", i, rc, rd.message);
        assert_int_equal(s.ntools, rows[i].calls);
        assert_int_equal(s.n, 0);
        tb_stream_free(&s);
        tb_reader_free(&rd);
    }
}

/* A call's arguments past TB_TOOL_ARGS_MAX stop the stream there (its
 * byte named); the calls read so far are kept. */
static void oversized_args(void **state)
{
    size_t frag = 60000, n = TB_TOOL_ARGS_MAX / frag + 2, len = 0, cap = (frag + 200) * (n + 1);
    char *buf = malloc(cap), *piece = malloc(frag + 1);
    struct tb_reader rd;
    struct tb_stream s;
    int rc;
    (void)state;
    assert_non_null(buf);
    assert_non_null(piece);
    memset(piece, 'x', frag);
    piece[frag] = '\0';
    len += (size_t)snprintf(buf + len, cap - len,
                            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
                            "\"id\":\"c\",\"function\":{\"name\":\"big\"}}]}}]}\n\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len,
                                "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
                                "\"function\":{\"arguments\":\"%s\"}}]}}]}\n\n",
                                piece);
    rc = read_stream(TB_API_CHAT, buf, len, 0, &rd, &s);
    if (rc != TB_READER_SSE || strstr(rd.message, "arguments over 1048576 bytes at stream byte") ==
                                   NULL)
        fail_msg("%d '%s'", rc, rd.message);
    assert_int_equal(s.ntools, 1);
    assert_true(isnan(s.tools[0].t_end));
    /* past TB_TOOL_ARGS_KEEP the text is not kept (bench sends {}) */
    assert_null(s.tools[0].args);
    assert_true(s.tools[0].args_over);
    tb_stream_free(&s);
    tb_reader_free(&rd);
    free(piece);
    free(buf);
}

/* The calls kept in a trace: version 4, one line a start and an end,
 * after the events; read back the same.  A bad tool line names its
 * place; a tool line in an older version is refused. */
static void trace_roundtrip(void **state)
{
    struct tb_stream s, back;
    struct tb_tool_call a = {0.5, 0.9, 28, "get_weather", "call_1", NULL, 0};
    struct tb_tool_call b = {0.7, NAN, 3, "lookup", "", NULL, 0};
    char *text = NULL, err[256];
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    (void)state;
    tb_stream_init(&s);
    assert_int_equal(tb_stream_append(&s, 0.2, "Hi.", 3, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_tool_add(&s, &a), 0);
    assert_int_equal(tb_stream_tool_add(&s, &b), 0);
    assert_non_null(f);
    assert_int_equal(tb_trace_write(f, &s), 0);
    fclose(f);
    if (strstr(text, "\"ttsbuf_trace\":4") == NULL)
        fail_msg("%s", text);
    assert_non_null(strstr(text, "{\"t\":0.5,\"tool\":{\"phase\":\"start\",\"name\":\"get_weather\","
                                 "\"id\":\"call_1\",\"args_bytes\":28}}\n"
                                 "{\"t\":0.7,\"tool\":{\"phase\":\"start\",\"name\":\"lookup\","
                                 "\"id\":null,\"args_bytes\":3}}\n")); /* no id: null, not "" */
    assert_non_null(strstr(text, "{\"t\":0.9,\"tool\":{\"phase\":\"end\",\"name\":\"get_weather\""));
    tb_stream_init(&back);
    if (tb_trace_load_mem(text, tlen, "t.jsonl", &back, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(back.n, 1);
    assert_int_equal(back.ntools, 2);
    assert_string_equal(back.tools[0].name, "get_weather");
    assert_string_equal(back.tools[0].id, "call_1");
    assert_true(back.tools[0].t_start == 0.5 && back.tools[0].t_end == 0.9);
    assert_int_equal(back.tools[0].args_bytes, 28);
    assert_string_equal(back.tools[1].name, "lookup");
    assert_string_equal(back.tools[1].id, "");
    assert_true(isnan(back.tools[1].t_end));
    tb_stream_free(&back);
    {
        /* a trace of an older version says "" for no id: read the same */
        static const char old[] = "{\"ttsbuf_trace\":4}\n{\"t\":0,\"text\":\"a\"}\n"
                                  "{\"t\":1,\"tool\":{\"phase\":\"start\",\"name\":\"f\","
                                  "\"id\":\"\",\"args_bytes\":0}}\n";
        tb_stream_init(&back);
        if (tb_trace_load_mem(old, strlen(old), "o.jsonl", &back, err, sizeof(err)) != 0)
            fail_msg("%s", err);
        assert_int_equal(back.ntools, 1);
        assert_string_equal(back.tools[0].id, "");
        tb_stream_free(&back);
    }
    {
        static const struct {
            const char *trace, *msg;
        } bad[] = {
            {"{\"ttsbuf_trace\":4}\n{\"t\":0,\"text\":\"a\"}\n"
             "{\"t\":1,\"tool\":{\"phase\":\"middle\",\"name\":\"f\",\"args_bytes\":0}}\n",
             "b.jsonl:3: \"tool.phase\" must be \"start\" or \"end\""},
            {"{\"ttsbuf_trace\":4}\n{\"t\":0,\"text\":\"a\"}\n"
             "{\"t\":1,\"tool\":{\"phase\":\"end\",\"name\":\"f\",\"args_bytes\":0}}\n",
             "b.jsonl:3: a tool \"end\" line with no call"},
            {"{\"ttsbuf_trace\":4}\n{\"t\":0,\"text\":\"a\"}\n"
             "{\"t\":1,\"tool\":{\"phase\":\"start\",\"name\":\"f\",\"args_bytes\":-1}}\n",
             "b.jsonl:3: \"tool.args_bytes\""},
            {"{\"ttsbuf_trace\":2}\n{\"t\":0,\"text\":\"a\"}\n"
             "{\"t\":1,\"tool\":{\"phase\":\"start\",\"name\":\"f\",\"args_bytes\":0}}\n",
             "b.jsonl:3: a \"tool\" line needs a version-4 header"},
            {"{\"ttsbuf_trace\":4}\n"
             "{\"t\":1,\"tool\":{\"phase\":\"start\",\"name\":\"f\",\"args_bytes\":0}}\n"
             "{\"t\":2,\"text\":\"a\"}\n",
             "b.jsonl:3: an event after the \"tts\" or \"tool\" lines"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            tb_stream_init(&back);
            assert_int_equal(tb_trace_load_mem(bad[i].trace, strlen(bad[i].trace), "b.jsonl",
                                               &back, err, sizeof(err)),
                             TB_EFORMAT);
            if (strstr(err, bad[i].msg) == NULL)
                fail_msg("row %zu: '%s'", i, err);
            tb_stream_free(&back);
        }
    }
    free(text);
    tb_stream_free(&s);
}

/* `ttsbuf run` in each chat dialect against a mock that answers every
 * request offering tools with a call: the call in the trace (start and
 * end), in the report, and nothing spoken; the request that carries the
 * tool's result gets speech. */
struct dialect_case {
    const char *api, *path, *tools, *result;
};

static const struct dialect_case dialect_cases[] = {
    {"chat", "/v1", "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}]}",
     "[{\"role\":\"user\",\"content\":\"weather?\"},{\"role\":\"assistant\",\"content\":null,"
     "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
     "\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"sunny\"}]"},
    {"anthropic", "/v1", "{\"tools\":[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\"}}]}",
     "[{\"role\":\"user\",\"content\":\"weather?\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
     "\"tool_use\",\"id\":\"t1\",\"name\":\"get_weather\",\"input\":{}}]},{\"role\":\"user\","
     "\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"sunny\"}]}]"},
    {"ollama", "", "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}]}",
     "[{\"role\":\"user\",\"content\":\"weather?\"},{\"role\":\"tool\",\"content\":\"sunny\"}]"},
};

static double jnum(const cJSON *j, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    if (!cJSON_IsNumber(v))
        fail_msg("\"%s\" is not a number", k);
    return v->valuedouble;
}

static void run_dialect(const struct dialect_case *x, int port, const char *dir)
{
    char args[2048], path[200], *trace;
    cJSON *j;
    snprintf(path, sizeof(path), "%s/%s.jsonl", dir, x->api);
    snprintf(args, sizeof(args),
             "run --api %s --base-url http://127.0.0.1:%d%s --model m --chunk token --json "
             "--record %s --body-json '%s'",
             x->api, port, x->path, path, x->tools);
    j = tb_test_run_json(NULL, args, 0);
    assert_int_equal(jnum(j, "tool_calls"), 1);
    assert_int_equal(jnum(j, "events"), 0);
    assert_true(jnum(j, "tool_first_end_s") >= jnum(j, "tool_first_start_s"));
    cJSON_Delete(j);
    trace = tb_test_slurp_str(path);
    if (strstr(trace, "\"tool\":{\"phase\":\"start\",\"name\":\"get_weather\"") == NULL ||
        strstr(trace, "\"tool\":{\"phase\":\"end\",\"name\":\"get_weather\"") == NULL ||
        strstr(trace, "\"args_bytes\":") == NULL || strstr(trace, "\"text\"") != NULL ||
        strstr(trace, "\"id\":\"\"") != NULL ||
        (strcmp(x->api, "ollama") == 0) != (strstr(trace, "\"id\":null") != NULL))
        fail_msg("%s: %s", x->api, trace); /* Ollama's call has no id: null */
    free(trace);
    /* sim of the tool-only recording: nothing spoken, every figure null */
    snprintf(args, sizeof(args), "sim --trace %s --json", path);
    j = tb_test_run_json(NULL, args, 0);
    assert_int_equal(jnum(j, "events"), 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "ttfa_s")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "ttft_s")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "latency"), "v2v_s")));
    cJSON_Delete(j);
    {
        struct tb_test_out o;
        snprintf(args, sizeof(args), "sim --trace %s", path);
        o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        if (strstr(o.so, "no verdict: the answer was 1 tool call, nothing to speak") == NULL)
            fail_msg("%s: sim of the recording: %s%s", x->api, o.so, o.se);
        tb_test_out_free(&o);
    }
    /* The tool's result sent back: speech, no call. */
    snprintf(path, sizeof(path), "%s/%s-msgs.json", dir, x->api);
    {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(x->result, f);
        fclose(f);
    }
    snprintf(args, sizeof(args),
             "run --api %s --base-url http://127.0.0.1:%d%s --model m --chunk token --json "
             "--messages %s --body-json '%s'",
             x->api, port, x->path, path, x->tools);
    j = tb_test_run_json(NULL, args, 0);
    assert_int_equal(jnum(j, "tool_calls"), 0);
    assert_int_equal(jnum(j, "events"), 10);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "tool_first_start_s")));
    cJSON_Delete(j);
}

static void serve_tool_calls(void **state)
{
    char dir[128];
    int port;
    (void)state;
    {
        /* Out of 0..1: a usage error naming the option. */
        struct tb_test_out o = tb_test_run("serve --listen 127.0.0.1:0 --tool-call-rate 1.5");
        assert_int_equal(o.code, 2);
        assert_non_null(strstr(o.se, "--tool-call-rate"));
        tb_test_out_free(&o);
    }
    tb_test_tmpdir(dir, sizeof(dir), "tools", "serve");
    tb_test_serve_up("--synth tps=400,tokens=10,ttft=0.02,seed=5 --tool-call-rate 1", &port);
    for (size_t i = 0; i < sizeof(dialect_cases) / sizeof(dialect_cases[0]); i++)
        run_dialect(&dialect_cases[i], port, dir);
    tb_test_serve_down(NULL);
    tb_test_rm_rf(dir);
}

/* Software others wrote: the openai npm SDK's stream helper puts our
 * mock's tool_calls deltas back together into the call it made. */
static void openai_sdk_reads_tool_call(void **state)
{
    char cmd[512], path[160], *out;
    const char *nd = getenv("TB_NODEDIR");
    int port, rc;
    cJSON *j, *call;
    (void)state;
    if (nd == NULL)
        nd = "tests/node";
    tb_test_need("node");
    snprintf(cmd, sizeof(cmd), "%s/node_modules/openai/package.json", nd);
    if (access(cmd, R_OK) != 0)
        fail_msg("the openai npm package is missing in %s/node_modules", nd);
    tb_test_serve_up("--synth tps=400,tokens=10,ttft=0.02,seed=5 --tool-call-rate 1", &port);
    snprintf(path, sizeof(path), "/tmp/ttsbuf-tools-sdk-%d.json", (int)getpid());
    snprintf(cmd, sizeof(cmd), "node %s/openai-tools.mjs http://127.0.0.1:%d/v1 >%s 2>&1", nd,
             port, path);
    rc = system(cmd);
    tb_test_serve_down(NULL);
    out = tb_test_slurp_str(path);
    remove(path);
    if (rc != 0)
        fail_msg("openai SDK failed: %s", out);
    j = cJSON_Parse(out);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "finish")->valuestring, "tool_calls");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "calls")), 1);
    call = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "calls"), 0);
    assert_string_equal(cJSON_GetObjectItem(call, "name")->valuestring, "get_weather");
    assert_non_null(strstr(cJSON_GetObjectItem(call, "id")->valuestring, "call_ttsbuf_"));
    assert_true(cJSON_IsString(
        cJSON_GetObjectItem(cJSON_GetObjectItem(call, "args"), "query")));
    cJSON_Delete(j);
    free(out);
}

int tb_test_tools(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dialect_streams),
        cmocka_unit_test(malformed_per_dialect),
        cmocka_unit_test(oversized_args),
        cmocka_unit_test(trace_roundtrip),
        cmocka_unit_test_teardown(serve_tool_calls, tb_test_serve_down),
        cmocka_unit_test_teardown(openai_sdk_reads_tool_call, tb_test_serve_down),
    };
    return TB_RUN_GROUP("tools", tests);
}
