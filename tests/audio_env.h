/*
 * audio_env.h - a headless audio test harness: real PortAudio streams into
 * devices that exist without a sound card, and analysis of what was played.
 *
 * Two capture paths (see audio/README.md):
 *  - ALSA file: the default PCM is ALSA's `file` plugin with a `null` slave
 *    (audio/asoundrc-file); everything PortAudio plays lands in a WAV.  Much
 *    faster than real time: for content (where the silences are), not timing.
 *  - PulseAudio pipe: a private PulseAudio (audio/pulse-pipe.pa) whose pipe
 *    sink runs on the system clock, reached through ALSA's `pulse` plugin
 *    (audio/asoundrc-pulse); a reader thread drains the FIFO into a raw s16le
 *    mono 22050 Hz file.  About 1x real time; the capture is a timeline
 *    (silence while nothing plays).  Use >= 100 ms PortAudio output latency
 *    on a small machine: at 10 ms the server drops audio without PortAudio
 *    noticing.
 *
 * Both set environment variables that ALSA reads when a PCM is opened, so
 * call them before Pa_Initialize (ALSA re-reads its configuration when
 * ALSA_CONFIG_PATH changes, so one process can use one path, Pa_Terminate,
 * and then the other).  They are not thread-safe (setenv): call them from the
 * test's main thread while no other thread runs PortAudio.
 *
 * Pure helpers: no cmocka asserts.  Functions return 0 or -1 (with a message
 * in err, when err is not NULL); TB_AUDIO_UNAVAILABLE says a tool is not
 * installed (the caller skips with that message).
 */
#ifndef TTSBUF_TESTS_AUDIO_ENV_H
#define TTSBUF_TESTS_AUDIO_ENV_H

#include <stddef.h>
#include <stdint.h>

/* eSpeak NG's sample rate, the rate the PulseAudio pipe sink runs at. */
#define TB_AUDIO_RATE 22050

/* The rate of the PulseAudio capture (the pipe sink runs at 48 kHz so that
 * it pulls clients in 10.7 ms blocks; see audio/pulse-pipe.pa). */
#define TB_AUDIO_CAPTURE_RATE 48000

/* Returned when pulseaudio (or sox) is not installed. */
#define TB_AUDIO_UNAVAILABLE (-2)

/*
 * Silences what ALSA-lib and JACK print on stderr while PortAudio probes its
 * host APIs: "ALSA lib pcm.c:... Unknown PCM cards.pcm.rear" for every
 * absent card, and "Cannot connect to server socket ... jack server is not
 * running" from the JACK host API.  Call once, before Pa_Initialize; the
 * setting is process-wide and permanent.
 *
 * How: libportaudio links libasound and libjack, so their documented hooks
 * are already in the process; this looks them up with dlopen(NULL)/dlsym
 * (POSIX, no -lasound/-ljack, no ALSA or JACK headers, and a no-op for a
 * PortAudio built without JACK) and installs handlers that drop the text:
 * snd_lib_error_set_handler, jack_set_error_function, jack_set_info_function.
 * Nothing is lost that matters: PortAudio still returns its errors, and
 * Pa_GetLastHostErrorInfo still has the host's text.  Unlike redirecting fd 2
 * around Pa_Initialize, it does not swallow other threads' stderr and keeps
 * working for messages printed later (when a stream is opened).
 * Returns the number of hooks installed (0..3).  Any thread; not concurrently
 * with PortAudio calls.
 */
int tb_audio_quiet(void);

/*
 * The absolute path of a configuration file shipped in audio/ (name:
 * "asoundrc-file", "asoundrc-pulse", "asoundrc-none", "pulse-pipe.pa"), from
 * $TB_AUDIODIR (the Makefile sets it), else ./audio.  Absolute because
 * ALSA_CONFIG_PATH must not depend on the directory a test runs in.
 * Returns 0, or -1 when it cannot be read (the message names TB_AUDIODIR).
 */
int tb_audio_conf(const char *name, char *out, size_t cap, char *err, size_t errlen);

/* ---- ALSA file path ---------------------------------------------------- */

struct tb_audio_file;

/*
 * Creates a temporary directory and points ALSA's default PCM at a WAV in it:
 * sets ALSA_CONFIG_PATH to audio/asoundrc-file ($TB_AUDIODIR, else ./audio)
 * and TTSBUF_ALSA_WAV to the WAV's path (the file appears when PortAudio
 * opens the stream; the header is complete once the stream is closed).
 * The previous values are restored by tb_audio_file_destroy.
 * Returns 0, or -1 (the config is missing, mkdtemp failed).  Owns *out.
 */
int tb_audio_file_create(struct tb_audio_file **out, char *err, size_t errlen);

/* The WAV's path (owned by f). */
const char *tb_audio_file_wav(const struct tb_audio_file *f);

/* Restores the environment, removes the WAV and the directory.  NULL: no-op. */
void tb_audio_file_destroy(struct tb_audio_file *f);

/* ---- PulseAudio pipe path ---------------------------------------------- */

struct tb_audio_pulse;

