/*
 * svg_sweep.c - a sweep as standalone SVG (tb_svg_sweep, svg.h): a line
 * per series of the gapless share, and a heat map over two axes.
 *
 * The lines are steps, not straight segments: the share is known at the
 * grid points only, and more pre-roll (or a faster rate) never adds a gap,
 * so between two points the share is at least the left one's.  A straight
 * segment would claim a crossing of the target where the numbers put none
 * (the exact answer, preroll_for_target, is usually elsewhere).  Each
 * exact answer is marked on its line, and the step rises there to the
 * target.  Lines that coincide are told apart by their dash pattern and a
 * legend note naming the line they hide behind.
 */
#include "ttsbuf/svg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "svg_priv.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/voice.h"

#define S_LINE_YT 70.0
#define S_LINE_YB 330.0
#define S_HEAT_YT 470.0

static int numeric(int a)
{
    return a != TB_AX_CHUNK && a != TB_AX_REBUFFER;
}

/* "sentence", "tps 20", "rebuffer on", ... for axis a at value v (the
 * latency a median when the sweep's latency has a shape). */
static void axis_value(const struct tb_sweep *sw, char *buf, size_t len, int a, double v)
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
    case TB_AX_LAT:
        snprintf(buf, len, "latency %s%g s", tb_sweep_tts(sw)->shape != TB_LAT_CONST ? "p50 " : "",
                 v);
        break;
    case TB_AX_CONC:
        if (v == 0)
            snprintf(buf, len, "concurrency unlimited");
        else
            snprintf(buf, len, "concurrency %g", v);
        break;
    case TB_AX_RTF: snprintf(buf, len, "RTF %g", v); break;
    default: snprintf(buf, len, "pre-roll %g s", v); break;
    }
}

static const char *axis_title(const struct tb_sweep *sw, int a)
{
    static const char *const t[TB_AX__COUNT] = {
        "chunk policy",
        "min-chars (code points)",
        "constant rate (tokens/s; 0: as recorded)",
        "speech rate (wpm)",
        "TTS latency (s)",
        "TTS concurrency (chunks at once; 0: unlimited)",
        "TTS real-time factor (s of synthesis per s of audio)",
        "rebuffer",
        "pre-roll (s)",
    };
    if (a == TB_AX_LAT && tb_sweep_tts(sw)->shape != TB_LAT_CONST)
        return "TTS latency median, p50 (s)";
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
        axis_value(sw, v, sizeof(v), a, pt->ax[a]);
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

/* Whether series a and b (points along x from a and b) have the same
 * shares and the same answer. */
static int same_series(const struct tb_sweep *sw, int x, size_t a, size_t b)
{
    size_t npt, nx, ia[TB_AX__COUNT], ib[TB_AX__COUNT];
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &npt);
    tb_sweep_axis_values(sw, (enum tb_sweep_axis)x, &nx);
    tb_sweep_point_axes(sw, a, ia);
    tb_sweep_point_axes(sw, b, ib);
    for (size_t i = 0; i < nx; i++) {
        const struct tb_sweep_point *p, *q;
        ia[x] = ib[x] = i;
        p = &pt[tb_sweep_point_index(sw, ia)];
        q = &pt[tb_sweep_point_index(sw, ib)];
        if (p->gapless != q->gapless)
            return 0;
        if (p->preroll_for_target != q->preroll_for_target &&
            !(isnan(p->preroll_for_target) && isnan(q->preroll_for_target)))
            return 0;
    }
    return 1;
}

/* The line chart of axis x: its range, its floor, the target. */
struct lines {
    const struct tb_sweep *sw;
    int x;
    const struct tb_sweep_point *pt;
    size_t npt, nx;
    double x0, x1, lo, target;
    int wait; /* each point says its v2v P50 and P95 */
};

/* The chart's x for a value of axis x. */
static double line_x(const struct lines *l, double v)
{
    return PX0 + (v - l->x0) / (l->x1 - l->x0) * (PX1 - PX0);
}

/* The point of the series whose axes are idx, at x's index i. */
static const struct tb_sweep_point *line_point(const struct lines *l, size_t *idx, size_t i)
{
    idx[l->x] = i;
    return &l->pt[tb_sweep_point_index(l->sw, idx)];
}

