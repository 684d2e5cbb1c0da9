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
#include <stdarg.h>
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
    const struct tb_api_info *api;
    struct tb_api_parser *parser;
    struct tb_http_req http;
    const char **headers; /* the dialect's fixed header, then the caller's */
    char *body;
    double t_now;      /* arrival time of the bytes being parsed */
    double last_data;  /* time of the last data event: the idle clock */
    int include_usage; /* as sent */
    int pushed;        /* deltas pushed since the last wake-up */
    int efd;           /* eventfd: the network thread wakes the drain */
    atomic_int done;
};

const char *tb_live_error_name(int error)
{
    static const char *const names[TB_LIVE__COUNT] = {
        "ok",          "http",      "transport", "idle-timeout", "not-sse", "sse",     "json",
        "error-event", "truncated", "cancelled", "nomem",        "timeout", "too-long"};
    return error >= 0 && error < TB_LIVE__COUNT ? names[error] : "?";
}

int tb_live_over_cap(const struct tb_stream *s, size_t len, size_t max_deltas, char *msg,
                     size_t msglen)
{
    size_t cap = max_deltas > 0 ? max_deltas : TB_LIVE_DELTAS_MAX;
    if (s->n >= cap) {
        snprintf(msg, msglen, "over %zu deltas: the stream stops there (the cap of a live stream)",
                 cap);
        return 1;
    }
    if (s->text_len + len > TB_LIVE_TEXT_MAX) {
        snprintf(msg, msglen,
                 "over %u bytes of text: the stream stops there (the cap of a live stream)",
                 TB_LIVE_TEXT_MAX);
        return 1;
    }
    return 0;
}

void tb_live_result_free(struct tb_live_result *r)
{
    if (r != NULL)
        tb_stream_free(&r->stream);
}

