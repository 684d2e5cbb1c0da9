/*
 * secrets_oracle.h - a brute-force oracle for tb_secrets_scrub
 * (secrets.h), shared by the fuzz target (fuzz_secrets.c) and the
 * property test (test_secrets.c).
 *
 * It reads a text the way secrets.h defines (whitespace and controls,
 * raw or escaped, are noise; \uXXXX, \xHH, %HH, &#NN; and &#xHH; under
 * 0x80 stand for their character; a UTF-8 sequence is one character),
 * written out again here from the header's words, not shared with
 * src/net/secrets.c, and then looks for echoes by trying every pair of
 * starting points: O(text x secret x run), for short texts only.
 */
#ifndef TTSBUF_SECRETS_ORACLE_H
#define TTSBUF_SECRETS_ORACLE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/secrets.h"

#define SO_NOISE (-1)

/* A text read as characters (noise dropped). */
struct so_text {
    int *c;
    size_t n;
};

static inline int so_hex(unsigned char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* k hex digits at s, or -1. */
static inline long so_hexn(const unsigned char *s, size_t n, size_t k)
{
    long v = 0;
    if (n < k)
        return -1;
    for (size_t i = 0; i < k; i++) {
        if (so_hex(s[i]) < 0)
            return -1;
        v = v * 16 + so_hex(s[i]);
    }
    return v;
}

static inline int so_char(long v)
{
    return v <= 0x20 || v == 0x7F ? SO_NOISE : (int)v;
}

/* One unit at s: its length; *c its character or SO_NOISE. */
static inline size_t so_unit(const unsigned char *s, size_t n, int *c)
{
    long v;
    if (s[0] <= 0x20 || s[0] == 0x7F) {
        *c = SO_NOISE;
        return 1;
    }
    if (s[0] == '\\' && n >= 2) {
        if (strchr("nrtbf", s[1]) != NULL && s[1] != '\0') {
            *c = SO_NOISE;
            return 2;
        }
        if (strchr("/\\\"'", s[1]) != NULL && s[1] != '\0') {
            *c = s[1];
            return 2;
        }
        if (s[1] == 'u' && (v = so_hexn(s + 2, n - 2, 4)) >= 0 && v < 0x80) {
            *c = so_char(v);
            return 6;
        }
        if (s[1] == 'x' && (v = so_hexn(s + 2, n - 2, 2)) >= 0 && v < 0x80) {
            *c = so_char(v);
            return 4;
        }
    }
    if (s[0] == '%' && (v = so_hexn(s + 1, n - 1, 2)) >= 0 && v < 0x80) {
        *c = so_char(v);
        return 3;
    }
    if (s[0] == '&' && n >= 4 && s[1] == '#') {
        int hex = s[2] == 'x' || s[2] == 'X';
        size_t i = 2 + (size_t)hex, d = 0;
        v = 0;
        while (i < n && d < 6 && (hex ? so_hex(s[i]) >= 0 : s[i] >= '0' && s[i] <= '9')) {
            v = v * (hex ? 16 : 10) + (hex ? so_hex(s[i]) : s[i] - '0');
            i++;
            d++;
        }
        if (d > 0 && i < n && s[i] == ';' && v < 0x80) {
            *c = so_char(v);
            return i + 1;
        }
    }
    if (s[0] >= 0x80) {
        size_t k = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 1;
        uint32_t h = 2166136261u;
        if (k > n || s[0] > 0xF4)
            k = 1;
        for (size_t i = 1; i < k; i++)
            if ((s[i] & 0xC0) != 0x80)
                k = 1;
        for (size_t i = 0; i < k; i++)
            h = (h ^ s[i]) * 16777619u;
        *c = 0x80 | (int)(h & 0x7F);
        return k;
    }
    *c = s[0];
    return 1;
}

/* s[0..n) read as characters; free with so_free. */
static inline struct so_text so_read(const char *s, size_t n)
{
    struct so_text t = {malloc((n + 1) * sizeof(int)), 0};
    size_t i = 0;
    if (t.c == NULL)
        abort();
    while (i < n) {
        int c;
        i += so_unit((const unsigned char *)s + i, n - i, &c);
        if (c != SO_NOISE)
            t.c[t.n++] = c;
    }
    return t;
}

static inline void so_free(struct so_text *t)
{
    free(t->c);
    t->c = NULL;
}

/* The base64 of b[0..n), standard alphabet, padded, into out (NUL-ended;
 * 4 * ceil(n / 3) + 1 bytes). */
static inline void so_base64(const unsigned char *b, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        out[k++] = a[w >> 18 & 63];
        out[k++] = a[w >> 12 & 63];
        out[k++] = i + 1 < n ? a[w >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? a[w & 63] : '=';
    }
    out[k] = '\0';
}

/*
 * The forms of secret s[0..n) that an echo may take (secrets.h): the
 * secret read as characters, and, when it has TB_SECRETS_PART characters
 * or more, its bytes (blanks and controls left out) base64-encoded after
 * 0, 1 and 2 zero bytes, in the standard and the URL alphabet, each cut
 * to the characters whose 6 bits are the secret's alone, when
 * TB_SECRETS_PART or more are left.  Into out[0..7); returns how many
 * (free each with so_free).
 */
static inline size_t so_secret_forms(const char *s, size_t n, struct so_text *out)
{
    unsigned char *raw = malloc(n + 3);
    char *enc = malloc((n + 3) / 3 * 4 + 8);
    size_t k = 0, nraw = 2;
    if (raw == NULL || enc == NULL)
        abort();
    out[k++] = so_read(s, n);
    raw[0] = raw[1] = 0; /* the alignments' zero bytes */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] > 0x20 && s[i] != 0x7F)
            raw[nraw++] = (unsigned char)s[i];
    for (size_t a = 0; out[0].n >= TB_SECRETS_PART && a < 3; a++) {
        size_t first = (8 * a + 5) / 6, end = 8 * (a + nraw - 2) / 6;
        so_base64(raw + 2 - a, a + nraw - 2, enc);
        if (end < first + TB_SECRETS_PART)
            continue;
        enc[end] = '\0';
        out[k++] = so_read(enc + first, end - first);
        for (char *p = enc + first; *p; p++)
            *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
        out[k++] = so_read(enc + first, end - first);
    }
    free(raw);
    free(enc);
    return k;
}

/* Whether text holds an echo of one of the secrets: TB_SECRETS_PART or
 * more consecutive characters of a secret that long, or the whole of a
 * shorter one. */
static inline int so_has_echo(const struct so_text *text, const struct so_text *sec, size_t nsec)
{
    for (size_t k = 0; k < nsec; k++) {
        const struct so_text *s = &sec[k];
        size_t need = s->n < TB_SECRETS_PART ? s->n : TB_SECRETS_PART;
        if (s->n == 0)
            continue;
        for (size_t i = 0; i < text->n; i++)
            for (size_t j = 0; j + need <= s->n; j++) {
                size_t run = 0;
                while (i + run < text->n && j + run < s->n && text->c[i + run] == s->c[j + run])
                    run++;
                if (run >= need)
                    return 1;
            }
    }
    return 0;
}

#endif
