/*
 * test_playout.c - the v1 playout model on schedules worked out by hand,
 * and tb_analyze_* (segment a stream, then evaluate playout over it).
 *
 * Most cases use 100 wpm, where a code point lasts exactly 0.1 s, so every
 * expected time below is simple decimal arithmetic (compared to 1e-9).
 * The threshold cases need exact binary arithmetic instead: they use
 * speech rates whose durations are powers of two and assert that the gap
 * the engine sees is exactly the threshold before testing it.
 */
#include <math.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/stream.h"

#define TOL 1e-9
#define MAX_PLAYS 32

/* Every schedule the engine reports, in order. */
struct plays {
    struct tb_play v[MAX_PLAYS];
    size_t n;
};

static void on_play(void *ud, const struct tb_play *p)
{
    struct plays *x = ud;
    if (x->n == MAX_PLAYS)
        fail_msg("more than %d schedules", MAX_PLAYS);
    x->v[x->n++] = *p;
}

static struct tb_playout *make(double wpm, double latency, double preroll, struct plays *x)
{
    struct tb_playout_opts o = {
        .wpm = wpm, .tts_latency = latency, .preroll = preroll, .rebuffer = 0};
    struct tb_playout *p = NULL;
    if (x != NULL)
        x->n = 0;
    assert_int_equal(tb_playout_create(&o, x != NULL ? on_play : NULL, x, &p), 0);
    assert_non_null(p);
    return p;
}

static void add(struct tb_playout *p, double c, uint64_t tok, uint32_t cps)
{
    assert_int_equal(tb_playout_add(p, c, tok, cps), 0);
}

/* Asserts report i is chunk j (1-based) with these times. */
static void assert_play(const struct plays *x, size_t i, uint32_t chunk, uint32_t cps, double ready,
                        double start, double end, double gap)
{
    const struct tb_play *p;
    if (i >= x->n)
        fail_msg("schedule %zu missing (%zu reported)", i, x->n);
    p = &x->v[i];
    assert_int_equal(p->chunk, chunk);
    assert_int_equal(p->cps, cps);
    assert_near(p->ready, ready, TOL);
    assert_near(p->start, start, TOL);
    assert_near(p->end, end, TOL);
    assert_near(p->gap, gap, TOL);
}

static void opts_default_values(void **state)
{
    struct tb_playout_opts o;
    (void)state;
    memset(&o, 0xff, sizeof(o));
    tb_playout_opts_default(&o);
    assert_true(o.wpm == 150.0);
    assert_true(o.tts_latency == 0.0);
    assert_true(o.preroll == 0.0);
}

