/*
 * test_sim.c - the ring-driven simulator: agrees with the direct analysis,
 * measures the ring, and behaves when the ring is too small.
 */
#include <math.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf.h"

/* Builds a stream from (t, text) pairs. */
static void build(struct tb_stream *s, const double *t, const char *const *text, size_t n)
{
    tb_stream_init(s);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tb_stream_append(s, t[i], text[i], strlen(text[i]), 1, TB_KIND_CONTENT),
                         0);
}

static int run(const struct tb_stream *s, const struct tb_sim_opts *o, struct tb_sim_result *r)
{
    struct tb_clock clk;
    char err[256];
    tb_clock_virtual_init(&clk);
    return tb_sim_run(s, o, &clk, NULL, NULL, r, err, sizeof(err));
}

static void analyze(const struct tb_stream *s, const struct tb_sim_opts *o,
                    struct tb_playout_result *out)
{
    struct tb_seg *seg;
    struct tb_playout *p;
    struct tb_chunks ch;
    tb_analyze_chunks_init(&ch);
    assert_int_equal(tb_seg_create(&o->seg, &seg), 0);
    assert_int_equal(tb_playout_create(&o->play, NULL, NULL, &p), 0);
    assert_int_equal(tb_analyze_segment(s, seg, &ch), 0);
    assert_int_equal(tb_analyze_playout(&ch, p, &o->play, out), 0);
    tb_analyze_chunks_free(&ch);
    tb_seg_destroy(seg);
    tb_playout_destroy(p);
}

static void same_playout(const struct tb_playout_result *a, const struct tb_playout_result *b)
{
    assert_int_equal(a->chunks, b->chunks);
    assert_int_equal(a->q, b->q);
    assert_int_equal(a->underruns, b->underruns);
    assert_int_equal(a->interruptions, b->interruptions);
    /* Same engine, same inputs, same order: bit-identical. */
    assert_true(a->ttfa == b->ttfa);
    assert_true(a->end == b->end);
    assert_true(a->gap_total == b->gap_total);
    assert_true(a->gap_max == b->gap_max);
    assert_true(a->min_tps == b->min_tps);
    assert_true(a->speedup == b->speedup);
}

/* With a ring that never fills, the simulator equals the direct analysis,
 * for every policy, pre-roll and latency, on varied synthetic streams. */
static void sim_matches_analysis(void **state)
{
    (void)state;
    const double prerolls[] = {0, 0.5, 3};
    const double lats[] = {0, 0.25};
    for (uint64_t seed = 1; seed <= 12; seed++) {
        struct tb_synth_spec spec;
        struct tb_stream s;
        tb_synth_default(&spec);
        spec.seed = seed;
        spec.tokens = 200 + (uint32_t)seed * 17;
        spec.tps = 3.0 + (double)seed;
        spec.jitter = 0.8;
        spec.stall_p = 0.02;
        spec.stall_s = 2.0;
        spec.burst = 1 + (uint32_t)(seed % 3);
        tb_stream_init(&s);
        assert_int_equal(tb_synth_generate(&spec, &s), 0);
        for (int pol = 0; pol < TB_CHUNK__COUNT; pol++)
            for (size_t i = 0; i < 3; i++)
                for (size_t j = 0; j < 2; j++) {
                    struct tb_sim_opts o;
                    struct tb_sim_result r;
                    struct tb_playout_result a;
                    tb_sim_opts_default(&o);
                    o.seg.policy = (enum tb_chunk_policy)pol;
                    o.play.preroll = prerolls[i];
                    o.play.tts_latency = lats[j];
                    assert_int_equal(run(&s, &o, &r), 0);
                    analyze(&s, &o, &a);
                    if (tb_seg_policy_timed(o.seg.policy)) {
                        /* searched by re-cutting: the recut group's */
                        a.min_tps = r.play.min_tps;
                        a.speedup = r.play.speedup;
                    }
                    same_playout(&r.play, &a);
                    assert_int_equal(r.backpressure_waits, 0);
                    assert_int_equal(r.forced_cuts, 0);
                    assert_false(r.forced_start);
                }
        tb_stream_free(&s);
    }
}

/* The pre-roll curve is the analysis at each pre-roll. */
static void curve_matches_analysis(void **state)
{
    (void)state;
    struct tb_synth_spec spec;
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    tb_synth_default(&spec);
    spec.tps = 5;
    spec.jitter = 1;
    spec.seed = 9;
    tb_stream_init(&s);
    assert_int_equal(tb_synth_generate(&spec, &s), 0);
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_TOKEN;
    assert_int_equal(run(&s, &o, &r), 0);
    for (int i = 0; i < TB_CURVE_POINTS; i++) {
        struct tb_playout_result a;
        struct tb_sim_opts oi = o;
        oi.play.preroll = tb_curve_prerolls[i];
        analyze(&s, &oi, &a);
        assert_true(r.curve[i].preroll == tb_curve_prerolls[i]);
        assert_true(r.curve[i].min_tps == a.min_tps);
        assert_int_equal(r.curve[i].underruns, a.underruns);
        assert_true(r.curve[i].gap_total == a.gap_total);
        assert_true(r.curve[i].ttfa == a.ttfa);
    }
    tb_stream_free(&s);
}

