/*
 * playout.h - the playout model (v1): when each chunk plays, where the
 * audio runs dry, and the exact minimum token rate.
 *
 * Chunk j = 1..m closes at time c_j (the arrival of event K_j) and lasts
 * D_j = cps_j x 10 / wpm seconds; S_j = D_1 + ... + D_j.
 *   ready     r_j = c_j + L                         (L = TTS latency)
 *   start     playback starts at s_1 = c_q + L, q the first chunk with
 *             S_q >= P (pre-roll), or the last chunk when none is
 *   playback  s_j = max(e_{j-1}, r_j), e_j = s_j + D_j
 *   underrun  g_j = r_j - e_{j-1} > 1 ms (j >= 2); >= 150 ms is also an
 *             interruption (WebRTC NetEq's audible-interruption line)
 *   min TPS   max over j > q of (T_j - T_q) / S_{j-1}, T_j the token index
 *             of event K_j (0 when there is no such j)
 *   speed-up  max over j > q of (c_j - c_q) / S_{j-1}
 * The minimum TPS is exact: at a constant rate r with the same first-token
 * time and texts, c_j - c_q = (T_j - T_q) / r, and no gap means
 * c_j + L <= s_1 + S_{j-1} for every j > q.  One pass, no search, O(1)
 * memory unless a schedule callback is set.
 *
 * Every counted gap is split by cause: gap_llm = min(g, max(0, c_j -
 * e_{j-1})), the part during which chunk j's text had not yet arrived, and
 * gap_tts = g - gap_llm, the part during which the text was there and its
 * audio was not (TTS latency, a busy engine, synthesis slower than speech).
 *
 * The TTS stage (tts_connect, tts_concurrency, tts_rtf, tts_output,
 * tts_latency_at, tts_rtf_at, tts_times_at; all zero by default, and then
 * every number above is exactly v1's).  With N the concurrency (0:
 * unlimited), R_j the chunk's real-time factor (the hook, or the constant
 * R), L_j its first-byte latency (the hook, or the constant L) and K the
 * connect latency:
 *   begin     b_1 = c_1; b_j = max(c_j, b_{j-1}) for j <= N or N = 0, else
 *             max(c_j, d_{j-N}, b_{j-1}): in order (never before the chunk
 *             before it, as the live clients send), on a free slot
 *   output    stream (TB_TTS_STREAM, the default): the audio comes from the
 *             first byte on, at R_j seconds a second of it; whole
 *             (TB_TTS_WHOLE): the engine returns a chunk's audio only when
 *             all of it is synthesized (Piper, an HTTP TTS without
 *             streaming), all of it at d_j
 *   first     f_j = b_j + L_j (+ K for j = 1) streamed; d_j whole: the
 *             chunk's first audio
 *   done      d_j = b_j + L_j (+ K) + R_j D_j: all of its audio
 *   audio     A(t) = sum over j with f_j <= t of min(D_j, (t - f_j) / R_j)
 *             (D_j once t >= f_j when R_j = 0 or the output is whole): the
 *             audio produced by t, in any chunk order
 *   start     s_1 = max(h_1, the first t with A(t) >= P'), h_1 the first
 *             playable moment of chunk 1 (below), P' = P, or min(P, S_m)
 *             at the stream's end (or S of the chunks so far at a forced
 *             start); the start is final once no later chunk can change it
 *             (the next chunk closes at or after it, or the stream ended)
 *   whole     as R_j = 0 from f_j = d_j: s_j = max(e_{j-1}, f_j), e_j =
 *             s_j + D_j, h_1 = f_1 (the rules below are the streamed ones)
 *   R_j <= 1  chunk j's audio outruns playback: s_j = max(e_{j-1}, f_j),
 *             e_j = s_j + D_j (h_1 = f_1 when R_1 <= 1)
 *   R_j > 1   a frame player: chunk j is frames of TB_FRAME_S seconds
 *             (frame i covers [i F, min((i+1) F, D_j)) while i F < D_j),
 *             frame i is synthesized at f_j + R_j min((i+1) F, D_j);
 *             frames play in order, each at max(the previous frame's end,
 *             its synthesis), so s_j = max(e_{j-1}, f_j + R_j min(F, D_j))
 *             (h_1 = f_1 + R_1 min(F, D_1) when R_1 > 1) and the player
 *             stalls inside a chunk when dry.  Each silence (between
 *             chunks, or a stall between frames) is a gap of its own,
 *             counted when > 1 ms; stalls are all gap_tts.  A chunk with
 *             D_j = 0 has no frame: s_j = e_j = max(e_{j-1}, f_j).
 *             Chunks of both kinds mix when R_j varies.
 * In TTS mode the engine keeps every chunk (120 bytes each: the minimum
 * TPS needs the whole list), and the minimum TPS and speed-up are searched at
 * tb_playout_finish (NAN before):
 *   closed    N = 0, R = 0, no hook (the connect latency K only; either
 *             output, which is the same with R = 0): max over
 *             j > q of min(u_j / (S_{j-1} + K), (u_j - u_q) / S_{j-1}),
 *             u_j = T_j - T_1, q the first chunk with S_q >= P'
 *   bisection otherwise, over the event simulation above re-timed to
 *             c_j = c_1 + u_j / r, for the lowest r above which every rate
 *             leaves no silence longer than TB_SEARCH_EPS, to a relative
 *             1e-9 (the rate reported is a gap-free one).  "No gap" is
 *             monotone in r when the pre-roll cannot delay the start (P'
 *             at most chunk 1's own audio at h_1: D_1 for R_1 = 0 or a
 *             whole output, 0 for 0 < R_1 <= 1, min(F, D_1) for R_1 > 1);
 *             then the search
 *             halves down from a gap-free rate and bisects, and the answer
 *             is certified (TB_MIN_TPS_BISECT).  When the pre-roll binds it is not
 *             monotone in general (ttsbuf-model(7) gives a stream gap-free
 *             at 1 token/s and not at 2), so the search walks down from
 *             the rate where every chunk closes within 1 us of the first,
 *             in steps of 2^(1/8), to the first rate with a gap and bisects
 *             there (TB_MIN_TPS_SCAN: exact unless the gap-free rates
 *             have a hole narrower than that step).
 *   none      when even an infinitely fast LLM (every chunk closing with
 *             the first) leaves a gap, the TTS stage alone makes gaps: the
 *             minimum TPS and speed-up are NAN and min_tps_none is 1.  A
 *             stream gap-free at (T_m - T_1) / 1e5 tokens/s reports 0.
 * The speed-up is searched the same way with u_j = c_j - c_1.
 *
 * The engine is online: chunks are added as they close, in order, so the
 * same code serves the simulator (virtual clock) and live runs (wall
 * clock).  Ownership: create/destroy.  Threads: one thread per engine.
 */
