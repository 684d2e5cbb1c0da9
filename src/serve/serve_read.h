/*
 * serve_read.h - private to libttsbuf: a new mock-server connection, and its
 * events: the request read, then routed (serve_read.c).
 */
#ifndef TTSBUF_SERVE_READ_H
#define TTSBUF_SERVE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

void tb_serve_conn_event(struct tb_serve_loop *s, struct tb_serve_conn *c, uint32_t ev);
/* A new connection reading its request; returns it, or NULL when it was
 * closed (out of memory: counted as dropped). */
struct tb_serve_conn *tb_serve_conn_open(struct tb_serve_loop *s, int fd);

#endif
