/*
 * svg_wait.c - where a turn's wait went, drawn (see svg.h: tb_svg_wait):
 * one horizontal bar a row, its parts end to end in the order of a turn.
 */
#include <math.h>
#include <stdio.h>

#include "svg_priv.h"
#include "ttsbuf/error.h"
#include "ttsbuf/svg.h"

#define ROW_H 34.0  /* a bar's row */
#define BAR_H 20.0  /* the bar itself */
#define TOP 44.0    /* the first row's top */
#define BOTTOM 78.0 /* the axis and the legend below the rows */
#define LABEL_X 8.0 /* the rows' names */

/* The parts' colours and names, by part (svg.h), and the order they are
 * drawn in: a turn's (a tool call after the first token, v2v aside). */
static const char *const colour[TB_SVG_WAIT_PARTS] = {
    "#9e9e9e", "#1f77b4", "#ff7f0e", "#8c564b", "#9467bd", "#17becf", "#e377c2", "#bcbd22",
};
static const char *const name[TB_SVG_WAIT_PARTS] = {
    "end of turn",    "first token", "aggregation",     "TTS queue",
    "TTS first byte", "pre-roll",    "leading silence", "tool call",
};
static const int order[TB_SVG_WAIT_PARTS] = {0, 1, TB_SVG_WAIT_TOOL, 2, 3, 4, 5, 6};

/* Whether any bar has a tool call: the legend names it only then. */
static int any_tool(const struct tb_svg_wait *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(b[i].part[TB_SVG_WAIT_TOOL]))
            return 1;
    return 0;
}

/* The longest row: the sum of its parts, or its total's tick. */
static double row_end(const struct tb_svg_wait *b)
{
    double s = 0.0;
    for (int i = 0; i < TB_SVG_WAIT_PARTS; i++)
        if (isfinite(b->part[i]))
            s += b->part[i];
    return isfinite(b->total) && b->total > s ? b->total : s;
}

static void row(FILE *f, const struct tb_svg_wait *b, double y, double sc)
{
    double x = PX0;
    fprintf(f, "<g class=\"wait\" data-label=\"");
    tb_svg_esc(f, b->label);
    fprintf(f, "\">\n<text x=\"%.2f\" y=\"%.2f\" %s font-size=\"11\" fill=\"#333\">", LABEL_X,
            y + BAR_H - 6, FONT);
    tb_svg_esc(f, b->label);
    fputs("</text>\n", f);
    for (int k = 0; k < TB_SVG_WAIT_PARTS; k++) {
        int i = order[k];
        double v = b->part[i];
        if (!isfinite(v) && i == TB_SVG_WAIT_TOOL)
            continue; /* no tool call: not a part of this turn */
        if (!isfinite(v)) {
            /* not measured: nothing drawn, and said */
            fprintf(f,
                    "<g class=\"part\" data-part=\"%d\" data-s=\"null\"><title>%s: not measured"
                    "</title></g>\n",
                    i, name[i]);
            continue;
        }
        fprintf(f,
                "<rect class=\"part\" data-part=\"%d\" data-s=\"%.6f\" x=\"%.2f\" y=\"%.2f\" "
                "width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>%s: %.3f s</title></rect>\n",
                i, v, x, y, v * sc, BAR_H, colour[i], name[i], v);
        x += v * sc;
    }
    if (isfinite(b->total)) {
        double tx = PX0 + b->total * sc;
        fprintf(f,
                "<line class=\"total\" data-s=\"%.6f\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
                "y2=\"%.2f\" stroke=\"#000\" stroke-width=\"2\"><title>voice to voice: %.3f s"
                "</title></line>\n<text x=\"%.2f\" y=\"%.2f\" %s font-size=\"11\" "
                "fill=\"#000\">%.3f s</text>\n",
                b->total, tx, y - 3, tx, y + BAR_H + 3, b->total,
                tx + 4 > PX1 - 50 ? tx - 50 : tx + 4, y + BAR_H - 6, FONT, b->total);
    }
    fputs("</g>\n", f);
}

int tb_svg_wait(FILE *f, const char *title, const struct tb_svg_wait *b, size_t n)
{
    double end = 0.0, sc, h = TOP + ROW_H * (double)n + BOTTOM, x = PX0;
    int nlegend = any_tool(b, n) ? TB_SVG_WAIT_PARTS : TB_SVG_WAIT_TOOL;
    for (size_t i = 0; i < n; i++) {
        double e = row_end(&b[i]);
        end = e > end ? e : end;
    }
    if (!(end > 0.0))
        end = 1.0;
    end *= 1.08; /* room for the total's words */
    sc = (PX1 - PX0 - 50) / end;
    tb_svg_header(f, h, title, "data-chart=\"wait\"");
    fprintf(f, "<text x=\"%.2f\" y=\"20\" %s font-size=\"14\" fill=\"#222\">", PX0, FONT);
    tb_svg_esc(f, title);
    fputs("</text>\n", f);
    for (size_t i = 0; i < n; i++)
        row(f, &b[i], TOP + ROW_H * (double)i, sc);
    tb_svg_x_axis(f, TOP + ROW_H * (double)n, 0.0, (PX1 - PX0) / sc,
                  "seconds from the caller's last word", "");
    fputs("<g id=\"legend\">\n", f);
    for (int k = 0, i = 0; k < TB_SVG_WAIT_PARTS; k++) {
        double y = h - 12 - (i >= 4 ? 0 : 16);
        if (order[k] >= nlegend)
            continue;
        if (i++ == 4)
            x = PX0;
        x = tb_svg_legend(f, x, y, "rect", colour[order[k]], name[order[k]]);
    }
    tb_svg_legend(f, x, h - 12, "line", "#000", "voice to voice");
    fputs("</g>\n</svg>\n", f);
    return ferror(f) ? TB_EIO : 0;
}
