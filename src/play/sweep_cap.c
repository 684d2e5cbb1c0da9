/*
 * sweep_cap.c - a sweep point's streams under a shared TTS capacity (see
 * sweep_cap.h).
 *
 * Each chunk's synthesis is modelled as the TTS stage models it
 * (playout.h): L_j from the latency hook or constant, K on the first
 * chunk that is not blank, D_j the rate model's duration, R the point's
 * RTF; svc_j = L_j (+K) + R D_j, first audio at b_j + L_j (+K) streamed,
 * d_j whole.  capmodel.c then gives every b_j, and each stream plays
 * them as recorded times.  The minimum-TPS searches re-time a stream
 * alone, without the others (the capacity is not re-modelled at another
 * rate: ttsbuf-model(7)).  O(m log(n + C)) per point, m chunks.
 */
#include "sweep_cap.h"

#include <math.h>
#include <stdlib.h>

#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/voice.h"

static int times_at(void *ud, uint32_t j, double *b, double *f, double *d)
{
    const struct sweep_cap_ctx *x = ud;
    const struct tb_capmodel_chunk *c;
    if (j < 1 || j > x->n)
        return TB_EINVAL;
    c = &x->v[j - 1];
    *b = c->begin;
    *d = c->done;
    *f = c->blank ? c->begin : c->begin + x->first[j - 1];
    if (*f > *d)
        *f = *d;
    return 0;
}

static int reserve(struct sweep_cap *c, size_t nin, size_t m)
{
    if (c->s == NULL) {
        c->s = calloc(nin > 0 ? nin : 1, sizeof(*c->s));
        c->ctx = calloc(nin > 0 ? nin : 1, sizeof(*c->ctx));
        if (c->s == NULL || c->ctx == NULL)
            return TB_ENOMEM;
    }
    if (m > c->cap) {
        struct tb_capmodel_chunk *v = realloc(c->v, m * sizeof(*v));
        double *f = v != NULL ? realloc(c->first, m * sizeof(*f)) : NULL;
        double *w = f != NULL ? realloc(c->wait, m * sizeof(*w)) : NULL;
        if (v != NULL)
            c->v = v;
        if (f != NULL)
            c->first = f;
        if (w == NULL)
            return TB_ENOMEM;
        c->wait = w;
        c->cap = m;
    }
    return 0;
}

/* Stream i's chunks into s (v, first from *at on). */
static int fill(const struct tb_sweep *sw, const struct tb_chunks *ch, size_t i, double tps,
                const struct tb_playout_opts *o, struct sweep_cap *c, size_t at)
{
    const struct input *x = &sw->in[i];
    int connected = 0;
    struct tb_capmodel_stream *s = &c->s[i];
    s->arrival = sw->arrival != NULL ? sw->arrival[i] : 0.0;
    s->concurrency = o->tts_concurrency;
    s->v = c->v + at;
    s->n = ch->n;
    for (size_t j = 0; j < ch->n; j++) {
        struct tb_capmodel_chunk *k = &s->v[j];
        double l = 0, dur = 0;
        k->c = tps > 0 ? x->a0 + (double)(ch->v[j].tok - x->t0) / tps : ch->v[j].c;
        k->blank = ch->v[j].blank;
        if (!k->blank) {
            l = o->tts_latency_at != NULL ? o->tts_latency_at(o->tts_latency_ud, (uint32_t)j + 1)
                                          : o->tts_latency;
            if (!(l >= 0) || isinf(l))
                return TB_EINVAL;
            if (!connected)
                l += o->tts_connect;
            connected = 1;
            dur = isnan(ch->v[j].dur) ? tb_voice_seconds(ch->v[j].cps, o->wpm) : ch->v[j].dur;
        }
        k->svc = l + o->tts_rtf * dur;
        c->first[at + j] = o->tts_output == TB_TTS_WHOLE ? k->svc : l;
    }
    c->ctx[i] = (struct sweep_cap_ctx){s->v, c->first + at, ch->n};
    return 0;
}

int tb_sweep_cap_plan(struct sweep_cap *c, const struct tb_sweep *sw, size_t seg, double tps,
                      const struct tb_playout_opts *o, struct tb_stats *st)
{
    size_t m = 0, nw = 0;
    int rc;
    for (size_t i = 0; i < sw->nin; i++)
        m += sw->chunks[seg * sw->nin + i].n;
    if ((rc = reserve(c, sw->nin, m > 0 ? m : 1)) != 0)
        return rc;
    for (size_t i = 0, at = 0; i < sw->nin; at += sw->chunks[seg * sw->nin + i].n, i++)
        if ((rc = fill(sw, &sw->chunks[seg * sw->nin + i], i, tps, o, c, at)) != 0)
            return rc;
    if ((rc = tb_capmodel_run(c->s, sw->nin, sw->capacity)) != 0)
        return rc;
    for (size_t k = 0; k < m; k++)
        if (!isnan(c->v[k].wait))
            c->wait[nw++] = c->v[k].wait;
    tb_stats_of(c->wait, nw, st);
    return 0;
}

void tb_sweep_cap_hook(struct sweep_cap *c, size_t i, struct tb_playout_opts *o)
{
    o->tts_times_at = times_at;
    o->tts_times_ud = &c->ctx[i];
}

void tb_sweep_cap_free(struct sweep_cap *c)
{
    free(c->s);
    free(c->ctx);
    free(c->v);
    free(c->first);
    free(c->wait);
    c->s = NULL;
    c->ctx = NULL;
    c->v = NULL;
    c->first = c->wait = NULL;
    c->cap = 0;
}

int tb_sweep_llm_plan(struct tb_sweep *sw)
{
    struct tb_capmodel_stream *s;
    struct tb_capmodel_chunk *v;
    double *w;
    size_t nw = 0;
    int rc;
    sw->llm_stats.count = 0;
    if (sw->llm_capacity == 0)
        return 0;
    s = calloc(sw->nin, sizeof(*s));
    v = calloc(sw->nin, sizeof(*v));
    w = malloc(sw->nin * sizeof(*w));
    sw->llm_wait = malloc(sw->nin * sizeof(double));
    rc = s == NULL || v == NULL || w == NULL || sw->llm_wait == NULL ? TB_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < sw->nin; i++) {
        const struct tb_stream *st = sw->in[i].s;
        double dur = st->n > 0 ? st->ev[st->n - 1].t : 0.0;
        v[i] = (struct tb_capmodel_chunk){.c = 0.0, .svc = dur > 0 ? dur : 0.0};
        s[i] = (struct tb_capmodel_stream){sw->arrival != NULL ? sw->arrival[i] : 0.0, 0, &v[i], 1};
    }
    if (rc == 0)
        rc = tb_capmodel_run(s, sw->nin, sw->llm_capacity);
    for (size_t i = 0; rc == 0 && i < sw->nin; i++) {
        sw->llm_wait[i] = v[i].wait;
        sw->in[i].a0 += v[i].wait;
        w[nw++] = v[i].wait;
    }
    if (rc == 0)
        tb_stats_of(w, nw, &sw->llm_stats);
    free(s);
    free(v);
    free(w);
    return rc;
}

void tb_sweep_llm_shift(struct tb_sweep *sw)
{
    if (sw->llm_wait == NULL)
        return;
    for (size_t k = 0; k < sw->nseg * sw->nin; k++) {
        struct tb_chunks *c = &sw->chunks[k];
        double d = sw->llm_wait[k % sw->nin];
        for (size_t j = 0; j < c->n; j++)
            c->v[j].c += d;
    }
}
