/*
 * sweep.h - the playout model over a grid of settings and many streams at
 * once, with statistics across the streams and the inverse questions
 * ("how much pre-roll makes 95% of these streams gap-free?").
 *
 * Axes (each a list of values; one value is a constant):
 *   chunk      a chunk policy (enum tb_chunk_policy, as a double)
 *   min_chars  sentence/clause minimum chunk size, code points
 *   tps        0: the streams as recorded; r > 0: each stream re-timed to a
 *              constant r tokens/s from its own first-token time (content
 *              event k arrives at a_0 + (T_k - T_0) / r)
 *   wpm, lat   speech rate, TTS latency (s): a constant, or the median of
 *              the distribution tb_sweep_opts.tts.shape names
 *   conc, rtf  the TTS stage's concurrency (0: unlimited) and real-time
 *              factor (playout.h)
 *   rebuffer   0 off (v1), 1 on (playout.h)
 *   preroll    P, s
 * A grid point is one value of each axis.  Points are numbered with
 * preroll varying fastest, then rebuffer, rtf, conc, lat, wpm, tps,
 * min_chars, chunk (tb_sweep_point_axes decodes an index).  A series is
 * the set of points that differ only in pre-roll.
 *
 * The TTS stage (tb_sweep_opts.tts): the latency axis read through a
 * shape (a log-normal with a fixed p90/p50 ratio, or a uniform of a fixed
 * width, around each median), one seed and one connect latency for every
 * point.  Every stream at every point draws its latencies from the same
 * seed (the draws are a pure function of (seed, chunk): ttslat.h), so
 * settings differ only by their parameters, never by luck.
 *
 * How it runs: each stream is segmented once per (chunk, min_chars) pair
 * (chunking depends on text only, never on time: seg.h), then every
 * other setting is one pass of the playout engine over that chunk list; a
 * --tps re-timing maps chunk completion times, it never re-segments.  The
 * grid is split over threads (one grid point or one series per unit of
 * work).  The inner loop (one stream at one setting) allocates nothing
 * without a TTS stage (with one, the engine's chunk store grows to the
 * longest stream's once and is kept across resets):
 * each thread reuses one playout engine and its scratch arrays; only the
 * segmentation grows the chunk lists, and the per-point statistics sort
 * with qsort.  Cost: O(streams x points x chunks) plus one segmentation
 * per stream and chunk setting, and O(streams log streams) per point.
 *
 * Per grid point, across streams: the share with no underrun; underruns,
 * total gap, interruptions (mean, P50, P95, max); time to first audio,
 * the caller's wait (v2v, turnlat.h) and minimum TPS: each a statistics
 * block (stats.h: linear interpolation
 * between closest ranks).  The inverse questions below are exact answers,
 * not percentiles: they take the ceil(X n)-th smallest value.
 *
 * The inverse questions, with target share X (tb_sweep_opts.target):
 *   tps_for_target      per point: the smallest constant token rate at
 *                       which >= X of the streams play with no gap at that
 *                       point's pre-roll.  Exact: a stream is gap-free at
 *                       rate r iff r >= its min TPS (playout.h), so this
 *                       is the ceil(X n)-th smallest min TPS.
 *   preroll_for_target  per series: the smallest pre-roll at which >= X of
 *                       the streams have no underrun.  Whether a stream
 *                       underruns depends on P only through the start
 *                       chunk q, and more pre-roll never adds a gap, so
 *                       per stream this is a bisection over q (O(m log m)
 *                       with the playout engine itself), reported as the
 *                       smallest whole millisecond that starts at that q;
 *                       across streams, the ceil(X n)-th smallest.
 *                       Rebuffering does not change it: it acts only
 *                       after an underrun.
 *                       With a TTS stage the start is no longer a chunk
 *                       boundary (it is the first t at which the audio
 *                       produced reaches P), so this is a bisection over
 *                       whole milliseconds of P in [0, ceil(1000 S_m)]
 *                       (at S_m every chunk is synthesized before the
 *                       start: gap-free).  It is exact because gap-free
 *                       is still monotone in P: b_j, f_j, d_j and the
 *                       frames' synthesis times do not depend on
 *                       playback, s_1 does not decrease with P, so no
 *                       e_j moves earlier and no gap grows
 *                       (ttsbuf-model(7)).  Monotone, the answer is
 *                       found from any bracket: it grows from the
 *                       silence at P = 0 by doubling
 *                       (tb_playout_gapless_preroll).  Cost: one
 *                       playout without the minimum-TPS search, then
 *                       one replay of the stored schedule per probe,
 *                       O(m log(1000 P*)) per stream and series (more
 *                       while many chunks wait for a long pre-roll).
 *
 * The caller's wait per stream (turnlat.h's v2v): eou + s_{j*} + lead,
 * with eou stream i's end of turn (tb_sweep_opts.eou_at for turn i + 1,
 * drawn once at create) and lead chunk j*'s leading silence (lead_at,
 * drawn once per chunk list at segmentation).  j*, the first chunk with
 * audio, is chunk 1 without a TTS stage (the rate model gives every chunk
 * audio) and the first chunk that is not blank with one; in both cases it
 * starts at s_1, the first audio (a blank chunk before it plays for no
 * time, and s_1 waits for j*'s first audio), so the v2v of a stream costs
 * three additions per point.  No chunk with audio: NAN, not in the
 * statistics (v2v.count says how many have one).
 *
 * The v2v target (tb_sweep_opts.target_v2v, S > 0): which chunk policy,
 * min_chars, TTS concurrency and pre-roll (the settings one tunes) keep
 * the v2v P95 at or under S with the gap-free share at least X (the
 * target share, or every stream without one).  Per group of points that
 * share the other axes (tps, wpm, latency, RTF, rebuffer), the one with
 * the smallest v2v P95 (ties: the smaller gap total mean, then the first
 * in point order): tb_sweep_v2v_pick.
 *
 * Ownership: the sweep borrows the streams (they must outlive it) and
 * copies names and axes.  Threads: tb_sweep_run uses its own threads; the
 * other functions are for one thread at a time.
 */
