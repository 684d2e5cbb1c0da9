/*
 * serve_tts.h - private to libttsbuf: the mock TTS's routes (serve_tts.c):
 * a request checked in its dialect, its speech synthesized on the speech
 * thread (serve_speech.c), then sent as PCM on its schedule.  Loop thread.
 */
#ifndef TTSBUF_SERVE_TTS_H
#define TTSBUF_SERVE_TTS_H

#include "serve_priv.h"

/* Whether c's request is for a TTS route (its path only). */
int tb_serve_tts_is_route(const struct tb_serve_conn *c);

/* Answers a TTS request (complete, read at c->t0).  0, or -1 when c was
 * closed. */
int tb_serve_tts_dispatch(struct tb_serve_loop *s, struct tb_serve_conn *c);

/* The speech thread finished jobs: their connections get their audio
 * scheduled, or a 500. */
void tb_serve_tts_ready(struct tb_serve_loop *s);

/* A TTS connection's deadline: sends what is due.  0, or -1 when c was
 * closed. */
int tb_serve_tts_advance(struct tb_serve_loop *s, struct tb_serve_conn *c);

/* Frees c's TTS state (abandoning a job in progress). */
void tb_serve_tts_conn_free(struct tb_serve_loop *s, struct tb_serve_conn *c);

#endif
