/*
 * sweep_out.c - the sweep's table, CSV and JSON (sweep_out.h).
 */
#include "sweep_out.h"
#include "sweep_tool.h"

#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "jsonout.h"
#include "sweep_rec.h"
#include "tts_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/jsonline.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/ttslat.h"

/* The statistics in the order of the CSV columns and JSON keys. */
#define NSTAT 6
static const char *const stat_names[NSTAT] = {"underruns", "gap_total_s", "interruptions",
                                              "ttfa_s",    "min_tps",     "v2v_s"};

static const struct tb_stats *stat_of(const struct tb_sweep_point *p, int i)
{
    const struct tb_stats *v[NSTAT] = {&p->underruns, &p->gap_total, &p->interruptions,
                                       &p->ttfa,      &p->min_tps,   &p->v2v};
    return v[i];
}

/* The statistics an output has: v2v only with a turn model or the v2v
 * target (ri->wait; without them it is the first audio, and every output
 * stays the earlier version's). */
static int nstat(const struct tb_cli_sweep_info *ri)
{
    return ri->wait ? NSTAT : NSTAT - 1;
}

static int varies(const struct tb_sweep *sw, int a)
{
    size_t n;
    tb_sweep_axis_values(sw, (enum tb_sweep_axis)a, &n);
    return n > 1;
}

/* Whether axis a is in the outputs: the TTS stage's axes only when the
 * sweep has a stage (without one every output is the earlier version's). */
static int shown(const struct tb_sweep *sw, int a)
{
    return (a != TB_AX_CONC && a != TB_AX_RTF) || tb_sweep_tts(sw)->on;
}

/* An axis value as the CLI spells it. */
static void value(char *buf, size_t len, int a, double v)
{
    if (a == TB_AX_CHUNK)
        snprintf(buf, len, "%s", tb_seg_policy_name((enum tb_chunk_policy)v));
    else if (a == TB_AX_REBUFFER)
        snprintf(buf, len, "%s", v > 0 ? "on" : "off");
    else if (a == TB_AX_CONC && v == 0)
        snprintf(buf, len, "unlimited");
    else
        snprintf(buf, len, "%g", v);
}

/* A table cell of width characters: the number with prec decimals (and
 * a '%' when pct), or "-" when not measured. */
static void cell(FILE *f, int width, int prec, int pct, double v)
{
    if (!isfinite(v))
        fprintf(f, "%*s", width, "-");
    else if (pct)
        fprintf(f, "%*.*f%%", width - 1, prec, v);
    else
        fprintf(f, "%*.*f", width, prec, v);
}

/* One stream left out: "NAME: cut off (connection_lost at 3.41 s): why". */
static void not_swept_line(FILE *f, const struct tb_cli_source *x, int cls)
{
    const struct tb_stream_end *e = &x->s.end;
    fprintf(f, "    %s: %s (%s", x->name, cls == TB_END_CLASS_INCOMPLETE ? "cut off" : "failed",
            tb_end_name(e->kind));
    if (isfinite(e->t))
        fprintf(f, " at %.2f s", e->t);
    fprintf(f, ", %zu event%s)", x->s.n, x->s.n == 1 ? "" : "s");
    if (e->message[0] != '\0')
        fprintf(f, ": %s", e->message);
    else if (x->s.n == 0)
        fprintf(f, ": the trace holds no event");
    fputc('\n', f);
}

void tb_cli_sweep_print_not_swept(FILE *f, const struct tb_cli_sweep_info *ri, size_t max)
{
    size_t shown = 0, left = ri->st.incomplete + ri->st.failed;
    if (left == 0 || ri->src == NULL)
        return;
    fprintf(f, "\n  not in the shares: %zu cut off, %zu failed\n", ri->st.incomplete,
            ri->st.failed);
    for (size_t i = 0; i < ri->src->n && shown < max; i++) {
        int cls = tb_cli_source_standing(&ri->src->v[i]);
        if (cls != TB_END_CLASS_INCOMPLETE && cls != TB_END_CLASS_FAILED)
            continue;
        not_swept_line(f, &ri->src->v[i], cls);
        shown++;
    }
    if (left > shown)
        fprintf(f, "    ... %zu more (--json lists them all)\n", left - shown);
}

static const char *const col_names[TB_AX__COUNT] = {
    "chunk", "min-chars", "tps", "wpm", "latency", "concurrency", "rtf", "rebuffer", "preroll"};

