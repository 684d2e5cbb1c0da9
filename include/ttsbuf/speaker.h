/*
 * speaker.h - real speech: eSpeak NG synthesis of each chunk, or a TTS
 * provider's PCM as it arrives, played to a sink on an audio clock, and
 * the eSpeak-timed voice.
 *
 * A speaker is a timed voice (voice.h) for the drain: the drain hands it
 * each chunk's text as the chunk closes, on the drain's thread, and the
 * speaker synthesizes it there (eSpeak NG is used from that one thread
 * only).  Which durations the run uses is the caller's choice:
 *   eSpeak's   the speaker answers with each chunk's true duration, so the
 *              playout model runs on eSpeak's durations;
 *   the rate model's (rate_model set)  the speaker follows the rate model:
 *              each chunk's PCM is time-stretched with the sonic library
 *              (pitch kept) to exactly the rate model's duration, so what
 *              is heard has the gaps the rate model reports.  Rounding to
 *              whole frames is carried from chunk to chunk, so the audio
 *              never drifts more than one frame from the model.
 * Then, by sink:
 *   none       nothing is played: the eSpeak-timed simulation.  Durations
 *              are cached by text (a repeated chunk is not synthesized
 *              again).
 *   wav        the PCM goes through the player (pcmring.h) on a virtual
 *              audio clock and into a WAV file, exactly as it would be
 *              heard from the stream's t = 0: the leading silence, gaps
 *              (with the stall cue), the tail.  A chunk becomes playable
 *              at c + L (its close time plus --tts-latency), whatever the
 *              wall clock says, so the file is deterministic and rendered
 *              as fast as eSpeak synthesizes.  With a TTS stage (below)
 *              at the stage's f_j, and playback starts at the stage's
 *              s_1: the file's silences are the model's gaps.
 *   portaudio  real-time playback: a feeder thread writes each chunk's PCM
 *              into the player's lock-free ring L seconds after the drain
 *              handed it over (with a stage, f_j - c_j; a chunk eSpeak
 *              takes longer to speak is late by the difference), and
 *              PortAudio's callback pulls from it; dry spells are counted
 *              on the audio clock (frames played).  The drain must then
 *              run in real time (a monotonic clock).  The player's own
 *              pre-roll counts the audio queued, in chunk order.
 * The TTS stage (play's tts_connect, tts_concurrency, tts_rtf,
 * tts_latency_at): the speaker runs the playout model's own stage on the
 * chunks it speaks (the same latency draws, slots and RTF, with the
 * durations it plays), so each chunk's audio is playable when the model
 * says: at f_j, and with tts_rtf > 1 in frames of TB_FRAME_S, each once
 * synthesized, so playback stalls inside a chunk as the model's does
 * (ttsbuf-model(7)).
 *
 * A provider's voice (pcm_rate set): a real TTS speaks the chunks, and its
 * client hands the PCM to the speaker as it arrives (tb_speaker_pcm,
 * tb_speaker_pcm_end).  eSpeak NG is not started at all (a mock TTS in
 * the same process may use it), no TTS stage is run, and the sink plays
 * mono s16le at pcm_rate.  The voice follows the rate model: it counts
 * each chunk and leaves its duration alone (the true durations are known
 * only once the audio has come; the caller replays the measured records
 * for the final numbers).  What each sink does with the bytes:
 *   portaudio  they go into the player's ring as they arrive, in chunk
 *              order, and the callback plays them: the gaps are the heard
 *              ones, on the audio clock; the player's pre-roll counts what
 *              is queued.  The stream runs at pcm_rate (ALSA's plug or
 *              PulseAudio resample where the device needs it).
 *   wav        not tied to the wall clock: every 20 ms frame of chunk j
 *              (counted from its first byte) is playable at the arrival
 *              time of the byte that completes it, and plays at the later
 *              of that and the previous frame's end; playback starts at
 *              s_1 = max(the first frame's time, when the audio arrived,
 *              every chunk counted, reaches the pre-roll), or with the
 *              pre-roll never reached at the last arrival.  The file's
 *              silences are then the gaps the arrival times make, to a
 *              sample (with the stall cue, as for eSpeak's speech).
 *   none       refused (TB_EINVAL): there is nothing to play it on.
 * Bytes of chunk j+1 wait until chunk j has ended (a client with several
 * chunks in flight), at most TB_SPEAKER_HELD_MAX_S of audio in all; a
 * chunk that ends failed is the last one heard.  Every chunk must end
 * (tb_speaker_pcm_end, failed or not), else the chunks after it wait for
 * tb_speaker_finish, which plays what came, in order.
 *
 * Ownership: create/destroy.  Threads: every call from the drain's thread
 * (PortAudio's callback and the feeder are internal).  The library never
 * prints: ALSA/JACK start-up chatter is silenced (tb_speaker_quiet), and
 * failures come back as one-line messages.
 */
