/*
 * svg_timeline.c - one run's timeline as standalone SVG (tb_svg_timeline,
 * svg.h): token ticks, speech bars, the buffer over time, gaps, markers.
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

#define T_H 520.0
#define LANE_TOK_Y 80.0 /* token ticks: 80..98 */
#define LANE_SP_Y 106.0 /* speech bars: 106..130 */
#define BUF_YT 156.0    /* buffer chart: 156..400 */
#define BUF_YB 400.0
#define GAP_YT 74.0
#define WAIT_COLOR "#8c564b"

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
                   double at, const char *more)
{
    int left = x + 120.0 > W;
    fprintf(f,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"4,3\"><title>%s: %.3f s</title></line>\n"
            "<text x=\"%.2f\" y=\"%.2f\" fill=\"%s\" text-anchor=\"%s\">%s %.2f s%s</text>\n",
            x, label_y - 10, x, BUF_YB, color, what, at, left ? x - 3 : x + 3, label_y, color,
            left ? "end" : "start", what, at, more);
}

/* What the drawing stages share: the time scale and the buffer curve's
 * breakpoints (owned, freed by tb_svg_timeline). */
struct layout {
    double t0, t1, sc, bmax; /* the time axis' ends, px per s, the buffer axis' top */
    double x0;               /* where the request (time 0) is drawn */
    double *bp;          /* every r_j, s_j, e_j, sorted */
    size_t nbp, ngaps, nev;
};

/* The time axis: from the caller's end of speech (before the request,
 * when an end-of-turn delay was modelled) to the last chunk's end or the
 * last token, 3% beyond. */
static void time_scale(const struct tb_svg_timeline *t, struct layout *L)
{
    double t1 = 0.0;
    L->t0 = isfinite(t->eou) && t->eou > 0.0 ? -t->eou : 0.0;
    for (size_t j = 0; j < t->nplay; j++)
        if (t->play[j].end > t1)
            t1 = t->play[j].end;
    for (size_t k = 0; t->s != NULL && k < t->s->n; k++)
        if (t->s->ev[k].kind == TB_KIND_CONTENT) {
            L->nev++;
            if (t->s->ev[k].t > t1)
                t1 = t->s->ev[k].t;
        }
    L->t1 = t1 > 0.0 ? t1 * 1.03 : 1.0;
    L->sc = (PX1 - PX0) / (L->t1 - L->t0);
    L->x0 = PX0 - L->t0 * L->sc;
}

/* The buffered-audio curve's breakpoints and its highest point.  0 or
 * TB_ENOMEM. */
static int breakpoints(const struct tb_svg_timeline *t, struct layout *L)
{
    const struct tb_play *p = t->play;
    struct bufcur cur = {0, 0, 0.0, 0.0};
    L->bp = malloc(3 * t->nplay * sizeof(*L->bp));
    if (L->bp == NULL)
        return TB_ENOMEM;
    for (size_t j = 0; j < t->nplay; j++) {
        L->bp[L->nbp++] = p[j].ready;
        L->bp[L->nbp++] = p[j].start;
        L->bp[L->nbp++] = p[j].end;
        if (p[j].gap > 0.0)
            L->ngaps++;
    }
    qsort(L->bp, L->nbp, sizeof(*L->bp), cmp_double);
    for (size_t i = 0; i < L->nbp; i++) {
        double l, r;
        if (i > 0 && L->bp[i] == L->bp[i - 1])
            continue;
        buffered(p, t->nplay, &cur, L->bp[i], &l, &r);
        if (r > L->bmax)
            L->bmax = r;
    }
    L->bmax = L->bmax > 0.0 ? L->bmax * 1.1 : 1.0;
    return 0;
}

