/*
 * test_speech.c - real speech end to end: the ttsbuf binary with eSpeak NG
 * and a sink, and what was actually played.
 *
 * One truth, two clocks: for the same trace, the gaps the eSpeak-timed
 * model predicts (the report's main numbers), the gaps the audio clock
 * counted (the report's "audio" part) and the silences in the audio itself
 * must agree.  The WAV sink is checked to the sample; PortAudio is checked
 * through headless devices (tests/audio_env.h): ALSA's file plugin for
 * content (it runs faster than real time) and a private PulseAudio with a
 * pipe sink for timing (about 1x real time).
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio_env.h"
#include "tests.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/speaker.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/voice.h"

#define TOL 0.020 /* seconds: the tolerance for a gap's start and length */

/* A sentence arriving word by word from t, dt apart. */
struct sent {
    const char *text;
    double t, dt;
};

/* Four sentences with two stalls: sentence 2 completes well after
 * sentence 1 has been spoken, sentence 4 likewise after sentence 3. */
static const struct sent stalls[] = {
    {"The first sentence is short.", 0.2, 0.05},
    {" Then the provider stalls for a while before this one arrives.", 2.6, 0.02},
    {" Here comes a third sentence, with a clause in it, quickly.", 3.0, 0.01},
    {" And the last one ends the answer!", 12.0, 0.05},
};

static char *tmpname(const char *what)
{
    char *p = malloc(128);
    assert_non_null(p);
    snprintf(p, 128, "/tmp/ttsbuf-speech-%d-%s", (int)getpid(), what);
    return p;
}

/* Writes the sentences as a trace, one token per word; t_all >= 0 puts
 * every token at that time (an infinitely fast stream). */
static char *write_trace(const struct sent *s, size_t n, double t_all, const char *name)
{
    char *path = tmpname(name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) {
        const char *p = s[i].text;
        double t = s[i].t;
        while (*p) {
            const char *q = p + 1;
            while (*q && *q != ' ')
                q++;
            cJSON *o = cJSON_CreateObject();
            char word[256];
            snprintf(word, sizeof(word), "%.*s", (int)(q - p), p);
            cJSON_AddNumberToObject(o, "t", t_all >= 0 ? t_all : t);
            cJSON_AddStringToObject(o, "text", word);
            char *line = cJSON_PrintUnformatted(o);
            fprintf(f, "%s\n", line);
            cJSON_free(line);
            cJSON_Delete(o);
            t += s[i].dt;
            p = q;
        }
    }
    fclose(f);
    return path;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("no number '%s'", k);
    return v->valuedouble;
}

/* Runs ttsbuf with args (--json added) and returns the parsed report. */
static cJSON *run_json(const char *args)
{
    char cmd[4096];
    struct tb_test_out o;
    cJSON *j;
    snprintf(cmd, sizeof(cmd), "%s --json", args);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("ttsbuf %s: exit %d: %s", cmd, o.code, o.se);
    j = cJSON_Parse(o.so);
    if (j == NULL)
        fail_msg("ttsbuf %s: not JSON: %s", cmd, o.so);
    tb_test_out_free(&o);
    return j;
}

/* The model's gaps and the audio clock's agree: count, place, length.
 * Fails the case; gaps_agree (below) says why instead, for a case that
 * may try again. */
static int gaps_agree(const cJSON *j, double tol, int compare_at, char *why, size_t len);

static void same_gaps(const cJSON *j, double tol, int compare_at)
{
    char why[256];
    if (!gaps_agree(j, tol, compare_at, why, sizeof(why)))
        fail_msg("%s", why);
}

static int gaps_agree(const cJSON *j, double tol, int compare_at, char *why, size_t len)
{
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(j, "audio");
    const cJSON *mg = cJSON_GetObjectItemCaseSensitive(j, "gaps");
    const cJSON *ag = cJSON_GetObjectItemCaseSensitive(au, "gaps");
    int n = 0;
    double worst = 0;
    assert_non_null(au);
    assert_int_equal((int)num(j, "underruns"), (int)num(au, "underruns"));
    /* the audio clock lists every dry spell; compare the underruns */
    for (int i = 0; i < cJSON_GetArraySize(ag); i++) {
        const cJSON *a = cJSON_GetArrayItem(ag, i), *m;
        if (num(a, "gap_s") <= 0.001)
            continue;
        m = cJSON_GetArrayItem(mg, n++);
        assert_non_null(m);
        if (fabs(num(a, "gap_s") - num(m, "gap_s")) > worst)
            worst = fabs(num(a, "gap_s") - num(m, "gap_s"));
        if (fabs(num(a, "gap_s") - num(m, "gap_s")) > tol ||
            (compare_at && fabs(num(a, "at_s") - num(m, "at_s")) > tol)) {
            snprintf(why, len, "gap %d: audio clock %.4f s at %.4f, model %.4f s at %.4f", n,
                     num(a, "gap_s"), num(a, "at_s"), num(m, "gap_s"), num(m, "at_s"));
            return 0;
        }
    }
    assert_int_equal(n, cJSON_GetArraySize(mg));
    printf("  %d gaps; audio clock vs model: largest difference in length %.2f ms\n", n,
           worst * 1e3);
    return 1;
}

/* Largest silent run (|s| <= thr) between first and last sound. */
static double longest_silence(const struct tb_pcm *p, int thr)
{
    struct tb_pcm_gap g[512];
    struct tb_audio_shape sh;
    char err[256];
    double best = 0;
    assert_int_equal(tb_pcm_shape(p, thr, 0.02, g, 512, &sh, err, sizeof(err)), 0);
    for (size_t i = 0; i < sh.ngaps && i < 512; i++)
        best = g[i].len > best ? g[i].len : best;
    return best;
}

static void load_wav(const char *path, struct tb_pcm *p)
{
    char err[256];
    if (tb_pcm_load_wav(path, p, err, sizeof(err)) != 0)
        fail_msg("%s", err);
}