/* The chart's range and floor (lowered to keep the target in view). */
static void lines_init(struct lines *l, const struct tb_sweep *sw, int x)
{
    const double *xv = tb_sweep_axis_values(sw, (enum tb_sweep_axis)x, &l->nx);
    l->sw = sw;
    l->x = x;
    l->pt = tb_sweep_points(sw, &l->npt);
    l->x0 = l->x1 = xv[0];
    l->target = tb_sweep_target(sw);
    l->lo = share_floor(sw);
    for (size_t i = 0; i < l->nx; i++) {
        l->x0 = xv[i] < l->x0 ? xv[i] : l->x0;
        l->x1 = xv[i] > l->x1 ? xv[i] : l->x1;
    }
    if (l->x1 <= l->x0)
        l->x1 = l->x0 + 1.0;
    if (l->target > 0.0 && l->target < l->lo)
        l->lo = floor(l->target * 10.0) / 10.0; /* keep the target line in view */
}

/* The chart's title, axes and target line. */
static void lines_frame(FILE *f, const struct lines *l, size_t drawn, size_t nseries)
{
    fprintf(f,
            "<text x=\"%.2f\" y=\"56\" %s font-size=\"12\" fill=\"#222\">gap-free share of "
            "the streams against %s",
            PX0, FONT, axis_title(l->sw, l->x));
    if (drawn < nseries)
        fprintf(f, " (first %zu of %zu lines)", drawn, nseries);
    fprintf(f, "</text>\n");
    tb_svg_y_axis(f, S_LINE_YB, S_LINE_YT, l->lo * 100.0, 100.0, "streams with no gap (%)", "", 1);
    tb_svg_x_axis(f, S_LINE_YB, l->x0, l->x1, axis_title(l->sw, l->x), "");
    if (l->target > 0.0) {
        double y = share_y(l->target, l->lo);
        fprintf(f,
                "<g id=\"target\"><title>target: %.1f%% of the streams gap-free</title><line "
                "x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#444\" "
                "stroke-dasharray=\"6,4\"/><text x=\"%.2f\" y=\"%.2f\" %s font-size=\"10\" "
                "fill=\"#444\" text-anchor=\"end\">target %.0f%%</text></g>\n",
                l->target * 100.0, PX0, y, PX1, y, PX1 - 2, y - 3, FONT, l->target * 100.0);
    }
}

/* A series' line.  Steps: a share holds from its point to the next one,
 * and rises to the target at the exact answer when that lies between. */
static void series_path(FILE *f, const struct lines *l, size_t *idx, double answer)
{
    for (size_t i = 0; i < l->nx; i++) {
        const struct tb_sweep_point *q = line_point(l, idx, i);
        double px = line_x(l, q->ax[l->x]), py = share_y(q->gapless, l->lo);
        if (i > 0) {
            const struct tb_sweep_point *pq = line_point(l, idx, i - 1);
            if (answer > pq->ax[l->x] && answer < q->ax[l->x] && pq->gapless < l->target)
                fprintf(f, "H%.2fV%.2f", line_x(l, answer), share_y(l->target, l->lo));
            fprintf(f, "H%.2fV%.2f", px, py);
        } else {
            fprintf(f, "M%.2f %.2f", px, py);
        }
    }
}

/* The exact answer, on its line (at the edge, pointing on, when it lies
 * beyond the axis). */
static void series_answer(FILE *f, const struct lines *l, const char *label, double answer,
                          size_t shown)
{
    char tip[768];
    double ax = answer > l->x1 ? PX1 : line_x(l, answer);
    double ay = share_y(l->target, l->lo);
    snprintf(tip, sizeof(tip),
             "%s: the smallest pre-roll with >= %.0f%% of the streams gap-free is %.3f s "
             "(exact)%s",
             label, l->target * 100.0, answer, answer > l->x1 ? ", beyond this axis" : "");
    fprintf(f,
            "<path class=\"answer\" d=\"M%.2f %.2fl5 5l-5 5l-5 -5z\" fill=\"%s\" "
            "stroke=\"#222\" data-preroll=\"%.6f\" data-share=\"%.6f\"><title>",
            ax, ay - 5, tb_svg_palette[shown], answer, l->target);
    tb_svg_esc(f, tip);
    fprintf(f, "</title></path>\n");
}

