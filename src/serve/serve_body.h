/*
 * serve_body.h - private to libttsbuf: the mock server's non-streamed
 * responses (serve_body.c): the whole body, in the connection's dialect,
 * sent when its last token is due.
 */
#ifndef TTSBUF_SERVE_BODY_H
#define TTSBUF_SERVE_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

/* Functions returning int return 0, or -1 when c was closed (the caller
 * must not touch it again). */
int tb_serve_body_start(struct tb_serve_loop *s, struct tb_serve_conn *c);
int tb_serve_body_walk(struct tb_serve_loop *s, struct tb_serve_conn *c);
int tb_serve_body_send(struct tb_serve_loop *s, struct tb_serve_conn *c);

#endif
