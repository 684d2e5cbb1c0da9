/*
 * ttslat.c - a TTS engine's first-byte latency per chunk (see ttslat.h).
 *
 * The draws are counter-based on purpose: a sequential generator would
 * make L_j depend on how many chunks were asked for before j, and the
 * minimum-TPS search replays a stream many times, possibly in parts.
 * splitmix64's output n is a mix of (state + n * gamma) alone, so chunk j
 * can jump straight to its two outputs.
 *
 * A FILE's values are kept in file order (list: cycles through them) and
 * sorted once more for the quantiles; both copies are at most
 * TB_TTSLAT_FILE_MAX / 2 values (a value and its newline), 4 MiB each.
 */
#include "ttsbuf/ttslat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "base/readall.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

#define GAMMA 0x9E3779B97F4A7C15ull

struct tb_ttslat {
    enum tb_ttslat_kind kind;
    uint64_t seed;
    uint64_t key;   /* mix(seed): the stream's start */
    double a, b;    /* constant: a; lognormal: p50, p90; uniform: A, B */
    double mu, sig; /* lognormal */
    double *v;      /* FILE's values in file order */
    size_t n;
    double q50, q90; /* FILE's quantiles */
    char *path;      /* FILE as the spec names it */
    char *name;      /* FILE for messages: "<stdin>", or path with odd bytes as \xHH */
};

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Output n of splitmix64 started at state key: a pure function of (key, n). */
static uint64_t output(uint64_t key, uint64_t n)
{
    return mix(key + n * GAMMA);
}

