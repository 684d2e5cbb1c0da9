/*
 * jsontext.c - lone UTF-16 surrogate escapes in JSON text written by
 * others, and pairing their halves across a stream's events (see
 * jsontext.h).  Linear in the text: a memchr for the bytes that matter,
 * then a copy only when something has to change.
 */
#include "jsontext.h"

#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

int tb_jsontext_hex(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The code unit of the escape "\uXXXX" at s[0..6), or -1. */
static long escape_at(const char *s, size_t avail)
{
    long v = 0;
    if (avail < 6 || s[0] != '\\' || s[1] != 'u')
        return -1;
    for (int i = 2; i < 6; i++) {
        int h = tb_jsontext_hex((unsigned char)s[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Raw bytes ED A0..BF: a surrogate encoded as if it were a character. */
static int raw_half(const char *s, size_t len, size_t *at)
{
    const char *p = s, *e = s + len;
    while ((p = memchr(p, 0xED, (size_t)(e - p))) != NULL) {
        if (p + 1 < e && (unsigned char)p[1] >= 0xA0 && (unsigned char)p[1] <= 0xBF) {
            *at = (size_t)(p - s) + 1;
            return 1;
        }
        p++;
    }
    return 0;
}

int tb_jsontext_fix(const char *s, size_t len, enum tb_jsontext_mode mode, char **out,
                    size_t *outlen, size_t *at)
{
    size_t i = 0, done = 0, k = 0;
    char *o = NULL;
    *out = NULL;
    *outlen = 0;
    if (mode == TB_JSONTEXT_HALVES && raw_half(s, len, at))
        return TB_EFORMAT;
    while (i < len) {
        const char *bs = memchr(s + i, '\\', len - i);
        long cu, lo;
        if (bs == NULL)
            break;
        i = (size_t)(bs - s);
        cu = escape_at(s + i, len - i);
        if (cu < 0xD800 || cu > 0xDFFF) {
            /* Not a surrogate (or another escape, "\\" included): step
             * over the whole escape so its second byte is never read as
             * the start of one. */
            i += cu < 0 ? 2 : 6;
            continue;
        }
        lo = cu <= 0xDBFF ? escape_at(s + i + 6, len - i - 6) : -1;
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            i += 12; /* a proper pair: cJSON reads it */
            continue;
        }
        if (o == NULL && (o = malloc(len + 1)) == NULL)
            return TB_ENOMEM;
        memcpy(o + k, s + done, i - done);
        k += i - done;
        if (mode == TB_JSONTEXT_REPLACE) {
            memcpy(o + k, "\\ufffd", 6);
            k += 6;
        } else {
            o[k++] = (char)(0xE0 | (cu >> 12));
            o[k++] = (char)(0x80 | ((cu >> 6) & 0x3F));
            o[k++] = (char)(0x80 | (cu & 0x3F));
        }
        i += 6;
        done = i;
    }
    if (o == NULL)
        return 0;
    memcpy(o + k, s + done, len - done);
    k += len - done;
    o[k] = '\0';
    *out = o;
    *outlen = k;
    return 0;
}

cJSON *tb_jsontext_parse(const char *s, size_t len, const char **end)
{
    char *fixed = NULL;
    size_t n = 0, at = 0;
    cJSON *root;
    if (tb_jsontext_fix(s, len, TB_JSONTEXT_REPLACE, &fixed, &n, &at) != 0)
        return NULL;
    if (fixed == NULL)
        return cJSON_ParseWithLengthOpts(s, len, end, 0);
    root = cJSON_ParseWithLengthOpts(fixed, n, end, 0);
    if (end != NULL && *end != NULL)
        *end = s + (*end - fixed); /* same length: the same offset in s */
    free(fixed);
    return root;
}

/* ---- Pairing halves across events -------------------------------------- */

/* A half in WTF-8: ED A0..AF xx (high) or ED B0..BF xx (low). */
static int half_at(const unsigned char *s, size_t avail, int low)
{
    return avail >= 3 && s[0] == 0xED && (s[1] & 0xF0) == (low ? 0xB0 : 0xA0) &&
           (s[2] & 0xC0) == 0x80;
}

static unsigned unit_of(const unsigned char *s)
{
    return 0xD000u | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
}

/* The character of a high half h and a low half l, as 4 bytes of UTF-8. */
static size_t put_pair(const unsigned char *h, const unsigned char *l, unsigned char *o)
{
    unsigned long cp =
        0x10000ul + ((unsigned long)(unit_of(h) - 0xD800u) << 10) + (unit_of(l) - 0xDC00u);
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

static size_t put_fffd(unsigned char *o, uint64_t *replaced)
{
    memcpy(o, "\xEF\xBF\xBD", 3);
    (*replaced)++;
    return 3;
}

/* Copies s[0..n) to o resolving halves (o has room for n + 6 bytes);
 * returns the bytes written.  An empty text leaves a waiting half be. */
static size_t join(struct tb_jsontext_half *h, const unsigned char *s, size_t n, int last,
                   unsigned char *o, uint64_t *replaced)
{
    size_t i = 0, k = 0;
    if (h->have && n > 0) {
        if (half_at(s, n, 1)) {
            k += put_pair(h->b, s, o);
            i = 3;
        } else {
            k += put_fffd(o, replaced);
        }
        h->have = 0;
    }
    while (i < n) {
        const unsigned char *e = memchr(s + i, 0xED, n - i);
        size_t j = e != NULL ? (size_t)(e - s) : n;
        memcpy(o + k, s + i, j - i);
        k += j - i;
        i = j;
        if (i >= n)
            break;
        if (half_at(s + i, n - i, 0) && half_at(s + i + 3, n - i - 3, 1)) {
            k += put_pair(s + i, s + i + 3, o + k);
            i += 6;
        } else if (half_at(s + i, n - i, 0) && i + 3 == n && !last) {
            memcpy(h->b, s + i, 3); /* may pair with the next event */
            h->have = 1;
            i += 3;
        } else if (half_at(s + i, n - i, 0) || half_at(s + i, n - i, 1)) {
            k += put_fffd(o + k, replaced);
            i += 3;
        } else {
            o[k++] = s[i++]; /* not a half: the UTF-8 check judges it */
        }
    }
    if (last && h->have) {
        k += put_fffd(o + k, replaced);
        h->have = 0;
    }
    return k;
}

int tb_jsontext_keep(struct tb_jsontext_texts *t, const char *c, size_t cl, const char *r,
                     size_t rl, int last, const char **co, size_t *col, const char **ro,
                     size_t *rol, char *bad)
{
    size_t need = cl + rl + 12, nc, nr;
    unsigned char *b;
    *co = *ro = NULL;
    *col = *rol = 0;
    if (need > t->cap) {
        char *nb = realloc(t->buf, need);
        if (nb == NULL)
            return TB_ENOMEM;
        t->buf = nb;
        t->cap = need;
    }
    b = (unsigned char *)t->buf;
    nc = join(&t->content, (const unsigned char *)c, c != NULL ? cl : 0, last, b, &t->replaced);
    nr = join(&t->reasoning, (const unsigned char *)r, r != NULL ? rl : 0, last, b + nc,
              &t->replaced);
    if (tb_utf8_check(t->buf, nc) != nc) {
        *bad = 'c';
        return TB_EFORMAT;
    }
    if (tb_utf8_check(t->buf + nc, nr) != nr) {
        *bad = 'r';
        return TB_EFORMAT;
    }
    if (nc > 0) {
        *co = t->buf;
        *col = nc;
    }
    if (nr > 0) {
        *ro = t->buf + nc;
        *rol = nr;
    }
    return 0;
}

uint64_t tb_jsontext_replaced(const struct tb_jsontext_texts *t)
{
    return t->replaced + (uint64_t)(t->content.have != 0) + (uint64_t)(t->reasoning.have != 0);
}

void tb_jsontext_reset(struct tb_jsontext_texts *t)
{
    t->content.have = t->reasoning.have = 0;
    t->replaced = 0;
}

void tb_jsontext_free(struct tb_jsontext_texts *t)
{
    free(t->buf);
    t->buf = NULL;
    t->cap = 0;
}
