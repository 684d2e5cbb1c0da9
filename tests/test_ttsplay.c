/*
 * test_ttsplay.c - the speaker playing a TTS provider's PCM (speaker.h,
 * pcm_rate; tb_speaker_pcm, tb_speaker_pcm_end) instead of eSpeak NG's.
 *
 * The WAV sink is fed synthetic PCM (a tone per chunk, never a zero
 * sample, so every zero in the file is silence the player made) with
 * scripted arrival times, and the file is held against an oracle written
 * here from the contract alone: each 20 ms frame of a chunk playable at
 * the arrival of the byte that completes it, chunks in order, the start
 * at max(the first frame, the pre-roll's worth arrived).  Silences are
 * compared to the sample in C and cross-checked with sox.  The PortAudio
 * sink is fed in real time into the headless devices of tests/audio_env.h
 * (ALSA's file plugin in front of a private PulseAudio): the file holds
 * exactly what was fed, and the pipe's capture the scripted gap.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audio_env.h"
#include "lag.h"
#include "tests.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/speaker.h"
#include "ttsbuf/tts.h"

#define MAXC 8  /* chunks in a script */
#define MAXG 64 /* gaps in a script */
#define FRAME_S 0.020

/* One scripted call: bytes [a, b) of chunk j's PCM at t, or (end) its end. */
struct ev {
    uint32_t j;
    double t;
    size_t a, b;
    int end, failed;
};

/* Chunk j's PCM: n samples of a tone (a frequency per chunk), no zero. */
static int16_t sample(uint32_t j, size_t i, unsigned rate)
{
    double v = 6000.0 * sin(2.0 * 3.14159265358979 * (200.0 + 90.0 * j) * (double)i / rate);
    long s = lrint(v);
    return (int16_t)(s == 0 ? (long)j : s);
}

static unsigned char *chunk_bytes(uint32_t j, size_t samples, unsigned rate)
{
    unsigned char *b = malloc(samples * 2 + 1);
    assert_non_null(b);
    for (size_t i = 0; i < samples; i++) {
        uint16_t v = (uint16_t)sample(j, i, rate);
        b[2 * i] = (unsigned char)(v & 0xff);
        b[2 * i + 1] = (unsigned char)(v >> 8);
    }
    return b;
}

/* What the oracle expects of a script. */
struct expect {
    int16_t *pcm; /* the speech, in order */
    size_t n;
    uint64_t start;         /* the first speech sample, frames */
    uint64_t gap_at[MAXG];  /* each silence between speech: where, */
    uint64_t gap_len[MAXG]; /* and how long, frames */
    size_t ngaps;
};

/* The oracle: the contract of speaker.h, sample by sample. */
static void oracle(const struct ev *ev, size_t nev, unsigned rate, double preroll, struct expect *x)
{
    size_t frame = (size_t)llround(FRAME_S * rate), got[MAXC + 1] = {0};
    uint32_t last = MAXC;
    double reach = preroll > 0 ? NAN : -INFINITY, tmax = 0, first = NAN, s1;
    uint64_t arrived = 0, pos;
    memset(x, 0, sizeof(*x));
    for (size_t i = 0; i < nev; i++)
        if (ev[i].end && ev[i].failed && ev[i].j < last)
            last = ev[i].j;
    /* bytes received per chunk; the pre-roll over every chunk's arrivals */
    for (size_t i = 0; i < nev; i++) {
        if (ev[i].end || ev[i].j > last)
            continue;
        got[ev[i].j] = ev[i].b;
        arrived += ev[i].b - ev[i].a;
        tmax = ev[i].t > tmax ? ev[i].t : tmax;
        if (isnan(reach) && arrived >= 2 * (uint64_t)llround(preroll * rate))
            reach = ev[i].t;
    }
    if (isnan(reach))
        reach = tmax;
    x->pcm = malloc((arrived / 2 + 1) * sizeof(*x->pcm));
    assert_non_null(x->pcm);
    /* frame k of chunk j: due at the call that brought byte 2 min((k+1)F, N) */
    double dues[MAXC + 1][2048];
    size_t nfr[MAXC + 1] = {0};
    for (uint32_t j = 1; j <= last; j++) {
        size_t ns = got[j] / 2;
        for (size_t k = 0; k * frame < ns; k++) {
            size_t need = 2 * ((k + 1) * frame < ns ? (k + 1) * frame : ns);
            assert_true(k < 2048);
            dues[j][k] = NAN;
            for (size_t i = 0; i < nev; i++)
                if (!ev[i].end && ev[i].j == j && ev[i].b >= need) {
                    dues[j][k] = ev[i].t;
                    break;
                }
            assert_false(isnan(dues[j][k]));
            nfr[j] = k + 1;
            if (isnan(first))
                first = dues[j][k];
        }
    }
    s1 = first > reach ? first : reach;
    pos = (uint64_t)(s1 * rate + 0.5);
    x->start = pos;
    double due_last = s1;
    for (uint32_t j = 1; j <= last; j++) {
        size_t ns = got[j] / 2;
        for (size_t k = 0; k < nfr[j]; k++) {
            double due = dues[j][k] > due_last ? dues[j][k] : due_last;
            uint64_t at = (uint64_t)(due * rate + 0.5);
            due_last = due;
            if (at > pos) {
                assert_true(x->ngaps < MAXG);
                x->gap_at[x->ngaps] = pos;
                x->gap_len[x->ngaps++] = at - pos;
                pos = at;
            }
            for (size_t i = k * frame; i < ns && i < (k + 1) * frame; i++) {
                x->pcm[x->n++] = sample(j, i, rate);
                pos++;
            }
        }
    }
}

