/*
 * playout.h - the playout model (v1): when each chunk plays, where the
 * audio runs dry, and the exact minimum token rate.
 *
 * Chunk j = 1..m closes at time c_j (the arrival of event K_j) and lasts
 * D_j = cps_j x 10 / wpm seconds; S_j = D_1 + ... + D_j.
 *   ready     r_j = c_j + L                         (L = TTS latency)
 *   start     playback starts at s_1 = c_q + L, q the first chunk with
 *             S_q >= P (pre-roll), or the last chunk when none is
 *   playback  s_j = max(e_{j-1}, r_j), e_j = s_j + D_j
 *   underrun  g_j = r_j - e_{j-1} > 1 ms (j >= 2); >= 150 ms is also an
 *             interruption (WebRTC NetEq's audible-interruption line)
 *   min TPS   max over j > q of (T_j - T_q) / S_{j-1}, T_j the token index
 *             of event K_j (0 when there is no such j)
 *   speed-up  max over j > q of (c_j - c_q) / S_{j-1}
 * The minimum TPS is exact: at a constant rate r with the same first-token
 * time and texts, c_j - c_q = (T_j - T_q) / r, and no gap means
 * c_j + L <= s_1 + S_{j-1} for every j > q.  One pass, no search, O(1)
 * memory unless a schedule callback is set.
 *
 * The engine is online: chunks are added as they close, in order, so the
 * same code serves the simulator (virtual clock) and live runs (wall
 * clock).  Ownership: create/destroy.  Threads: one thread per engine.
 */
#ifndef TTSBUF_PLAYOUT_H
#define TTSBUF_PLAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define TB_GAP_MIN_S 0.001   /* shorter gaps are not underruns */
#define TB_INTERRUPT_S 0.150 /* gaps this long are interruptions */

struct tb_playout_opts {
    double wpm;         /* speech rate, words per minute (default 150) */
    double tts_latency; /* L, seconds (default 0) */
    double preroll;     /* P, seconds (default 0) */
    /* Rebuffering (default 0, off: the v1 model exactly).  When set, a
     * counted underrun pauses playback until P seconds of audio are
     * buffered again (chunk j waits for the first k >= j with
     * S_k - S_{j-1} >= P, or the last chunk), as video players and jitter
     * buffers do: fewer, longer gaps.  The gap is then s_j - e_{j-1}.  A
     * stream without an underrun plays exactly as in v1, so the minimum
     * TPS and speed-up (which are about no gap at all) do not change. */
    int rebuffer;
};

/* Defaults: wpm 150, no latency, no pre-roll, no rebuffering. */
void tb_playout_opts_default(struct tb_playout_opts *o);

/* One chunk's schedule, reported through tb_play_fn once it is known. */
struct tb_play {
    uint32_t chunk;    /* j, 1-based */
    uint32_t cps;      /* code points */
    double ready;      /* r_j = c_j + L */
    double start, end; /* s_j, e_j */
    double gap;        /* g_j when counted as an underrun, else 0 */
};
typedef void (*tb_play_fn)(void *ud, const struct tb_play *p);

struct tb_playout_result {
    uint32_t chunks; /* m */
    uint32_t q;      /* the chunk whose completion started playback */
    double ttfa;     /* s_1; 0 when there were no chunks */
    double speech;   /* S_m */
    double end;      /* e_m */
    uint32_t underruns;
    uint32_t interruptions;
    double gap_total; /* sum of counted gaps */
    double gap_max;
    double min_tps;
    double speedup;
};

struct tb_playout;

/*
 * tb_playout_create - an engine with options o (copied).  When fn is not
 * NULL it is called with each chunk's schedule as soon as it is known
 * (chunks before playback starts are reported when it does); the engine
 * then keeps those waiting chunks in a growing array.
 * Returns 0 and *out, TB_EINVAL (wpm <= 0, negative latency or pre-roll),
 * or TB_ENOMEM.
 */
int tb_playout_create(const struct tb_playout_opts *o, tb_play_fn fn, void *ud,
                      struct tb_playout **out);
void tb_playout_destroy(struct tb_playout *p); /* NULL is a no-op */

/* Starts over with new options (NULL keeps the old ones).  Keeps memory. */
int tb_playout_reset(struct tb_playout *p, const struct tb_playout_opts *o);

/*
 * tb_playout_add - chunk j+1 closed at time c (non-decreasing), its
 * completing event's token index tok (non-decreasing), cps >= 1 code
 * points.  Returns 0, or TB_ENOMEM (callback mode only).
 */
int tb_playout_add(struct tb_playout *p, double c, uint64_t tok, uint32_t cps);

/*
 * tb_playout_add_timed - as tb_playout_add, with the chunk's duration
 * given in seconds (a timed voice such as eSpeak NG) instead of the rate
 * model's cps x 10 / wpm.  Once a timed chunk is added, S sums the given
 * durations (and pre-roll compares against that sum); the formulas above
 * hold unchanged with D_j the given durations.  Returns 0, TB_EINVAL (dur
 * negative, NAN or absurd) or TB_ENOMEM.
 */
int tb_playout_add_timed(struct tb_playout *p, double c, uint64_t tok, uint32_t cps, double dur);

/* The stream has ended: starts playback if pre-roll was never reached.
 * Returns 0 or TB_ENOMEM. */
int tb_playout_finish(struct tb_playout *p);

/*
 * tb_playout_force_start - starts playback now, at time t (>= the last
 * chunk's completion), as if the last chunk added had closed at t: a
 * bounded buffer that can hold no more must start playing.  The minimum
 * TPS and speed-up are then measured from that start.  While rebuffering
 * it resumes playback at t instead (the minimum TPS is unchanged).
 * Returns 0, or TB_EINVAL when playing (not waiting for pre-roll or a
 * rebuffer) or no chunk was added.
 */
int tb_playout_force_start(struct tb_playout *p, double t);

/* Whether playback has started, and when (s_1). */
int tb_playout_started(const struct tb_playout *p, double *s1);

/* Time the last scheduled chunk ends (e_j of the latest known), or the
 * start time when nothing has played; 0 before start. */
double tb_playout_end(const struct tb_playout *p);

/* Results so far (final after tb_playout_finish). */
void tb_playout_result(const struct tb_playout *p, struct tb_playout_result *out);

#endif
