/*
 * test_preroll.c - the gap-free pre-roll of `sweep --target-gapless` and
 * `--tts-draws` (tb_sweep_trace_preroll, tb_draws_gapless_preroll,
 * tb_playout_gapless_preroll) against the path they replaced, kept here
 * as the reference: every probe a whole playout added afresh at that
 * pre-roll and finished with the minimum-TPS search, bisected over
 * (0, ceil(1000 S_m)] ms.  Random streams with and without a TTS stage,
 * the audio streamed and whole, as recorded and re-timed: the same doubles.
 * And a sweep point's playout, which searches the minimum TPS alone
 * (no_speedup), against the one that searches the speed-up too.
 */
#include <math.h>
#include <stdint.h>

#include "tests.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/draws.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/sweep.h"
#include "ttsbuf/ttslat.h"
#include "ttsbuf/voice.h"

#define CASES 120

/* --------------------------------------------------- the old path, kept */

/* One full playout (the searches included), re-timed to tps when tps > 0:
 * its underruns and S_m. */
static int ref_play(const struct tb_chunks *c, double a0, uint64_t t0, double tps,
                    const struct tb_playout_opts *o, double *speech)
{
    struct tb_playout_result r;
    struct tb_playout *p;
    assert_int_equal(tb_playout_create(o, NULL, NULL, &p), 0);
    if (tps <= 0.0) {
        assert_int_equal(tb_analyze_playout(c, p, o, &r), 0);
    } else {
        for (size_t j = 0; j < c->n; j++)
            assert_int_equal(
                tb_playout_add(p, a0 + (double)(c->v[j].tok - t0) / tps, c->v[j].tok, c->v[j].cps),
                0);
        assert_int_equal(tb_playout_finish(p), 0);
        tb_playout_result(p, &r);
    }
    tb_playout_destroy(p);
    *speech = r.speech;
    return r.underruns == 0;
}

static double ref_preroll_for_q(const struct tb_chunks *c, size_t q, double wpm)
{
    uint64_t cps = 0;
    if (q <= 1)
        return 0.0;
    for (size_t j = 0; j + 1 < q; j++)
        cps += c->v[j].cps;
    return floor(tb_voice_seconds(cps, wpm) * 1000.0 + 1.0) / 1000.0;
}

/* The old tb_sweep_trace_preroll (and, with tps 0, the old draws'). */
static double ref_preroll(const struct tb_chunks *c, double a0, uint64_t t0, double tps,
                          const struct tb_playout_opts *o)
{
    struct tb_playout_opts po = *o;
    double speech;
    po.rebuffer = 0;
    if (tb_playout_has_stage(&po)) {
        uint64_t lo = 0, hi;
        po.preroll = 0.0;
        if (ref_play(c, a0, t0, tps, &po, &speech))
            return 0.0;
        hi = (uint64_t)ceil(speech * 1000.0);
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            po.preroll = (double)mid / 1000.0;
            if (ref_play(c, a0, t0, tps, &po, &speech))
                hi = mid;
            else
                lo = mid;
        }
        return (double)hi / 1000.0;
    }
    size_t lo = 1, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        po.preroll = ref_preroll_for_q(c, mid, po.wpm);
        if (ref_play(c, a0, t0, tps, &po, &speech))
            hi = mid;
        else
            lo = mid + 1;
    }
    return ref_preroll_for_q(c, lo, po.wpm);
}

/* ------------------------------------------------------------ the cases */

/* A random stream of chunks: stalls now and then, 1 to 40 chunks. */
static void random_chunks(struct tb_rng *g, struct tb_chunks *c)
{
    double t = 0.2 * tb_rng_unit(g);
    uint64_t tok = tb_rng_below(g, 3);
    tb_analyze_chunks_init(c);
    for (uint32_t j = 0, m = 1 + tb_rng_below(g, 40); j < m; j++) {
        uint32_t toks = 1 + tb_rng_below(g, 12);
        tok += toks;
        t += toks * 0.1 * tb_rng_unit(g) + (tb_rng_below(g, 8) == 0 ? 2.0 * tb_rng_unit(g) : 0.0);
        assert_int_equal(tb_analyze_chunks_push(c, t, tok, 1 + tb_rng_below(g, 60)), 0);
    }
}

/* Random playout options; stage 0: none, else a TTS stage (a latency
 * drawn per chunk from lat when lat is not NULL), its output whole when
 * whole. */
