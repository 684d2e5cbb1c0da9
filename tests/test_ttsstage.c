/*
 * test_ttsstage.c - the playout model's TTS stage (connect latency,
 * per-chunk latency, concurrency, real-time factor) against an oracle
 * written straight from the rule in playout.h, sharing no code with the
 * engine:
 *
 *   b_j = max(c_j, b_{j-1}, d_{j-N}) (in order, on a free slot), f_j =
 *   b_j + L_j (+ K), d_j = f_j + R_j D_j, and with a whole output f_j =
 *   d_j, all of the chunk's audio at once; a measured TTS's recorded b_j,
 *   f_j, d_j at the stream's own times;
 *   s_1 = max(h_1, the first t with A(t) >= min(P, S_m)), found by
 *   bisection over A evaluated term by term (the engine sweeps sorted
 *   breakpoints, online); then a frame-level player walks every frame of
 *   every chunk in one loop (R_j <= 1 or whole: one frame a chunk, ready at
 *   f_j; R_j > 1: 20 ms frames ready at f_j + R_j min((i+1) F, D_j)),
 *   splitting each silence into the text's and the engine's share.  R_j is
 *   the constant R, or the chunk's own through the RTF hook.
 *
 * The minimum TPS and speed-up against a rate scan over the oracle: the
 * answer is gap-free and a hair above it, not a hair below; every rate of
 * a dense grid (ratio 1.03, up to 64x) above it is gap-free; "none"
 * exactly when the infinite rate leaves a gap.  Random
 * traces x concurrency 0 (unlimited) to 4 x R in {0, 0.1, 0.5, 1, 1.5} x
 * per-chunk latencies through the hook x connect x pre-roll x the output
 * streamed or whole; and random
 * traces with a real-time factor per chunk (below and above 1 in one
 * stream) and timed durations, as a measured TTS replays.  Plus the
 * cases by hand: a mid-stream stall no rate removes, the stream that shows
 * "no gap" is not monotone in the rate, the frame player's stalls, a slow
 * chunk after a fast one, the split without a stage, bad options and bad
 * hooks, a constant RTF hook against the constant, a measured log
 * replayed (tb_playout_opts_measured) at its recorded times, a slot freed
 * early that waits for the chunk before it, and a whole output's first
 * audio.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/ttsmeas.h"

#define MAXC 12
#define CASES 3000
#define F TB_FRAME_S

struct tcase {
    size_t m;
    double c[MAXC];
    uint64_t tok[MAXC];
    uint32_t cps[MAXC];
    double lat[MAXC]; /* L_j, read by the hook when use_hook */
    int use_hook;
    double rj[MAXC]; /* R_j, read by the RTF hook when rtf_hook */
    int rtf_hook;
    double dj[MAXC]; /* D_j, added timed when timed */
    int timed;
    double lconst, connect, rtf, pre, wpm;
    int n;
    int whole; /* the output: all of a chunk's audio at d_j */
    /* A measured TTS's recorded b_j, f_j, d_j, played at the trace's own
     * times when rec (the times hook). */
    double rb[MAXC], rf[MAXC], rg[MAXC];
    int rec;
};

struct ores {
    double ttfa, end, gap_total, gap_llm, gap_tts, gap_max, worst;
    uint32_t underruns, interruptions;
    double start[MAXC], fin[MAXC], gap[MAXC], gap_llm_j[MAXC];
};

static double dur(const struct tcase *t, size_t j)
{
    return t->timed ? t->dj[j] : (double)t->cps[j] * 10.0 / t->wpm;
}

static double rtf_of(const struct tcase *t, size_t j)
{
    return t->rtf_hook ? t->rj[j] : t->rtf;
}

/* The rate chunk j's audio arrives at from its first audio: R_j, or 0
 * when the output is whole. */
static double arrives(const struct tcase *t, size_t j)
{
    return t->whole ? 0.0 : rtf_of(t, j);
}

/* A(t): the audio produced by t, term by term. */
static double produced(const struct tcase *t, const double *f, const double *g, double at)
{
    double a = 0.0;
    for (size_t j = 0; j < t->m; j++) {
        double d = dur(t, j), r = arrives(t, j);
        if (at >= g[j] || (r == 0.0 && at >= f[j]))
            a += d;
        else if (at > f[j])
            a += (at - f[j]) / r;
    }
    return a;
}

static void oracle_silence(struct ores *o, size_t j, double gap, double llm)
{
    if (!(gap > 0.0))
        return;
    if (gap > o->worst)
        o->worst = gap;
    if (gap <= TB_GAP_MIN_S)
        return;
    llm = llm < 0.0 ? 0.0 : llm > gap ? gap : llm;
    o->underruns++;
    o->interruptions += gap >= TB_INTERRUPT_S;
    o->gap_total += gap;
    o->gap_max = gap > o->gap_max ? gap : o->gap_max;
    o->gap_llm += llm;
    o->gap_tts += gap - llm;
    o->gap[j] += gap;
    o->gap_llm_j[j] += llm;
}

/* The model over arrays, with closing times c; own: they are the
 * trace's own (a record's times then stand). */
static void oracle(const struct tcase *t, const double *c, int own, struct ores *o)
{
    double b[MAXC], f[MAXC] = {0}, g[MAXC], S = 0.0, th, h1, ta = -INFINITY, p;
    memset(o, 0, sizeof(*o));
    for (size_t j = 0; j < t->m; j++) {
        double l = (t->use_hook ? t->lat[j] : t->lconst) + (j == 0 ? t->connect : 0.0);
        b[j] = c[j];
        if (j > 0 && b[j - 1] > b[j])
            b[j] = b[j - 1];
        if (t->n > 0 && j >= (size_t)t->n && g[j - (size_t)t->n] > b[j])
            b[j] = g[j - (size_t)t->n];
        f[j] = b[j] + l;
        g[j] = f[j] + rtf_of(t, j) * dur(t, j);
        if (t->whole)
            f[j] = g[j];
        if (own && t->rec) {
            b[j] = t->rb[j];
            f[j] = t->rf[j];
            g[j] = t->rg[j];
        }
        S += dur(t, j);
    }
    th = t->pre < S ? t->pre : S;
    h1 = f[0] + (arrives(t, 0) > 1.0 ? arrives(t, 0) * fmin(F, dur(t, 0)) : 0.0);
    if (th > 0.0) {
        double lo = -1e9, hi = -1e9;
        for (size_t j = 0; j < t->m; j++)
            hi = g[j] > hi ? g[j] : hi;
        for (int i = 0; i < 300; i++) {
            double mid = lo + (hi - lo) / 2;
            if (produced(t, f, g, mid) >= th)
                hi = mid;
            else
                lo = mid;
        }
        ta = hi;
    }
    o->ttfa = h1 > ta ? h1 : ta;
    p = o->ttfa;
    for (size_t j = 0; j < t->m; j++) {
        double d = dur(t, j), r = arrives(t, j);
        int frames = r > 1.0;
        for (uint64_t i = 0; i == 0 || (frames && (double)i * F < d); i++) {
            double ready = frames ? f[j] + r * fmin((double)(i + 1) * F, d) : f[j];
            double len = frames ? fmin((double)(i + 1) * F, d) - (double)i * F : d;
            double st;
            if (d == 0.0) {
                ready = f[j];
                len = 0.0;
            }
            st = j == 0 && i == 0 ? o->ttfa : ready > p ? ready : p;
            if (j > 0 || i > 0)
                oracle_silence(o, j, st - p, i == 0 ? c[j] - p : 0.0);
            if (i == 0)
                o->start[j] = st;
            p = st + len;
        }
        o->fin[j] = p;
    }
    o->end = p;
}

