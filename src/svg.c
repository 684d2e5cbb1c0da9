/*
 * svg.c - the timeline and sweep pictures as standalone SVG (svg.h).
 *
 * Plain fprintf into the caller's FILE: the format is ours, small and
 * fixed, so no XML library is needed; every piece of outside text goes
 * through esc().  Coordinates are printed with two decimals.  Fonts are
 * the generic "sans-serif" family, so nothing is fetched.
 */
#include "ttsbuf/svg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"
#include "ttsbuf/segment.h"
#include "ttsbuf/voice.h"

#define W 960.0
#define ML 80.0 /* left margin: lane labels and the y axis */
#define MR 30.0 /* right margin */
#define PX0 ML  /* plot's left edge */
#define PX1 (W - MR)
#define GAP_FILL "#d62728"
#define FONT "font-family=\"sans-serif\""

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#bcbd22",
                                      "#7f7f7f", "#393b79", "#637939", "#843c39"};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

/* Text with XML's five specials escaped; control bytes dropped. */
static void esc(FILE *f, const char *s)
{
    for (; s != NULL && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (c >= 0x20 || c == '\t')
                fputc(c, f);
        }
    }
}

/* A step of 1, 2 or 5 x 10^k giving at most `most` ticks over span. */
static double nice_step(double span, int most)
{
    double raw = span / most, p = pow(10.0, floor(log10(raw))), m = raw / p;
    if (!(span > 0.0))
        return 1.0;
    return (m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0) * p;
}

static void header(FILE *f, double h, const char *title, const char *extra)
{
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" %s>\n<title>",
            W, h, W, h, extra);
    esc(f, title);
    fprintf(f,
            "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
            W, h);
}

/* A horizontal axis at y over [t0, t1] mapped to [PX0, PX1]. */
static void x_axis(FILE *f, double y, double t0, double t1, const char *label, const char *unit)
{
    double step = nice_step(t1 - t0, 10), sc = (PX1 - PX0) / (t1 - t0);
    fprintf(f, "<g %s font-size=\"11\" fill=\"#333\">\n", FONT);
    fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n", PX0, y,
            PX1, y);
    for (double v = ceil(t0 / step) * step; v <= t1 + step * 1e-9; v += step) {
        double x = PX0 + (v - t0) * sc;
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>"
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%g%s</text>\n",
                x, y, x, y + 4, x, y + 16, fabs(v) < step * 1e-9 ? 0.0 : v, unit);
    }
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"12\">",
            (PX0 + PX1) / 2, y + 34);
    esc(f, label);
    fprintf(f, "</text>\n</g>\n");
}

/* A vertical axis at x = PX0 over [v0, v1] mapped to [yb, yt]. */
static void y_axis(FILE *f, double yb, double yt, double v0, double v1, const char *label,
                   const char *unit, int grid)
{
    double step = nice_step(v1 - v0, 5), sc = (yb - yt) / (v1 - v0);
    fprintf(f, "<g %s font-size=\"11\" fill=\"#333\">\n", FONT);
    fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n", PX0, yb,
            PX0, yt);
    for (double v = ceil(v0 / step) * step; v <= v1 + step * 1e-9; v += step) {
        double y = yb - (v - v0) * sc;
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>"
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%g%s</text>\n",
                PX0 - 4, y, PX0, y, PX0 - 6, y + 4, fabs(v) < step * 1e-9 ? 0.0 : v, unit);
        if (grid)
            fprintf(f,
                    "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ddd\" "
                    "stroke-dasharray=\"2,3\"/>\n",
                    PX0, y, PX1, y);
    }
    fprintf(f,
            "<text transform=\"translate(%.2f,%.2f) rotate(-90)\" text-anchor=\"middle\" "
            "font-size=\"12\">",
            PX0 - 46, (yb + yt) / 2);
    esc(f, label);
    fprintf(f, "</text>\n</g>\n");
}

