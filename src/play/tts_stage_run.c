/*
 * tts_stage_run.c - a run of the TTS stage's schedule (tts_stage_run.h).
 *
 * One state machine (struct tts_run) plays a chunk list: it computes each
 * chunk's synthesis times b_j, f_j, d_j as the chunk closes (in order, on
 * a free slot; a whole output's first audio is d_j; a measured TTS's
 * recorded times at the stream's own times), waits for the
 * pre-roll (a start that stays a candidate until the next chunk closes at
 * or after it), then plays chunks in order and splits every silence by
 * cause.  The stage runs it online over the trace's own times; the
 * searches (tts_stage.c) replay it over the stored chunks, re-timed to
 * each candidate rate.  Both use the same code, so the search is exact
 * for the model the schedule shows.
 *
 * Time: O(m) per run, except while waiting for the pre-roll, when each
 * chunk that closes before the candidate start costs O(k log k) over the
 * k chunks waiting.  The breakpoints' memory is the stage's, grown as
 * chunks arrive, so a run allocates nothing.
 */
#include "tts_stage_run.h"

#include <math.h>
#include <string.h>

#include "tts_stage_state.h"
#include "ttsbuf/error.h"

double tb_tts_stage_frame_ready(double f, double rtf, double d, uint64_t k)
{
    return f + rtf * fmin((double)k * TB_FRAME_S + TB_FRAME_S, d);
}

/* The breakpoints are built afresh: a new run, or a chunk's times moved. */
void tb_tts_run_bp_clear(struct tb_tts_stage *st)
{
    st->nbp = st->bp_k = 0;
    st->bp_rtf = 0.0;
    st->bp_same = 1;
    st->sc.valid = 0;
}

/* Runs are made one after another, never interleaved: a new run owns the
 * breakpoints. */
void tb_tts_run_init(struct tts_run *r, struct tb_tts_stage *st, double theta, tb_play_fn fn,
                     void *ud)
{
    *r = (struct tts_run){.st = st, .tau = -1.0, .theta = theta, .fn = fn, .ud = ud};
    tb_tts_run_bp_clear(st);
}

/* c_j in this run: the trace's, or re-timed from chunk 1 by u_j tau. */
static double close_time(const struct tts_run *r, size_t j)
{
    const struct tts_chunk *v = r->st->v;
    double u;
    if (r->tau < 0.0)
        return v[j].c;
    u = r->by_time ? v[j].c - v[0].c : (double)(v[j].tok - v[0].tok);
    return v[0].c + u * r->tau;
}

/* Chunk j's (1-based) recorded times from the times hook: 0, or
 * TB_EINVAL when it has none, or they are not finite and in order. */
int tb_tts_run_recorded(const struct tb_tts_stage *st, uint32_t j, struct tts_chunk *x)
{
    double b, f, g;
    if (st->o.tts_times_at(st->o.tts_times_ud, j, &b, &f, &g) != 0 || !isfinite(b) ||
        !isfinite(g) || !(b <= f && f <= g))
        return TB_EINVAL;
    x->b = b;
    x->f = f;
    x->g = g;
    return 0;
}

/*
 * b_j, f_j, d_j.  At the stream's own times a measured TTS's record is
 * the truth (the times hook).  Else synthesis begins once the text is
 * there, once the chunk before it was sent (chunks go in order, as the
 * live clients send them: a slot freed early by a fast chunk waits for
 * the slower one before it) and once a slot is free (the chunk N places
 * back has finished): b_j = max(c_j, b_{j-1}, d_{j-N}).  Each term is a
 * max-plus function of the c's, so the minimum-TPS searches' monotonicity
 * (ttsbuf-model(7), Claim 1) holds.  A whole output's first audio is
 * all of it, at d_j.
 */
void tb_tts_run_times(const struct tts_run *r, size_t j)
{
    struct tb_tts_stage *st = r->st;
    struct tts_chunk *v = st->v;
    size_t n = (size_t)st->o.tts_concurrency;
    double b = close_time(r, j);
    if (r->tau < 0.0 && st->o.tts_times_at != NULL &&
        tb_tts_run_recorded(st, (uint32_t)j + 1, &v[j]) == 0)
        return; /* checked when the chunk was added */
    if (j > 0 && v[j - 1].b > b)
        b = v[j - 1].b;
    if (n > 0 && j >= n && v[j - n].g > b)
        b = v[j - n].g;
    v[j].b = b;
    v[j].f = b + v[j].l;
    v[j].g = v[j].f + v[j].r * v[j].d;
    if (st->o.tts_output == TB_TTS_WHOLE)
        v[j].f = v[j].g;
}

/* The real-time factor at which chunk x's audio arrives from f_j: R_j
 * streamed; 0 when whole (all of it at f_j = d_j). */
double tb_tts_run_arrival_rtf(const struct tb_tts_stage *st, const struct tts_chunk *x)
{
    return st->o.tts_output == TB_TTS_WHOLE ? 0.0 : x->r;
}

