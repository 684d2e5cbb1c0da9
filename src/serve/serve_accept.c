/*
 * serve_accept.c - the mock server's connections: one acceptor, loops[0],
 * hands each one it accepts to a loop (see serve_accept.h).
 *
 * Why one acceptor and not a listener per loop (SO_REUSEPORT): the cap
 * on connections (max_conns), the refusals over it and the pause when
 * descriptors run out are then decided in one place, on exact counts;
 * each connection goes to the loop with the fewest open (round robin
 * among equals), where the kernel's hash of the 4-tuple would only be
 * even on average; and the port stays the server's own (any process of
 * the same user could join a SO_REUSEPORT group and take a share of its
 * connections, and a second server on the same port would not be an
 * error).  The cost: accepting is one thread's work, about 3 us a
 * connection here, and a connection handed on waits for its loop to wake
 * (an eventfd) before its request is read, which no schedule sees: a
 * response is timed from its request's last byte, read on its own loop.
 *
 * The counts: the acceptor adds a connection to the server's open count
 * and to its loop's when it accepts it, and the loop that owns it takes
 * it off when it closes (tb_serve_conn_gone), so a connection on its
 * way to a loop is counted where it goes.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_accept.h"
#include "serve_priv.h"
#include "serve_read.h"
#include "serve_reply.h"
#include "ttsbuf/clock.h"

static void listen_watch(struct tb_serve_loop *s, int on)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = on ? EPOLLIN : 0;
    ev.data.ptr = &s->srv->lfd;
    epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->srv->lfd, &ev);
    s->accept_paused = !on;
}

/* The loop with the fewest open connections, the round robin's next
 * among equals. */
static struct tb_serve_loop *least_loaded(struct tb_serve_loop *s)
{
    struct tb_serve *srv = s->srv;
    struct tb_serve_loop *best = s; /* there is one loop at least: s */
    size_t most = SIZE_MAX, n = srv->nloops > 0 ? srv->nloops : 1;
    for (size_t k = 0; k < srv->nloops; k++) {
        struct tb_serve_loop *lp = &srv->loops[(s->next_loop + k) % n];
        size_t open = atomic_load_explicit(&lp->nopen, memory_order_relaxed);
        if (open < most) {
            most = open;
            best = lp;
        }
    }
    s->next_loop = (best->index + 1) % n;
    return best;
}

/* Puts fd in lp's inbox and wakes lp (once for a batch: a loop that has
 * not yet emptied its inbox will see the newcomers too). */
static void hand_off(struct tb_serve_loop *lp, int fd)
{
    uint64_t one = 1;
    int wake = 0, ok = 1;
    pthread_mutex_lock(&lp->inbox_mu);
    if (lp->ninbox == lp->inbox_cap) {
        size_t cap = lp->inbox_cap < 64 ? 64 : lp->inbox_cap * 2;
        int *nb = realloc(lp->inbox, cap * sizeof(*nb));
        if (nb != NULL) {
            lp->inbox = nb;
            lp->inbox_cap = cap;
        }
        ok = nb != NULL;
    }
    if (ok) {
        wake = lp->ninbox == 0;
        lp->inbox[lp->ninbox++] = fd;
    }
    pthread_mutex_unlock(&lp->inbox_mu);
    if (!ok) {
        /* Out of memory: as conn_open does then, closed and counted. */
        close(fd);
        tb_serve_conn_gone(lp);
        return;
    }
    if (wake && write(lp->inbox_fd, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is full, so the loop will look anyway. */
    }
}

void tb_serve_accept(struct tb_serve_loop *s)
{
    struct tb_serve *srv = s->srv;
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        struct tb_serve_loop *lp;
        int fd, over;
        /* Refusals live on this loop, every other connection counts. */
        over = atomic_load(&srv->nconns) - s->nrefusals >= srv->max_conns;
        if (over && s->nrefusals >= REFUSALS_MAX(srv->max_conns)) {
            listen_watch(s, 0);
            s->refusals_full = 1;
            s->accept_retry = tb_clock_mono_ns() + ACCEPT_RETRY_NS;
            return;
        }
        fd = accept4(srv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
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
        lp = over ? s : least_loaded(s);
        atomic_fetch_add(&srv->nconns, 1);
        atomic_fetch_add(&lp->nopen, 1);
        if (lp != s) {
            hand_off(lp, fd);
        } else {
            struct tb_serve_conn *c = tb_serve_conn_open(s, fd);
            if (c != NULL && over) {
                c->refusal = 1;
                s->nrefusals++;
                tb_serve_over_conns(s, c);
            }
        }
    }
}

void tb_serve_accept_resume(struct tb_serve_loop *s, int64_t now)
{
    if (s->accept_paused && s->accept_retry <= now)
        listen_watch(s, 1);
}

/* Takes the inbox's descriptors; the caller frees *fds. */
static size_t inbox_take(struct tb_serve_loop *s, int **fds)
{
    size_t n;
    uint64_t v;
    if (read(s->inbox_fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing signalled; the inbox may still hold some. */
    }
    pthread_mutex_lock(&s->inbox_mu);
    *fds = s->inbox;
    n = s->ninbox;
    s->inbox = NULL;
    s->ninbox = s->inbox_cap = 0;
    pthread_mutex_unlock(&s->inbox_mu);
    return n;
}

void tb_serve_accept_take(struct tb_serve_loop *s)
{
    int *fds;
    size_t n = inbox_take(s, &fds);
    for (size_t i = 0; i < n; i++)
        tb_serve_conn_open(s, fds[i]);
    free(fds);
}

void tb_serve_accept_drop(struct tb_serve_loop *s)
{
    int *fds;
    size_t n = inbox_take(s, &fds);
    for (size_t i = 0; i < n; i++) {
        close(fds[i]); /* never read: not a request */
        tb_serve_conn_gone(s);
    }
    free(fds);
}
