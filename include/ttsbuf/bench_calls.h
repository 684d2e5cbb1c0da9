/*
 * bench_calls.h - `ttsbuf bench --conversations`: calls, conversations
 * whose turns are sent on the speech clock (bench_calls.c runs them inside
 * a level; bench_uturn.c draws the caller's speaking time and barge-in's).
 *
 * A call is conversation j mod n (convo.h) for global call id j.  Turn 0
 * is sent when the call starts; turn k+1 is sent at
 *     t_start(k) + play_end(k) + user_turn(k+1)
 * where play_end(k) is when the playout model (the level's sim options,
 * tb_bench_analyze) finishes speaking turn k's answer, counted from turn
 * k's request start, and user_turn(k+1) is the caller's speaking time
 * drawn below.  Turn k's request carries the whole conversation so far as
 * chat messages: the system prompt (if any), user turn 0, the assistant's
 * answer 0 exactly as received (the content text of the stream), user
 * turn 1, ..., user turn k.  A turn that failed or was cut ends its call:
 * the remaining turns are not sent.  Record ids: call id x
 * TB_CONVO_TURNS_MAX + turn.
 *
 * Shards: shard I of N runs the calls whose id is I mod N, with its share
 * of the calls at once (as requests' concurrency) or of the rate (R/N).
 * Waiting calls (the answer playing, then the caller speaking) sit in a
 * min-heap by the time of their next turn: O(log calls) a turn, nothing
 * per wake-up.
 *
 * Threads: any (pure functions here).
 */
#ifndef TTSBUF_BENCH_CALLS_H
#define TTSBUF_BENCH_CALLS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Tool calls.  A turn of a conversation may offer tools (convo.h): its
 * request carries them (api.h, tools_json).  When that request's stream
 * ends well with a tool call and no content, the call waits the tool's
 * latency (bench --tool-latency SPEC: drawn for call c's turn k as draw
 * k + 1 of the spec seeded with tb_ttslat_draw_seed(seed, c)) from the
 * stream's end, then sends the turn again with the tool exchange after
 * the caller's words: the assistant's call (the first call's id and name;
 * its arguments are sent as {}: only their size is kept) and the tool's
 * result, TB_TOOL_RESULT, in each dialect's shape (api.h).  That second
 * request's stream is the turn's answer and its record (bench_rec.h, Tool
 * calls): tool_s is the first stream's last call's end to the second
 * request's send.  The conversation's later turns carry the answer alone,
 * not the exchange.  A stream that makes a call and speaks too is spoken
 * as any other, its call not answered; a second request answered with
 * another call is not answered again.  No record is made of the first
 * request.
 *
 * Filler (bench --filler TEXT): a phrase the agent says as soon as the
 * tool call starts, by the modelled TTS: its audio starts at the call's
 * start + the first chunk's TTS latency (--tts-latency's draw for chunk
 * 1, + --tts-connect) and lasts its code points at the speech rate (the
 * rate model, --wpm).  The record says how much of the silence around
 * the tool it fills (ttsbuf-model(7), Tool calls).
 */
#define TB_TOOL_RESULT "{\"ok\": true, \"result\": \"The lookup found one match.\"}"
#define TB_TOOL_LATENCY_DEFAULT "0.5"
#define TB_FILLER_BUILTIN "One moment, let me check."

/* The caller's speaking time before each turn after the first. */
enum tb_uturn_kind {
    TB_UTURN_CONST = 0, /* "S": a seconds */
    TB_UTURN_UNIFORM,   /* "uniform:A..B": uniform on [a, b] */
    TB_UTURN_EXP,       /* "exp:MEAN": exponential, mean a */
    TB_UTURN_WORDS      /* "words:WPM[,PAUSE]": the user turn's words at a
                         * words per minute, plus b seconds */
};

struct tb_uturn {
    enum tb_uturn_kind kind;
    double a, b;
};

#define TB_UTURN_DEFAULT "words:150,0.5"
#define TB_UTURN_MAX_S 3600.0 /* any seconds in a spec */

/* Parses a spec (above; uniform:A,B reads as uniform:A..B, an older
 * spelling).  Returns 0, or TB_EINVAL with a one-line reason in err (a
 * negative number, "is negative"; a number outside 0..TB_UTURN_MAX_S,
 * B < A, a WPM outside 1..10000, an unknown kind). */
int tb_uturn_parse(const char *spec, struct tb_uturn *u, char *err, size_t errlen);

/* The spec's canonical text ("words:150,0.5", "uniform:1..3"). */
void tb_uturn_name(const struct tb_uturn *u, char *out, size_t outlen);

/* The caller's speaking time before turn `turn` of call `call` whose
 * text is `text` (words: runs of non-blank bytes), drawn from a generator
 * seeded by (seed, call, turn) only: a shard draws what one run would. */
double tb_uturn_draw(const struct tb_uturn *u, uint64_t seed, uint64_t call, uint32_t turn,
                     const char *text);

/*
 * Barge-in (bench --barge-in P --barge-in-at SPEC): the caller interrupts
 * turn k of call c with probability P, b seconds of playback after the
 * turn's first audio (b from SPEC: "S", "uniform:A..B" or "exp:MEAN", the
 * kinds of --user-turn but words), that is at
 *     T = t_start(k) + s_1(k) + b
 * where s_1 is the turn's first audio by the playout model.  Both draws
 * come from a generator seeded by (seed, call, turn) alone, apart from
 * --user-turn's: a shard draws what one run would, and a run with P = 0
 * draws the same speaking times as a run without barge-in.  What happens
 * at T (bench.h): a stream still in flight is closed; a stream ended whose
 * playback goes on past T is interrupted too; a turn whose playback ended
 * by T is not interrupted.  The next turn is sent at T + user_turn(k+1).
 */
#define TB_BARGE_AT_DEFAULT "uniform:0.5..4"
/* Barge-in with a real TTS: the player flushes at the interruption what
 * it had not yet handed to the device; the caller still hears one output
 * buffer (20 ms, a common device period) of it (ttsbuf-model(7)). */
#define TB_BARGE_OUTBUF_S 0.020

/* Parses --barge-in-at's SPEC into u (a struct tb_uturn of kind CONST,
 * UNIFORM or EXP).  Returns 0, or TB_EINVAL with a one-line reason in err
 * (a words: spec, or what tb_uturn_parse refuses). */
int tb_barge_at_parse(const char *spec, struct tb_uturn *u, char *err, size_t errlen);

/* Whether turn `turn` of call `call` is interrupted (probability p in
 * [0, 1]), and after how many seconds of playback: b >= 0, or NAN when it
 * is not.  Pure. */
double tb_barge_draw(double p, const struct tb_uturn *at, uint64_t seed, uint64_t call,
                     uint32_t turn);

/* How the calls of one level went, from its records (call >= 0):
 * calls seen, completed (every turn of the call sent and ok: the turns
 * are its conversation's, or the first `turns` of them, turns 0: all),
 * ended early (a turn failed or was cut), and the turns.  A call with
 * neither (the run was interrupted between its turns) counts only in
 * calls. */
struct tb_bench_calls_count {
    size_t calls, completed, ended_early, turns;
};

struct tb_bench_recs;
struct tb_convos;
/* Counts level `level` of r.  Returns 0 or TB_ENOMEM.  Any thread. */
int tb_bench_calls_count(const struct tb_bench_recs *r, uint32_t level, const struct tb_convos *cv,
                         size_t turns, struct tb_bench_calls_count *out);

#endif
