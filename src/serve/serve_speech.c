/*
 * serve_speech.c - the mock TTS's synthesis thread (see serve_speech.h).
 *
 * Synthesis is taken off the loop thread because eSpeak NG takes
 * milliseconds per sentence (more for a long text), and the loop keeps
 * other connections' schedules to well under a millisecond.  One mutex
 * guards both queues (pending, done); the thread waits on a condition
 * variable for work and wakes the loop with an eventfd.  Jobs run in
 * order, one at a time: eSpeak NG is not re-entrant, so one thread is
 * all it allows.
 *
 * Resampling: eSpeak NG speaks at 22050 Hz; other rates go through
 * libsamplerate (SRC_SINC_MEDIUM_QUALITY, src_simple over the whole
 * utterance, so the output has round(frames x ratio) frames give or take
 * the converter's rounding).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <samplerate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "serve_speech.h"
#include "ttsbuf/error.h"
#include "ttsbuf/tts.h"

#define SPEECH_WPM 175.0 /* eSpeak NG's own default rate */

/* A loop's done jobs and the eventfd that wakes it. */
struct tb_serve_speech_box {
    int efd;
    struct tb_serve_speech_job *done, **done_tail;
};

struct tb_serve_speech {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int started, stop;
    struct tb_serve_speech_job *pending, **pending_tail;
    struct tb_serve_speech_box *box; /* one a loop */
    size_t nboxes;
    struct tb_serve_speech_job *running; /* taken by the thread */
    /* Thread-only. */
    struct tb_tts *tts;
    int tts_failed;
    char tts_err[160];
};

void tb_serve_speech_job_free(struct tb_serve_speech_job *j)
{
    if (j == NULL)
        return;
    free(j->text);
    free(j->pcm);
    free(j);
}

/* Resamples in[0..n) at 22050 Hz to rate; 0, or a TB_E* code. */
static int resample(const int16_t *in, size_t n, unsigned from, unsigned rate,
                    struct tb_serve_speech_job *j)
{
    float *fin = NULL, *fout = NULL;
    SRC_DATA d;
    double ratio = (double)rate / from;
    size_t cap = (size_t)((double)n * ratio) + 64;
    int rc = 0, e;

    j->pcm = malloc((cap > 0 ? cap : 1) * sizeof(*j->pcm));
    if (n == 0 || j->pcm == NULL) {
        j->frames = 0;
        return j->pcm == NULL ? TB_ENOMEM : 0;
    }
    if (rate == from) {
        memcpy(j->pcm, in, n * sizeof(*in));
        j->frames = n;
        return 0;
    }
    fin = malloc(n * sizeof(*fin));
    fout = malloc((cap > 0 ? cap : 1) * sizeof(*fout));
    if (fin == NULL || fout == NULL) {
        rc = TB_ENOMEM;
        goto out;
    }
    src_short_to_float_array(in, fin, (int)n);
    memset(&d, 0, sizeof(d));
    d.data_in = fin;
    d.input_frames = (long)n;
    d.data_out = fout;
    d.output_frames = (long)cap;
    d.src_ratio = ratio;
    e = src_simple(&d, SRC_SINC_MEDIUM_QUALITY, 1);
    if (e != 0) {
        snprintf(j->err, sizeof(j->err), "libsamplerate: %s", src_strerror(e));
        rc = TB_EIO;
        goto out;
    }
    src_float_to_short_array(fout, j->pcm, (int)d.output_frames_gen);
    j->frames = (size_t)d.output_frames_gen;
out:
    free(fout);
    free(fin);
    return rc;
}

/* The speech's own leading zeros replaced by j->lead seconds of them. */
static int lead(struct tb_serve_speech_job *j)
{
    size_t z = 0, n = (size_t)llround(j->lead * (double)j->rate);
    int16_t *p;
    while (z < j->frames && j->pcm[z] == 0)
        z++;
    p = malloc((n + j->frames - z > 0 ? n + j->frames - z : 1) * sizeof(*p));
    if (p == NULL)
        return TB_ENOMEM;
    memset(p, 0, n * sizeof(*p));
    memcpy(p + n, j->pcm + z, (j->frames - z) * sizeof(*p));
    free(j->pcm);
    j->pcm = p;
    j->frames = n + j->frames - z;
    return 0;
}

/* One job, on the thread. */
static void speak(struct tb_serve_speech *sp, struct tb_serve_speech_job *j)
{
    const int16_t *pcm;
    size_t frames;
    int rc;

    if (sp->tts == NULL && !sp->tts_failed) {
        struct tb_tts_opts o = {"en", SPEECH_WPM};
        if (tb_tts_create(&o, &sp->tts, sp->tts_err, sizeof(sp->tts_err)) != 0)
            sp->tts_failed = 1;
    }
    if (sp->tts == NULL) {
        j->rc = TB_EIO;
        snprintf(j->err, sizeof(j->err), "%s", sp->tts_err);
        return;
    }
    rc = tb_tts_synth(sp->tts, j->text, j->len, &pcm, &frames);
    if (rc != 0) {
        j->rc = rc;
        snprintf(j->err, sizeof(j->err), "eSpeak NG: %s", tb_strerror(rc));
        return;
    }
    j->rc = resample(pcm, frames, tb_tts_rate(sp->tts), j->rate, j);
    if (j->rc == 0 && j->lead > 0)
        j->rc = lead(j);
    if (j->rc != 0 && j->err[0] == '\0')
        snprintf(j->err, sizeof(j->err), "%s", tb_strerror(j->rc));
}

