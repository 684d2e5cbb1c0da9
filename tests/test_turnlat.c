/*
 * test_turnlat.c - where a turn's wait went (turnlat.h): the leading
 * silence read on PCM (ttsmeas.h's detector) against audio built here
 * with a known onset; the parts of sim's result summing to v2v and to
 * the time to first audio; --eou and --tts-lead drawn and refused; a
 * live run against `ttsbuf serve --tts-lead 0.2` in every HTTP dialect,
 * whose leading silence is the server's 0.2 s, whose TTS first byte is
 * the trace's, and whose recording gives sim the same parts.  The pages'
 * cases are in test_turnlat_html.c.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/ttsmeas.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#include "ttsbuf/turnlat.h"

/* n samples of PCM: zeros for the first `quiet` samples, then a 440 Hz
 * sine of amplitude amp (full scale 32768), little-endian. */
static char *pcm(size_t n, size_t quiet, unsigned rate, double amp)
{
    char *b = calloc(n, 2);
    assert_non_null(b);
    for (size_t i = quiet; i < n; i++) {
        double v = amp * sin(2.0 * M_PI * 440.0 * (double)(i - quiet) / (double)rate);
        int16_t s = (int16_t)lround(v);
        b[2 * i] = (char)(uint8_t)((uint16_t)s & 0xff);
        b[2 * i + 1] = (char)(uint8_t)((uint16_t)s >> 8);
    }
    return b;
}

/* The chunk's lead after feeding b[0..2n) in pieces of `piece` bytes. */
static double lead_of(const char *b, size_t n, unsigned rate, size_t piece)
{
    struct tb_tts_log l;
    struct tb_tts_chunk *c;
    double lead;
    tb_tts_log_init(&l);
    assert_int_equal(tb_tts_log_add(&l, "Hi.", 3, 3, rate, &c), 0);
    assert_true(isnan(c->lead));
    for (size_t off = 0; off < 2 * n; off += piece) {
        size_t k = 2 * n - off < piece ? 2 * n - off : piece;
        assert_int_equal(tb_tts_chunk_pcm(c, 0.1 + (double)off * 1e-6, b + off, k), 0);
    }
    assert_true(c->bytes == 2 * n); /* every byte counted as before */
    lead = c->lead;
    tb_tts_log_free(&l);
    return lead;
}

/* 0.2 s of digital silence, then a tone at -20 dBFS: 0.2 exactly at 24 kHz
 * (20 whole windows), however the bytes arrive. */
static void lead_exact_at_window_edge(void **state)
{
    (void)state;
    char *b = pcm(24000, 4800, 24000, 3277.0);
    static const size_t pieces[] = {2, 6, 480, 4802, 48000};
    for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
        assert_true(lead_of(b, 24000, 24000, pieces[i]) == 0.2);
    free(b);
}

/* A sound that starts inside a window counts from that window's start:
 * within one window (10 ms) of the onset, never after it. */
static void lead_within_one_window(void **state)
{
    (void)state;
    static const unsigned rates[] = {8000, 16000, 22050, 24000, 44100, 48000};
    for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        unsigned r = rates[i];
        size_t quiet = (size_t)(0.2137 * r); /* not on a window's edge */
        char *b = pcm(r, quiet, r, 3277.0);
        double onset = (double)quiet / r, lead = lead_of(b, r, r, 4096);
        assert_true(lead <= onset + 1e-12);
        assert_true(onset - lead < 0.0101);
        free(b);
    }
}

/* The threshold is -50 dBFS RMS: a tone at -45 dBFS is audible from its
 * start; one at -60 dBFS (or silence) never, and the lead stays NAN
 * (not measured: nothing audible came), never 0. */
