/*
 * bench.h - `ttsbuf bench`: many streams at once against one endpoint,
 * each played out through its own playout model, summarised per load
 * level with percentiles that merge exactly across shards.
 *
 * One level is one load: a closed loop (`concurrency` streams in flight,
 * a new request as soon as one ends) or an open loop (requests arrive at
 * `rate` per second, Poisson or evenly spaced, optionally capped at
 * `concurrency` in flight: an arrival that finds the cap full waits, and
 * its wait is in its record).  Every transfer runs in one thread on
 * libcurl's multi interface (curl_multi_socket_action over epoll: no thread
 * per stream).  A body read is stamped with the time the loop woke up for
 * it (the moment its bytes were known to be there), so a loop busy with a
 * thousand other streams does not make an event look later than it was.
 * Times are seconds on the monotonic clock; a record's event times are
 * relative to its own request's start, as in `ttsbuf run`.
 *
 * When the level has ended, each stream is played out by tb_sim_run on a
 * virtual clock with the caller's options: exactly what `ttsbuf sim
 * --trace` computes on the stream's trace (tested).
 *
 * Requests carry a global id 0, 1, 2, ...; shard I of N runs the ids
 * congruent to I mod N, so N shards together run exactly the ids one run
 * would, with the same prompts (prompt id mod nprompts).  A shard runs its
 * share of the load: concurrency c*(I+1)/N - c*I/N (at least 1), rate R/N.
 *
 * The summary (tb_bench_summarize) is a pure function of the records, and
 * independent of their order: merging shards' records gives exactly the
 * summary one process with the same records gives.
 *
 * Threads: tb_bench_run runs in the calling thread; the cancel flag may be
 * set from any thread or a signal handler.  Ownership: the caller owns the
 * records (tb_bench_recs_free).
 */
#ifndef TTSBUF_BENCH_H
#define TTSBUF_BENCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ttsbuf/http.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stats.h"
#include "ttsbuf/stream.h"

#define TB_BENCH_CONC_MAX 10000     /* streams in flight */
#define TB_BENCH_PROMPTS_MAX 100000 /* lines of a --prompts file */
#define TB_BENCH_PROMPT_MAX (1u << 20)
/* What bench keeps of the streams it receives, all of them together: the
 * ones in flight and every record's (the records it is given included, so
 * over every level), counted as a loaded trace is, 32 bytes an event plus
 * its text.  Each stream has its own caps as well (reader.h: 1,000,000
 * deltas, 256 MiB of text).  A delta that takes the total past this stops
 * its stream there (too_long, the message naming the total): a few
 * flooding streams cannot take the machine's memory, one costing about
 * 170 MB with its replay at the per-stream cap.  2 GiB hold about 110,000
 * answers of 500 tokens. */
#define TB_BENCH_HELD_MAX ((uint64_t)2 << 30)

enum tb_bench_mode {
    TB_BENCH_CLOSED = 0, /* `concurrency` in flight */
    TB_BENCH_POISSON,    /* open loop, exponential inter-arrival times */
    TB_BENCH_CONSTANT    /* open loop, evenly spaced arrivals */
};

/* A prompt: a user message, or a JSON array of chat messages. */
struct tb_bench_prompt {
    char *prompt;        /* owned; NULL when messages is set */
    char *messages_json; /* owned; NULL when prompt is set */
};

struct tb_bench_prompts {
    struct tb_bench_prompt *v;
    size_t n;
};

/* The built-in set: varied questions a voice assistant gets.  Returns 0 or
 * TB_ENOMEM.  Any thread. */
int tb_bench_prompts_builtin(struct tb_bench_prompts *p);

/*
 * tb_bench_prompts_load - a JSONL file, one object a line:
 * {"prompt": "..."} or {"messages": [...]}; blank lines skipped.  Returns
 * 0; TB_EFORMAT ("FILE:LINE: reason"), TB_ETOOBIG (a line over
 * TB_BENCH_PROMPT_MAX, more than TB_BENCH_PROMPTS_MAX lines), TB_EEMPTY,
 * TB_EIO, TB_ENOMEM; detail in err.
 */
int tb_bench_prompts_load(const char *path, struct tb_bench_prompts *p, char *err, size_t errlen);
void tb_bench_prompts_free(struct tb_bench_prompts *p); /* NULL is a no-op */

struct tb_bench_level {
    enum tb_bench_mode mode;
    uint32_t concurrency; /* closed: in flight; open: cap (0: none) */
    double rate;          /* open: requests per second */
};

/* "c=10", "rate=5/s (poisson)", "rate=5/s (constant, max 8)". */
void tb_bench_level_name(const struct tb_bench_level *l, char *out, size_t outlen);

struct tb_bench_progress {
    double t;        /* seconds since the level started */
    size_t started;  /* measured requests started (warm-up excluded) */
    size_t done;     /* measured requests ended */
    size_t target;   /* measured requests to run; 0 in --duration mode */
    size_t inflight; /* transfers running, warm-up included */
    size_t errors;
    uint64_t events; /* deltas received (measured requests) */
    int warmup;      /* still in warm-up */
};
typedef void (*tb_bench_progress_fn)(void *ud, const struct tb_bench_progress *p);

