/*
 * sweep.c - the playout model over a grid of settings and many streams
 * (see sweep.h for the maths of the inverse questions): the grid, its
 * axes and TTS settings checked and made, the inputs taken in, and what
 * the results are read through.  The run itself, its three phases over
 * the threads, is sweep_run.c; the state they share, sweep_state.h.
 * The latency distributions (one per latency value) are made at create
 * and only read after it (ttslat.h: any thread).
 */
#include "ttsbuf/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/analyze.h"
#include "ttsbuf/capq.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/ttslat.h"
#include "ttsbuf/voice.h"

#include "sweep_cap.h"
#include "sweep_state.h"

static const double ax_default[TB_AX__COUNT] = {
    TB_CHUNK_SENTENCE, 1, 0, TB_WPM_DEFAULT, 0, 0, 0, 0, 0};
static const char *const ax_names[TB_AX__COUNT] = {
    "chunk",           "min_chars", "tps",      "wpm",       "tts_latency_s",
    "tts_concurrency", "tts_rtf",   "rebuffer", "preroll_s",
};

void tb_sweep_opts_default(struct tb_sweep_opts *o)
{
    memset(o, 0, sizeof(*o));
}

const char *tb_sweep_axis_name(enum tb_sweep_axis a)
{
    return (unsigned)a < TB_AX__COUNT ? ax_names[a] : "?";
}

/* An axis value's allowed range; 0 ok, else an error in err. */
static int check_value(enum tb_sweep_axis a, double v, char *err, size_t errlen)
{
    static const double lo[TB_AX__COUNT] = {0, 1, 0, TB_WPM_MIN, 0, 0, 0, 0, 0};
    static const double hi[TB_AX__COUNT] = {
        TB_CHUNK__COUNT - 1, 100000, 1e5, TB_WPM_MAX, 60, 1024, 100, 1, 3600};
    if (!isfinite(v) || v < lo[a] || v > hi[a])
        return tb_seterr(err, errlen, TB_ERANGE, "%s: %g is outside %g..%g", ax_names[a], v, lo[a],
                         hi[a]);
    if ((a == TB_AX_CHUNK || a == TB_AX_MINCHARS || a == TB_AX_REBUFFER || a == TB_AX_CONC) &&
        v != floor(v))
        return tb_seterr(err, errlen, TB_EINVAL, "%s: %g is not a whole number", ax_names[a], v);
    if (a == TB_AX_TPS && v > 0 && v < 0.001)
        return tb_seterr(err, errlen, TB_ERANGE, "tps: %g is outside 0.001..1e5 (0: as recorded)",
                         v);
    return 0;
}

static int set_axes(struct tb_sweep *sw, const struct tb_sweep_opts *o, char *err, size_t errlen)
{
    size_t npt = 1;
    for (int a = 0; a < TB_AX__COUNT; a++) {
        size_t n = o->axis[a] != NULL ? o->n[a] : 0;
        const double *src = n > 0 ? o->axis[a] : &ax_default[a];
        if (n == 0)
            n = 1;
        if (n > TB_SWEEP_AXIS_MAX)
            return tb_seterr(err, errlen, TB_ETOOBIG, "%s: %zu values (at most %u)", ax_names[a], n,
                             TB_SWEEP_AXIS_MAX);
        sw->axis[a] = malloc(n * sizeof(double));
        if (sw->axis[a] == NULL)
            return TB_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            int rc = check_value((enum tb_sweep_axis)a, src[i], err, errlen);
            if (rc != 0)
                return rc;
            sw->axis[a][i] = src[i];
        }
        sw->n[a] = n;
        npt *= n;
        if (npt > TB_SWEEP_POINTS_MAX)
            return tb_seterr(err, errlen, TB_ETOOBIG, "the grid has over %u points",
                             TB_SWEEP_POINTS_MAX);
    }
    sw->npt = npt;
    sw->nseries = npt / sw->n[TB_AX_PREROLL];
    sw->nseg = sw->n[TB_AX_CHUNK] * sw->n[TB_AX_MINCHARS];
    return 0;
}

