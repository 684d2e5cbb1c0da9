/*
 * bench_slo.h - a bench run's service-level objectives (`bench --slo`) and
 * whether a record meets them (bench_slo.c): voice goodput.
 *
 * An SLO bounds one per-record quantity of the output contract: an upper
 * bound for the times, the counts and what a stream needed (ttft_s,
 * ttfa_s, gap_total_s, gap_max_s, underruns, min_tps, speedup_needed,
 * v2v_s: the turn's wait, turnlat.h), a
 * lower bound for the decode rates (decode_tps, decode_tps_usage); the
 * flag `gapless` asks for no underrun.  A record is good when it is
 * complete (no error) and every SLO holds; a quantity the record did not
 * measure (null) fails its SLO.  A turn the caller interrupted (barge-in,
 * bench.h) is complete, and judged on what was heard before the
 * interruption: its gap fields are those heard before T, so `gapless`
 * holds when nothing was heard to stop; its min_tps and speedup_needed
 * are null (the whole answer was not wanted) and fail their SLOs.  The
 * summaries count such a turn on its own (bench_stats.h).
 *
 * Threads: any; pure.  Errors: TB_EINVAL with a one-line message.
 */
#ifndef TTSBUF_BENCH_SLO_H
#define TTSBUF_BENCH_SLO_H

#include <stddef.h>

enum tb_slo_key {
    TB_SLO_TTFT = 0,
    TB_SLO_TTFA,
    TB_SLO_GAP_TOTAL,
    TB_SLO_GAP_MAX,
    TB_SLO_UNDERRUNS,
    TB_SLO_DECODE_TPS,
    TB_SLO_DECODE_TPS_USAGE,
    TB_SLO_MIN_TPS,
    TB_SLO_SPEEDUP,
    TB_SLO_V2V,     /* the turn's wait, voice to voice (turnlat.h) */
    TB_SLO_GAPLESS, /* a flag: no underrun */
    TB_SLO__COUNT
};

/* The SLO set: bit k of `set` when key k is given, with its bound. */
struct tb_bench_slo {
    unsigned set;
    double limit[TB_SLO__COUNT];
};

/* The key's name ("ttfa_s", "gapless"), and 1 when its bound is a floor
 * (the decode rates). */
const char *tb_bench_slo_name(enum tb_slo_key k);
int tb_bench_slo_at_least(enum tb_slo_key k);

/*
 * tb_bench_slo_add - adds one spec, "KEY=VALUE" or "gapless", to s.
 * Returns 0, or TB_EINVAL (an unknown key, a value that is not a number
 * >= 0 (a whole one for underruns), a key given twice; the message in err
 * names the key and the value).
 */
int tb_bench_slo_add(struct tb_bench_slo *s, const char *spec, char *err, size_t errlen);

/* 1 when a and b are the same SLO set (the same keys, equal bounds: they
 * read back bit-identical, so equal means as written). */
int tb_bench_slo_equal(const struct tb_bench_slo *a, const struct tb_bench_slo *b);

/* The set as words, in canonical (enum) order: "ttfa_s<=0.8 gapless", or
 * "none".  Bounds printed so that they read back bit-identical. */
void tb_bench_slo_text(const struct tb_bench_slo *s, char *buf, size_t len);

/* The set as a new JSON object in canonical order ({"ttfa_s": 0.8,
 * "gapless": true}), or a JSON null when the set is empty; NULL when out of
 * memory.  The caller owns it. */
struct cJSON;
struct cJSON *tb_bench_slo_json(const struct tb_bench_slo *s);

/* Reads such an object, parsed from its text (tb_bench_slo_json's numbers
 * are raw text until printed), back into *s.  0, or -1 (not an object, an unknown
 * key, a bad bound, an empty object). */
int tb_bench_slo_from_json(const struct cJSON *o, struct tb_bench_slo *s);

/* 1 when the record is good (complete, every SLO holds), 0 when not.  The
 * set must not be empty. */
struct tb_bench_rec;
int tb_bench_slo_good(const struct tb_bench_slo *s, const struct tb_bench_rec *r);

#endif
