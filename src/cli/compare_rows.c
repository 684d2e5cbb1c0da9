/*
 * compare_rows.c - what `ttsbuf compare` writes of its runs (compare.h):
 * the table, a block per level, and the same rows as --json and --csv.
 * The per-level numbers are bench's summaries, written with bench's own
 * helpers where the outputs share them (the barge-in block, the rows by
 * turn, the gapless share: bench_report.h).
 */
#include <math.h>
#include <string.h>

#include "bench_report.h"
#include "compare_rows.h"
#include "jsonout.h"
#include "ttsbuf/error.h"

/* The metrics compare shows, in its order: the wait's parts in the order
 * of a turn (tool_s, a tool turn's, after eou_s: ttft_s heads the list). */
static const enum tb_bench_metric shown[] = {
    TB_BM_TTFT,      TB_BM_TTFA,        TB_BM_GAP_TOTAL, TB_BM_MIN_TPS,         TB_BM_EOU,
    TB_BM_TOOL,      TB_BM_AGGREGATION, TB_BM_TTS_QUEUE, TB_BM_TTS_TTFB,        TB_BM_PREROLL,
    TB_BM_LEAD,      TB_BM_V2V,         TB_BM_BARGE_CLOSE, TB_BM_TURN_LATE, TB_BM_BARGE_TTS_CLOSE,
    TB_BM_BARGE_STOP};
#define NSHOWN (sizeof(shown) / sizeof(shown[0]))

static int label_width(const struct tb_cli_compare *x)
{
    int w = 11; /* gap_total_s */
    for (size_t r = 0; r < x->nrun; r++)
        if ((int)strlen(x->run[r].label) > w)
            w = (int)strlen(x->run[r].label);
    return w;
}

/* The runs, and the options that differ. */
static void runs_lines(FILE *f, const struct tb_cli_compare *x, int lw)
{
    fprintf(f, "ttsbuf compare: %zu runs\n", x->nrun);
    for (size_t r = 0; r < x->nrun; r++) {
        const struct tb_bench_meta *m = &x->run[r].meta;
        fprintf(f, "  %-*s model %s at %s%s (%s)\n", lw, x->run[r].label, m->model, m->base_url,
                strcmp(m->provider, "mock") == 0 ? ": the built-in MOCK provider (not a real model)"
                                                 : "",
                x->run[r].path);
    }
    if (x->ndiff == 0)
        fputs("  options: the same in every run\n", f);
    for (size_t d = 0; d < x->ndiff; d++) {
        fprintf(f, "  differs: %s%s:", x->diff[d].key,
                !x->diff[d].refuses ? ""
                : strcmp(x->diff[d].key, "slo") == 0
                    ? " (FORCED: goodput against different SLOs)"
                    : " (FORCED: measured against different speech)");
        for (size_t r = 0; r < x->nrun; r++)
            fprintf(f, "%s %s %s", r > 0 ? "," : "", x->run[r].label,
                    x->diff[d].val[r] != NULL ? x->diff[d].val[r] : "-");
        fputc('\n', f);
    }
}

/* Whether a run at level k had barge-in, or turns. */
static int level_has(const struct tb_cli_compare *x, size_t k, int turns)
{
    for (size_t r = 0; r < x->nrun; r++) {
        const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
        if (s != NULL && (turns ? s->nturns > 0 : s->barge))
            return 1;
    }
    return 0;
}

/* Level k's row per run: requests, ok, (barge-in) the turns
 * interrupted, the gapless share, goodput and good/s. */
