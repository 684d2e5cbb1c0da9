/*
 * recut.c - the minimum TPS under a time-based chunk policy (see recut.h).
 *
 * Each rate tested re-cuts the whole stream and plays it: O(n + m) per
 * rate (a timed policy's feed is linear in the text), a few hundred rates
 * for the scan (TB_SCAN_STEPS per halving of the rate, from where every
 * event falls within a microsecond of the first).
 */
#include "recut.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "rate_search.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/voice.h"

struct rev {
    double t;
    uint64_t tok;
    size_t off;
    size_t len;
};

struct tb_recut {
    struct tb_seg *seg;
    struct rev *ev;
    size_t n, cap;
    char *text;
    size_t tlen, tcap;
    struct tb_chunks ch;
    struct tb_playout *p;
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
    return 0;
}

struct cut_ctx {
    struct tb_recut *r;
    double t;
    uint64_t tok;
    int rc;
};

static void on_chunk(void *ud, const struct tb_chunk *c)
{
    struct cut_ctx *x = ud;
    double t = tb_seg_close_time(x->r->seg);
    int rc = tb_analyze_chunks_push(&x->r->ch, isnan(t) ? x->t : t, x->tok, c->cps);
    if (rc != 0)
        x->rc = rc;
}

/* Event k's time re-timed by tau (seconds per token, or per second). */
static double retime(const struct tb_recut *r, size_t k, double tau, int by_time)
{
    double u = by_time ? r->ev[k].t - r->ev[0].t : (double)(r->ev[k].tok - r->ev[0].tok);
    return r->ev[0].t + u * tau;
}

int tb_recut_play(struct tb_recut *r, const struct tb_playout_opts *o, double x, int by_time,
                  struct tb_playout_result *res)
{
    struct cut_ctx cx = {r, 0.0, 0, 0};
    struct tb_playout_opts po = *o;
    double tau = isinf(x) ? 0.0 : 1.0 / x;
    r->ch.n = 0;
    tb_seg_reset(r->seg);
    for (size_t k = 0; k < r->n; k++) {
        double t = retime(r, k, tau, by_time);
        tb_seg_tick(r->seg, t, on_chunk, &cx);
        cx.t = t;
        cx.tok = r->ev[k].tok;
        tb_seg_feed_at(r->seg, t, r->text + r->ev[k].off, r->ev[k].len, on_chunk, &cx);
    }
    if (r->n > 0)
        tb_seg_finish(r->seg, on_chunk, &cx);
    if (cx.rc != 0)
        return cx.rc;
    po.no_search = 1;
    /* Re-cut and re-timed chunks were not the ones recorded: a measured
     * TTS is modelled from its L_j and R_j here, as in the searches. */
    po.tts_times_at = NULL;
    return tb_analyze_playout(&r->ch, r->p, &po, res);
}

struct probe {
    struct tb_recut *r;
    const struct tb_playout_opts *o;
    int by_time;
    int rc;
};

static int probe_gap_free(void *ud, double x)
{
    struct probe *pr = ud;
    struct tb_playout_result res;
    int rc = tb_recut_play(pr->r, pr->o, x, pr->by_time, &res);
    if (rc != 0) {
        pr->rc = rc;
        return 1; /* ends the search; the error is returned */
    }
    return res.silence_max <= TB_SEARCH_EPS;
}

/* The audio of the whole stream: the same at every rate (every policy
 * sends all of the text). */
static double total_speech(const struct tb_recut *r, const struct tb_playout_opts *o)
{
    uint64_t cps = 0;
    for (size_t i = 0; i < r->ch.n; i++)
        cps += r->ch.v[i].cps;
    return tb_voice_seconds(cps, o->wpm);
}

int tb_recut_search(struct tb_recut *r, const struct tb_playout_opts *o,
                    struct tb_playout_result *res)
{
    struct tb_playout_result tmp;
    struct probe pr = {r, o, 0, 0};
    double speech, umax[2];
    int none = 0;
    res->min_tps_none = 0;
    res->min_tps_method = TB_MIN_TPS_SCAN;
    if (r->n == 0) {
        res->min_tps = res->speedup = 0.0;
        res->min_tps_method = TB_MIN_TPS_CLOSED;
        return 0;
    }
    int rc = tb_recut_play(r, o, INFINITY, 0, &tmp);
    if (rc != 0)
        return rc;
    speech = total_speech(r, o);
    umax[0] = (double)(r->ev[r->n - 1].tok - r->ev[0].tok);
    umax[1] = r->ev[r->n - 1].t - r->ev[0].t;
    for (int by_time = 0; by_time < 2 && !none; by_time++) {
        double *out = by_time ? &res->speedup : &res->min_tps;
        pr.by_time = by_time;
        none = tb_rate_search(probe_gap_free, &pr, umax[by_time], speech, o->preroll, 0,
                              TB_RECUT_STEPS, out);
        if (pr.rc != 0)
            return pr.rc;
    }
    if (none) {
        res->min_tps = res->speedup = NAN;
        res->min_tps_none = 1;
    }
    return 0;
}
