/*
 * sweep_run.c - a sweep's run (tb_sweep_run), and one stream's smallest
 * gap-free pre-roll (tb_sweep_trace_preroll); the grid it runs over is
 * made by sweep.c.
 *
 * Three phases, each spread over the threads by an atomic work counter:
 *   1. segment: every (chunk, min_chars) pair x every stream -> a chunk
 *      list (the only phase that allocates: the lists grow);
 *   2. points: every grid point, all streams -> per-stream results in the
 *      thread's scratch, then the statistics (sorts in scratch);
 *   3. series (only with a target): every series, all streams -> the
 *      smallest gap-free pre-roll per stream, then its quantile.
 * Each thread owns one playout engine (no schedule callback, so it never
 * allocates without a TTS stage; with one it keeps the chunk list, whose
 * memory a reset keeps) and its scratch arrays, made before the threads
 * start.  The latency distributions (one per latency value) are made at
 * create and only read after it (ttslat.h: any thread).
 * Results of different units never share memory, so the only shared
 * writes are the atomic counters.
 */
#include "ttsbuf/sweep.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/ttslat.h"
#include "ttsbuf/voice.h"

#include "sweep_cap.h"
#include "sweep_state.h"

/* Per-stream results of one point, kept in a thread's scratch. */
struct one {
    double gap_total, ttfa, min_tps, gap_llm, gap_tts, v2v;
    uint32_t underruns, interruptions;
};

struct worker {
    struct tb_sweep *sw;
    struct tb_playout *play;
    struct tb_seg *seg[TB_CHUNK__COUNT]; /* one per policy, made on first use */
    uint32_t seg_mc[TB_CHUNK__COUNT];    /* its min_chars */
    struct one *one;                     /* n streams */
    double *v;                           /* n values, for sorting */
    struct sweep_cap cap;                /* the shared capacity's schedule */
    int rc;
    pthread_t th;
};

/* One playout pass over a chunk list, re-timed to tps when tps > 0; with
 * searches 0 the schedule alone (the TTS stage's minimum TPS stays NAN). */
static int play(const struct tb_chunks *c, double a0, uint64_t t0, double tps, struct tb_playout *p,
                const struct tb_playout_opts *o, int searches, struct tb_playout_result *r)
{
    int rc;
    if (tps <= 0.0)
        return searches ? tb_analyze_playout(c, p, o, r) : tb_analyze_schedule(c, p, o, r);
    rc = tb_playout_reset(p, o);
    if (rc != 0)
        return rc;
    /* Re-timed completions: a_0 + (T - T_0) / r.  No callback: no
     * allocation without a TTS stage; with one the chunk store may grow
     * (TB_ENOMEM) or a latency be refused. */
    for (size_t j = 0; j < c->n && rc == 0; j++) {
        double t = a0 + (double)(c->v[j].tok - t0) / tps;
        rc = c->v[j].blank ? tb_playout_add_blank(p, t, c->v[j].tok, c->v[j].cps)
                           : tb_playout_add(p, t, c->v[j].tok, c->v[j].cps);
    }
    if (rc == 0)
        rc = searches ? tb_playout_finish(p) : tb_playout_finish_schedule(p);
    tb_playout_result(p, r);
    return rc;
}

/* The pre-roll that starts playback at chunk q (1-based) of c: 0 for q 1,
 * else the smallest whole millisecond above S_{q-1}.  A chunk lasts at
 * least 10 / TB_WPM_MAX = 10 ms, so that millisecond is <= S_q. */
static double preroll_for_q(const struct tb_chunks *c, size_t q, double wpm)
{
    uint64_t cps = 0;
    if (q <= 1)
        return 0.0;
    for (size_t j = 0; j + 1 < q; j++)
        cps += c->v[j].cps;
    return floor(tb_voice_seconds(cps, wpm) * 1000.0 + 1.0) / 1000.0;
}

