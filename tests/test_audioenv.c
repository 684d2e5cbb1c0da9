/*
 * test_audioenv.c - the headless audio harness (audio_env.h) proven with
 * real PortAudio streams: a tone with known silences is played in callback
 * mode through ALSA's file plugin and through a private PulseAudio pipe
 * sink, and the captured audio must have the silences where they were put,
 * as long as they were (+-20 ms), and the right total length.
 *
 * Plus the analysis itself on known input (in memory and made by sox) and
 * the loaders on bad files.  Wall-clock figures are printed, not asserted
 * (speed is for make bench); the one timing assertion is a lower bound that
 * proves the PulseAudio path is paced by a clock.
 */
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <portaudio.h>

#include "audio_env.h"
#include "tests.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define RATE TB_AUDIO_RATE
#define THRESHOLD 200 /* |sample| <= 200 of 32767 is silence */
#define MIN_GAP 0.050 /* shorter silent runs are not gaps */
#define TOL_GAP 0.020 /* gaps measured to +-20 ms */
#define LATENCY 0.100 /* >= 100 ms of output latency on a small machine */
#define MAX_GAPS 16

/* The test signal: tone, silence, tone, silence, tone (seconds). */
static const double pattern[] = {0.5, 0.3, 0.4, 0.15, 0.3};
#define NPATTERN (sizeof(pattern) / sizeof(pattern[0]))

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* PULSE_SERVER is set, to want. */
static void assert_pulse_server(const char *want)
{
    const char *got = getenv("PULSE_SERVER");
    assert_non_null(got);
    assert_string_equal(got, want);
}

static double pattern_len(void)
{
    double t = 0;
    for (size_t i = 0; i < NPATTERN; i++)
        t += pattern[i];
    return t;
}

/* The pattern as PCM: 440 Hz at about -12 dBFS in the odd segments. */
static int16_t *make_pattern(size_t *n)
{
    size_t total = (size_t)lround(pattern_len() * RATE), pos = 0;
    int16_t *s = calloc(total, sizeof(*s));
    assert_non_null(s);
    for (size_t i = 0; i < NPATTERN; i++) {
        size_t len = (size_t)lround(pattern[i] * RATE);
        for (size_t k = 0; k < len && pos < total; k++, pos++)
            if (i % 2 == 0)
                s[pos] = (int16_t)lround(8000.0 * sin(2.0 * M_PI * 440.0 * (double)k / RATE));
    }
    *n = total;
    return s;
}

/* Asserts the shape of a capture of the pattern: its gaps at the right
 * places (relative to the first sound) and lengths, and the span from the
 * first to the last sound within min(1%, 20 ms) of the pattern's. */
static void assert_pattern(const struct tb_pcm *pcm, const char *what)
{
    struct tb_pcm_gap gaps[MAX_GAPS];
    struct tb_audio_shape sh;
    char err[256];
    double at = 0, span = pattern_len(), tol_span = fmin(0.01 * span, TOL_GAP);
    size_t g = 0;
    assert_int_equal(tb_pcm_shape(pcm, THRESHOLD, MIN_GAP, gaps, MAX_GAPS, &sh, err, sizeof(err)),
                     0);
    printf("  %s: %.3f s captured, sound %.4f..%.4f s, %zu gaps:", what, sh.duration,
           sh.first_sound, sh.last_sound, sh.ngaps);
    for (size_t i = 0; i < sh.ngaps && i < MAX_GAPS; i++)
        printf(" %.4f+%.4f", gaps[i].start - sh.first_sound, gaps[i].len);
    printf("\n");
    assert_true(sh.first_sound >= 0);
    assert_int_equal(sh.ngaps, NPATTERN / 2);
    for (size_t i = 0; i < NPATTERN; i++) {
        if (i % 2 == 1) {
            assert_near(gaps[g].start - sh.first_sound, at, TOL_GAP);
            assert_near(gaps[g].len, pattern[i], TOL_GAP);
            g++;
        }
        at += pattern[i];
    }
    assert_near(sh.last_sound - sh.first_sound, span, tol_span);
}

