/*
 * test_simtool.c - `sim` of a tool turn's answer (issue 41): bench --out
 * against `serve --tool-call-rate 1` records a call's tool turn, whose
 * answer's trace keeps the turn's tool part ("tool_turn"); sim of it
 * gives the record's parts, and its what-if (--tool-latency, --filler)
 * moves them as bench would.  One recording for the group (setup).
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#define TOOL_WAIT 0.3  /* bench's --tool-latency, s */
#define TTS_LAT "0.05" /* the modelled TTS's first byte, s: the filler's too */

static char dir[128], trace[256];
static cJSON *rec; /* the record of the tool turn (turn 0's answer) */

static const char tools_json[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"forecast\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"when\":{\"type\":\"string\"}}}}}]";

/* The recording: one call of two turns, the first calling the tool. */
static int record(void **state)
{
    char path[256], args[1024];
    cJSON *v[8];
    size_t n;
    FILE *f;
    int port;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "simtool", "rec");
    snprintf(path, sizeof(path), "%s/convo.jsonl", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"id\":\"w\",\"turns\":[{\"text\":\"Rain?\",\"tools\":%s},\"Thanks.\"]}\n",
            tools_json);
    fclose(f);
    tb_test_serve_up("--synth tps=400,tokens=10,ttft=0.02,seed=5 --tool-call-rate 1", &port);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m --conversations %s --calls 1 "
             "--tool-latency %g --filler builtin --tts-latency " TTS_LAT " --user-turn 0.05 "
             "--out %s/out --quiet",
             port, path, TOOL_WAIT, dir);
    {
        struct tb_test_out o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("bench: exit %d: %s", o.code, o.se);
        tb_test_out_free(&o);
    }
    tb_test_serve_down(NULL);
    snprintf(path, sizeof(path), "%s/out/records.jsonl", dir);
    n = tb_test_jsonl_records(path, v, 8);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        if (tb_test_num(v[i], "tool_calls") == 1 && rec == NULL)
            rec = v[i];
        else
            cJSON_Delete(v[i]);
    }
    assert_non_null(rec);
    snprintf(trace, sizeof(trace), "%s/out/%s", dir, tb_test_str(rec, "trace"));
    return 0;
}

static int cleanup(void **state)
{
    (void)state;
    tb_test_serve_down(NULL);
    cJSON_Delete(rec);
    rec = NULL;
    tb_test_rm_rf(dir);
    return 0;
}

/* sim of request id with extra options: its "tool_turn" object (owned
 * by *doc). */
static const cJSON *sim_turn(cJSON **doc, double id, const char *opts)
{
    char args[1024];
    const cJSON *t;
    snprintf(args, sizeof(args),
             "sim --trace '%s' --request %.0f --tts-latency " TTS_LAT " --json %s", trace, id,
             opts);
    *doc = tb_test_run_json(NULL, args, 0);
    t = tb_test_key(*doc, "tool_turn");
    if (t == NULL)
        fail_msg("sim %s: no tool_turn", opts);
    return t;
}

static const char *const parts[] = {"eou_s",       "ttft_s",     "tool_s",    "aggregation_s",
                                    "tts_queue_s", "tts_ttfb_s", "preroll_s", "leading_silence_s"};
static const char *const figures[] = {"tool_start_s",
                                      "tool_end_s",
                                      "tool_s",
                                      "tool_silence_before_s",
                                      "tool_silence_during_s",
                                      "tool_silence_after_s",
                                      "filler_at_s",
                                      "filler_s",
                                      "filler_silence_before_s",
                                      "filler_silence_during_s",
                                      "filler_silence_after_s",
                                      "filler_covered",
                                      "filler_delay_s"};

/* Whether a and b (either may be null: NaN) agree within tol. */
static void near(const char *what, const char *k, double a, double b, double tol)
{
    if (!(isnan(a) && isnan(b)) && !(fabs(a - b) <= tol))
        fail_msg("%s: %s is %.17g, the record's %.17g", what, k, a, b);
}

