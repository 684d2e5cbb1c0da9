/*
 * bench_stats.h - a load level's summary from its records (bench_stats.c).
 *
 * The summary is a pure function of the records, and independent of their
 * order: merging shards' records gives exactly the summary one process
 * with the same records gives.
 *
 * Threads: any.
 */
#ifndef TTSBUF_BENCH_STATS_H
#define TTSBUF_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/bench_rec.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/statacc.h"
#include "ttsbuf/stats.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/turnlat.h"

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
    /* Where the wait went (turnlat.h: each record's latency; ttft_s is
     * TB_BM_TTFT's), in the order of a turn. */
    TB_BM_EOU,
    TB_BM_AGGREGATION,
    TB_BM_TTS_QUEUE,
    TB_BM_TTS_TTFB,
    TB_BM_PREROLL,
    TB_BM_LEAD,
    TB_BM_V2V,
    /* After the first sound: a barge-in's interruption to the close of
     * the turn's LLM stream (turns still streaming at T), and a call
     * turn's send after its schedule (its call's speech clock: the answer
     * before it played, the caller spoke). */
    TB_BM_BARGE_CLOSE,
    TB_BM_TURN_LATE,
    /* With a real TTS: the interruption to the close of the turn's last
     * TTS stream, and to the last audio the caller heard (bench_rec.h). */
    TB_BM_BARGE_TTS_CLOSE,
    TB_BM_BARGE_STOP,
    /* A call's tool turns (bench_rec.h, Tool calls), null for a turn
     * without a tool call: tool_s; the silence around the tool, its three
     * windows summed, without and with the filler (null when nothing was
     * heard after it); the filler's share of it, and how long the answer
     * would wait for it. */
    TB_BM_TOOL,
    TB_BM_TOOL_SILENCE,
    TB_BM_FILLER_SILENCE,
    TB_BM_FILLER_COVERED,
    TB_BM_FILLER_DELAY,
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

/* One turn index of a level's calls (records with turn >= 0): its records,
 * those complete, those good, and the statistics of TTFT, first audio and
 * silence over the records that measured them (as the level's blocks). */
struct tb_bench_turn {
    int32_t turn;
    size_t n, ok, good;
    size_t interrupted; /* the turns the caller interrupted (barge-in) */
    double good_share;  /* good / n; NaN without SLOs */
    struct tb_stats ttft, ttfa, gap_total;
    struct tb_stats lat[TB_TURN_LAT_PARTS]; /* each part of the wait (turnlat.h) */
    struct tb_stats tool; /* the tool waits of the turns that called one (lat.tool) */
};

/* The metric of part i of the wait (turnlat.h's order; TB_BM_TTFT for
 * ttft_s), or -1. */
int tb_bench_metric_of_part(int i);

struct tb_bench_summary {
    size_t requests, ok;
    size_t errors[TB_READER__COUNT]; /* by enum tb_reader_error (0 unused) */
    size_t incomplete, failed;       /* the errors by their end: cut off
                                      * (interrupted, connection lost, a
                                      * timeout, a cap) or failed (an HTTP
                                      * or stream error) */
    size_t gapless;                  /* ok streams with no underrun, heard
                                      * to their end (barge-in: below) */
    size_t min_tps_none;             /* ok streams whose gaps no LLM rate
                                      * removes (not in min_tps's block) */
    double gapless_share;            /* gapless / ok (0 when ok == 0;
                                      * barge-in: below): a
                                      * cut-off or failed stream is never
                                      * in it */
    double success_share;            /* ok / requests */
    uint64_t events, tokens;         /* content events; tokens (usage when known
                                      * and credible, else the events' tokens) */
    size_t usage_ignored;            /* ok requests whose usage was not credible */
    uint64_t surrogates_replaced;    /* lone UTF-16 halves made U+FFFD */
    /* Refusals (bench --retry): the records that met one, the refusals
     * and retries summed, the records ok after a retry and those that
     * gave up (ended by a refusal: 429, or 503 with Retry-After), and
     * the waits before the retries (each one a sample) with their total. */
    struct {
        size_t refused, retried_ok, gave_up;
        uint64_t refusals, retries;
        struct tb_stats wait;
        double wait_total;
    } retry;
    /* bench --llm-capacity: whether the level's records waited for a
     * slot (llm_capacity), and their waits (each record one sample). */
    int llm_capacity;
    struct tb_stats llm_wait;
    double span;                     /* first start to last end, s */
    double system_tps;               /* tokens / span */
    struct tb_stats m[TB_BM__COUNT];
    /* A real TTS (bench --tts-url; tts 0: no record had one): the level's
     * TTS statistics, tb_tts_stats_of's over every chunk of its records
     * (their counts summed, their samples pooled). */
    int tts;
    struct tb_tts_stats tts_stats;
    /* Barge-in (calls with --barge-in; barge 0: no record had it).  The
     * one rule for an interrupted turn (ttsbuf(1), BENCH, Barge-in): it is
     * neither failed nor gapless, it is interrupted, counted on its own.
     * It is ok (the caller ended it, its call goes on); heard_whole are
     * the ok turns the caller heard to their end (ok - interrupted), and
     * gapless and gapless_share are over them alone (gapless_share =
     * gapless / heard_whole); what the caller heard of an interrupted turn
     * before the interruption is judged for gaps (its gap fields are those
     * heard before T: interrupted_gapless counts the interrupted turns
     * with none), and what was never spoken is counted (the sums of the
     * tokens received and never spoken and of the code points given to
     * the TTS and not all played).  interrupted_share is over the turns
     * (requests).  Goodput judges an interrupted turn by the same fields,
     * as every record (bench_slo.h); good_interrupted are the good turns
     * that were interrupted (0 without SLOs). */
    int barge;
    size_t interrupted, interrupted_gapless, heard_whole, good_interrupted;
    double interrupted_share;
    uint64_t tokens_unheard, chars_unplayed;
    /* Goodput (bench --slo; slo 0: no SLOs, then good is 0 and the rest
     * NaN): the records complete and within every SLO, their share of the
     * requests (NaN when none) and their rate over the span (NaN when the
     * span is 0). */
    int slo;
    size_t good;
    double good_share, good_per_s;
    /* Per turn index, ascending (nturns 0: no record of a call); owned,
     * tb_bench_summary_free. */
    struct tb_bench_turn *by_turn;
    size_t nturns;
    /* Whether a metric's block came from a histogram (statacc.h): a level
     * with over TB_STATACC_EXACT samples of it, folded as its requests
     * ended (bench.h, fold).  0: every percentile exact. */
    int pct_hist;
};

