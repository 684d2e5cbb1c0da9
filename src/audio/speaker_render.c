/*
 * speaker_render.c - eSpeak NG's speech of a chunk for the speaker
 * (speaker_render.h): synthesized, and following the rate model
 * stretched to the model's duration; with no sink, only its duration,
 * cached by text.
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
#include "speaker_render.h"

#include <limits.h>
#include <math.h>
#include <sonic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speaker_state.h"
#include "ttsbuf/error.h"
#include "ttsbuf/tts.h"

#define CACHE_SLOTS 65536u /* power of two */
#define CACHE_MAX (CACHE_SLOTS / 2)

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

int tb_speaker_synth(struct tb_speaker *s, const char *text, size_t len, const int16_t **pcm,
                     size_t *n)
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
int tb_speaker_render_rate(struct tb_speaker *s, const char *text, size_t len, double dur,
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
    rc = tb_speaker_synth(s, text, len, &pcm, &n);
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

int tb_speaker_measure(struct tb_speaker *s, const char *text, size_t len, double *dur,
                       double *busy)
{
    uint64_t h = fnv1a(text, len);
    struct centry *e = cache_slot(s, text, len, h);
    double t0 = s->synth_s;
    const int16_t *pcm;
    size_t n;
    int rc;
    *busy = 0.0;
    if (e->text != NULL) {
        s->hits++;
        *dur = e->dur;
        *busy = s->o.count_synthesis ? e->busy : 0.0;
        return 0;
    }
    rc = tb_speaker_synth(s, text, len, &pcm, &n);
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

int tb_speaker_cache_init(struct tb_speaker *s)
{
    s->cache = calloc(CACHE_SLOTS, sizeof(*s->cache));
    return s->cache == NULL ? TB_ENOMEM : 0;
}

void tb_speaker_cache_free(struct tb_speaker *s)
{
    if (s->cache == NULL)
        return;
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        free(s->cache[i].text);
    free(s->cache);
    s->cache = NULL;
}
