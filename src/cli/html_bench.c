/*
 * html_bench.c - `bench --html`: the page of a whole bench run
 * (html_report.h).
 *
 * The numbers come from the records and the summaries the other outputs
 * print (the per-level report as text, the --json object embedded); every
 * stream is a row whose cells carry their value (data-v) for the sort.
 * The streams with the most silence are replayed on the rate model the
 * records used (so their figures repeat the table's numbers), heard
 * through eSpeak NG stretched to its durations, on a virtual clock, one
 * at a time, each rendered to a temporary WAV file and
 * embedded: the page grows by about 3.5 MB a minute of their audio, so
 * --html-streams bounds it.  With a live TTS (--tts-url), whose audio
 * bench does not keep, the page draws what was measured instead
 * (html_live.h): every turn's wait from its record, and each stream
 * replayed with its measured TTS, without audio.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_bench.h"

#include "bench_out.h"
#include "bench_report.h"
#include "bench_wait.h"
#include "cli.h"
#include "html_live.h"
#include "html_report.h"
#include "outputs.h"
#include "plays.h"
#include "report.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/live.h"
#include "ttsbuf/svg.h"

/* A cell: the value shown with dec decimals (or "-" when not measured)
 * and, for the sort, exactly. */
static void cell(FILE *f, double v, int dec)
{
    if (isnan(v)) {
        fputs("<td data-v=\"\">-</td>", f);
        return;
    }
    fprintf(f, "<td data-v=\"%.17g\">%.*f</td>", v, dec, v);
}

/* A statistic, or NaN ("-") when the level has no sample of it: the
 * P50, the P95 (high tail) or the P5 (low tail, for rates). */
static double stat_p(const struct tb_stats *st, int which)
{
    return st->count == 0 ? NAN : which == 95 ? st->p95 : which == 5 ? st->p5 : st->p50;
}

/* Whether any level of the run had barge-in (the interrupted column). */
static int any_barge(const struct tb_bench_meta *m, const struct tb_bench_summary *s)
{
    for (uint32_t l = 0; l < m->nlevels; l++)
        if (s[l].barge)
            return 1;
    return 0;
}

/* Where the levels' wait went: each level's parts at p50 and p95, stacked
 * (two bars a level), v2v_s's percentile a tick. */
static int wait_figure(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_summary *s)
{
    struct tb_svg_wait *w = calloc(2 * (size_t)m->nlevels + 1, sizeof(*w));
    char(*label)[80] = calloc(2 * (size_t)m->nlevels + 1, sizeof(*label));
    int rc = w == NULL || label == NULL ? TB_ENOMEM : 0;
    for (size_t l = 0; rc == 0 && l < m->nlevels; l++) {
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        snprintf(label[2 * l], sizeof(label[0]), "%.60s p50", name);
        snprintf(label[2 * l + 1], sizeof(label[0]), "%.60s p95", name);
        tb_cli_wait_bar_pct(&w[2 * l], label[2 * l], &s[l], 50);
        tb_cli_wait_bar_pct(&w[2 * l + 1], label[2 * l + 1], &s[l], 95);
    }
    if (rc == 0)
        rc = tb_cli_html_wait(
            f, "Where the wait went",
            "Each part's p50 and p95, stacked (percentiles do not add: the tick is v2v's own)", w,
            2 * (size_t)m->nlevels);
    free(w);
    free(label);
    return rc;
}

static void levels_table(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_summary *s)
{
    int barge = any_barge(m, s);
    fputs("<table id=\"levels\"><thead><tr><th>level</th><th>requests</th><th>ok</th>", f);
    /* with barge-in only: the turns the caller interrupted, on their own */
    fputs(barge ? "<th>interrupted</th>" : "", f);
    fputs("<th>gapless, %</th><th>TTFT P95, s</th><th>TTFA P95, s</th><th>TPS P50</th>"
          "<th>TPS P5</th><th>silence P95, s</th><th>longest gap P95, s</th>"
          "<th>system TPS</th>",
          f);
    /* with SLOs (bench --slo) only: the page without them is as before */
    fputs(m->slo.set != 0 ? "<th>goodput, %</th><th>good/s</th>" : "", f);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        fputs("<tr><td>", f);
        tb_cli_html_text(f, name);
        fprintf(f, "</td><td>%zu</td><td>%zu</td>", x->requests, x->ok);
        if (barge)
            cell(f, x->barge ? (double)x->interrupted : NAN, 0);
        cell(f, 100.0 * tb_cli_bench_gapless(x), 1);
        cell(f, stat_p(&x->m[TB_BM_TTFT], 95), 3);
        cell(f, stat_p(&x->m[TB_BM_TTFA], 95), 3);
        cell(f, stat_p(&x->m[TB_BM_TPS], 50), 1);
        cell(f, stat_p(&x->m[TB_BM_TPS], 5), 1);
        cell(f, stat_p(&x->m[TB_BM_GAP_TOTAL], 95), 3);
        cell(f, stat_p(&x->m[TB_BM_GAP_MAX], 95), 3);
        cell(f, x->ok > 0 ? x->system_tps : NAN, 1);
        if (m->slo.set != 0) {
            cell(f, 100.0 * x->good_share, 1);
            cell(f, x->good_per_s, 3);
        }
        fputs("</tr>\n", f);
    }
    fprintf(f,
            "</tbody></table>\n<p class=\"note\">Gapless in percent of the streams that "
            "succeeded%s; P5 of the TPS is its low tail. The full report:</p>\n",
            barge ? " and were heard to their end (a turn the caller interrupted is counted on "
                    "its own, judged on what was heard before the interruption)"
                  : "");
}

