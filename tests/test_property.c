/*
 * test_property.c - the playout model's closed forms (playout.h) against a
 * brute-force oracle that never uses them.
 *
 * The closed forms say: the minimum token rate is
 *   max over j > q of (T_j - T_q) / S_{j-1}
 * and the speed-up the stream needs is
 *   max over j > q of (c_j - c_q) / S_{j-1}.
 * The oracle checks both by search instead.  For the rate, it re-times the
 * content events to a constant rate r (event k arrives at
 * a_0 + (T_k - T_0) / r, same first-token time a_0, same texts), runs its
 * own playout simulation written straight from the rules in playout.h
 * (s_1 = c_q + L, s_j = max(e_{j-1}, r_j), g_j = r_j - e_{j-1}), and
 * bisects r for the smallest rate with every g_j <= 1e-9 (not the 1 ms
 * underrun line: the closed form is about no gap at all).  For the
 * speed-up it scales the arrivals to a_0 + (a_k - a_0) / x and bisects x.
 * Both searches are monotone because q depends on the speech totals only,
 * never on time.
 *
 * The chunk list comes from the real segmenter (the rules depend on text
 * only, so this is the same list for every re-timing; the test checks
 * that too; the time-based policies, cartesia and idle, are the recut
 * group's); everything after it - token indices, q, the schedule - is
 * recomputed here.  The real pipeline (tb_analyze_segment and
 * tb_analyze_playout with a schedule callback) is then held to the
 * simulation on the original times and at the edges of the bisection.
 *
 * Cost: 300 random traces of up to 103 events for each of the 8 policies,
 * 6 playout settings each (14,400 cases), two bisections of ~36
 * simulations per case, each O(chunks): about 0.3 s at -O2 and 1.1 s under
 * ASan+UBSan.  A failure prints the case and its stream as JSON lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/voice.h"

#define MAX_EV 256     /* events in one generated trace */
#define MAX_CH 4096    /* chunks the oracle can hold */
#define GAP_EPS 1e-9   /* "no gap": every g_j <= this */
#define REL_TOL 1e-6   /* oracle vs closed form */
#define SEARCH_LO 1e-6 /* bisection range for rates and speed-ups */
#define SEARCH_HI 1e9
#define TRACES 300 /* random traces per policy */

/* ------------------------------------------------------------- state */

/* What the engine's schedule callback saw during one run. */
struct sched {
    uint32_t next;  /* chunk number expected next */
    int in_order;   /* every chunk reported once, in order */
    int consistent; /* s_j = max(e_{j-1}, r_j), e_j = s_j + D_j */
    double wpm;
    double prev_end;
    double max_gap; /* max r_j - e_{j-1} over j >= 2 */
};

/* The oracle's view of one stream under one policy. */
struct model {
    size_t nc;            /* content events */
    size_t ci[MAX_EV];    /* stream index of content event k */
    uint64_t tok[MAX_EV]; /* T_k: running token count - 1 */
    double a0;            /* first content event's arrival */
    size_t m;             /* chunks */
    uint32_t ev[MAX_CH];  /* content event at which chunk j closed */
    uint32_t cps[MAX_CH];
    uint64_t cum[MAX_CH]; /* code points of chunks 1..j */
    size_t q;             /* 1-based start chunk for the current pre-roll */
    double c[MAX_CH];     /* arrivals for the run being simulated */
};

struct sim_out {
    double ttfa, end, speech;
    double max_gap; /* max g_j, j >= 2, any sign; -inf when m < 2 */
    double gap_total, gap_max;
    uint32_t underruns, interruptions;
};

/* One case: which stream (in work->s), how it is cut and played. */
struct kase {
    const char *what;
    uint64_t seed; /* 0 for a hand-written stream */
    enum tb_chunk_policy policy;
    uint32_t min_chars;
    double wpm, preroll, lat;
};

struct work {
    struct tb_stream s, rt, aux; /* the case, its re-timed copy, a spare */
    struct tb_seg *seg;
    struct tb_seg_opts seg_opts;
    struct tb_chunks ch, ch2;
    struct tb_playout *eng;
    struct sched sch;
    struct model md;
    long checks; /* stream x policy x setting combinations checked */
};

enum mode { M_ORIG, M_RATE, M_SPEED };

static const double prerolls[] = {0.0, 0.3, 2.0};
static const double latencies[] = {0.0, 0.2};