/* Whether the trace re-timed to lambda (by tokens, or by time) is
 * gap-free in the oracle. */
static int oracle_free(const struct tcase *t, double lambda, int by_time)
{
    double c[MAXC];
    struct ores o;
    for (size_t j = 0; j < t->m; j++) {
        double u = by_time ? t->c[j] - t->c[0] : (double)(t->tok[j] - t->tok[0]);
        c[j] = t->c[0] + (isinf(lambda) ? 0.0 : u / lambda);
    }
    oracle(t, c, 0, &o);
    return o.worst <= TB_SEARCH_EPS;
}

/* --------------------------------------------------------- the engine */

static double hook(void *ud, uint32_t j)
{
    const struct tcase *t = ud;
    return t->lat[j - 1];
}

static double rtf_hook(void *ud, uint32_t j)
{
    const struct tcase *t = ud;
    return t->rj[j - 1];
}

static int times_hook(void *ud, uint32_t j, double *b, double *f, double *d)
{
    const struct tcase *t = ud;
    *b = t->rb[j - 1];
    *f = t->rf[j - 1];
    *d = t->rg[j - 1];
    return 0;
}

struct seen {
    struct tb_play v[MAXC];
    size_t n;
};

static void on_play(void *ud, const struct tb_play *p)
{
    struct seen *s = ud;
    if (s->n == MAXC)
        fail_msg("more than %d schedules", MAXC);
    s->v[s->n++] = *p;
}

static void opts_of(const struct tcase *t, struct tb_playout_opts *o)
{
    tb_playout_opts_default(o);
    o->wpm = t->wpm;
    o->tts_latency = t->lconst;
    o->preroll = t->pre;
    o->tts_connect = t->connect;
    o->tts_concurrency = t->n;
    o->tts_rtf = t->rtf;
    o->tts_output = t->whole ? TB_TTS_WHOLE : TB_TTS_STREAM;
    if (t->rec) {
        o->tts_times_at = times_hook;
        o->tts_times_ud = (void *)t;
    }
    if (t->use_hook) {
        o->tts_latency_at = hook;
        o->tts_latency_ud = (void *)t;
    }
    if (t->rtf_hook) {
        o->tts_rtf_at = rtf_hook;
        o->tts_rtf_ud = (void *)t;
    }
}

/* The engine over t, with the RTF hook fn when not NULL. */
static void engine_rtf(const struct tcase *t, struct seen *s, struct tb_playout_result *r,
                       tb_tts_rtf_fn fn)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    opts_of(t, &o);
    if (fn != NULL)
        o.tts_rtf_at = fn;
    s->n = 0;
    assert_int_equal(tb_playout_create(&o, on_play, s, &p), 0);
    for (size_t j = 0; j < t->m; j++)
        assert_int_equal(t->timed ? tb_playout_add_timed(p, t->c[j], t->tok[j], t->cps[j], t->dj[j])
                                  : tb_playout_add(p, t->c[j], t->tok[j], t->cps[j]),
                         0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, r);
    tb_playout_destroy(p);
}

static void engine(const struct tcase *t, struct seen *s, struct tb_playout_result *r)
{
    engine_rtf(t, s, r, NULL);
}

/* ------------------------------------------------------ random cases */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static double uni(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static void random_case(struct tcase *t)
{
    static const double rtfs[] = {0.0, 0.1, 0.5, 1.0, 1.5};
    static const double pres[] = {0.0, 0.35, 1.05, 2.05};
    double c = uni();
    uint64_t tok = (uint64_t)(uni() * 5);
    memset(t, 0, sizeof(*t));
    t->m = 1 + (size_t)(uni() * MAXC);
    t->wpm = 100.0;
    for (size_t j = 0; j < t->m; j++) {
        c += uni() < 0.15 ? 1.0 + 2.0 * uni() : 0.6 * uni();
        tok += 1 + (uint64_t)(uni() * 6);
        t->c[j] = c;
        t->tok[j] = tok;
        t->cps[j] = 1 + (uint32_t)(uni() * 25);
        t->lat[j] = uni() < 0.1 ? 1.0 + uni() : 0.8 * uni();
    }
    t->use_hook = uni() < 0.6;
    t->lconst = uni() < 0.5 ? 0.0 : 0.2;
    t->connect = uni() < 0.5 ? 0.0 : 0.6 * uni();
    t->n = (int)(uni() * 5);
    t->rtf = rtfs[(int)(uni() * 5)];
    t->pre = pres[(int)(uni() * 4)];
    t->whole = uni() < 0.3;
}

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-7 * (1.0 + fabs(a)))

static void check_schedule(size_t k, const struct tcase *t, const struct seen *s,
                           const struct tb_playout_result *r, const struct ores *o)
{
    if (r->underruns != o->underruns || r->interruptions != o->interruptions ||
        !NEAR(r->ttfa, o->ttfa) || !NEAR(r->end, o->end) || !NEAR(r->gap_total, o->gap_total) ||
        !NEAR(r->gap_llm, o->gap_llm) || !NEAR(r->gap_tts, o->gap_tts) ||
        !NEAR(r->gap_max, o->gap_max) || s->n != t->m)
        fail_msg("case %zu (m %zu N %d R %g P %g K %g whole %d): engine %u gaps %.9g (llm %.9g) "
                 "ttfa %.9g end %.9g; oracle %u gaps %.9g (llm %.9g) ttfa %.9g end %.9g",
                 k, t->m, t->n, t->rtf, t->pre, t->connect, t->whole, r->underruns, r->gap_total,
                 r->gap_llm, r->ttfa, r->end, o->underruns, o->gap_total, o->gap_llm, o->ttfa,
                 o->end);
    assert_true(NEAR(r->gap_llm + r->gap_tts, r->gap_total));
    for (size_t j = 0; j < t->m; j++) {
        const struct tb_play *p = &s->v[j];
        if (p->chunk != j + 1 || !NEAR(p->start, o->start[j]) || !NEAR(p->end, o->fin[j]) ||
            !NEAR(p->gap, o->gap[j]) || !NEAR(p->gap_llm, o->gap_llm_j[j]) ||
            !NEAR(p->gap_llm + p->gap_tts, p->gap))
            fail_msg("case %zu chunk %zu: engine %.9g..%.9g gap %.9g, oracle %.9g..%.9g gap %.9g",
                     k, j + 1, p->start, p->end, p->gap, o->start[j], o->fin[j], o->gap[j]);
    }
}

/* The band of rates with a gap around l (which has one), walked in
 * steps of 0.1%: its ratio hi / lo. */
static double gap_band(const struct tcase *t, double l, int by_time)
{
    double lo = l, hi = l;
    while (!oracle_free(t, lo / 1.001, by_time))
        lo /= 1.001;
    while (!oracle_free(t, hi * 1.001, by_time))
        hi *= 1.001;
    return hi / lo;
}

/* The search's answer x against the oracle: the grid above it when
 * certified is set; else (a scan) any rate of the grid with a gap must
 * lie in a band narrower than the scan's step, the hole the scan admits
 * it can miss (counted in *holes). */
