/*
 * serve_route.h - private to libttsbuf: routing a complete mock-server request
 * (serve_route.c).
 */
#ifndef TTSBUF_SERVE_ROUTE_H
#define TTSBUF_SERVE_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

/* The request is complete (read at t0, CLOCK_MONOTONIC ns): answer it.
 * 0, or -1 when c was closed. */
int tb_serve_dispatch(struct tb_serve_loop *s, struct tb_serve_conn *c, int64_t t0);

#endif