/* The first moment chunk x can play: its first audio, or with its audio
 * arriving at R_j > 1 its first frame complete. */
static double playable(const struct tb_tts_stage *st, const struct tts_chunk *x)
{
    double rtf = tb_tts_run_arrival_rtf(st, x);
    if (rtf > 1.0 && x->d > 0.0)
        return tb_tts_stage_frame_ready(x->f, rtf, x->d, 0);
    return x->f;
}

/* Inserts x after every breakpoint at or before its time: the order a
 * stable sort of all of them in chunk order gives (equal times summed in
 * that order). */
static void bp_insert(struct tb_tts_stage *st, struct bp x)
{
    size_t i = st->nbp;
    while (i > 0 && st->bp[i - 1].t > x.t)
        i--;
    /* Before the walk's end, or into its last group: walked afresh. */
    if (i < st->sc.i || (i == st->sc.i && i > 0 && st->bp[i - 1].t == x.t))
        st->sc.valid = 0;
    memmove(&st->bp[i + 1], &st->bp[i], (st->nbp - i) * sizeof(*st->bp));
    st->bp[i] = x;
    st->nbp++;
}

/* The sorted breakpoints of chunks 0..k-1: a step of D_j at f_j when
 * R_j = 0 or the output is whole, else a ramp of slope 1/R_j from f_j to
 * d_j.  Chunks join as the run reaches them (their times are final once
 * computed), so a run waiting for its pre-roll inserts, never sorts. */
static void bp_update(struct tb_tts_stage *st, size_t k)
{
    if (st->bp_k > k)
        tb_tts_run_bp_clear(st);
    for (; st->bp_k < k; st->bp_k++) {
        const struct tts_chunk *x = &st->v[st->bp_k];
        double xr = tb_tts_run_arrival_rtf(st, x);
        if (x->d <= 0.0)
            continue;
        if (xr == 0.0) {
            bp_insert(st, (struct bp){x->f, x->d, 0.0});
            continue;
        }
        if (st->bp_rtf == 0.0)
            st->bp_rtf = xr;
        st->bp_same = st->bp_same && xr == st->bp_rtf;
        bp_insert(st, (struct bp){x->f, 0.0, 1.0 / xr});
        bp_insert(st, (struct bp){x->g, 0.0, -1.0 / xr});
    }
}

/*
 * The first t with A(t) >= theta (> 0) over chunks 0..k-1, whose audio
 * totals at least theta.  A is piecewise linear (bp_update).  When every
 * ramp has the same R (always, without an RTF hook) the ramps are
 * counted, not their slopes summed, so the slope carries no rounding;
 * with several R_j the slopes are summed (reset to 0 exactly when no ramp
 * runs), which costs an ulp or so per breakpoint.  Should rounding leave
 * the sum a hair short, the answer is the last breakpoint (all audio
 * produced).
 */
static double audio_reaches(struct tb_tts_stage *st, size_t k, double theta)
{
    const struct bp *bp = st->bp;
    struct scan *sc = &st->sc;
    double rtf, a, t, slope;
    size_t n, i;
    int ramps, same;
    bp_update(st, k);
    rtf = st->bp_rtf;
    same = st->bp_same;
    n = st->nbp;
    if (!sc->valid || sc->theta != theta || sc->same != same)
        *sc = (struct scan){0, 0.0, -INFINITY, 0.0, theta, 0, same, 1};
    /* The groups walked before gave the same sums in the same order. */
    i = sc->i;
    a = sc->a;
    t = sc->t;
    slope = sc->slope;
    ramps = sc->ramps;
    while (i < n) {
        double ti = bp[i].t;
        if (ramps > 0) {
            double at = same ? a + (ti - t) * ramps / rtf : a + (ti - t) * slope;
            if (at >= theta)
                return same ? t + (theta - a) * rtf / ramps : t + (theta - a) / slope;
            a = at;
        }
        t = ti;
        for (; i < n && bp[i].t == ti; i++) {
            a += bp[i].step;
            ramps += (bp[i].slope > 0.0) - (bp[i].slope < 0.0);
            slope += bp[i].slope;
        }
        if (ramps == 0)
            slope = 0.0;
        if (a >= theta)
            return t;
        *sc = (struct scan){i, a, t, slope, theta, ramps, same, 1};
    }
    return t;
}

/* The first of chunks 0..k-1 that is not blank; k when all are. */
static size_t first_said(const struct tb_tts_stage *st, size_t k)
{
    size_t i = 0;
    while (i < k && st->v[i].blank)
        i++;
    return i;
}

/* The candidate start over the k chunks waiting: s_1 = max(h_1, t_A),
 * h_1 the first audio of the first chunk that is not blank (of chunk 1
 * when every chunk is). */
