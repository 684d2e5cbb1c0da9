/*
 * test_player.c - the PCM ring and audio-clock accounting (pcmring.h), the
 * timed playout (tb_playout_add_timed) and the eSpeak NG engine (tts.h).
 *
 * Player cases drive tb_pcmring_pull by hand, so every frame count is
 * exact: pre-roll, dry spells and their positions, the thresholds, the
 * cues, the tail, wrap-around and a full ring.  The two-thread case
 * streams 20 M frames with a checksum through the ring (make tsan).
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/pcmring.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/tts.h"

#define RATE 1000 /* 1 frame = 1 ms: thresholds are whole frames */

static struct tb_pcmring *mk(size_t cap, double preroll, enum tb_pcmring_cue cue)
{
    struct tb_pcmring_opts o = {RATE, cap, preroll, cue, 0};
    struct tb_pcmring *p = NULL;
    assert_int_equal(tb_pcmring_create(&o, &p), 0);
    return p;
}

static void fill(int16_t *v, size_t n, int16_t x)
{
    for (size_t i = 0; i < n; i++)
        v[i] = x;
}

static void player_bad_options(void **state)
{
    struct tb_pcmring_opts o = {0, 1024, 0, TB_PCMRING_CUE_NONE, 0};
    struct tb_pcmring *p = NULL;
    enum tb_pcmring_cue c;
    (void)state;
    assert_int_equal(tb_pcmring_create(&o, &p), TB_EINVAL); /* rate 0 */
    o.rate = RATE;
    o.preroll = -1;
    assert_int_equal(tb_pcmring_create(&o, &p), TB_EINVAL);
    o.preroll = NAN;
    assert_int_equal(tb_pcmring_create(&o, &p), TB_EINVAL);
    o.preroll = 0;
    o.capacity = ((size_t)1 << 28) + 1;
    assert_int_equal(tb_pcmring_create(&o, &p), TB_EINVAL);
    assert_null(p);
    tb_pcmring_destroy(NULL);
    assert_int_equal(tb_pcmring_cue_parse("tick", &c), 0);
    assert_int_equal(c, TB_PCMRING_CUE_TICK);
    assert_int_equal(tb_pcmring_cue_parse("tone", &c), 0);
    assert_int_equal(tb_pcmring_cue_parse("none", &c), 0);
    assert_int_equal(tb_pcmring_cue_parse("beep", &c), TB_EINVAL);
    assert_string_equal(tb_pcmring_cue_name(TB_PCMRING_CUE_TONE), "tone");
}

/* Pre-roll: silence (not counted) until 300 frames are queued. */
static void player_preroll(void **state)
{
    struct tb_pcmring *p = mk(4096, 0.3, TB_PCMRING_CUE_NONE);
    struct tb_pcmring_stats st;
    int16_t in[400], out[1000];
    (void)state;
    fill(in, 400, 7);
    tb_pcmring_pull(p, out, 100); /* nothing queued */
    assert_int_equal(tb_pcmring_write(p, in, 200), 200);
    tb_pcmring_pull(p, out, 100); /* 200 < 300: still waiting */
    assert_int_equal(out[0], 0);
    assert_int_equal(out[99], 0);
    assert_int_equal(tb_pcmring_write(p, in, 100), 100);
    tb_pcmring_pull(p, out, 500); /* starts at frame 200, plays 300, then dry */
    assert_int_equal(out[0], 7);
    assert_int_equal(out[299], 7);
    assert_int_equal(out[300], 0);
    tb_pcmring_stats(p, &st);
    assert_int_equal(st.first_audio, 200);
    assert_int_equal(st.played, 300);
    assert_int_equal(st.concealed, 200);
    assert_int_equal(st.underruns, 0); /* still dry: counted when audio resumes */
    assert_int_equal(st.done, 0);
    tb_pcmring_destroy(p);
}

/* Dry spells: 1 frame (not an underrun), 2 frames (one), 150 (an
 * interruption), each recorded at its frame. */