static void on_play(void *ud, const struct tb_play *p)
{
    struct sched *s = ud;
    if (p->chunk != s->next)
        s->in_order = 0;
    if (p->chunk >= 2) {
        double g = p->ready - s->prev_end;
        double st = p->ready > s->prev_end ? p->ready : s->prev_end;
        if (g > s->max_gap)
            s->max_gap = g;
        if (fabs(p->start - st) > 1e-9 * (1.0 + fabs(st)))
            s->consistent = 0;
    }
    if (fabs(p->end - p->start - tb_voice_seconds(p->cps, s->wpm)) > 1e-9 * (1.0 + fabs(p->end)))
        s->consistent = 0;
    s->prev_end = p->end;
    s->next++;
}

static int setup(void **state)
{
    struct work *w = calloc(1, sizeof(*w));
    struct tb_playout_opts o;
    if (w == NULL)
        return -1;
    tb_stream_init(&w->s);
    tb_stream_init(&w->rt);
    tb_stream_init(&w->aux);
    tb_analyze_chunks_init(&w->ch);
    tb_analyze_chunks_init(&w->ch2);
    tb_playout_opts_default(&o);
    if (tb_playout_create(&o, on_play, &w->sch, &w->eng) != 0) {
        free(w);
        return -1;
    }
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct work *w = *state;
    tb_stream_free(&w->s);
    tb_stream_free(&w->rt);
    tb_stream_free(&w->aux);
    tb_analyze_chunks_free(&w->ch);
    tb_analyze_chunks_free(&w->ch2);
    tb_seg_destroy(w->seg);
    tb_playout_destroy(w->eng);
    free(w);
    return 0;
}

/* Makes w->seg a segmenter for policy/min_chars (reused when it is one). */
static void use_seg(struct work *w, enum tb_chunk_policy pol, uint32_t min_chars)
{
    if (w->seg != NULL && w->seg_opts.policy == pol && w->seg_opts.min_chars == min_chars)
        return;
    tb_seg_destroy(w->seg);
    w->seg = NULL;
    w->seg_opts.policy = pol;
    w->seg_opts.min_chars = min_chars;
    assert_int_equal(tb_seg_create(&w->seg_opts, &w->seg), 0);
}

/* ------------------------------------------------- failure reporting */

static void dump_text(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '"' || c == '\\')
            fprintf(stderr, "\\%c", c);
        else if (c == '\n')
            fprintf(stderr, "\\n");
        else if (c == '\t')
            fprintf(stderr, "\\t");
        else if (c < 0x20)
            fprintf(stderr, "\\u%04x", c);
        else
            fputc(c, stderr);
    }
}

/* Prints the case and its stream (one JSON object per event). */
static void dump_case(const struct work *w, const struct kase *k)
{
    fprintf(stderr,
            "# case %s seed=%llu policy=%s min_chars=%u wpm=%.17g "
            "preroll=%.17g latency=%.17g events=%zu\n",
            k->what, (unsigned long long)k->seed, tb_seg_policy_name(k->policy), k->min_chars,
            k->wpm, k->preroll, k->lat, w->s.n);
    for (size_t i = 0; i < w->s.n; i++) {
        const struct tb_event *e = &w->s.ev[i];
        fprintf(stderr, "{\"t\":%.17g,\"tokens\":%u,\"kind\":\"%s\",\"text\":\"", e->t, e->tokens,
                e->kind == TB_KIND_CONTENT ? "content" : "reasoning");
        dump_text(tb_stream_text(&w->s, i), e->len);
        fprintf(stderr, "\"}\n");
    }
}

/* Like assert_true, but prints the case and its stream first; expects
 * `w` (struct work *) and `k` (const struct kase *) in scope. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            dump_case(w, k);                                                                       \
            fail_msg(__VA_ARGS__);                                                                 \
        }                                                                                          \
    } while (0)

/* |a - b| <= rel * max(|a|, |b|) + abs */
static int close_to(double a, double b, double rel, double abs_tol)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= rel * m + abs_tol;
}

/* ------------------------------------------------------------ oracle */

static void collect(void *ud, const struct tb_chunk *c)
{
    struct model *md = ud;
    if (md->m < MAX_CH) {
        md->ev[md->m] = c->event;
        md->cps[md->m] = c->cps;
    }
    md->m++;
}

/* Segments w->s with w->seg and records, per chunk, the content event it
 * closed at; token indices are counted here, not taken from analyze.c. */
