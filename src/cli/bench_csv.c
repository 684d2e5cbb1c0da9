/*
 * bench_csv.c - the blocks of bench's and merge's CSV summary that the
 * JSON summary writes first (bench_report.h): tts_stats, retry and
 * llm_capacity_wait_s flattened by csvflat.h's rule, so that the CSV's
 * columns stay the JSON's keys (ttsbuf(1), OUTPUT).
 */
#include <cJSON.h>
#include <stdio.h>

#include "bench_csv.h"
#include "csvflat.h"
#include "jsonout.h"
#include "report.h"

void tb_cli_bench_retry_json(cJSON *o, const struct tb_bench_summary *x)
{
    cJSON *r = cJSON_AddObjectToObject(o, "retry");
    if (r == NULL)
        return;
    cJSON_AddNumberToObject(r, "refused", (double)x->retry.refused);
    cJSON_AddNumberToObject(r, "refusals", (double)x->retry.refusals);
    cJSON_AddNumberToObject(r, "retries", (double)x->retry.retries);
    cJSON_AddNumberToObject(r, "retried_ok", (double)x->retry.retried_ok);
    cJSON_AddNumberToObject(r, "gave_up", (double)x->retry.gave_up);
    cJSON_AddNumberToObject(r, "wait_total_s", x->retry.wait_total);
    tb_cli_json_stats(r, "wait_s", &x->retry.wait);
}

/* The level's blocks before goodput (post 0: tts_stats, with a real TTS)
 * or after barge_in (post 1: retry, and llm_capacity_wait_s with
 * --llm-capacity), as the JSON summary writes them. */
static cJSON *blocks(const struct tb_bench_summary *x, int post)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    if (!post && x->tts)
        tb_cli_report_tts_json(o, &x->tts_stats);
    if (post) {
        tb_cli_bench_retry_json(o, x);
        if (x->llm_capacity)
            tb_cli_json_stats(o, "llm_capacity_wait_s", &x->llm_wait);
    }
    return o;
}

/* The level whose blocks name the columns: the first with a real TTS
 * (post 0) or with --llm-capacity (post 1), else the first. */
static const struct tb_bench_summary *model(const struct tb_bench_meta *m,
                                            const struct tb_bench_summary *s, int post)
{
    for (uint32_t l = 0; l < m->nlevels; l++)
        if (post ? s[l].llm_capacity != 0 : s[l].tts != 0)
            return &s[l];
    return m->nlevels > 0 ? &s[0] : NULL;
}

void tb_cli_bench_csv_blocks(FILE *f, const struct tb_bench_meta *m,
                             const struct tb_bench_summary *s, const struct tb_bench_summary *x,
                             int post)
{
    const struct tb_bench_summary *h = model(m, s, post);
    cJSON *hb, *xb;
    size_t n;
    if (h == NULL || (hb = blocks(h, post)) == NULL)
        return;
    n = tb_cli_csv_flat(NULL, hb, NULL, 1);
    if (x == NULL) {
        tb_cli_csv_flat(f, hb, NULL, 1);
    } else if ((xb = blocks(x, post)) != NULL && tb_cli_csv_flat(NULL, xb, NULL, 0) == n) {
        tb_cli_csv_flat(f, xb, NULL, 0);
        cJSON_Delete(xb);
    } else {
        cJSON_Delete(xb);
        tb_cli_csv_blank(f, n);
    }
    cJSON_Delete(hb);
}