/* A column's name: the latency is a median when it has a shape. */
static const char *col_name(const struct tb_sweep *sw, int a)
{
    return a == TB_AX_LAT && tb_sweep_tts(sw)->shape != TB_LAT_CONST ? "latency-p50" : col_names[a];
}

/* The column width of an axis that varies: its name's or its longest
 * value's. */
static int axis_width(const struct tb_sweep *sw, int a)
{
    size_t n;
    const double *v = tb_sweep_axis_values(sw, (enum tb_sweep_axis)a, &n);
    int w = (int)strlen(col_name(sw, a));
    for (size_t i = 0; i < n; i++) {
        char b[64];
        value(b, sizeof(b), a, v[i]);
        if ((int)strlen(b) > w)
            w = (int)strlen(b);
    }
    return w;
}

/* The axes that vary, one column each (chunk left, numbers right). */
static void axes_cells(FILE *f, const struct tb_sweep *sw, const double *ax, int header)
{
    for (int a = 0; a < TB_AX__COUNT; a++) {
        char v[64];
        if (!varies(sw, a))
            continue;
        if (header == 0)
            snprintf(v, sizeof(v), "%s", "");
        else if (header == 1)
            snprintf(v, sizeof(v), "%s", col_name(sw, a));
        else
            value(v, sizeof(v), a, ax[a]);
        fprintf(f, a == TB_AX_CHUNK ? "%-*s " : "%*s ", axis_width(sw, a), v);
    }
}

static void print_answers(FILE *f, const struct tb_sweep *sw, const struct tb_sweep_point *pt,
                          size_t npt, double target);
static void print_v2v_answers(FILE *f, const struct tb_sweep *sw);

/* The TTS stage's line: the latency's shape, the seed, the connect
 * latency, the output, the preset. */
