/*
 * statacc.c - a statistics block one sample at a time (see statacc.h).
 * O(1) a sample; the histogram's percentiles walk its buckets once each.
 */
#include "ttsbuf/statacc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "ttsbuf/error.h"

#define OFF (TB_STATACC_OCT * TB_STATACC_SUB) /* the bucket of magnitude 1 */
#define NPG (2 * TB_STATACC_NB / TB_STATACC_SUB)  /* pages: an octave of a sign each */

void tb_statacc_init(struct tb_statacc *a)
{
    memset(a, 0, sizeof(*a));
    a->min = INFINITY;
    a->max = -INFINITY;
}

/* Frees the histogram's pages and their table. */
static void free_pages(uint64_t **h)
{
    for (size_t i = 0; h != NULL && i < NPG; i++)
        free(h[i]);
    free(h);
}

void tb_statacc_free(struct tb_statacc *a)
{
    if (a == NULL)
        return;
    free(a->v);
    free_pages(a->h);
    tb_statacc_init(a);
}

int tb_statacc_exact(const struct tb_statacc *a)
{
    return a->h == NULL;
}

/* The bucket of x (not 0) within its sign's half. */
static size_t bucket(double x)
{
    double k = floor(log2(fabs(x)) * TB_STATACC_SUB) + OFF;
    if (k < 0)
        return 0;
    return k >= TB_STATACC_NB ? TB_STATACC_NB - 1 : (size_t)k;
}

/* Adds c to bucket i of the whole (negative half first), its page
 * allocated when first used.  0 or TB_ENOMEM. */
static int count_at(struct tb_statacc *a, size_t i, uint64_t c)
{
    uint64_t **pg = &a->h[i / TB_STATACC_SUB];
    if (*pg == NULL && (*pg = calloc(TB_STATACC_SUB, sizeof(**pg))) == NULL)
        return TB_ENOMEM;
    (*pg)[i % TB_STATACC_SUB] += c;
    return 0;
}

/* Counts x in the histogram.  0 or TB_ENOMEM. */
static int count(struct tb_statacc *a, double x)
{
    if (x != 0)
        return count_at(a, (x > 0 ? TB_STATACC_NB : 0) + bucket(x), 1);
    a->zeros++;
    return 0;
}

/* From the kept samples to the histogram.  0 or TB_ENOMEM (a unchanged). */
static int to_histogram(struct tb_statacc *a)
{
    uint64_t **h = calloc(NPG, sizeof(*h));
    if (h == NULL)
        return TB_ENOMEM;
    a->h = h;
    for (size_t i = 0; i < a->n; i++) {
        if (count(a, a->v[i]) != 0) {
            free_pages(h);
            a->h = NULL;
            a->zeros = 0;
            return TB_ENOMEM;
        }
    }
    free(a->v);
    a->v = NULL;
    a->cap = 0;
    return 0;
}

/* The running moments and range with x. */
static void moments(struct tb_statacc *a, double x)
{
    double d = x - a->mean;
    a->n++;
    a->mean += d / (double)a->n;
    a->m2 += d * (x - a->mean);
    if (x < a->min)
        a->min = x;
    if (x > a->max)
        a->max = x;
}

int tb_statacc_add(struct tb_statacc *a, double x)
{
    if (a->h == NULL && a->n == TB_STATACC_EXACT && to_histogram(a) != 0)
        return TB_ENOMEM;
    if (a->h == NULL && a->n == a->cap) {
        double *nv = tb_grow(a->v, &a->cap, sizeof(*nv), 64);
        if (nv == NULL)
            return TB_ENOMEM;
        a->v = nv;
    }
    if (a->h == NULL)
        a->v[a->n] = x;
    else if (count(a, x) != 0)
        return TB_ENOMEM;
    moments(a, x);
    return 0;
}

int tb_statacc_merge(struct tb_statacc *a, const struct tb_statacc *b)
{
    double d, n;
    if (b->h == NULL) {
        for (size_t i = 0; i < b->n; i++)
            if (tb_statacc_add(a, b->v[i]) != 0)
                return TB_ENOMEM;
        return 0;
    }
    if (a->h == NULL && to_histogram(a) != 0)
        return TB_ENOMEM;
    for (size_t p = 0; p < NPG; p++)
        for (size_t i = 0; b->h[p] != NULL && i < TB_STATACC_SUB; i++)
            if (b->h[p][i] > 0 && count_at(a, p * TB_STATACC_SUB + i, b->h[p][i]) != 0)
                return TB_ENOMEM;
    a->zeros += b->zeros;
    /* Chan et al.'s pairwise update of the moments */
    n = (double)a->n + (double)b->n;
    d = b->mean - a->mean;
    a->m2 += b->m2 + d * d * (double)a->n * (double)b->n / n;
    a->mean += d * (double)b->n / n;
    a->n += b->n;
    a->min = b->min < a->min ? b->min : a->min;
    a->max = b->max > a->max ? b->max : a->max;
    return 0;
}

/* The value of bucket i of the whole (negative half first): its
 * geometric middle, in [min, max]. */
static double middle(const struct tb_statacc *a, size_t i)
{
    int neg = i < TB_STATACC_NB;
    size_t k = neg ? i : i - TB_STATACC_NB;
    double m = exp2(((double)k - OFF + 0.5) / TB_STATACC_SUB), v = neg ? -m : m;
    return v < a->min ? a->min : v > a->max ? a->max : v;
}

/* The count in bucket i of the whole. */
static uint64_t at(const struct tb_statacc *a, size_t i)
{
    const uint64_t *pg = a->h[i / TB_STATACC_SUB];
    return pg != NULL ? pg[i % TB_STATACC_SUB] : 0;
}

/* The r-th smallest sample (0-based, r < n) as the histogram knows it. */
static double ranked(const struct tb_statacc *a, uint64_t r)
{
    uint64_t seen = 0;
    for (size_t j = TB_STATACC_NB; j-- > 0;) { /* the most negative first */
        seen += at(a, j);
        if (r < seen)
            return middle(a, j);
    }
    seen += a->zeros;
    if (r < seen)
        return 0;
    for (size_t j = TB_STATACC_NB; j < 2 * TB_STATACC_NB; j++) {
        seen += at(a, j);
        if (r < seen)
            return middle(a, j);
    }
    return a->max;
}

/* stats.h's percentile p over the histogram's ranks. */
static double percentile(const struct tb_statacc *a, double p)
{
    double pos = p / 100.0 * (double)(a->n - 1), lo = floor(pos), x;
    if (lo >= (double)(a->n - 1))
        return a->max;
    x = ranked(a, (uint64_t)lo);
    return x + (ranked(a, (uint64_t)lo + 1) - x) * (pos - lo);
}

void tb_statacc_stats(struct tb_statacc *a, struct tb_stats *out)
{
    if (a->h == NULL) {
        tb_stats_of(a->v, a->n, out);
        return;
    }
    out->count = a->n;
    out->mean = a->mean;
    out->std = sqrt(a->m2 / (double)a->n);
    out->min = a->min;
    out->max = a->max;
    out->p5 = percentile(a, 5);
    out->p50 = percentile(a, 50);
    out->p90 = percentile(a, 90);
    out->p95 = percentile(a, 95);
    out->p99 = percentile(a, 99);
}
