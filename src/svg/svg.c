/*
 * svg.c - what the timeline and sweep pictures (svg.h) share: escaping,
 * axes, legends, the palette.  The pictures: svg_timeline.c, svg_sweep.c.
 *
 * Plain fprintf into the caller's FILE: the format is ours, small and
 * fixed, so no XML library is needed; every piece of outside text goes
 * through tb_svg_esc().  Coordinates are printed with two decimals.  Fonts are
 * the generic "sans-serif" family, so nothing is fetched.
 */
#include "ttsbuf/svg.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

#include "svg_priv.h"

const char *const tb_svg_palette[NPALETTE] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                              "#8c564b", "#e377c2", "#17becf", "#bcbd22",
                                              "#7f7f7f", "#393b79", "#637939", "#843c39"};

const char *const tb_svg_dashes[NPALETTE] = {
    "none", "9,4",         "3,3", "12,3,3,3", "6,6",  "2,5",
    "14,4", "8,3,2,3,2,3", "4,8", "1,3",      "10,2", "5,2,1,2",
};

/* Text with XML's five specials escaped; control bytes dropped. */
void tb_svg_esc(FILE *f, const char *s)
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
double tb_svg_nice_step(double span, int most)
{
    double raw = span / most, p = pow(10.0, floor(log10(raw))), m = raw / p;
    if (!(span > 0.0))
        return 1.0;
    return (m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0) * p;
}

void tb_svg_header(FILE *f, double h, const char *title, const char *extra)
{
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" %s>\n<title>",
            W, h, W, h, extra);
    tb_svg_esc(f, title);
    fprintf(f,
            "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
            W, h);
}

/* A horizontal axis at y over [t0, t1] mapped to [PX0, PX1]. */
void tb_svg_x_axis(FILE *f, double y, double t0, double t1, const char *label, const char *unit)
{
    double step = tb_svg_nice_step(t1 - t0, 10), sc = (PX1 - PX0) / (t1 - t0);
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
    tb_svg_esc(f, label);
    fprintf(f, "</text>\n</g>\n");
}

/* A vertical axis at x = PX0 over [v0, v1] mapped to [yb, yt]. */
void tb_svg_y_axis(FILE *f, double yb, double yt, double v0, double v1, const char *label,
                   const char *unit, int grid)
{
    double step = tb_svg_nice_step(v1 - v0, 5), sc = (yb - yt) / (v1 - v0);
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
    tb_svg_esc(f, label);
    fprintf(f, "</text>\n</g>\n");
}

/* A legend entry: a swatch (rect, line or tick) and its words. */
double tb_svg_legend(FILE *f, double x, double y, const char *kind, const char *color,
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
    tb_svg_esc(f, words);
    fprintf(f, "</text>\n");
    return x + 19 + 6.2 * (double)strlen(words) + 18;
}
