/*
 * svg_dist.c - several runs side by side as standalone SVG (svg.h): the
 * cumulative distribution of one quantity per run, and one value per
 * category (a load level) per run.  `ttsbuf compare --html` draws them.
 *
 * Each run is one <g class="series" data-run="NAME"> with a <title>, so
 * that a test can count the series and a reader hovering one sees whose
 * it is.  The distribution is drawn as the empirical CDF: a step up of
 * 1/n at each sorted value, exactly what the samples say, with no
 * smoothing between them.  Sorting copies the values: O(n log n) per
 * series, fine for the few thousand streams of a bench run.
 */
#include "ttsbuf/svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg_priv.h"
#include "ttsbuf/error.h"

#define D_YT 50.0
#define D_YB 270.0
#define D_H 340.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The series' finite values, sorted, in a new array (*n of them); NULL
 * with *n 0 when there is none, or when out of memory (*oom set). */
static double *sorted_finite(const struct tb_svg_series *s, size_t *n, int *oom)
{
    double *v;
    *n = 0;
    if (s->n == 0)
        return NULL;
    v = malloc(s->n * sizeof(*v));
    if (v == NULL) {
        *oom = 1;
        return NULL;
    }
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(s->v[i]))
            v[(*n)++] = s->v[i];
    qsort(v, *n, sizeof(*v), cmp_double);
    return v;
}

/* The index of an earlier series with the same values as series i (as
 * drawn: the same finite values in the same order), or ns when none. */
static size_t twin_of(const double *const *v, const size_t *n, size_t i)
{
    for (size_t k = 0; k < i; k++) {
        size_t j = 0;
        if (n[k] != n[i])
            continue;
        while (j < n[i] && (v[k][j] == v[i][j] || (isnan(v[k][j]) && isnan(v[i][j]))))
            j++;
        if (j == n[i])
            return k;
    }
    return (size_t)-1;
}

/* The legend under the plot, one entry a series, wrapped: each with its
 * line's colour and dash pattern, and a series hidden behind an earlier
 * one with the same values says so ("b (same as a)"). */
static void legend(FILE *f, const struct tb_svg_series *s, size_t ns, const double *const *v,
                   const size_t *n, double y)
{
    double x = PX0;
    for (size_t i = 0; i < ns; i++) {
        size_t twin = twin_of(v, n, i), c = s[i].color % NPALETTE;
        double w = 6.2 * (double)(strlen(s[i].name) + (twin < ns ? strlen(s[twin].name) + 10 : 0));
        if (x > PX0 && x + 41 + w > PX1) {
            x = PX0;
            y += 16;
        }
        fprintf(f,
                "<g class=\"legend\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/><text x=\"%.2f\" "
                "y=\"%.2f\" %s font-size=\"11\" fill=\"#333\">",
                x, y - 4, x + 22, y - 4, tb_svg_palette[c], tb_svg_dashes[c], x + 27, y, FONT);
        tb_svg_esc(f, s[i].name);
        if (twin < ns) {
            fputs(" (same as ", f);
            tb_svg_esc(f, s[twin].name);
            fputs(")", f);
        }
        fputs("</text></g>\n", f);
        x += 41 + w;
    }
}

int tb_svg_cdf(FILE *f, const char *title, const char *xlabel, const struct tb_svg_series *s,
               size_t ns)
{
    double lo = INFINITY, hi = -INFINITY, sc;
    double **v = calloc(ns > 0 ? ns : 1, sizeof(*v));
    size_t *n = calloc(ns > 0 ? ns : 1, sizeof(*n));
    int oom = v == NULL || n == NULL;
    for (size_t i = 0; !oom && i < ns; i++) {
        v[i] = sorted_finite(&s[i], &n[i], &oom);
        if (n[i] > 0) {
            lo = v[i][0] < lo ? v[i][0] : lo;
            hi = v[i][n[i] - 1] > hi ? v[i][n[i] - 1] : hi;
        }
    }
    if (oom) {
        for (size_t i = 0; v != NULL && i < ns; i++)
            free(v[i]);
        free(v);
        free(n);
        return TB_ENOMEM;
    }
    /* The axis from 0 (a time or a length is never below it) to the
     * largest sample; one of 1 s when nothing was measured. */
    lo = isfinite(lo) && lo < 0.0 ? lo : 0.0;
    hi = isfinite(hi) && hi > lo ? hi * 1.05 : lo + 1.0;
    sc = (PX1 - PX0) / (hi - lo);
    tb_svg_header(f, D_H + 16.0 * (double)(ns / 6), title, "data-chart=\"cdf\"");
    fprintf(f, "<text x=\"%.2f\" y=\"30\" %s font-size=\"13\" fill=\"#222\">", PX0, FONT);
    tb_svg_esc(f, title);
    fputs("</text>\n", f);
    tb_svg_y_axis(f, D_YB, D_YT, 0.0, 100.0, "streams at or below (%)", "", 1);
    tb_svg_x_axis(f, D_YB, lo, hi, xlabel, "");
    for (size_t i = 0; i < ns; i++) {
        const char *col = tb_svg_palette[s[i].color % NPALETTE];
        fprintf(f, "<g class=\"series\" data-run=\"");
        tb_svg_esc(f, s[i].name);
        fprintf(f, "\" data-n=\"%zu\"><title>", n[i]);
        tb_svg_esc(f, s[i].name);
        fprintf(f, ": %zu stream%s</title>\n", n[i], n[i] == 1 ? "" : "s");
        if (n[i] > 0) {
            double y = D_YB;
            fprintf(f,
                    "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                    "stroke-dasharray=\"%s\" d=\"M%.2f %.2f",
                    col, tb_svg_dashes[s[i].color % NPALETTE], PX0 + (v[i][0] - lo) * sc, D_YB);
            for (size_t k = 0; k < n[i]; k++) {
                double x = PX0 + (v[i][k] - lo) * sc;
                y = D_YB - (double)(k + 1) / (double)n[i] * (D_YB - D_YT);
                fprintf(f, " H%.2f V%.2f", x, y);
            }
            fprintf(f, " H%.2f\"/>\n", PX1);
        }
        fputs("</g>\n", f);
    }
    legend(f, s, ns, (const double *const *)v, n, D_YB + 56);
    fputs("</svg>\n", f);
    for (size_t i = 0; i < ns; i++)
        free(v[i]);
    free(v);
    free(n);
    return ferror(f) ? TB_EIO : 0;
}