/* Hand-computed: three 15-code-point chunks at 150 wpm (1 s each), token
 * chunking.  Events at 0, 0.1, 0.2: all three wait in the ring until their
 * playback: the high-water mark is all three, 3 s of speech. */
static void ring_high_water(void **state)
{
    (void)state;
    const double t[] = {0.0, 0.1, 0.2};
    const char *const x[] = {"abcdefghijklmno", "abcdefghijklmno", "abcdefghijklmno"};
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    build(&s, t, x, 3);
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_TOKEN;
    assert_int_equal(run(&s, &o, &r), 0);
    /* Chunk 1 leaves at once (it plays at t = 0, before event 2 arrives);
     * chunks 2 and 3 wait for their turn: two items, 30 bytes, 2 s. */
    assert_int_equal(r.hw_items, 2);
    assert_int_equal(r.hw_bytes, 30);
    assert_near(r.hw_speech_s, 2.0, 1e-12);
    assert_int_equal(r.play.underruns, 0);
    assert_near(r.play.end, 3.0, 1e-12);
    assert_near(r.ttft, 0.0, 0);
    assert_near(r.decode_tps, 2 / 0.2, 1e-9);
    tb_stream_free(&s);
}

/* With a TTS stage the text leaves the ring when its synthesis begins
 * (b_j), not when its audio plays: one streaming context (N = 1) with
 * instant synthesis begins each chunk as it closes, so the ring never
 * holds more than the event just read, though chunks 2 and 3 play at 1 s
 * and 2 s.  The old release (s_j - L) kept two items waiting. */
static void ring_releases_at_tts_begin(void **state)
{
    (void)state;
    const double t[] = {0.0, 0.1, 0.2};
    const char *const x[] = {"abcdefghijklmno", "abcdefghijklmno", "abcdefghijklmno"};
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    build(&s, t, x, 3);
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_TOKEN;
    o.play.tts_concurrency = 1;
    assert_int_equal(run(&s, &o, &r), 0);
    assert_int_equal(r.hw_items, 1);
    assert_int_equal(r.hw_bytes, 15);
    assert_near(r.play.end, 3.0, 1e-12);
    assert_int_equal(r.play.underruns, 0);
    /* A busy engine (R = 1: each 1 s chunk takes 1 s) begins chunk 2 at
     * 1 s and chunk 3 at 2 s: they wait in the ring until then. */
    o.play.tts_rtf = 1.0;
    assert_int_equal(run(&s, &o, &r), 0);
    assert_int_equal(r.hw_items, 2);
    tb_stream_free(&s);
}

/* A ring of two slots: chunk 1 leaves at t = 0 (it plays at once), chunks
 * 2 and 3 fill the ring, so event 4 waits until chunk 2 starts playing
 * (t = 1): it reaches the consumer 0.7 s late.  Nothing is dropped. */
static void backpressure_delays_not_drops(void **state)
{
    (void)state;
    const double t[] = {0.0, 0.1, 0.2, 0.3};
    const char *const x[] = {"abcdefghijklmno", "abcdefghijklmno", "abcdefghijklmno",
                             "abcdefghijklmno"};
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    build(&s, t, x, 4);
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_TOKEN;
    o.ring_slots = 2;
    assert_int_equal(run(&s, &o, &r), 0);
    assert_int_equal(r.ring_slots, 2);
    assert_int_equal(r.play.chunks, 4);
    assert_int_equal(r.content_events, 4);
    assert_int_equal(r.backpressure_waits, 1);
    assert_near(r.backpressure_s, 1.0 - 0.3, 1e-12);
    assert_int_equal(r.play.underruns, 0); /* speech is slower than the wait */
    assert_near(r.play.end, 4.0, 1e-12);
    assert_int_equal(r.hw_items, 2);
    tb_stream_free(&s);
}

/* A sentence longer than the ring: the open chunk is cut (forced), the
 * run completes, and the report says so. */
