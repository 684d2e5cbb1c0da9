/*
 * test_import.c - importing other tools' benchmark results (import.h):
 * hand-written files in each tool's documented schema under
 * tests/data/import/<format>/ (good.* parsed and checked field by field;
 * each bad_* must fail with the message in its .err file, which names the
 * place), every prefix of every good file (no crash, no leak, a clean
 * error or a smaller result), the text spreading, and `ttsbuf sim
 * --import` end to end.
 */
#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/import.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/utf8.h"

#define ERRLEN 512

static void load(enum tb_import_format f, const char *file, struct tb_import *im)
{
    char path[512], err[ERRLEN];
    size_t len;
    char *buf;
    int rc;
    snprintf(path, sizeof(path), "%s", tb_test_data(file));
    buf = tb_test_slurp(path, &len);
    tb_import_init(im);
    rc = tb_import_mem(f, buf, len, file, im, err, sizeof(err));
    free(buf);
    if (rc != 0)
        fail_msg("%s: %s (%s)", file, tb_strerror(rc), err);
}

/* The stream's text from event i0 to its end, joined. */
static char *joined(const struct tb_stream *s, size_t i0, int kind)
{
    char *out = calloc(1, s->text_len + 1);
    size_t n = 0;
    assert_non_null(out);
    for (size_t i = i0; i < s->n; i++)
        if (kind < 0 || s->ev[i].kind == kind) {
            memcpy(out + n, tb_stream_text(s, i), s->ev[i].len);
            n += s->ev[i].len;
        }
    return out;
}

static void vllm_good(void **state)
{
    struct tb_import im;
    const struct tb_stream *s;
    char *t;
    (void)state;
    load(TB_IMPORT_VLLM, "import/vllm/good.json", &im);
    assert_int_equal(im.n, 3);
    assert_string_equal(im.req[0].name, "request 0");
    s = &im.req[0].stream;
    assert_string_equal(s->model, "meta-llama/Llama-3.1-8B-Instruct");
    /* Five chunks: ttft, then the cumulative sums of the itls. */
    assert_int_equal(s->n, 5);
    assert_near(s->ev[0].t, 0.25, 1e-12);
    assert_near(s->ev[1].t, 0.30, 1e-12);
    assert_near(s->ev[3].t, 0.45, 1e-12);
    assert_near(s->ev[4].t, 0.50, 1e-12);
    /* The whole text, in order, split only between token-like pieces:
     * 8 pieces over 5 chunks. */
    t = joined(s, 0, -1);
    assert_string_equal(t, "Hello there. How are you today?");
    free(t);
    assert_int_equal(s->ev[0].len, 5); /* "Hello" */
    assert_int_equal(s->usage_tokens, 8);
    for (size_t i = 0; i < s->n; i++)
        assert_true(s->ev[i].tokens >= 1);
    /* Request 1: 4 chunks, 4 tokens, a 1.5 s stall before the last. */
    s = &im.req[1].stream;
    assert_int_equal(s->n, 4);
    assert_near(s->ev[3].t - s->ev[2].t, 1.5, 1e-12);
    t = joined(s, 0, -1);
    assert_string_equal(t, "Okay, then.");
    free(t);
    /* The failed request is kept with the tool's error and no events. */
    assert_int_equal(im.req[2].stream.n, 0);
    assert_string_equal(im.req[2].error, "Connection reset by peer");
    assert_int_equal(im.empty_chunks, 0);
    tb_import_free(&im);
    tb_import_free(&im); /* twice: a no-op */
}

static void sglang_good(void **state)
{
    struct tb_import im;
    (void)state;
    load(TB_IMPORT_SGLANG, "import/sglang/good.jsonl", &im);
    assert_int_equal(im.n, 4);
    /* The newer layout: the arrays in a "details" object. */
    assert_string_equal(im.req[3].name, "line 4 request 0");
    assert_int_equal(im.req[3].stream.n, 4);
    assert_near(im.req[3].stream.ev[3].t, 0.12, 1e-12);
    assert_string_equal(im.req[2].name, "line 3 request 0");
    assert_int_equal(im.req[2].stream.n, 2);
    assert_near(im.req[2].stream.ev[1].t, 0.7, 1e-12);
    assert_int_equal(im.req[0].stream.usage_tokens, 3);
    tb_import_free(&im);
}

static void genai_good(void **state)
{
    struct tb_import im;
    const struct tb_stream *s;
    char *t;
    (void)state;
    load(TB_IMPORT_GENAI_PERF, "import/genai-perf/good.json", &im);
    assert_int_equal(im.n, 3);
    s = &im.req[0].stream;
    assert_string_equal(im.req[0].name, "experiments[0].requests[0] (concurrency 2)");
    /* The role chunk is no token; reasoning is recorded as reasoning. */
    assert_int_equal(s->n, 4);
    assert_int_equal(s->ev[0].kind, TB_KIND_REASONING);
    assert_near(s->ev[0].t, 0.3, 1e-9);
    /* Two events in one entry get that entry's time; an event split over
     * two entries gets the time of the one that completed it. */
    assert_near(s->ev[1].t, 0.35, 1e-9);
    assert_near(s->ev[2].t, 0.35, 1e-9);
    assert_near(s->ev[3].t, 0.5, 1e-9);
    t = joined(s, 0, TB_KIND_CONTENT);
    assert_string_equal(t, " Hello world.");
    free(t);
    assert_int_equal(s->usage_tokens, 4);
    assert_string_equal(im.req[1].error, "no response recorded");
    /* Triton's text_output: one chunk each. */
    s = &im.req[2].stream;
    assert_int_equal(s->n, 2);
    assert_near(s->ev[1].t, 2.000000005, 1e-12);
    tb_import_free(&im);
}