/* Uniform in (0, 1), never 0 (log-safe) nor 1. */
static double unit(uint64_t r)
{
    return ((double)(r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

const char *tb_ttslat_kind_name(enum tb_ttslat_kind kind)
{
    switch (kind) {
    case TB_TTSLAT_CONST: return "constant";
    case TB_TTSLAT_LOGNORMAL: return "lognormal";
    case TB_TTSLAT_UNIFORM: return "uniform";
    case TB_TTSLAT_EMPIRICAL: return "empirical";
    case TB_TTSLAT_LIST: return "list";
    }
    return "?";
}

/* Text from outside, fit for a one-line message: at most 40 bytes, each
 * byte outside printable ASCII as \xHH, a "..." when cut. */
static const char *shown(char *buf, size_t len, const char *s, size_t n)
{
    size_t o = 0, i;
    for (i = 0; i < n && i < 40 && o + 5 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7F)
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, len - o, "\\x%02X", c);
    }
    if (i < n && o + 4 < len) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

/* A malloc'd copy of s with each byte outside printable ASCII as \xHH
 * ("-": "<stdin>"), or NULL when out of memory. */
static char *escaped(const char *s)
{
    size_t n = strlen(s), o = 0;
    char *e;
    if (strcmp(s, "-") == 0)
        return strdup("<stdin>");
    e = malloc(4 * n + 1);
    if (e == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7F)
            e[o++] = (char)c;
        else
            o += (size_t)snprintf(e + o, 5, "\\x%02X", c);
    }
    e[o] = '\0';
    return e;
}

/* A finite number in [lo, hi] written in decimal filling all of s[0..n)
 * (digits, a sign, a point, an exponent: strtod would also take a blank
 * before it, "0x10" as 16 and "inf"; at most TB_TTSLAT_SPEC_MAX bytes).
 * 0 and *out; TB_EINVAL when not such a number; TB_ERANGE outside the
 * range.  -0 reads as 0. */
static int number(const char *s, size_t n, double lo, double hi, double *out)
{
    char buf[TB_TTSLAT_SPEC_MAX + 1], *end;
    double d;
    if (n == 0 || n >= sizeof(buf))
        return TB_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (strchr("0123456789+-.eE", s[i]) == NULL || s[i] == '\0')
            return TB_EINVAL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    d = strtod(buf, &end); /* an underflow reads as a tiny value or 0: in range */
    if (end != buf + n || !isfinite(d))
        return TB_EINVAL;
    if (!(d >= lo && d <= hi))
        return TB_ERANGE;
    *out = d + 0.0;
    return 0;
}

/* number() for spec key `key`, with the message. */
static int spec_number(const char *key, const char *s, size_t n, double lo, double hi, double *out,
                       char *err, size_t errlen)
{
    char sh[200];
    int rc = number(s, n, lo, hi, out);
    if (rc == TB_EINVAL)
        return tb_seterr(err, errlen, rc,
                         "tts latency: %s '%s' is not a number (allowed: %g..%g s)", key,
                         shown(sh, sizeof(sh), s, n), lo, hi);
    if (rc == TB_ERANGE)
        return tb_seterr(err, errlen, rc, "tts latency: %s %s is outside %g..%g s", key,
                         shown(sh, sizeof(sh), s, n), lo, hi);
    return 0;
}

/* "p50=A,p90=B", the keys in either order, each once. */
static int parse_lognormal(const char *s, struct tb_ttslat *t, char *err, size_t errlen)
{
    int have50 = 0, have90 = 0;
    char sh[200];
    while (*s != '\0') {
        const char *comma = strchr(s, ',');
        size_t n = comma != NULL ? (size_t)(comma - s) : strlen(s);
        const char *eq = memchr(s, '=', n);
        size_t kn = eq != NULL ? (size_t)(eq - s) : n;
        int is50 = kn == 3 && memcmp(s, "p50", 3) == 0;
        int is90 = kn == 3 && memcmp(s, "p90", 3) == 0;
        int rc;
        if (eq == NULL)
            return tb_seterr(err, errlen, TB_EINVAL,
                             "tts latency: lognormal: '%s' is not KEY=SECONDS (keys: p50, p90)",
                             shown(sh, sizeof(sh), s, n));
        if (!is50 && !is90)
            return tb_seterr(err, errlen, TB_EINVAL,
                             "tts latency: lognormal: unknown key '%s' (keys: p50, p90)",
                             shown(sh, sizeof(sh), s, kn));
        if ((is50 && have50) || (is90 && have90))
            return tb_seterr(err, errlen, TB_EINVAL, "tts latency: lognormal: %s given twice",
                             is50 ? "p50" : "p90");
        rc = spec_number(is50 ? "lognormal p50" : "lognormal p90", eq + 1, n - kn - 1,
                         TB_TTSLAT_LOGNORMAL_MIN, TB_TTSLAT_MAX, is50 ? &t->a : &t->b, err, errlen);
        if (rc != 0)
            return rc;
        have50 |= is50;
        have90 |= is90;
        s += n;
        if (*s == ',') {
            s++;
            if (*s == '\0')
                return tb_seterr(err, errlen, TB_EINVAL,
                                 "tts latency: lognormal: a trailing ',' (want p50=A,p90=B)");
        }
    }
    if (!have50 || !have90)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "tts latency: lognormal: %s missing (want p50=A,p90=B)",
                         have50 ? "p90" : "p50");
    if (t->b < t->a) {
        char x[32], y[32];
        return tb_seterr(err, errlen, TB_ERANGE,
                         "tts latency: lognormal p90 %s is below p50 %s (want p50 <= p90 <= %g s)",
                         tb_numfmt_double(x, sizeof(x), t->b), tb_numfmt_double(y, sizeof(y), t->a),
                         TB_TTSLAT_MAX);
    }
    t->mu = log(t->a);
    t->sig = (log(t->b) - log(t->a)) / TB_TTSLAT_Z90;
    return 0;
}

