/*
 * recut_cut.c - a cut of a re-timed stream, the rates where it holds and
 * its closed form without a TTS stage (see recut_cut.h).
 *
 * Rounding.  Every bound below keeps a margin of 64 machine epsilons of
 * the largest magnitude in play (per timer decision: |t_0| + |u_k| tau +
 * delay; per playout: |t_0| + u_max tau + delay + L + S_m, times m + 8
 * for the sums along the chunks), where a floating-point comparison or
 * sum is off by a few at most: an answer given here is the one the
 * re-cut and the playout compute, not merely the one exact arithmetic
 * would.  A rate closer than that to a bound is left to them.
 */
#include "recut_cut.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "base/grow.h"
#include "ttsbuf/error.h"
#include "ttsbuf/voice.h"

#define ULPS (64.0 * DBL_EPSILON)

void tb_cut_begin(struct tb_cut *c, int by_time)
{
    c->by_time = by_time;
    c->lo = 0.0;
    c->hi = INFINITY;
    c->delay = 0.0;
    c->n = 0;
    c->have_form = 0;
}

void tb_cut_free(struct tb_cut *c)
{
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

int tb_cut_push(struct tb_cut *c, double u, uint32_t tokev, uint32_t cps, int timed, int blank)
{
    if (cps >= 1u << 30)
        return TB_ETOOBIG;
    if (c->n == c->cap) {
        struct tb_cut_chunk *v = tb_grow(c->v, &c->cap, sizeof(*v), 64);
        if (v == NULL)
            return TB_ENOMEM;
        c->v = v;
    }
    c->v[c->n].u = u;
    c->v[c->n].tokev = tokev;
    c->v[c->n].cps = cps;
    c->v[c->n].timed = timed != 0;
    c->v[c->n].blank = blank != 0;
    c->n++;
    return 0;
}

/* The comparison t_a + delay <= t_k is (u_k - u_a) tau >= delay, off by
 * rounding of at most a few epsilons of |t_0| + |u_k| tau + delay: it is
 * sure for tau (s + e|u_k|) < delay - e(|t_0| + delay) (not fired) and
 * for tau (s - e|u_k|) >= delay + e(|t_0| + delay) (fired). */
void tb_cut_decision(struct tb_cut *c, double t0, double ua, double uk, double delay, int fired)
{
    double s = uk - ua, slack = ULPS * (fabs(t0) + delay);
    c->delay = delay;
    if (!fired) {
        double num = delay - slack, den = s + ULPS * fabs(uk);
        if (!(num > 0.0))
            c->hi = -1.0; /* too close to call anywhere */
        else if (den > 0.0 && num / den < c->hi)
            c->hi = num / den;
    } else {
        double num = delay + slack, den = s - ULPS * fabs(uk);
        if (!(den > 0.0))
            c->lo = INFINITY;
        else if (num / den > c->lo)
            c->lo = num / den;
    }
}

int tb_cut_holds(const struct tb_cut *c, double tau)
{
    return c->lo <= tau && tau <= c->hi;
}

/* The closed form for options o: q, max D_j at tau = 0, and where the
 * largest D_j first reaches 0, with its slope. */
static void form(struct tb_cut *c, const struct tb_playout_opts *o)
{
    uint64_t sum = 0, total = 0;
    size_t q = c->n;
    for (size_t j = 0; j < c->n; j++)
        total += c->v[j].cps;
    for (size_t j = 0; j < c->n && q == c->n; j++) {
        sum += c->v[j].cps; /* as the playout compares it with the pre-roll */
        if ((double)sum * 10.0 >= o->preroll * o->wpm)
            q = j;
    }
    c->have_form = 1;
    c->f_wpm = o->wpm;
    c->f_preroll = o->preroll;
    c->f_latency = o->tts_latency;
    c->f_speech = tb_voice_seconds(total, o->wpm);
    c->f_after = q + 1 < c->n;
    c->f_d0 = -INFINITY;
    c->f_tau0 = INFINITY;
    c->f_slope = 0.0;
    if (!c->f_after)
        return;
    double bq = c->v[q].timed ? c->delay : 0.0, uq = c->v[q].u;
    for (size_t j = q + 1; j < c->n; j++) {
        double k = (c->v[j].timed ? c->delay : 0.0) - bq - tb_voice_seconds(sum, o->wpm);
        double s = c->v[j].u - uq;
        if (k > c->f_d0)
            c->f_d0 = k;
        if (s > 0.0 && -k / s < c->f_tau0) {
            c->f_tau0 = -k / s;
            c->f_slope = s;
        }
        sum += c->v[j].cps;
    }
}

/*
 * max D_j is convex and non-decreasing in tau.  Below tau0 it is at most
 * (1 - tau / tau0) D_0 (the chord from tau = 0); above, at least
 * slope (tau - tau0) (the D_j that reaches 0 at tau0).  No silence needs
 * every D_j below zero by more than the rounding G; a silence longer than
 * TB_SEARCH_EPS needs one above m TB_SEARCH_EPS + G.
 */
enum tb_cut_answer tb_cut_answer(struct tb_cut *c, const struct tb_playout_opts *o, double t0,
                                 double umax, double tau)
{
    double g, band;
    if (!c->have_form || c->f_wpm != o->wpm || c->f_preroll != o->preroll ||
        c->f_latency != o->tts_latency)
        form(c, o);
    if (!c->f_after)
        return TB_CUT_FREE; /* nothing plays after the start: no silence */
    g = ULPS * (double)(c->n + 8) *
        (fabs(t0) + fabs(umax) * tau + c->delay + o->tts_latency + c->f_speech + 1.0);
    band = (double)c->n * TB_SEARCH_EPS + g;
    if (c->f_d0 >= 0.0)
        return c->f_d0 > band ? TB_CUT_GAP : TB_CUT_UNSURE;
    if (isinf(c->f_tau0))
        return c->f_d0 < -g ? TB_CUT_FREE : TB_CUT_UNSURE;
    if (tau < c->f_tau0 && (1.0 - tau / c->f_tau0) * -c->f_d0 > g)
        return TB_CUT_FREE;
    if (tau > c->f_tau0 && c->f_slope * (tau - c->f_tau0) > band)
        return TB_CUT_GAP;
    return TB_CUT_UNSURE;
}
