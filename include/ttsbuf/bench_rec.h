/*
 * bench_rec.h - `ttsbuf bench` records: a load level's definition, each
 * request's record (what the summary needs, the stream received and its
 * playout), and the records file they are written to and read back from
 * (`ttsbuf merge`), with numbers that read back bit-identical
 * (bench_rec.c).
 *
 * Threads: any, one caller per records list.  Ownership: the caller owns
 * the records (tb_bench_recs_free) and the streams in them (a record's
 * stream is its own allocation, or NULL once dropped).
 */
#ifndef TTSBUF_BENCH_REC_H
#define TTSBUF_BENCH_REC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ttsbuf/bench_slo.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/turnlat.h"

#define TB_BENCH_CONC_MAX 10000 /* streams in flight */
#define TB_BENCH_RETRIES_MAX 10 /* retries a request makes, at most (bench.h) */

enum tb_bench_mode {
    TB_BENCH_CLOSED = 0, /* `concurrency` in flight */
    TB_BENCH_POISSON,    /* open loop, exponential inter-arrival times */
    TB_BENCH_CONSTANT,   /* open loop, evenly spaced arrivals */
    /* Calls (bench --conversations, bench.h): conversations whose turns
     * are sent on the speech clock. */
    TB_BENCH_CALLS,        /* `concurrency` calls at once (closed loop) */
    TB_BENCH_CALLS_POISSON /* calls arrive at `rate` per second, Poisson */
};

struct tb_bench_level {
    enum tb_bench_mode mode;
    uint32_t concurrency; /* closed: in flight; open: cap (0: none) */
    double rate;          /* open: requests per second */
};

/* "c=10", "rate=5/s (poisson)", "rate=5/s (constant, max 8)"; calls:
 * "calls=10", "calls=0.5/s (poisson)". */
void tb_bench_level_name(const struct tb_bench_level *l, char *out, size_t outlen);

