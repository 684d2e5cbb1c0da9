/*
 * live.c - a live run: network thread -> SSE -> event JSON -> ring ->
 * drain on the wall clock (see live.h).
 *
 * The network thread owns the SSE parser, the JSON parser and the
 * recorded stream; the calling thread owns the drain.  They share only the
 * ring (lock-free), an eventfd the network thread writes after each read
 * that pushed tokens (so the drain sleeps instead of polling), and two
 * atomics: `done`, published with release after the last push, and the
 * cancel flag.  Everything else the network
 * thread wrote is read after pthread_join.
 */
#include "ttsbuf/live.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ttsbuf/api.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/drain.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ring.h"

struct net {
    const struct tb_live_opts *o;
    struct tb_live_result *r;
    struct tb_clock *clk;
    struct tb_ring *ring;
    struct tb_reader rd; /* records into r->stream */
    struct tb_http_req http;
    struct tb_secrets *secrets; /* the request's: built before the thread starts,
                                 * then read-only on both threads */
    const char **headers;       /* the dialect's fixed header, then the caller's */
    char *body;
    int include_usage; /* as sent */
    int pushed;        /* deltas pushed since the last wake-up */
    int unpushed;      /* the stream's last delta never got into the ring */
    int efd;           /* eventfd: the network thread wakes the drain */
    atomic_int done;
    /* A real TTS (live.h), on the calling thread: the client, the voice
     * that hands it each chunk (and then the caller's voice, if any), the
     * drain's options with that voice. */
    struct tb_ttsnet *tts;
    struct tb_voice tvoice;
    const struct tb_voice *inner;
    struct tb_sim_opts so;
    /* A dead TTS (live.h) stops the LLM transfer: the calling thread
     * writes stop_msg, then sets stop (release); the network thread reads
     * the message after it sees the flag (acquire). */
    atomic_int stop;
    char stop_msg[640];
};

void tb_live_result_free(struct tb_live_result *r)
{
    if (r != NULL)
        tb_stream_free(&r->stream);
}

/* Wakes the drain: once per network read that pushed something, not per
 * delta, so the cost is one write(2) per read. */
static void wake(struct net *n)
{
    uint64_t one = 1;
    ssize_t w = write(n->efd, &one, sizeof(one));
    (void)w; /* a full counter already means "wake up" */
}

/* While the network thread waits on a full ring, libcurl cannot see its
 * own deadlines (the wait is inside its write callback): the wait checks
 * them.  The total timeout and Ctrl-C end the run there.  The idle clock
 * does not run: the server is not silent, its bytes wait in the socket
 * because the drain is slow (backpressure by design), and the clock
 * restarts when the wait ends.  Returns 0 to go on waiting, -1 to stop
 * (the error recorded). */
static int wait_check(struct net *n, double now)
{
    if (atomic_load_explicit(&n->stop, memory_order_acquire)) {
        tb_reader_fail(&n->rd, TB_READER_TTS, "%s", n->stop_msg);
        return -1;
    }
    if (n->o->http.cancel != NULL &&
        atomic_load_explicit(n->o->http.cancel, memory_order_relaxed)) {
        tb_reader_fail(&n->rd, TB_READER_CANCELLED, "interrupted after %zu deltas", n->r->stream.n);
        return -1;
    }
    if (n->o->http.total_timeout > 0 && now >= n->o->http.total_timeout) {
        tb_reader_fail(&n->rd, TB_READER_TIMEOUT,
                       "stopped after %g s (--timeout), after %zu deltas", n->o->http.total_timeout,
                       n->r->stream.n);
        return -1;
    }
    return 0;
}

/* The reader's hook: pushes each recorded delta into the ring, waiting
 * while the ring is full (backpressure). */
static int push(void *ud, struct tb_reader *rd, double t, const char *text, size_t len,
                uint8_t kind)
{
    struct net *n = ud;
    int rc;
    while ((rc = tb_ring_push(n->ring, t, text, (uint32_t)len, 1, kind)) == TB_EFULL) {
        struct timespec ts = {0, 1000000};
        if (wait_check(n, t) != 0) {
            n->unpushed = 1; /* recorded: tb_live_run plays it after the join */
            return -1;
        }
        nanosleep(&ts, NULL);
        t = n->clk->now(n->clk); /* the drain sees it when it gets in */
        rd->last_data = t;       /* the idle clock restarts after the wait */
    }
    if (rc != 0) {
        tb_reader_fail(rd, TB_READER_SSE, "a delta of %zu bytes exceeds the ring (--ring-bytes)",
                       len);
        return -1;
    }
    n->pushed = 1;
    return 0;
}

