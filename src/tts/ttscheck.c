/*
 * ttscheck.c - what a chunk's audio must be (see ttscheck.h).
 */
#include "ttscheck.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The media type of ct (blanks and parameters cut) is `want`. */
static int is_type(const char *ct, const char *want)
{
    size_t n = strlen(want), k;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    k = strcspn(ct, "; \t");
    return k == n && strncasecmp(ct, want, n) == 0;
}

int tb_ttscheck_media(const char *ct)
{
    /* The raw types: what the providers document or send for raw PCM
     * (OpenAI's and ElevenLabs' audio/pcm, RFC 2586's audio/L16, the
     * generic application/octet-stream Deepgram and Cartesia send for
     * container none or raw, as ttsbuf serve's mock does). */
    static const char *const raw[] = {"audio/pcm", "audio/l16", "application/octet-stream",
                                      "audio/x-pcm", "audio/raw"};
    static const char *const wav[] = {"audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"};
    const char *p = ct;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0')
        return TB_TTSCHECK_PCM; /* nothing claimed: the bytes asked for */
    for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
        if (is_type(p, raw[i]))
            return TB_TTSCHECK_PCM;
    for (size_t i = 0; i < sizeof(wav) / sizeof(wav[0]); i++)
        if (is_type(p, wav[i]))
            return TB_TTSCHECK_WAV;
    return TB_TTSCHECK_OTHER;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static unsigned le16(const unsigned char *b)
{
    return (unsigned)b[0] | (unsigned)b[1] << 8;
}

/* The "fmt " chunk's body f[0..n): mono 16-bit PCM at rate, or why not. */
static int fmt_ok(const unsigned char *f, size_t n, unsigned rate, char *why, size_t whylen)
{
    /* KSDATAFORMAT_SUBTYPE_PCM: 00000001-0000-0010-8000-00aa00389b71. */
    static const unsigned char pcm_guid[16] = {1,    0, 0, 0,    0, 0,    0x10, 0,
                                               0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71};
    unsigned tag, ch, bits;
    uint32_t hz;
    if (n < 16) {
        snprintf(why, whylen, "a WAV whose fmt chunk is %zu bytes (16 at least)", n);
        return -1;
    }
    tag = le16(f);
    ch = le16(f + 2);
    hz = le32(f + 4);
    bits = le16(f + 14);
    if (tag == 0xFFFE && n >= 40 && memcmp(f + 24, pcm_guid, sizeof(pcm_guid)) == 0)
        tag = 1;
    if (tag != 1 || ch != 1 || bits != 16 || hz != rate) {
        snprintf(why, whylen,
                 "a WAV of format %u, %u channel%s, %u bits at %lu Hz, not mono 16-bit PCM "
                 "(format 1) at %u Hz",
                 tag, ch, ch == 1 ? "" : "s", bits, (unsigned long)hz, rate);
        return -1;
    }
    return 0;
}

int tb_ttscheck_wav(const unsigned char *b, size_t n, unsigned rate, size_t *head, char *why,
                    size_t whylen)
{
    size_t at = 12;
    int fmt = 0;
    *head = 0;
    if ((n >= 4 && memcmp(b, "RIFF", 4) != 0) || (n >= 12 && memcmp(b + 8, "WAVE", 4) != 0)) {
        snprintf(why, whylen, "a WAV that does not begin with RIFF....WAVE");
        return -1;
    }
    if (n < 12)
        return 0;
    /* The chunks up to "data"; each is padded to an even length. */
    while (at + 8 <= n) {
        uint32_t size;
        size = le32(b + at + 4);
        if (memcmp(b + at, "data", 4) == 0) {
            if (!fmt) {
                snprintf(why, whylen, "a WAV whose data comes before its fmt chunk");
                return -1;
            }
            *head = at + 8;
            return 1;
        }
        if (size > TB_TTSCHECK_WAV_HEAD_MAX || at + 8 + size + 8 > TB_TTSCHECK_WAV_HEAD_MAX)
            break; /* no room for a data chunk after it */
        if (at + 8 + size > n)
            return 0;
        if (memcmp(b + at, "fmt ", 4) == 0) {
            if (fmt_ok(b + at + 8, size, rate, why, whylen) != 0)
                return -1;
            fmt = 1;
        }
        at += 8 + size + (size & 1);
    }
    if (at + 8 <= n || n >= TB_TTSCHECK_WAV_HEAD_MAX) {
        snprintf(why, whylen, "a WAV with no data chunk in its first %u bytes",
                 TB_TTSCHECK_WAV_HEAD_MAX);
        return -1;
    }
    return 0;
}

int tb_ttscheck_end(const struct tb_tts_chunk *r, const char *text, int odd, char *why,
                    size_t whylen)
{
    if (odd) {
        snprintf(why, whylen, "an odd number of PCM bytes (%llu): not 16-bit samples",
                 (unsigned long long)r->bytes + 1);
        return TB_TTS_FORMAT;
    }
    if (r->bytes == 0 && !tb_tts_blank(text, r->len)) {
        snprintf(why, whylen, "no audio for a chunk of %u characters: its end came first",
                 (unsigned)r->chars);
        return TB_TTS_FORMAT;
    }
    return TB_TTS_OK;
}
