/*
 * bench_threads.c - tb_bench_run (see bench.h): a level on one event loop
 * (bench_run.c) or on several, one per thread, each a sub-shard of this
 * shard (bench.h: loop threads).
 *
 * The threads share nothing while they run but the options (read only),
 * a stop flag and their progress slots: each has its own copy of the
 * options (its sub-shard, its share of the warm-up and of the memory
 * cap, the stop flag as its cancel flag, its slot as its progress
 * callback) and its own records.  The calling thread waits, looking
 * every TICK_S: it forwards the caller's cancel flag to the stop flag,
 * raises it when a thread has failed, and reports progress with the
 * threads' counts summed.  A loop thread publishes its progress with a
 * try-lock, so it never waits for the calling thread.  At the end the
 * records are moved into the caller's, in order of id.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "bench_priv.h"
#include "bench_run.h"
#include "bench_xfer.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/bench_rec.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"

/* How often the calling thread looks at the threads. */
#define TICK_S 0.01

/* What one loop thread runs, and what it says. */
struct lane {
    struct tb_bench_opts o; /* its sub-shard's options */
    uint32_t level;
    double origin;
    struct tb_bench_recs recs;
    int rc;
    char err[512];
    atomic_int done;
    pthread_mutex_t mu; /* guards p and have */
    struct tb_bench_progress p;
    int have;
    pthread_t th;
    int started;
};

/* A share of n over k parts: part j's, the parts summing to n. */
static uint64_t part(uint64_t n, unsigned j, unsigned k)
{
    return n * (j + 1) / k - n * j / k;
}

/* This shard's streams or calls at once, and its measured count (0: none
 * known), before any split into threads. */
static void level_size(const struct tb_bench_opts *o, size_t *at_once, size_t *count)
{
    size_t target, cap;
    double rate;
    tb_bench_shard_share(o, &target, &cap, &rate);
    *count = target == SIZE_MAX ? 0 : target;
    if (o->level.mode == TB_BENCH_CALLS_POISSON)
        *at_once = *count; /* no cap: as many as may overlap */
    else if (o->level.mode == TB_BENCH_CLOSED || o->level.mode == TB_BENCH_CALLS ||
             o->level.concurrency > 0)
        *at_once = cap;
    else
        *at_once = 0; /* an open loop without a cap: not known */
}

unsigned tb_bench_threads(const struct tb_bench_opts *o)
{
    size_t at_once, count, t;
    level_size(o, &at_once, &count);
    if (o->threads > 0) {
        t = o->threads < TB_BENCH_THREADS_MAX ? o->threads : TB_BENCH_THREADS_MAX;
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (at_once < TB_BENCH_THREADS_AT || cpus < 2)
            return 1;
        t = (size_t)cpus < TB_BENCH_THREADS_AUTO_MAX ? (size_t)cpus : TB_BENCH_THREADS_AUTO_MAX;
    }
    /* every thread has a stream or a call of its own */
    if (at_once > 0 && t > at_once)
        t = at_once;
    if (count > 0 && t > count)
        t = count;
    return t > 0 ? (unsigned)t : 1;
}

static void publish(void *ud, const struct tb_bench_progress *p)
{
    struct lane *ln = ud;
    if (pthread_mutex_trylock(&ln->mu) != 0)
        return; /* the calling thread is reading: the next one will do */
    ln->p = *p;
    ln->have = 1;
    pthread_mutex_unlock(&ln->mu);
}

static void *lane_main(void *arg)
{
    struct lane *ln = arg;
    ln->rc = tb_bench_level(&ln->o, ln->level, &ln->recs, ln->origin, ln->err, sizeof(ln->err));
    atomic_store(&ln->done, 1);
    return NULL;
}

/* The threads' progress summed, to the caller's callback. */
static void report(const struct tb_bench_opts *o, struct lane *v, unsigned n)
{
    struct tb_bench_progress s;
    int any = 0;
    memset(&s, 0, sizeof(s));
    for (unsigned j = 0; j < n; j++) {
        pthread_mutex_lock(&v[j].mu);
        if (v[j].have) {
            const struct tb_bench_progress *p = &v[j].p;
            s.t = p->t > s.t ? p->t : s.t;
            s.started += p->started;
            s.done += p->done;
            s.target += p->target;
            s.inflight += p->inflight;
            s.errors += p->errors;
            s.events += p->events;
            s.warmup |= p->warmup;
            s.calls |= p->calls;
            s.waiting_model += p->waiting_model;
            s.speaking += p->speaking;
            s.listening += p->listening;
            s.turns_done += p->turns_done;
            s.turns_target += p->turns_target;
            any = 1;
        }
        pthread_mutex_unlock(&v[j].mu);
    }
    if (any)
        o->progress(o->progress_ud, &s);
}

static int cmp_id(const void *x, const void *y)
{
    const struct tb_bench_rec *a = x, *b = y;
    return (a->id > b->id) - (a->id < b->id);
}

/* Moves every lane's records into out (their streams with them), in
 * order of id, and their folds (bench.h, fold).  0 or TB_ENOMEM (out
 * keeps what it had, and perhaps some lanes' records). */
