/*
 * test_recut.c - the minimum TPS and speed-up under the time-based chunk
 * policies (cartesia, idle), whose cuts depend on when tokens arrive.
 *
 * The engine under test is the whole simulator (tb_sim_run: the drain
 * feeding the segmenter online, then the re-cutting search of recut.c).
 * The oracle re-times the stream itself (event k at t_0 + (T_k - T_0)/r,
 * or t_0 + (t_k - t_0)/x for a speed-up), segments the re-timed stream
 * (tb_analyze_segment) and plays it (tb_analyze_playout), and calls a rate
 * gap-free when no silence is longer than TB_SEARCH_EPS; a dense scan of
 * rates then checks the answer: gap-free a hair above, not a hair below,
 * every rate of a grid above it (ratio 1.01, up to 256x) gap-free, "none"
 * exactly when the infinite rate leaves a gap.  Random traces x both
 * policies x their delays x the playout without and with a TTS stage.
 * Plus the two streams by hand that show "no gap" is not monotone in the
 * rate for either policy (ttsbuf-model(7)), and the search's kept cuts
 * (recut_cut.h) against the search re-cutting at every rate, bit for bit,
 * on longer random traces.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/play/recut.h"
#include "tests.h"
#include "ttsbuf.h"

#define CASES 400
#define MAXE 14

struct rcase {
    size_t n;
    double t[MAXE];
    uint32_t tokens[MAXE];
    const char *text[MAXE];
    struct tb_sim_opts o;
};

static uint64_t rng = 0x2545f4914f6cdd1du;

static double uni(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* A pure function of the chunk: every replay sees the same latencies. */
static double hook(void *ud, uint32_t j)
{
    (void)ud;
    return 0.05 * (double)((j * 7u) % 5u);
}

static void random_case(struct rcase *k, enum tb_chunk_policy pol)
{
    static const char *const words[] = {" the", " quick",     " brown.", " fox",
                                        "\n",   " jumps!",    " over",   ",",
                                        " a",   " lazy dog.", " and",    " then"};
    static const double delays[] = {0.1, 0.25, 0.5, 1.0, 3.0};
    static const double idles[] = {0.05, 0.2, 0.5, 1.0};
    static const double pres[] = {0.0, 0.35, 1.05};
    static const double rtfs[] = {0.0, 0.5, 1.5};
    double t = uni();
    memset(k, 0, sizeof(*k));
    k->n = 2 + (size_t)(uni() * (MAXE - 1));
    for (size_t i = 0; i < k->n; i++) {
        k->t[i] = t;
        k->tokens[i] = 1 + (uint32_t)(uni() * 3);
        k->text[i] = words[(size_t)(uni() * (sizeof(words) / sizeof(words[0])))];
        t += uni() < 0.15 ? 1.0 + 2.0 * uni() : 0.4 * uni();
    }
    tb_sim_opts_default(&k->o);
    k->o.seg.policy = pol;
    k->o.seg.max_delay_s = delays[(size_t)(uni() * 5)];
    k->o.seg.idle_s = idles[(size_t)(uni() * 4)];
    k->o.play.preroll = pres[(size_t)(uni() * 3)];
    k->o.play.tts_latency = uni() < 0.5 ? 0.0 : 0.2;
    if (uni() < 0.5) { /* a TTS stage */
        k->o.play.tts_concurrency = (int)(uni() * 3);
        k->o.play.tts_rtf = rtfs[(size_t)(uni() * 3)];
        k->o.play.tts_connect = uni() < 0.5 ? 0.0 : 0.3 * uni();
        if (uni() < 0.5) {
            k->o.play.tts_latency_at = hook;
            k->o.play.tts_latency = 0.0;
        }
    }
}

static void build(struct tb_stream *s, const struct rcase *k, const double *t)
{
    tb_stream_init(s);
    for (size_t i = 0; i < k->n; i++)
        assert_int_equal(tb_stream_append(s, t[i], k->text[i], strlen(k->text[i]), k->tokens[i],
                                          TB_KIND_CONTENT),
                         0);
}

