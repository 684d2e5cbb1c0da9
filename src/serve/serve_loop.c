/*
 * serve_loop.c - one of the mock server's event loops (see serve_loop.h;
 * serve_priv.h lists the files the server is made of).
 *
 * A loop is one thread and one epoll set: a timerfd, the server's stop
 * eventfd, its inbox of connections handed to it (serve_accept.c), its
 * box of finished speech, the listener on loops[0], and every connection
 * it holds.  A connection has at most one
 * deadline at a time (its read timeout, its next event, its non-streamed
 * body, the end of its linger), and the deadlines live in a binary
 * min-heap of connections: the next one is the top, and rescheduling a
 * connection is O(log n), about 14 comparisons at ten thousand streams.
 * The timerfd (CLOCK_MONOTONIC, absolute, nanoseconds) is re-armed only
 * when the heap's top changes, and after it fired (re-arming clears it,
 * so it is never read); epoll_wait's millisecond timeout is never used
 * for timing.  While the loop runs, its thread's timer slack is set
 * to 1 ns (and restored after), or the kernel may fire the timer up to
 * 50 us late to batch wake-ups.
 *
 * Lateness is write time minus schedule, read once per batch of due
 * events when they are handed to send(): bytes that then wait in our
 * buffer for a slow client are not counted.  It goes into the loop's
 * histogram of 10 us buckets up to 1 s plus one overflow bucket (800 KB,
 * allocated once), so memory does not grow with traffic and percentiles
 * are exact to 10 us; tb_serve_stats adds the loops' histograms up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "serve_accept.h"
#include "serve_body.h"
#include "serve_conn.h"
#include "serve_loop.h"
#include "serve_priv.h"
#include "serve_read.h"
#include "serve_stream.h"
#include "serve_tts.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"

_Static_assert(offsetof(struct tb_serve_conn, hn) == 0, "run_due casts a heap node to its conn");

/* Arms the timerfd at the earliest deadline, if that changed. */
static int arm(struct tb_serve_loop *s)
{
    int64_t d = s->heap.n > 0 ? s->heap.a[0].due : NEVER;
    struct itimerspec its;
    if (s->accept_paused && s->accept_retry < d)
        d = s->accept_retry;
    if (d == s->armed)
        return 0;
    memset(&its, 0, sizeof(its));
    if (d != NEVER) {
        if (d < 1)
            d = 1; /* all zero would disarm */
        its.it_value.tv_sec = (time_t)(d / NS);
        its.it_value.tv_nsec = (long)(d % NS);
    }
    if (timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
        return TB_EIO;
    s->armed = d;
    return 0;
}

/* A deadline passed. */
static void conn_due(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    switch (c->st) {
    case C_READ: tb_serve_conn_close(s, c, c->in_len > 0); break; /* too slow to send a request */
    case C_STREAM: tb_serve_advance(s, c); break;
    case C_WAIT: c->walking ? tb_serve_body_walk(s, c) : tb_serve_body_send(s, c); break;
    case C_TTS: tb_serve_tts_advance(s, c); break;
    case C_FLUSH: tb_serve_conn_close(s, c, 1); break; /* stopped reading a finished response */
    case C_LINGER: tb_serve_conn_close(s, c, 0); break;
    }
}

/* Handles every deadline that has passed.  A connection that yielded
 * during this pass waits for the next one (after epoll_wait: new requests
 * and readers get their turn too). */
static void run_due(struct tb_serve_loop *s)
{
    int64_t now = tb_clock_mono_ns(), start = now;
    tb_serve_accept_resume(s, now);
    while (s->heap.n > 0) {
        /* The node is a connection's first member (asserted below). */
        struct tb_serve_conn *c = (struct tb_serve_conn *)tb_serve_heap_top(&s->heap);
        if (c->hn.due > now) {
            now = tb_clock_mono_ns(); /* handling the others took time */
            if (c->hn.due > now || (c->yielded && c->hn.due > start))
                break;
        }
        tb_serve_heap_remove(&s->heap, &c->hn);
        conn_due(s, c);
    }
}

/* Adds fd to the loop's epoll set, its data ptr p. */
static int watch(struct tb_serve_loop *s, int fd, void *p)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.ptr = p;
    return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

int tb_serve_loop_init(struct tb_serve *srv, size_t index)
{
    struct tb_serve_loop *s = &srv->loops[index];
    s->srv = srv;
    s->index = index;
    s->epfd = s->tfd = s->inbox_fd = -1;
    s->armed = NEVER;
    pthread_mutex_init(&s->inbox_mu, NULL);
    s->late = calloc(LATE_BUCKETS + 1, sizeof(*s->late));
    if (s->late == NULL)
        return TB_ENOMEM;
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    s->inbox_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->epfd < 0 || s->tfd < 0 || s->inbox_fd < 0)
        return TB_EIO;
    if (watch(s, s->tfd, &s->tfd) != 0 || watch(s, srv->stopfd, &srv->stopfd) != 0 ||
        watch(s, s->inbox_fd, &s->inbox_fd) != 0 ||
        watch(s, tb_serve_speech_fd(srv->speech, index), &srv->speech) != 0 ||
        (index == 0 && watch(s, srv->lfd, &srv->lfd) != 0))
        return TB_EIO;
    return 0;
}

int tb_serve_loop_run(struct tb_serve_loop *s)
{
    struct epoll_event evs[EPOLL_BATCH];
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    int rc = 0, stop = 0;

    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    while (!stop) {
        int n;
        run_due(s);
        if (arm(s) != 0) {
            rc = TB_EIO;
            break;
        }
        n = epoll_wait(s->epfd, evs, EPOLL_BATCH, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = TB_EIO;
            break;
        }
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &s->srv->stopfd) {
                stop = 1; /* not read: every loop sees it */
            } else if (p == &s->tfd) {
                /* No read: timerfd_settime clears the expiration count,
                 * and the next arm() must call it (the fired connection
                 * has almost always moved the top anyway), which saves a
                 * syscall per wake-up. */
                s->armed = ARM_STALE;
            } else if (p == &s->inbox_fd) {
                tb_serve_accept_take(s);
            } else if (p == &s->srv->speech) {
                tb_serve_tts_ready(s);
            } else if (p == &s->srv->lfd) {
                tb_serve_accept(s);
            } else {
                tb_serve_conn_event(s, p, evs[i].events);
            }
        }
    }
    tb_serve_loop_close(s);
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    return rc;
}

void tb_serve_loop_close(struct tb_serve_loop *s)
{
    /* Stopping is not the clients' fault: not counted as drops. */
    s->stopping = 1;
    tb_serve_accept_drop(s);
    while (s->conns != NULL)
        tb_serve_conn_close(s, s->conns,
                            0); /* NOLINT(clang-analyzer-unix.Malloc): it unlinks the head */
    if (s->tfd >= 0)
        arm(s); /* disarms: nothing is scheduled now */
}

void tb_serve_loop_free(struct tb_serve_loop *s)
{
    if (s->srv == NULL)
        return; /* never initialised */
    tb_serve_loop_close(s);
    if (s->inbox_fd >= 0)
        close(s->inbox_fd);
    if (s->tfd >= 0)
        close(s->tfd);
    if (s->epfd >= 0)
        close(s->epfd);
    pthread_mutex_destroy(&s->inbox_mu);
    free(s->heap.a);
    free(s->text);
    free(s->late);
}