int tb_sweep_trace_preroll(const struct tb_chunks *c, double a0, uint64_t t0, double tps,
                           struct tb_playout *p, const struct tb_playout_opts *o, double *out)
{
    struct tb_playout_opts po = *o;
    struct tb_playout_result r;
    size_t lo = 1, hi = c->n; /* gap-free from q = hi, always (nothing after it) */
    if (c->n == 0)
        return TB_EEMPTY;
    po.rebuffer = 0;
    if (tb_playout_has_stage(&po)) {
        /* With a TTS stage: the chunks played once (the schedule alone),
         * then the engine's bisection replays them at each pre-roll. */
        int rc = play(c, a0, t0, tps, p, &po, 0, &r);
        return rc != 0 ? rc : tb_playout_gapless_preroll(p, out);
    }
    /* Smallest q in [lo, hi] that is gap-free: starting later never adds a
     * gap (every e_j moves later or stays), so gap-free is monotone in q. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int rc;
        po.preroll = preroll_for_q(c, mid, po.wpm);
        rc = play(c, a0, t0, tps, p, &po, 0, &r);
        if (rc != 0)
            return rc;
        if (r.underruns == 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    *out = preroll_for_q(c, lo, po.wpm);
    return 0;
}

/* ---------------------------------------------------------- statistics */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---------------------------------------------------------------- units */

static const struct tb_chunks *chunks_of(const struct tb_sweep *sw, size_t seg, size_t i)
{
    return &sw->chunks[seg * sw->nin + i];
}

/* Chunk list k's leading silences (sweep.h's j*), once segmented (rc 0):
 * the hook is called here, once per list, not once per point. */
static int set_lead(struct tb_sweep *sw, size_t k, int rc)
{
    const struct tb_chunks *c = &sw->chunks[k];
    size_t j = 0;
    if (rc != 0)
        return rc;
    while (j < c->n && c->v[j].blank)
        j++;
    sw->lead[k].plain = sw->lead_at != NULL ? sw->lead_at(sw->lead_ud, 1) : 0.0;
    sw->lead[k].stage = j == c->n             ? NAN
                        : sw->lead_at != NULL ? sw->lead_at(sw->lead_ud, (uint32_t)(j + 1))
                                              : 0.0;
    return 0;
}

static int unit_segment(struct worker *w, size_t u)
{
    struct tb_sweep *sw = w->sw;
    size_t seg = u / sw->nin, i = u % sw->nin;
    size_t ci = seg / sw->n[TB_AX_MINCHARS], mi = seg % sw->n[TB_AX_MINCHARS];
    int pol = (int)sw->axis[TB_AX_CHUNK][ci];
    struct tb_seg_opts so = {0};
    so.policy = (enum tb_chunk_policy)pol;
    so.min_chars = (uint32_t)sw->axis[TB_AX_MINCHARS][mi];
    /* min_chars is part of a segmenter's options: a new one on change
     * (units are pair-major, so that is rare). */
    if (w->seg[pol] == NULL || w->seg_mc[pol] != so.min_chars) {
        int rc;
        tb_seg_destroy(w->seg[pol]);
        w->seg[pol] = NULL;
        rc = tb_seg_create(&so, &w->seg[pol]);
        if (rc != 0)
            return rc;
        w->seg_mc[pol] = so.min_chars;
    }
    return set_lead(sw, seg * sw->nin + i,
                    tb_analyze_segment(sw->in[i].s, w->seg[pol], &sw->chunks[seg * sw->nin + i]));
}

/* The playout options and the tps of point (or series) indices idx. */
static double point_opts(const struct tb_sweep *sw, const size_t idx[TB_AX__COUNT],
                         struct tb_playout_opts *o, size_t *seg)
{
    tb_playout_opts_default(o);
    o->no_speedup = 1; /* a point reports min_tps, not the speed-up */
    o->wpm = sw->axis[TB_AX_WPM][idx[TB_AX_WPM]];
    o->tts_latency = sw->axis[TB_AX_LAT][idx[TB_AX_LAT]];
    if (sw->lat != NULL) {
        o->tts_latency = 0.0;
        o->tts_latency_at = tb_ttslat_at;
        o->tts_latency_ud = sw->lat[idx[TB_AX_LAT]];
    }
    o->tts_connect = sw->tts.connect;
    o->tts_output = sw->tts.output;
    o->tts_concurrency = (int)sw->axis[TB_AX_CONC][idx[TB_AX_CONC]];
    o->tts_rtf = sw->axis[TB_AX_RTF][idx[TB_AX_RTF]];
    o->rebuffer = (int)sw->axis[TB_AX_REBUFFER][idx[TB_AX_REBUFFER]];
    o->preroll = sw->axis[TB_AX_PREROLL][idx[TB_AX_PREROLL]];
    *seg = idx[TB_AX_CHUNK] * sw->n[TB_AX_MINCHARS] + idx[TB_AX_MINCHARS];
    return sw->axis[TB_AX_TPS][idx[TB_AX_TPS]];
}

static int unit_point(struct worker *w, size_t u)
{
    struct tb_sweep *sw = w->sw;
    struct tb_sweep_point *pt = &sw->pt[u];
    struct tb_playout_opts o;
    size_t idx[TB_AX__COUNT], seg, n = sw->nin, clean = 0, nnum = 0;
    double tps;

    int stage;

    tb_sweep_point_axes(sw, u, idx);
    tps = point_opts(sw, idx, &o, &seg);
    stage = tb_playout_has_stage(&o);
    pt->cap_wait.count = 0;
    if (sw->capacity > 0) {
        int rc = tb_sweep_cap_plan(&w->cap, sw, seg, tps, &o, &pt->cap_wait);
        if (rc != 0)
            return rc;
    }
    for (size_t i = 0; i < n; i++) {
        struct tb_playout_result r;
        const struct input *x = &sw->in[i];
        const struct lead *ld = &sw->lead[seg * n + i];
        int rc;
        if (sw->capacity > 0)
            tb_sweep_cap_hook(&w->cap, i, &o);
        rc = play(chunks_of(sw, seg, i), x->a0, x->t0, tps, w->play, &o, 1, &r);
        if (rc != 0)
            return rc;
        /* v2v = eou + s_{j*} + lead, s_{j*} = s_1 (sweep.h) */
        w->one[i].v2v = x->eou + r.ttfa + (stage ? ld->stage : ld->plain);
        if (x->tool) /* on the turn's clock: the answer's request came tool_head later */
            w->one[i].v2v = x->eou + x->tool_head + r.ttfa + (stage ? ld->stage : ld->plain);
        w->one[i].gap_total = r.gap_total;
        w->one[i].ttfa = r.ttfa;
        w->one[i].min_tps = r.min_tps;
        w->one[i].gap_llm = r.gap_llm;
        w->one[i].gap_tts = r.gap_tts;
        w->one[i].underruns = r.underruns;
        w->one[i].interruptions = r.interruptions;
        clean += r.underruns == 0;
        pt->min_tps_none += r.min_tps_none != 0;
        pt->min_tps_scan += r.min_tps_none == 0 && r.min_tps_method == TB_MIN_TPS_SCAN;
    }
    pt->gapless = (double)clean / (double)n;
    pt->events = sw->events;
#define STAT(field, expr)                                                                          \
    do {                                                                                           \
        for (size_t i = 0; i < n; i++)                                                             \
            w->v[i] = (expr);                                                                      \
        tb_stats_of(w->v, n, &pt->field);                                                          \
    } while (0)
    STAT(underruns, (double)w->one[i].underruns);
    STAT(interruptions, (double)w->one[i].interruptions);
    STAT(gap_total, w->one[i].gap_total);
    STAT(ttfa, w->one[i].ttfa);
    if (sw->tts.on) {
        STAT(gap_llm, w->one[i].gap_llm);
        STAT(gap_tts, w->one[i].gap_tts);
    }
#undef STAT
    /* The caller's wait of the streams with audio. */
    for (size_t i = 0; i < n; i++)
        if (!isnan(w->one[i].v2v))
            w->v[nnum++] = w->one[i].v2v;
    tb_stats_of(w->v, nnum, &pt->v2v);
    nnum = 0;
    for (size_t i = 0; i < n; i++)
        if (sw->in[i].tool && !isnan(w->one[i].v2v))
            w->v[nnum++] = w->one[i].v2v - sw->in[i].eou - sw->in[i].tool_start;
    tb_stats_of(w->v, nnum, &pt->tool_silence);
    /* The minimum TPS of the streams that have one (none: the TTS stage
     * alone leaves gaps), sorted; the nones rank above every rate. */
    nnum = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(w->one[i].min_tps))
            w->v[nnum++] = w->one[i].min_tps;
    tb_stats_of(w->v, nnum, &pt->min_tps);
    pt->tps_for_target = NAN;
    if (sw->target > 0.0) {
        size_t k = (size_t)ceil(sw->target * (double)n - 1e-9);
        if (k <= nnum)
            pt->tps_for_target = tb_stats_rank(w->v, n, sw->target);
    }
    if (sw->target <= 0.0)
        pt->preroll_for_target = NAN;
    return 0;
}

