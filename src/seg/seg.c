/*
 * seg.c - the segmenter (see seg.h for the rules): its state, its life
 * cycle and the calls every policy shares: closing a chunk (tb_seg_emit,
 * which each policy's feed calls), cut, finish.  The table of policies is
 * seg_policy.c.
 *
 * Positions are kept as global counters over the content stream: `fed`
 * bytes and `gcps` code points so far.  A chunk is the span between two
 * cut points, so most policies need no copy of the text: they remember the
 * (byte, code point) position of their candidate cut.  livekit and pipecat
 * re-read their framework's whole buffer at each decision, as the
 * frameworks do, so they keep the open chunk's code points (bounded).
 *
 */
#include "ttsbuf/seg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "punkt.h"
#include "seg_livekit.h"
#include "seg_priv.h"
#include "ttsbuf/error.h"

int tb_seg_create(const struct tb_seg_opts *o, struct tb_seg **out)
{
    struct tb_seg *s;
    *out = NULL;
    if ((unsigned)o->policy >= TB_CHUNK__COUNT || !(o->max_delay_s >= 0.0) || !(o->idle_s >= 0.0) ||
        isinf(o->max_delay_s) || isinf(o->idle_s))
        return TB_EINVAL;
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return TB_ENOMEM;
    s->o = *o;
    s->timed = tb_seg_policy_timed(o->policy);
    if (s->o.min_chars == 0)
        s->o.min_chars = 1;
    if (s->o.max_delay_s == 0.0)
        s->o.max_delay_s = TB_SEG_CARTESIA_DELAY_S;
    if (s->o.idle_s == 0.0)
        s->o.idle_s = TB_SEG_IDLE_S;
    s->now = s->t_open = s->t_last = s->close_t = NAN;
    if (o->policy == TB_CHUNK_LIVEKIT || o->policy == TB_CHUNK_PIPECAT) {
        s->lk_cp = malloc(TB_SEG_LK_CAP * sizeof(*s->lk_cp));
        s->lk_len = malloc(TB_SEG_LK_CAP);
        s->lk_flags = malloc(TB_SEG_LK_CAP);
        if (o->policy == TB_CHUNK_PIPECAT)
            s->punkt = tb_punkt_create();
        if (s->lk_cp == NULL || s->lk_len == NULL || s->lk_flags == NULL ||
            (o->policy == TB_CHUNK_PIPECAT && s->punkt == NULL)) {
            tb_seg_destroy(s);
            return TB_ENOMEM;
        }
    }
    *out = s;
    return 0;
}

void tb_seg_destroy(struct tb_seg *s)
{
    if (s == NULL)
        return;
    free(s->lk_cp);
    free(s->lk_len);
    free(s->lk_flags);
    tb_punkt_destroy(s->punkt);
    free(s);
}

void tb_seg_reset(struct tb_seg *s)
{
    struct tb_seg keep = *s;
    memset(s, 0, sizeof(*s));
    s->o = keep.o;
    s->timed = keep.timed;
    s->lk_cp = keep.lk_cp;
    s->lk_len = keep.lk_len;
    s->lk_flags = keep.lk_flags;
    s->punkt = keep.punkt;
    s->now = s->t_open = s->t_last = s->close_t = NAN;
}

uint64_t tb_seg_fed(const struct tb_seg *s)
{
    return s->fed;
}

uint64_t tb_seg_fed_cps(const struct tb_seg *s)
{
    return s->gcps;
}

void tb_seg_emit(struct tb_seg *s, uint64_t end_b, uint64_t end_cps, tb_chunk_fn fn, void *ud)
{
    struct tb_chunk c;
    if (end_cps <= s->start_cps)
        return; /* nothing to speak */
    c.end = end_b;
    c.cps = (uint32_t)(end_cps - s->start_cps);
    c.event = s->event;
    s->start_b = end_b;
    s->start_cps = end_cps;
    s->nchunks++;
    fn(ud, &c);
}

