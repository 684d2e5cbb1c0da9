/*
 * compare_html.c - `ttsbuf compare --html` (compare.h): one page, the
 * table and the JSON document, then the charts: the gapless share and
 * goodput per level, and per level the cumulative distribution of first
 * audio and of silence and, for calls, first audio by turn; a line a run
 * (svg.h: lines that coincide stay visible).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"
#include "cli.h"
#include "compare_html.h"
#include "compare_rows.h"
#include "html_report.h"
#include "outputs.h"
#include "ttsbuf/error.h"
#include "ttsbuf/svg.h"

/* The values of one metric of run r's records at level k (NaN where the
 * summary has none: the same samples as its statistics block). */
static double *level_values(const struct tb_cli_compare *x, size_t k, size_t r,
                            enum tb_bench_metric mt, size_t *n)
{
    const struct tb_bench_recs *rs = &x->run[r].recs;
    int li = tb_cli_compare_sum(x, k, r) != NULL ? x->lidx[k * x->nrun + r] : -1;
    double *v = malloc((rs->n + 1) * sizeof(*v));
    *n = 0;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; li >= 0 && i < rs->n; i++) {
        const struct tb_bench_rec *e = &rs->v[i];
        if (e->level != (uint32_t)li)
            continue;
        v[(*n)++] = mt == TB_BM_TTFA ? e->ttfa : e->gap_total;
    }
    return v;
}

/* The CDF of one metric at level k, a line a run that ran it. */
static int cdf_figure(FILE *f, const struct tb_cli_compare *x, size_t k, enum tb_bench_metric mt)
{
    struct tb_svg_series s[TB_CLI_CMP_RUNS_MAX];
    double *v[TB_CLI_CMP_RUNS_MAX] = {NULL};
    size_t ns = 0;
    char title[160];
    int rc = 0;
    for (size_t r = 0; r < x->nrun; r++) {
        if (tb_cli_compare_sum(x, k, r) == NULL)
            continue;
        v[ns] = level_values(x, k, r, mt, &s[ns].n);
        if (v[ns] == NULL) {
            rc = TB_ENOMEM;
            break;
        }
        s[ns].v = v[ns];
        s[ns].name = x->run[r].label;
        s[ns].color = r;
        ns++;
    }
    snprintf(title, sizeof(title), "%s at %s: cumulative distribution, one line a run",
             mt == TB_BM_TTFA ? "First audio (ttfa_s)" : "Silence per stream (gap_total_s)",
             x->levels[k]);
    if (rc == 0) {
        char *svg = NULL;
        size_t len = 0;
        FILE *m = tb_cli_html_mem(&svg, &len);
        rc = m == NULL ? TB_ENOMEM
                       : tb_svg_cdf(m, title, mt == TB_BM_TTFA ? "first audio (s)" : "silence (s)",
                                    s, ns);
        if (m != NULL && fclose(m) != 0 && rc == 0)
            rc = TB_ENOMEM;
        if (rc == 0)
            tb_cli_html_svg(f, svg, len);
        free(svg);
    }
    for (size_t i = 0; i < ns; i++)
        free(v[i]);
    return rc;
}

/* A share per level, a line a run: the gapless share, or (goodput) the
 * share of requests within the run's SLOs (a run without SLOs has no
 * points). */
/* A chart of one value per category and series, drawn into the page. */
static int categories_figure(FILE *f, const struct tb_svg_cats *c, const struct tb_svg_series *s,
                             size_t ns)
{
    char *svg = NULL;
    size_t len = 0;
    FILE *m = tb_cli_html_mem(&svg, &len);
    int rc = m == NULL ? TB_ENOMEM : tb_svg_categories(m, c, s, ns);
    if (m != NULL && fclose(m) != 0 && rc == 0)
        rc = TB_ENOMEM;
    if (rc == 0)
        tb_cli_html_svg(f, svg, len);
    free(svg);
    return rc;
}

/* A share per level, a line a run: the gapless share (of the turns heard
 * to their end), or (goodput) the share of requests within the run's SLOs
 * (a run without SLOs has no points). */
static int levels_figure(FILE *f, const struct tb_cli_compare *x, int goodput)
{
    struct tb_svg_series s[TB_CLI_CMP_RUNS_MAX];
    const char *cat[TB_BENCH_LEVELS_MAX * TB_CLI_CMP_RUNS_MAX];
    struct tb_svg_cats c = {"levels",
                            goodput ? "Goodput per level (requests within the SLOs), a line a run"
                                    : "Gapless share per level, a line a run",
                            goodput ? "good requests (%)" : "streams with no gap (%)",
                            cat,
                            x->nlevels,
                            0.0,
                            100.0};
    double *v = malloc((x->nlevels * x->nrun + 1) * sizeof(*v));
    int rc;
    if (v == NULL)
        return TB_ENOMEM;
    for (size_t k = 0; k < x->nlevels; k++)
        cat[k] = x->levels[k];
    for (size_t r = 0; r < x->nrun; r++) {
        for (size_t k = 0; k < x->nlevels; k++) {
            const struct tb_bench_summary *sm = tb_cli_compare_sum(x, k, r);
            v[r * x->nlevels + k] = sm == NULL ? NAN
                                    : goodput  ? 100.0 * sm->good_share
                                               : 100.0 * tb_cli_bench_gapless(sm);
        }
        s[r].name = x->run[r].label;
        s[r].v = v + r * x->nlevels;
        s[r].n = x->nlevels;
        s[r].color = r;
    }
    rc = categories_figure(f, &c, s, x->nrun);
    free(v);
    return rc;
}