static int on_body(void *ud, const char *buf, size_t len, double t)
{
    struct net *n = ud;
    int rc = tb_reader_feed(&n->rd, buf, len, t);
    if (n->pushed) {
        wake(n);
        n->pushed = 0;
    }
    return rc;
}

/* A 400 that names stream_options: the server rejects include_usage. */
static int rejects_usage(const struct tb_http_resp *hr)
{
    return hr->status == 400 && hr->body != NULL &&
           (strstr(hr->body, "stream_options") != NULL ||
            strstr(hr->body, "include_usage") != NULL);
}

/* Copies what the reader found into the result. */
static void take(struct net *n)
{
    struct tb_live_result *r = n->r;
    const struct tb_reader *rd = &n->rd;
    r->error = rd->error;
    snprintf(r->message, sizeof(r->message), "%s", rd->message);
    snprintf(r->warning, sizeof(r->warning), "%s", rd->warning);
    r->done_seen = rd->done_seen;
    r->usage_completion = rd->usage_completion;
    r->usage_prompt = rd->usage_prompt;
    r->tool_calls = rd->tool_calls;
    snprintf(r->finish_reason, sizeof(r->finish_reason), "%s", rd->finish_reason);
    r->have_server = rd->have_server;
    r->server = rd->server;
    r->sse_events = tb_api_events(rd->parser);
    r->comments = tb_api_comments(rd->parser);
    r->surrogates_replaced = tb_api_replaced(rd->parser);
}

static int build_body(struct net *n, char *err, size_t errlen)
{
    struct tb_api_request q = n->o->req;
    q.include_usage = n->include_usage;
    free(n->body);
    n->body = NULL;
    int rc = tb_api_request_body(&q, &n->body, err, errlen);
    n->http.body = n->body;
    return rc;
}

static void *net_main(void *arg)
{
    struct net *n = arg;
    struct tb_http_resp hr;
    char err[200];
    int rc = tb_http_stream(&n->http, n->clk, on_body, n, &hr);
    if (rc == 0 && n->include_usage && rejects_usage(&hr) && n->r->stream.n == 0) {
        /* Retry once without stream_options; say so. */
        tb_http_resp_free(&hr);
        n->include_usage = 0;
        n->r->usage_retried = 1;
        tb_reader_begin(&n->rd, &n->r->stream, 0);
        if (build_body(n, err, sizeof(err)) == 0)
            rc = tb_http_stream(&n->http, n->clk, on_body, n, &hr);
    }
    if (rc == 0 && atomic_load_explicit(&n->stop, memory_order_acquire)) {
        /* The stream ended when it was stopped; first, so not "cancelled". */
        n->rd.t_now = n->clk->now(n->clk);
        tb_reader_fail(&n->rd, TB_READER_TTS, "%s", n->stop_msg);
    }
    if (rc == TB_ENOMEM)
        tb_reader_fail(&n->rd, TB_READER_NOMEM, "out of memory");
    else if (rc == 0)
        tb_reader_conclude(&n->rd, &hr, &n->o->http, n->clk->now(n->clk));
    if (rc == 0)
        n->r->http_status = hr.status;
    take(n); /* the reader masked the secrets in what the server said */
    tb_http_resp_free(&hr);
    atomic_store_explicit(&n->done, 1, memory_order_release);
    wake(n);
    return NULL;
}

/*
 * The delta the network thread recorded but could not push when the run
 * was stopped while the ring was full (Ctrl-C, --timeout): it arrived, so
 * the trace holds it, and the drain gets it too, on paper as the
 * simulator would push it (after the next release, from now on), so that
 * the report counts what the trace holds.  Runs after the join: the
 * network thread is gone, this thread is the ring's only producer.
 * Returns 0, TB_EFULL (the ring cannot make room) or the drain's error.
 */
