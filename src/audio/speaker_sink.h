/*
 * speaker_sink.h - private to the speaker: its sink, opened for the
 * speaker's options, and each piece of PCM handed to it at its time: as
 * the TTS stage has a chunk's audio (eSpeak NG's speech), or as a
 * provider's PCM feed times it (speaker_sink.c).  Every call from the
 * drain's thread.  Returns: 0 or a TB_E* code, with the detail in s->err
 * (tb_speaker_open_sink: in err).
 */
#ifndef TTSBUF_AUDIO_SPEAKER_SINK_H
#define TTSBUF_AUDIO_SPEAKER_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/pcmring.h"

struct tb_speaker;

/* The WAV file or the PortAudio stream of s->o, playing the player po,
 * in s->sink. */
int tb_speaker_open_sink(struct tb_speaker *s, const struct tb_pcmring_opts *po, char *err,
                         size_t errlen);

/* A chunk's PCM (n frames, d seconds, closing at c) to the sink as the
 * TTS stage has it (s->stage; none: all of it at c + L). */
int tb_speaker_stage_play(struct tb_speaker *s, double c, double d, const int16_t *pcm, size_t n);

/* Once the stage has started, the pieces held for its start go to the
 * sink (none before s_1); before it, and when nothing is held, 0. */
int tb_speaker_release(struct tb_speaker *s);

/* A piece of the provider's PCM to the sink (pcmfeed.h's out, ud the
 * speaker): the WAV sink plays it from due, the real-time sink now. */
int tb_speaker_pcm_out(void *ud, double due, const int16_t *pcm, size_t n);

#endif
