/*
 * speaker.c - eSpeak NG as the drain's timed voice, feeding a sink
 * (speaker.h).
 *
 * The duration cache (sink none) is an open-addressing table keyed by the
 * chunk text's FNV-1a hash, holding copies of the texts: a stream that
 * repeats itself (synthetic streams do) is synthesized once per distinct
 * chunk.  It stops taking entries at CACHE_MAX; past that every chunk is
 * synthesized, which is only slower.
 *
 * Following the rate model, each chunk is synthesized and then stretched
 * with sonic (the library eSpeak NG itself speeds speech up with) from its
 * own length to the model's; sonic keeps the pitch.  Its output after a
 * flush is within a pitch period of the asked length, so it is cut or
 * padded with silence to the exact frame count.
 */
#include "ttsbuf/speaker.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <sonic.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"
#include "sink_pa.h"
#include "sink_wav.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/tts.h"

#define CACHE_SLOTS 65536u /* power of two */
#define CACHE_MAX (CACHE_SLOTS / 2)

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
    double model_s;  /* rate model: seconds rendered so far, and */
    uint64_t sframes; /* the frames they became */
    struct tb_audio_gap_s *gaps; /* after finish, in seconds */
    size_t ngaps;
    char err[256];
};

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

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* The slot holding text, or the empty slot where it would go. */
static struct centry *cache_slot(struct tb_speaker *s, const char *text, size_t len, uint64_t h)
{
    size_t i = (size_t)h & (CACHE_SLOTS - 1);
    for (;;) {
        struct centry *e = &s->cache[i];
        if (e->text == NULL || (e->hash == h && e->len == len && memcmp(e->text, text, len) == 0))
            return e;
        i = (i + 1) & (CACHE_SLOTS - 1);
    }
}

static int synth(struct tb_speaker *s, const char *text, size_t len, const int16_t **pcm, size_t *n)
{
    double t0 = s->mono.now(&s->mono);
    int rc = tb_tts_synth(s->tts, text, len, pcm, n);
    s->synth_s += s->mono.now(&s->mono) - t0;
    if (rc == 0)
        s->frames += *n;
    return rc;
}

/* pcm (n frames) stretched to want frames into s->sbuf.  Returns 0,
 * TB_ENOMEM or TB_ETOOBIG. */
