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
int tb_serve_respond(struct tb_serve *s, struct tb_serve_conn *c, int status, const char *ctype,
                     const char *body, size_t len, const char *extra);
int tb_serve_respond_error(struct tb_serve *s, struct tb_serve_conn *c, int status, const char *msg,
                           const char *type, const char *code, const char *extra);
int tb_serve_busy(struct tb_serve *s, struct tb_serve_conn *c);
int tb_serve_too_large(struct tb_serve *s, struct tb_serve_conn *c);

#endif