#ifndef TTSBUF_PLAYOUT_H
#define TTSBUF_PLAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define TB_GAP_MIN_S 0.001   /* shorter gaps are not underruns */
#define TB_INTERRUPT_S 0.150 /* gaps this long are interruptions */
#define TB_FRAME_S 0.020     /* a player's frame (TTS stage, R > 1) */
#define TB_SEARCH_EPS 1e-9   /* silence the minimum-TPS search ignores (rounding) */
#define TB_SEARCH_REL 1e-9   /* its relative tolerance on the rate */

/* A chunk's first-byte latency L_j (j 1-based), seconds, >= 0 and
 * finite.  Called once per chunk as it is added, in order; it must be a
 * pure function of j (draws seeded per chunk, not from a running
 * generator), so that every pass over the same chunks (a reset, the
 * analysis at several pre-rolls, a sweep) sees the same latencies. */
typedef double (*tb_tts_latency_fn)(void *ud, uint32_t j);

/* A chunk's real-time factor R_j (j 1-based): seconds of synthesis per
 * second of its audio, >= 0 and finite.  Called as the latency hook is:
 * once per chunk as it is added, in order, a pure function of j. */
typedef double (*tb_tts_rtf_fn)(void *ud, uint32_t j);

/* A chunk's recorded times (a measured TTS, ttsmeas.h), j 1-based: *b
 * when it was sent, *f its first audio, *d the end of its audio, seconds
 * on the stream's clock, b <= f <= d, finite.  The stage plays them in
 * place of its own b_j, f_j and d_j wherever the chunks close at the
 * stream's own times (the run, and the pre-roll curve over it); a
 * re-timed stream (the minimum-TPS and speed-up searches) has no record
 * and is modelled from L_j and R_j.  Returns 0; non-zero when j has no
 * record (tb_playout_add then fails with TB_EINVAL).  Called as the
 * latency hook is: pure in j. */
typedef int (*tb_tts_times_fn)(void *ud, uint32_t j, double *b, double *f, double *d);

