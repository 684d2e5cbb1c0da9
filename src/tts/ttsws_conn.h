/*
 * ttsws_conn.h - private to src/tts: the WebSocket TTS client's
 * connection (ttsws_conn.c), on a thread of its own.
 */
#ifndef TTSBUF_TTS_TTSWS_CONN_H
#define TTSBUF_TTS_TTSWS_CONN_H

#include <stddef.h>

#include "ttsws_state.h"

/* Parses the base URL, builds the path and the log's url, starts the
 * context, the connect and the thread.  0, TB_EINVAL or TB_ENOMEM (the
 * reason in err).  The caller's thread. */
int tb_ttsws_conn_start(struct tb_ttsws *c, const char *url, int insecure, char *err,
                        size_t errlen);
/* Ends the thread and the context (no callback runs); detached: nothing. */
void tb_ttsws_conn_stop(struct tb_ttsws *c);
/* Wakes the thread (messages queued, a close asked); detached: nothing. */
void tb_ttsws_conn_wake(struct tb_ttsws *c);

#endif