static char *tmpname(const char *what)
{
    char *p = malloc(128);
    assert_non_null(p);
    snprintf(p, 128, "/tmp/ttsbuf-ttsplay-%d-%s", (int)getpid(), what);
    return p;
}

static void wav_opts(struct tb_speaker_opts *o, const char *path, unsigned rate, double preroll)
{
    memset(o, 0, sizeof(*o));
    o->sink = TB_SINK_WAV;
    o->target = path;
    tb_playout_opts_default(&o->play);
    o->play.preroll = preroll;
    o->cue = TB_PCMRING_CUE_NONE;
    o->pcm_rate = rate;
}

/* Feeds the script to a speaker; returns the first non-zero code. */
static int feed(struct tb_speaker *sp, const struct ev *ev, size_t nev, unsigned char **bytes)
{
    int rc = 0;
    for (size_t i = 0; i < nev && rc == 0; i++) {
        if (ev[i].end)
            rc = tb_speaker_pcm_end(sp, ev[i].j, ev[i].t, ev[i].failed);
        else
            rc = tb_speaker_pcm(sp, ev[i].j, ev[i].t, bytes[ev[i].j] + ev[i].a, ev[i].b - ev[i].a);
    }
    return rc;
}

/* Whether sox finds samples [a, a+n) of the WAV all zero (1), or not (0);
 * -1 when sox is not installed. */
static int sox_silent(const char *wav, uint64_t a, uint64_t n)
{
    char cmd[1024];
    if (tb_audio_sox_stat(wav, 0, NULL, NULL, cmd, sizeof(cmd)) == TB_AUDIO_UNAVAILABLE)
        return -1;
    snprintf(cmd, sizeof(cmd),
             "sox '%s' -n trim %llus %llus stat 2>&1 | awk '/^Maximum amplitude/ {f = 1; "
             "exit !($3 == 0)} END {if (!f) exit 2}'",
             wav, (unsigned long long)a, (unsigned long long)n);
    return tb_test_sh(cmd) == 0;
}

/*
 * Runs a script through the WAV sink at rate with the pre-roll and holds
 * the file, the audio result and the gap records against the oracle.
 */
