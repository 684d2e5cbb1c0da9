/*
 * bench_report.c - the summary `ttsbuf bench` and `ttsbuf merge` print, and
 * the --require gates (see bench_report.h).
 */
#include "bench_report.h"

#include <math.h>
#include <string.h>

#include "cli.h"

static const char *const stat_names[] = {"p50", "p95", "p99", "min", "max"};
static const char *const level_gates[] = {"gapless", "success", "errors", "system-tps"};

static double stat_value(const struct tb_bench_stat *s, int stat)
{
    switch (stat) {
    case 0: return s->p50;
    case 1: return s->p95;
    case 2: return s->p99;
    case 3: return s->min;
    default: return s->max;
    }
}

int tb_gate_parse(const char *s, struct tb_gate *g)
{
    const char *eq = strchr(s, '=');
    char err[200];
    size_t nl;
    memset(g, 0, sizeof(*g));
    g->metric = -1;
    if (eq == NULL || eq == s || (nl = (size_t)(eq - s)) >= sizeof(g->name)) {
        tb_cli_error("--require: '%s' is not NAME=VALUE (e.g. gapless=0.95, ttfa-p95=0.8)", s);
        return -1;
    }
    memcpy(g->name, s, nl);
    g->name[nl] = '\0';
    for (int i = 0; i < 4; i++) {
        if (strcmp(g->name, level_gates[i]) == 0) {
            g->which = i;
            g->at_least = i != 2;
            if (tb_opt_double("--require", eq + 1, 0, i < 2 ? 1 : 1e12, &g->limit, err,
                              sizeof(err)) != 0) {
                tb_cli_error("%s (%s)", err, g->name);
                return -1;
            }
            return 0;
        }
    }
    for (int m = 0; m < TB_BM__COUNT; m++) {
        const char *mn = tb_bench_metric_name((enum tb_bench_metric)m);
        size_t ml = strlen(mn);
        if (strncmp(g->name, mn, ml) != 0 || g->name[ml] != '-')
            continue;
        for (int k = 0; k < 5; k++) {
            if (strcmp(g->name + ml + 1, stat_names[k]) != 0)
                continue;
            g->metric = m;
            g->stat = k;
            g->at_least = tb_bench_metric_higher_better((enum tb_bench_metric)m);
            if (tb_opt_double("--require", eq + 1, 0, 1e12, &g->limit, err, sizeof(err)) != 0) {
                tb_cli_error("%s (%s)", err, g->name);
                return -1;
            }
            return 0;
        }
    }
    tb_cli_error("--require: unknown gate '%s' (gapless, success, errors, system-tps, or "
                 "METRIC-p50|p95|p99|min|max with METRIC ttft, ttfa, tps, tps-usage, itl, "
                 "underruns, gap-total, gap-max, min-tps, speedup)",
                 g->name);
    return -1;
}