static void model_build(struct work *w)
{
    struct model *md = &w->md;
    const struct tb_stream *s = &w->s;
    uint64_t tokens = 0, cum = 0;
    md->nc = md->m = 0;
    tb_seg_reset(w->seg);
    for (size_t i = 0; i < s->n; i++) {
        if (s->ev[i].kind != TB_KIND_CONTENT)
            continue;
        assert_true(md->nc < MAX_EV);
        tokens += s->ev[i].tokens;
        md->ci[md->nc] = i;
        md->tok[md->nc] = tokens - 1;
        md->nc++;
        tb_seg_feed(w->seg, tb_stream_text(s, i), s->ev[i].len, collect, md);
    }
    tb_seg_finish(w->seg, collect, md);
    assert_true(md->m <= MAX_CH);
    md->a0 = md->nc > 0 ? s->ev[md->ci[0]].t : 0.0;
    for (size_t j = 0; j < md->m; j++) {
        assert_true(md->ev[j] < md->nc);
        assert_true(md->cps[j] >= 1);
        cum += md->cps[j];
        md->cum[j] = cum;
    }
}

/* q: the first chunk with S_q >= P, or the last one. */
static size_t model_q(const struct model *md, double wpm, double preroll)
{
    for (size_t j = 0; j < md->m; j++)
        if (tb_voice_seconds(md->cum[j], wpm) >= preroll)
            return j + 1;
    return md->m;
}

/* Arrival of content event k when the stream is re-timed by `mode`. */
static double arrival(const struct model *md, const struct tb_stream *s, size_t k, enum mode mode,
                      double x)
{
    double t = s->ev[md->ci[k]].t;
    switch (mode) {
    case M_RATE: return md->a0 + (double)(md->tok[k] - md->tok[0]) / x;
    case M_SPEED: return md->a0 + (t - md->a0) / x;
    default: return t;
    }
}

/* The playout rules of playout.h, literally, over md->c. */
static void simulate(const struct model *md, double wpm, double lat, struct sim_out *o)
{
    double s1, e;
    memset(o, 0, sizeof(*o));
    o->max_gap = -INFINITY;
    if (md->m == 0)
        return;
    s1 = md->c[md->q - 1] + lat;
    e = s1;
    for (size_t j = 0; j < md->m; j++) {
        double r = md->c[j] + lat, st = s1;
        if (j > 0) {
            double g = r - e;
            if (g > o->max_gap)
                o->max_gap = g;
            if (g > TB_GAP_MIN_S) {
                o->underruns++;
                if (g >= TB_INTERRUPT_S)
                    o->interruptions++;
                o->gap_total += g;
                if (g > o->gap_max)
                    o->gap_max = g;
            }
            st = r > e ? r : e;
        }
        e = st + tb_voice_seconds(md->cps[j], wpm);
    }
    o->ttfa = s1;
    o->end = e;
    o->speech = tb_voice_seconds(md->cum[md->m - 1], wpm);
}

static double sim_max_gap(struct work *w, const struct kase *k, enum mode mode, double x)
{
    struct sim_out o;
    for (size_t j = 0; j < w->md.m; j++)
        w->md.c[j] = arrival(&w->md, &w->s, w->md.ev[j], mode, x);
    simulate(&w->md, k->wpm, k->lat, &o);
    return o.max_gap;
}

static int no_gap(struct work *w, const struct kase *k, enum mode mode, double x)
{
    return sim_max_gap(w, k, mode, x) <= GAP_EPS;
}

/*
 * The smallest x in [SEARCH_LO, SEARCH_HI] with no gap, to relative 1e-9:
 * geometric bisection down to a factor of 2, then arithmetic.  Returns 0
 * when SEARCH_LO already has no gap, INFINITY when SEARCH_HI still has one.
 */
