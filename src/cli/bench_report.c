/*
 * bench_report.c - the summary `ttsbuf bench` and `ttsbuf merge` print, and
 * the --require gates (see bench_report.h).
 */
#include "bench_report.h"
#include "report.h"

#include <math.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "outputs.h"
#include "ttsbuf/error.h"

static const char *const level_gates[] = {"gapless_share", "success_share", "errors",
                                          "system_tps",    "goodput",       "goodput_per_s"};
#define NLEVEL_GATES 6

/* The names before the one vocabulary, accepted for one release: level
 * gates, then METRIC-STAT with the old metric names (in enum order). */
static const char *const old_level_gates[] = {"gapless",    "success", "errors",
                                              "system-tps", "-",       "-"};
static const char *const old_metrics[TB_BM__COUNT] = {
    "ttft",      "ttfa",      "tps",     "tps-usage", "itl",
    "underruns", "gap-total", "gap-max", "min-tps",   "speedup"};

/* 0, or TB_EINVAL / TB_ERANGE (printed). */
static int gate_limit(struct tb_cli_gate *g, const char *val, double max)
{
    char err[200];
    int rc = tb_cli_number_double("--require", val, 0, max, &g->limit, err, sizeof(err));
    if (rc != 0)
        tb_cli_error("%s (%s)", err, g->name);
    return rc;
}

/* TB_CLI_NOT_MINE when stat is no statistic's name, else as gate_limit. */
static int metric_gate(struct tb_cli_gate *g, int m, const char *stat, const char *val)
{
    int k = tb_stats_field_index(stat);
    if (k < 0)
        return TB_CLI_NOT_MINE;
    g->metric = m;
    g->stat = k;
    /* The direction is the quantity's, whatever the statistic: a rate's
     * gate is a floor (decode_tps_p95=10: the fast tail at least 10), a
     * time's or a count's a ceiling.  A spread (std) is a ceiling for
     * every quantity: a floor on it would ask for unsteadiness. */
    g->at_least =
        tb_bench_metric_higher_better((enum tb_bench_metric)m) && strcmp(stat, "std") != 0;
    return gate_limit(g, val, 1e12);
}

/* An old name (METRIC-STAT): its new stat, or NULL.  The old P95 and P99
 * of a decode rate were its low tail: P95 is the new p5; P99 (the 1st
 * percentile) has no new name. */
static const char *old_stat(int m, const char *stat)
{
    int hb = tb_bench_metric_higher_better((enum tb_bench_metric)m);
    if (strcmp(stat, "p95") == 0)
        return hb ? "p5" : "p95";
    if (strcmp(stat, "p99") == 0)
        return hb ? NULL : "p99";
    if (strcmp(stat, "p50") == 0 || strcmp(stat, "min") == 0 || strcmp(stat, "max") == 0)
        return stat;
    return NULL;
}

int tb_cli_gate_parse(const char *s, struct tb_cli_gate *g)
{
    const char *eq = strchr(s, '=');
    size_t nl;
    memset(g, 0, sizeof(*g));
    g->metric = -1;
    if (eq == NULL || eq == s || (nl = (size_t)(eq - s)) >= sizeof(g->name)) {
        tb_cli_error("--require: '%s' is not NAME=VALUE (e.g. gapless_share=0.95, "
                     "ttfa_s_p95=0.8)",
                     s);
        return TB_EINVAL;
    }
    memcpy(g->name, s, nl);
    g->name[nl] = '\0';
    for (int i = 0; i < NLEVEL_GATES; i++) {
        if (strcmp(g->name, level_gates[i]) == 0 || strcmp(g->name, old_level_gates[i]) == 0) {
            g->which = i;
            g->at_least = i != 2;
            g->goodput = i >= 4;
            return gate_limit(g, eq + 1, i < 2 || i == 4 ? 1 : 1e12);
        }
    }
    for (int m = 0; m < TB_BM__COUNT; m++) {
        const char *mn = tb_bench_metric_name((enum tb_bench_metric)m);
        size_t ml = strlen(mn);
        int rc;
        if (strncmp(g->name, mn, ml) == 0 && g->name[ml] == '_' &&
            (rc = metric_gate(g, m, g->name + ml + 1, eq + 1)) != TB_CLI_NOT_MINE)
            return rc;
    }
    for (int m = 0; m < TB_BM__COUNT; m++) {
        size_t ml = strlen(old_metrics[m]);
        const char *st;
        if (strncmp(g->name, old_metrics[m], ml) != 0 || g->name[ml] != '-')
            continue;
        st = old_stat(m, g->name + ml + 1);
        if (st != NULL)
            return metric_gate(g, m, st, eq + 1);
    }
    tb_cli_error("--require: unknown gate '%s' (gapless_share, success_share, errors, "
                 "system_tps, goodput, goodput_per_s, or METRIC_STAT with METRIC ttft_s, ttfa_s, "
                 "decode_tps, "
                 "decode_tps_usage, itl_s, underruns, gap_total_s, gap_max_s, min_tps, "
                 "speedup_needed and STAT mean, std, min, p5, p50, p90, p95, p99, max)",
                 g->name);
    return TB_EINVAL;
}

