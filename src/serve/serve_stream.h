/*
 * serve_stream.h - private to libttsbuf: a streamed mock-server response
 * (serve_stream.c): the head, then each item of the plan when it is due,
 * in the connection's dialect, then the end.
 */
#ifndef TTSBUF_SERVE_STREAM_H
#define TTSBUF_SERVE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

/* Functions returning int return 0, or -1 when c was closed (the caller
 * must not touch it again). */
int tb_serve_stream_start(struct tb_serve_loop *s, struct tb_serve_conn *c);
/* A stream's response head (200, the dialect's stream type, the plan's
 * headers), counted as a request and a stream; for the tool call too
 * (serve_tool.c). */
void tb_serve_stream_head(struct tb_serve_loop *s, struct tb_serve_conn *c);
int tb_serve_advance(struct tb_serve_loop *s, struct tb_serve_conn *c);

#endif
