/*
 * seg_livekit.c - LiveKit's rule-based sentence splitter, rule by rule.
 *
 * split_sentences rewrites the text with a chain of regular expressions:
 * periods that do not end a sentence become "<prd>", sentence ends get a
 * "<stop>" after them, and the text is split at the stops.  Here the text
 * is never rewritten: each code point carries flags (PRD: a period turned
 * into <prd>; DEL: a period the chain deletes; STOP: a <stop> follows).
 * The markers never match any later pattern (they hold no space, digit,
 * period or quote, and their letters are never next to a period), so the
 * flags decide exactly what the rewritten text would.  Each rule scans
 * left to right and resumes after its match, as re.sub does: "1.2.3"
 * protects only the first period, and " a. b. " only the first initial.
 */
#include "seg_livekit.h"

#include <string.h>

enum { PRD = 1, DEL = 2, STOP = 4 };

/* Python's str.isspace (which is also what \s and strip() use). */
static int alpha(uint32_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int upper(uint32_t c)
{
    return c >= 'A' && c <= 'Z';
}

static int digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

struct text {
    const uint32_t *cp;
    uint8_t *f;
    size_t n;
};

/* The code point at i as the rewritten text shows it: '\n' is a space
 * (retain_format off), a period turned to <prd> or deleted is no period. */
static uint32_t at(const struct text *t, size_t i)
{
    uint32_t c;
    if (i >= t->n)
        return 0;
    c = t->cp[i];
    if (c == '\n')
        return ' ';
    if (c == '.' && (t->f[i] & (PRD | DEL)))
        return 0xFFFF;
    return c;
}

static int dot(const struct text *t, size_t i)
{
    return at(t, i) == '.';
}

/* Whether the ASCII word w is at i; returns its length or 0. */
static size_t word(const struct text *t, size_t i, const char *w)
{
    size_t k = 0;
    for (; w[k] != '\0'; k++)
        if (at(t, i + k) != (unsigned char)w[k])
            return 0;
    return k;
}

/* starters: Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\s|She\s|...|Wherever, the
 * first alternative that matches; returns the match length or 0. */
static size_t starter(const struct text *t, size_t i)
{
    static const char *const plain[] = {"Mr", "Mrs", "Ms", "Dr", "Prof", "Capt", "Cpt", "Lt"};
    static const char *const spaced[] = {"He", "She", "It",      "They", "Their", "Our",
                                         "We", "But", "However", "That", "This"};
    size_t k;
    for (size_t j = 0; j < sizeof(plain) / sizeof(plain[0]); j++)
        if ((k = word(t, i, plain[j])) != 0)
            return k;
    for (size_t j = 0; j < sizeof(spaced) / sizeof(spaced[0]); j++)
        if ((k = word(t, i, spaced[j])) != 0 && i + k < t->n && tb_seg_py_space(at(t, i + k)))
            return k + 1;
    return word(t, i, "Wherever");
}

/* acronyms: [A-Z][.][A-Z][.](?:[A-Z][.])?, greedy; returns the length of
 * the longest match at i that `then` accepts after it, or 0. */
static size_t acronym(const struct text *t, size_t i)
{
    if (!(upper(at(t, i)) && dot(t, i + 1) && upper(at(t, i + 2)) && dot(t, i + 3)))
        return 0;
    if (upper(at(t, i + 4)) && dot(t, i + 5) && at(t, i + 6) == ' ' && starter(t, i + 7))
        return 6;
    if (at(t, i + 4) == ' ' && starter(t, i + 5))
        return 4;
    return 0;
}

static size_t suffix(const struct text *t, size_t i)
{
    static const char *const s[] = {"Inc", "Ltd", "Jr", "Sr", "Co"};
    size_t k;
    for (size_t j = 0; j < 5; j++)
        if ((k = word(t, i, s[j])) != 0)
            return k;
    return 0;
}

static int terminal(uint32_t c)
{
    return c == '.' || c == '!' || c == '?' || c == 0x3002 || c == 0xFF01 || c == 0xFF1F;
}

/* LiveKit's substitutions run in order over one text; mark() runs its
 * passes in that order: periods that are not stops (titles, websites,
 * numbers, ellipses, Ph.D.), letters and acronyms, company and name
 * suffixes, then the sentence ends. */
static void mark_periods(struct text *t)
{
    size_t i, k, n = t->n;
    /* prefixes: (Mr|St|Mrs|Ms|Dr)[.] */
    for (i = 0; i < n; i++) {
        if (!dot(t, i))
            continue;
        if ((i >= 2 && (word(t, i - 2, "Mr") || word(t, i - 2, "St") || word(t, i - 2, "Ms") ||
                        word(t, i - 2, "Dr"))) ||
            (i >= 3 && word(t, i - 3, "Mrs")))
            t->f[i] |= PRD;
    }
    /* websites: [.](com|net|org|io|gov|edu|me) */
    for (i = 0; i < n; i++)
        if (dot(t, i) && (word(t, i + 1, "com") || word(t, i + 1, "net") || word(t, i + 1, "org") ||
                          word(t, i + 1, "io") || word(t, i + 1, "gov") || word(t, i + 1, "edu") ||
                          word(t, i + 1, "me")))
            t->f[i] |= PRD;
    /* digits: ([0-9])[.]([0-9]), resuming after the second digit */
    for (i = 0; i + 2 < n; i++)
        if (digit(at(t, i)) && dot(t, i + 1) && digit(at(t, i + 2))) {
            t->f[i + 1] |= PRD;
            i += 2;
        }
    /* multiple dots: \.{2,} */
    for (i = 0; i < n; i = k) {
        for (k = i; k < n && dot(t, k); k++)
            ;
        if (k - i >= 2)
            for (size_t j = i; j < k; j++)
                t->f[j] |= PRD;
        if (k == i)
            k++;
    }
    /* "Ph.D." -> Ph<prd>D<prd> */
    for (i = 0; i + 5 <= n; i++)
        if (word(t, i, "Ph.D.")) {
            t->f[i + 2] |= PRD;
            t->f[i + 4] |= PRD;
            i += 4;
        }
}

static void mark_letters(struct text *t)
{
    size_t i, k, n = t->n;
    /* \s([A-Za-z])[.] (a space after), resuming after that space */
    for (i = 0; i + 3 < n; i++)
        if (tb_seg_py_space(at(t, i)) && alpha(at(t, i + 1)) && dot(t, i + 2) &&
            at(t, i + 3) == ' ') {
            t->f[i + 2] |= PRD;
            i += 3;
        }
    /* acronyms followed by a space and a starter: a stop after the acronym */
    for (i = 0; i < n; i++)
        if ((k = acronym(t, i)) != 0) {
            t->f[i + k - 1] |= STOP;
            i += k + starter(t, i + k + 1);
        }
    /* ([A-Za-z])[.] three times, then twice */
    for (i = 0; i + 6 <= n; i++)
        if (alpha(at(t, i)) && dot(t, i + 1) && alpha(at(t, i + 2)) && dot(t, i + 3) &&
            alpha(at(t, i + 4)) && dot(t, i + 5)) {
            t->f[i + 1] |= PRD;
            t->f[i + 3] |= PRD;
            t->f[i + 5] |= PRD;
            i += 5;
        }
    for (i = 0; i + 4 <= n; i++)
        if (alpha(at(t, i)) && dot(t, i + 1) && alpha(at(t, i + 2)) && dot(t, i + 3)) {
            t->f[i + 1] |= PRD;
            t->f[i + 3] |= PRD;
            i += 3;
        }
}

static void mark_suffixes(struct text *t)
{
    size_t i, k, n = t->n;
    /* " (Inc|Ltd|Jr|Sr|Co)[.] (starters)" -> " \1<stop> \2": the period
     * is dropped from the text */
    for (i = 0; i < n; i++)
        if (at(t, i) == ' ' && (k = suffix(t, i + 1)) != 0 && dot(t, i + 1 + k) &&
            at(t, i + 2 + k) == ' ' && starter(t, i + 3 + k)) {
            t->f[i + 1 + k] |= DEL | STOP;
            i += 2 + k + starter(t, i + 3 + k);
        }
    /* " (Inc|Ltd|Jr|Sr|Co)[.]" and " ([A-Za-z])[.]" */
    for (i = 0; i < n; i++)
        if (at(t, i) == ' ' && (k = suffix(t, i + 1)) != 0 && dot(t, i + 1 + k)) {
            t->f[i + 1 + k] |= PRD;
            i += 1 + k;
        }
    for (i = 0; i + 2 < n; i++)
        if (at(t, i) == ' ' && alpha(at(t, i + 1)) && dot(t, i + 2)) {
            t->f[i + 2] |= PRD;
            i += 2;
        }
}

static void mark_ends(struct text *t)
{
    size_t i, n = t->n;
    /* sentence ends: after the closing double quote, if one follows */
    for (i = 0; i < n; i++) {
        if (!terminal(at(t, i)))
            continue;
        if (at(t, i + 1) == '"' || at(t, i + 1) == 0x201D) {
            t->f[i + 1] |= STOP;
            i++;
        }
    }
    for (i = 0; i < n; i++)
        if (terminal(at(t, i)) && !(at(t, i + 1) == '"' || at(t, i + 1) == 0x201D))
            t->f[i] |= STOP;
}

static void mark(struct text *t)
{
    mark_periods(t);
    mark_letters(t);
    mark_suffixes(t);
    mark_ends(t);
}

size_t tb_seg_lk_first(const uint32_t *cp, uint8_t *flags, size_t n)
{
    struct text t = {cp, flags, n};
    size_t piece = 0, end = 0, buff = 0, first = 0;
    size_t lo, hi; /* the piece's first and last non-space, + 1 */
    int have_lo = 0, groups = 0;
    memset(flags, 0, n);
    mark(&t);
    /* Walk the pieces between stops.  A piece's length counts every code
     * point but deleted periods; its sentence is the piece stripped. */
    lo = hi = 0;
    for (size_t i = 0; i <= n; i++) {
        int cut = i == n || (t.f[i] & STOP);
        if (i < n) {
            if (!(t.f[i] & DEL)) {
                piece++;
                if (!tb_seg_py_space(at(&t, i))) {
                    if (!have_lo) {
                        lo = piece - 1;
                        have_lo = 1;
                    }
                    hi = piece;
                }
            }
        }
        if (!cut)
            continue;
        if (have_lo) { /* a sentence: buff += " " + sentence */
            buff += 1 + (hi - lo);
            end += piece;
            if (groups == 1)
                return first; /* a second sentence exists */
            if (buff > 20) {
                groups = 1;
                first = end;
                buff = 0;
            }
        }
        piece = 0;
        have_lo = 0;
    }
    return 0;
}
