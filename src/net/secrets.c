/*
 * secrets.c - the secrets of a run and the scrubber (see secrets.h).
 *
 * Text is read as a sequence of units: a plain byte, a whole UTF-8
 * sequence, or an escape (\u002d, %2D, &#45; ...) standing for the
 * character it encodes; whitespace and control characters, raw or
 * escaped, are noise and skipped.  A secret is kept in that decoded form,
 * as the sorted set of its 8-character windows (each packed into a
 * 64-bit word) when it has TB_SECRETS_PART characters or more, else
 * whole.  At each unit of a text the next 8 decoded characters are looked
 * up among the windows (and compared with the short secrets): a hit marks
 * the bytes they span, and overlapping or touching hits make one masked
 * run.  The union of the windows of one secret found in a text covers
 * every piece of 8 or more of it, so a partial echo is masked without
 * listing its possible lengths.
 *
 * Masking works in place, left to right: a run is written (as "***")
 * only once it ends, by which point the reading position is past it, so
 * the writes never overtake what is still to be read.
 *
 * The equal-length mode (the masker) reads the same units with the same
 * windows, the other way round: it keeps the last 8 characters read, and
 * at each new one looks up the window that ends there (and the short
 * secrets that end there).  The set of windows found is the same, so the
 * same echoes are masked; a hit rewrites the units it spans, where they
 * are, even in text read long before (whitespace between them is
 * unbounded), which is why the masker keeps their offsets and never
 * re-reads the text it has passed.  Before the binary search a window
 * goes through a one-hash bit filter: text without an echo almost never
 * gets past it.
 */
#include "ttsbuf/secrets.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsontext.h"
#include "ttsbuf/error.h"

#define NOISE (-1)
#define GRAM TB_SECRETS_PART
_Static_assert(GRAM == 8, "a window is packed into 64 bits");
#define FILTER_BITS 15 /* 4 KiB: under 1% of lookups pass for 300 windows */

struct short_secret {
    unsigned char v[GRAM - 1];
    size_t n;
    uint64_t packed; /* v packed, its last character in the low byte */
};

struct tb_secrets {
    uint64_t *grams; /* sorted, unique: the windows of the long secrets */
    size_t ngrams;
    struct short_secret *shorts; /* the secrets under GRAM characters */
    size_t nshorts;
    size_t count;
    uint64_t filter[(1u << FILTER_BITS) / 64]; /* a bit per window's hash */
};

/* A character read by the masker: where its unit is, and what it is. */
struct mask_unit {
    size_t at, len;
    int c;
};

struct tb_secrets_masker {
    struct mask_unit u[GRAM]; /* the last GRAM characters, the i-th read at i % GRAM */
    uint64_t g;               /* their characters packed, the last in the low byte;
                               * 0 bytes where none was read yet */
    uint64_t seen;            /* characters read */
    size_t next;              /* the first byte not read */
};

/* Zeroes memory the compiler may not drop as dead stores. */
static void wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n-- > 0)
        *v++ = 0;
}

