/*
 * ttsws_loop.h - private to src/tts: what the WebSocket client's
 * connection (ttsws_conn.c, ttsws.c) asks of its thread's loop
 * (ttsws_loop.c) besides ttsws.h's functions.  The loop's thread only.
 */
#ifndef TTSBUF_TTS_TTSWS_LOOP_H
#define TTSBUF_TTS_TTSWS_LOOP_H

#include "ttsbuf/ttsws.h"

struct lws_context;
struct lws_protocols;

/* tb_ttsws_loop_create (ttsws.h) with the context's protocols (the
 * connection's, ttsws_conn.h; borrowed, static). */
int tb_ttsws_loop_open(struct tb_ttsws_loop **out, const struct lws_protocols *protocols, int tls,
                       char *err, size_t errlen);

/* The loop's libwebsockets context (the loop's, never NULL while the
 * loop lives). */
struct lws_context *tb_ttsws_loop_ctx(const struct tb_ttsws_loop *l);

/* Whether the loop's context has TLS (made for wss). */
int tb_ttsws_loop_tls(const struct tb_ttsws_loop *l);

/* Waits at most timeout_ms (and at most until the loop's next timer) for
 * the loop's descriptor or fd (-1: none) to be readable; reads nothing,
 * services nothing.  0, or -1 (poll failed: errno). */
int tb_ttsws_loop_wait(struct tb_ttsws_loop *l, int fd, int timeout_ms);

#endif
