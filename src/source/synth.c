/*
 * synth.c - deterministic synthetic token streams (see synth.h).
 *
 * Randomness comes from splitmix64 (Steele, Lea & Flood 2014): tiny,
 * fast, and the same on every platform, so a spec and seed give the same
 * stream everywhere.  Inter-token times are log-normal with the requested
 * mean and coefficient of variation (sigma^2 = ln(1 + cv^2),
 * mu = ln(mean) - sigma^2 / 2), a common fit for decode-step latency.
 *
 * Text: sentences drawn from a fixed corpus, split into token-sized pieces
 * roughly as BPE tokenizers do for English: a word with its leading space
 * (long words in parts: first 6 characters, then 4 at a time), each
 * punctuation mark alone, and a paragraph break now and then.
 */
#include "ttsbuf/synth.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "synth_corpus.h"
#include "ttsbuf/error.h"

void tb_synth_default(struct tb_synth_spec *s)
{
    *s = (struct tb_synth_spec){
        .tps = 80.0, .ttft = 0.3, .tokens = 300, .jitter = 0.3, .burst = 1, .seed = 1};
}

static int num(const char *key, const char *v, double lo, double hi, double *out, char *err,
               size_t errlen)
{
    char *end;
    double d;
    errno = 0;
    d = strtod(v, &end);
    if (end == v || *end != '\0' || errno != 0 || !isfinite(d))
        return tb_seterr(err, errlen, TB_EINVAL, "synth spec: %s=%s is not a number", key, v);
    if (d < lo || d > hi)
        return tb_seterr(err, errlen, TB_ERANGE, "synth spec: %s=%s is outside %.15g..%.15g", key,
                         v, lo, hi);
    *out = d;
    return 0;
}

static int whole(const char *key, const char *v, double lo, double hi, double *out, char *err,
                 size_t errlen)
{
    int rc = num(key, v, lo, hi, out, err, errlen);
    if (rc == 0 && *out != floor(*out))
        return tb_seterr(err, errlen, TB_EINVAL, "synth spec: %s=%s is not a whole number", key, v);
    return rc;
}

static int parse_pair(char *kv, struct tb_synth_spec *s, char *err, size_t errlen)
{
    char *eq = strchr(kv, '=');
    const char *k;
    char *v;
    double d = 0; /* set on success (clang-tidy cannot see it) */
    int rc;
    if (eq == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "synth spec: '%s' is not key=value", kv);
    *eq = '\0';
    k = kv;
    v = eq + 1;
    if (strcmp(k, "tps") == 0) {
        rc = num(k, v, 0.001, 100000, &s->tps, err, errlen);
    } else if (strcmp(k, "ttft") == 0) {
        rc = num(k, v, 0, 3600, &s->ttft, err, errlen);
    } else if (strcmp(k, "jitter") == 0) {
        rc = num(k, v, 0, 10, &s->jitter, err, errlen);
    } else if (strcmp(k, "tokens") == 0) {
        rc = whole(k, v, 1, 10000000, &d, err, errlen);
        s->tokens = rc == 0 ? (uint32_t)d : s->tokens;
    } else if (strcmp(k, "burst") == 0) {
        rc = whole(k, v, 1, 1000, &d, err, errlen);
        s->burst = rc == 0 ? (uint32_t)d : s->burst;
    } else if (strcmp(k, "seed") == 0) {
        char *end;
        unsigned long long u;
        errno = 0;
        u = strtoull(v, &end, 10);
        /* strtoull skips blanks and negates "-1" (or " -1") to 2^64-1. */
        if (end == v || *end != '\0' || errno != 0 || *v < '0' || *v > '9')
            return tb_seterr(err, errlen, TB_EINVAL,
                             "synth spec: seed=%s is not a whole number in 0..2^64-1", v);
        s->seed = u;
        rc = 0;
    } else if (strcmp(k, "stall") == 0) {
        /* Split in place: v lies in the caller's writable copy of the spec
         * (a fixed-size copy here would cut long values silently). */
        char *colon = strchr(v, ':');
        if (colon == NULL)
            return tb_seterr(err, errlen, TB_EINVAL,
                             "synth spec: stall=%s is not PROBABILITY:SECONDS", v);
        *colon = '\0';
        rc = num("stall probability", v, 0, 1, &s->stall_p, err, errlen);
        if (rc == 0)
            rc = num("stall seconds", colon + 1, 0, 3600, &s->stall_s, err, errlen);
    } else {
        return tb_seterr(err, errlen, TB_EINVAL,
                         "synth spec: unknown key '%s' (known: tps, ttft, tokens, "
                         "jitter, stall, burst, seed)",
                         k);
    }
    return rc;
}

