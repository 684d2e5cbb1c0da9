/*
 * ttsmsg.h - the message of a TTS record (struct tb_tts_chunk), as both
 * clients (ttsnet.c, ttsws.c) write it: one line (control characters
 * become blanks), every secret of the two sets masked.  Private to
 * src/tts.  Any thread that owns r.
 */
#ifndef TTSBUF_TTS_TTSMSG_H
#define TTSBUF_TTS_TTSMSG_H

#include <stdarg.h>

#include "ttsbuf/secrets.h"
#include "ttsbuf/ttsmeas.h"

/* r->message from fmt and ap, cut to its size; own and run may be NULL. */
void tb_tts_message_v(struct tb_tts_chunk *r, const struct tb_secrets *own,
                      const struct tb_secrets *run, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 0)))
#endif
    ;

#endif