/* A series' points, each with its figures as a tooltip. */
static void series_points(FILE *f, const struct lines *l, size_t *idx, const char *label,
                          size_t shown)
{
    char tip[768], xs[64], mt[96], wait[96] = "", data[96] = "";
    for (size_t i = 0; i < l->nx; i++) {
        const struct tb_sweep_point *q = line_point(l, idx, i);
        axis_value(l->sw, xs, sizeof(xs), l->x, q->ax[l->x]);
        /* A minimum TPS of none (the TTS stage alone leaves gaps) is
         * no number: the P95 is of the others, and says so. */
        if (q->min_tps_none == 0)
            snprintf(mt, sizeof(mt), "min TPS P95 %.1f", q->min_tps.p95);
        else if (q->min_tps.count == 0)
            snprintf(mt, sizeof(mt), "min TPS none (the TTS stage alone leaves gaps)");
        else
            snprintf(mt, sizeof(mt), "min TPS P95 %.1f of %zu streams, none for %zu",
                     q->min_tps.p95, q->min_tps.count, q->min_tps_none);
        if (l->wait && q->v2v.count > 0) {
            snprintf(wait, sizeof(wait), "; v2v P50 %.2f s, P95 %.2f s", q->v2v.p50, q->v2v.p95);
            snprintf(data, sizeof(data), " data-v2v-p50=\"%.6f\" data-v2v-p95=\"%.6f\"", q->v2v.p50,
                     q->v2v.p95);
        } else if (l->wait) {
            snprintf(wait, sizeof(wait), "; v2v none (no stream had audio)");
        }
        snprintf(tip, sizeof(tip),
                 "%s, %s: %.1f%% gap-free; gap P95 %.2f s, max %.2f s; first audio P50 %.2f "
                 "s%s; %s",
                 label, xs, q->gapless * 100.0, q->gap_total.p95, q->gap_total.max, q->ttfa.p50,
                 wait, mt);
        fprintf(f,
                "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\" data-share=\"%.6f\"%s>"
                "<title>",
                line_x(l, q->ax[l->x]), share_y(q->gapless, l->lo), tb_svg_palette[shown],
                q->gapless, data);
        tb_svg_esc(f, tip);
        fprintf(f, "</title></circle>\n");
    }
}

/* A series' legend entry, in two columns under the plot, with its dash
 * pattern; one hidden behind another (twin) says so. */
static void series_legend(FILE *f, const struct lines *l, char *label, size_t len, double answer,
                          size_t twin, size_t shown)
{
    double lx = PX0 + (double)(shown % 2) * 430.0, ly = S_LINE_YB + 58 + (double)(shown / 2) * 15;
    if (!isnan(answer)) {
        size_t used = strlen(label);
        snprintf(label + used, len - used, ": %.0f%% from %.3f s%s", l->target * 100.0, answer,
                 answer > l->x1 ? " (beyond the axis)" : "");
    }
    if (twin != SIZE_MAX) {
        size_t used = strlen(label);
        snprintf(label + used, len - used, " (same as line %zu)", twin + 1);
    }
    fprintf(f,
            "<g><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
            "stroke-width=\"2\" stroke-dasharray=\"%s\"/><text x=\"%.2f\" y=\"%.2f\" %s "
            "font-size=\"11\" fill=\"#333\">%zu: ",
            lx, ly - 4, lx + 22, ly - 4, tb_svg_palette[shown], tb_svg_dashes[shown], lx + 27, ly,
            FONT, shown + 1);
    tb_svg_esc(f, label);
    fprintf(f, "</text></g>\n");
}

