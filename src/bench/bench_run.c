/*
 * bench_run.c - one load level of `ttsbuf bench` on one event loop,
 * tb_bench_level (see bench_priv.h; bench_threads.c runs one per loop
 * thread): this shard's share of the load (bench.c) on the arrival
 * schedule, over the event loop (bench_loop.c), each stream's own handling
 * (its body, its bytes through the stream reader, its record) in
 * bench_xfer.c, and every stream played out at the end.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "bench_barge_rt.h"
#include "bench_call.h"
#include "bench_loop.h"
#include "bench_priv.h"
#include "bench_retry.h"
#include "bench_run.h"
#include "bench_state.h"
#include "bench_xfer.h"
#include "bench_tts.h"
#include "ttsbuf/api.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsws.h"

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
    tb_bench_loop_stamp(b);
    now = b->clk.virtual_now;
    if (b->calling)
        return tb_bench_call_schedule(b, now, err, errlen);
    /* Warm-up runs as a closed loop at the level's cap, whatever the mode;
     * arrivals start only once it is over. */
    if (!b->measuring || o->level.mode == TB_BENCH_CLOSED) {
        while (rc == 0 && b->ninflight < b->cap && want_more(b, now)) {
            if (b->warm_left == 0 && !b->measuring)
                break;
            rc = tb_bench_xf_start(b, now, err, errlen);
            (void)tb_bench_loop_watch(b);
        }
        return rc;
    }
    /* Open loop: arrivals join the queue; the queue starts under the cap. */
    while (rc == 0 && b->next_arrival <= now && want_more(b, b->next_arrival) &&
           b->started + b->qn < b->target) {
        rc = queue_push(b, b->next_arrival);
        b->next_arrival +=
            (o->level.mode == TB_BENCH_POISSON ? tb_bench_expo(&b->rng) : 1.0) / b->rate;
    }
    while (rc == 0 && b->qn > 0 && b->ninflight < b->cap) {
        double t = b->queue[b->qhead];
        b->qhead++;
        b->qn--;
        rc = tb_bench_xf_start(b, t, err, errlen);
        (void)tb_bench_loop_watch(b);
    }
    return rc;
}

/* Warm-up over: level time starts now (or, with none, at the run's
 * origin when one was given: loop threads share it), the measured
 * requests begin. */
static void begin_measuring(struct bench *b, double origin)
{
    /* libcurl's timer was set in warm-up time: move it to level time. */
    double was = b->mono.origin;
    if (origin > 0)
        b->mono.origin = origin;
    else
        tb_clock_reset_origin(&b->mono);
    was = b->mono.origin - was;
    if (b->timeout_at >= 0)
        b->timeout_at -= was;
    b->polled -= was;
    b->measuring = 1;
    b->next_arrival = 0;
    tb_bench_loop_stamp(b);
}

static int finished(const struct bench *b)
{
    if (b->calling)
        return b->ninflight == 0 && tb_bench_call_done(b);
    if (b->warm_left > 0 || b->ninflight > 0 || b->qn > 0 || b->njobs > 0)
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
    if (!b->calling && b->measuring && b->o->level.mode != TB_BENCH_CLOSED && b->warm_left == 0 &&
        b->next_arrival < at && want_more(b, b->next_arrival) && b->started + b->qn < b->target)
        at = b->next_arrival;
    if (b->barge_head != NULL && b->barge_next < at)
        at = b->barge_next; /* the next barge-in whose T is known */
    if (b->nllmq > 0 && at > now + 0.001)
        at = now + 0.001; /* an LLM slot may be granted by another loop (bench.h) */
    if (b->nwaiting > 0 && tb_bench_retry_next(b) < at)
        at = tb_bench_retry_next(b); /* a refused stream's next attempt */
    if (b->calling && tb_bench_call_next(b) < at)
        at = tb_bench_call_next(b); /* the heap's top: the next turn or call */
    if (b->ntts > 0 && at > now + 0.001)
        at = now + 0.001; /* the TTS clients are stepped at each wake-up (bench.h) */
    if (at <= now)
        return 0;
    return (int)ceil((at - now) * 1000.0);
}