static void speech_cli_errors(void **state)
{
    (void)state;
    tb_test_expect_error("sim --audio mp3:x", 2, "--audio: 'mp3:x' is not none, wav:FILE");
    tb_test_expect_error("sim --audio wav:", 2, "--audio");
    tb_test_expect_error("sim --stall-cue beep", 2, "--stall-cue: 'beep'");
    tb_test_expect_error("sim --voice-model neural", 2, "--voice-model: 'neural'");
    tb_test_expect_error("sim --latency 5", 2, "--latency");
    tb_test_expect_error("sim --voice-model espeak --wpm 60", 2, "80 to 900");
    tb_test_expect_error("sim --voice-model espeak --voice klingon-x", 2, "no voice 'klingon-x'");
    /* An unwritable WAV path is bad usage, found before any work (bench:
     * before its requests, though it plays after them). */
    tb_test_expect_error("sim --audio wav:/nonexistent-dir/x.wav", 2, "/nonexistent-dir/x.wav");
    tb_test_expect_error("run --mock --audio wav:/nonexistent-dir/x.wav", 2,
                         "/nonexistent-dir/x.wav");
    tb_test_expect_error("bench --mock --audio wav:/nonexistent-dir/x.wav", 2,
                         "--audio wav: /nonexistent-dir/x.wav: No such file or directory");
    /* bench's records are the rate model's: eSpeak's durations are sim's */
    tb_test_expect_error("bench --mock --voice-model espeak", 2,
                         "bench measures every stream with the rate model");
    /* a chunk the rate model gives 750 s (1500 code points at 20 wpm) is
     * more than the speaker stretches at once */
    {
        char *trace = tmpname("long.jsonl"), *wav = tmpname("long.wav"), args[1024];
        FILE *f = fopen(trace, "w");
        assert_non_null(f);
        fputs("{\"t\": 0.1, \"text\": \"", f);
        for (int i = 0; i < 300; i++)
            fputs("word ", f);
        fputs("\"}\n", f);
        fclose(f);
        snprintf(args, sizeof(args), "sim --trace %s --wpm 20 --audio wav:%s", trace, wav);
        tb_test_expect_error(args, 3, "a chunk of 750 s of speech is longer than the 600 s");
        remove(trace);
        remove(wav);
        free(trace);
        free(wav);
    }
    /* no device at all: ALSA pointed at a configuration without one */
    char conf[1024], err[256];
    const char *old = getenv("ALSA_CONFIG_PATH");
    char *saved = old ? strdup(old) : NULL;
    assert_int_equal(tb_audio_conf("asoundrc-none", conf, sizeof(conf), err, sizeof(err)), 0);
    setenv("ALSA_CONFIG_PATH", conf, 1);
    tb_test_expect_error("sim --synth tokens=5 --audio portaudio", 3,
                         "no audio output device; no sound card? try --audio wav:FILE");
    tb_test_expect_error("sim --synth tokens=5 --audio portaudio:no-such-device-xyz", 3,
                         "no audio output device matches 'no-such-device-xyz'");
    if (saved) {
        setenv("ALSA_CONFIG_PATH", saved, 1);
        free(saved);
    } else {
        unsetenv("ALSA_CONFIG_PATH");
    }
}

static void speech_json_without_speech(void **state)
{
    cJSON *j = run_json("sim --synth tokens=20");
    (void)state;
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "audio")));
    cJSON_Delete(j);
}

/* WAV: model, audio clock and the file agree to the sample. */
static void speech_two_clocks_wav(void **state)
{
    char *trace = write_trace(stalls, 4, -1, "stalls.jsonl"), *wav = tmpname("stalls.wav");
    char args[1024];
    struct tb_pcm p = {0};
    (void)state;
    snprintf(args, sizeof(args), "sim --trace %s --audio wav:%s --stall-cue none --gaps 100", trace,
             wav);
    cJSON *j = run_json(args);
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(j, "audio");
    assert_true(num(j, "underruns") >= 2);
    same_gaps(j, 1.0 / 22050 * 2, 1);
    /* every gap is digital silence in the file, exactly where it was counted */
    load_wav(wav, &p);
    const cJSON *ag = cJSON_GetObjectItemCaseSensitive(au, "gaps");
    for (int i = 0; i < cJSON_GetArraySize(ag); i++) {
        const cJSON *g = cJSON_GetArrayItem(ag, i);
        size_t a = (size_t)lround(num(g, "at_s") * p.rate);
        size_t b = (size_t)lround((num(g, "at_s") + num(g, "gap_s")) * p.rate);
        assert_true(b <= p.n);
        for (size_t k = a; k < b; k++)
            if (p.s[k] != 0)
                fail_msg("gap %d: sound at %.4f s", i, (double)k / p.rate);
    }
    /* speech plays from first audio; the file ends with the last of it */
    assert_float_equal((double)p.n / p.rate, num(j, "end_s"), 0.05);
    assert_float_equal(num(au, "first_audio_s"), num(j, "ttfa_s"), 1e-3);
    tb_pcm_free(&p);
    cJSON_Delete(j);
    remove(trace);
    remove(wav);
    free(trace);
    free(wav);
}

/* The cause of the model's gap before chunk k ("" when none). */
static const char *gap_cause(const cJSON *j, int k)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(j, "gaps"))
    {
        if ((int)num(g, "chunk") == k)
            return cJSON_GetObjectItemCaseSensitive(g, "cause")->valuestring;
    }
    return "";
}

/* The model's gap before and inside chunk k (0 when none). */
static double gap_of(const cJSON *j, int k)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(j, "gaps"))
    {
        if ((int)num(g, "chunk") == k)
            return num(g, "gap_s");
    }
    return 0.0;
}

/*
 * The speech path plays the TTS stage.  For a stream and stage options,
 * `sim --json` without --audio is the model; with --audio wav the audio
 * clock's dry spells must be its gaps, to two samples: the count, the
 * first audio, the end, and where each one is.  One gap a chunk (R <= 1):
 * each dry spell is the model's gap, at its place.  R > 1 (frames): the
 * spells from the end of chunk j-1 to the end of chunk j add up to the
 * model's gap of chunk j (the one before it and the stalls inside it).
 * Every spell is digital silence in the WAV.  Returns the model.
 */
