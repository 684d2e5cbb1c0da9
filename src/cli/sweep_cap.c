/*
 * sweep_cap.c - sweep's TTS capacity shared by its streams (sweep_cap.h).
 */
#include "sweep_cap.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "ttsbuf/capq.h"
#include "ttsbuf/error.h"

const struct tb_optdoc tb_opt_sweep_cap[] = {
    {"tts-capacity", TB_O_TTS_CAPACITY, "N",
     "at most N TTS syntheses in flight across every stream (a provider's account limit, "
     "1..100000), queued first come, first served; each stream is one call's answer, arriving "
     "as --arrivals says",
     "Needs a TTS stage (a latency). --tts-concurrency stays each stream's own limit. Each "
     "point's schedule is modelled across the streams, and each stream plays it (its minimum "
     "TPS is searched alone); the points gain tts_capacity_wait_s, every chunk's wait for a "
     "slot. ttsbuf-model(7), SHARED CAPACITY."},
    {"arrivals", TB_O_ARRIVALS, "burst|poisson:R|uniform:W",
     "when each stream's request is sent on the run's clock: every one at 0 (burst, the "
     "default), R a second at random (Poisson), or each at a uniform draw in [0, W) s",
     "Drawn from --tts-seed and the stream's number alone, so the same seed gives the same "
     "arrivals."},
    {"target-ttfa", TB_O_TARGET_TTFA, "S",
     "the smallest --tts-capacity that keeps the P95 first audio (ttfa) at or under S seconds: "
     "the table of N against the P95, and the answer",
     "Sweeps the one setting the axes give (one value each) at N = 1, 2, ... until the P95 is "
     "at most S, or no chunk waits any more (more slots change nothing: no answer, null). "
     "--json adds capacity_search {target_ttfa_s, rows [{tts_capacity, ttfa_p95_s, "
     "wait_p95_s, wait_max_s}], tts_capacity}."},
    {"llm-capacity", TB_O_LLM_CAPACITY, "N",
     "at most N LLM requests in flight across the streams (1..100000): a request over it waits "
     "first come, first served, from its arrival (--arrivals) until one ends",
     "A request holds its place from its send to its last event as recorded (not re-modelled "
     "under --tps); its wait moves every event of its stream, so ttft and first audio include "
     "it. The JSON's options say llm_capacity, and llm_capacity_wait_s has the streams' waits. "
     "Live, a provider's limit is "
     "its refusals: serve --max-inflight N and bench --retry."},
    TB_OPTDOC_END,
};

int tb_cli_sweep_cap_option(struct tb_cli_sweep_cap *c, int opt, const char *arg)
{
    switch (opt) {
    case TB_O_TTS_CAPACITY:
        return tb_cli_opt_size("--tts-capacity", arg, 1, TB_CAPQ_MAX, &c->capacity);
    case TB_O_LLM_CAPACITY:
        return tb_cli_opt_size("--llm-capacity", arg, 1, TB_CAPQ_MAX, &c->llm_capacity);
    case TB_O_TARGET_TTFA: return tb_cli_opt_double("--target-ttfa", arg, 0.001, 3600, &c->target);
    case TB_O_ARRIVALS:
        c->arrivals = arg;
        if (strcmp(arg, "burst") == 0) {
            c->kind = 0;
            return 0;
        }
        if (strncmp(arg, "poisson:", 8) == 0 || strncmp(arg, "uniform:", 8) == 0) {
            char *end;
            c->kind = arg[0] == 'p' ? 1 : 2;
            c->arg = strtod(arg + 8, &end);
            if (end != arg + 8 && *end == '\0' && c->arg >= 0.001 && c->arg <= 1e6)
                return 0;
        }
        tb_cli_error("--arrivals: '%s' is not burst, poisson:R or uniform:W (R, W 0.001..1e6)",
                     arg);
        return TB_EINVAL;
    default: return TB_CLI_NOT_MINE;
    }
}

