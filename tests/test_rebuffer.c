/*
 * test_rebuffer.c - the --rebuffer playout option against a brute-force
 * oracle written straight from its rule (playout.h):
 *
 *   s_1 = c_q + L as in v1; then for each chunk j >= 2 with
 *   g = c_j + L - e_{j-1} > 1 ms: find the first k >= j with
 *   S_k - S_{j-1} >= P (or the last chunk); chunks j..k play back to back
 *   from c_k + L; the one gap is c_k + L - e_{j-1}.
 *
 * The oracle works on whole arrays (no online state), the engine online,
 * so they share nothing but the rule.  Random chunk lists (bursts, long
 * stalls, tiny gaps near the 1 ms line), every pre-roll and latency of a
 * small set, with the engine's schedule callback on and off.  Also: with
 * rebuffering off nothing changes (v1 exactly), with P = 0 it is v1, a
 * stream v1 plays gap-free plays the same, and the minimum TPS, speed-up
 * and time to first audio never change; and the ring-driven simulator
 * agrees with the direct analysis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/voice.h"

#define MAXC 200
#define CASES 3000

struct oracle {
    double ttfa, end, gap_total, gap_max;
    uint32_t underruns, interruptions;
    double start[MAXC], gap[MAXC];
};

/* The rule, over arrays. */
static void oracle_run(const struct tb_chunks *c, double wpm, double lat, double pre, int rebuf,
                       struct oracle *o)
{
    size_t m = c->n, q = m;
    uint64_t cum = 0;
    double e;
    memset(o, 0, sizeof(*o));
    for (size_t j = 0; j < m; j++) {
        cum += c->v[j].cps;
        if ((double)cum * 10.0 >= pre * wpm) {
            q = j + 1;
            break;
        }
    }
    o->ttfa = c->v[q - 1].c + lat;
    e = o->ttfa;
    for (size_t j = 0; j < m; j++) {
        double r = c->v[j].c + lat;
        if (j == 0 || r - e <= TB_GAP_MIN_S) {
            o->start[j] = j == 0 || r < e ? e : r;
            e = o->start[j] + tb_voice_seconds(c->v[j].cps, wpm);
            continue;
        }
        size_t k = j;
        if (rebuf) {
            uint64_t buf = 0;
            for (k = j; k < m; k++) {
                buf += c->v[k].cps;
                if ((double)buf * 10.0 >= pre * wpm)
                    break;
            }
            if (k == m)
                k = m - 1;
        }
        double t = c->v[k].c + lat, g = t - e;
        o->gap[j] = g;
        o->underruns++;
        o->interruptions += g >= TB_INTERRUPT_S;
        o->gap_total += g;
        if (g > o->gap_max)
            o->gap_max = g;
        for (size_t i = j; i <= k; i++) {
            o->start[i] = t;
            t += tb_voice_seconds(c->v[i].cps, wpm);
        }
        e = t;
        j = k;
    }
    o->end = e;
}

struct seen {
    double start[MAXC], gap[MAXC];
    uint32_t next;
    int in_order;
};

static void on_play(void *ud, const struct tb_play *p)
{
    struct seen *s = ud;
    if (p->chunk != s->next || p->chunk > MAXC) {
        s->in_order = 0;
        return;
    }
    s->start[p->chunk - 1] = p->start;
    s->gap[p->chunk - 1] = p->gap;
    s->next++;
}

static void gen(struct tb_rng *r, struct tb_chunks *c)
{
    size_t m = 1 + (size_t)(tb_rng_next(r) % 60);
    double t = 3.0 * tb_rng_unit(r);
    uint64_t tok = tb_rng_next(r) % 3;
    c->n = 0;
    for (size_t j = 0; j < m; j++) {
        double u = tb_rng_unit(r);
        if (j > 0)
            t += u < 0.2   ? 0.0
                 : u < 0.3 ? 0.0005 + 0.001 * tb_rng_unit(r) /* near the 1 ms line */
                 : u < 0.4 ? 1.0 + 5.0 * tb_rng_unit(r)
                           : 0.6 * tb_rng_unit(r);
        tok += 1 + tb_rng_next(r) % 12;
        assert_int_equal(tb_analyze_chunks_push(c, t, tok, 1 + (uint32_t)(tb_rng_next(r) % 20)), 0);
    }
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1.0 + fabs(a) + fabs(b));
}

