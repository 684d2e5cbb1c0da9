/*
 * cmd_bench.c - `ttsbuf bench`: the article's concurrency study (and open-
 * loop arrivals) against an OpenAI-compatible endpoint, every stream
 * played out through its own playout model; per-level percentiles,
 * gates, per-request records and traces, shards.  This file runs the
 * levels in order and reports; the options, the --out directory and the
 * --audio replay are in bench_opts.c, bench_out.c and bench_play.c.
 */
#include <cJSON.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_opts.h"
#include "bench_out.h"
#include "bench_play.h"
#include "bench_progress.h"
#include "bench_report.h"
#include "bench_tts.h"
#include "cli.h"
#include "html_bench.h"
#include "interrupt.h"
#include "outputs.h"
#include "request.h"
#include "sources.h"
#include "ttsbuf/capq.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/preset.h"

#define MOCK_PRESET TB_PRESET_MOCK

/* Enough descriptors for the largest level (a socket each, and slack). */
static void raise_fd_limit(const struct tb_bench_meta *m)
{
    struct rlimit rl;
    rlim_t want = 64;
    for (uint32_t i = 0; i < m->nlevels; i++) {
        /* an open loop of calls has no cap: as many as a level may hold */
        rlim_t c = m->levels[i].mode == TB_BENCH_CALLS_POISSON ? TB_BENCH_CONC_MAX
                                                               : m->levels[i].concurrency;
        want = c + 64 > want ? c + 64 : want;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int cmd_bench(int argc, char **argv);

/* --help's tables: the chunk policies and the TTS presets. */
static void bench_tail(FILE *f)
{
    tb_cli_usage_chunks(f);
    tb_cli_usage_tts_presets(f);
}

const struct tb_cmddoc tb_doc_bench = {
    "bench",
    "[--base-url URL --model NAME | --mock] [OPTIONS]",
    "Stream many completions at once from an OpenAI-compatible endpoint (libcurl\n"
    "event loops, not a thread per stream) and play each out through its own\n"
    "playout model: per load level, P50/P95/P99/min/max of TTFT, time to first\n"
    "audio, decode TPS, inter-event gap, underruns, silence, minimum TPS and\n"
    "speed-up needed; system TPS, errors by kind, and the share of gapless streams.\n",
    tb_cli_bench_secs,
    "0 ran, every gate held; 1 a gate failed (one line per failure, after the report): a "
    "--require gate, --fail-on-underrun, or the default success_share=1 when a request failed "
    "and no success_share or errors gate allows it; 2 bad usage or input; 3 interrupted, no "
    "request succeeded (what ran is still reported and written), or the run failed (out of "
    "memory, a write that failed).",
    bench_tail,
    tb_cli_bench_notes,
    cmd_bench,
};

/* Everything one `ttsbuf bench` holds, from its options to its verdict. */
struct bench {
    struct tb_cli_bench a;
    struct tb_bench_meta meta;
    struct tb_cli_endpoint ep;
    struct tb_bench_prompts prompts;
    struct tb_convos convos; /* --conversations */
    struct tb_bench_recs recs;
    struct tb_bench_summary *sums;      /* one a level, once the levels ran */
    struct tb_bench_calls_count *calls; /* --conversations: one a level, then */
    char *url;
    FILE *rf;                          /* --out's records file */
    struct tb_cli_bench_traces traces; /* --out's traces file, while streamed */
    int out_failed;                    /* a record written as its request ended failed (printed) */
    atomic_int *interrupted;
    char tts_base[256];        /* --tts-url mock: the built-in mock's root */
    struct tb_clock cap_clock; /* --tts-capacity: the queue's clock, and the queue */
    struct tb_capq *capq;
    struct tb_capq *llm_capq; /* --llm-capacity, on cap_clock too */
};

/* --barge-in's keys in the conversations block: barge_in (P) and
 * barge_in_at (the spec's canonical text).  0 or -1 (no memory). */
static int barge_keys(cJSON *j, const struct tb_cli_bench *a)
{
    char at[96];
    tb_uturn_name(&a->barge_at, at, sizeof(at));
    return cJSON_AddNumberToObject(j, "barge_in", a->barge_p) != NULL &&
                   cJSON_AddStringToObject(j, "barge_in_at", at) != NULL
               ? 0
               : -1;
}

/* The conversations (--conversations FILE or builtin) and the records
 * header's "conversations" block: {source, count, turns, user_turn}. */
static int load_convos(struct bench *b)
{
    char err[512], ut[96], *t;
    cJSON *j;
    int rc = strcmp(b->a.convos, "builtin") == 0
                 ? tb_convos_builtin(&b->convos, err, sizeof(err))
                 : tb_convos_load(b->a.convos, &b->convos, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("--conversations: %s", err[0] ? err : tb_strerror(rc));
        return rc == TB_ENOMEM ? rc : TB_EINVAL; /* a file named on the command line */
    }
    j = cJSON_CreateObject();
    tb_uturn_name(&b->a.uturn, ut, sizeof(ut));
    if (j == NULL || cJSON_AddStringToObject(j, "source", b->a.convos) == NULL ||
        cJSON_AddNumberToObject(j, "count", (double)b->convos.n) == NULL ||
        (b->a.turns > 0 ? cJSON_AddNumberToObject(j, "turns", (double)b->a.turns)
                        : cJSON_AddNullToObject(j, "turns")) == NULL ||
        cJSON_AddStringToObject(j, "user_turn", ut) == NULL ||
        (b->a.barge_in != NULL && barge_keys(j, &b->a) != 0) ||
        (t = cJSON_PrintUnformatted(j)) == NULL) {
        cJSON_Delete(j);
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    cJSON_Delete(j);
    rc = strlen(t) < sizeof(b->meta.conversations) ? 0 : TB_EINVAL;
    if (rc == 0)
        memcpy(b->meta.conversations, t, strlen(t) + 1);
    else
        tb_cli_error("--conversations: the path is too long for the records header");
    cJSON_free(t);
    return rc;
}

/* The prompts: --prompts FILE, or the built-in set. */
static int load_prompts(struct bench *b)
{
    char err[512];
    int rc;
    if (b->a.convos != NULL)
        return load_convos(b);
    if (b->a.prompts_file == NULL) {
        rc = tb_bench_prompts_builtin(&b->prompts);
        if (rc != 0)
            tb_cli_error("out of memory");
        return rc;
    }
    rc = tb_bench_prompts_load(b->a.prompts_file, &b->prompts, err, sizeof(err));
    if (rc != 0)
        tb_cli_error("%s", err);
    for (size_t i = 0; rc == 0 && b->a.q.req.api == TB_API_COMPLETIONS && i < b->prompts.n; i++)
        if (b->prompts.v[i].messages_json != NULL) {
            /* Refused here, not at the first request of a level. */
            tb_cli_error("bench: --prompts %s: prompt %zu is chat messages, which need a chat API "
                         "(--api completions sends one prompt)",
                         b->a.prompts_file, i + 1);
            rc = TB_EINVAL;
        }
    return rc == 0 || rc == TB_ENOMEM ? rc : TB_EINVAL; /* a file named on the command line */
}

/* The endpoint the requests go to: a real one, or the mock started on
 * loopback with its stream; its URL, and what the records say of it. */
static int reach(struct bench *b)
{
    struct tb_report_src src;
    char label[512];
    int rc = tb_cli_endpoint_resolve(&b->a.q, "bench", 0, &b->ep);
    if (rc == 0)
        rc = load_prompts(b);
    if (rc == 0 && b->ep.mock)
        rc = tb_cli_load_source(&b->a.c, MOCK_PRESET, &b->ep.stream, &src, label, sizeof(label));
    if (rc == 0 && b->ep.mock)
        rc = tb_cli_endpoint_mock_start(&b->ep, NULL);
    if (rc == 0 && b->a.tl.url != NULL && strcmp(b->a.tl.url, "mock") == 0) {
        const char *h = b->ep.mock ? strstr(b->ep.base, "://") : NULL;
        if (h == NULL) {
            tb_cli_error("bench: --tts-url mock is the built-in mock's TTS: it goes with the "
                         "built-in mock provider (--mock); else give the TTS's URL");
            return TB_EINVAL;
        }
        /* its TTS routes are at the server's root */
        snprintf(b->tts_base, sizeof(b->tts_base), "%.*s",
                 (int)((size_t)(h + 3 - b->ep.base) + strcspn(h + 3, "/")), b->ep.base);
    }
    if (rc != 0)
        return rc;
    b->url = tb_cli_request_url(b->ep.base, b->ep.info);
    if (b->url == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    b->a.q.req.model = b->a.q.model;
    snprintf(b->meta.model, sizeof(b->meta.model), "%s", b->a.q.model);
    snprintf(b->meta.base_url, sizeof(b->meta.base_url), "%s", b->ep.base_red);
    snprintf(b->meta.provider, sizeof(b->meta.provider), "%s", tb_cli_endpoint_provider(&b->ep));
    rc = tb_cli_bench_meta_options(&b->meta, &b->a.c.o, &b->a.c.tts, &b->a.c.turn, &b->a.retry,
                                   b->a.llm_capacity, &b->a.tool, b->a.q.req.max_tokens, b->ep.info->name);
    if (rc == 0 && b->a.tl.url != NULL)
        rc = tb_cli_bench_tts_meta(&b->meta, &b->a, b->tts_base);
    return rc;
}

/* Options, the plan (levels, shard), every output checked, the endpoint,
 * --out's directory: all before the first request. */
static int open_bench(struct bench *b, int argc, char **argv)
{
    int rc = tb_cli_bench_parse(argc, argv, &tb_doc_bench, &b->a);
    if (rc == 0)
        rc = tb_cli_bench_plan(&b->a, &b->meta);
    if (rc == 0)
        rc = tb_cli_audio_probe(&b->a.au);
    if (rc == 0)
        rc = reach(b);
    if (rc == 0 && b->a.out != NULL)
        rc = tb_cli_bench_out_open(b->a.out, &b->meta, b->a.force, &b->rf);
    return rc;
}

/* The requests of a level: --requests, none with --duration, else at
 * least ten (closed) or TB_CLI_BENCH_OPEN_REQUESTS (open). */
static size_t level_requests(const struct tb_cli_bench *a, const struct tb_bench_level *l)
{
    if (l->mode == TB_BENCH_CALLS || l->mode == TB_BENCH_CALLS_POISSON)
        return 0; /* calls count calls (call_count) */
    if (a->duration > 0)
        return 0;
    if (a->requests > 0)
        return a->requests;
    if (l->mode == TB_BENCH_CLOSED)
        return l->concurrency > 10 ? l->concurrency : 10;
    return TB_CLI_BENCH_OPEN_REQUESTS;
}

/* --out as each request ends (bench.h's record callback): its record and
 * its trace, so that no stream is kept past its request. */
static int write_rec(void *ud, struct tb_bench_rec *rec)
{
    struct bench *b = ud;
    int rc = tb_cli_bench_out_rec(b->rf, &b->traces, b->a.out, &b->meta, rec);
    b->out_failed |= rc != 0;
    return rc;
}

/* Runs the levels in order, each written to --out as it ends; the first
 * failure stops them, and SIGINT or SIGTERM after the level it cut (what
 * ran is reported). */
/* The providers' side of bench's options: the LLM's shared capacity
 * (--llm-capacity), the real TTS (--tts-url, its options in *to, which
 * must outlive the run) and its shared capacity (--tts-capacity).
 * TB_ENOMEM, said, when a queue cannot be made. */
static int providers(struct bench *b, struct tb_bench_opts *bo, struct tb_ttsnet_opts *to)
{
    tb_clock_monotonic_init(&b->cap_clock);
    if (b->a.llm_capacity > 0) {
        if (tb_capq_create((int)b->a.llm_capacity, &b->cap_clock, &b->llm_capq) != 0) {
            tb_cli_error("out of memory");
            return TB_ENOMEM;
        }
        bo->llm_capacity = b->llm_capq;
    }
    if (b->a.tl.url != NULL) {
        tb_cli_bench_tts_opts(&b->a, b->tts_base, to, &bo->sim);
        bo->tts = to;
        if (b->a.tts_capacity > 0) {
            if (tb_capq_create((int)b->a.tts_capacity, &b->cap_clock, &b->capq) != 0) {
                tb_cli_error("out of memory");
                return TB_ENOMEM;
            }
            to->capacity = b->capq;
        }
        bo->tts_replay = tb_cli_bench_tts_replay_turn;
        bo->tts_replay_ud = &bo->sim;
    }
    return 0;
}

static int run_levels(struct bench *b)
{
    struct tb_bench_opts bo;
    struct tb_ttsnet_opts to;
    int tty = isatty(STDERR_FILENO), rc = 0;
    char err[512];
    raise_fd_limit(&b->meta);
    b->interrupted = tb_cli_catch_interrupts();
    memset(&bo, 0, sizeof(bo));
    tb_cli_request_http(&b->a.q, b->url, b->ep.key, &bo.http);
    bo.http.cancel = b->interrupted;
    bo.req = b->a.q.req;
    bo.prompts = &b->prompts;
    bo.duration = b->a.duration;
    bo.warmup = b->a.warmup;
    bo.shard = b->meta.shard;
    bo.nshards = b->meta.nshards;
    bo.seed = b->a.seed;
    bo.retry = b->a.retry;
    bo.sim = b->a.c.o;
    bo.threads = (unsigned)b->a.threads;
    if (b->a.convos != NULL) {
        bo.convos = &b->convos;
        bo.turns = b->a.turns;
        bo.user_turn = b->a.uturn;
        bo.barge_in = b->a.barge_p;
        bo.barge_at = b->a.barge_at;
        bo.tool_latency = b->a.tool.lat;
        bo.filler = b->a.tool.filler;
    }
    rc = providers(b, &bo, &to);
    if (rc != 0)
        return rc;
    /* The streams are kept only for what reads them after the run; --out
     * writes each as its request ends (on one loop, without a TTS). */
    bo.drop_streams = b->a.html == NULL && b->a.au.sink == TB_SINK_NONE;
    if (bo.drop_streams && b->rf != NULL && bo.tts == NULL) {
        bo.record = write_rec;
        bo.record_ud = b;
    }
    /* and the records, folded into their level's summary, for a run that
     * reads nothing else of them (its --out written as they end); not
     * with --retry or --llm-capacity, whose summary counts the refusals
     * and waits from the records */
    bo.fold = bo.drop_streams && bo.tts == NULL && (b->rf == NULL || bo.record != NULL) &&
              bo.retry.kind == TB_BENCH_RETRY_NONE && bo.llm_capacity == NULL;
    bo.slo = &b->meta.slo;
    for (uint32_t l = 0; l < b->meta.nlevels && rc == 0; l++) {
        struct tb_cli_progress pr;
        char name[64];
        size_t from = b->recs.n;
        int streamed;
        bo.level = b->meta.levels[l];
        bo.requests = level_requests(&b->a, &bo.level);
        bo.calls = b->a.call_count > 0               ? b->a.call_count
                   : bo.level.mode == TB_BENCH_CALLS ? bo.level.concurrency
                                                     : TB_CLI_BENCH_OPEN_CALLS;
        tb_bench_level_name(&bo.level, name, sizeof(name));
        streamed = bo.record != NULL && tb_bench_threads(&bo) == 1;
        /* a line in place on a terminal, else one every 10 s (-q: none) */
        tb_cli_progress_init(&pr, name, stderr, tty);
        bo.progress = !b->a.quiet ? tb_cli_progress : NULL;
        bo.progress_ud = &pr;
        bo.progress_interval = tty ? 0 : 1.0;
        rc = tb_bench_run(&bo, l, &b->recs, err, sizeof(err));
        if (!b->a.quiet)
            tb_cli_progress_end(&pr);
        if (rc != 0 && !b->out_failed) /* else it said what failed */
            tb_cli_error("bench: %s: %s", name, err[0] ? err : tb_strerror(rc));
        if (rc != 0 && rc != TB_EINVAL && rc != TB_ENOMEM)
            rc = TB_EIO; /* the load itself failed (epoll, libcurl) */
        if (rc == 0 && bo.tts != NULL)
            rc = tb_cli_bench_tts_replay(&b->recs, from, &bo.sim);
        if (b->rf != NULL && streamed) {
            int orc = tb_cli_bench_traces_close(&b->traces, 0);
            fflush(b->rf);
            rc = rc != 0 ? rc : orc;
        } else if (b->rf != NULL) {
            int orc = tb_cli_bench_out_level(b->rf, b->a.out, &b->meta, &b->recs, from);
            rc = rc != 0 ? rc : orc;
        }
        if (atomic_load(b->interrupted)) {
            b->meta.nlevels = l + 1; /* report what ran */
            break;
        }
    }
    return rc;
}

/* Calls: how each level's calls went (bench_calls.h), for the report and
 * the page. */
static int count_calls(struct bench *b)
{
    b->calls = calloc(b->meta.nlevels > 0 ? b->meta.nlevels : 1, sizeof(*b->calls));
    for (uint32_t l = 0; b->calls != NULL && l < b->meta.nlevels; l++) {
        if (tb_bench_calls_count(&b->recs, l, &b->convos, b->a.turns, &b->calls[l]) != 0) {
            free(b->calls);
            b->calls = NULL;
        }
    }
    if (b->calls == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    return 0;
}

/* What ran, summarised per level: the report (table, --csv or --json) and
 * --out's summary. */
static int report(struct bench *b)
{
    int rc;
    tb_cli_bench_report_warnings(&b->recs, b->a.quiet);
    b->sums = calloc(b->meta.nlevels > 0 ? b->meta.nlevels : 1, sizeof(*b->sums));
    if (b->sums == NULL) {
        tb_cli_error("out of memory summarising");
        return TB_ENOMEM;
    }
    rc = tb_cli_bench_summaries(&b->meta, &b->recs, b->sums);
    if (rc == 0 && b->a.convos != NULL)
        rc = count_calls(b);
    if (rc != 0)
        return rc;
    if (b->a.csv)
        tb_cli_bench_report_csv(stdout, &b->meta, b->sums);
    else if (b->a.c.json)
        tb_cli_bench_report_json(stdout, "bench", &b->meta, b->sums);
    else if (!b->a.quiet)
        tb_cli_bench_report_human(stdout, "bench", &b->meta, b->sums, b->calls, b->a.gates,
                                  b->a.ngates);
    /* What goes to stderr from here on comes after the report. */
    (void)tb_cli_flush_stdout();
    return b->a.out != NULL ? tb_cli_bench_out_summary(b->a.out, &b->meta, b->sums) : 0;
}

/* The verdict (cli.h): interrupted, out of memory (a stream it cut), or
 * no request succeeded, is 3; a gate that failed is 1. */
static int bench_verdict(struct bench *b)
{
    size_t n, ok, nomem;
    char hint[400];
    tb_bench_recs_count(&b->recs, &n, &ok, &nomem);
    if (atomic_load(b->interrupted)) {
        tb_cli_error("bench: interrupted; %zu requests recorded", n);
        return TB_EXIT_FAILED;
    }
    if (nomem > 0) {
        tb_cli_error("bench: out of memory: %zu of %zu streams cut (reported above as nomem)",
                     nomem, n);
        return TB_EXIT_FAILED;
    }
    if (ok == 0) {
        tb_cli_error("bench: no request succeeded (first error: %s)%s",
                     b->recs.n > 0 ? b->recs.v[0].message : "none ran",
                     b->recs.n > 0 ? tb_cli_endpoint_hint(&b->ep, b->recs.v[0].http_status, hint,
                                                          sizeof(hint))
                                   : "");
        return TB_EXIT_FAILED;
    }
    return tb_cli_gates_check(b->a.gates, b->a.ngates, &b->meta, b->sums) > 0 ? TB_EXIT_GATE
                                                                              : TB_EXIT_OK;
}

/* --html's page and --audio's replay of one stream, after the verdict. */
static int extras(struct bench *b)
{
    int rc = 0;
    if (b->a.html != NULL) {
        struct tb_cli_html_bench_info hb = {&b->meta,          b->sums,        &b->recs,  b->calls,
                                            b->a.gates,        b->a.ngates,    &b->a.c.o, &b->a.au,
                                            b->a.html_streams, b->a.c.max_gaps};
        rc = tb_cli_html_bench(b->a.html, &hb);
    }
    if (rc == 0 && b->a.au.sink != TB_SINK_NONE)
        rc = tb_cli_bench_play(&b->a, &b->recs);
    return rc;
}

/* Frees everything; the records file's close, a write, may fail. */
static int close_bench(struct bench *b)
{
    int rc = 0;
    if (b->rf != NULL && fclose(b->rf) != 0) {
        tb_cli_error("--out: write error on the records file: %s", strerror(errno));
        rc = TB_EIO;
    }
    tb_cli_bench_summaries_free(&b->meta, b->sums);
    free(b->sums);
    free(b->calls);
    tb_cli_audio_free(&b->a.au);
    tb_cli_tts_live_free(&b->a.tl);
    tb_cli_tool_free(&b->a.tool);
    tb_cli_common_free(&b->a.c);
    tb_bench_recs_free(&b->recs);
    tb_capq_destroy(b->capq);
    tb_capq_destroy(b->llm_capq);
    tb_bench_prompts_free(&b->prompts);
    tb_convos_free(&b->convos);
    free(b->url);
    tb_cli_endpoint_free(&b->ep);
    return rc;
}

/* ttsbuf bench: open (options, plan, endpoint, --out), run the levels,
 * report what ran, the verdict, the extras, close. */
static int cmd_bench(int argc, char **argv)
{
    struct bench b;
    int rc, code, crc;
    memset(&b, 0, sizeof(b));
    tb_bench_recs_init(&b.recs);
    rc = open_bench(&b, argc, argv);
    if (rc == 0) {
        int rrc;
        rc = run_levels(&b);
        rrc = report(&b);
        rc = rc != 0 ? rc : rrc;
    }
    code = rc != 0 ? tb_cli_exit(rc) : bench_verdict(&b);
    if (rc == 0 && (rc = extras(&b)) != 0 && code == TB_EXIT_OK)
        code = tb_cli_exit(rc);
    crc = close_bench(&b);
    return crc != 0 && code == TB_EXIT_OK ? tb_cli_exit(crc) : code;
}
