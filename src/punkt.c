/*
 * punkt.c - Punkt's sentence-boundary decision with NLTK's English
 * parameters, and Pipecat's match_endofsentence on top of it (punkt.h).
 *
 * The procedure is Kiss and Strunk's, in the shape NLTK's tokenizer gives
 * it (nltk.tokenize.punkt, 3.8 and later): candidate ends are . ? ! that
 * are followed by other punctuation or by whitespace and a token; for each
 * candidate, the word before it, the candidate and what follows are split
 * into words and annotated in two passes (first: sentence-end characters,
 * ellipses, known abbreviations; second: collocations, the orthographic
 * heuristic, frequent sentence starters, initials and numbers), and the
 * candidate ends a sentence when a word other than the last is marked as a
 * sentence break.  Sentences are then realigned so that closing quotes and
 * brackets after the end stay with it.
 *
 * Everything works on the caller's code points plus a few small arrays
 * allocated once (struct tb_punkt); a decision costs O(n) per candidate.
 */
#include "punkt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seg_livekit.h"

enum {
    BEG_UC = 1 << 1,
    MID_UC = 1 << 2,
    UNK_UC = 1 << 3,
    BEG_LC = 1 << 4,
    MID_LC = 1 << 5,
    UNK_LC = 1 << 6,
    ORTHO_UC = BEG_UC | MID_UC | UNK_UC,
    ORTHO_LC = BEG_LC | MID_LC | UNK_LC,
};

#define MAX_TOKS 512 /* words in one decision context */
#define KEY_MAX 256  /* bytes of a word type used as a key */

struct tok {
    size_t a, b; /* code points [a, b) of the context */
    int sentbreak, abbr, ellipsis;
};

struct span {
    size_t a, b;
};

struct tb_punkt {
    uint32_t ctx[TB_PUNKT_MAX * 2 + 2]; /* one decision's context */
    struct tok toks[MAX_TOKS];
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

/* ---- character classes (Python's, for the blocks punkt.h names) ---- */

static int space(uint32_t c)
{
    return tb_seg_py_space(c);
}

/* Latin Extended-A pairs: capital at the even (or, in 0x139-0x148 and
 * 0x179-0x17E, the odd) code point, small letter right after it. */
static int latin_a_upper(uint32_t c)
{
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
        return (c & 1u) != 0;
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
        return (c & 1u) == 0;
    return c == 0x130 || c == 0x178;
}

static int latin_a_lower(uint32_t c)
{
    return c >= 0x100 && c <= 0x17F && !latin_a_upper(c);
}

static int is_upper(uint32_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) || latin_a_upper(c) ||
           c == 0x386 || (c >= 0x388 && c <= 0x38F && c != 0x38B && c != 0x38D) ||
           (c >= 0x391 && c <= 0x3AB && c != 0x3A2) || (c >= 0x400 && c <= 0x42F) ||
           c == 0x2126;
}

static int is_lower(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || c == 0xAA || c == 0xB5 || c == 0xBA ||
           (c >= 0xDF && c <= 0xFF && c != 0xF7) || latin_a_lower(c) || c == 0x390 ||
           (c >= 0x3AC && c <= 0x3CE) || (c >= 0x430 && c <= 0x45F) ||
           (c >= 0xFB00 && c <= 0xFB06);
}

static uint32_t lower(uint32_t c)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) ||
        (c >= 0x391 && c <= 0x3AB && c != 0x3A2) || (c >= 0x410 && c <= 0x42F))
        return c + 32;
    if (c >= 0x400 && c <= 0x40F)
        return c + 80;
    if (c == 0x386)
        return 0x3AC;
    if (c >= 0x388 && c <= 0x38A)
        return c + 37;
    if (c == 0x38C)
        return 0x3CC;
    if (c == 0x38E || c == 0x38F)
        return c + 63;
    if (c == 0x178)
        return 0xFF;
    if (c == 0x2126)
        return 0x3C9;
    if (latin_a_upper(c) && c != 0x130)
        return c + 1;
    return c;
}

