/*
 * punkt.c - Punkt's sentence splitting with NLTK's English parameters,
 * and Pipecat's match_endofsentence on top of it (punkt.h).
 *
 * The procedure is Kiss and Strunk's, in the shape NLTK's tokenizer gives
 * it (nltk.tokenize.punkt, 3.8 and later): candidate ends are . ? ! that
 * are followed by other punctuation or by whitespace and a token; for each
 * candidate, the word before it, the candidate and what follows are
 * copied into a context that punkt_break.c decides (the candidate ends a
 * sentence when a word other than the last is marked as a break).
 * Sentences are then realigned so that closing quotes and brackets after
 * the end stay with it.
 *
 * Everything works on the caller's code points plus a few small arrays
 * allocated once (struct tb_punkt); a decision costs O(n) per candidate.
 */
#include "punkt.h"

#include <stdlib.h>

#include "punkt_break.h"
#include "punkt_class.h"

struct span {
    size_t a, b;
};

struct tb_punkt {
    uint32_t ctx[TB_PUNKT_MAX * 2 + 2]; /* one decision's context */
    struct tb_punkt_tok toks[TB_PUNKT_MAX_TOKS];
    struct span slices[TB_PUNKT_MAX + 1];
    struct span out[TB_PUNKT_MAX + 1];
};

struct tb_punkt *tb_punkt_create(void)
{
    return malloc(sizeof(struct tb_punkt));
}

void tb_punkt_destroy(struct tb_punkt *p)
{
    free(p);
}

/* re_boundary_realignment.match on s[a, b): ["')\]}]+?(?:\s+|(?=--)|$)
 * (MULTILINE); the match length, or -1. */
static long realign_match(const uint32_t *s, size_t a, size_t b)
{
    for (size_t k = a + 1; k <= b && tb_punkt_closer(s[k - 1]); k++) {
        if (k < b && tb_punkt_space(s[k])) {
            size_t e = k;
            while (e < b && tb_punkt_space(s[e]))
                e++;
            return (long)(e - a);
        }
        if (k + 1 < b && s[k] == '-' && s[k + 1] == '-')
            return (long)(k - a);
        if (k == b || s[k] == '\n')
            return (long)(k - a);
    }
    return -1;
}

/* Writes s[a, b) to the context at *w. */
static void ctx_put(struct tb_punkt *p, size_t *w, const uint32_t *s, size_t a, size_t b)
{
    for (size_t i = a; i < b && *w < sizeof(p->ctx) / sizeof(p->ctx[0]); i++)
        p->ctx[(*w)++] = s[i];
}

/* The match at m (a candidate end): after_tok's end, and next_tok's start
 * (or 0 when after_tok is punctuation).  Returns 0 when m is no match. */
static int candidate(const uint32_t *s, size_t n, size_t m, size_t *after_end, size_t *next)
{
    size_t j;
    if (!tb_punkt_sent_end(s[m]) || m + 1 >= n)
        return 0;
    if (tb_punkt_nonword(s[m + 1])) {
        *after_end = m + 2;
        *next = 0;
        return 1;
    }
    if (!tb_punkt_space(s[m + 1]))
        return 0;
    for (j = m + 1; j < n && tb_punkt_space(s[j]); j++)
        ;
    if (j >= n)
        return 0;
    *next = j;
    while (j < n && !tb_punkt_space(s[j]))
        j++;
    *after_end = j;
    return 1;
}

/* Decides the candidate at m with the word slice pw before it; on a
 * break, adds the slice [*last, m + 1) and moves *last. */
static void decide(struct tb_punkt *p, const uint32_t *s, size_t n, size_t m, struct span pw,
                   size_t *last, size_t *ns)
{
    size_t w = 0, after_end = 0, next = 0;
    (void)candidate(s, n, m, &after_end, &next);
    ctx_put(p, &w, s, pw.a, pw.b);
    ctx_put(p, &w, s, m, after_end);
    if (!tb_punkt_break(p->ctx, w, p->toks))
        return;
    p->slices[*ns].a = *last;
    p->slices[*ns].b = m + 1;
    (*ns)++;
    *last = next != 0 ? next : m + 1;
}

