/*
 * cmd_bench.c - `ttsbuf bench`: the article's concurrency study (and open-
 * loop arrivals) against an OpenAI-compatible endpoint, every stream
 * played out through its own playout model; per-level percentiles,
 * gates, per-request records and traces, shards.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "bench_report.h"
#include "jsonout.h"
#include "ttsbuf/version.h"
#include "cli.h"
#include "ttsbuf/clock.h"
#include "audio.h"
#include "common.h"
#include "html_report.h"
#include "optdoc.h"
#include "request.h"
#include "ttsbuf/api.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/error.h"
#include "ttsbuf/http.h"
#include "ttsbuf/trace.h"

#define DEFAULT_LEVELS "1,5,10,25,50"
#define DEFAULT_MAX_TOKENS 300
#define MOCK_PRESET "mock"
#define OPEN_DEFAULT_REQUESTS 50

enum {
    O_PROMPTS = TB_O__REQUEST_END,
    O_PLAY,
    O_RATE,
    O_ARRIVALS,
    O_MAXCONC,
    O_REQUESTS,
    O_DURATION,
    O_WARMUP,
    O_SEED,
    O_SHARD,
    O_SHARDS,
    O_OUT,
    O_REQUIRE,
    O_CSV,
    O_FORCE,
    O_HTML,
    O_HTML_STREAMS
};

#define DEFAULT_HTML_STREAMS 3
#define HTML_STREAMS_MAX 50

_Static_assert(DEFAULT_MAX_TOKENS == 300, "--max-tokens' help states the default");
_Static_assert(OPEN_DEFAULT_REQUESTS == 50, "--requests' help states the default");

static const struct tb_optdoc bench_load[] = {
    {NULL, 'c', "LIST", "concurrency levels, closed loop (default " DEFAULT_LEVELS ")", NULL},
    {"rate", O_RATE, "LIST", "open loop instead: requests per second, one level each", NULL},
    {"arrivals", O_ARRIVALS, "KIND", "poisson (default) or constant inter-arrival times", NULL},
    {"max-concurrency", O_MAXCONC, "N", "open loop: at most N in flight (arrivals wait)",
     "An arrival that finds them busy waits, and its wait is in its record. Default: no limit "
     "(10000)."},
    {"requests", O_REQUESTS, "N",
     "measured requests per level (default: the concurrency, at least 10; 50 with --rate)", NULL},
    {"duration", O_DURATION, "S", "instead: start requests for S seconds per level",
     "Those started finish."},
    {"warmup", O_WARMUP, "N", "requests before each level, not counted (default 0)",
     "They run at the level's load."},
    {"seed", O_SEED, "N", "Poisson arrivals (default 1)", NULL},
    {"shard", O_SHARD, "I/N",
     "run shard I (0-based) of N: request ids = I mod N, a share of the load (default: "
     "$JOB_COMPLETION_INDEX or $SLURM_ARRAY_TASK_ID of --shards N, else 0/1)",
     "Records go to records-I-of-N.jsonl; ttsbuf merge combines the shards."},
    {"shards", O_SHARDS, "N", "the N for an index taken from the environment", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static const struct tb_optdoc bench_requests[] = {
    {"prompts", O_PROMPTS, "FILE",
     "JSONL: {\"prompt\": \"...\"} or {\"messages\": [...]} a line; request i uses prompt i mod "
     "count (default: a built-in set of 12 varied questions)",
     "The first built-in question is the example prompt of What Is Tokens Per Second (TPS)?"},
    {NULL, 0, NULL, NULL, NULL},
};

static const struct tb_optdoc bench_output[] = {
    {"out", O_OUT, "DIR",
     "write records.jsonl (a line per request; with --shard, records-I-of-N.jsonl), summary.json, "
     "and traces/ (each stream, for ttsbuf sim --trace)",
     "summary.json is the --json object; traces are traces/L<level>-<id>.jsonl. A DIR that holds "
     "an earlier run's files (of this shard) is refused, so that runs never mix."},
    {"force", O_FORCE, NULL,
     "--out: remove the earlier run's records, summary and traces (of this shard) first", NULL},
    {"require", O_REQUIRE, "G=V",
     "a gate (repeatable): gapless_share, success_share (>=), errors (<=), system_tps (>=), "
     "METRIC_STAT (<=; >= for the min, p5, p50 and mean of the decode rates)",
     "METRIC is one of ttft_s, ttfa_s, decode_tps, decode_tps_usage, itl_s, underruns, "
     "gap_total_s, gap_max_s, min_tps, speedup_needed; STAT one of mean, std, min, p5, p50, p90, "
     "p95, p99, max (the JSON names: ttft_s_p95=0.8, decode_tps_p5=40). The names before this "
     "release (gapless, ttfa-p95, tps-p95 for decode_tps_p5) are still accepted. A failed gate "
     "prints one line per level and exits 1."},
    {"csv", O_CSV, NULL, "one CSV row per level instead of the report", NULL},
    {"html", O_HTML, "FILE",
     "also write one self-contained HTML page: the per-level report, every stream as a row "
     "(sortable by TTFT, silence, longest gap, min TPS), and the timeline and audio of the "
     "streams with the most silence",
     "Those streams are replayed with eSpeak NG as sim --html does; their audio is a 16-bit mono "
     "22.05 kHz WAV each (about 3.5 MB a minute in the page, at most 600 s each)."},
    {"html-streams", O_HTML_STREAMS, "N",
     "with --html: how many of the worst streams to replay, 0..50 (default 3)", NULL},
    {"quiet", 'q', NULL, "no progress line", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static const struct tb_optdoc bench_play[] = {
    {"play", O_PLAY, "WHICH",
     "with --audio: after the run, play one stream through the sink: worst (default: the most "
     "silence), or a request id",
     "Its stall can then be heard; the speech options of sim apply."},
    {NULL, 0, NULL, NULL, NULL},
};

static const struct tb_optsec bench_secs[] = {
    {"Load (per level):", bench_load},
    {"Requests (an endpoint or --mock; --model for a real endpoint):", tb_opt_request},
    {NULL, bench_requests},
    {"Output:", bench_output},
    {"Playout (each stream, as ttsbuf sim):", tb_opt_playout},
    {"Speech (eSpeak NG):", tb_opt_audio},
    {NULL, bench_play},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

static const char *const bench_notes[] = {
    "The streams run on one libcurl multi event loop (no thread per stream); each is played out "
    "through its own playout model, exactly as ttsbuf sim --trace does on its trace. Every "
    "percentile is the high tail (p95 of decode_tps is fast); the slow tail of a rate is p5.",
    "SIGINT or SIGTERM stops bench cleanly: the streams cut are recorded as cancelled, and the "
    "report and records are written (exit 3).",
    NULL,
};

const struct tb_cmddoc tb_doc_bench = {
    "bench",
    "[--base-url URL --model NAME | --mock] [OPTIONS]",
    "Stream many completions at once from an OpenAI-compatible endpoint (one\n"
    "libcurl event loop, no thread per stream) and play each out through its own\n"
    "playout model: per load level, P50/P95/P99/min/max of TTFT, time to first\n"
    "audio, decode TPS, inter-event gap, underruns, silence, minimum TPS and\n"
    "speed-up needed; system TPS, errors by kind, and the share of gapless streams.\n",
    bench_secs,
    "0 ran; 1 a --require gate (or --fail-on-underrun) failed (one line per failure); 2 bad "
    "usage or input; 3 interrupted, or no request succeeded (what ran is still reported and "
    "written).",
    NULL,
    bench_notes,
};

struct bench_args {
    struct tb_cli_common c;
    struct tb_cli_audio au;
    const char *play;
    struct tb_cli_request q;
    const char *prompts_file, *out, *conc, *rates, *shard;
    double duration;
    size_t requests, warmup, max_conc, seed, shards;
    int quiet, csv, poisson, force;
    const char *html;
    size_t html_streams;
    struct tb_gate gates[TB_GATES_MAX];
    size_t ngates;
};

/* A comma-separated list of numbers in [lo, hi].  0 or -1 (printed). */
static int parse_list(const char *flag, const char *s, double lo, double hi, int integer,
                      double *out, uint32_t *n)
{
    char item[64], err[200];
    const char *all = s;
    *n = 0;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e != NULL ? (size_t)(e - s) : strlen(s);
        double v;
        if (*n == TB_BENCH_LEVELS_MAX) {
            tb_cli_error("%s: at most %d levels", flag, TB_BENCH_LEVELS_MAX);
            return -1;
        }
        if (len == 0 || len >= sizeof(item)) {
            tb_cli_error("%s: '%s' is not a comma-separated list", flag, all);
            return -1;
        }
        memcpy(item, s, len);
        item[len] = '\0';
        if (tb_opt_double(flag, item, lo, hi, &v, err, sizeof(err)) != 0) {
            tb_cli_error("%s", err);
            return -1;
        }
        if (integer && v != (double)(long long)v) {
            tb_cli_error("%s: '%s' is not a whole number", flag, item);
            return -1;
        }
        out[(*n)++] = v;
        s += len + (e != NULL);
        if (e != NULL && *s == '\0') {
            tb_cli_error("%s: a trailing comma", flag);
            return -1;
        }
    }
    if (*n == 0) {
        tb_cli_error("%s: an empty list", flag);
        return -1;
    }
    return 0;
}