#ifndef TTSBUF_SWEEP_H
#define TTSBUF_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/playout.h"
#include "ttsbuf/stats.h"
#include "ttsbuf/stream.h"

/* One input stream: what every source (trace, synthetic, imported) gives
 * the sweep. */
struct tb_sweep_input {
    const char *name;
    const struct tb_stream *s;
};

enum tb_sweep_axis {
    TB_AX_CHUNK = 0,
    TB_AX_MINCHARS,
    TB_AX_TPS,
    TB_AX_WPM,
    TB_AX_LAT,
    TB_AX_CONC,
    TB_AX_RTF,
    TB_AX_REBUFFER,
    TB_AX_PREROLL,
    TB_AX__COUNT
};

/* Caps (ttsbuf(1) LIMITS). */
#define TB_SWEEP_AXIS_MAX 10000u     /* values on one axis */
#define TB_SWEEP_POINTS_MAX 100000u  /* grid points */
#define TB_SWEEP_INPUTS_MAX 1000000u /* streams */
#define TB_SWEEP_THREADS_MAX 64u

/* How the latency axis's values read. */
enum tb_sweep_lat_shape {
    TB_LAT_CONST = 0, /* each value is a constant latency (v1) */
    TB_LAT_LOGNORMAL, /* lognormal:p50=v,p90=v x param (param >= 1) */
    TB_LAT_UNIFORM    /* uniform:(v - param/2)..(v + param/2) (param >= 0) */
};

/* The TTS stage of every point (playout.h).  on 0: none, and then the
 * conc and rtf axes must be their defaults (0) and the latency constant. */
struct tb_sweep_tts {
    int on;
    enum tb_sweep_lat_shape shape;
    double param;   /* the shape's ratio or width (see above) */
    uint64_t seed;  /* every stream at every point (ttslat.h) */
    double connect; /* K, seconds, 0..TB_TTSLAT_MAX */
    int output;     /* enum tb_tts_output (playout.h), every point's */
};

