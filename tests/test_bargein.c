/*
 * test_bargein.c - `ttsbuf bench --conversations --barge-in`: the caller
 * interrupts turns (bench.h, bench_calls.h).  The draws (pure), then the
 * binary against `ttsbuf serve` on loopback with a slow stream, so that
 * answers are still streaming when the caller interrupts: the unspoken
 * tokens recomputed from each turn's trace through `sim --trace
 * --chunks` (the schedule, read here by the test's own code, not
 * tb_heard_at), the next turn's spacing, --barge-in 0 and 1, shards
 * merged, the server seeing the close within 10 ms of the decision
 * (serve --log, joined by the request id), bad values.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lag.h"
#include "tests.h"
#include "ttsbuf.h"
#include "ttsbuf/bench_calls.h"
#include "ttsbuf/heard.h"
#include "ttsbuf/sim.h"

#define FEW "tests/data/calls/few.jsonl"
/* 30 tokens at 20 a second: an answer streams for about 1.5 s, and at
 * 600 wpm its speech lasts longer than that. */
#define SLOW "--synth tps=20,ttft=0.1,tokens=30,jitter=0"

/* Code points of UTF-8 text. */
static uint64_t cps(const char *s)
{
    uint64_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Runs bench with args (after the URL) into dir/NAME, quietly. */
static void bench(int port, const char *dir, const char *name, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && '%s' bench --base-url http://127.0.0.1:%d/v1 --model mock "
             "--conversations '%s/" FEW "' --wpm 600 %s --out %s >%s.report",
             dir, tb_test_bin(), port, tb_test_top(), args, name, name);
    assert_int_equal(tb_test_sh(cmd), 0);
}

/* The draws: P = 0 never, P = 1 always and within the spec, a share
 * near P otherwise; pure; words refused. */
static void draws(void **state)
{
    struct tb_uturn at;
    char err[256];
    size_t hit = 0;
    (void)state;
    assert_int_equal(tb_barge_at_parse("uniform:0.5,4", &at, err, sizeof(err)), 0);
    for (uint32_t t = 0; t < 20000; t++) {
        double b0 = tb_barge_draw(0, &at, 7, t / 20, t % 20);
        double b1 = tb_barge_draw(1, &at, 7, t / 20, t % 20);
        double bh = tb_barge_draw(0.3, &at, 7, t / 20, t % 20);
        assert_true(isnan(b0));
        assert_true(b1 >= 0.5 && b1 <= 4);
        if (!isnan(bh)) {
            hit++;
            /* the same uniform draw decides the moment: one per turn */
            assert_true(bh == tb_barge_draw(0.3, &at, 7, t / 20, t % 20));
        }
    }
    /* 6,000 expected; 5 standard deviations of 20,000 Bernoulli(0.3) */
    assert_true(hit > 6000 - 325 && hit < 6000 + 325);
    assert_int_equal(tb_barge_at_parse("2.5", &at, err, sizeof(err)), 0);
    assert_true(tb_barge_draw(1, &at, 1, 3, 4) == 2.5);
    assert_int_equal(tb_barge_at_parse("exp:1", &at, err, sizeof(err)), 0);
    assert_true(tb_barge_draw(1, &at, 1, 3, 4) >= 0);
    assert_int_equal(tb_barge_at_parse("words:150", &at, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "not words"));
    assert_int_equal(tb_barge_at_parse("uniform:3,1", &at, err, sizeof(err)), TB_EINVAL);
    /* uniform:A..B as every SPEC (A,B read the same, an older spelling),
     * named A..B; a negative value is said so; the kinds offered are its */
    {
        struct tb_uturn alias;
        char name[64];
        assert_int_equal(tb_barge_at_parse("uniform:0.5..4", &at, err, sizeof(err)), 0);
        assert_int_equal(tb_barge_at_parse("uniform:0.5,4", &alias, err, sizeof(err)), 0);
        assert_true(at.kind == alias.kind && at.a == alias.a && at.b == alias.b);
        assert_true(at.a == 0.5 && at.b == 4);
        tb_uturn_name(&at, name, sizeof(name));
        assert_string_equal(name, "uniform:0.5..4");
        assert_string_equal(TB_BARGE_AT_DEFAULT, "uniform:0.5..4");
        assert_int_equal(tb_barge_at_parse("uniform:3..1", &at, err, sizeof(err)), TB_EINVAL);
        assert_non_null(strstr(err, "is not uniform:A..B"));
        assert_int_equal(tb_barge_at_parse("-1", &at, err, sizeof(err)), TB_EINVAL);
        assert_string_equal(err, "'-1' is negative (seconds 0..3600)");
        assert_int_equal(tb_barge_at_parse("uniform:-1..2", &at, err, sizeof(err)), TB_EINVAL);
        assert_non_null(strstr(err, "is negative"));
        assert_int_equal(tb_barge_at_parse("soon", &at, err, sizeof(err)), TB_EINVAL);
        assert_null(strstr(err, "words"));
        assert_non_null(strstr(err, "is not S, uniform:A..B or exp:MEAN"));
    }
}