void tb_tts_run_candidate(struct tts_run *r, size_t k)
{
    struct tb_tts_stage *st = r->st;
    size_t i = first_said(st, k);
    double h = playable(st, &st->v[i < k ? i : 0]);
    double ta = r->theta > 0.0 ? audio_reaches(st, k, r->theta) : -INFINITY;
    r->cand = ta > h ? ta : h;
    r->has_cand = 1;
}

/* One silence of length gap before or inside a chunk; llm is how much of
 * it the text was still missing (clamped to [0, gap]). */
static void silence(struct tts_run *r, struct tb_play *pl, double gap, double llm)
{
    if (!(gap > 0.0))
        return;
    if (gap > r->worst)
        r->worst = gap;
    if (gap <= TB_GAP_MIN_S)
        return;
    llm = llm < 0.0 ? 0.0 : llm > gap ? gap : llm;
    r->underruns++;
    if (gap >= TB_INTERRUPT_S)
        r->interruptions++;
    r->gap_total += gap;
    if (gap > r->gap_max)
        r->gap_max = gap;
    r->gap_llm += llm;
    r->gap_tts += gap - llm;
    pl->gap += gap;
    pl->gap_llm += llm;
    pl->gap_tts += gap - llm;
}

/* Audio arriving at rtf > 1: plays chunk x's frames from s, each when
 * both the player and the frame are ready; every stall is the engine's
 * (gap_tts).  Returns e_j. */
static double frames(struct tts_run *r, struct tb_play *pl, const struct tts_chunk *x, double rtf,
                     double s)
{
    double t = s, off = 0.0;
    for (uint64_t i = 1;; i++) {
        double next = (double)i * TB_FRAME_S;
        double end, ready;
        if (!(next < x->d))
            break;
        end = t + (next - off);
        ready = tb_tts_stage_frame_ready(x->f, rtf, x->d, i);
        t = ready > end ? ready : end;
        silence(r, pl, t - end, 0.0);
        off = next;
    }
    return x->d > 0.0 ? t + (x->d - off) : t;
}

/* Plays chunk j (the next in order) after e_{j-1}. */
static void play(struct tts_run *r, size_t j)
{
    struct tb_tts_stage *st = r->st;
    const struct tts_chunk *x = &st->v[j];
    struct tb_play pl = {0};
    double rtf = tb_tts_run_arrival_rtf(st, x), h = playable(st, x);
    double s = j == 0 ? r->s1 : h > r->e_prev ? h : r->e_prev;
    if (x->blank) {
        /* Nothing to say (no TTS request, as the live clients skip it):
         * it neither ends a silence nor splits one in two. */
        pl.start = pl.end = s;
    } else {
        if (j > 0)
            silence(r, &pl, s - r->e_prev, close_time(r, j) - r->e_prev);
        pl.start = s;
        pl.end = rtf > 1.0 ? frames(r, &pl, x, rtf, s) : s + x->d;
        r->e_prev = pl.end;
    }
    r->next = j + 1;
    if (r->fn != NULL) {
        pl.chunk = (uint32_t)j + 1;
        pl.cps = x->cps;
        pl.ready = x->f;
        pl.begin = x->b;
        pl.done = x->g;
        r->fn(r->ud, &pl);
    }
}

/* Playback starts at t: the chunks waiting play now. */
static void start(struct tts_run *r, double t)
{
    r->started = 1;
    r->s1 = t;
    r->e_prev = t;
    r->q = r->m;
    while (r->next < r->m)
        play(r, r->next);
}

/* Chunk m closes: a candidate start before its closing time is final. */
void tb_tts_run_add(struct tts_run *r)
{
    size_t j = r->m;
    if (!r->started && r->has_cand && close_time(r, j) >= r->cand)
        start(r, r->cand);
    tb_tts_run_times(r, j);
    r->m++;
    if (r->started) {
        play(r, j);
        return;
    }
    r->sum += r->st->v[j].d;
    /* Audio can only bring the start forward, and only audio before it;
     * a blank chunk brings none (nor do blank chunks alone start it). */
    if (r->sum >= r->theta && !r->st->v[j].blank && (!r->has_cand || r->st->v[j].f < r->cand))
        tb_tts_run_candidate(r, r->m);
}

/* The stream ended: the pre-roll is at most what there is. */
void tb_tts_run_finish(struct tts_run *r)
{
    if (r->started || r->m == 0)
        return;
    if (r->theta > r->sum)
        r->theta = r->sum;
    tb_tts_run_candidate(r, r->m);
    start(r, r->cand);
}

/* The stored chunks run again from the start with pre-roll theta, at the
 * trace's times (tau < 0) or re-timed: the schedule the online run would
 * have made of them (tb_tts_run_add reads only chunks 0..j, as they were then). */
void tb_tts_run_replay(struct tts_run *r, struct tb_tts_stage *st, double theta, double tau,
                       int by_time)
{
    tb_tts_run_init(r, st, theta, NULL, NULL);
    r->tau = tau;
    r->by_time = by_time;
    for (size_t j = 0; j < st->n; j++)
        tb_tts_run_add(r);
    tb_tts_run_finish(r);
}