/* Series i's points sit this far right of their category's middle, so
 * that series with the same value at a category stay visible side by
 * side (3 px apart, centred on the middle). */
static double offset(size_t i, size_t ns)
{
    return ((double)i - (double)(ns - 1) / 2.0) * 3.0;
}

/* Series i's line through the categories it measured; a category it did
 * not (NaN) breaks the line and has no mark: never drawn as 0.  A
 * category alone between two breaks is its mark only. */
static void category_line(FILE *f, const struct tb_svg_cats *c, const struct tb_svg_series *s,
                          size_t i, size_t ns)
{
    const char *col = tb_svg_palette[s[i].color % NPALETTE];
    double step = c->ncat > 0 ? (PX1 - PX0) / (double)c->ncat : PX1 - PX0;
    int open = 0;
    for (size_t k = 0; k < c->ncat && k < s[i].n; k++) {
        double x = PX0 + step * ((double)k + 0.5) + offset(i, ns), val = s[i].v[k], y;
        int next = k + 1 < c->ncat && k + 1 < s[i].n && isfinite(s[i].v[k + 1]);
        if (!isfinite(val))
            continue;
        y = D_YB - (val - c->v0) / (c->v1 - c->v0) * (D_YB - D_YT);
        if (open)
            fprintf(f, " L%.2f %.2f", x, y);
        else if (next)
            fprintf(f,
                    "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                    "stroke-dasharray=\"%s\" d=\"M%.2f %.2f",
                    col, tb_svg_dashes[s[i].color % NPALETTE], x, y);
        open = next;
        if (!next && k > 0 && isfinite(s[i].v[k - 1]))
            fputs("\"/>\n", f);
    }
    for (size_t k = 0; k < c->ncat && k < s[i].n; k++) {
        double x = PX0 + step * ((double)k + 0.5) + offset(i, ns), val = s[i].v[k];
        if (!isfinite(val))
            continue;
        fprintf(f,
                "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\" data-v=\"%.17g\">"
                "<title>",
                x, D_YB - (val - c->v0) / (c->v1 - c->v0) * (D_YB - D_YT), col, val);
        tb_svg_esc(f, s[i].name);
        fputs(", ", f);
        tb_svg_esc(f, c->cat[k]);
        fprintf(f, ": %.4g</title></circle>\n", val);
    }
}

int tb_svg_categories(FILE *f, const struct tb_svg_cats *c, const struct tb_svg_series *s,
                      size_t ns)
{
    double step = c->ncat > 0 ? (PX1 - PX0) / (double)c->ncat : PX1 - PX0;
    const double **v = calloc(ns > 0 ? ns : 1, sizeof(*v));
    size_t *n = calloc(ns > 0 ? ns : 1, sizeof(*n));
    char kind[64];
    if (v == NULL || n == NULL) {
        free(v);
        free(n);
        return TB_ENOMEM;
    }
    snprintf(kind, sizeof(kind), "data-chart=\"%s\"", c->kind);
    tb_svg_header(f, D_H + 16.0 * (double)(ns / 6), c->title, kind);
    fprintf(f, "<text x=\"%.2f\" y=\"30\" %s font-size=\"13\" fill=\"#222\">", PX0, FONT);
    tb_svg_esc(f, c->title);
    fputs("</text>\n", f);
    tb_svg_y_axis(f, D_YB, D_YT, c->v0, c->v1, c->ylabel, "", 1);
    /* The categories are names, not numbers: one slot each, the name
     * under its middle. */
    fprintf(f, "<g %s font-size=\"11\" fill=\"#333\">\n", FONT);
    fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n", PX0,
            D_YB, PX1, D_YB);
    for (size_t k = 0; k < c->ncat; k++) {
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
                PX0 + step * ((double)k + 0.5), D_YB + 16);
        tb_svg_esc(f, c->cat[k]);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);
    for (size_t i = 0; i < ns; i++) {
        v[i] = s[i].v;
        n[i] = s[i].n < c->ncat ? s[i].n : c->ncat;
        fprintf(f, "<g class=\"series\" data-run=\"");
        tb_svg_esc(f, s[i].name);
        fputs("\"><title>", f);
        tb_svg_esc(f, s[i].name);
        fputs("</title>\n", f);
        category_line(f, c, s, i, ns);
        fputs("</g>\n", f);
    }
    legend(f, s, ns, v, n, D_YB + 56);
    fputs("</svg>\n", f);
    free(v);
    free(n);
    return ferror(f) ? TB_EIO : 0;
}