static void lead_threshold(void **state)
{
    (void)state;
    char *loud = pcm(2400, 0, 24000, 32768.0 * pow(10.0, -45.0 / 20.0) * sqrt(2.0));
    char *quiet = pcm(24000, 0, 24000, 32768.0 * pow(10.0, -60.0 / 20.0) * sqrt(2.0));
    char *zero = pcm(24000, 24000, 24000, 0.0);
    assert_true(lead_of(loud, 2400, 24000, 100) == 0.0);
    assert_true(isnan(lead_of(quiet, 24000, 24000, 1000)));
    assert_true(isnan(lead_of(zero, 24000, 24000, 1000)));
    free(loud);
    free(quiet);
    free(zero);
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The parts of a result's latency sum to its v2v, and without the end of
 * turn and the leading silence to its first audio. */
static void parts_sum(const cJSON *res)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(res, "latency");
    double sum = 0.0;
    assert_non_null(l);
    for (int i = 0; i < TB_TURN_LAT_PARTS - 1; i++) {
        double v = num(l, tb_turn_lat_keys[i]);
        assert_false(isnan(v));
        assert_true(v >= 0.0);
        sum += v;
    }
    assert_true(fabs(sum - num(l, "v2v_s")) < 1e-9);
    assert_true(fabs(num(l, "v2v_s") - num(l, "eou_s") - num(l, "leading_silence_s") -
                     num(res, "ttfa_s")) < 1e-9);
    /* the same arrival, read by two clocks' arithmetic (the live reader's
     * and the trace's): equal to the last bits but one */
    if (!(fabs(num(l, "ttft_s") - num(res, "ttft_s")) <= 1e-12)) {
        char *t = cJSON_PrintUnformatted(res);
        fail_msg("latency.ttft_s %.17g, the result's ttft_s %.17g: %.1500s", num(l, "ttft_s"),
                 num(res, "ttft_s"), t);
    }
}

/* sim on models: every part where the model puts it. */
static void sim_parts(void **state)
{
    (void)state;
    cJSON *j;
    const cJSON *l;
    /* the rate model: no TTS, no end of turn, no silence */
    j = tb_test_run_json(NULL, "sim --synth tps=20,ttft=0.3,tokens=80,seed=3 --json", 0);
    parts_sum(j);
    l = cJSON_GetObjectItemCaseSensitive(j, "latency");
    assert_true(num(l, "chunk") == 1);
    assert_true(num(l, "eou_s") == 0 && num(l, "tts_queue_s") == 0 && num(l, "tts_ttfb_s") == 0);
    assert_true(num(l, "leading_silence_s") == 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(l, "eou_model")->valuestring, "0");
    cJSON_Delete(j);
    /* one slot, a constant latency, a pre-roll, an end of turn and a
     * leading silence: each lands in its own part */
    j = tb_test_run_json(NULL,
                         "sim --synth tps=20,ttft=0.3,tokens=80,seed=3 --tts-latency 0.25 "
                         "--tts-concurrency 1 --preroll 3 --eou 0.4 --tts-lead 0.07 --json",
                         0);
    parts_sum(j);
    l = cJSON_GetObjectItemCaseSensitive(j, "latency");
    assert_true(num(l, "eou_s") == 0.4);
    assert_true(fabs(num(l, "tts_ttfb_s") - 0.25) < 1e-12);
    assert_true(num(l, "preroll_s") > 0.0); /* 3 s of pre-roll outlasts chunk 1 */
    assert_true(num(l, "leading_silence_s") == 0.07);
    cJSON_Delete(j);
    /* a drawn end of turn: lognormal, the same for the same seed */
    {
        cJSON *a = tb_test_run_json(NULL,
                                    "sim --synth tps=20,tokens=40,seed=3 --eou "
                                    "lognormal:p50=0.6,p90=1.2 --tts-seed 9 --json",
                                    0);
        cJSON *b = tb_test_run_json(NULL,
                                    "sim --synth tps=20,tokens=40,seed=3 --eou "
                                    "lognormal:p50=0.6,p90=1.2 --tts-seed 9 --json",
                                    0);
        double e = num(cJSON_GetObjectItemCaseSensitive(a, "latency"), "eou_s");
        assert_true(e > 0.0 && e != 0.6);
        assert_true(e == num(cJSON_GetObjectItemCaseSensitive(b, "latency"), "eou_s"));
        parts_sum(a);
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
}

/* The report's block names each part and the models. */
static void report_block(void **state)
{
    (void)state;
    struct tb_test_out o = tb_test_run("sim --synth tps=20,ttft=0.3,tokens=80,seed=3 --eou 0.4");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "where the wait went"));
    assert_non_null(strstr(o.so, "end of turn          0.400 s   (--eou 0.4)"));
    assert_non_null(strstr(o.so, "voice to voice "));
    tb_test_out_free(&o);
}