size_t tb_gates_check(const struct tb_gate *g, size_t ng, const struct tb_bench_meta *m,
                      const struct tb_bench_summary *s)
{
    size_t failed = 0;
    for (size_t i = 0; i < ng; i++) {
        for (uint32_t l = 0; l < m->nlevels; l++) {
            const struct tb_bench_summary *x = &s[l];
            char name[64];
            double v;
            int ok;
            if (g[i].metric >= 0) {
                if (x->m[g[i].metric].n == 0) {
                    tb_bench_level_name(&m->levels[l], name, sizeof(name));
                    tb_cli_error("gate %s failed at %s: no sample (no successful stream)",
                                 g[i].name, name);
                    failed++;
                    continue;
                }
                v = stat_value(&x->m[g[i].metric], g[i].stat);
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
            tb_cli_error("gate %s failed at %s: %.6g, needs %s %g", g[i].name, name, v,
                         g[i].at_least ? ">=" : "<=", g[i].limit);
            failed++;
        }
    }
    return failed;
}

int tb_bench_summaries(const struct tb_bench_meta *m, const struct tb_bench_recs *recs,
                       struct tb_bench_summary *s)
{
    for (uint32_t l = 0; l < m->nlevels; l++) {
        if (tb_bench_summarize(recs, l, &s[l]) != 0) {
            tb_cli_error("out of memory summarising");
            return -1;
        }
    }
    return 0;
}

static size_t error_total(const struct tb_bench_summary *s)
{
    return s->requests - s->ok;
}

/* A statistic, or "-" when no stream has the quantity (never 0). */
static const char *stat_cell(char *buf, size_t len, const struct tb_bench_stat *st, double v,
                             int prec)
{
    if (st->n == 0)
        return "-";
    snprintf(buf, len, "%.*f", prec, v);
    return buf;
}

void tb_bench_report_human(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_summary *s)
{
    fprintf(f, "ttsbuf bench: %smodel %s at %s\n  %s\n",
            strcmp(m->provider, "mock") == 0 ? "the built-in MOCK provider (not a real model): "
                                             : "",
            m->model, m->base_url, m->options);
    if (m->nshards > 1)
        fprintf(f, "  shard %u of %u (ids = %u mod %u)\n", m->shard + 1, m->nshards, m->shard,
                m->nshards);
    /* "measured": the streams the percentiles are over (ok streams with a
     * first token); a column no stream has is "-". */
    fprintf(f, "\n  %-28s %8s %6s %8s %8s %9s %9s %9s %9s %9s\n", "level", "requests", "errors",
            "measured", "gapless", "TTFT P95", "TTFA P95", "TPS P50", "TPS P95", "system");
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64], gl[16], b[5][32];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        if (x->ok > 0)
            snprintf(gl, sizeof(gl), "%.1f%%", 100.0 * x->gapless_share);
        else
            snprintf(gl, sizeof(gl), "-");
        fprintf(f, "  %-28s %8zu %6zu %8zu %8s %9s %9s %9s %9s %9s\n", name, x->requests,
                error_total(x), x->m[TB_BM_TTFT].n, gl,
                stat_cell(b[0], sizeof(b[0]), &x->m[TB_BM_TTFT], x->m[TB_BM_TTFT].p95, 3),
                stat_cell(b[1], sizeof(b[1]), &x->m[TB_BM_TTFA], x->m[TB_BM_TTFA].p95, 3),
                stat_cell(b[2], sizeof(b[2]), &x->m[TB_BM_TPS], x->m[TB_BM_TPS].p50, 1),
                stat_cell(b[3], sizeof(b[3]), &x->m[TB_BM_TPS], x->m[TB_BM_TPS].p95, 1),
                x->ok > 0 ? (snprintf(b[4], sizeof(b[4]), "%.1f", x->system_tps), b[4]) : "-");
    }
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        if (x->ok > 0)
            fprintf(f,
                    "\n%s: %zu requests, %zu ok, %zu gapless (%.1f%%); %llu events, %llu tokens "
                    "in %.2f s: system %.1f tokens/s\n",
                    name, x->requests, x->ok, x->gapless, 100.0 * x->gapless_share,
                    (unsigned long long)x->events, (unsigned long long)x->tokens, x->span,
                    x->system_tps);
        else
            fprintf(f,
                    "\n%s: %zu requests, none ok: no verdict (%llu events arrived); "
                    "percentiles over 0 streams\n",
                    name, x->requests, (unsigned long long)x->events);
        if (x->usage_ignored > 0)
            fprintf(f,
                    "  note: %zu request%s reported usage far below the events that came "
                    "(0, or under an eighth): not trusted; their events are counted instead\n",
                    x->usage_ignored, x->usage_ignored == 1 ? "" : "s");
        if (x->surrogates_replaced > 0)
            fprintf(f,
                    "  note: %llu UTF-16 surrogate halves without a partner replaced by U+FFFD\n",
                    (unsigned long long)x->surrogates_replaced);
        if (error_total(x) > 0) {
            fprintf(f, "  errors:");
            for (int k = 1; k < TB_LIVE__COUNT; k++)
                if (x->errors[k] > 0)
                    fprintf(f, " %s %zu", tb_live_error_name(k), x->errors[k]);
            fprintf(f, "\n");
        }
        fprintf(f, "  %-18s %7s %10s %10s %10s %10s %10s\n", "metric", "n", "P50", "P95", "P99",
                "min", "max");
        for (int k = 0; k < TB_BM__COUNT; k++) {
            const struct tb_bench_stat *st = &x->m[k];
            char label[40];
            snprintf(label, sizeof(label), "%s%s%s%s",
                     tb_bench_metric_name((enum tb_bench_metric)k),
                     tb_bench_metric_unit((enum tb_bench_metric)k)[0] ? " (" : "",
                     tb_bench_metric_unit((enum tb_bench_metric)k),
                     tb_bench_metric_unit((enum tb_bench_metric)k)[0] ? ")" : "");
            if (st->n == 0) {
                fprintf(f, "  %-18s %7zu %10s\n", label, st->n, "-");
                continue;
            }
            fprintf(f, "  %-18s %7zu %10.4g %10.4g %10.4g %10.4g %10.4g\n", label, st->n, st->p50,
                    st->p95, st->p99, st->min, st->max);
        }
    }
    fprintf(f, "\nP95/P99 of the TPS metrics are the low tail (the rate 95%%/99%% of requests "
               "reached); of the others, the high tail.\n");
}

