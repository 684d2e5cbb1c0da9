/*
 * test_bargetts.c - `ttsbuf bench --conversations --barge-in --tts-url`:
 * the caller interrupts turns spoken by a real TTS (the mock of `ttsbuf
 * serve` on loopback), cases of the bargein group (test_bargein.c).  An
 * interrupted turn's TTS streams are closed at the interruption, and its
 * record says when (barge_tts_close_s, judged against serve --log's line
 * of each TTS request, joined by its request id cCALL.tTURN.jCHUNK), the
 * audio in flight and the stop (barge_inflight_s, barge_stop_s); a turn
 * not interrupted, or one without a TTS, has them null.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lag.h"
#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/bench_calls.h"
#include "ttsbuf/ttsnet.h"
#include "ttsbuf/turnlat.h"

#define FEW "tests/data/calls/few.jsonl"
/* The answer streams for about 1.5 s; each TTS chunk's first byte comes
 * 0.5 s after its request (one chunk at a time), so at 0.2 s after the
 * first audio the next chunk's request is still open. */
#define SLOW_TTS "--synth tps=20,ttft=0.1,tokens=30,jitter=0 --tts-latency 0.5"

/* bench with a TTS (tts 1) or not against the server on port, into
 * dir/o, quietly; its records into v (returns how many). */
static size_t bench(int port, const char *dir, int tts, const char *args, cJSON **v, size_t cap)
{
    char cmd[2048], path[256], ttsurl[64] = "";
    if (tts)
        snprintf(ttsurl, sizeof(ttsurl), "--tts-url http://127.0.0.1:%d", port);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && rm -rf o && '%s' bench --base-url http://127.0.0.1:%d/v1 --model mock %s "
             "--conversations '%s/" FEW "' --wpm 600 %s --out o >o.report",
             dir, tb_test_bin(), port, ttsurl, tb_test_top(), args);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/o/records.jsonl", dir);
    return tb_test_jsonl_records(path, v, cap);
}

/* An interrupted turn's stop fields: measured, and the stop the model's
 * (the player flushes at T, one output buffer still plays). */
static void stop_fields(const cJSON *r)
{
    double in = tb_test_num(r, "barge_inflight_s");
    assert_true(tb_test_num(r, "barge_tts_close_s") >= 0);
    assert_true(in >= 0);
    assert_true(tb_test_num(r, "barge_stop_s") == fmin(in, TB_BARGE_OUTBUF_S));
}

/* T, the caller's interruption, on CLOCK_MONOTONIC: the record's decision
 * (cancel_mono_s on that clock, cancel_s on the level's) less its delay. */
static double t_mono(const cJSON *r)
{
    return tb_test_num(r, "cancel_mono_s") - tb_test_num(r, "cancel_s") +
           tb_test_num(r, "t_start") + tb_test_num(r, "barge_in_s");
}

/* Every turn interrupted 0.2 s into its first audio, its answer still
 * streaming and a TTS request open: each record's barge_tts_close_s, from
 * T to the end of its last TTS stream, is where the server saw its last
 * open TTS request closed (client_closed, within 10 ms plus twice the
 * wake-up delay lag.h measured meanwhile, as the LLM close's test); no TTS
 * request of the turn ended later; and the summary has the stats. */