/* A legend entry: a swatch (rect, line or tick) and its words. */
static double legend(FILE *f, double x, double y, const char *kind, const char *color,
                     const char *words)
{
    if (strcmp(kind, "rect") == 0)
        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"10\" fill=\"%s\"/>", x, y - 9,
                color);
    else if (strcmp(kind, "gap") == 0)
        fprintf(f,
                "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"10\" fill=\"%s\" "
                "fill-opacity=\"0.35\"/>",
                x, y - 9, color);
    else if (strcmp(kind, "tick") == 0)
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>", x + 7,
                y - 10, x + 7, y + 1, color);
    else
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>",
                x, y - 4, x + 14, y - 4, color,
                strcmp(kind, "dash") == 0 ? " stroke-dasharray=\"4,3\"" : "");
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" %s font-size=\"11\" fill=\"#333\">", x + 19, y, FONT);
    esc(f, words);
    fprintf(f, "</text>\n");
    return x + 19 + 6.2 * (double)strlen(words) + 18;
}

/* ------------------------------------------------------------ timeline */

#define T_H 520.0
#define LANE_TOK_Y 80.0 /* token ticks: 80..98 */
#define LANE_SP_Y 106.0 /* speech bars: 106..130 */
#define BUF_YT 156.0    /* buffer chart: 156..400 */
#define BUF_YB 400.0
#define GAP_YT 74.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Cursors over the chunks for the buffered-audio curve; they only move
 * forward, as the curve is drawn left to right. */
struct bufcur {
    size_t ri, pi;        /* first chunk not yet ready / not yet played out */
    double ready, played; /* seconds of audio ready before ri, played before pi */
};

static double dur(const struct tb_play *p)
{
    return p->end - p->start;
}

/* Buffered audio (ready minus played) just before (*left) and just after
 * (*right) time at: the curve steps up when a chunk becomes ready. */
static void buffered(const struct tb_play *p, size_t n, struct bufcur *c, double at, double *left,
                     double *right)
{
    double now_played, after;
    while (c->ri < n && p[c->ri].ready < at)
        c->ready += dur(&p[c->ri++]);
    while (c->pi < n && p[c->pi].end <= at)
        c->played += dur(&p[c->pi++]);
    now_played = c->played;
    if (c->pi < n && p[c->pi].start < at)
        now_played += at - p[c->pi].start;
    after = c->ready;
    for (size_t k = c->ri; k < n && p[k].ready <= at; k++)
        after += dur(&p[k]);
    *left = c->ready - now_played;
    *right = after - now_played;
}

/* A dashed vertical line from label_y down to the chart's bottom, its
 * label to the right (to the left when it would leave the picture). */
static void marker(FILE *f, double x, double label_y, const char *color, const char *what,
                   double at)
{
    int left = x + 120.0 > W;
    fprintf(f,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"4,3\"><title>%s: %.3f s</title></line>\n"
            "<text x=\"%.2f\" y=\"%.2f\" fill=\"%s\" text-anchor=\"%s\">%s %.2f s</text>\n",
            x, label_y - 10, x, BUF_YB, color, what, at, left ? x - 3 : x + 3, label_y, color,
            left ? "end" : "start", what, at);
}

