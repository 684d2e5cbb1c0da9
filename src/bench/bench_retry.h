/*
 * bench_retry.h - private to libttsbuf: a stream refused by the server
 * (429, or 503 with Retry-After) waits and is sent again, as the level's
 * retry policy says (bench.h, bench_retry.c).  On the level's thread.
 */
#ifndef TTSBUF_BENCH_RETRY_H
#define TTSBUF_BENCH_RETRY_H

#include "bench_state.h"

/* After x's transfer ended (its reader concluded): 1 when the policy
 * retries it (x->waiting, its wait recorded, due at x->retry_at), else
 * 0.  Never on a cancel, a stop, a warm-up stream or past max_retries. */
int tb_bench_retry_take(struct bench *b, struct xf *x);

/* Whether x's response was a refusal (429, or 503 with Retry-After). */
int tb_bench_retry_refused(const struct xf *x);

/* The level time the earliest waiting stream is due; INFINITY: none. */
double tb_bench_retry_next(const struct bench *b);

#endif