static void aiperf_raw_good(void **state)
{
    struct tb_import im;
    const struct tb_stream *s;
    char *t;
    (void)state;
    load(TB_IMPORT_AIPERF_RAW, "import/aiperf-raw/good.jsonl", &im);
    assert_int_equal(im.n, 2);
    s = &im.req[0].stream;
    assert_string_equal(im.req[0].name, "line 1 (session 0)");
    assert_string_equal(s->model, "llama");
    assert_int_equal(s->n, 3);
    assert_near(s->ev[0].t, 0.3, 1e-9);
    assert_near(s->ev[1].t, 0.4, 1e-9); /* split over two text responses */
    t = joined(s, 0, -1);
    assert_string_equal(t, " Hello again.");
    free(t);
    assert_string_equal(im.req[1].error, "Server encountered an internal error (code 500)");
    tb_import_free(&im);
}

static void aiperf_good(void **state)
{
    struct tb_import im;
    const struct tb_stream *s;
    double t = 0.2555;
    static const double icl[] = {4.9, 5.3, 4.8, 5.7, 4.8, 5.1, 5.5, 5.5};
    (void)state;
    load(TB_IMPORT_AIPERF, "import/aiperf/good.jsonl", &im);
    assert_int_equal(im.n, 2);
    s = &im.req[0].stream;
    assert_int_equal(s->n, 9);
    for (size_t i = 0; i < 9; i++) {
        assert_near(s->ev[i].t, t, 1e-9);
        assert_int_equal(s->ev[i].tokens, 1);
        if (i < 8)
            t += icl[i] / 1000;
    }
    assert_int_equal(s->usage_tokens, 9);
    assert_string_equal(im.req[1].error,
                        "Request was cancelled after 0.000 seconds (cancelled, code 499)");
    tb_import_free(&im);
}

/* What an import builds from counts is budgeted over the whole file:
 * once TB_IMPORT_ESTIMATED_MAX is spent, the next text-less request is
 * refused before anything of it is built, naming its line. */
static void estimated_budget(void **state)
{
    struct tb_import im;
    char err[ERRLEN], *buf;
    size_t len;
    int rc;
    (void)state;
    buf = tb_test_slurp(tb_test_data("import/aiperf/good.jsonl"), &len);
    tb_import_init(&im);
    rc = tb_import_mem(TB_IMPORT_AIPERF, buf, len, "good.jsonl", &im, err, sizeof(err));
    assert_int_equal(rc, 0);
    /* 9 events of 32 bytes and their estimated text (4 characters a
     * token), counted once. */
    assert_true(im.estimated_bytes >= (uint64_t)9 * (32 + 4) &&
                im.estimated_bytes < (uint64_t)9 * (32 + 8));
    tb_import_free(&im);
    tb_import_init(&im);
    im.estimated_bytes = TB_IMPORT_ESTIMATED_MAX - (uint64_t)9 * 32;
    rc = tb_import_mem(TB_IMPORT_AIPERF, buf, len, "good.jsonl", &im, err, sizeof(err));
    assert_int_equal(rc, TB_ETOOBIG);
    assert_non_null(strstr(err, "good.jsonl:1: metrics: over a cap"));
    assert_int_equal(im.n, 1);
    assert_int_equal(im.req[0].stream.n, 0);
    tb_import_free(&im);
    free(buf);
}

/* The simulator's view of one imported request. */
static void simulate(const struct tb_stream *s, struct tb_sim_result *r)
{
    struct tb_sim_opts o;
    struct tb_clock clk;
    char err[ERRLEN];
    tb_sim_opts_default(&o);
    tb_clock_virtual_init(&clk);
    if (tb_sim_run(s, &o, &clk, NULL, NULL, r, err, sizeof(err)) != 0)
        fail_msg("tb_sim_run: %s", err);
}

/* AIPerf's per-record export as written between 2025-10-09 and the
 * rename of 2025-10-10: ttft / ttst rather than time_to_first_token. */
static void aiperf_old_tags(void **state)
{
    static const double t[] = {0.180, 0.195, 0.215, 0.240, 0.250};
    struct tb_import im;
    struct tb_sim_result r;
    const struct tb_stream *s;
    (void)state;
    load(TB_IMPORT_AIPERF, "import/aiperf/v0.1-ttft.jsonl", &im);
    assert_int_equal(im.n, 2);
    assert_string_equal(im.req[0].error, "");
    assert_string_equal(im.req[1].error, "");
    s = &im.req[0].stream;
    assert_int_equal(s->n, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_near(s->ev[i].t, t[i], 1e-9);
        assert_int_equal(s->ev[i].kind, TB_KIND_CONTENT);
    }
    /* The file's own numbers: TTFT 180 ms, 5 tokens, and its
     * output_token_throughput_per_user (1 / inter_token_latency). */
    simulate(s, &r);
    assert_near(r.ttft, 0.180, 1e-9);
    assert_int_equal(r.content_events, 5);
    assert_int_equal(r.content_tokens, 5);
    assert_int_equal(r.usage_tokens, 5);
    assert_near(r.decode_tps, 57.142857142857146, 1e-6);
    /* 6 tokens over 3 chunks, a 1.5 s stall before the last. */
    s = &im.req[1].stream;
    assert_int_equal(s->n, 3);
    assert_int_equal(s->ev[1].tokens, 2);
    assert_near(s->ev[2].t, 1.810, 1e-9);
    simulate(s, &r);
    assert_near(r.ttft, 0.300, 1e-9);
    assert_int_equal(r.content_tokens, 6);
    assert_int_equal(im.estimated, 2);
    tb_import_free(&im);
}

/* A record without inter_chunk_latency (TTFT, TTST and the request
 * latency only): one chunk a token, the second at TTST, the rest evenly to
 * the end, so the decode rate is the file's own 1 / inter_token_latency. */