/* The timeline marks the caller's end of speech (eou before the request:
 * the axis starts there) and the span from it to the first audible sample,
 * labelled v2v; with no end-of-turn delay the span starts at the request
 * and says so; with neither an end-of-turn delay nor a leading silence the
 * wait is the first audio and nothing is added. */
static void timeline_wait(void **state)
{
    (void)state;
    static const struct {
        const char *opts, *want, *absent;
    } row[] = {
        {"--eou 0.4 --tts-lead 0.1",
         "v2v 1.37 s: the caller&apos;s end of speech (-0.40 s) to the first audible sample", NULL},
        {"--eou 0.4 --tts-lead 0.1", "data-from=\"-0.400000\" data-to=\"0.965963\"", NULL},
        {"--eou 0.4 --tts-lead 0.1", "<line class=\"eos\"", NULL},
        {"--tts-lead 0.1", "v2v 0.97 s: the request (no end-of-turn delay", "class=\"eos\""},
        {"", "first audio 0.87 s", "id=\"wait\""},
    };
    char dir[256], args[512], path[320];
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "tlw");
    snprintf(path, sizeof(path), "%s/t.svg", dir);
    for (size_t i = 0; i < sizeof(row) / sizeof(row[0]); i++) {
        struct tb_test_out o;
        char *svg;
        snprintf(args, sizeof(args),
                 "sim --synth tps=20,ttft=0.3,tokens=80,seed=3 --tts-latency 0.2 %s --svg %s",
                 row[i].opts, path);
        o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        tb_test_out_free(&o);
        svg = tb_test_slurp_str(path);
        if (strstr(svg, row[i].want) == NULL)
            fail_msg("%s: no \"%s\"", row[i].opts, row[i].want);
        if (row[i].absent != NULL && strstr(svg, row[i].absent) != NULL)
            fail_msg("%s: \"%s\" drawn", row[i].opts, row[i].absent);
        free(svg);
    }
    tb_test_rm_rf(dir);
}

/* sim of a sim recording replays its modelled TTS (a preset, its latency
 * and seed) and its leading silence: the same options.tts and tts_lead,
 * the same parts of the wait (latency.lead_model "0.1"), its report saying
 * the silence is the recording's; an option given on the replay sets the
 * model instead. */
