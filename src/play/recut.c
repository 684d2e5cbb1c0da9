/*
 * recut.c - the minimum TPS under a time-based chunk policy (see recut.h).
 *
 * The scan tests a few hundred rates (TB_RECUT_STEPS per halving, from
 * where every event falls within a microsecond of the first), and a
 * re-cut costs O(n + m) (a timed policy's feed is linear in the text),
 * but the cut changes only where a timer decision does: a handful of
 * times over the scan for a stream of 10,000 tokens.  So each re-cut is
 * kept with the rates where it holds (recut_cut.h); a rate inside them
 * is answered by the cut's closed form (no TTS stage; O(1)), or by
 * playing the cut's chunks (O(m)) near its threshold or with a stage,
 * and only a rate outside every kept cut is re-cut.  The cuts hold for
 * every pre-roll, so the curve's searches reuse them.  The answers are
 * the full re-cut's, bit for bit (tb_recut_search_full, which the recut
 * group holds this to).
 */
#include "recut.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "rate_search.h"
#include "recut_cut.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/voice.h"

struct rev {
    double t;
    uint64_t tok;
    size_t off;
    size_t len;
};

/* Cuts kept for the search: at most this many, and at most about 2^20
 * chunks in all (16 MB); the least recently used goes first. */
#define CUTS_MAX 16
#define CUT_CHUNKS (1u << 20)

struct tb_recut {
    struct tb_seg *seg;
    struct rev *ev;
    size_t n, cap;
    char *text;
    size_t tlen, tcap;
    struct tb_chunks ch;
    struct tb_playout *p;
    struct tb_cut cuts[CUTS_MAX];
    size_t ncuts;
    uint64_t clock; /* stamps the cuts' use */
    size_t recuts;  /* the stream re-cut so far */
};

int tb_recut_create(const struct tb_seg_opts *so, struct tb_recut **out)
{
    struct tb_recut *r = calloc(1, sizeof(*r));
    struct tb_playout_opts po;
    int rc;
    *out = NULL;
    if (r == NULL)
        return TB_ENOMEM;
    tb_analyze_chunks_init(&r->ch);
    tb_playout_opts_default(&po);
    rc = tb_seg_create(so, &r->seg);
    if (rc == 0)
        rc = tb_playout_create(&po, NULL, NULL, &r->p);
    if (rc != 0) {
        tb_recut_destroy(r);
        return rc;
    }
    *out = r;
    return 0;
}

void tb_recut_destroy(struct tb_recut *r)
{
    if (r == NULL)
        return;
    tb_seg_destroy(r->seg);
    tb_playout_destroy(r->p);
    tb_analyze_chunks_free(&r->ch);
    for (size_t i = 0; i < CUTS_MAX; i++)
        tb_cut_free(&r->cuts[i]);
    free(r->ev);
    free(r->text);
    free(r);
}

int tb_recut_add(struct tb_recut *r, double t, uint64_t tok, const char *text, size_t len)
{
    if (r->n == r->cap) {
        struct rev *v = tb_grow(r->ev, &r->cap, sizeof(*v), 64);
        if (v == NULL)
            return TB_ENOMEM;
        r->ev = v;
    }
    while (r->tlen + len > r->tcap) {
        char *nt = tb_grow(r->text, &r->tcap, 1, 4096);
        if (nt == NULL)
            return TB_ENOMEM;
        r->text = nt;
    }
    memcpy(r->text + r->tlen, text, len);
    r->ev[r->n++] = (struct rev){t, tok, r->tlen, len};
    r->tlen += len;
    r->ncuts = 0; /* the stream changed: no cut of it holds */
    return 0;
}

/* Event k's u: tokens (or seconds) after the first. */
static double u_of(const struct tb_recut *r, size_t k, int by_time)
{
    return by_time ? r->ev[k].t - r->ev[0].t : (double)(r->ev[k].tok - r->ev[0].tok);
}

struct cut_ctx {
    struct tb_recut *r;
    struct tb_cut *cut;
    double t, u;  /* the event being fed: its time and u */
    uint64_t tok; /* its token index */
    uint32_t k;   /* its index */
    double ua;    /* the u of the pending timer's anchor */
    int rc;
    uint64_t from; /* the open chunk's first content byte */
};

