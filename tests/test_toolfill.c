/*
 * test_toolfill.c - the tooluse group's cases with a real TTS (bench
 * --filler with --tts-url, ttsbuf-model(7), Tool calls): bench
 * --conversations against serve --tool-call-rate 1 and serve's own TTS,
 * the filler sent to the TTS when the tool call starts (the server's log
 * has its request, after the call's first byte), its send and first
 * byte in the record after the call's start, every silence figure a
 * number, and the filler's measured audio covering a wait shorter than
 * it and leaving silence in one longer; the latency parts still sum to
 * v2v_s, which ends at the answer's first audible sample.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#define FILLER "One moment."
#define SHORT_WAIT 0.2 /* s: below the phrase's audio */
#define LONG_WAIT 1.6  /* s: above its TTS latency and audio */
#define TTS_LAT 0.1    /* serve --tts-latency */

static const char convo[] =
    "{\"id\":\"w\",\"turns\":[{\"text\":\"Is it going to rain?\",\"tools\":[{\"type\":"
    "\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}]},"
    "\"Thanks.\"]}\n";

/* k's value, which must be a number (not null). */
static double need(const cJSON *o, const char *k)
{
    double v = tb_test_num_or_nan(o, k);
    if (isnan(v))
        fail_msg("\"%s\" is null", k);
    return v;
}

/* What every run's tool turn says: the filler sent at or after the
 * call's start and its first byte after it, every figure a number, the
 * parts summing to v2v_s, the silence with the filler what the
 * windows' silence less its audio leaves, the share consistent. */
static void check_common(const cJSON *r, double wait)
{
    static const char *const win[3] = {"before", "during", "after"};
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(r, "latency");
    double start = need(r, "tool_start_s"), sent = need(r, "filler_sent_s");
    double fb = need(r, "filler_first_byte_s"), all = 0, left = 0, sum;
    if (!(sent >= start) || !(fb > start) || !(fb >= sent) || !(need(r, "filler_at_s") >= fb))
        fail_msg("the filler: call start %g, sent %g, first byte %g, audible %g", start, sent, fb,
                 tb_test_num_or_nan(r, "filler_at_s"));
    assert_true(need(r, "tool_s") >= wait && need(r, "filler_s") > 0);
    for (int i = 0; i < 3; i++) {
        char k[48];
        double w, f;
        snprintf(k, sizeof(k), "tool_silence_%s_s", win[i]);
        w = need(r, k);
        snprintf(k, sizeof(k), "filler_silence_%s_s", win[i]);
        f = need(r, k);
        if (!(f >= 0 && f <= w))
            fail_msg("%s: %g of silence with the filler, %g without", k, f, w);
        all += w;
        left += f;
    }
    assert_true(fabs(need(r, "filler_covered") - (all - left) / all) < 1e-9);
    (void)need(r, "filler_delay_s");
    sum = tb_test_num_or_nan(l, "eou_s") + tb_test_num_or_nan(l, "ttft_s") +
          tb_test_num_or_nan(l, "tool_s") + tb_test_num_or_nan(l, "aggregation_s") +
          tb_test_num_or_nan(l, "tts_queue_s") + tb_test_num_or_nan(l, "tts_ttfb_s") +
          tb_test_num_or_nan(l, "preroll_s") + tb_test_num_or_nan(l, "leading_silence_s");
    if (!(sum == tb_test_num_or_nan(l, "v2v_s")))
        fail_msg("the parts sum to %.17g, v2v_s %.17g", sum, tb_test_num_or_nan(l, "v2v_s"));
    /* the filler comes after the call's end, as the mock's call is one
     * short event: the window before is silent either way */
    if (need(r, "filler_at_s") >= need(r, "tool_end_s"))
        assert_true(tb_test_num_or_nan(r, "filler_silence_before_s") ==
                    tb_test_num_or_nan(r, "tool_silence_before_s"));
}

/* The server saw the filler's request (its own id) after it had sent the
 * call's first byte. */
static void check_log(const char *log)
{
    struct tb_test_slog v[16];
    size_t n;
    double call_fb = NAN, filler_rx = NAN;
    /* the filler's request and at least one chunk of each turn */
    (void)tb_test_slog_wait(log, v, 16, 0, "tts", 3);
    n = tb_test_slog_read(log, v, 16);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].route, "chat") == 0 && strcmp(v[i].rid, "c0.t0") == 0 && isnan(call_fb))
            call_fb = v[i].first_byte;
        if (strcmp(v[i].rid, "c0.t0.filler.j1") == 0 && strncmp(v[i].route, "tts", 3) == 0)
            filler_rx = v[i].received;
    }
    if (isnan(filler_rx) || !(filler_rx >= call_fb))
        fail_msg("the server's log: the call's first byte %g, the filler's request %g", call_fb,
                 filler_rx);
}

