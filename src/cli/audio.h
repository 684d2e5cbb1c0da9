/*
 * audio.h - the speech options shared by `sim` and `run` (--audio,
 * --voice-model, --voice, --stall-cue, --latency), starting and finishing
 * the speaker, and the audio part of the reports.
 */
#ifndef TTSBUF_CLI_AUDIO_H
#define TTSBUF_CLI_AUDIO_H

#include <stdatomic.h>
#include <stdio.h>

#include "ttsbuf/clock.h"
#include "ttsbuf/pcmring.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/speaker.h"
#include "ttsbuf/ttsmeas.h"

enum {
    TB_O_AUDIO = 400,
    TB_O_VOICEMODEL,
    TB_O_VOICE,
    TB_O_CUE,
    TB_O_PALAT,
    TB_O_AUDIOMAX,
};

/* Their rows: tb_opt_audio (optdoc.h). */

struct tb_cli_audio {
    const char *spec; /* --audio as given */
    enum tb_sink_kind sink;
    const char *target;
    int espeak;          /* --voice-model espeak (implied by a sink) */
    unsigned pcm_rate;   /* a real TTS speaks (run --tts-url): the sink plays
                          * its PCM at this rate, eSpeak NG is not started
                          * (speaker.h); 0: eSpeak NG */
    const struct tb_tts_log *tts_log; /* ... and which TTS it was, for the
                                       * reports (the run's log, borrowed),
                                       * or NULL */
    int count_synthesis; /* --voice-model espeak+synthesis */
    const char *voice;
    enum tb_pcmring_cue cue;
    double latency;
    struct tb_speaker *sp;
    struct tb_audio_result res;
    struct tb_audio_gap_s *gaps;
    size_t ngaps;
    double max_s;             /* --audio-max (0: TB_AUDIO_MAX_DEFAULT_S) */
    double keep_s;            /* the WAV keeps the first keep_s s (0: all) */
    const atomic_int *cancel; /* set by the command: stops a WAV render */
    int have_rate;            /* rate-model result below is filled */
    FILE *html_f;             /* the WAV rendered for --html alone: a file
                               * without a name (tmpfile), or NULL */
    struct tb_sim_result rate;
};

void tb_cli_audio_init(struct tb_cli_audio *a);
/* One speech option: an option handler (cli.h). */
int tb_cli_audio_option(struct tb_cli_audio *a, int c, const char *arg);

/* Whether any speech option asks for eSpeak. */
int tb_cli_audio_wanted(const struct tb_cli_audio *a);

/* Starts eSpeak and the sink, and makes o use the eSpeak voice.  With a
 * WAV sink and the stream s known (NULL: a live run), a stream whose
 * audio would last longer than --audio-max (tb_seg_spoken_until) is
 * refused first, before the file is created (TB_ETOOBIG).  0, or
 * (printed) TB_EDEVICE (no device), TB_EIO / TB_ENOMEM, TB_EINVAL. */
int tb_cli_audio_start(struct tb_cli_audio *a, struct tb_sim_opts *o, const struct tb_stream *s);

/* --audio wav:FILE probed before any work (tb_cli_output_probe): 0 or
 * TB_EINVAL (printed). */
int tb_cli_audio_probe(const struct tb_cli_audio *a);

/* The rate model on stream s with options o (without the speaker's
 * voice), kept to report the difference between the two models; nothing
 * when the stream cannot be simulated. */
void tb_cli_audio_rate_model(struct tb_cli_audio *a, const struct tb_stream *s,
                             const struct tb_sim_opts *o);

/* For --html: makes the run render its audio to a WAV (unless --audio
 * wav:FILE was given: a temporary file that has no name, so nothing is
 * left behind however the run ends, keeping the first keep_s seconds).
 * 0, or (printed) TB_EINVAL: --audio portaudio cannot be embedded;
 * TB_EIO: no temporary file. */
int tb_cli_audio_for_html(struct tb_cli_audio *a, double keep_s);

/* The WAV the run rendered, at its start, for reading; NULL when there is
 * none or it cannot be opened (*what names it for the message).  Close
 * it with tb_cli_audio_wav_close. */
FILE *tb_cli_audio_wav_open(const struct tb_cli_audio *a, const char **what);
void tb_cli_audio_wav_close(const struct tb_cli_audio *a, FILE *w);

/* Whether the run must go in real time (a PortAudio sink). */
int tb_cli_audio_realtime(const struct tb_cli_audio *a);

/* Ends the speaker (plays out what is queued).  0 (also when the audio
 * reached its cap: the outputs are written, then tb_cli_audio_verdict
 * says so), or the speech output's failure (printed): TB_EIO (a write),
 * TB_EDEVICE, TB_ECANCELED, TB_ENOMEM. */
int tb_cli_audio_finish(struct tb_cli_audio *a);

/* After the outputs: when the audio reached --audio-max, the one line
 * that says where it was cut and what holds it (the WAV file, or the
 * --html page's audio), and TB_EXIT_FAILED; else TB_EXIT_OK, nothing
 * printed. */
int tb_cli_audio_verdict(const struct tb_cli_audio *a);

/* Plays s out under o (tb_sim_run, fn(ud) told each chunk's schedule):
 * on the monotonic clock when the run goes in real time, else on a
 * virtual one; then ends the speaker (tb_cli_audio_finish), whether the
 * run failed or not.  *rc is tb_sim_run's result (0, or an error
 * described in err, not printed).  Returns tb_cli_audio_finish's answer. */
int tb_cli_audio_sim(struct tb_cli_audio *a, const struct tb_stream *s, const struct tb_sim_opts *o,
                     tb_play_fn fn, void *ud, struct tb_sim_result *r, int *rc, char *err,
                     size_t errlen);

/* The human report's audio part, after tb_cli_report_human. */
void tb_cli_audio_report(FILE *f, const struct tb_cli_audio *a, const struct tb_sim_opts *o,
                         const struct tb_sim_result *r, size_t max_gaps);

/* Adds "audio" (or null) to a JSON report object being built; a cJSON* as
 * void* so this header needs no cJSON. */
void tb_cli_audio_json(void *root, const struct tb_cli_audio *a, const struct tb_sim_opts *o);

void tb_cli_audio_free(struct tb_cli_audio *a);

#endif