static int gather(struct lane *v, unsigned n, struct tb_bench_recs *out)
{
    size_t first = out->n, total = 0;
    for (unsigned j = 0; j < n; j++)
        total += v[j].recs.n;
    while (out->cap < out->n + total) {
        struct tb_bench_rec *nv = tb_grow(out->v, &out->cap, sizeof(*nv), 64);
        if (nv == NULL)
            return TB_ENOMEM;
        out->v = nv;
    }
    for (unsigned j = 0; j < n; j++) {
        if (v[j].recs.n > 0)
            memcpy(out->v + out->n, v[j].recs.v, v[j].recs.n * sizeof(*out->v));
        out->n += v[j].recs.n;
        v[j].recs.n = 0; /* moved: only the array is freed */
        if (tb_bench_folds_move(out, &v[j].recs) != 0)
            return TB_ENOMEM;
    }
    if (out->n - first > 1)
        qsort(out->v + first, out->n - first, sizeof(*out->v), cmp_id);
    return 0;
}

static void nap(double s)
{
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

/* Waits for the lanes: forwards a cancel, stops them all when one
 * failed, reports progress.  Returns when every lane is done. */
static void watch(const struct tb_bench_opts *o, struct lane *v, unsigned n, atomic_int *stop)
{
    double interval = o->progress_interval > 0 ? o->progress_interval : 0.1, since = 0;
    for (;;) {
        unsigned done = 0;
        for (unsigned j = 0; j < n; j++)
            if (atomic_load(&v[j].done)) {
                done++;
                if (v[j].rc != 0)
                    atomic_store(stop, 1);
            }
        if (done == n)
            return;
        if (o->http.cancel != NULL && atomic_load(o->http.cancel))
            atomic_store(stop, 1);
        nap(TICK_S);
        since += TICK_S;
        if (o->progress != NULL && since >= interval) {
            since = 0;
            report(o, v, n);
        }
    }
}

/* The failing thread's error, if any: the threads it stopped returned 0,
 * as a cancelled level does (tb_bench_run). */
static int verdict(const struct lane *v, unsigned n, char *err, size_t errlen)
{
    for (unsigned j = 0; j < n; j++)
        if (v[j].rc != 0)
            return tb_seterr(err, errlen, v[j].rc, "%s", v[j].err);
    return 0;
}

static int run_lanes(const struct tb_bench_opts *o, unsigned n, uint32_t level,
                     struct tb_bench_recs *out, char *err, size_t errlen)
{
    struct lane *v = calloc(n, sizeof(*v));
    atomic_int stop;
    struct tb_clock origin;
    uint64_t held = o->held_max > 0 ? o->held_max : TB_BENCH_HELD_MAX;
    int rc = 0;
    if (v == NULL)
        return TB_ENOMEM;
    atomic_init(&stop, 0);
    for (size_t i = 0; i < out->n; i++) { /* the levels before: the cap is for all */
        uint64_t h = out->v[i].stream != NULL ? tb_bench_held(out->v[i].stream) : 0;
        held = h < held ? held - h : 0;
    }
    tb_clock_monotonic_init(&origin);
    for (unsigned j = 0; j < n; j++) {
        struct lane *ln = &v[j];
        ln->o = *o;
        ln->o.shard = o->shard + j * o->nshards;
        ln->o.nshards = o->nshards * n;
        ln->o.threads = 1;
        if (o->record != NULL) { /* the caller writes the records at the end */
            ln->o.record = NULL;
            ln->o.drop_streams = 0;
            ln->o.fold = 0;
        }
        ln->o.warmup = (size_t)part(o->warmup, j, n);
        ln->o.held_max = part(held, j, n) > 0 ? part(held, j, n) : 1;
        ln->o.http.cancel = &stop;
        ln->o.progress = o->progress != NULL ? publish : NULL;
        ln->o.progress_ud = ln;
        ln->level = level;
        ln->origin = origin.origin;
        tb_bench_recs_init(&ln->recs);
        atomic_init(&ln->done, 0);
        pthread_mutex_init(&ln->mu, NULL);
    }
    for (unsigned j = 0; j < n && rc == 0; j++) {
        if (pthread_create(&v[j].th, NULL, lane_main, &v[j]) != 0)
            rc = tb_seterr(err, errlen, TB_EIO, "could not start loop thread %u of %u", j + 1, n);
        else
            v[j].started = 1;
    }
    if (rc != 0) {
        atomic_store(&stop, 1);
        for (unsigned j = 0; j < n; j++)
            if (!v[j].started)
                atomic_store(&v[j].done, 1);
    }
    watch(o, v, n, &stop);
    for (unsigned j = 0; j < n; j++)
        if (v[j].started)
            pthread_join(v[j].th, NULL);
    if (o->progress != NULL)
        report(o, v, n);
    if (rc == 0)
        rc = verdict(v, n, err, errlen);
    if (gather(v, n, out) != 0 && rc == 0)
        rc = tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    for (unsigned j = 0; j < n; j++) {
        tb_bench_recs_free(&v[j].recs);
        pthread_mutex_destroy(&v[j].mu);
    }
    free(v);
    return rc;
}

int tb_bench_run(const struct tb_bench_opts *o, uint32_t level, struct tb_bench_recs *out,
                 char *err, size_t errlen)
{
    unsigned n;
    int rc = tb_bench_opts_check(o, err, errlen);
    if (rc != 0)
        return rc;
    n = tb_bench_threads(o);
    if (n <= 1)
        return tb_bench_level(o, level, out, 0, err, errlen);
    return run_lanes(o, n, level, out, err, errlen);
}
