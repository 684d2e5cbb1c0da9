/*
 * speaker_sink.c - the speaker's sink (speaker_sink.h): which one its
 * options name, opened with ALSA's and JACK's start-up chatter dropped,
 * and every piece of PCM handed to it at its time.  A piece's due time
 * never goes backwards (the player is a queue); with a TTS stage on the
 * WAV sink's virtual clock the pieces wait for the stage's start.
 */
#include "speaker_sink.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pcmhold.h"
#include "play/tts_stage.h"
#include "play/tts_stage_run.h"
#include "sink.h"
#include "sink_pa.h"
#include "sink_wav.h"
#include "speaker_state.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/speaker.h"

int tb_speaker_parse_sink(const char *spec, enum tb_sink_kind *sink, const char **target)
{
    *target = NULL;
    if (strcmp(spec, "none") == 0) {
        *sink = TB_SINK_NONE;
        return 0;
    }
    if (strncmp(spec, "wav:", 4) == 0 && spec[4] != '\0') {
        *sink = TB_SINK_WAV;
        *target = spec + 4;
        return 0;
    }
    if (strcmp(spec, "portaudio") == 0) {
        *sink = TB_SINK_PORTAUDIO;
        return 0;
    }
    if (strncmp(spec, "portaudio:", 10) == 0 && spec[10] != '\0') {
        *sink = TB_SINK_PORTAUDIO;
        *target = spec + 10;
        return 0;
    }
    return TB_EINVAL;
}

/* What ALSA-lib and JACK print on stderr while PortAudio starts (they
 * are PortAudio's, not ours) is dropped: tb_speaker_quiet. */
/* The shape of ALSA's snd_lib_error_handler_t and JACK's message callback,
 * declared here so that no ALSA or JACK header is needed. */
typedef void (*alsa_handler_fn)(const char *file, int line, const char *function, int err,
                                const char *fmt, ...);
typedef int (*alsa_set_fn)(alsa_handler_fn handler);
typedef void (*jack_msg_fn)(const char *msg);
typedef void (*jack_set_fn)(jack_msg_fn fn);

static void alsa_drop(const char *file, int line, const char *function, int err, const char *fmt,
                      ...)
{
    (void)file;
    (void)line;
    (void)function;
    (void)err;
    (void)fmt;
}

static void jack_drop(const char *msg)
{
    (void)msg;
}

int tb_speaker_quiet(void)
{
    /* dlopen(NULL) is the program's global scope: the libraries
     * libportaudio was linked with (libasound, libjack) are in it. */
    void *self = dlopen(NULL, RTLD_LAZY);
    int n = 0;
    alsa_set_fn alsa_set;
    jack_set_fn jack_set;
    if (self == NULL)
        return 0;
    /* POSIX guarantees dlsym's result converts to a function pointer. */
    alsa_set = (alsa_set_fn)dlsym(self, "snd_lib_error_set_handler");
    if (alsa_set != NULL && alsa_set(alsa_drop) == 0)
        n++;
    jack_set = (jack_set_fn)dlsym(self, "jack_set_error_function");
    if (jack_set != NULL) {
        jack_set(jack_drop);
        n++;
    }
    jack_set = (jack_set_fn)dlsym(self, "jack_set_info_function");
    if (jack_set != NULL) {
        jack_set(jack_drop);
        n++;
    }
    dlclose(self);
    return n;
}

/* One piece of PCM to the sink, playable from due; dues never go
 * backwards (the player is a queue: a piece due earlier waits for the one
 * before it).  The real-time sink counts a delay from now: due - c, less
 * the time the speaker has spent on the chunk since the drain handed it
 * over at c (synthesis, stretching), so that the audio is not late by it. */
static int to_sink(struct tb_speaker *s, double c, double due, const int16_t *pcm, size_t n)
{
    double delay;
    if (due < s->due_last)
        due = s->due_last;
    s->due_last = due;
    delay = due - c - (s->mono.now(&s->mono) - s->t_entry);
    return s->sink->ops->chunk(s->sink, due, delay > 0.0 ? delay : 0.0, pcm, n, s->err,
                               sizeof(s->err));
}

/* A held piece to the sink (pcmhold.h's fn, ud the speaker). */
static int held_out(void *ud, double c, double due, const int16_t *pcm, size_t n)
{
    return to_sink(ud, c, due, pcm, n);
}

/* Once the stage has started (at s_1), the pieces held go to the sink,
 * none before s_1: the player, with no pre-roll of its own, starts there. */