static void forced_cut_when_chunk_exceeds_ring(void **state)
{
    (void)state;
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    tb_stream_init(&s);
    for (int i = 0; i < 20; i++)
        assert_int_equal(tb_stream_append(&s, 0.01 * i, " word", 5, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(&s, 0.5, ".", 1, 1, TB_KIND_CONTENT), 0);
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_SENTENCE;
    o.ring_slots = 4;
    assert_int_equal(run(&s, &o, &r), 0);
    assert_true(r.forced_cuts >= 1);
    assert_int_equal(r.content_events, 21);
    /* Every code point is still spoken: 20 x 5 + 1 = 101 at 15 cp/s. */
    assert_near(r.play.speech, 101.0 / 15.0, 1e-9);
    tb_stream_free(&s);
}

/* Pre-roll larger than the ring can hold: playback is forced to start. */
static void forced_start_when_preroll_exceeds_ring(void **state)
{
    (void)state;
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    tb_stream_init(&s);
    for (int i = 0; i < 10; i++)
        assert_int_equal(tb_stream_append(&s, 0.1 * i, "abc.", 4, 1, TB_KIND_CONTENT), 0);
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_TOKEN;
    o.play.preroll = 100;
    o.ring_slots = 2;
    assert_int_equal(run(&s, &o, &r), 0);
    assert_true(r.forced_start);
    assert_int_equal(r.play.chunks, 10);
    assert_near(r.play.speech, 40.0 / 15.0, 1e-9);
    tb_stream_free(&s);
}

static void event_larger_than_ring_is_an_error(void **state)
{
    (void)state;
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    struct tb_clock clk;
    char big[200], err[256];
    memset(big, 'a', sizeof(big));
    tb_stream_init(&s);
    assert_int_equal(tb_stream_append(&s, 0, big, sizeof(big), 1, TB_KIND_CONTENT), 0);
    tb_sim_opts_default(&o);
    o.ring_bytes = 64;
    tb_clock_virtual_init(&clk);
    assert_int_equal(tb_sim_run(&s, &o, &clk, NULL, NULL, &r, err, sizeof(err)), TB_ETOOBIG);
    assert_non_null(strstr(err, "--ring-bytes"));
    tb_stream_free(&s);
}

/* Reasoning is counted, never spoken, and not the first token. */
static void reasoning_not_spoken(void **state)
{
    (void)state;
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    tb_stream_init(&s);
    assert_int_equal(tb_stream_append(&s, 0.2, "thinking", 8, 3, TB_KIND_REASONING), 0);
    assert_int_equal(tb_stream_append(&s, 0.5, "Hello.", 6, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(&s, 0.6, "more thought", 12, 1, TB_KIND_REASONING), 0);
    assert_int_equal(tb_stream_append(&s, 0.7, " Bye.", 5, 1, TB_KIND_CONTENT), 0);
    tb_sim_opts_default(&o);
    assert_int_equal(run(&s, &o, &r), 0);
    assert_int_equal(r.reasoning_events, 2);
    assert_int_equal(r.reasoning_tokens, 4);
    assert_int_equal(r.content_events, 2);
    assert_near(r.ttft, 0.5, 0);
    assert_near(r.play.ttfa, 0.5, 0);
    assert_near(r.play.speech, 11.0 / 15.0, 1e-12);
    tb_stream_free(&s);
}

static void no_content_is_empty(void **state)
{
    (void)state;
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    tb_stream_init(&s);
    assert_int_equal(run(&s, (tb_sim_opts_default(&o), &o), &r), TB_EEMPTY);
    assert_int_equal(tb_stream_append(&s, 0.1, "x", 1, 1, TB_KIND_REASONING), 0);
    assert_int_equal(run(&s, &o, &r), TB_EEMPTY);
    tb_stream_free(&s);
}

/* The same run paced by the monotonic clock gives the same numbers: the
 * schedule follows the stream's times, not the machine's. */
static void monotonic_clock_same_result(void **state)
{
    (void)state;
    const double t[] = {0.0, 0.02, 0.05, 0.06};
    const char *const x[] = {"Hi.", " There", " you", " are."};
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result a, b;
    struct tb_clock clk;
    char err[256];
    build(&s, t, x, 4);
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_TOKEN;
    o.play.wpm = 1000; /* keep real time short: about 0.1 s */
    assert_int_equal(run(&s, &o, &a), 0);
    tb_clock_monotonic_init(&clk);
    assert_int_equal(tb_sim_run(&s, &o, &clk, NULL, NULL, &b, err, sizeof(err)), 0);
    same_playout(&a.play, &b.play);
    assert_true(clk.now(&clk) >= a.play.end - 1.0 / 1000 * 10 * 5);
    tb_stream_free(&s);
}

int tb_test_sim(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sim_matches_analysis),
        cmocka_unit_test(curve_matches_analysis),
        cmocka_unit_test(ring_high_water),
        cmocka_unit_test(ring_releases_at_tts_begin),
        cmocka_unit_test(backpressure_delays_not_drops),
        cmocka_unit_test(forced_cut_when_chunk_exceeds_ring),
        cmocka_unit_test(forced_start_when_preroll_exceeds_ring),
        cmocka_unit_test(event_larger_than_ring_is_an_error),
        cmocka_unit_test(reasoning_not_spoken),
        cmocka_unit_test(no_content_is_empty),
        cmocka_unit_test(monotonic_clock_same_result),
    };
    return TB_RUN_GROUP("sim", tests);
}
