/*
 * bench_report.c - the summary `ttsbuf bench` and `ttsbuf merge` print
 * (see bench_report.h).
 */
#include "bench_report.h"

#include "bench_wait.h"
#include "report.h"

#include <math.h>
#include <string.h>

#include "bench_csv.h"
#include "cli.h"
#include "jsonout.h"
#include "outputs.h"
#include "ttsbuf/error.h"

void tb_cli_bench_report_warnings(const struct tb_bench_recs *recs, int quiet)
{
    const char *first = NULL;
    size_t n = tb_bench_recs_warned(recs, &first);
    if (n > 0 && !quiet)
        fprintf(stderr, "ttsbuf: note: %zu stream%s: %s\n", n, n > 1 ? "s, the first" : "", first);
}

int tb_cli_bench_summaries(const struct tb_bench_meta *m, const struct tb_bench_recs *recs,
                           struct tb_bench_summary *s)
{
    for (uint32_t l = 0; l < m->nlevels; l++) {
        if (tb_bench_summarize_slo(recs, l, &m->slo, &s[l]) != 0) {
            tb_cli_error("out of memory summarising");
            return TB_ENOMEM;
        }
    }
    return 0;
}

void tb_cli_bench_summaries_free(const struct tb_bench_meta *m, struct tb_bench_summary *s)
{
    for (uint32_t l = 0; s != NULL && l < m->nlevels; l++)
        tb_bench_summary_free(&s[l]);
}

double tb_cli_bench_gapless(const struct tb_bench_summary *x)
{
    return x->heard_whole > 0 ? x->gapless_share : NAN;
}

const char *tb_cli_bench_pct(char *buf, size_t len, double share)
{
    if (isnan(share))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f%%", 100.0 * share);
    return buf;
}

static size_t error_total(const struct tb_bench_summary *s)
{
    return s->requests - s->ok;
}

/* A statistic, or "-" when no stream has the quantity (never 0). */
static const char *stat_cell(char *buf, size_t len, const struct tb_stats *st, double v, int prec)
{
    if (st->count == 0)
        return "-";
    snprintf(buf, len, "%.*f", prec, v);
    return buf;
}

/* The options object the records header carries (canonical JSON text),
 * or an empty object. */
static cJSON *options_of(const struct tb_bench_meta *m)
{
    cJSON *o = cJSON_Parse(m->options);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        o = cJSON_CreateObject();
    }
    return o;
}

/* One KEY=VALUE word at *col, wrapped under 100 columns. */
static void option_word(FILE *f, const char *w, size_t *col)
{
    if (*col + 1 + strlen(w) > 99) {
        fputs("\n          ", f);
        *col = 10;
    }
    fprintf(f, " %s", w);
    *col += 1 + strlen(w);
}

/* The members of object o as words, each key after prefix: an object's
 * members as PREFIX.KEY=VALUE (tts_live.api=openai), a null as "-" (not
 * given or not measured), never a whole object as "-". */
static void option_words(FILE *f, const cJSON *o, const char *prefix, size_t *col)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        char w[160], key[96];
        snprintf(key, sizeof(key), "%s%s", prefix, it->string);
        if (cJSON_IsObject(it)) {
            snprintf(key + strlen(key), sizeof(key) - strlen(key), ".");
            option_words(f, it, key, col);
            continue;
        }
        if (cJSON_IsString(it))
            snprintf(w, sizeof(w), "%s=%s", key, it->valuestring);
        else if (cJSON_IsNumber(it))
            snprintf(w, sizeof(w), "%s=%.15g", key, it->valuedouble);
        else if (cJSON_IsBool(it))
            snprintf(w, sizeof(w), "%s=%s", key, cJSON_IsTrue(it) ? "on" : "off");
        else
            snprintf(w, sizeof(w), "%s=-", key);
        option_word(f, w, col);
    }
}

/* The options as KEY=VALUE words, wrapped under 100 columns. */
static void options_line(FILE *f, const struct tb_bench_meta *m)
{
    cJSON *o = options_of(m);
    size_t col = 2;
    fputs("  options:", f);
    col += strlen("options:");
    option_words(f, o, "", &col);
    fputc('\n', f);
    cJSON_Delete(o);
}

