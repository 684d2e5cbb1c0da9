/*
 * serve_accept.h - private to libttsbuf: accepting the mock server's
 * connections and handing each to a loop (serve_accept.c).
 */
#ifndef TTSBUF_SERVE_ACCEPT_H
#define TTSBUF_SERVE_ACCEPT_H

#include "serve_priv.h"

/* The listener is readable: accepts up to ACCEPT_BATCH connections and
 * hands each to the least loaded loop, or refuses it (503) when the
 * server is at max_conns.  loops[0]'s thread only. */
void tb_serve_accept(struct tb_serve_loop *s);

/* Watches the listener again if accepting paused and its retry time has
 * come (now).  loops[0]'s thread only. */
void tb_serve_accept_resume(struct tb_serve_loop *s, int64_t now);

/* The connections handed to s: opened on s.  s's thread. */
void tb_serve_accept_take(struct tb_serve_loop *s);

/* Closes what is still in s's inbox (the server stops). */
void tb_serve_accept_drop(struct tb_serve_loop *s);

#endif
