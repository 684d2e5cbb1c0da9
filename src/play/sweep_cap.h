/*
 * sweep_cap.h - private to src/play: a sweep point's streams under a TTS
 * capacity shared by all of them (sweep_cap.c, capmodel.h): the FCFS
 * schedule of every chunk's synthesis at the point's settings, handed to
 * each stream's playout as its recorded times (playout.h's times hook).
 *
 * One per worker thread, reused from point to point (it grows to the
 * largest chunk count); only its thread touches it.
 */
#ifndef TTSBUF_PLAY_SWEEP_CAP_H
#define TTSBUF_PLAY_SWEEP_CAP_H

#include <stddef.h>

#include "sweep_state.h"
#include "ttsbuf/capmodel.h"
#include "ttsbuf/playout.h"

struct sweep_cap_ctx {
    const struct tb_capmodel_chunk *v;
    const double *first; /* f_j - b_j */
    size_t n;
};

struct sweep_cap {
    struct tb_capmodel_stream *s; /* one a stream */
    struct sweep_cap_ctx *ctx;    /* one a stream */
    struct tb_capmodel_chunk *v;  /* every chunk of every stream */
    double *first;                /* each chunk's first-audio offset */
    double *wait;                 /* scratch for the statistics */
    size_t cap;                   /* chunks the arrays hold */
};

/*
 * tb_sweep_cap_plan - the shared schedule of the point whose playout
 * options are o (latency, connect, concurrency, RTF, output, wpm), its
 * streams' chunk lists of segmentation seg, re-timed to tps when tps > 0
 * (as the sweep plays them), and the waits' statistics into *st.  0,
 * TB_EINVAL (a latency hook's value) or TB_ENOMEM.
 */
int tb_sweep_cap_plan(struct sweep_cap *c, const struct tb_sweep *sw, size_t seg, double tps,
                      const struct tb_playout_opts *o, struct tb_stats *st);

/* Stream i's times hook into o (after tb_sweep_cap_plan). */
void tb_sweep_cap_hook(struct sweep_cap *c, size_t i, struct tb_playout_opts *o);

void tb_sweep_cap_free(struct sweep_cap *c);

/* The LLM capacity (sweep.h): each stream's wait (sw->llm_wait, its
 * statistics) from its arrival and recorded duration (send to its last
 * event), and its first content event's time moved by it; nothing
 * without one.  0 or TB_ENOMEM.  At create. */
int tb_sweep_llm_plan(struct tb_sweep *sw);

/* After segmentation: every chunk list's closes moved by its stream's
 * wait (nothing without an LLM capacity). */
void tb_sweep_llm_shift(struct tb_sweep *sw);

#endif