/*
 * tb_bench_summarize - the summary of the records with level index
 * `level`.  Each metric is a statistics block (stats.h) over the records
 * that have the quantity: a failed request's partial stream counts where
 * it was measured (its TTFT, its gaps so far); min_tps and speedup_needed
 * exist for complete answers only.  Order-independent and exact: the same
 * records give the same bits.  With the level's folded records (r->folds,
 * bench.h fold) too: their counts exact, their blocks statacc.h's (exact
 * up to TB_STATACC_EXACT samples of a metric, else from its histogram:
 * pct_hist).  Returns 0 or TB_ENOMEM.
 */
int tb_bench_summarize(const struct tb_bench_recs *r, uint32_t level, struct tb_bench_summary *out);

/* tb_bench_summarize with the run's SLOs (NULL or an empty set: none), so
 * that the summary has goodput (per level and per turn).  The by_turn
 * table is allocated (tb_bench_summary_free), also by tb_bench_summarize.
 * Order-independent and exact as it.  0 or TB_ENOMEM (nothing to free). */
int tb_bench_summarize_slo(const struct tb_bench_recs *r, uint32_t level,
                           const struct tb_bench_slo *slo, struct tb_bench_summary *out);

/*
 * A level's records folded as they ended (bench.h, fold): what its summary
 * reads of them (counts, the SLO's good count, each metric's samples in a
 * statacc.h accumulator, their warnings), in memory that stays bounded.
 */
struct tb_bench_fold {
    uint32_t level;
    struct tb_bench_summary s; /* the counts (its m, by_turn unused) */
    double t0, t1;             /* first start, last end */
    struct tb_statacc m[TB_BM__COUNT];
    size_t warned;                        /* records with a warning */
    char warning[TB_BENCH_WARNING_MAX];   /* the first one's */
};

/* Folds r's last record (ok, outside calls and barge-in, without a TTS:
 * else TB_EINVAL, nothing done) into r's fold of its level, judged
 * against slo (NULL: none), and drops it.  0, TB_EINVAL or TB_ENOMEM (the
 * record then kept, part of its samples perhaps in the fold: the run
 * stops with the error). */
int tb_bench_recs_fold(struct tb_bench_recs *r, const struct tb_bench_slo *slo);
/* Moves src's folds into dst's (merged by level); src has none after.
 * 0 or TB_ENOMEM. */
int tb_bench_folds_move(struct tb_bench_recs *dst, struct tb_bench_recs *src);
/* Frees r's folds (tb_bench_recs_free does). */
void tb_bench_folds_free(struct tb_bench_recs *r);
/* The records r holds and has folded, and how many of them are ok and
 * were cut for memory (TB_READER_NOMEM). */
void tb_bench_recs_count(const struct tb_bench_recs *r, size_t *n, size_t *ok, size_t *nomem);

/* What the summary's percentiles are, as its JSON says: "exact", or
 * "histogram (relative error <= 0.28%)" when pct_hist (statacc.h). */
const char *tb_bench_percentiles(const struct tb_bench_summary *s);

/* Frees what a summary owns (its by_turn table); NULL is a no-op. */
void tb_bench_summary_free(struct tb_bench_summary *s);

#endif