/* The gaps heard before T (heard.h): a gap of the answer counts up to T.
 * Chunks by hand as in the heard group: "Hi there." plays 0.2 .. 0.8,
 * the next sentence to 1.6 or 1.667 (12 or 13 code points at 150 wpm),
 * then silence until " Fine." closes at 3.0. */
static void gaps_before_t(void **state)
{
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_heard h;
    char err[128];
    double g;
    (void)state;
    tb_stream_init(&s);
    assert_int_equal(tb_stream_append(&s, 0.2, "Hi there.", 9, 3, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(&s, 0.4, " How are", 8, 2, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(&s, 0.5, " you?", 5, 2, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(&s, 3.0, " Fine.", 6, 2, TB_KIND_CONTENT), 0);
    s.end.kind = TB_END_COMPLETE;
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_SENTENCE;
    o.play.wpm = 150;
    assert_int_equal(tb_heard_at(&s, &o, 10.0, &h, err, sizeof(err)), 0);
    assert_int_equal(h.underruns_before, 1);
    g = h.gap_total_before;
    assert_true(fabs(g - 1.4) < 1e-9 || fabs(g - (3.0 - 0.8 - 13.0 / 15.0)) < 1e-9);
    assert_true(h.gap_max_before == g);
    /* half a second before the gap ends: the caller heard g - 0.5 of it */
    assert_int_equal(tb_heard_at(&s, &o, 2.5, &h, err, sizeof(err)), 0);
    assert_int_equal(h.underruns_before, 1);
    assert_near(h.gap_total_before, g - 0.5, 1e-9);
    assert_near(h.gap_llm_before + h.gap_tts_before, h.gap_total_before, 1e-12);
    /* before it: none */
    assert_int_equal(tb_heard_at(&s, &o, 1.0, &h, err, sizeof(err)), 0);
    assert_int_equal(h.underruns_before, 0);
    assert_true(h.gap_total_before == 0);
    tb_stream_free(&s);
}

/* What an interrupted turn's record says, recomputed from its trace:
 * `sim --trace --chunks` gives each chunk's completing event, its close
 * (ready_s, no TTS latency here), its start and duration; the caller
 * heard the chunks whose playback ended by T; the tokens are the content
 * events' that arrived by T (one token an event: the mock's); the text
 * not all played is the chunks begun and not ended by T. */
static void check_unheard(const char *dir, const cJSON *rec)
{
    char args[1024], path[512], *trace, *line, *save = NULL;
    double T = tb_test_num(rec, "barge_in_s");
    double *t = NULL;
    size_t ne = 0, cap = 0;
    uint64_t tokens = 0, heard = 0, unplayed = 0;
    int first = 1;
    cJSON *sim;
    const cJSON *ch;
    {
        char out[300];
        snprintf(out, sizeof(out), "%s/o", dir);
        tb_test_rec_trace(out, rec, path, sizeof(path));
    }
    trace = tb_test_slurp_str(path);
    for (line = strtok_r(trace, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        cJSON *e = cJSON_Parse(line);
        assert_non_null(e);
        if (!first && cJSON_IsNumber(tb_test_key(e, "t")) &&
            cJSON_IsString(tb_test_key(e, "text")) && tb_test_key(e, "kind") == NULL) {
            if (ne == cap) {
                double *nt;
                cap = cap ? cap * 2 : 64;
                nt = realloc(t, cap * sizeof(*t));
                assert_non_null(nt);
                t = nt;
            }
            t[ne++] = tb_test_num(e, "t");
        }
        first = 0;
        cJSON_Delete(e);
    }
    free(trace);
    for (size_t i = 0; i < ne; i++)
        tokens += t[i] <= T;
    snprintf(args, sizeof(args), "sim --trace %s --wpm 600 --json --chunks", path);
    sim = tb_test_run_json(NULL, args, 0);
    cJSON_ArrayForEach(ch, tb_test_key(sim, "chunk_list"))
    {
        double end = tb_test_num(ch, "start_s") + tb_test_num(ch, "duration_s");
        if (end <= T)
            heard = (uint64_t)tb_test_num(ch, "event") + 1;
        else if (tb_test_num(ch, "ready_s") <= T)
            unplayed += cps(cJSON_GetStringValue(tb_test_key(ch, "text")));
    }
    cJSON_Delete(sim);
    free(t);
    if (heard > tokens)
        heard = tokens;
    assert_int_equal((uint64_t)tb_test_num(rec, "tokens_received"), tokens);
    assert_int_equal((uint64_t)tb_test_num(rec, "tokens_unheard"), tokens - heard);
    assert_int_equal((uint64_t)tb_test_num(rec, "chars_unplayed"), unplayed);
}

/* The loop's timing in one bench of calls, against tol: a stream closed
 * in flight ended within tol of its moment T, every later turn was sent
 * within tol of its schedule.  0 with the reason when one was late. */
static int timely(cJSON **v, size_t n, double tol, char *why, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = v[i];
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(r, "cancel_s");
        const cJSON *T = cJSON_GetObjectItemCaseSensitive(r, "barge_in_s");
        const cJSON *t0 = cJSON_GetObjectItemCaseSensitive(r, "t_start");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(r, "t_sched");
        const cJSON *te = cJSON_GetObjectItemCaseSensitive(r, "t_end");
        if (cJSON_IsNumber(c) && cJSON_IsNumber(T) && cJSON_IsNumber(t0) &&
            (c->valuedouble > t0->valuedouble + T->valuedouble + tol ||
             (cJSON_IsNumber(te) && fabs(te->valuedouble - c->valuedouble) > tol))) {
            snprintf(why, len, "record %zu: closed %.4f s after its moment", i,
                     c->valuedouble - t0->valuedouble - T->valuedouble);
            return 0;
        }
        if (cJSON_IsNumber(t0) && cJSON_IsNumber(ts) &&
            fabs(t0->valuedouble - ts->valuedouble) > tol) {
            snprintf(why, len, "record %zu: sent %.4f s after its schedule", i,
                     t0->valuedouble - ts->valuedouble);
            return 0;
        }
    }
    return 1;
}

/* One run with barge-in: each interrupted turn's unheard tokens and
 * unplayed text equal the recomputation from its trace; T is the turn's
 * first audio plus a draw within the spec; a stream closed in flight
 * ended at the decision, made at T (within the loop's timing); the next
 * turn is sent at T + the caller's speaking time (constant here), and
 * after a turn heard whole at play_end + that time.  The report's line
 * and the summary's block count the same.  The timing bounds (10 ms) grow
 * by the wake-up delay the probe of lag.h measured while bench ran: the
 * loop's timer is one wake-up; three runs at most while they miss
 * (timely). */
static void records_against_traces(void **state)
{
    char dir[128], path[256], *rep;
    cJSON *v[32], *sum;
    size_t n, inter = 0, inflight = 0;
    uint64_t unheard = 0;
    const double U = 0.05;
    double tol = 0.01 * TB_TEST_TIME_SCALE;
    int port;
    (void)state;
    tb_test_serve_up(SLOW, &port);
    tb_test_tmpdir(dir, sizeof(dir), "barge", "rec");
    snprintf(path, sizeof(path), "%s/o/records.jsonl", dir);
    /* Up to three runs while the loop's timing misses (a loaded machine
     * can hold it back once; the schedule and the counts are judged on
     * the last run whatever its timing). */
    for (int attempt = 1;; attempt++) {
        char why[160], cmd[300];
        double t = tol;
        tb_test_lag_start();
        bench(port, dir, "o",
              "--calls 2 --turns 4 --user-turn 0.05 --barge-in 0.6 --barge-in-at uniform:0.1..0.8 "
              "--seed 3");
        t += tb_test_lag_stop();
        n = tb_test_jsonl_records(path, v, 32);
        if (attempt == 3 || timely(v, n, t, why, sizeof(why))) {
            tol = t;
            break;
        }
        print_message("try %d: %s\n", attempt, why);
        tb_test_json_free(v, n);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/o' '%s/o.report'", dir, dir);
        tb_test_sh(cmd);
    }
    rep = tb_test_slurp_str(path);
    assert_non_null(strstr(rep, "\"barge_in\":0.6,\"barge_in_at\":\"uniform:0.1..0.8\""));
    free(rep);
    assert_int_equal(n, 7); /* conversations of 4 and 3 turns */
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = v[i];
        double next_at;
        assert_true(cJSON_IsNull(tb_test_key(r, "error")));
        if (tb_test_is_true(r, "interrupted")) {
            double T = tb_test_num(r, "barge_in_s");
            inter++;
            unheard += (uint64_t)tb_test_num(r, "tokens_unheard");
            assert_true(T - tb_test_num(r, "ttfa_s") >= 0.1 - 1e-9 &&
                        T - tb_test_num(r, "ttfa_s") <= 0.8 + 1e-9);
            check_unheard(dir, r);
            if (cJSON_IsNumber(tb_test_key(r, "cancel_s"))) {
                /* closed in flight: ended at the decision, made at T */
                inflight++;
                assert_string_equal(cJSON_GetStringValue(tb_test_key(r, "end")), "interrupted");
                assert_true(tb_test_num(r, "cancel_s") >= tb_test_num(r, "t_start") + T - 1e-9);
                assert_true(tb_test_num(r, "cancel_s") <= tb_test_num(r, "t_start") + T + tol);
                assert_near(tb_test_num(r, "t_end"), tb_test_num(r, "cancel_s"), tol);
            } else {
                assert_string_equal(cJSON_GetStringValue(tb_test_key(r, "end")), "complete");
                assert_true(T < tb_test_num(r, "play_end_s"));
                assert_true(cJSON_IsNull(tb_test_key(r, "cancel_mono_s")));
            }
            next_at = tb_test_num(r, "t_start") + T + U;
        } else {
            assert_true(cJSON_IsNull(tb_test_key(r, "barge_in_s")));
            assert_true(cJSON_IsNull(tb_test_key(r, "cancel_s")));
            assert_int_equal((uint64_t)tb_test_num(r, "tokens_unheard"), 0);
            assert_int_equal((uint64_t)tb_test_num(r, "tokens_received"),
                             (uint64_t)tb_test_num(r, "content_tokens"));
            next_at = tb_test_num(r, "t_start") + tb_test_num(r, "play_end_s") + U;
        }
        for (size_t j = 0; j < n; j++)
            if (tb_test_num(v[j], "call") == tb_test_num(r, "call") &&
                tb_test_num(v[j], "turn") == tb_test_num(r, "turn") + 1) {
                assert_near(tb_test_num(v[j], "t_sched"), next_at, 1e-9);
                assert_true(tb_test_num(v[j], "t_start") >= tb_test_num(v[j], "t_sched"));
                assert_near(tb_test_num(v[j], "t_start"), tb_test_num(v[j], "t_sched"), tol);
            }
    }
    /* seed 3 interrupts some turns, and some of them in flight */
    assert_true(inter >= 2 && inter < n);
    assert_true(inflight >= 1);
    snprintf(path, sizeof(path), "%s/o/summary.json", dir);
    rep = tb_test_slurp_str(path);
    sum = cJSON_Parse(rep);
    free(rep);
    assert_non_null(sum);
    {
        const cJSON *lv = cJSON_GetArrayItem(tb_test_key(sum, "levels"), 0);
        const cJSON *bi = tb_test_key(lv, "barge_in");
        assert_non_null(bi);
        assert_int_equal((size_t)tb_test_num(bi, "interruptions"), inter);
        assert_near(tb_test_num(bi, "interrupted_share"), (double)inter / (double)n, 1e-12);
        assert_int_equal((uint64_t)tb_test_num(bi, "tokens_unheard"), unheard);
        /* an interrupted turn is ok, never failed, never in gapless */
        assert_int_equal((size_t)tb_test_num(lv, "ok"), n);
        assert_true(tb_test_num(lv, "gapless") <= (double)(n - inter));
    }
    cJSON_Delete(sum);
    snprintf(path, sizeof(path), "%s/o.report", dir);
    rep = tb_test_slurp_str(path);
    assert_non_null(strstr(rep, "calls=2: 2 calls, 2 completed, 0 ended by a failed or cut turn"));
    assert_non_null(strstr(rep, "calls=2: barge-in: "));
    free(rep);
    tb_test_json_free(v, n);
    /* the records read back, and a contradiction in them is refused */
    {
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "merge %s/o/records.jsonl --json", dir);
        sum = tb_test_run_json(NULL, cmd, 0);
        assert_int_equal(
            (size_t)tb_test_num(
                tb_test_key(cJSON_GetArrayItem(tb_test_key(sum, "levels"), 0), "barge_in"),
                "interruptions"),
            inter);
        cJSON_Delete(sum);
        snprintf(cmd, sizeof(cmd),
                 "sed 's/\"tokens_unheard\":[0-9]*/\"tokens_unheard\":999999/' %s/o/records.jsonl "
                 ">%s/bad.jsonl",
                 dir, dir);
        assert_int_equal(tb_test_sh(cmd), 0);
        snprintf(cmd, sizeof(cmd), "merge %s/bad.jsonl", dir);
        tb_test_expect_error(cmd, 2, "\"tokens_unheard\" is more than \"tokens_received\"");
    }
    tb_test_rm_rf(dir);
    tb_test_serve_down(NULL);
}

/* The records with their timing left out: what the calls sent and got. */
static char *untimed(const char *path)
{
    cJSON *v[32];
    size_t n = tb_test_jsonl_records(path, v, 32);
    static const char *const timed[] = {
        "t_sched",    "t_start", "t_end",          "ttft_s",           "ttfa_s",
        "decode_tps", "itl_s",   "play_end_s",     "gap_total_s",      "gap_max_s",
        "underruns",  "min_tps", "speedup_needed", "decode_tps_usage", "trace",
        "latency"};
    char *out = calloc(1, 1);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        char *s, *o2;
        for (size_t k = 0; k < sizeof(timed) / sizeof(timed[0]); k++)
            cJSON_DeleteItemFromObjectCaseSensitive(v[i], timed[k]);
        s = cJSON_PrintUnformatted(v[i]);
        o2 = malloc(strlen(out) + strlen(s) + 2);
        assert_non_null(o2);
        sprintf(o2, "%s%s\n", out, s);
        free(out);
        free(s);
        out = o2;
    }
    tb_test_json_free(v, n);
    return out;
}

