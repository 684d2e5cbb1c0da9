/*
 * tts.c - eSpeak NG behind tts.h.
 *
 * eSpeak's synchronous mode hands PCM to one process-wide callback, so
 * the engine speaking is a global, set only for the duration of
 * espeak_Synth; the other global is the "an engine exists" flag that
 * enforces eSpeak's one-instance rule.
 */
#include "ttsbuf/tts.h"

#include <espeak-ng/speak_lib.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "ttsbuf/error.h"

struct tb_tts {
    unsigned rate;
    int16_t *pcm;
    size_t n, cap;
    int oom;
    char *text; /* NUL-terminated copy of the text being spoken */
    size_t textcap;
};

static atomic_flag engine_exists = ATOMIC_FLAG_INIT;

/*
 * eSpeak NG is initialised once per process and shut down at exit, not
 * with each engine: 1.51 deadlocks in espeak_Terminate when it is
 * initialised again after a terminate that followed a synthesis (its
 * internal thread waits for a signal that never comes).  Only the engine
 * flag above changes hands between engines.
 */
static int espeak_rate;

static void shut_down(void)
{
    espeak_Terminate();
}

/* The engine being spoken through: eSpeak's callback has no context
 * argument of its own (the events' user_data is not set on every call),
 * and there is at most one engine, used from one thread. */
static struct tb_tts *speaking;

static int on_pcm(short *wav, int numsamples, espeak_EVENT *ev)
{
    struct tb_tts *t = speaking;
    (void)ev;
    if (t == NULL || wav == NULL || numsamples <= 0)
        return 0;
    while (t->n + (size_t)numsamples > t->cap) {
        int16_t *np = tb_grow(t->pcm, &t->cap, sizeof(*np), 1u << 16);
        if (np == NULL) {
            t->oom = 1;
            return 1; /* abort synthesis */
        }
        t->pcm = np;
    }
    memcpy(t->pcm + t->n, wav, (size_t)numsamples * sizeof(*wav));
    t->n += (size_t)numsamples;
    return 0;
}

int tb_tts_create(const struct tb_tts_opts *o, struct tb_tts **out, char *err, size_t errlen)
{
    const char *voice = o->voice != NULL ? o->voice : "en";
    struct tb_tts *t;
    int rate;
    *out = NULL;
    if (!(o->wpm >= TB_TTS_WPM_MIN && o->wpm <= TB_TTS_WPM_MAX))
        return tb_seterr(err, errlen, TB_ERANGE, "eSpeak speaks %g to %g words per minute, not %g",
                         TB_TTS_WPM_MIN, TB_TTS_WPM_MAX, o->wpm);
    if (atomic_flag_test_and_set(&engine_exists))
        return tb_seterr(err, errlen, TB_EBUSY, "eSpeak NG is already in use in this process");
    t = calloc(1, sizeof(*t));
    if (t == NULL) {
        atomic_flag_clear(&engine_exists);
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    }
    if (espeak_rate == 0) {
        espeak_rate =
            espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL, espeakINITIALIZE_DONT_EXIT);
        if (espeak_rate > 0)
            atexit(shut_down);
        else
            espeak_rate = 0;
    }
    rate = espeak_rate;
    if (rate <= 0) {
        free(t);
        atomic_flag_clear(&engine_exists);
        return tb_seterr(err, errlen, TB_EIO,
                         "eSpeak NG cannot start (is the espeak-ng-data package installed?)");
    }
    t->rate = (unsigned)rate;
    espeak_SetSynthCallback(on_pcm);
    if (espeak_SetVoiceByName(voice) != EE_OK) {
        tb_tts_destroy(t);
        return tb_seterr(err, errlen, TB_EINVAL,
                         "eSpeak NG has no voice '%s' (espeak-ng --voices lists them)", voice);
    }
    if (espeak_SetParameter(espeakRATE, (int)(o->wpm + 0.5), 0) != EE_OK) {
        tb_tts_destroy(t);
        return tb_seterr(err, errlen, TB_ERANGE, "eSpeak NG refused the rate %g wpm", o->wpm);
    }
    *out = t;
    return 0;
}

void tb_tts_destroy(struct tb_tts *t)
{
    if (t == NULL)
        return;
    free(t->pcm);
    free(t->text);
    free(t);
    atomic_flag_clear(&engine_exists);
}

unsigned tb_tts_rate(const struct tb_tts *t)
{
    return t->rate;
}

int tb_tts_synth(struct tb_tts *t, const char *text, size_t len, const int16_t **pcm,
                 size_t *frames)
{
    *pcm = NULL;
    *frames = 0;
    if (len > TB_TTS_TEXT_MAX)
        return TB_ETOOBIG;
    if (len + 1 > t->textcap) {
        size_t nc = len + 1 < 256 ? 256 : len + 1;
        char *nt = realloc(t->text, nc);
        if (nt == NULL)
            return TB_ENOMEM;
        t->text = nt;
        t->textcap = nc;
    }
    memcpy(t->text, text, len);
    t->text[len] = '\0';
    t->n = 0;
    t->oom = 0;
    speaking = t;
    espeak_ERROR e =
        espeak_Synth(t->text, len + 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, NULL, NULL);
    speaking = NULL;
    if (e != EE_OK)
        return TB_EIO;
    if (t->oom)
        return TB_ENOMEM;
    *pcm = t->pcm;
    *frames = t->n;
    return 0;
}
