/*
 * ttsws_conn.h - private to src/tts: the WebSocket TTS client's
 * connection (ttsws_conn.c), on its thread's loop (ttsws_loop.c).  The
 * client's thread, which is the loop's.
 */
#ifndef TTSBUF_TTS_TTSWS_CONN_H
#define TTSBUF_TTS_TTSWS_CONN_H

#include <stddef.h>

#include "ttsws_state.h"

struct lws_protocols;

/* The protocols of a loop's context (ttsws_loop.c): the one every
 * connection speaks (this file's callback), then the list's end. */
const struct lws_protocols *tb_ttsws_conn_protocols(void);

/* Whether url can be a WebSocket dialect's base URL: a scheme of ws,
 * wss, http or https, a host and at most one port of 1..65535, no
 * credentials, query or fragment.  0, or TB_EINVAL with the reason in err
 * (as tb_ttsws_conn_start says it).  Any thread: before a run starts. */
int tb_ttsws_url_check(const char *url, char *err, size_t errlen);

/* Parses the base URL, builds the path and the log's url, and starts the
 * connect on c->loop.  0, TB_EINVAL or TB_ENOMEM (the reason in err); a
 * connection that fails later is queued as an event (EV_REFUSED). */
int tb_ttsws_conn_start(struct tb_ttsws *c, const char *url, int insecure, char *err,
                        size_t errlen);
/* Detaches the connection from c (no callback reaches c again) and has
 * the loop close it at its next service; none: nothing. */
void tb_ttsws_conn_stop(struct tb_ttsws *c);
/* Messages were queued, or a close asked: the connection is asked to
 * write when its socket can (at the loop's next service). */
void tb_ttsws_conn_wake(struct tb_ttsws *c);

#endif
