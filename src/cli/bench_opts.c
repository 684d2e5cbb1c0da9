/*
 * bench_opts.c - `ttsbuf bench`'s options: their rows (its --help and man
 * page), parsing and checking them, and the plan they make: the load
 * levels and this process's shard (see bench_opts.h).
 */
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"

#include "cli.h"
#include "optdoc.h"
#include "ttsbuf/capq.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsws.h"

#define DEFAULT_LEVELS "1,5,10,25,50"

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
    O_SLO,
    O_CSV,
    O_FORCE,
    O_HTML,
    O_HTML_STREAMS,
    O_CONVOS,
    O_CALLS,
    O_CALL_RATE,
    O_CALL_COUNT,
    O_TURNS,
    O_USER_TURN,
    O_BARGE_IN,
    O_BARGE_IN_AT,
    O_THREADS,
    O_TTS_CAP,
    O_LLM_CAP
};

#define DEFAULT_HTML_STREAMS 3
#define HTML_STREAMS_MAX 50

_Static_assert(TB_CLI_BENCH_MAX_TOKENS == 300, "--max-tokens' help states the default");
_Static_assert(TB_CLI_BENCH_OPEN_REQUESTS == 50, "--requests' help states the default");

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
    {"seed", O_SEED, "N", "Poisson arrivals, --user-turn and --eou draws (default 1)", NULL},
    {"shard", O_SHARD, "I/N",
     "run shard I (0-based) of N: request ids = I mod N, a share of the load (default: "
     "$JOB_COMPLETION_INDEX or $SLURM_ARRAY_TASK_ID of --shards N, else 0/1)",
     "Records go to records-I-of-N.jsonl; ttsbuf merge combines the shards."},
    {"shards", O_SHARDS, "N", "the N for an index taken from the environment", NULL},
    {"threads", O_THREADS, "N|auto",
     "event loops, a thread each, that split the level as N shards would (default auto: one per "
     "CPU, at most 8, at 512 streams or calls at once or more; else 1)",
     "Records and the summary are those of one loop; ttsbuf(1), BENCH, Loop threads."},
    TB_OPTDOC_END,
};

_Static_assert(TB_CLI_BENCH_OPEN_CALLS == 10, "--call-count's help states the default");

static const struct tb_optdoc bench_calls[] = {
    {"conversations", O_CONVOS, "FILE|builtin",
     "drive calls instead of one-shot requests: conversations (JSONL or ShareGPT JSON, or the "
     "built-in set), each turn sent with the conversation so far when the answer before it has "
     "been spoken and the caller has answered",
     "Call j uses conversation j mod count. Not with --prompts, -c, --rate, --requests, "
     "--duration, --warmup, --api completions or --tts-url (ttsbuf(1), CALLS)."},
    {"calls", O_CALLS, "LIST", "calls at once, closed loop, one level each (default 1)", NULL},
    {"call-rate", O_CALL_RATE, "LIST",
     "open loop instead: calls arrive at R per second (Poisson), one level each", NULL},
    {"call-count", O_CALL_COUNT, "M",
     "measured calls per level over all shards (default: the calls at once; 10 with --call-rate)",
     NULL},
    {"turns", O_TURNS, "K", "turns per call: the conversation's first K (default: all)", NULL},
    {"user-turn", O_USER_TURN, "SPEC",
     "the caller's speaking time before each turn after the first: S seconds, uniform:A..B, "
     "exp:MEAN, or words:WPM[,PAUSE] (the turn's words at WPM plus PAUSE s; "
     "default " TB_UTURN_DEFAULT ")",
     "Draws come from a generator seeded by --seed, the call and the turn, so shards draw what "
     "one run would."},
    {"barge-in", O_BARGE_IN, "P",
     "the caller interrupts a turn with probability P (0..1): the stream is closed then, the next "
     "turn follows the caller's speech (default 0: never)",
     "Drawn per call and turn from --seed; the moment is --barge-in-at.  Records and the summary "
     "then say what was interrupted and never heard (ttsbuf(1), BENCH, Barge-in).  With "
     "--tts-url the turn's TTS streams are closed at the interruption too, and the records say "
     "when, and the audio in flight."},
    {"barge-in-at", O_BARGE_IN_AT, "SPEC",
     "when the caller interrupts, in seconds of playback after the turn's first audio: S, "
     "uniform:A..B or exp:MEAN (default " TB_BARGE_AT_DEFAULT ")",
     NULL},
    TB_OPTDOC_END,
};