/* The spec of latency value v under the shape (not yet canonical).  The
 * values made from v and the shape's parameter are rounded to 12
 * significant digits, so that a preset's p50=0.188,p90=0.31 (a ratio
 * 0.31 / 0.188) comes back as written, not 0.31000000000000005; the
 * spec the outputs give is the one used either way. */
static void lat_spec_raw(const struct tb_sweep_tts *t, double v, char *buf, size_t len)
{
    if (t->shape == TB_LAT_LOGNORMAL)
        snprintf(buf, len, "lognormal:p50=%.17g,p90=%.12g", v, v * t->param);
    else if (t->shape == TB_LAT_UNIFORM)
        snprintf(buf, len, "uniform:%.12g..%.12g", v - t->param / 2, v + t->param / 2);
    else
        snprintf(buf, len, "%.17g", v);
}

/* Whether any point has a TTS stage (playout.h's: not a constant latency
 * alone). */
static int any_stage(const struct tb_sweep *sw)
{
    int stage =
        sw->tts.shape != TB_LAT_CONST || sw->tts.connect > 0.0 || sw->tts.output == TB_TTS_WHOLE;
    for (size_t i = 0; i < sw->n[TB_AX_CONC]; i++)
        stage |= sw->axis[TB_AX_CONC][i] > 0.0;
    for (size_t i = 0; i < sw->n[TB_AX_RTF]; i++)
        stage |= sw->axis[TB_AX_RTF][i] > 0.0;
    return stage;
}

/* The TTS options against the axes, and one latency object per value of
 * a distribution's median. */
static int set_tts(struct tb_sweep *sw, const struct tb_sweep_tts *t, char *err, size_t errlen)
{
    sw->tts = *t;
    if (!t->on) {
        if (any_stage(sw) || t->seed != 0 || t->output != TB_TTS_STREAM)
            return tb_seterr(err, errlen, TB_EINVAL,
                             "a TTS stage's options without tts.on (the outputs would not show "
                             "them)");
        return 0;
    }
    if (t->output != TB_TTS_STREAM && t->output != TB_TTS_WHOLE)
        return tb_seterr(err, errlen, TB_EINVAL, "tts output %d is not stream or whole", t->output);
    if (!(t->connect >= 0.0 && t->connect <= TB_TTSLAT_MAX))
        return tb_seterr(err, errlen, TB_ERANGE, "tts connect: %g is outside 0..%g", t->connect,
                         TB_TTSLAT_MAX);
    if ((t->shape == TB_LAT_LOGNORMAL && !(t->param >= 1.0 && t->param <= 1e6)) ||
        (t->shape == TB_LAT_UNIFORM && !(t->param >= 0.0 && t->param <= 2 * TB_TTSLAT_MAX)) ||
        (unsigned)t->shape > TB_LAT_UNIFORM)
        return tb_seterr(err, errlen, TB_ERANGE, "tts latency shape: parameter %g out of range",
                         t->param);
    for (size_t i = 0; i < sw->n[TB_AX_REBUFFER]; i++)
        if (sw->axis[TB_AX_REBUFFER][i] > 0.0 && any_stage(sw))
            return tb_seterr(err, errlen, TB_EINVAL,
                             "rebuffer: not modelled with a TTS stage (a concurrency, an RTF, a "
                             "connect latency or a latency distribution)");
    if (t->shape == TB_LAT_CONST)
        return 0;
    sw->lat = calloc(sw->n[TB_AX_LAT], sizeof(struct tb_ttslat *));
    if (sw->lat == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < sw->n[TB_AX_LAT]; i++) {
        char spec[128], why[256];
        int rc;
        lat_spec_raw(t, sw->axis[TB_AX_LAT][i], spec, sizeof(spec));
        rc = tb_ttslat_create(spec, t->seed, &sw->lat[i], why, sizeof(why));
        if (rc != 0)
            return tb_seterr(err, errlen, rc, "tts_latency_s: median %g: %s",
                             sw->axis[TB_AX_LAT][i], why);
    }
    return 0;
}