static void create_rejects_bad_options(void **state)
{
    static const struct tb_playout_opts bad[] = {
        {.wpm = 0.0, .tts_latency = 0.0, .preroll = 0.0, .rebuffer = 0},
        {.wpm = -150.0, .tts_latency = 0.0, .preroll = 0.0, .rebuffer = 0},
        {.wpm = NAN, .tts_latency = 0.0, .preroll = 0.0, .rebuffer = 0},
        {.wpm = 150.0, .tts_latency = -0.001, .preroll = 0.0, .rebuffer = 0},
        {.wpm = 150.0, .tts_latency = NAN, .preroll = 0.0, .rebuffer = 0},
        {.wpm = 150.0, .tts_latency = 0.0, .preroll = -1.0, .rebuffer = 0},
        {.wpm = 150.0, .tts_latency = 0.0, .preroll = NAN, .rebuffer = 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tb_playout *p = (struct tb_playout *)&p; /* must become NULL */
        if (tb_playout_create(&bad[i], NULL, NULL, &p) != TB_EINVAL)
            fail_msg("bad options %zu accepted", i);
        assert_null(p);
    }
    tb_playout_destroy(NULL); /* a no-op */
}

/* Every chunk is ready before the previous one ends: no gap at all. */
static void no_gap_schedule(void **state)
{
    struct plays x;
    struct tb_playout *p = make(100, 0, 0, &x);
    struct tb_playout_result r;
    (void)state;
    add(p, 1.0, 0, 10);  /* plays 1.0 .. 2.0 */
    add(p, 1.5, 5, 5);   /* ready 1.5, waits for 2.0, plays to 2.5 */
    add(p, 2.2, 12, 10); /* ready 2.2, plays 2.5 .. 3.5 */
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(r.chunks, 3);
    assert_int_equal(r.q, 1);
    assert_near(r.ttfa, 1.0, TOL);
    assert_near(r.speech, 2.5, TOL);
    assert_near(r.end, 3.5, TOL);
    assert_int_equal(r.underruns, 0);
    assert_int_equal(r.interruptions, 0);
    assert_near(r.gap_total, 0, TOL);
    assert_near(r.gap_max, 0, TOL);
    /* j=2: 5/1.0 and 0.5/1.0; j=3: 12/1.5 and 1.2/1.5. */
    assert_near(r.min_tps, 8.0, TOL);
    assert_near(r.speedup, 0.8, TOL);
    assert_int_equal(x.n, 3);
    assert_play(&x, 0, 1, 10, 1.0, 1.0, 2.0, 0);
    assert_play(&x, 1, 2, 5, 1.5, 2.0, 2.5, 0);
    assert_play(&x, 2, 3, 10, 2.2, 2.5, 3.5, 0);
    tb_playout_destroy(p);
}

/* Chunk 2 is ready 0.3 s after chunk 1 ends: one underrun, g_2 = 0.3. */
static void one_underrun_exact_gap(void **state)
{
    struct plays x;
    struct tb_playout *p = make(100, 0, 0, &x);
    struct tb_playout_result r;
    (void)state;
    add(p, 0.5, 0, 5); /* 0.5 .. 1.0 */
    add(p, 1.3, 4, 3); /* ready 1.3: gap 0.3, plays 1.3 .. 1.6 */
    add(p, 1.4, 6, 2); /* ready 1.4, plays 1.6 .. 1.8 */
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(r.underruns, 1);
    assert_int_equal(r.interruptions, 1);
    assert_near(r.gap_total, 0.3, TOL);
    assert_near(r.gap_max, 0.3, TOL);
    assert_near(r.end, 1.8, TOL);
    assert_near(r.speech, 1.0, TOL);
    /* j=2: 4/0.5 = 8, 0.8/0.5 = 1.6; j=3: 6/0.8 = 7.5, 0.9/0.8 = 1.125. */
    assert_near(r.min_tps, 8.0, TOL);
    assert_near(r.speedup, 1.6, TOL);
    assert_play(&x, 0, 1, 5, 0.5, 0.5, 1.0, 0);
    assert_play(&x, 1, 2, 3, 1.3, 1.3, 1.6, 0.3);
    assert_play(&x, 2, 3, 2, 1.4, 1.6, 1.8, 0);
    tb_playout_destroy(p);
}

/*
 * Two chunks of one code point; the second is ready g seconds after the
 * first ends.  At 160 wpm a code point lasts 0.0625 s (a power of two), so
 * for the gaps used with exact = 1, c = 0.0625 + g is exact and the engine
 * sees a gap of exactly g.  Fills *r; *seen is the gap reported to the
 * callback for chunk 2.
 */
static void gap_after_one_chunk(double wpm, double g, int exact, struct tb_playout_result *r,
                                double *seen)
{
    struct plays x;
    struct tb_playout *p = make(wpm, 0, 0, &x);
    double d = 10.0 / wpm, c = d + g;
    /* The premise of a threshold test: the arithmetic is exact. */
    if (exact && c - d != g)
        fail_msg("inexact gap: %.17g != %.17g", c - d, g);
    add(p, 0.0, 0, 1);
    add(p, c, 1, 1);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, r);
    assert_int_equal(x.n, 2);
    assert_near(x.v[1].start, c, 0); /* playback waits either way */
    *seen = x.v[1].gap;
    tb_playout_destroy(p);
}

