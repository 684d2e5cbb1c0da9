/*
 * test_heard.c - what a caller heard of an interrupted answer (heard.h):
 * a schedule worked out by hand, and, on synthetic streams at many
 * moments, the same answer as a recomputation from the ring-driven
 * simulator's own chunk schedule (tb_sim_run's callback, another path
 * through the segmenter and the playout).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/heard.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/synth.h"

static void add(struct tb_stream *s, double t, const char *text, uint32_t tokens)
{
    assert_int_equal(tb_stream_append(s, t, text, strlen(text), tokens, TB_KIND_CONTENT), 0);
}

/*
 * Three sentences, chunk=sentence, 150 wpm (a code point lasts 1/15 s),
 * no TTS latency, no pre-roll:
 *   "Hi there." (9 code points) closes at 0.2 with token 2: plays 0.2 .. 0.8
 *   " How are you?" (the next sentence, 13 code points with its space or
 *     12 without: read from the schedule) closes at 0.5 with token 6
 *   " Fine." closes at 3.0 (token 8), after a gap.
 */
static void by_hand(void **state)
{
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_heard h;
    char err[128];
    double d1;
    (void)state;
    tb_stream_init(&s);
    add(&s, 0.2, "Hi there.", 3);
    add(&s, 0.4, " How are", 2);
    add(&s, 0.5, " you?", 2);
    add(&s, 3.0, " Fine.", 2);
    s.end.kind = TB_END_COMPLETE;
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_SENTENCE;
    o.play.wpm = 150;
    d1 = 9.0 / 15.0;
    /* Before anything played: all 3 tokens received by 0.3 are unheard,
     * chunk 1's 9 code points went to the TTS and were not all played. */
    assert_int_equal(tb_heard_at(&s, &o, 0.3, &h, err, sizeof(err)), 0);
    assert_int_equal(h.chunks, 3);
    assert_int_equal(h.chunks_heard, 0);
    assert_int_equal(h.tokens, 3);
    assert_int_equal(h.tokens_heard, 0);
    assert_int_equal(h.tokens_unheard, 3);
    assert_int_equal(h.chars_unplayed, 9);
    assert_true(h.interrupted);
    /* Just after chunk 1 ended: its 3 tokens heard, the 4 of chunk 2
     * (received, playing) not. */
    assert_int_equal(tb_heard_at(&s, &o, 0.2 + d1 + 1e-9, &h, err, sizeof(err)), 0);
    assert_int_equal(h.chunks_heard, 1);
    assert_int_equal(h.tokens, 7);
    assert_int_equal(h.tokens_heard, 3);
    assert_int_equal(h.tokens_unheard, 4);
    assert_true(h.chars_unplayed == 12 || h.chars_unplayed == 13);
    /* In the gap before " Fine." (chunk 2 over by 2 s): 7 of 7 heard,
     * nothing is playing, yet the answer is not over. */
    assert_int_equal(tb_heard_at(&s, &o, 2.5, &h, err, sizeof(err)), 0);
    assert_int_equal(h.chunks_heard, 2);
    assert_int_equal(h.tokens, 7);
    assert_int_equal(h.tokens_unheard, 0);
    assert_int_equal(h.chars_unplayed, 0);
    assert_true(h.interrupted); /* chunk 3 was still to come */
    /* After the end: everything heard, nothing interrupted. */
    assert_int_equal(tb_heard_at(&s, &o, 10.0, &h, err, sizeof(err)), 0);
    assert_int_equal(h.chunks_heard, 3);
    assert_int_equal(h.tokens, 9);
    assert_int_equal(h.tokens_heard, 9);
    assert_int_equal(h.tokens_unheard, 0);
    assert_false(h.interrupted);
    assert_true(h.play_end > 3.0 && h.play_end < 10.0);
    /* Bad input. */
    assert_int_equal(tb_heard_at(&s, &o, -1.0, &h, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(tb_heard_at(&s, &o, NAN, &h, err, sizeof(err)), TB_EINVAL);
    o.play.wpm = 0;
    assert_int_equal(tb_heard_at(&s, &o, 1.0, &h, err, sizeof(err)), TB_EINVAL);
    tb_stream_free(&s);
}

/* The simulator's schedule, kept by its callback. */
struct sim_sched {
    double begin[4096], end[4096];
    uint32_t n;
};

static void on_play(void *ud, const struct tb_play *pl)
{
    struct sim_sched *x = ud;
    if (pl->chunk >= 1 && pl->chunk <= 4096) {
        x->begin[pl->chunk - 1] = pl->begin;
        x->end[pl->chunk - 1] = pl->end;
        if (pl->chunk > x->n)
            x->n = pl->chunk;
    }
}

/* The heard tokens recomputed from the simulator's schedule and the
 * stream: walk the content events, cutting chunks where the segmenter
 * (run again, alone) closed them. */
static void recompute(const struct tb_stream *s, const struct tb_sim_opts *o,
                      const struct sim_sched *x, double t, struct tb_heard *want)
{
    struct tb_seg *seg;
    struct tb_chunks c;
    memset(want, 0, sizeof(*want));
    tb_analyze_chunks_init(&c);
    assert_int_equal(tb_seg_create(&o->seg, &seg), 0);
    assert_int_equal(tb_analyze_segment(s, seg, &c), 0);
    assert_int_equal(c.n, x->n); /* one segmentation */
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].t <= t && s->ev[i].kind == TB_KIND_CONTENT)
            want->tokens += s->ev[i].tokens;
    for (uint32_t j = 0; j < x->n; j++) {
        if (x->end[j] <= t) {
            want->chunks_heard++;
            want->tokens_heard = c.v[j].tok + 1;
        } else if (x->begin[j] <= t) {
            want->chars_unplayed += c.v[j].cps;
        }
    }
    want->tokens_unheard = want->tokens - want->tokens_heard;
    tb_seg_destroy(seg);
    tb_analyze_chunks_free(&c);
}

