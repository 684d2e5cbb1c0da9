/*
 * punkt_break.c - Punkt's decision for one candidate sentence end
 * (punkt_break.h): NLTK's word tokenizer, the token properties (types,
 * numbers, initials, table look-ups) and the two annotation passes.
 *
 * Tokens are spans of the caller's code points; keys for the tables are
 * built in small stack buffers.  O(n) per context.
 */
#include "punkt_break.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "punkt_class.h"
#include "punkt_tab.h"

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

#define KEY_MAX 256 /* bytes of a word type used as a key */

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
    while (k + 1 < n && s[k] == '.' && tb_punkt_space(s[k + 1])) {
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
    if (i >= n || tb_punkt_space(s[i]) || tb_punkt_nonword(s[i]) || multichar(s, n, i) > 0)
        return 1;
    if (s[i] == ',')
        return i + 1 >= n || tb_punkt_space(s[i + 1]) || tb_punkt_nonword(s[i + 1]) ||
               multichar(s, n, i + 1) > 0;
    return 0;
}

/* Splits s[0, n) into words as PunktLanguageVars.word_tokenize does on
 * each line; returns the count (at most cap, the room left in v). */
static size_t words(struct tb_punkt_tok *v, size_t cap, const uint32_t *s, size_t n)
{
    size_t i = 0, nt = 0, k;
    while (i < n && nt < cap) {
        if (tb_punkt_space(s[i])) {
            i++;
            continue;
        }
        k = multichar(s, n, i);
        if (k == 0 && tb_punkt_wordstart(s[i])) {
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

static int period_final(const uint32_t *s, const struct tb_punkt_tok *t)
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
    if (i >= b || !tb_punkt_digit(s[i]))
        return 0;
    for (i++; i < b; i++)
        if (!(tb_punkt_digit(s[i]) || s[i] == ',' || s[i] == '.' || s[i] == '-'))
            return 0;
    return 1; /* a final '.' is within [\d,\.-]* */
}

/* Writes the lower-cased UTF-8 of s[a, b) to key (NUL-terminated);
 * returns 0, or -1 when it does not fit (no table holds such a key). */
static int utf8_key(char *key, const uint32_t *s, size_t a, size_t b)
{
    size_t w = 0;
    for (size_t i = a; i < b; i++) {
        uint32_t c = tb_punkt_fold(s[i]);
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
static void type_key(char *key, const uint32_t *s, const struct tb_punkt_tok *t, int drop_period)
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

static void type_no_sentperiod(char *key, const uint32_t *s, const struct tb_punkt_tok *t)
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
static int is_initial(const uint32_t *s, const struct tb_punkt_tok *t)
{
    return t->b - t->a == 2 && tb_punkt_letter(s[t->a]) && s[t->a + 1] == '.';
}

/* ---- the two annotation passes ---- */

static void first_pass(const uint32_t *s, struct tb_punkt_tok *t)
{
    char key[KEY_MAX];
    size_t n = t->b - t->a, i;
    if (n == 1 && tb_punkt_sent_end(s[t->a])) {
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
static int ortho_heuristic(const uint32_t *s, const struct tb_punkt_tok *t)
{
    char key[KEY_MAX];
    int oc;
    uint32_t c0 = s[t->a];
    if (t->b - t->a == 1 &&
        (c0 == ';' || c0 == ':' || c0 == ',' || c0 == '.' || c0 == '!' || c0 == '?'))
        return 0;
    type_no_sentperiod(key, s, t);
    oc = ortho(key);
    if (tb_punkt_is_upper(c0) && (oc & ORTHO_LC) && !(oc & MID_UC))
        return 1;
    if (tb_punkt_is_lower(c0) && ((oc & ORTHO_UC) || !(oc & BEG_LC)))
        return 0;
    return 2;
}

static void second_pass(const uint32_t *s, struct tb_punkt_tok *t1, const struct tb_punkt_tok *t2)
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
        if (tb_punkt_is_upper(s[t2->a]) && in_set(tb_punkt_starters, tb_punkt_starters_n, next)) {
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
        if (h == 2 && initial && tb_punkt_is_upper(s[t2->a]) && !(ortho(next) & ORTHO_LC)) {
            t1->sentbreak = 0;
            t1->abbr = 1;
        }
    }
}

int tb_punkt_break(const uint32_t *s, size_t n, struct tb_punkt_tok *toks)
{
    size_t nt = 0, a = 0;
    /* words of each line ('\n'); a line of whitespace gives none */
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '\n')
            continue;
        {
            size_t k = words(toks + nt, TB_PUNKT_MAX_TOKS - nt, s + a, i - a);
            for (size_t j = nt; j < nt + k; j++) {
                toks[j].a += a;
                toks[j].b += a;
            }
            nt += k;
        }
        a = i + 1;
        if (nt >= TB_PUNKT_MAX_TOKS - 1)
            break;
    }
    for (size_t j = 0; j < nt; j++)
        first_pass(s, &toks[j]);
    for (size_t j = 0; j + 1 < nt; j++) {
        second_pass(s, &toks[j], &toks[j + 1]);
        if (toks[j].sentbreak)
            return 1;
    }
    return 0;
}
