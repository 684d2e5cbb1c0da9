/*
 * tts_stage.c - the playout model with a TTS stage (see playout.h).
 *
 * One state machine (struct run) plays a chunk list: it computes each
 * chunk's synthesis times b_j, f_j, d_j as the chunk closes (in order, on
 * a free slot; a whole output's first audio is d_j; a measured TTS's
 * recorded times at the stream's own times), waits for the
 * pre-roll (a start that stays a candidate until the next chunk closes at
 * or after it), then plays chunks in order and splits every silence by
 * cause.  The engine runs it online over the trace's own times; at the end
 * the minimum-TPS and speed-up searches run it again over the stored
 * chunks, re-timed to each candidate rate.  Both use the same code, so the
 * search is exact for the model the schedule shows.
 *
 * Memory: 72 bytes per chunk (the list the searches replay) plus 48 for
 * the pre-roll's breakpoints, grown as chunks arrive, so neither a run nor
 * a search allocates.  Time: O(m) per run, except while waiting for the
 * pre-roll, when each chunk that closes before the candidate start costs
 * O(k log k) over the k chunks waiting.
 */
#include "tts_stage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "rate_search.h"
#include "ttsbuf/error.h"

struct chunk {
    double c;     /* closing time (a forced start moves the last one) */
    uint64_t tok; /* token index of the closing event */
    uint32_t cps;
    double d;       /* D_j */
    double l;       /* L_j, with K added for the first chunk */
    double r;       /* R_j */
    double b, f, g; /* the current run's b_j, f_j (first audio) and d_j */
    int blank;      /* nothing to say: sent to no TTS, no audio, no latency */
};

/* A breakpoint of A(t): a step of audio, or a ramp of slope 1/R_j
 * starting (slope > 0) or ending (slope < 0). */
struct bp {
    double t;
    double step;
    double slope;
};

/* audio_reaches' walk over the sorted breakpoints, kept between calls:
 * the state after the groups before bp[i] (A(t) = a at t), valid while
 * they and theta and the rule for the slope (same) stay as they were. */
struct scan {
    size_t i;
    double a, t, slope, theta;
    int ramps, same, valid;
};

struct tb_tts_stage;

struct run {
    struct tb_tts_stage *st;
    double tau;    /* < 0: the trace's times; else c_j = c_1 + u_j tau */
    int by_time;   /* u_j = c_j - c_1 (speed-up), else T_j - T_1 */
    double theta;  /* the pre-roll the start waits for */
    tb_play_fn fn; /* NULL in the searches */
    void *ud;
    size_t m, next, q; /* chunks run, the first not played, chunks at start */
    int started, has_cand;
    double cand, s1, e_prev, sum;
    uint32_t underruns, interruptions;
    double gap_total, gap_max, gap_llm, gap_tts;
    double worst; /* the longest silence, counted or not */
};

struct tb_tts_stage {
    struct tb_playout_opts o;
    tb_play_fn fn;
    void *ud;
    struct chunk *v;
    size_t n, cap;
    struct bp *bp; /* chunks 0..bp_k-1's breakpoints, sorted by time */
    size_t bpcap, nbp, bp_k;
    double bp_rtf;       /* the first R_j among them; 0: none yet */
    int bp_same;         /* every R_j among them is bp_rtf */
    struct scan sc;      /* audio_reaches' walk so far over them */
    double speech;       /* S_m */
    double theta_search; /* the pre-roll the searches use */
    int silent;          /* a chunk that is not blank has no audio (D_j = 0) */
    size_t blanks;       /* blank chunks among them */
    int connected;       /* K was added (to the first chunk not blank) */
    struct run run;      /* the trace's own schedule */
    int finished, forced;
    double min_tps, speedup;
    int none, method;
};

int tb_tts_stage_wanted(const struct tb_playout_opts *o)
{
    return o->tts_connect != 0.0 || o->tts_concurrency != 0 || o->tts_rtf != 0.0 ||
           o->tts_output == TB_TTS_WHOLE || o->tts_latency_at != NULL || o->tts_rtf_at != NULL ||
           o->tts_times_at != NULL;
}

double tb_tts_stage_frame_ready(double f, double rtf, double d, uint64_t k)
{
    return f + rtf * fmin((double)k * TB_FRAME_S + TB_FRAME_S, d);
}

struct tb_tts_stage *tb_tts_stage_create(tb_play_fn fn, void *ud)
{
    struct tb_tts_stage *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->fn = fn;
    s->ud = ud;
    return s;
}

void tb_tts_stage_destroy(struct tb_tts_stage *s)
{
    if (s == NULL)
        return;
    free(s->v);
    free(s->bp);
    free(s);
}

/* The breakpoints are built afresh: a new run, or a chunk's times moved. */
static void bp_clear(struct tb_tts_stage *st)
{
    st->nbp = st->bp_k = 0;
    st->bp_rtf = 0.0;
    st->bp_same = 1;
    st->sc.valid = 0;
}

