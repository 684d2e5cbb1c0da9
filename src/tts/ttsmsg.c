/*
 * ttsmsg.c - a TTS record's message (see ttsmsg.h).
 */
#include "ttsmsg.h"

#include <stdio.h>

void tb_tts_message_v(struct tb_tts_chunk *r, const struct tb_secrets *own,
                      const struct tb_secrets *run, const char *fmt, va_list ap)
{
    vsnprintf(r->message, sizeof(r->message), fmt, ap);
    for (char *p = r->message; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F)
            *p = ' ';
    tb_secrets_scrub(own, r->message);
    tb_secrets_scrub(run, r->message);
}