/* How the engine returns a chunk's audio (tts_output). */
enum tb_tts_output {
    TB_TTS_STREAM = 0, /* from the first byte on, as it is synthesized */
    TB_TTS_WHOLE       /* all of it at once, when it is all synthesized */
};

struct tb_playout_opts {
    double wpm;         /* speech rate, words per minute (default 150) */
    double tts_latency; /* L, seconds (default 0) */
    double preroll;     /* P, seconds (default 0) */
    /* Rebuffering (default 0, off: the v1 model exactly).  When set, a
     * counted underrun pauses playback until P seconds of audio are
     * buffered again (chunk j waits for the first k >= j with
     * S_k - S_{j-1} >= P, or the last chunk), as video players and jitter
     * buffers do: fewer, longer gaps.  The gap is then s_j - e_{j-1}.  A
     * stream without an underrun plays exactly as in v1, so the minimum
     * TPS and speed-up (which are about no gap at all) do not change. */
    int rebuffer;
    /* The TTS stage (see above); zero is today's model.  Rebuffering is
     * not modelled with it (TB_EINVAL). */
    double tts_connect;               /* K: extra first-byte latency of chunk 1, seconds */
    int tts_concurrency;              /* N: chunks synthesized at once; 0 = unlimited */
    double tts_rtf;                   /* R: seconds of synthesis per second of audio */
    tb_tts_latency_fn tts_latency_at; /* L_j; NULL: the constant tts_latency */
    void *tts_latency_ud;
    tb_tts_rtf_fn tts_rtf_at; /* R_j; NULL: the constant tts_rtf */
    void *tts_rtf_ud;
    int tts_output;               /* enum tb_tts_output (default TB_TTS_STREAM) */
    tb_tts_times_fn tts_times_at; /* recorded b_j, f_j, d_j; NULL: none */
    void *tts_times_ud;
    /* The caller searches the minimum TPS itself (a time-based chunk
     * policy re-cuts the stream at each rate, recut.h): min_tps and
     * speedup stay NAN and the TTS stage does not search (default 0). */
    int no_search;
    /* The caller reads min_tps only (sweep): speedup stays NAN and the
     * TTS stage runs the rate's search alone, not the speed-up's, which
     * costs as much again (default 0). */
    int no_speedup;
};

/* Defaults: wpm 150, no latency, no pre-roll, no rebuffering, no TTS
 * stage (a streamed output, no hook). */
void tb_playout_opts_default(struct tb_playout_opts *o);

/* 1 when o sets a TTS stage (connect, concurrency, RTF, a whole output,
 * or a latency, RTF or recorded times per chunk), whose outputs then say
 * the gaps' causes; 0 for today's model. */
int tb_playout_has_stage(const struct tb_playout_opts *o);

/*
 * A measured TTS replayed (ttsmeas.h): chunk j's L_j, R_j and D_j from
 * record j of a log, as tb_tts_chunk_model gives them.  The caller owns
 * this context and the log; both must outlive every engine whose options
 * tb_playout_opts_measured filled (the hooks read the log).
 */
struct tb_tts_log;
struct tb_tts_measured {
    const struct tb_tts_log *log;
    uint32_t bad; /* after TB_EINVAL: the chunk (1-based) whose record cannot
                   * be replayed; 0: none (or a negative concurrency) */
};

/*
 * tb_playout_opts_measured - sets o's TTS stage to replay log: the
 * latency and RTF hooks answer record j's L_j and R_j, the times hook its
 * sent, first byte (its end when no audio came) and end (ctx the hooks'
 * context), tts_concurrency is log->concurrency, the output streamed (the
 * record's arrivals say how the audio came: R_j), and tts_connect,
 * tts_latency and tts_rtf are 0 (the measured L_1 already holds the
 * connection's set-up; the constants are unused under the hooks).  The
 * rest of o is left as it is.  At the stream's own times the stage plays
 * the recorded times exactly; re-timed (the searches), the model's rule
 * from L_j and R_j.  A chunk cut mid-audio replays the audio
 * that came (its record's duration).  Add chunk j with
 * tb_playout_add_timed(..., tb_playout_measured_duration(ctx, j)): a
 * replay has one chunk per record.  Beyond the last record (or for j =
 * 0) the hooks and the duration answer NAN, so adding such a chunk fails
 * with TB_EINVAL: nothing was measured for it, and the replay does not
 * invent a value.
 * Returns 0; or TB_EINVAL with o untouched and ctx->bad the first chunk
 * whose record cannot be replayed (no first byte or no end, a number out
 * of range, or records out of chunk order), or ctx->bad 0 for a negative
 * concurrency.  Any thread; the hooks are pure and only read the log.
 */