static void report(struct bench *b)
{
    struct tb_bench_progress p;
    if (b->o->progress == NULL)
        return;
    p.t = b->clk.virtual_now;
    p.started = b->calling ? b->calls.started : b->started; /* calls: calls, not turns */
    p.done = b->calling ? b->calls.ended : b->done;
    p.target = b->target == SIZE_MAX ? 0 : b->target;
    p.inflight = b->ninflight;
    p.errors = b->errors;
    p.events = b->events; /* ended streams; plus those in flight (O(n) at 10 Hz) */
    for (const struct xf *x = b->inflight; x != NULL; x = x->next)
        if (!x->warm)
            p.events += x->stream.n;
    p.warmup = !b->measuring;
    p.calls = 0;
    p.waiting_model = p.speaking = p.listening = p.turns_done = p.turns_target = 0;
    if (b->calling)
        tb_bench_call_progress(b, b->clk.virtual_now, &p);
    b->o->progress(b->o->progress_ud, &p);
}

/* The level's state: its share of the load, the event loop, and the
 * request every stream sends with the dialect's credential, stream type
 * and fixed header, as a live run sends them.  Returns 0 or an error (err
 * says); level_close frees what was made either way. */
static int level_open(struct bench *b, const struct tb_bench_opts *o, uint32_t level,
                      struct tb_bench_recs *out, double origin, char *err, size_t errlen)
{
    int rc;
    memset(b, 0, sizeof(*b));
    b->o = o;
    b->out = out;
    b->level = level;
    b->warm_left = o->warmup;
    b->rng = o->seed * 0x9E3779B97F4A7C15ULL + o->shard + 1;
    if (b->rng == 0)
        b->rng = 1;
    tb_bench_shard_share(o, &b->target, &b->cap, &b->rate);
    if (o->level.mode == TB_BENCH_CALLS || o->level.mode == TB_BENCH_CALLS_POISSON) {
        (void)tb_bench_call_open(b); /* b->target: calls, the progress line's count */
    }
    b->held_max = o->held_max > 0 ? o->held_max : TB_BENCH_HELD_MAX;
    for (size_t i = 0; i < out->n; i++)
        if (out->v[i].stream != NULL)
            b->held += tb_bench_held(out->v[i].stream);
    rc = tb_bench_loop_open(b, err, errlen);
    if (rc != 0)
        return rc;
    b->headers = calloc(o->http.nheaders + 1, sizeof(*b->headers));
    if (b->headers == NULL)
        return TB_ENOMEM;
    tb_api_http_req(tb_api_info(o->req.api), &o->http, b->headers, &b->http);
    if (tb_secrets_create(&b->secrets) != 0 || tb_http_secrets(&b->http, b->secrets) != 0)
        return TB_ENOMEM;
    if (o->tts != NULL && o->tts->key != NULL && o->tts->key[0] != '\0' &&
        tb_secrets_add(b->secrets, o->tts->key, strlen(o->tts->key)) != 0)
        return TB_ENOMEM;
    b->http.secrets = b->secrets;
    /* The loop watches both itself (tb_bench_xf_stop, every scan and on
     * cancel): no progress callback on every read. */
    b->http.idle_timeout = 0;
    b->http.cancel = NULL;
    if (b->warm_left == 0)
        begin_measuring(b, origin);
    return 0;
}

static void level_close(struct bench *b)
{
    tb_bench_call_close(b);
    tb_bench_tts_free(b);
    tb_bench_xf_destroy(b->free_list);
    tb_ttsws_loop_destroy(b->wsl); /* after every client on it */
    tb_bench_loop_close(b);
    free(b->headers);
    free(b->queue);
    tb_secrets_destroy(b->secrets);
}

static int cancelled(const struct bench *b)
{
    const atomic_int *c = b->o->http.cancel;
    return c != NULL && atomic_load_explicit(c, memory_order_relaxed) && !b->stopped;
}

/* Barge-in (bench.h): the pending streams fed what came, and each one
 * whose T has come closed now.  0 or TB_ENOMEM. */
static int barge_step(struct bench *b)
{
    struct xf *x;
    int rc = 0;
    while (rc == 0 && (x = tb_bench_barge_due(b, b->mono.now(&b->mono))) != NULL) {
        rc = tb_bench_xf_barge(b, x);
        (void)tb_bench_loop_watch(b);
    }
    return rc;
}

/* The loop: start what is due, wait for sockets or the next deadline,
 * finish what ended, scan for idle transfers, report progress; until the
 * level has ended, or the cancel flag cuts every transfer.  Idle timeouts
 * are checked by a scan of the transfers in flight every idle timeout /
 * 8, between 0.05 s and SILENT_S.  Returns 0 or an error (err says). */
