/*
 * bench_barge_rt.c - barge-in in real time (see bench_barge_rt.h and
 * bench.h): a pending stream's content events go to its own segmenter as
 * tb_analyze_segment feeds them (the timer ticked before each event, each
 * chunk at its event's arrival or its timed close, with its completing
 * event's token index), each chunk to its own playout engine, so s_1 is
 * the one tb_bench_analyze later computes on the stream (a time-based
 * policy's timer is also ticked at each wake-up, closing a chunk at its
 * deadline as the analysis does when the next event comes).
 *
 * Cost: O(pending streams) per wake-up for the scan, O(new events) for
 * the feed; each pending stream keeps one chunk list in its engine.  A
 * heap by T would make the scan O(log n); the pending streams are those
 * in flight that were drawn, a fraction of the calls, so a list does.
 */
#include "bench_barge_rt.h"
#include "bench_tts.h"

#include <math.h>
#include <stdlib.h>

#include "ttsbuf/bench_calls.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"

static void on_chunk(void *ud, const struct tb_chunk *ch)
{
    struct xf *x = ud;
    double t = tb_seg_close_time(x->bseg);
    if (x->brc == 0)
        x->brc = tb_playout_add(x->bplay, isnan(t) ? x->bt : t, x->btok, ch->cps);
}

int tb_bench_barge_begin(struct bench *b, struct xf *x, char *err, size_t errlen)
{
    const struct tb_bench_opts *o = b->o;
    int rc = 0;
    x->barge_b = NAN;
    x->barge_t = INFINITY;
    x->barged = 0;
    x->cancel_s = NAN;
    if (!(o->barge_in > 0) || x->call < 0)
        return 0;
    x->barge_b =
        tb_barge_draw(o->barge_in, &o->barge_at, o->seed, (uint64_t)x->call, (uint32_t)x->turn);
    if (isnan(x->barge_b))
        return 0;
    if (x->bseg == NULL)
        rc = tb_seg_create(&o->sim.seg, &x->bseg);
    else
        tb_seg_reset(x->bseg);
    if (rc == 0)
        rc = x->bplay == NULL ? tb_playout_create(&o->sim.play, NULL, NULL, &x->bplay)
                              : tb_playout_reset(x->bplay, &o->sim.play);
    if (rc != 0)
        return tb_seterr(err, errlen, rc, "barge-in: the chunk policy or playout: %s",
                         tb_strerror(rc));
    x->bfed = 0;
    x->btokens = x->btok = 0;
    x->bt = 0;
    x->brc = 0;
    x->bpending = 1;
    x->bprev = NULL;
    x->bnext = b->barge_head;
    if (b->barge_head != NULL)
        b->barge_head->bprev = x;
    b->barge_head = x;
    return 0;
}

void tb_bench_barge_drop(struct bench *b, struct xf *x)
{
    if (!x->bpending)
        return;
    if (x->bprev != NULL)
        x->bprev->bnext = x->bnext;
    else
        b->barge_head = x->bnext;
    if (x->bnext != NULL)
        x->bnext->bprev = x->bprev;
    x->bnext = x->bprev = NULL;
    x->bpending = 0;
}

/* What came since the last feed; then the timer at `now` (stream time). */
static void feed(struct xf *x, double now)
{
    const struct tb_stream *s = &x->stream;
    for (; x->bfed < s->n && x->brc == 0; x->bfed++) {
        const struct tb_event *e = &s->ev[x->bfed];
        if (e->kind != TB_KIND_CONTENT)
            continue;
        tb_seg_tick(x->bseg, e->t, on_chunk, x);
        x->btokens += e->tokens;
        x->bt = e->t;
        x->btok = x->btokens - 1;
        tb_seg_feed_at(x->bseg, e->t, s->text + e->off, e->len, on_chunk, x);
    }
    if (x->brc == 0 && tb_seg_deadline(x->bseg) <= now)
        tb_seg_tick(x->bseg, now, on_chunk, x);
}

struct xf *tb_bench_barge_due(struct bench *b, double now)
{
    b->barge_next = INFINITY;
    for (struct xf *x = b->barge_head; x != NULL; x = x->bnext) {
        double s1;
        if (isinf(x->barge_t) && x->tts != NULL) {
            /* a real TTS: its first audio as measured */
            s1 = tb_bench_tts_heard(x->tts, b->o->sim.play.preroll);
            if (!isnan(s1))
                x->barge_t = x->t_start + s1 + x->barge_b;
        } else if (isinf(x->barge_t)) {
            feed(x, now - x->t_start);
            if (x->brc == 0 && tb_playout_started(x->bplay, &s1))
                x->barge_t = x->t_start + s1 + x->barge_b;
        }
        if (x->barge_t <= now)
            return x;
        if (x->barge_t < b->barge_next)
            b->barge_next = x->barge_t;
    }
    return NULL;
}

void tb_bench_barge_free(struct xf *x)
{
    tb_playout_destroy(x->bplay);
    tb_seg_destroy(x->bseg);
    x->bplay = NULL;
    x->bseg = NULL;
}