/* "I/N".  0 or -1 (printed). */
static int parse_shard(const char *s, uint32_t *i, uint32_t *n)
{
    char err[200], a[32];
    const char *slash = strchr(s, '/');
    size_t ii, nn;
    if (slash == NULL || (size_t)(slash - s) >= sizeof(a)) {
        tb_cli_error("--shard: '%s' is not I/N (e.g. 0/4)", s);
        return -1;
    }
    memcpy(a, s, (size_t)(slash - s));
    a[slash - s] = '\0';
    if (tb_opt_size("--shard", slash + 1, 1, 100000, &nn, err, sizeof(err)) != 0 ||
        tb_opt_size("--shard", a, 0, nn - 1, &ii, err, sizeof(err)) != 0) {
        tb_cli_error("%s (I/N, 0 <= I < N)", err);
        return -1;
    }
    *i = (uint32_t)ii;
    *n = (uint32_t)nn;
    return 0;
}

/* Returns -1 to go on, or an exit code. */
/*
 * --audio: one stream of the run played through the sink, so the worst
 * stall can be heard: the request with the most silence (or --play ID),
 * replayed from its recorded arrivals as `ttsbuf sim --trace` would.
 * Returns -1 when it played, or an exit code (the error is printed).
 */
static int play_one(struct bench_args *a, const struct tb_bench_recs *recs)
{
    const struct tb_bench_rec *pick = NULL;
    struct tb_sim_opts o = a->c.o;
    struct tb_sim_result r;
    struct tb_clock clk;
    char err[256];
    int code;
    for (size_t i = 0; i < recs->n; i++) {
        const struct tb_bench_rec *x = &recs->v[i];
        if (x->error != 0 || x->stream.n == 0 || isnan(x->gap_total))
            continue;
        if (a->play != NULL && strcmp(a->play, "worst") != 0) {
            char id[32];
            snprintf(id, sizeof(id), "%llu", (unsigned long long)x->id);
            if (strcmp(id, a->play) == 0)
                pick = x;
        } else if (pick == NULL || x->gap_total > pick->gap_total) {
            pick = x;
        }
    }
    if (pick == NULL) {
        tb_cli_error("--play %s: no such successful request", a->play ? a->play : "worst");
        return TB_EXIT_USAGE;
    }
    fprintf(stderr,
            "ttsbuf: playing request %llu (level %u: %u underrun%s, %.2f s of silence) "
            "through --audio %s\n",
            (unsigned long long)pick->id, pick->level + 1, pick->underruns,
            pick->underruns == 1 ? "" : "s", pick->gap_total, a->au.spec);
    code = tb_cli_audio_start(&a->au, &o);
    if (code >= 0)
        return code;
    if (tb_cli_audio_realtime(&a->au))
        tb_clock_monotonic_init(&clk);
    else
        tb_clock_virtual_init(&clk);
    if (tb_sim_run(&pick->stream, &o, &clk, NULL, NULL, &r, err, sizeof(err)) != 0) {
        tb_cli_error("--play: %s", err);
        tb_cli_audio_finish(&a->au);
        return TB_EXIT_FAILED;
    }
    code = tb_cli_audio_finish(&a->au);
    if (code >= 0)
        return code;
    tb_cli_audio_report(stderr, &a->au, &o, &r, a->c.max_gaps);
    return -1;
}