static int push_last(struct net *n, struct tb_drain *d, double now, double *next)
{
    const struct tb_stream *s = &n->r->stream;
    const struct tb_event *e = &s->ev[s->n - 1];
    double t = now;
    for (;;) {
        size_t held;
        int rc = tb_ring_push(n->ring, t, s->text + e->off, e->len, e->tokens, e->kind);
        if (rc != TB_EFULL)
            return rc == 0 ? tb_drain_step(d, t, next) : rc;
        held = tb_ring_count(n->ring);
        rc = tb_drain_step(d, t, next);
        if (rc != 0)
            return rc;
        if (tb_ring_count(n->ring) < held)
            continue; /* room now: push again at t */
        if (isinf(*next))
            return TB_EFULL;
        t = *next; /* the next release makes room */
    }
}

/* The drain's voice with a real TTS: chunk `index` closed; its text goes
 * to the TTS now (sent when the client's order allows), then to the
 * caller's voice, which renders it or counts it. */
static int tts_chunk(void *ud, uint32_t index, double c, const char *text, size_t len, uint32_t cps,
                     double *dur, double *busy)
{
    struct net *n = ud;
    int rc = tb_ttsnet_submit(n->tts, text, len);
    if (rc == TB_EINVAL)
        rc = 0; /* stopped (Ctrl-C): the chunk is not sent, the stream goes on */
    if (rc == 0 && n->inner != NULL)
        rc = n->inner->chunk(n->inner->ud, index, c, text, len, cps, dur, busy);
    return rc;
}

/* The TTS client itself failed (libcurl's multi handle, memory): every
 * chunk stops there, with what it measured; the LLM stream goes on. */
static void tts_fail(struct net *n, int rc)
{
    n->r->tts_error = rc;
    snprintf(n->r->tts_message, sizeof(n->r->tts_message), "the TTS client failed: %s",
             tb_strerror(rc));
    tb_ttsnet_cancel(n->tts);
}

/* A dead TTS (tb_tts_log_dead) stops the LLM transfer, once. */
static void tts_dead_check(struct net *n)
{
    if (tb_ttsnet_failed(n->tts) == 0 || atomic_load_explicit(&n->stop, memory_order_relaxed))
        return;
    if (tb_tts_log_dead(tb_ttsnet_log(n->tts), n->stop_msg, sizeof(n->stop_msg)) > 0)
        atomic_store_explicit(&n->stop, 1, memory_order_release);
}

/* The stream is over and its last chunk handed over: waits for the TTS to
 * end every chunk (each has its own timeouts; Ctrl-C stops them all),
 * then moves its log into the stream. */
static void tts_close(struct net *n)
{
    struct tb_tts_log *log;
    int rc = 0;
    if (n->tts == NULL)
        return;
    if (n->r->tts_error == 0)
        rc = tb_ttsnet_finish(n->tts, INFINITY);
    if (rc < 0)
        tts_fail(n, rc);
    log = malloc(sizeof(*log));
    if (log == NULL) {
        n->r->tts_error = TB_ENOMEM;
        snprintf(n->r->tts_message, sizeof(n->r->tts_message), "out of memory");
        return;
    }
    tb_ttsnet_take_log(n->tts, log);
    n->r->stream.tts = log;
}

/* The TTS client on the run's clock and secrets, and the drain's voice
 * that feeds it.  Returns 0, or an error with r->tts_message set. */
static int tts_open(struct net *n, const struct tb_live_opts *o, struct tb_live_result *r)
{
    struct tb_ttsnet_opts to = *o->tts;
    int rc;
    if (to.key != NULL && to.key[0] != '\0' &&
        tb_secrets_add(n->secrets, to.key, strlen(to.key)) != 0)
        return TB_ENOMEM;
    to.clock = n->clk;
    to.origin = 0.0; /* the clock reads 0 when the LLM request is sent */
    to.secrets = n->secrets;
    rc = tb_ttsnet_create(&to, &n->tts, r->tts_message, sizeof(r->tts_message));
    if (rc != 0) {
        r->tts_error = rc;
        return rc;
    }
    n->inner = o->sim.voice;
    n->tvoice.chunk = tts_chunk;
    n->tvoice.ud = n;
    n->tvoice.model = n->inner != NULL ? n->inner->model : NULL;
    n->tvoice.follows_rate = 1;
    n->so.voice = &n->tvoice;
    return 0;
}