/* The level column's width: the longest name (at least 8). */
static int level_width(const struct tb_bench_meta *m)
{
    int w = 8;
    for (uint32_t l = 0; l < m->nlevels; l++) {
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        if ((int)strlen(name) > w)
            w = (int)strlen(name);
    }
    return w;
}

/* A level's goodput line and, for calls, its table by turn index: TTFT
 * and first audio (p50, p95), the good share and (barge-in) the turns
 * interrupted, as context grows. */
static void goodput_lines(FILE *f, const struct tb_bench_summary *x)
{
    char ps[32] = "-";
    if (!isnan(x->good_per_s))
        snprintf(ps, sizeof(ps), "%.3g", x->good_per_s);
    if (x->slo && x->requests > 0)
        fprintf(f, "  goodput: %zu of %zu requests within the SLOs (%.1f%%), %s good/s", x->good,
                x->requests, 100.0 * x->good_share, ps);
    if (x->slo && x->requests > 0 && x->barge)
        fprintf(f, "; %zu of them interrupted, judged on what was heard before the interruption",
                x->good_interrupted);
    if (x->slo && x->requests > 0)
        fputc('\n', f);
    if (x->nturns == 0)
        return;
    fprintf(f, "  %6s", "turn");
    tb_cli_bench_turn_head(f, x->barge);
    for (size_t t = 0; t < x->nturns; t++) {
        fprintf(f, "  %6d", (int)x->by_turn[t].turn);
        tb_cli_bench_turn_cells(f, x, &x->by_turn[t], x->barge);
    }
}

void tb_cli_bench_turn_head(FILE *f, int barge)
{
    fprintf(f, " %6s %6s %9s %9s %9s %9s %9s %9s %11s %7s%s\n", "n", "ok", "TTFT p50", "TTFT p95",
            "audio p50", "audio p95", "v2v p50", "v2v p95", "silence p95", "good",
            barge ? " interrupted" : "");
}

void tb_cli_bench_turn_cells(FILE *f, const struct tb_bench_summary *x,
                             const struct tb_bench_turn *r, int barge)
{
    const struct tb_stats *v = &r->lat[TB_TURN_LAT_PARTS - 1];
    char b[7][32], gs[16] = "-";
    if (x->slo)
        snprintf(gs, sizeof(gs), "%.1f%%", 100.0 * r->good_share);
    fprintf(f, " %6zu %6zu %9s %9s %9s %9s %9s %9s %11s %7s", r->n, r->ok,
            stat_cell(b[0], sizeof(b[0]), &r->ttft, r->ttft.p50, 3),
            stat_cell(b[1], sizeof(b[1]), &r->ttft, r->ttft.p95, 3),
            stat_cell(b[2], sizeof(b[2]), &r->ttfa, r->ttfa.p50, 3),
            stat_cell(b[3], sizeof(b[3]), &r->ttfa, r->ttfa.p95, 3),
            stat_cell(b[5], sizeof(b[5]), v, v->p50, 3), stat_cell(b[6], sizeof(b[6]), v, v->p95, 3),
            stat_cell(b[4], sizeof(b[4]), &r->gap_total, r->gap_total.p95, 3), gs);
    if (barge && x->barge)
        fprintf(f, " %11zu", r->interrupted);
    else if (barge)
        fprintf(f, " %11s", "-");
    fputc('\n', f);
}

/* The head: the endpoint, the options, the SLOs, the shard. */
static void head_lines(FILE *f, const char *command, const struct tb_bench_meta *m)
{
    fprintf(f, "ttsbuf %s: %smodel %s at %s\n", command,
            strcmp(m->provider, "mock") == 0 ? "the built-in MOCK provider (not a real model)\n  "
                                             : "",
            m->model, m->base_url);
    options_line(f, m);
    if (m->slo.set != 0) {
        char t[400];
        tb_bench_slo_text(&m->slo, t, sizeof(t));
        fprintf(f, "  SLOs: %s (goodput: complete requests within every one)\n", t);
    }
    if (m->nshards > 1)
        fprintf(f, "  shard %u of %u (ids = %u mod %u)\n", m->shard + 1, m->nshards, m->shard,
                m->nshards);
}

