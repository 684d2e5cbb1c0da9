/*
 * bench_tts.h - private to libttsbuf: a real TTS per `ttsbuf bench`
 * stream (bench_tts.c, bench.h): each stream's segmenter and TTS client on
 * the level's loop thread, and the streams still speaking once their LLM
 * transfer ended.
 *
 * Threads: the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_TTS_H
#define TTSBUF_BENCH_TTS_H

#include <stddef.h>

#include "bench_state.h"

/* open: the stream's
 * segmenter and client, as it starts (0, or an error in err); close: its
 * LLM transfer ended and its record is b->out->v[rec]: the last chunks
 * go, and the client speaks on as a job (0 or TB_ENOMEM); drop: a stream
 * that never started (close and drop also end a filler the stream's
 * turn does not keep, bench_filler.h); step: at each wake-up, new events to the
 * segmenters, every client stepped without waiting, the jobs whose
 * chunks all ended concluded into their records (0 or TB_ENOMEM), and
 * a stream whose TTS is dead (tb_tts_log_dead) flagged (xf.tts_dead,
 * bench.tts_dead counts them) for tb_bench_xf_stop_dead;
 * a job whose turn the caller interrupts (--barge-in) has its TTS
 * stopped at T in step, its record's interrupted and barge_in set;
 * cancel: every job stopped and concluded; free: the jobs left. */
int tb_bench_tts_open(struct bench *b, struct xf *x, char *err, size_t errlen);
int tb_bench_tts_close(struct bench *b, struct xf *x, size_t rec);
void tb_bench_tts_drop(struct bench *b, struct xf *x);
int tb_bench_tts_step(struct bench *b);
int tb_bench_tts_cancel(struct bench *b);
void tb_bench_tts_free(struct bench *b);

/* The stream time the caller first hears c's audio: the arrival that
 * made `preroll` seconds of it (its first byte for 0); NAN while none
 * has.  A barge-in's T is this plus its draw. */
double tb_bench_tts_heard(const struct tb_ttsnet *c, double preroll);

#endif