static void draw_head(FILE *f, const struct tb_svg_timeline *t, const struct layout *L)
{
    char extra[160];
    snprintf(extra, sizeof(extra), "data-x0=\"%.2f\" data-px-per-s=\"%.9g\"", L->x0, L->sc);
    tb_svg_header(f, T_H, t->title, extra);
    fprintf(f, "<text x=\"%.2f\" y=\"22\" %s font-size=\"15\" font-weight=\"bold\" fill=\"#222\">",
            PX0, FONT);
    tb_svg_esc(f, t->title);
    fprintf(f, "</text>\n");
    if (t->subtitle != NULL) {
        fprintf(f, "<text x=\"%.2f\" y=\"40\" %s font-size=\"11\" fill=\"#555\">", PX0, FONT);
        tb_svg_esc(f, t->subtitle);
        fprintf(f, "</text>\n");
    }
}

/* One gap in two parts: first the LLM's (the text had not arrived), then
 * the TTS stage's (it had, its audio had not), each in its colour. */
static void draw_gap_causes(FILE *f, const struct tb_play *p, double at, const struct layout *L)
{
    static const char *const fill[2] = {GAP_FILL, GAP_TTS_FILL};
    static const char *const who[2] = {"the LLM's: the text had not arrived",
                                       "the TTS stage's: the text was there, its audio was not"};
    double part[2] = {p->gap_llm, p->gap_tts}, from = at;
    for (int k = 0; k < 2; k++) {
        double w = part[k] * L->sc;
        if (part[k] <= 0.0)
            continue;
        fprintf(f,
                "<rect class=\"gap gap-%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                "height=\"%.2f\" fill=\"%s\" fill-opacity=\"0.35\" data-at=\"%.6f\" "
                "data-gap=\"%.6f\" data-cause=\"%s\"><title>gap: %.3f s of silence at %.3f s, "
                "before chunk %u%s; %.3f s of it %s</title></rect>\n",
                k == 0 ? "llm" : "tts", L->x0 + from * L->sc, GAP_YT, w < 0.5 ? 0.5 : w,
                BUF_YB - GAP_YT, fill[k], from, part[k], k == 0 ? "llm" : "tts", p->gap, at,
                p->chunk, p->gap >= 0.150 ? " (an audible interruption)" : "", part[k], who[k]);
        from += part[k];
    }
}

/* Gaps first, so everything else draws over the shading. */
static void draw_gaps(FILE *f, const struct tb_svg_timeline *t, const struct layout *L)
{
    const struct tb_play *p = t->play;
    double last_label = -1e9;
    fprintf(f, "<g id=\"gaps\">\n");
    for (size_t j = 0; j < t->nplay; j++) {
        double at, x, w;
        if (p[j].gap <= 0.0)
            continue;
        at = p[j].start - p[j].gap;
        x = L->x0 + at * L->sc;
        w = p[j].gap * L->sc;
        if (t->causes) {
            draw_gap_causes(f, &p[j], at, L);
        } else {
            fprintf(f,
                    "<rect class=\"gap\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                    "fill=\"" GAP_FILL
                    "\" fill-opacity=\"0.35\" data-at=\"%.6f\" data-gap=\"%.6f\">"
                    "<title>gap: %.3f s of silence at %.3f s, before chunk %u%s</title></rect>\n",
                    x, GAP_YT, w < 0.5 ? 0.5 : w, BUF_YB - GAP_YT, at, p[j].gap, p[j].gap, at,
                    p[j].chunk, p[j].gap >= 0.150 ? " (an audible interruption)" : "");
        }
        if (x - last_label >= 44.0) {
            fprintf(f,
                    "<text x=\"%.2f\" y=\"%.2f\" %s font-size=\"11\" fill=\"" GAP_FILL
                    "\" font-weight=\"bold\">%.2f s</text>\n",
                    x + 2, BUF_YT - 6, FONT, p[j].gap);
            last_label = x;
        }
    }
    fprintf(f, "</g>\n");
}