/* [^\W\d]: a letter (or '_'). */
static int letter(uint32_t c)
{
    return is_upper(c) || is_lower(c) || c == '_' || c == 0xAA || c == 0xB5 || c == 0xBA ||
           (c >= 0x180 && c <= 0x24F) || (c >= 0x3040 && c <= 0x30FF) ||
           (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
           (c >= 0xAC00 && c <= 0xD7AF);
}

static int digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

/* NonWord: ) " ; } ] * : @ ' ( { [ ? ! */
static int nonword(uint32_t c)
{
    return c == ')' || c == '"' || c == ';' || c == '}' || c == ']' || c == '*' || c == ':' ||
           c == '@' || c == '\'' || c == '(' || c == '{' || c == '[' || c == '?' || c == '!';
}

/* WordStart excludes ( " ` { [ : ; & # * @ ) } ] - , */
static int wordstart(uint32_t c)
{
    return !(c == '(' || c == '"' || c == '`' || c == '{' || c == '[' || c == ':' || c == ';' ||
             c == '&' || c == '#' || c == '*' || c == '@' || c == ')' || c == '}' || c == ']' ||
             c == '-' || c == ',');
}

static int sent_end(uint32_t c)
{
    return c == '.' || c == '?' || c == '!';
}

static int closer(uint32_t c)
{
    return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}';
}

/* ---- the word tokenizer ---- */

/* MultiChar at s[i]: -{2,} | \.{2,} | (?:\.\s){2,}\. ; its length or 0. */
static size_t multichar(const uint32_t *s, size_t n, size_t i)
{
    size_t k = i, pairs = 0;
    if (i >= n)
        return 0;
    if (s[i] == '-' || s[i] == '.') {
        while (k < n && s[k] == s[i])
            k++;
        if (k - i >= 2)
            return k - i;
    }
    k = i;
    while (k + 1 < n && s[k] == '.' && space(s[k + 1])) {
        k += 2;
        pairs++;
    }
    /* greedy pairs, then a period; backtracking drops the last pair,
     * whose period then ends the match */
    if (pairs >= 2 && k < n && s[k] == '.')
        return 2 * pairs + 1;
    if (pairs >= 3)
        return 2 * (pairs - 1) + 1;
    return 0;
}

/* Whether a word may end before s[i]. */
static int word_end(const uint32_t *s, size_t n, size_t i)
{
    if (i >= n || space(s[i]) || nonword(s[i]) || multichar(s, n, i) > 0)
        return 1;
    if (s[i] == ',')
        return i + 1 >= n || space(s[i + 1]) || nonword(s[i + 1]) || multichar(s, n, i + 1) > 0;
    return 0;
}

/* Splits s[0, n) into words as PunktLanguageVars.word_tokenize does on
 * each line; returns the count (at most MAX_TOKS). */
static size_t words(struct tok *v, const uint32_t *s, size_t n)
{
    size_t i = 0, nt = 0, k;
    while (i < n && nt < MAX_TOKS) {
        if (space(s[i])) {
            i++;
            continue;
        }
        k = multichar(s, n, i);
        if (k == 0 && wordstart(s[i])) {
            k = 1;
            while (!word_end(s, n, i + k))
                k++;
        }
        if (k == 0)
            k = 1;
        memset(&v[nt], 0, sizeof(v[nt]));
        v[nt].a = i;
        v[nt].b = i + k;
        nt++;
        i += k;
    }
    return nt;
}

/* ---- token properties ---- */

static int period_final(const uint32_t *s, const struct tok *t)
{
    return s[t->b - 1] == '.';
}

/* ^-?[\.,]?\d[\d,\.-]*\.?$ */
static int numeric(const uint32_t *s, size_t a, size_t b)
{
    size_t i = a;
    if (i < b && s[i] == '-')
        i++;
    if (i < b && (s[i] == '.' || s[i] == ','))
        i++;
    if (i >= b || !digit(s[i]))
        return 0;
    for (i++; i < b; i++)
        if (!(digit(s[i]) || s[i] == ',' || s[i] == '.' || s[i] == '-'))
            return 0;
    return 1; /* a final '.' is within [\d,\.-]* */
}

