/*
 * tts_stage.c - the playout model with a TTS stage (see playout.h): the
 * stage's chunk store, the schedule it runs online as chunks are added
 * (a run, tts_stage_run.c), and at the end the minimum-TPS and speed-up
 * searches, which replay the run over the stored chunks re-timed to each
 * candidate rate.
 *
 * Memory: 72 bytes per chunk (the list the searches replay) plus 48 for
 * the pre-roll's breakpoints, grown as chunks arrive, so neither a run nor
 * a search allocates.
 */
#include "tts_stage.h"

#include <math.h>
#include <stdlib.h>

#include "base/grow.h"
#include "rate_search.h"
#include "tts_stage_run.h"
#include "tts_stage_state.h"
#include "ttsbuf/error.h"

int tb_tts_stage_wanted(const struct tb_playout_opts *o)
{
    return o->tts_connect != 0.0 || o->tts_concurrency != 0 || o->tts_rtf != 0.0 ||
           o->tts_output == TB_TTS_WHOLE || o->tts_latency_at != NULL || o->tts_rtf_at != NULL ||
           o->tts_times_at != NULL;
}

struct tb_tts_stage *tb_tts_stage_create(tb_play_fn fn, void *ud)
{
    struct tb_tts_stage *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->fn = fn;
    s->ud = ud;
    return s;
}

void tb_tts_stage_destroy(struct tb_tts_stage *s)
{
    if (s == NULL)
        return;
    free(s->v);
    free(s->bp);
    free(s);
}

void tb_tts_stage_reset(struct tb_tts_stage *s, const struct tb_playout_opts *o)
{
    s->o = *o;
    s->n = 0;
    s->speech = 0.0;
    s->theta_search = o->preroll;
    s->silent = 0;
    s->blanks = 0;
    s->connected = 0;
    s->finished = s->forced = 0;
    s->min_tps = s->speedup = NAN;
    s->none = 0;
    s->method = TB_MIN_TPS_BISECT;
    tb_tts_run_init(&s->run, s, o->preroll, s->fn, s->ud);
}

int tb_tts_stage_gapless_at(struct tb_tts_stage *s, double preroll, double *gap_total)
{
    struct tts_run r;
    if (!s->finished || s->forced)
        return TB_EINVAL; /* a replay knows no forced start */
    tb_tts_run_replay(&r, s, preroll, -1.0, 0);
    if (gap_total != NULL)
        *gap_total = r.gap_total;
    return r.underruns == 0;
}

/* ---------------------------------------------------------- the search */

/* Whether the chunks re-timed to rate lambda (INFINITY: all close with
 * the first) play without a silence longer than TB_SEARCH_EPS. */
static int gap_free(struct tb_tts_stage *st, double lambda, int by_time)
{
    struct tts_run r;
    tb_tts_run_replay(&r, st, st->theta_search, isinf(lambda) ? 0.0 : 1.0 / lambda, by_time);
    return r.worst <= TB_SEARCH_EPS;
}

static double u_of(const struct tb_tts_stage *st, size_t j, int by_time)
{
    return by_time ? st->v[j].c - st->v[0].c : (double)(st->v[j].tok - st->v[0].tok);
}

/*
 * The closed form for a connect latency alone (N unlimited, R = 0, L
 * constant): s_1 = max(c_1 + L + K, c_q + L), and chunk j > q needs
 * c_j - c_1 <= S_{j-1} + K or c_j - c_q <= S_{j-1} (ttsbuf-model(7)).
 */
static double closed_form(const struct tb_tts_stage *st, double theta, int by_time)
{
    double s = 0.0, need = 0.0, uq = 0.0, k = st->o.tts_connect;
    size_t q = 0;
    while (q < st->n && !(s + st->v[q].d >= theta) && q + 1 < st->n)
        s += st->v[q++].d;
    s += st->v[q].d; /* S_q */
    uq = u_of(st, q, by_time);
    for (size_t j = q + 1; j < st->n; j++) {
        double u = u_of(st, j, by_time);
        double a = u / (s + k);
        double b = s > 0.0 ? (u - uq) / s : u > uq ? INFINITY : 0.0;
        double x = a < b ? a : b;
        if (x > need)
            need = x;
        s += st->v[j].d;
    }
    return need;
}