static void equals_the_simulator(void **state)
{
    static const char *const specs[] = {
        "tps=20,ttft=0.4,tokens=120,jitter=0.5,seed=3",
        "tps=6,ttft=0.2,tokens=80,jitter=0.8,stall=0.05:1.5,seed=9",
        "tps=60,ttft=1.0,tokens=200,burst=4,seed=11",
    };
    static const double lat[] = {0.0, 0.25};
    size_t checked = 0;
    (void)state;
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++)
        for (size_t l = 0; l < 2; l++) {
            struct tb_synth_spec sp;
            struct tb_stream s;
            struct tb_sim_opts o;
            struct tb_sim_result r;
            struct tb_clock clk;
            struct sim_sched *x = calloc(1, sizeof(*x));
            char err[256];
            assert_non_null(x);
            tb_synth_default(&sp);
            assert_int_equal(tb_synth_parse(specs[k], &sp, err, sizeof(err)), 0);
            tb_stream_init(&s);
            assert_int_equal(tb_synth_generate(&sp, &s), 0);
            tb_sim_opts_default(&o);
            o.play.tts_latency = lat[l];
            tb_clock_virtual_init(&clk);
            assert_int_equal(tb_sim_run(&s, &o, &clk, on_play, x, &r, err, sizeof(err)), 0);
            for (double t = 0.0; t < r.play.end + 0.5; t += 0.173) {
                struct tb_heard h, want;
                assert_int_equal(tb_heard_at(&s, &o, t, &h, err, sizeof(err)), 0);
                recompute(&s, &o, x, t, &want);
                assert_int_equal(h.chunks, x->n);
                assert_int_equal(h.chunks_heard, want.chunks_heard);
                assert_int_equal(h.tokens, want.tokens);
                assert_int_equal(h.tokens_heard, want.tokens_heard);
                assert_int_equal(h.tokens_unheard, want.tokens_unheard);
                assert_int_equal(h.chars_unplayed, want.chars_unplayed);
                assert_true(h.play_end == r.play.end);
                checked++;
            }
            free(x);
            tb_stream_free(&s);
        }
    print_message("  %zu moments checked against the simulator's schedule\n", checked);
    assert_true(checked > 100);
}

int tb_test_heard(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_hand),
        cmocka_unit_test(equals_the_simulator),
    };
    return TB_RUN_GROUP("heard", tests);
}