void tb_test_bargetts_close(void **state)
{
    char dir[128], path[256], sargs[512], *text;
    struct tb_test_slog lg[256];
    cJSON *v[16], *sum;
    const cJSON *lv;
    size_t n, nl, closed = 0, unclocked = 0;
    int port;
    double within = 0.010 * TB_TEST_TIME_SCALE;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "bargetts", "close");
    snprintf(sargs, sizeof(sargs), SLOW_TTS " --log %s/serve.log", dir);
    tb_test_serve_up(sargs, &port);
    tb_test_lag_start();
    n = bench(port, dir, 1, "--calls 2 --turns 3 --user-turn 0.05 --barge-in 1 --barge-in-at 0.2",
              v, 16);
    within += 2 * tb_test_lag_stop();
    tb_test_serve_down(NULL); /* every line written */
    assert_int_equal(n, 6);
    snprintf(path, sizeof(path), "%s/serve.log", dir);
    nl = tb_test_slog_read(path, lg, 256);
    for (size_t i = 0; i < n; i++) {
        char rid[64];
        double T, last = -INFINITY, close;
        size_t len;
        assert_true(cJSON_IsTrue(tb_test_key(v[i], "interrupted")));
        stop_fields(v[i]);
        if (tb_test_is_null(v[i], "cancel_mono_s")) {
            /* its answer had ended by T (a loaded machine's late first
             * audio): no LLM close, so no T on the server's clock */
            unclocked++;
            continue;
        }
        T = t_mono(v[i]);
        close = T + tb_test_num(v[i], "barge_tts_close_s");
        len = (size_t)snprintf(rid, sizeof(rid), "c%d.t%d.j", (int)tb_test_num(v[i], "call"),
                               (int)tb_test_num(v[i], "turn"));
        for (size_t k = 0; k < nl; k++) {
            const struct tb_test_slog *l = &lg[k];
            double end = isnan(l->closed) ? l->end : l->closed;
            if (strncmp(l->route, "tts_", 4) != 0 || strncmp(l->rid, rid, len) != 0)
                continue;
            if (end > close + within)
                fail_msg("%s: the server ended it %.6f s after T, the record's TTS close %.6f", l->rid,
                         end - T, close - T);
            if (!isnan(l->closed)) {
                assert_true(l->closed >= T); /* closed by the interruption */
                last = fmax(last, l->closed);
            }
        }
        if (isfinite(last)) {
            closed++;
            if (fabs(last - close) > within)
                fail_msg("%s*: the server saw the last TTS close %.6f s after T, the record %.6f "
                         "(allowed %g)",
                         rid, last - T, close - T, within);
        }
    }
    assert_true(unclocked <= n / 2);
    assert_true(closed >= (n - unclocked) / 2); /* most turns had a request open at T */
    snprintf(path, sizeof(path), "%s/o/summary.json", dir);
    text = tb_test_slurp_str(path);
    sum = cJSON_Parse(text);
    free(text);
    assert_non_null(sum);
    lv = cJSON_GetArrayItem(tb_test_key(sum, "levels"), 0);
    assert_true(tb_test_num(tb_test_key(lv, "barge_tts_close_s"), "count") == 6);
    assert_true(tb_test_num(tb_test_key(lv, "barge_stop_s"), "count") == 6);
    assert_true(tb_test_num(tb_test_key(lv, "barge_stop_s"), "max") <= TB_BARGE_OUTBUF_S);
    cJSON_Delete(sum);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(v[i]);
    tb_test_rm_rf(dir);
}

/* Half the turns interrupted, 1.5 s into their audio (the answer has
 * ended, its TTS still speaks): the interrupted ones have the stop fields,
 * the others null; and without a TTS an interrupted turn has them null. */
void tb_test_bargetts_nulls(void **state)
{
    char dir[128];
    cJSON *v[32];
    size_t n, in = 0, out = 0;
    int port;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "bargetts", "nulls");
    tb_test_serve_up(SLOW_TTS, &port);
    n = bench(port, dir, 1, "--calls 4 --turns 3 --user-turn 0.05 --barge-in 0.5 --barge-in-at 1.5",
              v, 32);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        if (cJSON_IsTrue(tb_test_key(v[i], "interrupted"))) {
            in++;
            stop_fields(v[i]);
        } else {
            out++;
            assert_true(tb_test_is_null(v[i], "barge_tts_close_s"));
            assert_true(tb_test_is_null(v[i], "barge_inflight_s"));
            assert_true(tb_test_is_null(v[i], "barge_stop_s"));
        }
        cJSON_Delete(v[i]);
    }
    assert_true(in > 0 && out > 0);
    n = bench(port, dir, 0, "--calls 1 --turns 2 --barge-in 1 --barge-in-at 0.2", v, 32);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        assert_true(cJSON_IsTrue(tb_test_key(v[i], "interrupted")));
        assert_true(tb_test_is_null(v[i], "barge_tts_close_s"));
        assert_true(tb_test_is_null(v[i], "barge_stop_s"));
        cJSON_Delete(v[i]);
    }
    tb_test_serve_down(NULL);
    tb_test_rm_rf(dir);
}