/* Writes the lower-cased UTF-8 of s[a, b) to key (NUL-terminated);
 * returns 0, or -1 when it does not fit (no table holds such a key). */
static int utf8_key(char *key, const uint32_t *s, size_t a, size_t b)
{
    size_t w = 0;
    for (size_t i = a; i < b; i++) {
        uint32_t c = lower(s[i]);
        char buf[4];
        size_t n;
        if (c < 0x80) {
            buf[0] = (char)c;
            n = 1;
        } else if (c < 0x800) {
            buf[0] = (char)(0xC0 | (c >> 6));
            buf[1] = (char)(0x80 | (c & 0x3F));
            n = 2;
        } else if (c < 0x10000) {
            buf[0] = (char)(0xE0 | (c >> 12));
            buf[1] = (char)(0x80 | ((c >> 6) & 0x3F));
            buf[2] = (char)(0x80 | (c & 0x3F));
            n = 3;
        } else {
            buf[0] = (char)(0xF0 | (c >> 18));
            buf[1] = (char)(0x80 | ((c >> 12) & 0x3F));
            buf[2] = (char)(0x80 | ((c >> 6) & 0x3F));
            buf[3] = (char)(0x80 | (c & 0x3F));
            n = 4;
        }
        if (w + n >= KEY_MAX)
            return -1;
        memcpy(key + w, buf, n);
        w += n;
    }
    key[w] = '\0';
    return 0;
}

/* The token's type (lower case, or ##number##); with drop_period, its
 * final period removed (type_no_period). */
static void type_key(char *key, const uint32_t *s, const struct tok *t, int drop_period)
{
    size_t b = t->b;
    if (numeric(s, t->a, t->b)) {
        snprintf(key, KEY_MAX, "%s", "##number##");
        return;
    }
    if (drop_period && b - t->a > 1 && s[b - 1] == '.')
        b--;
    if (utf8_key(key, s, t->a, b) != 0)
        snprintf(key, KEY_MAX, "%s", "\x01"); /* too long: in no table */
}

static void type_no_sentperiod(char *key, const uint32_t *s, const struct tok *t)
{
    type_key(key, s, t, t->sentbreak);
}

static int cmp_str(const void *k, const void *e)
{
    return strcmp(k, *(const char *const *)e);
}

static int cmp_ortho(const void *k, const void *e)
{
    return strcmp(k, ((const struct tb_punkt_ortho *)e)->type);
}

static int in_set(const char *const *v, size_t n, const char *key)
{
    return bsearch(key, v, n, sizeof(*v), cmp_str) != NULL;
}

static int ortho(const char *key)
{
    const struct tb_punkt_ortho *o =
        bsearch(key, tb_punkt_ortho, tb_punkt_ortho_n, sizeof(*o), cmp_ortho);
    return o != NULL ? o->flags : 0;
}

/* [^\W\d]\.$ on the whole token */
static int is_initial(const uint32_t *s, const struct tok *t)
{
    return t->b - t->a == 2 && letter(s[t->a]) && s[t->a + 1] == '.';
}

/* ---- the two annotation passes ---- */

static void first_pass(const uint32_t *s, struct tok *t)
{
    char key[KEY_MAX];
    size_t n = t->b - t->a, i;
    if (n == 1 && sent_end(s[t->a])) {
        t->sentbreak = 1;
        return;
    }
    for (i = t->a; i < t->b && s[i] == '.'; i++)
        ;
    if (n >= 2 && i == t->b) {
        t->ellipsis = 1;
        return;
    }
    if (!period_final(s, t) || (n >= 2 && s[t->b - 2] == '.'))
        return;
    if (utf8_key(key, s, t->a, t->b - 1) == 0) {
        char *dash = strrchr(key, '-');
        if (in_set(tb_punkt_abbrev, tb_punkt_abbrev_n, key) ||
            (dash != NULL && in_set(tb_punkt_abbrev, tb_punkt_abbrev_n, dash + 1))) {
            t->abbr = 1;
            return;
        }
    }
    t->sentbreak = 1;
}

