/*
 * bench_stats.c - a level's summary from its records (see bench.h).
 *
 * Pure and order-independent: each metric's samples are copied and
 * sorted, so shards' records merged in any order give the same bits.
 * O(n log n) per metric; a level of 10^6 inter-event gaps sorts in well
 * under a second.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/bench_stats.h"
#include "ttsbuf/error.h"

static const struct {
    const char *name, *unit;
    int higher_better;
} metrics[TB_BM__COUNT] = {
    {"ttft_s", "s", 0},         {"ttfa_s", "s", 0},
    {"decode_tps", "tok/s", 1}, {"decode_tps_usage", "tok/s", 1},
    {"itl_s", "s", 0},          {"underruns", "", 0},
    {"gap_total_s", "s", 0},    {"gap_max_s", "s", 0},
    {"min_tps", "tok/s", 0},    {"speedup_needed", "x", 0},
    {"eou_s", "s", 0},          {"aggregation_s", "s", 0},
    {"tts_queue_s", "s", 0},    {"tts_ttfb_s", "s", 0},
    {"preroll_s", "s", 0},      {"leading_silence_s", "s", 0},
    {"v2v_s", "s", 0},          {"barge_close_s", "s", 0},
    {"turn_late_s", "s", 0},    {"barge_tts_close_s", "s", 0},
    {"barge_stop_s", "s", 0},   {"tool_s", "s", 0},
    {"tool_silence_s", "s", 0}, {"filler_silence_s", "s", 0},
    {"filler_covered", "", 1},  {"filler_delay_s", "s", 0},
};

int tb_bench_metric_of_part(int i)
{
    static const int m[TB_TURN_LAT_PARTS] = {TB_BM_EOU,       TB_BM_TTFT,     TB_BM_AGGREGATION,
                                             TB_BM_TTS_QUEUE, TB_BM_TTS_TTFB, TB_BM_PREROLL,
                                             TB_BM_LEAD,      TB_BM_V2V};
    return i >= 0 && i < TB_TURN_LAT_PARTS ? m[i] : -1;
}

const char *tb_bench_metric_name(enum tb_bench_metric m)
{
    return (unsigned)m < TB_BM__COUNT ? metrics[m].name : "?";
}

const char *tb_bench_metric_unit(enum tb_bench_metric m)
{
    return (unsigned)m < TB_BM__COUNT ? metrics[m].unit : "";
}

int tb_bench_metric_higher_better(enum tb_bench_metric m)
{
    return (unsigned)m < TB_BM__COUNT ? metrics[m].higher_better : 0;
}

/* One record's value of a per-request metric (NaN: none). */
static double value(const struct tb_bench_rec *r, enum tb_bench_metric m)
{
    switch (m) {
    case TB_BM_TTFT: return r->ttft;
    case TB_BM_TTFA: return r->ttfa;
    case TB_BM_TPS: return r->decode_tps;
    case TB_BM_TPS_USAGE: return r->decode_tps_usage;
    case TB_BM_UNDERRUNS: return isnan(r->ttfa) ? NAN : (double)r->underruns;
    case TB_BM_GAP_TOTAL: return r->gap_total;
    case TB_BM_GAP_MAX: return r->gap_max;
    /* A what-if needs the whole answer: none for a failed request. */
    case TB_BM_MIN_TPS: return r->error == 0 ? r->min_tps : NAN;
    case TB_BM_SPEEDUP: return r->error == 0 ? r->speedup : NAN;
    case TB_BM_EOU: return r->lat.eou;
    case TB_BM_AGGREGATION: return r->lat.aggregation;
    case TB_BM_TTS_QUEUE: return r->lat.tts_queue;
    case TB_BM_TTS_TTFB: return r->lat.tts_ttfb;
    case TB_BM_PREROLL: return r->lat.preroll;
    case TB_BM_LEAD: return r->lat.lead;
    case TB_BM_V2V: return r->lat.v2v;
    case TB_BM_BARGE_CLOSE:
        return r->interrupted && isfinite(r->cancel_s) ? r->cancel_s - (r->t_start + r->barge_in)
                                                       : NAN;
    case TB_BM_TURN_LATE: return r->call >= 0 ? r->t_start - r->t_sched : NAN;
    case TB_BM_BARGE_TTS_CLOSE: return r->interrupted ? r->barge_tts_close : NAN;
    case TB_BM_BARGE_STOP: return r->interrupted ? r->barge_stop : NAN;
    case TB_BM_TOOL: return r->tool_calls > 0 ? r->tool_s : NAN;
    case TB_BM_TOOL_SILENCE:
        return r->tool_calls > 0 ? r->tool_silence[0] + r->tool_silence[1] + r->tool_silence[2]
                                 : NAN;
    case TB_BM_FILLER_SILENCE:
        return r->tool_calls > 0 && r->filler
                   ? r->filler_silence[0] + r->filler_silence[1] + r->filler_silence[2]
                   : NAN;
    case TB_BM_FILLER_COVERED: return r->tool_calls > 0 && r->filler ? r->filler_covered : NAN;
    case TB_BM_FILLER_DELAY: return r->tool_calls > 0 && r->filler ? r->filler_delay : NAN;
    default: return NAN;
    }
}