int tb_speaker_release(struct tb_speaker *s)
{
    double s1;
    if (!s->holding || !tb_tts_stage_started(s->stage, &s1))
        return 0;
    s->holding = 0;
    return tb_pcmhold_release(&s->hold, s1, held_out, s);
}

/* A piece to the sink, or held while the start is not known. */
static int piece(struct tb_speaker *s, double c, double due, const int16_t *pcm, size_t n)
{
    if (!s->holding)
        return to_sink(s, c, due, pcm, n);
    /* Held until the stage's start is known (WAV sink, see
     * tb_speaker_stage_play). */
    if (tb_pcmhold_add(&s->hold, c, due, pcm, n) != 0) {
        snprintf(s->err, sizeof(s->err), "out of memory");
        return TB_ENOMEM;
    }
    return 0;
}

/*
 * A chunk's PCM (n frames, d seconds, closing at c) to the sink as the TTS
 * stage has it.  The speaker runs the stage itself (tts_stage.h: the same
 * latency draws, chunk j from 1, the same slots), so its times are the
 * model's.  Without a stage, all of it at c + L.  With one and R <= 1, all
 * of it at f_j: the engine's audio outruns playback, which never waits
 * inside the chunk.  With R > 1, in frames of TB_FRAME_S, frame k when the
 * engine has completed it (tb_tts_stage_frame_ready), so the player runs
 * dry inside the chunk where the model's frame player stalls.
 *
 * The pre-roll: the model starts once the audio every started chunk has
 * produced reaches it (a ramp while R > 0), which a queue of whole chunks
 * or frames in chunk order cannot count.  On the WAV sink's virtual clock
 * the speaker holds the pieces until the stage's start is final and hands
 * them over from s_1 (the player has no pre-roll of its own then); in real
 * time nothing can wait for that, and the player's own pre-roll counts
 * what is queued.
 */
int tb_speaker_stage_play(struct tb_speaker *s, double c, double d, const int16_t *pcm, size_t n)
{
    double rtf;
    size_t fr = (size_t)llround(TB_FRAME_S * s->rate);
    struct tb_tts_times t;
    int rc;
    if (s->stage == NULL)
        return to_sink(s, c, c + s->o.play.tts_latency, pcm, n);
    rc = tb_tts_stage_add(s->stage, c, s->chunks, 1, d, 0);
    if (rc != 0) {
        snprintf(s->err, sizeof(s->err), "chunk %" PRIu64 ": %s", s->chunks,
                 rc == TB_EINVAL ? "the TTS latency or real-time factor is not a finite number >= 0"
                                 : "out of memory");
        return rc;
    }
    tb_tts_stage_last(s->stage, &t);
    rtf = t.r; /* R_j: the constant, or the chunk's own from the RTF hook */
    if (!(rtf > 1.0) || n == 0 || fr == 0)
        rc = piece(s, c, t.f, pcm, n);
    for (uint64_t k = 0; rc == 0 && rtf > 1.0 && fr != 0 && (size_t)k * fr < n; k++) {
        size_t a = (size_t)k * fr, m = n - a < fr ? n - a : fr;
        rc = piece(s, c, tb_tts_stage_frame_ready(t.f, rtf, d, k), pcm + a, m);
    }
    return rc == 0 ? tb_speaker_release(s) : rc;
}

/* The WAV file or the PortAudio stream, playing the player po. */
int tb_speaker_open_sink(struct tb_speaker *s, const struct tb_pcmring_opts *po, char *err,
                         size_t errlen)
{
    const struct tb_speaker_opts *o = &s->o;
    if (o->sink == TB_SINK_WAV) {
        struct tb_sink_wav_opts wo = {o->target, o->stream,
                                      o->max_audio_s > 0 ? o->max_audio_s : TB_AUDIO_MAX_DEFAULT_S,
                                      o->keep_s, o->cancel};
        return tb_sink_wav_create(&wo, po, &s->sink, err, errlen);
    }
    tb_speaker_quiet();
    return tb_sink_pa_create(o->target, o->latency > 0 ? o->latency : TB_PA_LATENCY_DEFAULT, po,
                             &s->sink, err, errlen);
}

/* A piece of the provider's PCM to the sink (pcmfeed.h's out): the WAV
 * sink plays it from due, the real-time sink now. */
int tb_speaker_pcm_out(void *ud, double due, const int16_t *pcm, size_t n)
{
    struct tb_speaker *s = ud;
    if (due < s->due_last)
        due = s->due_last;
    s->due_last = due;
    s->frames += n;
    return s->sink->ops->chunk(s->sink, due, 0.0, pcm, n, s->err, sizeof(s->err));
}