static cJSON *stage_plays_model(const char *trace, const char *opts, int frames)
{
    char args[1024];
    char *wav = tmpname("stage.wav");
    const double tol = 2.0 / 22050;
    struct tb_pcm p = {0};
    cJSON *m, *j;
    const cJSON *au, *ag, *cl;
    int spells = 0;
    snprintf(args, sizeof(args), "sim --trace %s %s --chunks --gaps 100000", trace, opts);
    m = run_json(args);
    snprintf(args, sizeof(args),
             "sim --trace %s %s --chunks --gaps 100000 --audio wav:%s --stall-cue none", trace,
             opts, wav);
    j = run_json(args);
    au = cJSON_GetObjectItemCaseSensitive(j, "audio");
    ag = cJSON_GetObjectItemCaseSensitive(au, "gaps");
    cl = cJSON_GetObjectItemCaseSensitive(m, "chunk_list");
    assert_non_null(au);
    assert_true(cJSON_IsArray(cl));
    /* asking for audio changes no number of the model */
    assert_int_equal((int)num(m, "underruns"), (int)num(j, "underruns"));
    assert_true(num(m, "gap_total_s") == num(j, "gap_total_s"));
    assert_true(num(m, "ttfa_s") == num(j, "ttfa_s"));
    printf("  %s: model %d underruns, %.4f s; audio %d, %.4f s\n", opts, (int)num(m, "underruns"),
           num(m, "gap_total_s"), (int)num(au, "underruns"), num(au, "gap_total_s"));
    assert_int_equal((int)num(m, "underruns"), (int)num(au, "underruns"));
    assert_float_equal(num(au, "first_audio_s"), num(m, "ttfa_s"), tol);
    assert_float_equal(num(au, "end_audio_s"), num(m, "end_s"), tol);
    assert_float_equal(num(au, "gap_total_s"), num(m, "gap_total_s"),
                       tol * (num(m, "underruns") + 1));
    if (!frames) {
        same_gaps(j, tol, 1);
    } else {
        double e_prev = -INFINITY;
        for (int k = 0; k < cJSON_GetArraySize(cl); k++) {
            const cJSON *c = cJSON_GetArrayItem(cl, k);
            double e = num(c, "start_s") + num(c, "duration_s"), sum = 0;
            int n = 0;
            for (int i = 0; i < cJSON_GetArraySize(ag); i++) {
                const cJSON *a = cJSON_GetArrayItem(ag, i);
                if (num(a, "gap_s") > TB_GAP_MIN_S && num(a, "at_s") >= e_prev - tol &&
                    num(a, "at_s") < e - tol) {
                    sum += num(a, "gap_s");
                    n++;
                }
            }
            if (fabs(sum - gap_of(m, k + 1)) > tol * (n + 1))
                fail_msg("chunk %d: %d dry spells, %.5f s; the model: %.5f s", k + 1, n, sum,
                         gap_of(m, k + 1));
            spells += n;
            e_prev = e;
        }
        assert_int_equal(spells, (int)num(m, "underruns"));
    }
    load_wav(wav, &p);
    for (int i = 0; i < cJSON_GetArraySize(ag); i++) {
        const cJSON *g = cJSON_GetArrayItem(ag, i);
        size_t a = (size_t)lround(num(g, "at_s") * p.rate);
        size_t b = (size_t)lround((num(g, "at_s") + num(g, "gap_s")) * p.rate);
        assert_true(b <= p.n);
        for (size_t k = a; k < b; k++)
            if (p.s[k] != 0)
                fail_msg("%s: dry spell %d: sound at %.4f s", opts, i, (double)k / p.rate);
    }
    tb_pcm_free(&p);
    cJSON_Delete(j);
    remove(wav);
    free(wav);
    return m;
}

/* A busy engine (one streaming context, N = 1) and a first-byte latency:
 * the gap it makes before chunk 3 is heard where the model puts it. */
static void speech_tts_stage_busy(void **state)
{
    char *trace = write_trace(stalls, 4, -1, "busy.jsonl");
    cJSON *m;
    (void)state;
    m = stage_plays_model(trace, "--tts-concurrency 1 --tts-rtf 0.95 --tts-latency 0.3", 0);
    assert_string_equal(gap_cause(m, 3), "tts");
    cJSON_Delete(m);
    /* a connect latency and a latency per chunk from a list, with a pre-roll
     * the stage's produced audio reaches, on eSpeak's own durations */
    {
        char opts[512], *lat = tmpname("busy.lat");
        FILE *f = fopen(lat, "w");
        assert_non_null(f);
        fputs("0.2\n1.5\n0.1\n0.4\n", f);
        fclose(f);
        snprintf(opts, sizeof(opts),
                 "--voice-model espeak --tts-latency list:%s --tts-connect 0.4 --tts-rtf 0.5 "
                 "--tts-concurrency 2 --preroll 1.5",
                 lat);
        m = stage_plays_model(trace, opts, 0);
        assert_true(num(m, "underruns") >= 1);
        cJSON_Delete(m);
        remove(lat);
        free(lat);
    }
    remove(trace);
    free(trace);
}

/* R > 1: the engine is slower than speech, the player stalls inside each
 * chunk frame by frame, and the WAV stalls exactly there; with a pre-roll
 * too (the start waits for the audio every started chunk has produced). */
static void speech_tts_stage_frames(void **state)
{
    char *trace = write_trace(stalls, 4, -1, "frames.jsonl");
    cJSON *m;
    (void)state;
    m = stage_plays_model(trace, "--tts-rtf 1.6 --tts-concurrency 1", 1);
    assert_true(num(m, "underruns") > 100);
    cJSON_Delete(m);
    /* two engines fill the pre-roll together: a queue of frames in chunk
     * order would start 0.48 s late and never stall */
    m = stage_plays_model(trace, "--tts-rtf 2 --preroll 3 --tts-concurrency 2", 1);
    assert_true(num(m, "underruns") > 10);
    cJSON_Delete(m);
    remove(trace);
    free(trace);
}

static double speech_rtf(void *ud, uint32_t j)
{
    (void)ud;
    return j == 2 ? 2.5 : 0.5;
}

/*
 * A real-time factor per chunk (the RTF hook, as a measured TTS replays):
 * the speaker plays chunk 2 (R = 2.5) frame by frame and chunks 1 and 3
 * (R = 0.5) whole, as the model does; the WAV's dry spells are the
 * model's gaps, fed eSpeak NG's own durations, to two samples each.
 */
static void speech_rtf_per_chunk_wav(void **state)
{
    static const char *const text[] = {"Hello there.", "A slower sentence follows.", "Bye now."};
    static const double at[] = {0.5, 0.6, 0.7};
    const double tol = 2.0 / 22050;
    char *wav = tmpname("rtfj.wav"), err[256];
    struct tb_speaker_opts so;
    struct tb_speaker *sp = NULL;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct tb_audio_result ar;
    const struct tb_voice *v;
    (void)state;
    memset(&so, 0, sizeof(so));
    so.sink = TB_SINK_WAV;
    so.target = wav;
    tb_playout_opts_default(&so.play);
    so.play.tts_latency = 0.2;
    so.play.tts_rtf_at = speech_rtf;
    if (tb_speaker_create(&so, &sp, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(tb_playout_create(&so.play, NULL, NULL, &p), 0);
    v = tb_speaker_voice(sp);
    for (uint32_t i = 0; i < 3; i++) {
        double dur = 0, busy = 0;
        uint32_t n = (uint32_t)strlen(text[i]);
        assert_int_equal(v->chunk(v->ud, i, at[i], text[i], n, n, &dur, &busy), 0);
        assert_true(dur > 0.3);
        assert_int_equal(tb_playout_add_timed(p, at[i], i, n, dur), 0);
    }
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(tb_speaker_finish(sp, &ar, err, sizeof(err)), 0);
    printf("  R_j 0.5, 2.5, 0.5: model %u underruns, %.4f s; audio %u, %.4f s\n", r.underruns,
           r.gap_total, ar.underruns, ar.gap_total);
    assert_true(r.underruns > 10); /* chunk 2's stalls */
    assert_int_equal(ar.underruns, r.underruns);
    assert_float_equal(ar.first_audio, r.ttfa, tol);
    assert_float_equal(ar.end_audio, r.end, tol);
    assert_float_equal(ar.gap_total, r.gap_total, tol * (r.underruns + 1));
    tb_playout_destroy(p);
    tb_speaker_destroy(sp);
    remove(wav);
    free(wav);
}

/* The stall cue: a tick at the start of each gap, silence after it. */
static void speech_tick_cue(void **state)
{
    char *trace = write_trace(stalls, 4, -1, "tick.jsonl"), *wav = tmpname("tick.wav");
    char args[1024];
    struct tb_pcm p = {0};
    (void)state;
    snprintf(args, sizeof(args), "sim --trace %s --audio wav:%s", trace, wav);
    cJSON *j = run_json(args);
    const cJSON *ag =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "audio"), "gaps");
    assert_string_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "audio"), "stall_cue")
            ->valuestring,
        "tick");
    load_wav(wav, &p);
    assert_true(cJSON_GetArraySize(ag) >= 2);
    for (int i = 0; i < cJSON_GetArraySize(ag); i++) {
        const cJSON *g = cJSON_GetArrayItem(ag, i);
        size_t a = (size_t)lround(num(g, "at_s") * p.rate);
        size_t tick = (size_t)(0.012 * p.rate), b = a + (size_t)(num(g, "gap_s") * p.rate);
        int peak = 0;
        for (size_t k = a; k < a + tick; k++)
            peak = abs(p.s[k]) > peak ? abs(p.s[k]) : peak;
        assert_true(peak > 4000);
        for (size_t k = a + tick + 1; k < b; k++)
            assert_int_equal(p.s[k], 0);
    }
    tb_pcm_free(&p);
    cJSON_Delete(j);
    remove(trace);
    remove(wav);
    free(trace);
    free(wav);
}