static void record_round_trip(void **state)
{
    (void)state;
    char dir[256], args[640];
    cJSON *a, *b;
    const char *keys[] = {"eou_s", "tts_ttfb_s", "leading_silence_s", "v2v_s"};
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "rec");
    snprintf(args, sizeof(args),
             "sim --synth tps=20,ttft=0.3,tokens=60,seed=3 --tts cartesia-sonic-3 --tts-seed 4 "
             "--tts-lead 0.1 --eou 0.3 --record %s/r.jsonl --json",
             dir);
    a = tb_test_run_json(NULL, args, 0);
    snprintf(args, sizeof(args), "sim --trace %s/r.jsonl --json", dir);
    b = tb_test_run_json(NULL, args, 0);
    {
        char *ta =
            cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "options"), "tts"));
        char *tb =
            cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "options"), "tts"));
        assert_non_null(ta);
        assert_non_null(tb);
        assert_string_equal(ta, tb);
        cJSON_free(ta);
        cJSON_free(tb);
    }
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(b, "latency"), "lead_model")->valuestring, "0.1");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        assert_true(num(cJSON_GetObjectItem(a, "latency"), keys[i]) ==
                    num(cJSON_GetObjectItem(b, "latency"), keys[i]));
    cJSON_Delete(b);
    /* the report names where the leading silence came from: the recording */
    {
        struct tb_test_out o;
        snprintf(args, sizeof(args), "sim --trace %s/r.jsonl", dir);
        o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        if (strstr(o.so, "(the recording's --tts-lead 0.1)") == NULL ||
            strstr(o.so, "   (--tts-lead") != NULL)
            fail_msg("sim of the recording: %s", o.so);
        tb_test_out_free(&o);
    }
    /* an option on the replay sets the model: the recording's is not used */
    snprintf(args, sizeof(args), "sim --trace %s/r.jsonl --tts-latency 0.5 --json", dir);
    b = tb_test_run_json(NULL, args, 0);
    assert_true(num(cJSON_GetObjectItem(b, "options"), "tts_latency_s") == 0.5);
    cJSON_Delete(b);
    cJSON_Delete(a);
    tb_test_rm_rf(dir);
}

/* --eou list:FILE reads a file that starts with a UTF-8 byte order mark
 * (as some editors save it): the mark is skipped, the first value used. */
static void eou_list_bom(void **state)
{
    (void)state;
    char dir[256], path[300], args[512];
    FILE *f;
    struct tb_test_out o;
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "bom");
    snprintf(path, sizeof(path), "%s/eou.txt", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs("\xEF\xBB\xBF"
          "0.25\n0.5\n",
          f);
    fclose(f);
    snprintf(args, sizeof(args), "sim --synth tps=20,tokens=20 --eou list:%s", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "end of turn          0.250 s"));
    tb_test_out_free(&o);
    tb_test_rm_rf(dir);
}

/* Bad values name the option; --tts-lead is refused where the silence is
 * measured. */
static void refusals(void **state)
{
    (void)state;
    static const struct {
        const char *args, *want;
    } bad[] = {
        {"sim --synth tps=20,tokens=20 --eou -1", "--eou:"},
        {"sim --synth tps=20,tokens=20 --eou lognormal:p50=2", "--eou:"},
        {"sim --synth tps=20,tokens=20 --eou list:/nonexistent/x", "--eou:"},
        {"sim --synth tps=20,tokens=20 --tts-lead banana", "--tts-lead:"},
        {"run --mock --tts-url mock --tts-lead 0.1", "--tts-lead: --tts-url measures"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tb_test_out o = tb_test_run(bad[i].args);
        if (o.code != 2 || strstr(o.se, bad[i].want) == NULL)
            fail_msg("%s: exit %d, stderr %s", bad[i].args, o.code, o.se);
        tb_test_out_free(&o);
    }
}

/* The first line of a file, parsed. */
static cJSON *first_line(const char *path)
{
    char *text = tb_test_slurp_str(path), *nl = strchr(text, '\n');
    cJSON *j;
    assert_non_null(nl);
    *nl = '\0';
    j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

/* The first voiced chunk's first byte - sent, from the trace's tts lines. */
static double trace_ttfb(const char *path, double chunk)
{
    char *text = tb_test_slurp_text(path, NULL), *save = NULL;
    double v = NAN;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line), *t = cJSON_GetObjectItemCaseSensitive(j, "tts");
        if (t != NULL && num(t, "chunk") == chunk)
            v = num(t, "first_byte") - num(t, "sent");
        cJSON_Delete(j);
    }
    free(text);
    return v;
}

/* A TTS that starts every answer with 0.2 s of digital silence: the run
 * measures 0.2 (to one window), its TTS first byte is the trace's, the
 * end of turn is --eou's, and sim of the recording gives every part
 * again, its end of turn from the trace's header. */
