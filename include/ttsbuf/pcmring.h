/*
 * pcmring.h - the audio end of the speech pipeline: a lock-free ring of
 * PCM between the synthesis thread and the audio clock, and the
 * accounting of what the listener hears.
 *
 * The writer (the thread that synthesizes) appends 16-bit mono frames;
 * the reader is the audio clock: PortAudio's callback in real time, or
 * the WAV renderer's loop on a virtual clock.  Each pull hands out
 * exactly the frames asked for:
 *   - before playback starts: silence, not counted (pre-roll filling up);
 *     playback starts once `preroll` seconds are queued, or the ring is
 *     full, or the writer has ended;
 *   - playing: queued speech; when the ring runs dry before the writer
 *     has ended, concealment (silence, or the stall cue) and the frames
 *     are counted: concealed frames, concealment events, underruns (a dry
 *     spell over TB_GAP_MIN_S) and interruptions (>= TB_INTERRUPT_S), the
 *     WebRTC playout-statistics vocabulary, measured on the audio clock
 *     to the sample;
 *   - once the writer has ended and the ring is empty: done (silence).
 * Each dry spell is recorded, with its position, when audio resumes.
 *
 * Threads: one writer thread (tb_pcmring_write, tb_pcmring_space,
 * tb_pcmring_end) and one reader (tb_pcmring_pull), lock-free over C11
 * atomics; tb_pcmring_pull never allocates, locks, prints or makes a system
 * call, so it is safe in a real-time audio callback.  tb_pcmring_done and
 * tb_pcmring_stats may be called from any thread; tb_pcmring_gaps once the
 * reader has stopped.  Ownership: create/destroy; no allocation between.
 */
#ifndef TTSBUF_PCMRING_H
#define TTSBUF_PCMRING_H

#include <stddef.h>
#include <stdint.h>

enum tb_pcmring_cue { TB_PCMRING_CUE_NONE = 0, TB_PCMRING_CUE_TICK, TB_PCMRING_CUE_TONE };

/* Name <-> cue ("none", "tick", "tone").  parse returns 0 or TB_EINVAL. */
int tb_pcmring_cue_parse(const char *name, enum tb_pcmring_cue *out);
const char *tb_pcmring_cue_name(enum tb_pcmring_cue c);

#define TB_PCMRING_GAPS_DEFAULT 4096u

struct tb_pcmring_opts {
    unsigned rate;           /* frames per second (the synthesizer's rate) */
    size_t capacity;         /* ring frames, rounded up to a power of two (>= 1024) */
    double preroll;          /* seconds queued before playback starts */
    enum tb_pcmring_cue cue; /* what fills a dry spell */
    size_t max_gaps;         /* dry spells kept with their position (0: default) */
};

/* One dry spell while playing, in frames of the audio clock. */
struct tb_audio_gap {
    uint64_t at;     /* frames pulled before it began */
    uint64_t frames; /* its length */
};

struct tb_pcmring_stats {
    uint64_t pulled;      /* frames handed to the clock so far */
    uint64_t played;      /* frames of speech among them */
    uint64_t first_audio; /* frame where playback started (UINT64_MAX: not yet) */
    uint64_t end_audio;   /* frame after the last speech frame */
    uint64_t concealed;   /* frames of concealment while playing */
    uint64_t concealment_events;
    uint32_t underruns;     /* dry spells > TB_GAP_MIN_S */
    uint32_t interruptions; /* dry spells >= TB_INTERRUPT_S */
    uint64_t gap_max;       /* longest dry spell, frames */
    uint64_t gaps_dropped;  /* dry spells beyond max_gaps (counted, not kept) */
    uint64_t high_water;    /* most frames ever queued */
    int forced_start;       /* playback started because the ring was full */
    int done;
};

struct tb_pcmring;

/* Returns 0 and *out, TB_EINVAL (rate 0, capacity over 2^28, negative
 * pre-roll) or TB_ENOMEM. */
int tb_pcmring_create(const struct tb_pcmring_opts *o, struct tb_pcmring **out);
void tb_pcmring_destroy(struct tb_pcmring *p); /* NULL is a no-op */

/* Writer: appends up to n frames; returns how many fit (the rest waits:
 * backpressure). */
size_t tb_pcmring_write(struct tb_pcmring *p, const int16_t *pcm, size_t n);
/* Writer: frames that fit now. */
size_t tb_pcmring_space(const struct tb_pcmring *p);
/* Writer: no more audio; after the queue plays out the player is done. */
void tb_pcmring_end(struct tb_pcmring *p);

/* Reader (real-time safe): fills out[0..frames). */
void tb_pcmring_pull(struct tb_pcmring *p, int16_t *out, size_t frames);

/* Any thread: whether the writer ended and everything has been pulled. */
int tb_pcmring_done(const struct tb_pcmring *p);
/* Any thread: a snapshot of the counters. */
void tb_pcmring_stats(const struct tb_pcmring *p, struct tb_pcmring_stats *st);
/* After the reader stopped: copies up to max recorded dry spells, in
 * order; returns how many there are (may exceed max). */
size_t tb_pcmring_gaps(const struct tb_pcmring *p, struct tb_audio_gap *out, size_t max);

/* Frames the reader has pulled (any thread; for clocks and tests). */
uint64_t tb_pcmring_pulled(const struct tb_pcmring *p);

/* Whether the calling thread is inside tb_pcmring_pull right now: lets a
 * test's allocation hook prove the real-time path never allocates. */
int tb_pcmring_in_pull(void);

#endif