int tb_playout_opts_measured(struct tb_playout_opts *o, struct tb_tts_measured *ctx,
                             const struct tb_tts_log *log);

/* D_j of record j (1-based) of ctx's log, seconds; NAN when there is no
 * such record or it cannot be replayed. */
double tb_playout_measured_duration(const struct tb_tts_measured *ctx, uint32_t j);

/* The leading silence record j measured (ttsmeas.h's lead: NAN when it
 * did not), ud a struct tb_tts_measured *: the signature of sim.h's
 * lead_at hook.  NAN beyond the records. */
double tb_playout_measured_lead(void *ud, uint32_t j);

/* What every output says when min_tps_none: no LLM rate is enough. */
#define TB_MIN_TPS_NONE_REASON "the TTS stage alone leaves gaps"

/* One chunk's schedule, reported through tb_play_fn once it is known. */
struct tb_play {
    uint32_t chunk;          /* j, 1-based */
    uint32_t cps;            /* code points */
    double ready;            /* r_j = c_j + L; f_j (first audio) with the TTS stage */
    double begin;            /* b_j: synthesis begins (c_j without the stage) */
    double done;             /* d_j: all audio synthesized (r_j without it) */
    double start, end;       /* s_j, e_j */
    double gap;              /* g_j when counted as an underrun, else 0; with
                              * R_j > 1 plus the chunk's counted stalls */
    double gap_llm, gap_tts; /* gap split by cause (sum to gap) */
};
typedef void (*tb_play_fn)(void *ud, const struct tb_play *p);

struct tb_playout_result {
    uint32_t chunks; /* m */
    uint32_t q;      /* the chunk whose completion started playback; with a
                      * TTS stage, the chunks closed before the start */
    double ttfa;     /* s_1; 0 when there were no chunks */
    double speech;   /* S_m */
    double end;      /* e_m */
    uint32_t underruns;
    uint32_t interruptions;
    double gap_total; /* sum of counted gaps */
    double gap_max;
    double gap_llm;     /* of gap_total: text not yet arrived */
    double gap_tts;     /* of gap_total: text there, audio not yet */
    double min_tps;     /* NAN: none (min_tps_none) or not yet searched */
    double speedup;     /* NAN likewise */
    int min_tps_none;   /* the TTS stage alone leaves gaps: no rate helps */
    int min_tps_method; /* enum tb_min_tps_method */
    double silence_max; /* the longest silence, counted or not (0: none):
                         * what the minimum-TPS searches test */
};

enum tb_min_tps_method {
    TB_MIN_TPS_CLOSED, /* a closed form, exact (v1, or connect latency only) */
    TB_MIN_TPS_BISECT, /* bisection, certified by monotonicity */
    TB_MIN_TPS_SCAN    /* scan and bisection, not certified (pre-roll binds) */
};

struct tb_playout;

/*
 * tb_playout_create - an engine with options o (copied).  When fn is not
 * NULL it is called with each chunk's schedule as soon as it is known
 * (chunks before playback starts are reported when it does); the engine
 * then keeps those waiting chunks in a growing array.
 * Returns 0 and *out, TB_EINVAL (wpm <= 0; a negative or NAN latency,
 * pre-roll, connect or RTF; negative concurrency; an output neither
 * stream nor whole; rebuffering with a TTS stage), or TB_ENOMEM.
 */
int tb_playout_create(const struct tb_playout_opts *o, tb_play_fn fn, void *ud,
                      struct tb_playout **out);
void tb_playout_destroy(struct tb_playout *p); /* NULL is a no-op */

/* Starts over with new options (NULL keeps the old ones).  Keeps memory. */
int tb_playout_reset(struct tb_playout *p, const struct tb_playout_opts *o);

/*
 * tb_playout_add - chunk j+1 closed at time c (non-decreasing), its
 * completing event's token index tok (non-decreasing), cps >= 1 code
 * points.  Returns 0, TB_EINVAL (the latency or RTF hook returned a
 * negative, NAN or infinite value; the times hook no record, or times out
 * of order or not finite), or TB_ENOMEM (callback mode, or a TTS stage).
 */