/* --barge-in 0 changes nothing but the header's block: the same records
 * (timing aside), no barge-in keys, no report line, no barge_* metric row. */
static void p_zero_changes_nothing(void **state)
{
    char dir[128], path[256], *a, *b;
    int port;
    (void)state;
    tb_test_serve_up(SLOW, &port);
    tb_test_tmpdir(dir, sizeof(dir), "barge", "zero");
    bench(port, dir, "none", "--calls 2 --turns 2 --user-turn 0.05");
    bench(port, dir, "zero", "--calls 2 --turns 2 --user-turn 0.05 --barge-in 0");
    snprintf(path, sizeof(path), "%s/none/records.jsonl", dir);
    a = untimed(path);
    snprintf(path, sizeof(path), "%s/zero/records.jsonl", dir);
    b = untimed(path);
    assert_string_equal(a, b);
    assert_null(strstr(b, "interrupted"));
    assert_null(strstr(b, "barge_in"));
    free(a);
    free(b);
    snprintf(path, sizeof(path), "%s/zero.report", dir);
    a = tb_test_slurp_str(path);
    assert_null(strstr(a, "barge-in"));
    assert_non_null(strstr(a, "\n  turn_late_s ")); /* the metrics are there */
    assert_null(strstr(a, "barge_")); /* but no empty barge-in rows */
    free(a);
    tb_test_rm_rf(dir);
    tb_test_serve_down(NULL);
}

