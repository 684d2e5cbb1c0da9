/*
 * speaker_render.h - private to the speaker: eSpeak NG's speech of a
 * chunk, stretched to the rate model's duration, and the duration cache
 * of the eSpeak-timed simulation (speaker_render.c).  Every call from the
 * drain's thread, on a speaker whose eSpeak NG is open (s->tts).
 */
#ifndef TTSBUF_AUDIO_SPEAKER_RENDER_H
#define TTSBUF_AUDIO_SPEAKER_RENDER_H

#include <stddef.h>
#include <stdint.h>

struct tb_speaker;

/* The chunk's PCM at eSpeak NG's own pace in *pcm (n frames, owned by
 * eSpeak NG until the next call), its synthesis time counted in
 * s->synth_s and its frames in s->frames.  Returns 0 or tb_tts_synth's
 * code. */
int tb_speaker_synth(struct tb_speaker *s, const char *text, size_t len, const int16_t **pcm,
                     size_t *n);

/* Following the rate model: the chunk's PCM, stretched to dur seconds,
 * in *out (nout frames, the speaker's buffer until the next call).  The
 * frame count carries the rounding over from the chunks before.  Returns
 * 0, TB_ETOOBIG (a chunk over TB_SPEAKER_CHUNK_MAX_S) or a code from
 * synthesis or stretching, with the detail in s->err. */
int tb_speaker_render_rate(struct tb_speaker *s, const char *text, size_t len, double dur,
                           const int16_t **out, size_t *nout);

/* Sink none: the chunk's eSpeak NG duration in *dur and, when
 * count_synthesis is set, its synthesis time in *busy (else 0), from the
 * cache when the text was seen before.  Returns 0 or tb_tts_synth's
 * code. */
int tb_speaker_measure(struct tb_speaker *s, const char *text, size_t len, double *dur,
                       double *busy);

/* The cache's slots for a speaker with sink none: 0 or TB_ENOMEM. */
int tb_speaker_cache_init(struct tb_speaker *s);
/* The cache and the texts it copied; none is a no-op. */
void tb_speaker_cache_free(struct tb_speaker *s);

#endif
