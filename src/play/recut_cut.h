/*
 * recut_cut.h - one cut of a re-timed stream and the rates where it holds
 * (recut_cut.c), so that the minimum-TPS search under a time-based chunk
 * policy (recut.c) re-cuts the stream only when a rate tested changes it.
 *
 * Re-timed by tau (seconds per token, or per second of the recording:
 * event k at t_0 + u_k tau), a time-based policy's cuts change only
 * where one of its timer decisions does: "the deadline t_a + delay is at
 * or before t_k", exactly (u_k - u_a) tau >= delay.  A cut records every
 * chunk as the u of the arrival that dates its close (the closing event,
 * or for a timer's close the event the timer counts from, plus the delay)
 * and every decision taken while cutting as a bound on tau; within the
 * bounds, the segmenter takes the same decisions and cuts the same
 * chunks, and their close times follow from tau in the same floating-point
 * steps as a re-cut's.
 *
 * Without a TTS stage, whether a cut plays with no gap is a closed form
 * in tau (playout.h's v1 model): with q the chunk that starts playback,
 * D_j = c_j - c_q - S_{j-1} = (u_j - u_q) tau + (B_j - B_q) - S_{j-1}
 * for j > q (B: the delay of a timer's close, else 0), convex and
 * non-decreasing in tau; every D_j < 0 leaves no silence, and one D_j
 * above m x TB_SEARCH_EPS leaves a silence longer than TB_SEARCH_EPS
 * (silences that short shift later chunks by at most that much each).
 * Answers are given only outside a band that bounds the rounding of the
 * playout's own sums (64 (m + 8) machine epsilons of the largest time);
 * inside it, and with a TTS stage, the caller plays the cut.
 *
 * Memory: 16 bytes a chunk, grown geometrically and kept across resets.
 * Threads: one per object.
 */
#ifndef TTSBUF_PLAY_RECUT_CUT_H
#define TTSBUF_PLAY_RECUT_CUT_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/playout.h"

/* A chunk of a cut: closes at t_0 + u tau (+ the delay when timed),
 * reported with the token index of event tokev. */
struct tb_cut_chunk {
    double u;
    uint32_t tokev;
    uint32_t cps : 30;
    uint32_t timed : 1;
    uint32_t blank : 1; /* nothing to say (tb_playout_add_blank) */
};

/* What a cut answers at a rate. */
enum tb_cut_answer { TB_CUT_UNSURE, TB_CUT_FREE, TB_CUT_GAP };

struct tb_cut {
    int by_time;
    double lo, hi; /* the cut holds for lo <= tau <= hi */
    double delay;  /* the policy's timer delay */
    struct tb_cut_chunk *v;
    size_t n, cap;
    uint64_t used; /* the caller's stamp of its last use */
    /* The closed form for the playout options it was last asked with. */
    int have_form;
    double f_wpm, f_preroll, f_latency;
    int f_after;     /* a chunk follows the one that starts playback */
    double f_d0;     /* max D_j at tau = 0 */
    double f_tau0;   /* where max D_j reaches 0 (INFINITY: never) */
    double f_slope;  /* u_j - u_q of the D_j that reaches it there */
    double f_speech; /* S_m */
};

/* Starts recording a cut for axis by_time, valid everywhere so far. */
void tb_cut_begin(struct tb_cut *c, int by_time);
void tb_cut_free(struct tb_cut *c); /* the chunks; c itself is the caller's */

/* A chunk closed (timed: by the timer, u its anchor's; blank: only white
 * space).  0, TB_ETOOBIG (cps of 2^30 or more) or TB_ENOMEM. */
int tb_cut_push(struct tb_cut *c, double u, uint32_t tokev, uint32_t cps, int timed, int blank);

/*
 * tb_cut_decision - a timer decision taken at tau while cutting: the
 * deadline dated by the arrival at u_a plus delay, compared with the
 * arrival at u_k (t_0 the first event's time), fired or not.  Narrows
 * [lo, hi] to the rates at which the same comparison, in floating point,
 * surely gives the same answer (empty when tau itself is too close to
 * call: the cut then holds nowhere).
 */
void tb_cut_decision(struct tb_cut *c, double t0, double ua, double uk, double delay, int fired);

/* Whether the cut holds at tau. */
int tb_cut_holds(const struct tb_cut *c, double tau);

/*
 * tb_cut_answer - whether the cut, re-timed by tau (within its bounds)
 * and played with options o (no TTS stage), leaves a silence longer than
 * TB_SEARCH_EPS: TB_CUT_FREE, TB_CUT_GAP, or TB_CUT_UNSURE near the
 * threshold (play it).  t0: the first event's time; umax: the last
 * event's u.  O(m) when o differs from the last options asked, O(1)
 * after.
 */
enum tb_cut_answer tb_cut_answer(struct tb_cut *c, const struct tb_playout_opts *o, double t0,
                                 double umax, double tau);

#endif