struct tb_bench_opts {
    struct tb_http_req http;   /* url, key, headers, timeouts, cancel; body per request */
    struct tb_api_request req; /* the template; prompt/messages come from prompts */
    const struct tb_bench_prompts *prompts;
    struct tb_bench_level level; /* the whole load (this shard runs its share) */
    size_t requests;             /* measured requests over all shards; 0: --duration */
    double duration;             /* s; no request starts after it (0: none) */
    size_t warmup;               /* requests before, not recorded */
    uint32_t shard, nshards;     /* this shard, of nshards (1: all) */
    uint64_t seed;               /* Poisson arrivals */
    struct tb_sim_opts sim;
    uint64_t held_max;             /* bytes of streams kept in all (0:
                                    * TB_BENCH_HELD_MAX) */
    double progress_interval;      /* s; 0: 0.1 */
    tb_bench_progress_fn progress; /* on the calling thread, or NULL */
    void *progress_ud;
};

/* One request: what the summary needs, and the stream it received. */
struct tb_bench_rec {
    uint32_t level;                 /* caller's level index */
    uint64_t id;                    /* global request id */
    uint32_t prompt;                /* index into the prompt set */
    double t_sched, t_start, t_end; /* s since the level started */
    int error;                      /* enum tb_reader_error; 0: ok */
    int end;                        /* how the stream ended (enum tb_end,
                                     * stream.h): its class counts it as
                                     * complete, cut off or failed */
    char message[256];              /* one line when error != 0 */
    char warning[128];              /* one line worth saying even on success (a
                                     * stream with a finish reason but no end
                                     * marker: reader.h), or "" */
    long http_status;
    uint64_t events, content_tokens; /* content events and their tokens */
    long long usage_tokens;          /* usage.completion_tokens, -1 unknown */
    long long usage_ignored;         /* usage not credible beside the events
                                      * (tb_stream_usage_credible), or -1 */
    uint64_t surrogates_replaced;    /* lone UTF-16 halves made U+FFFD */
    /* Playout of the stream (NaN when there is no content event). */
    double ttft, ttfa, decode_tps, decode_tps_usage;
    uint32_t underruns;
    double gap_total, gap_max, min_tps, speedup;
    double *itl; /* inter-event gaps between content events (events-1) */
    size_t nitl;
    struct tb_stream stream; /* every delta, arrival times from t_start;
                              * empty for records read back from a file */
};

struct tb_bench_recs {
    struct tb_bench_rec *v;
    size_t n, cap;
};

void tb_bench_recs_init(struct tb_bench_recs *r);
void tb_bench_recs_free(struct tb_bench_recs *r); /* NULL is a no-op */
/* Appends a cleared record (error 0, NaN metrics, usage -1); returns it,
 * or NULL (out of memory). */
struct tb_bench_rec *tb_bench_recs_add(struct tb_bench_recs *r);

/* How many records carry a warning; *first (first may be NULL) the first
 * one's text, or NULL when none does.  The text is the record's.  Pure;
 * any thread. */
size_t tb_bench_recs_warned(const struct tb_bench_recs *r, const char **first);

/*
 * tb_bench_analyze - fills a record's playout fields from its stream
 * (tb_sim_run on a virtual clock with o, as `ttsbuf sim --trace` does).
 * Returns 0, TB_ENOMEM, or the simulator's error (TB_ETOOBIG: an event
 * over the ring; detail in err).  A stream with no content event leaves
 * the metrics NaN and returns 0.
 */
int tb_bench_analyze(struct tb_bench_rec *rec, const struct tb_sim_opts *o, char *err,
                     size_t errlen);

/*
 * tb_bench_run - runs one level to its end (or until *http.cancel),
 * appending this shard's measured requests to out with `level` as their
 * level index, each analysed.  Returns 0 when the level ran (requests
 * that failed are records with an error; a cancelled level returns 0 with
 * what it finished and the cut ones marked cancelled); TB_EINVAL for bad
 * options (err says which); TB_ENOMEM; TB_EIO (epoll, libcurl).
 */
int tb_bench_run(const struct tb_bench_opts *o, uint32_t level, struct tb_bench_recs *out,
                 char *err, size_t errlen);

/* The metrics summarised per level. */
enum tb_bench_metric {
    TB_BM_TTFT = 0,
    TB_BM_TTFA,
    TB_BM_TPS,       /* decode TPS by events */
    TB_BM_TPS_USAGE, /* decode TPS by usage tokens */
    TB_BM_ITL,       /* inter-event gap, every gap of every stream */
    TB_BM_UNDERRUNS,
    TB_BM_GAP_TOTAL,
    TB_BM_GAP_MAX,
    TB_BM_MIN_TPS,
    TB_BM_SPEEDUP,
    TB_BM__COUNT
};

