/*
 * ttshttp.h - private to src/tts: the TTS client's HTTP wire
 * (ttshttp.c), a request per chunk over one libcurl multi handle on the
 * caller's thread, on the engine both clients share (ttscore.h).
 * tb_ttsnet (ttsnet.c) hands every call here for an HTTP dialect; the
 * functions do what their tb_ttsnet_* namesakes say (ttsnet.h), on the
 * caller's thread.
 */
#ifndef TTSBUF_TTS_TTSHTTP_H
#define TTSBUF_TTS_TTSHTTP_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsnet.h"

struct tb_ttshttp;

/* The client of o, whose url and voice are the resolved ones
 * (tb_ttsnet_create resolves them).  0, TB_EINVAL (why in err) or
 * TB_ENOMEM. */
int tb_ttshttp_create(const struct tb_ttsnet_opts *o, struct tb_ttshttp **out, char *err,
                      size_t errlen);
/* NULL: nothing. */
void tb_ttshttp_destroy(struct tb_ttshttp *c);
int tb_ttshttp_submit(struct tb_ttshttp *c, const char *text, size_t len);
int tb_ttshttp_step_fd(struct tb_ttshttp *c, int fd, int timeout_ms);
int tb_ttshttp_finish(struct tb_ttshttp *c, double deadline);
void tb_ttshttp_cancel(struct tb_ttshttp *c);
const struct tb_tts_log *tb_ttshttp_log(const struct tb_ttshttp *c);
void tb_ttshttp_take_log(struct tb_ttshttp *c, struct tb_tts_log *out);
uint32_t tb_ttshttp_failed(const struct tb_ttshttp *c);

#endif