void tb_cli_gates_default(struct tb_cli_gate *g, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        if (g[i].metric < 0 && (g[i].which == 1 || g[i].which == 2))
            return; /* the user said which failures are allowed */
    if (*n == TB_CLI_GATES_MAX || tb_cli_gate_parse("success_share=1", &g[*n]) != 0)
        return;
    g[(*n)++].is_default = 1;
}

/* "success_share >= 1", "ttft_s_p95 <= 0.8". */
static void gate_text(char *buf, size_t len, const struct tb_cli_gate *g)
{
    snprintf(buf, len, "%s %s %g", g->name, g->at_least ? ">=" : "<=", g->limit);
}

size_t tb_cli_gates_check(const struct tb_cli_gate *g, size_t ng, const struct tb_bench_meta *m,
                          const struct tb_bench_summary *s)
{
    size_t failed = 0;
    /* Failures come after the report: on one terminal or log, the
     * report's buffered standard output first. */
    (void)tb_cli_flush_stdout();
    for (size_t i = 0; i < ng; i++) {
        for (uint32_t l = 0; l < m->nlevels; l++) {
            const struct tb_bench_summary *x = &s[l];
            char name[64];
            double v;
            int ok;
            if (g[i].metric >= 0) {
                if (x->m[g[i].metric].count == 0) {
                    tb_bench_level_name(&m->levels[l], name, sizeof(name));
                    tb_cli_error("gate %s failed at %s: no sample (no stream measured it)",
                                 g[i].name, name);
                    failed++;
                    continue;
                }
                v = tb_stats_field(&x->m[g[i].metric], g[i].stat);
            } else if (g[i].goodput && !x->slo) {
                tb_bench_level_name(&m->levels[l], name, sizeof(name));
                tb_cli_error("gate %s failed at %s: no SLOs (the records carry none; bench "
                             "--slo gives them)",
                             g[i].name, name);
                failed++;
                continue;
            } else if (g[i].goodput && isnan(g[i].which == 4 ? x->good_share : x->good_per_s)) {
                tb_bench_level_name(&m->levels[l], name, sizeof(name));
                tb_cli_error("gate %s failed at %s: not measured (no request, or no span)",
                             g[i].name, name);
                failed++;
                continue;
            } else if (g[i].which == 4) {
                v = x->good_share;
            } else if (g[i].which == 5) {
                v = x->good_per_s;
            } else if (g[i].which == 0) {
                v = x->gapless_share;
            } else if (g[i].which == 1) {
                v = x->success_share;
            } else if (g[i].which == 2) {
                v = (double)(x->requests - x->ok);
            } else {
                v = x->system_tps;
            }
            ok = g[i].at_least ? v >= g[i].limit : v <= g[i].limit;
            if (ok)
                continue;
            tb_bench_level_name(&m->levels[l], name, sizeof(name));
            tb_cli_error("gate %s failed at %s: %.6g, needs %s %g%s", g[i].name, name, v,
                         g[i].at_least ? ">=" : "<=", g[i].limit,
                         g[i].is_default ? " (the default gate: every request must succeed; "
                                           "--require success_share=X or errors=N allows "
                                           "failures)"
                                         : "");
            failed++;
        }
    }
    return failed;
}

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

