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
 * --trace` computes on the stream's trace (tested); or, with drop_streams
 * (below), as its request ends, and the stream is then dropped.
 *
 * Requests carry a global id 0, 1, 2, ...; shard I of N runs the ids
 * congruent to I mod N, so N shards together run exactly the ids one run
 * would, with the same prompts (prompt id mod nprompts).  A shard runs its
 * share of the load: concurrency c*(I+1)/N - c*I/N (at least 1), rate R/N.
 *
 * The module's parts have headers of their own, which this one includes:
 * the prompt set (bench_prompts.h), calls (bench_calls.h), the records and
 * their files (bench_rec.h), the SLOs a record is good against
 * (bench_slo.h), a level's summary (bench_stats.h).
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

#include "ttsbuf/api.h"
#include "ttsbuf/bench_calls.h"
#include "ttsbuf/bench_prompts.h"
#include "ttsbuf/bench_rec.h"
#include "ttsbuf/bench_stats.h"
#include "ttsbuf/convo.h"
#include "ttsbuf/http.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/ttsnet.h"

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

struct tb_bench_progress {
    double t;        /* seconds since the level started */
    size_t started;  /* measured requests started (warm-up excluded);
                      * calls: the calls started */
    size_t done;     /* measured requests ended; calls: the calls ended */
    size_t target;   /* measured requests to run (0 in --duration mode);
                      * calls: the calls to run */
    size_t inflight; /* transfers running, warm-up included */
    size_t errors;
    uint64_t events; /* deltas received (measured requests) */
    int warmup;      /* still in warm-up */
    /* Calls (calls 1; 0 for requests): the calls started and not ended,
     * by what they wait for at t: a turn's answer from the model (its
     * request in flight), the answer to be spoken (its playback by the
     * playout model not over), the caller (speaking before the next
     * turn); and the turns ended and the turns to run in all (those of
     * the calls still to run counted whole, those of a call that ended
     * early as they ran), from which a caller can tell the time left. */
    int calls;
    size_t waiting_model, speaking, listening;
    size_t turns_done, turns_target;
};
typedef void (*tb_bench_progress_fn)(void *ud, const struct tb_bench_progress *p);

/*
 * Retries (bench --retry): what a stream does when the server refuses it
 * with 429, or 503 with a Retry-After header.  NONE: the refusal is the
 * record's error.  AFTER: it waits what Retry-After says (delta-seconds;
 * 1 s without one, at most TB_BENCH_RETRY_AFTER_CAP) and sends the same
 * request again.  EXP: it waits U x min(max, base x 2^k) before the
 * (k+1)-th retry, U uniform in [0, 1) drawn from (seed, the request's
 * id, k) alone ("full jitter": the same seed, the same waits, whatever
 * the order streams end in), Retry-After not read.  At most max_retries
 * retries; the last refusal is then the record's error.  A waiting stream
 * keeps its place among those in flight (the level's concurrency), and
 * its record's times (ttft, ...) count from its first attempt's send
 * (t_start).
 */
enum tb_bench_retry_kind { TB_BENCH_RETRY_NONE = 0, TB_BENCH_RETRY_AFTER, TB_BENCH_RETRY_EXP };
#define TB_BENCH_RETRY_AFTER_CAP 60.0 /* s: the longest Retry-After honoured */
#define TB_BENCH_RETRY_EXP_BASE 0.5   /* exp's defaults, s */
#define TB_BENCH_RETRY_EXP_MAX 8.0
#define TB_BENCH_RETRY_MAX_DEFAULT 5u /* max_retries 0: this */

struct tb_bench_retry {
    enum tb_bench_retry_kind kind;
    double base, max;     /* EXP, s: base > 0, max >= base */
    unsigned max_retries; /* 1..TB_BENCH_RETRIES_MAX; 0: the default */
};

/* The wait before retry k (from 0) of request id, s: AFTER's
 * (retry_after s, < 0: none) or EXP's draw (above).  Pure; any thread. */
double tb_bench_retry_wait(const struct tb_bench_retry *r, uint64_t seed, uint64_t id, unsigned k,
                           double retry_after);

struct tb_capq;

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
    /* A real TTS per stream (below), or NULL.  Its clock, origin, secrets,
     * callbacks and cancel flag are set by the run. */
    const struct tb_ttsnet_opts *tts;
    /* With tts and calls: plays a turn's record with its measured TTS as
     * soon as the turn's TTS has ended (the caller's replay, src/cli:
     * replay.h), before its call goes on: the answer's measured playout
     * says when the caller speaks next.  Returns 0 or a TB_E* code (the
     * call then ends).  On the loop's thread; NULL: the model's playout. */
    int (*tts_replay)(void *ud, struct tb_bench_rec *rec);
    void *tts_replay_ud;
    /* Calls (level.mode TB_BENCH_CALLS or TB_BENCH_CALLS_POISSON;
     * bench_calls.h): the conversations, the measured calls over all
     * shards, the turns per call (0: every turn of the conversation) and
     * the caller's speaking time.  Calls take no prompts, warm-up or
     * duration; with a TTS each turn's speech ends before its call goes
     * on (tts_replay). */
    const struct tb_convos *convos;
    size_t calls;
    size_t turns;
    struct tb_uturn user_turn;
    /* Barge-in (calls only; bench_calls.h): the probability that the
     * caller interrupts a turn (0: never, and nothing of it runs) and
     * when, in seconds of playback after the turn's first audio. */
    double barge_in;
    struct tb_uturn barge_at;
    /* Tool calls (calls only; bench_calls.h, Tool calls): the tool's wait
     * after a call (borrowed; drawn per call and turn from seed; NULL: no
     * wait), and the filler phrase spoken from the call's start (NULL:
     * none) by the modelled TTS. */
    const struct tb_ttslat *tool_latency;
    const char *filler;
    /* Loop threads (bench.h): 0 auto, else 1..TB_BENCH_THREADS_MAX. */
    unsigned threads;
    /* What the records keep of their streams.  0: every record keeps its
     * stream (every delta and its text), played out when the level ends,
     * for what needs the streams afterwards (traces, a page, a replay, a
     * real TTS's measured log).  1: each stream is played out
     * (tb_bench_analyze, on the loop's thread) as its request ends and is
     * then dropped, its memory reused by the next request: a record keeps
     * its fixed fields and the inter-event gaps (itl) alone, so a long run
     * grows by the record, not by the stream; with fold (below) not even
     * by that (ttsbuf(1), BENCH, Memory).
     * Ignored (streams kept) with a real TTS (tts). */
    int drop_streams;
    /* With drop_streams: called with each record as its request ends,
     * played out, its stream still in it (rec->stream), before the stream
     * is dropped, so that the caller can write both out (bench --out);
     * NULL: none.  On the loop's thread, and only for a level on one loop
     * (tb_bench_threads 1) without a real TTS: a level on several loops
     * appends its records in order of id when it ends, so with a callback
     * it keeps every stream (drop_streams ignored) and calls none, and the
     * caller writes them then.  A non-zero return (a negative TB_E* code)
     * stops the level with that error. */
    int (*record)(void *ud, struct tb_bench_rec *rec);
    void *record_ud;
    /* With drop_streams, for a caller that reads no record after the run
     * but the level's summary: each ok record of a request outside calls
     * is folded into its level's summary as its request ends and dropped
     * (tb_bench_recs_fold with slo, the SLOs the summary will judge by;
     * NULL: none), so the memory of a long run stays flat (ttsbuf(1),
     * BENCH, Memory).  Failed records and calls' turns are kept.  Ignored
     * where drop_streams is, and on several loops with a record
     * callback. */
    int fold;
    const struct tb_bench_slo *slo;
    struct tb_bench_retry retry; /* zero: none (above) */
    /* At most N LLM requests in flight across every stream and call of
     * the run (bench --llm-capacity; capq.h, shared by every loop thread,
     * borrowed), or NULL: none.  A request over it waits first come,
     * first served, its clock already running (ttft includes the wait, as
     * a retry's does), and holds its slot from its grant to its end (its
     * retries included); its record says the wait (llm_wait). */
    struct tb_capq *llm_capacity;
};

/*
 * Barge-in, in real time (calls with barge_in > 0).  A turn drawn to be
 * interrupted b seconds into its playback has its own segmenter (the
 * level's chunk policy) and playout engine (its playout options), fed on
 * the loop's thread after each wake-up with the content events that came
 * since (at their arrival times; a time-based policy's timer ticked at
 * the wake-up), exactly as tb_bench_analyze segments and plays the
 * stream: once the engine says playback has started (s_1, from the
 * request's start) the interruption is due at T = t_start + s_1 + b
 * (level time), and the loop wakes for it.  Only the streams with a
 * barge-in pending pay for this (one chunk list each; O(those streams)
 * per wake-up).  At T a stream still in flight is cancelled as agents do:
 * its transfer is removed from the multi handle with the connection
 * forbidden for reuse, so libcurl closes the socket then; the record
 * keeps when the decision was made (barge.cancel_s, level time, and
 * barge.cancel_mono_s, CLOCK_MONOTONIC seconds, the clock `serve --log`
 * writes), its end is "interrupted" with no error (the caller ended it:
 * not a failure, and its call goes on), and its stream holds what
 * arrived by then.  A stream that ended before T is interrupted when its
 * playback (play_end) goes on past T; with playback over by T, or no
 * first audio at all, the turn is not interrupted.  What the caller heard
 * and did not is tb_heard_at on the record's stream at T (heard.h); an
 * interrupted turn's gap fields are the gaps heard before T (heard.h's
 * *_before), its min_tps and speedup NaN.  An
 * interrupted turn's next turn is sent at T + user_turn(k+1).
 * Every turn of a call carries "X-Ttsbuf-Request-Id: cCALL.tTURN", and
 * every other request "X-Ttsbuf-Request-Id: rID", so a server's log
 * (serve --log) can be joined to the records, and `ttsbuf serve` draws
 * the same stream for the same request in every level and run of a seed
 * (serve.h's Streams).
 */

/*
 * A real TTS per stream (opts.tts): each measured stream has its own
 * segmenter (opts.sim.seg, the policy `run`'s drain uses) and its own
 * TTS client (ttsnet.h).  After each wake-up of the loop, the content
 * events that came since are fed to the segmenter (at their arrival
 * times; a time-based policy's deadline is ticked at the wake-up), and
 * each chunk it closes goes to that stream's client at once: sent when
 * the client's order allows (in order, at most N in flight per stream).
 * The clients run on the loop's thread and are stepped without waiting
 * (tb_ttsnet_step, timeout 0) at each wake-up; while any TTS transfer is
 * open the loop wakes at least every millisecond, so a TTS byte is
 * stamped at most about a millisecond late and no stream's LLM bytes wait
 * for a TTS transfer.  Times are the stream's: seconds from its request's
 * start (the record's event times).  When the LLM stream ends its last
 * chunk is closed and the stream's slot is free for the next request
 * (the load is the LLM's); its TTS goes on until every chunk has ended
 * (its own timeouts; cancel stops them), and then the client's log moves
 * into the record's stream (stream.tts).  A chunk that failed ("http",
 * "cut", "timeout", "transport", "format") makes the record failed with
 * error TB_READER_TTS and a message "TTS chunk J: KIND[ STATUS]:
 * MESSAGE" (never the key), unless the LLM stream failed first;
 * everything measured is kept.  A dead TTS (tb_tts_log_dead, ttsmeas.h:
 * it refused the connection, or failed before the stream had any audio)
 * stops that stream's LLM transfer at the wake-up that sees it, as a
 * barge-in closes one (the connection not reused): its record fails
 * with error TB_READER_TTS and tb_tts_log_dead's message, its stream
 * ends then.  Warm-up streams send nothing to the TTS.
 * The records' playout is still the model's (tb_bench_analyze): the
 * caller replays each stream's measured log (src/cli: replay.h).
 */

/*
 * Loop threads (opts.threads).  A level may run on several event loops,
 * each on its own thread with its own multi handle, epoll set and
 * sockets: thread j runs the level as sub-shard (shard + j * nshards) of
 * (nshards * threads), exactly as that many `--shard` processes would
 * split it (requests and calls by id, the streams in flight and the rate
 * by share, the warm-up and the memory cap (held_max) split evenly), so
 * connection setup and every stream's work are spread over the threads
 * and no socket waits for another thread's burst.  With no warm-up every
 * thread's level time has one origin, the run's start; with a warm-up
 * each thread's starts when its own warm-up ends, as a shard's does.  The
 * records of all threads are appended to out in order of id (as `merge`
 * orders them); the progress callback still runs on the calling thread,
 * with the threads' counts summed; a thread that fails stops the others
 * (as the cancel flag does) and the run returns its error.  0 (auto): one
 * thread per online CPU (at most TB_BENCH_THREADS_AUTO_MAX) when this
 * shard's level holds TB_BENCH_THREADS_AT streams or calls at once or
 * more (-c, --calls, the cap of --rate, or the calls of --call-rate),
 * else one; never more threads than streams or calls.  One thread is
 * today's single loop, unchanged.
 */
#define TB_BENCH_THREADS_MAX 16u
#define TB_BENCH_THREADS_AUTO_MAX 8u
#define TB_BENCH_THREADS_AT 512u

/* The threads a level of o runs on (o->threads resolved as above).  Pure
 * but for the CPU count; any thread. */
unsigned tb_bench_threads(const struct tb_bench_opts *o);

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

#endif