/* eSpeak's own rendering of the sentences, in one piece. */
static double reference_silence(void)
{
    char *txt = tmpname("ref.txt"), *wav = tmpname("ref.wav"), cmd[1024];
    FILE *f = fopen(txt, "w");
    struct tb_pcm p = {0};
    double s;
    tb_test_need("espeak-ng");
    assert_non_null(f);
    for (size_t i = 0; i < 4; i++)
        fputs(stalls[i].text, f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "espeak-ng -s 150 -w %s -f %s", wav, txt);
    assert_int_equal(system(cmd), 0);
    load_wav(wav, &p);
    s = longest_silence(&p, 0);
    tb_pcm_free(&p);
    remove(txt);
    remove(wav);
    free(txt);
    free(wav);
    return s;
}

/* Every token at t = 0: no underrun, and no silence longer than eSpeak
 * leaves in the same text. */
static void speech_fast_stream_wav(void **state)
{
    char *trace = write_trace(stalls, 4, 0.0, "fast.jsonl"), *wav = tmpname("fast.wav");
    char args[1024];
    struct tb_pcm p = {0};
    (void)state;
    snprintf(args, sizeof(args),
             "sim --trace %s --voice-model espeak --audio wav:%s --stall-cue none", trace, wav);
    cJSON *j = run_json(args);
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(j, "audio");
    assert_int_equal((int)num(au, "underruns"), 0);
    assert_int_equal((int)num(au, "concealment_events"), 0);
    load_wav(wav, &p);
    double ours = longest_silence(&p, 0), ref = reference_silence();
    if (ours > ref + TOL)
        fail_msg("longest silence %.3f s; espeak-ng -w leaves %.3f s", ours, ref);
    tb_pcm_free(&p);
    cJSON_Delete(j);
    remove(trace);
    remove(wav);
    free(trace);
    free(wav);
}

/* The eSpeak-timed simulation: both models reported, deterministic up to
 * eSpeak's few-sample variations, and faster than real time. */
static void speech_voice_model(void **state)
{
    char *trace = write_trace(stalls, 4, -1, "model.jsonl");
    char args[1024];
    (void)state;
    snprintf(args, sizeof(args), "sim --trace %s --voice-model espeak", trace);
    cJSON *a = run_json(args), *b = run_json(args);
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(a, "audio");
    const cJSON *rm = cJSON_GetObjectItemCaseSensitive(au, "rate_model");
    assert_non_null(rm);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(au, "sink")->valuestring, "none");
    assert_float_equal(num(a, "speech_s"), num(b, "speech_s"), 0.01 * num(a, "speech_s"));
    assert_int_equal((int)num(a, "underruns"), (int)num(b, "underruns"));
    assert_float_equal(num(a, "speech_s"), num(au, "audio_s"), 1e-9);
    /* the rate model is the plain sim */
    snprintf(args, sizeof(args), "sim --trace %s", trace);
    cJSON *c = run_json(args);
    assert_float_equal(num(rm, "speech_s"), num(c, "speech_s"), 1e-9);
    assert_float_equal(num(rm, "min_tps"), num(c, "min_tps"), 1e-9);
    /* with synthesis time as latency: each chunk later by its synthesis */
    snprintf(args, sizeof(args), "sim --trace %s --voice-model espeak+synthesis", trace);
    cJSON *e = run_json(args);
    const cJSON *eau = cJSON_GetObjectItemCaseSensitive(e, "audio");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(eau, "voice_model")->valuestring,
                        "espeak+synthesis");
    assert_true(num(e, "ttfa_s") > num(a, "ttfa_s"));
    assert_true(num(e, "ttfa_s") < num(a, "ttfa_s") + num(eau, "synth_s") + 1e-6);
    cJSON_Delete(e);
    /* a repeated stream synthesizes each distinct chunk once */
    cJSON *d = run_json("sim --synth tokens=400,seed=3 --voice-model espeak");
    assert_true(num(cJSON_GetObjectItemCaseSensitive(d, "audio"), "cache_hits") > 0);
    assert_true(num(cJSON_GetObjectItemCaseSensitive(d, "audio"), "synth_s") <
                num(d, "speech_s") / 10);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(d);
    remove(trace);
    free(trace);
}

/* The capture from the pulse pipe, as PCM. */
static void load_capture(const struct tb_audio_pulse *pa, struct tb_pcm *p)
{
    char err[256];
    if (tb_pcm_load_raw(tb_audio_pulse_capture(pa), TB_AUDIO_CAPTURE_RATE, p, err, sizeof(err)) !=
        0)
        fail_msg("%s", err);
}

/* Starts a private PulseAudio, or skips the case with the reason. */
static struct tb_audio_pulse *pulse_or_skip(void)
{
    struct tb_audio_pulse *pa = NULL;
    char err[512];
    int rc = tb_audio_pulse_start(&pa, err, sizeof(err));
    if (rc == TB_AUDIO_UNAVAILABLE) {
        printf("skipped: %s\n", err);
        skip();
    }
    if (rc != 0)
        fail_msg("PulseAudio: %s", err);
    return pa;
}

/*
 * Real time through PortAudio into PulseAudio's pipe sink: the stalls of
 * the trace are heard where the model puts them.  Captured silences are
 * compared after aligning on the first sound (the pipe's timeline starts
 * when the server does); each model gap lies inside a captured silence
 * whose length is the gap plus eSpeak's own pauses around it.
 */
/* One real-time play of the trace; 1 when what was heard is the model's,
 * else 0 with why. */
