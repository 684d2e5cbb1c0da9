/*
 * cmd_bench.c - `ttsbuf bench`: the article's concurrency study (and open-
 * loop arrivals) against an OpenAI-compatible endpoint, every stream
 * played out through its own playout model; per-level percentiles,
 * gates, per-request records and traces, shards.  This file runs the
 * levels in order and reports; the options, the --out directory and the
 * --audio replay are in bench_opts.c, bench_out.c and bench_play.c.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_cli.h"
#include "cli.h"
#include "html_report.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/preset.h"

#define MOCK_PRESET TB_PRESET_MOCK

/* The progress line of a level (a terminal only). */
static void progress_line(void *ud, const struct tb_bench_progress *p)
{
    const char *name = ud;
    if (p->warmup) {
        fprintf(stderr, "\r\033[K%s  warm-up  %zu in flight", name, p->inflight);
        return;
    }
    if (p->target > 0)
        fprintf(stderr, "\r\033[K%s  %6.1f s  %zu/%zu done  %zu in flight  %zu errors  %llu events",
                name, p->t, p->done, p->target, p->inflight, p->errors,
                (unsigned long long)p->events);
    else
        fprintf(stderr, "\r\033[K%s  %6.1f s  %zu done  %zu in flight  %zu errors  %llu events",
                name, p->t, p->done, p->inflight, p->errors, (unsigned long long)p->events);
}