/* Runs are made one after another, never interleaved: a new run owns the
 * breakpoints. */
static void run_init(struct run *r, struct tb_tts_stage *st, double theta, tb_play_fn fn, void *ud)
{
    *r = (struct run){.st = st, .tau = -1.0, .theta = theta, .fn = fn, .ud = ud};
    bp_clear(st);
}

void tb_tts_stage_reset(struct tb_tts_stage *s, const struct tb_playout_opts *o)
{
    s->o = *o;
    s->n = 0;
    s->speech = 0.0;
    s->theta_search = o->preroll;
    s->silent = 0;
    s->blanks = 0;
    s->connected = 0;
    s->finished = s->forced = 0;
    s->min_tps = s->speedup = NAN;
    s->none = 0;
    s->method = TB_MIN_TPS_BISECT;
    run_init(&s->run, s, o->preroll, s->fn, s->ud);
}

/* --------------------------------------------------------------- a run */

/* c_j in this run: the trace's, or re-timed from chunk 1 by u_j tau. */
static double close_time(const struct run *r, size_t j)
{
    const struct chunk *v = r->st->v;
    double u;
    if (r->tau < 0.0)
        return v[j].c;
    u = r->by_time ? v[j].c - v[0].c : (double)(v[j].tok - v[0].tok);
    return v[0].c + u * r->tau;
}

/* Chunk j's (1-based) recorded times from the times hook: 0, or
 * TB_EINVAL when it has none, or they are not finite and in order. */