/* ---- a callback-mode PortAudio player ---------------------------------- */

/* Read by PortAudio's callback thread; everything is set before the stream
 * starts, and the position is atomic for the main thread's report. */
struct player {
    const int16_t *pcm;
    size_t n;     /* content frames */
    size_t total; /* content + trailing silence */
    atomic_size_t pos;
};

static int play_cb(const void *in, void *out, unsigned long frames,
                   const PaStreamCallbackTimeInfo *ti, PaStreamCallbackFlags flags, void *arg)
{
    struct player *pl = arg;
    int16_t *o = out;
    size_t pos = atomic_load_explicit(&pl->pos, memory_order_relaxed);
    (void)in;
    (void)ti;
    (void)flags;
    for (unsigned long i = 0; i < frames; i++, pos++)
        o[i] = (int16_t)(pos < pl->n ? pl->pcm[pos] : 0);
    atomic_store_explicit(&pl->pos, pos, memory_order_release);
    return pos >= pl->total ? paComplete : paContinue;
}

struct played {
    double wall;    /* start to the end of Pa_StopStream, seconds */
    double granted; /* output latency PortAudio reports */
    size_t frames;  /* frames the callback produced */
};

/*
 * Plays pcm through the default output device (callback mode, mono s16,
 * LATENCY suggested), followed by silence: twice the granted latency plus
 * 0.2 s, so that the tail is not cut (a stream's last buffers are still in
 * the server when paComplete stops it).  Pa_Initialize and Pa_Terminate
 * around it, so that the environment set by the harness is read afresh.
 */
static void play(const int16_t *pcm, size_t n, struct played *out)
{
    struct player pl = {pcm, n, n, 0};
    PaStreamParameters par;
    PaStream *st = NULL;
    PaError e;
    double t0;
    memset(out, 0, sizeof(*out));
    tb_audio_quiet();
    e = Pa_Initialize();
    if (e != paNoError)
        fail_msg("Pa_Initialize: %s", Pa_GetErrorText(e));
    memset(&par, 0, sizeof(par));
    par.device = Pa_GetDefaultOutputDevice();
    if (par.device == paNoDevice) {
        Pa_Terminate();
        fail_msg("PortAudio has no default output device");
    }
    par.channelCount = 1;
    par.sampleFormat = paInt16;
    par.suggestedLatency = LATENCY;
    e = Pa_OpenStream(&st, NULL, &par, RATE, paFramesPerBufferUnspecified, paNoFlag, play_cb, &pl);
    if (e != paNoError) {
        Pa_Terminate();
        fail_msg("Pa_OpenStream: %s (%s)", Pa_GetErrorText(e),
                 Pa_GetLastHostErrorInfo()->errorText);
    }
    out->granted = Pa_GetStreamInfo(st)->outputLatency;
    pl.total = n + (size_t)lround((2 * out->granted + 0.2) * RATE);
    t0 = now();
    e = Pa_StartStream(st);
    if (e == paNoError) {
        while ((e = Pa_IsStreamActive(st)) == 1)
            Pa_Sleep(5);
        e = e < 0 ? e : Pa_StopStream(st);
    }
    out->wall = now() - t0;
    out->frames = atomic_load_explicit(&pl.pos, memory_order_acquire);
    Pa_CloseStream(st);
    Pa_Terminate();
    if (e != paNoError)
        fail_msg("PortAudio stream: %s", Pa_GetErrorText(e));
}

/* ---- analysis on known input ------------------------------------------- */

