/*
 * ttsws_rx.h - private to src/tts: what a WebSocket TTS sent back and the
 * chunks' ends (ttsws_rx.c), in the client's step; a record's
 * bookkeeping is the engine's (ttscore.h).
 */
#ifndef TTSBUF_TTS_TTSWS_RX_H
#define TTSBUF_TTS_TTSWS_RX_H

#include <stddef.h>
#include <stdint.h>

#include "ttsws_state.h"

/* Ends chunk j now as kind (a message, printf-like; NULL: none). */
void tb_ttsws_conclude(struct tb_ttsws *c, uint32_t j, int kind, long status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Every chunk in flight ends as kind, why. */
void tb_ttsws_fail_flying(struct tb_ttsws *c, int kind, long status, const char *why);
/* The connection failed or closed: what is in flight ends, and every
 * chunk sent later fails the same way. */
void tb_ttsws_conn_down(struct tb_ttsws *c, int kind, long status, const char *why);
/* The non-blank characters of t[0..n) (ElevenLabs' alignment counts). */
uint32_t tb_ttsws_nonblank(const char *t, size_t n);
/* Takes and handles every event the connection's callbacks queued. */
void tb_ttsws_drain(struct tb_ttsws *c);
/* Handles one event (e and its data stay the caller's). */
void tb_ttsws_rx_event(struct tb_ttsws *c, const struct tb_ttsws_ev *e);

#endif