/* Whether the caller interrupted the record's turn (barge-in): an ok
 * turn, counted on its own (bench_stats.h). */
static int interrupted(const struct tb_bench_rec *x)
{
    return x->barge && x->interrupted && x->error == 0;
}

/* A barge-in record's part of the level's counts (bench_stats.h): an
 * interrupted turn, judged on what was heard before the interruption. */
static void barge_count(const struct tb_bench_rec *x, const struct tb_bench_slo *slo,
                        struct tb_bench_summary *out)
{
    out->barge = 1;
    out->tokens_unheard += x->tokens_unheard;
    out->chars_unplayed += x->chars_unplayed;
    if (!interrupted(x))
        return;
    out->interrupted++;
    out->interrupted_gapless += !isnan(x->ttfa) && x->underruns == 0;
    out->good_interrupted += slo != NULL && tb_bench_slo_good(slo, x);
}

/* The level's TTS statistics (bench_stats.h): counts summed, samples
 * pooled.  0 or TB_ENOMEM. */
static int tts_summary(const struct tb_bench_recs *r, uint32_t level, struct tb_bench_summary *out)
{
    struct tb_tts_stats *t = &out->tts_stats;
    size_t nfb = 0, nrtf = 0, ncw = 0, sent = 0;
    double *fb, *rtf, *cw;
    for (size_t i = 0; i < r->n; i++) {
        const struct tb_bench_rec *x = &r->v[i];
        if (x->level != level || !x->tts)
            continue;
        out->tts = 1;
        nfb += x->ntts_fb;
        nrtf += x->ntts_rtf;
        ncw += x->ntts_cw;
        t->capacity |= x->tts_cap;
    }
    if (!out->tts)
        return 0;
    fb = malloc((nfb + 1) * sizeof(double));
    rtf = malloc((nrtf + 1) * sizeof(double));
    cw = malloc((ncw + 1) * sizeof(double));
    if (fb == NULL || rtf == NULL || cw == NULL) {
        free(fb);
        free(rtf);
        free(cw);
        return TB_ENOMEM;
    }
    nfb = nrtf = ncw = 0;
    t->audio_s = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct tb_bench_rec *x = &r->v[i];
        if (x->level != level || !x->tts)
            continue;
        if (x->ntts_fb > 0)
            memcpy(fb + nfb, x->tts_fb, x->ntts_fb * sizeof(double));
        if (x->ntts_rtf > 0)
            memcpy(rtf + nrtf, x->tts_rtf, x->ntts_rtf * sizeof(double));
        if (x->ntts_cw > 0)
            memcpy(cw + ncw, x->tts_cw, x->ntts_cw * sizeof(double));
        nfb += x->ntts_fb;
        nrtf += x->ntts_rtf;
        ncw += x->ntts_cw;
        t->chunks += x->tts_chunks;
        t->sent += x->tts_sent;
        t->skipped += x->tts_skipped;
        t->failed += x->tts_failed;
        t->canceled += x->tts_canceled;
        t->chars += x->tts_chars;
        if (x->tts_sent > 0 && !isnan(x->tts_audio_s))
            t->audio_s += x->tts_audio_s;
        sent += x->tts_sent;
    }
    if (sent == 0)
        t->audio_s = NAN;
    tb_stats_of(fb, nfb, &t->first_byte);
    tb_stats_of(rtf, nrtf, &t->rtf);
    tb_stats_of(cw, ncw, &t->cap_wait);
    free(fb);
    free(rtf);
    free(cw);
    return 0;
}

