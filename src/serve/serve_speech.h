/*
 * serve_speech.h - private to libttsbuf: the mock TTS's synthesis thread
 * (serve_speech.c).  The loop hands it jobs (text and a sample rate); the
 * thread speaks each with eSpeak NG, resamples it with libsamplerate and
 * hands it back through a queue and an eventfd the loop watches: each
 * loop has a box of its own (a done queue and its eventfd), and a job
 * comes back to the box of the loop that sent it.
 *
 * The thread is started by the first job and is the process's only
 * eSpeak NG thread (tts.h: one engine, one thread); it ends with
 * tb_serve_speech_destroy.  A job whose connection went away is
 * abandoned, and freed by whichever side holds it last.
 */
#ifndef TTSBUF_SERVE_SPEECH_H
#define TTSBUF_SERVE_SPEECH_H

#include <stddef.h>
#include <stdint.h>

struct tb_serve_speech_job {
    struct tb_serve_speech_job *next;
    void *owner; /* the connection; NULL once abandoned */
    size_t box;  /* the box (its loop) it comes back to */
    char *text;  /* owned */
    size_t len;
    unsigned rate;
    double lead;  /* seconds of zero samples before the speech (0: none) */
    /* Results (the thread writes them before queueing the job done). */
    int16_t *pcm; /* owned; frames samples at rate */
    size_t frames;
    int rc;        /* 0 or a TB_E* code */
    char err[160]; /* detail when rc != 0 */
    int done;
};

struct tb_serve_speech;

/* The queues and nboxes boxes (>= 1, one a loop) with their eventfds;
 * no thread yet.  0, TB_ENOMEM or TB_EIO.  Any thread, before the loops
 * run. */
int tb_serve_speech_create(size_t nboxes, struct tb_serve_speech **out);

/* The eventfd of box b that becomes readable when its jobs are done. */
int tb_serve_speech_fd(const struct tb_serve_speech *sp, size_t b);

/* Queues j (owned by the speech object from here until it comes back
 * from tb_serve_speech_take); starts the thread on the first job.  0, or
 * TB_EIO when the thread cannot start (j is not queued then). */
int tb_serve_speech_submit(struct tb_serve_speech *sp, struct tb_serve_speech_job *j);

/* Box b's done jobs, oldest first (a list by next), its eventfd
 * cleared.  The caller owns them.  Box b's loop. */
struct tb_serve_speech_job *tb_serve_speech_take(struct tb_serve_speech *sp, size_t b);

/* Its connection is gone: j is freed now if done, else when taken. */
void tb_serve_speech_abandon(struct tb_serve_speech *sp, struct tb_serve_speech_job *j);

void tb_serve_speech_job_free(struct tb_serve_speech_job *j); /* NULL is a no-op */

/* Stops and joins the thread (after the job in progress), frees every
 * job.  NULL is a no-op.  Once the loops have stopped. */
void tb_serve_speech_destroy(struct tb_serve_speech *sp);

#endif
