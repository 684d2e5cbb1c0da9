/*
 * bench_xfer.h - private to libttsbuf: one `ttsbuf bench` stream
 * (bench_xfer.c): its request body, its transfer on the level's multi
 * handle, its bytes through the stream reader, and the record it leaves.
 *
 * Threads: the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_XFER_H
#define TTSBUF_BENCH_XFER_H

#include <stddef.h>
#include <stdint.h>

#include "bench_state.h"

/* What a stream counts toward bench's total (TB_BENCH_HELD_MAX): its
 * events and their text, as a loaded trace counts. */
uint64_t tb_bench_held(const struct tb_stream *s);

/* Starts the next request (scheduled at t_sched).  Returns 0, TB_ENOMEM,
 * TB_EINVAL (a bad body: err says) or TB_EIO. */
int tb_bench_xf_start(struct bench *b, double t_sched, char *err, size_t errlen);
/* Ends transfer x (libcurl's result curl_code; a redirect goes on) and
 * records it when measured.  Returns 0 or TB_ENOMEM. */
int tb_bench_xf_finish(struct bench *b, struct xf *x, int curl_code);
/* Finishes every transfer libcurl says is done.  0 or TB_ENOMEM. */
int tb_bench_xf_drain(struct bench *b);
/* Ends the transfers the loop itself stops: idle ones, or all. */
int tb_bench_xf_stop(struct bench *b, int all);
/* Frees a list of transfers (next-linked). */
void tb_bench_xf_destroy(struct xf *x);

/* A real TTS per stream (bench_tts.c, bench.h).  open: the stream's
 * segmenter and client, as it starts (0, or an error in err); close: its
 * LLM transfer ended and its record is b->out->v[rec]: the last chunks
 * go, and the client speaks on as a job (0 or TB_ENOMEM); drop: a stream
 * that never started; step: at each wake-up, new events to the
 * segmenters, every client stepped without waiting, the jobs whose
 * chunks all ended concluded into their records (0 or TB_ENOMEM);
 * cancel: every job stopped and concluded; free: the jobs left. */
int tb_bench_tts_open(struct bench *b, struct xf *x, char *err, size_t errlen);
int tb_bench_tts_close(struct bench *b, struct xf *x, size_t rec);
void tb_bench_tts_drop(struct bench *b, struct xf *x);
int tb_bench_tts_step(struct bench *b);
int tb_bench_tts_cancel(struct bench *b);
void tb_bench_tts_free(struct bench *b);

#endif
