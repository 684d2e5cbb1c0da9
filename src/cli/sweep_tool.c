/*
 * sweep_tool.c - `sweep --tool-latency LIST` (see sweep_tool.h).  Each
 * wait is a sweep of its own over the tool turns alone (the sweep engine
 * adds each turn's tool_head to its v2v, sweep.h): one pass a wait, so
 * the cost is the number of waits times one setting's.
 */
#include "sweep_tool.h"

#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "ttsbuf/error.h"

const struct tb_optdoc tb_opt_sweep_tool[] = {
    {"tool-latency", TB_O_SWEEP_TOOL_LATENCY, "LIST",
     "the tool's wait, seconds (0..60), in place of the recorded one, for the streams that are "
     "tool turns' answers (bench --out's traces, with a \"tool_turn\" header): per value, their "
     "v2v P50/P95 and the silence around the tool",
     "The other axes must have one value each.  A source with no tool turn is refused (exit "
     "2).  ttsbuf sim --trace FILE --request ID --tool-latency SPEC plays one turn."},
    TB_OPTDOC_END,
};

int tb_cli_sweep_tool_option(struct tb_cli_sweep_tool *t, const char *arg)
{
    return tb_cli_axis_numbers(&t->ax, "--tool-latency", arg, 0, 60);
}

/* The settings so makes: the product of its axes' lengths. */
static size_t settings(const struct tb_sweep_opts *so)
{
    size_t p = 1;
    for (int i = 0; i < TB_AX__COUNT; i++)
        p *= so->n[i] > 0 ? so->n[i] : 1;
    return p;
}

/* One wait w over the k tool turns tin (their calls' ends end[], starts
 * start[]): their v2v and silence. */
static int one(const struct tb_sweep_opts *so0, const struct tb_sweep_input *tin, size_t k,
               const double *end, double *head, const double *start, double w, unsigned threads,
               struct tb_stats *v2v, struct tb_stats *sil)
{
    struct tb_sweep_opts so = *so0;
    struct tb_sweep *sw = NULL;
    const struct tb_sweep_point *pt;
    char err[512];
    size_t np;
    int rc;
    for (size_t i = 0; i < k; i++)
        head[i] = end[i] + w;
    so.tool_head = head;
    so.tool_start = start;
    rc = tb_sweep_create(&so, tin, k, &sw, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("sweep: --tool-latency: %s", err);
        return rc;
    }
    rc = tb_sweep_run(sw, threads, NULL, NULL);
    if (rc == 0 && (pt = tb_sweep_points(sw, &np)) != NULL && np > 0) {
        *v2v = pt[0].v2v;
        *sil = pt[0].tool_silence;
    } else if (rc != 0) {
        tb_cli_error("sweep: --tool-latency: %s", tb_strerror(rc));
    }
    tb_sweep_destroy(sw);
    return rc;
}

int tb_cli_sweep_tool_run(struct tb_cli_sweep_tool *t, const struct tb_sweep_opts *so,
                          const struct tb_sweep_input *in, size_t n, unsigned threads,
                          const struct tb_cli_sweep_tool **shown)
{
    struct tb_sweep_input *tin;
    double *d;
    int rc = 0;
    if (t->ax.n == 0)
        return 0;
    *shown = t;
    if (settings(so) != 1) {
        tb_cli_error("sweep: --tool-latency takes one setting: give each other axis one value");
        return TB_EINVAL;
    }
    if (so->capacity > 0 || so->llm_capacity > 0) {
        /* the tool turns are swept alone: a shared capacity's queue is all the streams' */
        tb_cli_error("sweep: --tool-latency does not go with --tts-capacity or --llm-capacity");
        return TB_EINVAL;
    }
    tin = malloc((n > 0 ? n : 1) * sizeof(*tin));
    d = malloc(3 * (n > 0 ? n : 1) * sizeof(*d)); /* each turn's end, head, start */
    t->v2v = calloc(t->ax.n, sizeof(*t->v2v));
    t->silence = calloc(t->ax.n, sizeof(*t->silence));
    if (tin == NULL || d == NULL || t->v2v == NULL || t->silence == NULL) {
        free(tin);
        free(d);
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    t->of = n;
    t->turns = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i].s->turn_tool.calls > 0) {
            d[t->turns] = in[i].s->turn_tool.end;
            d[2 * n + t->turns] = in[i].s->turn_tool.start;
            tin[t->turns++] = in[i];
        }
    if (t->turns == 0) {
        tb_cli_error("sweep: --tool-latency needs the traces of tool turns' answers (bench "
                     "--out's, with a \"tool_turn\" header): none of the %zu streams is one",
                     n);
        rc = TB_EINVAL;
    }
    for (size_t j = 0; rc == 0 && j < t->ax.n; j++)
        rc = one(so, tin, t->turns, d, d + n, d + 2 * n, t->ax.v[j], threads, &t->v2v[j],
                 &t->silence[j]);
    free(tin);
    free(d);
    return rc;
}

void tb_cli_sweep_tool_print(FILE *f, const struct tb_cli_sweep_tool *t)
{
    if (t->ax.n == 0 || t->v2v == NULL)
        return;
    fprintf(f, "\ntool turns: %zu of %zu streams, the tool's wait in place of the recorded one\n",
            t->turns, t->of);
    fprintf(f, "  wait s   v2v p50   v2v p95   silence p50   silence p95\n");
    for (size_t j = 0; j < t->ax.n; j++)
        fprintf(f, "  %6.3f   %7.3f   %7.3f   %11.3f   %11.3f\n", t->ax.v[j], t->v2v[j].p50,
                t->v2v[j].p95, t->silence[j].p50, t->silence[j].p95);
}

int tb_cli_sweep_tool_json(cJSON *root, const struct tb_cli_sweep_tool *t)
{
    cJSON *o = cJSON_AddObjectToObject(root, "tool_turns"), *w;
    if (o == NULL || cJSON_AddNumberToObject(o, "streams", (double)t->turns) == NULL ||
        (w = cJSON_AddArrayToObject(o, "waits")) == NULL)
        return TB_ENOMEM;
    for (size_t j = 0; j < t->ax.n && t->v2v != NULL; j++) {
        cJSON *r = cJSON_CreateObject();
        if (r == NULL || !cJSON_AddItemToArray(w, r)) {
            cJSON_Delete(r);
            return TB_ENOMEM;
        }
        cJSON_AddNumberToObject(r, "tool_s", t->ax.v[j]);
        tb_cli_json_stats(r, "v2v_s", &t->v2v[j]);
        tb_cli_json_stats(r, "tool_silence_s", &t->silence[j]);
    }
    return 0;
}

void tb_cli_sweep_tool_free(struct tb_cli_sweep_tool *t)
{
    free(t->ax.v);
    free(t->v2v);
    free(t->silence);
    memset(t, 0, sizeof(*t));
}