static const struct tb_optdoc bench_requests[] = {
    {"prompts", O_PROMPTS, "FILE",
     "JSONL: {\"prompt\": \"...\"} or {\"messages\": [...]} a line; request i uses prompt i mod "
     "count (default: a built-in set of 12 varied questions)",
     "The first built-in question is the example prompt of What Is Tokens Per Second (TPS)?"},
    TB_OPTDOC_END,
};

static const struct tb_optdoc bench_output[] = {
    {"out", O_OUT, "DIR",
     "write records.jsonl (a line per request; with --shard, records-I-of-N.jsonl), summary.json, "
     "and traces/ (each stream, for ttsbuf sim --trace FILE --request ID)",
     "summary.json is the --json object; traces/LEVEL.jsonl holds the traces of a level's "
     "requests one after another (LEVEL: the level's name, c=10, without '/', blanks and "
     "brackets: rate=5ps-poisson; with --shard, LEVEL-I-of-N.jsonl), each naming its request; a "
     "record's trace is the file and its id the request. A DIR that holds "
     "an earlier run's files (of this shard) is refused, so that runs never mix."},
    {"force", O_FORCE, NULL,
     "--out: remove the earlier run's records, summary and traces (of this shard) first", NULL},
    {"require", O_REQUIRE, "G=V",
     "a gate (repeatable): gapless_share, success_share (>=), errors (<=), system_tps (>=), "
     "goodput, goodput_per_s (>=; with --slo), METRIC_STAT (>= for the decode rates, <= for the "
     "rest, whatever the STAT; std <=); "
     "default success_share=1: every request must succeed",
     "METRIC is one of ttft_s, ttfa_s, decode_tps, decode_tps_usage, itl_s, underruns, "
     "gap_total_s, gap_max_s, min_tps, speedup_needed; STAT one of mean, std, min, p5, p50, p90, "
     "p95, p99, max (the JSON names: ttft_s_p95=0.8, decode_tps_p5=40). A rate's gate is a floor "
     "and a time's or a count's a ceiling, whatever the statistic: decode_tps_p95=10 needs the "
     "fast tail at 10 tokens/s or more; the spread (std) is a ceiling for every metric. Unless a "
     "success_share or errors gate says which failures are allowed, the gate success_share=1 "
     "applies: a request that failed (refused, HTTP error, cut) fails the run. The report's "
     "last line lists the gates in force. The names before this release (gapless, ttfa-p95, "
     "tps-p95 for decode_tps_p5) are still accepted. A failed gate prints one line per level, "
     "after the report, and exits 1."},
    {"slo", O_SLO, "K=V",
     "a service-level objective per request (repeatable): ttft_s, ttfa_s, gap_total_s, "
     "gap_max_s, underruns, min_tps, speedup_needed, v2v_s (<=), decode_tps, decode_tps_usage "
     "(>=), "
     "or gapless; a request is good when it is complete and within every SLO",
     "Voice goodput: per level, the good requests, their share of the requests and their rate "
     "(good per second of the level's span); per turn index for calls. A quantity a request did "
     "not measure (null) fails its SLO; a turn the caller interrupted (--barge-in) is judged on "
     "what was heard before the interruption and counted apart (ttsbuf(1), BENCH, Voice "
     "goodput). The records' header carries the SLOs and each record "
     "good: true or false; merge and compare take the SLOs from the records (merge refuses "
     "shards with other SLOs, compare refuses runs with other SLOs unless --force). Gate on it "
     "with --require goodput=0.95 or goodput_per_s=N."},
    {"csv", O_CSV, NULL, "one CSV row per level instead of the report", NULL},
    {"html", O_HTML, "FILE",
     "also write one self-contained HTML page: the per-level report, every stream as a row "
     "(sortable by TTFT, first audio, silence, longest gap, min TPS), and the timeline and audio "
     "of the streams with the most silence",
     "The report is bench's, with its calls, barge-in and gates lines; with --conversations each "
     "row has its call and turn, with --barge-in whether and when the caller interrupted it, "
     "with --slo whether it is good.  Those streams are replayed as sim --html does, on the rate "
     "model the table used (eSpeak NG stretched to its durations); their audio is a 16-bit mono "
     "22.05 kHz WAV each (about 3.5 MB a minute in the page, at most 600 s each).  With --tts-url "
     "the page draws what was measured: every turn's wait, the streams' arrivals; no audio."},
    {"html-streams", O_HTML_STREAMS, "N",
     "with --html: how many of the worst streams to replay, 0..50 (default 3)", NULL},
    {"quiet", 'q', NULL,
     "no report and no progress line: errors only (--json, --csv, --out and --html are still "
     "written)",
     NULL},
    TB_OPTDOC_END,
};