static void fail(struct net *n, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the run's error; the first one is the one that matters. */
static void fail(struct net *n, int kind, const char *fmt, ...)
{
    va_list ap;
    if (n->r->error != 0)
        return;
    n->r->error = kind;
    va_start(ap, fmt);
    vsnprintf(n->r->message, sizeof(n->r->message), fmt, ap);
    va_end(ap);
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
    if (n->o->http.cancel != NULL &&
        atomic_load_explicit(n->o->http.cancel, memory_order_relaxed)) {
        fail(n, TB_LIVE_CANCELLED, "interrupted after %zu deltas", n->r->stream.n);
        return -1;
    }
    if (n->o->http.total_timeout > 0 && now >= n->o->http.total_timeout) {
        fail(n, TB_LIVE_TIMEOUT, "stopped after %g s (--timeout), after %zu deltas",
             n->o->http.total_timeout, n->r->stream.n);
        return -1;
    }
    return 0;
}

/* Pushes one delta, waiting while the ring is full (backpressure). */
static int push(struct net *n, const char *text, size_t len, uint8_t kind)
{
    double t = n->t_now;
    char msg[160];
    int rc;
    if (tb_live_over_cap(&n->r->stream, len, n->o->max_deltas, msg, sizeof(msg))) {
        fail(n, TB_LIVE_TOO_LONG, "%s", msg);
        return -1;
    }
    if (tb_stream_append(&n->r->stream, t, text, len, 1, kind) != 0) {
        fail(n, TB_LIVE_NOMEM, "out of memory recording the stream");
        return -1;
    }
    while ((rc = tb_ring_push(n->ring, t, text, (uint32_t)len, 1, kind)) == TB_EFULL) {
        struct timespec ts = {0, 1000000};
        if (wait_check(n, t) != 0)
            return -1;
        nanosleep(&ts, NULL);
        t = n->clk->now(n->clk); /* the drain sees it when it gets in */
        n->last_data = t;        /* the idle clock restarts after the wait */
    }
    if (rc != 0) {
        fail(n, TB_LIVE_SSE, "a delta of %zu bytes exceeds the ring (--ring-bytes)", len);
        return -1;
    }
    n->pushed = 1;
    return 0;
}

static int on_event(void *ud, const struct tb_api_delta *ad, uint64_t offset)
{
    struct net *n = ud;
    const struct tb_oai_delta *d = &ad->d;
    (void)offset;
    if (tb_api_delta_is_data(ad) && n->t_now > n->last_data)
        n->last_data = n->t_now;
    if (ad->have_server) {
        n->r->server = ad->server;
        n->r->have_server = 1;
    }
    if (d->done) {
        n->r->done_seen = 1;
        /* The final line may still carry usage (Ollama's does). */
    }
    if (d->error) {
        fail(n, TB_LIVE_ERROR_EVENT, "the server sent an error event (%s%s%s): %s",
             d->error_type[0] ? d->error_type : "error", d->error_code[0] ? " " : "", d->error_code,
             d->error_message[0] ? d->error_message : "(no message)");
        return 1;
    }
    if (d->usage_completion >= 0)
        n->r->usage_completion = d->usage_completion;
    if (d->usage_prompt >= 0)
        n->r->usage_prompt = d->usage_prompt;
    if (d->finish_reason[0] != '\0')
        snprintf(n->r->finish_reason, sizeof(n->r->finish_reason), "%s", d->finish_reason);
    n->r->tool_calls += d->tool_calls;
    if (d->reasoning != NULL && push(n, d->reasoning, d->reasoning_len, TB_KIND_REASONING) != 0)
        return 1;
    if (d->content != NULL && push(n, d->content, d->content_len, TB_KIND_CONTENT) != 0)
        return 1;
    return 0;
}

static int on_body(void *ud, const char *buf, size_t len, double t)
{
    struct net *n = ud;
    char err[160];
    int rc;
    n->t_now = t;
    rc = tb_api_feed(n->parser, buf, len, on_event, n, err, sizeof(err));
    if (n->pushed) {
        wake(n);
        n->pushed = 0;
    }
    if (rc == TB_ETOOBIG) {
        fail(n, TB_LIVE_SSE, "event stream: %s", err);
        return 1;
    }
    if (rc == TB_EFORMAT) {
        fail(n, TB_LIVE_JSON, "%s", err);
        return 1;
    }
    if (rc == TB_ENOMEM) {
        fail(n, TB_LIVE_NOMEM, "out of memory");
        return 1;
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

/* Explains how the transfer ended, unless a callback already did. */
static void conclude(struct net *n, const struct tb_http_resp *hr)
{
    struct tb_live_result *r = n->r;
    char msg[400];
    r->http_status = hr->status;
    if (hr->cancelled) {
        fail(n, TB_LIVE_CANCELLED, "interrupted after %zu deltas", r->stream.n);
    } else if (hr->idle_timeout) {
        fail(n, TB_LIVE_IDLE, "no data for %g s (--idle-timeout) after %zu deltas",
             n->o->http.idle_timeout, r->stream.n);
    } else if (hr->total_timeout) {
        fail(n, TB_LIVE_TIMEOUT, "stopped after %g s (--timeout), after %zu deltas",
             n->o->http.total_timeout, r->stream.n);
    } else if (hr->status >= 300 || (hr->status == 0 && hr->curl_code == 0)) {
        tb_oai_error_text(hr->body, hr->body_len, msg, sizeof(msg));
        fail(n, TB_LIVE_HTTP, "HTTP %ld: %s", hr->status, msg[0] ? msg : "(empty body)");
    } else if (hr->status != 0 && !hr->sse && hr->curl_code == 0) {
        tb_oai_error_text(hr->body, hr->body_len, msg, sizeof(msg));
        fail(n, TB_LIVE_NOT_SSE, "HTTP %ld with Content-Type '%s', not an event stream: %s",
             hr->status, hr->content_type[0] ? hr->content_type : "(none)", msg);
    } else if (hr->curl_code != 0 && !hr->aborted) {
        if (r->stream.n > 0 || hr->bytes > 0)
            fail(n, TB_LIVE_TRANSPORT, "connection lost after %zu deltas: %s", r->stream.n,
                 hr->error);
        else
            fail(n, TB_LIVE_TRANSPORT, "request failed: %s", hr->error);
    } else if (tb_api_pending(n->parser) > 0 && !r->done_seen) {
        fail(n, TB_LIVE_TRUNCATED, "the stream ended mid-event, before %s, after %zu deltas",
             n->api->end_name, r->stream.n);
    } else if (!r->done_seen) {
        if (r->finish_reason[0] != '\0')
            snprintf(r->warning, sizeof(r->warning),
                     "the stream ended without %s (finish_reason %s)", n->api->end_name,
                     r->finish_reason);
        else
            fail(n, TB_LIVE_TRUNCATED, "the stream ended before %s, after %zu deltas",
                 n->api->end_name, r->stream.n);
    }
}

static int build_body(struct net *n, char *err, size_t errlen)
{
    struct tb_oai_request q = n->o->req;
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
        tb_api_parser_reset(n->parser);
        if (build_body(n, err, sizeof(err)) == 0)
            rc = tb_http_stream(&n->http, n->clk, on_body, n, &hr);
    }
    n->r->sse_events = tb_api_events(n->parser);
    n->r->comments = tb_api_comments(n->parser);
    n->r->surrogates_replaced = tb_api_replaced(n->parser);
    if (rc == TB_ENOMEM)
        fail(n, TB_LIVE_NOMEM, "out of memory");
    else if (rc == 0)
        conclude(n, &hr);
    /* A server may quote the key back in its error message. */
    tb_http_scrub(&n->http, n->r->message);
    tb_http_scrub(&n->http, n->r->warning);
    tb_http_resp_free(&hr);
    atomic_store_explicit(&n->done, 1, memory_order_release);
    wake(n);
    return NULL;
}

int tb_live_run(const struct tb_live_opts *o, struct tb_live_result *r, tb_live_status_fn fn,
                void *ud)
{
    struct net n;
    struct tb_clock clk;
    struct tb_drain *d = NULL;
    pthread_t th;
    double next = INFINITY, last_status = -1;
    double interval = o->status_interval > 0 ? o->status_interval : 0.1;
    char err[200];
    int rc;

    memset(r, 0, sizeof(*r));
    tb_stream_init(&r->stream);
    r->usage_completion = r->usage_prompt = r->usage_ignored = -1;
    memset(&n, 0, sizeof(n));
    n.o = o;
    n.r = r;
    n.clk = &clk;
    n.api = tb_api_info(o->req.api);
    if (n.api == NULL)
        return TB_EINVAL;
    n.include_usage = o->req.include_usage && n.api->usage_option;
    n.headers = calloc(o->http.nheaders + 1, sizeof(*n.headers));
    if (n.headers == NULL)
        return TB_ENOMEM;
    tb_api_http_req(n.api, &o->http, n.headers, &n.http);
    n.http.data_at = &n.last_data; /* keep-alives do not hold off the idle timeout */
    atomic_init(&n.done, 0);
    n.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (n.efd < 0) {
        free(n.headers);
        return TB_EIO;
    }
    tb_clock_monotonic_init(&clk);

    rc = tb_ring_create(o->sim.ring_slots, o->sim.ring_bytes, &n.ring);
    if (rc == 0)
        rc = tb_api_parser_create(o->req.api, &n.parser);
    if (rc == 0)
        rc = tb_drain_create(&o->sim, n.ring, o->play_fn, o->play_ud, &d);
    if (rc == 0) {
        rc = build_body(&n, err, sizeof(err));
        if (rc == TB_EINVAL) {
            r->error = TB_LIVE_HTTP;
            snprintf(r->message, sizeof(r->message), "%s", err);
        }
    }
    if (rc != 0)
        goto out;

    tb_clock_reset_origin(&clk); /* t = 0: the request is sent now */
    if (pthread_create(&th, NULL, net_main, &n) != 0) {
        rc = TB_EIO;
        goto out;
    }
    for (;;) {
        double now = clk.now(&clk);
        int done = atomic_load_explicit(&n.done, memory_order_acquire);
        rc = tb_drain_step(d, now, &next);
        if (rc != 0 || done)
            break; /* every push happened before `done`: this step saw them */
        if (fn != NULL && now - last_status >= interval) {
            struct tb_drain_status ds;
            struct tb_live_status st;
            tb_drain_status(d, now, &ds);
            st.t = now;
            st.events = ds.events;
            st.underruns = ds.underruns;
            st.gap_total = ds.gap_total;
            st.buffered_s = ds.buffered_s;
            st.playing = ds.playing;
            fn(ud, &st);
            last_status = now;
        }
        /* Sleep until the network thread pushes, a release is due, or the
         * status line is due; never longer than a second. */
        {
            double wake_at = now + (fn != NULL ? interval : 1.0);
            struct pollfd pfd = {n.efd, POLLIN, 0};
            uint64_t cnt;
            int ms;
            if (next < wake_at)
                wake_at = next;
            /* Millisecond wake-ups are plenty: every number comes from the
             * tokens' own timestamps, not from when the drain looks. */
            ms = wake_at > now ? (int)ceil((wake_at - now) * 1000.0) : 0;
            if (poll(&pfd, 1, ms) > 0 && read(n.efd, &cnt, sizeof(cnt)) < 0)
                cnt = 0; /* already drained: nothing to do */
        }
    }
    pthread_join(th, NULL);
    /* The stream is over: play out the rest on paper, not in real time. */
    if (rc == 0)
        rc = tb_drain_finish(d);
    if (rc == 0)
        rc = tb_drain_step(d, INFINITY, &next);
    if (rc == 0)
        rc = tb_drain_result(d, &r->sim);
    if (r->usage_completion >= 0 &&
        !tb_usage_credible(r->usage_completion, r->sim.content_events)) {
        r->usage_ignored = r->usage_completion; /* the report counts events */
        r->usage_completion = -1;
    }
    tb_sim_result_set_usage(&r->sim, r->usage_completion);
    r->stream.usage_tokens = r->usage_completion;
    if (r->have_server)
        r->stream.server = r->server;
    if (rc == TB_ENOMEM && r->error == 0) {
        r->error = TB_LIVE_NOMEM;
        snprintf(r->message, sizeof(r->message), "out of memory");
    }
    rc = 0;
out:
    tb_drain_destroy(d);
    tb_api_parser_destroy(n.parser);
    free(n.headers);
    tb_ring_destroy(n.ring);
    free(n.body);
    close(n.efd);
    return rc;
}
