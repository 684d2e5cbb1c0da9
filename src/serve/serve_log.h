/*
 * serve_log.h - private to libttsbuf: the mock server's request log
 * (serve_log.c; what it reports is in serve.h).  The other files note
 * what happens to a request in its connection's `lg` (serve_priv.h); the
 * line is made once, when the request ends.  Loop thread only.
 */
#ifndef TTSBUF_SERVE_LOG_H
#define TTSBUF_SERVE_LOG_H

#include "serve_priv.h"

/* A new connection's log facts: nothing known yet. */
void tb_serve_log_init(struct tb_serve_conn *c);

/* Reads X-Ttsbuf-Request-Id from the request head (c->in must still hold
 * it) into c->lg.rid.  Returns 0 (none, or a valid one), -1 when the
 * header is there and not 1..TB_SERVE_RID_MAX characters of A-Z a-z 0-9
 * . _ : - (its bytes are not kept). */
int tb_serve_log_rid(struct tb_serve_conn *c);

/* The client has gone: notes when the server saw it (once). */
void tb_serve_log_closed(struct tb_serve_conn *c);

/* The request ended as `end`: calls the server's request_log, once per
 * connection (later calls do nothing).  The tokens the schedule still
 * held are counted by walking a copy of the rest of the plan: O(the
 * tokens left), once per request that ends early. */
void tb_serve_log_end(struct tb_serve_loop *s, struct tb_serve_conn *c, enum tb_serve_end end);

#endif