static void level_rows(FILE *f, const struct tb_cli_compare *x, size_t k, int lw)
{
    int barge = level_has(x, k, 0);
    fprintf(f, "\n%s\n  %-*s %8s %6s%s %8s %8s %8s\n", x->levels[k], lw, "run", "requests", "ok",
            barge ? " interrupted" : "", "gapless", "goodput", "good/s");
    for (size_t r = 0; r < x->nrun; r++) {
        const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
        char gl[16], gp[16], ps[16] = "-";
        if (s == NULL) {
            fprintf(f, "  %-*s (not run at this level)\n", lw, x->run[r].label);
            continue;
        }
        /* Goodput: the share of requests within the run's SLOs; a run
         * without SLOs has none ("-", never 0). */
        tb_cli_bench_pct(gl, sizeof(gl), tb_cli_bench_gapless(s));
        tb_cli_bench_pct(gp, sizeof(gp), s->good_share);
        if (!isnan(s->good_per_s))
            snprintf(ps, sizeof(ps), "%.3g", s->good_per_s);
        fprintf(f, "  %-*s %8zu %6zu", lw, x->run[r].label, s->requests, s->ok);
        if (barge && s->barge)
            fprintf(f, " %11zu", s->interrupted);
        else if (barge)
            fprintf(f, " %11s", "-");
        fprintf(f, " %8s %8s %8s\n", gl, gp, ps);
    }
}

/* Whether a run at level k measured metric mt. */
static int level_measured(const struct tb_cli_compare *x, size_t k, enum tb_bench_metric mt)
{
    for (size_t r = 0; r < x->nrun; r++) {
        const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
        if (s != NULL && s->m[mt].count > 0)
            return 1;
    }
    return 0;
}

/* Level k's statistics blocks, a row per run; tool_s only when a run had
 * a tool turn there. */
static void stat_rows(FILE *f, const struct tb_cli_compare *x, size_t k, int lw)
{
    for (size_t q = 0; q < NSHOWN; q++) {
        if (shown[q] == TB_BM_TOOL && !level_measured(x, k, TB_BM_TOOL))
            continue;
        fprintf(f, "  %-*s %6s %9s %9s %9s %9s %9s %9s %9s\n", lw, tb_bench_metric_name(shown[q]),
                "count", "mean", "min", "p5", "p50", "p95", "p99", "max");
        for (size_t r = 0; r < x->nrun; r++) {
            const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
            const struct tb_stats *st = s != NULL ? &s->m[shown[q]] : NULL;
            if (st == NULL)
                continue;
            if (st->count == 0) {
                fprintf(f, "  %-*s %6zu %9s\n", lw, x->run[r].label, st->count, "-");
                continue;
            }
            fprintf(f, "  %-*s %6zu %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g\n", lw,
                    x->run[r].label, st->count, st->mean, st->min, st->p5, st->p50, st->p95,
                    st->p99, st->max);
        }
    }
}

/* Level k's barge-in rows (a run of it had barge-in): per run the turns
 * interrupted and their share, those with no gap before the
 * interruption, the turns heard to their end, the interrupted turns that
 * were good, the tokens never spoken, the characters not all played. */
static void barge_rows(FILE *f, const struct tb_cli_compare *x, size_t k, int lw)
{
    if (!level_has(x, k, 0))
        return;
    fprintf(f, "  %-*s %11s %6s %8s %11s %6s %9s %9s\n", lw, "barge-in", "interrupted", "share",
            "no gap", "heard whole", "good", "unspoken", "unplayed");
    for (size_t r = 0; r < x->nrun; r++) {
        const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
        char sh[16], gd[32] = "-";
        if (s == NULL)
            continue;
        if (!s->barge) {
            fprintf(f, "  %-*s %11s\n", lw, x->run[r].label, "-");
            continue;
        }
        if (s->slo)
            snprintf(gd, sizeof(gd), "%zu", s->good_interrupted);
        fprintf(f, "  %-*s %11zu %6s %8zu %11zu %6s %9llu %9llu\n", lw, x->run[r].label,
                s->interrupted, tb_cli_bench_pct(sh, sizeof(sh), s->interrupted_share),
                s->interrupted_gapless, s->heard_whole, gd, (unsigned long long)s->tokens_unheard,
                (unsigned long long)s->chars_unplayed);
    }
}

