/*
 * bench_ttsclient.h - private to libttsbuf: a `ttsbuf bench` stream's TTS
 * client as every real-TTS path of a level makes it (bench_ttsclient.c):
 * the answer's (bench_tts.c) and a tool turn's filler (bench_filler.c).
 *
 * Threads: the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_TTSCLIENT_H
#define TTSBUF_BENCH_TTSCLIENT_H

#include <stddef.h>

#include "bench_state.h"

/* A TTS client for stream x (the run's TTS options, on x's clock, the
 * thread's WebSocket loop, made by the first client that needs it),
 * counted in b->ntts; tag, when not NULL, is added to x's request id
 * ("cC.tT.TAG": another client of the same turn).  0, or an error in
 * err (TB_EINVAL, TB_ENOMEM, the WebSocket loop's). */
int tb_bench_tts_client(struct bench *b, const struct xf *x, const char *tag,
                        struct tb_ttsnet **out, char *err, size_t errlen);

#endif