static int parse(int argc, char **argv, struct bench_args *a)
{
    char err[256];
    struct tb_cli_getopt g;
    int c, rc;
    if (tb_cli_getopt_init(&g, &tb_doc_bench) != 0)
        return TB_EXIT_USAGE;
    tb_cli_common_init(&a->c);
    tb_cli_audio_init(&a->au);
    tb_cli_request_init(&a->q, DEFAULT_MAX_TOKENS);
    a->seed = 1;
    a->poisson = 1;
    a->html_streams = DEFAULT_HTML_STREAMS;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, g.so, g.lo, NULL)) != -1) {
        switch (c) {
        case 'h': tb_cli_help(stdout, &tb_doc_bench); return TB_EXIT_OK;
        case 'q': a->quiet = 1; continue;
        case 'c': a->conc = optarg; continue;
        case O_PROMPTS: a->prompts_file = optarg; continue;
        case O_PLAY: a->play = optarg; continue;
        case O_HTML: a->html = optarg; continue;
        case O_HTML_STREAMS:
            if (tb_opt_size("--html-streams", optarg, 0, HTML_STREAMS_MAX, &a->html_streams, err,
                            sizeof(err)) != 0) {
                tb_cli_error("%s", err);
                return TB_EXIT_USAGE;
            }
            continue;
        case O_RATE: a->rates = optarg; continue;
        case O_SHARD: a->shard = optarg; continue;
        case O_OUT: a->out = optarg; continue;
        case O_CSV: a->csv = 1; continue;
        case O_FORCE: a->force = 1; continue;
        case O_ARRIVALS:
            if (strcmp(optarg, "poisson") != 0 && strcmp(optarg, "constant") != 0) {
                tb_cli_error("--arrivals: '%s' is not poisson or constant", optarg);
                return TB_EXIT_USAGE;
            }
            a->poisson = optarg[0] == 'p';
            continue;
        case O_REQUIRE:
            if (a->ngates == TB_GATES_MAX) {
                tb_cli_error("--require: at most %d gates", TB_GATES_MAX);
                return TB_EXIT_USAGE;
            }
            if (tb_gate_parse(optarg, &a->gates[a->ngates]) != 0)
                return TB_EXIT_USAGE;
            a->ngates++;
            continue;
        case O_MAXCONC:
            rc = tb_opt_size("--max-concurrency", optarg, 1, TB_BENCH_CONC_MAX, &a->max_conc, err,
                             sizeof(err));
            break;
        case O_REQUESTS:
            rc = tb_opt_size("--requests", optarg, 1, 100000000, &a->requests, err, sizeof(err));
            break;
        case O_DURATION:
            rc = tb_opt_double("--duration", optarg, 0.001, 86400 * 7, &a->duration, err,
                               sizeof(err));
            break;
        case O_WARMUP:
            rc = tb_opt_size("--warmup", optarg, 0, 1000000, &a->warmup, err, sizeof(err));
            break;
        case O_SEED:
            rc = tb_opt_size("--seed", optarg, 0, SIZE_MAX, &a->seed, err, sizeof(err));
            break;
        case O_SHARDS:
            rc = tb_opt_size("--shards", optarg, 1, 100000, &a->shards, err, sizeof(err));
            break;
        default:
            rc = tb_cli_audio_option(&a->au, c, optarg);
            if (rc < 0)
                return TB_EXIT_USAGE;
            if (rc == 0)
                rc = tb_cli_request_option(&a->q, c, optarg);
            if (rc == 0)
                rc = tb_cli_common_option(&a->c, c, optarg);
            if (rc < 0)
                return TB_EXIT_USAGE;
            if (rc == 0)
                return tb_cli_bad_option("bench", c, argv);
            continue;
        }
        if (rc != 0) {
            tb_cli_error("%s", err);
            return TB_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tb_cli_error("bench: unexpected argument '%s' (see ttsbuf bench --help)", argv[optind]);
        return TB_EXIT_USAGE;
    }
    if (a->conc != NULL && a->rates != NULL) {
        tb_cli_error("bench: give -c (closed loop) or --rate (open loop), not both");
        return TB_EXIT_USAGE;
    }
    if (a->max_conc > 0 && a->rates == NULL) {
        tb_cli_error("bench: --max-concurrency applies to --rate (with -c the level is the cap)");
        return TB_EXIT_USAGE;
    }
    if (a->requests > 0 && a->duration > 0) {
        tb_cli_error("bench: give --requests or --duration, not both");
        return TB_EXIT_USAGE;
    }
    if (a->c.fail_on_underrun && a->ngates < TB_GATES_MAX)
        tb_gate_parse("gapless=1", &a->gates[a->ngates++]);
    return -1;
}

