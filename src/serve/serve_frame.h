/*
 * serve_frame.h - private to libttsbuf: the mock server's framing
 * (serve_frame.c): HTTP chunks, each carrying one SSE event or one NDJSON
 * line, written in place into a connection's output buffer.
 */
#ifndef TTSBUF_SERVE_FRAME_H
#define TTSBUF_SERVE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

/* On failure c is marked broken (tb_serve_sse_open returns NULL then). */
char *tb_serve_sse_open(struct tb_serve_conn *c, const char *type, size_t len, size_t room);
void tb_serve_sse_close(struct tb_serve_conn *c);
void tb_serve_sse_event(struct tb_serve_conn *c, const char *type, const char *data, size_t len);
void tb_serve_ndjson_line(struct tb_serve_conn *c, const char *data, size_t len);

#endif