static void print_tts(FILE *f, const struct tb_sweep *sw, const struct tb_cli_sweep_info *ri)
{
    const struct tb_sweep_tts *t = tb_sweep_tts(sw);
    if (!t->on)
        return;
    fprintf(f, "  tts:");
    if (t->shape == TB_LAT_LOGNORMAL)
        fprintf(f, " latency lognormal around each median, p90 = %g x p50, seed %llu,", t->param,
                (unsigned long long)t->seed);
    else if (t->shape == TB_LAT_UNIFORM)
        fprintf(f, " latency uniform, %g s wide around each median, seed %llu,", t->param,
                (unsigned long long)t->seed);
    else
        fprintf(f, " latency constant,");
    fprintf(f, " connect %g s, output %s", t->connect, tb_cli_tts_output_name(t->output));
    if (ri->tts_preset != NULL)
        fprintf(f, ", preset %s", ri->tts_preset);
    fputc('\n', f);
    if (t->shape != TB_LAT_CONST)
        fprintf(f, "  (every stream at every setting draws its latencies from the same seed)\n");
}
void tb_cli_sweep_print_table(FILE *f, const struct tb_sweep *sw,
                              const struct tb_cli_sweep_info *ri)
{
    size_t npt, nin = tb_sweep_inputs(sw);
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &npt);
    double target = tb_sweep_target(sw);
    uint64_t ev = tb_sweep_events_per_point(sw);
    char v[64];
    int first = 1, tts = tb_sweep_tts(sw)->on;

    fprintf(f,
            "ttsbuf sweep: %zu stream%s x %zu setting%s, %.3f s on %u thread%s "
            "(%.1f M event-simulations/s)\n",
            nin, nin == 1 ? "" : "s", npt, npt == 1 ? "" : "s", ri->seconds, ri->threads,
            ri->threads == 1 ? "" : "s",
            ri->seconds > 0 ? (double)ev * (double)npt / ri->seconds / 1e6 : 0.0);
    /* Every share below is of the swept streams: cut-off and failed ones
     * are counted apart (listed at the end), never as gap-free. */
    if (ri->st.incomplete + ri->st.failed > 0)
        fprintf(f, "  not swept: %zu cut off, %zu failed (listed below; not in any share)\n",
                ri->st.incomplete, ri->st.failed);
    if (ri->st.unknown_end > 0)
        fprintf(f,
                "  note: %zu stream%s of unknown end (traces without an end line), read as "
                "complete\n",
                ri->st.unknown_end, ri->st.unknown_end == 1 ? "" : "s");
    fprintf(f, "  fixed:");
    for (int a = 0; a < TB_AX__COUNT; a++) {
        if (varies(sw, a) || !shown(sw, a))
            continue;
        value(v, sizeof(v), a, pt[0].ax[a]);
        fprintf(f, "%s %s %s", first ? "" : ",", col_name(sw, a),
                a == TB_AX_TPS && pt[0].ax[a] == 0 ? "as recorded" : v);
        first = 0;
    }
    fprintf(f, "%s\n", first ? " nothing" : "");
    tb_cli_sweep_rec_line(f, ri->rec);
    print_tts(f, sw, ri);
    fputc('\n', f);

    /* Two header rows: groups, then the statistic.  The statistics kept
     * here are those a reader decides on (73 columns and the axes: under
     * 100 for three axes); all of them, and interruptions, are in --csv
     * and --json. */
    axes_cells(f, sw, NULL, 0);
    fprintf(f, "%8s  %-9s  %-17s  %-11s  %s%-11s%s%s\n", "gap-free", "underruns", "total gap, s",
            "first audio", ri->wait ? "v2v, s       " : "", "min TPS", tts ? "  none  by tts" : "",
            target > 0 ? "  TPS for" : "");
    axes_cells(f, sw, NULL, 1);
    fprintf(f, "%8s  %5s %3s  %5s %5s %5s  %5s %5s  %s%5s %5s", "", "mean", "p95", "mean", "p95",
            "max", "p50", "p95", ri->wait ? "  p50   p95  " : "", "p50", "p95");
    if (tts)
        fprintf(f, "  %4s  %6s", "", "");
    if (target > 0)
        fprintf(f, "  %6.0f%%", target * 100);
    fputc('\n', f);
    for (size_t p = 0; p < npt; p++) {
        const struct tb_sweep_point *q = &pt[p];
        axes_cells(f, sw, q->ax, 2);
        fprintf(f, "%7.1f%%  %5.2f %3.0f  %5.2f %5.2f %5.2f  %5.2f %5.2f  ", q->gapless * 100,
                q->underruns.mean, q->underruns.p95, q->gap_total.mean, q->gap_total.p95,
                q->gap_total.max, q->ttfa.p50, q->ttfa.p95);
        if (ri->wait) {
            cell(f, 5, 2, 0, q->v2v.p50);
            fputc(' ', f);
            cell(f, 5, 2, 0, q->v2v.p95);
            fputs("  ", f);
        }
        cell(f, 5, 1, 0, q->min_tps.p50);
        fputc(' ', f);
        cell(f, 5, 1, 0, q->min_tps.p95);
        if (tts) {
            /* The share of the silence the TTS stage owes (the mean is a
             * sum over the streams divided by their count). */
            fprintf(f, "  %4zu  ", q->min_tps_none);
            cell(f, 6, 1, 1,
                 q->gap_total.mean > 0 ? 100 * q->gap_tts.mean / q->gap_total.mean : NAN);
        }
        if (target > 0) {
            fprintf(f, "  ");
            cell(f, 7, 1, 0, q->tps_for_target);
        }
        fputc('\n', f);
    }
    if (tts)
        fprintf(f, "\n  (none: streams whose minimum TPS is none, left out of min TPS; by tts: "
                   "the share of the silence owed to the TTS stage)\n");
    if (target > 0)
        print_answers(f, sw, pt, npt, target);
    if (tb_sweep_target_v2v(sw) > 0)
        print_v2v_answers(f, sw);
    if (ri->tool != NULL)
        tb_cli_sweep_tool_print(f, ri->tool); /* --tool-latency's table */
    tb_cli_sweep_print_not_swept(f, ri, 20);
}

/* The inverse answers: the smallest pre-roll per series. */
static void print_answers(FILE *f, const struct tb_sweep *sw, const struct tb_sweep_point *pt,
                          size_t npt, double target)
{
    char v[64];
    int first;
    size_t npre;
    tb_sweep_axis_values(sw, TB_AX_PREROLL, &npre);
    fprintf(f, "\n  smallest pre-roll with >= %g%% of the streams gap-free", target * 100);
    fprintf(f, "%s:\n", npt / npre > 1 ? ", per setting" : "");
    for (size_t p = 0; p < npt; p += npre) {
        const struct tb_sweep_point *q = &pt[p];
        fprintf(f, "   ");
        first = 1;
        for (int a = 0; a < TB_AX__COUNT; a++) {
            if (a == TB_AX_PREROLL || !varies(sw, a))
                continue;
            value(v, sizeof(v), a, q->ax[a]);
            fprintf(f, "%s %s %s", first ? "" : ",", col_name(sw, a), v);
            first = 0;
        }
        fprintf(f, "%s %.3f s\n", first ? "" : ":", q->preroll_for_target);
    }
    fprintf(f,
            "  (TPS for %g%%: the smallest constant token rate at which that share of the "
            "streams\n  plays with no gap at the row's pre-roll)\n",
            target * 100);
}