static void player_gaps(void **state)
{
    struct tb_pcmring *p = mk(4096, 0, TB_PCMRING_CUE_NONE);
    struct tb_pcmring_stats st;
    struct tb_audio_gap g[8];
    int16_t in[100], out[400];
    (void)state;
    fill(in, 100, 1);
    tb_pcmring_write(p, in, 10);
    tb_pcmring_pull(p, out, 11); /* 10 played, 1 dry */
    tb_pcmring_write(p, in, 10);
    tb_pcmring_pull(p, out, 12); /* 10 played, 2 dry */
    tb_pcmring_write(p, in, 10);
    tb_pcmring_pull(p, out, 160); /* 10 played, 150 dry */
    tb_pcmring_write(p, in, 10);
    tb_pcmring_end(p);
    tb_pcmring_pull(p, out, 100); /* 10 played, then the tail: not a gap */
    tb_pcmring_stats(p, &st);
    assert_int_equal(st.concealment_events, 3);
    assert_int_equal(st.underruns, 2);
    assert_int_equal(st.interruptions, 1);
    assert_int_equal(st.concealed, 153);
    assert_int_equal(st.gap_max, 150);
    assert_int_equal(st.played, 40);
    assert_int_equal(st.end_audio, 10 + 1 + 10 + 2 + 10 + 150 + 10);
    assert_int_equal(st.done, 1);
    assert_true(tb_pcmring_done(p));
    assert_int_equal(tb_pcmring_gaps(p, g, 8), 3);
    assert_int_equal(g[0].at, 10);
    assert_int_equal(g[0].frames, 1);
    assert_int_equal(g[1].at, 21);
    assert_int_equal(g[1].frames, 2);
    assert_int_equal(g[2].at, 33);
    assert_int_equal(g[2].frames, 150);
    tb_pcmring_destroy(p);
}

/* A dry spell spread over several pulls is one gap; max_gaps bounds the
 * records, not the counts. */
static void player_gap_records_bounded(void **state)
{
    struct tb_pcmring_opts o = {RATE, 1024, 0, TB_PCMRING_CUE_NONE, 2};
    struct tb_pcmring *p = NULL;
    struct tb_pcmring_stats st;
    struct tb_audio_gap g[4];
    int16_t in[8] = {1, 1, 1, 1, 1, 1, 1, 1}, out[64];
    (void)state;
    assert_int_equal(tb_pcmring_create(&o, &p), 0);
    for (int i = 0; i < 5; i++) {
        tb_pcmring_write(p, in, 4);
        tb_pcmring_pull(p, out, 10);
        tb_pcmring_pull(p, out, 10);
    }
    tb_pcmring_write(p, in, 4);
    tb_pcmring_pull(p, out, 4);
    tb_pcmring_stats(p, &st);
    assert_int_equal(st.concealment_events, 5);
    assert_int_equal(st.underruns, 5);
    assert_int_equal(st.gaps_dropped, 3);
    assert_int_equal(tb_pcmring_gaps(p, g, 4), 2);
    assert_int_equal(g[0].frames, 16);
    assert_int_equal(g[1].at, 20 + 4);
    tb_pcmring_destroy(p);
}

/* The tick sounds once at the start of a spell; the tone fills it. */
static void player_cues(void **state)
{
    int16_t in[10], out[2000];
    struct tb_pcmring_opts o = {22050, 1024, 0, TB_PCMRING_CUE_TICK, 0};
    struct tb_pcmring *p = NULL;
    int peak = 0, late = 0;
    (void)state;
    fill(in, 10, 100);
    assert_int_equal(tb_pcmring_create(&o, &p), 0);
    tb_pcmring_write(p, in, 10);
    tb_pcmring_pull(p, out, 2000);
    for (int i = 10; i < 10 + 264; i++)
        peak = abs(out[i]) > peak ? abs(out[i]) : peak;
    for (int i = 10 + 265; i < 2000; i++)
        late |= out[i];
    assert_in_range(peak, 4000, 8300); /* about -12 dBFS */
    assert_int_equal(late, 0);         /* a tick, then silence */
    tb_pcmring_destroy(p);

    o.cue = TB_PCMRING_CUE_TONE;
    assert_int_equal(tb_pcmring_create(&o, &p), 0);
    tb_pcmring_write(p, in, 10);
    tb_pcmring_pull(p, out, 2000);
    peak = 0;
    for (int i = 1500; i < 2000; i++)
        peak = abs(out[i]) > peak ? abs(out[i]) : peak;
    assert_in_range(peak, 2000, 2700); /* about -22 dBFS, all along */
    tb_pcmring_destroy(p);
}