/* The parts sum to v2v_s exactly, in their order. */
static void sums(const cJSON *l)
{
    double sum = 0;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        sum += tb_test_num(l, parts[i]);
    if (!(sum == tb_test_num(l, "v2v_s")))
        fail_msg("the parts sum to %.17g, v2v_s %.17g", sum, tb_test_num(l, "v2v_s"));
}

/* Without --tool-latency: the recorded wait, every part and figure the
 * record's (the same playout options as bench's). */
static void recorded_parts(void **state)
{
    cJSON *doc;
    const cJSON *t = sim_turn(&doc, tb_test_num(rec, "id"), "");
    const cJSON *l = tb_test_key(t, "latency"), *rl = tb_test_key(rec, "latency");
    (void)state;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        near("latency", parts[i], tb_test_num(l, parts[i]), tb_test_num(rl, parts[i]), 1e-6);
    near("latency", "v2v_s", tb_test_num(l, "v2v_s"), tb_test_num(rl, "v2v_s"), 1e-6);
    for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
        near("tool_turn", figures[i], tb_test_num(t, figures[i]), tb_test_num(rec, figures[i]),
             1e-6);
    sums(l);
    assert_true(tb_test_is_null(t, "tool_latency") && tb_test_is_null(t, "filler"));
    assert_true(tb_test_num(t, "tool_calls") == 1);
    cJSON_Delete(doc);
}

/* --tool-latency X: v2v_s moves by exactly X - the recorded tool_s; the
 * wait's silence is X, the others stay. */
static void tool_latency_moves_v2v(void **state)
{
    static const double xs[] = {0, 2.5};
    const cJSON *rl = tb_test_key(rec, "latency");
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        char opt[64];
        cJSON *doc;
        const cJSON *t, *l;
        snprintf(opt, sizeof(opt), "--tool-latency %g", xs[i]);
        t = sim_turn(&doc, tb_test_num(rec, "id"), opt);
        l = tb_test_key(t, "latency");
        assert_true(tb_test_num(t, "tool_s") == xs[i] && tb_test_num(l, "tool_s") == xs[i]);
        near(opt, "v2v_s", tb_test_num(l, "v2v_s") - tb_test_num(rl, "v2v_s"),
             xs[i] - tb_test_num(rec, "tool_s"), 1e-9);
        sums(l);
        assert_true(tb_test_num(t, "tool_silence_during_s") == xs[i]);
        near(opt, "tool_silence_after_s", tb_test_num(t, "tool_silence_after_s"),
             tb_test_num(rec, "tool_silence_after_s"), 1e-9);
        assert_string_equal(tb_test_str(t, "tool_latency"), opt + strlen("--tool-latency "));
        cJSON_Delete(doc);
    }
}

/* --filler by the modelled TTS: builtin gives the record's figures (bench
 * modelled it with the same settings); another phrase over a long wait
 * fills only its own seconds of the wait. */
static void filler_as_bench(void **state)
{
    cJSON *doc;
    const cJSON *t = sim_turn(&doc, tb_test_num(rec, "id"), "--filler builtin");
    double at, dur, w;
    (void)state;
    for (size_t i = 6; i < sizeof(figures) / sizeof(figures[0]); i++)
        near("--filler builtin", figures[i], tb_test_num(t, figures[i]),
             tb_test_num(rec, figures[i]), 1e-9);
    cJSON_Delete(doc);
    t = sim_turn(&doc, tb_test_num(rec, "id"), "--filler 'Hold on.' --tool-latency 3");
    at = tb_test_num(t, "filler_at_s");
    dur = tb_test_num(t, "filler_s");
    w = tb_test_num(t, "tool_end_s");
    near("Hold on.", "filler_at_s", at, tb_test_num(t, "tool_start_s") + atof(TTS_LAT), 1e-12);
    near("Hold on.", "filler_s", dur, 8 * 10.0 / 150, 1e-12); /* 8 code points, 150 wpm */
    /* the filler ends inside the 3 s wait: what is left of it is silence */
    near("Hold on.", "filler_silence_during_s", tb_test_num(t, "filler_silence_during_s"),
         3 - (at + dur - fmax(at, w)), 1e-9);
    assert_true(tb_test_num(t, "filler_silence_after_s") == tb_test_num(t, "tool_silence_after_s"));
    assert_true(tb_test_num(t, "filler_delay_s") == 0);
    assert_true(tb_test_num(t, "filler_covered") < 0.5);
    assert_string_equal(tb_test_str(t, "filler"), "Hold on.");
    cJSON_Delete(doc);
}