static int realtime_once(const char *trace, char *why, size_t wlen)
{
    char args[1024], err[256];
    struct tb_audio_pulse *pa = pulse_or_skip();
    struct tb_pcm p = {0};
    struct tb_pcm_gap g[256];
    struct tb_audio_shape sh;
    int ok;
    snprintf(args, sizeof(args), "sim --trace %s --audio portaudio --latency 0.1 --stall-cue none",
             trace);
    cJSON *j = run_json(args);
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(j, "audio");
    assert_int_equal(tb_audio_pulse_stop(pa, err, sizeof(err)), 0);
    printf("  device underflows: %.0f\n", num(au, "device_underflows"));
    ok = gaps_agree(j, TOL, 0, why, wlen);
    assert_true(num(au, "output_latency_s") >= 0.05);
    load_capture(pa, &p);
    assert_int_equal(tb_pcm_shape(&p, 0, 0.1, g, 256, &sh, err, sizeof(err)), 0);
    const cJSON *mg = cJSON_GetObjectItemCaseSensitive(j, "gaps");
    double ttfa = num(j, "ttfa_s");
    for (int i = 0; ok && i < cJSON_GetArraySize(mg); i++) {
        const cJSON *m = cJSON_GetArrayItem(mg, i);
        double at = num(m, "at_s") - ttfa + sh.first_sound, len = num(m, "gap_s");
        int found = 0;
        for (size_t k = 0; k < sh.ngaps && k < 256; k++)
            if (g[k].start <= at + TOL && g[k].start + g[k].len >= at + len - TOL &&
                g[k].len <= len + 1.0)
                found = 1;
        if (!found) {
            snprintf(why, wlen, "model gap %d (%.3f s at %.3f) is not a silence in the capture", i,
                     len, at);
            ok = 0;
        }
    }
    tb_pcm_free(&p);
    tb_audio_pulse_destroy(pa);
    cJSON_Delete(j);
    return ok;
}

/* On this shared machine a real-time play can be descheduled (eSpeak NG
 * late for a chunk under the sanitizers and a loaded machine): what was
 * heard must be the model's in one of three plays, as ttslive allows for
 * its first bytes; every play's other checks hold each time. */
static void speech_portaudio_realtime(void **state)
{
    char *trace = write_trace(stalls, 4, -1, "rt.jsonl");
    char why[256] = "";
    int ok = 0;
    (void)state;
    for (int attempt = 0; attempt < 3 && !ok; attempt++) {
        ok = realtime_once(trace, why, sizeof(why));
        if (!ok)
            printf("  attempt %d: %s\n", attempt + 1, why);
    }
    if (!ok)
        fail_msg("%s (3 plays)", why);
    remove(trace);
    free(trace);
}

/* Real time with a TTS stage (one streaming context, a first-byte
 * latency): PortAudio plays the stage's schedule, so the heard gaps are
 * the model's, the busy engine's before chunk 3 included (to 20 ms).  The
 * latency, 0.5 s, leaves eSpeak NG time to speak each chunk before its
 * audio is due even under the sanitizers (at 0.3 s the first chunk, the
 * synthesizer's first, came 31 ms late there).  On a loaded machine a
 * play can still be descheduled (the audio clock then heard the first
 * gap 38 ms longer, twice): the heard gaps must be the model's in one of
 * three plays, as speech_portaudio_realtime allows; the model's own
 * numbers hold in every play. */
static int stage_once(const char *trace, char *why, size_t wlen)
{
    char args[1024], err[256];
    struct tb_audio_pulse *pa = pulse_or_skip();
    int ok;
    snprintf(args, sizeof(args),
             "sim --trace %s --audio portaudio --latency 0.1 --stall-cue none --tts-concurrency 1 "
             "--tts-rtf 0.95 --tts-latency 0.5",
             trace);
    cJSON *j = run_json(args);
    assert_int_equal(tb_audio_pulse_stop(pa, err, sizeof(err)), 0);
    assert_int_equal((int)num(j, "underruns"), 3);
    assert_string_equal(gap_cause(j, 3), "tts"); /* the busy engine */
    ok = gaps_agree(j, TOL, 0, why, wlen);
    tb_audio_pulse_destroy(pa);
    cJSON_Delete(j);
    return ok;
}

static void speech_portaudio_stage(void **state)
{
    char *trace = write_trace(stalls, 4, -1, "rtstage.jsonl");
    char why[256] = "";
    int ok = 0;
    (void)state;
    for (int attempt = 0; attempt < 3 && !ok; attempt++) {
        ok = stage_once(trace, why, sizeof(why));
        if (!ok)
            printf("  attempt %d: %s\n", attempt + 1, why);
    }
    remove(trace);
    free(trace);
    if (!ok)
        fail_msg("%s (3 plays)", why);
}

/* Real time, every token at t = 0: the pipeline adds no stall of its own. */
static void speech_portaudio_fast(void **state)
{
    char *trace = write_trace(stalls, 4, 0.0, "rtfast.jsonl");
    char args[1024], err[256];
    struct tb_audio_pulse *pa = pulse_or_skip();
    struct tb_pcm p = {0};
    (void)state;
    snprintf(args, sizeof(args),
             "sim --trace %s --voice-model espeak --audio portaudio --stall-cue none", trace);
    cJSON *j = run_json(args);
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(j, "audio");
    assert_int_equal(tb_audio_pulse_stop(pa, err, sizeof(err)), 0);
    assert_int_equal((int)num(au, "underruns"), 0);
    load_capture(pa, &p);
    double ours = longest_silence(&p, 0), ref = reference_silence();
    if (ours > ref + TOL)
        fail_msg("longest silence in the capture %.3f s; espeak-ng -w leaves %.3f s", ours, ref);
    tb_pcm_free(&p);
    tb_audio_pulse_destroy(pa);
    cJSON_Delete(j);
    remove(trace);
    free(trace);
}

/* ALSA's file plugin in front of the private PulseAudio: the frames
 * PortAudio wrote, sample for sample (PulseAudio paces the stream).  With
 * a pre-roll longer than the answer, playback starts once everything is
 * queued, so the file holds the answer with no stall and no silence longer
 * than eSpeak leaves in the same text. */