/* --barge-in 1: every turn still playing at T is interrupted (with
 * --barge-in-at 0.2 every answer here still plays), every call goes on
 * to its last turn. */
static void p_one_interrupts_every_playing_turn(void **state)
{
    char dir[128], path[256], *rep;
    cJSON *v[32];
    size_t n;
    int port;
    (void)state;
    tb_test_serve_up(SLOW, &port);
    tb_test_tmpdir(dir, sizeof(dir), "barge", "one");
    bench(port, dir, "o", "--calls 2 --turns 3 --user-turn 0.05 --barge-in 1 --barge-in-at 0.2");
    snprintf(path, sizeof(path), "%s/o/records.jsonl", dir);
    n = tb_test_jsonl_records(path, v, 32);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i++) {
        assert_true(tb_test_num(v[i], "ttfa_s") + 0.2 <
                    tb_test_num(v[i], "play_end_s")); /* still playing */
        assert_true(tb_test_is_true(v[i], "interrupted"));
        assert_near(tb_test_num(v[i], "barge_in_s"), tb_test_num(v[i], "ttfa_s") + 0.2, 1e-9);
        /* 0.2 s into the first sentence: nothing of it heard */
        assert_int_equal((uint64_t)tb_test_num(v[i], "tokens_unheard"),
                         (uint64_t)tb_test_num(v[i], "tokens_received"));
    }
    tb_test_json_free(v, n);
    snprintf(path, sizeof(path), "%s/o.report", dir);
    rep = tb_test_slurp_str(path);
    assert_non_null(strstr(rep, "calls=2: 2 calls, 2 completed, 0 ended by a failed or cut turn; "
                                "6 turns\n"));
    assert_non_null(strstr(rep, "calls=2: barge-in: 6 turns interrupted (100.0%)"));
    free(rep);
    tb_test_rm_rf(dir);
    tb_test_serve_down(NULL);
}