static void interruption_threshold(void **state)
{
    struct tb_playout_result r;
    double seen;
    (void)state;
    /* Exactly 150 ms is an interruption. */
    gap_after_one_chunk(160, TB_INTERRUPT_S, 1, &r, &seen);
    assert_true(seen == TB_INTERRUPT_S);
    assert_int_equal(r.underruns, 1);
    assert_int_equal(r.interruptions, 1);
    assert_true(r.gap_max == TB_INTERRUPT_S);
    /* The largest double below it is not. */
    gap_after_one_chunk(160, nextafter(TB_INTERRUPT_S, 0), 1, &r, &seen);
    assert_int_equal(r.underruns, 1);
    assert_int_equal(r.interruptions, 0);
    /* Nor is 149 ms, which is still an underrun. */
    gap_after_one_chunk(160, 0.149, 1, &r, &seen);
    assert_int_equal(r.underruns, 1);
    assert_int_equal(r.interruptions, 0);
    assert_near(r.gap_total, 0.149, 1e-15);
}

static void underrun_threshold(void **state)
{
    struct tb_playout_result r;
    double seen;
    (void)state;
    /* 1 ms is exact only next to small times: at 20480 wpm a code point
     * lasts 2^-11 s.  A gap of exactly 1 ms is not an underrun. */
    gap_after_one_chunk(20480, TB_GAP_MIN_S, 1, &r, &seen);
    assert_int_equal(r.underruns, 0);
    assert_true(seen == 0.0);
    assert_true(r.gap_total == 0.0);
    /* Anything longer is. */
    gap_after_one_chunk(20480, nextafter(TB_GAP_MIN_S, 1), 1, &r, &seen);
    assert_int_equal(r.underruns, 1);
    assert_int_equal(r.interruptions, 0);
    assert_true(seen > TB_GAP_MIN_S);
    /* And at ordinary rates, 0.9 ms is not counted, 1.1 ms is. */
    gap_after_one_chunk(160, 0.0009, 0, &r, &seen);
    assert_int_equal(r.underruns, 0);
    gap_after_one_chunk(160, 0.0011, 0, &r, &seen);
    assert_int_equal(r.underruns, 1);
    assert_near(seen, 0.0011, 1e-12);
}

/* TTS latency delays every ready time and s_1 alike: the schedule moves
 * by L, and gaps and rates are unchanged. */
static void latency_shifts_schedule(void **state)
{
    struct plays x;
    struct tb_playout *p = make(100, 0.2, 0, &x);
    struct tb_playout_result r;
    (void)state;
    add(p, 0.5, 0, 5);
    add(p, 1.3, 4, 3);
    add(p, 1.4, 6, 2);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_near(r.ttfa, 0.7, TOL);
    assert_near(r.end, 2.0, TOL);
    assert_int_equal(r.underruns, 1);
    assert_near(r.gap_max, 0.3, TOL);
    assert_near(r.min_tps, 8.0, TOL);
    assert_near(r.speedup, 1.6, TOL);
    assert_play(&x, 0, 1, 5, 0.7, 0.7, 1.2, 0);
    assert_play(&x, 1, 2, 3, 1.5, 1.5, 1.8, 0.3);
    assert_play(&x, 2, 3, 2, 1.6, 1.8, 2.0, 0);
    tb_playout_destroy(p);
}

/*
 * Pre-roll 0.5 s: S reaches 0.2, 0.4, 0.7, so q = 3 and s_1 = c_3.  The
 * first three chunks are reported together when playback starts.
 */