void tb_live_opts_default(struct tb_live_opts *o)
{
    memset(o, 0, sizeof(*o));
    tb_http_req_init(&o->http);
    tb_api_request_init(&o->req);
    tb_sim_opts_default(&o->sim);
}

/* The run's two sides, ready: the request in the dialect, with its
 * secrets; the eventfd that wakes the drain; the monotonic clock; the
 * ring; the stream reader recording into r's stream and pushing into the
 * ring.  Returns 0 or an error; net_close frees what was made either
 * way. */
static int net_open(struct net *n, const struct tb_live_opts *o, struct tb_live_result *r,
                    struct tb_clock *clk)
{
    const struct tb_api_info *api = tb_api_info(o->req.api);
    int rc;
    memset(n, 0, sizeof(*n));
    n->o = o;
    n->r = r;
    n->clk = clk;
    n->efd = -1;
    n->so = o->sim;
    atomic_init(&n->done, 0);
    if (api == NULL)
        return TB_EINVAL;
    n->include_usage = o->req.include_usage && api->usage_option;
    n->headers = calloc(o->http.nheaders + 1, sizeof(*n->headers));
    if (n->headers == NULL)
        return TB_ENOMEM;
    tb_api_http_req(api, &o->http, n->headers, &n->http);
    n->http.data_at = &n->rd.last_data; /* keep-alives do not hold off the idle timeout */
    atomic_init(&n->stop, 0);
    n->http.stop = &n->stop;
    if (tb_secrets_create(&n->secrets) != 0 || tb_http_secrets(&n->http, n->secrets) != 0)
        return TB_ENOMEM;
    n->http.secrets = n->secrets;
    n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (n->efd < 0)
        return TB_EIO;
    tb_clock_monotonic_init(clk);
    rc = tb_ring_create(o->sim.ring_slots, o->sim.ring_bytes, &n->ring);
    if (rc == 0)
        rc = tb_reader_init(&n->rd, o->req.api);
    if (rc != 0)
        return rc;
    n->rd.max_deltas = o->max_deltas;
    n->rd.push = push;
    n->rd.push_ud = n;
    n->rd.secrets = n->secrets;
    tb_reader_begin(&n->rd, &r->stream, 0);
    return o->tts != NULL ? tts_open(n, o, r) : 0;
}

static void net_close(struct net *n)
{
    tb_ttsnet_destroy(n->tts);
    tb_reader_free(&n->rd);
    free(n->headers);
    tb_ring_destroy(n->ring);
    free(n->body);
    if (n->efd >= 0)
        close(n->efd);
    tb_secrets_destroy(n->secrets);
}

/* The request body; one the dialect refuses (bad --messages or
 * --body-json) is the run's error, an HTTP one: nothing is sent. */
static int first_body(struct net *n)
{
    char err[200];
    int rc = build_body(n, err, sizeof(err));
    if (rc == TB_EINVAL) {
        n->r->error = TB_READER_HTTP;
        snprintf(n->r->message, sizeof(n->r->message), "%s", err);
    }
    return rc;
}

/* Tells fn where the run stands now (the status line). */
static void status(struct tb_drain *d, double now, tb_live_status_fn fn, void *ud)
{
    struct tb_drain_status ds;
    struct tb_live_status st;
    tb_drain_status(d, now, &ds);
    st.t = now;
    st.events = ds.events;
    st.underruns = ds.underruns;
    st.gap_total = ds.gap_total;
    st.buffered_s = ds.buffered_s;
    st.silent_s = ds.silent_s;
    st.playing = ds.playing;
    fn(ud, &st);
}

/* Sleeps until the network thread pushes, a release is due (next) or
 * wake_at.  Millisecond wake-ups are plenty: every number comes from the
 * tokens' own timestamps, not from when the drain looks. */