/* "call.turn" lines of the interrupted turns in the records files
 * `files` (a glob under dir), sorted. */
static void interrupted_set(const char *dir, const char *files, char *out, size_t len)
{
    char cmd[1024], path[256], *s;
    snprintf(cmd, sizeof(cmd),
             "cd %s && tail -q -n +2 %s | grep '\"interrupted\":true' | "
             "sed 's/.*\"call\":\\([0-9]*\\),\"turn\":\\([0-9]*\\),.*/\\1.\\2/' | sort >set",
             dir, files);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/set", dir);
    s = tb_test_slurp_str(path);
    snprintf(out, len, "%s", s);
    free(s);
}

/* Two shards interrupt exactly the turns one run does (the draws are per
 * call and turn), and merge counts them alike. */
static void shards_interrupt_the_same_turns(void **state)
{
    static const char common[] = "--calls 2 --call-count 4 --turns 2 --user-turn 0.05 "
                                 "--barge-in 0.5 --barge-in-at uniform:0.1,0.5 -q";
    char dir[128], args[512], one[512], two[512], cmd[512];
    cJSON *a, *b;
    int port;
    (void)state;
    tb_test_serve_up(SLOW, &port);
    tb_test_tmpdir(dir, sizeof(dir), "barge", "shards");
    bench(port, dir, "one", common);
    snprintf(args, sizeof(args), "%s --shard 0/2", common);
    bench(port, dir, "sh", args);
    snprintf(args, sizeof(args), "%s --shard 1/2", common);
    bench(port, dir, "sh", args);
    interrupted_set(dir, "one/records.jsonl", one, sizeof(one));
    interrupted_set(dir, "sh/records-*-of-2.jsonl", two, sizeof(two));
    assert_string_equal(one, two);
    assert_true(strlen(one) > 0);
    snprintf(cmd, sizeof(cmd), "merge %s/sh --json", dir);
    a = tb_test_run_json(NULL, cmd, 0);
    snprintf(cmd, sizeof(cmd), "merge %s/one --json", dir);
    b = tb_test_run_json(NULL, cmd, 0);
    assert_int_equal((size_t)tb_test_num(
                         tb_test_key(cJSON_GetArrayItem(tb_test_key(a, "levels"), 0), "barge_in"),
                         "interruptions"),
                     (size_t)tb_test_num(
                         tb_test_key(cJSON_GetArrayItem(tb_test_key(b, "levels"), 0), "barge_in"),
                         "interruptions"));
    cJSON_Delete(a);
    cJSON_Delete(b);
    tb_test_rm_rf(dir);
    tb_test_serve_down(NULL);
}