/* The shard: --shard, else an index from Kubernetes or Slurm with
 * --shards, else 0/1.  0 or an exit code. */
static int pick_shard(const struct bench_args *a, uint32_t *i, uint32_t *n)
{
    const char *envs[] = {"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"};
    char err[200];
    *i = 0;
    *n = 1;
    if (a->shard != NULL)
        return parse_shard(a->shard, i, n) == 0 ? 0 : TB_EXIT_USAGE;
    if (a->shards == 0)
        return 0;
    for (size_t k = 0; k < 2; k++) {
        const char *v = getenv(envs[k]);
        size_t z;
        if (v == NULL || v[0] == '\0')
            continue;
        if (tb_opt_size(envs[k], v, 0, a->shards - 1, &z, err, sizeof(err)) != 0) {
            tb_cli_error("%s (with --shards %zu)", err, a->shards);
            return TB_EXIT_USAGE;
        }
        *i = (uint32_t)z;
        *n = (uint32_t)a->shards;
        return 0;
    }
    tb_cli_error("--shards %zu: no index in $JOB_COMPLETION_INDEX or $SLURM_ARRAY_TASK_ID "
                 "(give --shard I/N)",
                 a->shards);
    return TB_EXIT_USAGE;
}

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

static void file_name(char *out, size_t len, const char *dir, const char *stem, const char *ext,
                      const struct tb_bench_meta *m)
{
    if (m->nshards > 1)
        snprintf(out, len, "%s/%s-%u-of-%u.%s", dir, stem, m->shard, m->nshards, ext);
    else
        snprintf(out, len, "%s/%s.%s", dir, stem, ext);
}