static void sleep_until(struct net *n, double now, double wake_at, double next)
{
    struct pollfd pfd = {n->efd, POLLIN, 0};
    uint64_t cnt;
    int ms;
    if (next < wake_at)
        wake_at = next;
    ms = wake_at > now ? (int)ceil((wake_at - now) * 1000.0) : 0;
    if (n->tts != NULL && n->r->tts_error == 0) {
        /* the TTS's transfers, or the network thread's wake-up */
        int rc = tb_ttsnet_step_fd(n->tts, n->efd, ms);
        if (rc < 0)
            tts_fail(n, rc);
        else
            tts_dead_check(n);
        if (read(n->efd, &cnt, sizeof(cnt)) < 0)
            cnt = 0; /* nothing written: a TTS transfer or the time woke us */
        return;
    }
    if (poll(&pfd, 1, ms) > 0 && read(n->efd, &cnt, sizeof(cnt)) < 0)
        cnt = 0; /* already drained: nothing to do */
}

/* The consumer on the wall clock, while the network thread runs: steps
 * the drain at each wake-up, with the status line every interval, and
 * sleeps (never longer than a second) in between.  Returns the drain's
 * error, or 0 once the network thread is done. */
static int drain_live(struct net *n, struct tb_drain *d, tb_live_status_fn fn, void *ud,
                      double *next)
{
    double interval = n->o->status_interval > 0 ? n->o->status_interval : 0.1;
    double last_status = -1;
    for (;;) {
        double now = n->clk->now(n->clk);
        int done = atomic_load_explicit(&n->done, memory_order_acquire);
        int rc = tb_drain_step(d, now, next);
        if (rc != 0 || done)
            return rc; /* every push happened before `done`: this step saw them */
        if (fn != NULL && now - last_status >= interval) {
            status(d, now, fn, ud);
            last_status = now;
        }
        sleep_until(n, now, now + (fn != NULL ? interval : 1.0), *next);
    }
}

/* The stream is over: the rest played out on paper, not in real time,
 * and the drain's result taken.  Returns 0 or the drain's error. */
static int play_rest(struct net *n, struct tb_drain *d, int rc, double *next)
{
    if (rc == 0 && n->unpushed && n->r->stream.n > 0)
        rc = push_last(n, d, n->clk->now(n->clk), next);
    if (rc == TB_EFULL)
        rc = 0; /* kept in the trace; the report says what the ring held */
    if (rc == 0)
        rc = tb_drain_finish(d);
    if (rc == 0)
        rc = tb_drain_step(d, INFINITY, next);
    if (rc == 0)
        rc = tb_drain_result(d, &n->r->sim);
    return rc;
}

/* The usage the server reported, where it is credible beside the events
 * played, and the drain's error (rc) as the run's when the stream had
 * none. */
static void conclude(struct tb_live_result *r, int rc)
{
    if (r->usage_completion >= 0 &&
        !tb_stream_usage_credible(r->usage_completion, r->sim.content_events)) {
        r->usage_ignored = r->usage_completion; /* the report counts events */
        r->usage_completion = -1;
    }
    tb_sim_result_set_usage(&r->sim, r->usage_completion);
    r->stream.usage_tokens = r->usage_completion;
    if (r->have_server)
        r->stream.server = r->server;
    if (rc == TB_ENOMEM && r->error == 0) {
        r->error = TB_READER_NOMEM;
        snprintf(r->message, sizeof(r->message), "out of memory");
    }
}

int tb_live_run(const struct tb_live_opts *o, struct tb_live_result *r, tb_live_status_fn fn,
                void *ud)
{
    struct net n;
    struct tb_clock clk;
    struct tb_drain *d = NULL;
    double next = INFINITY;
    pthread_t th;
    int rc;

    memset(r, 0, sizeof(*r));
    tb_stream_init(&r->stream);
    r->usage_completion = r->usage_prompt = r->usage_ignored = -1;
    rc = net_open(&n, o, r, &clk);
    if (rc == 0)
        rc = tb_drain_create(&n.so, n.ring, o->play_fn, o->play_ud, &d);
    if (rc == 0)
        rc = first_body(&n);
    if (rc == 0) {
        tb_clock_reset_origin(&clk); /* t = 0: the request is sent now */
        rc = pthread_create(&th, NULL, net_main, &n) != 0 ? TB_EIO : 0;
    }
    if (rc == 0) {
        rc = drain_live(&n, d, fn, ud, &next);
        pthread_join(th, NULL);
        rc = play_rest(&n, d, rc, &next);
        tts_close(&n);
        conclude(r, rc);
        rc = 0;
    }
    tb_drain_destroy(d);
    net_close(&n);
    return rc;
}
