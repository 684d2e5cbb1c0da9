/*
 * bench_loop.c - the event loop of one `ttsbuf bench` level (see
 * bench_loop.h): libcurl's sockets on one epoll set, and the clock that
 * stamps what they bring.
 *
 * The loop is libcurl's multi_socket API over one epoll set, as libcurl's
 * own ephiperfifo example does it: libcurl says which sockets to watch
 * (socket callback) and when to call it back (timer callback); epoll_wait
 * sleeps until a socket is ready, a timeout is due, or the next request
 * must start.
 *
 * Time stamps: a socket is stamped when the loop first sees it ready, and
 * the first body read libcurl then makes on it carries that stamp: the
 * bytes were in the socket then, however long the loop takes to get to
 * them.  Sockets are watched edge-triggered, so epoll reports a socket
 * again whenever new bytes arrive; ready sockets wait in a FIFO (first
 * seen, first served), and while the loop works through a burst (or ends
 * or starts many transfers) it asks epoll again (timeout 0) every
 * REPOLL_S, stamping the sockets that became ready meanwhile.  A stamp is
 * thus late by at most REPOLL_S plus one socket's handling, not by the
 * whole burst's: with a thousand streams in step, a burst of a thousand
 * reads takes the loop 12-17 ms, and stamping at the wake-up alone put
 * 6-20 ms of the loop's own work into the P99 of what it measured.  Bytes
 * that came in while their socket waited are dated by stamp_now and
 * run_ready's rules: late when the loop is behind, never early.  libcurl
 * reads a socket until it would block (it polls the socket again after
 * each read), as edge triggering needs; a socket silent for SILENT_S is
 * handed to libcurl once more at each scan, so a read it left undone
 * cannot stall a stream.
 *
 * Cost: O(ready sockets) per wake-up, not O(transfers); one SSE parser and
 * one growing stream per transfer in flight.  Idle timeouts are checked by
 * a scan of the transfers in flight (O(n), cheap next to the events
 * themselves) every idle timeout / 8, between 0.05 s and 1 s; libcurl's
 * progress callback, which it would call on every read, is not used.
 */
#include "bench_loop.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "base/grow.h"
#include "ttsbuf/error.h"

/* The transfers' clock.  While a socket is handled, the first read
 * libcurl hands over (with chunked encoding: the first chunk, one server
 * write) gets the time the socket was first seen ready (see run_ready).  A
 * second one may have come in later, if the loop was behind: when epoll
 * reported new bytes on the socket meanwhile (edge-triggered, it reports
 * every arrival), it gets the time of that report, else the time it is
 * handed over; any further one, the time it is handed over.  Stamps can
 * so be late when the loop is behind, never early by more than REPOLL_S.
 * Outside a handling: the last stamp(), then the time of the call. */
static double stamp_now(struct tb_clock *c)
{
    struct bench *b = (struct bench *)(void *)((char *)c - offsetof(struct bench, clk));
    unsigned k = b->reads++;
    if (k == 0)
        return c->virtual_now;
    if (k == 1 && b->handling && b->later > c->virtual_now)
        return b->later;
    return b->mono.now(&b->mono);
}

static void stamp_sleep(struct tb_clock *c, double t)
{
    (void)c;
    (void)t; /* never called: transfers do not sleep */
}

void tb_bench_loop_stamp(struct bench *b)
{
    b->reads = 0;
    b->clk.virtual_now = b->mono.now(&b->mono);
}

/* The table entry for descriptor s, grown as needed; NULL: no memory. */
static struct fdq *fd_entry(struct bench *b, curl_socket_t s)
{
    size_t old = b->nfds;
    if (s < 0)
        return NULL;
    while ((size_t)s >= b->nfds) {
        struct fdq *n = tb_grow(b->fds, &b->nfds, sizeof(*n), 256);
        if (n == NULL)
            return NULL;
        b->fds = n;
    }
    for (size_t i = old; i < b->nfds; i++) {
        memset(&b->fds[i], 0, sizeof(b->fds[i]));
        b->fds[i].next = -1;
    }
    return &b->fds[s];
}

/* Socket s was seen ready (events ev) at level time t: into the FIFO,
 * keeping the first stamp until it is handled. */
static void note_ready(struct bench *b, int s, uint32_t ev, double t)
{
    struct fdq *q = (size_t)s < b->nfds ? &b->fds[s] : NULL;
    if (q == NULL)
        return; /* not a socket libcurl gave us */
    if (q->ev == 0 || q->test) {
        q->seen = t; /* a real sighting replaces a scan's hand-over */
        q->test = 0;
        q->stale = q->hpoll + 1 == b->polls;
    }
    q->last = t;
    q->ev |= ev;
    if (q->queued)
        return;
    q->queued = 1;
    q->next = -1;
    if (b->rq_tail >= 0)
        b->fds[b->rq_tail].next = s;
    else
        b->rq_head = s;
    b->rq_tail = s;
}