#ifndef TTSBUF_SPEAKER_H
#define TTSBUF_SPEAKER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ttsbuf/pcmring.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/voice.h"

enum tb_sink_kind { TB_SINK_NONE = 0, TB_SINK_WAV, TB_SINK_PORTAUDIO };

#define TB_PA_LATENCY_DEFAULT 0.1 /* s; PortAudio's suggested output latency */
/* The longest audio a WAV render holds, from t = 0, unless raised (an
 * hour: 159 MB), and the most it can be raised to: a WAV file's sizes are
 * 32-bit, 4 GiB of 16-bit mono at 22.05 kHz (eSpeak NG's rate). */
#define TB_AUDIO_MAX_DEFAULT_S 3600.0
#define TB_AUDIO_MAX_S 97391.0

struct tb_speaker_opts {
    enum tb_sink_kind sink;
    const char *target; /* wav: the file; portaudio: device name or index (NULL: default) */
    const char *voice;  /* eSpeak voice name; NULL: "en" */
    /* The voice and TTS options, the very struct the playout engine takes
     * (one from the command line to both): wpm (eSpeak's rate,
     * TB_TTS_WPM_MIN..TB_TTS_WPM_MAX), tts_latency (L: a chunk plays no
     * earlier than L after it closes), preroll (seconds of audio before
     * playback starts) and the TTS stage, played as above (a negative
     * connect, RTF or concurrency is TB_EINVAL); rebuffer is not its
     * business (ignored). */
    struct tb_playout_opts play;
    enum tb_pcmring_cue cue;  /* what a listener hears in a gap */
    double latency;           /* portaudio: suggested output latency, s (0: default) */
    size_t ring_frames;       /* player ring (0: 2^22 frames, 190 s at 22.05 kHz) */
    int count_synthesis;      /* sink none: each chunk's measured synthesis time
                               * is latency (one synthesizer, chunks in turn) */
    double max_audio_s;       /* wav: the render ends (before anything past it is
                               * written) rather than pass this many seconds,
                               * and the run goes on without audio; the result
                               * says where (cut_s) (0: TB_AUDIO_MAX_DEFAULT_S;
                               * at most TB_AUDIO_MAX_S) */
    double keep_s;            /* wav: the file keeps the first keep_s s of the
                               * render (0: all of it) */
    FILE *stream;             /* wav: written here (a seekable file, borrowed)
                               * instead of the file target */
    const atomic_int *cancel; /* wav: when non-zero (a signal handler may set
                               * it) the render stops, TB_ECANCELED; the
                               * WAV's header then says what was written */
    int rate_model;           /* durations are the rate model's (above); wpm is
                               * then the model's, TB_WPM_MIN..TB_WPM_MAX, and
                               * eSpeak speaks at it clamped to its own range */
    unsigned pcm_rate;        /* 0: eSpeak NG speaks.  Else a provider's PCM at
                               * this rate, TB_SPEAKER_PCM_RATE_MIN..MAX, is fed
                               * (above); voice, wpm, count_synthesis, rate_model
                               * and the TTS stage are then not used */
};

#define TB_SPEAKER_PCM_RATE_MIN 8000u
#define TB_SPEAKER_PCM_RATE_MAX 48000u
/* A provider's audio waiting for an earlier chunk's end or for the
 * pre-roll (WAV) is at most this long (TB_ETOOBIG past it). */
#define TB_SPEAKER_HELD_MAX_S 600.0

/* A chunk rendered to the rate model's duration is at most this long (a
 * longer one is TB_ETOOBIG): the stretched PCM is held in one buffer. */
#define TB_SPEAKER_CHUNK_MAX_S 600.0

/* Parses an --audio value: "none", "wav:FILE", "portaudio" or
 * "portaudio:DEVICE".  Sets sink and target (pointing into spec).
 * Returns 0 or TB_EINVAL. */
int tb_speaker_parse_sink(const char *spec, enum tb_sink_kind *sink, const char **target);

/* What the audio clock measured (sinks wav and portaudio), in seconds. */
struct tb_audio_result {
    unsigned rate;
    double latency;     /* portaudio: the output latency granted */
    double first_audio; /* when playback started on the audio clock */
    double end_audio;   /* when the last speech frame played */
    double speech;      /* seconds of speech played */
    double concealed;   /* seconds of concealment while playing */
    uint64_t concealment_events;
    uint32_t underruns, interruptions;
    double gap_total, gap_max;
    int forced_start;
    uint64_t device_underflows; /* portaudio: callbacks flagged paOutputUnderflow
                                 * (the device itself ran dry: host too slow) */
    uint64_t chunks;
    double synth_s;      /* wall time spent in eSpeak */
    double audio_s;      /* seconds of audio eSpeak produced */
    uint64_t cache_hits; /* sink none: chunks answered from the cache */
    double cut_s;        /* the WAV render reached its cap (max_audio_s): its
                          * audio ends here, on the stream's clock, and what
                          * came after was dropped while the run went on;
                          * NAN when it did not */
};

