/*
 * bench_wait.c - where a bench level's wait went (see bench_wait.h).
 */
#include "bench_wait.h"

#include <math.h>

#include <cJSON.h>

#include "jsonout.h"
#include "ttsbuf/svg.h"
#include "ttsbuf/turnlat.h"

/* The shares' parts, in the order of a turn (turnlat.h: the tool's wait
 * right after ttft), v2v aside: their keys, the report's labels and the
 * level's metric.  The tool's wait is not one of tb_turn_lat_keys (a
 * turn without a tool call has none), so it is a row of its own here:
 * without it a tool turn's shares summed to the rest of its wait. */
static const struct {
    const char *key, *label;
    enum tb_bench_metric metric;
} share_part[TB_CLI_WAIT_SHARES] = {
    {"eou_s", "eou", TB_BM_EOU},
    {"ttft_s", "ttft", TB_BM_TTFT},
    {"tool_s", "tool", TB_BM_TOOL},
    {"aggregation_s", "aggregation", TB_BM_AGGREGATION},
    {"tts_queue_s", "tts-queue", TB_BM_TTS_QUEUE},
    {"tts_ttfb_s", "tts-ttfb", TB_BM_TTS_TTFB},
    {"preroll_s", "pre-roll", TB_BM_PREROLL},
    {"leading_silence_s", "lead", TB_BM_LEAD},
};

static double pct_of(const struct tb_stats *s, int pct)
{
    return s->count == 0 ? NAN : pct == 95 ? s->p95 : s->p50;
}

const char *tb_cli_bench_wait_share_key(int share)
{
    return share >= 0 && share < TB_CLI_WAIT_SHARES ? share_part[share].key : "?";
}

double tb_cli_bench_wait_share(const struct tb_bench_summary *x, int share, int pct)
{
    double v, w = pct_of(&x->m[TB_BM_V2V], pct);
    if (share < 0 || share >= TB_CLI_WAIT_SHARES)
        return NAN;
    v = pct_of(&x->m[share_part[share].metric], pct);
    return !isnan(v) && w > 0 ? v / w : NAN;
}

void tb_cli_bench_wait_lines(FILE *f, const struct tb_bench_summary *x)
{
    static const int pcts[2] = {50, 95};
    if (x->m[TB_BM_V2V].count == 0)
        return;
    for (int k = 0; k < 2; k++) {
        fprintf(f, "  v2v p%d %.3f s; each part's p%d over it:\n   ", pcts[k],
                pct_of(&x->m[TB_BM_V2V], pcts[k]), pcts[k]);
        for (int i = 0; i < TB_CLI_WAIT_SHARES; i++) {
            double s = tb_cli_bench_wait_share(x, i, pcts[k]);
            if (share_part[i].metric == TB_BM_TOOL && x->m[TB_BM_TOOL].count == 0)
                continue; /* no tool turn: no tool part to name */
            if (isnan(s))
                fprintf(f, " %s -", share_part[i].label);
            else
                fprintf(f, " %s %.0f%%", share_part[i].label, 100.0 * s);
        }
        fputc('\n', f);
    }
}

void tb_cli_bench_wait_json(struct cJSON *o, const struct tb_bench_summary *x)
{
    static const char *const keys[2] = {"p50", "p95"};
    static const int pcts[2] = {50, 95};
    cJSON *sh = cJSON_AddObjectToObject(o, "latency_share");
    for (int k = 0; sh != NULL && k < 2; k++) {
        cJSON *p = cJSON_AddObjectToObject(sh, keys[k]);
        for (int i = 0; p != NULL && i < TB_CLI_WAIT_SHARES; i++)
            tb_cli_json_num(p, share_part[i].key, tb_cli_bench_wait_share(x, i, pcts[k]));
    }
}

void tb_cli_bench_wait_turn_json(struct cJSON *o, const struct tb_bench_turn *r)
{
    cJSON *l = cJSON_AddObjectToObject(o, "latency");
    for (int i = 0; l != NULL && i < TB_TURN_LAT_PARTS; i++)
        tb_cli_json_stats(l, tb_turn_lat_keys[i], &r->lat[i]);
}

_Static_assert(TB_SVG_WAIT_TOOL == TB_TURN_LAT_PARTS - 1 &&
                   TB_SVG_WAIT_PARTS == TB_SVG_WAIT_TOOL + 1,
               "a bar has every part but v2v, and the tool call's");

void tb_cli_wait_bar(struct tb_svg_wait *b, const char *label, const struct tb_turn_lat *l)
{
    b->label = label;
    for (int i = 0; i < TB_SVG_WAIT_TOOL; i++)
        b->part[i] = tb_turn_lat_part(l, i);
    b->part[TB_SVG_WAIT_TOOL] = l->tool;
    b->total = l->v2v;
}

void tb_cli_wait_bar_pct(struct tb_svg_wait *b, const char *label, const struct tb_bench_summary *x,
                         int pct)
{
    b->label = label;
    for (int i = 0; i < TB_SVG_WAIT_TOOL; i++)
        b->part[i] = pct_of(&x->m[tb_bench_metric_of_part(i)], pct);
    b->part[TB_SVG_WAIT_TOOL] = pct_of(&x->m[TB_BM_TOOL], pct);
    b->total = pct_of(&x->m[TB_BM_V2V], pct);
}