static void preroll_selects_q(void **state)
{
    struct plays x;
    struct tb_playout *p = make(100, 0, 0.5, &x);
    struct tb_playout_result r;
    double s1 = -1;
    (void)state;
    add(p, 1.0, 0, 2);
    add(p, 1.2, 3, 2);
    assert_int_equal(tb_playout_started(p, &s1), 0);
    assert_true(tb_playout_end(p) == 0.0);
    assert_int_equal(x.n, 0);
    add(p, 1.5, 6, 3);
    assert_int_equal(tb_playout_started(p, &s1), 1);
    assert_near(s1, 1.5, TOL);
    assert_near(tb_playout_end(p), 2.2, TOL);
    assert_int_equal(x.n, 3);
    assert_play(&x, 0, 1, 2, 1.0, 1.5, 1.7, 0);
    assert_play(&x, 1, 2, 2, 1.2, 1.7, 1.9, 0);
    assert_play(&x, 2, 3, 3, 1.5, 1.9, 2.2, 0);
    add(p, 2.5, 10, 1); /* ready 2.5, 0.3 after 2.2 */
    assert_int_equal(x.n, 4);
    assert_play(&x, 3, 4, 1, 2.5, 2.5, 2.6, 0.3);
    assert_int_equal(tb_playout_finish(p), 0);
    assert_int_equal(x.n, 4);
    tb_playout_result(p, &r);
    assert_int_equal(r.q, 3);
    assert_near(r.ttfa, 1.5, TOL);
    /* Only j = 4 > q: (10 - 6) / 0.7 and (2.5 - 1.5) / 0.7. */
    assert_near(r.min_tps, 4.0 / 0.7, TOL);
    assert_near(r.speedup, 1.0 / 0.7, TOL);
    assert_int_equal(r.underruns, 1);
    assert_int_equal(r.interruptions, 1);
    tb_playout_destroy(p);
}

/* S_q >= P: a pre-roll equal to the speech so far starts playback. */
static void preroll_boundary(void **state)
{
    struct tb_playout *p;
    (void)state;
    p = make(100, 0, 0.4, NULL);
    add(p, 1.0, 0, 4); /* S_1 = 0.4 = P */
    assert_int_equal(tb_playout_started(p, NULL), 1);
    tb_playout_destroy(p);

    p = make(100, 0, 0.4, NULL);
    add(p, 1.0, 0, 3);
    assert_int_equal(tb_playout_started(p, NULL), 0);
    add(p, 1.1, 1, 1);
    assert_int_equal(tb_playout_started(p, NULL), 1);
    tb_playout_destroy(p);

    p = make(100, 0, 0.41, NULL);
    add(p, 1.0, 0, 4);
    assert_int_equal(tb_playout_started(p, NULL), 0);
    tb_playout_destroy(p);
}

/* Pre-roll never reached: finish starts playback at the last chunk. */
static void preroll_never_reached(void **state)
{
    struct plays x;
    struct tb_playout *p = make(100, 0.1, 10.0, &x);
    struct tb_playout_result r;
    (void)state;
    add(p, 1.0, 0, 2);
    add(p, 1.4, 5, 3);
    assert_int_equal(tb_playout_started(p, NULL), 0);
    assert_int_equal(x.n, 0);
    assert_int_equal(tb_playout_finish(p), 0);
    assert_int_equal(tb_playout_finish(p), 0); /* a second finish: no-op */
    tb_playout_result(p, &r);
    assert_int_equal(r.chunks, 2);
    assert_int_equal(r.q, 2);
    assert_near(r.ttfa, 1.5, TOL); /* c_2 + L */
    assert_near(r.speech, 0.5, TOL);
    assert_near(r.end, 2.0, TOL);
    assert_int_equal(r.underruns, 0);
    assert_true(r.min_tps == 0.0); /* no j > q */
    assert_true(r.speedup == 0.0);
    assert_int_equal(x.n, 2);
    assert_play(&x, 0, 1, 2, 1.1, 1.5, 1.7, 0);
    assert_play(&x, 1, 2, 3, 1.5, 1.7, 2.0, 0);
    tb_playout_destroy(p);
}

static void no_chunks(void **state)
{
    struct plays x;
    struct tb_playout *p = make(150, 0.5, 1.0, &x);
    struct tb_playout_result r;
    double s1 = -1;
    (void)state;
    assert_int_equal(tb_playout_finish(p), 0);
    assert_int_equal(tb_playout_started(p, &s1), 0);
    assert_true(tb_playout_end(p) == 0.0);
    tb_playout_result(p, &r);
    assert_int_equal(r.chunks, 0);
    assert_int_equal(r.q, 0);
    assert_true(r.ttfa == 0.0);
    assert_true(r.speech == 0.0);
    assert_true(r.end == 0.0);
    assert_int_equal(r.underruns, 0);
    assert_true(r.min_tps == 0.0);
    assert_int_equal(x.n, 0);
    tb_playout_destroy(p);
}