/*
 * Starts a private PulseAudio (`pulseaudio -n -F audio/pulse-pipe.pa`, no
 * daemon, no pid file, no real-time, its own HOME/XDG_RUNTIME_DIR/
 * PULSE_RUNTIME_PATH in a fresh temporary directory, log in that directory)
 * and a thread that drains its pipe sink into a raw file; waits (up to 5 s)
 * until its socket accepts connections; then sets PULSE_SERVER to
 * unix:DIR/native and ALSA_CONFIG_PATH to audio/asoundrc-pulse.  Works as
 * root and without D-Bus or a systemd user session.
 * Returns 0, TB_AUDIO_UNAVAILABLE when pulseaudio is not installed, or -1
 * (the server died: err has the last line of its log).  Owns *out.
 */
int tb_audio_pulse_start(struct tb_audio_pulse **out, char *err, size_t errlen);

/* "unix:DIR/native" (owned by p). */
const char *tb_audio_pulse_server(const struct tb_audio_pulse *p);

/* The raw capture: s16le, mono, TB_AUDIO_CAPTURE_RATE Hz (owned by p).  Complete
 * after tb_audio_pulse_stop. */
const char *tb_audio_pulse_capture(const struct tb_audio_pulse *p);

/*
 * Stops the server (SIGTERM, then SIGKILL after 5 s), waits for it and for
 * the reader to reach the end of the FIFO.  Close PortAudio streams first.
 * Returns 0, or -1 when the reader failed to write the capture.  Idempotent.
 */
int tb_audio_pulse_stop(struct tb_audio_pulse *p, char *err, size_t errlen);

/* Stops if needed, restores PULSE_SERVER and ALSA_CONFIG_PATH, removes the
 * directory and everything in it.  NULL: no-op. */
void tb_audio_pulse_destroy(struct tb_audio_pulse *p);

/* ---- Loading and analysing what was played ----------------------------- */

/* Mono 16-bit PCM in memory (channel 0 of the file). */
struct tb_pcm {
    int16_t *s;
    size_t n;      /* frames */
    unsigned rate; /* Hz */
};

/* Largest file the loaders accept (a capture of about 6 hours at 22050 Hz). */
#define TB_PCM_MAX_BYTES ((size_t)1 << 30)

/*
 * Loads a RIFF/WAVE file of 16-bit PCM (1..8 channels; channel 0 is kept).
 * A data chunk whose size is 0 or runs past the end of the file (a writer
 * killed before it completed the header) is taken to the end of the file.
 * Returns 0 (free with tb_pcm_free), or -1: unreadable, not WAVE, not 16-bit
 * PCM, truncated header, over TB_PCM_MAX_BYTES.
 */
int tb_pcm_load_wav(const char *path, struct tb_pcm *out, char *err, size_t errlen);

/* Loads headerless s16le mono at rate Hz (a trailing odd byte is dropped).
 * Returns 0 or -1 as tb_pcm_load_wav. */
int tb_pcm_load_raw(const char *path, unsigned rate, struct tb_pcm *out, char *err, size_t errlen);

/* Frees the samples; leaves an empty pcm.  NULL or empty: no-op. */
void tb_pcm_free(struct tb_pcm *p);

/* A run of silence, in seconds from the start of the capture. */
struct tb_pcm_gap {
    double start;
    double len;
};

/* What tb_pcm_shape finds. */
struct tb_audio_shape {
    double duration;    /* the whole capture, seconds */
    double first_sound; /* first sample above the threshold, seconds; -1: none */
    double last_sound;  /* end of the last sample above the threshold; -1: none */
    size_t ngaps;       /* silent runs between first and last sound (may exceed cap) */
    double silence;     /* their total length, seconds */
};

/*
 * Finds the silent runs of at least min_len seconds that lie between the
 * first and the last sound: a sample is silent when |s| <= threshold.  The
 * first cap runs go to gaps[] (gaps may be NULL when cap is 0); shape->ngaps
 * counts them all.  Leading and trailing silence are not gaps: they are
 * first_sound and duration - last_sound.  Positions are exact to a sample
 * (1 / rate s); a tone's zero crossings are single samples, far below any
 * useful min_len.  O(n).  Returns 0, or -1 (bad arguments).
 */
int tb_pcm_shape(const struct tb_pcm *p, int threshold, double min_len, struct tb_pcm_gap *gaps,
                 size_t cap, struct tb_audio_shape *shape, char *err, size_t errlen);

/*
 * Cross-check with sox: runs `sox [-t raw -r RATE -e signed -b 16 -c 1] FILE
 * -n stat` (raw_rate > 0: FILE is raw s16le mono at that rate; 0: FILE has
 * a header) and returns sox's "Length (seconds)" and "Maximum amplitude"
 * (0..1; either pointer may be NULL).  Returns 0, TB_AUDIO_UNAVAILABLE when
 * sox is not installed, or -1 (sox failed: err has its first line).
 */
int tb_audio_sox_stat(const char *path, unsigned raw_rate, double *length, double *max_amp,
                      char *err, size_t errlen);

#endif