/* Level k's rows by turn index (a run of it had turns): a row per turn
 * and run that has it, turn by turn. */
static void turn_rows(FILE *f, const struct tb_cli_compare *x, size_t k, int lw)
{
    int barge = level_has(x, k, 0);
    int32_t last = -1;
    if (!level_has(x, k, 1))
        return;
    fprintf(f, "  %6s %-*s", "turn", lw, "run");
    tb_cli_bench_turn_head(f, barge);
    for (;;) {
        int32_t t = INT32_MAX; /* the next turn index of any run */
        for (size_t r = 0; r < x->nrun; r++) {
            const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
            for (size_t i = 0; s != NULL && i < s->nturns; i++)
                if (s->by_turn[i].turn > last && s->by_turn[i].turn < t)
                    t = s->by_turn[i].turn;
        }
        if (t == INT32_MAX)
            return;
        for (size_t r = 0; r < x->nrun; r++) {
            const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
            for (size_t i = 0; s != NULL && i < s->nturns; i++) {
                if (s->by_turn[i].turn != t)
                    continue;
                fprintf(f, "  %6d %-*s", (int)t, lw, x->run[r].label);
                tb_cli_bench_turn_cells(f, s, &s->by_turn[i], barge);
            }
        }
        last = t;
    }
}

void tb_cli_compare_human(FILE *f, const struct tb_cli_compare *x)
{
    int lw = label_width(x);
    runs_lines(f, x, lw);
    for (size_t k = 0; k < x->nlevels; k++) {
        level_rows(f, x, k, lw);
        stat_rows(f, x, k, lw);
        barge_rows(f, x, k, lw);
        turn_rows(f, x, k, lw);
    }
    fputs("\nPercentiles interpolate linearly over each run's records; ttfa_s is first audio, "
          "gap_total_s\nthe silence in a stream; goodput is the share of requests within the "
          "run's SLOs (bench --slo;\n- for a run without), good/s their rate over the level's "
          "span. A turn the caller\ninterrupted (barge-in) is counted on its own: gapless is "
          "over the turns heard to their end,\nand goodput judges an interrupted turn on what "
          "was heard before the interruption.\n",
          f);
}

/* The runs and the options that differ, as JSON. */
static void json_runs(cJSON *root, const struct tb_cli_compare *x)
{
    cJSON *runs, *diffs;
    runs = cJSON_AddArrayToObject(root, "runs");
    for (size_t r = 0; runs != NULL && r < x->nrun; r++) {
        const struct tb_bench_meta *m = &x->run[r].meta;
        cJSON *o = cJSON_CreateObject();
        if (o == NULL)
            break;
        cJSON_AddItemToArray(runs, o);
        cJSON_AddStringToObject(o, "label", x->run[r].label);
        cJSON_AddStringToObject(o, "path", x->run[r].path);
        cJSON_AddStringToObject(o, "provider", m->provider[0] ? m->provider : "remote");
        cJSON_AddStringToObject(o, "model", m->model);
        cJSON_AddStringToObject(o, "base_url", m->base_url);
        cJSON_AddStringToObject(o, "records_started_at", m->started_at);
        cJSON_AddNumberToObject(o, "shards", m->nshards);
        cJSON_AddItemToObject(o, "options", cJSON_Duplicate(x->run[r].opts, 1));
        cJSON_AddItemToObject(o, "slo", tb_bench_slo_json(&m->slo));
    }
    diffs = cJSON_AddArrayToObject(root, "differ");
    for (size_t d = 0; diffs != NULL && d < x->ndiff; d++) {
        cJSON *o = cJSON_CreateObject(), *v;
        if (o == NULL)
            break;
        cJSON_AddItemToArray(diffs, o);
        cJSON_AddStringToObject(o, "option", x->diff[d].key);
        cJSON_AddBoolToObject(o, "refuses", x->diff[d].refuses);
        v = cJSON_AddArrayToObject(o, "values");
        for (size_t r = 0; v != NULL && r < x->nrun; r++) {
            cJSON *e = x->diff[d].val[r] != NULL ? cJSON_Parse(x->diff[d].val[r]) : NULL;
            cJSON_AddItemToArray(v, e != NULL ? e : cJSON_CreateNull());
        }
    }
}