static void shape_finds_gaps(void **state)
{
    size_t n;
    int16_t *s = make_pattern(&n);
    struct tb_pcm pcm = {s, n, RATE};
    struct tb_pcm_gap gaps[1];
    struct tb_audio_shape sh;
    char err[128];
    (void)state;
    /* Exact to a sample on the generated pattern. */
    assert_pattern(&pcm, "generated");
    assert_int_equal(tb_pcm_shape(&pcm, THRESHOLD, MIN_GAP, gaps, 1, &sh, err, sizeof(err)), 0);
    assert_near(gaps[0].start, 0.5, 2.0 / RATE);
    assert_near(gaps[0].len, 0.3, 2.0 / RATE);
    assert_near(sh.silence, 0.45, 4.0 / RATE);
    assert_near(sh.duration, 1.65, 1.0 / RATE);
    /* Gaps shorter than min_len are not counted; a cap of 1 still counts 2. */
    assert_int_equal(sh.ngaps, 2);
    assert_int_equal(tb_pcm_shape(&pcm, THRESHOLD, 0.2, gaps, 1, &sh, err, sizeof(err)), 0);
    assert_int_equal(sh.ngaps, 1);
    /* A threshold above the tone's peak: nothing but silence. */
    assert_int_equal(tb_pcm_shape(&pcm, 9000, MIN_GAP, NULL, 0, &sh, err, sizeof(err)), 0);
    assert_true(sh.first_sound < 0 && sh.last_sound < 0);
    assert_int_equal(sh.ngaps, 0);
    /* A click inside the long silence splits it in two. */
    s[(size_t)(0.65 * RATE)] = 5000;
    assert_int_equal(tb_pcm_shape(&pcm, THRESHOLD, MIN_GAP, NULL, 0, &sh, err, sizeof(err)), 0);
    assert_int_equal(sh.ngaps, 3);
    /* Bad arguments. */
    assert_int_equal(tb_pcm_shape(&pcm, THRESHOLD, 0, NULL, 0, &sh, err, sizeof(err)), -1);
    assert_int_equal(tb_pcm_shape(&pcm, -1, MIN_GAP, NULL, 0, &sh, err, sizeof(err)), -1);
    assert_int_equal(tb_pcm_shape(&pcm, THRESHOLD, MIN_GAP, NULL, 3, &sh, err, sizeof(err)), -1);
    pcm.rate = 0;
    assert_int_equal(tb_pcm_shape(&pcm, THRESHOLD, MIN_GAP, NULL, 0, &sh, err, sizeof(err)), -1);
    free(s);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void load_rejects_bad_files(void **state)
{
    char dir[] = "/tmp/tb-wav.XXXXXX", path[64], err[256];
    /* A minimal 16-bit mono header with 4 data bytes, patched per case. */
    unsigned char wav[48] = {'R',  'I',  'F', 'F', 40,   0,    0, 0, 'W',  'A', 'V',  'E',
                             'f',  'm',  't', ' ', 16,   0,    0, 0, 1,    0,   1,    0,
                             0x22, 0x56, 0,   0,   0x44, 0xAC, 0, 0, 2,    0,   16,   0,
                             'd',  'a',  't', 'a', 4,    0,    0, 0, 0x10, 0,   0xF0, 0xFF};
    struct tb_pcm pcm;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/x.wav", dir);

    /* The good one: two frames, 16 and -16. */
    write_bytes(path, wav, sizeof(wav));
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), 0);
    assert_int_equal(pcm.n, 2);
    assert_int_equal(pcm.rate, 22050);
    assert_int_equal(pcm.s[0], 16);
    assert_int_equal(pcm.s[1], -16);
    tb_pcm_free(&pcm);
    /* A data size past the end (a writer killed early): to the end. */
    wav[40] = 200;
    write_bytes(path, wav, sizeof(wav));
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), 0);
    assert_int_equal(pcm.n, 2);
    tb_pcm_free(&pcm);
    wav[40] = 4;

    assert_int_equal(tb_pcm_load_wav("/nonexistent/x.wav", &pcm, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "No such file"));
    wav[34] = 8; /* 8-bit */
    write_bytes(path, wav, sizeof(wav));
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "8 bits"));
    wav[34] = 16;
    wav[20] = 3; /* IEEE float */
    write_bytes(path, wav, sizeof(wav));
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "format 3"));
    wav[20] = 1;
    wav[8] = 'X'; /* not WAVE */
    write_bytes(path, wav, sizeof(wav));
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a RIFF/WAVE"));
    wav[8] = 'W';
    write_bytes(path, wav, 30); /* cut inside fmt */
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "truncated fmt"));
    memcpy(wav + 12, "LIST", 4); /* no fmt: data comes first */
    write_bytes(path, wav, sizeof(wav));
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "data chunk before fmt"));
    memcpy(wav + 12, "fmt ", 4);
    memcpy(wav + 36, "junk", 4); /* no data chunk */
    write_bytes(path, wav, sizeof(wav));
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no data chunk"));
    /* Raw: a trailing odd byte is dropped; rate 0 is refused. */
    write_bytes(path, wav, 5);
    assert_int_equal(tb_pcm_load_raw(path, RATE, &pcm, err, sizeof(err)), 0);
    assert_int_equal(pcm.n, 2);
    tb_pcm_free(&pcm);
    assert_int_equal(tb_pcm_load_raw(path, 0, &pcm, err, sizeof(err)), -1);
    unlink(path);
    rmdir(dir);
}

