/*
 * pcmring.c - the PCM ring and the audio clock's accounting (pcmring.h).
 *
 * The ring is kfifo's: a power-of-two frame array and two free-running
 * 64-bit indices.  The writer stores frames, then publishes `head` with
 * release order; the reader loads `head` with acquire order before it
 * copies, and publishes `tail` (release) after, so the writer never
 * overwrites frames the reader has not finished with.  `ended` is stored
 * after the last `head`, so a reader that sees ended and then an empty
 * ring has really seen the end (no dry spell is invented at the tail).
 *
 * Everything else the reader changes lives in plain fields only it
 * touches, and is published to other threads through relaxed atomic
 * counters (statistics need no ordering beyond "eventually").  Gap records
 * go into a preallocated array whose count is published with release
 * order, so a reader of tb_pcmring_gaps sees complete records.
 */
#include "ttsbuf/pcmring.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"

enum { ST_IDLE, ST_PLAYING, ST_DONE };

struct tb_pcmring {
    struct tb_pcmring_opts o;
    int16_t *buf;
    uint64_t mask;
    uint64_t preroll_frames;
    int preroll_short; /* the ring holds less than the pre-roll */
    uint64_t gap_min_frames, interrupt_frames;
    _Alignas(64) _Atomic uint64_t head; /* written by the writer */
    _Alignas(64) _Atomic uint64_t tail; /* written by the reader */
    _Atomic int ended;
    /* reader-only state */
    int state;
    int in_gap;
    uint64_t gap_at, gap_len;
    uint64_t cue_pos;
    /* published counters */
    _Atomic uint64_t pulled, played, first_audio, end_audio, concealed, events, gap_max;
    _Atomic uint64_t high_water, dropped;
    _Atomic uint32_t underruns, interruptions;
    _Atomic int forced_start, done;
    /* the cue */
    int16_t *cue;
    size_t cue_len;
    /* dry spells */
    struct tb_audio_gap *gaps;
    size_t max_gaps;
    _Atomic size_t ngaps;
};

static _Thread_local int in_pull;

int tb_pcmring_cue_parse(const char *name, enum tb_pcmring_cue *out)
{
    static const char *const names[] = {"none", "tick", "tone"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (enum tb_pcmring_cue)i;
            return 0;
        }
    }
    return TB_EINVAL;
}

const char *tb_pcmring_cue_name(enum tb_pcmring_cue c)
{
    switch (c) {
    case TB_PCMRING_CUE_TICK: return "tick";
    case TB_PCMRING_CUE_TONE: return "tone";
    default: return "none";
    }
}

/*
 * The cues are generated here rather than shipped as files: a tick is
 * 12 ms of 2 kHz under a Hann window at -12 dBFS, played once at the start
 * of each dry spell; a tone is a quiet (-22 dBFS) sine near 441 Hz, looped
 * for the whole spell (its table is a whole number of periods, so the loop
 * does not click).
 */
static int make_cue(struct tb_pcmring *p)
{
    const double pi = 3.14159265358979323846;
    unsigned rate = p->o.rate;
    size_t n;
    if (p->o.cue == TB_PCMRING_CUE_NONE)
        return 0;
    if (p->o.cue == TB_PCMRING_CUE_TICK) {
        n = (size_t)(rate * 0.012);
        if (n < 2)
            n = 2;
    } else {
        size_t period = (size_t)lround((double)rate / 441.0);
        n = (period < 2 ? 2 : period) * 20;
    }
    p->cue = malloc(n * sizeof(*p->cue));
    if (p->cue == NULL)
        return TB_ENOMEM;
    p->cue_len = n;
    for (size_t i = 0; i < n; i++) {
        double v;
        if (p->o.cue == TB_PCMRING_CUE_TICK) {
            double w = 0.5 - 0.5 * cos(2.0 * pi * (double)i / (double)(n - 1));
            v = 0.25 * w * sin(2.0 * pi * 2000.0 * (double)i / rate);
        } else {
            v = 0.08 * sin(2.0 * pi * 20.0 * (double)i / (double)n);
        }
        p->cue[i] = (int16_t)lrint(v * 32767.0);
    }
    return 0;
}