/*
 * min TPS and speed-up with q = 2, latency, several underruns, and the
 * maximum reached at the last chunk (wpm 100, L 0.1, P 0.3):
 *   j  c    T   cps  S_{j-1}  r_j  s_j  e_j  g_j  (T_j-T_q)/S  (c_j-c_q)/S
 *   1  0.2  1   2    -        0.3  0.5  0.7  -    -            -
 *   2  0.4  4   2    -        0.5  0.7  0.9  -    (q)          (q)
 *   3  0.9  10  3    0.4      1.0  1.0  1.3  0.1  15           1.25
 *   4  1.0  12  5    0.7      1.1  1.3  1.8  -    80/7         6/7
 *   5  2.0  30  1    1.2      2.1  2.1  2.2  0.3  65/3         4/3
 */
static void min_tps_and_speedup_by_hand(void **state)
{
    struct plays x;
    struct tb_playout *p = make(100, 0.1, 0.3, &x);
    struct tb_playout_result r;
    (void)state;
    add(p, 0.2, 1, 2);
    add(p, 0.4, 4, 2);
    add(p, 0.9, 10, 3);
    add(p, 1.0, 12, 5);
    add(p, 2.0, 30, 1);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(r.chunks, 5);
    assert_int_equal(r.q, 2);
    assert_near(r.ttfa, 0.5, TOL);
    assert_near(r.speech, 1.3, TOL);
    assert_near(r.end, 2.2, TOL);
    assert_int_equal(r.underruns, 2);
    assert_int_equal(r.interruptions, 1);
    assert_near(r.gap_total, 0.4, TOL);
    assert_near(r.gap_max, 0.3, TOL);
    assert_near(r.min_tps, 65.0 / 3.0, TOL);
    assert_near(r.speedup, 4.0 / 3.0, TOL);
    assert_int_equal(x.n, 5);
    assert_play(&x, 0, 1, 2, 0.3, 0.5, 0.7, 0);
    assert_play(&x, 1, 2, 2, 0.5, 0.7, 0.9, 0);
    assert_play(&x, 2, 3, 3, 1.0, 1.0, 1.3, 0.1);
    assert_play(&x, 3, 4, 5, 1.1, 1.3, 1.8, 0);
    assert_play(&x, 4, 5, 1, 2.1, 2.1, 2.2, 0.3);
    tb_playout_destroy(p);
}

/* Every chunk is reported once, in order, back to back or after a gap. */
static void callback_reports_each_chunk_once(void **state)
{
    struct plays x;
    struct tb_playout *p = make(150, 0.05, 1.0, &x);
    double prev_end = 0;
    (void)state;
    for (uint32_t j = 0; j < 20; j++)
        add(p, 0.1 * j + (j == 12 ? 3.0 : 0.0) + (j > 12 ? 3.0 : 0.0), j, 1 + j % 4);
    assert_int_equal(tb_playout_finish(p), 0);
    assert_int_equal(x.n, 20);
    for (size_t i = 0; i < x.n; i++) {
        const struct tb_play *pl = &x.v[i];
        assert_int_equal(pl->chunk, i + 1);
        assert_int_equal(pl->cps, 1 + i % 4);
        assert_near(pl->end - pl->start, (1 + i % 4) * 10.0 / 150, TOL);
        assert_true(pl->start >= pl->ready - TOL);
        if (i > 0) {
            assert_near(pl->start, fmax(prev_end, pl->ready), TOL);
            if (pl->gap > 0)
                assert_near(pl->gap, pl->ready - prev_end, TOL);
        }
        prev_end = pl->end;
    }
    /* The stall before chunk 13: ready at 4.2 + 0.05; chunks 1..12 (30
     * code points, 2 s) play from s_1 = c_7 + L = 0.65 without a break.
     * Chunk 13 (1 code point, 1/15 s) then ends before chunk 14 is ready,
     * 0.1 s after it. */
    for (size_t i = 0; i < 12; i++)
        assert_true(x.v[i].gap == 0.0);
    assert_near(x.v[12].gap, 1.6, TOL);
    assert_near(x.v[13].gap, 0.1 - 1.0 / 15, TOL);
    tb_playout_destroy(p);
}

