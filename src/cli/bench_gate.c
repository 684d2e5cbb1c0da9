/*
 * bench_gate.c - the --require gates of `ttsbuf bench` and `ttsbuf merge`:
 * their names, the default gate, and the check of every level against
 * them (see bench_gate.h).
 */
#include "bench_gate.h"

#include <math.h>
#include <string.h>

#include "cli.h"
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
    "ttft",    "ttfa",    "tps",     "tps-usage", "itl", "underruns", "gap-total",
    "gap-max", "min-tps", "speedup", "-",         "-",   "-",         "-",
    "-",       "-",       "-",       "-",         "-",   "-",         "-",
    "-",       "-",       "-",       "-",         "-"}; /* the rest came after the old names */

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

/* Appends sep and name to buf at *at (cut at its end). */
static void list(char *buf, size_t len, size_t *at, const char *sep, const char *name)
{
    int n = snprintf(buf + *at, len - *at, "%s%s", sep, name);
    if (n > 0)
        *at += (size_t)n < len - *at ? (size_t)n : len - *at - 1;
}

/* The error of an unknown gate: every valid name, from the tables the
 * parser reads (every metric of the summary, every statistic), so the
 * list never lags a new metric. */
static void unknown(const char *name)
{
    char buf[2048];
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < NLEVEL_GATES; i++)
        list(buf, sizeof(buf), &at, i == 0 ? "" : ", ", level_gates[i]);
    for (int m = 0; m < TB_BM__COUNT; m++)
        list(buf, sizeof(buf), &at, m == 0 ? ", or METRIC_STAT with METRIC " : ", ",
             tb_bench_metric_name((enum tb_bench_metric)m));
    for (int k = 0; tb_stats_fields[k] != NULL; k++)
        list(buf, sizeof(buf), &at, k == 0 ? " and STAT " : ", ", tb_stats_fields[k]);
    tb_cli_error("--require: unknown gate '%s' (%s)", name, buf);
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
    unknown(g->name);
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

void tb_cli_gate_text(char *buf, size_t len, const struct tb_cli_gate *g)
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