/* The options as KEY=VALUE words, wrapped under 100 columns. */
static void options_line(FILE *f, const struct tb_bench_meta *m)
{
    cJSON *o = options_of(m), *it;
    size_t col = 2;
    fputs("  options:", f);
    col += strlen("options:");
    cJSON_ArrayForEach(it, o)
    {
        char w[160];
        if (cJSON_IsString(it))
            snprintf(w, sizeof(w), "%s=%s", it->string, it->valuestring);
        else if (cJSON_IsNumber(it))
            snprintf(w, sizeof(w), "%s=%.15g", it->string, it->valuedouble);
        else if (cJSON_IsBool(it))
            snprintf(w, sizeof(w), "%s=%s", it->string, cJSON_IsTrue(it) ? "on" : "off");
        else
            snprintf(w, sizeof(w), "%s=-", it->string);
        if (col + 1 + strlen(w) > 99) {
            fputs("\n          ", f);
            col = 10;
        }
        fprintf(f, " %s", w);
        col += 1 + strlen(w);
    }
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
 * and first audio (p50, p95) and the good share, as context grows. */
static void goodput_lines(FILE *f, const struct tb_bench_summary *x)
{
    char ps[32] = "-";
    if (!isnan(x->good_per_s))
        snprintf(ps, sizeof(ps), "%.3g", x->good_per_s);
    if (x->slo && x->requests > 0)
        fprintf(f, "  goodput: %zu of %zu requests within the SLOs (%.1f%%), %s good/s\n", x->good,
                x->requests, 100.0 * x->good_share, ps);
    if (x->nturns == 0)
        return;
    fprintf(f, "  %6s %6s %6s %9s %9s %9s %9s %11s %7s\n", "turn", "n", "ok", "TTFT p50",
            "TTFT p95", "audio p50", "audio p95", "silence p95", "good");
    for (size_t t = 0; t < x->nturns; t++) {
        const struct tb_bench_turn *r = &x->by_turn[t];
        char b[5][32], gs[16] = "-";
        if (x->slo)
            snprintf(gs, sizeof(gs), "%.1f%%", 100.0 * r->good_share);
        fprintf(f, "  %6d %6zu %6zu %9s %9s %9s %9s %11s %7s\n", (int)r->turn, r->n, r->ok,
                stat_cell(b[0], sizeof(b[0]), &r->ttft, r->ttft.p50, 3),
                stat_cell(b[1], sizeof(b[1]), &r->ttft, r->ttft.p95, 3),
                stat_cell(b[2], sizeof(b[2]), &r->ttfa, r->ttfa.p50, 3),
                stat_cell(b[3], sizeof(b[3]), &r->ttfa, r->ttfa.p95, 3),
                stat_cell(b[4], sizeof(b[4]), &r->gap_total, r->gap_total.p95, 3), gs);
    }
}

void tb_cli_bench_report_human(FILE *f, const char *command, const struct tb_bench_meta *m,
                               const struct tb_bench_summary *s, const struct tb_cli_gate *g,
                               size_t ng)
{
    int lw = level_width(m);
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
        if (x->ok > 0)
            snprintf(gl, sizeof(gl), "%.1f%%", 100.0 * x->gapless_share);
        else
            snprintf(gl, sizeof(gl), "-");
        snprintf(cf, sizeof(cf), "%zu/%zu", x->incomplete, x->failed);
        fprintf(f, "  %-*s %8zu %8s %8zu %7s %8s %8s %7s %7s %7s\n", lw, name, x->requests, cf,
                x->m[TB_BM_TTFT].count, gl,
                stat_cell(b[0], sizeof(b[0]), &x->m[TB_BM_TTFT], x->m[TB_BM_TTFT].p95, 3),
                stat_cell(b[1], sizeof(b[1]), &x->m[TB_BM_TTFA], x->m[TB_BM_TTFA].p95, 3),
                stat_cell(b[2], sizeof(b[2]), &x->m[TB_BM_TPS], x->m[TB_BM_TPS].p50, 1),
                stat_cell(b[3], sizeof(b[3]), &x->m[TB_BM_TPS], x->m[TB_BM_TPS].p5, 1),
                x->ok > 0 ? (snprintf(b[4], sizeof(b[4]), "%.1f", x->system_tps), b[4]) : "-");
    }
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        if (x->ok > 0)
            fprintf(f,
                    "\n%s: %zu requests, %zu ok, %zu gapless (%.1f%%)\n  %llu events, %llu tokens "
                    "in %.2f s: system %.1f tokens/s\n",
                    name, x->requests, x->ok, x->gapless, 100.0 * x->gapless_share,
                    (unsigned long long)x->events, (unsigned long long)x->tokens, x->span,
                    x->system_tps);
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
        if (x->usage_ignored > 0)
            fprintf(f,
                    "  note: %zu request%s reported usage far below the events that came "
                    "(0, or under an eighth): not trusted; their events are counted instead\n",
                    x->usage_ignored, x->usage_ignored == 1 ? "" : "s");
        if (x->surrogates_replaced > 0)
            fprintf(f,
                    "  note: %llu UTF-16 surrogate halves without a partner replaced by U+FFFD\n",
                    (unsigned long long)x->surrogates_replaced);
        if (x->min_tps_none > 0)
            fprintf(f,
                    "  min TPS: none for %zu of %zu complete request%s (" TB_MIN_TPS_NONE_REASON
                    "); min_tps below is over the others\n",
                    x->min_tps_none, x->ok, x->ok == 1 ? "" : "s");
        if (error_total(x) > 0) {
            fprintf(f,
                    "  not in the gapless share: %zu cut off, %zu failed; errors:", x->incomplete,
                    x->failed);
            for (int k = 1; k < TB_READER__COUNT; k++)
                if (x->errors[k] > 0)
                    fprintf(f, " %s %zu", tb_reader_error_name(k), x->errors[k]);
            fprintf(f, "\n");
        }
        /* The metric's name says its unit (_s, _tps, _needed: a factor). */
        fprintf(f, "  %-16s %6s %9s %9s %9s %9s %9s %9s %9s\n", "metric", "count", "mean", "min",
                "p5", "p50", "p95", "p99", "max");
        for (int k = 0; k < TB_BM__COUNT; k++) {
            const struct tb_stats *st = &x->m[k];
            const char *label = tb_bench_metric_name((enum tb_bench_metric)k);
            if (st->count == 0) {
                fprintf(f, "  %-16s %6zu %9s\n", label, st->count, "-");
                continue;
            }
            fprintf(f, "  %-16s %6zu %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g\n", label, st->count,
                    st->mean, st->min, st->p5, st->p50, st->p95, st->p99, st->max);
        }
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
            gate_text(t, sizeof(t), &g[i]);
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

/* A level's "goodput" (always: its slo null without SLOs) and, for calls,
 * its "by_turn" rows. */
static void goodput_json(cJSON *o, const struct tb_bench_meta *m, const struct tb_bench_summary *x)
{
    cJSON *g = cJSON_AddObjectToObject(o, "goodput"), *bt;
    if (g != NULL) {
        cJSON_AddItemToObject(g, "slo", tb_bench_slo_json(&m->slo));
        tb_cli_json_num(g, "good", x->slo ? (double)x->good : NAN);
        tb_cli_json_num(g, "share", x->good_share);
        tb_cli_json_num(g, "per_s", x->good_per_s);
    }
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
        tb_cli_json_stats(e, "ttft_s", &r->ttft);
        tb_cli_json_stats(e, "ttfa_s", &r->ttfa);
        tb_cli_json_stats(e, "gap_total_s", &r->gap_total);
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
        tb_cli_json_num(o, "gapless_share", x->ok > 0 ? x->gapless_share : NAN);
        tb_cli_json_num(o, "success_share", x->requests > 0 ? x->success_share : NAN);
        cJSON_AddNumberToObject(o, "events", (double)x->events);
        cJSON_AddNumberToObject(o, "tokens", (double)x->tokens);
        cJSON_AddNumberToObject(o, "span_s", x->span);
        tb_cli_json_num(o, "system_tps", x->ok > 0 ? x->system_tps : NAN);
        cJSON_AddNumberToObject(o, "usage_ignored", (double)x->usage_ignored);
        cJSON_AddNumberToObject(o, "surrogates_replaced", (double)x->surrogates_replaced);
        cJSON_AddNumberToObject(o, "min_tps_none", (double)x->min_tps_none);
        for (int k = 0; k < TB_BM__COUNT; k++)
            tb_cli_json_stats(o, tb_bench_metric_name((enum tb_bench_metric)k), &x->m[k]);
        if (x->tts)
            tb_cli_report_tts_json(o, &x->tts_stats); /* only with a real TTS */
        if (x->barge && (e = cJSON_AddObjectToObject(o, "barge_in")) != NULL) {
            /* only in a call run with --barge-in */
            cJSON_AddNumberToObject(e, "interruptions", (double)x->interrupted);
            tb_cli_json_num(e, "interrupted_share", x->requests > 0 ? x->interrupted_share : NAN);
            cJSON_AddNumberToObject(e, "tokens_unheard", (double)x->tokens_unheard);
            cJSON_AddNumberToObject(e, "chars_unplayed", (double)x->chars_unplayed);
        }
        goodput_json(o, m, x);
    }
    return tb_json_put_line(f, root);
}