static const char *mode_str(enum tb_bench_mode mo)
{
    return mo == TB_BENCH_POISSON ? "poisson" : mo == TB_BENCH_CONSTANT ? "constant" : "closed";
}

/* A JSON string (the values here are ours or redacted, but may hold
 * quotes). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

void tb_bench_report_json(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_summary *s)
{
    fprintf(f, "{\"provider\": ");
    json_str(f, m->provider[0] ? m->provider : "remote");
    fprintf(f, ", \"model\": ");
    json_str(f, m->model);
    fprintf(f, ", \"base_url\": ");
    json_str(f, m->base_url);
    fprintf(f, ", \"options\": ");
    json_str(f, m->options);
    fprintf(f, ", \"shard\": %u, \"shards\": %u, \"levels\": [", m->shard, m->nshards);
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        fprintf(f, "%s{\"level\": ", l ? ", " : "");
        json_str(f, name);
        fprintf(f,
                ", \"mode\": \"%s\", \"concurrency\": %u, \"rate\": ", mode_str(m->levels[l].mode),
                m->levels[l].concurrency);
        json_num(f, m->levels[l].rate);
        fprintf(f, ", \"requests\": %zu, \"ok\": %zu, \"errors\": {", x->requests, x->ok);
        for (int k = 1; k < TB_LIVE__COUNT; k++)
            fprintf(f, "%s\"%s\": %zu", k > 1 ? ", " : "", tb_live_error_name(k), x->errors[k]);
        fprintf(f, "}, \"gapless\": %zu, \"gapless_share\": ", x->gapless);
        json_num(f, x->ok > 0 ? x->gapless_share : NAN);
        fprintf(f, ", \"success_share\": ");
        json_num(f, x->success_share);
        fprintf(f,
                ", \"events\": %llu, \"tokens\": %llu, \"span_s\": ", (unsigned long long)x->events,
                (unsigned long long)x->tokens);
        json_num(f, x->span);
        fprintf(f, ", \"system_tps\": ");
        json_num(f, x->ok > 0 ? x->system_tps : NAN);
        fprintf(f, ", \"usage_ignored\": %zu, \"surrogates_replaced\": %llu", x->usage_ignored,
                (unsigned long long)x->surrogates_replaced);
        fprintf(f, ", \"metrics\": {");
        for (int k = 0; k < TB_BM__COUNT; k++) {
            const struct tb_bench_stat *st = &x->m[k];
            fprintf(f, "%s\"%s\": {\"n\": %zu", k ? ", " : "",
                    tb_bench_metric_name((enum tb_bench_metric)k), st->n);
            for (int q = 0; q < 5; q++) {
                fprintf(f, ", \"%s\": ", stat_names[q]);
                if (st->n > 0)
                    json_num(f, stat_value(st, q));
                else
                    fputs("null", f);
            }
            fputc('}', f);
        }
        fprintf(f, "}}");
    }
    fprintf(f, "]}\n");
}

void tb_bench_report_csv(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_summary *s)
{
    fprintf(f, "level,mode,concurrency,rate,requests,ok,errors,gapless_share,events,tokens,span_s,"
               "system_tps");
    for (int k = 0; k < TB_BM__COUNT; k++)
        for (int q = 0; q < 5; q++)
            fprintf(f, ",%s_%s", tb_bench_metric_name((enum tb_bench_metric)k), stat_names[q]);
    fputc('\n', f);
    for (uint32_t l = 0; l < m->nlevels; l++) {
        const struct tb_bench_summary *x = &s[l];
        char name[64];
        tb_bench_level_name(&m->levels[l], name, sizeof(name));
        fprintf(f, "\"%s\",%s,%u,%.17g,%zu,%zu,%zu,", name, mode_str(m->levels[l].mode),
                m->levels[l].concurrency, m->levels[l].rate, x->requests, x->ok, error_total(x));
        if (x->ok > 0)
            fprintf(f, "%.17g", x->gapless_share);
        fprintf(f, ",%llu,%llu,%.17g,", (unsigned long long)x->events,
                (unsigned long long)x->tokens, x->span);
        if (x->ok > 0)
            fprintf(f, "%.17g", x->system_tps);
        for (int k = 0; k < TB_BM__COUNT; k++)
            for (int q = 0; q < 5; q++) {
                if (x->m[k].n > 0)
                    fprintf(f, ",%.17g", stat_value(&x->m[k], q));
                else
                    fputc(',', f);
            }
        fputc('\n', f);
    }
}