/* sox makes the pattern; the loader and the analysis find it, and sox's
 * own stat agrees on the length. */
static void sox_made_pattern(void **state)
{
    char dir[] = "/tmp/tb-sox.XXXXXX", path[64], cmd[512], err[256];
    struct tb_pcm pcm;
    double len = 0, amp = 0;
    int rc;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/p.wav", dir);
    snprintf(cmd, sizeof(cmd),
             "sox -n -r %d -b 16 -c 1 %s synth 0.5 sine 440 vol 0.25 : synth 0.3 sine 440 vol 0 "
             ": synth 0.4 sine 440 vol 0.25 : synth 0.15 sine 440 vol 0 : synth 0.3 sine 440 "
             "vol 0.25 2>&1",
             RATE, path);
    rc = tb_audio_sox_stat("/dev/null", RATE, NULL, NULL, err, sizeof(err));
    if (rc == TB_AUDIO_UNAVAILABLE) {
        printf("  skipped: %s\n", err);
        rmdir(dir);
        skip();
    }
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tb_pcm_load_wav(path, &pcm, err, sizeof(err)), 0);
    assert_pattern(&pcm, "sox synth");
    assert_int_equal(tb_audio_sox_stat(path, 0, &len, &amp, err, sizeof(err)), 0);
    assert_near(len, (double)pcm.n / RATE, 1.0 / RATE);
    assert_near(amp, 0.25, 0.01);
    tb_pcm_free(&pcm);
    /* sox's own error comes back. */
    assert_int_equal(tb_audio_sox_stat("/nonexistent.wav", 0, &len, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "sox"));
    unlink(path);
    rmdir(dir);
}

/* ---- stderr noise -------------------------------------------------------- */

/* Pa_Initialize on audio/asoundrc-none with stderr in a file; returns what
 * was printed and whether a default output device was found. */
static char *init_stderr(const char *conf, int *has_device)
{
    char path[] = "/tmp/tb-stderr.XXXXXX";
    int fd = mkstemp(path), saved;
    PaError e;
    char *text;
    assert_true(fd >= 0);
    assert_int_equal(setenv("ALSA_CONFIG_PATH", conf, 1), 0);
    fflush(stderr);
    saved = dup(2);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    e = Pa_Initialize();
    *has_device = e == paNoError && Pa_GetDefaultOutputDevice() != paNoDevice;
    if (e == paNoError)
        Pa_Terminate();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    unsetenv("ALSA_CONFIG_PATH");
    assert_int_equal(e, paNoError);
    text = tb_test_slurp_str(path);
    unlink(path);
    return text;
}

/* With no usable device, PortAudio's probing makes ALSA-lib (and JACK, when
 * PortAudio has it) print; after tb_audio_quiet, nothing.  The noisy half
 * runs in a child, since the quiet hooks are process-wide and permanent:
 * this case must run before anything in this process installs them. */