static void *thread_main(void *arg)
{
    struct tb_serve_speech *sp = arg;
    pthread_mutex_lock(&sp->mu);
    for (;;) {
        struct tb_serve_speech_job *j;
        uint64_t one = 1;
        int live;
        while (sp->pending == NULL && !sp->stop)
            pthread_cond_wait(&sp->cv, &sp->mu);
        if (sp->stop)
            break;
        j = sp->pending;
        sp->pending = j->next;
        if (sp->pending == NULL)
            sp->pending_tail = &sp->pending;
        j->next = NULL;
        sp->running = j;
        live = j->owner != NULL;
        pthread_mutex_unlock(&sp->mu);
        if (live) /* an abandoned job is not worth speaking */
            speak(sp, j);
        pthread_mutex_lock(&sp->mu);
        sp->running = NULL;
        j->done = 1;
        if (j->owner == NULL) {
            tb_serve_speech_job_free(j);
            continue;
        }
        *sp->box[j->box].done_tail = j;
        sp->box[j->box].done_tail = &j->next;
        if (write(sp->box[j->box].efd, &one, sizeof(one)) < 0) {
            /* EAGAIN: the counter is full, so the loop will look anyway. */
        }
    }
    pthread_mutex_unlock(&sp->mu);
    tb_tts_destroy(sp->tts); /* on the thread that created it */
    sp->tts = NULL;
    return NULL;
}

int tb_serve_speech_create(size_t nboxes, struct tb_serve_speech **out)
{
    struct tb_serve_speech *sp = calloc(1, sizeof(*sp));
    *out = NULL;
    if (sp == NULL || (sp->box = calloc(nboxes, sizeof(*sp->box))) == NULL) {
        free(sp);
        return TB_ENOMEM;
    }
    pthread_mutex_init(&sp->mu, NULL);
    pthread_cond_init(&sp->cv, NULL);
    sp->pending_tail = &sp->pending;
    for (; sp->nboxes < nboxes; sp->nboxes++) {
        struct tb_serve_speech_box *b = &sp->box[sp->nboxes];
        b->done_tail = &b->done;
        b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (b->efd < 0) {
            tb_serve_speech_destroy(sp);
            return TB_EIO;
        }
    }
    *out = sp;
    return 0;
}

int tb_serve_speech_fd(const struct tb_serve_speech *sp, size_t b)
{
    return sp->box[b].efd;
}

int tb_serve_speech_submit(struct tb_serve_speech *sp, struct tb_serve_speech_job *j)
{
    int rc = 0;
    pthread_mutex_lock(&sp->mu);
    if (!sp->started) {
        if (pthread_create(&sp->th, NULL, thread_main, sp) != 0)
            rc = TB_EIO;
        else
            sp->started = 1;
    }
    if (rc == 0) {
        j->next = NULL;
        *sp->pending_tail = j;
        sp->pending_tail = &j->next;
        pthread_cond_signal(&sp->cv);
    }
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

struct tb_serve_speech_job *tb_serve_speech_take(struct tb_serve_speech *sp, size_t b)
{
    struct tb_serve_speech_box *x = &sp->box[b];
    struct tb_serve_speech_job *list;
    uint64_t v;
    if (read(x->efd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing signalled; the list may still hold jobs. */
    }
    pthread_mutex_lock(&sp->mu);
    list = x->done;
    x->done = NULL;
    x->done_tail = &x->done;
    pthread_mutex_unlock(&sp->mu);
    return list;
}

void tb_serve_speech_abandon(struct tb_serve_speech *sp, struct tb_serve_speech_job *j)
{
    pthread_mutex_lock(&sp->mu);
    j->owner = NULL;
    if (j->done) {
        /* On the done list: unlink it. */
        struct tb_serve_speech_box *x = &sp->box[j->box];
        struct tb_serve_speech_job **pp = &x->done;
        while (*pp != NULL && *pp != j)
            pp = &(*pp)->next;
        if (*pp == j) {
            *pp = j->next;
            if (x->done_tail == &j->next)
                x->done_tail = pp;
        }
        tb_serve_speech_job_free(j);
    }
    /* Pending or running: the thread frees it when it is done. */
    pthread_mutex_unlock(&sp->mu);
}

void tb_serve_speech_destroy(struct tb_serve_speech *sp)
{
    struct tb_serve_speech_job *j;
    if (sp == NULL)
        return;
    pthread_mutex_lock(&sp->mu);
    sp->stop = 1;
    pthread_cond_signal(&sp->cv);
    pthread_mutex_unlock(&sp->mu);
    if (sp->started)
        pthread_join(sp->th, NULL);
    while ((j = sp->pending) != NULL) {
        sp->pending = j->next;
        tb_serve_speech_job_free(j);
    }
    for (size_t b = 0; b < sp->nboxes; b++) {
        while ((j = sp->box[b].done) != NULL) {
            sp->box[b].done = j->next;
            tb_serve_speech_job_free(j);
        }
        close(sp->box[b].efd);
    }
    free(sp->box);
    pthread_cond_destroy(&sp->cv);
    pthread_mutex_destroy(&sp->mu);
    free(sp);
}