/* The oracle: the stream re-timed to rate x, segmented and played. */
static int oracle_free(const struct rcase *k, double x, int by_time)
{
    double t[MAXE];
    uint64_t tok = 0, tok0 = 0;
    struct tb_stream s;
    struct tb_seg *seg = NULL;
    struct tb_chunks ch;
    struct tb_playout *p = NULL;
    struct tb_playout_opts po = k->o.play;
    struct tb_playout_result r;
    for (size_t i = 0; i < k->n; i++) {
        tok += k->tokens[i];
        if (i == 0)
            tok0 = tok - 1;
        double u = by_time ? k->t[i] - k->t[0] : (double)(tok - 1 - tok0);
        t[i] = isinf(x) ? k->t[0] : k->t[0] + u / x;
    }
    build(&s, k, t);
    tb_analyze_chunks_init(&ch);
    po.no_search = 1;
    assert_int_equal(tb_seg_create(&k->o.seg, &seg), 0);
    assert_int_equal(tb_analyze_segment(&s, seg, &ch), 0);
    assert_int_equal(tb_playout_create(&po, NULL, NULL, &p), 0);
    assert_int_equal(tb_analyze_playout(&ch, p, &po, &r), 0);
    tb_playout_destroy(p);
    tb_seg_destroy(seg);
    tb_analyze_chunks_free(&ch);
    tb_stream_free(&s);
    return r.silence_max <= TB_SEARCH_EPS;
}

/* The engine: the simulator over the stream as recorded. */
static void engine(const struct rcase *k, struct tb_sim_result *r)
{
    struct tb_stream s;
    struct tb_clock clk;
    char err[256];
    build(&s, k, k->t);
    tb_clock_virtual_init(&clk);
    assert_int_equal(tb_sim_run(&s, &k->o, &clk, NULL, NULL, r, err, sizeof(err)), 0);
    tb_stream_free(&s);
}

/* Gap islands above an answer narrower than the search's step. */
static size_t narrow_islands;

/* Checks the answer x; returns whether a gap-free rate lies below it
 * (the stream is not monotone in the rate). */
static int check_rate(size_t c, const struct rcase *k, double x, int none, int by_time)
{
    const char *what = by_time ? "speed-up" : "min TPS";
    const char *pol = tb_seg_policy_name(k->o.seg.policy);
    int below = 0;
    if (none) {
        if (oracle_free(k, INFINITY, by_time))
            fail_msg("case %zu (%s): %s none, yet the infinite rate is gap-free", c, pol, what);
        return 0;
    }
    if (!oracle_free(k, INFINITY, by_time))
        fail_msg("case %zu (%s): %s %.12g, yet the infinite rate has a gap", c, pol, what, x);
    if (x == 0.0) {
        for (double l = 1e-3; l < 1e4; l *= 1.37)
            if (!oracle_free(k, l, by_time))
                fail_msg("case %zu (%s): %s 0, yet rate %g has a gap", c, pol, what, l);
        return 0;
    }
    if (!oracle_free(k, x * (1 + 1e-6), by_time))
        fail_msg("case %zu (%s): %s %.12g, yet a hair above has a gap", c, pol, what, x);
    if (oracle_free(k, x * (1 - 1e-6), by_time))
        fail_msg("case %zu (%s): %s %.12g, yet a hair below is gap-free", c, pol, what, x);
    for (double l = x * (1 + 1e-6); l < x * 256; l *= 1.01) {
        double lo = l, hi = l;
        if (oracle_free(k, l, by_time))
            continue;
        /* A gap island narrower than the search's step down can be walked
         * past (ttsbuf-model(7): exact unless the gap-free rates have a
         * hole narrower than that step): counted, and held rare below. */
        while (lo > x && !oracle_free(k, lo / 1.0005, by_time))
            lo /= 1.0005;
        while (!oracle_free(k, hi * 1.0005, by_time) && hi < x * 256)
            hi *= 1.0005;
        if (hi / lo >= pow(2.0, 1.0 / TB_RECUT_STEPS))
            fail_msg("case %zu (%s): %s %.12g, yet rate %.12g above it has a gap", c, pol, what, x,
                     l);
        narrow_islands++;
        print_message("case %zu (%s): %s %.12g; a gap island at rates %.6g..%.6g, narrower "
                      "than the search's step\n",
                      c, pol, what, x, lo, hi);
        l = hi;
    }
    for (double l = x / 1.01; l > x / 64 && !below; l /= 1.01)
        below = oracle_free(k, l, by_time);
    return below;
}