enum out_entry { OUT_KEEP, OUT_EARLIER, OUT_FOREIGN };

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* 1 and *id when name is a trace's, "L<level>-<id>.jsonl". */
static int trace_id(const char *name, unsigned long long *id)
{
    char *end;
    const char *dash = strchr(name, '-');
    if (name[0] != 'L' || dash == NULL || dash == name + 1)
        return 0;
    (void)strtoul(name + 1, &end, 10);
    if (end != dash)
        return 0;
    errno = 0;
    *id = strtoull(dash + 1, &end, 10);
    return errno == 0 && end != dash + 1 && strcmp(end, ".jsonl") == 0;
}

/* What an entry of DIR (or DIR/traces) is.  Unsharded: an earlier run's
 * records, summary and traces are OUT_EARLIER (refused; --force removes
 * them); any other file in traces/ is OUT_FOREIGN (refused, never
 * removed: `sweep DIR/traces` would read it); other files in DIR (a
 * report redirected there) stay.  Sharded (shards share a DIR), only this
 * shard's records, summary and traces (ids = shard mod N) matter. */
static enum out_entry out_entry(const char *name, int in_traces, const struct tb_bench_meta *m)
{
    char mine[64];
    unsigned long long id = 0;
    int trace = in_traces && trace_id(name, &id);
    if (m->nshards > 1) {
        if (in_traces)
            return trace && id % m->nshards == m->shard ? OUT_EARLIER : OUT_KEEP;
        snprintf(mine, sizeof(mine), "records-%u-of-%u.jsonl", m->shard, m->nshards);
        if (strcmp(name, mine) == 0)
            return OUT_EARLIER;
        snprintf(mine, sizeof(mine), "summary-%u-of-%u.json", m->shard, m->nshards);
        return strcmp(name, mine) == 0 ? OUT_EARLIER : OUT_KEEP;
    }
    if (in_traces)
        return trace ? OUT_EARLIER : OUT_FOREIGN;
    if ((strncmp(name, "records", 7) == 0 && has_suffix(name, ".jsonl")) ||
        (strncmp(name, "summary", 7) == 0 && has_suffix(name, ".json")))
        return OUT_EARLIER;
    return OUT_KEEP;
}

/* Refuses (or, with force, removes) an earlier run's files in dir (or in
 * dir/traces).  0 or an exit code. */
static int clear_stale(const char *dir, int in_traces, const struct tb_bench_meta *m, int force)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4200];
    int code = 0;
    if (d == NULL) {
        tb_cli_error("--out: %s: %s", dir, strerror(errno));
        return TB_EXIT_USAGE;
    }
    while (code == 0 && (e = readdir(d)) != NULL) {
        enum out_entry k;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        k = out_entry(e->d_name, in_traces, m);
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (k == OUT_KEEP)
            continue;
        if (k == OUT_FOREIGN) {
            tb_cli_error("--out: %s holds %s, not a trace of ttsbuf's; give a new directory",
                         dir, e->d_name);
            code = TB_EXIT_USAGE;
        } else if (!force) {
            tb_cli_error("--out: %s holds an earlier run (%s); give a new directory, or "
                         "--force to remove its records, summary and traces",
                         dir, e->d_name);
            code = TB_EXIT_USAGE;
        } else if (unlink(path) != 0) {
            tb_cli_error("--out: cannot remove %s: %s", path, strerror(errno));
            code = TB_EXIT_USAGE;
        }
    }
    closedir(d);
    return code;
}

