/*
 * import.c - an import (see import.h and import_priv.h): its requests, and
 * text spread over a request's chunks, what every format's reader builds
 * with.  The table of formats, which reads a file through its reader, is
 * import_format.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "import_priv.h"
#include "ttsbuf/error.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/synth.h"

void tb_import_init(struct tb_import *im)
{
    memset(im, 0, sizeof(*im));
    im->chars_per_token = TB_IMPORT_CPT_DEFAULT;
    im->format = TB_IMPORT_AUTO;
}

void tb_import_free(struct tb_import *im)
{
    if (im == NULL)
        return;
    double cpt = im->chars_per_token;
    for (size_t i = 0; i < im->n; i++)
        tb_stream_free(&im->req[i].stream);
    free(im->req);
    tb_import_init(im);
    im->chars_per_token = cpt;
}

int tb_import_keep_run(struct tb_import *im, unsigned run)
{
    size_t k = 0;
    for (size_t i = 0; i < im->n; i++)
        if (im->req[i].run == run)
            k++;
    if (k == 0)
        return TB_EINVAL;
    k = 0;
    for (size_t i = 0; i < im->n; i++) {
        if (im->req[i].run == run)
            im->req[k++] = im->req[i];
        else
            tb_stream_free(&im->req[i].stream);
    }
    im->n = k;
    return 0;
}

struct tb_import_request *tb_import_add(struct tb_import *im, int *rc, const char *fmt, ...)
{
    struct tb_import_request *r;
    va_list ap;
    if (im->n >= TB_IMPORT_REQUESTS_MAX) {
        *rc = TB_ETOOBIG;
        return NULL;
    }
    if (im->n == im->cap) {
        void *v = tb_grow(im->req, &im->cap, sizeof(*im->req), 16);
        if (v == NULL) {
            *rc = TB_ENOMEM;
            return NULL;
        }
        im->req = v;
    }
    r = &im->req[im->n++];
    memset(r, 0, sizeof(*r));
    tb_stream_init(&r->stream);
    va_start(ap, fmt);
    vsnprintf(r->name, sizeof(r->name), fmt, ap);
    va_end(ap);
    *rc = 0;
    return r;
}

/* Spreading text over chunks. */

static int word_byte(unsigned char c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '\'';
}

/* Unit boundaries of text: token-like pieces when there are at least n of
 * them, else code points.  b[0..*nb] holds the start of each unit and
 * the end; the caller frees b. */
static size_t *units(const char *s, size_t len, size_t n, size_t *nb)
{
    size_t *b = malloc((len + 2) * sizeof(*b)), k = 0, i = 0;
    if (b == NULL)
        return NULL;
    while (i < len) {
        b[k++] = i;
        if (s[i] == '\n') {
            i++;
            continue;
        }
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i < len && word_byte((unsigned char)s[i])) {
            while (i < len && word_byte((unsigned char)s[i]))
                i++;
        } else if (i < len && s[i] != '\n') {
            i++;
        }
    }
    if (k < n) { /* too few pieces: one unit per code point */
        k = 0;
        for (i = 0; i < len; i++)
            if (((unsigned char)s[i] & 0xC0) != 0x80)
                b[k++] = i;
    }
    b[k] = len;
    *nb = k;
    return b;
}

/* Tokens chunk k of n gets when `tokens` are spread evenly (at least one
 * each; tokens < 0: one each). */
static uint64_t chunk_tokens(size_t k, size_t n, long long tokens)
{
    if (tokens > (long long)n)
        return (uint64_t)tokens / n + ((uint64_t)k < (uint64_t)tokens % n);
    return 1;
}

/*
 * No text: chunk k gets round(tokens_k * cpt) characters (at least one) of
 * the synthetic prose, taken in order from its start (wrapping round), so
 * its speech time follows its token count and two requests with the same
 * chunks get the same text wherever they are in the file.
 */
static int spread_estimated(struct tb_import *im, struct tb_stream *s, const double *t, size_t n,
                            long long tokens, enum tb_kind kind)
{
    struct tb_stream prose;
    struct tb_synth_spec sp;
    double cpt = im->chars_per_token;
    uint64_t total = 0, pos = 0, cost;
    int rc;
    /* The size comes from a count, not from the file's bytes: it is
     * checked against the caps before anything is built (a 300-byte
     * record claiming 10^12 tokens would otherwise build a terabyte). */
    for (size_t k = 0; k < n; k++) {
        uint64_t tok = chunk_tokens(k, n, tokens);
        double c = (double)tok * cpt + 0.5;
        if (tok > TB_EVENT_TOKENS_MAX)
            return TB_ETOOBIG;
        total += c < 1 ? 1 : c > TB_EVENT_TEXT_MAX ? TB_EVENT_TEXT_MAX : (uint64_t)c;
    }
    cost = total + (uint64_t)n * sizeof(struct tb_event);
    if (total > TB_READER_TEXT_MAX || cost > TB_IMPORT_ESTIMATED_MAX - im->estimated_bytes)
        return TB_ETOOBIG;
    im->estimated_bytes += cost;
    tb_stream_init(&prose);
    tb_synth_default(&sp);
    sp.tokens = total / 2 + 16 > 100000 ? 100000 : (uint32_t)(total / 2 + 16);
    sp.seed = 1;
    rc = tb_synth_generate(&sp, &prose);
    for (size_t k = 0; k < n && rc == 0; k++) {
        uint64_t tok = chunk_tokens(k, n, tokens);
        double c = (double)tok * cpt + 0.5;
        size_t want = c < 1 ? 1 : c > TB_EVENT_TEXT_MAX ? TB_EVENT_TEXT_MAX : (size_t)c;
        size_t take;
        if (tok > TB_EVENT_TOKENS_MAX) {
            rc = TB_ETOOBIG;
            break;
        }
        if (pos >= prose.text_len)
            pos = 0;
        take = prose.text_len - pos < want ? (size_t)(prose.text_len - pos) : want;
        while (pos + take < prose.text_len &&
               ((unsigned char)prose.text[pos + take] & 0xC0) == 0x80)
            take++; /* end on a character boundary */
        rc = tb_stream_append(s, t[k], prose.text + pos, take, (uint32_t)tok, kind);
        pos += take;
    }
    tb_stream_free(&prose);
    return rc;
}

int tb_import_spread(struct tb_import *im, struct tb_stream *s, const double *t, size_t n,
                     const char *text, size_t tlen, long long tokens, enum tb_kind kind)
{
    size_t *b = NULL, nu = 0;
    int rc = 0;

    if (n == 0)
        goto out;
    if (text == NULL) {
        rc = spread_estimated(im, s, t, n, tokens, kind);
        goto out;
    }
    b = units(text, tlen, n, &nu);
    if (b == NULL) {
        rc = TB_ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < n && rc == 0; k++) {
        /* Chunk k takes units [k*nu/n, (k+1)*nu/n): even, in order. */
        size_t u0 = (size_t)((uint64_t)k * nu / n);
        size_t u1 = (size_t)((uint64_t)(k + 1) * nu / n);
        uint64_t tok = chunk_tokens(k, n, tokens);
        if (tok > TB_EVENT_TOKENS_MAX) {
            rc = TB_ETOOBIG;
            break;
        }
        if (u1 == u0) {
            im->empty_chunks++;
            continue;
        }
        rc = tb_stream_append(s, t[k], text + b[u0], b[u1] - b[u0], (uint32_t)tok, kind);
    }
out:
    if (rc == 0 && tokens >= 0)
        s->usage_tokens = tokens;
    free(b);
    return rc;
}
