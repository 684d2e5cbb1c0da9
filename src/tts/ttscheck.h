/*
 * ttscheck.h - private to src/tts: what a chunk's audio must be, judged
 * the same way by both clients (ttshttp.c over HTTP, ttsws.c over a
 * WebSocket).  The request asks for raw mono 16-bit PCM; what came back
 * is that, or a "format" failure saying what it was instead:
 *
 *   - the media type an HTTP answer names (tb_ttscheck_media): raw PCM
 *     (audio/pcm, audio/L16, application/octet-stream, the types the
 *     providers and the mock send for raw bytes, or none named), a WAV
 *     whose header says mono 16-bit PCM at the rate asked (its header is
 *     read by tb_ttscheck_wav and not counted as audio), or anything else
 *     (audio/mpeg, audio/ogg, ...): a failure naming the type;
 *   - the chunk's end (tb_ttscheck_end): whole samples, and at least one
 *     of them for a chunk with something to say (a blank chunk is never
 *     sent: ttsmeas.h's tb_tts_blank).
 *
 * Pure functions; any thread.
 */
#ifndef TTSBUF_TTS_TTSCHECK_H
#define TTSBUF_TTS_TTSCHECK_H

#include <stddef.h>

#include "ttsbuf/ttsmeas.h"

/* What an HTTP answer's Content-Type says its body is. */
enum tb_ttscheck_media {
    TB_TTSCHECK_PCM = 0, /* raw PCM: every byte is audio */
    TB_TTSCHECK_WAV,     /* a WAV: a header (tb_ttscheck_wav), then PCM */
    TB_TTSCHECK_OTHER    /* not what was asked for */
};

/* The verdict on content_type ("" when the answer named none). */
int tb_ttscheck_media(const char *content_type);

/* Bytes of a WAV header read at most before it must be complete. */
#define TB_TTSCHECK_WAV_HEAD_MAX 4096u

/*
 * tb_ttscheck_wav - reads the RIFF/WAVE header at b[0..n) (the first n
 * bytes of the body).  Returns 1 with *head the header's length (where
 * the PCM of the "data" chunk begins) when it says mono 16-bit PCM
 * (format 1, or WAVE_FORMAT_EXTENSIBLE with the PCM subformat) at rate
 * Hz; 0 when more bytes are needed; -1 with the reason in why (one
 * line) when it is not such a WAV, or no "data" chunk begins within
 * TB_TTSCHECK_WAV_HEAD_MAX bytes.  The chunk sizes of a streamed WAV
 * (0 or 0xFFFFFFFF) are not read.
 */
int tb_ttscheck_wav(const unsigned char *b, size_t n, unsigned rate, size_t *head, char *why,
                    size_t whylen);

/*
 * tb_ttscheck_end - the verdict on a chunk whose audio came to its end
 * marker: TB_TTS_OK, or TB_TTS_FORMAT with the reason in why when half a
 * sample is left over (odd: a byte waits for its pair) or no audio came
 * for a text that is not blank (text[0..len)).
 */
int tb_ttscheck_end(const struct tb_tts_chunk *r, const char *text, int odd, char *why,
                    size_t whylen);

#endif