static const struct tb_optdoc bench_ttscap[] = {
    {"tts-capacity", O_TTS_CAP, "N",
     "with --tts-url: at most N syntheses in flight across every stream and call of the run "
     "(the provider's account limit, 1..100000), the others queued first come, first served",
     "--tts-concurrency stays each stream's own limit. A chunk that may go by its stream's rule "
     "joins one queue shared by every loop thread of this process (a shard of --shard has its "
     "own), in the order it became ready; it holds its slot from its grant until its last audio "
     "byte was received (or it failed or was canceled). Each chunk's trace line keeps when it "
     "joined (capacity_ready) and its wait (capacity_wait), the record's tts object the waits "
     "(capacity_wait_s), the level's tts_stats their statistics (capacity_wait_s), and the "
     "turn's tts_queue_s holds the wait. A modelled TTS's shared capacity is sweep's "
     "(--tts-capacity); ttsbuf-model(7), SHARED CAPACITY."},
    TB_OPTDOC_END,
};

static const struct tb_optdoc bench_llmcap[] = {
    {"llm-capacity", O_LLM_CAP, "N",
     "at most N LLM requests in flight across every stream and call of the run (1..100000): a "
     "request over it waits first come, first served for one to end",
     "One queue shared by every loop thread of this process, as --tts-capacity's. The wait "
     "counts in ttft (the request's clock starts as it is due, as a retry's does); a request "
     "holds its slot until it ends, its retries included. Each record says its wait, and the "
     "level's summary their statistics (llm_capacity_wait_s). A provider's own limit is its "
     "refusals: serve --max-inflight N and "
     "--retry."},
    TB_OPTDOC_END,
};

static const struct tb_optdoc bench_play[] = {
    {"play", O_PLAY, "WHICH",
     "with --audio: after the run, play one stream through the sink: worst (default: the most "
     "silence), or a request id",
     "Its stall can then be heard; the speech options of sim apply."},
    TB_OPTDOC_END,
};

const struct tb_optsec tb_cli_bench_secs[] = {
    {"Load (per level):", bench_load},
    {"Requests (an endpoint or --mock; --model for a real endpoint):", tb_opt_request},
    {NULL, bench_requests},
    {"Refusals (429, or 503 with Retry-After):", tb_opt_retry},
    {NULL, bench_llmcap},
    {"Calls (conversations on the speech clock):", bench_calls},
    {"Tool calls (a call's turns that offer tools):", tb_opt_tool},
    {"Output:", bench_output},
    {"Playout (each stream, as ttsbuf sim):", tb_opt_playout},
    {"TTS engine (each stream, as ttsbuf sim):", tb_opt_tts},
    {"The turn's wait (each stream, as ttsbuf sim):", tb_opt_turn},
    {"A real TTS in the loop (each stream; --tts-concurrency applies):", tb_opt_tts_live},
    {NULL, bench_ttscap},
    {"Speech (eSpeak NG):", tb_opt_audio},
    {NULL, bench_play},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

const char *const tb_cli_bench_notes[] = {
    "The streams run on a libcurl multi event loop (one per CPU at 512 streams or calls at once "
    "or more: --threads; no thread per stream); each is played out "
    "through its own playout model, exactly as ttsbuf sim --trace does on its trace. Every "
    "percentile is the high tail (p95 of decode_tps is fast); the slow tail of a rate is p5.",
    "SIGINT or SIGTERM stops bench cleanly: the streams cut are recorded as cancelled, and the "
    "report and records are written (exit 3).",
    NULL,
};

/* A comma-separated list of numbers in [lo, hi].  0 or TB_EINVAL /
 * TB_ERANGE (printed). */
static int parse_list(const char *flag, const char *s, double lo, double hi, int integer,
                      double *out, uint32_t *n)
{
    char item[64];
    const char *all = s;
    int rc;
    *n = 0;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e != NULL ? (size_t)(e - s) : strlen(s);
        double v;
        if (*n == TB_BENCH_LEVELS_MAX) {
            tb_cli_error("%s: at most %d levels", flag, TB_BENCH_LEVELS_MAX);
            return TB_EINVAL;
        }
        if (len == 0 || len >= sizeof(item)) {
            tb_cli_error("%s: '%s' is not a comma-separated list", flag, all);
            return TB_EINVAL;
        }
        memcpy(item, s, len);
        item[len] = '\0';
        rc = tb_cli_opt_double(flag, item, lo, hi, &v);
        if (rc != 0)
            return rc;
        if (integer && v != (double)(long long)v) {
            tb_cli_error("%s: '%s' is not a whole number", flag, item);
            return TB_EINVAL;
        }
        out[(*n)++] = v;
        s += len + (e != NULL);
        if (e != NULL && *s == '\0') {
            tb_cli_error("%s: a trailing comma", flag);
            return TB_EINVAL;
        }
    }
    if (*n == 0) {
        tb_cli_error("%s: an empty list", flag);
        return TB_EINVAL;
    }
    return 0;
}

