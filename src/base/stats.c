/*
 * stats.c - the statistics block (see stats.h).  O(n log n): one sort,
 * then two passes for the mean and the deviation.
 */
#include "ttsbuf/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const tb_stats_fields[] = {"mean", "std", "min", "p5",  "p50",
                                       "p90",  "p95", "p99", "max", NULL};

double tb_stats_field(const struct tb_stats *s, int i)
{
    const double v[TB_STATS_NFIELDS] = {s->mean, s->std, s->min, s->p5, s->p50,
                                        s->p90,  s->p95, s->p99, s->max};
    return i >= 0 && i < TB_STATS_NFIELDS ? v[i] : NAN;
}

int tb_stats_field_index(const char *name)
{
    for (int i = 0; tb_stats_fields[i] != NULL; i++)
        if (strcmp(name, tb_stats_fields[i]) == 0)
            return i;
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tb_stats_percentile(const double *v, size_t n, double p)
{
    double pos, frac;
    size_t lo;
    if (n == 0)
        return NAN;
    pos = p / 100.0 * (double)(n - 1);
    lo = (size_t)floor(pos);
    if (lo >= n - 1)
        return v[n - 1];
    frac = pos - (double)lo;
    return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

double tb_stats_rank(const double *v, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n - 1e-9);
    if (n == 0)
        return NAN;
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

void tb_stats_of(double *v, size_t n, struct tb_stats *out)
{
    double sum = 0, dev = 0;
    out->count = n;
    if (n == 0) {
        out->mean = out->std = out->min = out->p5 = out->p50 = NAN;
        out->p90 = out->p95 = out->p99 = out->max = NAN;
        return;
    }
    qsort(v, n, sizeof(double), cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    out->mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        dev += (v[i] - out->mean) * (v[i] - out->mean);
    out->std = sqrt(dev / (double)n);
    out->min = v[0];
    out->max = v[n - 1];
    out->p5 = tb_stats_percentile(v, n, 5);
    out->p50 = tb_stats_percentile(v, n, 50);
    out->p90 = tb_stats_percentile(v, n, 90);
    out->p95 = tb_stats_percentile(v, n, 95);
    out->p99 = tb_stats_percentile(v, n, 99);
}