/* "A..B", 0 <= A <= B <= max. */
static int parse_uniform(const char *s, struct tb_ttslat *t, char *err, size_t errlen)
{
    const char *dots = strstr(s, "..");
    char sh[200];
    int rc;
    if (dots == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "tts latency: uniform: '%s' is not A..B (seconds)",
                         shown(sh, sizeof(sh), s, strlen(s)));
    rc = spec_number("uniform A", s, (size_t)(dots - s), 0, TB_TTSLAT_MAX, &t->a, err, errlen);
    if (rc == 0)
        rc = spec_number("uniform B", dots + 2, strlen(dots + 2), 0, TB_TTSLAT_MAX, &t->b, err,
                         errlen);
    if (rc == 0 && t->b < t->a) {
        char x[32], y[32];
        return tb_seterr(err, errlen, TB_ERANGE,
                         "tts latency: uniform B %s is below A %s (want 0 <= A <= B <= %g s)",
                         tb_numfmt_double(x, sizeof(x), t->b), tb_numfmt_double(y, sizeof(y), t->a),
                         TB_TTSLAT_MAX);
    }
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The smallest value with at least a share p of the n sorted values at
 * or below it. */
static double quantile(const double *sorted, size_t n, double p)
{
    double k = ceil(p * (double)n);
    size_t i = k < 1 ? 0 : (size_t)k - 1;
    return sorted[i < n ? i : n - 1];
}

/* FILE's lines into t->v; name for the messages. */
static int parse_values(const char *name, const char *d, size_t len, struct tb_ttslat *t, char *err,
                        size_t errlen)
{
    size_t cap = 0, line = 0, pos = 0;
    double *sorted;
    char sh[200];
    while (pos < len) {
        const char *nl = memchr(d + pos, '\n', len - pos);
        size_t end = nl != NULL ? (size_t)(nl - d) : len, a = pos, b = end;
        double v = 0;
        int rc;
        line++;
        pos = end + 1;
        while (a < b && (d[a] == ' ' || d[a] == '\t' || d[a] == '\r'))
            a++;
        while (b > a && (d[b - 1] == ' ' || d[b - 1] == '\t' || d[b - 1] == '\r'))
            b--;
        if (a == b || d[a] == '#')
            continue;
        rc = number(d + a, b - a, 0, TB_TTSLAT_MAX, &v);
        if (rc == TB_EINVAL)
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "%s:%zu: '%s' is not a number of seconds (allowed: 0..%g)", name, line,
                             shown(sh, sizeof(sh), d + a, b - a), TB_TTSLAT_MAX);
        if (rc == TB_ERANGE)
            return tb_seterr(err, errlen, TB_EFORMAT, "%s:%zu: %s is outside 0..%g s", name, line,
                             shown(sh, sizeof(sh), d + a, b - a), TB_TTSLAT_MAX);
        if (t->n == cap) {
            size_t nc = cap == 0 ? 64 : cap * 2;
            double *nv = realloc(t->v, nc * sizeof(*nv));
            if (nv == NULL)
                return tb_seterr(err, errlen, TB_ENOMEM, "%s: out of memory", name);
            t->v = nv;
            cap = nc;
        }
        t->v[t->n++] = v;
    }
    if (t->n == 0)
        return tb_seterr(err, errlen, TB_EEMPTY, "%s: no values (one number of seconds a line)",
                         name);
    sorted = malloc(t->n * sizeof(*sorted));
    if (sorted == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "%s: out of memory", name);
    memcpy(sorted, t->v, t->n * sizeof(*sorted));
    qsort(sorted, t->n, sizeof(*sorted), cmp_double);
    t->q50 = quantile(sorted, t->n, 0.5);
    t->q90 = quantile(sorted, t->n, 0.9);
    t->a = sorted[0];
    t->b = sorted[t->n - 1];
    free(sorted);
    return 0;
}

/* The kind and its arguments, without FILE's values.  *file: whether the
 * kind reads a FILE. */
