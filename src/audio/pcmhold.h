/*
 * pcmhold.h - private to libttsbuf: pieces of PCM held in order until a
 * start s_1 is known, then handed on, none before s_1 (pcmhold.c).  The
 * speaker holds eSpeak NG's pieces for the TTS stage's start, the PCM
 * feed a provider's for the pre-roll's; both on the WAV sink's virtual
 * clock, where nothing plays before the start.
 *
 * Caller-owned storage: zeroed is empty; tb_pcmhold_free releases it.
 * Memory: the pieces' PCM copied, grown by doubling; the caller caps it
 * (tb_pcmhold_frames).  Threads: one.
 */
#ifndef TTSBUF_AUDIO_PCMHOLD_H
#define TTSBUF_AUDIO_PCMHOLD_H

#include <stddef.h>
#include <stdint.h>

struct tb_pcmhold_piece;

struct tb_pcmhold {
    struct tb_pcmhold_piece *v; /* the pieces, in order */
    size_t n, cap;
    int16_t *pcm; /* and their PCM */
    size_t pcm_n, pcm_cap;
};

/* Where a piece goes at the start: c, the caller's own time for it (the
 * speaker's chunk close), due no earlier than s_1.  Returns 0 or a code
 * that stops the release. */
typedef int (*tb_pcmhold_fn)(void *ud, double c, double due, const int16_t *pcm, size_t n);

/* Holds a copy of pcm (n frames), due at due.  Returns 0 or TB_ENOMEM
 * (nothing held then). */
int tb_pcmhold_add(struct tb_pcmhold *h, double c, double due, const int16_t *pcm, size_t n);

/* The frames held. */
size_t tb_pcmhold_frames(const struct tb_pcmhold *h);

/* The start is s1: every piece held goes to fn(ud), in order, due at the
 * later of its due and s1, until fn returns non-zero; then h is empty
 * and its memory released.  Returns 0 or fn's code. */
int tb_pcmhold_release(struct tb_pcmhold *h, double s1, tb_pcmhold_fn fn, void *ud);

/* Releases h's memory, empty again. */
void tb_pcmhold_free(struct tb_pcmhold *h);

#endif