int tb_svg_timeline(FILE *f, const struct tb_svg_timeline *t)
{
    const struct tb_play *p = t->play;
    double t1 = 0.0, sc, bmax = 0.0, last_label = -1e9, *bp;
    size_t nbp = 0, ngaps = 0, nev = 0;
    struct bufcur cur = {0, 0, 0.0, 0.0};
    char extra[160], words[128];

    if (t->nplay == 0)
        return TB_EINVAL;
    for (size_t j = 0; j < t->nplay; j++)
        if (p[j].end > t1)
            t1 = p[j].end;
    for (size_t k = 0; t->s != NULL && k < t->s->n; k++)
        if (t->s->ev[k].kind == TB_KIND_CONTENT) {
            nev++;
            if (t->s->ev[k].t > t1)
                t1 = t->s->ev[k].t;
        }
    t1 = t1 > 0.0 ? t1 * 1.03 : 1.0;
    sc = (PX1 - PX0) / t1;

    /* Breakpoints of the buffered-audio curve: every r_j, s_j, e_j. */
    bp = malloc(3 * t->nplay * sizeof(*bp));
    if (bp == NULL)
        return TB_ENOMEM;
    for (size_t j = 0; j < t->nplay; j++) {
        bp[nbp++] = p[j].ready;
        bp[nbp++] = p[j].start;
        bp[nbp++] = p[j].end;
        if (p[j].gap > 0.0)
            ngaps++;
    }
    qsort(bp, nbp, sizeof(*bp), cmp_double);
    for (size_t i = 0; i < nbp; i++) {
        double l, r;
        if (i > 0 && bp[i] == bp[i - 1])
            continue;
        buffered(p, t->nplay, &cur, bp[i], &l, &r);
        if (r > bmax)
            bmax = r;
    }
    bmax = bmax > 0.0 ? bmax * 1.1 : 1.0;

    snprintf(extra, sizeof(extra), "data-x0=\"%.2f\" data-px-per-s=\"%.9g\"", PX0, sc);
    header(f, T_H, t->title, extra);
    fprintf(f, "<text x=\"%.2f\" y=\"22\" %s font-size=\"15\" font-weight=\"bold\" fill=\"#222\">",
            PX0, FONT);
    esc(f, t->title);
    fprintf(f, "</text>\n");
    if (t->subtitle != NULL) {
        fprintf(f, "<text x=\"%.2f\" y=\"40\" %s font-size=\"11\" fill=\"#555\">", PX0, FONT);
        esc(f, t->subtitle);
        fprintf(f, "</text>\n");
    }

    /* Gaps first, so everything else draws over the shading. */
    fprintf(f, "<g id=\"gaps\">\n");
    for (size_t j = 0; j < t->nplay; j++) {
        double at, x, w;
        if (p[j].gap <= 0.0)
            continue;
        at = p[j].start - p[j].gap;
        x = PX0 + at * sc;
        w = p[j].gap * sc;
        fprintf(f,
                "<rect class=\"gap\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                "fill=\"" GAP_FILL "\" fill-opacity=\"0.35\" data-at=\"%.6f\" data-gap=\"%.6f\">"
                "<title>gap: %.3f s of silence at %.3f s, before chunk %u%s</title></rect>\n",
                x, GAP_YT, w < 0.5 ? 0.5 : w, BUF_YB - GAP_YT, at, p[j].gap, p[j].gap, at,
                p[j].chunk, p[j].gap >= 0.150 ? " (an audible interruption)" : "");
        if (x - last_label >= 44.0) {
            fprintf(f,
                    "<text x=\"%.2f\" y=\"%.2f\" %s font-size=\"11\" fill=\"" GAP_FILL
                    "\" font-weight=\"bold\">%.2f s</text>\n",
                    x + 2, BUF_YT - 6, FONT, p[j].gap);
            last_label = x;
        }
    }
    fprintf(f, "</g>\n");

    /* Lanes. */
    fprintf(f,
            "<g %s font-size=\"11\" fill=\"#333\" text-anchor=\"end\">"
            "<text x=\"%.2f\" y=\"%.2f\">tokens</text>"
            "<text x=\"%.2f\" y=\"%.2f\">speech</text></g>\n",
            FONT, PX0 - 6, LANE_TOK_Y + 13, PX0 - 6, LANE_SP_Y + 16);
    fprintf(f,
            "<g id=\"tokens\"><title>%zu token events (each tick is one arrival)</title>\n<path "
            "stroke=\"#555\" stroke-width=\"1\" fill=\"none\" d=\"",
            nev);
    for (size_t k = 0; t->s != NULL && k < t->s->n; k++)
        if (t->s->ev[k].kind == TB_KIND_CONTENT)
            fprintf(f, "M%.2f %.0fv18", PX0 + t->s->ev[k].t * sc, LANE_TOK_Y);
    fprintf(f, "\"/></g>\n<g id=\"chunks\">\n");
    for (size_t j = 0; j < t->nplay; j++)
        fprintf(f,
                "<rect class=\"chunk\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"24\" "
                "fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\"><title>chunk %u: %u characters, "
                "ready %.3f s, spoken %.3f-%.3f s</title></rect>\n",
                PX0 + p[j].start * sc, LANE_SP_Y, (p[j].end - p[j].start) * sc,
                j % 2 ? "#72b7b2" : "#4c78a8", p[j].chunk, p[j].cps, p[j].ready, p[j].start,
                p[j].end);
    fprintf(f, "</g>\n");

    /* Buffered audio: a step at each r_j, a slope while playing. */
    memset(&cur, 0, sizeof(cur));
    fprintf(f,
            "<g id=\"buffer\"><title>buffered audio: seconds of speech ready and not yet "
            "played</title>\n<path fill=\"#9ecae9\" fill-opacity=\"0.6\" stroke=\"#3182bd\" "
            "stroke-width=\"1.2\" d=\"M%.2f %.2f",
            PX0, BUF_YB);
    for (size_t i = 0; i < nbp; i++) {
        double l, r, x;
        if (i > 0 && bp[i] == bp[i - 1])
            continue;
        buffered(p, t->nplay, &cur, bp[i], &l, &r);
        x = PX0 + bp[i] * sc;
        fprintf(f, "L%.2f %.2fL%.2f %.2f", x, BUF_YB - l / bmax * (BUF_YB - BUF_YT), x,
                BUF_YB - r / bmax * (BUF_YB - BUF_YT));
    }
    fprintf(f, "L%.2f %.2fZ\"/></g>\n", PX0 + bp[nbp - 1] * sc, BUF_YB);
    free(bp);

    /* Markers, each label on its own row (they are often close). */
    fprintf(f, "<g id=\"markers\" %s font-size=\"11\">\n", FONT);
    marker(f, PX0 + t->ttft * sc, 56.0, "#1f77b4", "first token", t->ttft);
    marker(f, PX0 + t->ttfa * sc, 68.0, "#2ca02c", "first audio", t->ttfa);
    fprintf(f, "</g>\n");

    y_axis(f, BUF_YB, BUF_YT, 0.0, bmax, "buffered audio (s)", "", 1);
    x_axis(f, BUF_YB, 0.0, t1, "time since the request was sent (s)", "");

    {
        double x = PX0, y = T_H - 30;
        fprintf(f, "<g id=\"legend\">\n");
        x = legend(f, x, y, "tick", "#555", "token arrival");
        x = legend(f, x, y, "rect", "#4c78a8", "chunk being spoken");
        x = legend(f, x, y, "rect", "#9ecae9", "buffered audio");
        snprintf(words, sizeof(words), "gap: audio ran dry (%zu)", ngaps);
        x = legend(f, x, y, "gap", GAP_FILL, words);
        x = legend(f, x, y, "dash", "#1f77b4", "first token");
        legend(f, x, y, "dash", "#2ca02c", "first audio");
        fprintf(f, "</g>\n");
    }
    fprintf(f, "</svg>\n");
    return ferror(f) ? TB_EIO : 0;
}