/* The server sees each connection closed within 10 ms of the decision:
 * every turn is interrupted in flight here (0.2 s after the first audio,
 * the answer streaming for 1.5 s), and serve --log's line for the same
 * request id (cCALL.tTURN) says client_closed at closed_s, on the clock
 * of the record's cancel_mono_s.  The log also says what the server
 * still meant to send (tokens_unsent), which bench cannot know: it never
 * got less than the record's tokens.  On a busy machine the 10 ms grow by
 * twice the wake-up delay the probe of lag.h measured meanwhile (the
 * client's loop closing, the server's loop woken by the close). */
static void server_sees_the_close(void **state)
{
    char dir[128], path[256], sargs[512], *log, *line, *save = NULL;
    cJSON *v[32];
    size_t n, joined = 0;
    int port, first = 1;
    double within = 0.010 * TB_TEST_TIME_SCALE;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "barge", "close");
    snprintf(sargs, sizeof(sargs), SLOW " --log %s/serve.log", dir);
    tb_test_serve_up(sargs, &port);
    tb_test_lag_start();
    bench(port, dir, "o", "--calls 2 --turns 3 --user-turn 0.05 --barge-in 1 --barge-in-at 0.2");
    within += 2 * tb_test_lag_stop();
    tb_test_serve_down(NULL); /* every line written and flushed */
    snprintf(path, sizeof(path), "%s/o/records.jsonl", dir);
    n = tb_test_jsonl_records(path, v, 32);
    assert_int_equal(n, 6);
    snprintf(path, sizeof(path), "%s/serve.log", dir);
    log = tb_test_slurp_str(path);
    for (line = strtok_r(log, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        cJSON *e = cJSON_Parse(line);
        assert_non_null(e);
        for (size_t i = 0; !first && i < n; i++) {
            char rid[64];
            snprintf(rid, sizeof(rid), "c%d.t%d", (int)tb_test_num(v[i], "call"),
                     (int)tb_test_num(v[i], "turn"));
            if (strcmp(cJSON_GetStringValue(tb_test_key(e, "request_id")), rid) != 0)
                continue;
            joined++;
            assert_true(tb_test_is_true(v[i], "interrupted"));
            assert_string_equal(cJSON_GetStringValue(tb_test_key(e, "end")), "client_closed");
            if (!(tb_test_num(e, "closed_s") >= tb_test_num(v[i], "cancel_mono_s") &&
                  tb_test_num(e, "closed_s") - tb_test_num(v[i], "cancel_mono_s") <= within))
                fail_msg("%s: the server saw the close %.6f s after the decision (allowed 0..%g)",
                         rid, tb_test_num(e, "closed_s") - tb_test_num(v[i], "cancel_mono_s"),
                         within);
            assert_true(tb_test_num(e, "tokens_sent") >= tb_test_num(v[i], "content_tokens"));
            assert_true(tb_test_num(e, "tokens_unsent") > 0);
        }
        first = 0;
        cJSON_Delete(e);
    }
    free(log);
    assert_int_equal(joined, n);
    tb_test_json_free(v, n);
    tb_test_rm_rf(dir);
}