int tb_playout_add(struct tb_playout *p, double c, uint64_t tok, uint32_t cps);

/*
 * tb_playout_add_timed - as tb_playout_add, with the chunk's duration
 * given in seconds (a timed voice such as eSpeak NG) instead of the rate
 * model's cps x 10 / wpm.  Once a timed chunk is added, S sums the given
 * durations (and pre-roll compares against that sum); the formulas above
 * hold unchanged with D_j the given durations.  Returns 0, TB_EINVAL (dur
 * negative, NAN or absurd; a hook's value as in tb_playout_add) or
 * TB_ENOMEM.
 */
int tb_playout_add_timed(struct tb_playout *p, double c, uint64_t tok, uint32_t cps, double dur);

/*
 * tb_playout_add_blank - as tb_playout_add, for a chunk with nothing to
 * say (only white space: ttsmeas.h's tb_tts_blank, "\n\n" between
 * paragraphs).  With a TTS stage it is what every live TTS path does
 * with it: no request, so no latency and no audio (b_j as any chunk,
 * f_j = d_j = b_j, D_j = 0), and no silence ends or starts at it.
 * Without a stage the rate model speaks it as any chunk (as it always
 * has).  Returns as tb_playout_add.
 */
int tb_playout_add_blank(struct tb_playout *p, double c, uint64_t tok, uint32_t cps);

/* The stream has ended: starts playback if pre-roll was never reached;
 * with a TTS stage, searches the minimum TPS and speed-up (O(m) per
 * simulated rate, about 100 rates).  Returns 0 or TB_ENOMEM. */
int tb_playout_finish(struct tb_playout *p);

/* tb_playout_finish_schedule - tb_playout_finish without the TTS stage's
 * minimum-TPS and speed-up searches (they stay NAN; a later
 * tb_playout_finish does nothing more): for a caller that needs only the
 * schedule, such as the gap-free pre-roll searched over many draws
 * (draws.h).  Without a stage it is tb_playout_finish, whose minimum TPS
 * costs nothing.  Returns 0 or TB_ENOMEM. */
int tb_playout_finish_schedule(struct tb_playout *p);

/*
 * tb_playout_gapless_preroll - the smallest whole millisecond of pre-roll
 * at which the chunks added so far play with no underrun, by bisection
 * over (0, ceil(1000 S_m)] ms (gap-free at S_m: every chunk is
 * synthesized before the start).  Each probe replays the TTS stage's
 * schedule over the stored chunks at that pre-roll (the options' is
 * ignored), without the minimum-TPS search and without calling a hook:
 * the same answer as adding the chunks afresh at each probed pre-roll.
 * Only with a TTS stage, after tb_playout_finish or
 * tb_playout_finish_schedule of at least one chunk and without a forced
 * start.  Returns 0 and *out, or TB_EINVAL.
 */
int tb_playout_gapless_preroll(struct tb_playout *p, double *out);

/*
 * tb_playout_force_start - starts playback now, at time t (>= the last
 * chunk's completion), as if the last chunk added had closed at t: a
 * bounded buffer that can hold no more must start playing.  The minimum
 * TPS and speed-up are then measured from that start.  While rebuffering
 * it resumes playback at t instead (the minimum TPS is unchanged).  With
 * a TTS stage the last chunk's text counts as closing at t and the
 * pre-roll becomes the audio of the chunks so far (the start itself
 * follows the rule above; the search re-times with the pre-roll S_q).
 * Returns 0, or TB_EINVAL when playing (not waiting for pre-roll or a
 * rebuffer) or no chunk was added.
 */
int tb_playout_force_start(struct tb_playout *p, double t);

/* tb_playout_last_begin - b_j of the chunk added last: when its synthesis
 * begins, known as soon as it is added (c_j without a TTS stage), though
 * its schedule may be reported later (the start is not final yet).
 * Returns 0 and *b, or TB_EINVAL when no chunk was added. */
int tb_playout_last_begin(const struct tb_playout *p, double *b);

/* Whether playback has started, and when (s_1).  With a TTS stage, once
 * the start is final (see above). */
int tb_playout_started(const struct tb_playout *p, double *s1);

/* Time the last scheduled chunk ends (e_j of the latest known), or the
 * start time when nothing has played; 0 before start. */
double tb_playout_end(const struct tb_playout *p);

/* Results so far (final after tb_playout_finish). */
void tb_playout_result(const struct tb_playout *p, struct tb_playout_result *out);

#endif