static int cmp_turn(const void *a, const void *b)
{
    const struct tb_bench_rec *x = *(const struct tb_bench_rec *const *)a;
    const struct tb_bench_rec *y = *(const struct tb_bench_rec *const *)b;
    return (x->turn > y->turn) - (x->turn < y->turn);
}

/* One turn's row from its records g[0..n): each block sorts its values,
 * so the order of g does not matter.  v holds n doubles. */
static void turn_row(const struct tb_bench_rec *const *g, size_t n, const struct tb_bench_slo *slo,
                     double *v, struct tb_bench_turn *t)
{
    size_t k;
    memset(t, 0, sizeof(*t));
    t->turn = g[0]->turn;
    t->n = n;
    for (size_t i = 0; i < n; i++) {
        t->ok += g[i]->error == 0;
        t->good += slo != NULL && tb_bench_slo_good(slo, g[i]);
        t->interrupted += (size_t)interrupted(g[i]);
    }
    t->good_share = slo != NULL ? (double)t->good / (double)n : NAN;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(g[i]->ttft))
            v[k++] = g[i]->ttft;
    tb_stats_of(v, k, &t->ttft);
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(g[i]->ttfa))
            v[k++] = g[i]->ttfa;
    tb_stats_of(v, k, &t->ttfa);
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(g[i]->gap_total))
            v[k++] = g[i]->gap_total;
    tb_stats_of(v, k, &t->gap_total);
    for (int p = 0; p < TB_TURN_LAT_PARTS; p++) {
        k = 0;
        for (size_t i = 0; i < n; i++)
            if (!isnan(tb_turn_lat_part(&g[i]->lat, p)))
                v[k++] = tb_turn_lat_part(&g[i]->lat, p);
        tb_stats_of(v, k, &t->lat[p]);
    }
}

/* The level's per-turn table: its call records sorted by turn (pointers;
 * O(n log n)), one row a turn index.  0 or TB_ENOMEM. */
static int turn_summary(const struct tb_bench_recs *r, uint32_t level,
                        const struct tb_bench_slo *slo, struct tb_bench_summary *out)
{
    const struct tb_bench_rec **g;
    double *v;
    size_t n = 0, nt = 0;
    for (size_t i = 0; i < r->n; i++)
        n += r->v[i].level == level && r->v[i].turn >= 0;
    if (n == 0)
        return 0;
    g = malloc(n * sizeof(const struct tb_bench_rec *));
    v = malloc(n * sizeof(*v));
    if (g == NULL || v == NULL) {
        free(g);
        free(v);
        return TB_ENOMEM;
    }
    n = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].level == level && r->v[i].turn >= 0)
            g[n++] = &r->v[i];
    qsort(g, n, sizeof(const struct tb_bench_rec *), cmp_turn);
    for (size_t i = 0; i < n; i++)
        nt += i == 0 || g[i]->turn != g[i - 1]->turn;
    out->by_turn = calloc(nt, sizeof(*out->by_turn));
    if (out->by_turn == NULL) {
        free(g);
        free(v);
        return TB_ENOMEM;
    }
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && g[j]->turn == g[i]->turn; j++)
            ;
        turn_row(g + i, j - i, slo, v, &out->by_turn[out->nturns++]);
    }
    free(g);
    free(v);
    return 0;
}