int tb_pcmring_create(const struct tb_pcmring_opts *o, struct tb_pcmring **out)
{
    struct tb_pcmring *p;
    size_t cap = 1024;
    *out = NULL;
    if (o->rate == 0 || o->capacity > ((size_t)1 << 28) || !(o->preroll >= 0.0) ||
        o->preroll > 3600.0)
        return TB_EINVAL;
    while (cap < o->capacity)
        cap <<= 1;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return TB_ENOMEM;
    p->o = *o;
    p->o.capacity = cap;
    p->mask = cap - 1;
    p->max_gaps = o->max_gaps ? o->max_gaps : TB_PCMRING_GAPS_DEFAULT;
    p->buf = malloc(cap * sizeof(*p->buf));
    p->gaps = malloc(p->max_gaps * sizeof(*p->gaps));
    if (p->buf == NULL || p->gaps == NULL || make_cue(p) != 0) {
        tb_pcmring_destroy(p);
        return TB_ENOMEM;
    }
    p->preroll_frames = (uint64_t)llround(o->preroll * o->rate);
    if (p->preroll_frames > cap) {
        p->preroll_frames = cap; /* a full ring starts playback anyway */
        p->preroll_short = 1;
    }
    p->gap_min_frames = (uint64_t)llround(TB_GAP_MIN_S * o->rate);
    p->interrupt_frames = (uint64_t)llround(TB_INTERRUPT_S * o->rate);
    atomic_init(&p->first_audio, UINT64_MAX);
    *out = p;
    return 0;
}

void tb_pcmring_destroy(struct tb_pcmring *p)
{
    if (p == NULL)
        return;
    free(p->buf);
    free(p->gaps);
    free(p->cue);
    free(p);
}

size_t tb_pcmring_space(const struct tb_pcmring *p)
{
    uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&p->tail, memory_order_acquire);
    return (size_t)(p->o.capacity - (h - t));
}

size_t tb_pcmring_write(struct tb_pcmring *p, const int16_t *pcm, size_t n)
{
    uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&p->tail, memory_order_acquire);
    size_t room = (size_t)(p->o.capacity - (h - t));
    size_t k = n < room ? n : room;
    size_t off = (size_t)(h & p->mask);
    size_t first = k < p->o.capacity - off ? k : p->o.capacity - off;
    memcpy(p->buf + off, pcm, first * sizeof(*pcm));
    memcpy(p->buf, pcm + first, (k - first) * sizeof(*pcm));
    atomic_store_explicit(&p->head, h + k, memory_order_release);
    if (h + k - t > atomic_load_explicit(&p->high_water, memory_order_relaxed))
        atomic_store_explicit(&p->high_water, h + k - t, memory_order_relaxed);
    return k;
}

void tb_pcmring_end(struct tb_pcmring *p)
{
    atomic_store_explicit(&p->ended, 1, memory_order_release);
}

/* A dry spell ended (audio resumed): count and record it. */
static void close_gap(struct tb_pcmring *p)
{
    uint64_t len = p->gap_len;
    p->in_gap = 0;
    atomic_fetch_add_explicit(&p->events, 1, memory_order_relaxed);
    if (len > p->gap_min_frames) {
        atomic_fetch_add_explicit(&p->underruns, 1, memory_order_relaxed);
        if (len >= p->interrupt_frames)
            atomic_fetch_add_explicit(&p->interruptions, 1, memory_order_relaxed);
    }
    if (len > atomic_load_explicit(&p->gap_max, memory_order_relaxed))
        atomic_store_explicit(&p->gap_max, len, memory_order_relaxed);
    size_t n = atomic_load_explicit(&p->ngaps, memory_order_relaxed);
    if (n < p->max_gaps) {
        p->gaps[n].at = p->gap_at;
        p->gaps[n].frames = len;
        atomic_store_explicit(&p->ngaps, n + 1, memory_order_release);
    } else {
        atomic_fetch_add_explicit(&p->dropped, 1, memory_order_relaxed);
    }
}

/* Fills out[0..n) with concealment for a dry spell going on at `pos`. */
static void conceal(struct tb_pcmring *p, int16_t *out, size_t n, uint64_t pos)
{
    if (!p->in_gap) {
        p->in_gap = 1;
        p->gap_at = pos;
        p->gap_len = 0;
        p->cue_pos = 0;
    }
    p->gap_len += n;
    atomic_fetch_add_explicit(&p->concealed, n, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        int16_t v = 0;
        if (p->o.cue == TB_PCMRING_CUE_TONE)
            v = p->cue[p->cue_pos++ % p->cue_len];
        else if (p->o.cue == TB_PCMRING_CUE_TICK && p->cue_pos < p->cue_len)
            v = p->cue[p->cue_pos++];
        out[i] = v;
    }
}

