/*
 * draws.c - a stream replayed under many draws of a random TTS latency
 * (see draws.h): one playout engine reused for every draw, the per-draw
 * numbers in five arrays, the statistics block over each.
 */
#include "ttsbuf/draws.h"

#include <math.h>
#include <stdlib.h>

#include "ttsbuf/error.h"

int tb_draws_gapless_preroll(const struct tb_chunks *c, struct tb_playout *p,
                             const struct tb_playout_opts *o, double *out)
{
    struct tb_playout_result r;
    int rc;
    if (c->n == 0)
        return TB_EINVAL;
    rc = tb_analyze_schedule(c, p, o, &r);
    return rc != 0 ? rc : tb_playout_gapless_preroll(p, out);
}

/* The per-draw numbers: one array each. */
enum { V_UNDER, V_GAP, V_TTFA, V_V2V, V_TPS, V_PRE, V__N };

int tb_draws_run(const struct tb_chunks *c, const struct tb_playout_opts *o,
                 const struct tb_ttslat *lat, const struct tb_draws_opts *d,
                 tb_draws_progress_fn fn, void *ud, struct tb_draws_result *out)
{
    struct tb_playout_opts po = *o;
    struct tb_ttslat_seeded view;
    struct tb_playout *p = NULL;
    double *v[V__N] = {NULL};
    size_t ntps = 0;
    int rc;
    if (c->n == 0 || d->draws < 1 || d->draws > TB_DRAWS_MAX || !(d->target > 0.0) ||
        d->target > 1.0 || lat == NULL)
        return TB_EINVAL;
    *out = (struct tb_draws_result){.draws = d->draws, .target = d->target};
    po.tts_latency_at = tb_ttslat_seeded_at;
    po.tts_latency_ud = &view;
    tb_ttslat_seeded_init(&view, lat, d->seed);
    rc = tb_playout_create(&po, NULL, NULL, &p);
    for (int k = 0; rc == 0 && k < V__N; k++)
        if ((v[k] = malloc(d->draws * sizeof(double))) == NULL)
            rc = TB_ENOMEM;
    for (size_t i = 0; rc == 0 && i < d->draws; i++) {
        struct tb_playout_result r;
        uint64_t seed = tb_ttslat_draw_seed(d->seed, i);
        tb_ttslat_seeded_init(&view, lat, seed);
        rc = tb_analyze_playout(c, p, &po, &r);
        if (rc == 0) /* the same chunks, replayed at each pre-roll tried */
            rc = tb_playout_gapless_preroll(p, &v[V_PRE][i]);
        if (rc != 0)
            break;
        v[V_UNDER][i] = (double)r.underruns;
        v[V_GAP][i] = r.gap_total;
        v[V_TTFA][i] = r.ttfa;
        v[V_V2V][i] = r.ttfa + d->wait;
        out->gapless += r.underruns == 0;
        if (r.min_tps_none) {
            out->min_tps_none++;
        } else {
            v[V_TPS][ntps++] = r.min_tps;
            out->min_tps_scan += r.min_tps_method == TB_MIN_TPS_SCAN;
        }
        if (i == 0 || r.gap_total > out->worst_gap_total) {
            out->worst = i;
            out->worst_seed = seed;
            out->worst_gap_total = r.gap_total;
        }
        if (fn != NULL)
            fn(ud, i + 1, d->draws);
    }
    if (rc == 0) {
        tb_stats_of(v[V_UNDER], d->draws, &out->underruns);
        tb_stats_of(v[V_GAP], d->draws, &out->gap_total);
        if (d->wait > 0.0)
            tb_stats_of(v[V_V2V], d->draws, &out->v2v);
        tb_stats_of(v[V_TTFA], d->draws, &out->ttfa);
        tb_stats_of(v[V_TPS], ntps, &out->min_tps);
        tb_stats_of(v[V_PRE], d->draws, &out->preroll); /* sorts them */
        out->preroll_for_target = tb_stats_rank(v[V_PRE], d->draws, d->target);
    }
    for (int k = 0; k < V__N; k++)
        free(v[k]);
    tb_playout_destroy(p);
    return rc;
}
