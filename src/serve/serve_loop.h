/*
 * serve_loop.h - private to libttsbuf: one of the mock server's event
 * loops (serve_loop.c); tb_serve_run runs one a thread.
 */
#ifndef TTSBUF_SERVE_LOOP_H
#define TTSBUF_SERVE_LOOP_H

#include <stddef.h>

#include "serve_priv.h"

/* Makes srv->loops[index] (zeroed, its descriptors -1): its histogram,
 * epoll set, timerfd and inbox, watching the stop eventfd, its speech
 * box and, for index 0, the listener.  0, TB_ENOMEM or TB_EIO; what was
 * made is freed by tb_serve_loop_free.  Before any loop runs. */
int tb_serve_loop_init(struct tb_serve *srv, size_t index);

/* Runs the loop until the server's stop eventfd is readable, then closes
 * what it holds (tb_serve_loop_close).  0 or TB_EIO.  Its own thread. */
int tb_serve_loop_run(struct tb_serve_loop *s);

/* Closes the loop's connections (their requests stopped) and what waits
 * in its inbox.  Its thread, or any once it no longer runs. */
void tb_serve_loop_close(struct tb_serve_loop *s);

/* Closes and frees what tb_serve_loop_init made; a loop never made is a
 * no-op.  Once it no longer runs. */
void tb_serve_loop_free(struct tb_serve_loop *s);

#endif