/* The table of levels, a row each. */
static void levels_table(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_summary *s)
{
    int lw = level_width(m);
    /* "measured": the streams with a first token (a failed one's too); a
     * column no stream has is "-"; "cut/fail" counts the streams cut off
     * (incomplete) and those that failed.  79 columns and the level's name:
     * under 100 for every closed-loop level and the open-loop ones without a
     * cap. */
    fprintf(f, "\n  %-*s %8s %8s %8s %7s %8s %8s %7s %7s %7s\n", lw, "level", "requests",
            "cut/fail", "measured", "gapless", "TTFT P95", "TTFA P95", "TPS P50", "TPS P5",
            "system");
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64], gl[16], cf[48], b[5][32];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        tb_cli_bench_pct(gl, sizeof(gl), tb_cli_bench_gapless(x));
        snprintf(cf, sizeof(cf), "%zu/%zu", x->incomplete, x->failed);
        fprintf(f, "  %-*s %8zu %8s %8zu %7s %8s %8s %7s %7s %7s\n", lw, name, x->requests, cf,
                x->m[TB_BM_TTFT].count, gl,
                stat_cell(b[0], sizeof(b[0]), &x->m[TB_BM_TTFT], x->m[TB_BM_TTFT].p95, 3),
                stat_cell(b[1], sizeof(b[1]), &x->m[TB_BM_TTFA], x->m[TB_BM_TTFA].p95, 3),
                stat_cell(b[2], sizeof(b[2]), &x->m[TB_BM_TPS], x->m[TB_BM_TPS].p50, 1),
                stat_cell(b[3], sizeof(b[3]), &x->m[TB_BM_TPS], x->m[TB_BM_TPS].p5, 1),
                x->ok > 0 ? (snprintf(b[4], sizeof(b[4]), "%.1f", x->system_tps), b[4]) : "-");
    }
}

/* A level's first lines: its requests and how they ended (an interrupted
 * turn on its own: bench_stats.h), and for calls how its calls went and
 * what the caller interrupted. */
static void level_lines(FILE *f, const char *name, const struct tb_bench_summary *x,
                        const struct tb_bench_calls_count *c)
{
    char gl[16];
    tb_cli_bench_pct(gl, sizeof(gl), tb_cli_bench_gapless(x));
    if (x->ok > 0 && x->barge)
        fprintf(f,
                "\n%s: %zu requests, %zu ok: %zu heard to the end, %zu gapless (%s); %zu "
                "interrupted by the caller\n",
                name, x->requests, x->ok, x->heard_whole, x->gapless, gl, x->interrupted);
    else if (x->ok > 0)
        fprintf(f, "\n%s: %zu requests, %zu ok, %zu gapless (%s)\n", name, x->requests, x->ok,
                x->gapless, gl);
    else if (x->m[TB_BM_TTFT].count > 0)
        /* Cut or failed streams that measured something: what they
         * measured is below, counted; a verdict needs a whole one. */
        fprintf(f,
                "\n%s: %zu requests, none complete: no gapless share, no system rate\n  the "
                "metrics below are what the %zu cut or failed streams measured before they "
                "ended\n",
                name, x->requests, x->m[TB_BM_TTFT].count);
    else
        fprintf(f, "\n%s: %zu requests, none complete, and no stream measured anything\n", name,
                x->requests);
    if (x->ok > 0)
        fprintf(f, "  %llu events, %llu tokens in %.2f s: system %.1f tokens/s\n",
                (unsigned long long)x->events, (unsigned long long)x->tokens, x->span,
                x->system_tps);
    if (c != NULL)
        fprintf(f, "%s: %zu calls, %zu completed, %zu ended by a failed or cut turn; %zu turns\n",
                name, c->calls, c->completed, c->ended_early, c->turns);
    if (x->barge)
        fprintf(f,
                "%s: barge-in: %zu turns interrupted (%.1f%%), %zu of them with no gap before "
                "the interruption;\n  %llu tokens received and never spoken, %llu characters "
                "not all played\n",
                name, x->interrupted, 100.0 * x->interrupted_share, x->interrupted_gapless,
                (unsigned long long)x->tokens_unheard, (unsigned long long)x->chars_unplayed);
}