/* Whether axis a is one the v2v question tunes (sweep.h). */
static int tuned(int a)
{
    return a == TB_AX_CHUNK || a == TB_AX_MINCHARS || a == TB_AX_CONC || a == TB_AX_PREROLL;
}

/* Whether point p is the first of its v2v group (the tuned axes at their
 * first values). */
static int group_head(const struct tb_sweep *sw, size_t p)
{
    size_t idx[TB_AX__COUNT];
    tb_sweep_point_axes(sw, p, idx);
    for (int a = 0; a < TB_AX__COUNT; a++)
        if (tuned(a) && idx[a] != 0)
            return 0;
    return 1;
}

/* "a v, b w" of the axes that vary, tuned ones (want 1) or the others. */
static void axes_text(FILE *f, const struct tb_sweep *sw, const double *ax, int want)
{
    char v[64];
    int first = 1;
    for (int a = 0; a < TB_AX__COUNT; a++) {
        if (tuned(a) != want || !varies(sw, a) || !shown(sw, a))
            continue;
        value(v, sizeof(v), a, ax[a]);
        fprintf(f, "%s%s %s", first ? "" : ", ", col_name(sw, a), v);
        first = 0;
    }
    if (first)
        fprintf(f, "%s", want ? "the one setting" : "the grid");
}

/* The v2v answers: per group of the other axes, the best setting. */
static void print_v2v_answers(FILE *f, const struct tb_sweep *sw)
{
    size_t npt;
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &npt);
    fprintf(f,
            "\n  settings with v2v p95 <= %g s and >= %g%% of the streams gap-free, the best "
            "(smallest v2v p95):\n",
            tb_sweep_target_v2v(sw), tb_sweep_v2v_share(sw) * 100);
    for (size_t p = 0; p < npt; p++) {
        size_t b;
        if (!group_head(sw, p))
            continue;
        b = tb_sweep_v2v_pick(sw, p);
        fprintf(f, "    ");
        axes_text(f, sw, pt[p].ax, 0);
        fprintf(f, ": ");
        if (b == SIZE_MAX) {
            fprintf(f, "none\n");
            continue;
        }
        axes_text(f, sw, pt[b].ax, 1);
        fprintf(f, " (v2v p95 %.3f s, %.1f%% gap-free)\n", pt[b].v2v.p95, pt[b].gapless * 100);
    }
}

/* A CSV cell: the number, or empty when not measured. */
static void csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.9g", v);
}

