/*
 * sink_pa.c - the PortAudio sink: real-time playback through the player.
 *
 * Three threads meet here.  The speaker's thread (chunk, finish) queues
 * each chunk's PCM with the moment it becomes playable; a feeder thread
 * waits for that moment and writes the PCM into the player's lock-free
 * ring, waiting while the ring is full; PortAudio's callback only pulls
 * from the ring (pcmring.h: no allocation, no lock, no system call).  The
 * queue between the first two is a plain mutex-protected list: neither
 * thread is real-time, and the lock never reaches the callback.
 *
 * The audio clock is the callback's frame count: frame k was pulled about
 * k / rate seconds after the stream started, when the sink was created.
 * The stream runs from then on, playing pre-roll silence, so the device's
 * buffer is full from the start: the first audio and the audio after a gap
 * both reach the listener one output latency after they were written, and
 * gap lengths on the audio clock are the heard ones, exact to a callback
 * buffer.  (A stream started only when playback begins is heard sooner at
 * first, and every later gap then sounds longer by the difference.)
 * Callbacks PortAudio flags with paOutputUnderflow (the device itself ran
 * dry: the host was too slow) are counted and reported.
 *
 * ALSA and JACK print start-up chatter on stderr from inside
 * Pa_Initialize and Pa_OpenStream; the speaker silences it
 * (tb_speaker_quiet) before it creates this sink.
 */
#include <errno.h>
#include <fcntl.h>
#include <portaudio.h>
#include <pthread.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sink.h"
#include "sink_pa.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"

#define FRAMES_PER_BUFFER 256 /* 11.6 ms at 22.05 kHz: the gap resolution */

struct node {
    struct node *next;
    struct timespec due;
    size_t n, off;
    int16_t pcm[];
};

struct pa_sink {
    struct tb_sink base;
    PaStream *stream;
    int pa_up;
    pthread_t feeder;
    int feeder_up;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct node *head, *tail;
    int ending;
    int finished;
};

static int on_audio(const void *in, void *out, unsigned long frames,
                    const PaStreamCallbackTimeInfo *ti, PaStreamCallbackFlags flags, void *ud)
{
    struct tb_sink *s = ud;
    (void)in;
    (void)ti;
    if (flags & paOutputUnderflow)
        atomic_fetch_add_explicit(&s->device_underflows, 1, memory_order_relaxed);
    tb_pcmring_pull(s->player, out, frames);
    return paContinue;
}

