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
 *
 * With pcm_rate the speaker speaks nothing itself: a provider's PCM comes
 * in through tb_speaker_pcm, pcmfeed.c puts it in chunk order and times
 * it, and pcm_out hands it to the sink.
 */
#include "ttsbuf/speaker.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sonic.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "pcmfeed.h"
#include "play/tts_stage.h"
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

/* A piece of PCM waiting for the TTS stage's start. */
struct held {
    double c, due;
    size_t off, n;
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
    struct held *held;          /* those pieces, in order */
    size_t nheld, heldcap;
    int16_t *hpcm; /* and their PCM */
    size_t hpcm_n, hpcm_cap;
    double due_last;         /* the latest due time handed to the sink */
    double t_entry;          /* the monotonic clock when the drain handed the chunk */
    struct tb_pcmfeed *feed; /* pcm_rate: the provider's PCM, in chunk order */
    int sink_ended;          /* the feed's speech failed: the sink was told */
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

/* Holds a piece until the stage's start is known (WAV sink, see
 * stage_play).  Returns 0 or TB_ENOMEM. */
static int hold(struct tb_speaker *s, double c, double due, const int16_t *pcm, size_t n)
{
    if (s->nheld == s->heldcap) {
        struct held *nh = tb_grow(s->held, &s->heldcap, sizeof(*nh), 64);
        if (nh == NULL)
            return TB_ENOMEM;
        s->held = nh;
    }
    while (s->hpcm_n + n > s->hpcm_cap) {
        int16_t *np = tb_grow(s->hpcm, &s->hpcm_cap, sizeof(*np), (size_t)1 << 16);
        if (np == NULL)
            return TB_ENOMEM;
        s->hpcm = np;
    }
    if (n > 0)
        memcpy(s->hpcm + s->hpcm_n, pcm, n * sizeof(*pcm));
    s->held[s->nheld++] = (struct held){c, due, s->hpcm_n, n};
    s->hpcm_n += n;
    return 0;
}

/* Once the stage has started (at s_1), the pieces held go to the sink,
 * none before s_1: the player, with no pre-roll of its own, starts there. */
static int release(struct tb_speaker *s)
{
    double s1;
    int rc = 0;
    if (!s->holding || !tb_tts_stage_started(s->stage, &s1))
        return 0;
    s->holding = 0;
    for (size_t i = 0; i < s->nheld && rc == 0; i++) {
        const struct held *h = &s->held[i];
        rc = to_sink(s, h->c, h->due > s1 ? h->due : s1, s->hpcm + h->off, h->n);
    }
    free(s->held);
    free(s->hpcm);
    s->held = NULL;
    s->hpcm = NULL;
    s->nheld = s->heldcap = s->hpcm_n = s->hpcm_cap = 0;
    return rc;
}

/* A piece to the sink, or held while the start is not known. */
static int piece(struct tb_speaker *s, double c, double due, const int16_t *pcm, size_t n)
{
    if (!s->holding)
        return to_sink(s, c, due, pcm, n);
    if (hold(s, c, due, pcm, n) != 0) {
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
static int stage_play(struct tb_speaker *s, double c, double d, const int16_t *pcm, size_t n)
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
    return rc == 0 ? release(s) : rc;
}

static int on_chunk(void *ud, uint32_t index, double c, const char *text, size_t len, uint32_t cps,
                    double *dur, double *busy)
{
    struct tb_speaker *s = ud;
    const int16_t *pcm;
    size_t n;
    int rc;
    s->t_entry = s->mono.now(&s->mono);
    (void)index;
    (void)cps;
    s->chunks++;
    if (s->feed != NULL)
        return 0; /* the provider speaks it: tb_speaker_pcm */
    if (s->o.rate_model) {
        if (s->o.sink == TB_SINK_NONE)
            return 0; /* nothing to render: the rate model is the whole answer */
        rc = render_rate(s, text, len, *dur, &pcm, &n);
        if (rc == 0)
            rc = stage_play(s, c, *dur, pcm, n);
        if (rc != 0)
            s->failed = rc; /* the sink's code: a signal (TB_ECANCELED), I/O */
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
    rc = stage_play(s, c, *dur, pcm, n);
    if (rc != 0)
        s->failed = rc;
    return rc;
}

/* The WAV file or the PortAudio stream, playing the player po. */
static int open_sink(struct tb_speaker *s, const struct tb_pcmring_opts *po, char *err,
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
static int pcm_out(void *ud, double due, const int16_t *pcm, size_t n)
{
    struct tb_speaker *s = ud;
    if (due < s->due_last)
        due = s->due_last;
    s->due_last = due;
    s->frames += n;
    return s->sink->ops->chunk(s->sink, due, 0.0, pcm, n, s->err, sizeof(s->err));
}

/* A speaker for a provider's PCM (pcm_rate): no eSpeak NG, no stage; the
 * sink at pcm_rate, and the feed that orders and times what arrives. */
static int pcm_create(const struct tb_speaker_opts *o, struct tb_speaker **out, char *err,
                      size_t errlen)
{
    struct tb_speaker *s;
    struct tb_pcmring_opts po;
    struct tb_pcmfeed_opts fo;
    int rc;
    if (o->pcm_rate < TB_SPEAKER_PCM_RATE_MIN || o->pcm_rate > TB_SPEAKER_PCM_RATE_MAX)
        return tb_seterr(err, errlen, TB_ERANGE, "a sample rate of %u Hz is outside %u to %u",
                         o->pcm_rate, TB_SPEAKER_PCM_RATE_MIN, TB_SPEAKER_PCM_RATE_MAX);
    if (o->sink == TB_SINK_NONE)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "the provider's audio needs a sink to play it (wav or portaudio)");
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    s->o = *o;
    s->voice.chunk = on_chunk;
    s->voice.ud = s;
    s->voice.follows_rate = 1;
    s->voice.model = "rate";
    s->rate = o->pcm_rate;
    tb_clock_monotonic_init(&s->mono);
    memset(&po, 0, sizeof(po));
    po.rate = s->rate;
    po.capacity = o->ring_frames ? o->ring_frames : ((size_t)1 << 22);
    /* The WAV sink's start is the feed's (s_1); the real-time sink's, its
     * player's own pre-roll over what is queued. */
    po.preroll = o->sink == TB_SINK_WAV ? 0.0 : o->play.preroll;
    po.cue = o->cue;
    fo = (struct tb_pcmfeed_opts){.rate = s->rate,
                                  .timed = o->sink == TB_SINK_WAV,
                                  .preroll = o->play.preroll,
                                  .max_held = (size_t)(TB_SPEAKER_HELD_MAX_S * s->rate),
                                  .out = pcm_out,
                                  .ud = s};
    rc = tb_pcmfeed_create(&fo, &s->feed);
    if (rc != 0)
        rc = tb_seterr(err, errlen, rc, "%s",
                       rc == TB_ENOMEM ? "out of memory" : "bad pre-roll for the audio");
    if (rc == 0)
        rc = open_sink(s, &po, err, errlen);
    if (rc != 0) {
        tb_speaker_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
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
    if (!(o->play.tts_connect >= 0.0) || !(o->play.tts_rtf >= 0.0) || o->play.tts_concurrency < 0)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "negative TTS connect latency, RTF or concurrency");
    if (o->pcm_rate != 0)
        return pcm_create(o, out, err, errlen);
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
    if (tb_tts_stage_wanted(&o->play) && o->sink != TB_SINK_NONE) {
        s->stage = tb_tts_stage_create(NULL, NULL);
        if (s->stage == NULL) {
            tb_speaker_destroy(s);
            return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
        }
        tb_tts_stage_reset(s->stage, &o->play);
        /* The WAV sink's start is the stage's (release); the real-time
         * sink's, its player's own pre-roll. */
        s->holding = o->sink == TB_SINK_WAV;
        if (s->holding)
            po.preroll = 0.0;
    }
    po.cue = o->cue;
    if (o->sink == TB_SINK_NONE) {
        s->cache = calloc(CACHE_SLOTS, sizeof(*s->cache));
        rc = s->cache == NULL ? tb_seterr(err, errlen, TB_ENOMEM, "out of memory") : 0;
    } else {
        rc = open_sink(s, &po, err, errlen);
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

/* Whether a PCM call may go on: 0, or the code to return. */
static int pcm_ready(struct tb_speaker *s)
{
    if (s->feed == NULL || s->finished)
        return TB_EINVAL; /* not a PCM speaker, or the stream is over */
    if (s->failed)
        return s->failed;
    if (s->o.cancel != NULL && atomic_load_explicit(s->o.cancel, memory_order_relaxed) != 0) {
        snprintf(s->err, sizeof(s->err), "interrupted");
        return s->failed = TB_ECANCELED;
    }
    return 0;
}

/* After a PCM call: a failure is the speaker's; a speech that a failed
 * chunk ended is the sink's tail from here. */
static int pcm_done(struct tb_speaker *s, int rc)
{
    if (rc != 0) {
        s->failed = rc;
        return rc;
    }
    if (tb_pcmfeed_over(s->feed) && !s->sink_ended) {
        s->sink_ended = 1;
        if (s->sink->ops->end != NULL)
            s->sink->ops->end(s->sink);
    }
    return 0;
}

int tb_speaker_pcm(struct tb_speaker *s, uint32_t j, double t, const void *pcm, size_t n)
{
    int rc = pcm_ready(s);
    if (rc != 0)
        return rc;
    return pcm_done(s, tb_pcmfeed_data(s->feed, j, t, pcm, n, s->err, sizeof(s->err)));
}

int tb_speaker_pcm_end(struct tb_speaker *s, uint32_t j, double t, int failed)
{
    int rc = pcm_ready(s);
    if (rc != 0)
        return rc;
    return pcm_done(s, tb_pcmfeed_end(s->feed, j, t, failed, s->err, sizeof(s->err)));
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
    r->cut_s = NAN;
    if (s->sink == NULL)
        return;
    r->cut_s = s->sink->capped_at;
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
        if (s->stage != NULL && !s->failed) {
            /* the stream ended: the start is final, what is held plays */
            tb_tts_stage_close(s->stage);
            s->failed = release(s);
        }
        if (s->feed != NULL && !s->failed)
            s->failed = tb_pcmfeed_finish(s->feed, s->err, sizeof(s->err));
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
    free(s->held);
    free(s->hpcm);
    tb_tts_stage_destroy(s->stage);
    tb_pcmfeed_destroy(s->feed);
    free(s);
}
