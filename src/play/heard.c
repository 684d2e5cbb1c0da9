/*
 * heard.c - what a caller heard of an answer it interrupted (heard.h):
 * the stream segmented once, its chunks scheduled by the playout engine,
 * the schedule read at the interruption.
 */
#include "ttsbuf/heard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"

/* Each chunk's synthesis start and playback end, by chunk (1-based j). */
struct sched {
    double *begin, *end, *start, *gap, *llm;
    size_t n;
};

static void on_play(void *ud, const struct tb_play *pl)
{
    struct sched *s = ud;
    if (pl->chunk >= 1 && pl->chunk <= s->n) {
        s->begin[pl->chunk - 1] = pl->begin;
        s->end[pl->chunk - 1] = pl->end;
        s->start[pl->chunk - 1] = pl->start;
        s->gap[pl->chunk - 1] = pl->gap;
        s->llm[pl->chunk - 1] = pl->gap_llm;
    }
}

/* Reads the schedule at t into h. */
static void read_at(const struct tb_stream *st, const struct tb_chunks *c, const struct sched *s,
                    double t, struct tb_heard *h)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->ev[i].kind == TB_KIND_CONTENT && st->ev[i].t <= t)
            h->tokens += st->ev[i].tokens;
    h->chunks = (uint32_t)c->n;
    for (size_t j = 0; j < c->n; j++) {
        if (s->end[j] <= t) {
            h->chunks_heard = (uint32_t)(j + 1);
            h->tokens_heard = c->v[j].tok + 1;
        } else if (s->begin[j] <= t) {
            h->chars_unplayed += c->v[j].cps;
        }
        if (s->gap[j] > 0 && s->start[j] - s->gap[j] < t) {
            double g = t - (s->start[j] - s->gap[j]);
            if (g > s->gap[j])
                g = s->gap[j];
            if (g > TB_GAP_MIN_S) {
                h->underruns_before++;
                h->gap_total_before += g;
                h->gap_llm_before += s->llm[j] < g ? s->llm[j] : g;
                h->gap_tts_before += g - (s->llm[j] < g ? s->llm[j] : g);
                if (g > h->gap_max_before)
                    h->gap_max_before = g;
            }
        }
    }
    /* A heard chunk's text came by t (it closed before it played), so
     * tokens_heard <= tokens; kept safe anyway. */
    if (h->tokens_heard > h->tokens)
        h->tokens_heard = h->tokens;
    h->tokens_unheard = h->tokens - h->tokens_heard;
    h->play_end = c->n > 0 ? s->end[c->n - 1] : NAN;
    h->interrupted = h->chunks_heard < h->chunks || h->tokens_unheard > 0;
}

int tb_heard_at(const struct tb_stream *st, const struct tb_sim_opts *o, double t,
                struct tb_heard *h, char *err, size_t errlen)
{
    struct tb_chunks c;
    struct tb_seg *seg = NULL;
    struct tb_playout *p = NULL;
    struct tb_playout_result r;
    struct sched s = {0};
    int rc;
    memset(h, 0, sizeof(*h));
    h->t = t;
    h->play_end = NAN;
    if (!(t >= 0) || isinf(t))
        return tb_seterr(err, errlen, TB_EINVAL, "the interruption's time is not a time");
    tb_analyze_chunks_init(&c);
    rc = tb_seg_create(&o->seg, &seg);
    if (rc == 0)
        rc = tb_analyze_segment(st, seg, &c);
    if (rc == 0 && c.n > 0) {
        s.n = c.n;
        s.begin = malloc(c.n * sizeof(double));
        s.end = malloc(c.n * sizeof(double));
        s.start = malloc(c.n * sizeof(double));
        s.gap = calloc(c.n, sizeof(double));
        s.llm = calloc(c.n, sizeof(double));
        if (s.begin == NULL || s.end == NULL || s.start == NULL || s.gap == NULL || s.llm == NULL)
            rc = TB_ENOMEM;
        for (size_t j = 0; rc == 0 && j < c.n; j++)
            s.begin[j] = s.end[j] = s.start[j] = INFINITY; /* never scheduled: never heard */
    }
    if (rc == 0)
        rc = tb_playout_create(&o->play, on_play, &s, &p);
    if (rc == 0)
        rc = tb_analyze_playout(&c, p, &o->play, &r);
    if (rc == 0)
        read_at(st, &c, &s, t, h);
    else if (rc == TB_EINVAL)
        tb_seterr(err, errlen, rc, "bad playout options");
    else
        tb_seterr(err, errlen, rc, "out of memory");
    tb_playout_destroy(p);
    tb_seg_destroy(seg);
    tb_analyze_chunks_free(&c);
    free(s.begin);
    free(s.end);
    free(s.start);
    free(s.gap);
    free(s.llm);
    return rc;
}