/* The human report says the turn. */
static void human_report(void **state)
{
    char args[600];
    struct tb_test_out o;
    (void)state;
    snprintf(args, sizeof(args), "sim --trace '%s' --request %.0f --tool-latency 1", trace,
             tb_test_num(rec, "id"));
    o = tb_test_run(args);
    if (o.code != 0 || strstr(o.so, "the tool turn (1 call") == NULL ||
        strstr(o.so, "tool's wait        1.000 s   (--tool-latency 1)") == NULL)
        fail_msg("exit %d: %s%s", o.code, o.so, o.se);
    tb_test_out_free(&o);
}

/* Bad values, and a stream without a tool part: exit 2, one line. */
static void refused(void **state)
{
    char args[600], bad[256];
    FILE *f;
    static const struct {
        const char *opts, *names;
        int own; /* 1: the tool turn's request; 0: the other turn's; 2: the bad trace */
    } cases[] = {
        {"--tool-latency junk", "--tool-latency", 1},
        {"--tool-latency -1", "--tool-latency", 1},
        {"--filler ''", "--filler", 1},
        {"--tool-latency 1", "tool_turn", 0},
        {"--filler builtin", "tool_turn", 0},
        {"", "tool_turn.calls", 2},
    };
    (void)state;
    snprintf(bad, sizeof(bad), "%s/bad.jsonl", dir);
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"ttsbuf_trace\":4,\"tool_turn\":{\"calls\":0,\"start_s\":0,\"end_s\":0,"
          "\"tool_s\":1}}\n{\"t\":0.1,\"text\":\"Hi.\"}\n",
          f);
    fclose(f);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tb_test_out o;
        if (cases[i].own == 2)
            snprintf(args, sizeof(args), "sim --trace '%s' %s", bad, cases[i].opts);
        else
            snprintf(args, sizeof(args), "sim --trace '%s' --request %.0f %s", trace,
                     cases[i].own ? tb_test_num(rec, "id") : 1 - tb_test_num(rec, "id"),
                     cases[i].opts);
        o = tb_test_run(args);
        if (o.code != 2 || strstr(o.se, cases[i].names) == NULL ||
            strchr(o.se, '\n') != o.se + strlen(o.se) - 1)
            fail_msg("%s: exit %d, stderr %s", cases[i].opts, o.code, o.se);
        tb_test_out_free(&o);
    }
    /* without the options, a trace without a tool part plays as ever */
    snprintf(args, sizeof(args), "sim --trace '%s' --request %.0f --json", trace,
             1 - tb_test_num(rec, "id"));
    {
        cJSON *doc = tb_test_run_json(NULL, args, 0);
        assert_null(tb_test_key(doc, "tool_turn"));
        cJSON_Delete(doc);
    }
}

/* sweep --tool-latency over the recording's directory: the one tool
 * turn's v2v and silence per wait, moved from the record's by the wait
 * less the recorded tool_s (the table prints milliseconds). */
