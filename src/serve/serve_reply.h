/*
 * serve_reply.h - private to libttsbuf: mock-server responses written whole
 * (serve_reply.c): a head and a body, an error in the connection's
 * dialect, busy (503 over the memory budget), too large (413).
 */
#ifndef TTSBUF_SERVE_REPLY_H
#define TTSBUF_SERVE_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

/* Functions returning int return 0, or -1 when c was closed (the caller
 * must not touch it again). */
int tb_serve_respond(struct tb_serve_loop *s, struct tb_serve_conn *c, int status,
                     const char *ctype, const char *body, size_t len, const char *extra);
int tb_serve_respond_error(struct tb_serve_loop *s, struct tb_serve_conn *c, int status,
                           const char *msg, const char *type, const char *code, const char *extra);
/* The head lines that report a completion's plan, each ending in CRLF:
 * "X-Ttsbuf-Prompt-Tokens: P" and "X-Ttsbuf-Prefill: SECONDS" (serve.h),
 * after `first` (a line of the caller's, or ""), into buf.  Never fails:
 * 128 bytes more than first always fit. */
void tb_serve_plan_head(const struct tb_serve_conn *c, const char *first, char *buf, size_t len);
int tb_serve_busy(struct tb_serve_loop *s, struct tb_serve_conn *c);
/* A connection over max_conns: 503 before its request is read. */
int tb_serve_over_conns(struct tb_serve_loop *s, struct tb_serve_conn *c);
int tb_serve_too_large(struct tb_serve_loop *s, struct tb_serve_conn *c);

/* Capacity (serve.h): takes a place for c in the completion (tts 0) or
 * TTS (tts 1) requests in flight: 0, or 1 over the cap (nothing taken;
 * c's log line names the cap and the Retry-After).  A place is given
 * back by tb_serve_slot_give (serve_priv.h).  Any loop. */
int tb_serve_slot_take(struct tb_serve_loop *s, struct tb_serve_conn *c, int tts);
/* "Retry-After: S\r\n" of a refusal over a cap, into buf. */
void tb_serve_retry_after(const struct tb_serve *srv, char *buf, size_t len);
/* A completion request over max_inflight: 429 in the dialect's shape. */
int tb_serve_over_inflight(struct tb_serve_loop *s, struct tb_serve_conn *c);

#endif
