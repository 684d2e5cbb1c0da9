/*
 * bench_score.c - the streaming-accuracy measure that the client and calls
 * figures share (bench_client.c, bench_calls.c): each stream's content
 * event times against the mock's exact schedule, and which rows an
 * environment variable selects.
 *
 * The error of event k of a stream is how much later than the schedule it
 * was recorded, against the stream's own best event:
 *     e_k = (a_k - t_k) - min over j of (a_j - t_j)
 * (the request's send time and trip are one unknown offset per stream; no
 * event arrives before its schedule, so the smallest difference is the
 * best estimate of that offset; a late first event does not shift the
 * rest).  The TTFT error is |a_0 - t_0|: the trip, the server's read and
 * the client's delay.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_push(struct bench_samples *s, double x)
{
    if (s->n == s->cap) {
        double *nv;
        s->cap = s->cap ? s->cap * 2 : 4096;
        nv = realloc(s->v, s->cap * sizeof(double));
        if (nv == NULL)
            bench_die("samples", "out of memory");
        s->v = nv;
    }
    s->v[s->n++] = x;
}

void bench_samples_free(struct bench_samples *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}

size_t bench_arrivals(const struct tb_stream *s, double *a, size_t cap)
{
    size_t k = 0;
    for (size_t j = 0; j < s->n && k < cap; j++)
        if (s->ev[j].kind == TB_KIND_CONTENT)
            a[k++] = s->ev[j].t;
    return k;
}

void bench_score(const struct tb_stream *sched, size_t max_events, const double *a, size_t n,
                 struct bench_samples *err, struct bench_samples *ttft, struct bench_count *c)
{
    size_t expect = sched->n < max_events ? sched->n : max_events;
    double off = INFINITY;
    c->expected += expect;
    c->received += n;
    if (n == 0)
        return;
    bench_push(ttft, fabs(a[0] - sched->ev[0].t));
    for (size_t k = 0; k < n && k < sched->n; k++)
        if (a[k] - sched->ev[k].t < off)
            off = a[k] - sched->ev[k].t;
    for (size_t k = 0; k < n && k < sched->n; k++)
        bench_push(err, (a[k] - sched->ev[k].t) - off);
}

int bench_level_on(const char *env, size_t level)
{
    const char *only = getenv(env);
    char buf[128], *save = NULL;
    if (only == NULL || *only == '\0')
        return 1;
    snprintf(buf, sizeof(buf), "%s", only);
    for (char *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save))
        if (strtoul(t, NULL, 10) == level)
            return 1;
    return 0;
}