/* One request: what the summary needs, and the stream it received. */
struct tb_bench_rec {
    uint32_t level;  /* caller's level index */
    uint64_t id;     /* global request id */
    uint32_t prompt; /* index into the prompt set (a call's
                      * turn: its conversation's index) */
    /* A call's turn (bench --conversations): the call's global id and the
     * turn's index in it, from 0; both -1 for a one-shot request. */
    int64_t call;
    int32_t turn;
    /* A call's turn: when its answer finished playing by the playout
     * model, s from its request's start (playout.h's e_m); NaN when
     * nothing played or for a one-shot request. */
    double play_end;
    /* Barge-in (a call run with --barge-in; barge 0: none, and the keys
     * are not written): whether the caller interrupted the turn, when (T,
     * s from the request's start; NaN when not), and, read at T by
     * tb_heard_at (the whole answer when not interrupted): the content
     * tokens received, those never spoken, the code points given to the
     * TTS and not all played.  cancel_s (level time) and cancel_mono_s
     * (CLOCK_MONOTONIC seconds): when the stream was closed, for a turn
     * still in flight at T; NaN otherwise.  With a real TTS (--tts-url),
     * for an interrupted turn (NaN otherwise; ttsbuf-model(7), Barge-in):
     * barge_tts_close, T to the end of its last TTS stream (its log's
     * latest chunk end; 0 when every one had ended before T); barge_inflight,
     * the seconds of audio received by T and not yet played then; and
     * barge_stop, T to the last audio the caller heard, the player
     * flushing at T what it had not yet handed to the device
     * (min(barge_inflight, TB_BARGE_OUTBUF_S)). */
    int barge, interrupted;
    double barge_in;
    uint64_t tokens_received, tokens_unheard, chars_unplayed;
    double cancel_s, cancel_mono_s;
    double barge_tts_close, barge_inflight, barge_stop;
    double t_sched, t_start, t_end; /* s since the level started */
    int error;                      /* enum tb_reader_error; 0: ok */
    int end;                        /* how the stream ended (enum tb_end,
                                     * stream.h): its class counts it as
                                     * complete, cut off or failed */
    /* One line when error != 0, else ""; and one line worth saying even
     * on success (a stream with a finish reason but no end marker:
     * reader.h), or "".  Never NULL; set by tb_bench_rec_message and
     * tb_bench_rec_warning (owned; "" holds no memory). */
    const char *message;
    const char *warning;
    long http_status;
    /* Refusals (bench --retry, bench.h): those the request met (429, or
     * 503 with Retry-After), and the wait before each retry, s (nretries
     * of them; refusals is nretries, or one more when the last refusal
     * ended it). */
    uint32_t refusals, nretries;
    /* bench --llm-capacity: the request's wait for a slot, s; NAN without
     * one (and for a request stopped while it waited). */
    double llm_wait;
    double retry_wait[TB_BENCH_RETRIES_MAX];
    uint64_t events, content_tokens; /* content events and their tokens */
    long long usage_tokens;          /* usage.completion_tokens, -1 unknown */
    long long usage_ignored;         /* usage not credible beside the events
                                      * (tb_stream_usage_credible), or -1 */
    uint64_t surrogates_replaced;    /* lone UTF-16 halves made U+FFFD */
    /* Playout of the stream (NaN when there is no content event). */
    double ttft, ttfa, decode_tps, decode_tps_usage;
    uint32_t underruns;
    double gap_total, gap_max, min_tps, speedup;
    /* With a TTS stage (staged): the gaps split by cause (playout.h), and
     * whether no LLM rate removes them (min_tps is then NaN). */
    int staged, min_tps_none;
    double gap_llm, gap_tts;
    double *itl; /* inter-event gaps between content events (events-1) */
    size_t nitl;
    /* A real TTS (bench --tts-url; tts 0: none): the counts of
     * tb_tts_stats_of (ttsmeas.h) over the stream's log, and its samples:
     * each first-byte latency L_j and real-time factor R_j, in chunk
     * order (owned), from which a level's statistics are made. */
    int tts;
    uint32_t tts_chunks, tts_sent, tts_failed, tts_canceled;
    uint32_t tts_skipped; /* blank chunks, never sent (0 in older records) */
    uint64_t tts_chars;
    double tts_audio_s; /* NaN when no chunk was sent */
    double *tts_fb, *tts_rtf;
    size_t ntts_fb, ntts_rtf;
    /* With a shared TTS capacity (bench --tts-capacity; tts_cap 1): each
     * chunk's wait for a slot (capacity_wait, ttsmeas.h) of the chunks
     * that queued, in chunk order (owned); tts_cap 0 and none without. */
    int tts_cap;
    double *tts_cw;
    size_t ntts_cw;
    /* Where the turn's wait went (turnlat.h): its parts, null (NaN) where
     * not measured or modelled; the end of turn drawn for turn id + 1. */
    struct tb_turn_lat lat;
    /* Tool calls (a call's turn, bench_calls.h, Tool calls; tool_calls 0:
     * none, and the rest NaN).  The record is the turn's second request
     * (t_sched, t_start, its stream and playout); on the turn's clock (its
     * first request sent at 0): tool_start, the first call's start;
     * tool_end, the last call's end (its arguments whole); tool_s (also
     * lat.tool), tool_end to the second request's send; tool_head, the
     * second request's send (tool_end + tool_s), which the playout's
     * times are moved by.  The silence the caller hears from tool_start
     * to the answer's first audible sample, in three windows: before
     * (tool_start to tool_end), during (tool_s) and after (the second
     * request to the answer's first audible sample; NaN when nothing was
     * audible), without a filler (tool_silence) and, with --filler
     * (filler 1), with it (filler_silence); filler_at and filler_dur,
     * when the filler's audio starts (turn clock) and how long it lasts;
     * filler_covered, the share of the silence it fills (0..1; NaN when
     * there was no silence or no answer); filler_delay, how long the
     * answer's first audio would wait for the filler to end (0 when it
     * had ended). */
    uint32_t tool_calls;
    double tool_start, tool_end, tool_s, tool_head;
    /* The first call's arguments sent back were not the model's: they
     * were not a JSON object (Anthropic's and Ollama's shapes carried {};
     * OpenAI's the text as received), or over TB_TOOL_ARGS_KEEP bytes
     * ({} in every shape); the record's warning says which. */
    int tool_args_bad;
    double tool_silence[3];
    int filler;
    double filler_at, filler_dur, filler_silence[3], filler_covered, filler_delay;
    /* The filler's request sent and its first audio byte (turn clock;
     * modelled: the call's start and F; NaN when not measured); with a
     * real TTS (bench --tts-url), its TTS log (one chunk: its send, first
     * byte and audio arrivals, times on the turn's clock; owned, freed
     * with the record; NULL: modelled, or a record read back), whose
     * audio the silence windows play (ttsbuf-model(7), Tool calls). */
    double filler_sent, filler_fb;
    struct tb_tts_log *filler_log;
    /* Every delta, arrival times from t_start (owned; empty for records
     * read back from a file).  NULL once dropped: a run with drop_streams
     * (bench.h) keeps none, so a record costs its fixed fields (about 750
     * bytes) and its gaps (itl: 8 bytes an event), not its stream. */
    struct tb_stream *stream;
};