static void live_leading_silence(void **state)
{
    static const char *const dialects[] = {"openai", "elevenlabs", "deepgram", "cartesia"};
    int port;
    (void)state;
    tb_test_serve_up("--tts-lead 0.2 --tts-latency 0.1", &port);
    for (size_t d = 0; d < sizeof(dialects) / sizeof(dialects[0]); d++) {
        char args[512], path[128];
        cJSON *run, *sim, *head;
        const cJSON *lr, *ls;
        snprintf(path, sizeof(path), "/tmp/ttsbuf-turnlat-%d-%zu.jsonl", (int)getpid(), d);
        snprintf(args, sizeof(args),
                 "run --mock --synth tps=40,ttft=0.2,tokens=30,seed=3 --tts-url "
                 "http://127.0.0.1:%d --tts-api %s --eou 0.35 --json "
                 "--record %s",
                 port, dialects[d], path);
        run = tb_test_run_json(NULL, args, 0);
        parts_sum(run);
        lr = cJSON_GetObjectItemCaseSensitive(run, "latency");
        if (fabs(num(lr, "leading_silence_s") - 0.2) > 0.0101)
            fail_msg("%s: leading silence %.4f s, the server sent 0.2 s", dialects[d],
                     num(lr, "leading_silence_s"));
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(lr, "lead_model")->valuestring,
                            "measured");
        assert_true(num(lr, "tts_ttfb_s") == trace_ttfb(path, num(lr, "chunk")));
        assert_true(num(lr, "eou_s") == 0.35);
        head = first_line(path);
        assert_true(num(head, "eou_s") == num(lr, "eou_s"));
        cJSON_Delete(head);
        snprintf(args, sizeof(args), "sim --trace %s --json", path);
        sim = tb_test_run_json(NULL, args, 0);
        ls = cJSON_GetObjectItemCaseSensitive(sim, "latency");
        for (int i = 0; i < TB_TURN_LAT_PARTS; i++)
            assert_true(num(ls, tb_turn_lat_keys[i]) == num(lr, tb_turn_lat_keys[i]));
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(ls, "eou_model")->valuestring,
                            "recorded");
        cJSON_Delete(sim);
        /* the recording's silence is measured: a model of it is refused */
        snprintf(args, sizeof(args), "sim --trace %s --tts-lead 0.1", path);
        {
            struct tb_test_out o = tb_test_run(args);
            assert_int_equal(o.code, 2);
            assert_non_null(strstr(o.se, "--tts-lead:"));
            tb_test_out_free(&o);
        }
        cJSON_Delete(run);
        unlink(path);
    }
}

/* Calls against the same mock: every turn's wait measured and split, the
 * end of turn drawn from --eou for its request, the parts per turn index
 * in the summary, and each turn's trace replayed by sim to the same
 * parts. */