static void aiperf_no_chunks(void **state)
{
    static const char rec[] =
        "{\"metadata\":{\"session_num\":0},\"metrics\":{\"ttft\":{\"value\":100.0,\"unit\":"
        "\"ms\"},\"ttst\":{\"value\":120.0,\"unit\":\"ms\"},\"request_latency\":{\"value\":"
        "180.0,\"unit\":\"ms\"},\"output_token_count\":{\"value\":5,\"unit\":\"tokens\"}},"
        "\"error\":null}\n";
    struct tb_import im;
    struct tb_sim_result r;
    char err[ERRLEN];
    (void)state;
    tb_import_init(&im);
    assert_int_equal(tb_import_mem(TB_IMPORT_AIPERF, rec, strlen(rec), "a", &im, err, sizeof(err)),
                     0);
    assert_int_equal(im.req[0].stream.n, 5);
    assert_near(im.req[0].stream.ev[1].t, 0.12, 1e-9);
    assert_near(im.req[0].stream.ev[4].t, 0.18, 1e-9);
    simulate(&im.req[0].stream, &r);
    assert_near(r.ttft, 0.1, 1e-9);
    assert_near(r.decode_tps, 4 / 0.08, 1e-6); /* (180 - 100) ms over 4 gaps */
    tb_import_free(&im);
}

/* A reasoning model: chunks before time_to_first_output_token are
 * reasoning (counted, never spoken), TTFT is at the first output token,
 * and the tokens the report counts are the usage (output_token_count). */
static void aiperf_reasoning(void **state)
{
    struct tb_import im;
    struct tb_sim_result r;
    const struct tb_stream *s;
    (void)state;
    load(TB_IMPORT_AIPERF, "import/aiperf/reasoning.jsonl", &im);
    assert_int_equal(im.n, 2);
    s = &im.req[0].stream;
    assert_int_equal(s->n, 10);
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(s->ev[i].kind, i < 5 ? TB_KIND_REASONING : TB_KIND_CONTENT);
        assert_int_equal(s->ev[i].tokens, i < 5 ? 2 : 1);
    }
    simulate(s, &r);
    assert_near(r.ttft, 0.250, 1e-9);
    assert_int_equal(r.content_events, 5);
    assert_int_equal(r.content_tokens, 5);
    assert_int_equal(r.usage_tokens, 5);
    assert_int_equal(r.reasoning_events, 5);
    assert_int_equal(r.reasoning_tokens, 10);
    assert_near(r.decode_tps, 100.0, 1e-6);
    /* A cancellation: failed, with the tool's own text and code. */
    assert_int_equal(im.req[1].stream.n, 0);
    assert_string_equal(im.req[1].error,
                        "Request was cancelled after 0.500 seconds (cancelled, code 499)");
    tb_import_free(&im);
}

/* Without text, an event's speech is its tokens times chars_per_token
 * characters, the same wherever the request is in the file. */
static void estimated_text(void **state)
{
    static const char rec[] =
        "{\"metadata\":{\"session_num\":%d},\"metrics\":{\"time_to_first_token\":{\"value\":"
        "100.0,\"unit\":\"ms\"},\"inter_chunk_latency\":{\"value\":[10.0,10.0,10.0],\"unit\":"
        "\"ms\"},\"output_token_count\":{\"value\":%d,\"unit\":\"tokens\"}},\"error\":null}\n";
    char one[1024], three[4096];
    struct tb_import a, b, c;
    char err[ERRLEN];
    size_t n = 0;
    (void)state;
    snprintf(one, sizeof(one), rec, 0, 7);
    for (int i = 0; i < 3; i++)
        n += (size_t)snprintf(three + n, sizeof(three) - n, rec, i, i == 2 ? 7 : 3 + i);
    tb_import_init(&a);
    tb_import_init(&b);
    tb_import_init(&c);
    c.chars_per_token = 8;
    assert_int_equal(tb_import_mem(TB_IMPORT_AIPERF, one, strlen(one), "a", &a, err, sizeof(err)),
                     0);
    assert_int_equal(tb_import_mem(TB_IMPORT_AIPERF, three, n, "b", &b, err, sizeof(err)), 0);
    assert_int_equal(tb_import_mem(TB_IMPORT_AIPERF, one, strlen(one), "c", &c, err, sizeof(err)),
                     0);
    assert_int_equal(b.n, 3);
    /* Line 1 of one file and line 3 of another: the same stream. */
    assert_int_equal(a.req[0].stream.n, 4);
    assert_int_equal(b.req[2].stream.n, 4);
    assert_int_equal(a.req[0].stream.text_len, b.req[2].stream.text_len);
    assert_memory_equal(a.req[0].stream.text, b.req[2].stream.text, a.req[0].stream.text_len);
    for (size_t i = 0; i < 4; i++) {
        const struct tb_event *e = &a.req[0].stream.ev[i];
        /* 7 tokens over 4 chunks: 2, 2, 2, 1; 4 characters a token
         * (a character more when a cut would split one). */
        assert_int_equal(e->tokens, i < 3 ? 2 : 1);
        assert_in_range(e->len, e->tokens * 4, e->tokens * 4 + 3);
        assert_in_range(c.req[0].stream.ev[i].len, e->tokens * 8, e->tokens * 8 + 3);
    }
    assert_int_equal(a.estimated, 1);
    tb_import_free(&a);
    tb_import_free(&b);
    tb_import_free(&c);
}

/* Python's json.dumps writes Infinity, -Infinity and NaN. */
static void python_tokens(void **state)
{
    static const char doc[] = "{\"request_rate\": Infinity, \"std\": NaN, \"m\": -Infinity, "
                              "\"ttfts\": [0.1], \"itls\": [[0.1]], "
                              "\"generated_texts\": [\"NaN or Infinity\"]}";
    static const char bad[] = "{\"a\": NaN, \"b\": NaN, \"c\": Infinity, x}";
    static const char same[] = "{\"a\": 111, \"b\": 111, \"c\": 11111111, x}";
    char want[ERRLEN];
    struct tb_import im;
    char err[ERRLEN];
    char *t;
    (void)state;
    load(TB_IMPORT_SGLANG, "import/sglang/default-rate.jsonl", &im);
    assert_int_equal(im.n, 2);
    assert_int_equal(im.req[1].stream.n, 4);
    assert_near(im.req[1].stream.ev[0].t, 0.12, 1e-12);
    assert_near(im.req[1].stream.ev[3].t, 0.195, 1e-12);
    assert_int_equal(im.req[1].stream.usage_tokens, 4);
    tb_import_free(&im);
    tb_import_init(&im);
    assert_int_equal(tb_import_mem(TB_IMPORT_VLLM, doc, strlen(doc), "d", &im, err, sizeof(err)),
                     0);
    t = joined(&im.req[0].stream, 0, -1); /* inside strings: untouched */
    assert_string_equal(t, "NaN or Infinity");
    free(t);
    tb_import_free(&im);
    /* Error offsets are the file's own, not the rewritten text's. */
    tb_import_init(&im);
    assert_int_equal(tb_import_mem(TB_IMPORT_VLLM, bad, strlen(bad), "d", &im, err, sizeof(err)),
                     TB_EFORMAT);
    assert_int_equal(
        tb_import_mem(TB_IMPORT_VLLM, same, strlen(same), "d", &im, want, sizeof(want)),
        TB_EFORMAT);
    assert_string_equal(err, want);
    tb_import_free(&im);
}