/* --------------------------------------------------------------- sweep */

#define S_LINE_YT 70.0
#define S_LINE_YB 330.0
#define S_HEAT_YT 470.0

static int numeric(int a)
{
    return a != TB_AX_CHUNK && a != TB_AX_REBUFFER;
}

/* "sentence", "tps 20", "rebuffer on", ... for axis a at value v. */
static void axis_value(char *buf, size_t len, int a, double v)
{
    switch (a) {
    case TB_AX_CHUNK: snprintf(buf, len, "%s", tb_seg_policy_name((enum tb_chunk_policy)v)); break;
    case TB_AX_REBUFFER: snprintf(buf, len, "rebuffer %s", v > 0 ? "on" : "off"); break;
    case TB_AX_TPS:
        if (v == 0)
            snprintf(buf, len, "as recorded");
        else
            snprintf(buf, len, "%g tokens/s", v);
        break;
    case TB_AX_MINCHARS: snprintf(buf, len, "min-chars %g", v); break;
    case TB_AX_WPM: snprintf(buf, len, "%g wpm", v); break;
    case TB_AX_LAT: snprintf(buf, len, "latency %g s", v); break;
    default: snprintf(buf, len, "pre-roll %g s", v); break;
    }
}

static const char *axis_title(int a)
{
    static const char *const t[TB_AX__COUNT] = {
        "chunk policy",      "min-chars (code points)", "constant rate (tokens/s; 0: as recorded)",
        "speech rate (wpm)", "TTS latency (s)",         "rebuffer",
        "pre-roll (s)",
    };
    return t[a];
}

/* Label of a point's series: its values on the varying axes but x and
 * x2 (-1: none). */
static void series_label(const struct tb_sweep *sw, const struct tb_sweep_point *pt, int x, int x2,
                         char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int a = 0; a < TB_AX__COUNT; a++) {
        size_t n;
        char v[64];
        tb_sweep_axis_values(sw, (enum tb_sweep_axis)a, &n);
        if (a == x || a == x2 || n < 2)
            continue;
        axis_value(v, sizeof(v), a, pt->ax[a]);
        used +=
            (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? ", " : "", v);
        if (used >= len)
            break;
    }
    if (buf[0] == '\0')
        snprintf(buf, len, "all streams");
}