/* The last ASCII whitespace in s[a, b), relative to a; 0 when none (and
 * when it is at a, as NLTK's _get_last_whitespace_index has it). */
static size_t last_ws(const uint32_t *s, size_t a, size_t b)
{
    for (size_t i = b; i > a; i--) {
        uint32_t c = s[i - 1];
        if (c == ' ' || (c >= '\t' && c <= '\r'))
            return i - 1 - a;
    }
    return 0;
}

/* sent_tokenize(s[0, n)) as spans; returns their count. */
static size_t sentences(struct tb_punkt *p, const uint32_t *s, size_t n, struct span *out)
{
    struct span ps = {0, 0}, pw;
    size_t prev = 0, last = 0, ns = 0, nout = 0, realign = 0, after_end, next;
    int have_prev = 0;
    /* _match_potential_end_contexts and _slices_from_text */
    for (size_t m = 0; m < n; m++) {
        size_t r;
        if (!candidate(s, n, m, &after_end, &next))
            continue;
        r = ps.b <= m ? last_ws(s, ps.b, m) : 0;
        pw.a = r != 0 ? r + ps.b + 1 : ps.a;
        pw.b = m;
        if (have_prev && ps.b <= pw.a)
            decide(p, s, n, prev, ps, &last, &ns);
        prev = m;
        ps = pw;
        have_prev = 1;
    }
    if (have_prev)
        decide(p, s, n, prev, ps, &last, &ns);
    p->slices[ns].a = last;
    p->slices[ns].b = n;
    ns++;
    /* _realign_boundaries */
    for (size_t i = 0; i < ns; i++) {
        struct span s1 = {p->slices[i].a + realign, p->slices[i].b};
        long ml;
        if (i + 1 == ns) {
            if (s1.a < s1.b)
                out[nout++] = s1;
            continue;
        }
        ml = realign_match(s, p->slices[i + 1].a, p->slices[i + 1].b);
        if (ml >= 0) {
            size_t g = (size_t)ml;
            while (g > 0 && tb_punkt_space(s[p->slices[i + 1].a + g - 1]))
                g--;
            out[nout].a = s1.a;
            out[nout].b = p->slices[i + 1].a + g;
            nout++;
            realign = (size_t)ml;
        } else {
            realign = 0;
            if (s1.a < s1.b)
                out[nout++] = s1;
        }
    }
    return nout;
}

int tb_punkt_pipecat_end(uint32_t c)
{
    static const uint32_t v[] = {
        '.',    '!',    '?',    ';',    0x2026, 0x3002, 0xFF1F, 0xFF01, 0xFF1B, 0xFF0E,
        0xFF61, 0x0964, 0x0965, 0x061F, 0x061B, 0x06D4, 0x060F, 0x104A, 0x104B, 0x17D4,
        0x17D5, 0x0ECC, 0x0F0D, 0x0F0E, 0x0589, 0x055C, 0x055E, 0x1362, 0x1367, 0x1368,
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (v[i] == c)
            return 1;
    return 0;
}

size_t tb_punkt_pipecat_eos(struct tb_punkt *p, const uint32_t *t, size_t n)
{
    struct span *out = p->out;
    size_t ns;
    while (n > 0 && tb_punkt_space(t[n - 1]))
        n--;
    if (n == 0)
        return 0;
    ns = sentences(p, t, n, out);
    if (ns == 0)
        return 0;
    if (ns == 1 && out[0].a == 0 && out[0].b == n) {
        if (tb_punkt_pipecat_end(t[n - 1]))
            return n;
        /* languages NLTK does not know: an unambiguous non-Latin end */
        for (size_t i = 0; i < n; i++)
            if (tb_punkt_pipecat_end(t[i]) && t[i] != '.' && t[i] != '!' && t[i] != '?' &&
                t[i] != ';' && t[i] != 0x2026)
                return i + 1;
        return 0;
    }
    if (ns > 1)
        return out[0].b - out[0].a;
    return 0;
}
