/*
 * tts_stage.h - the playout model with a TTS stage (connect latency,
 * per-chunk first-byte latency, concurrency, real-time factor): the
 * schedule online, and the minimum TPS and speed-up searched over the
 * stored chunk list at the end.  playout.c hands every call over to it
 * when an engine's options set a stage; playout.h states the model.
 *
 * Ownership: create/destroy, as the engine that owns it.  Threads: one.
 */
#ifndef TTSBUF_PLAY_TTS_STAGE_H
#define TTSBUF_PLAY_TTS_STAGE_H

#include <stdint.h>

#include "ttsbuf/playout.h"

struct tb_tts_stage;

/* Whether o sets a TTS stage (any of connect, concurrency, RTF, a whole
 * output, a hook). */
int tb_tts_stage_wanted(const struct tb_playout_opts *o);

/* When frame k of a chunk is complete (the frame clock the model's frame
 * player and the speaker share): tb_tts_stage_frame_ready, in
 * tts_stage_run.h. */

/* A stage for o (copied later by reset), reporting to fn(ud) when not
 * NULL.  Returns NULL when out of memory. */
struct tb_tts_stage *tb_tts_stage_create(tb_play_fn fn, void *ud);
void tb_tts_stage_destroy(struct tb_tts_stage *s); /* NULL is a no-op */

/* Starts over with options o (valid); keeps the chunk store's memory. */
void tb_tts_stage_reset(struct tb_tts_stage *s, const struct tb_playout_opts *o);

/* Chunk m+1 closed at c with token index tok, cps code points and
 * duration d seconds; blank: it has nothing to say (tb_tts_blank), so it
 * is sent to no TTS, as the live clients skip it: no latency (no connect
 * either: that goes to the first chunk that is not blank), no audio
 * (D_j = 0 whatever d), f_j = d_j = b_j, and it neither ends nor splits a
 * silence.  Returns 0, TB_EINVAL (a bad latency or RTF from a hook) or
 * TB_ENOMEM. */
int tb_tts_stage_add(struct tb_tts_stage *s, double c, uint64_t tok, uint32_t cps, double d,
                     int blank);

/* The stream ended: start if not started, then search.  0 or TB_ENOMEM. */
int tb_tts_stage_finish(struct tb_tts_stage *s);

/* The stream ended: start if not started, without the searches (the
 * minimum TPS and speed-up stay NAN).  0. */
int tb_tts_stage_finish_schedule(struct tb_tts_stage *s);

/* Whether the chunks added play with no underrun at pre-roll preroll in
 * place of the options': the schedule (not the searches) of the same
 * chunks added afresh to a stage reset with that pre-roll, replayed from
 * the stored chunks (no hook is called, and nothing allocated).  After
 * finish or finish_schedule, and not after a forced start.  Returns 1
 * (gap-free), 0 (an underrun) or TB_EINVAL (not finished), and the
 * replay's total counted silence in *gap_total unless it is NULL. */
int tb_tts_stage_gapless_at(struct tb_tts_stage *s, double preroll, double *gap_total);

/* A forced start at t (see tb_playout_force_start): 0 or TB_EINVAL. */
int tb_tts_stage_force_start(struct tb_tts_stage *s, double t);

/* b_j of the chunk added last; NAN when none was. */
double tb_tts_stage_last_begin(const struct tb_tts_stage *s);

/* The synthesis times of the chunk added last: b_j, f_j (first audio; d_j
 * when the output is whole) and g_j (all audio, d_j), and r, the
 * real-time factor its audio arrives at from f_j (R_j streamed, 0 whole:
 * all of it at f_j).  Returns 0, or TB_EINVAL when none was added. */
struct tb_tts_times {
    double b, f, g, r;
};
int tb_tts_stage_last(const struct tb_tts_stage *s, struct tb_tts_times *t);

/* The stream ended: playback starts if it had not, as in finish, without
 * the minimum-TPS and speed-up searches (a speaker that only plays the
 * schedule).  Idempotent. */
void tb_tts_stage_close(struct tb_tts_stage *s);

int tb_tts_stage_started(const struct tb_tts_stage *s, double *s1);
double tb_tts_stage_end(const struct tb_tts_stage *s);
void tb_tts_stage_result(const struct tb_tts_stage *s, struct tb_playout_result *out);

#endif
