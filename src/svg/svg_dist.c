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

/* The legend under the plot, one entry a series, wrapped. */
static void legend(FILE *f, const struct tb_svg_series *s, size_t ns, double y)
{
    double x = PX0;
    for (size_t i = 0; i < ns; i++) {
        if (x > PX1 - 120) {
            x = PX0;
            y += 16;
        }
        x = tb_svg_legend(f, x, y, "line", tb_svg_palette[s[i].color % NPALETTE], s[i].name);
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
            fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"M%.2f %.2f", col,
                    PX0 + (v[i][0] - lo) * sc, D_YB);
            for (size_t k = 0; k < n[i]; k++) {
                double x = PX0 + (v[i][k] - lo) * sc;
                y = D_YB - (double)(k + 1) / (double)n[i] * (D_YB - D_YT);
                fprintf(f, " H%.2f V%.2f", x, y);
            }
            fprintf(f, " H%.2f\"/>\n", PX1);
        }
        fputs("</g>\n", f);
    }
    legend(f, s, ns, D_YB + 56);
    fputs("</svg>\n", f);
    for (size_t i = 0; i < ns; i++)
        free(v[i]);
    free(v);
    free(n);
    return ferror(f) ? TB_EIO : 0;
}

int tb_svg_categories(FILE *f, const char *title, const char *ylabel, const char *const *cat,
                      size_t ncat, const struct tb_svg_series *s, size_t ns, double v0, double v1)
{
    double step = ncat > 0 ? (PX1 - PX0) / (double)ncat : PX1 - PX0;
    tb_svg_header(f, D_H + 16.0 * (double)(ns / 6), title, "data-chart=\"levels\"");
    fprintf(f, "<text x=\"%.2f\" y=\"30\" %s font-size=\"13\" fill=\"#222\">", PX0, FONT);
    tb_svg_esc(f, title);
    fputs("</text>\n", f);
    tb_svg_y_axis(f, D_YB, D_YT, v0, v1, ylabel, "", 1);
    /* The categories are names, not numbers: one slot each, the name
     * under its middle. */
    fprintf(f, "<g %s font-size=\"11\" fill=\"#333\">\n", FONT);
    fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n", PX0,
            D_YB, PX1, D_YB);
    for (size_t c = 0; c < ncat; c++) {
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
                PX0 + step * ((double)c + 0.5), D_YB + 16);
        tb_svg_esc(f, cat[c]);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);
    for (size_t i = 0; i < ns; i++) {
        const char *col = tb_svg_palette[s[i].color % NPALETTE];
        int open = 0;
        fprintf(f, "<g class=\"series\" data-run=\"");
        tb_svg_esc(f, s[i].name);
        fputs("\"><title>", f);
        tb_svg_esc(f, s[i].name);
        fputs("</title>\n", f);
        /* A line through the levels the run measured; a level it did not
         * (NaN) breaks the line and has no mark: never drawn as 0.  A
         * level alone between two breaks is its mark only. */
        for (size_t c = 0; c < ncat && c < s[i].n; c++) {
            double x = PX0 + step * ((double)c + 0.5), val = s[i].v[c], y;
            int next = c + 1 < ncat && c + 1 < s[i].n && isfinite(s[i].v[c + 1]);
            if (!isfinite(val))
                continue;
            y = D_YB - (val - v0) / (v1 - v0) * (D_YB - D_YT);
            if (open)
                fprintf(f, " L%.2f %.2f", x, y);
            else if (next)
                fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"M%.2f %.2f",
                        col, x, y);
            open = next;
            if (!next && c > 0 && isfinite(s[i].v[c - 1]))
                fputs("\"/>\n", f);
        }
        for (size_t c = 0; c < ncat && c < s[i].n; c++) {
            double x = PX0 + step * ((double)c + 0.5), val = s[i].v[c];
            if (!isfinite(val))
                continue;
            fprintf(f,
                    "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\" data-v=\"%.17g\">"
                    "<title>",
                    x, D_YB - (val - v0) / (v1 - v0) * (D_YB - D_YT), col, val);
            tb_svg_esc(f, s[i].name);
            fputs(", ", f);
            tb_svg_esc(f, cat[c]);
            fprintf(f, ": %.4g</title></circle>\n", val);
        }
        fputs("</g>\n", f);
    }
    legend(f, s, ns, D_YB + 56);
    fputs("</svg>\n", f);
    return ferror(f) ? TB_EIO : 0;
}