int tb_cli_sweep_write_csv(FILE *f, const struct tb_sweep *sw, const struct tb_cli_sweep_info *ri)
{
    size_t npt;
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &npt);
    char v[TB_TTSLAT_SPEC_MAX + 64];
    int tts = tb_sweep_tts(sw)->on;
    for (int a = 0; a < TB_AX__COUNT; a++)
        if (shown(sw, a))
            fprintf(f, "%s,", tb_sweep_axis_name((enum tb_sweep_axis)a));
    if (tts)
        fprintf(f, "tts_latency,tts_seed,tts_connect_s,");
    fprintf(f, "gapless_share");
    for (int i = 0; i < nstat(ri); i++) {
        fprintf(f, ",%s_count", stat_names[i]);
        for (int k = 0; tb_stats_fields[k] != NULL; k++)
            fprintf(f, ",%s_%s", stat_names[i], tb_stats_fields[k]);
    }
    fprintf(f, ",tps_for_target,preroll_for_target_s,streams,events,incomplete,failed");
    if (tb_sweep_target_v2v(sw) > 0)
        fprintf(f, ",v2v_target_met,v2v_best");
    if (tts) {
        fprintf(f, ",min_tps_none,min_tps_scan");
        for (int i = 0; i < 2; i++) {
            fprintf(f, ",%s_count", i == 0 ? "gap_llm_s" : "gap_tts_s");
            for (int k = 0; tb_stats_fields[k] != NULL; k++)
                fprintf(f, ",%s_%s", i == 0 ? "gap_llm_s" : "gap_tts_s", tb_stats_fields[k]);
        }
    }
    fputc('\n', f);
    for (size_t p = 0; p < npt; p++) {
        for (int a = 0; a < TB_AX__COUNT; a++) {
            if (!shown(sw, a))
                continue;
            if (a == TB_AX_REBUFFER)
                snprintf(v, sizeof(v), "%d", pt[p].ax[a] > 0);
            else if (a == TB_AX_CONC)
                snprintf(v, sizeof(v), "%g", pt[p].ax[a]);
            else
                value(v, sizeof(v), a, pt[p].ax[a]);
            fprintf(f, "%s,", v);
        }
        if (tts) {
            const struct tb_sweep_tts *t = tb_sweep_tts(sw);
            tb_sweep_lat_spec(sw, pt[p].ax[TB_AX_LAT], v, sizeof(v));
            /* A log-normal's spec holds a comma: quoted (RFC 4180). */
            fprintf(f, strchr(v, ',') != NULL ? "\"%s\"," : "%s,", v);
            if (t->shape != TB_LAT_CONST)
                fprintf(f, "%llu", (unsigned long long)t->seed);
            fprintf(f, ",%.9g,", t->connect);
        }
        fprintf(f, "%.6g", pt[p].gapless);
        for (int i = 0; i < nstat(ri); i++) {
            const struct tb_stats *s = stat_of(&pt[p], i);
            fprintf(f, ",%zu", s->count);
            for (int k = 0; tb_stats_fields[k] != NULL; k++)
                csv_num(f, tb_stats_field(s, k));
        }
        csv_num(f, pt[p].tps_for_target);
        csv_num(f, pt[p].preroll_for_target);
        fprintf(f, ",%zu,%llu,%zu,%zu", tb_sweep_inputs(sw), (unsigned long long)pt[p].events,
                ri->st.incomplete, ri->st.failed);
        if (tb_sweep_target_v2v(sw) > 0)
            fprintf(f, ",%d,%d", tb_sweep_v2v_meets(sw, p), tb_sweep_v2v_pick(sw, p) == p);
        if (tts) {
            fprintf(f, ",%zu,%zu", pt[p].min_tps_none, pt[p].min_tps_scan);
            for (int i = 0; i < 2; i++) {
                const struct tb_stats *s = i == 0 ? &pt[p].gap_llm : &pt[p].gap_tts;
                fprintf(f, ",%zu", s->count);
                for (int k = 0; tb_stats_fields[k] != NULL; k++)
                    csv_num(f, tb_stats_field(s, k));
            }
        }
        fputc('\n', f);
    }
    return ferror(f) ? TB_EIO : 0;
}

/* An axis value as JSON: policy names and rebuffer as they are spelt,
 * numbers as numbers. */
static cJSON *axis_item(int a, double v)
{
    if (a == TB_AX_CHUNK)
        return cJSON_CreateString(tb_seg_policy_name((enum tb_chunk_policy)v));
    if (a == TB_AX_REBUFFER)
        return cJSON_CreateBool(v > 0);
    if (a == TB_AX_CONC && v == 0)
        return cJSON_CreateNull(); /* unlimited, as sim's "tts" says it */
    return cJSON_CreateNumber(v);
}

/* The seed as an exact integer (a double would round seeds past 2^53),
 * or null when the latency draws nothing. */
static void add_seed(cJSON *o, const char *key, const struct tb_sweep_tts *t)
{
    char seed[32];
    if (t->shape == TB_LAT_CONST) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)t->seed);
    cJSON_AddRawToObject(o, key, seed);
}

