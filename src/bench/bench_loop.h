/*
 * bench_loop.h - private to libttsbuf: the event loop of one load level of
 * `ttsbuf bench` (bench_loop.c): libcurl's multi_socket API over one epoll
 * set, and the transfers' clock, which stamps each body read with the time
 * its socket was first seen ready.  The schedule (bench.c) drives it;
 * each stream's handling (bench_xfer.c) stamps and watches through it.
 *
 * Threads: the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_LOOP_H
#define TTSBUF_BENCH_LOOP_H

#include <stddef.h>

#include "bench_state.h"

/* tb_bench_loop_open - the clocks, the epoll set and the multi handle with
 * its socket and timer callbacks, on a zeroed b.  Returns 0, TB_EIO
 * ("epoll: reason" in err) or TB_ENOMEM; tb_bench_loop_close either way. */
int tb_bench_loop_open(struct bench *b, char *err, size_t errlen);
void tb_bench_loop_close(struct bench *b);

/* Stamps the transfers' clock now (the start of a handling). */
void tb_bench_loop_stamp(struct bench *b);

/* Asks epoll again when REPOLL_S has passed: 1 asked, 0 not due, -1 an
 * epoll error. */
int tb_bench_loop_watch(struct bench *b);

/* Waits up to ms for sockets (0: a look), then hands each ready socket to
 * libcurl with its stamp.  Returns 0, or -1 on an epoll error (errno). */
int tb_bench_loop_wait(struct bench *b, int ms);

/* Runs libcurl's timer when it is due. */
void tb_bench_loop_timer(struct bench *b);

/* Hands libcurl the sockets of transfers silent for SILENT_S, in case a
 * read was left undone (edge-triggered epoll reports an arrival once). */
void tb_bench_loop_nudge(struct bench *b);

#endif