/* Full ring: writes stop (backpressure), and playback starts even short
 * of the pre-roll, counted as forced. */
static void player_full_ring(void **state)
{
    struct tb_pcmring *p = mk(1024, 10.0, TB_PCMRING_CUE_NONE);
    struct tb_pcmring_stats st;
    int16_t in[1500], out[1500];
    (void)state;
    for (int i = 0; i < 1500; i++)
        in[i] = (int16_t)i;
    assert_int_equal(tb_pcmring_space(p), 1024);
    assert_int_equal(tb_pcmring_write(p, in, 1500), 1024);
    assert_int_equal(tb_pcmring_space(p), 0);
    tb_pcmring_pull(p, out, 1000);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[999], 999);
    assert_int_equal(tb_pcmring_write(p, in + 1024, 476), 476); /* wraps */
    tb_pcmring_end(p);
    tb_pcmring_pull(p, out, 500);
    for (int i = 0; i < 500; i++)
        assert_int_equal(out[i], 1000 + i);
    tb_pcmring_stats(p, &st);
    assert_true(st.forced_start);
    assert_int_equal(st.high_water, 1024);
    assert_int_equal(st.concealed, 0);
    tb_pcmring_pull(p, out, 10);
    assert_true(tb_pcmring_done(p));
    tb_pcmring_destroy(p);
}

/* Ended with nothing queued: done at once, no audio, no gap. */
static void player_empty_stream(void **state)
{
    struct tb_pcmring *p = mk(1024, 0.5, TB_PCMRING_CUE_TICK);
    struct tb_pcmring_stats st;
    int16_t out[100];
    (void)state;
    tb_pcmring_end(p);
    tb_pcmring_pull(p, out, 100);
    tb_pcmring_stats(p, &st);
    assert_true(st.done);
    assert_int_equal(st.first_audio, UINT64_MAX);
    assert_int_equal(st.concealment_events, 0);
    tb_pcmring_destroy(p);
}

/* Two threads: a writer of 20 M frames (a counter) and a reader pulling
 * odd-sized blocks; every speech frame arrives once, in order. */
struct xfer {
    struct tb_pcmring *p;
    uint64_t n;
    uint64_t bad, got;
};

static void *writer(void *arg)
{
    struct xfer *x = arg;
    int16_t buf[777];
    uint64_t i = 0;
    while (i < x->n) {
        size_t k = sizeof(buf) / sizeof(buf[0]);
        if (k > x->n - i)
            k = (size_t)(x->n - i);
        for (size_t j = 0; j < k; j++)
            buf[j] = (int16_t)((i + j) % 30000 + 1);
        size_t off = 0;
        while (off < k) {
            size_t w = tb_pcmring_write(x->p, buf + off, k - off);
            off += w;
            if (w == 0)
                sched_yield();
        }
        i += k;
    }
    tb_pcmring_end(x->p);
    return NULL;
}

static void player_two_threads(void **state)
{
    struct xfer x = {mk(4096, 0, TB_PCMRING_CUE_NONE), 20000000, 0, 0};
    pthread_t th;
    int16_t out[513];
    uint64_t expect = 0;
    (void)state;
    assert_int_equal(pthread_create(&th, NULL, writer, &x), 0);
    while (!tb_pcmring_done(x.p)) {
        tb_pcmring_pull(x.p, out, 513);
        for (int i = 0; i < 513; i++) {
            if (out[i] == 0)
                continue; /* concealment or pre-start */
            if (out[i] != (int16_t)(expect % 30000 + 1) && x.bad == 0)
                x.bad = expect + 1;
            expect++;
        }
    }
    pthread_join(th, NULL);
    assert_int_equal(x.bad, 0);
    assert_int_equal(expect, x.n);
    tb_pcmring_destroy(x.p);
}