static void reset_reuses_engine(void **state)
{
    struct plays x;
    struct tb_playout *p = make(100, 0, 10.0, &x);
    struct tb_playout_opts o = {.wpm = 100, .tts_latency = 0, .preroll = 0, .rebuffer = 0},
                           bad = {.wpm = -1, .tts_latency = 0, .preroll = 0, .rebuffer = 0};
    struct tb_playout_result r1, r2;
    (void)state;
    /* A chunk left waiting for pre-roll must not leak into the next run. */
    add(p, 0.3, 0, 4);
    assert_int_equal(tb_playout_reset(p, &o), 0);
    assert_int_equal(tb_playout_started(p, NULL), 0);
    add(p, 1.0, 0, 10);
    add(p, 1.5, 5, 5);
    add(p, 2.2, 12, 10);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r1);
    assert_int_equal(x.n, 3);
    assert_play(&x, 0, 1, 10, 1.0, 1.0, 2.0, 0);
    assert_play(&x, 2, 3, 10, 2.2, 2.5, 3.5, 0);

    /* NULL keeps the options: the same input gives the same result. */
    x.n = 0;
    assert_int_equal(tb_playout_reset(p, NULL), 0);
    add(p, 1.0, 0, 10);
    add(p, 1.5, 5, 5);
    add(p, 2.2, 12, 10);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r2);
    assert_int_equal(x.n, 3);
    assert_int_equal(r2.chunks, r1.chunks);
    assert_near(r2.end, r1.end, 0);
    assert_near(r2.min_tps, r1.min_tps, 0);
    assert_near(r2.speedup, r1.speedup, 0);

    /* New options take effect: twice the rate, half the durations. */
    o.wpm = 200;
    assert_int_equal(tb_playout_reset(p, &o), 0);
    add(p, 1.0, 0, 10);
    assert_near(tb_playout_end(p), 1.5, TOL);

    assert_int_equal(tb_playout_reset(p, &bad), TB_EINVAL);
    tb_playout_destroy(p);
}

/* ---- analyze ---- */