/* vLLM --append-result: one JSON document a line, every run read. */
static void vllm_runs(void **state)
{
    struct tb_import im;
    (void)state;
    load(TB_IMPORT_VLLM, "import/vllm/append.json", &im);
    assert_int_equal(im.n, 3);
    assert_int_equal(im.runs, 2);
    assert_string_equal(im.req[0].name, "run 1 request 0");
    assert_string_equal(im.req[2].name, "run 2 request 0");
    assert_int_equal(im.req[2].run, 2);
    assert_near(im.req[2].stream.ev[3].t, 1.9, 1e-12);
    assert_string_equal(im.req[2].stream.model, "Qwen/Qwen3-0.6B");
    assert_int_equal(tb_import_keep_run(&im, 3), TB_EINVAL);
    assert_int_equal(im.n, 3);
    assert_int_equal(tb_import_keep_run(&im, 1), 0);
    assert_int_equal(im.n, 2);
    assert_string_equal(im.req[1].name, "run 1 request 1");
    tb_import_free(&im);
}

/* GenAI-Perf without --streaming: one JSON body, one event. */
static void genai_non_streaming(void **state)
{
    struct tb_import im;
    struct tb_sim_result r;
    char *t;
    (void)state;
    load(TB_IMPORT_GENAI_PERF, "import/genai-perf/non-streaming.json", &im);
    assert_int_equal(im.n, 2);
    assert_int_equal(im.not_streamed, 2);
    assert_int_equal(im.req[0].stream.n, 1);
    assert_near(im.req[0].stream.ev[0].t, 0.75, 1e-6); /* ns since 1970 in a double */
    assert_int_equal(im.req[0].stream.ev[0].tokens, 9);
    t = joined(&im.req[0].stream, 0, TB_KIND_CONTENT);
    assert_string_equal(t, "Hello! How can I help you today?");
    free(t);
    simulate(&im.req[1].stream, &r);
    assert_near(r.ttft, 0.5, 1e-6);
    assert_int_equal(r.content_events, 1);
    assert_int_equal(r.usage_tokens, 3);
    tb_import_free(&im);
}

/* Every good file is told apart by its content; auto reads it as that. */
static void detect(void **state)
{
    static const struct {
        const char *file;
        enum tb_import_format f;
    } files[] = {{"import/vllm/good.json", TB_IMPORT_VLLM},
                 {"import/vllm/append.json", TB_IMPORT_VLLM},
                 {"import/sglang/good.jsonl", TB_IMPORT_SGLANG},
                 {"import/sglang/default-rate.jsonl", TB_IMPORT_SGLANG},
                 {"import/genai-perf/good.json", TB_IMPORT_GENAI_PERF},
                 {"import/genai-perf/non-streaming.json", TB_IMPORT_GENAI_PERF},
                 {"import/aiperf-raw/good.jsonl", TB_IMPORT_AIPERF_RAW},
                 {"import/aiperf/good.jsonl", TB_IMPORT_AIPERF},
                 {"import/aiperf/v0.1-ttft.jsonl", TB_IMPORT_AIPERF},
                 {"import/aiperf/reasoning.jsonl", TB_IMPORT_AIPERF}};
    static const char summary[] = "{\n  \"request_throughput\": {\"unit\": \"requests/sec\", "
                                  "\"avg\": 3.2},\n  \"input_config\": {\"endpoint\": {}}\n}\n";
    enum tb_import_format f;
    const char *what;
    struct tb_import im;
    char err[ERRLEN];
    (void)state;
    for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
        size_t len;
        char *buf = tb_test_slurp(tb_test_data(files[k].file), &len);
        if (tb_import_detect(buf, len, &f, &what) != 0 || f != files[k].f)
            fail_msg("%s: detected %d, wanted %d", files[k].file, (int)f, (int)files[k].f);
        assert_non_null(what);
        tb_import_init(&im);
        assert_int_equal(tb_import_mem(TB_IMPORT_AUTO, buf, len, "x", &im, err, sizeof(err)), 0);
        assert_int_equal(im.format, files[k].f);
        tb_import_free(&im);
        free(buf);
    }
    /* A summary without per-request data, and something else. */
    assert_int_equal(tb_import_detect(summary, strlen(summary), &f, &what), TB_EFORMAT);
    assert_non_null(strstr(what, "keeps no per-request data"));
    tb_import_init(&im);
    assert_int_equal(
        tb_import_mem(TB_IMPORT_AUTO, summary, strlen(summary), "s.json", &im, err, sizeof(err)),
        TB_EFORMAT);
    assert_non_null(strstr(err, "s.json: this looks like an AIPerf or GenAI-Perf summary"));
    assert_int_equal(
        tb_import_mem(TB_IMPORT_AIPERF, summary, strlen(summary), "s.json", &im, err, sizeof(err)),
        TB_EFORMAT);
    assert_non_null(strstr(err, "s.json: not aiperf: this looks like"));
    assert_int_equal(
        tb_import_mem(TB_IMPORT_AUTO, "{\"a\": 1}", 8, "o.json", &im, err, sizeof(err)),
        TB_EFORMAT);
    assert_non_null(strstr(err, "o.json: not a benchmark result ttsbuf knows"));
    /* A vLLM file named as SGLang: the mismatch says which to use. */
    {
        size_t len;
        char *buf = tb_test_slurp(tb_test_data("import/vllm/append.json"), &len);
        assert_int_equal(tb_import_mem(TB_IMPORT_SGLANG, buf, len, "v.json", &im, err, sizeof(err)),
                         TB_EFORMAT);
        assert_non_null(strstr(err, "v.json: not sglang: this looks like a vLLM bench serve "
                                    "result; try vllm:v.json"));
        free(buf);
    }
    assert_int_equal(im.n, 0);
    tb_import_free(&im);
}