static int unit_series(struct worker *w, size_t u)
{
    struct tb_sweep *sw = w->sw;
    struct tb_playout_opts o;
    size_t idx[TB_AX__COUNT], seg, first = u * sw->n[TB_AX_PREROLL];
    double tps, ans;

    tb_sweep_point_axes(sw, first, idx);
    tps = point_opts(sw, idx, &o, &seg);
    if (sw->capacity > 0) {
        struct tb_stats st;
        int rc = tb_sweep_cap_plan(&w->cap, sw, seg, tps, &o, &st);
        if (rc != 0)
            return rc;
    }
    for (size_t i = 0; i < sw->nin; i++) {
        const struct input *x = &sw->in[i];
        int rc;
        if (sw->capacity > 0)
            tb_sweep_cap_hook(&w->cap, i, &o);
        rc =
            tb_sweep_trace_preroll(chunks_of(sw, seg, i), x->a0, x->t0, tps, w->play, &o, &w->v[i]);
        if (rc != 0)
            return rc;
    }
    qsort(w->v, sw->nin, sizeof(double), cmp_double);
    ans = tb_stats_rank(w->v, sw->nin, sw->target);
    for (size_t k = 0; k < sw->n[TB_AX_PREROLL]; k++)
        sw->pt[first + k].preroll_for_target = ans;
    return 0;
}