int tb_synth_parse(const char *text, struct tb_synth_spec *spec, char *err, size_t errlen)
{
    char buf[512];
    char *p, *save = NULL;
    struct tb_synth_spec s = *spec;
    if (strlen(text) >= sizeof(buf))
        return tb_seterr(err, errlen, TB_ETOOBIG, "synth spec: longer than %zu bytes",
                         sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", text);
    for (p = strtok_r(buf, ",", &save); p != NULL; p = strtok_r(NULL, ",", &save)) {
        int rc = parse_pair(p, &s, err, errlen);
        if (rc != 0)
            return rc;
    }
    *spec = s;
    return 0;
}

int tb_synth_format(const struct tb_synth_spec *s, char *buf, size_t len)
{
    char a[32], b[32], c[32], d[32], e[32];
    return snprintf(buf, len,
                    "tps=%s,ttft=%s,tokens=%" PRIu32 ",jitter=%s,stall=%s:%s,"
                    "burst=%" PRIu32 ",seed=%" PRIu64,
                    tb_numfmt_double(a, sizeof(a), s->tps), tb_numfmt_double(b, sizeof(b), s->ttft),
                    s->tokens, tb_numfmt_double(c, sizeof(c), s->jitter),
                    tb_numfmt_double(d, sizeof(d), s->stall_p),
                    tb_numfmt_double(e, sizeof(e), s->stall_s), s->burst, s->seed);
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so log() is safe. */
static double uniform(uint64_t *x)
{
    return ((double)(splitmix64(x) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(uint64_t *x)
{
    double u1 = uniform(x), u2 = uniform(x);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* The token generator: walks corpus sentences, yields pieces. */
struct tokgen {
    uint64_t *rng;
    const char *p;  /* rest of the current sentence */
    int sentences;  /* sentences since the last paragraph break */
    int need_space; /* next word gets a leading space */
    int in_word;    /* the last piece stopped inside a word */
    char piece[64];
};

static int is_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static const char *next_piece(struct tokgen *g)
{
    size_t n = 0;
    if (g->p == NULL || *g->p == '\0') {
        if (g->p != NULL && ++g->sentences >= 3 && uniform(g->rng) < 0.3) {
            g->sentences = 0;
            g->p = NULL;
            g->need_space = 0;
            return "\n\n";
        }
        g->p = tb_corpus[splitmix64(g->rng) % TB_CORPUS_N];
    }
    if (*g->p == ' ') {
        g->p++;
        g->need_space = 1;
    }
    if (g->need_space) {
        g->piece[n++] = ' ';
        g->need_space = 0;
    }
    if (is_alnum((unsigned char)*g->p)) {
        /* A word: its first piece up to 6 characters, then 4 at a time. */
        size_t lim = g->in_word ? 4 : 6;
        for (size_t k = 0; k < lim && is_alnum((unsigned char)*g->p); k++)
            g->piece[n++] = *g->p++;
        g->in_word = is_alnum((unsigned char)*g->p);
    } else {
        /* Punctuation alone; a multi-byte character whole. */
        g->piece[n++] = *g->p++;
        while ((*g->p & 0xC0) == 0x80)
            g->piece[n++] = *g->p++;
        g->in_word = 0;
    }
    if (*g->p == '\0')
        g->need_space = 1; /* the next sentence starts with a space */
    g->piece[n] = '\0';
    return g->piece;
}

int tb_synth_generate(const struct tb_synth_spec *spec, struct tb_stream *out)
{
    uint64_t rng = spec->seed;
    struct tokgen g = {&rng, NULL, 0, 0, 0, {0}};
    double sigma2 = log(1.0 + spec->jitter * spec->jitter);
    double sigma = sqrt(sigma2), mean = 1.0 / spec->tps;
    double mu = log(mean) - sigma2 / 2.0;
    double t = spec->ttft;
    char text[64 * 1000 + 1];
    int rc;

    if (!(spec->tps >= 0.001 && spec->tps <= 100000) || spec->burst < 1 || spec->burst > 1000 ||
        spec->tokens < 1 || !(spec->jitter >= 0) || !(spec->ttft >= 0) ||
        !(spec->stall_p >= 0 && spec->stall_p <= 1) || !(spec->stall_s >= 0))
        return TB_EINVAL;
    rc = tb_stream_reserve(out, out->n + spec->tokens / spec->burst + 1,
                           out->text_len + (uint64_t)spec->tokens * 6);
    if (rc != 0)
        return rc;
    for (uint32_t i = 0; i < spec->tokens;) {
        uint32_t k = spec->tokens - i < spec->burst ? spec->tokens - i : spec->burst;
        size_t len = 0;
        for (uint32_t j = 0; j < k; j++, i++) {
            const char *piece = next_piece(&g);
            size_t pl = strlen(piece);
            /* The first event arrives at ttft whatever its size; each later
             * event waits one gap per token it carries. */
            if (i >= spec->burst) {
                double gap = spec->jitter > 0 ? exp(mu + sigma * normal(&rng)) : mean;
                if (spec->stall_p > 0 && uniform(&rng) < spec->stall_p)
                    gap += spec->stall_s;
                t += gap;
            }
            memcpy(text + len, piece, pl);
            len += pl;
        }
        rc = tb_stream_append(out, t, text, len, k, TB_KIND_CONTENT);
        if (rc != 0)
            return rc;
    }
    /* Made whole: it ends as a complete answer, at its last token. */
    tb_stream_end_init(&out->end);
    out->end.kind = TB_END_COMPLETE;
    out->end.t = t;
    return 0;
}