static int usable(const struct tb_bench_rec *x)
{
    return x->error == 0 && x->stream != NULL && x->stream->n > 0 && !isnan(x->gap_total);
}

/* The indices of the k usable records with the most silence, worst first
 * (O(n k); k is small).  Returns how many. */
static size_t worst(const struct tb_bench_recs *r, size_t k, size_t *out)
{
    size_t n = 0;
    for (size_t j = 0; j < k; j++) {
        size_t best = (size_t)-1;
        for (size_t i = 0; i < r->n; i++) {
            int taken = 0;
            if (!usable(&r->v[i]))
                continue;
            for (size_t q = 0; q < n; q++)
                taken |= out[q] == i;
            if (!taken && (best == (size_t)-1 || r->v[i].gap_total > r->v[best].gap_total))
                best = i;
        }
        if (best == (size_t)-1)
            break;
        out[n++] = best;
    }
    return n;
}

/* A record's level as every output names it ("c=10"), and as the part of
 * an element id ("c=10", "rate=5ps-poisson"). */
static void level_of(const struct tb_bench_meta *m, const struct tb_bench_rec *x, char *name,
                     size_t nlen, char *stem, size_t slen)
{
    tb_bench_level_name(&m->levels[x->level], name, nlen);
    tb_cli_bench_level_stem(&m->levels[x->level], stem, slen);
}

/* Which columns the streams table has beyond the common ones: a call's
 * and turn's (calls), the interruption's (barge-in), good (SLOs); and
 * what its replays are (live: a live TTS's, without audio). */
struct cols {
    int calls, barge, good, live;
};

static void streams_head(FILE *f, const struct cols *c)
{
    fprintf(f,
            "<h2>Every stream</h2>\n<p class=\"note\">Click a column's heading to sort by it. "
            "The streams marked <em>%s</em> are replayed below.</p>\n"
            "<table class=\"sortable\" id=\"streams\"><thead><tr><th>request</th>"
            "<th data-sort=\"level\">level</th>",
            c->live ? "see it" : "hear it");
    if (c->calls)
        fputs("<th data-sort=\"call\">call</th><th data-sort=\"turn\">turn</th>", f);
    fputs("<th>result</th>", f);
    if (c->barge)
        fputs("<th data-sort=\"interrupted\" title=\"when the caller interrupted the turn, s "
              "from its request's start; its gaps are those heard before\">interrupted, s</th>",
              f);
    fputs("<th data-sort=\"ttft\">TTFT, s</th><th data-sort=\"ttfa\">first audio, s</th>"
          "<th data-sort=\"underruns\">underruns</th>"
          "<th data-sort=\"gap_total\">total silence, s</th>"
          "<th data-sort=\"gap_max\">longest gap, s</th>"
          "<th data-sort=\"min_tps\">min TPS</th>",
          f);
    if (c->good)
        fputs("<th data-sort=\"good\">good</th>", f);
    fputs("</tr></thead>\n<tbody>\n", f);
}

