/*
 * serve_conn.h - private to libttsbuf: a mock-server connection's output and
 * end (serve_conn.c).  Everything runs on the server's loop thread.
 */
#ifndef TTSBUF_SERVE_CONN_H
#define TTSBUF_SERVE_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

/* Functions returning int return 0, or -1 when c was closed (the caller
 * must not touch it again). */
int tb_serve_flush(struct tb_serve *s, struct tb_serve_conn *c);
int tb_serve_finish(struct tb_serve *s, struct tb_serve_conn *c);
int tb_serve_conn_close(struct tb_serve *s, struct tb_serve_conn *c, int dropped);

#endif