struct tb_bench_fold;

/* The records, and those folded into their level's summary as they ended
 * (bench.h, fold; bench_stats.h): folds[0..nfolds), one a level. */
struct tb_bench_recs {
    struct tb_bench_rec *v;
    size_t n, cap;
    struct tb_bench_fold *folds;
    size_t nfolds;
};

void tb_bench_recs_init(struct tb_bench_recs *r);
void tb_bench_recs_free(struct tb_bench_recs *r); /* NULL is a no-op */
/* Appends a cleared record (error 0, NaN metrics, usage -1, an empty
 * stream of its own); returns it, or NULL (out of memory). */
struct tb_bench_rec *tb_bench_recs_add(struct tb_bench_recs *r);
/* Frees the last record (r->n > 0) and drops it from r. */
void tb_bench_recs_pop(struct tb_bench_recs *r);

/* The longest message and warning a record keeps, with the NUL. */
#define TB_BENCH_MESSAGE_MAX 256
#define TB_BENCH_WARNING_MAX 128

/* Sets rec's message (warning) to the formatted text, cut to
 * TB_BENCH_MESSAGE_MAX - 1 (TB_BENCH_WARNING_MAX - 1) bytes; the text
 * before is freed.  0, or TB_ENOMEM (the text is then "").  Any thread,
 * one caller per record. */