/* One record's row. */
static void stream_row(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_rec *x,
                       const struct cols *c, int heard)
{
    char name[64], stem[64];
    level_of(m, x, name, sizeof(name), stem, sizeof(stem));
    fprintf(f, "<tr><td data-v=\"%llu\">%llu", (unsigned long long)x->id,
            (unsigned long long)x->id);
    if (heard)
        fprintf(f, " <a href=\"#s-%s-%llu\">%s</a>", stem, (unsigned long long)x->id,
                c->live ? "see it" : "hear it");
    /* Sorted by the level's place in the run, shown by its name. */
    fprintf(f, "</td><td data-v=\"%u\">", x->level);
    tb_cli_html_text(f, name);
    fputs("</td>", f);
    if (c->calls) {
        cell(f, x->call >= 0 ? (double)x->call : NAN, 0);
        cell(f, x->call >= 0 ? (double)x->turn : NAN, 0);
    }
    fputs("<td>", f);
    if (x->error == 0)
        fputs("ok", f);
    else
        tb_cli_html_text(f, tb_reader_error_name(x->error));
    fputs("</td>", f);
    if (c->barge) {
        if (x->barge && !x->interrupted)
            fputs("<td data-v=\"\">no</td>", f);
        else
            cell(f, x->barge ? x->barge_in : NAN, 3);
    }
    cell(f, x->ttft, 3);
    cell(f, x->ttfa, 3);
    cell(f, isnan(x->gap_total) ? NAN : (double)x->underruns, 0);
    cell(f, x->gap_total, 3);
    cell(f, x->gap_max, 3);
    if (x->min_tps_none) /* no rate removes its gaps: not "not measured" */
        fputs("<td data-v=\"Infinity\" title=\"" TB_MIN_TPS_NONE_REASON "\">none</td>", f);
    else
        cell(f, x->min_tps, 1);
    if (c->good)
        fprintf(f, "<td data-v=\"%d\">%s</td>", tb_bench_slo_good(&m->slo, x),
                tb_bench_slo_good(&m->slo, x) ? "yes" : "no");
    fputs("</tr>\n", f);
}

static void streams_table(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_recs *r,
                          const size_t *w, size_t nw, int live)
{
    struct cols c = {0, 0, m->slo.set != 0, live};
    for (size_t i = 0; i < r->n; i++) {
        c.calls |= r->v[i].call >= 0;
        c.barge |= r->v[i].barge;
    }
    streams_head(f, &c);
    for (size_t i = 0; i < r->n; i++) {
        int heard = 0;
        for (size_t q = 0; q < nw; q++)
            heard |= w[q] == i;
        stream_row(f, m, &r->v[i], &c, heard);
    }
    fputs("</tbody></table>\n", f);
}

/* Record x of a live TTS: its stream replayed with its measured TTS,
 * without audio (html_live.h). */
static int live_figure(FILE *f, const struct tb_cli_html_bench_info *b,
                       const struct tb_bench_rec *x)
{
    char name[160], level[64], stem[64], suffix[96];
    int rc;
    level_of(b->m, x, level, sizeof(level), stem, sizeof(stem));
    snprintf(name, sizeof(name), "request %llu (%s)", (unsigned long long)x->id, level);
    snprintf(suffix, sizeof(suffix), "-%s-%llu", stem, (unsigned long long)x->id);
    fprintf(f,
            "<details id=\"s-%s-%llu\"><summary>request %llu, %s: %u underrun%s, %.3f s "
            "of silence in the table; replayed with its measured TTS (no audio)%s</summary>\n",
            stem, (unsigned long long)x->id, (unsigned long long)x->id, level, x->underruns,
            x->underruns == 1 ? "" : "s", x->gap_total,
            /* the record is the turn's second request (bench_rec.h) */
            x->tool_calls > 0 ? "; a tool call's turn: its request after the call, the turn's "
                                "whole wait in the turns' waterfall"
                              : "");
    rc = tb_cli_html_live_figure(f, b->o, x, name, suffix, b->max_gaps);
    fputs("</details>\n", f);
    return rc;
}

/* Replays record x on the run's rate model, heard through eSpeak NG, and
 * writes its figure; a live TTS's record with its measured TTS. */