/* The rate search's test (rate_search.h) over the stored chunks. */
struct probe {
    struct tb_tts_stage *st;
    int by_time;
};

static int probe_gap_free(void *ud, double x)
{
    struct probe *pr = ud;
    return gap_free(pr->st, x, pr->by_time);
}

/* A pre-roll of all the audio makes every rate gap-free (the search's
 * shortcut), unless a chunk has no audio: A(t) cannot wait for it, and
 * the silence before it still counts when it comes late.  The search then
 * gets no pre-roll to shortcut on. */
static int search(struct tb_tts_stage *st, int by_time, int monotone, double *out)
{
    struct probe pr = {st, by_time};
    return tb_rate_search(probe_gap_free, &pr, u_of(st, st->n - 1, by_time), st->speech,
                          st->silent ? -INFINITY : st->theta_search, monotone, TB_SCAN_STEPS, out);
}

/* Chunk 1's own audio at its first playable moment (by the rate its
 * audio arrives at: R_1, or 0 when whole): a pre-roll up to it never
 * delays the start, which keeps "no gap" monotone in the rate. */
static double own_audio(const struct tb_tts_stage *st)
{
    double rtf = tb_tts_run_arrival_rtf(st, &st->v[0]), d = st->v[0].d;
    if (rtf == 0.0)
        return d;
    return rtf > 1.0 ? fmin(TB_FRAME_S, d) : 0.0;
}

static void search_all(struct tb_tts_stage *st)
{
    double theta = st->theta_search < st->speech ? st->theta_search : st->speech;
    int monotone;
    if (st->n < 2 && gap_free(st, INFINITY, 0)) {
        st->min_tps = st->speedup = 0.0; /* one chunk: no rate to need */
        st->method = TB_MIN_TPS_CLOSED;
        return;
    }
    if (st->o.tts_concurrency == 0 && st->o.tts_rtf == 0.0 && st->o.tts_latency_at == NULL &&
        st->o.tts_rtf_at == NULL && st->blanks == 0) {
        st->min_tps = closed_form(st, theta, 0);
        st->speedup = closed_form(st, theta, 1);
        st->method = TB_MIN_TPS_CLOSED;
        return;
    }
    monotone = theta <= own_audio(st);
    st->method = monotone ? TB_MIN_TPS_BISECT : TB_MIN_TPS_SCAN;
    if (search(st, 0, monotone, &st->min_tps) ||
        (!st->o.no_speedup && search(st, 1, monotone, &st->speedup))) {
        st->min_tps = st->speedup = NAN;
        st->none = 1;
    }
}

/* ------------------------------------------------------------- the API */

int tb_tts_stage_add(struct tb_tts_stage *s, double c, uint64_t tok, uint32_t cps, double d,
                     int blank)
{
    uint32_t j = (uint32_t)s->n + 1;
    double l = blank                         ? 0.0
               : s->o.tts_latency_at != NULL ? s->o.tts_latency_at(s->o.tts_latency_ud, j)
                                             : s->o.tts_latency;
    double rtf = blank                     ? 0.0
                 : s->o.tts_rtf_at != NULL ? s->o.tts_rtf_at(s->o.tts_rtf_ud, j)
                                           : s->o.tts_rtf;
    struct tts_chunk rec;
    if (!(l >= 0.0) || isinf(l) || !(rtf >= 0.0) || isinf(rtf))
        return TB_EINVAL;
    if (s->o.tts_times_at != NULL && tb_tts_run_recorded(s, j, &rec) != 0)
        return TB_EINVAL;
    if (s->n == s->cap) {
        struct tts_chunk *nv = tb_grow(s->v, &s->cap, sizeof(*nv), 64);
        if (nv == NULL)
            return TB_ENOMEM;
        s->v = nv;
    }
    if (2 * (s->n + 1) > s->bpcap) {
        struct bp *nb = tb_grow(s->bp, &s->bpcap, sizeof(*nb), 128);
        if (nb == NULL)
            return TB_ENOMEM;
        s->bp = nb;
    }
    if (blank)
        d = 0.0;
    s->v[s->n] = (struct tts_chunk){
        .c = c, .tok = tok, .cps = cps, .d = d, .l = l, .r = rtf, .blank = blank};
    if (!blank && !s->connected) { /* the connection opens with the first request */
        s->v[s->n].l += s->o.tts_connect;
        s->connected = 1;
    }
    s->n++;
    s->speech += d;
    s->silent |= !blank && !(d > 0.0);
    s->blanks += blank != 0;
    tb_tts_run_add(&s->run);
    return 0;
}

