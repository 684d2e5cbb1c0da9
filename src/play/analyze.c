/*
 * analyze.c - segment a stream once, evaluate playout settings over the
 * chunk list (see analyze.h).  No allocation per event beyond the chunk
 * array's geometric growth.
 */
#include "ttsbuf/analyze.h"

#include <math.h>
#include <stdlib.h>

#include "base/grow.h"
#include "ttsbuf/error.h"

const double tb_curve_prerolls[TB_CURVE_POINTS] = {0.0, 0.1, 0.25, 0.5, 1.0, 2.0};

void tb_analyze_chunks_init(struct tb_chunks *c)
{
    c->v = NULL;
    c->n = c->cap = 0;
}

void tb_analyze_chunks_free(struct tb_chunks *c)
{
    if (c == NULL)
        return;
    free(c->v);
    tb_analyze_chunks_init(c);
}

int tb_analyze_chunks_push(struct tb_chunks *c, double t, uint64_t tok, uint32_t cps)
{
    if (c->n == c->cap) {
        struct tb_chunk_at *v = tb_grow(c->v, &c->cap, sizeof(*v), 16);
        if (v == NULL)
            return TB_ENOMEM;
        c->v = v;
    }
    c->v[c->n].c = t;
    c->v[c->n].tok = tok;
    c->v[c->n].cps = cps;
    c->v[c->n].dur = NAN;
    c->n++;
    return 0;
}

struct seg_ctx {
    struct tb_chunks *out;
    const struct tb_seg *seg;
    double t;     /* arrival of the event being fed */
    uint64_t tok; /* its token index */
    int timed;    /* a time-based policy: a close may be dated by its timer */
    int rc;
};

static void on_chunk(void *ud, const struct tb_chunk *ch)
{
    struct seg_ctx *x = ud;
    double t = x->timed ? tb_seg_close_time(x->seg) : NAN; /* a timed close, or NAN */
    int rc = tb_analyze_chunks_push(x->out, isnan(t) ? x->t : t, x->tok, ch->cps);
    if (rc != 0)
        x->rc = rc;
}

/* Feeds each content event.  A time-based policy (timed): its timer
 * first (a close dated by the deadline, with the tokens fed so far), then
 * the event at its time; any other: the text alone, no timer (the
 * default chunking pays nothing for the time-based ones).  timed is a
 * constant at each call, so each gets a loop of its own. */
static inline void segment_events(const struct tb_stream *s, struct tb_seg *seg, struct seg_ctx *x,
                                  int timed)
{
    uint64_t tokens = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct tb_event *e = &s->ev[i];
        if (e->kind != TB_KIND_CONTENT)
            continue;
        if (timed)
            tb_seg_tick(seg, e->t, on_chunk, x);
        tokens += e->tokens;
        x->t = e->t;
        x->tok = tokens - 1;
        if (timed)
            tb_seg_feed_at(seg, e->t, s->text + e->off, e->len, on_chunk, x);
        else
            tb_seg_feed(seg, s->text + e->off, e->len, on_chunk, x);
    }
}

int tb_analyze_segment(const struct tb_stream *s, struct tb_seg *seg, struct tb_chunks *out)
{
    struct seg_ctx x = {out, seg, 0.0, 0, tb_seg_timed(seg), 0};
    out->n = 0;
    tb_seg_reset(seg);
    if (x.timed)
        segment_events(s, seg, &x, 1);
    else
        segment_events(s, seg, &x, 0);
    tb_seg_finish(seg, on_chunk, &x);
    return x.rc;
}

/* The chunks through p reset with o, then the end of the stream: with the
 * searches (finish) or the schedule alone. */
static int run_chunks(const struct tb_chunks *c, struct tb_playout *p,
                      const struct tb_playout_opts *o, int searches, struct tb_playout_result *out)
{
    int rc = tb_playout_reset(p, o);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < c->n && rc == 0; i++)
        rc = isnan(c->v[i].dur)
                 ? tb_playout_add(p, c->v[i].c, c->v[i].tok, c->v[i].cps)
                 : tb_playout_add_timed(p, c->v[i].c, c->v[i].tok, c->v[i].cps, c->v[i].dur);
    if (rc == 0)
        rc = searches ? tb_playout_finish(p) : tb_playout_finish_schedule(p);
    tb_playout_result(p, out);
    return rc;
}

int tb_analyze_playout(const struct tb_chunks *c, struct tb_playout *p,
                       const struct tb_playout_opts *o, struct tb_playout_result *out)
{
    return run_chunks(c, p, o, 1, out);
}

int tb_analyze_schedule(const struct tb_chunks *c, struct tb_playout *p,
                        const struct tb_playout_opts *o, struct tb_playout_result *out)
{
    return run_chunks(c, p, o, 0, out);
}