/* The two lanes: a tick per token arrival, a bar per chunk spoken. */
static void draw_lanes(FILE *f, const struct tb_svg_timeline *t, const struct layout *L)
{
    const struct tb_play *p = t->play;
    fprintf(f,
            "<g %s font-size=\"11\" fill=\"#333\" text-anchor=\"end\">"
            "<text x=\"%.2f\" y=\"%.2f\">tokens</text>"
            "<text x=\"%.2f\" y=\"%.2f\">speech</text></g>\n",
            FONT, PX0 - 6, LANE_TOK_Y + 13, PX0 - 6, LANE_SP_Y + 16);
    fprintf(f,
            "<g id=\"tokens\"><title>%zu token events (each tick is one arrival)</title>\n<path "
            "stroke=\"#555\" stroke-width=\"1\" fill=\"none\" d=\"",
            L->nev);
    for (size_t k = 0; t->s != NULL && k < t->s->n; k++)
        if (t->s->ev[k].kind == TB_KIND_CONTENT)
            fprintf(f, "M%.2f %.0fv18", L->x0 + t->s->ev[k].t * L->sc, LANE_TOK_Y);
    fprintf(f, "\"/></g>\n<g id=\"chunks\">\n");
    for (size_t j = 0; j < t->nplay; j++)
        fprintf(f,
                "<rect class=\"chunk\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"24\" "
                "fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\"><title>chunk %u: %u characters, "
                "ready %.3f s, spoken %.3f-%.3f s</title></rect>\n",
                L->x0 + p[j].start * L->sc, LANE_SP_Y, (p[j].end - p[j].start) * L->sc,
                j % 2 ? "#72b7b2" : "#4c78a8", p[j].chunk, p[j].cps, p[j].ready, p[j].start,
                p[j].end);
    fprintf(f, "</g>\n");
}

/* Buffered audio: a step at each r_j, a slope while playing. */
static void draw_buffer(FILE *f, const struct tb_svg_timeline *t, const struct layout *L)
{
    struct bufcur cur = {0, 0, 0.0, 0.0};
    double h = BUF_YB - BUF_YT;
    fprintf(f,
            "<g id=\"buffer\"><title>buffered audio: seconds of speech ready and not yet "
            "played</title>\n<path fill=\"#9ecae9\" fill-opacity=\"0.6\" stroke=\"#3182bd\" "
            "stroke-width=\"1.2\" d=\"M%.2f %.2f",
            L->x0, BUF_YB);
    for (size_t i = 0; i < L->nbp; i++) {
        double l, r, x;
        if (i > 0 && L->bp[i] == L->bp[i - 1])
            continue;
        buffered(t->play, t->nplay, &cur, L->bp[i], &l, &r);
        x = L->x0 + L->bp[i] * L->sc;
        fprintf(f, "L%.2f %.2fL%.2f %.2f", x, BUF_YB - l / L->bmax * h, x,
                BUF_YB - r / L->bmax * h);
    }
    fprintf(f, "L%.2f %.2fZ\"/></g>\n", L->x0 + L->bp[L->nbp - 1] * L->sc, BUF_YB);
}

/* The caller's wait, under the axis: a dashed line at the end of speech
 * (eou before the request) and a bracket from there to the first audible
 * sample, labelled v2v.  Drawn when the wait is more than the first audio
 * (an end-of-turn delay or a leading silence was modelled or measured),
 * as the title says it; with no end-of-turn delay the bracket starts at
 * the request and its label says so. */
static void draw_wait(FILE *f, const struct tb_svg_timeline *t, const struct layout *L)
{
    double eou = t->eou, x0, x1, y = BUF_YB + 48;
    if (!isfinite(eou) || !isfinite(t->audible) || !(eou > 0.0 || t->audible > t->ttfa + 0.0005))
        return;
    x0 = L->x0 - eou * L->sc;
    x1 = L->x0 + t->audible * L->sc;
    fprintf(f, "<g id=\"wait\" %s font-size=\"11\" fill=\"" WAIT_COLOR "\">\n", FONT);
    if (eou > 0.0)
        fprintf(f,
                "<line class=\"eos\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                "stroke=\"" WAIT_COLOR "\" stroke-width=\"1.5\" stroke-dasharray=\"4,3\">"
                "<title>the caller&apos;s end of speech: %.3f s (the end-of-turn delay, eou_s "
                "%.3f s, before the request)</title></line>\n",
                x0, LANE_TOK_Y, x0, y, -eou, eou);
    fprintf(
        f,
        "<path class=\"v2v\" d=\"M%.2f %.2fv-6M%.2f %.2fH%.2fM%.2f %.2fv-6\" stroke=\"" WAIT_COLOR
        "\" stroke-width=\"1.5\" fill=\"none\" data-from=\"%.6f\" data-to=\"%.6f\">"
        "<title>voice to voice: %.3f s</title></path>\n",
        x0, y, x0, y - 3, x1, x1, y, -eou, t->audible, eou + t->audible);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">v2v %.2f s: ", x0 + 2, y + 13, eou + t->audible);
    if (eou > 0.0)
        fprintf(f, "the caller&apos;s end of speech (%.2f s) to the first audible sample", -eou);
    else
        fprintf(f, "the request (no end-of-turn delay: end of speech = request) to the first "
                   "audible sample");
    fprintf(f, "</text>\n</g>\n");
}