int tb_bench_rec_message(struct tb_bench_rec *rec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int tb_bench_rec_warning(struct tb_bench_rec *rec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* How many records carry a warning; *first (first may be NULL) the first
 * one's text, or NULL when none does (folded records first: bench.h,
 * fold).  The text is the record's or its fold's.  Pure;
 * any thread. */
size_t tb_bench_recs_warned(const struct tb_bench_recs *r, const char **first);

/*
 * tb_bench_analyze - fills a record's playout fields from its stream
 * (tb_sim_run on a virtual clock with o, as `ttsbuf sim --trace` does).
 * Returns 0, TB_ENOMEM, or the simulator's error (TB_ETOOBIG: an event
 * over the ring; detail in err).  A stream with no content event leaves
 * the metrics NaN and returns 0; a failed request (rec->error set first)
 * gets no minimum TPS or speed-up (NaN), only what it measured.
 */
int tb_bench_analyze(struct tb_bench_rec *rec, const struct tb_sim_opts *o, char *err,
                     size_t errlen);
/* The record's LLM side from its stream as it arrived, whatever part of
 * it plays: content events and tokens, the inter-event gaps, ttft (the
 * first content event) and the decode rates (sim.h's definitions; NAN
 * without two content events apart in time, decode_tps_usage NAN without
 * a usage above the first event's tokens).  0 or TB_ENOMEM. */
int tb_bench_rec_llm(struct tb_bench_rec *rec);
/* Fills rec's TTS fields from a stream's measured log (tts 1).  0 or
 * TB_ENOMEM. */
struct tb_tts_log;
int tb_bench_rec_tts(struct tb_bench_rec *rec, const struct tb_tts_log *log);

/* tb_bench_analyze playing `play` (the record's stream, or a view of its
 * first part: a measured TTS that failed or was stopped, replay.h) while
 * the LLM side (tb_bench_rec_llm) is the whole stream's. */
int tb_bench_analyze_play(struct tb_bench_rec *rec, const struct tb_stream *play,
                          const struct tb_sim_opts *o, char *err, size_t errlen);

/* A record's tool fields cleared: no tool call (bench_tool.c). */
void tb_bench_rec_tool_clear(struct tb_bench_rec *rec);

/* After a playout of a tool turn's record (tool_calls > 0): lat's ttft
 * moved to the turn's clock (+ tool_end), its tool part set (tool_s),
 * v2v summed again, and the silence around the tool, with and without
 * the filler (filler_at, filler_dur set first), from them.  Nothing for
 * a record without a tool call.  Pure; any thread. */
void tb_bench_rec_tool_lat(struct tb_bench_rec *rec);

/* The record's tool part copied to its stream's turn_tool (stream.h),
 * which its trace's header keeps (calls 0: none).  Any thread. */
void tb_bench_rec_tool_stream(struct tb_bench_rec *rec);

/* A tool turn's filler TEXT as the modelled TTS p says it (tool_start
 * set first): sent at the call's start, heard from then plus chunk 1's
 * connect and first-byte latency, its code points at p's speech rate;
 * rec->filler set.  Pure but for p's latency draw; any thread. */
void tb_bench_rec_filler_model(struct tb_bench_rec *rec, const char *text,
                               const struct tb_playout_opts *p);

/* A tool turn's filler said by a real TTS (rec->filler_log set): its
 * send and first byte from the log, and, its audio played as it came
 * (ttsbuf-model(7), Tool calls), its first audible sample (filler_at;
 * NaN when none came) and the seconds heard (filler_dur).  Nothing
 * without a log.  Pure; any thread. */
void tb_bench_rec_filler_log(struct tb_bench_rec *rec);

/* A call's record's tool keys added to o ("tool_calls", ...; bench_rec.h
 * says what each is), and to its latency object l "tool_s".  cJSON:
 * struct cJSON. */
struct cJSON;
void tb_bench_rec_tool_json(struct cJSON *o, struct cJSON *l, const struct tb_bench_rec *r);

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
    char base_url[256];      /* redacted */
    char provider[16];       /* "mock" (the built-in mock), "remote", or "" */
    struct tb_bench_slo slo; /* bench --slo (set 0: none); must match to merge */
    /* Calls: the "conversations" block ({source, count, turns, user_turn})
     * as canonical JSON text (cJSON unformatted), or "" for requests;
     * must match to merge. */
    char conversations[512];
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
 * With SLOs (m->slo), the header carries them ("slo": {"ttfa_s": 0.8,
 * "gapless": true}, canonical order) and each record "good": whether it
 * meets them (tb_bench_slo_good); without, neither key is written.
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
 * A record's "good" is recomputed from its fields and the header's SLOs:
 * one that contradicts them, one missing under SLOs, or one without SLOs
 * in the header is refused (TB_EFORMAT, FILE:LINE).
 */
int tb_bench_read(const char *path, struct tb_bench_meta *m, struct tb_bench_recs *out, char *err,
                  size_t errlen);

/* tb_bench_read on an open stream, `name` in messages (f is not closed).
 * Lines are read one at a time: memory stays bounded on any input. */
int tb_bench_read_stream(FILE *f, const char *name, struct tb_bench_meta *m,
                         struct tb_bench_recs *out, char *err, size_t errlen);

#endif