/* The level's refusals and retries (bench --retry). */
/* A level's notes: usage not trusted, surrogates, no minimum TPS, the
 * errors. */
static void note_lines(FILE *f, const struct tb_bench_summary *x)
{
    if (x->usage_ignored > 0)
        fprintf(f,
                "  note: %zu request%s reported usage far below the events that came "
                "(0, or under an eighth): not trusted; their events are counted instead\n",
                x->usage_ignored, x->usage_ignored == 1 ? "" : "s");
    if (x->surrogates_replaced > 0)
        fprintf(f, "  note: %llu UTF-16 surrogate halves without a partner replaced by U+FFFD\n",
                (unsigned long long)x->surrogates_replaced);
    if (x->retry.refused > 0)
        fprintf(f,
                "  refused (429/503): %zu request%s, %llu refusals, %llu retries (%zu ok after "
                "one, %zu gave up); waits %.3f s in all, max %.3f s\n",
                x->retry.refused, x->retry.refused == 1 ? "" : "s",
                (unsigned long long)x->retry.refusals, (unsigned long long)x->retry.retries,
                x->retry.retried_ok, x->retry.gave_up, x->retry.wait_total,
                x->retry.wait.count > 0 ? x->retry.wait.max : 0.0);
    if (x->llm_capacity)
        fprintf(f, "  LLM capacity: waits p50 %.3f s, p95 %.3f s, max %.3f s (%zu requests)\n",
                x->llm_wait.p50, x->llm_wait.p95, x->llm_wait.max, x->llm_wait.count);
    if (x->min_tps_none > 0)
        fprintf(f,
                "  min TPS: none for %zu of %zu complete request%s (" TB_MIN_TPS_NONE_REASON
                "); min_tps below is over the others\n",
                x->min_tps_none, x->ok, x->ok == 1 ? "" : "s");
    if (error_total(x) > 0) {
        fprintf(f, "  not in the gapless share: %zu cut off, %zu failed; errors:", x->incomplete,
                x->failed);
        for (int k = 1; k < TB_READER__COUNT; k++)
            if (x->errors[k] > 0)
                fprintf(f, " %s %zu", tb_reader_error_name(k), x->errors[k]);
        fprintf(f, "\n");
    }
}

/* Whether metric k is measured only in some runs (bench_stats.h: a
 * barge-in's stop, a call turn's lateness, a tool turn's wait and the
 * filler's): after the wait's parts in the enum. */
static int situational_metric(int k)
{
    return k >= TB_BM_BARGE_CLOSE;
}

/* A level's metrics, a row each; the metric's name says its unit (_s,
 * _tps, _needed: a factor).  A situational metric without a sample (no
 * barge-in, no call, no real TTS, no tool call) has no row. */
static void metric_lines(FILE *f, const struct tb_bench_summary *x)
{
    fprintf(f, "  %-17s %6s %9s %9s %9s %9s %9s %9s %9s\n", "metric", "count", "mean", "min", "p5",
            "p50", "p95", "p99", "max");
    for (int k = 0; k < TB_BM__COUNT; k++) {
        const struct tb_stats *st = &x->m[k];
        const char *label = tb_bench_metric_name((enum tb_bench_metric)k);
        if (st->count == 0 && situational_metric(k))
            continue;
        if (st->count == 0) {
            fprintf(f, "  %-17s %6zu %9s\n", label, st->count, "-");
            continue;
        }
        fprintf(f, "  %-17s %6zu %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g\n", label, st->count,
                st->mean, st->min, st->p5, st->p50, st->p95, st->p99, st->max);
    }
}