/* The options that shape the records (they must match to merge), as a
 * JSON object's canonical text; and when and by which ttsbuf they began. */
static int bench_options(struct tb_bench_meta *meta, const struct tb_sim_opts *o, long max_tokens,
                         const char *api)
{
    cJSON *j = cJSON_CreateObject();
    char *t;
    if (j == NULL)
        return -1;
    tb_cli_json_playout(j, o);
    cJSON_AddNumberToObject(j, "ring_slots", (double)o->ring_slots);
    cJSON_AddNumberToObject(j, "ring_bytes", (double)o->ring_bytes);
    cJSON_AddNumberToObject(j, "max_tokens", (double)max_tokens);
    cJSON_AddStringToObject(j, "api", api);
    t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (t == NULL || strlen(t) >= sizeof(meta->options)) {
        cJSON_free(t);
        return -1;
    }
    snprintf(meta->options, sizeof(meta->options), "%s", t);
    cJSON_free(t);
    snprintf(meta->started_at, sizeof(meta->started_at), "%s", tb_cli_started_at());
    snprintf(meta->ttsbuf_version, sizeof(meta->ttsbuf_version), "%s", TB_VERSION);
    return 0;
}

/* The output directory: DIR and DIR/traces, with no earlier run's files
 * in them (refused, or removed with --force): a later `sweep DIR/traces`
 * must not mix runs.  0 or an exit code. */
static int make_out(const char *dir, const struct tb_bench_meta *m, int force)
{
    char path[4096];
    int code;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        tb_cli_error("--out: %s: %s", dir, strerror(errno));
        return TB_EXIT_USAGE;
    }
    snprintf(path, sizeof(path), "%s/traces", dir);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        tb_cli_error("--out: %s: %s", path, strerror(errno));
        return TB_EXIT_USAGE;
    }
    code = clear_stale(path, 1, m, force);
    return code != 0 ? code : clear_stale(dir, 0, m, force);
}

/* Writes level l's records (and their traces) from index `from`.  0 or -1
 * (printed). */
static int write_level(FILE *rf, const char *dir, const struct tb_bench_meta *m,
                       struct tb_bench_recs *recs, size_t from)
{
    for (size_t i = from; i < recs->n; i++) {
        struct tb_bench_rec *r = &recs->v[i];
        char rel[96], path[4200];
        FILE *tf;
        int rc;
        snprintf(rel, sizeof(rel), "traces/L%u-%06llu.jsonl", r->level, (unsigned long long)r->id);
        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        snprintf(r->stream.model, sizeof(r->stream.model), "%s", m->model);
        snprintf(r->stream.base_url, sizeof(r->stream.base_url), "%s", m->base_url);
        snprintf(r->stream.provider, sizeof(r->stream.provider), "%s", m->provider);
        snprintf(r->stream.started_at, sizeof(r->stream.started_at), "%s", m->started_at);
        snprintf(r->stream.command, sizeof(r->stream.command), "bench");
        tf = fopen(path, "w");
        if (tf == NULL) {
            tb_cli_error("--out: %s: %s", path, strerror(errno));
            return -1;
        }
        rc = tb_trace_write_opts(tf, &r->stream, m->options);
        if (tb_cli_out_close("--out", path, tf, rc) >= 0)
            return -1;
        if (tb_bench_write_rec(rf, r, rel) != 0) {
            tb_cli_error("--out: write error on the records file: %s", strerror(errno));
            return -1;
        }
    }
    fflush(rf);
    return 0;
}