/* Whether the livekit buffer holds anything but whitespace (flush sends
 * nothing otherwise). */
static int lk_has_text(const struct tb_seg *s)
{
    for (size_t k = 0; k < s->lk_n; k++)
        if (!tb_seg_py_space(s->lk_cp[k]))
            return 1;
    return 0;
}

double tb_seg_spoken_until(const struct tb_stream *s)
{
    for (size_t k = s->n; k-- > 0;) {
        const unsigned char *t = (const unsigned char *)tb_stream_text(s, k);
        size_t i = 0, len = s->ev[k].len;
        if (s->ev[k].kind != TB_KIND_CONTENT)
            continue;
        while (i < len)
            if (!tb_seg_py_space(tb_seg_next_cp(t, len, &i)))
                return s->ev[k].t;
    }
    return -1;
}

void tb_seg_cut(struct tb_seg *s, tb_chunk_fn fn, void *ud)
{
    uint32_t ev = s->event;
    if (s->event > 0)
        s->event--; /* the chunk closes at the last event fed */
    tb_seg_emit(s, s->fed, s->gcps, fn, ud);
    s->event = ev;
    s->last_sig = 0;
    s->lk_n = 0;
    s->pc_look = 0;
    s->el_sent_b = s->fed;
    s->el_sent_cps = s->gcps;
    s->el_server = 0;
    s->el_last = 0;
    s->el_ns = 0;
    s->oa_ns = s->oa_term = s->oa_run = s->oa_bnd = 0;
    s->oa_collapsed = 0;
    s->ca_end = 0;
}

void tb_seg_finish(struct tb_seg *s, tb_chunk_fn fn, void *ud)
{
    uint32_t ev = s->event;
    if (s->event > 0)
        s->event--;
    /* The frameworks send no chunk of whitespace alone. */
    if (!((s->o.policy == TB_CHUNK_LIVEKIT || s->o.policy == TB_CHUNK_PIPECAT) &&
          !lk_has_text(s)) &&
        !(s->o.policy == TB_CHUNK_OPENAI_AGENTS && !s->oa_ns) &&
        !(s->o.policy == TB_CHUNK_ELEVENLABS_SDK && !s->el_ns))
        tb_seg_emit(s, s->fed, s->gcps, fn, ud);
    s->lk_n = 0;
    s->event = ev;
}

double tb_seg_deadline(const struct tb_seg *s)
{
    double d;
    if (!s->timed || s->gcps == s->start_cps)
        return INFINITY;
    d = s->o.policy == TB_CHUNK_CARTESIA ? s->t_open + s->o.max_delay_s : s->t_last + s->o.idle_s;
    return isnan(d) ? INFINITY : d;
}

int tb_seg_timer(const struct tb_seg *s, uint32_t *event, double *delay)
{
    if (isinf(tb_seg_deadline(s)))
        return -1;
    if (s->o.policy == TB_CHUNK_CARTESIA) {
        *event = s->ev_open;
        *delay = s->o.max_delay_s;
    } else {
        *event = s->event - 1; /* the last one fed */
        *delay = s->o.idle_s;
    }
    return 0;
}

double tb_seg_close_time(const struct tb_seg *s)
{
    return s->close_t;
}

int tb_seg_timed(const struct tb_seg *s)
{
    return s->timed;
}

void tb_seg_tick(struct tb_seg *s, double now, tb_chunk_fn fn, void *ud)
{
    double dl;
    uint32_t ev = s->event;
    if (!s->timed)
        return; /* no timer: the policies that never read time pay nothing */
    dl = tb_seg_deadline(s);
    if (isinf(dl) || !(dl <= now))
        return;
    if (s->event > 0)
        s->event--; /* the chunk closes after the last event fed */
    s->close_t = dl;
    tb_seg_emit(s, s->fed, s->gcps, fn, ud);
    s->close_t = NAN;
    s->event = ev;
    s->last_sig = 0;
    s->ca_end = 0;
}
