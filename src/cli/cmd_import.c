/*
 * cmd_import.c - `ttsbuf sim --import FORMAT:FILE`: replays the requests
 * of another tool's benchmark results (import.h).  One request (the only
 * one, or --request N) gets the ordinary report; several get a table,
 * one line a request, and a summary across them (or, with --json, one
 * JSON object a line per request).
 */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/import.h"

/* Nearest-rank percentile of sorted v[0..n). */
static double pct(const double *v, size_t n, double p)
{
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    return v[k > 0 ? k - 1 : 0];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void dist_line(FILE *f, const char *what, double *v, size_t n)
{
    if (n == 0)
        return;
    qsort(v, n, sizeof(*v), cmp_double);
    fprintf(f, "  %-22s P50 %8.3f   P95 %8.3f   P99 %8.3f   max %8.3f\n", what, pct(v, n, 50),
            pct(v, n, 95), pct(v, n, 99), v[n - 1]);
}

static void json_failed(FILE *f, const char *file, const struct tb_import_request *q)
{
    cJSON *o = cJSON_CreateObject();
    char name[512], *s;
    snprintf(name, sizeof(name), "%s: %s", file, q->name);
    cJSON_AddStringToObject(o, "source", "import");
    cJSON_AddStringToObject(o, "source_name", name);
    cJSON_AddStringToObject(o, "error", q->error);
    s = cJSON_PrintUnformatted(o);
    if (s != NULL)
        fprintf(f, "%s\n", s);
    free(s);
    cJSON_Delete(o);
}

/* Several requests: a line each and the distribution over them. */
static int summary(const struct tb_cli_common *a, const char *spec, const char *file,
                   const struct tb_import *im)
{
    struct tb_clock clk;
    double *mtps = calloc(im->n, sizeof(double)), *ttfa = calloc(im->n, sizeof(double));
    double *gaps = calloc(im->n, sizeof(double));
    size_t played = 0, gapless = 0, failed = 0;
    char err[512];

    if (mtps == NULL || ttfa == NULL || gaps == NULL) {
        free(mtps);
        free(ttfa);
        free(gaps);
        tb_cli_error("out of memory");
        return TB_EXIT_USAGE;
    }
    if (!a->json)
        fprintf(stdout,
                "ttsbuf sim: %zu requests from %s\n\n"
                "  %-40s %6s %8s %8s %9s %9s %9s %8s\n",
                im->n, spec, "request", "events", "ttft s", "ttfa s", "underruns", "silence s",
                "longest s", "min TPS");
    for (size_t i = 0; i < im->n; i++) {
        const struct tb_import_request *q = &im->req[i];
        struct tb_sim_result r;
        int rc = -1;
        if (q->stream.n > 0) {
            tb_clock_virtual_init(&clk);
            rc = tb_sim_run(&q->stream, &a->o, &clk, NULL, NULL, &r, err, sizeof(err));
        }
        if (rc != 0) {
            failed++;
            if (a->json) {
                json_failed(stdout, file, q);
            } else {
                fprintf(stdout, "  %-40.40s failed: %s\n", q->name,
                        q->error[0] ? q->error
                        : rc == -1  ? "no text"
                                    : err);
            }
            continue;
        }
        mtps[played] = r.play.min_tps;
        ttfa[played] = r.play.ttfa;
        gaps[played] = r.play.gap_total;
        played++;
        gapless += r.play.underruns == 0;
        if (a->json) {
            char name[512];
            struct tb_report_src src = {"import", name};
            struct tb_gap_list none = {NULL, 0, 0};
            snprintf(name, sizeof(name), "%s: %s", file, q->name);
            tb_report_json(stdout, &src, &a->o, &r, &none, NULL);
        } else {
            fprintf(stdout, "  %-40.40s %6zu %8.3f %8.3f %9u %9.2f %9.2f %8.1f%s\n", q->name,
                    r.content_events, r.ttft, r.play.ttfa, r.play.underruns, r.play.gap_total,
                    r.play.gap_max, r.play.min_tps, q->error[0] ? "  (failed mid-stream)" : "");
        }
    }
    if (!a->json) {
        fprintf(stdout, "\n  %zu played, %zu failed; %zu of %zu gapless (%.0f%%)\n", played, failed,
                gapless, played, played ? 100.0 * (double)gapless / (double)played : 0.0);
        dist_line(stdout, "min TPS", mtps, played);
        dist_line(stdout, "time to first audio s", ttfa, played);
        dist_line(stdout, "silence s", gaps, played);
        if (im->empty_chunks > 0)
            fprintf(stdout,
                    "  note: %zu chunks got no text (the recorded text is shorter than its "
                    "chunks) and were dropped\n",
                    im->empty_chunks);
    }
    free(mtps);
    free(ttfa);
    free(gaps);
    if (a->fail_on_underrun && gapless < played) {
        tb_cli_error("--fail-on-underrun: %zu of %zu requests had underruns", played - gapless,
                     played);
        return TB_EXIT_GATE;
    }
    return TB_EXIT_OK;
}

int tb_cli_import(const struct tb_cli_common *a, const char *spec, long request,
                  struct tb_stream *s, struct tb_report_src *src, char *label, size_t labellen)
{
    struct tb_import im;
    enum tb_import_format fmt;
    const char *path;
    char err[512];
    int rc, code = -1;

    if (a->nsources > 0) {
        tb_cli_error("give one source: --import, --trace, --synth or --preset");
        return TB_EXIT_USAGE;
    }
    if (tb_import_spec(spec, &fmt, &path, err, sizeof(err)) != 0) {
        tb_cli_error("--import: %s", err);
        return TB_EXIT_USAGE;
    }
    tb_import_init(&im);
    rc = tb_import_file(fmt, path, &im, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("%s", err);
        code = TB_EXIT_USAGE;
        goto out;
    }
    if (request >= 0 && (size_t)request >= im.n) {
        tb_cli_error("--request: %ld is outside 0..%zu (%s has %zu request%s)", request, im.n - 1,
                     path, im.n, im.n == 1 ? "" : "s");
        code = TB_EXIT_USAGE;
        goto out;
    }
    if (request < 0 && im.n > 1) {
        if (a->record != NULL) {
            tb_cli_error("--record: %s has %zu requests; choose one with --request N", path, im.n);
            code = TB_EXIT_USAGE;
            goto out;
        }
        code = summary(a, spec, path, &im);
        goto out;
    }
    {
        struct tb_import_request *q = &im.req[request < 0 ? 0 : request];
        if (q->stream.n == 0) {
            tb_cli_error("%s: %s: nothing to play (the benchmark recorded: %s)", path, q->name,
                         q->error[0] ? q->error : "no text");
            code = TB_EXIT_USAGE;
            goto out;
        }
        if (q->error[0] != '\0')
            fprintf(stderr,
                    "ttsbuf: note: %s: %s failed in the benchmark (%s); playing what it "
                    "received\n",
                    path, q->name, q->error);
        *s = q->stream; /* moved out: the import no longer owns it */
        tb_stream_init(&q->stream);
        src->kind = "import";
        snprintf(label, labellen, "%s: %s", path, q->name);
        src->name = label;
    }
out:
    tb_import_free(&im);
    return code;
}