/* The metric's name in every output (JSON key, CSV column prefix, gate):
 * "ttft_s", "ttfa_s", "decode_tps", "decode_tps_usage", "itl_s",
 * "underruns", "gap_total_s", "gap_max_s", "min_tps", "speedup_needed";
 * and its unit for human tables ("s", "tok/s", "", "x"). */
const char *tb_bench_metric_name(enum tb_bench_metric m);
const char *tb_bench_metric_unit(enum tb_bench_metric m);
/* 1 when larger is better (the decode rates): their bad tail is the low
 * one, p5 (p95 is the high tail for every metric). */
int tb_bench_metric_higher_better(enum tb_bench_metric m);

struct tb_bench_summary {
    size_t requests, ok;
    size_t errors[TB_READER__COUNT];    /* by enum tb_reader_error (0 unused) */
    size_t incomplete, failed;        /* the errors by their end: cut off
                                       * (interrupted, connection lost, a
                                       * timeout, a cap) or failed (an HTTP
                                       * or stream error) */
    size_t gapless;                   /* ok streams with no underrun */
    double gapless_share;             /* gapless / ok (0 when ok == 0): a
                                       * cut-off or failed stream is never
                                       * in it */
    double success_share;             /* ok / requests */
    uint64_t events, tokens;          /* content events; tokens (usage when known
                                       * and credible, else the events' tokens) */
    size_t usage_ignored;             /* ok requests whose usage was not credible */
    uint64_t surrogates_replaced;     /* lone UTF-16 halves made U+FFFD */
    double span;                      /* first start to last end, s */
    double system_tps;                /* tokens / span */
    struct tb_stats m[TB_BM__COUNT];
};

/*
 * tb_bench_summarize - the summary of the records with level index
 * `level`.  Each metric is a statistics block (stats.h) over the records
 * that have the quantity: a failed request's partial stream counts where
 * it was measured (its TTFT, its gaps so far); min_tps and speedup_needed
 * exist for complete answers only.  Order-independent and exact: the same
 * records give the same bits.  Returns 0 or TB_ENOMEM.
 */
int tb_bench_summarize(const struct tb_bench_recs *r, uint32_t level, struct tb_bench_summary *out);

/* What a records file says about the run that wrote it. */
struct tb_bench_meta {
    uint32_t shard, nshards;
    uint32_t nlevels;
    struct tb_bench_level levels[64];
    char options[512];       /* the playout options: a JSON object's canonical text
                              * (cJSON unformatted); must match to merge */
    char started_at[32];     /* UTC RFC 3339, when the run began */
    char ttsbuf_version[32]; /* of the ttsbuf that wrote the records */
    char model[128];
    char base_url[256]; /* redacted */
    char provider[16];  /* "mock" (the built-in mock), "remote", or "" */
};
#define TB_BENCH_LEVELS_MAX 64
#define TB_BENCH_SHARDS_MAX 100000 /* the N of --shard I/N */
#define TB_BENCH_RECORDS_SCHEMA "ttsbuf.bench_records"
/* 1: the "ttsbuf_bench": 1 header; 2: a record's level is its index. */
#define TB_BENCH_RECORDS_VERSION 3

/*
 * tb_bench_write_header / tb_bench_write_rec - the records file (JSONL,
 * schema ttsbuf.bench_records version TB_BENCH_RECORDS_VERSION, files
 * schema/bench_records_header.schema.json and bench_record.schema.json):
 * a header line with the meta, then one line per record, which names its
 * level as tb_bench_level_name does ("level": "c=10"; m is the header's
 * meta).  Numbers are printed so that they read back bit-identical.
 * `trace` is the record's trace file name relative to the records file,
 * or NULL.  Returns 0, TB_EINVAL (rec's level is not one of m's),
 * TB_ENOMEM or TB_EIO.
 */
int tb_bench_write_header(FILE *f, const struct tb_bench_meta *m);
int tb_bench_write_rec(FILE *f, const struct tb_bench_meta *m, const struct tb_bench_rec *rec,
                       const char *trace);

/*
 * tb_bench_read - reads a records file (version 2, whose records give
 * their level's index, or TB_BENCH_RECORDS_VERSION), appending its
 * records to out and its header to *m.  Returns 0; TB_EFORMAT
 * ("FILE:LINE: reason"; a header with two levels of one name; a file of
 * another schema version is refused, the message naming both),
 * TB_ETOOBIG (a line over TB_TRACE_LINE_MAX), TB_EIO, TB_ENOMEM.
 */
int tb_bench_read(const char *path, struct tb_bench_meta *m, struct tb_bench_recs *out, char *err,
                  size_t errlen);

/* tb_bench_read on an open stream, `name` in messages (f is not closed).
 * Lines are read one at a time: memory stays bounded on any input. */
int tb_bench_read_stream(FILE *f, const char *name, struct tb_bench_meta *m,
                         struct tb_bench_recs *out, char *err, size_t errlen);

#endif