static void calls_leading_silence(void **state)
{
    char dir[256], args[1024], path[320], eou[320];
    cJSON *recs[16], *sum;
    const cJSON *lv, *bt, *t;
    size_t n;
    int port;
    FILE *f;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "calls");
    snprintf(eou, sizeof(eou), "%s/eou.txt", dir);
    f = fopen(eou, "w");
    assert_non_null(f);
    fputs("0.1\n0.2\n0.3\n0.4\n0.5\n0.6\n0.7\n0.8\n", f);
    fclose(f);
    tb_test_serve_up("--tts-lead 0.2 --tts-latency 0.1 --synth tps=100,ttft=0.1,tokens=8,seed=2",
                     &port);
    snprintf(args, sizeof(args),
             "bench -q --base-url http://127.0.0.1:%d/v1 --model m --conversations builtin "
             "--calls 2 --call-count 2 --turns 2 --user-turn 0.05 --eou list:%s --tts-url "
             "http://127.0.0.1:%d --out %s/o --json",
             port, eou, port, dir);
    sum = tb_test_run_json(NULL, args, 0);
    snprintf(path, sizeof(path), "%s/o/records.jsonl", dir);
    n = tb_test_jsonl_records(path, recs, 16);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(recs[i], "latency");
        double id = num(recs[i], "id"), sumparts = 0.0;
        cJSON *sim;
        const cJSON *ls;
        assert_non_null(l);
        if (fabs(num(l, "leading_silence_s") - 0.2) > 0.0101)
            fail_msg("request %.0f: leading silence %.4f s, the server sent 0.2 s", id,
                     num(l, "leading_silence_s"));
        /* list:FILE: request id k is turn k + 1, which takes line (k mod 8) + 1
         * of the 8 (a call's turns are ids c x 1000 + its turn) */
        assert_true(fabs(num(l, "eou_s") - 0.1 * (fmod(id, 8.0) + 1)) < 1e-12);
        assert_true(num(l, "tts_ttfb_s") >= 0.1); /* the server's schedule: L = 0.1 */
        for (int p = 0; p < TB_TURN_LAT_PARTS - 1; p++)
            sumparts += num(l, tb_turn_lat_keys[p]);
        assert_true(fabs(sumparts - num(l, "v2v_s")) < 1e-9);
        assert_true(num(l, "ttft_s") == num(recs[i], "ttft_s"));
        /* the turn's trace, replayed: the same parts */
        snprintf(args, sizeof(args), "sim --trace '%s/o/%s' --request %.0f --json", dir,
                 cJSON_GetObjectItemCaseSensitive(recs[i], "trace")->valuestring, id);
        sim = tb_test_run_json(NULL, args, 0);
        ls = cJSON_GetObjectItemCaseSensitive(sim, "latency");
        for (int p = 0; p < TB_TURN_LAT_PARTS; p++)
            if (num(ls, tb_turn_lat_keys[p]) != num(l, tb_turn_lat_keys[p]))
                fail_msg("request %.0f: sim says %s %.17g, the record %.17g", id,
                         tb_turn_lat_keys[p], num(ls, tb_turn_lat_keys[p]),
                         num(l, tb_turn_lat_keys[p]));
        cJSON_Delete(sim);
        cJSON_Delete(recs[i]);
    }
    /* the summary: the parts per level and per turn index */
    lv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sum, "levels"), 0);
    assert_non_null(lv);
    assert_true(num(cJSON_GetObjectItemCaseSensitive(lv, "v2v_s"), "count") == 4);
    assert_true(num(cJSON_GetObjectItemCaseSensitive(lv, "leading_silence_s"), "p50") > 0.19);
    t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(lv, "latency_share"),
                                         "p50");
    assert_true(num(t, "leading_silence_s") > 0.0 && num(t, "leading_silence_s") < 1.0);
    bt = cJSON_GetObjectItemCaseSensitive(lv, "by_turn");
    assert_int_equal(cJSON_GetArraySize(bt), 2);
    cJSON_ArrayForEach(t, bt)
    {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(t, "latency");
        assert_true(num(cJSON_GetObjectItemCaseSensitive(l, "v2v_s"), "count") == 2);
    }
    cJSON_Delete(sum);
    tb_test_rm_rf(dir);
}

/* --eou stt:NAME: the published median and P95 as a log-normal, named in
 * the model; --eou list names the presets with their source. */