/* "I/N".  0 or TB_EINVAL / TB_ERANGE (printed). */
static int parse_shard(const char *s, uint32_t *i, uint32_t *n)
{
    char err[200], a[32];
    const char *slash = strchr(s, '/');
    size_t ii, nn;
    int rc;
    if (slash == NULL || (size_t)(slash - s) >= sizeof(a)) {
        tb_cli_error("--shard: '%s' is not I/N (e.g. 0/4)", s);
        return TB_EINVAL;
    }
    memcpy(a, s, (size_t)(slash - s));
    a[slash - s] = '\0';
    if ((rc = tb_cli_number_size("--shard", slash + 1, 1, 100000, &nn, err, sizeof(err))) != 0 ||
        (rc = tb_cli_number_size("--shard", a, 0, nn - 1, &ii, err, sizeof(err))) != 0) {
        tb_cli_error("%s (I/N, 0 <= I < N)", err);
        return rc;
    }
    *i = (uint32_t)ii;
    *n = (uint32_t)nn;
    return 0;
}

int tb_cli_gate_option(struct tb_cli_gate *gates, size_t *n, const char *arg)
{
    int rc;
    if (*n == TB_CLI_GATES_MAX) {
        tb_cli_error("--require: at most %d gates", TB_CLI_GATES_MAX);
        return TB_EINVAL;
    }
    rc = tb_cli_gate_parse(arg, &gates[*n]);
    if (rc == 0)
        (*n)++;
    return rc;
}

int tb_cli_slo_option(struct tb_bench_slo *s, const char *arg)
{
    char err[300];
    int rc = tb_bench_slo_add(s, arg, err, sizeof(err));
    if (rc != 0)
        tb_cli_error("--slo: %s", err);
    return rc;
}

/* One option of bench's own, or of the shared groups (tb_cli_parse's
 * handler). */