struct tb_sweep_opts {
    const double *axis[TB_AX__COUNT]; /* values (copied); NULL with n 0 means
                                       * the default: sentence, 1, 0 (as
                                       * recorded), 150, 0, 0, 0, 0, 0 */
    size_t n[TB_AX__COUNT];
    double target; /* 0 < X <= 1 for the inverse questions; 0 for none */
    struct tb_sweep_tts tts;
    /* The turn's wait (see above): stream i's end of turn is eou_at(eou_ud,
     * i + 1), chunk j's leading silence lead_at(lead_ud, j); NULL: 0.
     * Called from tb_sweep_create and tb_sweep_run's threads (ttslat.h's
     * tb_ttslat_at is safe there); the pointers are borrowed. */
    tb_tts_latency_fn eou_at, lead_at;
    void *eou_ud, *lead_ud;
    double target_v2v; /* S > 0, seconds: the v2v question; 0: none */
    /* Tool turns' answers (sweep_tool.h): input i is one when tool_head
     * is not NULL and tool_head[i] is not NaN; its request was sent
     * tool_head[i] after the turn's first (the tool call's end plus the
     * tool's wait), which its v2v counts, and the silence around the tool
     * runs from tool_start[i] (the call's start) to its first audible
     * sample, v2v - eou - tool_start[i] (tb_sweep_point.tool_silence).
     * nin values each, read by tb_sweep_create; NULL: none. */
    const double *tool_head, *tool_start;
    /* A TTS capacity shared by every stream (capmodel.h; needs tts.on):
     * at most `capacity` syntheses in flight across the streams, stream i
     * arriving at arrival[i] on the run's clock (nin values, copied; NULL:
     * every stream at 0), each point's schedule modelled first come, first
     * served and played as its streams' recorded times; 0: none (each
     * stream alone, as before). */
    int capacity;
    const double *arrival;
    /* At most llm_capacity LLM requests in flight across the streams (0:
     * none): stream i's request, sent at arrival[i], waits first come,
     * first served (ties: lower index) for one of them, held from its
     * send to its last event as recorded; the wait shifts every event of
     * the stream (its ttft, and so its first audio, include it). */
    int llm_capacity;
};

void tb_sweep_opts_default(struct tb_sweep_opts *o);

/* The axis name used in tables and files: "chunk", "min_chars", "tps",
 * "wpm", "tts_latency_s", "tts_concurrency", "tts_rtf", "rebuffer",
 * "preroll_s". */
const char *tb_sweep_axis_name(enum tb_sweep_axis a);

struct tb_sweep_point {
    double ax[TB_AX__COUNT];
    double gapless; /* share of streams with no underrun, 0..1 */
    struct tb_stats underruns, gap_total, interruptions, ttfa, min_tps;
    struct tb_stats v2v;       /* the caller's wait, of the streams with audio */
    double tps_for_target;     /* NAN without a target */
    double preroll_for_target; /* the series' answer; NAN without a target */
    uint64_t events;           /* content events simulated at this point */
    /* With a TTS stage (zero without): the streams whose minimum TPS is
     * none (the stage alone leaves gaps: not in min_tps, whose count is
     * the others) and those whose minimum TPS is from the uncertified
     * scan; the silence by cause per stream (playout.h). */
    size_t min_tps_none, min_tps_scan;
    struct tb_stats gap_llm, gap_tts;
    /* With a shared capacity: every chunk's wait for a slot, over the
     * chunks of every stream that send a request (count 0 without). */
    struct tb_stats cap_wait;
    /* The tool turns' silence around the tool, of the tool-turn inputs
     * with audio (count 0 without one). */
    struct tb_stats tool_silence;
};

struct tb_sweep;

/*
 * tb_sweep_create - checks the axes (a policy number in range, min_chars
 * 1..100000, tps 0 or 0.001..1e5, wpm TB_WPM_MIN..MAX, lat 0..60 (a
 * log-normal's median and p90 TB_TTSLAT_LOGNORMAL_MIN..60, a uniform's
 * ends 0..60), conc 0..1024 whole, rtf 0..100, rebuffer 0 or 1, preroll
 * 0..3600, at most TB_SWEEP_AXIS_MAX values, at most TB_SWEEP_POINTS_MAX
 * points; without tts.on, conc and rtf 0 and a constant latency;
 * rebuffering never with a stage) and the inputs (1..TB_SWEEP_INPUTS_MAX,
 * each with a content event).  Returns 0 and *out; TB_ERANGE or TB_EINVAL
 * for a bad axis or target; TB_EEMPTY for no input or a stream without
 * content (named in err); TB_ETOOBIG past a cap; TB_ENOMEM.
 */
int tb_sweep_create(const struct tb_sweep_opts *o, const struct tb_sweep_input *in, size_t nin,
                    struct tb_sweep **out, char *err, size_t errlen);