static void speech_portaudio_alsa_file(void **state)
{
    char *trace = write_trace(stalls, 4, 0.0, "file.jsonl"), *wav = tmpname("alsa.wav");
    char args[1024], err[256], conf[1024];
    struct tb_audio_pulse *pa = pulse_or_skip();
    struct tb_pcm p = {0};
    struct tb_audio_shape sh;
    (void)state;
    assert_int_equal(tb_audio_conf("asoundrc-file-pulse", conf, sizeof(conf), err, sizeof(err)), 0);
    setenv("ALSA_CONFIG_PATH", conf, 1); /* restored by tb_audio_pulse_destroy */
    setenv("TTSBUF_ALSA_WAV", wav, 1);
    snprintf(args, sizeof(args),
             "sim --trace %s --voice-model espeak --audio portaudio --preroll 60 --stall-cue none",
             trace);
    cJSON *j = run_json(args);
    unsetenv("TTSBUF_ALSA_WAV");
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(j, "audio");
    assert_int_equal((int)num(au, "underruns"), 0);
    assert_int_equal(tb_audio_pulse_stop(pa, err, sizeof(err)), 0);
    load_wav(wav, &p);
    double ours = longest_silence(&p, 0), ref = reference_silence();
    if (ours > ref + TOL)
        fail_msg("longest silence %.3f s; espeak-ng -w leaves %.3f s", ours, ref);
    assert_int_equal(tb_pcm_shape(&p, 0, 0.02, NULL, 0, &sh, err, sizeof(err)), 0);
    /* all of the speech, less eSpeak's own leading and trailing silence */
    double span = sh.last_sound - sh.first_sound, played = num(au, "speech_played_s");
    if (span > played + 1e-3 || span < played - 0.25)
        fail_msg("the file holds %.3f s from first to last sound; %.3f s were played", span,
                 played);
    tb_pcm_free(&p);
    tb_audio_pulse_destroy(pa);
    cJSON_Delete(j);
    remove(wav);
    remove(trace);
    free(wav);
    free(trace);
}

/* A minute and more in real time: the captured audio lasts speech + gaps
 * to within 1%. */
static void speech_portaudio_long(void **state)
{
    char args[1024], err[256];
    struct tb_audio_pulse *pa = pulse_or_skip();
    struct tb_pcm p = {0};
    struct tb_audio_shape sh;
    (void)state;
    snprintf(args, sizeof(args),
             "sim --synth tokens=300,tps=6,ttft=0.3,seed=11 --audio portaudio --stall-cue none");
    cJSON *j = run_json(args);
    const cJSON *au = cJSON_GetObjectItemCaseSensitive(j, "audio");
    assert_int_equal(tb_audio_pulse_stop(pa, err, sizeof(err)), 0);
    double heard = num(au, "speech_played_s") + num(au, "concealed_s");
    assert_true(heard >= 60.0);
    load_capture(pa, &p);
    assert_int_equal(tb_pcm_shape(&p, 0, 0.02, NULL, 0, &sh, err, sizeof(err)), 0);
    double span = sh.last_sound - sh.first_sound;
    if (fabs(span - heard) > 0.01 * heard)
        fail_msg("captured %.3f s from first to last sound; speech + gaps %.3f s", span, heard);
    tb_pcm_free(&p);
    tb_audio_pulse_destroy(pa);
    cJSON_Delete(j);
}

/* In process: the real-time path (tb_pcmring_pull in PortAudio's callback)
 * never allocates, over a whole run. */
static void speech_callback_never_allocates(void **state)
{
    struct tb_audio_pulse *pa = pulse_or_skip();
    struct tb_speaker_opts so;
    struct tb_speaker *sp = NULL;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    struct tb_audio_result ar;
    struct tb_stream s;
    struct tb_clock clk;
    char err[256];
    unsigned long all0, rt0, all1, rt1;
    (void)state;
    tb_stream_init(&s);
    for (int i = 0; i < 40; i++)
        assert_int_equal(
            tb_stream_append(&s, 0.02 * i, i % 8 == 7 ? " end." : " word", 5, 1, TB_KIND_CONTENT),
            0);
    memset(&so, 0, sizeof(so));
    so.sink = TB_SINK_PORTAUDIO;
    tb_playout_opts_default(&so.play);
    so.play.wpm = 300;
    so.cue = TB_PCMRING_CUE_TONE;
    so.latency = 0.05;
    tb_test_alloc_counts(&all0, &rt0);
    if (tb_speaker_create(&so, &sp, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    tb_sim_opts_default(&o);
    o.play.wpm = 300;
    o.voice = tb_speaker_voice(sp);
    tb_clock_monotonic_init(&clk);
    assert_int_equal(tb_sim_run(&s, &o, &clk, NULL, NULL, &r, err, sizeof(err)), 0);
    assert_int_equal(tb_speaker_finish(sp, &ar, err, sizeof(err)), 0);
    tb_test_alloc_counts(&all1, &rt1);
    assert_true(all1 > all0); /* the hook sees allocations */
    assert_true(ar.speech > 1.0);
    assert_int_equal(rt1 - rt0, 0);
    tb_speaker_destroy(sp);
    tb_stream_free(&s);
    tb_audio_pulse_destroy(pa);
}

/* bench --audio: the stream with the most silence is played through the
 * sink after the run; --play names another, or fails cleanly. */
static void speech_bench_plays_worst(void **state)
{
    char log[128], args[1024], *wav = tmpname("bench.wav");
    int port, pid;
    struct tb_test_out o;
    struct tb_pcm p = {0};
    (void)state;
    snprintf(log, sizeof(log), "/tmp/ttsbuf-speech-%d-serve.log", (int)getpid());
    pid = tb_test_serve_spawn("tps=20,tokens=60,stall=0.05:1.0,seed=3", log, &port);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 2 --requests 4 -q "
             "--audio wav:%s --stall-cue none",
             port, wav);
    o = tb_test_run(args);
    if (o.code != 0 || strstr(o.se, "ttsbuf: playing request") == NULL ||
        strstr(o.se, "audio clock (wav:") == NULL)
        fail_msg("bench --audio: exit %d: %s", o.code, o.se);
    tb_test_out_free(&o);
    load_wav(wav, &p);
    assert_true(p.n > p.rate); /* more than a second of it */
    tb_pcm_free(&p);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 1 --requests 1 -q "
             "--audio wav:%s --play 99",
             port, wav);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    assert_non_null(strstr(o.se, "--play 99: no such successful request"));
    tb_test_out_free(&o);
    tb_test_serve_stop(pid);
    remove(log);
    remove(wav);
    free(wav);
}

/* Runs `ttsbuf args` through sh with files capped at 200 MB or more
 * (ulimit -f: a render that runs away dies of SIGXFSZ instead of filling
 * the disk, and the case fails).  Returns the exit status; standard
 * error in *err (owned). */
static int run_capped(const char *args, char **err)
{
    char cmd[4096], *path = tmpname("capped.err");
    int code;
    snprintf(cmd, sizeof(cmd), "ulimit -f 400000; '%s' %s >/dev/null 2>%s", tb_test_bin(), args,
             path);
    code = tb_test_sh(cmd);
    *err = tb_test_slurp_str(path);
    remove(path);
    free(path);
    return code;
}

/* The frames a WAV's header says it holds; fails unless the header is
 * whole and its sizes are the file's. */