/* Runs ttsbuf with `head` DATAFILE `tail`, wants exit `code` and each of
 * the NULL-ended strings in its output. */
static void run_wants(const char *head, const char *file, const char *tail, int code, ...)
{
    char args[2048];
    struct tb_test_out o;
    va_list ap;
    const char *want;
    snprintf(args, sizeof(args), "%s%s%s", head, tb_test_data(file), tail);
    o = tb_test_run(args);
    if (o.code != code)
        fail_msg("%s: exit %d, wanted %d: %s%s", args, o.code, code, o.so, o.se);
    va_start(ap, code);
    while ((want = va_arg(ap, const char *)) != NULL)
        if (strstr(o.so, want) == NULL && strstr(o.se, want) == NULL)
            fail_msg("%s: no '%s' in: %s%s", args, want, o.so, o.se);
    va_end(ap);
    tb_test_out_free(&o);
}

/* A stream with a finish reason but no [DONE] imports whole, with the
 * warning `run` gives for it: in the request, in --json ("warning", as
 * run's), and in the reports. */
static void genai_no_done(void **state)
{
    static const char want[] = "the stream ended without [DONE] (finish_reason stop)";
    struct tb_import im;
    char args[2048];
    struct tb_test_out o;
    const cJSON *w;
    cJSON *j;
    char *line2;
    (void)state;
    load(TB_IMPORT_GENAI_PERF, "import/genai-perf/no-done.json", &im);
    assert_int_equal(im.n, 2);
    assert_int_equal(im.req[0].stream_error, 0);
    assert_string_equal(im.req[0].error, "");
    assert_int_equal(im.req[0].stream.n, 2);
    assert_string_equal(im.req[0].warning, want);
    assert_string_equal(im.req[1].warning, "");
    tb_import_free(&im);

    /* --json over several: the first line warns, the second does not. */
    snprintf(args, sizeof(args), "sim --import 'genai-perf:%s' --json",
             tb_test_data("import/genai-perf/no-done.json"));
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    line2 = strchr(o.so, '\n');
    assert_non_null(line2);
    *line2++ = '\0';
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    w = cJSON_GetObjectItem(j, "warning");
    assert_true(cJSON_IsString(w));
    assert_string_equal(w->valuestring, want);
    assert_null(cJSON_GetObjectItem(j, "error"));
    cJSON_Delete(j);
    j = cJSON_Parse(line2);
    assert_non_null(j);
    assert_null(cJSON_GetObjectItem(j, "warning"));
    cJSON_Delete(j);
    tb_test_out_free(&o);

    /* One request: the ordinary report and its JSON. */
    snprintf(args, sizeof(args), "sim --import 'genai-perf:%s' --request 0 --json",
             tb_test_data("import/genai-perf/no-done.json"));
    j = tb_test_run_json(NULL, args, 0);
    w = cJSON_GetObjectItem(j, "warning");
    assert_true(cJSON_IsString(w));
    assert_string_equal(w->valuestring, want);
    cJSON_Delete(j);
    run_wants("sim --import 'genai-perf:", "import/genai-perf/no-done.json", "' --request 0", 0,
              "  note: the stream ended without [DONE] (finish_reason stop)\n", (const char *)NULL);
    run_wants("sim --import 'genai-perf:", "import/genai-perf/no-done.json", "'", 0,
              "  (the stream ended without [DONE] (finish_reason stop))\n", "2 played, 0 failed",
              (const char *)NULL);
}

/* sim and sweep over the new layouts: the note, --run, and a file where
 * every request failed exits non-zero. */
static void cli_variants(void **state)
{
    char args[2048];
    (void)state;
    run_wants("sim --import '", "import/aiperf/v0.1-ttft.jsonl", "'", 0,
              "read as aiperf (told from the content)",
              "speech time estimated from token counts at 4 characters", "2 played, 0 failed",
              (const char *)NULL);
    run_wants("sim --import 'aiperf:", "import/aiperf/reasoning.jsonl",
              "' --request 0 --json --chars-per-token 3.5", 0,
              "\"note\":\"no text recorded: speech time estimated from token counts at 3.5 "
              "characters",
              "\"ttft_s\":0.25", "\"content_tokens\":5", "\"usage_tokens\":5", (const char *)NULL);
    run_wants("sim --import 'auto:", "import/vllm/append.json", "' --run 2", 0, "run 2 request 0",
              (const char *)NULL);
    run_wants("sim --import '", "import/genai-perf/non-streaming.json", "'", 0,
              "the run was not streamed", (const char *)NULL);
    /* Every request failed: the table says why, the exit that none played. */
    run_wants("sim --import '", "import/aiperf/all-cancelled.jsonl", "'", 3,
              "failed: Request was cancelled after 0.500 seconds",
              "every one of the 2 requests failed", (const char *)NULL);
    run_wants("sweep --import '", "import/vllm/append.json", "' --run 1 --chars-per-token 5", 0,
              "2 streams x 1 setting", "read as vllm (told from the content)", (const char *)NULL);
    snprintf(args, sizeof(args), "sim --import 'vllm:%s' --run 3",
             tb_test_data("import/vllm/append.json"));
    tb_test_expect_error(args, 2, "--run: ");
    tb_test_expect_error("sim --run 2", 2, "--run needs --import");
    tb_test_expect_error("sim --import x.json --chars-per-token 0", 2, "--chars-per-token");
    snprintf(args, sizeof(args), "sweep --import '%s'",
             tb_test_data("import/aiperf/all-cancelled.jsonl"));
    tb_test_expect_error(args, 3, "every one of the 2 requests failed");
}

