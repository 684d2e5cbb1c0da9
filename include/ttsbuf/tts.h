/*
 * tts.h - speech synthesis with eSpeak NG: text in, 16-bit mono PCM out.
 *
 * eSpeak NG is process-global and not re-entrant, so there is at most one
 * engine in a process (a second tb_tts_create fails with TB_EBUSY until
 * the first is destroyed), and every call on it, create and destroy
 * included, comes from one thread: the thread that synthesizes.  It runs
 * in AUDIO_OUTPUT_SYNCHRONOUS mode (synthesis happens inside
 * tb_tts_synth, on the caller's thread) and is initialised with
 * espeakINITIALIZE_DONT_EXIT, so a missing data directory is an error
 * returned here, never an exit.  The library itself is initialised on
 * the first tb_tts_create and shut down at process exit (eSpeak NG 1.51
 * cannot be initialised again after it has spoken and been shut down), so
 * every engine of a process must be used from the same thread.
 *
 * Speech rate: eSpeak's own range is 80-450 words per minute; above 450
 * eSpeak NG speeds its output up with the sonic library (accepted here up
 * to TB_TTS_WPM_MAX), which shortens pauses as well as sounds.
 *
 * Ownership: the engine owns the PCM buffer tb_tts_synth returns; it stays
 * valid until the next tb_tts_synth or tb_tts_destroy.
 */
#ifndef TTSBUF_TTS_H
#define TTSBUF_TTS_H

#include <stddef.h>
#include <stdint.h>

#define TB_TTS_WPM_MIN 80.0
#define TB_TTS_WPM_MAX 900.0
#define TB_TTS_TEXT_MAX (1u << 20) /* bytes of text in one synthesis */

struct tb_tts_opts {
    const char *voice; /* eSpeak voice name ("en", "en-us", "de", ...); NULL: "en" */
    double wpm;        /* TB_TTS_WPM_MIN..TB_TTS_WPM_MAX */
};

struct tb_tts;

/*
 * tb_tts_create - initialises eSpeak NG.  Returns 0 and *out; TB_EBUSY when
 * an engine exists already; TB_ERANGE for wpm out of range; TB_EINVAL for
 * an unknown voice; TB_EIO when eSpeak cannot start (no espeak-ng-data);
 * TB_ENOMEM.  Detail in err.
 */
int tb_tts_create(const struct tb_tts_opts *o, struct tb_tts **out, char *err, size_t errlen);

/* Shuts eSpeak NG down.  NULL is a no-op.  Same thread as create. */
void tb_tts_destroy(struct tb_tts *t);

/* Output sample rate (eSpeak NG: 22050 Hz).  Mono, signed 16-bit. */
unsigned tb_tts_rate(const struct tb_tts *t);

/*
 * tb_tts_synth - synthesizes len bytes of UTF-8 text (not necessarily
 * NUL-terminated; len <= TB_TTS_TEXT_MAX).  *pcm and *frames receive the
 * samples (*frames may be 0 for text with nothing to say, e.g. spaces).
 * Returns 0, TB_ETOOBIG, TB_ENOMEM or TB_EIO (eSpeak failed).
 */
int tb_tts_synth(struct tb_tts *t, const char *text, size_t len, const int16_t **pcm,
                 size_t *frames);

#endif