/* Green (all gap-free) to red (lo or fewer), through yellow. */
static void share_color(double s, double lo, char *buf, size_t len)
{
    s = lo < 1.0 ? (s - lo) / (1.0 - lo) : 1.0;
    s = s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
    int r = s < 0.5 ? 215 : (int)(215 - (s - 0.5) * 2 * 170);
    int g = s < 0.5 ? (int)(48 + s * 2 * 160) : 208;
    snprintf(buf, len, "#%02x%02x%02x", r, g, 60);
}

/* The lowest share over the points, floored to 10%: the bottom of the
 * line chart and the red end of the heat map, so that the differences
 * people tune over are not squeezed into the top of the picture. */
static double share_floor(const struct tb_sweep *sw)
{
    size_t npt;
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &npt);
    double lo = 1.0;
    for (size_t p = 0; p < npt; p++)
        if (pt[p].gapless < lo)
            lo = pt[p].gapless;
    lo = floor(lo * 10.0 + 1e-9) / 10.0;
    return lo > 0.9 ? 0.9 : lo;
}

/* The line chart's y for a share, its axis starting at lo. */
static double share_y(double share, double lo)
{
    return S_LINE_YB - (share - lo) / (1.0 - lo) * (S_LINE_YB - S_LINE_YT);
}

static void sweep_lines(FILE *f, const struct tb_sweep *sw, int x)
{
    size_t npt, nx, nseries, drawn;
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &npt);
    const double *xv = tb_sweep_axis_values(sw, (enum tb_sweep_axis)x, &nx);
    double x0 = xv[0], x1 = xv[0], target = tb_sweep_target(sw), lo = share_floor(sw);
    size_t idx[TB_AX__COUNT];
    char label[256], tip[512], xs[64];

    for (size_t i = 0; i < nx; i++) {
        x0 = xv[i] < x0 ? xv[i] : x0;
        x1 = xv[i] > x1 ? xv[i] : x1;
    }
    if (x1 <= x0)
        x1 = x0 + 1.0;
    if (target > 0.0 && target < lo)
        lo = floor(target * 10.0) / 10.0; /* keep the target line in view */
    /* NOLINTNEXTLINE(clang-analyzer-core.DivideZero): an axis has a value (xv[0] above) */
    nseries = npt / nx;
    drawn = nseries < NPALETTE ? nseries : NPALETTE;
    fprintf(f,
            "<text x=\"%.2f\" y=\"56\" %s font-size=\"12\" fill=\"#222\">gap-free share of "
            "the streams against %s",
            PX0, FONT, axis_title(x));
    if (drawn < nseries)
        fprintf(f, " (first %zu of %zu lines)", drawn, nseries);
    fprintf(f, "</text>\n");
    y_axis(f, S_LINE_YB, S_LINE_YT, lo * 100.0, 100.0, "streams with no gap (%)", "", 1);
    x_axis(f, S_LINE_YB, x0, x1, axis_title(x), "");
    if (target > 0.0) {
        double y = share_y(target, lo);
        fprintf(f,
                "<g id=\"target\"><title>target: %.1f%% of the streams gap-free</title><line "
                "x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#444\" "
                "stroke-dasharray=\"6,4\"/><text x=\"%.2f\" y=\"%.2f\" %s font-size=\"10\" "
                "fill=\"#444\" text-anchor=\"end\">target %.0f%%</text></g>\n",
                target * 100.0, PX0, y, PX1, y, PX1 - 2, y - 3, FONT, target * 100.0);
    }

    /* Points of one series differ only in axis x: walk x's index. */
    for (size_t s = 0, shown = 0; s < npt && shown < drawn; s++) {
        tb_sweep_point_axes(sw, s, idx);
        if (idx[x] != 0)
            continue;
        series_label(sw, &pt[s], x, -1, label, sizeof(label));
        fprintf(f, "<g class=\"series\"><title>");
        esc(f, label);
        fprintf(f, "</title>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                palette[shown]);
        for (size_t i = 0; i < nx; i++) {
            const struct tb_sweep_point *q;
            idx[x] = i;
            q = &pt[tb_sweep_point_index(sw, idx)];
            fprintf(f, "%s%.2f,%.2f", i ? " " : "", PX0 + (q->ax[x] - x0) / (x1 - x0) * (PX1 - PX0),
                    share_y(q->gapless, lo));
        }
        fprintf(f, "\"/>\n");
        for (size_t i = 0; i < nx; i++) {
            const struct tb_sweep_point *q;
            idx[x] = i;
            q = &pt[tb_sweep_point_index(sw, idx)];
            axis_value(xs, sizeof(xs), x, q->ax[x]);
            snprintf(tip, sizeof(tip),
                     "%s, %s: %.1f%% gap-free; gap P95 %.2f s, max %.2f s; first audio P50 %.2f "
                     "s; min TPS P95 %.1f",
                     label, xs, q->gapless * 100.0, q->gap_total.p95, q->gap_total.max, q->ttfa.p50,
                     q->min_tps.p95);
            fprintf(f,
                    "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\" data-share=\"%.6f\">"
                    "<title>",
                    PX0 + (q->ax[x] - x0) / (x1 - x0) * (PX1 - PX0), share_y(q->gapless, lo),
                    palette[shown], q->gapless);
            esc(f, tip);
            fprintf(f, "</title></circle>\n");
        }
        fprintf(f, "</g>\n");
        /* Legend, in two columns under the plot. */
        fprintf(f, "<g>");
        legend(f, PX0 + (double)(shown % 2) * 430.0, S_LINE_YB + 58 + (double)(shown / 2) * 15,
               "line", palette[shown], label);
        fprintf(f, "</g>\n");
        shown++;
    }
}