static void sweep_tool_latency(void **state)
{
    static const double ws[2] = {0.3, 2};
    const cJSON *rl = tb_test_key(rec, "latency");
    double sil = tb_test_num(rec, "tool_silence_before_s") +
                 tb_test_num(rec, "tool_silence_during_s") +
                 tb_test_num(rec, "tool_silence_after_s");
    char args[600], *p;
    struct tb_test_out o;
    (void)state;
    snprintf(args, sizeof(args),
             "sweep --trace %s/out/traces --tts-latency " TTS_LAT " --tool-latency 0.3,2", dir);
    o = tb_test_run(args);
    if (o.code != 0 || (p = strstr(o.so, "tool turns: 1 of 2 streams")) == NULL)
        fail_msg("exit %d: %s%s", o.code, o.so, o.se);
    p = strstr(p, "silence p95\n");
    assert_non_null(p);
    p += strlen("silence p95\n");
    for (int i = 0; i < 2; i++) {
        double w, v50, v95, s50, s95, move = ws[i] - tb_test_num(rec, "tool_s");
        int used = 0;
        if (sscanf(p, " %lf %lf %lf %lf %lf%n", &w, &v50, &v95, &s50, &s95, &used) != 5)
            fail_msg("row %d: %s", i, p);
        p += used;
        assert_true(w == ws[i] && v50 == v95 && s50 == s95); /* one stream */
        near("sweep", "v2v", v50, tb_test_num(rl, "v2v_s") + move, 6e-4);
        near("sweep", "silence", s50, sil + move, 6e-4);
    }
    tb_test_out_free(&o);
    /* --json: the same, to the microsecond */
    snprintf(args, sizeof(args),
             "sweep --trace %s/out/traces --tts-latency " TTS_LAT " --tool-latency 0.3,2 --json -",
             dir);
    {
        cJSON *doc = tb_test_run_json(NULL, args, 0);
        const cJSON *tt = tb_test_key(doc, "tool_turns"), *w;
        assert_non_null(tt);
        assert_true(tb_test_num(tt, "streams") == 1);
        w = tb_test_key(tt, "waits");
        assert_int_equal(cJSON_GetArraySize(w), 2);
        for (int i = 0; i < 2; i++) {
            const cJSON *r = cJSON_GetArrayItem(w, i);
            double move = ws[i] - tb_test_num(rec, "tool_s");
            assert_true(tb_test_num(r, "tool_s") == ws[i]);
            near("sweep --json", "v2v_s.p95", tb_test_num(tb_test_key(r, "v2v_s"), "p95"),
                 tb_test_num(rl, "v2v_s") + move, 1e-6);
            near("sweep --json", "tool_silence_s.p50",
                 tb_test_num(tb_test_key(r, "tool_silence_s"), "p50"), sil + move, 1e-6);
        }
        cJSON_Delete(doc);
    }
    /* several settings, a shared capacity, no tool turn, a bad value: exit 2, one line */
    {
        static const char *const bad[] = {"--tool-latency 1 --wpm 150,200",
                                          "--tool-latency 1 --tts-latency 0.05 --tts-capacity 2",
                                          "--tool-latency x"};
        for (size_t i = 0; i < 4; i++) {
            if (i < 3)
                snprintf(args, sizeof(args), "sweep --trace %s/out/traces %s", dir, bad[i]);
            else
                snprintf(args, sizeof(args), "sweep --preset demo --tool-latency 1");
            o = tb_test_run(args);
            if (o.code != 2 || strstr(o.se, "--tool-latency") == NULL ||
                strchr(o.se, '\n') != o.se + strlen(o.se) - 1)
                fail_msg("%s: exit %d, stderr %s", args, o.code, o.se);
            tb_test_out_free(&o);
        }
    }
}

int tb_test_simtool(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recorded_parts),  cmocka_unit_test(tool_latency_moves_v2v),
        cmocka_unit_test(filler_as_bench), cmocka_unit_test(human_report),
        cmocka_unit_test(refused),         cmocka_unit_test(sweep_tool_latency),
    };
    return tb_test_run_group("simtool", tests, sizeof(tests) / sizeof(tests[0]), record, cleanup);
}
