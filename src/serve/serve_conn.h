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
int tb_serve_flush(struct tb_serve_loop *s, struct tb_serve_conn *c);
int tb_serve_finish(struct tb_serve_loop *s, struct tb_serve_conn *c);
int tb_serve_conn_close(struct tb_serve_loop *s, struct tb_serve_conn *c, int dropped);

/*
 * tb_serve_piece_made - a timed body (events, audio) made `made` bytes
 * this pass: a long run goes out as it is made, so the kernel's buffer
 * takes it rather than ours; past PASS_BYTES the connection yields to the
 * others (rescheduled now).  Returns 1 to make the next piece, else 0 or
 * -1 as above, for the caller to return.
 */
int tb_serve_piece_made(struct tb_serve_loop *s, struct tb_serve_conn *c, size_t made);

#endif