void tb_cli_bench_report_human(FILE *f, const char *command, const struct tb_bench_meta *m,
                               const struct tb_bench_summary *s,
                               const struct tb_bench_calls_count *calls,
                               const struct tb_cli_gate *g, size_t ng)
{
    head_lines(f, command, m);
    levels_table(f, m, s);
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        level_lines(f, name, x, calls != NULL ? &calls[l] : NULL);
        note_lines(f, x);
        metric_lines(f, x);
        if (x->pct_hist) /* the JSON's and CSV's "percentiles" */
            fprintf(f, "  percentiles of a metric over 4096 samples: from a log histogram, each "
                       "within 0.28%%\n");
        tb_cli_bench_wait_lines(f, x);
        if (x->tts)
            tb_cli_report_tts_lines(f, &x->tts_stats); /* a real TTS (--tts-url) */
        goodput_lines(f, x);
    }
    fprintf(f, "\nPercentiles interpolate linearly; p95/p99 are the high tail of every metric; "
               "for the decode\nrates the bad tail is p5.\n");
    if (ng > 0) {
        fprintf(f, "Gates:");
        for (size_t i = 0; i < ng; i++) {
            char t[96];
            tb_cli_gate_text(t, sizeof(t), &g[i]);
            fprintf(f, "%s %s%s", i > 0 ? "," : "", t,
                    g[i].is_default ? " (the default: every request must succeed)" : "");
        }
        fputc('\n', f);
    }
}

static const char *mode_str(enum tb_bench_mode mo)
{
    return mo == TB_BENCH_POISSON ? "poisson" : mo == TB_BENCH_CONSTANT ? "constant" : "closed";
}

/* A level's "goodput" (always: its slo null without SLOs). */
static void goodput_json(cJSON *o, const struct tb_bench_meta *m, const struct tb_bench_summary *x)
{
    cJSON *g = cJSON_AddObjectToObject(o, "goodput");
    if (g != NULL) {
        cJSON_AddItemToObject(g, "slo", tb_bench_slo_json(&m->slo));
        tb_cli_json_num(g, "good", x->slo ? (double)x->good : NAN);
        tb_cli_json_num(g, "share", x->good_share);
        tb_cli_json_num(g, "per_s", x->good_per_s);
    }
}

/* The barge-in block's keys, in the order of the JSON object and the CSV
 * columns (barge_in_KEY): one table for both. */
static const char *const barge_keys[] = {
    "interruptions", "interrupted_share", "interrupted_gapless", "heard_whole",
    "good",          "tokens_unheard",    "chars_unplayed"};
#define NBARGE (sizeof(barge_keys) / sizeof(barge_keys[0]))

/* The value of barge_keys[k]: NaN (null, an empty cell) without
 * barge-in, and good without SLOs. */
static double barge_value(const struct tb_bench_summary *x, size_t k)
{
    if (!x->barge)
        return NAN;
    switch (k) {
    case 0: return (double)x->interrupted;
    case 1: return x->requests > 0 ? x->interrupted_share : NAN;
    case 2: return (double)x->interrupted_gapless;
    case 3: return (double)x->heard_whole;
    case 4: return x->slo ? (double)x->good_interrupted : NAN;
    case 5: return (double)x->tokens_unheard;
    default: return (double)x->chars_unplayed;
    }
}

void tb_cli_bench_barge_json(cJSON *o, const struct tb_bench_summary *x)
{
    cJSON *e = cJSON_AddObjectToObject(o, "barge_in");
    for (size_t k = 0; e != NULL && k < NBARGE; k++)
        tb_cli_json_num(e, barge_keys[k], barge_value(x, k));
}

void tb_cli_bench_turns_json(cJSON *o, const struct tb_bench_summary *x)
{
    cJSON *bt;
    if (x->nturns == 0)
        return;
    bt = cJSON_AddArrayToObject(o, "by_turn");
    for (size_t t = 0; bt != NULL && t < x->nturns; t++) {
        const struct tb_bench_turn *r = &x->by_turn[t];
        cJSON *e = cJSON_CreateObject();
        if (e == NULL)
            break;
        cJSON_AddItemToArray(bt, e);
        cJSON_AddNumberToObject(e, "turn", r->turn);
        cJSON_AddNumberToObject(e, "n", (double)r->n);
        cJSON_AddNumberToObject(e, "ok", (double)r->ok);
        tb_cli_json_num(e, "good", x->slo ? (double)r->good : NAN);
        tb_cli_json_num(e, "good_share", r->good_share);
        tb_cli_json_num(e, "interrupted", x->barge ? (double)r->interrupted : NAN);
        tb_cli_json_stats(e, "ttft_s", &r->ttft);
        tb_cli_json_stats(e, "ttfa_s", &r->ttfa);
        tb_cli_json_stats(e, "gap_total_s", &r->gap_total);
        tb_cli_bench_wait_turn_json(e, r);
    }
}