const char *tb_bench_percentiles(const struct tb_bench_summary *s)
{
    return s->pct_hist ? "histogram (relative error <= 0.28%)" : "exact";
}

void tb_bench_summary_free(struct tb_bench_summary *s)
{
    if (s == NULL)
        return;
    free(s->by_turn);
    s->by_turn = NULL;
    s->nturns = 0;
}

/* The level's refusals and retries (bench_stats.h). */
static int retry_summary(const struct tb_bench_recs *r, uint32_t level,
                         struct tb_bench_summary *out)
{
    double *w;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < r->n; i++)
        cap += r->v[i].level == level ? r->v[i].nretries + 1 : 0; /* + its LLM wait */
    w = malloc((cap > 0 ? cap : 1) * sizeof(*w));
    if (w == NULL)
        return TB_ENOMEM;
    out->retry.wait_total = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct tb_bench_rec *x = &r->v[i];
        if (x->level != level || x->refusals == 0)
            continue;
        out->retry.refused++;
        out->retry.refusals += x->refusals;
        out->retry.retries += x->nretries;
        out->retry.retried_ok += x->error == 0 && x->nretries > 0;
        out->retry.gave_up += x->refusals > x->nretries;
        for (uint32_t k = 0; k < x->nretries; k++) {
            w[n++] = x->retry_wait[k];
            out->retry.wait_total += x->retry_wait[k];
        }
    }
    tb_stats_of(w, n, &out->retry.wait);
    n = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].level == level && !isnan(r->v[i].llm_wait))
            w[n++] = r->v[i].llm_wait;
    out->llm_capacity = n > 0;
    tb_stats_of(w, n, &out->llm_wait);
    free(w);
    return 0;
}

int tb_bench_summarize(const struct tb_bench_recs *r, uint32_t level, struct tb_bench_summary *out)
{
    return tb_bench_summarize_slo(r, level, NULL, out);
}

/* One record's part of the level's counts (not its metrics). */
static void count_rec(const struct tb_bench_rec *x, const struct tb_bench_slo *slo,
                      struct tb_bench_summary *out, double *t0, double *t1)
{
    out->requests++;
    if (x->t_start < *t0)
        *t0 = x->t_start;
    if (x->t_end > *t1)
        *t1 = x->t_end;
    if (x->barge)
        barge_count(x, slo, out);
    if (x->error > 0 && x->error < TB_READER__COUNT) {
        out->errors[x->error]++;
        if (tb_end_class(x->end) == TB_END_CLASS_INCOMPLETE)
            out->incomplete++;
        else
            out->failed++;
        return;
    }
    out->ok++;
    out->events += x->events;
    out->usage_ignored += x->usage_ignored >= 0;
    out->surrogates_replaced += x->surrogates_replaced;
    out->tokens += x->usage_tokens >= 0 ? (uint64_t)x->usage_tokens : x->content_tokens;
    out->heard_whole += (size_t)!interrupted(x);
    if (!isnan(x->ttfa) && x->underruns == 0 && !interrupted(x))
        out->gapless++; /* an interrupted answer was not heard whole */
    out->min_tps_none += x->min_tps_none != 0;
    out->good += slo != NULL && tb_bench_slo_good(slo, x);
}