/* 1 a sentence starter, 0 not, 2 unknown */
static int ortho_heuristic(const uint32_t *s, const struct tok *t)
{
    char key[KEY_MAX];
    int oc;
    uint32_t c0 = s[t->a];
    if (t->b - t->a == 1 && (c0 == ';' || c0 == ':' || c0 == ',' || c0 == '.' || c0 == '!' ||
                             c0 == '?'))
        return 0;
    type_no_sentperiod(key, s, t);
    oc = ortho(key);
    if (is_upper(c0) && (oc & ORTHO_LC) && !(oc & MID_UC))
        return 1;
    if (is_lower(c0) && ((oc & ORTHO_UC) || !(oc & BEG_LC)))
        return 0;
    return 2;
}

static void second_pass(const uint32_t *s, struct tok *t1, const struct tok *t2)
{
    char typ[KEY_MAX], next[KEY_MAX], pair[KEY_MAX * 2 + 2];
    int initial, h;
    if (!period_final(s, t1))
        return;
    type_key(typ, s, t1, 1);
    type_no_sentperiod(next, s, t2);
    initial = is_initial(s, t1);
    snprintf(pair, sizeof(pair), "%s\t%s", typ, next);
    if (in_set(tb_punkt_colloc, tb_punkt_colloc_n, pair)) {
        t1->sentbreak = 0;
        t1->abbr = 1;
        return;
    }
    if ((t1->abbr || t1->ellipsis) && !initial) {
        h = ortho_heuristic(s, t2);
        if (h == 1) {
            t1->sentbreak = 1;
            return;
        }
        if (is_upper(s[t2->a]) && in_set(tb_punkt_starters, tb_punkt_starters_n, next)) {
            t1->sentbreak = 1;
            return;
        }
    }
    if (initial || strcmp(typ, "##number##") == 0) {
        h = ortho_heuristic(s, t2);
        if (h == 0) {
            t1->sentbreak = 0;
            t1->abbr = 1;
            return;
        }
        if (h == 2 && initial && is_upper(s[t2->a]) && !(ortho(next) & ORTHO_LC)) {
            t1->sentbreak = 0;
            t1->abbr = 1;
        }
    }
}

/* text_contains_sentbreak: a word other than the last is a break. */
static int contains_sentbreak(struct tb_punkt *p, size_t n)
{
    const uint32_t *s = p->ctx;
    size_t nt = 0, a = 0;
    /* words of each line ('\n'); a line of whitespace gives none */
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '\n')
            continue;
        {
            size_t k = words(p->toks + nt, s + a, i - a);
            for (size_t j = nt; j < nt + k; j++) {
                p->toks[j].a += a;
                p->toks[j].b += a;
            }
            nt += k;
        }
        a = i + 1;
        if (nt >= MAX_TOKS - 1)
            break;
    }
    for (size_t j = 0; j < nt; j++)
        first_pass(s, &p->toks[j]);
    for (size_t j = 0; j + 1 < nt; j++) {
        second_pass(s, &p->toks[j], &p->toks[j + 1]);
        if (p->toks[j].sentbreak)
            return 1;
    }
    return 0;
}

/* ---- sentences ---- */

/* re_boundary_realignment.match on s[a, b): ["')\]}]+?(?:\s+|(?=--)|$)
 * (MULTILINE); the match length, or -1. */
static long realign_match(const uint32_t *s, size_t a, size_t b)
{
    for (size_t k = a + 1; k <= b && closer(s[k - 1]); k++) {
        if (k < b && space(s[k])) {
            size_t e = k;
            while (e < b && space(s[e]))
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
    if (!sent_end(s[m]) || m + 1 >= n)
        return 0;
    if (nonword(s[m + 1])) {
        *after_end = m + 2;
        *next = 0;
        return 1;
    }
    if (!space(s[m + 1]))
        return 0;
    for (j = m + 1; j < n && space(s[j]); j++)
        ;
    if (j >= n)
        return 0;
    *next = j;
    while (j < n && !space(s[j]))
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
    if (!contains_sentbreak(p, w))
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
            while (g > 0 && space(s[p->slices[i + 1].a + g - 1]))
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
    while (n > 0 && space(t[n - 1]))
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