int tb_cli_bench_report_json(FILE *f, const char *command, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s)
{
    cJSON *root = tb_cli_json_doc(TB_SCHEMA_BENCH_SUMMARY, TB_SCHEMA_BENCH_SUMMARY_V, command);
    cJSON *lv;
    if (root == NULL)
        return TB_ENOMEM;
    cJSON_AddItemToObject(root, "options", options_of(m));
    cJSON_AddStringToObject(root, "records_started_at", m->started_at);
    cJSON_AddStringToObject(root, "provider", m->provider[0] ? m->provider : "remote");
    cJSON_AddStringToObject(root, "model", m->model);
    cJSON_AddStringToObject(root, "base_url", m->base_url);
    cJSON_AddNumberToObject(root, "shard", m->shard);
    cJSON_AddNumberToObject(root, "shards", m->nshards);
    lv = cJSON_AddArrayToObject(root, "levels");
    for (uint32_t l = 0; lv != NULL && l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        cJSON *o = cJSON_CreateObject(), *e;
        char name[64];
        if (o == NULL)
            break;
        cJSON_AddItemToArray(lv, o);
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        cJSON_AddStringToObject(o, "level", name);
        cJSON_AddStringToObject(o, "mode", mode_str(m->levels[l].mode));
        cJSON_AddNumberToObject(o, "concurrency", m->levels[l].concurrency);
        tb_cli_json_num(o, "rate", m->levels[l].mode == TB_BENCH_CLOSED ? NAN : m->levels[l].rate);
        cJSON_AddNumberToObject(o, "requests", (double)x->requests);
        cJSON_AddNumberToObject(o, "ok", (double)x->ok);
        cJSON_AddNumberToObject(o, "errors", (double)error_total(x));
        cJSON_AddNumberToObject(o, "incomplete", (double)x->incomplete);
        cJSON_AddNumberToObject(o, "failed", (double)x->failed);
        e = cJSON_AddObjectToObject(o, "errors_by_kind");
        for (int k = 1; e != NULL && k < TB_READER__COUNT; k++)
            cJSON_AddNumberToObject(e, tb_reader_error_name(k), (double)x->errors[k]);
        cJSON_AddNumberToObject(o, "gapless", (double)x->gapless);
        tb_cli_json_num(o, "gapless_share", tb_cli_bench_gapless(x));
        tb_cli_json_num(o, "success_share", x->requests > 0 ? x->success_share : NAN);
        cJSON_AddNumberToObject(o, "events", (double)x->events);
        cJSON_AddNumberToObject(o, "tokens", (double)x->tokens);
        cJSON_AddNumberToObject(o, "span_s", x->span);
        tb_cli_json_num(o, "system_tps", x->ok > 0 ? x->system_tps : NAN);
        cJSON_AddNumberToObject(o, "usage_ignored", (double)x->usage_ignored);
        cJSON_AddNumberToObject(o, "surrogates_replaced", (double)x->surrogates_replaced);
        cJSON_AddNumberToObject(o, "min_tps_none", (double)x->min_tps_none);
        cJSON_AddStringToObject(o, "percentiles", tb_bench_percentiles(x));
        for (int k = 0; k < TB_BM__COUNT; k++)
            tb_cli_json_stats(o, tb_bench_metric_name((enum tb_bench_metric)k), &x->m[k]);
        if (x->tts)
            tb_cli_report_tts_json(o, &x->tts_stats); /* only with a real TTS */
        tb_cli_bench_wait_json(o, x);
        tb_cli_bench_retry_json(o, x);
        if (x->llm_capacity) /* only with --llm-capacity: other summaries as before */
            tb_cli_json_stats(o, "llm_capacity_wait_s", &x->llm_wait);
        goodput_json(o, m, x);
        tb_cli_bench_barge_json(o, x);
        tb_cli_bench_turns_json(o, x);
    }
    return tb_json_put_line(f, root);
}

void tb_cli_bench_csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.17g", v);
}

void tb_cli_bench_barge_csv(FILE *f, const struct tb_bench_summary *x)
{
    for (size_t k = 0; k < NBARGE; k++) {
        if (x == NULL)
            fprintf(f, ",barge_in_%s", barge_keys[k]);
        else
            tb_cli_bench_csv_num(f, barge_value(x, k));
    }
}