void tb_pcmring_pull(struct tb_pcmring *p, int16_t *out, size_t frames)
{
    uint64_t pos = atomic_load_explicit(&p->pulled, memory_order_relaxed);
    size_t done = 0;
    in_pull = 1;
    while (done < frames) {
        int ended = atomic_load_explicit(&p->ended, memory_order_acquire);
        uint64_t h = atomic_load_explicit(&p->head, memory_order_acquire);
        uint64_t t = atomic_load_explicit(&p->tail, memory_order_relaxed);
        uint64_t avail = h - t;
        size_t want = frames - done;

        if (p->state == ST_IDLE) {
            if (avail == 0 && ended) {
                p->state = ST_DONE;
            } else if (avail > 0 &&
                       (avail >= p->preroll_frames || ended || avail == p->o.capacity)) {
                p->state = ST_PLAYING;
                if (avail == p->o.capacity && p->preroll_short && !ended)
                    atomic_store_explicit(&p->forced_start, 1, memory_order_relaxed);
                atomic_store_explicit(&p->first_audio, pos + done, memory_order_relaxed);
            } else {
                memset(out + done, 0, want * sizeof(*out)); /* pre-roll filling */
                /* NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores): says the block is full */
                done = frames;
                break;
            }
        }
        if (p->state == ST_DONE) {
            if (p->in_gap)
                p->in_gap = 0; /* the tail of the stream, not a gap */
            memset(out + done, 0, want * sizeof(*out));
            atomic_store_explicit(&p->done, 1, memory_order_release);
            /* NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores): says the block is full */
            done = frames;
            break;
        }
        if (avail == 0) {
            if (ended) {
                p->state = ST_DONE;
                continue;
            }
            conceal(p, out + done, want, pos + done);
            /* NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores): says the block is full */
            done = frames;
            break;
        }
        if (p->in_gap)
            close_gap(p);
        size_t k = avail < want ? (size_t)avail : want;
        size_t off = (size_t)(t & p->mask);
        size_t first = k < p->o.capacity - off ? k : p->o.capacity - off;
        memcpy(out + done, p->buf + off, first * sizeof(*out));
        memcpy(out + done + first, p->buf, (k - first) * sizeof(*out));
        atomic_store_explicit(&p->tail, t + k, memory_order_release);
        done += k;
        atomic_fetch_add_explicit(&p->played, k, memory_order_relaxed);
        atomic_store_explicit(&p->end_audio, pos + done, memory_order_relaxed);
    }
    atomic_store_explicit(&p->pulled, pos + frames, memory_order_relaxed);
    in_pull = 0;
}

int tb_pcmring_done(const struct tb_pcmring *p)
{
    return atomic_load_explicit(&p->done, memory_order_acquire);
}

uint64_t tb_pcmring_pulled(const struct tb_pcmring *p)
{
    return atomic_load_explicit(&p->pulled, memory_order_relaxed);
}

int tb_pcmring_in_pull(void)
{
    return in_pull;
}

void tb_pcmring_stats(const struct tb_pcmring *p, struct tb_pcmring_stats *st)
{
    st->pulled = atomic_load_explicit(&p->pulled, memory_order_relaxed);
    st->played = atomic_load_explicit(&p->played, memory_order_relaxed);
    st->first_audio = atomic_load_explicit(&p->first_audio, memory_order_relaxed);
    st->end_audio = atomic_load_explicit(&p->end_audio, memory_order_relaxed);
    st->concealed = atomic_load_explicit(&p->concealed, memory_order_relaxed);
    st->concealment_events = atomic_load_explicit(&p->events, memory_order_relaxed);
    st->underruns = atomic_load_explicit(&p->underruns, memory_order_relaxed);
    st->interruptions = atomic_load_explicit(&p->interruptions, memory_order_relaxed);
    st->gap_max = atomic_load_explicit(&p->gap_max, memory_order_relaxed);
    st->gaps_dropped = atomic_load_explicit(&p->dropped, memory_order_relaxed);
    st->high_water = atomic_load_explicit(&p->high_water, memory_order_relaxed);
    st->forced_start = atomic_load_explicit(&p->forced_start, memory_order_relaxed);
    st->done = atomic_load_explicit(&p->done, memory_order_acquire);
}

size_t tb_pcmring_gaps(const struct tb_pcmring *p, struct tb_audio_gap *out, size_t max)
{
    size_t n = atomic_load_explicit(&p->ngaps, memory_order_acquire);
    if (out != NULL && n > 0 && max > 0)
        memcpy(out, p->gaps, (n < max ? n : max) * sizeof(*out));
    return n;
}
