/*
 * sweep_state.h - a sweep's state, which sweep.c (the grid, its inputs,
 * its accessors) and sweep_run.c (the three phases over the threads)
 * share.  Types only.
 */
#ifndef TTSBUF_PLAY_SWEEP_STATE_H
#define TTSBUF_PLAY_SWEEP_STATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/seg.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/sweep.h"
#include "ttsbuf/ttslat.h"

/* What a stream needs beyond its chunk lists. */
struct input {
    const char *name;
    const struct tb_stream *s;
    double a0;   /* first content event's arrival */
    uint64_t t0; /* its token index */
    uint64_t events;
    double eou; /* the end of turn of turn i + 1 (eou_at), 0 without */
    int tool;   /* a tool turn's answer (tb_sweep_input's) */
    double tool_head, tool_start;
};

/* Chunk j*'s leading silence in one chunk list (sweep.h): with and
 * without a TTS stage (j* = the first chunk not blank, or chunk 1);
 * NAN when no chunk is said. */
struct lead {
    double stage, plain;
};

struct tb_sweep {
    double *axis[TB_AX__COUNT];
    size_t n[TB_AX__COUNT];
    double target;
    struct input *in;
    size_t nin;
    uint64_t events;
    size_t nseg;              /* chunk x min_chars pairs */
    struct tb_chunks *chunks; /* nseg x nin, pair-major */
    struct lead *lead;        /* the same, each list's leading silence */
    tb_tts_latency_fn eou_at, lead_at;
    void *eou_ud, *lead_ud;
    double target_v2v;
    const double *tool_head, *tool_start; /* borrowed while set_inputs reads them, then NULL */
    int capacity;                         /* the TTS capacity shared by the streams, 0: none */
    double *arrival;                      /* each stream's arrival (owned), or NULL: all at 0 */
    int llm_capacity;                     /* LLM requests in flight at most, 0: none */
    double *llm_wait;                     /* each stream's wait for it (owned), or NULL */
    struct tb_stats llm_stats;            /* their statistics */
    struct tb_sweep_point *pt;
    size_t npt, nseries;
    struct tb_sweep_tts tts;
    struct tb_ttslat **lat; /* one per latency value (TTS shapes), else NULL */
    /* work distribution */
    int phase;
    atomic_size_t next, done;
    size_t units;
    int ran;
};

#endif
