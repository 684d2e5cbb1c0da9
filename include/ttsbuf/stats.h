/*
 * stats.h - the one statistics block every ttsbuf output uses for a
 * distribution: count, mean, std, min, p5, p50, p90, p95, p99, max.
 *
 * Percentiles interpolate linearly between the closest ranks (numpy's
 * default, "linear"; vLLM and GenAI-Perf use it): Pq of sorted v[0..n) is
 * v[k] + (v[k+1] - v[k]) * f with k + f = q/100 * (n - 1).  std is the
 * population standard deviation (numpy's default, ddof=0).  A high
 * percentile always means the high tail; where a low value is the bad one
 * (a decode rate), p5 names the low tail.
 *
 * Exact and order-independent: the samples are sorted before they are
 * summed, so the same multiset gives the same bits in any order.
 */
#ifndef TTSBUF_STATS_H
#define TTSBUF_STATS_H

#include <stddef.h>

struct tb_stats {
    size_t count; /* samples; every other field is NaN when count == 0 */
    double mean, std, min, p5, p50, p90, p95, p99, max;
};

/* The block's field names in output order, after "count" (NULL-ended),
 * and a field's value by that index. */
extern const char *const tb_stats_fields[];
#define TB_STATS_NFIELDS 9
double tb_stats_field(const struct tb_stats *s, int i);
/* The index of a field name ("p95"), or -1. */
int tb_stats_field_index(const char *name);

/* The p-th percentile (0..100) of sorted v[0..n); NaN when n is 0. */
double tb_stats_percentile(const double *v, size_t n, double p);

/* The smallest value with at least a share q (0 < q <= 1) of sorted
 * v[0..n) at or below it: the ceil(q n)-th smallest (with a 1e-9 slack, so
 * 0.95 x 100 is 95, not 96), an exact inverse answer, not an
 * interpolation ("the pre-roll that makes 95% gap-free").  NaN when n is
 * 0. */
double tb_stats_rank(const double *v, size_t n, double q);

/* Sorts v[0..n) in place and fills *out.  Any thread. */
void tb_stats_of(double *v, size_t n, struct tb_stats *out);

#endif