/* options.tts: what every point shares. */
static void add_tts_options(cJSON *opts, const struct tb_sweep *sw,
                            const struct tb_cli_sweep_info *ri)
{
    const struct tb_sweep_tts *t = tb_sweep_tts(sw);
    static const char *const shapes[] = {"constant", "lognormal", "uniform"};
    cJSON *o = cJSON_AddObjectToObject(opts, "tts");
    if (o == NULL)
        return;
    cJSON_AddStringToObject(o, "latency_shape", shapes[t->shape]);
    tb_cli_json_num(o, "latency_p90_ratio", t->shape == TB_LAT_LOGNORMAL ? t->param : NAN);
    tb_cli_json_num(o, "latency_width_s", t->shape == TB_LAT_UNIFORM ? t->param : NAN);
    add_seed(o, "seed", t);
    cJSON_AddNumberToObject(o, "connect_s", t->connect);
    cJSON_AddStringToObject(o, "output", tb_cli_tts_output_name(t->output));
    if (ri->tts_preset != NULL)
        cJSON_AddStringToObject(o, "preset", ri->tts_preset);
    else
        cJSON_AddNullToObject(o, "preset");
}

/* A point's TTS keys: its latency spec, seed, connect latency; the
 * streams whose minimum TPS is none or scanned; the silence by cause. */
static void add_tts_point(cJSON *o, const struct tb_sweep *sw, const struct tb_sweep_point *p)
{
    char spec[TB_TTSLAT_SPEC_MAX + 64];
    tb_sweep_lat_spec(sw, p->ax[TB_AX_LAT], spec, sizeof(spec));
    cJSON_AddStringToObject(o, "tts_latency", spec);
    add_seed(o, "tts_seed", tb_sweep_tts(sw));
    cJSON_AddNumberToObject(o, "tts_connect_s", tb_sweep_tts(sw)->connect);
}

/* "not_swept": every stream left out of the shares, with its end. */
static int add_not_swept(cJSON *root, const struct tb_cli_sweep_info *ri)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "not_swept");
    if (arr == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; ri->src != NULL && i < ri->src->n; i++) {
        const struct tb_cli_source *x = &ri->src->v[i];
        const struct tb_stream_end *e = &x->s.end;
        int cls = tb_cli_source_standing(x);
        cJSON *o;
        if (cls != TB_END_CLASS_INCOMPLETE && cls != TB_END_CLASS_FAILED)
            continue;
        if ((o = cJSON_CreateObject()) == NULL)
            return TB_ENOMEM;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "name", x->name);
        cJSON_AddStringToObject(o, "standing",
                                cls == TB_END_CLASS_INCOMPLETE ? "incomplete" : "failed");
        cJSON_AddStringToObject(o, "end", tb_end_name(e->kind));
        tb_cli_json_num(o, "t_s", e->t);
        cJSON_AddNumberToObject(o, "events", (double)x->s.n);
        tb_json_add_error(o, e->error[0] ? e->error : NULL, e->message, e->http_status);
    }
    return 0;
}

/* "v2v_answers": per group of the other axes (its first point's index),
 * the best point's index, or null when none meets the target. */
static int add_v2v_answers(cJSON *root, const struct tb_sweep *sw)
{
    size_t npt;
    cJSON *arr = cJSON_AddArrayToObject(root, "v2v_answers");
    tb_sweep_points(sw, &npt);
    for (size_t p = 0; arr != NULL && p < npt; p++) {
        size_t b;
        cJSON *o;
        if (!group_head(sw, p))
            continue;
        if ((o = cJSON_CreateObject()) == NULL)
            return TB_ENOMEM;
        cJSON_AddItemToArray(arr, o);
        b = tb_sweep_v2v_pick(sw, p);
        cJSON_AddNumberToObject(o, "group", (double)p);
        if (b == SIZE_MAX)
            cJSON_AddNullToObject(o, "best");
        else
            cJSON_AddNumberToObject(o, "best", (double)b);
    }
    return arr == NULL ? TB_ENOMEM : 0;
}

