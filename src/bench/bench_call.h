/*
 * bench_call.h - private to libttsbuf: the calls of one `ttsbuf bench`
 * level (bench_call.c; semantics in bench_calls.h): starting calls on
 * their schedule (closed loop or Poisson arrivals), sending each turn with
 * the conversation so far, and, when a turn's stream ends, playing it out
 * and scheduling the next turn on the speech clock.
 *
 * Threads: the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_CALL_H
#define TTSBUF_BENCH_CALL_H

#include <stddef.h>

#include "bench_state.h"

/* Sets up b->calls for this shard's share (b->o, and b->target, b->cap
 * and b->rate from tb_bench_shard_share, set),
 * and b->turn_ended (tb_bench_call_ended).  Returns 0. */
int tb_bench_call_open(struct bench *b);
void tb_bench_call_close(struct bench *b);

/* Starts the calls that are due at level time now and the turns whose
 * time has come.  Returns 0 or an error (err says). */
int tb_bench_call_schedule(struct bench *b, double now, char *err, size_t errlen);

/* The stream of the call in slot ended as record rec_index (measured,
 * made): plays it out (the record's playout fields and play_end), then
 * ends the call (a failed or cut turn, or its last) or schedules its next
 * turn.  An error (out of memory, the playout's) is kept in b->calls.rc. */
void tb_bench_call_ended(struct bench *b, uint32_t slot, size_t rec_index);

/* Call slot sends its turn (again) at level time t: pushed on the
 * waiting heap.  0 or TB_ENOMEM. */
int tb_bench_call_wait(struct bench *b, uint32_t slot, double t);

/* Level time of the next thing the calls wait for (a turn or an
 * arrival), or INFINITY. */
double tb_bench_call_next(const struct bench *b);

/* The calls' part of the progress (bench.h) at level time now: the
 * calls by state and the turns; O(calls waiting). */
void tb_bench_call_progress(const struct bench *b, double now, struct tb_bench_progress *p);

/* Whether every call of this shard has ended. */
int tb_bench_call_done(const struct bench *b);

#endif