static void run_script(const struct ev *ev, size_t nev, const size_t *samples, uint32_t nchunks,
                       unsigned rate, double preroll, const char *name)
{
    char *wav = tmpname(name), err[256];
    unsigned char *bytes[MAXC + 1] = {0};
    struct tb_speaker_opts o;
    struct tb_speaker *sp = NULL;
    struct tb_audio_result r;
    struct tb_audio_gap_s g[MAXG];
    struct tb_pcm p = {0};
    struct tb_pcm_gap pg[MAXG];
    struct tb_audio_shape sh;
    struct expect x;
    size_t k = 0, ng;
    double len = 0;
    for (uint32_t j = 1; j <= nchunks; j++)
        bytes[j] = chunk_bytes(j, samples[j], rate);
    oracle(ev, nev, rate, preroll, &x);
    wav_opts(&o, wav, rate, preroll);
    if (tb_speaker_create(&o, &sp, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    if (feed(sp, ev, nev, bytes) != 0) {
        tb_speaker_finish(sp, &r, err, sizeof(err));
        fail_msg("%s: feeding: %s", name, err);
    }
    if (tb_speaker_finish(sp, &r, err, sizeof(err)) != 0)
        fail_msg("finish: %s", err);
    if (tb_pcm_load_wav(wav, &p, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(p.rate, rate);
    /* the file: silence to the start, then the speech, in order, with
     * silences exactly where the oracle has them */
    assert_int_equal(tb_pcm_shape(&p, 0, 0.5 / rate, pg, MAXG, &sh, err, sizeof(err)), 0);
    assert_int_equal((uint64_t)llround(sh.first_sound * rate), x.start);
    if (sh.ngaps != x.ngaps)
        fail_msg("%s: %zu silences in the file, the arrivals make %zu", name, sh.ngaps, x.ngaps);
    for (size_t i = 0; i < x.ngaps; i++) {
        uint64_t at = (uint64_t)llround(pg[i].start * rate),
                 n = (uint64_t)llround(pg[i].len * rate);
        if (at != x.gap_at[i] || n != x.gap_len[i])
            fail_msg("%s: silence %zu: %llu frames at %llu; the arrivals make %llu at %llu", name,
                     i, (unsigned long long)n, (unsigned long long)at,
                     (unsigned long long)x.gap_len[i], (unsigned long long)x.gap_at[i]);
    }
    for (size_t i = (size_t)x.start; i < p.n && k < x.n; i++) {
        if (p.s[i] == 0)
            continue;
        if (p.s[i] != x.pcm[k])
            fail_msg("%s: sample %zu of the speech: %d, fed %d", name, k, p.s[i], x.pcm[k]);
        k++;
    }
    assert_int_equal(k, x.n);
    /* the audio clock says the same */
    assert_int_equal(r.rate, rate);
    assert_int_equal((uint64_t)llround(r.first_audio * rate), x.start);
    assert_int_equal((uint64_t)llround(r.speech * rate), x.n);
    ng = tb_speaker_gaps(sp, g, MAXG);
    assert_int_equal(ng, x.ngaps);
    for (size_t i = 0; i < ng; i++) {
        assert_int_equal((uint64_t)llround(g[i].at * rate), x.gap_at[i]);
        assert_int_equal((uint64_t)llround(g[i].len * rate), x.gap_len[i]);
    }
    /* sox: the length, and every silence silent with sound either side */
    if (tb_audio_sox_stat(wav, 0, &len, NULL, err, sizeof(err)) == 0) {
        assert_float_equal(len, (double)p.n / rate, 1e-4);
        for (size_t i = 0; i < x.ngaps; i++) {
            assert_int_equal(sox_silent(wav, x.gap_at[i], x.gap_len[i]), 1);
            assert_int_equal(sox_silent(wav, x.gap_at[i] - 1, 1), 0);
            assert_int_equal(sox_silent(wav, x.gap_at[i] + x.gap_len[i], 1), 0);
        }
        assert_int_equal(sox_silent(wav, 0, x.start), x.start > 0 ? 1 : 0);
    }
    printf("  %s: %u Hz, start %.4f s, %zu silences, %.3f s of speech\n", name, rate,
           (double)x.start / rate, x.ngaps, (double)x.n / rate);
    tb_pcm_free(&p);
    free(x.pcm);
    tb_speaker_destroy(sp);
    for (uint32_t j = 1; j <= nchunks; j++)
        free(bytes[j]);
    remove(wav);
    free(wav);
}

/* Gaps from the arrival times: a chunk late, a chunk dripping slower than
 * it plays (odd splits, a last frame shorter than 20 ms), and chunk 4
 * arriving (and ending) while chunk 3 still drips: held, then played
 * straight after it. */
static const size_t samples_a[] = {0, 12000, 7200, 10320, 2400, 4800};
static const struct ev script_a[] = {
    {1, 0.30, 0, 9601, 0, 0},      {1, 0.35, 9601, 24000, 0, 0},  {1, 0.35, 0, 0, 1, 0},
    {2, 1.50, 0, 14400, 0, 0},     {2, 1.50, 0, 0, 1, 0},         {3, 2.00, 0, 5281, 0, 0},
    {3, 2.30, 5281, 10562, 0, 0},  {4, 2.40, 0, 4800, 0, 0},      {4, 2.50, 0, 0, 1, 0},
    {3, 2.60, 10562, 15843, 0, 0}, {3, 2.90, 15843, 20640, 0, 0}, {3, 2.95, 0, 0, 1, 0},
    {5, 4.00, 0, 9600, 0, 0},      {5, 4.10, 0, 0, 1, 0},
};

static void ttsplay_wav_gaps(void **state)
{
    struct tb_tts_opts to = {NULL, 150};
    struct tb_tts *t = NULL;
    char err[256];
    (void)state;
    run_script(script_a, sizeof(script_a) / sizeof(script_a[0]), samples_a, 5, 24000, 0.0,
               "gaps.wav");
    /* the same arrivals at 16 kHz and 48 kHz (frames of 320 and 960) */
    {
        size_t s16[6], s48[6];
        struct ev e16[sizeof(script_a) / sizeof(script_a[0])];
        struct ev e48[sizeof(script_a) / sizeof(script_a[0])];
        for (int j = 0; j < 6; j++) {
            s16[j] = samples_a[j] * 2 / 3;
            s48[j] = samples_a[j] * 2;
        }
        for (size_t i = 0; i < sizeof(script_a) / sizeof(script_a[0]); i++) {
            e16[i] = e48[i] = script_a[i];
            e16[i].a = script_a[i].a * 2 / 3;
            e16[i].b = script_a[i].b * 2 / 3;
            e48[i].a = script_a[i].a * 2;
            e48[i].b = script_a[i].b * 2;
        }
        run_script(e16, sizeof(e16) / sizeof(e16[0]), s16, 5, 16000, 0.0, "gaps16.wav");
        run_script(e48, sizeof(e48) / sizeof(e48[0]), s48, 5, 48000, 0.0, "gaps48.wav");
    }
    /* no eSpeak NG engine while a PCM speaker exists: one can be made */
    {
        struct tb_speaker_opts o;
        struct tb_speaker *sp = NULL;
        char *wav = tmpname("noespeak.wav");
        wav_opts(&o, wav, 24000, 0);
        assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), 0);
        if (tb_tts_create(&to, &t, err, sizeof(err)) != 0)
            fail_msg("eSpeak NG beside a PCM speaker: %s", err);
        tb_tts_destroy(t);
        tb_speaker_destroy(sp);
        remove(wav);
        free(wav);
    }
}

/* The pre-roll: playback starts when its worth has arrived (every chunk
 * counted, as the model's A(t)), or at the last arrival when it never is. */
static const size_t samples_b[] = {0, 7200, 14400};
static const struct ev script_b[] = {
    {1, 0.20, 0, 14400, 0, 0},     {1, 0.20, 0, 0, 1, 0},         {2, 0.40, 0, 4800, 0, 0},
    {2, 0.45, 4800, 9600, 0, 0},   {2, 0.50, 9600, 14400, 0, 0},  {2, 0.55, 14400, 19200, 0, 0},
    {2, 0.60, 19200, 24000, 0, 0}, {2, 0.65, 24000, 28800, 0, 0}, {2, 0.65, 0, 0, 1, 0},
};
/* chunk 2's audio first (a client with two in flight) fills the pre-roll */
static const size_t samples_c[] = {0, 4800, 7200};
static const struct ev script_c[] = {
    {2, 0.10, 0, 14400, 0, 0}, {1, 0.20, 0, 4800, 0, 0}, {1, 0.50, 4800, 9600, 0, 0},
    {2, 0.50, 0, 0, 1, 0},     {1, 0.55, 0, 0, 1, 0},
};

static void ttsplay_wav_preroll(void **state)
{
    (void)state;
    run_script(script_b, 9, samples_b, 2, 24000, 0.5, "pre05.wav");   /* starts at 0.45 */
    run_script(script_b, 9, samples_b, 2, 24000, 5.0, "pre5.wav");    /* at 0.65 */
    run_script(script_b, 9, samples_b, 2, 24000, 0.0, "pre0.wav");    /* at 0.20 */
    run_script(script_c, 5, samples_c, 2, 24000, 0.4, "preconc.wav"); /* at 0.20 */
}

/* A failed chunk ends the speech: what came of it plays, chunk 3's bytes
 * (held before, and after) do not; the player's tail is no gap. */
static const size_t samples_d[] = {0, 4800, 4800, 4800};
static const struct ev script_d[] = {
    {1, 0.10, 0, 9600, 0, 0}, {1, 0.10, 0, 0, 1, 0}, {2, 0.30, 0, 4801, 0, 0},
    {3, 0.35, 0, 4000, 0, 0}, {2, 0.40, 0, 0, 1, 1}, {3, 0.50, 4000, 9600, 0, 0},
    {3, 0.60, 0, 0, 1, 0},
};

static void ttsplay_wav_failed(void **state)
{
    (void)state;
    run_script(script_d, 7, samples_d, 3, 24000, 0.0, "failed.wav");
}

/* Bad calls, sticky failures, the WAV's cap, cancel and the held cap. */
static void ttsplay_errors(void **state)
{
    char *wav = tmpname("err.wav"), err[256];
    struct tb_speaker_opts o;
    struct tb_speaker *sp = NULL;
    struct tb_audio_result r;
    unsigned char pcm[9600] = {1, 2, 3, 4};
    atomic_int cancel = 0;
    struct tb_pcm p = {0};
    (void)state;
    wav_opts(&o, wav, 7999, 0);
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), TB_ERANGE);
    assert_non_null(strstr(err, "7999 Hz"));
    o.pcm_rate = 48001;
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), TB_ERANGE);
    o.pcm_rate = 24000;
    o.sink = TB_SINK_NONE;
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), TB_EINVAL);
    assert_null(sp);
    o.sink = TB_SINK_WAV;
    /* bad arguments fail the speaker, and finish says why */
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), 0);
    assert_int_equal(tb_speaker_voice(sp)->follows_rate, 1);
    assert_int_equal(tb_speaker_pcm(sp, 0, 0.1, pcm, 2), TB_EINVAL);
    assert_int_equal(tb_speaker_pcm(sp, 1, 0.1, pcm, 2), TB_EINVAL); /* sticky */
    assert_int_equal(tb_speaker_finish(sp, &r, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "chunk 0"));
    assert_int_equal(tb_speaker_pcm(sp, 1, 0.1, pcm, 2), TB_EINVAL); /* after finish */
    tb_speaker_destroy(sp);
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), 0);
    assert_int_equal(tb_speaker_pcm(sp, 1, NAN, pcm, 2), TB_EINVAL);
    tb_speaker_destroy(sp);
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), 0);
    assert_int_equal(tb_speaker_pcm(sp, 1, 0.1, pcm, 2), 0);
    assert_int_equal(tb_speaker_pcm_end(sp, 1, 0.1, 0), 0);
    assert_int_equal(tb_speaker_pcm(sp, 1, 0.2, pcm, 2), TB_EINVAL); /* chunk 1 ended */
    assert_int_equal(tb_speaker_finish(sp, &r, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "chunk 1 has ended"));
    tb_speaker_destroy(sp);
    /* the cap: a byte due past max_audio_s ends the render (the run goes
     * on: no error), the result says where, the header what was written */
    o.max_audio_s = 1.0;
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), 0);
    assert_int_equal(tb_speaker_pcm(sp, 1, 0.5, pcm, sizeof(pcm)), 0);
    assert_int_equal(tb_speaker_pcm(sp, 1, 2.0, pcm, sizeof(pcm)), 0);
    assert_int_equal(tb_speaker_finish(sp, &r, err, sizeof(err)), 0);
    assert_true(r.cut_s > 0 && r.cut_s <= 1.0);
    tb_speaker_destroy(sp);
    if (tb_pcm_load_wav(wav, &p, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_true(p.n <= 24000);
    tb_pcm_free(&p);
    /* cancel: the next call stops, finish too, the file is whole */
    o.max_audio_s = 0;
    o.cancel = &cancel;
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), 0);
    assert_int_equal(tb_speaker_pcm(sp, 1, 0.5, pcm, sizeof(pcm)), 0);
    cancel = 1;
    assert_int_equal(tb_speaker_pcm(sp, 1, 0.6, pcm, sizeof(pcm)), TB_ECANCELED);
    assert_int_equal(tb_speaker_finish(sp, &r, err, sizeof(err)), TB_ECANCELED);
    tb_speaker_destroy(sp);
    if (tb_pcm_load_wav(wav, &p, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    tb_pcm_free(&p);
    /* chunk 2's audio waiting for chunk 1 has a cap */
    o.cancel = NULL;
    o.pcm_rate = 8000;
    assert_int_equal(tb_speaker_create(&o, &sp, err, sizeof(err)), 0);
    {
        size_t n = (size_t)(TB_SPEAKER_HELD_MAX_S * 8000) * 2 + 2;
        unsigned char *big = calloc(1, n);
        assert_non_null(big);
        assert_int_equal(tb_speaker_pcm(sp, 2, 0.1, big, n - 4), 0);
        assert_int_equal(tb_speaker_pcm(sp, 2, 0.2, big, 4), TB_ETOOBIG);
        free(big);
    }
    assert_int_equal(tb_speaker_finish(sp, &r, err, sizeof(err)), TB_ETOOBIG);
    assert_non_null(strstr(err, "600 s of audio waiting"));
    tb_speaker_destroy(sp);
    remove(wav);
    free(wav);
}

/* ---- PortAudio ----------------------------------------------------------- */

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

static void sleep_until(const struct tb_clock *c, double t)
{
    double now = c->now((struct tb_clock *)c);
    if (t > now) {
        struct timespec d = {(time_t)(t - now), (long)(fmod(t - now, 1.0) * 1e9)};
        nanosleep(&d, NULL);
    }
}

/*
 * Real time, at 24 kHz: chunks 1 and 2 arrive interleaved (chunk 2 held
 * until chunk 1 ends, odd splits), chunk 3 after a scripted pause.  ALSA's
 * file plugin (in front of the private PulseAudio, which paces it) holds
 * exactly the fed samples, in chunk order; the pipe's capture has the
 * pause where the arrival times put it, to 20 ms and the machine's
 * wake-up delays (lag.h), and so has the audio clock.
 */
static void ttsplay_portaudio(void **state)
{
    const unsigned rate = 24000;
    const size_t n1 = 9600, n2 = 7200, n3 = 4800, n4 = 2400; /* 0.4, 0.3, 0.2, 0.1 s */
    char *wav = tmpname("pa.wav"), err[512], conf[1024];
    unsigned char *b1 = chunk_bytes(1, n1, rate), *b2 = chunk_bytes(2, n2, rate),
                  *b3 = chunk_bytes(3, n3, rate), *b4 = chunk_bytes(4, n4, rate);
    struct tb_audio_pulse *pa = pulse_or_skip();
    struct tb_speaker_opts o;
    struct tb_speaker *sp = NULL;
    struct tb_audio_result r;
    struct tb_audio_gap_s g[16];
    struct tb_clock clk;
    struct tb_pcm p = {0}, cap = {0};
    struct tb_pcm_gap pg[64];
    struct tb_audio_shape sh;
    double t1, t3, want, heard = -1, lag;
    size_t k = 0, ng, i;
    (void)state;
    assert_int_equal(tb_audio_conf("asoundrc-file-pulse", conf, sizeof(conf), err, sizeof(err)), 0);
    setenv("ALSA_CONFIG_PATH", conf, 1); /* restored by tb_audio_pulse_destroy */
    setenv("TTSBUF_ALSA_WAV", wav, 1);
    memset(&o, 0, sizeof(o));
    o.sink = TB_SINK_PORTAUDIO;
    tb_playout_opts_default(&o.play);
    o.cue = TB_PCMRING_CUE_NONE;
    o.latency = 0.1;
    o.pcm_rate = rate;
    if (tb_speaker_create(&o, &sp, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    tb_clock_monotonic_init(&clk);
    tb_test_lag_start();
    sleep_until(&clk, clk.now(&clk) + 0.3); /* the stream settles */
    t1 = clk.now(&clk);
    assert_int_equal(tb_speaker_pcm(sp, 2, t1, b2, 5001), 0);
    assert_int_equal(tb_speaker_pcm(sp, 1, t1, b1, 7777), 0);
    assert_int_equal(tb_speaker_pcm(sp, 2, t1, b2 + 5001, 2 * n2 - 5001), 0);
    assert_int_equal(tb_speaker_pcm_end(sp, 2, t1, 0), 0);
    assert_int_equal(tb_speaker_pcm(sp, 1, t1, b1 + 7777, 2 * n1 - 7777), 0);
    assert_int_equal(tb_speaker_pcm_end(sp, 1, t1, 0), 0);
    sleep_until(&clk, t1 + 1.5);
    t3 = clk.now(&clk);
    assert_int_equal(tb_speaker_pcm(sp, 3, t3, b3, 2 * n3), 0);
    assert_int_equal(tb_speaker_pcm(sp, 4, t3, b4, 2 * n4), 0);
    assert_int_equal(tb_speaker_pcm_end(sp, 3, t3, 0), 0);
    /* chunk 4 fails: its audio is the last; chunk 5's is dropped, and the
     * half second before finish is the tail, not concealment */
    assert_int_equal(tb_speaker_pcm_end(sp, 4, t3, 1), 0);
    assert_int_equal(tb_speaker_pcm(sp, 5, t3, b3, 2 * n3), 0);
    sleep_until(&clk, t3 + 0.8);
    if (tb_speaker_finish(sp, &r, err, sizeof(err)) != 0)
        fail_msg("finish: %s", err);
    unsetenv("TTSBUF_ALSA_WAV");
    assert_int_equal(tb_audio_pulse_stop(pa, err, sizeof(err)), 0);
    lag = tb_test_lag_stop();
    want = t3 - t1 - (double)(n1 + n2) / rate;
    /* the frames PortAudio wrote: the fed samples, in chunk order */
    if (tb_pcm_load_wav(wav, &p, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(p.rate, rate);
    for (i = 0; i < p.n && k < n1 + n2 + n3 + n4; i++) {
        uint32_t j = 1;
        size_t at = k;
        for (const size_t *len = (const size_t[]){n1, n2, n3}; j < 4 && at >= len[j - 1]; j++)
            at -= len[j - 1];
        int16_t x = sample(j, at, rate);
        if (p.s[i] == 0)
            continue;
        if (p.s[i] != x)
            fail_msg("sample %zu of the speech: %d, fed %d", k, p.s[i], x);
        k++;
    }
    assert_int_equal(k, n1 + n2 + n3 + n4);
    for (; i < p.n; i++)
        assert_int_equal(p.s[i], 0);
    /* the audio clock: one gap, the scripted one, and no other dry spell */
    ng = tb_speaker_gaps(sp, g, 16);
    assert_int_equal(ng, 1);
    assert_int_equal((uint64_t)llround(r.speech * rate), n1 + n2 + n3 + n4);
    if (fabs(r.concealed - g[0].len) > 1.0 / rate)
        fail_msg("%.4f s concealed; the one gap is %.4f s", r.concealed, g[0].len);
    /* heard: the pipe's capture (48 kHz), one silence of about the pause */
    if (tb_pcm_load_raw(tb_audio_pulse_capture(pa), TB_AUDIO_CAPTURE_RATE, &cap, err,
                        sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(tb_pcm_shape(&cap, 0, 0.05, pg, 64, &sh, err, sizeof(err)), 0);
    for (i = 0; i < sh.ngaps && i < 64; i++)
        heard = pg[i].len > heard ? pg[i].len : heard;
    printf("  pause: scripted %.4f s, audio clock %.4f s, heard %.4f s (%zu silences)\n", want,
           g[0].len, heard, sh.ngaps);
    assert_int_equal(sh.ngaps, 1);
    /* 20 ms, and three times the wake-up delay the probe measured
     * meanwhile (lag.h): the feeder's, PortAudio's callback's and the
     * sound server's wake-ups each move the speech against t1 and t3 */
    if (fabs(heard - want) > 0.020 + 3 * lag || fabs(g[0].len - want) > 0.020 + 3 * lag)
        fail_msg("the pause of %.4f s: heard %.4f s, audio clock %.4f s (wake-up delay %.4f s)",
                 want, heard, g[0].len, lag);
    tb_pcm_free(&p);
    tb_pcm_free(&cap);
    tb_speaker_destroy(sp);
    tb_audio_pulse_destroy(pa);
    free(b1);
    free(b2);
    free(b3);
    free(b4);
    remove(wav);
    free(wav);
}

int tb_test_ttsplay(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ttsplay_wav_gaps),   cmocka_unit_test(ttsplay_wav_preroll),
        cmocka_unit_test(ttsplay_wav_failed), cmocka_unit_test(ttsplay_errors),
        cmocka_unit_test(ttsplay_portaudio),
    };
    return TB_RUN_GROUP("ttsplay", tests);
}