static void ts_add(struct timespec *t, double s)
{
    long ns = (long)(s * 1e9);
    t->tv_sec += ns / 1000000000L;
    t->tv_nsec += ns % 1000000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static void *feed(void *arg)
{
    struct pa_sink *p = arg;
    const struct timespec pause = {0, 5000000}; /* ring full: 5 ms */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct node *nd = p->head;
        if (nd == NULL) {
            if (p->ending)
                break;
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        if (pthread_cond_timedwait(&p->cv, &p->mu, &nd->due) != ETIMEDOUT) {
            struct timespec now;
            tb_clock_mono_ts(&now);
            if (now.tv_sec < nd->due.tv_sec ||
                (now.tv_sec == nd->due.tv_sec && now.tv_nsec < nd->due.tv_nsec))
                continue; /* woken early: wait on */
        }
        pthread_mutex_unlock(&p->mu);
        while (nd->off < nd->n) {
            nd->off += tb_pcmring_write(p->base.player, nd->pcm + nd->off, nd->n - nd->off);
            if (nd->off < nd->n)
                nanosleep(&pause, NULL);
        }
        pthread_mutex_lock(&p->mu);
        p->head = nd->next;
        if (p->head == NULL)
            p->tail = NULL;
        free(nd);
    }
    pthread_mutex_unlock(&p->mu);
    tb_pcmring_end(p->base.player);
    return NULL;
}

static int pa_chunk(struct tb_sink *s, double due, double delay, const int16_t *pcm, size_t n,
                    char *err, size_t errlen)
{
    struct pa_sink *p = (struct pa_sink *)s;
    struct node *nd;
    (void)due; /* real time goes by delay from now */
    if (n > ((size_t)1 << 28))
        return tb_seterr(err, errlen, TB_ETOOBIG, "a chunk of %zu frames", n);
    nd = malloc(sizeof(*nd) + n * sizeof(*pcm));
    if (nd == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    nd->next = NULL;
    nd->n = n;
    nd->off = 0;
    memcpy(nd->pcm, pcm, n * sizeof(*pcm));
    tb_clock_mono_ts(&nd->due);
    ts_add(&nd->due, delay);
    pthread_mutex_lock(&p->mu);
    if (p->tail != NULL)
        p->tail->next = nd;
    else
        p->head = nd;
    p->tail = nd;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

/* The feeder writes what is queued, ends the player and stops; finish
 * joins it. */
static void pa_end(struct tb_sink *s)
{
    struct pa_sink *p = (struct pa_sink *)s;
    pthread_mutex_lock(&p->mu);
    p->ending = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void stop_feeder(struct pa_sink *p)
{
    if (!p->feeder_up)
        return;
    pa_end(&p->base);
    pthread_join(p->feeder, NULL);
    p->feeder_up = 0;
}

static void close_pa(struct pa_sink *p)
{
    if (p->stream != NULL) {
        Pa_StopStream(p->stream);
        Pa_CloseStream(p->stream);
        p->stream = NULL;
    }
    if (p->pa_up) {
        Pa_Terminate();
        p->pa_up = 0;
    }
}

static int pa_finish(struct tb_sink *s, char *err, size_t errlen)
{
    struct pa_sink *p = (struct pa_sink *)s;
    const struct timespec tick = {0, 5000000};
    if (p->finished)
        return 0;
    p->finished = 1;
    (void)err;
    (void)errlen;
    stop_feeder(p); /* writes everything queued, then ends the player */
    /* Wait for the ring to play out; the callback marks the player done.
     * A stream that stopped on its own (device lost) cannot get there:
     * give up once it is no longer active. */
    while (!tb_pcmring_done(s->player) && Pa_IsStreamActive(p->stream) == 1)
        nanosleep(&tick, NULL);
    /* Pad so the tail leaves the card: returning from the stream right
     * after the last sample cut ~76 ms of it through PulseAudio at 100 ms
     * latency; twice the latency plus 0.2 s lost nothing. */
    struct timespec pad = {0, 0};
    ts_add(&pad, 2.0 * s->latency + 0.2);
    nanosleep(&pad, NULL);
    close_pa(p);
    return 0;
}

static void pa_destroy(struct tb_sink *s)
{
    struct pa_sink *p = (struct pa_sink *)s;
    struct node *nd;
    stop_feeder(p);
    close_pa(p);
    while ((nd = p->head) != NULL) {
        p->head = nd->next;
        free(nd);
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    tb_pcmring_destroy(s->player);
    free(p);
}

static const struct tb_sink_ops pa_ops = {
    .chunk = pa_chunk, .end = pa_end, .finish = pa_finish, .destroy = pa_destroy};

/* Device by index ("3") or by a case-sensitive part of its name. */
static PaDeviceIndex find_device(const char *want)
{
    char *end;
    long idx;
    PaDeviceIndex n = Pa_GetDeviceCount();
    if (want == NULL || *want == '\0')
        return Pa_GetDefaultOutputDevice();
    idx = strtol(want, &end, 10);
    if (*end == '\0' && end != want)
        return idx >= 0 && idx < n && Pa_GetDeviceInfo((PaDeviceIndex)idx)->maxOutputChannels > 0
                   ? (PaDeviceIndex)idx
                   : paNoDevice;
    for (PaDeviceIndex i = 0; i < n; i++) {
        const PaDeviceInfo *di = Pa_GetDeviceInfo(i);
        if (di != NULL && di->maxOutputChannels > 0 && strstr(di->name, want) != NULL)
            return i;
    }
    return paNoDevice;
}

static int open_stream(struct pa_sink *p, const char *device, double latency, char *err,
                       size_t errlen)
{
    PaStreamParameters op;
    PaError pe;
    PaDeviceIndex dev;
    const PaStreamInfo *si;

    pe = Pa_Initialize();
    if (pe != paNoError)
        return tb_seterr(err, errlen, TB_EDEVICE, "PortAudio: %s", Pa_GetErrorText(pe));
    p->pa_up = 1;
    dev = find_device(device);
    if (dev == paNoDevice)
        return tb_seterr(err, errlen, TB_EDEVICE, "%s%s%s",
                         device ? "no audio output device matches '" : "no audio output device",
                         device ? device : "", device ? "'" : "");
    memset(&op, 0, sizeof(op));
    op.device = dev;
    op.channelCount = 1;
    op.sampleFormat = paInt16;
    op.suggestedLatency = latency;
    pe = Pa_OpenStream(&p->stream, NULL, &op, p->base.rate, FRAMES_PER_BUFFER, paNoFlag, on_audio,
                       &p->base);
    if (pe != paNoError) {
        p->stream = NULL;
        return tb_seterr(err, errlen, TB_EDEVICE, "cannot open '%s': %s",
                         Pa_GetDeviceInfo(dev)->name, Pa_GetErrorText(pe));
    }
    si = Pa_GetStreamInfo(p->stream);
    p->base.latency = si != NULL ? si->outputLatency : latency;
    return 0;
}

int tb_sink_pa_create(const char *device, double latency, const struct tb_pcmring_opts *po,
                      struct tb_sink **out, char *err, size_t errlen)
{
    struct pa_sink *p = calloc(1, sizeof(*p));
    pthread_condattr_t ca;
    int rc;
    *out = NULL;
    if (p == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    p->base.ops = &pa_ops;
    p->base.rate = po->rate;
    p->base.capped_at = NAN; /* the sound card has no cap */
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    rc = open_stream(p, device, latency, err, errlen);
    if (rc == 0) {
        struct tb_pcmring_opts o = *po;
        rc = tb_pcmring_create(&o, &p->base.player);
        if (rc != 0)
            rc = tb_seterr(err, errlen, rc, "audio ring: %s", tb_strerror(rc));
    }
    if (rc == 0) {
        PaError pe = Pa_StartStream(p->stream);
        if (pe != paNoError)
            rc = tb_seterr(err, errlen, TB_EDEVICE, "cannot start '%s': %s",
                           device ? device : "the default device", Pa_GetErrorText(pe));
    }
    if (rc == 0 && pthread_create(&p->feeder, NULL, feed, p) != 0)
        rc = tb_seterr(err, errlen, TB_ENOMEM, "cannot start the audio feeder thread");
    if (rc != 0) {
        pa_destroy(&p->base);
        return rc;
    }
    p->feeder_up = 1;
    *out = &p->base;
    return 0;
}