static void sweep_heat(FILE *f, const struct tb_sweep *sw, int ax, int ay, double yt)
{
    double lo = share_floor(sw);
    size_t npt, nx, ny, idx[TB_AX__COUNT];
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &npt);
    double cw, ch, hb = yt + 230.0;
    char color[16], tip[512], xs[64], ys[64], fixed[256];

    tb_sweep_axis_values(sw, (enum tb_sweep_axis)ax, &nx);
    tb_sweep_axis_values(sw, (enum tb_sweep_axis)ay, &ny);
    cw = (PX1 - PX0) / (double)nx;
    ch = (hb - yt) / (double)ny;
    memset(idx, 0, sizeof(idx));
    series_label(sw, &pt[0], ax, ay, fixed, sizeof(fixed));
    fprintf(f,
            "<text x=\"%.2f\" y=\"%.2f\" %s font-size=\"12\" fill=\"#222\">gap-free share: %s "
            "(across) by %s (up)",
            PX0, yt - 12, FONT, axis_title(ax), axis_title(ay));
    fprintf(f, "</text>\n<g id=\"heat\" %s font-size=\"10\" text-anchor=\"middle\">\n", FONT);
    for (size_t i = 0; i < nx; i++)
        for (size_t j = 0; j < ny; j++) {
            const struct tb_sweep_point *q;
            double x = PX0 + (double)i * cw, y = hb - (double)(j + 1) * ch;
            idx[ax] = i;
            idx[ay] = j;
            q = &pt[tb_sweep_point_index(sw, idx)];
            share_color(q->gapless, lo, color, sizeof(color));
            axis_value(xs, sizeof(xs), ax, q->ax[ax]);
            axis_value(ys, sizeof(ys), ay, q->ax[ay]);
            snprintf(tip, sizeof(tip), "%s, %s: %.1f%% gap-free, gap P95 %.2f s", xs, ys,
                     q->gapless * 100.0, q->gap_total.p95);
            fprintf(f,
                    "<rect class=\"cell\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                    "fill=\"%s\" stroke=\"#fff\" data-share=\"%.6f\"><title>",
                    x, y, cw, ch, color, q->gapless);
            esc(f, tip);
            fprintf(f, "</title></rect>\n");
            if (cw >= 30 && ch >= 14)
                fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" fill=\"#111\">%.0f%%</text>\n", x + cw / 2,
                        y + ch / 2 + 4, q->gapless * 100.0);
        }
    fprintf(f, "</g>\n<g %s font-size=\"11\" fill=\"#333\">\n", FONT);
    for (size_t i = 0; i < nx; i++) {
        const double *v = tb_sweep_axis_values(sw, (enum tb_sweep_axis)ax, &nx);
        if (nx <= 20 || i % (nx / 10) == 0)
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%g</text>\n",
                    PX0 + ((double)i + 0.5) * cw, hb + 14, v[i]);
    }
    for (size_t j = 0; j < ny; j++) {
        const double *v = tb_sweep_axis_values(sw, (enum tb_sweep_axis)ay, &ny);
        if (ny <= 16 || j % (ny / 8) == 0)
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%g</text>\n", PX0 - 6,
                    hb - ((double)j + 0.5) * ch + 4, v[j]);
    }
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"12\">%s</text>\n",
            (PX0 + PX1) / 2, hb + 32, axis_title(ax));
    fprintf(f,
            "<text transform=\"translate(%.2f,%.2f) rotate(-90)\" text-anchor=\"middle\" "
            "font-size=\"12\">%s</text>\n",
            PX0 - 46, (yt + hb) / 2, axis_title(ay));
    fprintf(f,
            "<text x=\"%.2f\" y=\"%.2f\" fill=\"#555\">other axes at their first value "
            "(",
            PX0, hb + 50);
    esc(f, fixed);
    fprintf(f, "); green: every stream gap-free, red: %.0f%% or fewer</text>\n</g>\n", lo * 100);
}