static void oracle_random(void **state)
{
    static const double pres[] = {0.0, 0.3, 1.0, 4.0};
    static const double lats[] = {0.0, 0.25};
    static const double wpms[] = {150.0, 97.3};
    struct tb_rng r = {0xB0FFE5ull};
    struct tb_chunks c;
    struct tb_playout *eng, *plain;
    struct tb_playout_opts o;
    static struct oracle orc;
    static struct seen sn;
    long checked = 0, rebuffered = 0;
    (void)state;
    tb_analyze_chunks_init(&c);
    tb_playout_opts_default(&o);
    assert_int_equal(tb_playout_create(&o, on_play, &sn, &eng), 0);
    assert_int_equal(tb_playout_create(&o, NULL, NULL, &plain), 0);
    for (int n = 0; n < CASES; n++) {
        gen(&r, &c);
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 2; b++) {
                struct tb_playout_result res, res2, v1;
                o.wpm = wpms[n % 2];
                o.tts_latency = lats[b];
                o.preroll = pres[a];
                o.rebuffer = 0;
                assert_int_equal(tb_analyze_playout(&c, plain, &o, &v1), 0);
                o.rebuffer = 1;
                memset(&sn, 0, sizeof(sn));
                sn.next = 1;
                sn.in_order = 1;
                assert_int_equal(tb_analyze_playout(&c, eng, &o, &res), 0);
                assert_int_equal(tb_analyze_playout(&c, plain, &o, &res2), 0);
                oracle_run(&c, o.wpm, o.tts_latency, o.preroll, 1, &orc);
                if (res.underruns != orc.underruns || !close_to(res.end, orc.end) ||
                    !close_to(res.gap_total, orc.gap_total) ||
                    !close_to(res.gap_max, orc.gap_max) || res.interruptions != orc.interruptions)
                    fail_msg("case %d P=%g L=%g: engine %u underruns end %.17g gaps %.17g, "
                             "oracle %u end %.17g gaps %.17g",
                             n, o.preroll, o.tts_latency, res.underruns, res.end, res.gap_total,
                             orc.underruns, orc.end, orc.gap_total);
                /* The callback-free engine gives the same numbers. */
                assert_int_equal(res2.underruns, res.underruns);
                assert_true(res2.end == res.end && res2.gap_total == res.gap_total);
                /* The schedule, chunk by chunk. */
                assert_true(sn.in_order);
                assert_int_equal(sn.next, c.n + 1);
                for (size_t j = 0; j < c.n; j++) {
                    if (!close_to(sn.start[j], orc.start[j]) || !close_to(sn.gap[j], orc.gap[j]))
                        fail_msg("case %d chunk %zu: start %.17g gap %.17g, oracle %.17g %.17g", n,
                                 j + 1, sn.start[j], sn.gap[j], orc.start[j], orc.gap[j]);
                }
                /* What rebuffering never changes. */
                assert_true(res.ttfa == v1.ttfa && res.q == v1.q);
                assert_true(res.min_tps == v1.min_tps && res.speedup == v1.speedup);
                assert_true((res.underruns == 0) == (v1.underruns == 0));
                if (res.underruns == 0)
                    assert_true(res.end == v1.end);
                if (o.preroll == 0.0)
                    assert_true(res.underruns == v1.underruns && close_to(res.end, v1.end) &&
                                close_to(res.gap_total, v1.gap_total));
                /* v1 itself still matches the oracle without rebuffering. */
                oracle_run(&c, o.wpm, o.tts_latency, o.preroll, 0, &orc);
                assert_int_equal(v1.underruns, orc.underruns);
                assert_true(close_to(v1.end, orc.end) && close_to(v1.gap_total, orc.gap_total));
                rebuffered += res.underruns < v1.underruns;
                checked++;
            }
    }
    assert_int_equal(checked, CASES * 8);
    /* The generator does exercise rebuffering (fewer, longer gaps). */
    if (rebuffered < CASES / 10)
        fail_msg("only %ld of %d settings rebuffered", rebuffered, CASES * 8);
    tb_playout_destroy(eng);
    tb_playout_destroy(plain);
    tb_analyze_chunks_free(&c);
}

/* By hand: chunks of 15 code points (1 s at 150 wpm) at 0, 0, 3, 3.5, 4;
 * pre-roll 2 s.  v1: starts at 0 (S_2 = 2), runs dry at 2, chunk 3 at 3
 * (gap 1), chunks 4 and 5 follow at once: end 6.  Rebuffer: at 2 waits
 * for 2 s of audio: chunks 3 and 4, ready at 3.5: one gap of 1.5 s, then
 * 3, 4 back to back to 5.5, and chunk 5 (ready at 4) follows: end 6.5. */