/* One record's samples of every metric.  0 or TB_ENOMEM. */
static int add_rec(const struct tb_bench_rec *x, struct tb_statacc *m)
{
    int rc = 0;
    for (size_t i = 0; i < x->nitl && rc == 0; i++)
        rc = tb_statacc_add(&m[TB_BM_ITL], x->itl[i]);
    for (int k = 0; k < TB_BM__COUNT && rc == 0; k++)
        if (k != TB_BM_ITL && !isnan(value(x, (enum tb_bench_metric)k)))
            rc = tb_statacc_add(&m[k], value(x, (enum tb_bench_metric)k));
    return rc;
}

/* The counts of a fold added to a level's. */
static void add_counts(struct tb_bench_summary *o, const struct tb_bench_summary *f)
{
    o->requests += f->requests;
    o->ok += f->ok;
    for (int e = 0; e < TB_READER__COUNT; e++)
        o->errors[e] += f->errors[e];
    o->incomplete += f->incomplete;
    o->failed += f->failed;
    o->gapless += f->gapless;
    o->min_tps_none += f->min_tps_none;
    o->events += f->events;
    o->tokens += f->tokens;
    o->usage_ignored += f->usage_ignored;
    o->surrogates_replaced += f->surrogates_replaced;
    o->heard_whole += f->heard_whole;
    o->good += f->good;
}

/* r's fold of `level`, or NULL. */
static struct tb_bench_fold *fold_of(const struct tb_bench_recs *r, uint32_t level)
{
    for (size_t i = 0; i < r->nfolds; i++)
        if (r->folds[i].level == level)
            return &r->folds[i];
    return NULL;
}

/* The level's counts and metric samples: its fold's, then its records'.
 * 0 or TB_ENOMEM. */
static int gather(const struct tb_bench_recs *r, uint32_t level, const struct tb_bench_slo *slo,
                  struct tb_statacc *m, struct tb_bench_summary *out, double *t0, double *t1)
{
    const struct tb_bench_fold *f = fold_of(r, level);
    int rc = 0;
    if (f != NULL) {
        add_counts(out, &f->s);
        *t0 = f->t0;
        *t1 = f->t1;
        for (int k = 0; k < TB_BM__COUNT && rc == 0; k++)
            rc = tb_statacc_merge(&m[k], &f->m[k]);
    }
    for (size_t i = 0; i < r->n && rc == 0; i++) {
        if (r->v[i].level != level)
            continue;
        count_rec(&r->v[i], slo, out, t0, t1);
        rc = add_rec(&r->v[i], m);
    }
    return rc;
}

int tb_bench_summarize_slo(const struct tb_bench_recs *r, uint32_t level,
                           const struct tb_bench_slo *slo, struct tb_bench_summary *out)
{
    struct tb_statacc m[TB_BM__COUNT];
    double t0 = INFINITY, t1 = -INFINITY;
    int rc;

    memset(out, 0, sizeof(*out));
    if (slo != NULL && slo->set == 0)
        slo = NULL;
    for (int k = 0; k < TB_BM__COUNT; k++)
        tb_statacc_init(&m[k]);
    rc = gather(r, level, slo, m, out, &t0, &t1);
    for (int k = 0; k < TB_BM__COUNT; k++) {
        out->pct_hist |= !tb_statacc_exact(&m[k]);
        tb_statacc_stats(&m[k], &out->m[k]);
        tb_statacc_free(&m[k]);
    }
    if (rc != 0 || tts_summary(r, level, out) != 0 || turn_summary(r, level, slo, out) != 0 ||
        retry_summary(r, level, out) != 0) {
        tb_bench_summary_free(out);
        return TB_ENOMEM;
    }
    out->gapless_share = out->heard_whole > 0 ? (double)out->gapless / (double)out->heard_whole : 0;
    out->interrupted_share =
        out->requests > 0 ? (double)out->interrupted / (double)out->requests : 0;
    out->success_share = out->requests > 0 ? (double)out->ok / (double)out->requests : 0;
    out->span = out->requests > 0 && t1 > t0 ? t1 - t0 : 0;
    out->system_tps = out->span > 0 ? (double)out->tokens / out->span : 0;
    out->slo = slo != NULL;
    out->good_share =
        slo != NULL && out->requests > 0 ? (double)out->good / (double)out->requests : NAN;
    out->good_per_s = slo != NULL && out->span > 0 ? (double)out->good / out->span : NAN;
    return 0;
}