/* A CSV cell: the number, or empty when not measured. */
static void csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.17g", v);
}

void tb_cli_bench_report_csv(FILE *f, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s)
{
    fprintf(f, "level,mode,concurrency,rate,requests,ok,errors,incomplete,failed");
    for (int k = 1; k < TB_READER__COUNT; k++)
        fprintf(f, ",errors_by_kind_%s", tb_reader_error_name(k));
    fprintf(f, ",gapless,gapless_share,success_share,events,tokens,span_s,system_tps,"
               "usage_ignored,surrogates_replaced,min_tps_none");
    for (int k = 0; k < TB_BM__COUNT; k++) {
        fprintf(f, ",%s_count", tb_bench_metric_name((enum tb_bench_metric)k));
        for (int q = 0; tb_stats_fields[q] != NULL; q++)
            fprintf(f, ",%s_%s", tb_bench_metric_name((enum tb_bench_metric)k), tb_stats_fields[q]);
    }
    fputs(",goodput_slo,goodput_good,goodput_share,goodput_per_s\n", f);
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        fprintf(f, "\"%s\",%s,%u", name, mode_str(m->levels[l].mode), m->levels[l].concurrency);
        csv_num(f, m->levels[l].mode == TB_BENCH_CLOSED ? NAN : m->levels[l].rate);
        fprintf(f, ",%zu,%zu,%zu,%zu,%zu", x->requests, x->ok, error_total(x), x->incomplete,
                x->failed);
        for (int k = 1; k < TB_READER__COUNT; k++)
            fprintf(f, ",%zu", x->errors[k]);
        fprintf(f, ",%zu", x->gapless);
        csv_num(f, x->ok > 0 ? x->gapless_share : NAN);
        csv_num(f, x->requests > 0 ? x->success_share : NAN);
        fprintf(f, ",%llu,%llu", (unsigned long long)x->events, (unsigned long long)x->tokens);
        csv_num(f, x->span);
        csv_num(f, x->ok > 0 ? x->system_tps : NAN);
        fprintf(f, ",%zu,%llu,%zu", x->usage_ignored, (unsigned long long)x->surrogates_replaced,
                x->min_tps_none);
        for (int k = 0; k < TB_BM__COUNT; k++) {
            fprintf(f, ",%zu", x->m[k].count);
            for (int q = 0; tb_stats_fields[q] != NULL; q++)
                csv_num(f, tb_stats_field(&x->m[k], q));
        }
        if (m->slo.set != 0) {
            char t[400];
            tb_bench_slo_text(&m->slo, t, sizeof(t));
            fprintf(f, ",\"%s\"", t); /* the SLOs as words: ttfa_s<=0.8 gapless */
        } else {
            fputc(',', f);
        }
        csv_num(f, x->slo ? (double)x->good : NAN);
        csv_num(f, x->good_share);
        csv_num(f, x->good_per_s);
        fputc('\n', f);
    }
}
