/*
 * serve_server.c - the functions of serve.h: the mock server made (its
 * options checked, its address bound, its loops), run on its loops, one
 * thread each, stopped, its statistics added up over the loops.
 *
 * The loops share the listener through one acceptor (serve_accept.c says
 * why), the memory budget, the counters that number requests, responses,
 * draws and TTS requests (atomics), the speech thread (one eSpeak NG
 * engine a process: each loop has a box it comes back to) and the
 * request log, whose hook is called under a mutex: one line at a time,
 * in the order of seq.  Nothing else crosses threads, and a connection
 * lives on one loop from its hand-off to its close.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_loop.h"
#include "serve_priv.h"
#include "ttsbuf/error.h"
#include "ttsbuf/serve.h"

/* Descriptors the server holds besides its connections: the listener,
 * the stop eventfd and the 3 eSpeak NG holds at once while it reads its
 * voice data (a directory, a subdirectory, a file: strace of the first
 * TTS request); each loop's epoll set, timerfd, inbox eventfd and speech
 * box eventfd. */
#define FDS_FIXED ((size_t)5)
#define FDS_LOOP ((size_t)4)

/* The options every loop reads; 0 or TB_EINVAL with err set. */
static int check_opts(const struct tb_serve_opts *o, char *err, size_t errlen)
{
    if (o->stream == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: no stream to serve");
    if (!(o->tts_lead >= 0 && o->tts_lead <= 10))
        return tb_seterr(err, errlen, TB_EINVAL, "serve: tts_lead %g is not in 0..10", o->tts_lead);
    if (!(o->tts_rtf >= 0 && o->tts_rtf <= 1e6))
        return tb_seterr(err, errlen, TB_EINVAL, "serve: tts_rtf %g is not in 0..1e6", o->tts_rtf);
    if (!(o->prefill_per_token >= 0 && o->prefill_per_token <= TB_SERVE_PREFILL_MAX))
        return tb_seterr(err, errlen, TB_EINVAL, "serve: prefill_per_token %g is not in 0..%g",
                         o->prefill_per_token, TB_SERVE_PREFILL_MAX);
    if (!(o->tool_call_rate >= 0 && o->tool_call_rate <= 1))
        return tb_seterr(err, errlen, TB_EINVAL, "serve: tool_call_rate %g is not in 0..1",
                         o->tool_call_rate);
    if (o->max_conns > TB_SERVE_CONNS_MAX)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: max_conns %zu is over %d", o->max_conns,
                         TB_SERVE_CONNS_MAX);
    if (o->max_inflight > TB_SERVE_INFLIGHT_MAX || o->tts_max_inflight > TB_SERVE_INFLIGHT_MAX ||
        o->retry_after > TB_SERVE_RETRY_AFTER_MAX)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "serve: max_inflight, tts_max_inflight over %d or retry_after over %d",
                         TB_SERVE_INFLIGHT_MAX, TB_SERVE_RETRY_AFTER_MAX);
    if (o->threads > TB_SERVE_THREADS_MAX)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: %u loop threads: at most %u", o->threads,
                         TB_SERVE_THREADS_MAX);
    if (o->port < 0 || o->port > 65535)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: port %d is not in 0..65535", o->port);
    return 0;
}

