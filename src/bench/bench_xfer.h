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
/* Starts turn c->turn of the call in slot (bench_call.c) with this chat
 * messages array, scheduled at t_sched.  Returns as tb_bench_xf_start. */
int tb_bench_xf_start_turn(struct bench *b, uint32_t slot, const char *messages_json,
                           const char *tools_json, double t_sched, char *err, size_t errlen);
/* Ends transfer x (libcurl's result curl_code; a redirect goes on) and
 * records it when measured.  Returns 0 or TB_ENOMEM. */
int tb_bench_xf_finish(struct bench *b, struct xf *x, int curl_code);
/* Closes transfer x at its barge-in (bench.h): the decision's time kept,
 * the connection not reused, the record made as the caller's end.
 * Returns as tb_bench_xf_finish. */
int tb_bench_xf_barge(struct bench *b, struct xf *x);
/* Stops every transfer flagged tts_dead (bench_tts.h: its TTS is dead,
 * bench.h): its record fails with error TB_READER_TTS and
 * tb_tts_log_dead's message, its stream ends now, the connection is not
 * reused.  Returns as tb_bench_xf_finish. */
int tb_bench_xf_stop_dead(struct bench *b);
/* Finishes every transfer libcurl says is done.  0 or TB_ENOMEM. */
int tb_bench_xf_drain(struct bench *b);
/* Ends the transfers the loop itself stops: idle ones, or all. */
int tb_bench_xf_stop(struct bench *b, int all);
/* Frees a list of transfers (next-linked). */
void tb_bench_xf_destroy(struct xf *x);

/* Sends again each stream whose wait to retry is over (bench.h's
 * Retries).  0, or an error (err says) that ends the level. */
int tb_bench_xf_retry(struct bench *b, char *err, size_t errlen);

#endif
