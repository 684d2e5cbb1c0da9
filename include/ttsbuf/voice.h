/*
 * voice.h - how long a chunk of text takes to speak.
 *
 * The rate model (v1): a chunk lasts (code points) x 10 / wpm seconds,
 * i.e. a word is six characters with its space.  Measured on eSpeak NG:
 * its own durations fall within 1% of this on plain English at 120-220
 * wpm.
 *
 * A timed voice (struct tb_voice) replaces the rate model where the real
 * synthesizer's durations matter: the eSpeak-timed simulation and the
 * speech sinks (tb_speaker_voice in speaker.h).  A voice that follows the
 * rate model only renders: it is told each chunk's rate-model duration
 * and the run's numbers stay the rate model's, bit for bit.
 *
 * tb_voice_seconds is pure; any thread.
 */
#ifndef TTSBUF_VOICE_H
#define TTSBUF_VOICE_H

#include <stddef.h>
#include <stdint.h>

#define TB_WPM_MIN 20.0
#define TB_WPM_MAX 1000.0
#define TB_WPM_DEFAULT 150.0

/* Seconds of speech for cps code points at wpm words per minute. */
static inline double tb_voice_seconds(uint64_t cps, double wpm)
{
    return (double)cps * 10.0 / wpm;
}

/*
 * struct tb_voice - a voice that says how long each chunk lasts.  The
 * drain calls `chunk` once per chunk, in order, on its own thread, with
 * the chunk's 1-based index, its close time c, its text (valid for the
 * call only) and code points.  It returns 0, *dur in seconds and *busy,
 * the seconds its synthesizer was busy with the chunk when that is to count
 * as latency (else 0), or a negative TB_E* code, which stops the run with
 * that error.  With busy time, chunks are synthesized one after another:
 * chunk j is ready at max(c_j, ready_{j-1}) + busy_j (+ --tts-latency).
 *
 * With follows_rate set, *dur holds the chunk's rate-model duration on
 * entry; the voice renders exactly that much audio, leaves *dur and *busy
 * alone, and the drain schedules the chunk as the rate model does.
 * model names the durations in reports ("rate", "espeak", ...).
 */
struct tb_voice {
    int (*chunk)(void *ud, uint32_t index, double c, const char *text, size_t len, uint32_t cps,
                 double *dur, double *busy);
    void *ud;
    const char *model; /* NULL: "rate" */
    int follows_rate;
};

/* The name of the durations a run uses: the voice's, or "rate" without
 * one.  Reports print it beside the settings.  Any thread. */
const char *tb_voice_model(const struct tb_voice *v);

#endif
