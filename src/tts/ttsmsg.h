/*
 * ttsmsg.h - the message of a TTS record (struct tb_tts_chunk), as both
 * clients (ttsnet.c, ttsws.c) write it: every secret of the two sets
 * masked, then one line through the sanitizer every peer's words pass on
 * the LLM's path too (base/jsonfield.h's tb_jsonfield_line_of: control
 * characters become blanks, bytes that are not UTF-8 '?', the cut on a
 * character boundary), so a record, a report and a trace hold valid
 * UTF-8 whatever a provider sent.  Private to src/tts.  Any thread that
 * owns r.
 */
#ifndef TTSBUF_TTS_TTSMSG_H
#define TTSBUF_TTS_TTSMSG_H

#include "ttsbuf/secrets.h"
#include "ttsbuf/ttsmeas.h"

/* r->message from fmt and its arguments, cut to its size; own and run
 * may be NULL. */
void tb_tts_message(struct tb_tts_chunk *r, const struct tb_secrets *own,
                    const struct tb_secrets *run, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
