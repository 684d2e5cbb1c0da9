/*
 * utf8.c - UTF-8 validation and code point counting.
 *
 * The validator follows RFC 3629's table (the same one as the Unicode
 * standard's Table 3-7), with an 8-bytes-at-a-time ASCII fast path: trace
 * text is mostly ASCII and this runs over every byte of every trace.
 */
#include "ttsbuf/utf8.h"

#include <stdint.h>
#include <string.h>

size_t tb_utf8_check(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        if (i + 8 <= len) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if ((w & 0x8080808080808080ull) == 0) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c == 0xE0) {
            need = 2;
            lo = 0xA0;
        } else if (c >= 0xE1 && c <= 0xEC) {
            need = 2;
        } else if (c == 0xED) {
            need = 2;
            hi = 0x9F; /* no surrogates */
        } else if (c >= 0xEE && c <= 0xEF) {
            need = 2;
        } else if (c == 0xF0) {
            need = 3;
            lo = 0x90;
        } else if (c >= 0xF1 && c <= 0xF3) {
            need = 3;
        } else if (c == 0xF4) {
            need = 3;
            hi = 0x8F; /* nothing above U+10FFFF */
        } else {
            return i;
        }
        if (i + need >= len) /* truncated sequence */
            return i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        i += need + 1;
    }
    return len;
}

size_t tb_utf8_count(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += (s[i] & 0xC0) != 0x80;
    return n;
}

size_t tb_utf8_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}

size_t tb_utf8_bom_len(const char *p, size_t len)
{
    return len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}
