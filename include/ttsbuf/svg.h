/*
 * svg.h - pictures: the timeline of one stream, and the tuning picture of
 * a sweep, as standalone SVG (no script, no external font or image; plain
 * XML a browser or an editor opens as it is).
 *
 * Every mark people would hover carries a <title> (a tooltip): each chunk
 * bar, each gap, each marker, each line point and heat-map cell.  Marks
 * carry their numbers too (data-* attributes in seconds), and the root
 * element says how seconds map to pixels (data-x0, data-px-per-s), so a
 * test can hold the picture to the report.
 *
 * Threads: any; no shared state.  Ownership: the caller owns everything
 * passed in; these functions allocate only scratch they free.
 */
#ifndef TTSBUF_SVG_H
#define TTSBUF_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "ttsbuf/playout.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/sweep.h"

/* The red of gaps, in both pictures (#d62728); with causes, the red is
 * the LLM's part and this purple the TTS stage's (#9467bd). */
#define TB_SVG_GAP_RGB 0xd62728
#define TB_SVG_GAP_TTS_RGB 0x9467bd

struct tb_svg_timeline {
    const char *title;          /* what was played (shown, escaped) */
    const char *subtitle;       /* the settings, or NULL */
    const struct tb_stream *s;  /* content events become arrival ticks */
    const struct tb_play *play; /* every chunk's schedule, in order */
    size_t nplay;
    double ttft; /* first content token's arrival */
    double ttfa; /* time to first audio, s_1 */
    /* The first audible sample (turnlat.h: the first audio plus its
     * leading silence), marked when later than ttfa; NAN: not known. */
    double audible;
    /* The caller's end of speech, this many seconds before the request
     * (turnlat.h's eou): the time axis starts there and the picture
     * marks it and the span to the first audible sample (v2v); 0: none
     * modelled (the span starts at the request); NAN: not known. */
    double eou;
    int causes;  /* split each gap by cause (gap_llm, then gap_tts), in two
                  * colours; 0: one red shading, as without a TTS stage */
};

/*
 * tb_svg_timeline - the timeline of one stream: token arrivals (ticks),
 * buffered audio in seconds over time, chunks as spoken (bars), gaps
 * shaded red and labelled with their length, first-token and first-audio
 * markers, a legend and axes with units.  The buffered audio at time t is
 * the audio ready by t (chunk j is ready at r_j) minus what has played.
 * Size: O(events + chunks); about 300 bytes a chunk.
 * Returns 0, TB_EINVAL (no chunk), TB_ENOMEM, or TB_EIO when f reports an
 * error.
 */
int tb_svg_timeline(FILE *f, const struct tb_svg_timeline *t);

/*
 * tb_svg_sweep - the tuning picture of a finished sweep: the gap-free
 * share (and, as a tooltip, the P95 gap) against pre-roll, or against the
 * first numeric axis with several values when pre-roll has one, with one
 * line per combination of the other axes (at most 12 are drawn; the
 * picture says how many there were), a dashed line at the target share
 * when there is one; and a heat map of the gap-free share over the first
 * two numeric axes with several values (other axes at their first value),
 * or a note when there are not two.  With wait, each point's tooltip (and
 * its data-v2v-p50/-p95) gives the caller's wait, the v2v P50 and P95
 * (sweep.h); without, the picture is as it was before the turn model.
 * Returns 0, TB_ENOMEM or TB_EIO.
 */
int tb_svg_sweep(FILE *f, const struct tb_sweep *sw, const char *title, int wait);

/* One bar of a turn's wait (turnlat.h): its parts from the end of turn
 * to the leading silence, in seconds (NAN: not measured, drawn as
 * nothing and said so in the bar's tooltip), and its voice-to-voice total
 * (a tick; NAN: none).  Parts 0..6 are tb_turn_lat_keys' (eou_s to
 * leading_silence_s); part TB_SVG_WAIT_TOOL is a tool call's (tool_s),
 * drawn after the first token, as v2v adds it; NAN there is a turn with
 * no tool call, drawn and said as nothing.  A level's bar at a percentile
 * stacks each part's percentile, whose sum is not the total's percentile:
 * the tick says where that is. */
#define TB_SVG_WAIT_PARTS 8
#define TB_SVG_WAIT_TOOL 7
struct tb_svg_wait {
    const char *label; /* the row's name ("turn 1", "p50"), escaped */
    double part[TB_SVG_WAIT_PARTS];
    double total;
};

/*
 * tb_svg_wait - where the wait went: a row a bar, each part a coloured
 * segment from where the one before ended (a waterfall for one turn,
 * stacked percentiles for a level), the total a black tick, an axis in
 * seconds from the caller's last word, a legend.  Each segment is a
 * <rect class="part" data-part=I data-s=SECONDS> with its tooltip.
 * Returns 0 or TB_EIO.
 */
int tb_svg_wait(FILE *f, const char *title, const struct tb_svg_wait *b, size_t n);

/* One run's values, named (the legend's words, escaped). */
struct tb_svg_series {
    const char *name;
    const double *v; /* NaN: not measured (skipped, never drawn as 0) */
    size_t n;
    size_t color; /* its colour, the palette's (mod 12): a run keeps its
                   * colour in every chart, whichever runs a chart has */
};

/*
 * tb_svg_cdf - the empirical cumulative distribution of each series (the
 * share of its finite values at or below x, a step at each), one line a
 * series in its colour and its own dash pattern (the first solid), so
 * that a line drawn over another with the same values leaves it visible
 * through its gaps; the legend says which series is the same as an
 * earlier one ("b (same as a)").  One axis from 0 (or the smallest
 * value, when negative) to the largest.  Every series is a
 * <g class="series" data-run=NAME data-n=COUNT>.
 * Returns 0, TB_ENOMEM or TB_EIO.
 */
int tb_svg_cdf(FILE *f, const char *title, const char *xlabel, const struct tb_svg_series *s,
               size_t ns);

/* A chart of one value per category and series: its kind (the root's
 * data-chart: "levels", "turns"), title, y axis label, the categories
 * named along the x axis, and the values' range [v0, v1]. */
struct tb_svg_cats {
    const char *kind, *title, *ylabel;
    const char *const *cat;
    size_t ncat;
    double v0, v1;
};

/*
 * tb_svg_categories - one value per category and series (series i's v[c]
 * for category c; NaN: no mark), as points joined by a line, each series
 * a few pixels beside the others in a category's slot and dashed as
 * tb_svg_cdf's lines, so that equal values stay visible; the legend says
 * which series is the same as an earlier one.  Series as tb_svg_cdf's.
 * Returns 0, TB_ENOMEM or TB_EIO.
 */
int tb_svg_categories(FILE *f, const struct tb_svg_cats *c, const struct tb_svg_series *s,
                      size_t ns);

#endif