int tb_svg_sweep(FILE *f, const struct tb_sweep *sw, const char *title)
{
    int x = -1, hx = -1, hy = -1;
    size_t n, npt, nseries, legend_rows;
    double h, heat_top;
    char sub[256];

    tb_sweep_points(sw, &npt);

    /* The line chart's x: pre-roll when it varies, else the first numeric
     * axis that does, else pre-roll anyway (one point per line). */
    tb_sweep_axis_values(sw, TB_AX_PREROLL, &n);
    if (n > 1)
        x = TB_AX_PREROLL;
    for (int a = 0; a < TB_AX__COUNT && x < 0; a++) {
        tb_sweep_axis_values(sw, (enum tb_sweep_axis)a, &n);
        if (numeric(a) && n > 1)
            x = a;
    }
    if (x < 0)
        x = TB_AX_PREROLL;
    /* The heat map: pre-roll first when it varies, then the others. */
    for (int k = 0; k < TB_AX__COUNT; k++) {
        int a = k == 0 ? TB_AX_PREROLL : k - 1;
        if (k > 0 && a == TB_AX_PREROLL)
            continue;
        tb_sweep_axis_values(sw, (enum tb_sweep_axis)a, &n);
        if (!numeric(a) || n < 2)
            continue;
        if (hx < 0)
            hx = a;
        else if (hy < 0)
            hy = a;
    }
    tb_sweep_axis_values(sw, (enum tb_sweep_axis)x, &n);
    nseries = npt / n;
    legend_rows = ((nseries < NPALETTE ? nseries : NPALETTE) + 1) / 2;
    heat_top = S_LINE_YB + 58 + (double)legend_rows * 15 + 40;
    h = hy >= 0 ? heat_top + 300 : heat_top + 10;

    header(f, h, title, "");
    fprintf(f, "<text x=\"%.2f\" y=\"22\" %s font-size=\"15\" font-weight=\"bold\" fill=\"#222\">",
            PX0, FONT);
    esc(f, title);
    snprintf(sub, sizeof(sub),
             "%zu streams, %zu settings; a stream is gap-free when its audio "
             "never runs dry for more than 1 ms",
             tb_sweep_inputs(sw), npt);
    fprintf(f, "</text>\n<text x=\"%.2f\" y=\"40\" %s font-size=\"11\" fill=\"#555\">%s</text>\n",
            PX0, FONT, sub);
    sweep_lines(f, sw, x);
    if (hy >= 0)
        sweep_heat(f, sw, hx, hy, heat_top);
    else
        fprintf(f,
                "<text x=\"%.2f\" y=\"%.2f\" %s font-size=\"11\" fill=\"#555\">(a heat map needs "
                "two numeric axes with several values, e.g. --preroll and --tps)</text>\n",
                PX0, heat_top - 10, FONT);
    fprintf(f, "</svg>\n");
    return ferror(f) ? TB_EIO : 0;
}