static void oracle_agrees_on_random_traces(void **state)
{
    static const enum tb_chunk_policy pols[] = {TB_CHUNK_CARTESIA, TB_CHUNK_IDLE};
    (void)state;
    for (size_t pi = 0; pi < 2; pi++) {
        size_t gaps = 0, nones = 0, holes = 0, zeros = 0;
        for (size_t c = 0; c < CASES; c++) {
            struct rcase k;
            struct tb_sim_result r;
            random_case(&k, pols[pi]);
            engine(&k, &r);
            assert_true(r.play.min_tps_none == (isnan(r.play.min_tps) != 0));
            if (!r.play.min_tps_none)
                assert_int_equal(r.play.min_tps_method, TB_MIN_TPS_SCAN);
            holes += (size_t)check_rate(c, &k, r.play.min_tps, r.play.min_tps_none, 0);
            (void)check_rate(c, &k, r.play.speedup, r.play.min_tps_none, 1);
            gaps += r.play.underruns > 0;
            nones += (size_t)r.play.min_tps_none;
            zeros += r.play.min_tps == 0.0;
        }
        print_message("recut: %s, %d cases, %zu with gaps, %zu none, %zu zero, %zu with a "
                      "gap-free rate below the answer\n",
                      tb_seg_policy_name(pols[pi]), CASES, gaps, nones, zeros, holes);
        assert_true(gaps > CASES / 10 && nones > 0 && holes > 0);
    }
    assert_true(narrow_islands <= 2); /* of 1600 answers */
}

/* Six one-token events played at 150 wpm with no latency or pre-roll:
 * gap-free at r_ok tokens/s and not at the faster r_gap. */
static void not_monotone(enum tb_chunk_policy pol, double delay, const char *const *text,
                         double r_ok, double r_gap)
{
    struct tb_seg_opts so = {pol, 1, delay, delay};
    struct tb_recut *rc = NULL;
    struct tb_playout_opts o;
    struct tb_playout_result a, b, s;
    tb_playout_opts_default(&o);
    assert_int_equal(tb_recut_create(&so, &rc), 0);
    for (uint64_t i = 0; i < 6; i++)
        assert_int_equal(tb_recut_add(rc, 0.0, i, text[i], strlen(text[i])), 0);
    assert_int_equal(tb_recut_play(rc, &o, r_ok, 0, &a), 0);
    assert_int_equal(tb_recut_play(rc, &o, r_gap, 0, &b), 0);
    assert_true(a.silence_max <= TB_SEARCH_EPS);
    assert_true(b.silence_max > 0.01);
    assert_int_equal(tb_recut_search(rc, &o, &s), 0);
    assert_true(s.min_tps > r_gap); /* every rate above it, so above both */
    assert_int_equal(s.min_tps_method, TB_MIN_TPS_SCAN);
    tb_recut_destroy(rc);
}

/* The streams of ttsbuf-model(7).  idle, 0.25 s: " big ok." and " end."
 * close by the sentence rule; at 3.75 tokens/s (0.267 s apart) each
 * " so" goes 0.25 s after it came and keeps the audio going; at 4.1
 * (0.244 s apart) the three " so" wait for the end, after " end." has
 * played.  cartesia, 250 ms: at 7.8 tokens/s the newlines are cut
 * apart by the delay, at 8.1 the second newline joins chunk 1, which
 * then plays out before the rest closes. */
static void no_gap_is_not_monotone(void **state)
{
    static const char *const idle_text[] = {" big", " ok.", " end.", " so", " so", " so"};
    static const char *const car_text[] = {" so", "\n", "\n", "\n", "\n", " so"};
    (void)state;
    not_monotone(TB_CHUNK_IDLE, 0.25, idle_text, 3.75, 4.1);
    not_monotone(TB_CHUNK_CARTESIA, 0.25, car_text, 7.8, 8.1);
}