static void sweep_lines(FILE *f, const struct tb_sweep *sw, int x, int wait)
{
    struct lines l;
    size_t nseries, drawn, idx[TB_AX__COUNT], first[NPALETTE];
    char label[300];

    lines_init(&l, sw, x);
    l.wait = wait;
    /* NOLINTNEXTLINE(clang-analyzer-core.DivideZero): an axis has a value (lines_init) */
    nseries = l.npt / l.nx;
    drawn = nseries < NPALETTE ? nseries : NPALETTE;
    lines_frame(f, &l, drawn, nseries);

    /* Points of one series differ only in axis x: walk x's index. */
    for (size_t s = 0, shown = 0; s < l.npt && shown < drawn; s++) {
        double answer = NAN;
        size_t twin = SIZE_MAX;
        tb_sweep_point_axes(sw, s, idx);
        if (idx[x] != 0)
            continue;
        first[shown] = s;
        for (size_t k = 0; k < shown && twin == SIZE_MAX; k++)
            if (same_series(sw, x, first[k], s))
                twin = k;
        series_label(sw, &l.pt[s], x, -1, label, sizeof(label));
        if (x == TB_AX_PREROLL && l.target > 0.0)
            answer = l.pt[s].preroll_for_target;
        fprintf(f, "<g class=\"series\"><title>");
        tb_svg_esc(f, label);
        fprintf(f,
                "</title>\n<path class=\"step\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                "stroke-dasharray=\"%s\" d=\"",
                tb_svg_palette[shown], tb_svg_dashes[shown]);
        series_path(f, &l, idx, answer);
        fprintf(f, "\"/>\n");
        if (!isnan(answer))
            series_answer(f, &l, label, answer, shown);
        series_points(f, &l, idx, label, shown);
        fprintf(f, "</g>\n");
        series_legend(f, &l, label, sizeof(label), answer, twin, shown);
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
            PX0, yt - 12, FONT, axis_title(sw, ax), axis_title(sw, ay));
    fprintf(f, "</text>\n<g id=\"heat\" %s font-size=\"10\" text-anchor=\"middle\">\n", FONT);
    for (size_t i = 0; i < nx; i++)
        for (size_t j = 0; j < ny; j++) {
            const struct tb_sweep_point *q;
            double x = PX0 + (double)i * cw, y = hb - (double)(j + 1) * ch;
            idx[ax] = i;
            idx[ay] = j;
            q = &pt[tb_sweep_point_index(sw, idx)];
            share_color(q->gapless, lo, color, sizeof(color));
            axis_value(sw, xs, sizeof(xs), ax, q->ax[ax]);
            axis_value(sw, ys, sizeof(ys), ay, q->ax[ay]);
            snprintf(tip, sizeof(tip), "%s, %s: %.1f%% gap-free, gap P95 %.2f s", xs, ys,
                     q->gapless * 100.0, q->gap_total.p95);
            fprintf(f,
                    "<rect class=\"cell\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                    "fill=\"%s\" stroke=\"#fff\" data-share=\"%.6f\"><title>",
                    x, y, cw, ch, color, q->gapless);
            tb_svg_esc(f, tip);
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
            (PX0 + PX1) / 2, hb + 32, axis_title(sw, ax));
    fprintf(f,
            "<text transform=\"translate(%.2f,%.2f) rotate(-90)\" text-anchor=\"middle\" "
            "font-size=\"12\">%s</text>\n",
            PX0 - 46, (yt + hb) / 2, axis_title(sw, ay));
    fprintf(f,
            "<text x=\"%.2f\" y=\"%.2f\" fill=\"#555\">other axes at their first value "
            "(",
            PX0, hb + 50);
    tb_svg_esc(f, fixed);
    fprintf(f, "); green: every stream gap-free, red: %.0f%% or fewer</text>\n</g>\n", lo * 100);
}

int tb_svg_sweep(FILE *f, const struct tb_sweep *sw, const char *title, int wait)
{
    int x = -1, hx = -1, hy = -1;
    size_t n, npt, nseries, legend_rows;
    double h, heat_top;
    char sub[320];

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

    tb_svg_header(f, h, title, "");
    fprintf(f, "<text x=\"%.2f\" y=\"22\" %s font-size=\"15\" font-weight=\"bold\" fill=\"#222\">",
            PX0, FONT);
    tb_svg_esc(f, title);
    snprintf(sub, sizeof(sub),
             "%zu streams, %zu settings; a stream is gap-free when its audio "
             "never runs dry for more than 1 ms",
             tb_sweep_inputs(sw), npt);
    if (wait) /* the v1 picture stays as it was without the turn model */
        snprintf(sub + strlen(sub), sizeof(sub) - strlen(sub),
                 "; each point gives the caller's wait (v2v P50, P95)");
    fprintf(f, "</text>\n<text x=\"%.2f\" y=\"40\" %s font-size=\"11\" fill=\"#555\">%s</text>\n",
            PX0, FONT, sub);
    sweep_lines(f, sw, x, wait);
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