static double bisect(struct work *w, const struct kase *k, enum mode mode)
{
    double lo = SEARCH_LO, hi = SEARCH_HI;
    if (no_gap(w, k, mode, lo))
        return 0.0;
    if (!no_gap(w, k, mode, hi))
        return INFINITY;
    while (hi > 2.0 * lo) {
        double mid = sqrt(lo * hi);
        if (no_gap(w, k, mode, mid))
            hi = mid;
        else
            lo = mid;
    }
    while (hi - lo > 1e-9 * hi) {
        double mid = lo + (hi - lo) / 2.0;
        if (no_gap(w, k, mode, mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* ------------------------------------------------------ real pipeline */

/* w->rt = w->s re-timed by mode/x (reasoning events keep their times in
 * rate mode; they are never spoken). */
static void retime(struct work *w, enum mode mode, double x)
{
    const struct tb_stream *s = &w->s;
    size_t k = 0;
    tb_stream_clear(&w->rt);
    for (size_t i = 0; i < s->n; i++) {
        const struct tb_event *e = &s->ev[i];
        double t = e->t;
        if (e->kind == TB_KIND_CONTENT)
            t = arrival(&w->md, s, k++, mode, x);
        else if (mode == M_SPEED)
            t = w->md.a0 + (t - w->md.a0) / x;
        assert_int_equal(tb_stream_append(&w->rt, t, tb_stream_text(s, i), e->len, e->tokens,
                                          (enum tb_kind)e->kind),
                         0);
    }
}

static void pipeline(struct work *w, const struct kase *k, const struct tb_stream *s,
                     struct tb_chunks *ch, struct tb_playout_result *res)
{
    struct tb_playout_opts o;
    tb_playout_opts_default(&o);
    o.wpm = k->wpm;
    o.tts_latency = k->lat;
    o.preroll = k->preroll;
    assert_int_equal(tb_analyze_segment(s, w->seg, ch), 0);
    w->sch.next = 1;
    w->sch.in_order = 1;
    w->sch.consistent = 1;
    w->sch.wpm = k->wpm;
    w->sch.prev_end = 0.0;
    w->sch.max_gap = -INFINITY;
    assert_int_equal(tb_analyze_playout(ch, w->eng, &o, res), 0);
}

/* Runs the real pipeline on w->s re-timed by mode/x; checks the chunk
 * list is the original's (segmentation ignores time). */
static void pipeline_retimed(struct work *w, const struct kase *k, enum mode mode, double x,
                             struct tb_playout_result *res)
{
    retime(w, mode, x);
    pipeline(w, k, &w->rt, &w->ch2, res);
    CHECK(w->ch2.n == w->ch.n, "re-timed chunks %zu != %zu", w->ch2.n, w->ch.n);
    for (size_t j = 0; j < w->ch.n; j++)
        CHECK(w->ch2.v[j].cps == w->ch.v[j].cps && w->ch2.v[j].tok == w->ch.v[j].tok,
              "re-timing changed chunk %zu", j + 1);
    CHECK(w->sch.in_order && w->sch.next == w->ch.n + 1, "schedule callback out of order");
}

/* ------------------------------------------------------------- checks */

/* Compares one closed form with its bisection. */
static void check_oracle(struct work *w, const struct kase *k, enum mode mode, double closed)
{
    const char *name = mode == M_RATE ? "min_tps" : "speedup";
    double found = bisect(w, k, mode);
    CHECK(isfinite(closed) && closed >= 0.0, "%s = %.17g", name, closed);
    CHECK(isfinite(found), "%s: a gap even at %g", name, SEARCH_HI);
    if (found == 0.0)
        CHECK(closed <= SEARCH_LO, "%s: closed form %.17g but no gap already at %g", name, closed,
              SEARCH_LO);
    else
        CHECK(close_to(found, closed, REL_TOL, 0.0), "%s: closed form %.17g, bisection %.17g", name,
              closed, found);
}

/* At just above the closed form: no gap, in the real engine's schedule.
 * Just below (when positive): a gap. */
static void check_edges(struct work *w, const struct kase *k, enum mode mode, double closed,
                        const struct tb_playout_result *orig)
{
    const char *name = mode == M_RATE ? "min_tps" : "speedup";
    struct tb_playout_result res;
    double x = closed > 0.0 ? closed * (1.0 + 1e-6) : SEARCH_LO;

    pipeline_retimed(w, k, mode, x, &res);
    CHECK(res.underruns == 0 && w->sch.max_gap <= GAP_EPS,
          "%s x (1 + 1e-6) = %.17g: %u underruns, max gap %.17g", name, x, res.underruns,
          w->sch.max_gap);
    CHECK(res.q == orig->q, "re-timed q %u != %u", res.q, orig->q);
    /* The minimum rate depends on texts and token counts only. */
    CHECK(close_to(res.min_tps, orig->min_tps, 1e-12, 0.0), "re-timed min_tps %.17g != %.17g",
          res.min_tps, orig->min_tps);
    if (mode == M_SPEED && closed > 0.0)
        CHECK(close_to(res.speedup, closed / x, 1e-9, 0.0), "re-timed speedup %.17g, want %.17g",
              res.speedup, closed / x);
    if (closed > 0.0) {
        x = closed * (1.0 - 1e-3);
        pipeline_retimed(w, k, mode, x, &res);
        CHECK(w->sch.max_gap > GAP_EPS, "%s x (1 - 1e-3) = %.17g: max gap only %.17g", name, x,
              w->sch.max_gap);
    }
}

/*
 * Every property for one stream (w->s) and setting: the engine against the
 * simulation on the original times, the invariants, both oracles, and the
 * edges.  *out gets the engine's result on the original times.
 */
static void check_case(struct work *w, const struct kase *k, struct tb_playout_result *out)
{
    struct tb_playout_result res;
    struct sim_out so;

    use_seg(w, k->policy, k->min_chars);
    model_build(w);
    w->md.q = model_q(&w->md, k->wpm, k->preroll);
    pipeline(w, k, &w->s, &w->ch, &res);
    if (out != NULL)
        *out = res;
    w->checks++;

    CHECK(res.chunks == w->md.m, "chunks %u, oracle %zu", res.chunks, w->md.m);
    CHECK(w->ch.n == w->md.m, "chunk list %zu, oracle %zu", w->ch.n, w->md.m);
    CHECK(w->sch.in_order && w->sch.next == w->md.m + 1, "schedule callback out of order");
    if (w->md.m == 0) {
        CHECK(res.ttfa == 0.0 && res.end == 0.0 && res.min_tps == 0.0 && res.speedup == 0.0 &&
                  res.underruns == 0,
              "no chunks but a non-empty result");
        return;
    }
    for (size_t j = 0; j < w->md.m; j++)
        CHECK(w->ch.v[j].cps == w->md.cps[j] && w->ch.v[j].tok == w->md.tok[w->md.ev[j]] &&
                  w->ch.v[j].c == w->s.ev[w->md.ci[w->md.ev[j]]].t,
              "chunk %zu: analyze (c %.17g, tok %llu, cps %u), oracle "
              "(event %u, cps %u)",
              j + 1, w->ch.v[j].c, (unsigned long long)w->ch.v[j].tok, w->ch.v[j].cps, w->md.ev[j],
              w->md.cps[j]);

    /* The engine against the literal simulation, original times. */
    for (size_t j = 0; j < w->md.m; j++)
        w->md.c[j] = arrival(&w->md, &w->s, w->md.ev[j], M_ORIG, 1.0);
    simulate(&w->md, k->wpm, k->lat, &so);
    CHECK(res.q == w->md.q, "q %u, oracle %zu", res.q, w->md.q);
    CHECK(close_to(res.ttfa, so.ttfa, 1e-12, 1e-12), "ttfa %.17g, oracle %.17g", res.ttfa, so.ttfa);
    CHECK(close_to(res.end, so.end, 1e-12, 1e-9), "end %.17g, oracle %.17g", res.end, so.end);
    CHECK(close_to(res.speech, so.speech, 1e-12, 0.0), "speech %.17g, oracle %.17g", res.speech,
          so.speech);
    CHECK(res.underruns == so.underruns && res.interruptions == so.interruptions,
          "underruns/interruptions %u/%u, oracle %u/%u", res.underruns, res.interruptions,
          so.underruns, so.interruptions);
    CHECK(close_to(res.gap_total, so.gap_total, 1e-12, 1e-9) &&
              close_to(res.gap_max, so.gap_max, 1e-12, 1e-9),
          "gaps total/max %.17g/%.17g, oracle %.17g/%.17g", res.gap_total, res.gap_max,
          so.gap_total, so.gap_max);
    CHECK(w->sch.consistent, "schedule breaks s_j = max(e_{j-1}, r_j)");
    if (w->md.m >= 2)
        CHECK(close_to(w->sch.max_gap, so.max_gap, 1e-12, 1e-9),
              "schedule max gap %.17g, oracle %.17g", w->sch.max_gap, so.max_gap);

    /* Invariants. */
    CHECK((res.underruns == 0) == (res.gap_total == 0.0), "underruns %u but gap_total %.17g",
          res.underruns, res.gap_total);
    CHECK(res.gap_max <= res.gap_total, "gap_max %.17g > gap_total %.17g", res.gap_max,
          res.gap_total);
    CHECK(res.ttfa >= w->md.a0 + k->lat, "ttfa %.17g < ttft %.17g + L %g", res.ttfa, w->md.a0,
          k->lat);
    CHECK(res.end >= res.ttfa + res.speech - 1e-9, "end %.17g < ttfa %.17g + speech %.17g", res.end,
          res.ttfa, res.speech);
    CHECK(res.interruptions <= res.underruns, "interruptions %u > underruns %u", res.interruptions,
          res.underruns);
    CHECK(res.q >= 1 && res.q <= res.chunks, "q %u of %u", res.q, res.chunks);

    /* The closed forms against search. */
    check_oracle(w, k, M_RATE, res.min_tps);
    check_oracle(w, k, M_SPEED, res.speedup);
    check_edges(w, k, M_RATE, res.min_tps, &res);
    check_edges(w, k, M_SPEED, res.speedup, &res);
}

/* check_case over every pre-roll and latency. */
static void check_settings(struct work *w, struct kase *k)
{
    for (size_t a = 0; a < sizeof(prerolls) / sizeof(prerolls[0]); a++) {
        for (size_t b = 0; b < sizeof(latencies) / sizeof(latencies[0]); b++) {
            k->preroll = prerolls[a];
            k->lat = latencies[b];
            check_case(w, k, NULL);
        }
    }
}

/* check_settings over every policy. */
static void check_policies(struct work *w, struct kase *k)
{
    for (int p = 0; p < TB_CHUNK__COUNT; p++) {
        if (tb_seg_policy_timed((enum tb_chunk_policy)p))
            continue; /* their cuts depend on time: the recut group */
        k->policy = (enum tb_chunk_policy)p;
        check_settings(w, k);
    }
}

/* ------------------------------------------------------ random traces */

/* Pieces of text an event is made of: words, every punctuation mark the
 * policies look at, closers, whitespace and multi-byte UTF-8. */
static const char *const pieces[] = {
    "Hello",
    " world",
    " the",
    " a",
    " cat",
    "s",
    " sat",
    " on",
    " mat",
    " Yes",
    " no",
    " 42",
    "ok",
    " caf\xc3\xa9",
    "\xc3\xa9",
    /* NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one word; cut so that \xbc ends */
    " \xc3\xbc"
    "ber",
    " \xe6\x97\xa5\xe6\x9c\xac",
    "\xe8\xaa\x9e",
    " \xf0\x9f\x99\x82",
    ".",
    ".",
    "!",
    "?",
    ",",
    ",",
    ";",
    ":",
    "\xe2\x80\xa6",
    "...",
    "\xe2\x80\x94",
    " \xe2\x80\x94",
    "\"",
    ")",
    "]",
    "'",
    "\xe2\x80\x99",
    "\xe2\x80\x9d",
    ". ",
    "? ",
    "! ",
    ", ",
    ".\"",
    ".)",
    ".\xe2\x80\x9d",
    "\n",
    "\n\n",
    " ",
    "  ",
    "\t",
    " \xc2\xa0",
    "\xc2\xa0",
};

#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

/* Inter-event gap: bursts of zero, mostly tens of ms, some long stalls,
 * rarely a 1000 s one. */
static double gen_gap(struct tb_rng *r)
{
    double u = tb_rng_unit(r);
    if (u < 0.3)
        return 0.0;
    if (u < 0.31)
        return 1.0 + 30.0 * tb_rng_unit(r);
    if (u < 0.312)
        return 1000.0;
    return 0.001 + 0.15 * tb_rng_unit(r) * tb_rng_unit(r);
}

static void gen_trace(struct tb_stream *s, uint64_t seed)
{
    struct tb_rng r = {seed};
    uint32_t n = tb_rng_unit(&r) < 0.1 ? 1 + tb_rng_below(&r, 3) : 4 + tb_rng_below(&r, 100);
    double t = tb_rng_unit(&r) < 0.2 ? 0.0 : 3.0 * tb_rng_unit(&r);
    tb_stream_clear(s);
    for (uint32_t i = 0; i < n; i++) {
        char text[64];
        size_t len = 0;
        uint32_t np = tb_rng_unit(&r) < 0.7 ? 1 : 2 + tb_rng_below(&r, 2);
        uint32_t tokens = tb_rng_unit(&r) < 0.75 ? 1 : 2 + tb_rng_below(&r, 2);
        enum tb_kind kind = tb_rng_unit(&r) < 0.1 ? TB_KIND_REASONING : TB_KIND_CONTENT;
        for (uint32_t p = 0; p < np; p++) {
            const char *pc = pieces[tb_rng_below(&r, NPIECES)];
            size_t pl = strlen(pc);
            memcpy(text + len, pc, pl);
            len += pl;
        }
        if (i > 0)
            t += gen_gap(&r);
        assert_int_equal(tb_stream_append(s, t, text, len, tokens, kind), 0);
    }
}

static void run_random(void **state, enum tb_chunk_policy pol)
{
    static const double wpms[] = {150.0, 220.0, 97.3};
    struct work *w = *state;
    struct kase k;
    memset(&k, 0, sizeof(k));
    k.what = "random";
    k.policy = pol;
    for (uint32_t i = 0; i < TRACES; i++) {
        k.seed = 0x7E57C0DEull + i;
        k.min_chars = (pol == TB_CHUNK_SENTENCE || pol == TB_CHUNK_CLAUSE) && i % 3 == 0 ? 20 : 1;
        k.wpm = wpms[(i / 3) % 3];
        gen_trace(&w->s, k.seed);
        check_settings(w, &k);
    }
    assert_int_equal(w->checks, TRACES * 6);
}

#define RANDOM_CASE(name, pol)                                                                     \
    static void random_##name(void **state)                                                        \
    {                                                                                              \
        run_random(state, pol);                                                                    \
    }

RANDOM_CASE(token, TB_CHUNK_TOKEN)
RANDOM_CASE(sentence, TB_CHUNK_SENTENCE)
RANDOM_CASE(clause, TB_CHUNK_CLAUSE)
RANDOM_CASE(pipecat, TB_CHUNK_PIPECAT)
RANDOM_CASE(livekit, TB_CHUNK_LIVEKIT)
RANDOM_CASE(openai_agents, TB_CHUNK_OPENAI_AGENTS)
RANDOM_CASE(fixed40, TB_CHUNK_FIXED40)
RANDOM_CASE(elevenlabs, TB_CHUNK_ELEVENLABS)
RANDOM_CASE(elevenlabs_sdk, TB_CHUNK_ELEVENLABS_SDK)

/* --------------------------------------------------------- edge cases */

static void append(struct tb_stream *s, double t, const char *text, uint32_t tokens)
{
    assert_int_equal(tb_stream_append(s, t, text, strlen(text), tokens, TB_KIND_CONTENT), 0);
}

static void default_kase(struct kase *k, const char *what)
{
    memset(k, 0, sizeof(*k));
    k->what = what;
    k->min_chars = 1;
    k->wpm = TB_WPM_DEFAULT;
}

/* One event: one chunk, q = 1, nothing to wait for. */
static void one_event(void **state)
{
    struct work *w = *state;
    struct kase k;
    struct tb_playout_result res;
    default_kase(&k, "one_event");
    tb_stream_clear(&w->s);
    append(&w->s, 0.5, "Hi.", 3);
    check_policies(w, &k);
    for (int p = 0; p < TB_CHUNK__COUNT; p++) {
        if (tb_seg_policy_timed((enum tb_chunk_policy)p))
            continue; /* their cuts depend on time: the recut group */
        k.policy = (enum tb_chunk_policy)p;
        k.preroll = 2.0;
        k.lat = 0.2;
        check_case(w, &k, &res);
        assert_int_equal(res.chunks, 1);
        assert_int_equal(res.q, 1);
        assert_true(res.min_tps == 0.0);
        assert_true(res.speedup == 0.0);
        assert_int_equal(res.underruns, 0);
        assert_near(res.ttfa, 0.7, 1e-12);
        assert_near(res.end, 0.7 + 3 * 10.0 / 150.0, 1e-12);
    }
}

/* Everything at t = 0: the speed-up is 0 (no time passes), the minimum
 * rate is finite and, for "ab","cd","ef" as tokens at 150 wpm, exactly
 * max(1 / (2/15), 2 / (4/15)) = 7.5 tokens/s. */
static void burst_at_zero(void **state)
{
    static const char *const words[] = {
        "One",   " two", ".", " Three", ",",      " four",        "!",      "\n",
        " Five", " six", "?", "\"",     " seven", "\xe2\x80\x94", " eight", ".",
    };
    struct work *w = *state;
    struct kase k;
    struct tb_playout_result res;
    default_kase(&k, "burst_at_zero");

    tb_stream_clear(&w->s);
    append(&w->s, 0.0, "ab", 1);
    append(&w->s, 0.0, "cd", 1);
    append(&w->s, 0.0, "ef", 1);
    k.policy = TB_CHUNK_TOKEN;
    check_case(w, &k, &res);
    assert_int_equal(res.chunks, 3);
    assert_near(res.min_tps, 7.5, 1e-12);
    assert_true(res.speedup == 0.0);
    assert_int_equal(res.underruns, 0);

    tb_stream_clear(&w->s);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        append(&w->s, 0.0, words[i], 1 + (uint32_t)(i % 3 == 2));
    for (int p = 0; p < TB_CHUNK__COUNT; p++) {
        if (tb_seg_policy_timed((enum tb_chunk_policy)p))
            continue; /* their cuts depend on time: the recut group */
        k.policy = (enum tb_chunk_policy)p;
        for (size_t a = 0; a < sizeof(prerolls) / sizeof(prerolls[0]); a++) {
            k.preroll = prerolls[a];
            k.lat = 0.2;
            check_case(w, &k, &res);
            assert_true(res.speedup == 0.0);
            assert_true(isfinite(res.min_tps));
            assert_int_equal(res.underruns, 0);
            assert_near(res.ttfa, 0.2, 1e-12);
        }
    }
}

/* Empty texts are not events: appending one changes nothing, whatever its
 * token count, and a stream with them analyses like one without. */
static void empty_text_ignored(void **state)
{
    static const char *const words[] = {"Hello", " there", ".", " Bye", "!"};
    struct work *w = *state;
    struct kase k;
    struct tb_playout_result with, without;
    struct tb_stream *plain = &w->aux;
    default_kase(&k, "empty_text_ignored");
    tb_stream_clear(plain);

    tb_stream_clear(&w->s);
    assert_int_equal(tb_stream_append(&w->s, 0.1, "", 0, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(&w->s, 0.1, "x", 0, 0, TB_KIND_CONTENT), 0);
    assert_int_equal(w->s.n, 0);
    assert_int_equal(w->s.text_len, 0);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        double t = 0.2 + 0.05 * (double)i;
        assert_int_equal(tb_stream_append(&w->s, t, "", 0, 2, TB_KIND_CONTENT), 0);
        append(&w->s, t, words[i], 1);
        append(plain, t, words[i], 1);
    }
    assert_int_equal(w->s.n, plain->n);
    assert_int_equal(w->s.text_len, plain->text_len);
    for (int p = 0; p < TB_CHUNK__COUNT; p++) {
        if (tb_seg_policy_timed((enum tb_chunk_policy)p))
            continue; /* their cuts depend on time: the recut group */
        k.policy = (enum tb_chunk_policy)p;
        k.preroll = 0.3;
        k.lat = 0.2;
        check_case(w, &k, &with);
        pipeline(w, &k, plain, &w->ch2, &without);
        assert_int_equal(with.chunks, without.chunks);
        assert_int_equal(with.q, without.q);
        assert_true(with.min_tps == without.min_tps);
        assert_true(with.speedup == without.speedup);
        assert_true(with.end == without.end);
    }
    check_policies(w, &k);
}

/* A 1000 s stall after the first sentence.  Token policy at 150 wpm:
 * chunks of 5, 7, 4, 4, 5 code points, S = 1/3, 4/5, 16/15, 4/3 s;
 * speed-up (1000.15 - 0.1) / (4/5); minimum rate max(1/(1/3), 2/(4/5),
 * 3/(16/15), 4/(4/3)) = 3; one gap of 1000.15 - 0.9 s. */
static void huge_gap(void **state)
{
    struct work *w = *state;
    struct kase k;
    struct tb_playout_result res;
    default_kase(&k, "huge_gap");
    tb_stream_clear(&w->s);
    append(&w->s, 0.1, "Hello", 1);
    append(&w->s, 0.15, " there.", 1);
    append(&w->s, 1000.15, " How", 1);
    append(&w->s, 1000.2, " are", 1);
    append(&w->s, 1000.25, " you?", 1);
    check_policies(w, &k);

    k.policy = TB_CHUNK_TOKEN;
    k.preroll = 0.0;
    k.lat = 0.0;
    check_case(w, &k, &res);
    assert_int_equal(res.chunks, 5);
    assert_near(res.speedup, (1000.15 - 0.1) / 0.8, 1e-9);
    assert_near(res.min_tps, 3.0, 1e-12);
    assert_int_equal(res.underruns, 1);
    assert_int_equal(res.interruptions, 1);
    assert_near(res.gap_max, 1000.15 - 0.9, 1e-9);
    assert_near(res.gap_total, res.gap_max, 1e-12);
}

int tb_test_property(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(random_token, setup, teardown),
        cmocka_unit_test_setup_teardown(random_sentence, setup, teardown),
        cmocka_unit_test_setup_teardown(random_clause, setup, teardown),
        cmocka_unit_test_setup_teardown(random_pipecat, setup, teardown),
        cmocka_unit_test_setup_teardown(random_livekit, setup, teardown),
        cmocka_unit_test_setup_teardown(random_openai_agents, setup, teardown),
        cmocka_unit_test_setup_teardown(random_fixed40, setup, teardown),
        cmocka_unit_test_setup_teardown(random_elevenlabs, setup, teardown),
        cmocka_unit_test_setup_teardown(random_elevenlabs_sdk, setup, teardown),
        cmocka_unit_test_setup_teardown(one_event, setup, teardown),
        cmocka_unit_test_setup_teardown(burst_at_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_text_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(huge_gap, setup, teardown),
    };
    return TB_RUN_GROUP("property", tests);
}