/* One run with the tool's wait `wait`: its tool turn's record (the
 * caller deletes it). */
static cJSON *run(const char *dir, const char *tag, double wait)
{
    char srv[512], args[1024], log[256], rp[256];
    cJSON *v[4], *turn0 = NULL;
    size_t n;
    int port;
    snprintf(log, sizeof(log), "%s/serve-%s.jsonl", dir, tag);
    snprintf(srv, sizeof(srv),
             "--synth tps=400,tokens=10,ttft=0.02,seed=5 --tool-call-rate 1 --tts-latency %g "
             "--log %s",
             TTS_LAT, log);
    tb_test_serve_up(srv, &port);
    snprintf(args, sizeof(args),
             "bench --api chat --base-url http://127.0.0.1:%d/v1 --model m --conversations "
             "%s/convo.jsonl --calls 1 --tool-latency %g --filler '" FILLER "' --user-turn 0.05 "
             "--tts-url http://127.0.0.1:%d --out %s/%s --json --quiet",
             port, dir, wait, port, dir, tag);
    cJSON_Delete(tb_test_run_json(NULL, args, 0));
    check_log(log);
    tb_test_serve_down(NULL);
    snprintf(rp, sizeof(rp), "%s/%s/records.jsonl", dir, tag);
    n = tb_test_jsonl_records(rp, v, 4);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        if (tb_test_num_or_nan(v[i], "turn") == 0 && turn0 == NULL)
            turn0 = v[i];
        else
            cJSON_Delete(v[i]);
    }
    assert_non_null(turn0);
    check_common(turn0, wait);
    return turn0;
}

void tb_test_tooluse_filler_live(void **state)
{
    char dir[128], path[256];
    cJSON *s, *g;
    double heard, d;
    FILE *f;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "tooluse", "filler");
    snprintf(path, sizeof(path), "%s/convo.jsonl", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(convo, f);
    fclose(f);
    /* A wait shorter than the phrase: the filler plays through the rest
     * of it and past the answer's first audible sample, which would wait
     * for it; the silence left is the TTS's latency before it. */
    s = run(dir, "short", SHORT_WAIT);
    heard = tb_test_num_or_nan(cJSON_GetObjectItemCaseSensitive(s, "latency"), "v2v_s") -
            tb_test_num_or_nan(cJSON_GetObjectItemCaseSensitive(s, "latency"), "eou_s");
    d = need(s, "filler_s");
    if (!(d > need(s, "tool_s") + TTS_LAT))
        fail_msg("the phrase's audio (%g s) is not longer than the wait (%g s)", d,
                 need(s, "tool_s"));
    assert_true(tb_test_num_or_nan(s, "filler_silence_after_s") == 0);
    assert_true(fabs(tb_test_num_or_nan(s, "filler_silence_during_s") -
                     (tb_test_num_or_nan(s, "filler_at_s") - tb_test_num_or_nan(s, "tool_end_s"))) <
                1e-6);
    assert_true(fabs(tb_test_num_or_nan(s, "filler_delay_s") -
                     (tb_test_num_or_nan(s, "filler_at_s") + d - heard)) < 1e-6 &&
                tb_test_num_or_nan(s, "filler_delay_s") > 0);
    /* A wait longer than the phrase: it ends inside the wait, the rest
     * of the wait and the time after it are silent, the answer waits for
     * nothing. */
    g = run(dir, "long", LONG_WAIT);
    d = need(g, "filler_s");
    assert_true(tb_test_num_or_nan(g, "filler_at_s") + d <
                tb_test_num_or_nan(g, "tool_end_s") + tb_test_num_or_nan(g, "tool_s"));
    assert_true(tb_test_num_or_nan(g, "filler_delay_s") == 0);
    assert_true(fabs(tb_test_num_or_nan(g, "filler_silence_during_s") -
                     (tb_test_num_or_nan(g, "tool_s") - d)) < 1e-6);
    assert_true(tb_test_num_or_nan(g, "filler_silence_after_s") ==
                tb_test_num_or_nan(g, "tool_silence_after_s"));
    if (!(tb_test_num_or_nan(g, "filler_covered") < tb_test_num_or_nan(s, "filler_covered")))
        fail_msg("covered %g with the long wait, %g with the short",
                 tb_test_num_or_nan(g, "filler_covered"), tb_test_num_or_nan(s, "filler_covered"));
    cJSON_Delete(s);
    cJSON_Delete(g);
    tb_test_rm_rf(dir);
}