static int stretch(struct tb_speaker *s, const int16_t *pcm, size_t n, size_t want)
{
    sonicStream st;
    size_t got = 0;
    if (want > s->scap) {
        int16_t *nb = realloc(s->sbuf, want * sizeof(*nb));
        if (nb == NULL)
            return TB_ENOMEM;
        s->sbuf = nb;
        s->scap = want;
    }
    if (n > 0 && want > 0) {
        if (n > INT_MAX)
            return TB_ETOOBIG;
        st = sonicCreateStream((int)s->rate, 1);
        if (st == NULL)
            return TB_ENOMEM;
        sonicSetSpeed(st, (float)((double)n / (double)want));
        /* sonic takes a non-const pointer but only reads the samples */
        if (!sonicWriteShortToStream(st, (short *)(uintptr_t)pcm, (int)n) ||
            !sonicFlushStream(st)) {
            sonicDestroyStream(st);
            return TB_ENOMEM;
        }
        while (got < want) {
            size_t ask = want - got < INT_MAX ? want - got : INT_MAX;
            int k = sonicReadShortFromStream(st, s->sbuf + got, (int)ask);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        sonicDestroyStream(st);
    }
    memset(s->sbuf + got, 0, (want - got) * sizeof(*s->sbuf));
    return 0;
}

/* Following the rate model: the chunk's PCM, stretched to *dur seconds.
 * The frame count carries the rounding over from the chunks before. */
static int render_rate(struct tb_speaker *s, const char *text, size_t len, double dur,
                       const int16_t **out, size_t *nout)
{
    const int16_t *pcm;
    size_t n, want;
    double end = s->model_s + dur, f;
    int rc;
    if (!(dur >= 0.0) || dur > TB_SPEAKER_CHUNK_MAX_S) {
        snprintf(s->err, sizeof(s->err),
                 "a chunk of %.0f s of speech is longer than the %.0f s the speaker renders at "
                 "once (shorter chunks: --chunk; faster speech: --wpm)",
                 dur, TB_SPEAKER_CHUNK_MAX_S);
        return TB_ETOOBIG;
    }
    f = (double)llround(end * s->rate) - (double)s->sframes;
    want = f > 0 ? (size_t)f : 0;
    rc = synth(s, text, len, &pcm, &n);
    if (rc == 0)
        rc = stretch(s, pcm, n, want);
    if (rc != 0) {
        snprintf(s->err, sizeof(s->err), "rendering a chunk of %.3f s: %s", dur, tb_strerror(rc));
        return rc;
    }
    s->model_s = end;
    s->sframes += want;
    *out = s->sbuf;
    *nout = want;
    return 0;
}

static int on_chunk(void *ud, uint32_t index, double c, const char *text, size_t len, uint32_t cps,
                    double *dur, double *busy)
{
    struct tb_speaker *s = ud;
    const int16_t *pcm;
    size_t n;
    int rc;
    (void)index;
    (void)cps;
    s->chunks++;
    if (s->o.rate_model) {
        if (s->o.sink == TB_SINK_NONE)
            return 0; /* nothing to render: the rate model is the whole answer */
        rc = render_rate(s, text, len, *dur, &pcm, &n);
        if (rc == 0)
            rc = s->sink->ops->chunk(s->sink, c + s->o.play.tts_latency, s->o.play.tts_latency, pcm, n,
                                     s->err, sizeof(s->err));
        if (rc != 0)
            s->failed = rc; /* the sink's code: a cap (TB_ERANGE), a signal (TB_ECANCELED) */
        return rc;
    }
    if (s->o.sink == TB_SINK_NONE) {
        uint64_t h = fnv1a(text, len);
        struct centry *e = cache_slot(s, text, len, h);
        double t0 = s->synth_s;
        *busy = 0.0;
        if (e->text != NULL) {
            s->hits++;
            *dur = e->dur;
            *busy = s->o.count_synthesis ? e->busy : 0.0;
            return 0;
        }
        rc = synth(s, text, len, &pcm, &n);
        if (rc != 0)
            return rc;
        *dur = (double)n / s->rate;
        if (s->o.count_synthesis)
            *busy = s->synth_s - t0;
        if (s->ncache < CACHE_MAX && (e->text = malloc(len + 1)) != NULL) {
            memcpy(e->text, text, len);
            e->text[len] = '\0';
            e->len = len;
            e->hash = h;
            e->dur = *dur;
            e->busy = s->synth_s - t0;
            s->ncache++;
        }
        return 0;
    }
    *busy = 0.0; /* real time: synthesis delays the audio by itself */
    rc = synth(s, text, len, &pcm, &n);
    if (rc != 0)
        return rc;
    *dur = (double)n / s->rate;
    rc = s->sink->ops->chunk(s->sink, c + s->o.play.tts_latency, s->o.play.tts_latency, pcm, n, s->err,
                             sizeof(s->err));
    if (rc != 0)
        s->failed = rc;
    return rc;
}

int tb_speaker_create(const struct tb_speaker_opts *o, struct tb_speaker **out, char *err,
                      size_t errlen)
{
    struct tb_speaker *s;
    struct tb_tts_opts to = {o->voice, o->play.wpm};
    static const char *const names[] = {"espeak", "espeak+synthesis", "rate"};
    struct tb_pcmring_opts po;
    int rc;
    *out = NULL;
    if (!(o->play.tts_latency >= 0.0) || !(o->play.preroll >= 0.0) || !(o->latency >= 0.0))
        return tb_seterr(err, errlen, TB_EINVAL, "negative latency or pre-roll");
    if (o->play.tts_latency_at != NULL || o->play.tts_connect != 0.0 ||
        o->play.tts_concurrency != 0 || o->play.tts_rtf != 0.0)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "the speech output does not model the TTS stage (connect, "
                         "concurrency, RTF, a latency per chunk)");
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    s->o = *o;
    s->voice.chunk = on_chunk;
    s->voice.ud = s;
    s->voice.follows_rate = o->rate_model;
    s->voice.model = names[o->rate_model ? 2 : o->count_synthesis ? 1 : 0];
    if (o->rate_model) {
        /* eSpeak speaks near the model's rate; sonic does the rest */
        if (!(o->play.wpm >= TB_WPM_MIN && o->play.wpm <= TB_WPM_MAX)) {
            free(s);
            return tb_seterr(err, errlen, TB_ERANGE, "%g wpm is outside %g to %g", o->play.wpm,
                             TB_WPM_MIN, TB_WPM_MAX);
        }
        to.wpm = fmin(fmax(o->play.wpm, TB_TTS_WPM_MIN), TB_TTS_WPM_MAX);
    }
    tb_clock_monotonic_init(&s->mono);
    rc = tb_tts_create(&to, &s->tts, err, errlen);
    if (rc != 0) {
        free(s);
        return rc;
    }
    s->rate = tb_tts_rate(s->tts);
    memset(&po, 0, sizeof(po));
    po.rate = s->rate;
    po.capacity = o->ring_frames ? o->ring_frames : ((size_t)1 << 22);
    po.preroll = o->play.preroll;
    po.cue = o->cue;
    if (o->sink == TB_SINK_NONE) {
        s->cache = calloc(CACHE_SLOTS, sizeof(*s->cache));
        rc = s->cache == NULL ? tb_seterr(err, errlen, TB_ENOMEM, "out of memory") : 0;
    } else if (o->sink == TB_SINK_WAV) {
        struct tb_sink_wav_opts wo = {o->target, o->stream,
                                      o->max_audio_s > 0 ? o->max_audio_s : TB_AUDIO_MAX_DEFAULT_S,
                                      o->keep_s, o->cancel};
        rc = tb_sink_wav_create(&wo, &po, &s->sink, err, errlen);
    } else {
        tb_speaker_quiet();
        rc = tb_sink_pa_create(o->target, o->latency > 0 ? o->latency : TB_PA_LATENCY_DEFAULT, &po,
                               &s->sink, err, errlen);
    }
    if (rc != 0) {
        tb_speaker_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

const struct tb_voice *tb_speaker_voice(struct tb_speaker *s)
{
    return &s->voice;
}

static void fill_result(struct tb_speaker *s)
{
    struct tb_audio_result *r = &s->res;
    memset(r, 0, sizeof(*r));
    r->rate = s->rate;
    r->chunks = s->chunks;
    r->synth_s = s->synth_s;
    r->audio_s = (double)s->frames / s->rate;
    r->cache_hits = s->hits;
    if (s->sink == NULL)
        return;
    struct tb_pcmring_stats st;
    double f = 1.0 / s->rate;
    tb_pcmring_stats(s->sink->player, &st);
    r->latency = s->sink->latency;
    double off = s->sink->offset;
    r->first_audio = st.first_audio == UINT64_MAX ? 0.0 : off + (double)st.first_audio * f;
    r->end_audio = off + (double)st.end_audio * f;
    r->speech = (double)st.played * f;
    r->concealed = (double)st.concealed * f;
    r->concealment_events = st.concealment_events;
    r->underruns = st.underruns;
    r->interruptions = st.interruptions;
    r->gap_max = (double)st.gap_max * f;
    r->forced_start = st.forced_start;
    r->device_underflows = atomic_load(&s->sink->device_underflows);
    /* gap_total counts the dry spells over the underrun threshold, as the
     * model does; `concealed` has all of them. */
    size_t n = tb_pcmring_gaps(s->sink->player, NULL, 0);
    struct tb_audio_gap *v = n ? malloc(n * sizeof(*v)) : NULL;
    s->gaps = n ? malloc(n * sizeof(*s->gaps)) : NULL;
    if (v == NULL || s->gaps == NULL) {
        free(s->gaps);
        s->gaps = NULL;
        n = 0;
    }
    tb_pcmring_gaps(s->sink->player, v, n);
    for (size_t i = 0; i < n; i++) {
        s->gaps[i].at = off + (double)v[i].at * f;
        s->gaps[i].len = (double)v[i].frames * f;
        if (s->gaps[i].len > TB_GAP_MIN_S)
            r->gap_total += s->gaps[i].len;
    }
    s->ngaps = n;
    free(v);
}

int tb_speaker_finish(struct tb_speaker *s, struct tb_audio_result *r, char *err, size_t errlen)
{
    int rc = 0;
    if (!s->finished) {
        s->finished = 1;
        if (s->sink != NULL)
            rc = s->sink->ops->finish(s->sink, err, errlen);
        else if (s->failed)
            rc = tb_seterr(err, errlen, s->failed, "%s", s->err);
        fill_result(s);
    }
    /* The run's own failure first: the finish after it only closed. */
    if (s->failed)
        rc = tb_seterr(err, errlen, s->failed, "%s", s->err);
    if (r != NULL)
        *r = s->res;
    return rc;
}

size_t tb_speaker_gaps(const struct tb_speaker *s, struct tb_audio_gap_s *out, size_t max)
{
    if (out != NULL && s->ngaps > 0 && max > 0)
        memcpy(out, s->gaps, (s->ngaps < max ? s->ngaps : max) * sizeof(*out));
    return s->ngaps;
}

int tb_speaker_player_stats(const struct tb_speaker *s, struct tb_pcmring_stats *st)
{
    if (s->sink == NULL)
        return TB_EINVAL;
    tb_pcmring_stats(s->sink->player, st);
    return 0;
}

void tb_speaker_destroy(struct tb_speaker *s)
{
    if (s == NULL)
        return;
    if (s->sink != NULL)
        s->sink->ops->destroy(s->sink);
    if (s->cache != NULL) {
        for (size_t i = 0; i < CACHE_SLOTS; i++)
            free(s->cache[i].text);
        free(s->cache);
    }
    tb_tts_destroy(s->tts);
    free(s->sbuf);
    free(s->gaps);
    free(s);
}
