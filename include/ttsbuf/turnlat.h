/*
 * turnlat.h - where a turn's wait went: from the caller's end of speech to
 * the agent's first audible sample (voice-to-voice), split into parts that
 * sum to it (turnlat.c).
 *
 * On the stream's clock (the LLM request sent at 0), with j* the first
 * chunk that has audio (D_j > 0: a blank chunk has none with a TTS stage),
 * c its close, b its synthesis' begin, f its first audio byte and s its
 * playback start (playout.h), and T the first content token's arrival:
 *   eou          the caller's end of speech to the request: end-of-turn
 *                detection and the final transcript (modelled: --eou)
 *   ttft         0 to T: the request to the first content token
 *   aggregation  T to c: the chunk policy's wait for chunk j*'s text
 *   tts_queue    c to b: a free synthesis slot, the chunks before it
 *                (in-order sending), a local synthesizer's busy time
 *   tts_ttfb     b to f: the TTS's first byte (the connect latency too)
 *   preroll      f to s: playback waits for the pre-roll (and, for an
 *                engine slower than real time, its first frame)
 *   lead         s to the first audible sample: the leading silence of
 *                chunk j*'s audio (measured on the PCM, ttsmeas.h, or
 *                modelled: --tts-lead; the rate model's own audio has
 *                none)
 *   v2v          their sum: eou + s + lead, exact up to rounding
 * A part not measured or modelled is NAN, and then so is v2v.  Only chunk
 * j*'s leading silence is a part of the wait; a later chunk's is audio
 * to the playout (a measured chunk's duration holds it).
 *
 * Plain values; any thread.
 */
#ifndef TTSBUF_TURNLAT_H
#define TTSBUF_TURNLAT_H

#include <stdint.h>

struct tb_turn_lat {
    uint32_t chunk; /* j*, 1-based; 0: no chunk had audio */
    double eou, ttft, aggregation, tts_queue, tts_ttfb, preroll, lead, v2v;
    /* A call's turn that made a tool call (bench_calls.h, Tool calls): the
     * tool call's end to the request carrying its result, on the turn's
     * clock; ttft then runs from the turn's first request to the call's
     * end plus the second request to its first content token.  NAN: no
     * tool call (not a part then: v2v is the sum of the others).  Not in
     * tb_turn_lat_keys: bench's records write it as "tool_s". */
    double tool;
};

/* The parts' names as outputs key them ("eou_s", ...), in the order of a
 * turn, v2v last. */
#define TB_TURN_LAT_PARTS 8
extern const char *const tb_turn_lat_keys[TB_TURN_LAT_PARTS];

/* Part i (0 .. TB_TURN_LAT_PARTS - 1, in the order of the keys). */
double tb_turn_lat_part(const struct tb_turn_lat *l, int i);
/* Sets part i. */
void tb_turn_lat_set(struct tb_turn_lat *l, int i, double v);

/* Every part NAN, no chunk. */
void tb_turn_lat_clear(struct tb_turn_lat *l);

/*
 * tb_turn_lat_play - the parts from the request on, for chunk j* (chunk)
 * first content token at ttft, closed at close, with begin, ready (its
 * first audio) and start as its tb_play says (playout.h).  eou and lead
 * stay as they are; v2v is recomputed (tb_turn_lat_sum).
 */
void tb_turn_lat_play(struct tb_turn_lat *l, uint32_t chunk, double ttft, double close,
                      double begin, double ready, double start);

/* v2v = the sum of the parts in this order: eou + ttft + tool (when not
 * NAN) + aggregation + tts_queue + tts_ttfb + preroll + lead; NAN when
 * one of the others is NAN. */
void tb_turn_lat_sum(struct tb_turn_lat *l);

/* A turn the caller interrupted at stop (the stream's clock; NAN: not
 * interrupted), its playback started at start (s, the first audio):
 * a first audible sample (start + lead) after stop was never heard, so
 * lead and v2v become NAN; a start after stop leaves lead NAN too.
 * Otherwise l is unchanged. */
void tb_turn_lat_heard_by(struct tb_turn_lat *l, double start, double stop);

/* Adds the parts to o under tb_turn_lat_keys (null where NAN; numbers
 * that read back bit for bit). */
struct cJSON;
void tb_turn_lat_json(struct cJSON *o, const struct tb_turn_lat *l);

#endif
