/*
 * bench_stats.c - a level's summary from its records (see bench.h).
 *
 * Pure and order-independent: each metric's samples are copied and
 * sorted, so shards' records merged in any order give the same bits.
 * O(n log n) per metric; a level of 10^6 inter-event gaps sorts in well
 * under a second.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/bench.h"
#include "ttsbuf/error.h"

static const struct {
    const char *name, *unit;
    int higher_better;
} metrics[TB_BM__COUNT] = {
    {"ttft", "s", 0},        {"ttfa", "s", 0},     {"tps", "tok/s", 1},   {"tps-usage", "tok/s", 1},
    {"itl", "s", 0},         {"underruns", "", 0}, {"gap-total", "s", 0}, {"gap-max", "s", 0},
    {"min-tps", "tok/s", 0}, {"speedup", "x", 0},
};

const char *tb_bench_metric_name(enum tb_bench_metric m)
{
    return (unsigned)m < TB_BM__COUNT ? metrics[m].name : "?";
}

const char *tb_bench_metric_unit(enum tb_bench_metric m)
{
    return (unsigned)m < TB_BM__COUNT ? metrics[m].unit : "";
}

int tb_bench_metric_higher_better(enum tb_bench_metric m)
{
    return (unsigned)m < TB_BM__COUNT ? metrics[m].higher_better : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tb_bench_percentile(double *v, size_t n, double p)
{
    double pos, frac;
    size_t lo;
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(double), cmp_double);
    pos = p / 100.0 * (double)(n - 1);
    lo = (size_t)floor(pos);
    if (lo >= n - 1)
        return v[n - 1];
    frac = pos - (double)lo;
    return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

static void stat_of(double *v, size_t n, int higher_better, struct tb_bench_stat *s)
{
    memset(s, 0, sizeof(*s));
    s->n = n;
    if (n == 0)
        return;
    s->p50 = tb_bench_percentile(v, n, 50);
    s->p95 = tb_bench_percentile(v, n, higher_better ? 5 : 95);
    s->p99 = tb_bench_percentile(v, n, higher_better ? 1 : 99);
    s->min = v[0];
    s->max = v[n - 1];
}

/* One record's value of a per-request metric (NaN: none). */
static double value(const struct tb_bench_rec *r, enum tb_bench_metric m)
{
    switch (m) {
    case TB_BM_TTFT: return r->ttft;
    case TB_BM_TTFA: return r->ttfa;
    case TB_BM_TPS: return r->decode_tps;
    case TB_BM_TPS_USAGE: return r->decode_tps_usage;
    case TB_BM_UNDERRUNS: return isnan(r->ttfa) ? NAN : (double)r->underruns;
    case TB_BM_GAP_TOTAL: return r->gap_total;
    case TB_BM_GAP_MAX: return r->gap_max;
    case TB_BM_MIN_TPS: return r->min_tps;
    case TB_BM_SPEEDUP: return r->speedup;
    default: return NAN;
    }
}

int tb_bench_summarize(const struct tb_bench_recs *r, uint32_t level, struct tb_bench_summary *out)
{
    size_t nrec = 0, nitl = 0;
    double *v, t0 = INFINITY, t1 = -INFINITY;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].level != level)
            continue;
        nrec++;
        if (r->v[i].error == 0)
            nitl += r->v[i].nitl;
    }
    v = malloc((nrec > nitl ? nrec : nitl) * sizeof(double) + 1);
    if (v == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < r->n; i++) {
        const struct tb_bench_rec *x = &r->v[i];
        if (x->level != level)
            continue;
        out->requests++;
        if (x->t_start < t0)
            t0 = x->t_start;
        if (x->t_end > t1)
            t1 = x->t_end;
        if (x->error > 0 && x->error < TB_LIVE__COUNT) {
            out->errors[x->error]++;
            continue;
        }
        out->ok++;
        out->events += x->events;
        out->usage_ignored += x->usage_ignored >= 0;
        out->surrogates_replaced += x->surrogates_replaced;
        out->tokens += x->usage_tokens >= 0 ? (uint64_t)x->usage_tokens : x->content_tokens;
        if (!isnan(x->ttfa) && x->underruns == 0)
            out->gapless++;
    }
    for (int m = 0; m < TB_BM__COUNT; m++) {
        size_t n = 0;
        for (size_t i = 0; i < r->n; i++) {
            const struct tb_bench_rec *x = &r->v[i];
            if (x->level != level || x->error != 0)
                continue;
            if (m == TB_BM_ITL) {
                if (x->nitl > 0)
                    memcpy(v + n, x->itl, x->nitl * sizeof(double));
                n += x->nitl;
            } else if (!isnan(value(x, (enum tb_bench_metric)m))) {
                v[n++] = value(x, (enum tb_bench_metric)m);
            }
        }
        stat_of(v, n, metrics[m].higher_better, &out->m[m]);
    }
    free(v);
    out->gapless_share = out->ok > 0 ? (double)out->gapless / (double)out->ok : 0;
    out->success_share = out->requests > 0 ? (double)out->ok / (double)out->requests : 0;
    out->span = out->requests > 0 && t1 > t0 ? t1 - t0 : 0;
    out->system_tps = out->span > 0 ? (double)out->tokens / out->span : 0;
    return 0;
}