/* Every bad_* file fails with TB_EFORMAT (or the code on the second line
 * of its .err) and the message on the first line. */
static void bad_files(void **state)
{
    static const struct {
        enum tb_import_format f;
        const char *dir;
    } dirs[] = {{TB_IMPORT_VLLM, "vllm"},
                {TB_IMPORT_SGLANG, "sglang"},
                {TB_IMPORT_GENAI_PERF, "genai-perf"},
                {TB_IMPORT_AIPERF_RAW, "aiperf-raw"},
                {TB_IMPORT_AIPERF, "aiperf"}};
    size_t total = 0;
    (void)state;
    for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
        char dir[512], **names;
        size_t n;
        snprintf(dir, sizeof(dir), "%s", tb_test_data("import"));
        snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", dirs[d].dir);
        n = tb_test_list(dir, "bad_", ".err", 1, &names);
        for (size_t i = 0; i < n; i++) {
            char path[1024], file[256], err[ERRLEN], *want, *nl;
            struct tb_import im;
            size_t len;
            char *buf;
            int rc, code;
            snprintf(path, sizeof(path), "%s/%s.err", dir, names[i]);
            want = tb_test_slurp_str(path);
            code = TB_EFORMAT;
            if ((nl = strchr(want, '\n')) != NULL) {
                *nl = '\0';
                /* A second line names another code: a cap, not a format. */
                if (strncmp(nl + 1, "ETOOBIG", 7) == 0)
                    code = TB_ETOOBIG;
            }
            snprintf(file, sizeof(file), "%s%s", names[i],
                     dirs[d].f == TB_IMPORT_VLLM || dirs[d].f == TB_IMPORT_GENAI_PERF ? ".json"
                                                                                      : ".jsonl");
            snprintf(path, sizeof(path), "%s/%s", dir, file);
            buf = tb_test_slurp(path, &len);
            tb_import_init(&im);
            rc = tb_import_mem(dirs[d].f, buf, len, file, &im, err, sizeof(err));
            if (rc != code || strstr(err, want) == NULL)
                fail_msg("%s: rc %d '%s', wanted %d '%s'", path, rc, err, code, want);
            tb_import_free(&im);
            free(buf);
            free(want);
            total++;
        }
        tb_test_free_names(names, n);
    }
    assert_true(total >= 10);
}

/* Every prefix of every good file: an error or a result, never a crash
 * or a leak (ASan), and the error always names the file. */
static void prefixes(void **state)
{
    static const struct {
        enum tb_import_format f;
        const char *file;
    } files[] = {{TB_IMPORT_VLLM, "import/vllm/good.json"},
                 {TB_IMPORT_SGLANG, "import/sglang/good.jsonl"},
                 {TB_IMPORT_GENAI_PERF, "import/genai-perf/good.json"},
                 {TB_IMPORT_AIPERF_RAW, "import/aiperf-raw/good.jsonl"},
                 {TB_IMPORT_AIPERF, "import/aiperf/good.jsonl"},
                 {TB_IMPORT_AIPERF, "import/aiperf/v0.1-ttft.jsonl"},
                 {TB_IMPORT_AIPERF, "import/aiperf/reasoning.jsonl"},
                 {TB_IMPORT_AUTO, "import/sglang/default-rate.jsonl"},
                 {TB_IMPORT_VLLM, "import/vllm/append.json"},
                 {TB_IMPORT_AUTO, "import/vllm/append.json"},
                 {TB_IMPORT_GENAI_PERF, "import/genai-perf/non-streaming.json"}};
    (void)state;
    for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
        size_t len;
        char *buf = tb_test_slurp(tb_test_data(files[k].file), &len);
        for (size_t cut = 0; cut < len; cut++) {
            struct tb_import im;
            char err[ERRLEN] = "";
            char *exact = malloc(cut + 1);
            int rc;
            assert_non_null(exact);
            memcpy(exact, buf, cut);
            tb_import_init(&im);
            rc = tb_import_mem(files[k].f, exact, cut, "x.json", &im, err, sizeof(err));
            if (rc != 0 && strncmp(err, "x.json", 6) != 0)
                fail_msg("%s cut at %zu: '%s' does not name the file", files[k].file, cut, err);
            tb_import_free(&im);
            free(exact);
        }
        free(buf);
    }
}

static void spec_and_names(void **state)
{
    enum tb_import_format f;
    const char *path;
    char err[ERRLEN];
    (void)state;
    assert_int_equal(tb_import_spec("aiperf-raw:a:b.jsonl", &f, &path, err, sizeof(err)), 0);
    assert_int_equal(f, TB_IMPORT_AIPERF_RAW);
    assert_string_equal(path, "a:b.jsonl");
    assert_int_equal(tb_import_spec("vllm:", &f, &path, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "genai-perf"));
    /* No format, or a prefix that names none: the whole is the file, and
     * the format is told from the content. */
    assert_int_equal(tb_import_spec("locust:x", &f, &path, err, sizeof(err)), 0);
    assert_int_equal(f, TB_IMPORT_AUTO);
    assert_string_equal(path, "locust:x");
    assert_int_equal(tb_import_spec("auto:r.json", &f, &path, err, sizeof(err)), 0);
    assert_int_equal(f, TB_IMPORT_AUTO);
    assert_string_equal(path, "r.json");
    for (int i = 0; i < TB_IMPORT__COUNT; i++) {
        char spec[64];
        snprintf(spec, sizeof(spec), "%s:f", tb_import_format_name((enum tb_import_format)i));
        assert_int_equal(tb_import_spec(spec, &f, &path, err, sizeof(err)), 0);
        assert_int_equal(f, i);
    }
    {
        /* Names are cut at a character boundary, never inside one. */
        char small[4];
        assert_int_equal(tb_utf8_copy(small, sizeof(small), "a\xc3\xa9\xc3\xa9"), 3);
        assert_string_equal(small, "a\xc3\xa9");
        assert_int_equal(tb_utf8_copy(small, sizeof(small), "ab\xc3\xa9"), 2);
        assert_string_equal(small, "ab");
    }
    assert_int_equal(tb_import_file(TB_IMPORT_VLLM, "/nonexistent/x.json", &(struct tb_import){0},
                                    err, sizeof(err)),
                     TB_EIO);
    assert_non_null(strstr(err, "/nonexistent/x.json"));
}