static void by_hand(void **state)
{
    static const double t[] = {0, 0, 3, 3.5, 4};
    struct tb_chunks c;
    struct tb_playout *p;
    struct tb_playout_opts o;
    struct tb_playout_result r;
    (void)state;
    tb_analyze_chunks_init(&c);
    for (int i = 0; i < 5; i++)
        assert_int_equal(tb_analyze_chunks_push(&c, t[i], (uint64_t)i, 15), 0);
    tb_playout_opts_default(&o);
    o.preroll = 2.0;
    assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
    assert_int_equal(tb_analyze_playout(&c, p, &o, &r), 0);
    assert_int_equal(r.underruns, 1);
    assert_near(r.gap_total, 1.0, 1e-12);
    assert_near(r.end, 6.0, 1e-12);
    o.rebuffer = 1;
    assert_int_equal(tb_analyze_playout(&c, p, &o, &r), 0);
    assert_int_equal(r.underruns, 1);
    assert_int_equal(r.interruptions, 1);
    assert_near(r.gap_total, 1.5, 1e-12);
    assert_near(r.gap_max, 1.5, 1e-12);
    assert_near(r.end, 6.5, 1e-12);
    /* Still waiting at the end of the stream: resumes at the last chunk. */
    c.n = 3;
    assert_int_equal(tb_analyze_playout(&c, p, &o, &r), 0);
    assert_int_equal(r.underruns, 1);
    assert_near(r.gap_total, 1.0, 1e-12);
    assert_near(r.end, 4.0, 1e-12);
    tb_playout_destroy(p);
    tb_analyze_chunks_free(&c);
}

/* The ring-driven simulator with rebuffering equals the direct analysis
 * (a ring that never fills), on stalling synthetic streams. */
static void sim_agrees(void **state)
{
    struct tb_synth_spec spec;
    struct tb_stream s;
    char err[256];
    int diff_seen = 0;
    (void)state;
    tb_stream_init(&s);
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct tb_sim_opts so;
        struct tb_sim_result r;
        struct tb_clock clk;
        struct tb_seg *seg;
        struct tb_chunks c;
        struct tb_playout *p;
        struct tb_playout_result a;
        tb_synth_default(&spec);
        spec.tps = 12;
        spec.tokens = 200;
        spec.stall_p = 0.05;
        spec.stall_s = 2.0;
        spec.seed = seed;
        tb_stream_clear(&s);
        assert_int_equal(tb_synth_generate(&spec, &s), 0);
        tb_sim_opts_default(&so);
        so.seg.policy = TB_CHUNK_TOKEN;
        so.play.preroll = 1.0;
        so.play.rebuffer = 1;
        tb_clock_virtual_init(&clk);
        assert_int_equal(tb_sim_run(&s, &so, &clk, NULL, NULL, &r, err, sizeof(err)), 0);
        tb_analyze_chunks_init(&c);
        assert_int_equal(tb_seg_create(&so.seg, &seg), 0);
        assert_int_equal(tb_playout_create(&so.play, NULL, NULL, &p), 0);
        assert_int_equal(tb_analyze_segment(&s, seg, &c), 0);
        assert_int_equal(tb_analyze_playout(&c, p, &so.play, &a), 0);
        assert_int_equal(r.play.underruns, a.underruns);
        assert_true(r.play.end == a.end && r.play.gap_total == a.gap_total);
        so.play.rebuffer = 0;
        assert_int_equal(tb_analyze_playout(&c, p, &so.play, &a), 0);
        diff_seen += a.underruns != r.play.underruns;
        tb_playout_destroy(p);
        tb_seg_destroy(seg);
        tb_analyze_chunks_free(&c);
    }
    assert_true(diff_seen > 0);
    tb_stream_free(&s);
}

/* A ring too small to hold the rebuffer: the drain forces a resume (as it
 * forces a start), so the run ends and every chunk plays. */
static void forced_resume(void **state)
{
    struct tb_stream s;
    struct tb_sim_opts so;
    struct tb_sim_result r;
    struct tb_clock clk;
    char err[256];
    (void)state;
    tb_stream_init(&s);
    /* 50 code points (3.3 s) start playback at once; it runs dry at 3.3;
     * then 3-code-point (0.2 s) events from 5 s: 15 of them would refill
     * the 3 s, but the ring holds 4. */
    static const char first[] = "One two three four five six seven eight nine ten.";
    assert_int_equal(tb_stream_append(&s, 0.0, first, 50, 1, TB_KIND_CONTENT), 0);
    for (int i = 0; i < 40; i++)
        assert_int_equal(tb_stream_append(&s, 5.0 + 0.01 * i, " w.", 3, 1, TB_KIND_CONTENT), 0);
    tb_sim_opts_default(&so);
    so.seg.policy = TB_CHUNK_TOKEN;
    so.play.preroll = 3.0;
    so.play.rebuffer = 1;
    so.ring_slots = 4;
    tb_clock_virtual_init(&clk);
    assert_int_equal(tb_sim_run(&s, &so, &clk, NULL, NULL, &r, err, sizeof(err)), 0);
    assert_int_equal(r.play.chunks, 41);
    assert_true(r.forced_start);
    assert_true(r.play.underruns >= 1);
    assert_true(r.play.end >= r.play.ttfa + r.play.speech - 1e-9);
    tb_stream_free(&s);
}

int tb_test_rebuffer(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_hand),
        cmocka_unit_test(oracle_random),
        cmocka_unit_test(sim_agrees),
        cmocka_unit_test(forced_resume),
    };
    return TB_RUN_GROUP("rebuffer", tests);
}