static int option(void *ud, int c, const char *arg)
{
    struct tb_cli_bench *a = ud;
    switch (c) {
    case 'q': a->quiet = 1; return 0;
    case 'c': a->conc = arg; return 0;
    case O_PROMPTS: a->prompts_file = arg; return 0;
    case O_PLAY: a->play = arg; return 0;
    case O_HTML: a->html = arg; return 0;
    case O_HTML_STREAMS:
        return tb_cli_opt_size("--html-streams", arg, 0, HTML_STREAMS_MAX, &a->html_streams);
    case O_RATE: a->rates = arg; return 0;
    case O_SHARD: a->shard = arg; return 0;
    case O_OUT: a->out = arg; return 0;
    case O_CSV: a->csv = 1; return 0;
    case O_FORCE: a->force = 1; return 0;
    case O_ARRIVALS:
        if (strcmp(arg, "poisson") != 0 && strcmp(arg, "constant") != 0) {
            tb_cli_error("--arrivals: '%s' is not poisson or constant", arg);
            return TB_EINVAL;
        }
        a->poisson = arg[0] == 'p';
        return 0;
    case O_REQUIRE: return tb_cli_gate_option(a->gates, &a->ngates, arg);
    case O_SLO: return tb_cli_slo_option(&a->slo, arg);
    case O_MAXCONC:
        return tb_cli_opt_size("--max-concurrency", arg, 1, TB_BENCH_CONC_MAX, &a->max_conc);
    case O_REQUESTS: return tb_cli_opt_size("--requests", arg, 1, 100000000, &a->requests);
    case O_DURATION: return tb_cli_opt_double("--duration", arg, 0.001, 86400 * 7, &a->duration);
    case O_WARMUP: return tb_cli_opt_size("--warmup", arg, 0, 1000000, &a->warmup);
    case O_SEED: return tb_cli_opt_size("--seed", arg, 0, SIZE_MAX, &a->seed);
    case O_SHARDS: return tb_cli_opt_size("--shards", arg, 1, 100000, &a->shards);
    case O_CONVOS: a->convos = arg; return 0;
    case O_CALLS: a->calls = arg; return 0;
    case O_CALL_RATE: a->call_rates = arg; return 0;
    case O_CALL_COUNT: return tb_cli_opt_size("--call-count", arg, 1, 100000000, &a->call_count);
    case O_TURNS: return tb_cli_opt_size("--turns", arg, 1, TB_CONVO_TURNS_MAX, &a->turns);
    case O_USER_TURN: a->user_turn = arg; return 0;
    case O_BARGE_IN:
        a->barge_in = arg;
        return tb_cli_opt_double("--barge-in", arg, 0, 1, &a->barge_p);
    case O_BARGE_IN_AT: a->barge_in_at = arg; return 0;
    case O_THREADS: return tb_cli_opt_threads("--threads", arg, TB_BENCH_THREADS_MAX, &a->threads);
    case O_LLM_CAP: return tb_cli_opt_size("--llm-capacity", arg, 1, TB_CAPQ_MAX, &a->llm_capacity);
    case O_TTS_CAP: return tb_cli_opt_size("--tts-capacity", arg, 1, TB_CAPQ_MAX, &a->tts_capacity);
    default: {
        int rc = tb_cli_tts_live_option(&a->tl, c, arg);
        if (rc == TB_CLI_NOT_MINE)
            rc = tb_cli_retry_option(&a->retry, c, arg);
        if (rc == TB_CLI_NOT_MINE)
            rc = tb_cli_tool_option(&a->tool, c, arg);
        return rc != TB_CLI_NOT_MINE ? rc : tb_cli_groups_option(&a->c, &a->q, &a->au, c, arg);
    }
    }
}

/* Calls (--conversations): their options, and none of what only
 * requests take.  0 or TB_EINVAL (printed). */
static int calls_check(struct tb_cli_bench *a)
{
    char err[256];
    const char *only = a->calls != NULL         ? "--calls"
                       : a->call_rates != NULL  ? "--call-rate"
                       : a->call_count > 0      ? "--call-count"
                       : a->turns > 0           ? "--turns"
                       : a->user_turn != NULL   ? "--user-turn"
                       : a->barge_in != NULL    ? "--barge-in"
                       : a->barge_in_at != NULL ? "--barge-in-at"
                                                : NULL;
    const char *req = a->prompts_file != NULL ? "--prompts"
                      : a->conc != NULL       ? "-c"
                      : a->rates != NULL      ? "--rate"
                      : a->requests > 0       ? "--requests"
                      : a->duration > 0       ? "--duration"
                      : a->warmup > 0         ? "--warmup"
                      : a->max_conc > 0       ? "--max-concurrency"
                                              : NULL;
    if (a->convos == NULL) {
        if (only == NULL)
            return 0;
        tb_cli_error("bench: %s drives calls: it needs --conversations FILE|builtin", only);
        return TB_EINVAL;
    }
    if (req != NULL) {
        tb_cli_error("bench: %s is for one-shot requests; with --conversations give --calls, "
                     "--call-rate, --call-count, --turns",
                     req);
        return TB_EINVAL;
    }
    if (a->calls != NULL && a->call_rates != NULL) {
        tb_cli_error("bench: give --calls (closed loop) or --call-rate (open loop), not both");
        return TB_EINVAL;
    }
    if (a->q.req.api == TB_API_COMPLETIONS) {
        tb_cli_error("bench: --conversations sends chat messages: --api completions has none");
        return TB_EINVAL;
    }
    if (tb_uturn_parse(a->user_turn != NULL ? a->user_turn : TB_UTURN_DEFAULT, &a->uturn, err,
                       sizeof(err)) != 0) {
        tb_cli_error("--user-turn: %s", err);
        return TB_EINVAL;
    }
    if (tb_barge_at_parse(a->barge_in_at != NULL ? a->barge_in_at : TB_BARGE_AT_DEFAULT,
                          &a->barge_at, err, sizeof(err)) != 0) {
        tb_cli_error("--barge-in-at: %s", err);
        return TB_EINVAL;
    }
    if (a->barge_in_at != NULL && a->barge_in == NULL) {
        tb_cli_error("bench: --barge-in-at says when the caller interrupts: give --barge-in P");
        return TB_EINVAL;
    }
    return 0;
}