static int recorded(const struct tb_tts_stage *st, uint32_t j, struct chunk *x)
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
static void stage_times(const struct run *r, size_t j)
{
    struct tb_tts_stage *st = r->st;
    struct chunk *v = st->v;
    size_t n = (size_t)st->o.tts_concurrency;
    double b = close_time(r, j);
    if (r->tau < 0.0 && st->o.tts_times_at != NULL && recorded(st, (uint32_t)j + 1, &v[j]) == 0)
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
static double arrival_rtf(const struct tb_tts_stage *st, const struct chunk *x)
{
    return st->o.tts_output == TB_TTS_WHOLE ? 0.0 : x->r;
}

/* The first moment chunk x can play: its first audio, or with its audio
 * arriving at R_j > 1 its first frame complete. */
static double playable(const struct tb_tts_stage *st, const struct chunk *x)
{
    double rtf = arrival_rtf(st, x);
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
        bp_clear(st);
    for (; st->bp_k < k; st->bp_k++) {
        const struct chunk *x = &st->v[st->bp_k];
        double xr = arrival_rtf(st, x);
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
static void candidate(struct run *r, size_t k)
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
static void silence(struct run *r, struct tb_play *pl, double gap, double llm)
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
static double frames(struct run *r, struct tb_play *pl, const struct chunk *x, double rtf,
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
static void play(struct run *r, size_t j)
{
    struct tb_tts_stage *st = r->st;
    const struct chunk *x = &st->v[j];
    struct tb_play pl = {0};
    double rtf = arrival_rtf(st, x), h = playable(st, x);
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
static void start(struct run *r, double t)
{
    r->started = 1;
    r->s1 = t;
    r->e_prev = t;
    r->q = r->m;
    while (r->next < r->m)
        play(r, r->next);
}

/* Chunk m closes: a candidate start before its closing time is final. */
static void run_add(struct run *r)
{
    size_t j = r->m;
    if (!r->started && r->has_cand && close_time(r, j) >= r->cand)
        start(r, r->cand);
    stage_times(r, j);
    r->m++;
    if (r->started) {
        play(r, j);
        return;
    }
    r->sum += r->st->v[j].d;
    /* Audio can only bring the start forward, and only audio before it;
     * a blank chunk brings none (nor do blank chunks alone start it). */
    if (r->sum >= r->theta && !r->st->v[j].blank && (!r->has_cand || r->st->v[j].f < r->cand))
        candidate(r, r->m);
}

/* The stream ended: the pre-roll is at most what there is. */
static void run_finish(struct run *r)
{
    if (r->started || r->m == 0)
        return;
    if (r->theta > r->sum)
        r->theta = r->sum;
    candidate(r, r->m);
    start(r, r->cand);
}

/* The stored chunks run again from the start with pre-roll theta, at the
 * trace's times (tau < 0) or re-timed: the schedule the online run would
 * have made of them (run_add reads only chunks 0..j, as they were then). */
static void replay(struct run *r, struct tb_tts_stage *st, double theta, double tau, int by_time)
{
    run_init(r, st, theta, NULL, NULL);
    r->tau = tau;
    r->by_time = by_time;
    for (size_t j = 0; j < st->n; j++)
        run_add(r);
    run_finish(r);
}

int tb_tts_stage_gapless_at(struct tb_tts_stage *s, double preroll, double *gap_total)
{
    struct run r;
    if (!s->finished || s->forced)
        return TB_EINVAL; /* a replay knows no forced start */
    replay(&r, s, preroll, -1.0, 0);
    if (gap_total != NULL)
        *gap_total = r.gap_total;
    return r.underruns == 0;
}

/* ---------------------------------------------------------- the search */

/* Whether the chunks re-timed to rate lambda (INFINITY: all close with
 * the first) play without a silence longer than TB_SEARCH_EPS. */
static int gap_free(struct tb_tts_stage *st, double lambda, int by_time)
{
    struct run r;
    replay(&r, st, st->theta_search, isinf(lambda) ? 0.0 : 1.0 / lambda, by_time);
    return r.worst <= TB_SEARCH_EPS;
}

static double u_of(const struct tb_tts_stage *st, size_t j, int by_time)
{
    return by_time ? st->v[j].c - st->v[0].c : (double)(st->v[j].tok - st->v[0].tok);
}

/*
 * The closed form for a connect latency alone (N unlimited, R = 0, L
 * constant): s_1 = max(c_1 + L + K, c_q + L), and chunk j > q needs
 * c_j - c_1 <= S_{j-1} + K or c_j - c_q <= S_{j-1} (ttsbuf-model(7)).
 */
static double closed_form(const struct tb_tts_stage *st, double theta, int by_time)
{
    double s = 0.0, need = 0.0, uq = 0.0, k = st->o.tts_connect;
    size_t q = 0;
    while (q < st->n && !(s + st->v[q].d >= theta) && q + 1 < st->n)
        s += st->v[q++].d;
    s += st->v[q].d; /* S_q */
    uq = u_of(st, q, by_time);
    for (size_t j = q + 1; j < st->n; j++) {
        double u = u_of(st, j, by_time);
        double a = u / (s + k);
        double b = s > 0.0 ? (u - uq) / s : u > uq ? INFINITY : 0.0;
        double x = a < b ? a : b;
        if (x > need)
            need = x;
        s += st->v[j].d;
    }
    return need;
}

/* The rate search's test (rate_search.h) over the stored chunks. */
struct probe {
    struct tb_tts_stage *st;
    int by_time;
};

static int probe_gap_free(void *ud, double x)
{
    struct probe *pr = ud;
    return gap_free(pr->st, x, pr->by_time);
}

/* A pre-roll of all the audio makes every rate gap-free (the search's
 * shortcut), unless a chunk has no audio: A(t) cannot wait for it, and
 * the silence before it still counts when it comes late.  The search then
 * gets no pre-roll to shortcut on. */
static int search(struct tb_tts_stage *st, int by_time, int monotone, double *out)
{
    struct probe pr = {st, by_time};
    return tb_rate_search(probe_gap_free, &pr, u_of(st, st->n - 1, by_time), st->speech,
                          st->silent ? -INFINITY : st->theta_search, monotone, TB_SCAN_STEPS, out);
}

/* Chunk 1's own audio at its first playable moment (by the rate its
 * audio arrives at: R_1, or 0 when whole): a pre-roll up to it never
 * delays the start, which keeps "no gap" monotone in the rate. */
static double own_audio(const struct tb_tts_stage *st)
{
    double rtf = arrival_rtf(st, &st->v[0]), d = st->v[0].d;
    if (rtf == 0.0)
        return d;
    return rtf > 1.0 ? fmin(TB_FRAME_S, d) : 0.0;
}

static void search_all(struct tb_tts_stage *st)
{
    double theta = st->theta_search < st->speech ? st->theta_search : st->speech;
    int monotone;
    if (st->n < 2 && gap_free(st, INFINITY, 0)) {
        st->min_tps = st->speedup = 0.0; /* one chunk: no rate to need */
        st->method = TB_MIN_TPS_CLOSED;
        return;
    }
    if (st->o.tts_concurrency == 0 && st->o.tts_rtf == 0.0 && st->o.tts_latency_at == NULL &&
        st->o.tts_rtf_at == NULL && st->blanks == 0) {
        st->min_tps = closed_form(st, theta, 0);
        st->speedup = closed_form(st, theta, 1);
        st->method = TB_MIN_TPS_CLOSED;
        return;
    }
    monotone = theta <= own_audio(st);
    st->method = monotone ? TB_MIN_TPS_BISECT : TB_MIN_TPS_SCAN;
    if (search(st, 0, monotone, &st->min_tps) ||
        (!st->o.no_speedup && search(st, 1, monotone, &st->speedup))) {
        st->min_tps = st->speedup = NAN;
        st->none = 1;
    }
}

/* ------------------------------------------------------------- the API */

int tb_tts_stage_add(struct tb_tts_stage *s, double c, uint64_t tok, uint32_t cps, double d,
                     int blank)
{
    uint32_t j = (uint32_t)s->n + 1;
    double l = blank                         ? 0.0
               : s->o.tts_latency_at != NULL ? s->o.tts_latency_at(s->o.tts_latency_ud, j)
                                             : s->o.tts_latency;
    double rtf = blank                     ? 0.0
                 : s->o.tts_rtf_at != NULL ? s->o.tts_rtf_at(s->o.tts_rtf_ud, j)
                                           : s->o.tts_rtf;
    struct chunk rec;
    if (!(l >= 0.0) || isinf(l) || !(rtf >= 0.0) || isinf(rtf))
        return TB_EINVAL;
    if (s->o.tts_times_at != NULL && recorded(s, j, &rec) != 0)
        return TB_EINVAL;
    if (s->n == s->cap) {
        struct chunk *nv = tb_grow(s->v, &s->cap, sizeof(*nv), 64);
        if (nv == NULL)
            return TB_ENOMEM;
        s->v = nv;
    }
    if (2 * (s->n + 1) > s->bpcap) {
        struct bp *nb = tb_grow(s->bp, &s->bpcap, sizeof(*nb), 128);
        if (nb == NULL)
            return TB_ENOMEM;
        s->bp = nb;
    }
    if (blank)
        d = 0.0;
    s->v[s->n] = (struct chunk){.c = c, .tok = tok, .cps = cps, .d = d, .l = l, .r = rtf,
                                .blank = blank};
    if (!blank && !s->connected) { /* the connection opens with the first request */
        s->v[s->n].l += s->o.tts_connect;
        s->connected = 1;
    }
    s->n++;
    s->speech += d;
    s->silent |= !blank && !(d > 0.0);
    s->blanks += blank != 0;
    run_add(&s->run);
    return 0;
}

int tb_tts_stage_force_start(struct tb_tts_stage *s, double t)
{
    struct run *r = &s->run;
    if (r->started || s->n == 0)
        return TB_EINVAL;
    s->v[s->n - 1].c = t;
    s->forced = 1;
    stage_times(r, s->n - 1);
    bp_clear(s); /* its f_j may have moved */
    if (r->theta > r->sum)
        r->theta = r->sum;
    s->theta_search = r->theta;
    candidate(r, r->m);
    return 0;
}

void tb_tts_stage_close(struct tb_tts_stage *s)
{
    run_finish(&s->run);
}

int tb_tts_stage_finish(struct tb_tts_stage *s)
{
    if (s->finished)
        return 0;
    run_finish(&s->run);
    if (s->o.no_search)
        s->min_tps = s->speedup = NAN;
    else if (s->n > 0)
        search_all(s);
    else
        s->min_tps = s->speedup = 0.0;
    if (s->o.no_speedup)
        s->speedup = NAN; /* not searched (playout.h), whichever way min_tps came */
    s->finished = 1;
    return 0;
}

int tb_tts_stage_finish_schedule(struct tb_tts_stage *s)
{
    if (!s->finished)
        run_finish(&s->run);
    s->finished = 1;
    return 0;
}

double tb_tts_stage_last_begin(const struct tb_tts_stage *s)
{
    return s->n > 0 ? s->v[s->n - 1].b : NAN;
}

int tb_tts_stage_last(const struct tb_tts_stage *s, struct tb_tts_times *t)
{
    const struct chunk *x;
    if (s->n == 0)
        return TB_EINVAL;
    x = &s->v[s->n - 1];
    *t = (struct tb_tts_times){x->b, x->f, x->g, arrival_rtf(s, x)};
    return 0;
}

int tb_tts_stage_started(const struct tb_tts_stage *s, double *s1)
{
    if (s1 != NULL)
        *s1 = s->run.started ? s->run.s1 : 0.0;
    return s->run.started;
}

double tb_tts_stage_end(const struct tb_tts_stage *s)
{
    return s->run.started ? s->run.e_prev : 0.0;
}

void tb_tts_stage_result(const struct tb_tts_stage *s, struct tb_playout_result *out)
{
    const struct run *r = &s->run;
    *out = (struct tb_playout_result){
        .chunks = (uint32_t)s->n,
        .q = (uint32_t)r->q,
        .ttfa = r->started ? r->s1 : 0.0,
        .speech = s->speech,
        .end = r->started ? r->e_prev : 0.0,
        .underruns = r->underruns,
        .interruptions = r->interruptions,
        .gap_total = r->gap_total,
        .gap_max = r->gap_max,
        .gap_llm = r->gap_llm,
        .gap_tts = r->gap_tts,
        .min_tps = s->min_tps,
        .speedup = s->speedup,
        .min_tps_none = s->none,
        .min_tps_method = s->method,
        .silence_max = r->worst,
    };
}
