/*
 * heard.h - what a caller heard of an answer it interrupted (barge-in):
 * the playout model's schedule of the stream's chunks, read at the moment
 * t of the interruption (heard.c).
 *
 * The stream is what arrived (cut at the interruption when the client
 * closed it then); times are seconds from the request's start, as the
 * stream's events.  The schedule is the model's, with the segmenter and
 * the playout engine `sim` uses, over the stream segmented once
 * (analyze.h: equal to `ttsbuf sim --trace` whenever the ring never
 * fills); a timed voice (o->voice) is not modelled here: the rate model
 * speaks.
 *
 * Definitions (ttsbuf(1), BENCH, barge-in):
 *   - a chunk is heard when its playback ended by t (e_j <= t); chunks
 *     play in order, so the heard chunks are the first ones;
 *   - a token is heard when the chunk its event completes is heard (an
 *     event whose text runs on into the next chunk counts with the chunk
 *     it completes); tokens_heard is thus the token index of the last
 *     heard chunk's completing event, plus one;
 *   - tokens are the content tokens that arrived by t; unheard = tokens -
 *     tokens_heard: received, paid for, never spoken;
 *   - chars_unplayed: code points of the chunks whose synthesis had begun
 *     by t (b_j <= t; the chunk's close without a TTS stage) and whose
 *     playback had not ended (e_j > t): text a TTS was given and whose
 *     audio was not all played.
 *
 * Threads: any.  Ownership: nothing is kept.
 */
#ifndef TTSBUF_HEARD_H
#define TTSBUF_HEARD_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"

struct tb_heard {
    double t;                /* the interruption, s from the request's start */
    uint32_t chunks;         /* chunks the stream made */
    uint32_t chunks_heard;   /* ... played to their end by t */
    uint64_t tokens;         /* content tokens that arrived by t */
    uint64_t tokens_heard;   /* see above */
    uint64_t tokens_unheard; /* tokens - tokens_heard */
    uint64_t chars_unplayed; /* see above */
    double play_end;         /* e_m: when the whole answer would have ended
                              * (NAN when there were no chunks) */
    int interrupted;         /* 1 when something was left unheard at t: a
                              * chunk not played to its end, or text that
                              * arrived by t in no heard chunk */
    /* The gaps the caller heard before t (playout.h's counted gaps g_j,
     * the silence [s_j - g_j, s_j] before chunk j, cut at t): those whose
     * silence began before t, each min(g_j, t - (s_j - g_j)), counted when
     * over TB_GAP_MIN_S; their number, sum and longest.  With a TTS
     * stage's frame player (R_j > 1) a chunk's stalls are in its g_j and
     * so counted as one silence before it.  Each cut gap's split by
     * cause keeps its order (playout.h: the wait for text comes first):
     * gap_llm min(gap_llm_j, the cut gap), gap_tts the rest. */
    uint32_t underruns_before;
    double gap_total_before, gap_max_before, gap_llm_before, gap_tts_before;
};

/*
 * tb_heard_at - fills *h for the stream interrupted at time t (>= 0).
 * Returns 0; TB_EINVAL (t negative or NAN, bad options: err says);
 * TB_ENOMEM.
 */
int tb_heard_at(const struct tb_stream *s, const struct tb_sim_opts *o, double t,
                struct tb_heard *h, char *err, size_t errlen);

#endif