/* Bad values: one line each, exit 2. */
static void bad_values(void **state)
{
    static const struct {
        const char *args, *want;
    } cases[] = {
        {"--conversations builtin --barge-in 2", "--barge-in"},
        {"--conversations builtin --barge-in -0.1", "--barge-in"},
        {"--conversations builtin --barge-in x", "--barge-in"},
        {"--conversations builtin --barge-in 50", "outside 0..1"},
        {"--conversations builtin --barge-in 0.5 --barge-in-at words:150",
         "--barge-in-at: 'words:150': the moment of a barge-in is S, uniform:A..B or exp:MEAN"},
        {"--conversations builtin --barge-in 0.5 --barge-in-at uniform:3,1", "is not uniform:A..B"},
        {"--conversations builtin --barge-in 0.5 --barge-in-at uniform:3..1",
         "is not uniform:A..B"},
        {"--conversations builtin --barge-in 0.5 --barge-in-at -1",
         "--barge-in-at: '-1' is negative"},
        {"--conversations builtin --barge-in 0.5 --barge-in-at exp:0", "is not exp:MEAN"},
        {"--conversations builtin --barge-in 0.5 --barge-in-at soon",
         "--barge-in-at: 'soon' is not S, uniform:A..B or exp:MEAN (seconds of playback"},
        {"--conversations builtin --barge-in-at 1", "--barge-in-at says when"},
        {"--barge-in 0.5", "--barge-in drives calls: it needs --conversations"},
        {"--barge-in-at 1", "--barge-in-at drives calls"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[512];
        snprintf(args, sizeof(args), "bench --mock %s", cases[i].args);
        tb_test_expect_error(args, 2, cases[i].want);
    }
}

int tb_test_bargein(void)
{
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(draws),
        cmocka_unit_test(gaps_before_t),
        cmocka_unit_test_teardown(records_against_traces, tb_test_serve_down),
        cmocka_unit_test_teardown(p_zero_changes_nothing, tb_test_serve_down),
        cmocka_unit_test_teardown(p_one_interrupts_every_playing_turn, tb_test_serve_down),
        cmocka_unit_test_teardown(shards_interrupt_the_same_turns, tb_test_serve_down),
        cmocka_unit_test_teardown(server_sees_the_close, tb_test_serve_down),
        cmocka_unit_test(bad_values),
        cmocka_unit_test_teardown(tb_test_bargetts_close, tb_test_serve_down),
        cmocka_unit_test_teardown(tb_test_bargetts_nulls, tb_test_serve_down),
        cmocka_unit_test_teardown(tb_test_bargetts_streamed, tb_test_serve_down),
        cmocka_unit_test_teardown(tb_test_bargetts_cut_chunk1, tb_test_serve_down),
        cmocka_unit_test(tb_test_bargetts_bad),
    };
    return TB_RUN_GROUP("bargein", cases);
}