static uint32_t wav_frames(const char *path)
{
    unsigned char h[44];
    long size = -1;
    FILE *f = fopen(path, "rb");
    uint32_t data, riff;
    if (f == NULL)
        fail_msg("%s: not written", path);
    if (fread(h, 1, 44, f) == 44 && fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    fclose(f);
    if (size < 44)
        fail_msg("%s: no whole header", path);
    data = (uint32_t)h[40] | (uint32_t)h[41] << 8 | (uint32_t)h[42] << 16 | (uint32_t)h[43] << 24;
    riff = (uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 24;
    if (memcmp(h, "RIFF", 4) != 0 || (long)data != size - 44 || riff != data + 36)
        fail_msg("%s: the header says %u data bytes (RIFF %u), the file holds %ld", path, data,
                 riff, size - 44);
    return data / 2;
}

/* The audio is bounded before it is rendered: a stream whose speech goes
 * on past --audio-max (default an hour) is refused with one line, exit 2,
 * the file never created (a last event at t = 1e9 s used to write 4.4 GB
 * in 10 s toward 44 TB, the header clamped and invalid past 4 GB); the
 * same for --html, which rendered it all to a temporary file before
 * cutting it at 600 s.  Audio that passes the cap anyway (more speech
 * than the text's times let one see) stops there: a valid WAV of the
 * first S seconds, the report of the whole run, then exit 3 with a line
 * that says where the audio was cut. */
static void speech_wav_bounded(void **state)
{
    char *wav = tmpname("bounded.wav"), *page = tmpname("bounded.html"), *err;
    char *trace = tmpname("mid.jsonl"), args[2048];
    const char *far = tb_test_data("hostile/last-event-1e9.jsonl");
    FILE *f;
    uint32_t n;
    (void)state;
    remove(wav);
    remove(page);
    snprintf(args, sizeof(args), "sim --trace %s --audio wav:%s", far, wav);
    assert_int_equal(run_capped(args, &err), 2);
    if (strstr(err, "--audio wav: the audio would last at least 1000000000.0 s") == NULL ||
        strstr(err, "over the 3600 s cap; --audio-max raises it (at most 97391 s") == NULL)
        fail_msg("stderr '%s'", err);
    free(err);
    assert_true(access(wav, F_OK) != 0);
    snprintf(args, sizeof(args), "sim --trace %s --html %s", far, page);
    assert_int_equal(run_capped(args, &err), 2);
    assert_non_null(strstr(err, "--html: the audio would last at least 1000000000.0 s"));
    free(err);
    assert_true(access(page, F_OK) != 0);
    snprintf(args, sizeof(args), "sim --trace %s --audio wav:%s --audio-max 97391", far, wav);
    assert_int_equal(run_capped(args, &err), 2);
    free(err);
    tb_test_expect_error("sim --audio-max 0", 2, "--audio-max");
    tb_test_expect_error("sim --audio-max 97392", 2, "--audio-max");
    /* Speech until t = 100 s: refused under a 50 s cap (TTS latency
     * counted), rendered under 200 s. */
    f = fopen(trace, "w");
    assert_non_null(f);
    fprintf(f, "{\"t\": 0.5, \"text\": \"Hello there.\"}\n{\"t\": 100, \"text\": \" Bye.\"}\n");
    fclose(f);
    snprintf(args, sizeof(args), "sim --trace %s --audio wav:%s --audio-max 99 --tts-latency 2",
             trace, wav);
    assert_int_equal(run_capped(args, &err), 2);
    assert_non_null(strstr(err, "at least 102.0 s (speech until t = 100 s, + 2 s of TTS"));
    free(err);
    assert_true(access(wav, F_OK) != 0);
    snprintf(args, sizeof(args), "sim --trace %s --audio wav:%s --audio-max 200", trace, wav);
    assert_int_equal(run_capped(args, &err), 0);
    free(err);
    n = wav_frames(wav);
    assert_true(n > 100 * 22050 && n < 103 * 22050);
    /* More speech than the cap: the render stops there, the header valid. */
    f = fopen(trace, "w");
    assert_non_null(f);
    fprintf(f, "{\"t\": 0.1, \"text\": \"This sentence takes eSpeak a good few seconds to "
               "say, more than the cap allows.\"}\n");
    fclose(f);
    snprintf(args, sizeof(args), "sim --trace %s --audio wav:%s --audio-max 2", trace, wav);
    assert_int_equal(run_capped(args, &err), 3);
    if (strstr(err, "the audio reached its cap of 2 s: the file holds its first 2.000 s "
                    "(--audio-max raises the cap)") == NULL)
        fail_msg("stderr '%s'", err);
    free(err);
    assert_int_equal(wav_frames(wav), 2 * 22050);
    /* A live run whose audio reaches the cap: exit 3, the trace holds
     * every event received (the report, the run's: --html's case is
     * speech_html_capped). */
    snprintf(args, sizeof(args),
             "run --mock --synth tokens=200,tps=100 --audio wav:%s --audio-max 2 --record %s", wav,
             trace);
    assert_int_equal(run_capped(args, &err), 3);
    assert_non_null(strstr(err, "(--audio-max raises the cap)"));
    free(err);
    assert_true(wav_frames(wav) <= 2 * 22050);
    {
        char *rec = tb_test_slurp_str(trace);
        size_t lines = 0;
        for (const char *q = rec; *q != '\0'; q++)
            lines += *q == '\n';
        free(rec);
        assert_int_equal(lines, 1 + 200 + 1 + 1); /* header, events, usage, end */
    }
    remove(trace);
    remove(wav);
    free(trace);
    free(page);
    free(wav);
}

/* A TTS whose audio passes --audio-max, with --html: the page and the
 * JSON are still written, both saying where the audio was cut; exit 3 with
 * one line that names no file that was not written.  The same for sim's
 * page of a trace with more speech than the cap. */
static void speech_html_capped(void **state)
{
    char *page = tmpname("capped.html"), *trace = tmpname("capped.jsonl"), args[2048];
    const char *const runs[] = {"run --mock --tts-url mock", "sim --trace"};
    FILE *f;
    (void)state;
    f = fopen(trace, "w");
    assert_non_null(f);
    fprintf(f, "{\"t\": 0.1, \"text\": \"This sentence takes eSpeak a good few seconds to "
               "say, more than the cap allows.\"}\n");
    fclose(f);
    for (size_t i = 0; i < 2; i++) {
        struct tb_test_out o;
        cJSON *j, *cut;
        char *html;
        remove(page);
        snprintf(args, sizeof(args), "%s%s%s --html %s --audio-max 2 --json", runs[i],
                 i == 1 ? " " : "", i == 1 ? trace : "", page);
        o = tb_test_run(args);
        j = cJSON_Parse(o.so);
        cut = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "audio"), "cut_s");
        if (o.code != 3 || j == NULL || !cJSON_IsNumber(cut) || !(cut->valuedouble > 0.5) ||
            cut->valuedouble > 2.0 ||
            strstr(o.se, "--html: the audio reached its cap of 2 s: the page plays its first") ==
                NULL ||
            strstr(o.se, "the file") != NULL)
            fail_msg("%s: exit %d, stderr '%s', stdout '%.200s'", args, o.code, o.se, o.so);
        html = tb_test_slurp_str(page);
        if (strstr(html, "The audio was cut at ") == NULL ||
            strstr(html, "it reached its cap of 2 s (--audio-max)") == NULL)
            fail_msg("%s: the page does not say the audio was cut", args);
        free(html);
        cJSON_Delete(j);
        tb_test_out_free(&o);
    }
    remove(page);
    remove(trace);
    free(page);
    free(trace);
}