void tb_sweep_destroy(struct tb_sweep *sw); /* NULL is a no-op */

/* Called on the thread that called tb_sweep_run, after each unit of work
 * it finished: done of total units so far (other threads' included); and
 * once more with done == total when the sweep has succeeded. */
typedef void (*tb_sweep_progress_fn)(void *ud, size_t done, size_t total);

/*
 * tb_sweep_run - segments and evaluates the whole grid on `threads`
 * threads (1..TB_SWEEP_THREADS_MAX; the calling thread is one of them).
 * Returns 0, TB_EINVAL (threads out of range), or TB_ENOMEM (then no
 * result is valid).  May be called once.
 */
int tb_sweep_run(struct tb_sweep *sw, unsigned threads, tb_sweep_progress_fn fn, void *ud);

/* After tb_sweep_run: the points (index 0..n-1, as numbered above). */
const struct tb_sweep_point *tb_sweep_points(const struct tb_sweep *sw, size_t *n);

/* The axis values (copied or defaulted) and their count. */
const double *tb_sweep_axis_values(const struct tb_sweep *sw, enum tb_sweep_axis a, size_t *n);

/* The index of the point with axis values idx[a] (0-based per axis). */
size_t tb_sweep_point_index(const struct tb_sweep *sw, const size_t idx[TB_AX__COUNT]);

/* Decodes a point index into per-axis indices. */
void tb_sweep_point_axes(const struct tb_sweep *sw, size_t point, size_t idx[TB_AX__COUNT]);

/* The TTS options (copied at create). */
const struct tb_sweep_tts *tb_sweep_tts(const struct tb_sweep *sw);

/* The canonical --tts-latency spec of latency value v (ttslat.h's
 * format: "0.3", "lognormal:p50=0.3,p90=0.6", "uniform:0.2..0.4"), the
 * one `ttsbuf sim --tts-latency` takes for the same draws.  Returns
 * snprintf's count. */
int tb_sweep_lat_spec(const struct tb_sweep *sw, double v, char *buf, size_t len);

/* The target share (0: none). */
double tb_sweep_target(const struct tb_sweep *sw);

/* The v2v target S (0: none), and the gap-free share it asks for: the
 * target share, or 1 without one. */
double tb_sweep_target_v2v(const struct tb_sweep *sw);
/* The shared TTS capacity (0: none). */
int tb_sweep_capacity(const struct tb_sweep *sw);
/* The LLM capacity (0: none), and the streams' waits for it (count 0
 * without). */
int tb_sweep_llm_capacity(const struct tb_sweep *sw);
const struct tb_stats *tb_sweep_llm_wait(const struct tb_sweep *sw);
double tb_sweep_v2v_share(const struct tb_sweep *sw);

/* Whether point p meets the v2v target: v2v P95 <= S (a number) and a
 * gap-free share >= tb_sweep_v2v_share.  0 without a target. */
int tb_sweep_v2v_meets(const struct tb_sweep *sw, size_t p);

/* After tb_sweep_run: the best point (see above) of the group point p is
 * in, or SIZE_MAX when none of the group meets the target (or there is
 * no target).  O(points in the group). */
size_t tb_sweep_v2v_pick(const struct tb_sweep *sw, size_t p);

/* Streams, and content events per pass over all of them (the
 * "event-simulations" of one grid point). */
size_t tb_sweep_inputs(const struct tb_sweep *sw);
uint64_t tb_sweep_events_per_point(const struct tb_sweep *sw);

/*
 * tb_sweep_trace_preroll - one stream's smallest gap-free pre-roll under
 * the given chunk list and playout settings (pre-roll and rebuffer
 * ignored), as described above: 0 when gap-free from the first chunk,
 * else the smallest whole millisecond above S_{q*-1}.  tps re-times as on
 * the tps axis (0: as recorded; a0/t0 the stream's first content arrival
 * and token index).  Returns 0, TB_EINVAL
 * (bad options) or TB_EEMPTY (no chunk).  Any thread; no allocation.
 */
struct tb_chunks;
struct tb_playout;
struct tb_playout_opts;
int tb_sweep_trace_preroll(const struct tb_chunks *c, double a0, uint64_t t0, double tps,
                           struct tb_playout *p, const struct tb_playout_opts *o, double *out);

#endif