static void quiet_silences_init(void **state)
{
    char conf[512], err[256];
    char *text;
    int has_device, status;
    pid_t pid;
    (void)state;
    if (tb_audio_conf("asoundrc-none", conf, sizeof(conf), err, sizeof(err)) != 0)
        fail_msg("%s", err);
    fflush(stdout);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The child: the noise, unsilenced, is in the file it reports. */
        text = init_stderr(conf, &has_device);
        _exit(strstr(text, "ALSA lib") != NULL && strstr(text, "tb_no_such_pcm") != NULL &&
                      !has_device
                  ? 0
                  : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("without tb_audio_quiet, Pa_Initialize on asoundrc-none should print ALSA "
                 "errors and find no device (was it already silenced in this process?)");
    assert_true(tb_audio_quiet() >= 1); /* at least ALSA's hook */
    text = init_stderr(conf, &has_device);
    assert_false(has_device);
    if (text[0] != '\0')
        fail_msg("stderr during Pa_Initialize after tb_audio_quiet: %s", text);
    free(text);
}

/* ---- real streams -------------------------------------------------------- */

/* What a stream case set up, released by its teardown even when an
 * assertion ends the case early (so the environment is always restored). */
static struct tb_audio_file *case_file;
static struct tb_audio_pulse *case_pulse, *case_pulse2;

static int release_env(void **state)
{
    (void)state;
    tb_audio_file_destroy(case_file);
    tb_audio_pulse_destroy(case_pulse2);
    tb_audio_pulse_destroy(case_pulse);
    case_file = NULL;
    case_pulse = case_pulse2 = NULL;
    return 0;
}

static void alsa_file_stream(void **state)
{
    struct tb_audio_file *f;
    struct tb_pcm pcm;
    struct played pl;
    char err[256];
    size_t n;
    int16_t *s = make_pattern(&n);
    double len = 0;
    (void)state;
    if (tb_audio_file_create(&case_file, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    f = case_file;
    play(s, n, &pl);
    if (tb_pcm_load_wav(tb_audio_file_wav(f), &pcm, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    printf("  alsa-file: %.3f s of audio played in %.3f s wall (latency granted %.3f s)\n",
           (double)pl.frames / RATE, pl.wall, pl.granted);
    assert_pattern(&pcm, "alsa-file");
    /* Nothing dropped: the file holds every frame the callback produced
     * (and at most PortAudio's priming silence besides). */
    assert_true(pcm.n >= pl.frames);
    assert_true(pcm.n <= pl.frames + (size_t)lround((pl.granted + 0.05) * RATE));
    if (tb_audio_sox_stat(tb_audio_file_wav(f), 0, &len, NULL, err, sizeof(err)) == 0)
        assert_near(len, (double)pcm.n / RATE, 1.0 / RATE);
    tb_pcm_free(&pcm);
    tb_audio_file_destroy(f);
    case_file = NULL;
    assert_null(getenv("TTSBUF_ALSA_WAV"));
    free(s);
}

static void pulse_stream(void **state)
{
    struct tb_audio_pulse *p;
    struct tb_pcm pcm;
    struct played pl;
    char err[512], capture[512];
    size_t n;
    int16_t *s;
    double len = 0, t0;
    int rc;
    (void)state;
    t0 = now();
    rc = tb_audio_pulse_start(&case_pulse, err, sizeof(err));
    if (rc == TB_AUDIO_UNAVAILABLE) {
        printf("  skipped: %s\n", err);
        skip();
    }
    if (rc != 0)
        fail_msg("%s", err);
    p = case_pulse;
    printf("  pulse: server up in %.3f s at %s\n", now() - t0, tb_audio_pulse_server(p));
    assert_pulse_server(tb_audio_pulse_server(p));
    s = make_pattern(&n);
    play(s, n, &pl);
    if (tb_audio_pulse_stop(p, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    if (tb_pcm_load_raw(tb_audio_pulse_capture(p), TB_AUDIO_CAPTURE_RATE, &pcm, err, sizeof(err)) !=
        0)
        fail_msg("%s", err);
    printf("  pulse: %.3f s of audio played in %.3f s wall (latency granted %.3f s)\n",
           (double)pl.frames / RATE, pl.wall, pl.granted);
    assert_pattern(&pcm, "pulse");
    /* Paced by the sink's clock: the stream cannot end before its audio
     * has been played (a lower bound only; a loaded machine is slower). */
    assert_true(pl.wall >= pattern_len());
    if (tb_audio_sox_stat(tb_audio_pulse_capture(p), TB_AUDIO_CAPTURE_RATE, &len, NULL, err,
                          sizeof(err)) == 0)
        assert_near(len, (double)pcm.n / TB_AUDIO_CAPTURE_RATE, 1.0 / TB_AUDIO_CAPTURE_RATE);
    tb_pcm_free(&pcm);
    snprintf(capture, sizeof(capture), "%s", tb_audio_pulse_capture(p));
    tb_audio_pulse_destroy(p);
    case_pulse = NULL;
    /* Cleaned up: the capture is gone and the environment restored. */
    assert_int_equal(access(capture, F_OK), -1);
    assert_null(getenv("PULSE_SERVER"));
    free(s);
}

/* Two servers at once, each on its own socket, both torn down. */
static void pulse_private_sockets(void **state)
{
    struct tb_audio_pulse *a, *b;
    char err[512];
    int rc;
    (void)state;
    rc = tb_audio_pulse_start(&case_pulse, err, sizeof(err));
    if (rc == TB_AUDIO_UNAVAILABLE) {
        printf("  skipped: %s\n", err);
        skip();
    }
    if (rc != 0)
        fail_msg("%s", err);
    a = case_pulse;
    if (tb_audio_pulse_start(&case_pulse2, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    b = case_pulse2;
    assert_string_not_equal(tb_audio_pulse_server(a), tb_audio_pulse_server(b));
    assert_pulse_server(tb_audio_pulse_server(b));
    tb_audio_pulse_destroy(b);
    case_pulse2 = NULL;
    /* Restored to a's value, then to unset. */
    assert_pulse_server(tb_audio_pulse_server(a));
    tb_audio_pulse_destroy(a);
    case_pulse = NULL;
    assert_null(getenv("PULSE_SERVER"));
    tb_audio_pulse_destroy(NULL);
    tb_audio_file_destroy(NULL);
}

/* A missing configuration is a clear error, not a hang or a crash. */
static void missing_config(void **state)
{
    struct tb_audio_pulse *p = NULL;
    struct tb_audio_file *f = NULL;
    char err[512];
    const char *old = getenv("TB_AUDIODIR");
    char *keep = old != NULL ? strdup(old) : NULL;
    int rc1, rc2;
    (void)state;
    setenv("TB_AUDIODIR", "/nonexistent-audio-dir", 1);
    rc1 = tb_audio_file_create(&f, err, sizeof(err));
    rc2 = tb_audio_pulse_start(&p, err, sizeof(err));
    if (keep != NULL)
        setenv("TB_AUDIODIR", keep, 1);
    else
        unsetenv("TB_AUDIODIR");
    free(keep);
    assert_int_equal(rc1, -1);
    assert_null(f);
    assert_true(rc2 == -1 || rc2 == TB_AUDIO_UNAVAILABLE);
    assert_null(p);
    assert_non_null(strstr(err, rc2 == -1 ? "TB_AUDIODIR" : "not installed"));
}

int tb_test_audioenv(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shape_finds_gaps),
        cmocka_unit_test(load_rejects_bad_files),
        cmocka_unit_test(sox_made_pattern),
        cmocka_unit_test(quiet_silences_init),
        cmocka_unit_test_teardown(alsa_file_stream, release_env),
        cmocka_unit_test_teardown(pulse_stream, release_env),
        cmocka_unit_test_teardown(pulse_private_sockets, release_env),
        cmocka_unit_test(missing_config),
    };
    return TB_RUN_GROUP("audioenv", tests);
}
