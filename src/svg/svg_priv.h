/*
 * svg_priv.h - private to libttsbuf: what the SVG pictures share (svg.c):
 * the page geometry, the palette, and the drawing helpers.  Each helper
 * writes into the caller's FILE and cannot fail (the caller checks the
 * stream's error flag at the end).
 */
#ifndef TTSBUF_SVG_PRIV_H
#define TTSBUF_SVG_PRIV_H

#include <stdio.h>

#define W 960.0
#define ML 80.0 /* left margin: lane labels and the y axis */
#define MR 30.0 /* right margin */
#define PX0 ML  /* plot's left edge */
#define PX1 (W - MR)
#define GAP_FILL "#d62728"
#define GAP_TTS_FILL "#9467bd"
#define FONT "font-family=\"sans-serif\""
#define NPALETTE 12

/* Series colours, in order, and a dash pattern for each (the first
 * solid), so that lines that coincide stay visible: the one on top shows
 * the one beneath through its gaps. */
extern const char *const tb_svg_palette[NPALETTE];
extern const char *const tb_svg_dashes[NPALETTE];

/* Text with XML's five specials escaped; control bytes dropped. */
void tb_svg_esc(FILE *f, const char *s);

/* A step of 1, 2 or 5 x 10^k giving at most `most` ticks over span. */
double tb_svg_nice_step(double span, int most);

/* The <svg> element's opening, W wide and h high, with a title. */
void tb_svg_header(FILE *f, double h, const char *title, const char *extra);

/* A time axis at y over [t0, t1]; a value axis between yb and yt over
 * [v0, v1], with grid lines when grid. */
void tb_svg_x_axis(FILE *f, double y, double t0, double t1, const char *label, const char *unit);
void tb_svg_y_axis(FILE *f, double yb, double yt, double v0, double v1, const char *label,
                   const char *unit, int grid);

/* One legend entry (kind "rect", "line" or "dash") at x, y; returns the
 * x of the next. */
double tb_svg_legend(FILE *f, double x, double y, const char *kind, const char *color,
                     const char *words);

#endif