/* Builds the level list.  0 or an exit code. */
static int levels_of(const struct bench_args *a, struct tb_bench_meta *m)
{
    double v[TB_BENCH_LEVELS_MAX];
    uint32_t n;
    if (a->rates != NULL) {
        if (parse_list("--rate", a->rates, 0.001, 1e6, 0, v, &n) != 0)
            return TB_EXIT_USAGE;
        for (uint32_t i = 0; i < n; i++) {
            m->levels[i].mode = a->poisson ? TB_BENCH_POISSON : TB_BENCH_CONSTANT;
            m->levels[i].rate = v[i];
            m->levels[i].concurrency = (uint32_t)a->max_conc;
        }
    } else {
        if (parse_list("-c", a->conc != NULL ? a->conc : DEFAULT_LEVELS, 1, TB_BENCH_CONC_MAX, 1, v,
                       &n) != 0)
            return TB_EXIT_USAGE;
        for (uint32_t i = 0; i < n; i++) {
            m->levels[i].mode = TB_BENCH_CLOSED;
            m->levels[i].concurrency = (uint32_t)v[i];
            m->levels[i].rate = 0;
        }
    }
    m->nlevels = n;
    return 0;
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
    struct bench_args a;
    struct tb_bench_opts bo;
    struct tb_bench_prompts prompts = {NULL, 0};
    struct tb_bench_recs recs;
    struct tb_bench_summary *sums = NULL;
    struct tb_bench_meta meta;
    char *url = NULL, err[512], path[4200];
    FILE *rf = NULL;
    const struct tb_api_info *info;
    struct tb_cli_endpoint ep;
    int code, progress;
    size_t ok_total = 0, warned = 0;
    const char *first_warning = "";

    memset(&a, 0, sizeof(a));
    memset(&meta, 0, sizeof(meta));
    memset(&ep, 0, sizeof(ep));
    tb_bench_recs_init(&recs);
    code = parse(argc, argv, &a);
    if (code >= 0)
        return code;
    code = levels_of(&a, &meta);
    if (code == 0)
        code = pick_shard(&a, &meta.shard, &meta.nshards);
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
    if (bench_options(&meta, &a.c.o, a.q.req.max_tokens, info->name) != 0) {
        tb_cli_error("out of memory");
        code = TB_EXIT_USAGE;
        goto out;
    }

    if (a.out != NULL) {
        code = make_out(a.out, &meta, a.force);
        if (code != 0)
            goto out;
        file_name(path, sizeof(path), a.out, "records", "jsonl", &meta);
        rf = fopen(path, "w");
        if (rf == NULL || tb_bench_write_header(rf, &meta) != 0) {
            tb_cli_error("--out: %s: %s", path, strerror(errno));
            code = TB_EXIT_USAGE;
            goto out;
        }
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
            bo.requests = OPEN_DEFAULT_REQUESTS;
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
        if (rf != NULL && write_level(rf, a.out, &meta, &recs, from) != 0)
            code = TB_EXIT_USAGE;
        if (atomic_load(interrupted)) {
            meta.nlevels = l + 1; /* report what ran */
            break;
        }
    }
    for (size_t i = 0; i < recs.n; i++) {
        ok_total += recs.v[i].error == 0;
        if (recs.v[i].warning[0] != '\0' && warned++ == 0)
            first_warning = recs.v[i].warning;
    }
    if (warned > 0)
        fprintf(stderr, "ttsbuf: note: %zu stream%s: %s\n", warned,
                warned > 1 ? "s, the first" : "", first_warning);

    sums = calloc(meta.nlevels > 0 ? meta.nlevels : 1, sizeof(*sums));
    if (sums == NULL || tb_bench_summaries(&meta, &recs, sums) != 0) {
        code = TB_EXIT_USAGE;
        goto out;
    }
    if (a.csv)
        tb_bench_report_csv(stdout, &meta, sums);
    else if (a.c.json)
        tb_bench_report_json(stdout, "bench", &meta, sums);
    else
        tb_bench_report_human(stdout, &meta, sums);
    if (a.out != NULL) {
        FILE *sf;
        file_name(path, sizeof(path), a.out, "summary", "json", &meta);
        sf = fopen(path, "w");
        if (sf != NULL) {
            tb_bench_report_json(sf, "bench", &meta, sums);
            fclose(sf);
        } else {
            tb_cli_error("--out: %s: %s", path, strerror(errno));
        }
    }
    if (code != 0)
        goto out;
    if (atomic_load(interrupted)) {
        tb_cli_error("bench: interrupted; %zu requests recorded", recs.n);
        code = TB_EXIT_FAILED;
    } else if (ok_total == 0) {
        tb_cli_error("bench: no request succeeded (first error: %s)",
                     recs.n > 0 ? recs.v[0].message : "none ran");
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
        int pc = play_one(&a, &recs);
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