static void note_all(struct bench *b, int n, double t)
{
    for (int i = 0; i < n; i++)
        note_ready(b, b->evs[i].data.fd, b->evs[i].events, t);
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *ud, void *sockp)
{
    struct bench *b = ud;
    struct epoll_event ev;
    struct fdq *q;
    char *p = NULL;
    if (curl_easy_getinfo(e, CURLINFO_PRIVATE, &p) == CURLE_OK && p != NULL)
        ((struct xf *)(void *)p)->fd = what == CURL_POLL_REMOVE ? -1 : (int)s;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(b->ep, EPOLL_CTL_DEL, s, NULL);
        curl_multi_assign(b->m, s, NULL);
        if ((size_t)s < b->nfds)
            b->fds[s].ev = 0; /* still in the FIFO: skipped there */
        return 0;
    }
    q = fd_entry(b, s);
    if (q == NULL) {
        /* libcurl fails the transfer; the record says why, not the
         * idle timeout or the transport error it would otherwise read as. */
        if (p != NULL)
            tb_reader_fail(&((struct xf *)(void *)p)->rd, TB_READER_NOMEM, "out of memory");
        return -1;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events =
        ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u) | EPOLLET;
    ev.data.fd = s;
    if (sockp != NULL || epoll_ctl(b->ep, EPOLL_CTL_ADD, s, &ev) != 0) {
        if (epoll_ctl(b->ep, EPOLL_CTL_MOD, s, &ev) != 0 && errno == ENOENT)
            epoll_ctl(b->ep, EPOLL_CTL_ADD, s, &ev);
    }
    curl_multi_assign(b->m, s, b);
    return 0;
}

static int on_timer(CURLM *m, long ms, void *ud)
{
    struct bench *b = ud;
    (void)m;
    b->timeout_at = ms < 0 ? -1 : b->mono.now(&b->mono) + (double)ms / 1000.0;
    return 0;
}

/* Asks epoll (timeout ms) and stamps what it reports. */
static int poll_ready(struct bench *b, int ms)
{
    int n = epoll_wait(b->ep, b->evs, EVENTS_PER_WAIT, ms);
    b->polled = b->mono.now(&b->mono);
    b->polls++;
    if (n > 0)
        note_all(b, n, b->polled);
    return n < 0 && errno != EINTR ? -1 : 0;
}

/* Between sockets, and in the loop's other long passes (ending or
 * starting many transfers), epoll is asked again every REPOLL_S, so no
 * socket waits unseen (unstamped) for longer.  Returns 1 when it asked,
 * 0 when not yet due, -1 on an epoll error. */
int tb_bench_loop_watch(struct bench *b)
{
    if (b->mono.now(&b->mono) - b->polled < REPOLL_S)
        return 0;
    return poll_ready(b, 0) != 0 ? -1 : 1;
}

void tb_bench_loop_timer(struct bench *b)
{
    int running;
    if (b->timeout_at >= 0 && b->mono.now(&b->mono) >= b->timeout_at) {
        b->timeout_at = -1;
        tb_bench_loop_stamp(b);
        curl_multi_socket_action(b->m, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

/* Hands the FIFO's sockets to libcurl, each with its first-seen stamp,
 * asking epoll again every REPOLL_S meanwhile. */
static int run_ready(struct bench *b)
{
    int running, rc;
    while (b->rq_head >= 0) {
        int s = b->rq_head;
        struct fdq *q = &b->fds[s];
        uint32_t ev = q->ev;
        int fl, test = q->test, stale = q->stale;
        b->rq_head = q->next;
        if (b->rq_head < 0)
            b->rq_tail = -1;
        q->next = -1;
        q->queued = 0;
        q->test = 0;
        q->stale = 0;
        q->ev = 0;
        q->hpoll = b->polls;
        if (ev == 0)
            continue; /* removed since */
        fl = ((ev & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((ev & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
             ((ev & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
        if (test)
            fl = 0;
        /* A socket handled after one poll and seen again in the next may
         * have been reported for bytes that handling already read (epoll
         * queued the report before the read): its next bytes came in after
         * that handling, not when it was seen.  They are stamped with the
         * last report since (one came for them, unless they came in the
         * last REPOLL_S), or when read. */
        b->reads = 0;
        if (test || (stale && !(q->last > q->seen)))
            b->clk.virtual_now = b->mono.now(&b->mono);
        else
            b->clk.virtual_now = stale ? q->last : q->seen;
        b->later = q->last;
        b->handling = 1;
        curl_multi_socket_action(b->m, s, fl, &running);
        b->handling = 0;
        rc = tb_bench_loop_watch(b);
        if (rc < 0)
            return -1;
        if (rc > 0)
            tb_bench_loop_timer(b);
    }
    return 0;
}

/* Hands libcurl the sockets of transfers silent for SILENT_S (events
 * unknown: it tests them itself), in case a read was left undone. */
void tb_bench_loop_nudge(struct bench *b)
{
    double now = b->mono.now(&b->mono);
    for (const struct xf *x = b->inflight; x != NULL; x = x->next)
        if (x->fd >= 0 && (size_t)x->fd < b->nfds && !b->fds[x->fd].queued &&
            now - x->hx.last > SILENT_S) {
            note_ready(b, x->fd, EPOLLIN, now);
            b->fds[x->fd].test = 1;
        }
}

int tb_bench_loop_wait(struct bench *b, int ms)
{
    return poll_ready(b, ms) != 0 || run_ready(b) != 0 ? -1 : 0;
}

int tb_bench_loop_open(struct bench *b, char *err, size_t errlen)
{
    b->rq_head = b->rq_tail = -1;
    b->timeout_at = -1;
    b->clk.now = stamp_now;
    b->clk.sleep_until = stamp_sleep;
    tb_clock_monotonic_init(&b->mono);
    b->ep = epoll_create1(EPOLL_CLOEXEC);
    if (b->ep < 0)
        return tb_seterr(err, errlen, TB_EIO, "epoll: %s", strerror(errno));
    b->m = curl_multi_init();
    if (b->m == NULL)
        return TB_ENOMEM;
    curl_multi_setopt(b->m, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(b->m, CURLMOPT_SOCKETDATA, b);
    curl_multi_setopt(b->m, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(b->m, CURLMOPT_TIMERDATA, b);
    return 0;
}

void tb_bench_loop_close(struct bench *b)
{
    curl_multi_cleanup(b->m);
    free(b->fds);
    if (b->ep >= 0)
        close(b->ep);
}
