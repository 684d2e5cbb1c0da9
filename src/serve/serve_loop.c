/*
 * serve_loop.c - the mock OpenAI-compatible provider's event loop and the
 * functions of serve.h (serve_priv.h lists the files the server is made
 * of).
 *
 * One thread, one epoll set: the listening socket, a timerfd, an eventfd
 * for tb_serve_stop, and every connection.  A connection has at most one
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
 * buffer for a slow client are not counted.  It goes into a histogram of
 * 10 us buckets up to 1 s plus one overflow bucket (800 KB, allocated
 * once), so memory does not grow with traffic and percentiles are exact
 * to 10 us.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "serve_body.h"
#include "serve_conn.h"
#include "serve_priv.h"
#include "serve_read.h"
#include "serve_reply.h"
#include "serve_stream.h"
#include "serve_tts.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/serve.h"

_Static_assert(offsetof(struct tb_serve_conn, hn) == 0, "run_due casts a heap node to its conn");

/* Arms the timerfd at the earliest deadline, if that changed. */
static int arm(struct tb_serve *s)
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

/* Statistics. */

/* The q-quantile: the top of the bucket holding it, never above the max. */
static double late_quantile(const struct tb_serve *s, double q)
{
    double want = q * (double)s->st.late_n;
    uint64_t rank = (uint64_t)want, cum = 0;
    double max = (double)s->late_max / NS;
    if ((double)rank < want || rank < 1)
        rank++; /* the nearest-rank definition: ceil(q * n), at least 1 */
    for (size_t b = 0; b < LATE_BUCKETS; b++) {
        cum += s->late[b];
        if (cum >= rank) {
            double top = (double)((int64_t)(b + 1) * LATE_BUCKET_NS) / NS;
            return top < max ? top : max;
        }
    }
    return max;
}

/* A deadline passed. */
static void conn_due(struct tb_serve *s, struct tb_serve_conn *c)
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

static void listen_watch(struct tb_serve *s, int on)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = on ? EPOLLIN : 0;
    ev.data.ptr = &s->lfd;
    epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->lfd, &ev);
    s->accept_paused = !on;
}

/* Accepts the connections waiting, up to ACCEPT_BATCH.  Past max_conns
 * a connection is refused with 503 at once; with REFUSALS_MAX of those
 * still open, the listener is left alone (the kernel's backlog holds the
 * rest) until one ends, rather than closing a connection unanswered. */
static void accept_some(struct tb_serve *s)
{
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        struct tb_serve_conn *c;
        int fd, over;
        if (s->nconns - s->nrefusals >= s->max_conns &&
            s->nrefusals >= REFUSALS_MAX(s->max_conns)) {
            listen_watch(s, 0);
            s->refusals_full = 1;
            s->accept_retry = tb_clock_mono_ns() + ACCEPT_RETRY_NS;
            return;
        }
        fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* Level-triggered, the listener would wake us in a loop:
                 * stop watching it for a while instead. */
                listen_watch(s, 0);
                s->accept_retry = tb_clock_mono_ns() + ACCEPT_RETRY_NS;
            }
            return;
        }
        over = s->nconns - s->nrefusals >= s->max_conns;
        c = tb_serve_conn_open(s, fd);
        if (c != NULL && over) {
            c->refusal = 1;
            s->nrefusals++;
            tb_serve_over_conns(s, c);
        }
    }
}

/* Handles every deadline that has passed.  A connection that yielded
 * during this pass waits for the next one (after epoll_wait: new requests
 * and readers get their turn too). */