static int parse_spec(const char *spec, struct tb_ttslat *t, int *file, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    size_t kn = colon != NULL ? (size_t)(colon - spec) : 0;
    char sh[200];
    *file = 0;
    if (strlen(spec) > TB_TTSLAT_SPEC_MAX)
        return tb_seterr(err, errlen, TB_ETOOBIG, "tts latency: the spec is over %d bytes",
                         TB_TTSLAT_SPEC_MAX);
    if (colon == NULL) {
        t->kind = TB_TTSLAT_CONST;
        return spec_number("constant", spec, strlen(spec), 0, TB_TTSLAT_MAX, &t->a, err, errlen);
    }
    if (kn == 9 && memcmp(spec, "lognormal", 9) == 0) {
        t->kind = TB_TTSLAT_LOGNORMAL;
        return parse_lognormal(colon + 1, t, err, errlen);
    }
    if (kn == 7 && memcmp(spec, "uniform", 7) == 0) {
        t->kind = TB_TTSLAT_UNIFORM;
        return parse_uniform(colon + 1, t, err, errlen);
    }
    if ((kn == 9 && memcmp(spec, "empirical", 9) == 0) ||
        (kn == 4 && memcmp(spec, "list", 4) == 0)) {
        t->kind = kn == 4 ? TB_TTSLAT_LIST : TB_TTSLAT_EMPIRICAL;
        if (colon[1] == '\0')
            return tb_seterr(err, errlen, TB_EINVAL, "tts latency: %s: no FILE after the ':'",
                             tb_ttslat_kind_name(t->kind));
        t->path = strdup(colon + 1);
        t->name = escaped(colon + 1);
        if (t->path == NULL || t->name == NULL)
            return tb_seterr(err, errlen, TB_ENOMEM, "tts latency: out of memory");
        *file = 1;
        return 0;
    }
    return tb_seterr(err, errlen, TB_EINVAL,
                     "tts latency: unknown kind '%s' (known: SECONDS, lognormal:p50=A,p90=B, "
                     "uniform:A..B, empirical:FILE, list:FILE)",
                     shown(sh, sizeof(sh), spec, kn));
}

