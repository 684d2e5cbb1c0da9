/*
 * tts_stage_run.h - private to the TTS stage: a run of its schedule over
 * the stored chunks (tts_stage_run.c), which tts_stage.c drives online as
 * chunks are added and replays for the searches; and the frame clock the
 * speaker shares with it.  Threads: one, the stage's.
 */
#ifndef TTSBUF_PLAY_TTS_STAGE_RUN_H
#define TTSBUF_PLAY_TTS_STAGE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/playout.h"

struct tb_tts_stage;
struct tts_chunk;
struct tts_run;

/* With rtf > 1, when frame k (from 0, of TB_FRAME_S seconds) of a chunk
 * whose first audio is at f and which lasts d seconds is complete:
 * f + rtf min(k TB_FRAME_S + TB_FRAME_S, d).  The model's frame player
 * and the speaker both time frames by it. */
double tb_tts_stage_frame_ready(double f, double rtf, double d, uint64_t k);

/* A new run over st's chunks with pre-roll theta, at the trace's times,
 * reporting to fn(ud) when not NULL.  Runs are made one after another,
 * never interleaved: a new run owns the breakpoints. */
void tb_tts_run_init(struct tts_run *r, struct tb_tts_stage *st, double theta, tb_play_fn fn,
                     void *ud);

/* The breakpoints are built afresh: a new run, or a chunk's times moved. */
void tb_tts_run_bp_clear(struct tb_tts_stage *st);

/* Chunk j's (1-based) recorded times from the times hook into x's b, f,
 * g: 0, or TB_EINVAL when it has none, or they are not finite and in
 * order. */
int tb_tts_run_recorded(const struct tb_tts_stage *st, uint32_t j, struct tts_chunk *x);

/* Chunk j's (from 0) b_j, f_j, d_j in this run. */
void tb_tts_run_times(const struct tts_run *r, size_t j);

/* The real-time factor at which chunk x's audio arrives from f_j: R_j
 * streamed; 0 when whole (all of it at f_j = d_j). */
double tb_tts_run_arrival_rtf(const struct tb_tts_stage *st, const struct tts_chunk *x);

/* The candidate start over the k chunks waiting. */
void tb_tts_run_candidate(struct tts_run *r, size_t k);

/* Stored chunk m (the next) closes: it joins the run. */
void tb_tts_run_add(struct tts_run *r);

/* The stream ended: the pre-roll is at most what there is, and playback
 * starts if it had not. */
void tb_tts_run_finish(struct tts_run *r);

/* The stored chunks run again from the start with pre-roll theta, at the
 * trace's times (tau < 0) or re-timed c_j = c_1 + u_j tau, u_j by time
 * (by_time) or by tokens: the schedule the online run would have made of
 * them.  No hook is called, nothing allocated. */
void tb_tts_run_replay(struct tts_run *r, struct tb_tts_stage *st, double theta, double tau,
                       int by_time);

#endif
