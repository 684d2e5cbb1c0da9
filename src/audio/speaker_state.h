/*
 * speaker_state.h - a speaker's state, which speaker.c (creating it, the
 * voice's chunk hook, a provider's PCM, the result), speaker_render.c
 * (eSpeak NG's speech and its duration cache) and speaker_sink.c (the
 * sink, and each piece's time on it) share.  Types only.
 */
#ifndef TTSBUF_AUDIO_SPEAKER_STATE_H
#define TTSBUF_AUDIO_SPEAKER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "pcmhold.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/speaker.h"
#include "ttsbuf/voice.h"

struct tb_tts;
struct tb_sink;
struct tb_tts_stage;
struct tb_pcmfeed;

/* A slot of the duration cache (speaker_render.c). */
struct centry {
    uint64_t hash;
    char *text; /* NULL: empty slot */
    size_t len;
    double dur;
    double busy; /* its synthesis time, measured once */
};

struct tb_speaker {
    struct tb_speaker_opts o;
    struct tb_voice voice;
    struct tb_tts *tts;
    struct tb_sink *sink;
    struct tb_clock mono;
    unsigned rate;
    struct centry *cache;
    size_t ncache;
    uint64_t chunks, hits;
    double synth_s;
    uint64_t frames;
    int finished, failed; /* failed: the sink's TB_E* code, or 0 */
    struct tb_audio_result res;
    int16_t *sbuf; /* the stretched chunk (rate model) */
    size_t scap;
    double model_s;              /* rate model: seconds rendered so far, and */
    uint64_t sframes;            /* the frames they became */
    struct tb_audio_gap_s *gaps; /* after finish, in seconds */
    size_t ngaps;
    struct tb_tts_stage *stage; /* the TTS stage's schedule, when one is set */
    int holding;                /* pieces wait for the stage's start (WAV) */
    struct tb_pcmhold hold;     /* those pieces */
    double due_last;            /* the latest due time handed to the sink */
    double t_entry;             /* the monotonic clock when the drain handed the chunk */
    struct tb_pcmfeed *feed;    /* pcm_rate: the provider's PCM, in chunk order */
    int sink_ended;             /* the feed's speech failed: the sink was told */
    char err[256];
};

#endif
