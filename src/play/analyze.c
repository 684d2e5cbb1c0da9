/*
 * analyze.c - segment a stream once, evaluate playout settings over the
 * chunk list (see analyze.h).  No allocation per event beyond the chunk
 * array's geometric growth.
 */
#include "ttsbuf/analyze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsmeas.h"

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
    c->v[c->n].blank = 0;
    c->n++;
    return 0;
}

struct seg_ctx {
    struct tb_chunks *out;
    const struct tb_seg *seg;
    const struct tb_stream *s;
    double t;     /* arrival of the event being fed */
    uint64_t tok; /* its token index */
    int timed;    /* a time-based policy: a close may be dated by its timer */
    int rc;
    /* the open chunk's start: content byte, the event holding it and that
     * event's first content byte; the text of a chunk gathered in buf */
    uint64_t from, from_b;
    size_t from_ev;
    char *buf;
    size_t cap;
};

/* Whether content bytes [x->from, end) are blank (ttsmeas.h's
 * tb_tts_blank), gathered from the events; moves x->from to end.  O(the
 * chunk's bytes).  1, 0, or TB_ENOMEM. */
static int chunk_blank(struct seg_ctx *x, uint64_t end)
{
    const struct tb_stream *s = x->s;
    size_t n = 0, i = x->from_ev;
    uint64_t b = x->from_b;
    if (end - x->from > x->cap) {
        char *nb = realloc(x->buf, (size_t)(end - x->from));
        if (nb == NULL)
            return TB_ENOMEM;
        x->buf = nb;
        x->cap = (size_t)(end - x->from);
    }
    for (; i < s->n; i++) {
        const struct tb_event *e = &s->ev[i];
        uint64_t lo, hi;
        if (e->kind != TB_KIND_CONTENT)
            continue;
        lo = b > x->from ? b : x->from;
        hi = b + e->len < end ? b + e->len : end;
        if (hi > lo) {
            memcpy(x->buf + n, s->text + e->off + (lo - b), (size_t)(hi - lo));
            n += (size_t)(hi - lo);
        }
        if (b + e->len > end)
            break; /* the next chunk starts in this event */
        b += e->len;
    }
    x->from = end;
    x->from_ev = i;
    x->from_b = b;
    return tb_tts_blank(x->buf, n);
}

static void on_chunk(void *ud, const struct tb_chunk *ch)
{
    struct seg_ctx *x = ud;
    double t = x->timed ? tb_seg_close_time(x->seg) : NAN; /* a timed close, or NAN */
    int rc = tb_analyze_chunks_push(x->out, isnan(t) ? x->t : t, x->tok, ch->cps);
    int blank = rc == 0 ? chunk_blank(x, ch->end) : 0;
    if (blank < 0)
        rc = blank;
    else if (rc == 0)
        x->out->v[x->out->n - 1].blank = blank;
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
    struct seg_ctx x = {.out = out, .seg = seg, .s = s, .timed = tb_seg_timed(seg)};
    out->n = 0;
    tb_seg_reset(seg);
    if (x.timed)
        segment_events(s, seg, &x, 1);
    else
        segment_events(s, seg, &x, 0);
    tb_seg_finish(seg, on_chunk, &x);
    free(x.buf);
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
        rc = c->v[i].blank     ? tb_playout_add_blank(p, c->v[i].c, c->v[i].tok, c->v[i].cps)
             : isnan(c->v[i].dur) ? tb_playout_add(p, c->v[i].c, c->v[i].tok, c->v[i].cps)
                                  : tb_playout_add_timed(p, c->v[i].c, c->v[i].tok, c->v[i].cps,
                                                         c->v[i].dur);
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