static void build_stream(struct tb_stream *s)
{
    tb_stream_init(s);
    assert_int_equal(tb_stream_append(s, 0.5, "Thinking.", 9, 3, TB_KIND_REASONING), 0);
    assert_int_equal(tb_stream_append(s, 1.0, "Hello", 5, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(s, 1.1, "Hmm. ", 5, 2, TB_KIND_REASONING), 0);
    assert_int_equal(tb_stream_append(s, 1.2, " world.", 7, 2, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(s, 1.5, " Bye", 4, 3, TB_KIND_CONTENT), 0);
}

/*
 * Reasoning events are not segmented, and a chunk's token index is the
 * index of the last token of its completing event, counted over content
 * events (1 + 2 tokens -> index 2; then + 3 -> index 5).
 */
static void analyze_segment_skips_reasoning(void **state)
{
    struct tb_stream s;
    struct tb_chunks c;
    struct tb_seg_opts so = {TB_CHUNK_SENTENCE, 1, 0, 0};
    struct tb_seg *seg = NULL;
    (void)state;
    build_stream(&s);
    tb_analyze_chunks_init(&c);
    assert_int_equal(tb_seg_create(&so, &seg), 0);
    /* A used segmenter and a non-empty list: both start over. */
    assert_int_equal(tb_analyze_chunks_push(&c, 9.0, 99, 99), 0);
    tb_seg_feed(seg, "stale", 5, NULL, NULL);

    assert_int_equal(tb_analyze_segment(&s, seg, &c), 0);
    assert_int_equal(c.n, 2);
    assert_near(c.v[0].c, 1.2, 0);
    assert_int_equal(c.v[0].tok, 2);
    assert_int_equal(c.v[0].cps, 12); /* "Hello world." */
    assert_near(c.v[1].c, 1.5, 0);
    assert_int_equal(c.v[1].tok, 5);
    assert_int_equal(c.v[1].cps, 4); /* " Bye", at finish */

    /* The token policy sees the three content events only. */
    tb_seg_destroy(seg);
    so.policy = TB_CHUNK_TOKEN;
    assert_int_equal(tb_seg_create(&so, &seg), 0);
    assert_int_equal(tb_analyze_segment(&s, seg, &c), 0);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.v[0].tok, 0);
    assert_int_equal(c.v[1].tok, 2);
    assert_int_equal(c.v[2].tok, 5);
    assert_int_equal(c.v[0].cps + c.v[1].cps + c.v[2].cps, 16);

    tb_seg_destroy(seg);
    tb_analyze_chunks_free(&c);
    tb_analyze_chunks_free(&c); /* freeing twice is safe: it re-initialises */
    tb_stream_free(&s);
}

static void analyze_playout_over_chunks(void **state)
{
    struct tb_stream s;
    struct tb_chunks c;
    struct tb_seg_opts so = {TB_CHUNK_SENTENCE, 1, 0, 0};
    struct tb_playout_opts o = {.wpm = 100, .tts_latency = 0, .preroll = 0, .rebuffer = 0},
                           bad = {.wpm = 0, .tts_latency = 0, .preroll = 0, .rebuffer = 0};
    struct tb_seg *seg = NULL;
    struct tb_playout *p = make(150, 1.0, 1.0, NULL);
    struct tb_playout_result r;
    (void)state;
    build_stream(&s);
    tb_analyze_chunks_init(&c);
    assert_int_equal(tb_seg_create(&so, &seg), 0);
    assert_int_equal(tb_analyze_segment(&s, seg, &c), 0);
    /* Chunk 1 (1.2, tok 2, 12 cps) plays 1.2 .. 2.4; chunk 2 (1.5, tok 5,
     * 4 cps) 2.4 .. 2.8.  j = 2: (5 - 2) / 1.2 and (1.5 - 1.2) / 1.2. */
    assert_int_equal(tb_analyze_playout(&c, p, &o, &r), 0);
    assert_int_equal(r.chunks, 2);
    assert_int_equal(r.q, 1);
    assert_near(r.ttfa, 1.2, TOL);
    assert_near(r.end, 2.8, TOL);
    assert_near(r.min_tps, 2.5, TOL);
    assert_near(r.speedup, 0.25, TOL);
    /* The engine is reset each time: the same call, the same answer. */
    assert_int_equal(tb_analyze_playout(&c, p, &o, &r), 0);
    assert_int_equal(r.chunks, 2);
    assert_near(r.end, 2.8, TOL);
    assert_int_equal(tb_analyze_playout(&c, p, &bad, &r), TB_EINVAL);
    assert_near(tb_curve_prerolls[0], 0.0, 0);
    assert_near(tb_curve_prerolls[TB_CURVE_POINTS - 1], 2.0, 0);
    tb_playout_destroy(p);
    tb_seg_destroy(seg);
    tb_analyze_chunks_free(&c);
    tb_stream_free(&s);
}

int tb_test_playout(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opts_default_values),
        cmocka_unit_test(create_rejects_bad_options),
        cmocka_unit_test(no_gap_schedule),
        cmocka_unit_test(one_underrun_exact_gap),
        cmocka_unit_test(interruption_threshold),
        cmocka_unit_test(underrun_threshold),
        cmocka_unit_test(latency_shifts_schedule),
        cmocka_unit_test(preroll_selects_q),
        cmocka_unit_test(preroll_boundary),
        cmocka_unit_test(preroll_never_reached),
        cmocka_unit_test(no_chunks),
        cmocka_unit_test(min_tps_and_speedup_by_hand),
        cmocka_unit_test(callback_reports_each_chunk_once),
        cmocka_unit_test(reset_reuses_engine),
        cmocka_unit_test(analyze_segment_skips_reasoning),
        cmocka_unit_test(analyze_playout_over_chunks),
    };
    return TB_RUN_GROUP("playout", tests);
}
