/*
 * bench.c - one load level of `ttsbuf bench` (see bench.h): the arrival
 * schedule and the event loop.  Each stream's own handling (its body,
 * its bytes through the stream reader, its record) is bench_xfer.c.
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
#include "ttsbuf/bench.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bench_priv.h"
#include "base/grow.h"
#include "net/http_xfer.h"
#include "ttsbuf/api.h"
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

void tb_bench_stamp(struct bench *b)
{
    b->reads = 0;
    b->clk.virtual_now = b->mono.now(&b->mono);
}

void tb_bench_level_name(const struct tb_bench_level *l, char *out, size_t outlen)
{
    if (l->mode == TB_BENCH_CLOSED)
        snprintf(out, outlen, "c=%u", l->concurrency);
    else if (l->concurrency > 0)
        snprintf(out, outlen, "rate=%g/s (%s, max %u)", l->rate,
                 l->mode == TB_BENCH_POISSON ? "poisson" : "constant", l->concurrency);
    else
        snprintf(out, outlen, "rate=%g/s (%s)", l->rate,
                 l->mode == TB_BENCH_POISSON ? "poisson" : "constant");
}

/* An exponential variate with mean 1 (xorshift64*, 53-bit uniform). */
static double expo(struct bench *b)
{
    uint64_t x = b->rng;
    double u;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    b->rng = x;
    u = (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
    return -log1p(-u);
}

/* ---- libcurl's callbacks ---- */

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
    if (q == NULL)
        return -1; /* libcurl fails the transfer */
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
int tb_bench_keep_watch(struct bench *b)
{
    if (b->mono.now(&b->mono) - b->polled < REPOLL_S)
        return 0;
    return poll_ready(b, 0) != 0 ? -1 : 1;
}

/* ---- ready sockets ---- */

static void timer_due(struct bench *b)
{
    int running;
    if (b->timeout_at >= 0 && b->mono.now(&b->mono) >= b->timeout_at) {
        b->timeout_at = -1;
        tb_bench_stamp(b);
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
        rc = tb_bench_keep_watch(b);
        if (rc < 0)
            return -1;
        if (rc > 0)
            timer_due(b);
    }
    return 0;
}

/* Hands libcurl the sockets of transfers silent for SILENT_S (events
 * unknown: it tests them itself), in case a read was left undone. */
static void nudge_silent(struct bench *b)
{
    double now = b->mono.now(&b->mono);
    for (const struct xf *x = b->inflight; x != NULL; x = x->next)
        if (x->fd >= 0 && (size_t)x->fd < b->nfds && !b->fds[x->fd].queued &&
            now - x->hx.last > SILENT_S) {
            note_ready(b, x->fd, EPOLLIN, now);
            b->fds[x->fd].test = 1;
        }
}

/* ---- the schedule ---- */

static int want_more(const struct bench *b, double now)
{
    if (b->warm_left > 0)
        return 1;
    if (b->target != SIZE_MAX && b->started >= b->target)
        return 0;
    if (b->o->duration > 0 && b->measuring && now >= b->o->duration)
        return 0;
    return 1;
}

static int queue_push(struct bench *b, double t)
{
    if (b->qhead + b->qn == b->qcap) {
        if (b->qhead > 0) {
            memmove(b->queue, b->queue + b->qhead, b->qn * sizeof(double));
            b->qhead = 0;
        } else {
            double *nq = tb_grow(b->queue, &b->qcap, sizeof(double), 64);
            if (nq == NULL)
                return TB_ENOMEM;
            b->queue = nq;
        }
    }
    b->queue[b->qhead + b->qn++] = t;
    return 0;
}

/* Starts what the schedule says is due now.  Returns 0 or an error. */
static int schedule(struct bench *b, char *err, size_t errlen)
{
    const struct tb_bench_opts *o = b->o;
    double now;
    int rc = 0;
    tb_bench_stamp(b);
    now = b->clk.virtual_now;
    /* Warm-up runs as a closed loop at the level's cap, whatever the mode;
     * arrivals start only once it is over. */
    if (!b->measuring || o->level.mode == TB_BENCH_CLOSED) {
        while (rc == 0 && b->ninflight < b->cap && want_more(b, now)) {
            if (b->warm_left == 0 && !b->measuring)
                break;
            rc = tb_bench_xf_start(b, now, err, errlen);
            (void)tb_bench_keep_watch(b);
        }
        return rc;
    }
    /* Open loop: arrivals join the queue; the queue starts under the cap. */
    while (rc == 0 && b->next_arrival <= now && want_more(b, b->next_arrival) &&
           b->started + b->qn < b->target) {
        rc = queue_push(b, b->next_arrival);
        b->next_arrival += (o->level.mode == TB_BENCH_POISSON ? expo(b) : 1.0) / b->rate;
    }
    while (rc == 0 && b->qn > 0 && b->ninflight < b->cap) {
        double t = b->queue[b->qhead];
        b->qhead++;
        b->qn--;
        rc = tb_bench_xf_start(b, t, err, errlen);
        (void)tb_bench_keep_watch(b);
    }
    return rc;
}

/* Warm-up over: level time starts now, the measured requests begin. */
static void begin_measuring(struct bench *b)
{
    /* libcurl's timer was set in warm-up time: move it to level time. */
    double was = b->mono.now(&b->mono);
    tb_clock_reset_origin(&b->mono);
    if (b->timeout_at >= 0)
        b->timeout_at -= was;
    b->polled -= was;
    b->measuring = 1;
    b->next_arrival = 0;
    tb_bench_stamp(b);
}

static int finished(const struct bench *b)
{
    if (b->warm_left > 0 || b->ninflight > 0 || b->qn > 0)
        return 0;
    return b->stopped || !want_more(b, b->clk.virtual_now) ||
           (b->o->level.mode != TB_BENCH_CLOSED && b->started >= b->target);
}

static int wait_ms(struct bench *b, double next_progress, double next_scan)
{
    double now, at = next_scan;
    if (b->rq_head >= 0)
        return 0; /* sockets are waiting (a scan handed some over) */
    now = b->mono.now(&b->mono);
    if (b->o->progress != NULL && next_progress < at)
        at = next_progress; /* no progress line: no wake-ups for it */
    if (b->timeout_at >= 0 && b->timeout_at < at)
        at = b->timeout_at;
    if (b->measuring && b->o->level.mode != TB_BENCH_CLOSED && b->warm_left == 0 &&
        b->next_arrival < at && want_more(b, b->next_arrival) && b->started + b->qn < b->target)
        at = b->next_arrival;
    if (at <= now)
        return 0;
    return (int)ceil((at - now) * 1000.0);
}

uint64_t tb_bench_held(const struct tb_stream *s)
{
    return (uint64_t)s->n * sizeof(struct tb_event) + s->text_len;
}

static void report(struct bench *b)
{
    struct tb_bench_progress p;
    if (b->o->progress == NULL)
        return;
    p.t = b->clk.virtual_now;
    p.started = b->started;
    p.done = b->done;
    p.target = b->target == SIZE_MAX ? 0 : b->target;
    p.inflight = b->ninflight;
    p.errors = b->errors;
    p.events = b->events; /* ended streams; plus those in flight (O(n) at 10 Hz) */
    for (const struct xf *x = b->inflight; x != NULL; x = x->next)
        if (!x->warm)
            p.events += x->stream.n;
    p.warmup = !b->measuring;
    b->o->progress(b->o->progress_ud, &p);
}

static int check_opts(const struct tb_bench_opts *o, char *err, size_t errlen)
{
    const struct tb_bench_level *l = &o->level;
    if (o->http.url == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "no URL");
    if (o->prompts == NULL || o->prompts->n == 0)
        return tb_seterr(err, errlen, TB_EINVAL, "no prompts");
    if (o->nshards == 0 || o->shard >= o->nshards)
        return tb_seterr(err, errlen, TB_EINVAL, "shard %u of %u", o->shard, o->nshards);
    if (o->requests == 0 && !(o->duration > 0))
        return tb_seterr(err, errlen, TB_EINVAL, "neither a request count nor a duration");
    if (l->mode == TB_BENCH_CLOSED && (l->concurrency < 1 || l->concurrency > TB_BENCH_CONC_MAX))
        return tb_seterr(err, errlen, TB_EINVAL, "concurrency %u outside 1..%u", l->concurrency,
                         TB_BENCH_CONC_MAX);
    if (l->mode != TB_BENCH_CLOSED && (!(l->rate > 0) || l->concurrency > TB_BENCH_CONC_MAX))
        return tb_seterr(err, errlen, TB_EINVAL, "bad rate or cap");
    return 0;
}

/* This shard's share of c streams: c*(I+1)/N - c*I/N, at least 1. */
static size_t share(uint32_t c, uint32_t i, uint32_t n)
{
    uint64_t s = (uint64_t)c * (i + 1) / n - (uint64_t)c * i / n;
    return s > 0 ? (size_t)s : 1;
}

int tb_bench_run(const struct tb_bench_opts *o, uint32_t level, struct tb_bench_recs *out,
                 char *err, size_t errlen)
{
    struct bench b;
    double interval = o->progress_interval > 0 ? o->progress_interval : 0.1;
    double scan_every = o->http.idle_timeout / 8;
    double next_progress = 0, next_scan;
    size_t first = out->n;
    const struct tb_api_info *api;
    int rc;

    rc = check_opts(o, err, errlen);
    if (rc != 0)
        return rc;
    api = tb_api_info(o->req.api);
    if (api == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown dialect");
    if (!(scan_every >= 0.05))
        scan_every = 0.05;
    if (scan_every > SILENT_S || !(o->http.idle_timeout > 0))
        scan_every = SILENT_S;
    next_scan = scan_every;
    memset(&b, 0, sizeof(b));
    b.rq_head = b.rq_tail = -1;
    b.o = o;
    b.out = out;
    b.level = level;
    b.timeout_at = -1;
    b.clk.now = stamp_now;
    b.clk.sleep_until = stamp_sleep;
    b.warm_left = o->warmup;
    b.rng = o->seed * 0x9E3779B97F4A7C15ULL + o->shard + 1;
    if (b.rng == 0)
        b.rng = 1;
    if (o->requests > 0)
        b.target =
            o->requests > o->shard ? (o->requests - o->shard + o->nshards - 1) / o->nshards : 0;
    else
        b.target = SIZE_MAX;
    if (o->level.mode == TB_BENCH_CLOSED)
        b.cap = share(o->level.concurrency, o->shard, o->nshards);
    else
        b.cap = o->level.concurrency > 0 ? share(o->level.concurrency, o->shard, o->nshards)
                                         : TB_BENCH_CONC_MAX;
    b.rate = o->level.rate / o->nshards;
    b.held_max = o->held_max > 0 ? o->held_max : TB_BENCH_HELD_MAX;
    for (size_t i = 0; i < out->n; i++)
        b.held += tb_bench_held(&out->v[i].stream);
    tb_clock_monotonic_init(&b.mono);
    b.ep = epoll_create1(EPOLL_CLOEXEC);
    if (b.ep < 0)
        return tb_seterr(err, errlen, TB_EIO, "epoll: %s", strerror(errno));
    b.m = curl_multi_init();
    b.headers = calloc(o->http.nheaders + 1, sizeof(*b.headers));
    if (b.m == NULL || b.headers == NULL) {
        rc = TB_ENOMEM;
        goto out;
    }
    /* The dialect's credential, stream type and fixed header, as a live
     * run sends them. */
    tb_api_http_req(api, &o->http, b.headers, &b.http);
    if (tb_secrets_create(&b.secrets) != 0 || tb_http_secrets(&b.http, b.secrets) != 0) {
        rc = TB_ENOMEM;
        goto out;
    }
    b.http.secrets = b.secrets;
    /* The loop watches both itself (stop_some, once a quarter second and
     * on cancel): no progress callback on every read. */
    b.http.idle_timeout = 0;
    b.http.cancel = NULL;
    curl_multi_setopt(b.m, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(b.m, CURLMOPT_SOCKETDATA, &b);
    curl_multi_setopt(b.m, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(b.m, CURLMOPT_TIMERDATA, &b);
    if (b.warm_left == 0)
        begin_measuring(&b);

    while (rc == 0) {
        if (o->http.cancel != NULL && atomic_load_explicit(o->http.cancel, memory_order_relaxed) &&
            !b.stopped) {
            b.stopped = 1;
            b.qn = 0;
            tb_bench_stamp(&b);
            rc = tb_bench_xf_stop(&b, 1);
            break;
        }
        if (!b.measuring && b.warm_left == 0 && b.ninflight == 0) {
            begin_measuring(&b);
            next_progress = 0;
            next_scan = scan_every;
        }
        if (!b.stopped)
            rc = schedule(&b, err, errlen);
        if (rc != 0 || finished(&b))
            break;
        if (poll_ready(&b, wait_ms(&b, next_progress, next_scan)) != 0 || run_ready(&b) != 0) {
            rc = tb_seterr(err, errlen, TB_EIO, "epoll_wait: %s", strerror(errno));
            break;
        }
        timer_due(&b);
        tb_bench_stamp(&b);
        rc = tb_bench_xf_drain(&b);
        if (rc == 0 && b.clk.virtual_now >= next_scan) {
            next_scan = b.clk.virtual_now + scan_every;
            rc = tb_bench_xf_stop(&b, 0);
            nudge_silent(&b);
        }
        if (b.clk.virtual_now >= next_progress) {
            next_progress = b.clk.virtual_now + interval;
            report(&b);
        }
    }
    if (rc == 0)
        report(&b);
    /* Anything still in flight after an error is cut. */
    while (b.inflight != NULL) {
        struct xf *x = b.inflight;
        x->hr.cancelled = 1;
        if (tb_bench_xf_finish(&b, x, CURLE_ABORTED_BY_CALLBACK) != 0 && rc == 0)
            rc = TB_ENOMEM;
    }
    /* Play every stream out, now that the clock no longer matters. */
    for (size_t i = first; rc == 0 && i < out->n; i++)
        rc = tb_bench_analyze(&out->v[i], &o->sim, err, errlen);
out:
    tb_bench_xf_destroy(b.free_list);
    curl_multi_cleanup(b.m);
    free(b.headers);
    free(b.queue);
    free(b.fds);
    close(b.ep);
    tb_secrets_destroy(b.secrets);
    return rc;
}