/* r's fold of `level`, added if it has none.  NULL: out of memory. */
static struct tb_bench_fold *fold_at(struct tb_bench_recs *r, uint32_t level)
{
    struct tb_bench_fold *f = fold_of(r, level), *nv;
    if (f != NULL)
        return f;
    nv = realloc(r->folds, (r->nfolds + 1) * sizeof(*nv));
    if (nv == NULL)
        return NULL;
    r->folds = nv;
    f = &nv[r->nfolds++];
    memset(f, 0, sizeof(*f));
    f->level = level;
    f->t0 = INFINITY;
    f->t1 = -INFINITY;
    for (int k = 0; k < TB_BM__COUNT; k++)
        tb_statacc_init(&f->m[k]);
    return f;
}

int tb_bench_recs_fold(struct tb_bench_recs *r, const struct tb_bench_slo *slo)
{
    const struct tb_bench_rec *x = r->n > 0 ? &r->v[r->n - 1] : NULL;
    struct tb_bench_fold *f;
    if (x == NULL || x->error != 0 || x->call >= 0 || x->barge || x->tts)
        return TB_EINVAL;
    if (slo != NULL && slo->set == 0)
        slo = NULL;
    f = fold_at(r, x->level);
    /* TB_ENOMEM stops the run: the record is kept, its samples may be
     * part in the fold */
    if (f == NULL || add_rec(x, f->m) != 0)
        return TB_ENOMEM;
    count_rec(x, slo, &f->s, &f->t0, &f->t1);
    if (x->warning[0] != '\0' && f->warned++ == 0)
        snprintf(f->warning, sizeof(f->warning), "%s", x->warning);
    tb_bench_recs_pop(r);
    return 0;
}

int tb_bench_folds_move(struct tb_bench_recs *dst, struct tb_bench_recs *src)
{
    int rc = 0;
    for (size_t i = 0; i < src->nfolds && rc == 0; i++) {
        const struct tb_bench_fold *g = &src->folds[i];
        struct tb_bench_fold *f = fold_at(dst, g->level);
        if (f == NULL)
            return TB_ENOMEM;
        add_counts(&f->s, &g->s);
        f->t0 = g->t0 < f->t0 ? g->t0 : f->t0;
        f->t1 = g->t1 > f->t1 ? g->t1 : f->t1;
        if (g->warned > 0 && f->warned == 0)
            memcpy(f->warning, g->warning, sizeof(f->warning));
        f->warned += g->warned;
        for (int k = 0; k < TB_BM__COUNT && rc == 0; k++)
            rc = tb_statacc_merge(&f->m[k], &g->m[k]);
    }
    tb_bench_folds_free(src);
    return rc;
}

void tb_bench_folds_free(struct tb_bench_recs *r)
{
    for (size_t i = 0; i < r->nfolds; i++)
        for (int k = 0; k < TB_BM__COUNT; k++)
            tb_statacc_free(&r->folds[i].m[k]);
    free(r->folds);
    r->folds = NULL;
    r->nfolds = 0;
}

void tb_bench_recs_count(const struct tb_bench_recs *r, size_t *n, size_t *ok, size_t *nomem)
{
    *n = r->n;
    *ok = *nomem = 0;
    for (size_t i = 0; i < r->n; i++) {
        *ok += r->v[i].error == 0;
        *nomem += r->v[i].error == TB_READER_NOMEM;
    }
    for (size_t i = 0; i < r->nfolds; i++) { /* folded records are ok */
        *n += r->folds[i].s.requests;
        *ok += r->folds[i].s.ok;
    }
}