/* A TTS that streams its audio (--tts-rtf 0.5: each chunk's audio over
 * half its duration), so T falls while audio still arrives: the audio in
 * flight is never more than the turn received (the log's arrivals are
 * cumulative points, not pieces), and an interrupted turn keeps its ttft
 * as received (the replay plays only the chunks whole before T). */
void tb_test_bargetts_streamed(void **state)
{
    char dir[128];
    cJSON *v[16];
    size_t n, in = 0;
    int port;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "bargetts", "streamed");
    tb_test_serve_up("--synth tps=20,ttft=0.1,tokens=30,jitter=0 --tts-rtf 0.5", &port);
    n = bench(port, dir, 1, "--calls 2 --turns 2 --user-turn 0.05 --barge-in 1 --barge-in-at 0.5",
              v, 16);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = v[i];
        assert_true(tb_test_num(r, "ttft_s") > 0);
        if (cJSON_IsTrue(tb_test_key(r, "interrupted"))) {
            double got = tb_test_num(tb_test_key(r, "tts"), "audio_s");
            in++;
            stop_fields(r);
            if (tb_test_num(r, "barge_inflight_s") > got + 1e-9)
                fail_msg("record %d: %.6f s in flight of %.6f s received",
                         (int)tb_test_num(r, "id"), tb_test_num(r, "barge_inflight_s"), got);
        }
        cJSON_Delete(v[i]);
    }
    assert_true(in > 0);
    tb_test_serve_down(NULL);
    tb_test_rm_rf(dir);
}

/* Chunk 1 of a TTS whose first byte comes 0.3 s after each request, with
 * `lead` s of digital silence first, its audio streamed at real time
 * (--tts-rtf 1), every turn interrupted 0.2 s into that audio, while it
 * still arrives; the records into v (4).  A test of the bargein group:
 * the server is the one tb_test_serve_down stops. */
static size_t cut_in_chunk1(const char *dir, const char *lead, cJSON **v, size_t cap)
{
    char sargs[256];
    int port;
    snprintf(sargs, sizeof(sargs),
             "--synth tps=20,ttft=0.1,tokens=30,jitter=0 --tts-latency 0.3 --tts-rtf 1 "
             "--tts-lead %s",
             lead);
    tb_test_serve_up(sargs, &port);
    return bench(port, dir, 1,
                 "--calls 2 --turns 2 --user-turn 0.05 --barge-in 1 --barge-in-at 0.2", v, cap);
}

/* The caller interrupts inside chunk 1's audio (0.1 s of silence, then
 * speech, 0.2 s in): what came of chunk 1 plays, so the first audio and
 * the parts are measured (the first audio where T was drawn from, the
 * first sound before T; the leading silence is the server's 0.1 s to one window; the TTS's first
 * byte the server's 0.3 s and the trace's; the parts sum to v2v), the
 * LLM side is the stream's, and sim of the recording gives the same
 * parts.  With 0.5 s of silence first, nothing audible came by T: the
 * first audio is there, the leading silence and v2v null. */