static void check_rate(size_t k, const struct tcase *t, double x, int none, int certified,
                       int by_time, size_t *holes)
{
    const char *what = by_time ? "speed-up" : "min TPS";
    if (none) {
        if (oracle_free(t, INFINITY, by_time))
            fail_msg("case %zu: %s none, yet the infinite rate is gap-free", k, what);
        return;
    }
    if (!oracle_free(t, INFINITY, by_time))
        fail_msg("case %zu: %s %.12g, yet the infinite rate has a gap", k, what, x);
    if (x == 0.0) {
        for (double l = 1e-3; l < 1e4; l *= 3.7)
            if (!oracle_free(t, l, by_time))
                fail_msg("case %zu: %s 0, yet rate %g has a gap", k, what, l);
        return;
    }
    if (!oracle_free(t, x * (1 + 1e-6), by_time))
        fail_msg("case %zu: %s %.12g, yet a hair above has a gap", k, what, x);
    if (oracle_free(t, x * (1 - 1e-6), by_time))
        fail_msg("case %zu: %s %.12g, yet a hair below is gap-free", k, what, x);
    for (double l = x * (1 + 1e-6); l < x * 64; l *= 1.03) {
        double band;
        if (oracle_free(t, l, by_time))
            continue;
        if (certified)
            fail_msg("case %zu: %s %.12g certified, yet rate %.12g has a gap", k, what, x, l);
        band = gap_band(t, l, by_time);
        if (!(band < exp2(1.0 / 8)))
            fail_msg("case %zu: %s %.12g by scan, yet rates around %.12g (x %.4g) have a gap", k,
                     what, x, l, band);
        (*holes)++;
        return;
    }
}

static void oracle_agrees_on_random_cases(void **state)
{
    size_t scans = 0, nones = 0, gaps = 0, wholes = 0, waited = 0;
    (void)state;
    rng = 0x9e3779b97f4a7c15u;
    for (size_t k = 0; k < CASES; k++) {
        struct tcase t;
        struct seen s;
        struct tb_playout_result r;
        struct ores o;
        random_case(&t);
        engine(&t, &s, &r);
        oracle(&t, t.c, 1, &o);
        check_schedule(k, &t, &s, &r, &o);
        assert_true(r.min_tps_none == (isnan(r.min_tps) != 0));
        /* The scan is not certified (a gap-free stretch narrower than its
         * step could hide), yet on these cases it agrees with the grid. */
        check_rate(k, &t, r.min_tps, r.min_tps_none, 1, 0, NULL);
        check_rate(k, &t, r.speedup, r.min_tps_none, 1, 1, NULL);
        scans += r.min_tps_method == TB_MIN_TPS_SCAN;
        nones += (size_t)r.min_tps_none;
        gaps += r.underruns > 0;
        wholes += (size_t)t.whole;
        /* A chunk whose slot was free before the chunk before it went:
         * the in-order rule held it back. */
        for (size_t j = 1; j < t.m && t.n > 1; j++)
            if (j >= (size_t)t.n && s.v[j].begin == s.v[j - 1].begin &&
                s.v[j - t.n].done < s.v[j - 1].begin && t.c[j] < s.v[j - 1].begin) {
                waited++;
                break;
            }
    }
    /* The mix is not degenerate: every kind of answer occurred, in both
     * outputs, and the in-order rule bound. */
    print_message("ttsstage: %d cases, %zu with gaps, %zu none, %zu by scan, %zu whole, %zu held "
                  "back in order\n",
                  CASES, gaps, nones, scans, wholes, waited);
    assert_true(gaps > CASES / 10 && nones > CASES / 20 && scans > CASES / 20);
    assert_true(wholes > CASES / 5 && waited > CASES / 50);
}

/*
 * A measured TTS's chunks: each its own real-time factor (0, below 1, 1,
 * above 1, in one stream), first-byte latency and duration (timed: some
 * 0, some shorter than a frame), at concurrency 0 to 3.  The constant R
 * is a decoy the hook must override.
 */
static void random_rtf_case(struct tcase *t)
{
    static const double pres[] = {0.0, 0.35, 1.05, 2.05};
    static const double decoys[] = {0.0, 0.5, 2.0};
    double c = uni();
    uint64_t tok = (uint64_t)(uni() * 5);
    memset(t, 0, sizeof(*t));
    t->m = uni() < 0.03 ? 0 : 1 + (size_t)(uni() * MAXC);
    t->wpm = 100.0;
    t->timed = 1;
    t->rtf_hook = 1;
    for (size_t j = 0; j < t->m; j++) {
        double x = uni();
        c += uni() < 0.15 ? 1.0 + 2.0 * uni() : 0.6 * uni();
        tok += 1 + (uint64_t)(uni() * 6);
        t->c[j] = c;
        t->tok[j] = tok;
        t->cps[j] = 1 + (uint32_t)(uni() * 25);
        t->lat[j] = uni() < 0.1 ? 1.0 + uni() : 0.8 * uni();
        t->dj[j] = x < 0.08 ? 0.0 : x < 0.2 ? 0.03 * uni() : 0.05 + 1.2 * uni();
        x = uni();
        t->rj[j] = x < 0.12 ? 0.0 : x < 0.22 ? 1.0 : x < 0.6 ? uni() : 1.0 + 2.0 * uni();
    }
    t->use_hook = uni() < 0.8;
    t->lconst = uni() < 0.5 ? 0.0 : 0.2;
    t->connect = uni() < 0.5 ? 0.0 : 0.6 * uni();
    t->n = (int)(uni() * 4);
    t->rtf = decoys[(int)(uni() * 3)];
    t->pre = pres[(int)(uni() * 4)];
    t->whole = uni() < 0.25;
}

static void oracle_agrees_with_rtf_per_chunk(void **state)
{
    size_t scans = 0, nones = 0, gaps = 0, mixed = 0, slow = 0, holes = 0;
    (void)state;
    rng = 0x243f6a8885a308d3u;
    for (size_t k = 0; k < CASES; k++) {
        struct tcase t;
        struct seen s;
        struct tb_playout_result r;
        struct ores o;
        int lo = 0, hi = 0, cert;
        random_rtf_case(&t);
        engine(&t, &s, &r);
        oracle(&t, t.c, 1, &o);
        check_schedule(k, &t, &s, &r, &o);
        assert_true(r.min_tps_none == (isnan(r.min_tps) != 0));
        cert = r.min_tps_method != TB_MIN_TPS_SCAN;
        check_rate(k, &t, r.min_tps, r.min_tps_none, cert, 0, &holes);
        check_rate(k, &t, r.speedup, r.min_tps_none, cert, 1, &holes);
        /* Certified exactly when chunk 1's own R_1 keeps the pre-roll
         * from binding (playout.h). */
        if (t.m >= 2 && !r.min_tps_none) {
            double d1 = t.dj[0], r1 = t.whole ? 0.0 : t.rj[0], th = t.pre, S = 0.0;
            double own = r1 == 0.0 ? d1 : r1 > 1.0 ? fmin(F, d1) : 0.0;
            for (size_t j = 0; j < t.m; j++)
                S += t.dj[j];
            th = th < S ? th : S;
            assert_int_equal(r.min_tps_method, th <= own ? TB_MIN_TPS_BISECT : TB_MIN_TPS_SCAN);
        }
        for (size_t j = 0; j < t.m && !t.whole; j++) {
            lo |= t.rj[j] <= 1.0 && t.dj[j] > 0.0;
            hi |= t.rj[j] > 1.0 && t.dj[j] > 0.0;
            slow += t.rj[j] > 1.0 && s.v[j].gap_tts > 0.0;
        }
        mixed += lo && hi;
        scans += r.min_tps_method == TB_MIN_TPS_SCAN;
        nones += (size_t)r.min_tps_none;
        gaps += r.underruns > 0;
    }
    print_message("ttsstage: %d cases with R_j per chunk, %zu mixing R_j <= 1 and > 1, %zu with "
                  "gaps, %zu none, %zu by scan (%zu answers with a narrow hole above)\n",
                  CASES, mixed, gaps, nones, scans, holes);
    assert_true(mixed > CASES / 3 && gaps > CASES / 10 && nones > CASES / 20 &&
                scans > CASES / 20 && slow > CASES / 10);
}