/* Binds and listens on host:port; sets srv->lfd and srv->port. */
static int bind_listener(struct tb_serve *srv, const char *host, int port, char *err, size_t errlen)
{
    union {
        struct sockaddr any;
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } sa;
    socklen_t salen;
    int one = 1;

    memset(&sa, 0, sizeof(sa));
    if (inet_pton(AF_INET, host, &sa.v4.sin_addr) == 1) {
        sa.v4.sin_family = AF_INET;
        sa.v4.sin_port = htons((uint16_t)port);
        salen = sizeof(sa.v4);
    } else if (inet_pton(AF_INET6, host, &sa.v6.sin6_addr) == 1) {
        sa.v6.sin6_family = AF_INET6;
        sa.v6.sin6_port = htons((uint16_t)port);
        salen = sizeof(sa.v6);
    } else {
        return tb_seterr(err, errlen, TB_EINVAL,
                         "serve: host \"%s\" is not a numeric IPv4 or IPv6 address", host);
    }
    srv->lfd = socket(sa.any.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (srv->lfd < 0)
        return tb_seterr(err, errlen, TB_EIO, "serve: socket: %s", strerror(errno));
    setsockopt(srv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(srv->lfd, &sa.any, salen) != 0)
        return tb_seterr(err, errlen, TB_EIO, "serve: bind %s port %d: %s", host, port,
                         strerror(errno));
    /* The kernel caps the backlog at net.core.somaxconn. */
    if (listen(srv->lfd, 4096) != 0 || getsockname(srv->lfd, &sa.any, &salen) != 0)
        return tb_seterr(err, errlen, TB_EIO, "serve: listen: %s", strerror(errno));
    srv->port = ntohs(sa.any.sa_family == AF_INET ? sa.v4.sin_port : sa.v6.sin6_port);
    return 0;
}

/* Copies what the loops read from o. */
static void take_opts(struct tb_serve *srv, const struct tb_serve_opts *o)
{
    srv->stream = o->stream;
    srv->stream_for = o->stream_for;
    srv->stream_for_ud = o->stream_for_ud;
    srv->seed = o->seed;
    srv->faults = o->faults;
    srv->max_conns = o->max_conns > 0 ? o->max_conns : TB_SERVE_CONNS_DEFAULT;
    srv->max_inflight = o->max_inflight;
    srv->tts_max_inflight = o->tts_max_inflight;
    srv->retry_after = o->retry_after > 0 ? o->retry_after : 1;
    srv->prefill = o->prefill_per_token;
    srv->tool_rate = o->tool_call_rate;
    srv->budget = o->mem_budget > 0 ? o->mem_budget : TB_SERVE_MEM_DEFAULT;
    srv->tts_latency_at = o->tts_latency_at;
    srv->tts_latency_ud = o->tts_latency_ud;
    srv->tts_rtf = o->tts_rtf;
    srv->tts_lead = o->tts_lead;
    srv->tts_faults = o->tts_faults;
    srv->tts_key = o->tts_key;
    srv->request_log = o->request_log;
    srv->request_log_ud = o->request_log_ud;
    srv->nloops = o->threads > 1 ? o->threads : 1;
}

int tb_serve_create(const struct tb_serve_opts *o, struct tb_serve **out, char *err, size_t errlen)
{
    struct tb_serve *srv;
    int rc = check_opts(o, err, errlen);

    *out = NULL;
    if (rc != 0)
        return rc;
    srv = calloc(1, sizeof(*srv));
    if (srv == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "serve: out of memory");
    srv->lfd = srv->stopfd = -1;
    pthread_mutex_init(&srv->log_mu, NULL);
    take_opts(srv, o);
    rc = bind_listener(srv, o->host != NULL ? o->host : "127.0.0.1", o->port, err, errlen);
    if (rc != 0)
        goto fail;
    srv->loops = calloc(srv->nloops, sizeof(*srv->loops));
    if (srv->loops == NULL || tb_serve_speech_create(srv->nloops, &srv->speech) != 0) {
        rc = tb_seterr(err, errlen, TB_ENOMEM, "serve: out of memory");
        goto fail;
    }
    srv->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    for (size_t k = 0; rc == 0 && k < srv->nloops; k++)
        rc = srv->stopfd < 0 ? TB_EIO : tb_serve_loop_init(srv, k);
    if (rc != 0) {
        rc = tb_seterr(err, errlen, rc, "serve: %s",
                       rc == TB_ENOMEM ? "out of memory" : strerror(errno));
        goto fail;
    }
    *out = srv;
    return 0;
fail:
    tb_serve_destroy(srv);
    return rc;
}

size_t tb_serve_fds_needed(size_t max_conns, unsigned threads, size_t *refusals)
{
    size_t n = max_conns > 0 ? max_conns : TB_SERVE_CONNS_DEFAULT;
    if (refusals != NULL)
        *refusals = REFUSALS_MAX(n);
    return n + FDS_FIXED + FDS_LOOP * (size_t)(threads > 1 ? threads : 1);
}

unsigned tb_serve_threads_auto(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        return 1;
    return cpus < (long)TB_SERVE_THREADS_AUTO_MAX ? (unsigned)cpus : TB_SERVE_THREADS_AUTO_MAX;
}

int tb_serve_port(const struct tb_serve *s)
{
    return s->port;
}

/* loops[1..]'s thread: a failing loop stops the others. */
static void *loop_main(void *arg)
{
    struct tb_serve_loop *lp = arg;
    lp->rc = tb_serve_loop_run(lp);
    if (lp->rc != 0)
        tb_serve_stop(lp->srv);
    return NULL;
}

int tb_serve_run(struct tb_serve *s)
{
    sigset_t all, old;
    uint64_t v;
    int rc = 0;

    /* The loops' threads block every signal: a handler (SIGINT's
     * tb_serve_stop) runs on the caller's thread, as with one loop. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (size_t k = 1; k < s->nloops && rc == 0; k++) {
        struct tb_serve_loop *lp = &s->loops[k];
        lp->started = pthread_create(&lp->th, NULL, loop_main, lp) == 0;
        rc = lp->started ? 0 : TB_EIO;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        rc = tb_serve_loop_run(&s->loops[0]);
    tb_serve_stop(s); /* loop 0 ended: the others too */
    for (size_t k = 1; k < s->nloops; k++) {
        struct tb_serve_loop *lp = &s->loops[k];
        if (!lp->started)
            continue;
        pthread_join(lp->th, NULL);
        lp->started = 0;
        if (rc == 0)
            rc = lp->rc;
    }
    for (size_t k = 0; k < s->nloops; k++)
        tb_serve_loop_close(&s->loops[k]); /* one that never ran; a late hand-off */
    if (read(s->stopfd, &v, sizeof(v)) < 0) {
        /* EAGAIN: cannot happen (stopped above); the next run stops at once then. */
    }
    return rc;
}

void tb_serve_stop(struct tb_serve *s)
{
    uint64_t one = 1;
    int saved = errno; /* a signal handler must leave errno alone */
    if (write(s->stopfd, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is full, so a stop is pending anyway. */
    }
    errno = saved;
}

/* The q-quantile of the loops' lateness histograms added up: the top of
 * the bucket holding it, never above the max. */
static double late_quantile(const struct tb_serve *s, uint64_t n, int64_t late_max, double q)
{
    double want = q * (double)n;
    uint64_t rank = (uint64_t)want, cum = 0;
    double max = (double)late_max / NS;
    if ((double)rank < want || rank < 1)
        rank++; /* the nearest-rank definition: ceil(q * n), at least 1 */
    for (size_t b = 0; b < LATE_BUCKETS; b++) {
        for (size_t k = 0; k < s->nloops; k++)
            cum += s->loops[k].late[b];
        if (cum >= rank) {
            double top = (double)((int64_t)(b + 1) * LATE_BUCKET_NS) / NS;
            return top < max ? top : max;
        }
    }
    return max;
}

/* Adds one loop's counts to *t. */
static void stats_add(struct tb_serve_stats *t, const struct tb_serve_stats *a)
{
    t->requests += a->requests;
    t->streams += a->streams;
    t->events += a->events;
    t->tokens += a->tokens;
    t->dropped += a->dropped;
    t->client_closed += a->client_closed;
    t->late_n += a->late_n;
    t->refused += a->refused;
    t->over_budget += a->over_budget;
    t->over_conns += a->over_conns;
    t->over_inflight += a->over_inflight;
    t->tts_over_inflight += a->tts_over_inflight;
    t->tts += a->tts;
    t->tts_bytes += a->tts_bytes;
}

void tb_serve_stats(const struct tb_serve *s, struct tb_serve_stats *out)
{
    int64_t late_max = 0;
    memset(out, 0, sizeof(*out));
    for (size_t k = 0; k < s->nloops; k++) {
        stats_add(out, &s->loops[k].st);
        out->loop_conns[k] = s->loops[k].taken;
        if (s->loops[k].late_max > late_max)
            late_max = s->loops[k].late_max;
    }
    out->loops = (unsigned)s->nloops;
    out->mem_peak = atomic_load(&s->mem_peak);
    if (out->late_n > 0) {
        out->late_p50 = late_quantile(s, out->late_n, late_max, 0.50);
        out->late_p99 = late_quantile(s, out->late_n, late_max, 0.99);
        out->late_max = (double)late_max / NS;
    }
}

void tb_serve_destroy(struct tb_serve *s)
{
    if (s == NULL)
        return;
    for (size_t k = 0; s->loops != NULL && k < s->nloops; k++)
        tb_serve_loop_free(&s->loops[k]); /* their connections first: they hold speech jobs */
    tb_serve_speech_destroy(s->speech);
    if (s->stopfd >= 0)
        close(s->stopfd);
    if (s->lfd >= 0)
        close(s->lfd);
    pthread_mutex_destroy(&s->log_mu);
    free(s->loops);
    free(s);
}