void tb_test_bargetts_cut_chunk1(void **state)
{
    char dir[128], args[512];
    cJSON *v[8];
    size_t n;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "bargetts", "cut1");
    n = cut_in_chunk1(dir, "0.1", v, 8);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = v[i], *l = tb_test_key(r, "latency"), *ls, *tts = tb_test_key(r, "tts");
        double ttfa, sumparts = 0;
        cJSON *sim;
        assert_true(cJSON_IsTrue(tb_test_key(r, "interrupted")));
        assert_true(tb_test_num(tts, "canceled") >= 1 && tb_test_num(tts, "audio_s") > 0.1);
        ttfa = tb_test_num(r, "ttfa_s");
        /* T was drawn 0.2 s after the first audio came; playback starts
         * then, or a 20 ms frame later when that audio came slower than
         * real time (playout.h), and its first audible sample was heard */
        if (ttfa < tb_test_num(r, "barge_in_s") - 0.2 - 1e-9 ||
            ttfa + tb_test_num(l, "leading_silence_s") > tb_test_num(r, "barge_in_s"))
            fail_msg("record %d: T %.9f s, the first audio %.9f s, the first sound %.9f s",
                     (int)tb_test_num(r, "id"), tb_test_num(r, "barge_in_s"), ttfa,
                     ttfa + tb_test_num(l, "leading_silence_s"));
        if (fabs(tb_test_num(l, "leading_silence_s") - 0.1) > 0.0101)
            fail_msg("record %d: leading silence %.4f s, the server sent 0.1 s",
                     (int)tb_test_num(r, "id"), tb_test_num(l, "leading_silence_s"));
        /* the server's 0.3 s, and at most 0.2 s of the two loops' own
         * delay (times the sanitizers' slow-down) */
        assert_true(tb_test_num(l, "tts_ttfb_s") >= 0.3 &&
                    tb_test_num(l, "tts_ttfb_s") < 0.3 + 0.2 * TB_TEST_TIME_SCALE);
        for (int p = 0; p < TB_TURN_LAT_PARTS - 1; p++)
            sumparts += tb_test_num(l, tb_turn_lat_keys[p]);
        assert_true(fabs(sumparts - tb_test_num(l, "v2v_s")) < 1e-9);
        assert_true(fabs(tb_test_num(l, "v2v_s") - tb_test_num(l, "eou_s") - ttfa -
                         tb_test_num(l, "leading_silence_s")) < 1e-9);
        assert_true(tb_test_num(l, "ttft_s") == tb_test_num(r, "ttft_s"));
        assert_true(tb_test_num(r, "decode_tps") > 0);
        snprintf(args, sizeof(args), "sim --trace '%s/o/%s' --request %.0f --json", dir,
                 tb_test_key(r, "trace")->valuestring, tb_test_num(r, "id"));
        /* the speech stopped at a chunk the barge-in canceled: interrupted,
         * not a TTS failure (exit 0) */
        sim = tb_test_run_json(NULL, args, 0);
        ls = tb_test_key(sim, "latency");
        for (int p = 0; p < TB_TURN_LAT_PARTS; p++)
            if (tb_test_num(ls, tb_turn_lat_keys[p]) != tb_test_num(l, tb_turn_lat_keys[p]))
                fail_msg("record %d: sim says %s %.17g, the record %.17g",
                         (int)tb_test_num(r, "id"), tb_turn_lat_keys[p],
                         tb_test_num(ls, tb_turn_lat_keys[p]), tb_test_num(l, tb_turn_lat_keys[p]));
        cJSON_Delete(sim);
        cJSON_Delete(v[i]);
    }
    tb_test_serve_down(NULL);
    n = cut_in_chunk1(dir, "0.5", v, 8);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        const cJSON *l = tb_test_key(v[i], "latency");
        assert_true(cJSON_IsTrue(tb_test_key(v[i], "interrupted")));
        assert_true(tb_test_num(v[i], "ttfa_s") > 0);
        assert_true(tb_test_num(l, "tts_ttfb_s") >= 0.3);
        assert_true(tb_test_is_null(l, "leading_silence_s"));
        assert_true(tb_test_is_null(l, "v2v_s"));
        cJSON_Delete(v[i]);
    }
    tb_test_serve_down(NULL);
    tb_test_rm_rf(dir);
}

/* Bad combinations: one line each, exit 2; a TTS request id the server
 * could not log is refused by the client. */
void tb_test_bargetts_bad(void **state)
{
    struct tb_ttsnet_opts o;
    struct tb_ttsnet *c = NULL;
    char err[256];
    (void)state;
    tb_test_expect_error("bench --mock --tts-url mock --barge-in 0.5", 2,
                         "--barge-in drives calls: it needs --conversations");
    tb_test_expect_error("bench --mock --tts-url mock --conversations builtin --barge-in-at 1", 2,
                         "--barge-in-at says when");
    tb_test_expect_error("bench --mock --tts-url mock --conversations builtin --barge-in 3", 2,
                         "--barge-in");
    tb_ttsnet_opts_init(&o);
    o.url = "http://127.0.0.1:9";
    o.request_id = "c1 t2";
    assert_int_equal(tb_ttsnet_create(&o, &c, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "TTS request id 'c1 t2'"));
}