/* A text shorter than its chunks: code points, then dropped chunks. */
static void short_text(void **state)
{
    static const char doc[] = "{\"ttfts\":[0.1],\"itls\":[[0.1,0.1,0.1]],"
                              "\"generated_texts\":[\"ab\"],\"output_lens\":[4]}";
    struct tb_import im;
    char err[ERRLEN];
    (void)state;
    tb_import_init(&im);
    assert_int_equal(tb_import_mem(TB_IMPORT_VLLM, doc, strlen(doc), "d", &im, err, sizeof(err)),
                     0);
    assert_int_equal(im.req[0].stream.n, 2);
    assert_int_equal(im.empty_chunks, 2);
    assert_int_equal(im.req[0].stream.usage_tokens, 4);
    tb_import_free(&im);
}

static void cli_import(void **state)
{
    char args[2048];
    struct tb_test_out o;
    (void)state;
    /* Several requests: a table and the distribution over them. */
    snprintf(args, sizeof(args), "sim --import 'vllm:%s'", tb_test_data("import/vllm/good.json"));
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "3 requests"));
    assert_non_null(strstr(o.so, "failed: Connection reset by peer"));
    assert_non_null(strstr(o.so, "2 played, 1 failed; 2 of 2 gapless"));
    tb_test_out_free(&o);
    /* --request N: the ordinary report of that request. */
    snprintf(args, sizeof(args), "sim --import 'sglang:%s' --request 2 --json",
             tb_test_data("import/sglang/good.jsonl"));
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "\"source\":\"import\""));
    assert_non_null(strstr(o.so, "line 3 request 0"));
    assert_non_null(strstr(o.so, "\"underruns\":1"));
    tb_test_out_free(&o);
    /* --json over several: one object a line. */
    snprintf(args, sizeof(args), "sim --import 'aiperf:%s' --json",
             tb_test_data("import/aiperf/good.jsonl"));
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(
        strstr(o.so, "\"error\":{\"kind\":\"failed\",\"message\":\"Request was cancelled"));
    tb_test_out_free(&o);
    /* --fail-on-underrun over several. */
    snprintf(args, sizeof(args), "sim --import 'sglang:%s' --fail-on-underrun",
             tb_test_data("import/sglang/good.jsonl"));
    o = tb_test_run(args);
    assert_int_equal(o.code, 1);
    tb_test_out_free(&o);

    snprintf(args, sizeof(args), "sim --import 'vllm:%s'",
             tb_test_data("import/vllm/bad_itl.json"));
    tb_test_expect_error(args, 2, "bad_itl.json: itls[1][1]: not a number >= 0");
    snprintf(args, sizeof(args), "sim --import 'aiperf:%s'",
             tb_test_data("import/aiperf/bad_icl.jsonl"));
    tb_test_expect_error(args, 2, "bad_icl.jsonl:1: metrics.inter_chunk_latency.value[3]");
    /* Gaps that add up to infinity gave "verdict: no gaps", first audio
     * "inf s", and a --record trace with "t": null. */
    snprintf(args, sizeof(args), "sim --import 'vllm:%s' --record /dev/null",
             tb_test_data("import/vllm/bad_itls_sum_inf.json"));
    tb_test_expect_error(args, 2, "bad_itls_sum_inf.json: itls[0][0]: the gaps add up past 1e9 s");
    /* A 303-byte record claiming 10^12 tokens over 10^12 ms allocated until
     * killed. */
    snprintf(args, sizeof(args), "sim --import 'aiperf:%s'",
             tb_test_data("import/aiperf/bad_count_huge.jsonl"));
    tb_test_expect_error(args, 2, "bad_count_huge.jsonl:1: metrics: over a cap");
    snprintf(args, sizeof(args), "sim --import 'vllm:%s' --request 3",
             tb_test_data("import/vllm/good.json"));
    tb_test_expect_error(args, 2, "--request: 3 is outside 0..2");
    snprintf(args, sizeof(args), "sim --import 'vllm:%s' --request 2",
             tb_test_data("import/vllm/good.json"));
    tb_test_expect_error(args, 2, "request 2: nothing to play (the benchmark recorded: Connection");
    snprintf(args, sizeof(args), "sim --import 'vllm:%s' --record /dev/null",
             tb_test_data("import/vllm/good.json"));
    tb_test_expect_error(args, 2, "choose one with --request N");
    tb_test_expect_error("sim --import nope:x", 2,
                         "nope:x: No such file or directory (and 'nope' is no format");
    tb_test_expect_error("sim --import vllm:", 2, "--import: 'vllm:' is not [FORMAT:]FILE");
    tb_test_expect_error("sim --import vllm:x --preset demo", 2, "give one source");
    tb_test_expect_error("sim --request 1", 2, "--request needs --import");
    tb_test_expect_error("sim --import vllm:/nonexistent.json", 2, "/nonexistent.json");
}