static void eou_presets(void **state)
{
    (void)state;
    cJSON *j = tb_test_run_json(NULL,
                                "sim --synth tps=20,tokens=40,seed=3 --eou stt:deepgram "
                                "--json",
                                0);
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "latency");
    const char *m = cJSON_GetObjectItemCaseSensitive(l, "eou_model")->valuestring;
    struct tb_test_out o;
    /* p50 247 ms, p95 298 ms: p90 = 0.247 (298/247)^(z90/z95) */
    double p90 = 0.247 * pow(298.0 / 247.0, 1.2815515655446004 / 1.6448536269514722);
    char want[96];
    snprintf(want, sizeof(want), "p90=%.6f", p90);
    assert_non_null(strstr(m, "lognormal:p50=0.247,p90="));
    assert_true(strncmp(strstr(m, "p90="), want, 10) == 0);
    assert_true(strncmp(m, "stt:deepgram = lognormal:p50=0.247,p90=", 39) == 0);
    assert_true(num(l, "eou_s") > 0.1 && num(l, "eou_s") < 1.0);
    cJSON_Delete(j);
    o = tb_test_run("sim --eou list");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "stt:soniox"));
    assert_non_null(strstr(o.so, "github.com/pipecat-ai/stt-benchmark"));
    tb_test_out_free(&o);
    o = tb_test_run("sim --synth tps=20,tokens=20 --eou stt:nobody");
    assert_int_equal(o.code, 2);
    assert_non_null(strstr(o.se, "--eou: 'stt:nobody' is not an STT preset"));
    tb_test_out_free(&o);
}

/* After the first sound: a barge-in's close of the LLM stream, and each
 * call turn's lateness on its speech clock. */
static void after_first_sound(void **state)
{
    char args[512];
    cJSON *sum;
    const cJSON *lv;
    int port;
    (void)state;
    tb_test_serve_up("--synth tps=20,ttft=0.05,tokens=60,seed=2", &port);
    snprintf(args, sizeof(args),
             "bench -q --base-url http://127.0.0.1:%d/v1 --model m --conversations builtin "
             "--calls 2 --call-count 2 --turns 2 --user-turn 0.05 --barge-in 1 --barge-in-at 0.2 "
             "--json",
             port);
    sum = tb_test_run_json(NULL, args, 0);
    lv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sum, "levels"), 0);
    /* every turn is interrupted 0.2 s into its answer, while its 3 s
     * stream still streams: each closes, promptly */
    assert_true(num(cJSON_GetObjectItemCaseSensitive(lv, "barge_close_s"), "count") == 4);
    assert_true(num(cJSON_GetObjectItemCaseSensitive(lv, "barge_close_s"), "min") >= 0);
    assert_true(num(cJSON_GetObjectItemCaseSensitive(lv, "barge_close_s"), "max") <
                0.5 * TB_TEST_TIME_SCALE);
    assert_true(num(cJSON_GetObjectItemCaseSensitive(lv, "turn_late_s"), "count") == 4);
    assert_true(num(cJSON_GetObjectItemCaseSensitive(lv, "turn_late_s"), "min") >= 0);
    cJSON_Delete(sum);
}

int tb_test_turnlat(void)
{
    /* test_turnlat_html.c's cases go under their short names */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lead_exact_at_window_edge),
        cmocka_unit_test(lead_within_one_window),
        cmocka_unit_test(lead_threshold),
        cmocka_unit_test(sim_parts),
        cmocka_unit_test(report_block),
        cmocka_unit_test(refusals),
        cmocka_unit_test(timeline_wait),
        cmocka_unit_test(eou_list_bom),
        cmocka_unit_test(record_round_trip),
        cmocka_unit_test(eou_presets),
        cmocka_unit_test_teardown(after_first_sound, tb_test_serve_down),
        {"pictures", tb_test_turnlat_pictures, NULL, tb_test_serve_down, NULL},
        {"html_own_eou", tb_test_turnlat_html_own_eou, NULL, tb_test_serve_down, NULL},
        cmocka_unit_test_teardown(live_leading_silence, tb_test_serve_down),
        cmocka_unit_test_teardown(calls_leading_silence, tb_test_serve_down),
        {"calls_html", tb_test_turnlat_calls_html, NULL, tb_test_serve_down, NULL},
        {"run_mock_html", tb_test_turnlat_run_mock_html, NULL, tb_test_serve_down, NULL},
        {"calls_tool_html", tb_test_turnlat_calls_tool_html, NULL, tb_test_serve_down, NULL},
        {"tool_part", tb_test_turnlat_tool_part, NULL, NULL, NULL},
    };
    return TB_RUN_GROUP("turnlat", tests);
}
