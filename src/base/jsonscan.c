/*
 * jsonscan.c - a JSON document walked without building it (see
 * jsonscan.h).
 */
#include "jsonscan.h"

#include <string.h>

#include "jsontext.h"
#include "ttsbuf/error.h"

static size_t blanks(const char *s, size_t len, size_t p)
{
    while (p < len && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r'))
        p++;
    return p;
}

/* The string whose quote is at s[*p]: *p just after its closing quote;
 * TB_EFORMAT (*p = len) when the text ends first. */
static int string_end(const char *s, size_t len, size_t *p)
{
    for (size_t i = *p + 1; i < len; i++) {
        if (s[i] == '"') {
            *p = i + 1;
            return 0;
        }
        if (s[i] == '\\')
            i++; /* the escaped byte, whatever it is */
    }
    *p = len;
    return TB_EFORMAT;
}

/* The characters of a scalar (S) and of a number (N) among them. */
enum { S = 1, N = 2 };
#define L_ S
#define D_ (S | N)
static const unsigned char cls[256] = {
    ['+'] = D_, ['-'] = D_, ['.'] = D_, ['0'] = D_, ['1'] = D_, ['2'] = D_, ['3'] = D_, ['4'] = D_,
    ['5'] = D_, ['6'] = D_, ['7'] = D_, ['8'] = D_, ['9'] = D_, ['E'] = D_, ['e'] = D_, ['A'] = L_,
    ['B'] = L_, ['C'] = L_, ['D'] = L_, ['F'] = L_, ['G'] = L_, ['H'] = L_, ['I'] = L_, ['J'] = L_,
    ['K'] = L_, ['L'] = L_, ['M'] = L_, ['N'] = L_, ['O'] = L_, ['P'] = L_, ['Q'] = L_, ['R'] = L_,
    ['S'] = L_, ['T'] = L_, ['U'] = L_, ['V'] = L_, ['W'] = L_, ['X'] = L_, ['Y'] = L_, ['Z'] = L_,
    ['a'] = L_, ['b'] = L_, ['c'] = L_, ['d'] = L_, ['f'] = L_, ['g'] = L_, ['h'] = L_, ['i'] = L_,
    ['j'] = L_, ['k'] = L_, ['l'] = L_, ['m'] = L_, ['n'] = L_, ['o'] = L_, ['p'] = L_, ['q'] = L_,
    ['r'] = L_, ['s'] = L_, ['t'] = L_, ['u'] = L_, ['v'] = L_, ['w'] = L_, ['x'] = L_, ['y'] = L_,
    ['z'] = L_,
};
#undef L_
#undef D_

static int scalar_char(char c)
{
    return cls[(unsigned char)c] & S;
}

/* The scalar at s[*p]: a run of number characters, or a word cJSON (or
 * the importers' rewrite of Python's words) reads; *p after it. */
static int scalar_end(const char *s, size_t len, size_t *p)
{
    static const char *const words[] = {"null", "true", "false", "NaN", "Infinity", "-Infinity"};
    size_t a = *p, b = a;
    int number = 1;
    while (b < len && (cls[(unsigned char)s[b]] & S)) {
        number &= (cls[(unsigned char)s[b]] & N) != 0;
        b++;
    }
    if (b == a)
        return TB_EFORMAT;
    if (number) {
        *p = b;
        return 0;
    }
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
        if (strlen(words[w]) == b - a && memcmp(s + a, words[w], b - a) == 0) {
            *p = b;
            return 0;
        }
    while (cls[(unsigned char)s[a]] & N)
        a++;
    *p = a; /* the first character that is not a number's */
    return TB_EFORMAT;
}

/* A member's key and its colon at s[*p]: *p at its value. */
static int key_colon(const char *s, size_t len, size_t *p)
{
    if (*p >= len || s[*p] != '"')
        return TB_EFORMAT;
    if (string_end(s, len, p) != 0)
        return TB_EFORMAT;
    *p = blanks(s, len, *p);
    if (*p >= len || s[*p] != ':')
        return TB_EFORMAT;
    *p = blanks(s, len, *p + 1);
    return 0;
}

/* After a value at depth d: the closing brackets and the comma (and a
 * member's key) before the next value.  1 when a value follows, 0 when
 * the outermost value ended (*p after it), TB_EFORMAT. */
static int after_value(const char *s, size_t len, size_t *p, const char *stack, size_t *depth)
{
    while (*depth > 0) {
        *p = blanks(s, len, *p);
        if (*p >= len)
            return TB_EFORMAT;
        if (s[*p] == stack[*depth - 1]) {
            (*p)++;
            (*depth)--;
            continue;
        }
        if (s[*p] != ',')
            return TB_EFORMAT;
        *p = blanks(s, len, *p + 1);
        if (stack[*depth - 1] == '}' && key_colon(s, len, p) != 0)
            return TB_EFORMAT;
        return 1;
    }
    return 0;
}

int tb_jsonscan_skip(const char *s, size_t len, size_t *pos)
{
    char stack[TB_JSON_DEPTH_MAX];
    size_t depth = 0, p = blanks(s, len, *pos);
    int rc;
    for (;;) {
        char c;
        p = blanks(s, len, p);
        if (p >= len) {
            *pos = len;
            return TB_EFORMAT;
        }
        c = s[p];
        if (c == '[' || c == '{') {
            if (depth == TB_JSON_DEPTH_MAX)
                break;
            stack[depth++] = c == '[' ? ']' : '}';
            p = blanks(s, len, p + 1);
            if (p < len && s[p] == stack[depth - 1]) {
                p++;
                depth--;
            } else if (c == '{') {
                if (key_colon(s, len, &p) != 0)
                    break;
                continue;
            } else {
                continue;
            }
        } else if ((c == '"' ? string_end(s, len, &p) : scalar_end(s, len, &p)) != 0) {
            break;
        }
        rc = after_value(s, len, &p, stack, &depth);
        if (rc == 0) {
            *pos = p;
            return 0;
        }
        if (rc < 0)
            break;
    }
    *pos = p < len ? p : len;
    return TB_EFORMAT;
}

size_t tb_jsonscan_cost(const char *s, size_t len)
{
    size_t cost = 0, p = 0;
    while (p < len) {
        char c = s[p];
        if (c == '"') {
            size_t a = p;
            if (string_end(s, len, &p) != 0)
                break;
            cost += p - a + 32; /* its bytes, or fewer once unescaped */
            a = blanks(s, len, p);
            if (a >= len || s[a] != ':')
                cost += 80; /* a value, not a key */
        } else if (c == '[' || c == '{') {
            cost += 80;
            p++;
        } else if (scalar_char(c)) {
            cost += 80;
            while (p < len && scalar_char(s[p]))
                p++;
        } else {
            p++;
        }
    }
    return cost;
}

int tb_jsonscan_open(struct tb_jsonscan_it *it, const char *s, size_t len, size_t pos)
{
    size_t p = blanks(s, len, pos);
    memset(it, 0, sizeof(*it));
    it->s = s;
    it->len = len;
    it->pos = p;
    if (p >= len || (s[p] != '[' && s[p] != '{'))
        return TB_EFORMAT;
    it->close = s[p] == '[' ? ']' : '}';
    it->pos = p + 1;
    return 0;
}

int tb_jsonscan_next(struct tb_jsonscan_it *it, size_t *ks, size_t *ke, size_t *vs, size_t *ve)
{
    const char *s = it->s;
    size_t len = it->len, p = blanks(s, len, it->pos);
    if (it->done)
        return 0;
    if (p < len && s[p] == it->close) {
        it->pos = p + 1;
        it->done = 1;
        return 0;
    }
    if (it->index > 0) {
        if (p >= len || s[p] != ',')
            goto bad;
        p = blanks(s, len, p + 1);
    }
    if (it->close == '}') {
        size_t k = p;
        if (p >= len || s[p] != '"' || string_end(s, len, &k) != 0)
            goto bad;
        if (ks != NULL)
            *ks = p + 1;
        if (ke != NULL)
            *ke = k - 1;
        p = k;
        p = blanks(s, len, p);
        if (p >= len || s[p] != ':')
            goto bad;
        p = blanks(s, len, p + 1);
    }
    *vs = p;
    if (tb_jsonscan_skip(s, len, &p) != 0) {
        it->pos = p;
        return TB_EFORMAT;
    }
    *ve = p;
    it->pos = p;
    it->index++;
    return 1;
bad:
    it->pos = p < len ? p : len;
    return TB_EFORMAT;
}

int tb_jsonscan_key_is(const char *s, size_t ks, size_t ke, const char *name)
{
    size_t n = strlen(name), k = 0;
    if (memchr(s + ks, '\\', ke - ks) == NULL)
        return ke - ks == n && memcmp(s + ks, name, n) == 0;
    for (size_t i = ks; i < ke; i++, k++) {
        char c = s[i];
        if (c == '\\' && i + 1 < ke) {
            char e = s[++i];
            if (e == 'u' && i + 4 < ke) {
                int v = 0;
                for (int d = 1; d <= 4; d++) {
                    int h = tb_jsontext_hex((unsigned char)s[i + d]);
                    if (h < 0)
                        return 0;
                    v = v * 16 + h;
                }
                i += 4;
                if (v <= 0 || v >= 0x80)
                    return 0; /* a name is ASCII */
                c = (char)v;
            } else {
                if (e != '"' && e != '\\' && e != '/')
                    return 0;
                c = e;
            }
        }
        if (k >= n || name[k] != c)
            return 0;
    }
    return k == n;
}