/* Timed playout: the maths of playout.h with given durations. */
static void playout_timed(void **state)
{
    struct tb_playout_opts o = {.wpm = 150, .tts_latency = 0.1, .preroll = 1.0, .rebuffer = 0};
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    (void)state;
    assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
    /* chunk 1: 0.6 s, closes at 1.0; chunk 2: 0.5 s at 1.2 -> S = 1.1 >= 1
     * starts at 1.3; plays to 2.4; chunk 3 ready at 3.0: a 0.6 s gap. */
    assert_int_equal(tb_playout_add_timed(p, 1.0, 0, 10, 0.6), 0);
    assert_int_equal(tb_playout_add_timed(p, 1.2, 5, 10, 0.5), 0);
    assert_int_equal(tb_playout_add_timed(p, 2.9, 9, 10, 0.25), 0);
    assert_int_equal(tb_playout_add_timed(p, 2.9, 9, 10, -1), TB_EINVAL);
    assert_int_equal(tb_playout_add_timed(p, 2.9, 9, 10, NAN), TB_EINVAL);
    tb_playout_finish(p);
    tb_playout_result(p, &r);
    assert_int_equal(r.q, 2);
    assert_float_equal(r.ttfa, 1.3, 1e-12);
    assert_float_equal(r.speech, 1.35, 1e-12);
    assert_int_equal(r.underruns, 1);
    assert_float_equal(r.gap_total, 3.0 - 2.4, 1e-12);
    assert_float_equal(r.end, 3.25, 1e-12);
    /* min TPS: (9 - 5) / S_2 = 4 / 1.1 */
    assert_float_equal(r.min_tps, 4.0 / 1.1, 1e-12);
    tb_playout_destroy(p);
}

/* eSpeak NG: one engine per process, its range, its output. */
static void tts_engine(void **state)
{
    struct tb_tts_opts o = {NULL, 150};
    struct tb_tts *t = NULL, *t2 = NULL;
    const int16_t *pcm;
    size_t n, n2;
    char err[256];
    char *big;
    (void)state;
    o.wpm = 79;
    assert_int_equal(tb_tts_create(&o, &t, err, sizeof(err)), TB_ERANGE);
    assert_non_null(strstr(err, "80 to 900"));
    o.wpm = 150;
    o.voice = "no-such-voice";
    assert_int_equal(tb_tts_create(&o, &t, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "no-such-voice"));
    o.voice = NULL;
    assert_int_equal(tb_tts_create(&o, &t, err, sizeof(err)), 0);
    assert_int_equal(tb_tts_create(&o, &t2, err, sizeof(err)), TB_EBUSY);
    assert_int_equal(tb_tts_rate(t), 22050);
    assert_int_equal(tb_tts_synth(t, "Hello there.", 12, &pcm, &n), 0);
    /* about 0.8 s at 150 wpm */
    assert_in_range(n, 22050 * 6 / 10, 22050);
    /* not NUL-terminated input: only len bytes are spoken */
    assert_int_equal(tb_tts_synth(t, "Hello there. And a lot more text here", 12, &pcm, &n2), 0);
    assert_in_range(n2, n - n / 100, n + n / 100); /* eSpeak varies by a few samples */
    assert_int_equal(tb_tts_synth(t, "   ", 3, &pcm, &n), 0);
    assert_in_range(n, 0, 22050 / 2);
    big = malloc(TB_TTS_TEXT_MAX + 1);
    assert_non_null(big);
    assert_int_equal(tb_tts_synth(t, big, TB_TTS_TEXT_MAX + 1, &pcm, &n), TB_ETOOBIG);
    free(big);
    tb_tts_destroy(t);
    /* a new engine after the old one is gone, at another rate */
    o.wpm = 300;
    assert_int_equal(tb_tts_create(&o, &t, err, sizeof(err)), 0);
    assert_int_equal(tb_tts_synth(t, "Hello there.", 12, &pcm, &n2), 0);
    assert_true(n2 < 22050 * 6 / 10);
    tb_tts_destroy(t);
}

int tb_test_player(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(player_bad_options),  cmocka_unit_test(player_preroll),
        cmocka_unit_test(player_gaps),         cmocka_unit_test(player_gap_records_bounded),
        cmocka_unit_test(player_cues),         cmocka_unit_test(player_full_ring),
        cmocka_unit_test(player_empty_stream), cmocka_unit_test(player_two_threads),
        cmocka_unit_test(playout_timed),       cmocka_unit_test(tts_engine),
    };
    return TB_RUN_GROUP("player", tests);
}