static void random_opts(struct tb_rng *g, int stage, int whole, struct tb_ttslat *lat,
                        struct tb_playout_opts *o)
{
    tb_playout_opts_default(o);
    o->wpm = 150 + 300 * tb_rng_unit(g);
    o->preroll = tb_rng_below(g, 2) * 2.0 * tb_rng_unit(g); /* ignored by both */
    o->tts_latency = 0.5 * tb_rng_unit(g);
    if (!stage)
        return;
    o->tts_concurrency = (int)tb_rng_below(g, 3);
    o->tts_rtf = tb_rng_below(g, 3) == 0 ? 0.0 : 1.6 * tb_rng_unit(g);
    o->tts_connect = tb_rng_below(g, 2) * 0.3 * tb_rng_unit(g);
    o->tts_output = whole ? TB_TTS_WHOLE : TB_TTS_STREAM;
    if (lat != NULL) {
        o->tts_latency_at = tb_ttslat_at;
        o->tts_latency_ud = lat;
    } else if (o->tts_concurrency == 0 && o->tts_rtf == 0.0 && o->tts_connect == 0.0 && !whole) {
        o->tts_concurrency = 1; /* a stage, whatever was drawn */
    }
}

static void check_same(int n, const char *what, double got, double want)
{
    if (!tb_test_same_bits(got, want))
        fail_msg("case %d (%s): %.17g s, the full-search path %.17g s", n, what, got, want);
}

/* sweep's pre-roll for a target against the old path: no stage, a stage
 * streamed and whole, a constant and a drawn latency, as recorded and
 * re-timed. */
static void sweep_preroll_is_the_full_search(void **state)
{
    struct tb_rng g = {42};
    struct tb_ttslat *lat;
    struct tb_playout *p;
    struct tb_playout_opts def;
    size_t needed = 0;
    char err[256];
    (void)state;
    assert_int_equal(tb_ttslat_create("lognormal:p50=0.3,p90=0.5", 7, &lat, err, sizeof(err)), 0);
    tb_playout_opts_default(&def);
    assert_int_equal(tb_playout_create(&def, NULL, NULL, &p), 0); /* reused, as a worker's */
    for (int n = 0; n < CASES; n++) {
        struct tb_chunks c;
        struct tb_playout_opts o;
        int stage = n % 3 != 0, whole = n % 3 == 2;
        double tps = tb_rng_below(&g, 3) == 0 ? 2.0 + 20.0 * tb_rng_unit(&g) : 0.0;
        double got, want, a0;
        random_chunks(&g, &c);
        random_opts(&g, stage, whole, tb_rng_below(&g, 2) ? lat : NULL, &o);
        a0 = c.v[0].c;
        assert_int_equal(tb_sweep_trace_preroll(&c, a0, c.v[0].tok, tps, p, &o, &got), 0);
        want = ref_preroll(&c, a0, c.v[0].tok, tps, &o);
        check_same(n, stage ? (whole ? "stage, whole" : "stage, stream") : "no stage", got, want);
        needed += want > 0.0;
        tb_analyze_chunks_free(&c);
    }
    assert_true(needed > CASES / 3); /* most cases bisected */
    tb_playout_destroy(p);
    tb_ttslat_destroy(lat);
}

/* --tts-draws' pre-roll: tb_draws_gapless_preroll, and the engine's
 * bisection straight after a full playout at the options' pre-roll (as
 * tb_draws_run does), against the old path. */
static void draws_preroll_is_the_full_search(void **state)
{
    struct tb_rng g = {99};
    size_t needed = 0;
    (void)state;
    for (int n = 0; n < CASES; n++) {
        struct tb_chunks c;
        struct tb_playout_opts o;
        struct tb_playout_result r;
        struct tb_playout *p;
        struct tb_ttslat *lat;
        char err[256];
        double got, after, want;
        assert_int_equal(
            tb_ttslat_create("lognormal:p50=0.2,p90=0.7", tb_rng_next(&g), &lat, err, sizeof(err)),
            0);
        random_chunks(&g, &c);
        random_opts(&g, 1, n % 2, lat, &o);
        assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
        assert_int_equal(tb_draws_gapless_preroll(&c, p, &o, &got), 0);
        assert_int_equal(tb_analyze_playout(&c, p, &o, &r), 0);
        assert_int_equal(tb_playout_gapless_preroll(p, &after), 0);
        want = ref_preroll(&c, 0.0, 0, 0.0, &o);
        check_same(n, n % 2 ? "whole" : "stream", got, want);
        check_same(n, "after a full playout", after, want);
        needed += want > 0.0;
        tb_playout_destroy(p);
        tb_ttslat_destroy(lat);
        tb_analyze_chunks_free(&c);
    }
    assert_true(needed > CASES / 3);
}