int tb_cli_bench_parse(int argc, char **argv, const struct tb_cmddoc *doc, struct tb_cli_bench *a)
{
    int rc;
    memset(a, 0, sizeof(*a));
    tb_cli_common_init(&a->c);
    tb_cli_audio_init(&a->au);
    tb_cli_request_init(&a->q, TB_CLI_BENCH_MAX_TOKENS);
    a->seed = 1;
    a->poisson = 1;
    a->html_streams = DEFAULT_HTML_STREAMS;
    tb_cli_tts_live_init(&a->tl);
    rc = tb_cli_parse(argc, argv, doc, option, a, NULL);
    if (rc == 0)
        rc = tb_cli_tts_apply(&a->c.tts, &a->c.o.seg, &a->c.o.play);
    if (rc == 0)
        rc = tb_cli_turn_apply(&a->c.turn, (uint64_t)a->seed, &a->c.o);
    if (rc == 0)
        rc = tb_cli_tts_live_resolve(&a->tl, "bench");
    if (rc == 0 && a->tl.url != NULL)
        rc = tb_cli_turn_measured(&a->c.turn, "--tts-url");
    if (rc == 0 && a->tl.url != NULL)
        rc = tb_cli_tts_live_no_model(&a->c.tts, "bench");
    if (rc != 0)
        return rc;
    if (a->tts_capacity > 0 && a->tl.url == NULL) {
        tb_cli_error("bench: --tts-capacity shares a real TTS's slots (--tts-url); a modelled "
                     "TTS's shared capacity is sweep's --tts-capacity");
        return TB_EINVAL;
    }
    if (a->tl.url != NULL && a->au.sink != TB_SINK_NONE) {
        tb_cli_error("bench: --tts-url: --audio replays a stream with eSpeak NG; bench does not "
                     "keep the TTS's audio (run --tts-url plays and keeps it; --html draws the "
                     "measured arrivals)");
        return TB_EINVAL;
    }
    if (a->conc != NULL && a->rates != NULL) {
        tb_cli_error("bench: give -c (closed loop) or --rate (open loop), not both");
        return TB_EINVAL;
    }
    if (a->max_conc > 0 && a->rates == NULL) {
        tb_cli_error("bench: --max-concurrency applies to --rate (with -c the level is the cap)");
        return TB_EINVAL;
    }
    if (a->requests > 0 && a->duration > 0) {
        tb_cli_error("bench: give --requests or --duration, not both");
        return TB_EINVAL;
    }
    if (a->au.espeak) {
        tb_cli_error("bench: --voice-model %s: bench measures every stream with the rate model; "
                     "replay its traces with sim --voice-model %s",
                     a->au.count_synthesis ? "espeak+synthesis" : "espeak",
                     a->au.count_synthesis ? "espeak+synthesis" : "espeak");
        return TB_EINVAL;
    }
    rc = calls_check(a);
    if (rc == 0)
        rc = tb_cli_retry_check(&a->retry);
    if (rc == 0)
        rc = tb_cli_tool_apply(&a->tool, (uint64_t)a->seed, a->convos != NULL);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < a->ngates; i++)
        if (a->gates[i].goodput && a->slo.set == 0) {
            tb_cli_error("--require %s: goodput needs SLOs: give --slo (e.g. --slo ttfa_s=0.8 "
                         "--slo gapless)",
                         a->gates[i].name);
            return TB_EINVAL;
        }
    if (a->c.fail_on_underrun && a->ngates < TB_CLI_GATES_MAX)
        tb_cli_gate_parse("gapless=1", &a->gates[a->ngates++]);
    tb_cli_gates_default(a->gates, &a->ngates);
    return 0;
}

