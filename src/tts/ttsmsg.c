/*
 * ttsmsg.c - a TTS record's message (see ttsmsg.h).
 */
#include "ttsmsg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/jsonfield.h"

void tb_tts_message(struct tb_tts_chunk *r, const struct tb_secrets *own,
                    const struct tb_secrets *run, const char *fmt, ...)
{
    /* Room for the peer's words before the cut, so a key near the end is
     * still whole when the scrubber reads it. */
    char raw[4 * TB_TTS_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    tb_secrets_scrub(own, raw);
    tb_secrets_scrub(run, raw);
    tb_jsonfield_line_of(raw, strlen(raw), r->message, sizeof(r->message));
}