/* Claims and runs the next unit of the current phase; 0 when none is
 * left (or this worker failed). */
static int next_unit(struct worker *w)
{
    struct tb_sweep *sw = w->sw;
    size_t u = atomic_fetch_add_explicit(&sw->next, 1, memory_order_relaxed);
    int rc;
    if (u >= sw->units || w->rc != 0)
        return 0;
    if (sw->phase == 0)
        rc = unit_segment(w, u);
    else if (sw->phase == 1)
        rc = unit_point(w, u);
    else
        rc = unit_series(w, u);
    if (rc != 0)
        w->rc = rc;
    atomic_fetch_add_explicit(&sw->done, 1, memory_order_relaxed);
    return 1;
}

static void *work(void *arg)
{
    while (next_unit(arg))
        ;
    return NULL;
}

static void worker_free(struct worker *w)
{
    tb_playout_destroy(w->play);
    for (int i = 0; i < TB_CHUNK__COUNT; i++)
        tb_seg_destroy(w->seg[i]);
    free(w->one);
    free(w->v);
    tb_sweep_cap_free(&w->cap);
}

/* Runs one phase of `units` units on nt workers; the calling thread is
 * worker 0 and reports progress.  done_before/total: overall counts. */
static int run_phase(struct tb_sweep *sw, struct worker *w, unsigned nt, int phase, size_t units,
                     size_t done_before, size_t total, tb_sweep_progress_fn fn, void *ud)
{
    unsigned started = 1;
    int rc = 0;
    sw->phase = phase;
    sw->units = units;
    atomic_store(&sw->next, 0);
    atomic_store(&sw->done, 0);
    /* pthread_create is a full barrier for what was written above. */
    for (unsigned t = 1; t < nt; t++) {
        if (pthread_create(&w[t].th, NULL, work, &w[t]) != 0)
            break;
        started++;
    }
    while (next_unit(&w[0]))
        if (fn != NULL)
            fn(ud, done_before + atomic_load_explicit(&sw->done, memory_order_relaxed), total);
    for (unsigned t = 1; t < started; t++)
        pthread_join(w[t].th, NULL);
    for (unsigned t = 0; t < nt; t++)
        if (w[t].rc != 0 && rc == 0)
            rc = w[t].rc;
    return rc;
}

int tb_sweep_run(struct tb_sweep *sw, unsigned threads, tb_sweep_progress_fn fn, void *ud)
{
    struct worker *w;
    struct tb_playout_opts po;
    size_t nseg_units, total;
    int rc = 0;
    if (threads < 1 || threads > TB_SWEEP_THREADS_MAX || sw->ran)
        return TB_EINVAL;
    sw->ran = 1;
    w = calloc(threads, sizeof(*w));
    if (w == NULL)
        return TB_ENOMEM;
    tb_playout_opts_default(&po);
    for (unsigned t = 0; t < threads && rc == 0; t++) {
        w[t].sw = sw;
        w[t].one = malloc(sw->nin * sizeof(*w[t].one));
        w[t].v = malloc(sw->nin * sizeof(*w[t].v));
        rc = tb_playout_create(&po, NULL, NULL, &w[t].play);
        if (rc == 0 && (w[t].one == NULL || w[t].v == NULL))
            rc = TB_ENOMEM;
    }
    nseg_units = sw->nseg * sw->nin;
    total = nseg_units + sw->npt + (sw->target > 0.0 ? sw->nseries : 0);
    if (rc == 0)
        rc = run_phase(sw, w, threads, 0, nseg_units, 0, total, fn, ud);
    if (rc == 0)
        tb_sweep_llm_shift(sw); /* the LLM capacity's waits (sweep_cap.h) */
    if (rc == 0)
        rc = run_phase(sw, w, threads, 1, sw->npt, nseg_units, total, fn, ud);
    if (rc == 0 && sw->target > 0.0)
        rc = run_phase(sw, w, threads, 2, sw->nseries, nseg_units + sw->npt, total, fn, ud);
    for (unsigned t = 0; t < threads; t++)
        worker_free(&w[t]);
    free(w);
    if (rc == 0 && fn != NULL)
        fn(ud, total, total); /* the last unit may have been another thread's */
    return rc;
}