static int set_inputs(struct tb_sweep *sw, const struct tb_sweep_input *in, size_t nin, char *err,
                      size_t errlen)
{
    if (nin == 0)
        return tb_seterr(err, errlen, TB_EEMPTY, "no input stream");
    if (nin > TB_SWEEP_INPUTS_MAX)
        return tb_seterr(err, errlen, TB_ETOOBIG, "%zu input streams (at most %u)", nin,
                         TB_SWEEP_INPUTS_MAX);
    sw->in = calloc(nin, sizeof(*sw->in));
    if (sw->in == NULL)
        return TB_ENOMEM;
    sw->nin = nin;
    for (size_t i = 0; i < nin; i++) {
        const struct tb_stream *s = in[i].s;
        struct input *x = &sw->in[i];
        uint64_t tokens = 0;
        int first = 1;
        x->name = in[i].name;
        x->s = s;
        for (size_t k = 0; k < s->n; k++) {
            if (s->ev[k].kind != TB_KIND_CONTENT)
                continue;
            tokens += s->ev[k].tokens;
            if (first) {
                x->a0 = s->ev[k].t;
                x->t0 = tokens - 1;
                first = 0;
            }
            x->events++;
        }
        if (first)
            return tb_seterr(err, errlen, TB_EEMPTY, "%s: no content event", in[i].name);
        sw->events += x->events;
        x->eou = sw->eou_at != NULL ? sw->eou_at(sw->eou_ud, (uint32_t)(i + 1)) : 0.0;
        x->tool = sw->tool_head != NULL && !isnan(sw->tool_head[i]);
        x->tool_head = x->tool ? sw->tool_head[i] : 0.0;
        x->tool_start = x->tool ? sw->tool_start[i] : 0.0;
    }
    return 0;
}

