/*
 * draws.h - one stream replayed under M independent draws of a random TTS
 * first-byte latency, and what the draws give as distributions (ttsbuf
 * sim and run --tts-draws).
 *
 * Draw d = 0..M-1 plays the chunk list with the playout options o, its
 * latencies drawn from lat with the seed tb_ttslat_draw_seed(seed, d)
 * (ttslat.h): draw 0 is the single run with that seed, and any draw d is
 * the single run with its own seed.  Each draw is tb_analyze_playout
 * (analyze.h), the same engine and search as that run.
 *
 * Per draw: underruns, silence (gap_total), first audio (ttfa) and the
 * minimum TPS (playout.h; none when the TTS stage alone leaves a gap) at
 * o's pre-roll, and the smallest pre-roll, in whole milliseconds, at which
 * the draw plays with no underrun.  That pre-roll is exact to the
 * millisecond: a pre-roll moves playback's start s_1 only later (s_1 is
 * the first time the audio produced reaches it), a later start moves
 * every later chunk's start later or leaves it, so each silence only
 * shrinks and "no underrun" is monotone in the pre-roll; at the whole
 * speech S_m every chunk's audio is complete before the start, so there
 * is no gap.  A bisection over the whole milliseconds 0..ceil(1000 S_m)
 * (bracketed up from the silence at 0) then finds the smallest, each step
 * a replay of the draw's stored schedule without the searches
 * (tb_playout_gapless_preroll).
 *
 * Across the draws: statistics blocks (stats.h) of the underruns, silence,
 * first audio and gap-free pre-roll over all M draws, and of the minimum TPS over the draws
 * that have one (its count says how many; a draw with none is counted in
 * min_tps_none and left out, never read as a number); the share of draws
 * with no underrun at o's pre-roll; and the pre-roll for a share X:
 * tb_stats_rank of the per-draw pre-rolls (the ceil(X M)-th smallest), at
 * which at least a share X of the draws play with no underrun and, one
 * millisecond less, fewer do.
 *
 * Cost: per draw one playout with the minimum-TPS search (about 100
 * passes over the m chunks with a random latency, playout.h) and about
 * log2(1000 S_m) schedules; 8 bytes x 5 per draw.  One thread.
 */
#ifndef TTSBUF_DRAWS_H
#define TTSBUF_DRAWS_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/analyze.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/stats.h"
#include "ttsbuf/ttslat.h"

#define TB_DRAWS_MAX 1000000u /* draws */

struct tb_draws_opts {
    size_t draws;  /* M: 1..TB_DRAWS_MAX */
    double target; /* X: 0 < X <= 1, the share of draws to make gap-free */
    uint64_t seed; /* draw d's seed is tb_ttslat_draw_seed(seed, d) */
    /* The caller's wait beyond the first audio (turnlat.h: the end of
     * turn plus chunk j*'s leading silence, which the TTS latency does not
     * change): each draw's v2v is its first audio plus this (j* starts at
     * s_1).  > 0: the v2v statistics; 0 or NAN: none (v2v.count 0). */
    double wait;
};

struct tb_draws_result {
    size_t draws;        /* M */
    size_t gapless;      /* draws with no underrun at o's pre-roll */
    size_t min_tps_none; /* draws whose minimum TPS is none */
    size_t min_tps_scan; /* draws whose minimum TPS a scan found (not proven) */
    struct tb_stats underruns, gap_total, ttfa;
    struct tb_stats v2v;     /* ttfa + wait, per draw; count 0 without a wait */
    struct tb_stats min_tps; /* over the M - min_tps_none draws that have one */
    struct tb_stats preroll; /* each draw's smallest gap-free pre-roll, s */
    double target;
    double preroll_for_target; /* s, whole milliseconds */
    size_t worst;              /* the draw with the most silence (the first of equals) */
    uint64_t worst_seed;       /* its seed */
    double worst_gap_total;    /* its silence, s */
};

/* Called after each draw: done of total draws. */
typedef void (*tb_draws_progress_fn)(void *ud, size_t done, size_t total);

/*
 * tb_draws_run - the M draws of chunk list c (at least one chunk) under
 * o (its latency hook is replaced by each draw's) with latencies from lat
 * (borrowed, read only).  fn (may be NULL) reports progress.  Returns 0
 * and *out; TB_EINVAL (no chunk, draws or target out of range, bad
 * options); TB_ENOMEM.  One thread per call; lat may be shared by several.
 */
int tb_draws_run(const struct tb_chunks *c, const struct tb_playout_opts *o,
                 const struct tb_ttslat *lat, const struct tb_draws_opts *d,
                 tb_draws_progress_fn fn, void *ud, struct tb_draws_result *out);

/*
 * tb_draws_gapless_preroll - the smallest whole-millisecond pre-roll at
 * which c plays under o (its pre-roll ignored) with no underrun, by the
 * bisection above; p is a reused engine.  Returns 0 and *out, TB_EINVAL
 * (no chunk, bad options) or TB_ENOMEM.  Any thread; p's.
 */
int tb_draws_gapless_preroll(const struct tb_chunks *c, struct tb_playout *p,
                             const struct tb_playout_opts *o, double *out);

#endif