/* --------------------------------------------------------- by hand */

static double stall_hook(void *ud, uint32_t j)
{
    (void)ud;
    return j == 3 ? 2.0 : 0.1;
}

/*
 * One streaming context (N = 1) synthesizing in real time (R = 1), 0.1 s
 * to answer, but 2 s for chunk 3.  Every text is there early (2 s chunks
 * closing 0.1 s apart from 1.0): chunk 2 begins when chunk 1's synthesis
 * ends (3.1) and answers at 3.2, 0.1 s after chunk 1 stops; chunk 3
 * begins at 5.2 and answers at 7.2, 2 s after chunk 2 stops; chunks 4 and
 * 5 again 0.1 s late.  Every gap is the engine's, and no LLM rate
 * removes them: none.
 */
static void mid_stream_stall_is_tts_and_none(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct seen s = {.n = 0};
    (void)state;
    tb_playout_opts_default(&o);
    o.wpm = 100;
    o.tts_concurrency = 1;
    o.tts_rtf = 1.0;
    o.tts_latency_at = stall_hook;
    assert_int_equal(tb_playout_create(&o, on_play, &s, &p), 0);
    for (uint32_t j = 0; j < 5; j++)
        assert_int_equal(tb_playout_add(p, 1.0 + 0.1 * j, (uint64_t)10 * j, 20), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(s.n, 5);
    assert_near(r.ttfa, 1.1, 1e-12);
    assert_near(s.v[1].begin, 3.1, 1e-12);
    assert_near(s.v[1].gap, 0.1, 1e-12);
    assert_near(s.v[2].begin, 5.2, 1e-12);
    assert_near(s.v[2].ready, 7.2, 1e-12);
    assert_near(s.v[2].gap, 2.0, 1e-12);
    assert_near(s.v[2].gap_tts, 2.0, 1e-12); /* its text came at 1.2 */
    assert_near(s.v[2].gap_llm, 0.0, 1e-12);
    assert_int_equal(r.underruns, 4);
    assert_int_equal(r.interruptions, 1);
    assert_near(r.gap_total, 2.3, 1e-12);
    assert_near(r.gap_tts, 2.3, 1e-12);
    assert_near(r.gap_llm, 0.0, 1e-12);
    assert_int_equal(r.min_tps_none, 1);
    assert_true(isnan(r.min_tps) && isnan(r.speedup));
    tb_playout_destroy(p);
}

static double mono_hook(void *ud, uint32_t j)
{
    (void)ud;
    return j == 2 ? 1.0 : 0.0;
}

/*
 * The stream of ttsbuf-model(7) that shows "no gap" is not monotone in
 * the rate when the pre-roll binds: D = 0.1, 0.1, 2 s, L = 0, 1, 0, P = 1,
 * one token a chunk.  At 1 token/s the pre-roll waits for chunk 3 (t = 2),
 * by when chunk 2's audio is there; at 2 tokens/s chunk 3's audio fills
 * the pre-roll at 1 s, chunk 1 plays, and chunk 2 (ready 1.5) leaves a
 * 0.4 s gap; at an infinite rate a 0.9 s one.  So: none.
 */
static void no_gap_is_not_monotone_with_preroll(void **state)
{
    struct tcase t = {.m = 3,
                      .c = {0, 1, 2},
                      .tok = {0, 1, 2},
                      .cps = {1, 1, 20},
                      .lat = {0, 1, 0},
                      .use_hook = 1,
                      .pre = 1.0,
                      .wpm = 100};
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    (void)state;
    assert_true(oracle_free(&t, 1.0, 0));
    assert_false(oracle_free(&t, 2.0, 0));
    assert_false(oracle_free(&t, INFINITY, 0));
    opts_of(&t, &o);
    o.tts_latency_at = mono_hook;
    assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
    for (size_t j = 0; j < 3; j++)
        assert_int_equal(tb_playout_add(p, t.c[j], t.tok[j], t.cps[j]), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(r.underruns, 0); /* the trace itself plays clean */
    assert_near(r.ttfa, 2.0, 1e-12);
    assert_int_equal(r.min_tps_method, TB_MIN_TPS_SCAN);
    assert_int_equal(r.min_tps_none, 1);
    tb_playout_destroy(p);
}

/*
 * R = 2, one 0.1 s chunk (5 frames) answering at once: frame i is ready at
 * 0.04 (i + 1); playback starts with frame 0 at 0.04 and then stalls
 * 20 ms before each of the 4 others, all the engine's.
 */
static void frame_player_stalls_when_dry(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct seen s = {.n = 0};
    (void)state;
    tb_playout_opts_default(&o);
    o.wpm = 100;
    o.tts_rtf = 2.0;
    assert_int_equal(tb_playout_create(&o, on_play, &s, &p), 0);
    assert_int_equal(tb_playout_add(p, 0.0, 0, 1), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_near(r.ttfa, 0.04, 1e-12);
    assert_near(r.end, 0.22, 1e-12);
    assert_int_equal(r.underruns, 4);
    assert_near(r.gap_total, 0.08, 1e-12);
    assert_near(r.gap_tts, 0.08, 1e-12);
    assert_near(r.gap_max, 0.02, 1e-12);
    assert_near(s.v[0].gap, 0.08, 1e-12);
    assert_near(s.v[0].done, 0.2, 1e-12);
    assert_int_equal(r.min_tps_none, 1); /* one chunk, and it stalls */
    tb_playout_destroy(p);
}

/*
 * Without a stage (v1), the split: L = 0.2, chunk 2's text 0.3 s late
 * (closing at 1.3 after chunk 1 ends at 1.0+0.2): gap 0.3 + ... worked
 * out: chunk 1 plays 0.7..1.2, chunk 2 ready 1.5: gap 0.3, of which the
 * text's 1.3 - 1.2 = 0.1 and the latency's 0.2.
 */
static void split_without_stage(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct seen s = {.n = 0};
    (void)state;
    tb_playout_opts_default(&o);
    o.wpm = 100;
    o.tts_latency = 0.2;
    assert_int_equal(tb_playout_create(&o, on_play, &s, &p), 0);
    assert_int_equal(tb_playout_add(p, 0.5, 0, 5), 0);
    assert_int_equal(tb_playout_add(p, 1.3, 4, 3), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(r.underruns, 1);
    assert_near(r.gap_total, 0.3, 1e-12);
    assert_near(r.gap_llm, 0.1, 1e-12);
    assert_near(r.gap_tts, 0.2, 1e-12);
    assert_near(s.v[1].gap_llm, 0.1, 1e-12);
    assert_near(s.v[1].begin, 1.3, 1e-12);
    assert_near(s.v[1].done, 1.5, 1e-12);
    assert_int_equal(r.min_tps_method, TB_MIN_TPS_CLOSED);
    assert_int_equal(r.min_tps_none, 0);
    tb_playout_destroy(p);
}

static double bad_hook(void *ud, uint32_t j)
{
    return j == 2 ? *(const double *)ud : 0.1;
}

static void bad_options_refused(void **state)
{
    static const double bad_l[] = {-0.1, NAN, INFINITY};
    struct tb_playout_opts o, good;
    struct tb_playout *p;
    (void)state;
    tb_playout_opts_default(&good);
    for (int i = 0; i < 9; i++) {
        o = good;
        switch (i) {
        case 0: o.tts_connect = -0.5; break;
        case 1: o.tts_connect = NAN; break;
        case 2: o.tts_connect = INFINITY; break;
        case 3: o.tts_rtf = -1.0; break;
        case 4: o.tts_rtf = NAN; break;
        case 5: o.tts_rtf = INFINITY; break;
        case 6: o.tts_concurrency = -1; break;
        case 7:
            o.tts_concurrency = 1;
            o.rebuffer = 1;
            break; /* not modelled */
        default:
            o.tts_rtf = 0.5;
            o.tts_latency = NAN;
            break;
        }
        p = (struct tb_playout *)&p;
        if (tb_playout_create(&o, NULL, NULL, &p) != TB_EINVAL)
            fail_msg("bad TTS options %d accepted", i);
        assert_null(p);
        assert_int_equal(tb_playout_create(&good, NULL, NULL, &p), 0);
        assert_int_equal(tb_playout_reset(p, &o), TB_EINVAL);
        tb_playout_destroy(p);
    }
    /* A hook that answers a negative, NAN or infinite latency. */
    for (size_t i = 0; i < sizeof(bad_l) / sizeof(bad_l[0]); i++) {
        o = good;
        o.tts_latency_at = bad_hook;
        o.tts_latency_ud = (void *)&bad_l[i];
        assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
        assert_int_equal(tb_playout_add(p, 0.0, 0, 5), 0);
        assert_int_equal(tb_playout_add(p, 0.1, 1, 5), TB_EINVAL);
        tb_playout_destroy(p);
    }
}

static double bad_rtf_hook(void *ud, uint32_t j)
{
    return j == 2 ? *(const double *)ud : 0.5;
}

/* An RTF hook that answers a negative, NAN or infinite R_j: TB_EINVAL at
 * that chunk, as for the latency hook. */
static void bad_rtf_hook_refused(void **state)
{
    static const double bad_r[] = {-0.1, NAN, INFINITY, -INFINITY};
    struct tb_playout_opts o;
    struct tb_playout *p;
    (void)state;
    for (size_t i = 0; i < sizeof(bad_r) / sizeof(bad_r[0]); i++) {
        tb_playout_opts_default(&o);
        o.tts_rtf_at = bad_rtf_hook;
        o.tts_rtf_ud = (void *)&bad_r[i];
        assert_true(tb_playout_has_stage(&o));
        assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
        assert_int_equal(tb_playout_add(p, 0.0, 0, 5), 0);
        assert_int_equal(tb_playout_add_timed(p, 0.1, 1, 5, 0.3), TB_EINVAL);
        tb_playout_destroy(p);
    }
}

static double slow_second(void *ud, uint32_t j)
{
    (void)ud;
    return j == 1 ? 0.5 : 2.0;
}

/*
 * Per-chunk R: two 0.1 s chunks closing at 0, chunk 1 at R = 0.5 (whole,
 * from 0 to 0.1), chunk 2 at R = 2 (frames of 20 ms ready at 0.04,
 * 0.08, ..., 0.2).  Chunk 2 starts at 0.1 with its first three frames
 * long there, plays frame 3 as it completes (0.16) and stalls 20 ms
 * before frame 4 (ready 0.2): one gap, the engine's, and the end at
 * 0.22.  A constant R of 0.5 would play both whole (end 0.2); of 2, frame
 * by frame from 0.04.
 */
static void slow_chunk_after_fast_one_stalls(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct seen s = {.n = 0};
    (void)state;
    tb_playout_opts_default(&o);
    o.wpm = 100;
    o.tts_rtf_at = slow_second;
    assert_int_equal(tb_playout_create(&o, on_play, &s, &p), 0);
    assert_int_equal(tb_playout_add(p, 0.0, 0, 1), 0);
    assert_int_equal(tb_playout_add(p, 0.0, 1, 1), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(s.n, 2);
    assert_near(r.ttfa, 0.0, 1e-12); /* h_1 = f_1: R_1 <= 1 */
    assert_near(s.v[0].end, 0.1, 1e-12);
    assert_near(s.v[0].done, 0.05, 1e-12);
    assert_near(s.v[1].start, 0.1, 1e-12);
    assert_near(s.v[1].done, 0.2, 1e-12);
    assert_near(s.v[1].gap, 0.02, 1e-12);
    assert_near(s.v[1].gap_tts, 0.02, 1e-12);
    assert_near(r.end, 0.22, 1e-12);
    assert_int_equal(r.underruns, 1);
    assert_near(r.gap_tts, 0.02, 1e-12);
    assert_int_equal(r.min_tps_none, 1); /* chunk 2's synthesis alone stalls */
    tb_playout_destroy(p);
}

/*
 * A chunk without audio (a timed D_j = 0) still ends a silence when its
 * synthesis answers late.  N = 1, R = 0, L = 0.5, P = 1: chunk 1 (0.5 s,
 * closing at 0, token 0) answers at 0.5 and plays to 1.0; chunk 2 (no
 * audio, closing at 3, token 10) answers at 3.5: a 2.5 s silence, 2 s of
 * it the text's.  The pre-roll (all of the audio, 0.5 s) does not make
 * every rate gap-free: chunk 2 is in time when c_2 + 0.5 <= 1.0, so the
 * minimum TPS is 10 / 0.5 = 20 tokens/s and the speed-up 3 / 0.5 = 6.
 */
static void silent_chunk_still_needs_a_rate(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    (void)state;
    tb_playout_opts_default(&o);
    o.tts_concurrency = 1;
    o.tts_latency = 0.5;
    o.preroll = 1.0;
    assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
    assert_int_equal(tb_playout_add_timed(p, 0.0, 0, 5, 0.5), 0);
    assert_int_equal(tb_playout_add_timed(p, 3.0, 10, 1, 0.0), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_near(r.ttfa, 0.5, 1e-12);
    assert_int_equal(r.underruns, 1);
    assert_near(r.gap_total, 2.5, 1e-12);
    assert_near(r.gap_llm, 2.0, 1e-12);
    assert_int_equal(r.min_tps_none, 0);
    assert_near(r.min_tps, 20.0, 20.0 * 1e-8);
    assert_near(r.speedup, 6.0, 6.0 * 1e-8);
    tb_playout_destroy(p);
}

static double const_rtf(void *ud, uint32_t j)
{
    (void)j;
    return ((const struct tcase *)ud)->rtf;
}

/* Every field of two schedules or results the same, bit for bit. */
static int same_play(const struct tb_play *a, const struct tb_play *b)
{
    return a->chunk == b->chunk && a->cps == b->cps && tb_test_same_bits(a->ready, b->ready) &&
           tb_test_same_bits(a->begin, b->begin) && tb_test_same_bits(a->done, b->done) &&
           tb_test_same_bits(a->start, b->start) && tb_test_same_bits(a->end, b->end) &&
           tb_test_same_bits(a->gap, b->gap) && tb_test_same_bits(a->gap_llm, b->gap_llm) &&
           tb_test_same_bits(a->gap_tts, b->gap_tts);
}

static int same_schedule(const struct tb_playout_result *a, const struct tb_playout_result *b)
{
    return a->chunks == b->chunks && a->q == b->q && a->underruns == b->underruns &&
           a->interruptions == b->interruptions && tb_test_same_bits(a->ttfa, b->ttfa) &&
           tb_test_same_bits(a->speech, b->speech) && tb_test_same_bits(a->end, b->end) &&
           tb_test_same_bits(a->gap_total, b->gap_total) &&
           tb_test_same_bits(a->gap_max, b->gap_max) && tb_test_same_bits(a->gap_llm, b->gap_llm) &&
           tb_test_same_bits(a->gap_tts, b->gap_tts) &&
           tb_test_same_bits(a->silence_max, b->silence_max);
}

/*
 * An RTF hook answering the constant R for every chunk gives the constant
 * R's numbers exactly, on the random traces: the schedule and the
 * results bit for bit, and the minimum TPS and speed-up too, except where
 * the constant takes the closed form (N = 0, R = 0, no latency hook),
 * which a hook never does: there the search's answer is within its
 * tolerance of the closed form's.  (Options that set no stage at all are
 * v1's model, which a hook would turn into a stage: not compared.)
 */
static void constant_rtf_hook_is_the_constant(void **state)
{
    size_t closed = 0, v1 = 0;
    (void)state;
    rng = 0x13198a2e03707344u;
    for (size_t k = 0; k < CASES / 3; k++) {
        struct tcase t;
        struct seen a, b;
        struct tb_playout_result ra, rb;
        random_case(&t);
        if (t.n == 0 && t.rtf == 0.0 && t.connect == 0.0 && !t.use_hook) {
            v1++; /* no stage: the hook would set one (v1 counts q differently) */
            continue;
        }
        engine(&t, &a, &ra);
        t.rtf_hook = 1;
        engine_rtf(&t, &b, &rb, const_rtf);
        if (!same_schedule(&ra, &rb) || a.n != b.n)
            fail_msg("case %zu (N %d R %g P %g): the hook's schedule differs", k, t.n, t.rtf,
                     t.pre);
        for (size_t j = 0; j < a.n; j++)
            if (!same_play(&a.v[j], &b.v[j]))
                fail_msg("case %zu chunk %zu: the hook's schedule differs", k, j + 1);
        assert_int_equal(ra.min_tps_none, rb.min_tps_none);
        if (ra.min_tps_method == TB_MIN_TPS_CLOSED && rb.min_tps_method != TB_MIN_TPS_CLOSED) {
            closed++;
            assert_true(NEAR(ra.min_tps, rb.min_tps) && NEAR(ra.speedup, rb.speedup));
            continue;
        }
        assert_int_equal(ra.min_tps_method, rb.min_tps_method);
        if (!tb_test_same_bits(ra.min_tps, rb.min_tps) ||
            !tb_test_same_bits(ra.speedup, rb.speedup))
            fail_msg("case %zu: min TPS %.17g / %.17g, speed-up %.17g / %.17g", k, ra.min_tps,
                     rb.min_tps, ra.speedup, rb.speedup);
    }
    assert_true(closed > 0 && v1 < CASES / 10);
}

/* ------------------------------------------------- a measured replay */

/* Appends a record: sent, first byte, end and seconds of 24 kHz audio. */
static struct tb_tts_chunk *record(struct tb_tts_log *l, double sent, double first, double end,
                                   double secs)
{
    struct tb_tts_chunk *c = NULL;
    assert_int_equal(tb_tts_log_add(l, "Hi.", 3, 3, 24000, &c), 0);
    c->sent = sent;
    if (!isnan(first))
        assert_int_equal(tb_tts_chunk_received(c, first, (uint64_t)llround(secs * 48000)), 0);
    c->end = end;
    return c;
}

/*
 * Three records (N = 2): L = 0.3, 0.7, 0.1; R = 0.5, 1.5, 0.4; D = 0.5,
 * 1, 0.25.  The options carry them through the hooks, the durations come
 * from the helper, and the replay at the trace's own times plays the
 * recorded sent, first byte and end exactly (chunk 3 was sent at 2.0,
 * though the model would send it at 1.9, when it closed): the oracle's
 * schedule for the same records, L_j, R_j, D_j; a fourth chunk has no
 * record: TB_EINVAL.
 */
static void measured_log_replays(void **state)
{
    struct tb_tts_log log;
    struct tb_tts_measured ctx;
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct seen s = {.n = 0};
    struct ores want;
    struct tcase t = {.m = 3,
                      .c = {0.9, 1.1, 1.9},
                      .tok = {3, 9, 14},
                      .cps = {3, 3, 3},
                      .lat = {0.3, 0.7, 0.1},
                      .use_hook = 1,
                      .rj = {0.5, 1.5, 0.4},
                      .rtf_hook = 1,
                      .dj = {0.5, 1.0, 0.25},
                      .timed = 1,
                      .n = 2,
                      .wpm = 150,
                      .rb = {1.0, 1.2, 2.0},
                      .rf = {1.3, 1.9, 2.1},
                      .rg = {1.55, 3.4, 2.2},
                      .rec = 1};
    (void)state;
    tb_tts_log_init(&log);
    log.concurrency = 2;
    record(&log, 1.0, 1.3, 1.55, 0.5);
    record(&log, 1.2, 1.9, 3.4, 1.0);
    record(&log, 2.0, 2.1, 2.2, 0.25);
    tb_playout_opts_default(&o);
    o.tts_connect = 0.4; /* the measured L_1 holds the connection: zeroed */
    o.tts_rtf = 3.0;
    assert_int_equal(tb_playout_opts_measured(&o, &ctx, &log), 0);
    assert_int_equal(ctx.bad, 0);
    assert_true(tb_playout_has_stage(&o));
    assert_int_equal(o.tts_concurrency, 2);
    assert_true(o.tts_connect == 0.0 && o.tts_rtf == 0.0 && o.tts_latency == 0.0);
    assert_int_equal(o.tts_output, TB_TTS_STREAM);
    for (uint32_t j = 1; j <= 3; j++) {
        assert_near(o.tts_latency_at(o.tts_latency_ud, j), t.lat[j - 1], 1e-12);
        assert_near(o.tts_rtf_at(o.tts_rtf_ud, j), t.rj[j - 1], 1e-12);
        assert_near(tb_playout_measured_duration(&ctx, j), t.dj[j - 1], 1e-12);
    }
    assert_true(isnan(o.tts_latency_at(o.tts_latency_ud, 4)));
    assert_true(isnan(o.tts_rtf_at(o.tts_rtf_ud, 0)));
    assert_true(isnan(tb_playout_measured_duration(&ctx, 4)));
    assert_int_equal(tb_playout_create(&o, on_play, &s, &p), 0);
    for (uint32_t j = 1; j <= 3; j++)
        assert_int_equal(tb_playout_add_timed(p, t.c[j - 1], t.tok[j - 1], t.cps[j - 1],
                                              tb_playout_measured_duration(&ctx, j)),
                         0);
    assert_int_equal(tb_playout_add_timed(p, 2.5, 20, 3, 0.1), TB_EINVAL);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    oracle(&t, t.c, 1, &want);
    check_schedule(0, &t, &s, &r, &want);
    for (size_t j = 0; j < 3; j++)
        if (!tb_test_same_bits(s.v[j].begin, log.c[j].sent) ||
            !tb_test_same_bits(s.v[j].ready, log.c[j].first_byte) ||
            !tb_test_same_bits(s.v[j].done, log.c[j].end))
            fail_msg("chunk %zu: sent %.17g first %.17g end %.17g, recorded %.17g %.17g %.17g",
                     j + 1, s.v[j].begin, s.v[j].ready, s.v[j].done, log.c[j].sent,
                     log.c[j].first_byte, log.c[j].end);
    tb_playout_destroy(p);
    tb_tts_log_free(&log);
}

static double slow_first(void *ud, uint32_t j)
{
    (void)ud;
    return j == 1 ? 1.0 : 0.1;
}

/*
 * In order: N = 2, R = 0, chunk 1 answers in 1 s, the others in 0.1 s,
 * every text there early (closing at 0, 0.1, 0.2, 0.3).  Chunk 2's slot
 * frees at 0.2 (chunk 2 done), but chunk 3 needs chunk 1's (done at
 * 1.0): b_3 = 1.0.  Chunk 4 has chunk 2's slot free since 0.2, yet goes
 * after chunk 3, as the live clients send: b_4 = max(c_4, b_3, d_2) =
 * 1.0, first audio 1.1 (0.4 with chunks sent out of order).
 */
static void sends_in_order(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct seen s = {.n = 0};
    (void)state;
    tb_playout_opts_default(&o);
    o.wpm = 100;
    o.tts_concurrency = 2;
    o.tts_latency_at = slow_first;
    assert_int_equal(tb_playout_create(&o, on_play, &s, &p), 0);
    for (uint32_t j = 0; j < 4; j++)
        assert_int_equal(tb_playout_add(p, 0.1 * j, j, 5), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    assert_int_equal(s.n, 4);
    assert_near(s.v[1].begin, 0.1, 1e-12);
    assert_near(s.v[1].done, 0.2, 1e-12);
    assert_near(s.v[2].begin, 1.0, 1e-12);
    assert_near(s.v[3].begin, 1.0, 1e-12);
    assert_near(s.v[3].ready, 1.1, 1e-12);
    tb_playout_destroy(p);
}

/*
 * Blank chunks ("\n\n" between paragraphs) as every live TTS path takes
 * them: no request, so no latency, no connect, no audio, and no silence
 * ends or starts at them.  L = 0.5, K = 0.2, N = 1, 15 code points a
 * second of speech (wpm 150).  Chunk 1 blank at 0: b = f = d = 0, and K
 * waits for chunk 2 (15 cps at 0.1): b 0.1, first audio 0.1 + 0.5 + 0.2
 * = 0.8, which starts playback (a blank chunk alone does not), to 1.8.
 * Chunk 3 blank at 1.0: b = f = d = 1.0, no audio, start = end = 1.8.
 * Chunk 4 (15 cps at 2.0): b 2.0, audio at 2.5; one silence 1.8..2.5,
 * 0.2 s of it the LLM's (its text came at 2.0), not two split at chunk 3.
 */
static void blank_chunks_are_not_sent(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct seen s = {.n = 0};
    (void)state;
    tb_playout_opts_default(&o);
    o.wpm = 150;
    o.tts_latency = 0.5;
    o.tts_connect = 0.2;
    o.tts_concurrency = 1;
    assert_int_equal(tb_playout_create(&o, on_play, &s, &p), 0);
    assert_int_equal(tb_playout_add_blank(p, 0.0, 1, 2), 0);
    assert_int_equal(tb_playout_add(p, 0.1, 2, 15), 0);
    assert_int_equal(tb_playout_add_blank(p, 1.0, 3, 2), 0);
    assert_int_equal(tb_playout_add(p, 2.0, 4, 15), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, &r);
    assert_int_equal(s.n, 4);
    assert_true(s.v[0].begin == 0.0 && s.v[0].ready == 0.0 && s.v[0].done == 0.0);
    assert_true(s.v[0].end - s.v[0].start == 0.0);
    assert_near(s.v[1].begin, 0.1, 1e-12);
    assert_near(s.v[1].ready, 0.8, 1e-12);
    assert_near(s.v[1].start, 0.8, 1e-12);
    assert_near(s.v[1].end, 1.8, 1e-12);
    assert_true(s.v[2].begin == 1.0 && s.v[2].ready == 1.0 && s.v[2].done == 1.0);
    assert_near(s.v[2].start, 1.8, 1e-12);
    assert_true(s.v[2].end == s.v[2].start && s.v[2].gap == 0.0);
    assert_near(s.v[3].begin, 2.0, 1e-12);
    assert_near(s.v[3].start, 2.5, 1e-12);
    assert_near(s.v[3].gap, 0.7, 1e-12);
    assert_near(s.v[3].gap_llm, 0.2, 1e-12);
    assert_int_equal(r.underruns, 1);
    assert_near(r.gap_total, 0.7, 1e-12);
    assert_near(r.speech, 2.0, 1e-12);
    assert_near(r.ttfa, 0.8, 1e-12);
    tb_playout_destroy(p);
}

/*
 * The output whole: a Piper-like engine (N = 1, R = 0.8, L = 0) with a
 * 2.4 s first sentence closing at 0.37 and a 0.6 s second at 0.5.
 * Streamed, chunk 1's audio starts at 0.37; whole, it comes at 0.37 +
 * 0.8 x 2.4 = 2.29, all of it (the first audio, the start, d_1), and
 * chunk 2 (begun at d_1) at 2.29 + 0.48 = 2.77, in time.  A pre-roll of
 * 3 s waits for both whole chunks (at 2.77, a step of all of their
 * audio), not for the ramp the streamed output would count.  An RTF
 * above 1 makes no frame player: the chunk plays whole from d_j.
 */
static void whole_output_first_audio(void **state)
{
    struct tb_playout_opts o;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct seen s = {.n = 0};
    (void)state;
    for (int k = 0; k < 4; k++) {
        tb_playout_opts_default(&o);
        o.wpm = 150; /* 36 code points a 2.4 s chunk */
        o.tts_concurrency = 1;
        o.tts_rtf = k == 3 ? 2.0 : 0.8;
        o.tts_output = k == 0 ? TB_TTS_STREAM : TB_TTS_WHOLE;
        o.preroll = k == 2 ? 3.0 : 0.0;
        s.n = 0;
        assert_int_equal(tb_playout_create(&o, on_play, &s, &p), 0);
        assert_int_equal(tb_playout_add(p, 0.37, 9, 36), 0);
        assert_int_equal(tb_playout_add(p, 0.5, 12, 9), 0);
        assert_int_equal(tb_playout_finish(p), 0);
        tb_playout_result(p, &r);
        assert_int_equal(s.n, 2);
        if (k == 0) {
            assert_near(r.ttfa, 0.37, 1e-12);
            assert_near(s.v[0].done, 0.37 + 0.8 * 2.4, 1e-12);
        } else if (k < 3) {
            assert_near(s.v[0].ready, 0.37 + 0.8 * 2.4, 1e-12);
            assert_near(s.v[0].done, s.v[0].ready, 0.0);
            assert_near(s.v[1].begin, 0.37 + 0.8 * 2.4, 1e-12);
            assert_near(s.v[1].ready, 0.37 + 0.8 * 3.0, 1e-12);
            assert_near(r.ttfa, k == 1 ? 0.37 + 0.8 * 2.4 : 0.37 + 0.8 * 3.0, 1e-12);
            assert_int_equal(r.underruns, 0);
        } else {
            assert_near(r.ttfa, 0.37 + 2.0 * 2.4, 1e-12); /* whole: no frame before d_1 */
            assert_near(s.v[0].end, r.ttfa + 2.4, 1e-12); /* and no stall in it */
            assert_near(s.v[0].gap, 0.0, 0.0);
        }
        tb_playout_destroy(p);
    }
}

/* A record the model cannot replay: TB_EINVAL, ctx.bad naming its chunk,
 * the options untouched. */
static void measured_log_refuses_bad_records(void **state)
{
    struct tb_tts_log log;
    struct tb_tts_measured ctx;
    struct tb_playout_opts o, before;
    (void)state;
    for (int k = 0; k < 6; k++) {
        uint32_t want = 2;
        tb_tts_log_init(&log);
        log.concurrency = 1;
        record(&log, 0.0, 0.2, 0.5, 0.5);
        switch (k) {
        case 0: /* failed with no first byte */
            record(&log, 0.5, NAN, 0.9, 0.0)->fail = TB_TTS_HTTP;
            break;
        case 1: record(&log, 0.5, 0.6, NAN, 0.3); break;  /* no end */
        case 2: record(&log, NAN, 0.6, 0.9, 0.3); break;  /* never sent */
        case 3: record(&log, 0.5, 0.6, 0.55, 0.3); break; /* ends before it began */
        case 4:
            record(&log, 0.5, 0.6, 0.9, 0.3)->chunk = 7; /* out of chunk order */
            break;
        default:
            record(&log, 0.5, 0.6, 0.9, 0.3);
            log.concurrency = -1;
            want = 0;
            break;
        }
        record(&log, 1.0, 1.1, 1.4, 0.3);
        tb_playout_opts_default(&o);
        o.tts_connect = 0.4;
        o.tts_rtf = 1.5;
        o.tts_concurrency = 3;
        before = o;
        ctx.bad = 99;
        if (tb_playout_opts_measured(&o, &ctx, &log) != TB_EINVAL)
            fail_msg("bad record %d accepted", k);
        assert_int_equal(ctx.bad, want);
        assert_true(o.tts_latency_at == NULL && o.tts_rtf_at == NULL && o.tts_latency_ud == NULL &&
                    o.tts_rtf_ud == NULL);
        assert_int_equal(o.tts_concurrency, before.tts_concurrency);
        assert_true(tb_test_same_bits(o.tts_connect, before.tts_connect) &&
                    tb_test_same_bits(o.tts_rtf, before.tts_rtf) &&
                    tb_test_same_bits(o.tts_latency, before.tts_latency));
        tb_tts_log_free(&log);
    }
    /* Complete with no audio (a blank chunk, or text spoken as silence):
     * no first byte, yet replayable, ready when it ended, lasting 0. */
    tb_tts_log_init(&log);
    log.concurrency = 1;
    record(&log, 0.0, 0.2, 0.5, 0.5);
    record(&log, 0.5, NAN, 0.9, 0.0);
    tb_playout_opts_default(&o);
    assert_int_equal(tb_playout_opts_measured(&o, &ctx, &log), 0);
    assert_true(fabs(o.tts_latency_at(o.tts_latency_ud, 2) - 0.4) < 1e-12);
    assert_true(o.tts_rtf_at(o.tts_rtf_ud, 2) == 0.0);
    assert_true(tb_playout_measured_duration(&ctx, 2) == 0.0);
    tb_tts_log_free(&log);
    /* An empty log is a replay of nothing, with the stage set. */
    tb_tts_log_init(&log);
    tb_playout_opts_default(&o);
    assert_int_equal(tb_playout_opts_measured(&o, &ctx, &log), 0);
    assert_true(tb_playout_has_stage(&o));
    assert_true(isnan(tb_playout_measured_duration(&ctx, 1)));
    tb_tts_log_free(&log);
}

static void three_chunks(struct tb_playout *p, const struct tb_playout_opts *o,
                         struct tb_playout_result *r)
{
    assert_int_equal(tb_playout_reset(p, o), 0);
    assert_int_equal(tb_playout_add(p, 0.0, 0, 10), 0);
    assert_int_equal(tb_playout_add(p, 0.5, 5, 10), 0);
    assert_int_equal(tb_playout_add(p, 2.5, 9, 10), 0);
    assert_int_equal(tb_playout_finish(p), 0);
    tb_playout_result(p, r);
}

/* Defaults name no stage; a reset from a stage back to none is v1 again. */
static void reset_between_stage_and_v1(void **state)
{
    struct tb_playout_opts o, v1;
    struct tb_playout *p = NULL;
    struct tb_playout_result a, b, c;
    (void)state;
    tb_playout_opts_default(&v1);
    assert_true(v1.tts_connect == 0.0 && v1.tts_concurrency == 0 && v1.tts_rtf == 0.0);
    assert_null(v1.tts_latency_at);
    v1.wpm = 100;
    o = v1;
    o.tts_concurrency = 1;
    o.tts_rtf = 1.0;
    o.tts_latency = 0.3;
    assert_int_equal(tb_playout_create(&v1, NULL, NULL, &p), 0);
    three_chunks(p, &v1, &a);
    three_chunks(p, &o, &b);
    three_chunks(p, &v1, &c);
    /* v1: chunk 3 (ready 2.5) after chunks 1-2 end at 2.0: 0.5 s, the
     * text's.  The stage (L = 0.3, N = 1, R = 1): chunk 2
     * waits for chunk 1's synthesis, 0.3 s late. */
    assert_int_equal(a.underruns, 1);
    assert_near(a.gap_llm, 0.5, 1e-12);
    assert_true(b.underruns > a.underruns && b.gap_tts > 0.0);
    /* The engine reset to v1 gives v1's result again, every field. */
    assert_int_equal(a.chunks, c.chunks);
    assert_int_equal(a.q, c.q);
    assert_int_equal(a.underruns, c.underruns);
    assert_int_equal(a.interruptions, c.interruptions);
    assert_int_equal(a.min_tps_none, c.min_tps_none);
    assert_int_equal(a.min_tps_method, c.min_tps_method);
    assert_true(
        tb_test_same_bits(a.ttfa, c.ttfa) && tb_test_same_bits(a.speech, c.speech) &&
        tb_test_same_bits(a.end, c.end) && tb_test_same_bits(a.gap_total, c.gap_total) &&
        tb_test_same_bits(a.gap_max, c.gap_max) && tb_test_same_bits(a.gap_llm, c.gap_llm) &&
        tb_test_same_bits(a.gap_tts, c.gap_tts) && tb_test_same_bits(a.min_tps, c.min_tps) &&
        tb_test_same_bits(a.speedup, c.speedup) && tb_test_same_bits(a.silence_max, c.silence_max));
    tb_playout_destroy(p);
}

int tb_test_ttsstage(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oracle_agrees_on_random_cases),
        cmocka_unit_test(oracle_agrees_with_rtf_per_chunk),
        cmocka_unit_test(mid_stream_stall_is_tts_and_none),
        cmocka_unit_test(no_gap_is_not_monotone_with_preroll),
        cmocka_unit_test(frame_player_stalls_when_dry),
        cmocka_unit_test(split_without_stage),
        cmocka_unit_test(bad_options_refused),
        cmocka_unit_test(bad_rtf_hook_refused),
        cmocka_unit_test(slow_chunk_after_fast_one_stalls),
        cmocka_unit_test(silent_chunk_still_needs_a_rate),
        cmocka_unit_test(constant_rtf_hook_is_the_constant),
        cmocka_unit_test(measured_log_replays),
        cmocka_unit_test(measured_log_refuses_bad_records),
        cmocka_unit_test(sends_in_order),
        cmocka_unit_test(blank_chunks_are_not_sent),
        cmocka_unit_test(whole_output_first_audio),
        cmocka_unit_test(reset_between_stage_and_v1),
    };
    return TB_RUN_GROUP("ttsstage", tests);
}