int tb_sweep_create(const struct tb_sweep_opts *o, const struct tb_sweep_input *in, size_t nin,
                    struct tb_sweep **out, char *err, size_t errlen)
{
    struct tb_sweep *sw = calloc(1, sizeof(*sw));
    int rc;
    *out = NULL;
    if (sw == NULL)
        return TB_ENOMEM;
    if (!(o->target >= 0.0 && o->target <= 1.0)) {
        rc = tb_seterr(err, errlen, TB_ERANGE, "target share %g is outside 0..1", o->target);
        goto fail;
    }
    sw->target = o->target;
    if (!(o->target_v2v >= 0.0 && o->target_v2v <= 3600.0)) {
        rc = tb_seterr(err, errlen, TB_ERANGE, "target v2v %g is outside 0..3600 s", o->target_v2v);
        goto fail;
    }
    sw->target_v2v = o->target_v2v;
    if (o->capacity < 0 || o->capacity > TB_CAPQ_MAX || (o->capacity > 0 && !o->tts.on)) {
        rc = tb_seterr(err, errlen, TB_EINVAL,
                       "a shared TTS capacity %d: 1..%d, with a TTS stage (its latency)",
                       o->capacity, TB_CAPQ_MAX);
        goto fail;
    }
    sw->capacity = o->capacity;
    if (o->llm_capacity < 0 || o->llm_capacity > TB_CAPQ_MAX) {
        rc = tb_seterr(err, errlen, TB_EINVAL, "an LLM capacity %d: 1..%d", o->llm_capacity,
                       TB_CAPQ_MAX);
        goto fail;
    }
    sw->llm_capacity = o->llm_capacity;
    if ((o->capacity > 0 || o->llm_capacity > 0) && o->arrival != NULL) {
        sw->arrival = malloc(nin * sizeof(double));
        if (sw->arrival == NULL) {
            rc = TB_ENOMEM;
            goto fail;
        }
        for (size_t i = 0; i < nin; i++) {
            if (!(o->arrival[i] >= 0.0 && o->arrival[i] <= 1e9)) {
                rc = tb_seterr(err, errlen, TB_EINVAL, "stream %zu's arrival is not 0..1e9 s",
                               i + 1);
                goto fail;
            }
            sw->arrival[i] = o->arrival[i];
        }
    }
    sw->eou_at = o->eou_at;
    sw->eou_ud = o->eou_ud;
    sw->lead_at = o->lead_at;
    sw->lead_ud = o->lead_ud;
    rc = set_axes(sw, o, err, errlen);
    if (rc == 0)
        rc = set_tts(sw, &o->tts, err, errlen);
    sw->tool_head = o->tool_head; /* tool turns: read into the inputs */
    sw->tool_start = o->tool_start;
    if (rc == 0)
        rc = set_inputs(sw, in, nin, err, errlen);
    sw->tool_head = sw->tool_start = NULL;
    if (rc == 0)
        rc = tb_sweep_llm_plan(sw);
    if (rc != 0)
        goto fail;
    rc = TB_ENOMEM;
    if (sw->nseg > SIZE_MAX / sizeof(struct tb_chunks) / nin)
        goto fail;
    sw->chunks = malloc(sw->nseg * nin * sizeof(*sw->chunks));
    /* Empty lists at once: tb_sweep_destroy frees them if what follows
     * fails. */
    for (size_t i = 0; sw->chunks != NULL && i < sw->nseg * nin; i++)
        tb_analyze_chunks_init(&sw->chunks[i]);
    sw->pt = calloc(sw->npt, sizeof(*sw->pt));
    sw->lead = malloc(sw->nseg * nin * sizeof(*sw->lead));
    if (sw->chunks == NULL || sw->pt == NULL || sw->lead == NULL)
        goto fail;
    for (size_t p = 0; p < sw->npt; p++) {
        size_t idx[TB_AX__COUNT];
        tb_sweep_point_axes(sw, p, idx);
        for (int a = 0; a < TB_AX__COUNT; a++)
            sw->pt[p].ax[a] = sw->axis[a][idx[a]];
    }
    *out = sw;
    return 0;
fail:
    if (rc == TB_ENOMEM)
        tb_seterr(err, errlen, rc, "out of memory");
    tb_sweep_destroy(sw);
    return rc;
}

void tb_sweep_destroy(struct tb_sweep *sw)
{
    if (sw == NULL)
        return;
    if (sw->chunks != NULL)
        for (size_t i = 0; i < sw->nseg * sw->nin; i++)
            tb_analyze_chunks_free(&sw->chunks[i]);
    free(sw->chunks);
    free(sw->lead);
    free(sw->arrival);
    free(sw->llm_wait);
    free(sw->pt);
    free(sw->in);
    for (size_t i = 0; sw->lat != NULL && i < sw->n[TB_AX_LAT]; i++)
        tb_ttslat_destroy(sw->lat[i]);
    free(sw->lat);
    for (int a = 0; a < TB_AX__COUNT; a++)
        free(sw->axis[a]);
    free(sw);
}

void tb_sweep_point_axes(const struct tb_sweep *sw, size_t point, size_t idx[TB_AX__COUNT])
{
    for (int a = TB_AX__COUNT - 1; a >= 0; a--) {
        idx[a] = point % sw->n[a];
        point /= sw->n[a];
    }
}

size_t tb_sweep_point_index(const struct tb_sweep *sw, const size_t idx[TB_AX__COUNT])
{
    size_t p = 0;
    for (int a = 0; a < TB_AX__COUNT; a++)
        p = p * sw->n[a] + idx[a];
    return p;
}

const struct tb_sweep_point *tb_sweep_points(const struct tb_sweep *sw, size_t *n)
{
    *n = sw->npt;
    return sw->pt;
}