/* The bits of x (NAN against NAN compares equal here, as it should). */
static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof(u));
    return u;
}

/* The search's answer, bit for bit: the same doubles, flags and method. */
static void assert_same_search(const struct tb_playout_result *a, const struct tb_playout_result *b,
                               size_t c, const char *what)
{
    if (bits(a->min_tps) != bits(b->min_tps) || bits(a->speedup) != bits(b->speedup) ||
        a->min_tps_none != b->min_tps_none || a->min_tps_method != b->min_tps_method)
        fail_msg("case %zu (%s): kept cuts give min TPS %.17g, speed-up %.17g (none %d); the "
                 "full re-cut %.17g, %.17g (none %d)",
                 c, what, a->min_tps, a->speedup, a->min_tps_none, b->min_tps, b->speedup,
                 b->min_tps_none);
}

/* A trace of up to 160 events: bursts, stalls, events on a grid of the
 * delay (decisions exactly at their threshold), sometimes far from t = 0. */
static size_t long_trace(struct tb_recut *a, struct tb_recut *b, double delay)
{
    static const char *const words[] = {" the",  " quick", " brown.", " fox",  "\n",   " jumps!",
                                        " over", ",",      " a",      " dog.", " and", " then",
                                        " ",     "\"",     " ok?",    "...",   " well"};
    size_t n = 2 + (size_t)(uni() * 159);
    int grid = uni() < 0.25;
    double t = uni() < 0.2 ? 1e6 * uni() : uni();
    uint64_t tok = 0;
    for (size_t i = 0; i < n; i++) {
        const char *w = words[(size_t)(uni() * (sizeof(words) / sizeof(words[0])))];
        tok += 1 + (uint64_t)(uni() * 3);
        assert_int_equal(tb_recut_add(a, t, tok, w, strlen(w)), 0);
        assert_int_equal(tb_recut_add(b, t, tok, w, strlen(w)), 0);
        if (grid)
            t += delay * (double)(int)(uni() * 3) / 2.0;
        else
            t += uni() < 0.1 ? 0.5 + 3.0 * uni() : uni() < 0.2 ? 0.0 : 0.3 * uni();
    }
    return n;
}

/* Random playout options: pre-roll, latency, rate, rebuffering, a stage. */
static void random_play(struct tb_playout_opts *o)
{
    static const double pres[] = {0.0, 0.1, 0.35, 1.05, 2.0, 30.0};
    static const double rtfs[] = {0.0, 0.5, 1.5};
    tb_playout_opts_default(o);
    o->preroll = pres[(size_t)(uni() * 6)];
    o->tts_latency = uni() < 0.5 ? 0.0 : 0.2;
    o->wpm = uni() < 0.7 ? 150.0 : 60.0 + 300.0 * uni();
    if (uni() < 0.3) {
        o->tts_concurrency = (int)(uni() * 3);
        o->tts_rtf = rtfs[(size_t)(uni() * 3)];
        o->tts_connect = uni() < 0.5 ? 0.0 : 0.3 * uni();
        if (uni() < 0.5)
            o->tts_latency_at = hook;
    } else {
        o->rebuffer = uni() < 0.2;
    }
}

/* The search with its kept cuts against the search that re-cuts the whole
 * stream at every rate (the search before it kept them): the same answer
 * to the last bit, on random traces of both policies, several playout
 * options in turn on one store (the cuts outlive a search), and the
 * re-cuts the kept ones spared counted. */
