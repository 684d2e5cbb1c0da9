/*
 * capmodel.c - the shared TTS capacity in a modelled run (see
 * capmodel.h).
 *
 * The streams wait in a min-heap by the run's time of their next chunk's
 * readiness (ties: lower index); the C slots in a min-heap by the time
 * each frees.  Taking the earliest ready chunk each time serves them in
 * FCFS order: a stream's next chunk is ready no earlier than its
 * predecessor began, which is no earlier than the chunk just taken was
 * ready, so readiness is taken in non-decreasing order and the slot
 * heap's top is the first slot free for it.  O(log) per chunk.
 */
#include "ttsbuf/capmodel.h"

#include <math.h>
#include <stdlib.h>

#include "ttsbuf/error.h"

struct sh {
    double t; /* the next chunk's readiness, run's clock */
    size_t i; /* stream */
};

static int sh_less(const struct sh *a, const struct sh *b)
{
    return a->t < b->t || (a->t == b->t && a->i < b->i);
}

static void sh_down(struct sh *h, size_t n, size_t k)
{
    for (;;) {
        size_t l = 2 * k + 1, m = k;
        if (l < n && sh_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && sh_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == k)
            return;
        struct sh x = h[k];
        h[k] = h[m];
        h[m] = x;
        k = m;
    }
}

static void dh_down(double *h, size_t n, size_t k)
{
    for (;;) {
        size_t l = 2 * k + 1, m = k;
        if (l < n && h[l] < h[m])
            m = l;
        if (l + 1 < n && h[l + 1] < h[m])
            m = l + 1;
        if (m == k)
            return;
        double x = h[k];
        h[k] = h[m];
        h[m] = x;
        k = m;
    }
}

/* Chunk j's readiness on the run's clock (0-based j), from its stream's
 * earlier chunks (their begin and done already on the run's clock in
 * abs_b, abs_d). */
static double ready_abs(const struct tb_capmodel_stream *s, size_t j, const double *abs_b,
                        const double *abs_d)
{
    double r = s->arrival + s->v[j].c;
    if (j > 0 && abs_b[j - 1] > r)
        r = abs_b[j - 1];
    if (s->concurrency > 0 && j >= (size_t)s->concurrency && abs_d[j - s->concurrency] > r)
        r = abs_d[j - s->concurrency];
    return r;
}

static int check(const struct tb_capmodel_stream *s, size_t ns, int capacity, size_t *m)
{
    *m = 0;
    if (capacity < 0)
        return TB_EINVAL;
    for (size_t i = 0; i < ns; i++) {
        if (s[i].concurrency < 0 || !isfinite(s[i].arrival))
            return TB_EINVAL;
        for (size_t j = 0; j < s[i].n; j++) {
            const struct tb_capmodel_chunk *c = &s[i].v[j];
            if (!isfinite(c->c) || !isfinite(c->svc) || c->svc < 0 ||
                (j > 0 && c->c < s[i].v[j - 1].c))
                return TB_EINVAL;
        }
        *m += s[i].n;
    }
    return 0;
}

int tb_capmodel_run(struct tb_capmodel_stream *s, size_t ns, int capacity)
{
    size_t m, nslot, nh = 0, *pos = NULL;
    struct sh *h = NULL;
    double *slot = NULL, *ab = NULL, *ad = NULL;
    size_t *base = NULL;
    int rc = check(s, ns, capacity, &m);
    if (rc != 0 || m == 0)
        return rc;
    nslot = capacity == 0 || (size_t)capacity > m ? m : (size_t)capacity;
    h = malloc(ns * sizeof(*h));
    pos = calloc(ns, sizeof(*pos));
    base = malloc(ns * sizeof(*base));
    slot = malloc(nslot * sizeof(*slot));
    ab = calloc(m, sizeof(*ab)); /* zeroed: GCC cannot see chunk 0 reads none */
    ad = calloc(m, sizeof(*ad));
    if (h == NULL || pos == NULL || base == NULL || slot == NULL || ab == NULL || ad == NULL) {
        rc = TB_ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < nslot; k++)
        slot[k] = -INFINITY;
    for (size_t i = 0, b = 0; i < ns; b += s[i].n, i++) {
        base[i] = b;
        if (s[i].n > 0)
            h[nh++] = (struct sh){ready_abs(&s[i], 0, ab + b, ad + b), i};
    }
    for (size_t k = nh / 2; k-- > 0;)
        sh_down(h, nh, k);
    while (nh > 0) {
        size_t i = h[0].i, j = pos[i];
        struct tb_capmodel_stream *st = &s[i];
        struct tb_capmodel_chunk *c = &st->v[j];
        double r = h[0].t, b = r;
        if (!c->blank) {
            if (capacity > 0 && slot[0] > b)
                b = slot[0];
            slot[0] = b + c->svc;
            dh_down(slot, nslot, 0);
        }
        ab[base[i] + j] = b;
        ad[base[i] + j] = c->blank ? b : b + c->svc;
        c->ready = r - st->arrival;
        c->wait = c->blank ? NAN : b - r;
        c->begin = b > r ? b - st->arrival : c->ready;
        c->done = c->blank ? c->begin : c->begin + c->svc;
        pos[i] = ++j;
        if (j < st->n)
            h[0].t = ready_abs(st, j, ab + base[i], ad + base[i]);
        else
            h[0] = h[--nh];
        sh_down(h, nh, 0);
    }
out:
    free(h);
    free(pos);
    free(base);
    free(slot);
    free(ab);
    free(ad);
    return rc;
}