/* One gap on the audio clock: where it began (s) and how long it was. */
struct tb_audio_gap_s {
    double at, len;
};

struct tb_speaker;

/*
 * tb_speaker_create - starts eSpeak NG (not with pcm_rate) and the sink
 * (opens the WAV file, or PortAudio's device and stream; the stream runs,
 * playing silence, until tb_speaker_finish).  Returns 0 and *out;
 * TB_EBUSY (eSpeak in use), TB_ERANGE (wpm, pcm_rate, an audio cap over
 * TB_AUDIO_MAX_S), TB_EINVAL (voice, options, pcm_rate with the sink
 * none), TB_EIO (file, eSpeak data), TB_EDEVICE (no output device,
 * PortAudio failed), TB_ENOMEM.  Detail in err.
 */
int tb_speaker_create(const struct tb_speaker_opts *o, struct tb_speaker **out, char *err,
                      size_t errlen);

/* The voice to put in tb_sim_opts.voice (owned by the speaker). */
const struct tb_voice *tb_speaker_voice(struct tb_speaker *s);

/*
 * tb_speaker_pcm - chunk j (1-based, as the drain numbers chunks) received
 * n more bytes of mono s16le PCM at t (seconds on the run's clock, the
 * origin of the drain's times; >= 0, finite).  Any split: an odd byte
 * waits for its other half.  The bytes are copied.  Calls come in the
 * order they were received, t non-decreasing, from the drain's thread
 * (the TTS client's callbacks run there).  Returns 0 (bytes of a chunk
 * after one that failed are dropped), TB_EINVAL (not a pcm_rate speaker,
 * after finish, j 0, a bad t, chunk j already ended), TB_ETOOBIG (more
 * than TB_SPEAKER_HELD_MAX_S waiting), TB_ECANCELED (the cancel flag), TB_EIO, TB_ENOMEM.  A
 * failure sticks: every later call returns it and tb_speaker_finish reports it with its message.
 */
int tb_speaker_pcm(struct tb_speaker *s, uint32_t j, double t, const void *pcm, size_t n);

/*
 * tb_speaker_pcm_end - chunk j has all its audio (received by t); failed:
 * the speech ends after what came of it (later chunks are not played, and
 * the real-time player's silence from there on is the tail, not a gap).
 * Same thread and returns as tb_speaker_pcm.
 */
int tb_speaker_pcm_end(struct tb_speaker *s, uint32_t j, double t, int failed);

/*
 * tb_speaker_finish - the stream has ended: plays out what is queued
 * (portaudio: waits for it, then pads with silence for the output latency
 * so the tail is not cut), closes the sink and fills *r.  Idempotent.
 * Returns 0 (also when the WAV reached max_audio_s: r->cut_s says where),
 * TB_EIO (writing the WAV), TB_ECANCELED (the cancel flag) or TB_EDEVICE:
 * the first failure of the run or of the finish.  Detail in err.
 */
int tb_speaker_finish(struct tb_speaker *s, struct tb_audio_result *r, char *err, size_t errlen);

/* After finish: copies up to max gaps; returns how many were recorded. */
size_t tb_speaker_gaps(const struct tb_speaker *s, struct tb_audio_gap_s *out, size_t max);

/*
 * tb_speaker_quiet - silences what ALSA-lib and JACK print on stderr while
 * PortAudio probes its host APIs ("ALSA lib pcm.c:... Unknown PCM" for
 * each absent card, "jack server is not running").  libportaudio links
 * both, so their documented hooks (snd_lib_error_set_handler,
 * jack_set_error_function, jack_set_info_function) are found with
 * dlopen(NULL)/dlsym, with no ALSA or JACK header or link, and given
 * handlers that drop the text.  PortAudio still returns its errors.  The
 * setting is process-wide and permanent.  Returns how many hooks were
 * installed (0..3).  Call before Pa_Initialize, not concurrently with
 * PortAudio (the PortAudio sink calls it itself).
 */
int tb_speaker_quiet(void);

/* The player's live counters (sinks wav and portaudio); returns 0, or
 * TB_EINVAL for the sink none.  Any thread. */
int tb_speaker_player_stats(const struct tb_speaker *s, struct tb_pcmring_stats *st);

void tb_speaker_destroy(struct tb_speaker *s); /* NULL is a no-op */

#endif
