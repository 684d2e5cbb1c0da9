/*
 * drain.h - the consumer side of the ring: the speech-rate drain.
 *
 * It reads items as they become visible in the ring, feeds their text to
 * the segmenter, hands closed chunks to the playout engine, and releases
 * a chunk's tokens from the ring when its playback needs them (s_j - L;
 * with a TTS stage, when its synthesis begins, b_j).
 * All of its numbers come from the items' own arrival times, never from
 * when the drain happened to look: so the simulator (which steps it on a
 * virtual clock) and a live run (a consumer thread stepping it on the
 * monotonic clock while the network thread produces) give the same
 * results for the same arrivals.
 *
 * Bounded capacity: when the producer is waiting on a full ring and no
 * release is scheduled, the drain makes room: it cuts the open chunk (a
 * forced cut) and, if playback has not started, starts it (a forced
 * start).  Both are counted.
 *
 * Ownership: the drain borrows the ring; the caller creates and frees
 * both.  Threads: every tb_drain_* call from the ring's consumer thread.
 */
#ifndef TTSBUF_DRAIN_H
#define TTSBUF_DRAIN_H

#include "ttsbuf/playout.h"
#include "ttsbuf/ring.h"
#include "ttsbuf/sim.h"

struct tb_drain;

/* Returns 0 and *out, TB_EINVAL for bad options, or TB_ENOMEM.  fn (may
 * be NULL) receives each chunk's schedule, on the consumer thread. */
int tb_drain_create(const struct tb_sim_opts *o, struct tb_ring *ring, tb_play_fn fn, void *ud,
                    struct tb_drain **out);
void tb_drain_destroy(struct tb_drain *d); /* NULL is a no-op */

/*
 * tb_drain_step - at time now: reads every newly visible item, releases
 * every chunk due by now, and makes room if the producer is stuck.
 * *next receives the time of the next scheduled release (INFINITY when
 * none).  Returns 0 or TB_ENOMEM.
 */
int tb_drain_step(struct tb_drain *d, double now, double *next);

/* The producer has finished (after its last push): closes the final chunk
 * and starts playback if pre-roll was never reached.  Step on afterwards
 * until *next is INFINITY to release everything.  Returns 0 or TB_ENOMEM. */
int tb_drain_finish(struct tb_drain *d);

/* A live view: content events fed, underruns and silence so far, and the
 * audio queued ahead of the playhead at time now (before playback starts:
 * all audio ready so far).  A gap is counted in underruns and gap_total
 * once the audio resumes; silent_s is the one in progress: how long
 * playback has had nothing to play at now (0 when it has). */
struct tb_drain_status {
    size_t events;
    uint32_t underruns;
    double gap_total;
    double buffered_s;
    double silent_s;
    int playing;
};
void tb_drain_status(const struct tb_drain *d, double now, struct tb_drain_status *st);

/* Fills the playout result, the stream counts (events, tokens, ttft,
 * decode rate), the ring figures and the pre-roll curve.  usage_tokens is
 * left as it is (the caller knows it).  Returns 0 or TB_ENOMEM. */
int tb_drain_result(struct tb_drain *d, struct tb_sim_result *r);

#endif