/* The WAV sink compares a chunk's time with its cap before it becomes a
 * frame count: at t = 1e15 s, 2.2e19 frames overflowed the uint64_t it
 * was converted to (undefined; the release build wrote on with the gap
 * missing).  Now the render ends there (the run goes on: no error), the
 * result says where (cut_s), nothing more is written, the header valid. */
static void speech_wav_far_chunk(void **state)
{
    static const double far[] = {1e15, 1e300, INFINITY, NAN, 3600.5};
    (void)state;
    for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
        char *wav = tmpname("far.wav"), err[256];
        struct tb_speaker_opts so;
        struct tb_speaker *sp = NULL;
        const struct tb_voice *v;
        struct tb_audio_result res;
        double dur = 0, busy = 0;
        int rc;
        memset(&so, 0, sizeof(so));
        so.sink = TB_SINK_WAV;
        so.target = wav;
        tb_playout_opts_default(&so.play);
        if (tb_speaker_create(&so, &sp, err, sizeof(err)) != 0)
            fail_msg("%s", err);
        v = tb_speaker_voice(sp);
        assert_int_equal(v->chunk(v->ud, 0, 0.5, "Hello.", 6, 6, &dur, &busy), 0);
        rc = v->chunk(v->ud, 1, far[i], "Bye.", 4, 4, &dur, &busy);
        if (rc != 0)
            fail_msg("chunk at %g: rc %d", far[i], rc);
        assert_int_equal(tb_speaker_finish(sp, &res, err, sizeof(err)), 0);
        if (!(fabs(res.cut_s - 0.5) < 1e-3))
            fail_msg("chunk at %g: cut at %g s, want 0.5 (the first chunk's due time)", far[i],
                     res.cut_s);
        tb_speaker_destroy(sp);
        /* The first chunk is queued, not yet played: nothing was written
         * past t = 0.5 s. */
        assert_true(wav_frames(wav) <= 22050 / 2 + 1);
        remove(wav);
        free(wav);
    }
}

/* SIGTERM mid-render: the WAV's header describes exactly what was written
 * (it said 0 bytes), exit 3; with --html no temporary file is left (a
 * 4.3 GB one was) and no page is written. */
static void speech_wav_interrupted(void **state)
{
    char *wav = tmpname("killed.wav"), *page = tmpname("killed.html"),
         *errp = tmpname("killed.err");
    char cmd[4096], *err;
    uint32_t n;
    (void)state;
    remove(wav);
    remove(page);
    /* About 3000 s of speech: seconds of eSpeak; killed once 2 MB are out. */
    snprintf(cmd, sizeof(cmd),
             "ulimit -f 400000; '%s' sim --synth tokens=12000,tps=1000,seed=1 --audio wav:%s "
             ">/dev/null 2>%s & p=$!; i=0; while [ $(stat -c %%s %s 2>/dev/null || echo 0) -lt "
             "2000000 ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; kill -TERM $p; "
             "wait $p",
             tb_test_bin(), wav, errp, wav);
    assert_int_equal(tb_test_sh(cmd), 3);
    err = tb_test_slurp_str(errp);
    if (strstr(err, "interrupted; the file holds the first") == NULL)
        fail_msg("stderr '%s'", err);
    free(err);
    n = wav_frames(wav);
    assert_true(n >= 2000000 / 2 - 22 && n < 2900 * 22050);
    /* --html: the render's file has no name (the process's descriptor
     * shows it deleted); nothing named ttsbuf-html-* appears in /tmp. */
    snprintf(cmd, sizeof(cmd),
             "ulimit -f 400000; '%s' sim --synth tokens=12000,tps=1000,seed=1 --html %s "
             ">/dev/null 2>%s & p=$!; i=0; fds() { ls -l /proc/$p/fd /proc/$(cut -d' ' -f1 "
             "/proc/$p/task/$p/children 2>/dev/null)/fd 2>/dev/null; }; until fds | grep -q "
             "'deleted\\|ttsbuf-html'; do sleep 0.02; "
             "i=$((i+1)); [ $i -lt 3000 ] || break; done; names=$(fds | grep -o "
             "'/tmp/ttsbuf-html-[A-Za-z0-9]*'); sleep 0.5; kill -TERM $p; wait $p; c=$?; for n "
             "in $names; do [ ! -e $n ] || { rm -f $n; exit 99; }; done; exit $c",
             tb_test_bin(), page, errp);
    assert_int_equal(tb_test_sh(cmd), 3);
    err = tb_test_slurp_str(errp);
    if (strstr(err, "--html: interrupted; no page written") == NULL)
        fail_msg("stderr '%s'", err);
    free(err);
    assert_true(access(page, F_OK) != 0);
    remove(errp);
    remove(wav);
    free(errp);
    free(page);
    free(wav);
}

int tb_test_speech(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(speech_cli_errors),
        cmocka_unit_test(speech_json_without_speech),
        cmocka_unit_test(speech_two_clocks_wav),
        cmocka_unit_test(speech_tts_stage_busy),
        cmocka_unit_test(speech_tts_stage_frames),
        cmocka_unit_test(speech_rtf_per_chunk_wav),
        cmocka_unit_test(speech_tick_cue),
        cmocka_unit_test(speech_fast_stream_wav),
        cmocka_unit_test(speech_wav_bounded),
        cmocka_unit_test(speech_html_capped),
        cmocka_unit_test(speech_wav_far_chunk),
        cmocka_unit_test(speech_wav_interrupted),
        cmocka_unit_test(speech_voice_model),
        cmocka_unit_test(speech_bench_plays_worst),
        cmocka_unit_test(speech_callback_never_allocates),
    };
    return TB_RUN_GROUP("speech", tests);
}

/* The cases that play in real time into the private PulseAudio and judge
 * the timing of what its pipe sink captured: their own group, which the
 * runner gives the machine alone (tests/main.c); its shards, each with its
 * own PulseAudio, run side by side (a play takes little CPU). */
int tb_test_speechrt(void)
{
    /* In this order the runner's three shards (i mod 3) take about the
     * same time: the long play with the stage, the realtime play with the
     * fast one, the ALSA file alone. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(speech_portaudio_long),      cmocka_unit_test(speech_portaudio_realtime),
        cmocka_unit_test(speech_portaudio_alsa_file), cmocka_unit_test(speech_portaudio_stage),
        cmocka_unit_test(speech_portaudio_fast),
    };
    return TB_RUN_GROUP("speechrt", tests);
}