const double *tb_sweep_axis_values(const struct tb_sweep *sw, enum tb_sweep_axis a, size_t *n)
{
    *n = sw->n[a];
    return sw->axis[a];
}

const struct tb_sweep_tts *tb_sweep_tts(const struct tb_sweep *sw)
{
    return &sw->tts;
}

int tb_sweep_lat_spec(const struct tb_sweep *sw, double v, char *buf, size_t len)
{
    char raw[128];
    struct tb_ttslat *t = NULL;
    int n;
    lat_spec_raw(&sw->tts, v, raw, sizeof(raw));
    if (tb_ttslat_create(raw, sw->tts.seed, &t, NULL, 0) != 0)
        return snprintf(buf, len, "%s", raw); /* out of memory: the text as made */
    n = tb_ttslat_format(t, buf, len);
    tb_ttslat_destroy(t);
    return n;
}

double tb_sweep_target(const struct tb_sweep *sw)
{
    return sw->target;
}

int tb_sweep_capacity(const struct tb_sweep *sw)
{
    return sw->capacity;
}

int tb_sweep_llm_capacity(const struct tb_sweep *sw)
{
    return sw->llm_capacity;
}

const struct tb_stats *tb_sweep_llm_wait(const struct tb_sweep *sw)
{
    return &sw->llm_stats;
}

double tb_sweep_target_v2v(const struct tb_sweep *sw)
{
    return sw->target_v2v;
}

double tb_sweep_v2v_share(const struct tb_sweep *sw)
{
    return sw->target > 0.0 ? sw->target : 1.0;
}

int tb_sweep_v2v_meets(const struct tb_sweep *sw, size_t p)
{
    const struct tb_sweep_point *q = &sw->pt[p];
    /* gapless is clean / n: compared with the share as counts, so 0.95 x
     * 20 streams asks for 19 (the inverse questions' 1e-9 slack) */
    double need = ceil(tb_sweep_v2v_share(sw) * (double)sw->nin - 1e-9);
    return sw->target_v2v > 0.0 && q->v2v.count > 0 && q->v2v.p95 <= sw->target_v2v &&
           q->gapless * (double)sw->nin >= need - 1e-6;
}

/* Whether point a is a better answer than point b (both meet). */
static int better(const struct tb_sweep_point *a, const struct tb_sweep_point *b)
{
    if (a->v2v.p95 != b->v2v.p95)
        return a->v2v.p95 < b->v2v.p95;
    return a->gap_total.mean < b->gap_total.mean;
}

size_t tb_sweep_v2v_pick(const struct tb_sweep *sw, size_t p)
{
    size_t idx[TB_AX__COUNT], best = SIZE_MAX;
    static const enum tb_sweep_axis tuned[4] = {TB_AX_CHUNK, TB_AX_MINCHARS, TB_AX_CONC,
                                                TB_AX_PREROLL};
    size_t n[4], k[4];
    if (sw->target_v2v <= 0.0)
        return SIZE_MAX;
    tb_sweep_point_axes(sw, p, idx);
    for (int a = 0; a < 4; a++) {
        n[a] = sw->n[tuned[a]];
        k[a] = 0;
    }
    /* Every combination of the tuned axes, the others as p's: an
     * odometer over k. */
    for (;;) {
        size_t q;
        int a;
        for (a = 0; a < 4; a++)
            idx[tuned[a]] = k[a];
        q = tb_sweep_point_index(sw, idx);
        if (tb_sweep_v2v_meets(sw, q) && (best == SIZE_MAX || better(&sw->pt[q], &sw->pt[best])))
            best = q;
        for (a = 3; a >= 0 && ++k[a] == n[a]; a--)
            k[a] = 0;
        if (a < 0)
            return best;
    }
}

size_t tb_sweep_inputs(const struct tb_sweep *sw)
{
    return sw->nin;
}

uint64_t tb_sweep_events_per_point(const struct tb_sweep *sw)
{
    return sw->events;
}

/* ------------------------------------------------------------ the model */