static void kept_cuts_match_full_recut(void **state)
{
    static const enum tb_chunk_policy pols[] = {TB_CHUNK_CARTESIA, TB_CHUNK_IDLE};
    static const double delays[] = {0.1, 0.25, 0.5, 1.0, 3.0};
    (void)state;
    for (size_t pi = 0; pi < 2; pi++) {
        size_t kept = 0, full = 0, searches = 0;
        for (size_t c = 0; c < CASES / 6; c++) {
            double delay = delays[(size_t)(uni() * 5)];
            struct tb_seg_opts so = {pols[pi], uni() < 0.2 ? 12u : 1u, delay, delay};
            struct tb_recut *a = NULL, *b = NULL;
            assert_int_equal(tb_recut_create(&so, &a), 0);
            assert_int_equal(tb_recut_create(&so, &b), 0);
            (void)long_trace(a, b, delay);
            for (int k = 0; k < 3; k++) {
                struct tb_playout_opts o;
                struct tb_playout_result ra, rb;
                random_play(&o);
                assert_int_equal(tb_recut_search(a, &o, &ra), 0);
                assert_int_equal(tb_recut_search_full(b, &o, &rb), 0);
                assert_same_search(&ra, &rb, c, tb_seg_policy_name(pols[pi]));
                searches++;
            }
            kept += tb_recut_recuts(a);
            full += tb_recut_recuts(b);
            tb_recut_destroy(a);
            tb_recut_destroy(b);
        }
        print_message("recut: %s, %zu searches the same to the bit; %zu re-cuts with kept cuts, "
                      "%zu without\n",
                      tb_seg_policy_name(pols[pi]), searches, kept, full);
        assert_true(kept * 10 < full);
    }
}

/* The stream: 10,000 tokens at 50 tokens/s.  The search at the
 * run's pre-roll and the curve's six re-cuts it a handful of times, not
 * once per rate tested (about 2,000 a search). */
static void search_recuts_a_handful(void **state)
{
    static const enum tb_chunk_policy pols[] = {TB_CHUNK_CARTESIA, TB_CHUNK_IDLE};
    struct tb_synth_spec sp;
    struct tb_stream s;
    (void)state;
    tb_synth_default(&sp);
    sp.tps = 50;
    sp.tokens = 10000;
    sp.seed = 1;
    tb_stream_init(&s);
    assert_int_equal(tb_synth_generate(&sp, &s), 0);
    for (size_t pi = 0; pi < 2; pi++) {
        struct tb_seg_opts so = {pols[pi], 1, 0, 0};
        struct tb_recut *r = NULL;
        struct tb_playout_opts o;
        struct tb_playout_result res;
        uint64_t tok = 0;
        assert_int_equal(tb_recut_create(&so, &r), 0);
        for (size_t i = 0; i < s.n; i++) {
            tok += s.ev[i].tokens;
            assert_int_equal(
                tb_recut_add(r, s.ev[i].t, tok - 1, tb_stream_text(&s, i), s.ev[i].len), 0);
        }
        tb_playout_opts_default(&o);
        assert_int_equal(tb_recut_search(r, &o, &res), 0);
        for (int i = 0; i < TB_CURVE_POINTS; i++) {
            o.preroll = tb_curve_prerolls[i];
            assert_int_equal(tb_recut_search(r, &o, &res), 0);
            assert_true(res.min_tps > 1.0 && res.min_tps < 50.0);
        }
        print_message("recut: %s, 10,000 tokens, 7 searches: %zu re-cuts\n",
                      tb_seg_policy_name(pols[pi]), tb_recut_recuts(r));
        assert_true(tb_recut_recuts(r) <= 64);
        tb_recut_destroy(r);
    }
    tb_stream_free(&s);
}

/* The store refuses the options the segmenter refuses. */
static void recut_bad_options(void **state)
{
    struct tb_seg_opts so = {TB_CHUNK_CARTESIA, 1, -1.0, 0};
    struct tb_recut *rc = (struct tb_recut *)&so;
    (void)state;
    assert_int_equal(tb_recut_create(&so, &rc), TB_EINVAL);
    assert_null(rc);
    tb_recut_destroy(NULL);
}

int tb_test_recut(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oracle_agrees_on_random_traces),
        cmocka_unit_test(no_gap_is_not_monotone),
        cmocka_unit_test(kept_cuts_match_full_recut),
        cmocka_unit_test(search_recuts_a_handful),
        cmocka_unit_test(recut_bad_options),
    };
    return TB_RUN_GROUP("recut", tests);
}
