/*
 * bench_uturn.c - a call's draws (bench_calls.h): the caller's speaking
 * time between turns (the spec parsed and named), and barge-in's: whether
 * the caller interrupts a turn, and how long into its playback.  Each is
 * one draw per (seed, call, turn) from a generator seeded by those alone
 * (splitmix64), so a shard draws what one run would whatever the order
 * calls end in; barge-in's on a stream of its own, so P = 0 changes no
 * other draw.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/bench_calls.h"
#include "ttsbuf/error.h"

/* A number in [lo, hi] from s up to end (exclusive).  0 or -1. */
static int num(const char *s, const char *end, double lo, double hi, double *v)
{
    char buf[64], *e;
    size_t len = (size_t)(end - s);
    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *v = strtod(buf, &e);
    if (*e != '\0' || errno != 0 || !(*v >= lo && *v <= hi))
        return -1;
    return 0;
}

/* "A" or "A<sep>B" after a kind's colon; sep "," (words:WPM,PAUSE), or
 * ".." (uniform:A..B, every SPEC's range; "," there too, an older
 * spelling kept as an alias). */
static int pair(const char *s, const char *sep, double lo1, double hi1, double lo2, double hi2,
                int need2, double *a, double *b)
{
    const char *at = strstr(s, sep);
    size_t seplen = strlen(sep);
    if (at == NULL && strcmp(sep, "..") == 0 && (at = strchr(s, ',')) != NULL)
        seplen = 1;
    if (at == NULL)
        return need2 ? -1 : num(s, s + strlen(s), lo1, hi1, a);
    if (num(s, at, lo1, hi1, a) != 0)
        return -1;
    return num(at + seplen, at + seplen + strlen(at + seplen), lo2, hi2, b);
}

/* Whether a spec holds a negative number: no kind takes one, and the
 * error says so, as the number options' do (cli.h). */
static int negative(const char *spec)
{
    for (const char *m = strchr(spec, '-'); m != NULL; m = strchr(m + 1, '-'))
        if (isdigit((unsigned char)m[1]) || (m[1] == '.' && isdigit((unsigned char)m[2])))
            return 1;
    return 0;
}

int tb_uturn_parse(const char *spec, struct tb_uturn *u, char *err, size_t errlen)
{
    const double mx = TB_UTURN_MAX_S;
    memset(u, 0, sizeof(*u));
    if (negative(spec))
        return tb_seterr(err, errlen, TB_EINVAL, "'%s' is negative (seconds 0..3600)", spec);
    if (strncmp(spec, "uniform:", 8) == 0) {
        u->kind = TB_UTURN_UNIFORM;
        if (pair(spec + 8, "..", 0, mx, 0, mx, 1, &u->a, &u->b) == 0 && u->b >= u->a)
            return 0;
        return tb_seterr(err, errlen, TB_EINVAL,
                         "'%s' is not uniform:A..B (seconds, 0 <= A <= B <= 3600)", spec);
    }
    if (strncmp(spec, "exp:", 4) == 0) {
        u->kind = TB_UTURN_EXP;
        if (num(spec + 4, spec + strlen(spec), 0.001, mx, &u->a) == 0)
            return 0;
        return tb_seterr(err, errlen, TB_EINVAL, "'%s' is not exp:MEAN (seconds, 0.001..3600)",
                         spec);
    }
    if (strncmp(spec, "words:", 6) == 0) {
        u->kind = TB_UTURN_WORDS;
        u->b = 0;
        if (pair(spec + 6, ",", 1, 10000, 0, mx, 0, &u->a, &u->b) == 0)
            return 0;
        return tb_seterr(err, errlen, TB_EINVAL,
                         "'%s' is not words:WPM[,PAUSE] (WPM 1..10000, PAUSE 0..3600 s)", spec);
    }
    u->kind = TB_UTURN_CONST;
    if (num(spec, spec + strlen(spec), 0, mx, &u->a) == 0)
        return 0;
    return tb_seterr(err, errlen, TB_EINVAL,
                     "'%s' is not S, uniform:A..B, exp:MEAN or words:WPM[,PAUSE] (seconds 0..3600)",
                     spec);
}

/* The shortest of %.15g..%.17g that reads back as v. */
static void shortest(char *out, size_t len, double v)
{
    for (int p = 15; p <= 17; p++) {
        snprintf(out, len, "%.*g", p, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

void tb_uturn_name(const struct tb_uturn *u, char *out, size_t outlen)
{
    char a[32], b[32];
    shortest(a, sizeof(a), u->a);
    shortest(b, sizeof(b), u->b);
    switch (u->kind) {
    case TB_UTURN_UNIFORM: snprintf(out, outlen, "uniform:%s..%s", a, b); break;
    case TB_UTURN_EXP: snprintf(out, outlen, "exp:%s", a); break;
    case TB_UTURN_WORDS: snprintf(out, outlen, "words:%s,%s", a, b); break;
    default: snprintf(out, outlen, "%s", a); break;
    }
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* The generator's state for (seed, call, turn). */
static uint64_t mix(uint64_t seed, uint64_t call, uint32_t turn)
{
    return splitmix(splitmix(splitmix(seed) ^ call) ^ turn);
}

/* A state's uniform draw in [0, 1). */
static double unit_of(uint64_t x)
{
    return (double)(x >> 11) / 9007199254740992.0;
}

/* The value of a spec other than words: for a uniform draw u. */
static double value(const struct tb_uturn *u, double unit)
{
    switch (u->kind) {
    case TB_UTURN_UNIFORM: return u->a + (u->b - u->a) * unit;
    case TB_UTURN_EXP: return -u->a * log1p(-unit);
    default: return u->a;
    }
}

static size_t words(const char *s)
{
    size_t n = 0;
    int in = 0;
    for (; s != NULL && *s; s++) {
        int blank = isspace((unsigned char)*s);
        n += !blank && !in;
        in = !blank;
    }
    return n;
}

double tb_uturn_draw(const struct tb_uturn *u, uint64_t seed, uint64_t call, uint32_t turn,
                     const char *text)
{
    if (u->kind == TB_UTURN_WORDS)
        return (double)words(text) * 60.0 / u->a + u->b;
    return value(u, unit_of(mix(seed, call, turn)));
}

int tb_barge_at_parse(const char *spec, struct tb_uturn *u, char *err, size_t errlen)
{
    int rc;
    if (strncmp(spec, "words:", 6) == 0)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "'%s': the moment of a barge-in is S, uniform:A..B or exp:MEAN (seconds "
                         "of playback), not words",
                         spec);
    rc = tb_uturn_parse(spec, u, err, errlen);
    if (rc != 0 && u->kind == TB_UTURN_CONST && !negative(spec))
        /* not a kind of this option's: name its own (words is not one) */
        return tb_seterr(err, errlen, rc,
                         "'%s' is not S, uniform:A..B or exp:MEAN (seconds of playback 0..3600)",
                         spec);
    return rc;
}

double tb_barge_draw(double p, const struct tb_uturn *at, uint64_t seed, uint64_t call,
                     uint32_t turn)
{
    /* Two draws on a stream of their own (the constant keeps them apart
     * from the speaking time's): whether, then when. */
    uint64_t x = mix(seed ^ 0xB4A6E1B0C2D3F405ULL, call, turn);
    if (!(p > 0) || !(unit_of(x) < p))
        return NAN;
    return value(at, unit_of(splitmix(x)));
}