/* Level k's first audio (P95) by turn index, a line a run that has turns
 * there: how first audio grows with the context.  Nothing when no run
 * has turns at k. */
static int turns_figure(FILE *f, const struct tb_cli_compare *x, size_t k)
{
    struct tb_svg_series s[TB_CLI_CMP_RUNS_MAX];
    char title[160], (*names)[32] = NULL;
    const char **cat = NULL;
    double *v = NULL, hi = 0;
    size_t nt = 0, ns = 0;
    int rc = 0;
    for (size_t r = 0; r < x->nrun; r++) {
        const struct tb_bench_summary *sm = tb_cli_compare_sum(x, k, r);
        for (size_t i = 0; sm != NULL && i < sm->nturns; i++)
            if ((size_t)sm->by_turn[i].turn + 1 > nt)
                nt = (size_t)sm->by_turn[i].turn + 1;
    }
    if (nt == 0)
        return 0;
    names = calloc(nt, sizeof(*names));
    cat = calloc(nt, sizeof(*cat));
    v = malloc(nt * x->nrun * sizeof(*v));
    if (names == NULL || cat == NULL || v == NULL) {
        rc = TB_ENOMEM;
        goto out;
    }
    for (size_t t = 0; t < nt; t++) {
        snprintf(names[t], sizeof(names[t]), "turn %zu", t);
        cat[t] = names[t];
    }
    for (size_t r = 0; r < x->nrun; r++) {
        const struct tb_bench_summary *sm = tb_cli_compare_sum(x, k, r);
        double *row = v + ns * nt;
        if (sm == NULL || sm->nturns == 0)
            continue;
        for (size_t t = 0; t < nt; t++)
            row[t] = NAN;
        for (size_t i = 0; i < sm->nturns; i++) {
            const struct tb_stats *st = &sm->by_turn[i].ttfa;
            row[sm->by_turn[i].turn] = st->count > 0 ? st->p95 : NAN;
            hi = st->count > 0 && st->p95 > hi ? st->p95 : hi;
        }
        s[ns].name = x->run[r].label;
        s[ns].v = row;
        s[ns].n = nt;
        s[ns].color = r;
        ns++;
    }
    snprintf(title, sizeof(title), "First audio P95 by turn at %s, a line a run", x->levels[k]);
    {
        struct tb_svg_cats c = {"turns", title, "first audio P95 (s)",   cat,
                                nt,      0.0,   hi > 0 ? hi * 1.05 : 1.0};
        rc = categories_figure(f, &c, s, ns);
    }
out:
    free(names);
    free(cat);
    free(v);
    return rc;
}

/* Whether any run carries SLOs (its goodput can be drawn). */
static int any_slo(const struct tb_cli_compare *x)
{
    for (size_t r = 0; r < x->nrun; r++)
        if (x->run[r].meta.slo.set != 0)
            return 1;
    return 0;
}

/* The charts: per level, then each level's distributions and turns. */
static int figures(FILE *f, const struct tb_cli_compare *x)
{
    int rc;
    fputs("<h2>Per level</h2>\n", f);
    rc = levels_figure(f, x, 0);
    if (rc == 0 && any_slo(x))
        rc = levels_figure(f, x, 1);
    else if (rc == 0)
        fputs("<p class=\"note\">Goodput needs SLOs (bench --slo), which none of these runs "
              "carries: not drawn.</p>\n",
              f);
    for (size_t k = 0; rc == 0 && k < x->nlevels; k++) {
        fputs("<h2>", f);
        tb_cli_html_text(f, x->levels[k]);
        fputs("</h2>\n", f);
        rc = cdf_figure(f, x, k, TB_BM_TTFA);
        if (rc == 0)
            rc = cdf_figure(f, x, k, TB_BM_GAP_TOTAL);
        if (rc == 0)
            rc = turns_figure(f, x, k);
    }
    return rc;
}

int tb_cli_compare_html(const struct tb_cli_compare *x, const char *json)
{
    char *rep = NULL;
    size_t replen;
    int rc = 0;
    FILE *m = tb_cli_html_mem(&rep, &replen), *f;
    if (m == NULL) {
        tb_cli_error("--html: out of memory");
        return TB_ENOMEM;
    }
    tb_cli_compare_human(m, x);
    if (fclose(m) != 0) {
        free(rep);
        tb_cli_error("--html: out of memory");
        return TB_ENOMEM;
    }
    f = tb_cli_output_open("--html", x->html, &rc);
    if (f == NULL) {
        free(rep);
        return rc;
    }
    tb_cli_html_begin(f, "compare", "ttsbuf compare");
    fputs("<pre id=\"report\">", f);
    tb_cli_html_text(f, rep);
    fputs("</pre>\n", f);
    free(rep);
    tb_cli_html_json(f, "result", json);
    rc = figures(f, x);
    tb_cli_html_end(f);
    if (rc != 0) {
        fclose(f);
        tb_cli_error("--html: %s", tb_strerror(rc));
        return rc;
    }
    return tb_cli_out_close("--html", x->html, f, ferror(f) ? TB_EIO : 0);
}
