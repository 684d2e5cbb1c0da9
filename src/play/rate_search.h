/*
 * rate_search.h - the minimum-rate search both searching engines share
 * (rate_search.c): the TTS stage over its stored chunks (tts_stage.c) and
 * a time-based chunk policy re-cutting the stream at each rate (recut.c).
 * Each gives a test, "is rate x gap-free", over its own event simulation.
 *
 * Threads: any (no state).
 */
#ifndef TTSBUF_PLAY_RATE_SEARCH_H
#define TTSBUF_PLAY_RATE_SEARCH_H

/* Whether the stream re-timed to rate x (INFINITY: everything with the
 * first) plays with no silence longer than TB_SEARCH_EPS. */
typedef int tb_gap_free_fn(void *ud, double x);

/* The scan's steps: 2^(-1/steps) per step down. */
#define TB_SCAN_STEPS 8

/*
 * tb_rate_search - the lowest rate above which every rate is gap-free, to
 * TB_SEARCH_REL: doubles up from a first guess to a gap-free rate, walks
 * down (halving when monotone, else by 2^(-1/steps)) to one with a gap,
 * and bisects; 0 when still gap-free at umax / 1e5 (the last event a day
 * after the first).  umax: the last event's u (tokens or seconds after
 * the first); speech, theta: the audio and the pre-roll (theta >= speech
 * plays every rate gap-free).  The scan starts where everything falls
 * within a microsecond of the first.  Returns 0 and *out, or 1 when even
 * the infinite rate (or no finite one) leaves a gap.
 */
int tb_rate_search(tb_gap_free_fn *gap_free, void *ud, double umax, double speech, double theta,
                   int monotone, int steps, double *out);

#endif