static int stream_figure(FILE *f, const struct tb_cli_html_bench_info *b,
                         const struct tb_bench_rec *x)
{
    struct tb_cli_audio au;
    struct tb_sim_opts o = *b->o;
    struct tb_sim_result r;
    struct tb_cli_plays plays;
    struct tb_report_src src = {.kind = "bench", .name = ""};
    char name[160], level[64], stem[64], suffix[96], err[512];
    int rc, simrc;

    if (x->stream->tts != NULL)
        return live_figure(f, b, x);
    tb_cli_audio_init(&au);
    au.voice = b->speech->voice;
    au.cue = b->speech->cue;
    au.max_s = b->speech->max_s;
    tb_cli_plays_init(&plays, 1);
    level_of(b->m, x, level, sizeof(level), stem, sizeof(stem));
    snprintf(name, sizeof(name), "request %llu (%s)", (unsigned long long)x->id, level);
    src.name = name;
    tb_sim_opts_turn(&o, (uint32_t)(x->id + 1)); /* its own end of turn, as its record's */
    rc = tb_cli_audio_for_html(&au, TB_HTML_AUDIO_MAX_S);
    if (rc == 0) {
        tb_cli_audio_rate_model(&au, x->stream, &o);
        rc = tb_cli_audio_start(&au, &o, x->stream);
    }
    if (rc == 0)
        rc = tb_cli_audio_sim(&au, x->stream, &o, tb_cli_collect_play, &plays, &r, &simrc, err,
                              sizeof(err));
    if (rc == 0 && simrc != 0) {
        tb_cli_error("--html: request %llu: %s", (unsigned long long)x->id, err);
        rc = simrc == TB_ENOMEM ? TB_ENOMEM : TB_EIO;
    }
    if (rc != 0)
        goto out;
    fprintf(f,
            "<details id=\"s-%s-%llu\"><summary>request %llu, %s: %u underrun%s, %.3f s "
            "of silence in the table; replayed on the same rate model, heard through eSpeak "
            "NG</summary>\n",
            stem, (unsigned long long)x->id, (unsigned long long)x->id, level, x->underruns,
            x->underruns == 1 ? "" : "s", x->gap_total);
    {
        struct tb_cli_html_run_info h = {"bench",     &src,       &o,   x->stream, &r,
                                         &plays.gaps, &plays.all, NULL, &au,       b->max_gaps};
        snprintf(suffix, sizeof(suffix), "-%s-%llu", stem, (unsigned long long)x->id);
        rc = tb_cli_html_run_figure(f, &h, suffix, err, sizeof(err));
    }
    fputs("</details>\n", f);
    if (rc != 0) {
        tb_cli_error("--html: request %llu: %s", (unsigned long long)x->id, err);
        rc = rc == TB_ENOMEM ? TB_ENOMEM : TB_EIO;
    }
out:
    tb_cli_audio_free(&au);
    tb_cli_plays_free(&plays);
    return rc;
}

int tb_cli_html_bench(const char *path, const struct tb_cli_html_bench_info *b)
{
    char *rep = NULL, *json = NULL, title[512];
    size_t replen, jsonlen, *w = NULL, nw = 0;
    const struct tb_tts_log *live = NULL; /* a live TTS's, or NULL */
    int rc = 0;
    FILE *m, *f = NULL;

    w = malloc((b->nworst > 0 ? b->nworst : 1) * sizeof(*w));
    if (w == NULL || (m = tb_cli_html_mem(&rep, &replen)) == NULL)
        goto nomem;
    tb_cli_bench_report_human(m, "bench", b->m, b->s, b->calls, b->gates, b->ngates);
    if (fclose(m) != 0 || (m = tb_cli_html_mem(&json, &jsonlen)) == NULL)
        goto nomem;
    tb_cli_bench_report_json(m, "bench", b->m, b->s);
    if (fclose(m) != 0)
        goto nomem;
    nw = worst(b->recs, b->nworst, w);
    live = tb_cli_html_live_log(b->recs);

    f = tb_cli_output_open("--html", path, &rc);
    if (f == NULL)
        goto out;
    snprintf(title, sizeof(title), "ttsbuf bench: %s at %s", b->m->model, b->m->base_url);
    tb_cli_html_begin(f, "bench", title);
    tb_cli_html_live_note(f, live, b->m->provider);
    fputs("<h2>Per level</h2>\n", f);
    levels_table(f, b->m, b->s);
    fputs("<pre id=\"report\">", f);
    tb_cli_html_text(f, rep);
    fputs("</pre>\n", f);
    tb_cli_html_json(f, "result", json);
    rc = wait_figure(f, b->m, b->s);
    if (rc == 0 && live != NULL)
        rc = tb_cli_html_live_turns(f, b->recs);
    streams_table(f, b->m, b->recs, w, nw, live != NULL);
    fprintf(f,
            "<h2>The %zu stream%s with the most silence</h2>\n<p class=\"note\">Each replayed "
            "from its recorded arrivals as <code>ttsbuf sim --trace --html</code> would, %s. "
            "Click one to open it.</p>\n",
            nw, nw == 1 ? "" : "s",
            live != NULL ? "with the TTS's measured arrivals: its numbers below are the table's, "
                           "and it has no audio (the TTS's was not kept)"
                         : "on the rate model the table used: its numbers below are the table's, "
                           "and its audio is eSpeak NG stretched to the model's durations");
    for (size_t i = 0; i < nw && rc == 0; i++)
        rc = stream_figure(f, b, &b->recs->v[w[i]]);
    tb_cli_html_end(f);
    if (rc == 0)
        rc = tb_cli_out_close("--html", path, f, ferror(f) ? TB_EIO : 0);
    else
        fclose(f);
    goto out;
nomem:
    tb_cli_error("--html: out of memory");
    rc = TB_ENOMEM;
out:
    free(w);
    free(json);
    free(rep);
    return rc;
}
