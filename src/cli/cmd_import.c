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

#include "cmd_import.h"

#include "cli.h"
#include "jsonout.h"
#include "report_json.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/import.h"

/* The statistics block of v[0..n) (sorted in place), on one line. */
static void dist_line(FILE *f, const char *what, double *v, size_t n)
{
    struct tb_stats st;
    if (n == 0)
        return;
    tb_stats_of(v, n, &st);
    fprintf(f, "  %-22s mean %8.3f   p50 %8.3f   p95 %8.3f   p99 %8.3f   max %8.3f\n", what,
            st.mean, st.p50, st.p95, st.p99, st.max);
}

/* A request that did not play: a result document with its error. */
static void json_failed(FILE *f, const char *file, const struct tb_import_request *q)
{
    cJSON *o = tb_cli_json_doc(TB_SCHEMA_RESULT, TB_SCHEMA_RESULT_V, "sim");
    char name[512];
    if (o == NULL)
        return;
    snprintf(name, sizeof(name), "%s: %s", file, q->name);
    cJSON_AddStringToObject(o, "source", "import");
    cJSON_AddStringToObject(o, "source_name", name);
    tb_json_add_error(o, q->error[0] ? "failed" : "no_text",
                      q->error[0] ? q->error : "the request recorded no text", 0);
    (void)tb_json_put_line(f, o);
}

void tb_cli_import_opts_init(struct tb_cli_import_opts *io)
{
    io->run = 0;
    io->chars_per_token = TB_IMPORT_CPT_DEFAULT;
}

int tb_cli_import_option(struct tb_cli_import_opts *io, int c, const char *arg)
{
    size_t z;
    int rc;
    if (c == 'r') {
        rc = tb_cli_opt_size("--run", arg, 1, 1000000, &z);
        if (rc == 0)
            io->run = (unsigned)z;
        return rc;
    }
    return tb_cli_opt_double("--chars-per-token", arg, 0.5, 100, &io->chars_per_token);
}

int tb_cli_import_load(const char *spec, const struct tb_cli_import_opts *io, struct tb_import *im,
                       const char **path)
{
    enum tb_import_format fmt;
    char err[512];
    int rc;
    tb_import_init(im);
    im->chars_per_token = io->chars_per_token;
    if (tb_import_spec(spec, &fmt, path, err, sizeof(err)) != 0) {
        tb_cli_error("--import: %s", err);
        return TB_EINVAL;
    }
    rc = tb_import_file(fmt, *path, im, err, sizeof(err));
    if (rc != 0) {
        const char *colon = strchr(spec, ':');
        if (rc == TB_EIO && fmt == TB_IMPORT_AUTO && colon != NULL)
            tb_cli_error("%s (and '%.*s' is no format: vllm, sglang, genai-perf, aiperf-raw, "
                         "aiperf, auto)",
                         err, (int)(colon - spec), spec);
        else
            tb_cli_error("%s", err);
        return rc == TB_ENOMEM ? TB_ENOMEM : TB_EINVAL; /* a file named on the command line */
    }
    if (io->run > 0 && tb_import_keep_run(im, io->run) != 0) {
        tb_cli_error("--run: %s has %u run%s (1..%u), not %u", *path, im->runs,
                     im->runs == 1 ? "" : "s", im->runs, io->run);
        return TB_EINVAL;
    }
    return 0;
}

void tb_cli_import_note(const struct tb_import *im, const char *spec, char *buf, size_t len)
{
    enum tb_import_format fmt;
    const char *path;
    char err[256];
    int n = 0;
    buf[0] = '\0';
    if (tb_import_spec(spec, &fmt, &path, err, sizeof(err)) == 0 && fmt == TB_IMPORT_AUTO)
        n = snprintf(buf, len, "read as %s (told from the content)",
                     tb_import_format_name(im->format));
    if (im->estimated > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n,
                      "%sno text recorded: speech time estimated from token counts at %g "
                      "characters a token (--chars-per-token)",
                      n > 0 ? "; " : "", im->chars_per_token);
    if (im->not_streamed > 0 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n,
                 "%sthe run was not streamed: each request is one event at its response time",
                 n > 0 ? "; " : "");
}

/* Several requests: a line each and the distribution over them; the
 * command's verdict (cli.h). */