int tb_tts_stage_force_start(struct tb_tts_stage *s, double t)
{
    struct tts_run *r = &s->run;
    if (r->started || s->n == 0)
        return TB_EINVAL;
    s->v[s->n - 1].c = t;
    s->forced = 1;
    tb_tts_run_times(r, s->n - 1);
    tb_tts_run_bp_clear(s); /* its f_j may have moved */
    if (r->theta > r->sum)
        r->theta = r->sum;
    s->theta_search = r->theta;
    tb_tts_run_candidate(r, r->m);
    return 0;
}

void tb_tts_stage_close(struct tb_tts_stage *s)
{
    tb_tts_run_finish(&s->run);
}

int tb_tts_stage_finish(struct tb_tts_stage *s)
{
    if (s->finished)
        return 0;
    tb_tts_run_finish(&s->run);
    if (s->o.no_search)
        s->min_tps = s->speedup = NAN;
    else if (s->n > 0)
        search_all(s);
    else
        s->min_tps = s->speedup = 0.0;
    if (s->o.no_speedup)
        s->speedup = NAN; /* not searched (playout.h), whichever way min_tps came */
    s->finished = 1;
    return 0;
}

int tb_tts_stage_finish_schedule(struct tb_tts_stage *s)
{
    if (!s->finished)
        tb_tts_run_finish(&s->run);
    s->finished = 1;
    return 0;
}

double tb_tts_stage_last_begin(const struct tb_tts_stage *s)
{
    return s->n > 0 ? s->v[s->n - 1].b : NAN;
}

int tb_tts_stage_last(const struct tb_tts_stage *s, struct tb_tts_times *t)
{
    const struct tts_chunk *x;
    if (s->n == 0)
        return TB_EINVAL;
    x = &s->v[s->n - 1];
    *t = (struct tb_tts_times){x->b, x->f, x->g, tb_tts_run_arrival_rtf(s, x)};
    return 0;
}

int tb_tts_stage_started(const struct tb_tts_stage *s, double *s1)
{
    if (s1 != NULL)
        *s1 = s->run.started ? s->run.s1 : 0.0;
    return s->run.started;
}

double tb_tts_stage_end(const struct tb_tts_stage *s)
{
    return s->run.started ? s->run.e_prev : 0.0;
}

void tb_tts_stage_result(const struct tb_tts_stage *s, struct tb_playout_result *out)
{
    const struct tts_run *r = &s->run;
    *out = (struct tb_playout_result){
        .chunks = (uint32_t)s->n,
        .q = (uint32_t)r->q,
        .ttfa = r->started ? r->s1 : 0.0,
        .speech = s->speech,
        .end = r->started ? r->e_prev : 0.0,
        .underruns = r->underruns,
        .interruptions = r->interruptions,
        .gap_total = r->gap_total,
        .gap_max = r->gap_max,
        .gap_llm = r->gap_llm,
        .gap_tts = r->gap_tts,
        .min_tps = s->min_tps,
        .speedup = s->speedup,
        .min_tps_none = s->none,
        .min_tps_method = s->method,
        .silence_max = r->worst,
    };
}
