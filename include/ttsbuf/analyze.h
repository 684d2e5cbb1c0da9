/*
 * analyze.h - the playout model straight over an in-memory stream, with no
 * ring and no clock: segment once, then evaluate any number of playout
 * settings over the chunk list.
 *
 * This is the fast path (the benchmark's "core"), the pre-roll curve, and
 * the reference the ring-driven simulator must agree with.  Both use the
 * same segmenter and playout engine, so there is one truth.
 *
 * Ownership: the caller owns the chunk array (tb_analyze_chunks_free).  Threads:
 * any; no shared state.
 */
#ifndef TTSBUF_ANALYZE_H
#define TTSBUF_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/stream.h"

/* A closed chunk with what the playout model needs. */
struct tb_chunk_at {
    double c;     /* completion time, s */
    uint64_t tok; /* token index of the completing event */
    uint32_t cps; /* code points */
    double dur;   /* seconds, from a timed voice; NAN: the rate model */
    int blank;    /* nothing to say (tb_tts_blank): a TTS stage sends it to
                   * no TTS (tb_playout_add_blank); 0 when not known */
};

struct tb_chunks {
    struct tb_chunk_at *v;
    size_t n, cap;
};

void tb_analyze_chunks_init(struct tb_chunks *c);
void tb_analyze_chunks_free(struct tb_chunks *c);
/* Appends one chunk (dur NAN: the rate model).  Returns 0 or TB_ENOMEM. */
int tb_analyze_chunks_push(struct tb_chunks *c, double t, uint64_t tok, uint32_t cps);

/*
 * tb_analyze_segment - runs the segmenter over the stream's content events
 * (reasoning events are skipped) and fills `out` (cleared first).  seg may
 * be a reused segmenter (it is reset).  Returns 0 or TB_ENOMEM.
 */
int tb_analyze_segment(const struct tb_stream *s, struct tb_seg *seg, struct tb_chunks *out);

/*
 * tb_analyze_playout - evaluates the playout model over a chunk list.
 * p is a reused engine (reset with o).  Returns 0, TB_EINVAL or TB_ENOMEM.
 */
int tb_analyze_playout(const struct tb_chunks *c, struct tb_playout *p,
                       const struct tb_playout_opts *o, struct tb_playout_result *out);

/* tb_analyze_schedule - tb_analyze_playout ending with
 * tb_playout_finish_schedule: the schedule without the TTS stage's
 * minimum-TPS and speed-up searches (they are NAN then). */
int tb_analyze_schedule(const struct tb_chunks *c, struct tb_playout *p,
                        const struct tb_playout_opts *o, struct tb_playout_result *out);

/* The pre-roll values of the report's curve: 0, 0.1, 0.25, 0.5, 1, 2 s. */
#define TB_CURVE_POINTS 6
extern const double tb_curve_prerolls[TB_CURVE_POINTS];

#endif