/* A chunk closed: its close time (a timer's deadline, or the arrival of
 * the event being fed) into the chunk list, its anchor into the cut. */
static void on_chunk(void *ud, const struct tb_chunk *c)
{
    struct cut_ctx *x = ud;
    double t = tb_seg_close_time(x->r->seg);
    int timed = !isnan(t);
    int blank = tb_tts_blank(x->r->text + x->from, (size_t)(c->end - x->from));
    int rc = tb_analyze_chunks_push(&x->r->ch, timed ? t : x->t, x->tok, c->cps);
    x->from = c->end;
    if (rc == 0) {
        x->r->ch.v[x->r->ch.n - 1].blank = blank;
        rc = tb_cut_push(x->cut, timed ? x->ua : x->u, x->k, c->cps, timed, blank);
    }
    if (rc != 0)
        x->rc = rc;
}

/*
 * Re-times the stream by tau (event k at t_0 + u_k tau), feeds the
 * segmenter at the new times and records the chunks into r->ch and cut,
 * with each timer decision it takes (recut_cut.h).
 */
static int recut(struct tb_recut *r, double tau, int by_time, struct tb_cut *cut)
{
    struct cut_ctx cx = {r, cut, 0.0, 0.0, 0, 0, 0.0, 0, 0};
    r->ch.n = 0;
    r->recuts++;
    tb_seg_reset(r->seg);
    tb_cut_begin(cut, by_time);
    for (size_t k = 0; k < r->n; k++) {
        double u = u_of(r, k, by_time), t = r->ev[0].t + u * tau, delay;
        uint32_t a;
        if (tb_seg_timer(r->seg, &a, &delay) == 0) {
            cx.ua = u_of(r, a, by_time);
            tb_cut_decision(cut, r->ev[0].t, cx.ua, u, delay, tb_seg_deadline(r->seg) <= t);
        }
        tb_seg_tick(r->seg, t, on_chunk, &cx);
        cx.t = t;
        cx.u = u;
        cx.tok = r->ev[k].tok;
        cx.k = (uint32_t)k;
        tb_seg_feed_at(r->seg, t, r->text + r->ev[k].off, r->ev[k].len, on_chunk, &cx);
    }
    if (r->n > 0)
        tb_seg_finish(r->seg, on_chunk, &cx);
    return cx.rc;
}

/* The chunk list a re-cut at tau would give, from a cut that holds there:
 * the same close times, computed in the same steps. */
static int replay(struct tb_recut *r, const struct tb_cut *cut, double tau)
{
    r->ch.n = 0;
    for (size_t j = 0; j < cut->n; j++) {
        const struct tb_cut_chunk *v = &cut->v[j];
        double t = r->ev[0].t + v->u * tau;
        int rc = tb_analyze_chunks_push(&r->ch, v->timed ? t + cut->delay : t, r->ev[v->tokev].tok,
                                        v->cps);
        if (rc != 0)
            return rc;
        r->ch.v[r->ch.n - 1].blank = v->blank;
    }
    return 0;
}

/* A cut of axis by_time that holds at tau, or NULL. */
static struct tb_cut *cut_find(struct tb_recut *r, int by_time, double tau)
{
    for (size_t i = 0; i < r->ncuts; i++) {
        struct tb_cut *c = &r->cuts[i];
        if (c->by_time == by_time && tb_cut_holds(c, tau)) {
            c->used = ++r->clock;
            return c;
        }
    }
    return NULL;
}

/* Where the next cut is recorded: a free place, or the least used. */
static struct tb_cut *cut_slot(struct tb_recut *r)
{
    size_t max = r->n > 0 ? CUT_CHUNKS / r->n : CUTS_MAX, v = 0;
    if (max < 2)
        max = 2;
    if (max > CUTS_MAX)
        max = CUTS_MAX;
    if (r->ncuts < max)
        v = r->ncuts++;
    else
        for (size_t i = 1; i < r->ncuts; i++)
            if (r->cuts[i].used < r->cuts[v].used)
                v = i;
    r->cuts[v].used = ++r->clock;
    return &r->cuts[v];
}