static int create(const char *spec, int from_mem, const char *data, size_t len, uint64_t seed,
                  struct tb_ttslat **out, char *err, size_t errlen)
{
    struct tb_ttslat *t = calloc(1, sizeof(*t));
    char *buf = NULL;
    int file = 0, rc;
    if (t == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "tts latency: out of memory");
    t->seed = seed;
    t->key = mix(seed);
    rc = parse_spec(spec, t, &file, err, errlen);
    if (rc == 0 && file && !from_mem) {
        const char *name;
        rc = tb_read_path(t->path, TB_TTSLAT_FILE_MAX, "1 MiB", &buf, &len, &name, err, errlen);
        data = buf;
    } else if (rc == 0 && !file && data != NULL) {
        rc = tb_seterr(err, errlen, TB_EINVAL, "tts latency: %s takes no file",
                       tb_ttslat_kind_name(t->kind));
    } else if (rc == 0 && file && data == NULL) {
        data = "";
        len = 0;
    } else if (rc == 0 && file && len > TB_TTSLAT_FILE_MAX) {
        rc = tb_seterr(err, errlen, TB_ETOOBIG, "%s: over the 1 MiB cap", t->name);
    } else if (rc == 0 && file && memchr(data, '\0', len) != NULL) {
        rc = tb_seterr(err, errlen, TB_EFORMAT, "%s: a NUL byte at byte %zu (not a text file)",
                       t->name, (size_t)((const char *)memchr(data, '\0', len) - data) + 1);
    }
    if (rc == 0 && file) { /* a byte order mark at the start is skipped */
        size_t bom = tb_utf8_bom_len(data, len);
        rc = parse_values(t->name, data + bom, len - bom, t, err, errlen);
    }
    free(buf);
    if (rc != 0) {
        tb_ttslat_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

int tb_ttslat_create(const char *spec, uint64_t seed, struct tb_ttslat **out, char *err,
                     size_t errlen)
{
    return create(spec, 0, NULL, 0, seed, out, err, errlen);
}

int tb_ttslat_create_mem(const char *spec, const char *data, size_t len, uint64_t seed,
                         struct tb_ttslat **out, char *err, size_t errlen)
{
    return create(spec, 1, data, len, seed, out, err, errlen);
}

void tb_ttslat_destroy(struct tb_ttslat *t)
{
    if (t == NULL)
        return;
    free(t->v);
    free(t->path);
    free(t->name);
    free(t);
}

/* Chunk j's latency from the stream started at key. */
static double latency_at(const struct tb_ttslat *t, uint64_t key, uint32_t j)
{
    uint64_t n = 2 * (uint64_t)j; /* outputs n - 1 and n */
    double u = unit(output(key, n - 1)), z, x;
    switch (t->kind) {
    case TB_TTSLAT_CONST: return t->a;
    case TB_TTSLAT_UNIFORM: x = t->a + (t->b - t->a) * u; return x < t->b ? x : t->b;
    case TB_TTSLAT_LOGNORMAL:
        if (t->sig == 0)
            return t->a; /* p50 = p90: exp(ln(a)) need not be a to the bit */
        z = sqrt(-2.0 * log(u)) * cos(6.283185307179586 * unit(output(key, n)));
        x = exp(t->mu + t->sig * z);
        return x < TB_TTSLAT_MAX ? x : TB_TTSLAT_MAX;
    case TB_TTSLAT_EMPIRICAL: {
        size_t i = (size_t)(u * (double)t->n);
        return t->v[i < t->n ? i : t->n - 1];
    }
    case TB_TTSLAT_LIST: return t->v[(size_t)((j + (uint64_t)t->n - 1) % t->n)];
    }
    return 0;
}

double tb_ttslat_at(void *ud, uint32_t j)
{
    const struct tb_ttslat *t = ud;
    return latency_at(t, t->key, j);
}

uint64_t tb_ttslat_draw_seed(uint64_t seed, uint64_t d)
{
    return seed + d * GAMMA; /* unsigned: modulo 2^64 */
}

void tb_ttslat_seeded_init(struct tb_ttslat_seeded *v, const struct tb_ttslat *t, uint64_t seed)
{
    v->t = t;
    v->key = mix(seed);
}

double tb_ttslat_seeded_at(void *ud, uint32_t j)
{
    const struct tb_ttslat_seeded *v = ud;
    return latency_at(v->t, v->key, j);
}

int tb_ttslat_format(const struct tb_ttslat *t, char *buf, size_t len)
{
    char x[32], y[32];
    switch (t->kind) {
    case TB_TTSLAT_CONST: return snprintf(buf, len, "%s", tb_numfmt_double(x, sizeof(x), t->a));
    case TB_TTSLAT_LOGNORMAL:
        return snprintf(buf, len, "lognormal:p50=%s,p90=%s", tb_numfmt_double(x, sizeof(x), t->a),
                        tb_numfmt_double(y, sizeof(y), t->b));
    case TB_TTSLAT_UNIFORM:
        return snprintf(buf, len, "uniform:%s..%s", tb_numfmt_double(x, sizeof(x), t->a),
                        tb_numfmt_double(y, sizeof(y), t->b));
    case TB_TTSLAT_EMPIRICAL:
    case TB_TTSLAT_LIST: return snprintf(buf, len, "%s:%s", tb_ttslat_kind_name(t->kind), t->path);
    }
    return snprintf(buf, len, "?");
}

void tb_ttslat_info(const struct tb_ttslat *t, struct tb_ttslat_info *info)
{
    *info = (struct tb_ttslat_info){.kind = t->kind, .seed = t->seed};
    switch (t->kind) {
    case TB_TTSLAT_CONST: info->p50 = info->p90 = info->lo = info->hi = t->a; break;
    case TB_TTSLAT_LOGNORMAL:
        info->seeded = 1;
        info->p50 = t->a;
        info->p90 = t->b;
        info->lo = t->sig > 0 ? 0 : t->a;
        info->hi = t->sig > 0 ? TB_TTSLAT_MAX : t->a;
        break;
    case TB_TTSLAT_UNIFORM:
        info->seeded = 1;
        info->p50 = t->a + 0.5 * (t->b - t->a);
        info->p90 = t->a + 0.9 * (t->b - t->a);
        info->lo = t->a;
        info->hi = t->b;
        break;
    case TB_TTSLAT_EMPIRICAL:
    case TB_TTSLAT_LIST:
        info->seeded = t->kind == TB_TTSLAT_EMPIRICAL;
        info->p50 = t->q50;
        info->p90 = t->q90;
        info->lo = t->a;
        info->hi = t->b;
        info->values = t->n;
        break;
    }
}