static int summary_verdict(const struct tb_cli_common *a, const char *spec, const char *file,
                           const struct tb_import *im, const char *note, int quiet)
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
        return tb_cli_exit(TB_ENOMEM);
    }
    if (!a->json && !quiet)
        fprintf(stdout,
                "ttsbuf sim: %zu requests from %s\n%s%s%s\n"
                "  %-40s %6s %8s %8s %9s %9s %9s %8s\n",
                im->n, spec, note[0] ? "  note: " : "", note, note[0] ? "\n" : "", "request",
                "events", "ttft s", "ttfa s", "underruns", "silence s", "longest s", "min TPS");
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
            } else if (!quiet) {
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
            struct tb_report_src src = {.kind = "import",
                                        .name = name,
                                        .note = note[0] ? note : NULL,
                                        .warning = q->warning[0] ? q->warning : NULL,
                                        .tts = &a->tts};
            struct tb_gap_list none = {NULL, 0, 0};
            snprintf(name, sizeof(name), "%s: %s", file, q->name);
            tb_cli_report_json(stdout, &src, &a->o, &r, &none, NULL, NULL, NULL);
        } else if (!quiet) {
            char mark[sizeof(q->warning) + 8] = "";
            if (q->error[0] != '\0')
                snprintf(mark, sizeof(mark), "  (failed mid-stream)");
            else if (q->warning[0] != '\0')
                snprintf(mark, sizeof(mark), "  (%s)", q->warning);
            fprintf(stdout, "  %-40.40s %6zu %8.3f %8.3f %9u %9.2f %9.2f %8.1f%s\n", q->name,
                    r.content_events, r.ttft, r.play.ttfa, r.play.underruns, r.play.gap_total,
                    r.play.gap_max, r.play.min_tps, mark);
        }
    }
    if (!a->json && !quiet) {
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
    if (played == 0) {
        tb_cli_error("%s: every one of the %zu requests failed: nothing was measured", file, im->n);
        return TB_EXIT_FAILED;
    }
    if (a->fail_on_underrun && gapless < played) {
        tb_cli_error("--fail-on-underrun: %zu of %zu requests had underruns", played - gapless,
                     played);
        return TB_EXIT_GATE;
    }
    return TB_EXIT_OK;
}

/* Copies text (unless empty) into buf after the string at prev, when it
 * fits: returns the copy, or NULL. */
static const char *keep_after(char *buf, size_t buflen, const char *prev, const char *text)
{
    size_t at = (size_t)(prev - buf) + strlen(prev) + 1;
    if (text[0] == '\0' || at + strlen(text) + 1 > buflen)
        return NULL;
    memcpy(buf + at, text, strlen(text) + 1);
    return buf + at;
}

int tb_cli_import(const struct tb_cli_common *a, const char *spec,
                  const struct tb_cli_import_opts *io, long request, struct tb_stream *s,
                  struct tb_report_src *src, char *label, size_t labellen, int *verdict)
{
    struct tb_import im;
    const char *path;
    char note[400];
    int rc;

    if (a->nsources > 0) {
        tb_cli_error("give one source: --import, --trace, --synth or --preset");
        return TB_EINVAL;
    }
    rc = tb_cli_import_load(spec, io, &im, &path);
    if (rc != 0)
        goto out;
    tb_cli_import_note(&im, spec, note, sizeof(note));
    if (request >= 0 && (size_t)request >= im.n) {
        tb_cli_error("--request: %ld is outside 0..%zu (%s has %zu request%s)", request, im.n - 1,
                     path, im.n, im.n == 1 ? "" : "s");
        rc = TB_EINVAL;
        goto out;
    }
    if (request < 0 && im.n > 1) {
        if (a->record != NULL || a->html != NULL || a->tts.draws.draws > 0) {
            tb_cli_error("%s: %s has %zu requests; choose one with --request N",
                         a->record != NULL ? "--record"
                         : a->html != NULL ? "--html"
                                           : "--tts-draws",
                         path, im.n);
            rc = TB_EINVAL;
            goto out;
        }
        *verdict = summary_verdict(a, spec, path, &im, note, io->quiet);
        rc = TB_CLI_DONE;
        goto out;
    }
    {
        struct tb_import_request *q = &im.req[request < 0 ? 0 : request];
        if (q->stream.n == 0) {
            tb_cli_error("%s: %s: nothing to play (the benchmark recorded: %s)", path, q->name,
                         q->error[0] ? q->error : "no text");
            rc = request < 0 ? TB_CLI_EFAILED : TB_EINVAL;
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
        /* The note and the warning outlive the import: they go after the
         * label. */
        src->note = keep_after(label, labellen, label, note);
        src->warning =
            keep_after(label, labellen, src->note != NULL ? src->note : label, q->warning);
    }
out:
    tb_import_free(&im);
    return rc;
}