/* A uniform draw in [0, 1) that is a pure function of (seed, i). */
static double draw(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + (i + 1) * 0xBF58476D1CE4E5B9ULL + 0x41c64e6d;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

int tb_cli_sweep_cap_apply(struct tb_cli_sweep_cap *c, uint64_t seed, size_t n,
                           struct tb_sweep_opts *so)
{
    double t = 0;
    if (c->arrivals != NULL && c->capacity == 0 && c->target <= 0 && c->llm_capacity == 0) {
        tb_cli_error("sweep: --arrivals applies to --tts-capacity, --llm-capacity or "
                     "--target-ttfa");
        return TB_EINVAL;
    }
    so->capacity = (int)c->capacity;
    so->llm_capacity = (int)c->llm_capacity;
    if (c->capacity > 0 || c->target > 0)
        so->tts.on = 1; /* a synthesis to queue: the TTS stage, even for a constant latency */
    if (c->kind == 0)
        return 0;
    c->arrival = malloc((n > 0 ? n : 1) * sizeof(double));
    if (c->arrival == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        double u = draw(seed, i);
        if (c->kind == 1)
            t += -log1p(-u) / c->arg; /* exponential gaps: Poisson arrivals */
        c->arrival[i] = c->kind == 1 ? t : u * c->arg;
    }
    so->arrival = c->arrival;
    return 0;
}

/* One sweep of so at capacity N: its row.  0, or an error printed. */
static int one(const struct tb_sweep_opts *so, const struct tb_sweep_input *in, size_t n,
               unsigned threads, int cap, struct tb_cli_cap_row *row)
{
    struct tb_sweep_opts o = *so;
    struct tb_sweep *sw = NULL;
    const struct tb_sweep_point *pt;
    size_t npt;
    char err[512];
    int rc;
    o.capacity = cap;
    o.target = 0;
    o.target_v2v = 0;
    rc = tb_sweep_create(&o, in, n, &sw, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("sweep: --target-ttfa: %s", err);
        return rc;
    }
    (void)tb_sweep_points(sw, &npt);
    if (npt != 1) {
        tb_sweep_destroy(sw);
        tb_cli_error("sweep: --target-ttfa: give one value per axis (the grid has %zu settings)",
                     npt);
        return TB_EINVAL;
    }
    rc = tb_sweep_run(sw, threads, NULL, NULL);
    if (rc != 0) {
        tb_sweep_destroy(sw);
        tb_cli_error("sweep: --target-ttfa: %s", tb_strerror(rc));
        return rc;
    }
    pt = tb_sweep_points(sw, &npt);
    *row = (struct tb_cli_cap_row){cap, pt->ttfa.p95, pt->cap_wait.p95, pt->cap_wait.max};
    tb_sweep_destroy(sw);
    return 0;
}

int tb_cli_sweep_cap_search(struct tb_cli_sweep_cap *c, const struct tb_sweep_opts *so,
                            const struct tb_sweep_input *in, size_t n, unsigned threads)
{
    if (c->target <= 0)
        return 0;
    if (!so->tts.on) {
        tb_cli_error("sweep: --target-ttfa needs a TTS stage (--tts-latency, --tts)");
        return TB_EINVAL;
    }
    c->rows = calloc(TB_CLI_CAP_ROWS_MAX, sizeof(*c->rows));
    if (c->rows == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    for (int cap = 1; cap <= TB_CLI_CAP_ROWS_MAX; cap++) {
        struct tb_cli_cap_row *r = &c->rows[c->nrows];
        int rc = one(so, in, n, threads, cap, r);
        if (rc != 0)
            return rc;
        c->nrows++;
        if (r->ttfa_p95 <= c->target) {
            c->answer = cap;
            break;
        }
        if (!(r->wait_max > 0))
            break; /* nothing waits: more slots change nothing */
    }
    return 0;
}

void tb_cli_sweep_cap_print(FILE *f, const struct tb_cli_sweep_cap *c, const struct tb_sweep *sw)
{
    const struct tb_stats *lw = tb_sweep_llm_wait(sw);
    if (c->llm_capacity > 0 && lw->count > 0)
        fprintf(f, "\nLLM capacity %zu: each stream's wait p50 %.3f s, p95 %.3f s, max %.3f s\n",
                c->llm_capacity, lw->p50, lw->p95, lw->max);
    if (c->capacity > 0) /* the table's points were played with it */
        fprintf(f,
                "\nTTS capacity %zu: the streams share %zu synthes%s at once (arrivals %s), "
                "first come first served; each point's chunk waits are tts_capacity_wait_s in "
                "--json\n",
                c->capacity, c->capacity, c->capacity == 1 ? "is" : "es",
                c->arrivals != NULL ? c->arrivals : "burst");
    if (c->target <= 0)
        return;
    fprintf(f, "\nTTS capacity for P95 first audio <= %.3f s (arrivals %s):\n", c->target,
            c->arrivals != NULL ? c->arrivals : "burst");
    fprintf(f, "  %8s %10s %10s %10s\n", "capacity", "ttfa p95", "wait p95", "wait max");
    for (size_t i = 0; i < c->nrows; i++) {
        const struct tb_cli_cap_row *r = &c->rows[i];
        fprintf(f, "  %8d %10.3f %10.3f %10.3f\n", r->capacity, r->ttfa_p95,
                r->wait_p95 > 0 ? r->wait_p95 : 0.0, r->wait_max > 0 ? r->wait_max : 0.0);
    }
    if (c->answer > 0)
        fprintf(f, "  answer: %d slot%s\n", c->answer, c->answer == 1 ? "" : "s");
    else
        fprintf(f, "  answer: none (with no chunk waiting, P95 first audio stays above %.3f s)\n",
                c->target);
}

void tb_cli_sweep_cap_json(cJSON *root, cJSON *opts, const struct tb_cli_sweep_cap *c,
                           const struct tb_sweep *sw)
{
    cJSON *s, *rows;
    if (opts != NULL && c->capacity > 0)
        cJSON_AddNumberToObject(opts, "tts_capacity", (double)c->capacity);
    if (opts != NULL && c->llm_capacity > 0)
        cJSON_AddNumberToObject(opts, "llm_capacity", (double)c->llm_capacity);
    if (c->llm_capacity > 0)
        tb_cli_json_stats(root, "llm_capacity_wait_s", tb_sweep_llm_wait(sw));
    if (opts != NULL && (c->capacity > 0 || c->target > 0 || c->llm_capacity > 0))
        cJSON_AddStringToObject(opts, "arrivals", c->arrivals != NULL ? c->arrivals : "burst");
    if (c->target <= 0 || (s = cJSON_AddObjectToObject(root, "capacity_search")) == NULL)
        return;
    cJSON_AddNumberToObject(s, "target_ttfa_s", c->target);
    rows = cJSON_AddArrayToObject(s, "rows");
    for (size_t i = 0; rows != NULL && i < c->nrows; i++) {
        cJSON *r = cJSON_CreateObject();
        if (r == NULL || !cJSON_AddItemToArray(rows, r)) {
            cJSON_Delete(r);
            break;
        }
        cJSON_AddNumberToObject(r, "tts_capacity", c->rows[i].capacity);
        tb_cli_json_num(r, "ttfa_p95_s", c->rows[i].ttfa_p95);
        tb_cli_json_num(r, "wait_p95_s", c->rows[i].wait_p95);
        tb_cli_json_num(r, "wait_max_s", c->rows[i].wait_max);
    }
    if (c->answer > 0)
        cJSON_AddNumberToObject(s, "tts_capacity", c->answer);
    else
        cJSON_AddNullToObject(s, "tts_capacity");
}

void tb_cli_sweep_cap_free(struct tb_cli_sweep_cap *c)
{
    free(c->arrival);
    free(c->rows);
    c->arrival = NULL;
    c->rows = NULL;
}
