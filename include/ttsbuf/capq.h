/*
 * capq.h - a capacity shared by every stream of a run: at most N holders
 * at once (a TTS account's concurrent syntheses, bench --tts-capacity),
 * the others waiting first come, first served (capq.c).
 *
 * A holder is a caller-owned struct tb_capq_slot.  tb_capq_enter joins
 * the queue: the slot is granted at once when fewer than N are held and
 * nobody waits, else it waits at the queue's tail.  tb_capq_leave gives a
 * held slot back (and grants it to the queue's head at that moment) or
 * takes a waiting one out of the queue.  Order: the order of the enter
 * calls, which take the lock and read the clock under it, so the enter
 * times of the queue are non-decreasing in its order (FCFS by the time a
 * holder became ready; two equal times go in the order they entered).
 * A slot frees when its holder leaves; what counts as held is the
 * caller's (bench: from the grant until the synthesis' last audio byte
 * was received, or the chunk failed or was canceled).
 *
 * Times: the clock given at create (seconds since its origin), read only
 * under the lock, so its now must be callable from any thread (the
 * monotonic clock is: a pure read).  enter and grant are on it.
 *
 * Threads: any thread may call any function on the same queue; a short
 * mutex guards the queue (a few pointer moves, no allocation, no I/O
 * inside), which is why it is kept off real-time audio paths: the TTS
 * clients call it from their loops, never from an audio callback.  A
 * slot is used by one thread (its owner) at a time.
 */
#ifndef TTSBUF_CAPQ_H
#define TTSBUF_CAPQ_H

#include "ttsbuf/clock.h"

#define TB_CAPQ_MAX 100000 /* N at most */

enum { TB_CAPQ_IDLE = 0, TB_CAPQ_WAITING, TB_CAPQ_HELD };

struct tb_capq_slot {
    struct tb_capq_slot *next; /* the queue's link (the queue's) */
    double enter;              /* when it entered (clock seconds) */
    double grant;              /* when it was granted; NAN while waiting */
    int state;                 /* TB_CAPQ_*: read it with tb_capq_held */
};

struct tb_capq;

/* A queue of capacity n (1..TB_CAPQ_MAX) on clock clk (borrowed; must
 * outlive the queue).  0, TB_EINVAL (n out of range, clk NULL) or
 * TB_ENOMEM.  *out is the caller's (tb_capq_destroy). */
int tb_capq_create(int n, struct tb_clock *clk, struct tb_capq **out);

/* Frees q (NULL: nothing).  No slot may be waiting or held any more. */
void tb_capq_destroy(struct tb_capq *q);

/* The capacity N. */
int tb_capq_capacity(const struct tb_capq *q);

/* s (idle) enters: held at once (grant = enter) or waiting.  Returns 1
 * when held, 0 when waiting. */
int tb_capq_enter(struct tb_capq *q, struct tb_capq_slot *s);

/* Whether s is held now; when it is, *grant (may be NULL) its grant. */
int tb_capq_held(struct tb_capq *q, const struct tb_capq_slot *s, double *grant);

/* s leaves (held: its slot goes to the head of the queue, granted now;
 * waiting: out of the queue; idle: nothing).  s is idle after. */
void tb_capq_leave(struct tb_capq *q, struct tb_capq_slot *s);

/* Slots held and waiting now (a snapshot, for reports and tests). */
void tb_capq_counts(struct tb_capq *q, int *held, int *waiting);

#endif