/* The probe replays what it can replay, and refuses the rest. */
static void probe_refuses(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p;
    double v = -1.0;
    (void)state;
    tb_playout_opts_default(&o);
    assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
    assert_int_equal(tb_playout_add(p, 0.5, 1, 20), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    assert_int_equal(tb_playout_gapless_preroll(p, &v), TB_EINVAL); /* no stage */
    o.tts_concurrency = 1;
    o.preroll = 5.0;
    assert_int_equal(tb_playout_reset(p, &o), 0);
    assert_int_equal(tb_playout_gapless_preroll(p, &v), TB_EINVAL); /* nothing added */
    assert_int_equal(tb_playout_add(p, 0.5, 1, 20), 0);
    assert_int_equal(tb_playout_gapless_preroll(p, &v), TB_EINVAL); /* not finished */
    assert_int_equal(tb_playout_force_start(p, 0.6), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    assert_int_equal(tb_playout_gapless_preroll(p, &v), TB_EINVAL); /* forced start */
    assert_true(v == -1.0);
    assert_int_equal(tb_playout_reset(p, &o), 0);
    assert_int_equal(tb_playout_add(p, 0.5, 1, 20), 0);
    assert_int_equal(tb_playout_finish_schedule(p), 0);
    assert_int_equal(tb_playout_gapless_preroll(p, &v), 0);
    assert_true(v == 0.0); /* one chunk: it plays whole whenever it starts */
    tb_playout_destroy(p);
}

/* A sweep point's playout (no_speedup): the same min_tps, to the bit,
 * as the full search's, its method and "none" the same; the speed-up
 * not searched (NaN, never 0). */
static void min_tps_alone_is_the_full_search(void **state)
{
    struct tb_rng g = {7};
    struct tb_ttslat *lat;
    size_t searched = 0;
    char err[256];
    (void)state;
    assert_int_equal(tb_ttslat_create("lognormal:p50=0.3,p90=0.5", 11, &lat, err, sizeof(err)), 0);
    for (int n = 0; n < CASES; n++) {
        struct tb_chunks c;
        struct tb_playout_opts o;
        struct tb_playout_result full, alone;
        struct tb_playout *p;
        int stage = n % 3 != 0;
        random_chunks(&g, &c);
        random_opts(&g, stage, n % 3 == 2, tb_rng_below(&g, 2) ? lat : NULL, &o);
        assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
        assert_int_equal(tb_analyze_playout(&c, p, &o, &full), 0);
        o.no_speedup = 1;
        assert_int_equal(tb_playout_reset(p, &o), 0);
        assert_int_equal(tb_analyze_playout(&c, p, &o, &alone), 0);
        if (isnan(full.min_tps))
            assert_true(isnan(alone.min_tps));
        else
            check_same(n, "min_tps", alone.min_tps, full.min_tps);
        assert_int_equal(alone.min_tps_none, full.min_tps_none);
        assert_int_equal(alone.min_tps_method, full.min_tps_method);
        assert_true(isnan(alone.speedup));
        assert_int_equal(alone.underruns, full.underruns);
        check_same(n, "gap_total", alone.gap_total, full.gap_total);
        searched += stage && full.min_tps > 0.0;
        tb_playout_destroy(p);
        tb_analyze_chunks_free(&c);
    }
    assert_true(searched > CASES / 4);
    tb_ttslat_destroy(lat);
    {
        /* One chunk: no rate to need (0), and still no speed-up (NaN). */
        struct tb_playout_opts o;
        struct tb_playout_result r;
        struct tb_playout *p;
        tb_playout_opts_default(&o);
        o.tts_concurrency = 1;
        o.no_speedup = 1;
        assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
        assert_int_equal(tb_playout_add(p, 0.5, 1, 20), 0);
        assert_int_equal(tb_playout_finish(p), 0);
        tb_playout_result(p, &r);
        assert_true(r.min_tps == 0.0);
        assert_true(isnan(r.speedup));
        tb_playout_destroy(p);
    }
}

int tb_test_preroll(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sweep_preroll_is_the_full_search),
        cmocka_unit_test(draws_preroll_is_the_full_search),
        cmocka_unit_test(probe_refuses),
        cmocka_unit_test(min_tps_alone_is_the_full_search),
    };
    return TB_RUN_GROUP("preroll", tests);
}
