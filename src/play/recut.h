/*
 * recut.h - the minimum TPS and speed-up under a time-based chunk policy
 * (recut.c).  Its cuts depend on when tokens arrive, so the stream re-timed
 * to a rate is cut again at that rate before it is played: the event
 * simulation at rate x is "re-time every content event, feed the
 * segmenter at the new times, play the chunks it closes" with the playout
 * model and options of the run.  "No gap" is not monotone in the rate for
 * these policies (ttsbuf-model(7) gives a stream), so the search scans
 * (TB_MIN_TPS_SCAN: not proven).
 *
 * Re-timing, as for the fixed chunks: at rate r (tokens/s) event k arrives
 * at t_0 + (T_k - T_0) / r, T_k its last token's index and t_0, T_0 the
 * first content event's; at speed-up x at t_0 + (t_k - t_0) / x.
 *
 * Memory: the content events and their text (24 bytes an event plus the
 * text), kept only by a run that uses such a policy; a chunk list and one
 * playout engine, reused by every rate; the cuts the search keeps (16
 * bytes a chunk, up to 16 cuts and about 16 MB).  Ownership:
 * create/destroy.
 * Threads: one per object.
 */
#ifndef TTSBUF_PLAY_RECUT_H
#define TTSBUF_PLAY_RECUT_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"

struct tb_recut;

/* The scan's steps per halving of the rate (2^(1/32): 2.2 %). */
#define TB_RECUT_STEPS 32

/* A store for segmenter options so (copied).  Returns 0 and *out,
 * TB_EINVAL (bad options) or TB_ENOMEM. */
int tb_recut_create(const struct tb_seg_opts *so, struct tb_recut **out);
void tb_recut_destroy(struct tb_recut *r); /* NULL is a no-op */

/* One content event at time t (non-decreasing), its last token's index
 * tok (non-decreasing), its text (len >= 1).  0 or TB_ENOMEM. */
int tb_recut_add(struct tb_recut *r, double t, uint64_t tok, const char *text, size_t len);

/*
 * tb_recut_play - the event simulation: the stream re-timed to rate x
 * (by_time: a speed-up, else tokens/s; INFINITY: every event at t_0), cut
 * and played with options o (the search's own: no callback, no search).
 * res receives the playout's result (silence_max says whether it is
 * gap-free).  Returns 0, TB_EINVAL or TB_ENOMEM.
 */
int tb_recut_play(struct tb_recut *r, const struct tb_playout_opts *o, double x, int by_time,
                  struct tb_playout_result *res);

/*
 * tb_recut_search - the minimum TPS and speed-up with options o: sets
 * res->min_tps, speedup, min_tps_none and min_tps_method (the rest of res
 * is left).  Returns 0, TB_EINVAL or TB_ENOMEM.
 */
int tb_recut_search(struct tb_recut *r, const struct tb_playout_opts *o,
                    struct tb_playout_result *res);

/* tb_recut_search re-cutting and playing the whole stream at every rate
 * it tests, as it did before it kept cuts: the same answer, bit for bit,
 * slower (a few hundred re-cuts a search).  The reference the recut
 * group holds tb_recut_search to. */
int tb_recut_search_full(struct tb_recut *r, const struct tb_playout_opts *o,
                         struct tb_playout_result *res);

/* How many times r has re-cut the whole stream (a tb_recut_play, or a
 * rate the search's kept cuts do not cover). */
size_t tb_recut_recuts(const struct tb_recut *r);

#endif