/* Markers, each label on its own row (they are often close); the axes. */
static void draw_markers_axes(FILE *f, const struct tb_svg_timeline *t, const struct layout *L)
{
    fprintf(f, "<g id=\"markers\" %s font-size=\"11\">\n", FONT);
    marker(f, L->x0 + t->ttft * L->sc, 56.0, "#1f77b4", "first token", t->ttft, "");
    if (isfinite(t->audible) && t->audible > t->ttfa + 0.0005 && t->audible <= L->t1) {
        /* the first audible sample: its line, its time beside the first
         * audio's (the two are close: one label) */
        char what[64];
        double x = L->x0 + t->audible * L->sc;
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"58\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e377c2\" "
                "stroke-width=\"1.5\" stroke-dasharray=\"2,2\"><title>first audible sample (after "
                "the audio's leading silence): %.3f s</title></line>\n",
                x, x, BUF_YB, t->audible);
        snprintf(what, sizeof(what), ", first audible %.2f s", t->audible);
        marker(f, L->x0 + t->ttfa * L->sc, 68.0, "#2ca02c", "first audio", t->ttfa, what);
    } else {
        marker(f, L->x0 + t->ttfa * L->sc, 68.0, "#2ca02c", "first audio", t->ttfa, "");
    }
    fprintf(f, "</g>\n");
    tb_svg_y_axis(f, BUF_YB, BUF_YT, 0.0, L->bmax, "buffered audio (s)", "", 1);
    tb_svg_x_axis(f, BUF_YB, L->t0, L->t1, "time since the request was sent (s)", "");
}

static void draw_legend(FILE *f, const struct layout *L, int causes)
{
    double x = PX0, y = T_H - 30;
    char words[128];
    fprintf(f, "<g id=\"legend\">\n");
    x = tb_svg_legend(f, x, y, "tick", "#555", "token arrival");
    x = tb_svg_legend(f, x, y, "rect", "#4c78a8", "chunk being spoken");
    x = tb_svg_legend(f, x, y, "rect", "#9ecae9", "buffered audio");
    /* with causes, two entries in the width of one */
    if (causes)
        snprintf(words, sizeof(words), "gap: LLM late");
    else
        snprintf(words, sizeof(words), "gap: audio ran dry (%zu)", L->ngaps);
    x = tb_svg_legend(f, x, y, "gap", GAP_FILL, words);
    if (causes)
        x = tb_svg_legend(f, x, y, "gap", GAP_TTS_FILL, "TTS late");
    x = tb_svg_legend(f, x, y, "dash", "#1f77b4", "first token");
    tb_svg_legend(f, x, y, "dash", "#2ca02c", "first audio");
    fprintf(f, "</g>\n");
}

int tb_svg_timeline(FILE *f, const struct tb_svg_timeline *t)
{
    struct layout L;
    if (t->nplay == 0)
        return TB_EINVAL;
    memset(&L, 0, sizeof(L));
    time_scale(t, &L);
    if (breakpoints(t, &L) != 0)
        return TB_ENOMEM;
    draw_head(f, t, &L);
    draw_gaps(f, t, &L);
    draw_lanes(f, t, &L);
    draw_buffer(f, t, &L);
    draw_markers_axes(f, t, &L);
    draw_wait(f, t, &L);
    draw_legend(f, &L, t->causes);
    fprintf(f, "</svg>\n");
    free(L.bp);
    return ferror(f) ? TB_EIO : 0;
}