/* The latency_share columns: their names (x NULL) or x's values. */
static void wait_csv(FILE *f, const struct tb_bench_summary *x)
{
    static const int pcts[2] = {50, 95};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < TB_CLI_WAIT_SHARES; i++) {
            if (x == NULL)
                fprintf(f, ",latency_share_p%d_%s", pcts[k], tb_cli_bench_wait_share_key(i));
            else
                tb_cli_bench_csv_num(f, tb_cli_bench_wait_share(x, i, pcts[k]));
        }
}

void tb_cli_bench_report_csv(FILE *f, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s)
{
    fprintf(f, "level,mode,concurrency,rate,requests,ok,errors,incomplete,failed");
    for (int k = 1; k < TB_READER__COUNT; k++)
        fprintf(f, ",errors_by_kind_%s", tb_reader_error_name(k));
    fprintf(f, ",gapless,gapless_share,success_share,events,tokens,span_s,system_tps,"
               "usage_ignored,surrogates_replaced,min_tps_none,percentiles");
    for (int k = 0; k < TB_BM__COUNT; k++) {
        fprintf(f, ",%s_count", tb_bench_metric_name((enum tb_bench_metric)k));
        for (int q = 0; tb_stats_fields[q] != NULL; q++)
            fprintf(f, ",%s_%s", tb_bench_metric_name((enum tb_bench_metric)k), tb_stats_fields[q]);
    }
    wait_csv(f, NULL);
    tb_cli_bench_csv_blocks(f, m, s, NULL, 0);
    fputs(",goodput_slo,goodput_good,goodput_share,goodput_per_s", f);
    tb_cli_bench_barge_csv(f, NULL);
    tb_cli_bench_csv_blocks(f, m, s, NULL, 1);
    fputc('\n', f);
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        fprintf(f, "\"%s\",%s,%u", name, mode_str(m->levels[l].mode), m->levels[l].concurrency);
        tb_cli_bench_csv_num(f, m->levels[l].mode == TB_BENCH_CLOSED ? NAN : m->levels[l].rate);
        fprintf(f, ",%zu,%zu,%zu,%zu,%zu", x->requests, x->ok, error_total(x), x->incomplete,
                x->failed);
        for (int k = 1; k < TB_READER__COUNT; k++)
            fprintf(f, ",%zu", x->errors[k]);
        fprintf(f, ",%zu", x->gapless);
        tb_cli_bench_csv_num(f, tb_cli_bench_gapless(x));
        tb_cli_bench_csv_num(f, x->requests > 0 ? x->success_share : NAN);
        fprintf(f, ",%llu,%llu", (unsigned long long)x->events, (unsigned long long)x->tokens);
        tb_cli_bench_csv_num(f, x->span);
        tb_cli_bench_csv_num(f, x->ok > 0 ? x->system_tps : NAN);
        fprintf(f, ",%zu,%llu,%zu,\"%s\"", x->usage_ignored,
                (unsigned long long)x->surrogates_replaced, x->min_tps_none,
                tb_bench_percentiles(x));
        for (int k = 0; k < TB_BM__COUNT; k++) {
            fprintf(f, ",%zu", x->m[k].count);
            for (int q = 0; tb_stats_fields[q] != NULL; q++)
                tb_cli_bench_csv_num(f, tb_stats_field(&x->m[k], q));
        }
        wait_csv(f, x);
        tb_cli_bench_csv_blocks(f, m, s, x, 0);
        if (m->slo.set != 0) {
            char t[400];
            tb_bench_slo_text(&m->slo, t, sizeof(t));
            fprintf(f, ",\"%s\"", t); /* the SLOs as words: ttfa_s<=0.8 gapless */
        } else {
            fputc(',', f);
        }
        tb_cli_bench_csv_num(f, x->slo ? (double)x->good : NAN);
        tb_cli_bench_csv_num(f, x->good_share);
        tb_cli_bench_csv_num(f, x->good_per_s);
        tb_cli_bench_barge_csv(f, x);
        tb_cli_bench_csv_blocks(f, m, s, x, 1);
        fputc('\n', f);
    }
}
