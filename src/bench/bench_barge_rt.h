/*
 * bench_barge_rt.h - private to libttsbuf: barge-in in real time
 * (bench_barge_rt.c; semantics in bench.h): each stream with a barge-in
 * pending has its own segmenter and playout engine, fed as its events
 * arrive, which say its first audio s_1 and so the moment T of the
 * interruption.  The stream's handling (bench_xfer.c) closes the stream
 * at T; this part only says which are due.
 *
 * Threads: the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_BARGE_RT_H
#define TTSBUF_BENCH_BARGE_RT_H

#include "bench_state.h"

/* Draws whether call turn x is interrupted (x->call, x->turn; b->o's
 * barge_in, barge_at, seed) and, when it is, readies its segmenter and
 * engine and puts it on the pending list.  Returns 0, or TB_ENOMEM /
 * TB_EINVAL (the chunk policy or playout options; err says). */
int tb_bench_barge_begin(struct bench *b, struct xf *x, char *err, size_t errlen);

/* Takes x off the pending list (its stream ended or was closed). */
void tb_bench_barge_drop(struct bench *b, struct xf *x);

/* Feeds each pending stream what came since, at level time now; returns
 * a pending stream whose T is at or before now (the caller closes it,
 * which drops it), or NULL; b->barge_next is the earliest T still ahead. */
struct xf *tb_bench_barge_due(struct bench *b, double now);

/* Frees x's segmenter and engine. */
void tb_bench_barge_free(struct xf *x);

#endif