/* Enough descriptors for the largest level (a socket each, and slack). */
static void raise_fd_limit(const struct tb_bench_meta *m)
{
    struct rlimit rl;
    rlim_t want = 64;
    for (uint32_t i = 0; i < m->nlevels; i++)
        want = m->levels[i].concurrency + 64 > want ? m->levels[i].concurrency + 64 : want;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int tb_cmd_bench(int argc, char **argv)
{
    struct tb_cli_bench a;
    struct tb_bench_opts bo;
    struct tb_bench_prompts prompts = {NULL, 0};
    struct tb_bench_recs recs;
    struct tb_bench_summary *sums = NULL;
    struct tb_bench_meta meta;
    char *url = NULL, err[512];
    FILE *rf = NULL;
    const struct tb_api_info *info;
    struct tb_cli_endpoint ep;
    int code, progress;
    size_t ok_total = 0;

    memset(&meta, 0, sizeof(meta));
    memset(&ep, 0, sizeof(ep));
    tb_bench_recs_init(&recs);
    code = tb_cli_bench_parse(argc, argv, &a);
    if (code >= 0)
        return code;
    code = tb_cli_bench_plan(&a, &meta);
    if (code != 0)
        return code;
    if (tb_cli_audio_probe(&a.au) >= 0)
        return TB_EXIT_USAGE;
    if (tb_cli_endpoint_resolve(&a.q, "bench", 0, &ep) != 0) {
        code = TB_EXIT_USAGE;
        goto out;
    }
    info = ep.info;
    if (a.prompts_file != NULL ? tb_bench_prompts_load(a.prompts_file, &prompts, err, sizeof(err))
                               : tb_bench_prompts_builtin(&prompts)) {
        tb_cli_error("%s", a.prompts_file != NULL ? err : "out of memory");
        code = TB_EXIT_USAGE;
        goto out;
    }
    if (ep.mock) {
        struct tb_report_src src;
        char label[512];
        code = tb_cli_load_source(&a.c, MOCK_PRESET, &ep.stream, &src, label, sizeof(label));
        if (code >= 0)
            goto out;
        code = 0;
        if (tb_cli_endpoint_mock_start(&ep, NULL) != 0) {
            code = TB_EXIT_USAGE;
            goto out;
        }
    }
    url = tb_cli_request_url(ep.base, info);
    if (url == NULL) {
        tb_cli_error("out of memory");
        code = TB_EXIT_USAGE;
        goto out;
    }
    a.q.req.model = a.q.model;
    snprintf(meta.model, sizeof(meta.model), "%s", a.q.model);
    snprintf(meta.base_url, sizeof(meta.base_url), "%s", ep.base_red);
    snprintf(meta.provider, sizeof(meta.provider), "%s", tb_cli_endpoint_provider(&ep));
    if (tb_cli_bench_meta_options(&meta, &a.c.o, a.q.req.max_tokens, info->name) != 0) {
        tb_cli_error("out of memory");
        code = TB_EXIT_USAGE;
        goto out;
    }

    if (a.out != NULL) {
        code = tb_cli_bench_out_open(a.out, &meta, a.force, &rf);
        if (code != 0)
            goto out;
    }
    raise_fd_limit(&meta);
    atomic_int *interrupted = tb_cli_catch_interrupts();

    memset(&bo, 0, sizeof(bo));
    tb_cli_request_http(&a.q, url, ep.key, &bo.http);
    bo.http.cancel = interrupted;
    bo.req = a.q.req;
    bo.prompts = &prompts;
    bo.duration = a.duration;
    bo.warmup = a.warmup;
    bo.shard = meta.shard;
    bo.nshards = meta.nshards;
    bo.seed = a.seed;
    bo.sim = a.c.o;
    progress = !a.quiet && isatty(STDERR_FILENO);
    for (uint32_t l = 0; l < meta.nlevels && code == 0; l++) {
        char name[64];
        size_t from = recs.n;
        int rc;
        bo.level = meta.levels[l];
        if (a.duration > 0)
            bo.requests = 0;
        else if (a.requests > 0)
            bo.requests = a.requests;
        else if (bo.level.mode == TB_BENCH_CLOSED)
            bo.requests = bo.level.concurrency > 10 ? bo.level.concurrency : 10;
        else
            bo.requests = TB_CLI_BENCH_OPEN_REQUESTS;
        tb_bench_level_name(&bo.level, name, sizeof(name));
        bo.progress = progress ? progress_line : NULL;
        bo.progress_ud = name;
        rc = tb_bench_run(&bo, l, &recs, err, sizeof(err));
        if (progress)
            fprintf(stderr, "\r\033[K");
        if (rc != 0) {
            tb_cli_error("bench: %s: %s", name, err[0] ? err : tb_strerror(rc));
            code = rc == TB_EINVAL ? TB_EXIT_USAGE : TB_EXIT_FAILED;
        }
        if (rf != NULL && tb_cli_bench_out_level(rf, a.out, &meta, &recs, from) != 0)
            code = TB_EXIT_USAGE;
        if (atomic_load(interrupted)) {
            meta.nlevels = l + 1; /* report what ran */
            break;
        }
    }
    for (size_t i = 0; i < recs.n; i++)
        ok_total += recs.v[i].error == 0;
    tb_bench_report_warnings(&recs, a.quiet);

    sums = calloc(meta.nlevels > 0 ? meta.nlevels : 1, sizeof(*sums));
    if (sums == NULL || tb_bench_summaries(&meta, &recs, sums) != 0) {
        code = TB_EXIT_USAGE;
        goto out;
    }
    if (a.csv)
        tb_bench_report_csv(stdout, &meta, sums);
    else if (a.c.json)
        tb_bench_report_json(stdout, "bench", &meta, sums);
    else if (!a.quiet)
        tb_bench_report_human(stdout, "bench", &meta, sums, a.gates, a.ngates);
    /* What goes to stderr from here on comes after the report. */
    fflush(stdout);
    if (a.out != NULL)
        tb_cli_bench_out_summary(a.out, &meta, sums);
    if (code != 0)
        goto out;
    if (atomic_load(interrupted)) {
        tb_cli_error("bench: interrupted; %zu requests recorded", recs.n);
        code = TB_EXIT_FAILED;
    } else if (ok_total == 0) {
        char hint[400];
        tb_cli_error(
            "bench: no request succeeded (first error: %s)%s",
            recs.n > 0 ? recs.v[0].message : "none ran",
            recs.n > 0 ? tb_cli_endpoint_hint(&ep, recs.v[0].http_status, hint, sizeof(hint)) : "");
        code = TB_EXIT_FAILED;
    } else if (tb_gates_check(a.gates, a.ngates, &meta, sums) > 0) {
        code = TB_EXIT_GATE;
    } else {
        code = TB_EXIT_OK;
    }
    if (a.html != NULL) {
        struct tb_html_bench hb = {&meta, sums, &recs, &a.c.o, &a.au, a.html_streams, a.c.max_gaps};
        int hc = tb_cli_html_bench(a.html, &hb);
        if (hc >= 0 && code == TB_EXIT_OK)
            code = hc;
    }
    if (a.au.sink != TB_SINK_NONE) {
        int pc = tb_cli_bench_play(&a, &recs);
        if (pc >= 0 && code == TB_EXIT_OK)
            code = pc;
    }
out:
    if (rf != NULL && fclose(rf) != 0 && code == TB_EXIT_OK) {
        tb_cli_error("--out: write error on the records file: %s", strerror(errno));
        code = TB_EXIT_USAGE;
    }
    free(sums);
    tb_cli_audio_free(&a.au);
    tb_bench_recs_free(&recs);
    tb_bench_prompts_free(&prompts);
    free(url);
    tb_cli_endpoint_free(&ep);
    return code;
}