cJSON *tb_cli_compare_json(const struct tb_cli_compare *x)
{
    cJSON *root = tb_cli_json_doc(TB_SCHEMA_COMPARE, TB_SCHEMA_COMPARE_V, "compare");
    cJSON *rows;
    if (root == NULL)
        return NULL;
    cJSON_AddBoolToObject(root, "forced", x->force && x->ndiff > 0);
    json_runs(root, x);
    rows = cJSON_AddArrayToObject(root, "rows");
    for (size_t k = 0; rows != NULL && k < x->nlevels; k++) {
        for (size_t r = 0; r < x->nrun; r++) {
            const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
            cJSON *o;
            if (s == NULL || (o = cJSON_CreateObject()) == NULL)
                continue;
            cJSON_AddItemToArray(rows, o);
            cJSON_AddStringToObject(o, "level", x->levels[k]);
            cJSON_AddStringToObject(o, "run", x->run[r].label);
            cJSON_AddNumberToObject(o, "requests", (double)s->requests);
            cJSON_AddNumberToObject(o, "ok", (double)s->ok);
            cJSON_AddNumberToObject(o, "gapless", (double)s->gapless);
            tb_cli_json_num(o, "gapless_share", tb_cli_bench_gapless(s));
            tb_cli_json_num(o, "goodput", s->good_share);
            for (size_t q = 0; q < NSHOWN; q++)
                tb_cli_json_stats(o, tb_bench_metric_name(shown[q]), &s->m[shown[q]]);
            tb_cli_json_num(o, "good", s->slo ? (double)s->good : NAN);
            tb_cli_json_num(o, "goodput_per_s", s->good_per_s);
            tb_cli_bench_barge_json(o, s);
            tb_cli_bench_turns_json(o, s);
        }
    }
    return root;
}

/* A CSV field in quotes, its quotes doubled. */
static void csv_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void tb_cli_compare_csv(FILE *f, const struct tb_cli_compare *x)
{
    fputs("level,run,requests,ok,gapless,gapless_share,goodput", f);
    for (size_t q = 0; q < NSHOWN; q++) {
        fprintf(f, ",%s_count", tb_bench_metric_name(shown[q]));
        for (int i = 0; tb_stats_fields[i] != NULL; i++)
            fprintf(f, ",%s_%s", tb_bench_metric_name(shown[q]), tb_stats_fields[i]);
    }
    fputs(",good,goodput_per_s", f);
    tb_cli_bench_barge_csv(f, NULL);
    fputc('\n', f);
    for (size_t k = 0; k < x->nlevels; k++) {
        for (size_t r = 0; r < x->nrun; r++) {
            const struct tb_bench_summary *s = tb_cli_compare_sum(x, k, r);
            if (s == NULL)
                continue;
            csv_text(f, x->levels[k]);
            fputc(',', f);
            csv_text(f, x->run[r].label);
            fprintf(f, ",%zu,%zu,%zu", s->requests, s->ok, s->gapless);
            tb_cli_bench_csv_num(f, tb_cli_bench_gapless(s));
            tb_cli_bench_csv_num(f, s->good_share);
            for (size_t q = 0; q < NSHOWN; q++) {
                fprintf(f, ",%zu", s->m[shown[q]].count);
                for (int i = 0; tb_stats_fields[i] != NULL; i++)
                    tb_cli_bench_csv_num(f, tb_stats_field(&s->m[shown[q]], i));
            }
            tb_cli_bench_csv_num(f, s->slo ? (double)s->good : NAN);
            tb_cli_bench_csv_num(f, s->good_per_s);
            tb_cli_bench_barge_csv(f, s);
            fputc('\n', f);
        }
    }
}