/* The shard: --shard, else an index from Kubernetes or Slurm with
 * --shards, else 0/1.  0 or TB_EINVAL / TB_ERANGE (printed). */
static int pick_shard(const struct tb_cli_bench *a, uint32_t *i, uint32_t *n)
{
    const char *envs[] = {"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"};
    char err[200];
    *i = 0;
    *n = 1;
    if (a->shard != NULL)
        return parse_shard(a->shard, i, n);
    if (a->shards == 0)
        return 0;
    for (size_t k = 0; k < 2; k++) {
        const char *v = getenv(envs[k]);
        size_t z;
        if (v == NULL || v[0] == '\0')
            continue;
        if (tb_cli_number_size(envs[k], v, 0, a->shards - 1, &z, err, sizeof(err)) != 0) {
            tb_cli_error("%s (with --shards %zu)", err, a->shards);
            return TB_EINVAL; /* the environment's value, not the caller's */
        }
        *i = (uint32_t)z;
        *n = (uint32_t)a->shards;
        return 0;
    }
    tb_cli_error("--shards %zu: no index in $JOB_COMPLETION_INDEX or $SLURM_ARRAY_TASK_ID "
                 "(give --shard I/N)",
                 a->shards);
    return TB_EINVAL;
}

/* Builds the level list.  0 or TB_EINVAL / TB_ERANGE (printed). */
static int levels_of(const struct tb_cli_bench *a, struct tb_bench_meta *m)
{
    double v[TB_BENCH_LEVELS_MAX];
    uint32_t n;
    int rc;
    const char *flag = a->rates != NULL ? "--rate" : "-c";
    if (a->convos != NULL && a->call_rates != NULL) {
        flag = "--call-rate";
        if ((rc = parse_list(flag, a->call_rates, 0.001, 1e6, 0, v, &n)) != 0)
            return rc;
        for (uint32_t i = 0; i < n; i++) {
            m->levels[i].mode = TB_BENCH_CALLS_POISSON;
            m->levels[i].rate = v[i];
            m->levels[i].concurrency = 0;
        }
    } else if (a->convos != NULL) {
        flag = "--calls";
        if ((rc = parse_list(flag, a->calls != NULL ? a->calls : "1", 1, TB_BENCH_CONC_MAX, 1, v,
                             &n)) != 0)
            return rc;
        for (uint32_t i = 0; i < n; i++) {
            m->levels[i].mode = TB_BENCH_CALLS;
            m->levels[i].concurrency = (uint32_t)v[i];
            m->levels[i].rate = 0;
        }
    } else if (a->rates != NULL) {
        if ((rc = parse_list("--rate", a->rates, 0.001, 1e6, 0, v, &n)) != 0)
            return rc;
        for (uint32_t i = 0; i < n; i++) {
            m->levels[i].mode = a->poisson ? TB_BENCH_POISSON : TB_BENCH_CONSTANT;
            m->levels[i].rate = v[i];
            m->levels[i].concurrency = (uint32_t)a->max_conc;
        }
    } else {
        if ((rc = parse_list("-c", a->conc != NULL ? a->conc : DEFAULT_LEVELS, 1, TB_BENCH_CONC_MAX,
                             1, v, &n)) != 0)
            return rc;
        for (uint32_t i = 0; i < n; i++) {
            m->levels[i].mode = TB_BENCH_CLOSED;
            m->levels[i].concurrency = (uint32_t)v[i];
            m->levels[i].rate = 0;
        }
    }
    m->nlevels = n;
    /* Every output names a level (c=10): one name, one level. */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < i; j++) {
            char x[64], y[64];
            tb_bench_level_name(&m->levels[i], x, sizeof(x));
            tb_bench_level_name(&m->levels[j], y, sizeof(y));
            if (strcmp(x, y) == 0) {
                tb_cli_error("%s: the level %s is given twice", flag, x);
                return TB_EINVAL;
            }
        }
    return 0;
}

int tb_cli_bench_plan(const struct tb_cli_bench *a, struct tb_bench_meta *m)
{
    int rc = levels_of(a, m);
    m->slo = a->slo;
    return rc != 0 ? rc : pick_shard(a, &m->shard, &m->nshards);
}