static int level_run(struct bench *b, char *err, size_t errlen)
{
    const struct tb_bench_opts *o = b->o;
    double interval = o->progress_interval > 0 ? o->progress_interval : 0.1;
    double scan_every = o->http.idle_timeout / 8;
    double next_progress = 0, next_scan;
    int rc = 0;
    if (!(scan_every >= 0.05))
        scan_every = 0.05;
    if (scan_every > SILENT_S || !(o->http.idle_timeout > 0))
        scan_every = SILENT_S;
    next_scan = scan_every;
    while (rc == 0) {
        if (cancelled(b)) {
            b->stopped = 1;
            b->qn = 0;
            tb_bench_loop_stamp(b);
            rc = tb_bench_xf_stop(b, 1);
            return rc != 0 ? rc : tb_bench_tts_cancel(b);
        }
        if (!b->measuring && b->warm_left == 0 && b->ninflight == 0) {
            begin_measuring(b, 0);
            next_progress = 0;
            next_scan = scan_every;
        }
        if (!b->stopped)
            rc = tb_bench_xf_retry(b, err, errlen);
        if (rc == 0 && !b->stopped)
            rc = schedule(b, err, errlen);
        if (rc != 0 || finished(b))
            break;
        if (tb_bench_loop_wait(b, wait_ms(b, next_progress, next_scan)) != 0)
            return tb_seterr(err, errlen, TB_EIO, "epoll_wait: %s", strerror(errno));
        tb_bench_loop_timer(b);
        tb_bench_loop_stamp(b);
        rc = tb_bench_xf_drain(b);
        if (rc == 0 && b->barge_head != NULL)
            rc = barge_step(b);
        if (rc == 0 && b->calls.rc != 0) {
            snprintf(err, errlen, "%s", b->calls.err);
            rc = b->calls.rc;
        }
        if (rc == 0 && b->ntts > 0)
            rc = tb_bench_tts_step(b);
        if (rc == 0 && b->tts_dead > 0)
            rc = tb_bench_xf_stop_dead(b);
        if (rc == 0 && b->clk.virtual_now >= next_scan) {
            next_scan = b->clk.virtual_now + scan_every;
            rc = tb_bench_xf_stop(b, 0);
            tb_bench_loop_nudge(b);
        }
        if (b->clk.virtual_now >= next_progress) {
            next_progress = b->clk.virtual_now + interval;
            report(b);
        }
    }
    return rc;
}

/* Anything still in flight (after an error) is cut. */
static int cut_inflight(struct bench *b, int rc)
{
    while (b->inflight != NULL) {
        struct xf *x = b->inflight;
        x->hr.cancelled = 1;
        if (tb_bench_xf_finish(b, x, CURLE_ABORTED_BY_CALLBACK) != 0 && rc == 0)
            rc = TB_ENOMEM;
    }
    if (b->njobs > 0 && tb_bench_tts_cancel(b) != 0 && rc == 0)
        rc = TB_ENOMEM;
    return rc;
}

/* Every stream recorded from `first` on played out, now that the clock no
 * longer matters. */
static int play_out(struct bench *b, size_t first, char *err, size_t errlen)
{
    int rc = 0;
    if (b->o->drop_streams && b->o->tts == NULL)
        return 0; /* each was played out as its request ended */
    for (size_t i = first; rc == 0 && i < b->out->n; i++)
        if (b->out->v[i].call < 0) /* a call's turn was played out as it ended */
            rc = tb_bench_analyze(&b->out->v[i], &b->o->sim, err, errlen);
    return rc;
}

int tb_bench_level(const struct tb_bench_opts *o, uint32_t level, struct tb_bench_recs *out,
                   double origin, char *err, size_t errlen)
{
    struct bench b;
    size_t first = out->n;
    int rc = tb_bench_opts_check(o, err, errlen);
    if (rc != 0)
        return rc;
    rc = level_open(&b, o, level, out, origin, err, errlen);
    if (rc == 0)
        rc = level_run(&b, err, errlen);
    if (rc == 0)
        report(&b);
    rc = cut_inflight(&b, rc);
    if (rc != 0 && b.play_err[0] != '\0')
        snprintf(err, errlen, "%s", b.play_err);
    if (rc == 0)
        rc = play_out(&b, first, err, errlen);
    level_close(&b);
    return rc;
}
