/*
 * ttsws_priv.h - private to src/tts: what ttsws.c offers besides ttsws.h.
 *
 * A client made by tb_ttsws_create_detached has no connection: its
 * messages stay in the out queue and its events are whatever the caller
 * hands tb_ttsws_rx_event (ttsws_rx.h): the fuzz target,
 * tests/fuzz/fuzz_ttsws.c, and the tests drive the decoder so, on a
 * virtual clock.
 */
#ifndef TTSBUF_TTS_TTSWS_PRIV_H
#define TTSBUF_TTS_TTSWS_PRIV_H

#include <stddef.h>

#include "ttsbuf/ttsnet.h"
#include "ttsws_state.h"

/*
 * tb_ttsws_create_detached - a client as tb_ttsws_create makes it, with no
 * connection: it is up at once, its messages stay in c->oq (a chunk's
 * text with its j), and nothing happens but what tb_ttsws_rx_event is
 * handed.  Returns 0, TB_EINVAL or TB_ENOMEM.
 */
int tb_ttsws_create_detached(int api, const struct tb_ttsnet_opts *o, struct tb_ttsws **out,
                             char *err, size_t errlen);

#endif