static int play(struct tb_recut *r, const struct tb_playout_opts *o, struct tb_playout_result *res)
{
    struct tb_playout_opts po = *o;
    po.no_search = 1;
    /* Re-cut and re-timed chunks were not the ones recorded: a measured
     * TTS is modelled from its L_j and R_j here, as in the searches. */
    po.tts_times_at = NULL;
    return tb_analyze_playout(&r->ch, r->p, &po, res);
}

int tb_recut_play(struct tb_recut *r, const struct tb_playout_opts *o, double x, int by_time,
                  struct tb_playout_result *res)
{
    double tau = isinf(x) ? 0.0 : 1.0 / x;
    int rc = recut(r, tau, by_time, cut_slot(r));
    return rc != 0 ? rc : play(r, o, res);
}

struct probe {
    struct tb_recut *r;
    const struct tb_playout_opts *o;
    int by_time;
    int full; /* re-cut at every rate (the reference) */
    int stage;
    double umax;
    int rc;
};

/*
 * Whether rate x is gap-free: a cut that holds there answers when its
 * closed form is sure (no TTS stage), or is played; else the stream is
 * re-cut, and the cut kept.
 */
static int probe_gap_free(void *ud, double x)
{
    struct probe *pr = ud;
    struct tb_recut *r = pr->r;
    struct tb_playout_result res;
    double tau = isinf(x) ? 0.0 : 1.0 / x;
    struct tb_cut *c = pr->full ? NULL : cut_find(r, pr->by_time, tau);
    int rc;
    if (c != NULL && !pr->stage) {
        enum tb_cut_answer a = tb_cut_answer(c, pr->o, r->ev[0].t, pr->umax, tau);
        if (a != TB_CUT_UNSURE)
            return a == TB_CUT_FREE;
    }
    rc = c != NULL ? replay(r, c, tau) : recut(r, tau, pr->by_time, cut_slot(r));
    if (rc == 0)
        rc = play(r, pr->o, &res);
    if (rc != 0) {
        pr->rc = rc;
        return 1; /* ends the search; the error is returned */
    }
    return res.silence_max <= TB_SEARCH_EPS;
}

/* The audio of the whole stream: the same at every rate (every policy
 * sends all of the text), read from the cut at the infinite rate (kept:
 * the search's first test is that rate). */
static int total_speech(struct tb_recut *r, const struct tb_playout_opts *o, double *speech)
{
    struct tb_cut *c = cut_find(r, 0, 0.0);
    uint64_t cps = 0;
    if (c == NULL) {
        int rc;
        c = cut_slot(r);
        rc = recut(r, 0.0, 0, c);
        if (rc != 0)
            return rc;
    }
    for (size_t i = 0; i < c->n; i++)
        cps += c->v[i].cps;
    *speech = tb_voice_seconds(cps, o->wpm);
    return 0;
}

static int search(struct tb_recut *r, const struct tb_playout_opts *o, int full,
                  struct tb_playout_result *res)
{
    struct probe pr = {r, o, 0, full, tb_playout_has_stage(o), 0.0, 0};
    double speech;
    int none = 0, rc;
    res->min_tps_none = 0;
    res->min_tps_method = TB_MIN_TPS_SCAN;
    if (r->n == 0) {
        res->min_tps = res->speedup = 0.0;
        res->min_tps_method = TB_MIN_TPS_CLOSED;
        return 0;
    }
    rc = total_speech(r, o, &speech);
    if (rc != 0)
        return rc;
    for (int by_time = 0; by_time < 2 && !none; by_time++) {
        double *out = by_time ? &res->speedup : &res->min_tps;
        pr.by_time = by_time;
        pr.umax = u_of(r, r->n - 1, by_time);
        none = tb_rate_search(probe_gap_free, &pr, pr.umax, speech, o->preroll, 0, TB_RECUT_STEPS,
                              out);
        if (pr.rc != 0)
            return pr.rc;
    }
    if (none) {
        res->min_tps = res->speedup = NAN;
        res->min_tps_none = 1;
    }
    return 0;
}

int tb_recut_search(struct tb_recut *r, const struct tb_playout_opts *o,
                    struct tb_playout_result *res)
{
    return search(r, o, 0, res);
}

size_t tb_recut_recuts(const struct tb_recut *r)
{
    return r->recuts;
}

int tb_recut_search_full(struct tb_recut *r, const struct tb_playout_opts *o,
                         struct tb_playout_result *res)
{
    return search(r, o, 1, res);
}