static void run_due(struct tb_serve *s)
{
    int64_t now = tb_clock_mono_ns(), start = now;
    if (s->accept_paused && s->accept_retry <= now)
        listen_watch(s, 1);
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

/* ---- The public functions --------------------------------------------- */

int tb_serve_create(const struct tb_serve_opts *o, struct tb_serve **out, char *err, size_t errlen)
{
    const char *host = o->host != NULL ? o->host : "127.0.0.1";
    union {
        struct sockaddr any;
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } sa;
    socklen_t salen;
    struct tb_serve *s = NULL;
    struct epoll_event ev;
    int one = 1, rc;

    *out = NULL;
    memset(&sa, 0, sizeof(sa));
    if (o->stream == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: no stream to serve");
    if (!(o->tts_rtf >= 0 && o->tts_rtf <= 1e6))
        return tb_seterr(err, errlen, TB_EINVAL, "serve: tts_rtf %g is not in 0..1e6", o->tts_rtf);
    if (!(o->prefill_per_token >= 0 && o->prefill_per_token <= TB_SERVE_PREFILL_MAX))
        return tb_seterr(err, errlen, TB_EINVAL, "serve: prefill_per_token %g is not in 0..%g",
                         o->prefill_per_token, TB_SERVE_PREFILL_MAX);
    if (o->max_conns > TB_SERVE_CONNS_MAX)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: max_conns %zu is over %d", o->max_conns,
                         TB_SERVE_CONNS_MAX);
    if (o->port < 0 || o->port > 65535)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: port %d is not in 0..65535", o->port);
    if (inet_pton(AF_INET, host, &sa.v4.sin_addr) == 1) {
        sa.v4.sin_family = AF_INET;
        sa.v4.sin_port = htons((uint16_t)o->port);
        salen = sizeof(sa.v4);
    } else if (inet_pton(AF_INET6, host, &sa.v6.sin6_addr) == 1) {
        sa.v6.sin6_family = AF_INET6;
        sa.v6.sin6_port = htons((uint16_t)o->port);
        salen = sizeof(sa.v6);
    } else {
        return tb_seterr(err, errlen, TB_EINVAL,
                         "serve: host \"%s\" is not a numeric IPv4 or IPv6 address", host);
    }

    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "serve: out of memory");
    s->lfd = s->epfd = s->tfd = s->efd = -1;
    s->stream = o->stream;
    s->stream_for = o->stream_for;
    s->stream_for_ud = o->stream_for_ud;
    s->seed = o->seed;
    s->faults = o->faults;
    s->max_conns = o->max_conns > 0 ? o->max_conns : TB_SERVE_CONNS_DEFAULT;
    s->prefill = o->prefill_per_token;
    s->budget = o->mem_budget > 0 ? o->mem_budget : TB_SERVE_MEM_DEFAULT;
    s->armed = NEVER;
    s->tts_latency_at = o->tts_latency_at;
    s->tts_latency_ud = o->tts_latency_ud;
    s->tts_rtf = o->tts_rtf;
    s->tts_faults = o->tts_faults;
    s->tts_key = o->tts_key;
    s->request_log = o->request_log;
    s->request_log_ud = o->request_log_ud;
    s->late = calloc(LATE_BUCKETS + 1, sizeof(*s->late));
    if (s->late == NULL) {
        rc = tb_seterr(err, errlen, TB_ENOMEM, "serve: out of memory");
        goto fail;
    }
    s->lfd = socket(sa.any.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->lfd < 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: socket: %s", strerror(errno));
        goto fail;
    }
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s->lfd, &sa.any, salen) != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: bind %s port %d: %s", host, o->port,
                       strerror(errno));
        goto fail;
    }
    /* The kernel caps the backlog at net.core.somaxconn. */
    if (listen(s->lfd, 4096) != 0 || getsockname(s->lfd, &sa.any, &salen) != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: listen: %s", strerror(errno));
        goto fail;
    }
    s->port = ntohs(sa.any.sa_family == AF_INET ? sa.v4.sin_port : sa.v6.sin6_port);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->epfd < 0 || s->tfd < 0 || s->efd < 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: epoll/timerfd/eventfd: %s", strerror(errno));
        goto fail;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.ptr = &s->lfd;
    rc = epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev);
    ev.data.ptr = &s->tfd;
    rc |= epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev);
    ev.data.ptr = &s->efd;
    rc |= epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->efd, &ev);
    if (rc == 0 && tb_serve_speech_create(&s->speech) != 0) {
        rc = tb_seterr(err, errlen, TB_ENOMEM, "serve: the TTS's queues: out of memory");
        goto fail;
    }
    ev.data.ptr = &s->speech;
    if (rc == 0)
        rc = epoll_ctl(s->epfd, EPOLL_CTL_ADD, tb_serve_speech_fd(s->speech), &ev);
    if (rc != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: epoll_ctl: %s", strerror(errno));
        goto fail;
    }
    *out = s;
    return 0;
fail:
    tb_serve_destroy(s);
    return rc;
}

size_t tb_serve_fds_needed(size_t max_conns)
{
    size_t n = max_conns > 0 ? max_conns : TB_SERVE_CONNS_DEFAULT;
    return n + REFUSALS_MAX(n) + FDS_OWN;
}

int tb_serve_port(const struct tb_serve *s)
{
    return s->port;
}

int tb_serve_run(struct tb_serve *s)
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
            uint64_t v;
            if (p == &s->efd) {
                stop = read(s->efd, &v, sizeof(v)) == (ssize_t)sizeof(v);
            } else if (p == &s->tfd) {
                /* No read: timerfd_settime clears the expiration count,
                 * and the next arm() must call it (the fired connection
                 * has almost always moved the top anyway), which saves a
                 * syscall per wake-up. */
                s->armed = ARM_STALE;
            } else if (p == &s->speech) {
                tb_serve_tts_ready(s);
            } else if (p == &s->lfd) {
                accept_some(s);
            } else {
                tb_serve_conn_event(s, p, evs[i].events);
            }
        }
    }
    /* Stopping is not the clients' fault: not counted as drops. */
    s->stopping = 1;
    while (s->conns != NULL)
        tb_serve_conn_close(s, s->conns, 0);
    arm(s); /* disarms: nothing is scheduled now */
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    return rc;
}

void tb_serve_stop(struct tb_serve *s)
{
    uint64_t one = 1;
    int saved = errno; /* a signal handler must leave errno alone */
    if (write(s->efd, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is full, so a stop is pending anyway. */
    }
    errno = saved;
}

void tb_serve_stats(const struct tb_serve *s, struct tb_serve_stats *out)
{
    *out = s->st;
    if (s->st.late_n > 0) {
        out->late_p50 = late_quantile(s, 0.50);
        out->late_p99 = late_quantile(s, 0.99);
        out->late_max = (double)s->late_max / NS;
    }
}

void tb_serve_destroy(struct tb_serve *s)
{
    if (s == NULL)
        return;
    s->stopping = 1;
    while (s->conns != NULL)
        tb_serve_conn_close(s, s->conns,
                            0); /* NOLINT(clang-analyzer-unix.Malloc): it unlinks the head */
    tb_serve_speech_destroy(s->speech);
    if (s->efd >= 0)
        close(s->efd);
    if (s->tfd >= 0)
        close(s->tfd);
    if (s->epfd >= 0)
        close(s->epfd);
    if (s->lfd >= 0)
        close(s->lfd);
    free(s->heap.a);
    free(s->text);
    free(s->late);
    free(s);
}