/* sweep --import: every request becomes a stream; bad files are errors. */
static void sweep_import(void **state)
{
    char args[2048];
    struct tb_test_out o;
    (void)state;
    snprintf(args, sizeof(args), "sweep --import vllm:%s --preroll 0,0.5",
             tb_test_data("import/vllm/good.json"));
    o = tb_test_run(args);
    if (o.code != 0 || strstr(o.so, "2 streams x 2 settings") == NULL)
        fail_msg("sweep --import: exit %d: %s%s", o.code, o.so, o.se);
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "sweep --import vllm:%s",
             tb_test_data("import/vllm/bad_itl.json"));
    tb_test_expect_error(args, 2, "itls[1][1]: not a number >= 0");
    tb_test_expect_error("sweep --import foo:x", 2, "(and 'foo' is no format");
}

/* An import stops early, in bounded memory (never reading up to the
 * 1 GiB cap first, as 1 GB of zeros on a pipe would make it): a JSON
 * document on zeros at the first NUL byte, on a sparse file over the cap
 * before reading it; a JSONL format reads a line
 * at a time and stops at the first line over its 64 MiB cap. */
static void input_memory_bounded(void **state)
{
    static const char *const want[] = {"<stdin>: a NUL byte at byte 1 (not a text file)",
                                       "over the 1 GiB import cap",
                                       "<stdin>:1: line is over the 67108864-byte cap",
                                       ".json:1: line is over the 67108864-byte cap"};
    char sparse[64], cmd[1024], errp[64], *err;
    FILE *f;
    (void)state;
    snprintf(sparse, sizeof(sparse), "/tmp/ttsbuf-sparse-%d.json", (int)getpid());
    snprintf(errp, sizeof(errp), "/tmp/ttsbuf-import-%d.err", (int)getpid());
    f = fopen(sparse, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)2 << 30), 0);
    assert_int_equal(fclose(f), 0);
    for (size_t i = 0; i < 4; i++) {
        const char *fmt = i == 2 ? "sglang" : i == 3 ? "aiperf-raw" : "vllm";
        long rss;
        int code;
        if (i % 2 == 0)
            snprintf(cmd, sizeof(cmd),
                     "head -c 1000000000 /dev/zero | '%s' sim --import %s:- 2>%s >/dev/null",
                     tb_test_bin(), fmt, errp);
        else
            snprintf(cmd, sizeof(cmd), "'%s' sim --import %s:%s 2>%s >/dev/null", tb_test_bin(),
                     fmt, sparse, errp);
        rss = tb_test_sh_rss(cmd, &code);
        err = tb_test_slurp_str(errp);
        /* 320 MiB: a 64 MiB line grown by doubling, and the sanitizers'
         * quarantine of the blocks it left; reading to the cap took 1 GiB. */
        if (code != 2 || strstr(err, want[i]) == NULL || rss > 320L * 1024)
            fail_msg("%s: exit %d, peak RSS %ld KiB, stderr '%s'; wanted '%s'", cmd, code, rss, err,
                     want[i]);
        free(err);
    }
    remove(errp);
    remove(sparse);
}

/* A JSON document is walked and read a piece at a time, never parsed
 * whole (cJSON's tree of "[0,0,...]" takes about 40 times the file): a
 * 64 MiB vLLM result with an unused 32M-value array is read, one whose
 * arrays hold such a piece, and a GenAI-Perf export too, are refused
 * naming it; each peaks under 512 MiB (it was 2.7 GB, and accepted). */
static void whole_files_bounded(void **state)
{
    static const struct {
        const char *fmt, *head, *tail, *want;
        int code;
    } cases[] = {
        {"vllm", "{\"model_id\": \"m\", \"ttfts\": [0.1], \"itls\": [[0.1]], \"unused\": [", "]}",
         NULL, 0},
        {"vllm", "{\"ttfts\": [0.1], \"itls\": [[", "]]}",
         "itls[0]: would take about 2559 MiB to read, over the cap of 64 MiB for one piece", 2},
        {"genai-perf",
         "{\"experiments\": [{\"requests\": [{\"timestamp\": 1, \"response_outputs\": [], "
         "\"response_timestamps\": [",
         "]}]}]}", "experiments[0].requests[0]: would take about 2559 MiB to read", 2},
    };
    char path[64], errp[64], cmd[512], *err;
    (void)state;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-import-big-%d.json", (int)getpid());
    snprintf(errp, sizeof(errp), "/tmp/ttsbuf-import-big-%d.err", (int)getpid());
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long rss;
        int code;
        tb_test_zeros_json(path, cases[i].head, cases[i].tail, (size_t)64 << 20);
        snprintf(cmd, sizeof(cmd), "'%s' sim --import %s:%s --json 2>%s >/dev/null", tb_test_bin(),
                 cases[i].fmt, path, errp);
        rss = tb_test_sh_rss(cmd, &code);
        err = tb_test_slurp_str(errp);
        if (code != cases[i].code ||
            (cases[i].want != NULL && strstr(err, cases[i].want) == NULL) ||
            rss > 512L * 1024 * TB_TEST_RSS_SCALE)
            fail_msg("%s: exit %d, peak RSS %ld KiB, stderr '%s'", cmd, code, rss, err);
        free(err);
    }
    remove(path);
    remove(errp);
}

int tb_test_import(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vllm_good),
        cmocka_unit_test(sglang_good),
        cmocka_unit_test(genai_good),
        cmocka_unit_test(aiperf_raw_good),
        cmocka_unit_test(aiperf_good),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(prefixes),
        cmocka_unit_test(spec_and_names),
        cmocka_unit_test(short_text),
        cmocka_unit_test(cli_import),
        cmocka_unit_test(sweep_import),
        cmocka_unit_test(aiperf_old_tags),
        cmocka_unit_test(aiperf_reasoning),
        cmocka_unit_test(aiperf_no_chunks),
        cmocka_unit_test(estimated_text),
        cmocka_unit_test(python_tokens),
        cmocka_unit_test(vllm_runs),
        cmocka_unit_test(genai_non_streaming),
        cmocka_unit_test(detect),
        cmocka_unit_test(cli_variants),
        cmocka_unit_test(input_memory_bounded),
        cmocka_unit_test(whole_files_bounded),
        cmocka_unit_test(genai_no_done),
        cmocka_unit_test(estimated_budget),
    };
    return TB_RUN_GROUP("import", tests);
}