int tb_cli_sweep_write_json(FILE *f, const struct tb_sweep *sw, const struct tb_cli_sweep_info *ri)
{
    size_t npt, n;
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &npt);
    double target = tb_sweep_target(sw);
    cJSON *root = tb_cli_json_doc(TB_SCHEMA_SWEEP, TB_SCHEMA_SWEEP_V, "sweep"), *opts, *axes, *pts;
    if (root == NULL)
        return TB_ENOMEM;
    opts = cJSON_AddObjectToObject(root, "options");
    if (opts != NULL) {
        tb_cli_json_num(opts, "target_gapless", target > 0 ? target : NAN);
        if (tb_sweep_target_v2v(sw) > 0) /* only then: the v1 output stays as it was */
            cJSON_AddNumberToObject(opts, "target_v2v_s", tb_sweep_target_v2v(sw));
    }
    axes = opts != NULL ? cJSON_AddObjectToObject(opts, "axes") : NULL;
    if (opts != NULL && tb_sweep_tts(sw)->on)
        add_tts_options(opts, sw, ri);
    for (int a = 0; axes != NULL && a < TB_AX__COUNT; a++) {
        const double *v = tb_sweep_axis_values(sw, (enum tb_sweep_axis)a, &n);
        cJSON *arr;
        if (!shown(sw, a))
            continue;
        arr = cJSON_AddArrayToObject(axes, tb_sweep_axis_name((enum tb_sweep_axis)a));
        for (size_t i = 0; arr != NULL && i < n; i++)
            cJSON_AddItemToArray(arr, axis_item(a, v[i]));
    }
    cJSON_AddNumberToObject(root, "streams", (double)tb_sweep_inputs(sw));
    cJSON_AddNumberToObject(root, "unknown_end", (double)ri->st.unknown_end);
    cJSON_AddNumberToObject(root, "incomplete", (double)ri->st.incomplete);
    cJSON_AddNumberToObject(root, "failed", (double)ri->st.failed);
    if (add_not_swept(root, ri) != 0) {
        cJSON_Delete(root);
        return TB_ENOMEM;
    }
    cJSON_AddNumberToObject(root, "events_per_point", (double)tb_sweep_events_per_point(sw));
    cJSON_AddNumberToObject(root, "seconds", ri->seconds);
    cJSON_AddNumberToObject(root, "threads", ri->threads);
    pts = cJSON_AddArrayToObject(root, "points");
    for (size_t p = 0; pts != NULL && p < npt; p++) {
        cJSON *o = cJSON_CreateObject();
        if (o == NULL)
            break;
        for (int a = 0; a < TB_AX__COUNT; a++)
            if (shown(sw, a))
                cJSON_AddItemToObject(o, tb_sweep_axis_name((enum tb_sweep_axis)a),
                                      axis_item(a, pt[p].ax[a]));
        if (tb_sweep_tts(sw)->on)
            add_tts_point(o, sw, &pt[p]);
        cJSON_AddNumberToObject(o, "gapless_share", pt[p].gapless);
        for (int i = 0; i < nstat(ri); i++)
            tb_cli_json_stats(o, stat_names[i], stat_of(&pt[p], i));
        tb_cli_json_num(o, "tps_for_target", pt[p].tps_for_target);
        tb_cli_json_num(o, "preroll_for_target_s", pt[p].preroll_for_target);
        cJSON_AddNumberToObject(o, "streams", (double)tb_sweep_inputs(sw));
        cJSON_AddNumberToObject(o, "events", (double)pt[p].events);
        cJSON_AddNumberToObject(o, "incomplete", (double)ri->st.incomplete);
        cJSON_AddNumberToObject(o, "failed", (double)ri->st.failed);
        if (tb_sweep_target_v2v(sw) > 0) {
            cJSON_AddBoolToObject(o, "v2v_target_met", tb_sweep_v2v_meets(sw, p));
            cJSON_AddBoolToObject(o, "v2v_best", tb_sweep_v2v_pick(sw, p) == p);
        }
        if (tb_sweep_capacity(sw) > 0) /* only with a shared capacity */
            tb_cli_json_stats(o, "tts_capacity_wait_s", &pt[p].cap_wait);
        if (tb_sweep_tts(sw)->on) {
            cJSON_AddNumberToObject(o, "min_tps_none", (double)pt[p].min_tps_none);
            cJSON_AddNumberToObject(o, "min_tps_scan", (double)pt[p].min_tps_scan);
            tb_cli_json_stats(o, "gap_llm_s", &pt[p].gap_llm);
            tb_cli_json_stats(o, "gap_tts_s", &pt[p].gap_tts);
        }
        cJSON_AddItemToArray(pts, o);
    }
    if (tb_sweep_target_v2v(sw) > 0 && add_v2v_answers(root, sw) != 0) {
        cJSON_Delete(root);
        return TB_ENOMEM;
    }
    if (ri->cap != NULL)
        tb_cli_sweep_cap_json(root, opts, ri->cap, sw);
    if (ri->tool != NULL && tb_cli_sweep_tool_json(root, ri->tool) != 0) {
        cJSON_Delete(root);
        return TB_ENOMEM;
    }
    return tb_json_put_line(f, root);
}