/* The value of k hex digits at s, or -1. */
static long hexn(const unsigned char *s, size_t k)
{
    long v = 0;
    for (size_t i = 0; i < k; i++) {
        int d = tb_jsontext_hex(s[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* An escape's value: noise for whitespace and controls, else the byte. */
static int escaped(long v)
{
    return v <= 0x20 || v == 0x7F ? NOISE : (int)v;
}

/* The bytes of a UTF-8 sequence led by b (1 for a byte that leads none
 * or a truncated one). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t k = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 1;
    if (k > n || s[0] > 0xF4)
        return 1;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 1;
    return k;
}

/* An HTML character reference at s ("&#45;", "&#x2d;"): its length and
 * value, or 0. */
static size_t html_ref(const unsigned char *s, size_t n, long *v)
{
    size_t i = 2;
    int hex = n > 2 && (s[2] == 'x' || s[2] == 'X');
    *v = 0;
    if (n < 4 || s[0] != '&' || s[1] != '#')
        return 0;
    i += (size_t)hex;
    for (size_t d = 0; i < n && d < 6; i++, d++) {
        int x = hex ? tb_jsontext_hex(s[i]) : (s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
        if (x < 0)
            break;
        *v = *v * (hex ? 16 : 10) + x;
    }
    return i < n && s[i] == ';' && i > 2u + (size_t)hex ? i + 1 : 0;
}

/*
 * One unit of text at s (n >= 1 bytes left): returns its length and sets
 * *c to the character it stands for (0..255) or NOISE.  An escape of a
 * character outside ASCII is not decoded (its backslash is a unit of its
 * own); a UTF-8 sequence is one unit whose character is a hash of it, in
 * 0x80..0xFF, so a match never cuts a character in two.
 */
static size_t unit(const unsigned char *s, size_t n, int *c)
{
    unsigned char b = s[0];
    long v;
    size_t k;
    if (b <= 0x20 || b == 0x7F) {
        *c = NOISE;
        return 1;
    }
    if (b == '\\' && n >= 2) {
        switch (s[1]) {
        case 'n':
        case 'r':
        case 't':
        case 'b':
        case 'f': *c = NOISE; return 2;
        case '/':
        case '\\':
        case '"':
        case '\'': *c = s[1]; return 2;
        case 'u':
            if (n >= 6 && (v = hexn(s + 2, 4)) >= 0 && v < 0x80) {
                *c = escaped(v);
                return 6;
            }
            break;
        case 'x':
            if (n >= 4 && (v = hexn(s + 2, 2)) >= 0 && v < 0x80) {
                *c = escaped(v);
                return 4;
            }
            break;
        default: break;
        }
    }
    if (b == '%' && n >= 3 && (v = hexn(s + 1, 2)) >= 0 && v < 0x80) {
        *c = escaped(v);
        return 3;
    }
    if (b == '&' && (k = html_ref(s, n, &v)) > 0 && v < 0x80) {
        *c = escaped(v);
        return k;
    }
    if (b >= 0x80) {
        uint32_t h = 2166136261u; /* FNV-1a */
        k = utf8_len(s, n);
        for (size_t i = 0; i < k; i++)
            h = (h ^ s[i]) * 16777619u;
        *c = 0x80 | (int)(h & 0x7F);
        return k;
    }
    *c = b;
    return 1;
}

static uint64_t pack(const unsigned char *w)
{
    uint64_t g = 0;
    for (size_t i = 0; i < GRAM; i++)
        g = g << 8 | w[i];
    return g;
}

static int cmp_gram(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t filter_bit(uint64_t g)
{
    return (size_t)((g * 0x9E3779B97F4A7C15ULL) >> (64 - FILTER_BITS));
}

/* Whether the 8 characters packed in g are a window of a secret. */
static int has_gram(const struct tb_secrets *s, uint64_t g)
{
    size_t b = filter_bit(g);
    if ((s->filter[b / 64] >> (b % 64) & 1) == 0)
        return 0;
    return bsearch(&g, s->grams, s->ngrams, sizeof(g), cmp_gram) != NULL;
}

/* A copy of old[0..had) in a new block of `want` bytes; old is zeroed
 * and freed (realloc would leave a copy of the secrets behind).  NULL
 * when memory runs out (old is then untouched). */
static void *moved(void *old, size_t had, size_t want)
{
    void *p = malloc(want);
    if (p == NULL)
        return NULL;
    if (old != NULL) {
        memcpy(p, old, had);
        wipe(old, had);
        free(old);
    }
    return p;
}

int tb_secrets_create(struct tb_secrets **out)
{
    *out = calloc(1, sizeof(**out));
    return *out != NULL ? 0 : TB_ENOMEM;
}

void tb_secrets_destroy(struct tb_secrets *s)
{
    if (s == NULL)
        return;
    if (s->grams != NULL)
        wipe(s->grams, s->ngrams * sizeof(*s->grams));
    if (s->shorts != NULL)
        wipe(s->shorts, s->nshorts * sizeof(*s->shorts));
    wipe(s->filter, sizeof(s->filter));
    free(s->grams);
    free(s->shorts);
    free(s);
}

size_t tb_secrets_count(const struct tb_secrets *s)
{
    return s != NULL ? s->count : 0;
}

/* Adds the windows of v[0..n) (n >= GRAM) to the long secrets' set.  0 or
 * TB_ENOMEM (the set unchanged). */
static int add_grams(struct tb_secrets *s, const unsigned char *v, size_t n)
{
    size_t m = 0, total = s->ngrams + n - GRAM + 1;
    uint64_t *g = moved(s->grams, s->ngrams * sizeof(*g), total * sizeof(*g));
    if (g == NULL)
        return TB_ENOMEM;
    for (size_t k = 0; k + GRAM <= n; k++)
        g[s->ngrams++] = pack(v + k);
    qsort(g, s->ngrams, sizeof(*g), cmp_gram);
    for (size_t k = 0; k < s->ngrams; k++) { /* unique: one window is enough */
        size_t b = filter_bit(g[k]);
        s->filter[b / 64] |= (uint64_t)1 << (b % 64);
        if (m == 0 || g[k] != g[m - 1])
            g[m++] = g[k];
    }
    s->grams = g;
    s->ngrams = m;
    return 0;
}

/*
 * The secret's bytes raw[0..n) base64-encoded (RFC 4648 section 4, and
 * section 5's URL alphabet) as a longer text would encode them: after 0,
 * 1 or 2 bytes of something else ("Basic " credentials, a JSON echo), so
 * at each of the three alignments; of each encoding only the characters
 * that come from the secret's bits alone (the first and last may mix in
 * a neighbour's), added as windows when there are GRAM of them.  The
 * scratch buffer is zeroed before it is freed.  0 or TB_ENOMEM.
 */
static int add_base64(struct tb_secrets *s, const unsigned char *raw, size_t n)
{
    static const char std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t cap = (n + 2) / 3 * 4 + 8;
    unsigned char *e = malloc(cap);
    int rc = 0;
    if (e == NULL)
        return TB_ENOMEM;
    for (size_t a = 0; a < 3 && rc == 0; a++) {
        /* Character k holds bits [6k, 6k + 6) of a zero bytes, then raw:
         * the secret's alone when 6k >= 8a and 6k + 6 <= 8(a + n). */
        size_t first = (8 * a + 5) / 6, end = 8 * (a + n) / 6, m = 0;
        for (size_t k = first; k < end; k++) {
            size_t bit = 6 * k, v = 0;
            for (size_t t = 0; t < 6; t++, bit++) {
                size_t byte = bit / 8;
                unsigned b = byte < a ? 0 : raw[byte - a];
                v = v << 1 | ((b >> (7 - bit % 8)) & 1u);
            }
            e[m++] = (unsigned char)std[v];
        }
        if (m >= GRAM)
            rc = add_grams(s, e, m);
        for (size_t k = 0; rc == 0 && k < m; k++) /* the URL alphabet */
            e[k] = e[k] == '+' ? '-' : e[k] == '/' ? '_' : e[k];
        if (rc == 0 && m >= GRAM && (memchr(e, '-', m) != NULL || memchr(e, '_', m) != NULL))
            rc = add_grams(s, e, m);
        wipe(e, cap);
    }
    free(e);
    return rc;
}

int tb_secrets_add(struct tb_secrets *s, const char *secret, size_t len)
{
    const unsigned char *p = (const unsigned char *)secret;
    unsigned char *v = malloc(len > 0 ? len : 1), *raw = malloc(len > 0 ? len : 1);
    size_t n = 0, i = 0, nraw = 0;
    int rc = 0;
    if (v == NULL || raw == NULL) {
        free(v);
        free(raw);
        return TB_ENOMEM;
    }
    while (i < len) {
        int c;
        size_t k = unit(p + i, len - i, &c);
        if (c != NOISE)
            v[n++] = (unsigned char)c;
        for (size_t b = 0; b < k; b++) /* the bytes as sent, but blanks */
            if (p[i + b] > 0x20 && p[i + b] != 0x7F)
                raw[nraw++] = p[i + b];
        i += k;
    }
    if (n >= GRAM) {
        rc = add_grams(s, v, n);
        if (rc == 0)
            rc = add_base64(s, raw, nraw);
        if (rc == 0)
            s->count++;
    } else if (n > 0) {
        struct short_secret *sh =
            moved(s->shorts, s->nshorts * sizeof(*sh), (s->nshorts + 1) * sizeof(*sh));
        if (sh == NULL) {
            rc = TB_ENOMEM;
            goto out;
        }
        memcpy(sh[s->nshorts].v, v, n);
        sh[s->nshorts].packed = 0;
        for (size_t k = 0; k < n; k++)
            sh[s->nshorts].packed = sh[s->nshorts].packed << 8 | v[k];
        sh[s->nshorts++].n = n;
        s->shorts = sh;
        s->count++;
    }
out:
    wipe(v, n);
    wipe(raw, nraw);
    free(v);
    free(raw);
    return rc;
}

/* The end (byte offset) of the longest echo starting at t[r], a unit that
 * is not noise, or 0 when none starts there. */
static size_t echo_at(const struct tb_secrets *s, const unsigned char *t, size_t n, size_t r)
{
    unsigned char w[GRAM] = {0};
    size_t ends[GRAM] = {0}, k = 0, best = 0;
    while (r < n && k < GRAM) {
        int c;
        r += unit(t + r, n - r, &c);
        if (c == NOISE)
            continue;
        w[k] = (unsigned char)c;
        ends[k++] = r;
    }
    if (k == GRAM && s->ngrams > 0 && has_gram(s, pack(w)))
        best = ends[GRAM - 1];
    for (size_t i = 0; i < s->nshorts; i++) {
        const struct short_secret *sh = &s->shorts[i];
        if (sh->n > 0 && sh->n <= k && memcmp(sh->v, w, sh->n) == 0 && ends[sh->n - 1] > best)
            best = ends[sh->n - 1];
    }
    return best;
}

size_t tb_secrets_scrub(const struct tb_secrets *s, char *text)
{
    unsigned char *t = (unsigned char *)text;
    size_t n = strlen(text), r = 0, w = 0, run_start = 0, run_end = 0;
    int in_run = 0;
    if (s == NULL || s->count == 0)
        return n;
    while (r < n) {
        int c;
        size_t len = unit(t + r, n - r, &c), e = c != NOISE ? echo_at(s, t, n, r) : 0;
        if (in_run && r >= run_end && e == 0) {
            /* The run ended: its stars go where it began (w <= run_start). */
            size_t stars = run_end - run_start < 3 ? run_end - run_start : 3;
            memset(t + w, '*', stars);
            w += stars;
            in_run = 0;
        }
        if (e > 0) {
            if (!in_run) {
                in_run = 1;
                run_start = r;
                run_end = e;
            } else if (e > run_end) {
                run_end = e;
            }
        }
        if (!in_run) {
            memmove(t + w, t + r, len);
            w += len;
        }
        r += len;
    }
    if (in_run) {
        size_t stars = run_end - run_start < 3 ? run_end - run_start : 3;
        memset(t + w, '*', stars);
        w += stars;
    }
    t[w] = '\0';
    return w;
}

/* Whether the unit at s (n bytes left; unit() read k of them) could read
 * otherwise were more bytes there: an escape or a UTF-8 sequence cut by
 * the end.  Such a unit waits for the next piece. */
static int unfinished(const unsigned char *s, size_t n, size_t k)
{
    size_t i, d;
    int hex;
    if (k != 1)
        return 0; /* a whole escape or sequence: more bytes change nothing */
    switch (s[0]) {
    case '\\': return n < 2 || (s[1] == 'u' && n < 6) || (s[1] == 'x' && n < 4);
    case '%': return n < 3;
    case '&':
        if (n < 2)
            return 1;
        if (s[1] != '#')
            return 0;
        i = 2;
        hex = n > 2 && (s[2] == 'x' || s[2] == 'X');
        i += (size_t)hex;
        for (d = 0; i < n; i++, d++)
            if (d == 6 || (hex ? tb_jsontext_hex(s[i]) < 0 : s[i] < '0' || s[i] > '9'))
                return 0; /* read to its end: no reference, whatever follows */
        return 1;
    default: break;
    }
    if (s[0] >= 0xC0 && s[0] <= 0xF4) {
        size_t want = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
        if (want <= n)
            return 0;
        for (i = 1; i < n; i++)
            if ((s[i] & 0xC0) != 0x80)
                return 0;
        return 1;
    }
    return 0;
}

/* A character the equal-length mask hides: a letter, a digit or one
 * outside ASCII.  ASCII punctuation stays, where the chunkers cut. */
static int hidden(int c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Masks one unit at equal length: a UTF-8 sequence of 2 to 4 bytes
 * becomes one character of as many bytes, anything else '*' a byte.
 * Returns the bytes changed. */
static size_t cover(unsigned char *t, const struct mask_unit *u)
{
    static const char *const wide[5] = {NULL, NULL, "\xc3\x97", "\xe2\x88\x97", "\xf0\x9f\x9e\xb1"};
    const char *with = u->len >= 2 && u->len <= 4 && t[u->at] >= 0xC0 ? wide[u->len] : NULL;
    size_t changed = 0;
    for (size_t i = 0; i < u->len; i++) {
        unsigned char b = with != NULL ? (unsigned char)with[i] : '*';
        changed += t[u->at + i] != b;
        t[u->at + i] = b;
    }
    return changed;
}

/* The last k characters read are an echo: masks them (their letters,
 * digits and others; all of them when the echo is punctuation alone). */
static size_t hit(const struct tb_secrets_masker *m, unsigned char *t, size_t k)
{
    size_t changed = 0;
    int any = 0;
    for (size_t i = 0; i < k; i++)
        any |= hidden(m->u[(m->seen - 1 - i) % GRAM].c);
    for (size_t i = 0; i < k; i++) {
        const struct mask_unit *u = &m->u[(m->seen - 1 - i) % GRAM];
        if (!any || hidden(u->c))
            changed += cover(t, u);
    }
    return changed;
}

/* A character read: the echoes that end with it. */
static size_t take(struct tb_secrets_masker *m, const struct tb_secrets *s, unsigned char *t,
                   size_t at, size_t len, int c)
{
    size_t changed = 0;
    m->u[m->seen % GRAM] = (struct mask_unit){at, len, c};
    m->seen++;
    m->g = m->g << 8 | (uint64_t)c; /* c > 0x20: a 0 byte is no character */
    if ((m->g >> 56) != 0 && s->ngrams > 0 && has_gram(s, m->g))
        changed += hit(m, t, GRAM);
    for (size_t i = 0; i < s->nshorts; i++) {
        const struct short_secret *sh = &s->shorts[i];
        if ((m->g & (((uint64_t)1 << (8 * sh->n)) - 1)) == sh->packed)
            changed += hit(m, t, sh->n);
    }
    return changed;
}

int tb_secrets_masker_create(struct tb_secrets_masker **out)
{
    *out = calloc(1, sizeof(**out));
    return *out != NULL ? 0 : TB_ENOMEM;
}

void tb_secrets_masker_destroy(struct tb_secrets_masker *m)
{
    if (m == NULL)
        return;
    wipe(m, sizeof(*m)); /* the last characters read may be a secret's */
    free(m);
}

void tb_secrets_masker_reset(struct tb_secrets_masker *m, size_t from)
{
    wipe(m, sizeof(*m));
    m->next = from;
}

size_t tb_secrets_masker_feed(struct tb_secrets_masker *m, const struct tb_secrets *s, char *text,
                              size_t len, int final)
{
    unsigned char *t = (unsigned char *)text;
    size_t r = m->next, changed = 0;
    if (s == NULL || s->count == 0) {
        m->next = len > r ? len : r;
        return 0;
    }
    while (r < len) {
        int c;
        size_t k = unit(t + r, len - r, &c);
        if (!final && unfinished(t + r, len - r, k))
            break;
        if (c != NOISE)
            changed += take(m, s, t, r, k, c);
        r += k;
    }
    m->next = r;
    return changed;
}

size_t tb_secrets_mask(const struct tb_secrets *s, char *text, size_t len)
{
    struct tb_secrets_masker m;
    size_t changed;
    if (s == NULL || s->count == 0)
        return 0;
    tb_secrets_masker_reset(&m, 0);
    changed = tb_secrets_masker_feed(&m, s, text, len, 1);
    wipe(&m, sizeof(m));
    return changed;
}
