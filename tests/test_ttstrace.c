/*
 * test_ttstrace.c - what a real TTS did, kept and replayed: the measured
 * record (ttsmeas.h: arrival thinning, fail names, the model mapping, the
 * statistics), the trace's "tts" lines (tests/data/trace/ok_tts_*: the
 * records read, written back byte for byte; the bad_tts_* cases are
 * test_trace.c's), and `sim --trace` replaying them through the binary:
 * against a schedule worked by hand, against the library playout fed the
 * same hooks, a model swapped in, chunks that do not match, a failed
 * chunk, a time-based policy and speech output refused.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/stats.h"
#include "ttsbuf/trace.h"
#include "ttsbuf/ttsmeas.h"

static const cJSON *item(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (v == NULL)
        fail_msg("--json: no \"%s\"", k);
    return v;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("--json: \"%s\" is not a number", k);
    return v->valuedouble;
}

static void load(const char *file, struct tb_stream *s)
{
    char path[4096], err[512];
    int rc;
    snprintf(path, sizeof(path), "%s/%s", tb_test_data("trace"), file);
    tb_stream_init(s);
    rc = tb_trace_load_file(path, s, err, sizeof(err));
    if (rc != 0)
        fail_msg("%s: %s", file, err);
}

/* What tb_trace_write gives for s (owned; *len its size). */
static char *written(const struct tb_stream *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    assert_int_equal(tb_trace_write(f, s), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* ---- ttsmeas.c ------------------------------------------------------ */

/* Receives every millisecond for two seconds: the points stay one per
 * TB_TTS_ARRIVAL_S (each at least that after the one before its
 * predecessor), so their count is bounded by the span, the first is the
 * first byte and the last holds every byte. */
static void arrival_thinning(void **state)
{
    struct tb_tts_log l;
    struct tb_tts_chunk *c;
    (void)state;
    tb_tts_log_init(&l);
    assert_int_equal(tb_tts_log_add(&l, "Hi.", 3, 3, 24000, &c), 0);
    c->sent = 0.5;
    for (int i = 0; i < 2000; i++)
        assert_int_equal(tb_tts_chunk_received(c, 1.0 + i * 0.001, 480), 0);
    assert_true(c->narr >= 2);
    assert_true(c->narr <= 2 * (uint32_t)ceil(2.0 / TB_TTS_ARRIVAL_S) + 2);
    print_message("  2000 receives over 2 s: %u points\n", c->narr);
    for (uint32_t k = 2; k < c->narr; k++)
        assert_true(c->arr[k].t - c->arr[k - 2].t >= TB_TTS_ARRIVAL_S);
    for (uint32_t k = 1; k < c->narr; k++) {
        assert_true(c->arr[k].t >= c->arr[k - 1].t);
        assert_true(c->arr[k].bytes >= c->arr[k - 1].bytes);
    }
    assert_true(c->arr[0].t == c->first_byte && c->first_byte == 1.0);
    assert_true(c->arr[c->narr - 1].bytes == c->bytes && c->bytes == (uint64_t)2000 * 480);
    assert_true(c->duration == (double)(c->bytes / 2) / 24000.0);
    /* Nothing received: nothing recorded. */
    assert_int_equal(tb_tts_chunk_received(c, 9.0, 0), 0);
    assert_true(c->bytes == (uint64_t)2000 * 480);
    tb_tts_log_free(&l);
}

static void fail_names(void **state)
{
    static const char *const names[] = {"none",      "http",   "cut",     "timeout",
                                        "transport", "format", "canceled"};
    (void)state;
    assert_int_equal(sizeof(names) / sizeof(names[0]), TB_TTS_FAIL__COUNT);
    for (int k = 0; k < TB_TTS_FAIL__COUNT; k++) {
        assert_string_equal(tb_tts_fail_name(k), names[k]);
        assert_int_equal(tb_tts_fail_parse(names[k]), k);
    }
    assert_string_equal(tb_tts_fail_name(-1), "?");
    assert_string_equal(tb_tts_fail_name(TB_TTS_FAIL__COUNT), "?");
    assert_int_equal(tb_tts_fail_parse("HTTP"), -1);
    assert_int_equal(tb_tts_fail_parse(""), -1);
}

/* L_j = first_byte - sent, R_j = (end - first_byte) / duration, D_j. */
static void model_mapping(void **state)
{
    struct tb_tts_log l;
    struct tb_tts_chunk *c;
    double L, R, D;
    (void)state;
    tb_tts_log_init(&l);
    assert_int_equal(tb_tts_log_add(&l, "One.", 4, 4, 24000, &c), 0);
    assert_int_equal(tb_tts_chunk_model(c, &L, &R, &D), TB_EINVAL); /* never sent */
    c->sent = 1.0;
    assert_int_equal(tb_tts_chunk_received(c, 1.25, 38400), 0);     /* 0.8 s */
    assert_int_equal(tb_tts_chunk_model(c, &L, &R, &D), TB_EINVAL); /* no end yet */
    c->end = 1.65;
    assert_int_equal(tb_tts_chunk_model(c, &L, &R, &D), 0);
    assert_true(L == 1.25 - 1.0);
    assert_true(D == 0.8);
    assert_true(R == (1.65 - 1.25) / 0.8);
    /* No audio: no first byte, nothing to replay. */
    assert_int_equal(tb_tts_log_add(&l, "Two.", 4, 4, 24000, &c), 0);
    c->sent = 2.0;
    c->end = 2.5;
    c->fail = TB_TTS_HTTP;
    assert_int_equal(tb_tts_chunk_model(c, &L, &R, &D), TB_EINVAL);
    /* Empty audio that came at once: R is 0, not a division by zero. */
    assert_int_equal(tb_tts_log_add(&l, "", 0, 0, 24000, &c), 0);
    c->sent = 3.0;
    c->first_byte = 3.1;
    c->end = 3.1;
    assert_int_equal(tb_tts_chunk_model(c, &L, &R, &D), 0);
    assert_true(R == 0.0 && D == 0.0);
    tb_tts_log_free(&l);
}

/* Adds a chunk sent at s, first byte at s + lat, done rtf x its audio
 * later, with `bytes` of audio at 24 kHz. */
static void add(struct tb_tts_log *l, const char *text, double s, double lat, double rtf,
                uint64_t bytes, int fail)
{
    struct tb_tts_chunk *c;
    assert_int_equal(tb_tts_log_add(l, text, strlen(text), (uint32_t)strlen(text), 24000, &c), 0);
    c->fail = fail;
    if (isnan(s))
        return;
    c->sent = s;
    c->end = s;
    if (bytes > 0) {
        assert_int_equal(tb_tts_chunk_received(c, s + lat, bytes), 0);
        c->end = s + lat + rtf * c->duration;
    }
}

static void stats(void **state)
{
    struct tb_tts_log l;
    struct tb_tts_stats t;
    (void)state;
    tb_tts_log_init(&l);
    /* Nothing at all: every number unmeasured. */
    assert_int_equal(tb_tts_stats_of(&l, &t), 0);
    assert_int_equal(t.chunks, 0);
    assert_int_equal(t.first_byte.count, 0);
    assert_true(isnan(t.first_byte.p50) && isnan(t.rtf.max) && isnan(t.audio_s));
    add(&l, "aaaa", 0.5, 0.2, 0.5, 48000, TB_TTS_OK);    /* 1 s of audio */
    add(&l, "bb", 1.0, 0.4, 0.25, 24000, TB_TTS_OK);     /* 0.5 s */
    add(&l, "ccc", 2.0, 0.1, 0.5, 4800, TB_TTS_CUT);     /* 0.1 s, cut */
    add(&l, "dd", 3.0, 0.0, 0.0, 0, TB_TTS_HTTP);        /* no audio */
    add(&l, "eeeee", NAN, 0.0, 0.0, 0, TB_TTS_CANCELED); /* never sent */
    assert_int_equal(tb_tts_stats_of(&l, &t), 0);
    assert_int_equal(t.chunks, 5);
    assert_int_equal(t.sent, 4);
    assert_int_equal(t.failed, 2);
    assert_int_equal(t.canceled, 1);
    assert_int_equal(t.chars, 4 + 2 + 3 + 2);
    assert_true(t.audio_s == 1.0 + 0.5 + 0.1);
    assert_int_equal(t.first_byte.count, 3);
    {
        double v[3] = {(0.5 + 0.2) - 0.5, (1.0 + 0.4) - 1.0, (2.0 + 0.1) - 2.0};
        struct tb_stats want;
        tb_stats_of(v, 3, &want);
        assert_true(t.first_byte.p50 == want.p50);
        assert_true(t.first_byte.p95 == want.p95);
        assert_true(t.first_byte.max == want.max);
    }
    assert_int_equal(t.rtf.count, 3);
    assert_true(fabs(t.rtf.max - 0.5) < 1e-12);
    assert_true(fabs(t.rtf.p50 - 0.5) < 1e-12);
    assert_true(fabs(t.rtf.min - 0.25) < 1e-12);
    tb_tts_log_free(&l);
    /* Sent, but no audio came: latencies unmeasured, 0 s of audio. */
    tb_tts_log_init(&l);
    add(&l, "x", 1.0, 0.0, 0.0, 0, TB_TTS_TIMEOUT);
    assert_int_equal(tb_tts_stats_of(&l, &t), 0);
    assert_int_equal(t.first_byte.count, 0);
    assert_true(isnan(t.first_byte.max) && t.audio_s == 0.0);
    tb_tts_log_free(&l);
}

/* ---- the trace's "tts" lines ---------------------------------------- */

static void records_read(void **state)
{
    struct tb_stream s;
    const struct tb_tts_log *l;
    const struct tb_tts_chunk *c;
    (void)state;
    load("ok_tts_two_chunks.jsonl", &s);
    l = s.tts;
    assert_non_null(l);
    assert_string_equal(l->api, "openai");
    assert_string_equal(l->url, "http://127.0.0.1:8080");
    assert_string_equal(l->model, "");
    assert_string_equal(l->voice, "");
    assert_int_equal(l->concurrency, 1);
    assert_int_equal(l->mock, 1);
    assert_int_equal(l->n, 2);
    assert_string_equal(s.chunk_policy, "sentence");
    c = &l->c[1];
    assert_int_equal(c->chunk, 2);
    assert_int_equal(c->len, 6);
    assert_memory_equal(tb_tts_log_text(l, 1), " Fine.", 6);
    assert_int_equal(c->chars, 6);
    assert_true(c->sent == 1.0 && c->first_byte == 1.1 && c->end == 1.2);
    assert_true(c->bytes == 9600 && c->rate == 24000 && c->duration == 0.2);
    assert_int_equal(c->narr, 2);
    assert_true(c->arr[0].t == 1.1 && c->arr[0].bytes == 4800);
    assert_true(c->arr[1].t == 1.2 && c->arr[1].bytes == 9600);
    assert_int_equal(c->fail, TB_TTS_OK);
    assert_int_equal(c->status, 200);
    assert_string_equal(c->message, "");
    tb_stream_free(&s);

    load("ok_tts_failed.jsonl", &s);
    c = &s.tts->c[1];
    assert_int_equal(c->fail, TB_TTS_HTTP);
    assert_int_equal(c->status, 503);
    assert_string_equal(c->message, "model overloaded, \"retry\" later");
    assert_true(isnan(c->first_byte) && c->end == 1.05 && c->bytes == 0 && c->narr == 0);
    tb_stream_free(&s);
}

/* write -> load -> write gives the same bytes, for every good trace with
 * "tts" lines and for a log recorded in memory with times that need 17
 * digits; a stream without a log is still written as version 2. */
static void round_trip(void **state)
{
    char **names;
    size_t n = tb_test_list(tb_test_data("trace"), "ok_tts_", ".jsonl", 0, &names);
    (void)state;
    assert_true(n >= 5);
    for (size_t i = 0; i < n; i++) {
        struct tb_stream s, back;
        char *a, *b, err[512];
        size_t la, lb;
        load(names[i], &s);
        assert_non_null(s.tts);
        a = written(&s, &la);
        assert_non_null(strstr(a, "{\"ttsbuf_trace\":3,"));
        tb_stream_init(&back);
        if (tb_trace_load_mem(a, la, "w", &back, err, sizeof(err)) != 0)
            fail_msg("%s written: %s", names[i], err);
        b = written(&back, &lb);
        if (la != lb || memcmp(a, b, la) != 0)
            fail_msg("%s: write, load, write differ:\n%s---\n%s", names[i], a, b);
        tb_test_collect_bytes("round_trip", "jsonl", a, la);
        free(a);
        free(b);
        tb_stream_free(&back);
        tb_stream_free(&s);
    }
    tb_test_free_names(names, n);
    {
        struct tb_stream s, back;
        struct tb_tts_chunk *c;
        char *a, *b, err[512];
        size_t la, lb;
        tb_stream_init(&s);
        assert_int_equal(tb_stream_append(&s, 0.1 + 0.2, "Hé!", 4, 1, TB_KIND_CONTENT), 0);
        a = written(&s, &la);
        assert_non_null(strstr(a, "{\"ttsbuf_trace\":2,"));
        assert_null(strstr(a, "\"tts\""));
        free(a);
        s.tts = calloc(1, sizeof(*s.tts));
        assert_non_null(s.tts);
        tb_tts_log_init(s.tts);
        snprintf(s.tts->api, sizeof(s.tts->api), "elevenlabs");
        snprintf(s.tts->url, sizeof(s.tts->url), "https://api.elevenlabs.io");
        snprintf(s.tts->voice, sizeof(s.tts->voice), "Rachel \"R\"");
        s.tts->concurrency = 3;
        assert_int_equal(tb_tts_log_add(s.tts, "Hé!", 4, 3, 22050, &c), 0);
        c->sent = 0.1 + 0.2;
        for (int k = 0; k < 50; k++)
            assert_int_equal(tb_tts_chunk_received(c, 0.7 + k * 0.0071, 2 * (uint64_t)(k + 1)), 0);
        c->end = 1.0 / 3.0 + 1.0;
        c->fail = TB_TTS_CUT;
        c->status = 200;
        snprintf(c->message, sizeof(c->message), "the body ended after %llu bytes",
                 (unsigned long long)c->bytes);
        a = written(&s, &la);
        tb_stream_init(&back);
        if (tb_trace_load_mem(a, la, "mem", &back, err, sizeof(err)) != 0)
            fail_msg("written: %s\n%s", err, a);
        assert_true(back.tts->c[0].sent == 0.1 + 0.2 && back.tts->c[0].end == 1.0 / 3.0 + 1.0);
        assert_int_equal(back.tts->c[0].narr, c->narr);
        b = written(&back, &lb);
        if (la != lb || memcmp(a, b, la) != 0)
            fail_msg("write, load, write differ:\n%s---\n%s", a, b);
        tb_test_collect_bytes("round_trip_mem", "jsonl", a, la);
        free(a);
        free(b);
        tb_stream_free(&back);
        tb_stream_free(&s); /* frees the log too (ASan holds it) */
    }
}

/* ---- sim --trace: the replay ---------------------------------------- */

static cJSON *sim_json(const char *file, const char *more, int code)
{
    char args[4096];
    snprintf(args, sizeof(args), "sim --trace %s/%s --json %s", tb_test_data("trace"), file, more);
    return tb_test_run_json(NULL, args, code);
}

/*
 * ok_tts_schedule.jsonl by hand (concurrency 1, pre-roll 0; c_j = 0.5,
 * 0.75, 1; measured L = 0.2, 0.1, 1.2; R = 0.25, 0.2, 0.25; D = 0.8, 0.5,
 * 0.2):
 *   b_1 = 0.5, f_1 = 0.7, d_1 = 0.7 + 0.25 x 0.8 = 0.9; s_1 = 0.7, e_1 = 1.5
 *   b_2 = max(0.75, 0.9) = 0.9, f_2 = 1.0, d_2 = 1.1; s_2 = 1.5, e_2 = 2.0
 *   b_3 = max(1.0, 1.1) = 1.1, f_3 = 2.3; s_3 = 2.3: a gap of 0.3 s at
 *   2.0 before chunk 3, all the TTS's (its text came at 1.0)
 * which is what the TTS really did: each chunk was sent when the one
 * before it ended (the records' sent), and its audio came when measured.
 */
static void replay_by_hand(void **state)
{
    cJSON *j = sim_json("ok_tts_schedule.jsonl", "", 0);
    const cJSON *g, *st;
    (void)state;
    assert_string_equal(item(j, "tts_source")->valuestring, "measured");
    assert_true(fabs(num(j, "ttfa_s") - 0.7) < 1e-12);
    assert_int_equal((int)num(j, "chunks"), 3);
    assert_int_equal((int)num(j, "underruns"), 1);
    g = cJSON_GetArrayItem(item(j, "gaps"), 0);
    assert_non_null(g);
    assert_true(fabs(num(g, "at_s") - 2.0) < 1e-12);
    assert_true(fabs(num(g, "gap_s") - 0.3) < 1e-12);
    assert_int_equal((int)num(g, "chunk"), 3);
    assert_string_equal(item(g, "cause")->valuestring, "tts");
    assert_true(fabs(num(g, "tts_s") - 0.3) < 1e-12);
    assert_true(num(j, "speech_s") == 0.8 + 0.5 + 0.2);
    st = item(j, "tts_stats");
    assert_int_equal((int)num(st, "sent"), 3);
    assert_int_equal((int)num(st, "chars"), 31);
    assert_true(fabs(num(item(st, "first_byte_s"), "max") - 1.2) < 1e-12);
    assert_true(cJSON_IsNull(item(j, "tts_end")));
    assert_string_equal(item(item(j, "options"), "voice_model")->valuestring, "measured");
    cJSON_Delete(j);
}

/* The binary's numbers are the library playout's, fed the same hooks
 * (tb_playout_opts_measured) and durations, bit for bit. */
static void replay_is_the_playout(void **state)
{
    static const double close_t[] = {0.5, 0.75, 1.0};
    struct tb_stream s;
    struct tb_playout_opts o;
    struct tb_tts_measured ctx;
    struct tb_playout *p;
    struct tb_playout_result r;
    cJSON *j;
    const cJSON *g;
    (void)state;
    load("ok_tts_schedule.jsonl", &s);
    tb_playout_opts_default(&o);
    assert_int_equal(tb_playout_opts_measured(&o, &ctx, s.tts), 0);
    assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
    for (uint32_t k = 1; k <= 3; k++)
        assert_int_equal(tb_playout_add_timed(p, close_t[k - 1], k, s.tts->c[k - 1].chars,
                                              tb_playout_measured_duration(&ctx, k)),
                         0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    tb_playout_destroy(p);
    j = sim_json("ok_tts_schedule.jsonl", "", 0);
    assert_true(tb_test_same_bits(num(j, "ttfa_s"), r.ttfa));
    assert_true(tb_test_same_bits(num(j, "end_s"), r.end));
    assert_true(tb_test_same_bits(num(j, "gap_total_s"), r.gap_total));
    assert_true(tb_test_same_bits(num(j, "gap_tts_s"), r.gap_tts));
    assert_true(tb_test_same_bits(num(j, "gap_llm_s"), r.gap_llm));
    assert_int_equal((uint32_t)num(j, "underruns"), r.underruns);
    if (isnan(r.min_tps))
        assert_true(cJSON_IsNull(item(j, "min_tps")));
    else
        assert_true(tb_test_same_bits(num(j, "min_tps"), r.min_tps));
    g = cJSON_GetArrayItem(item(j, "gaps"), 0);
    assert_true(tb_test_same_bits(num(g, "gap_s"), r.gap_max));
    print_message("  ttfa %.17g, gaps %u (%.17g s), min TPS %.17g\n", r.ttfa, r.underruns,
                  r.gap_total, r.min_tps);
    cJSON_Delete(j);
    tb_stream_free(&s);
}

/* An option that sets a TTS model asks "what if": the model plays, with
 * the voice's durations, and the JSON says so. */
static void what_if(void **state)
{
    cJSON *j = sim_json("ok_tts_schedule.jsonl", "--tts-latency 0.3", 0);
    (void)state;
    assert_string_equal(item(j, "tts_source")->valuestring, "model");
    assert_true(cJSON_IsNull(item(j, "tts_stats")));
    assert_string_equal(item(item(j, "options"), "voice_model")->valuestring, "rate");
    /* The rate model's first chunk: 12 code points at 150 wpm. */
    assert_true(fabs(num(j, "ttfa_s") - (0.5 + 0.3)) < 1e-12);
    cJSON_Delete(j);
    j = sim_json("ok_tts_schedule.jsonl", "--tts-rtf 0.5", 0);
    assert_string_equal(item(j, "tts_source")->valuestring, "model");
    cJSON_Delete(j);
    /* A trace without "tts" lines and no TTS stage: none of the keys (the
     * document is the one before the stage); with a stage, a model. */
    j = sim_json("ok_basic.jsonl", "", 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "tts_source"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "tts_stats"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "tts_end"));
    cJSON_Delete(j);
    j = sim_json("ok_basic.jsonl", "--tts-rtf 0.5", 0);
    assert_string_equal(item(j, "tts_source")->valuestring, "model");
    assert_true(cJSON_IsNull(item(j, "tts_stats")));
    cJSON_Delete(j);
}

/* Chunks cut otherwise than recorded: exit 2, one line naming the first
 * that differs and the recording's policy. */
static void chunks_differ(void **state)
{
    char args[4096];
    (void)state;
    snprintf(args, sizeof(args), "sim --trace %s/ok_tts_one_chunk_two_events.jsonl --chunk token",
             tb_test_data("trace"));
    tb_test_expect_error(args, 2,
                         "ok_tts_one_chunk_two_events.jsonl: the TTS record does not match the "
                         "chunks: chunk 1 is \"Hello\", the record's is \"Hello there.\" "
                         "(recorded with --chunk sentence: try --chunk sentence)");
    snprintf(args, sizeof(args), "sim --trace %s/ok_tts_schedule.jsonl --min-chars 20",
             tb_test_data("trace"));
    tb_test_expect_error(args, 2,
                         "chunk 1 is \"Hello there. How are you?\", the record's is \"Hello "
                         "there.\" (recorded with --chunk sentence, as here: try the "
                         "recording's --min-chars and the policy's options)");
}

/* A chunk whose synthesis failed ends the speech: the chunks before it
 * play, the report says where and why, and the exit status is a failed
 * stream's (3), as run's. */
static void failed_chunk(void **state)
{
    char args[4096];
    struct tb_test_out h;
    cJSON *j = sim_json("ok_tts_failed.jsonl", "", 3);
    const cJSON *e;
    (void)state;
    assert_int_equal((int)num(j, "chunks"), 1);
    assert_true(num(j, "speech_s") == 0.8);
    /* The whole answer arrived: its LLM side is all of it. */
    assert_int_equal((int)num(j, "events"), 2);
    assert_true(num(j, "ttft_s") == 0.5);
    assert_true(fabs(num(j, "decode_tps") - 2.0) < 1e-12);
    e = item(j, "tts_end");
    assert_int_equal((int)num(e, "chunk"), 2);
    assert_string_equal(item(e, "kind")->valuestring, "http");
    assert_int_equal((int)num(e, "http_status"), 503);
    assert_string_equal(item(e, "message")->valuestring, "model overloaded, \"retry\" later");
    assert_true(cJSON_IsNull(item(j, "min_tps")));
    assert_int_equal((int)num(item(j, "tts_stats"), "failed"), 1);
    cJSON_Delete(j);
    snprintf(args, sizeof(args), "sim --trace %s/ok_tts_failed.jsonl", tb_test_data("trace"));
    h = tb_test_run(args);
    assert_int_equal(h.code, 3);
    assert_non_null(strstr(h.so, "no verdict: the speech ended at chunk 2 (tts http, HTTP 503: "
                                 "model overloaded, \"retry\" later)"));
    assert_non_null(strstr(h.so, "\n  the TTS: 1 of 2 chunks spoken, chunk 2 failed"));
    assert_non_null(strstr(h.so, "\n  the LLM: its whole answer arrived: 2 events"));
    assert_non_null(strstr(h.se, "ok_tts_failed.jsonl: the speech ended at chunk 2: tts http "
                                 "(HTTP 503): model overloaded, \"retry\" later (the TTS: "));
    tb_test_out_free(&h);
}

/* A time-based policy re-cuts the stream at each rate of the minimum-TPS
 * search, while the measured TTS is by chunk: no minimum TPS, a reason. */
static void timed_policy(void **state)
{
    cJSON *j = sim_json("ok_tts_idle.jsonl", "--chunk idle", 0);
    (void)state;
    assert_string_equal(item(j, "tts_source")->valuestring, "measured");
    assert_true(cJSON_IsNull(item(j, "min_tps")));
    assert_true(cJSON_IsNull(item(j, "speedup_needed")));
    assert_non_null(strstr(item(j, "min_tps_reason")->valuestring, "re-cuts the stream"));
    assert_int_equal((int)num(j, "chunks"), 2);
    cJSON_Delete(j);
}

/* The trace keeps timings, not audio: speech output is refused. */
static void speech_refused(void **state)
{
    char args[4096];
    (void)state;
    snprintf(args, sizeof(args), "sim --trace %s/ok_tts_schedule.jsonl --voice-model espeak",
             tb_test_data("trace"));
    tb_test_expect_error(args, 2, "the trace keeps the TTS's timings, not its audio");
}

/* sweep does not replay a measured TTS: without a TTS model option it
 * refuses the recording (it would have swept it on a latency of 0, first
 * audio and gaps that no TTS gave); with one, it sweeps that "what if". */
static void sweep_needs_a_model(void **state)
{
    char args[4096];
    struct tb_test_out o;
    (void)state;
    snprintf(args, sizeof(args), "sweep --trace %s/ok_tts_schedule.jsonl --preroll 0,0.5",
             tb_test_data("trace"));
    tb_test_expect_error(args, 2,
                         "ok_tts_schedule.jsonl kept a real TTS's timings, which sweep "
                         "does not replay (ttsbuf sim --trace does)");
    snprintf(args, sizeof(args),
             "sweep --trace %s/ok_tts_schedule.jsonl --preroll 0,0.5 --tts-latency 0.3 --json -",
             tb_test_data("trace"));
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "\"tts_latency_s\":[0.3]"));
    tb_test_out_free(&o);
    /* A trace without tts lines is swept as before. */
    snprintf(args, sizeof(args), "sweep --trace %s/ok_basic.jsonl", tb_test_data("trace"));
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
}

int tb_test_ttstrace(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arrival_thinning), cmocka_unit_test(fail_names),
        cmocka_unit_test(model_mapping),    cmocka_unit_test(stats),
        cmocka_unit_test(records_read),     cmocka_unit_test(round_trip),
        cmocka_unit_test(replay_by_hand),   cmocka_unit_test(replay_is_the_playout),
        cmocka_unit_test(what_if),          cmocka_unit_test(chunks_differ),
        cmocka_unit_test(failed_chunk),     cmocka_unit_test(timed_policy),
        cmocka_unit_test(speech_refused),   cmocka_unit_test(sweep_needs_a_model),
    };
    return TB_RUN_GROUP("ttstrace", tests);
}
