/*
 * tts_stage_state.h - a TTS stage's state, which tts_stage.c (the API,
 * the chunk store, the minimum-TPS and speed-up searches) and
 * tts_stage_run.c (a run of the schedule over the stored chunks) share.
 * Types only.
 */
#ifndef TTSBUF_PLAY_TTS_STAGE_STATE_H
#define TTSBUF_PLAY_TTS_STAGE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/playout.h"

/* A chunk as the stage stores it, with the current run's times. */
struct tts_chunk {
    double c;     /* closing time (a forced start moves the last one) */
    uint64_t tok; /* token index of the closing event */
    uint32_t cps;
    double d;       /* D_j */
    double l;       /* L_j, with K added for the first chunk */
    double r;       /* R_j */
    double b, f, g; /* the current run's b_j, f_j (first audio) and d_j */
    int blank;      /* nothing to say: sent to no TTS, no audio, no latency */
};

/* A breakpoint of A(t): a step of audio, or a ramp of slope 1/R_j
 * starting (slope > 0) or ending (slope < 0). */
struct bp {
    double t;
    double step;
    double slope;
};

/* audio_reaches' walk over the sorted breakpoints, kept between calls:
 * the state after the groups before bp[i] (A(t) = a at t), valid while
 * they and theta and the rule for the slope (same) stay as they were. */
struct scan {
    size_t i;
    double a, t, slope, theta;
    int ramps, same, valid;
};

struct tb_tts_stage;

/* One run of the schedule over the stored chunks (tts_stage_run.c): the
 * trace's own, online, or a search's replay, re-timed. */
struct tts_run {
    struct tb_tts_stage *st;
    double tau;    /* < 0: the trace's times; else c_j = c_1 + u_j tau */
    int by_time;   /* u_j = c_j - c_1 (speed-up), else T_j - T_1 */
    double theta;  /* the pre-roll the start waits for */
    tb_play_fn fn; /* NULL in the searches */
    void *ud;
    size_t m, next, q; /* chunks run, the first not played, chunks at start */
    int started, has_cand;
    double cand, s1, e_prev, sum;
    uint32_t underruns, interruptions;
    double gap_total, gap_max, gap_llm, gap_tts;
    double worst; /* the longest silence, counted or not */
};

struct tb_tts_stage {
    struct tb_playout_opts o;
    tb_play_fn fn;
    void *ud;
    struct tts_chunk *v;
    size_t n, cap;
    struct bp *bp; /* chunks 0..bp_k-1's breakpoints, sorted by time */
    size_t bpcap, nbp, bp_k;
    double bp_rtf;       /* the first R_j among them; 0: none yet */
    int bp_same;         /* every R_j among them is bp_rtf */
    struct scan sc;      /* audio_reaches' walk so far over them */
    double speech;       /* S_m */
    double theta_search; /* the pre-roll the searches use */
    int silent;          /* a chunk that is not blank has no audio (D_j = 0) */
    size_t blanks;       /* blank chunks among them */
    int connected;       /* K was added (to the first chunk not blank) */
    struct tts_run run;  /* the trace's own schedule */
    int finished, forced;
    double min_tps, speedup;
    int none, method;
};

#endif
