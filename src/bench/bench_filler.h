/*
 * bench_filler.h - private to libttsbuf: bench --filler with a real TTS
 * (bench --tts-url; bench_filler.c).  When a call's turn's stream starts
 * a tool call, the filler phrase goes to the TTS at once through a
 * client of its own, made as the stream's own is (bench_ttsclient.h:
 * the same options, clock, WebSocket loop and shared capacity), on the
 * turn's clock (the first request sent at 0);
 * when the turn waits for the tool (bench_tool.h) the client speaks on
 * as a filler job of the call, whose log the turn's record takes
 * (tb_bench_filler_take): the filler's send, first byte and audio
 * arrivals, which the silence windows play (bench_tool_rec.c).  A stream
 * whose turn is not a tool's (it spoke, or was cut) ends its filler.
 *
 * Threads: the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_FILLER_H
#define TTSBUF_BENCH_FILLER_H

#include "bench_state.h"

struct tb_tts_log;

/* x, a stream in flight with a real TTS: when it is a call's turn's
 * first request (its call not waiting for a tool yet), --filler is set
 * and its first tool call has begun, the filler is sent now (once a
 * stream).  0, or TB_ENOMEM; a client that cannot be made (its error)
 * leaves the turn without a filler. */
int tb_bench_filler_start(struct bench *b, struct xf *x);

/* x's turn waits for its tool (tb_bench_tool_taken said so): its filler
 * (started now when it was not yet) speaks on as a job of x's call.
 * 0 or TB_ENOMEM. */
int tb_bench_filler_keep(struct bench *b, struct xf *x);

/* x's filler, if any, stopped and freed (its turn does not keep it). */
void tb_bench_filler_drop(struct bench *b, struct xf *x);

/* Every filler stepped without waiting: those of streams in flight and
 * the jobs (a job whose chunk ended stays until taken). */
void tb_bench_filler_step(struct bench *b);

/* The log of the filler of the call in slot, of id call (its job stopped first when
 * it still speaks: what came is kept), the caller's (tb_tts_log_free,
 * free); NULL when the call has none (no client was made) or no
 * memory. */
struct tb_tts_log *tb_bench_filler_take(struct bench *b, uint32_t slot, uint64_t call);

/* cancel: every job stopped (its log kept for take); free: the jobs
 * left freed. */
void tb_bench_filler_cancel(struct bench *b);
void tb_bench_filler_free(struct bench *b);

#endif
