/*
 * bench_wire.c - one `ttsbuf bench` stream's wire side (see bench_wire.h):
 * request bodies, deltas out of the dialect's parser, how a transfer
 * ended.
 */
#include "bench_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ttsbuf/error.h"

int tb_bench_wire_init(struct tb_bench_wire *w, enum tb_api api)
{
    memset(w, 0, sizeof(*w));
    w->api = tb_api_info(api);
    if (w->api == NULL)
        return TB_EINVAL;
    return tb_api_parser_create(api, &w->parser);
}

void tb_bench_wire_free(struct tb_bench_wire *w)
{
    tb_api_parser_destroy(w->parser);
    w->parser = NULL;
}

void tb_bench_wire_reset(struct tb_bench_wire *w, struct tb_stream *out, double t0)
{
    tb_api_parser_reset(w->parser);
    w->out = out;
    w->t0 = t0;
    w->t_now = 0;
    w->last_data = t0;
    w->done_seen = 0;
    w->usage = -1;
    w->finish[0] = '\0';
    w->error = 0;
    w->message[0] = '\0';
}

int tb_bench_wire_body(const struct tb_oai_request *tmpl, const struct tb_bench_prompt *p,
                       char **out, char *err, size_t errlen)
{
    struct tb_oai_request q = *tmpl;
    q.prompt = p->prompt != NULL ? p->prompt : "";
    q.messages_json = p->messages_json;
    q.include_usage =
        q.include_usage && tb_api_info(q.api) != NULL && tb_api_info(q.api)->usage_option;
    return tb_api_request_body(&q, out, err, errlen);
}

static void fail(struct tb_bench_wire *w, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The first error is the one that matters. */
static void fail(struct tb_bench_wire *w, int kind, const char *fmt, ...)
{
    va_list ap;
    if (w->error != 0)
        return;
    w->error = kind;
    va_start(ap, fmt);
    vsnprintf(w->message, sizeof(w->message), fmt, ap);
    va_end(ap);
}

/* Records one delta, within a live stream's caps. */
static int record(struct tb_bench_wire *w, double t, const char *text, size_t len, uint8_t kind)
{
    char msg[160];
    if (tb_live_over_cap(w->out, len, 0, msg, sizeof(msg))) {
        fail(w, TB_LIVE_TOO_LONG, "%s", msg);
        return -1;
    }
    if (tb_stream_append(w->out, t, text, len, 1, kind) != 0) {
        fail(w, TB_LIVE_NOMEM, "out of memory recording the stream");
        return -1;
    }
    return 0;
}

static int on_event(void *ud, const struct tb_api_delta *ad, uint64_t offset)
{
    struct tb_bench_wire *w = ud;
    const struct tb_oai_delta *d = &ad->d;
    double t = w->t_now - w->t0;
    (void)offset;
    if (tb_api_delta_is_data(ad) && w->t_now > w->last_data)
        w->last_data = w->t_now;
    if (d->done)
        w->done_seen = 1; /* the final line may still carry usage (Ollama's) */
    if (d->error) {
        fail(w, TB_LIVE_ERROR_EVENT, "the server sent an error event (%s): %s",
             d->error_type[0] ? d->error_type : "error",
             d->error_message[0] ? d->error_message : "(no message)");
        return 1;
    }
    if (d->usage_completion >= 0)
        w->usage = d->usage_completion;
    if (d->finish_reason[0] != '\0')
        snprintf(w->finish, sizeof(w->finish), "%s", d->finish_reason);
    if (t < 0)
        t = 0;
    if ((d->reasoning != NULL &&
         record(w, t, d->reasoning, d->reasoning_len, TB_KIND_REASONING) != 0) ||
        (d->content != NULL && record(w, t, d->content, d->content_len, TB_KIND_CONTENT) != 0))
        return 1;
    return 0;
}

int tb_bench_wire_feed(void *ud, const char *buf, size_t len, double t)
{
    struct tb_bench_wire *w = ud;
    char err[200];
    int rc;
    w->t_now = t;
    rc = tb_api_feed(w->parser, buf, len, on_event, w, err, sizeof(err));
    if (rc == TB_ETOOBIG)
        fail(w, TB_LIVE_SSE, "event stream: %s", err);
    else if (rc == TB_EFORMAT)
        fail(w, TB_LIVE_JSON, "%s", err);
    else if (rc == TB_ENOMEM)
        fail(w, TB_LIVE_NOMEM, "out of memory");
    return rc != 0;
}

void tb_bench_wire_conclude(struct tb_bench_wire *w, const struct tb_http_resp *hr,
                            const struct tb_http_req *q)
{
    char msg[200];
    size_t n = w->out->n;
    if (hr->cancelled) {
        fail(w, TB_LIVE_CANCELLED, "interrupted after %zu deltas", n);
    } else if (hr->idle_timeout) {
        fail(w, TB_LIVE_IDLE, "no data for %g s (--idle-timeout) after %zu deltas", q->idle_timeout,
             n);
    } else if (hr->total_timeout) {
        fail(w, TB_LIVE_TIMEOUT, "stopped after %g s (--timeout), after %zu deltas",
             q->total_timeout, n);
    } else if (hr->status >= 300 || (hr->status == 0 && hr->curl_code == 0)) {
        tb_oai_error_text(hr->body, hr->body_len, msg, sizeof(msg));
        fail(w, TB_LIVE_HTTP, "HTTP %ld: %s", hr->status, msg[0] ? msg : "(empty body)");
    } else if (hr->status != 0 && !hr->sse && hr->curl_code == 0) {
        tb_oai_error_text(hr->body, hr->body_len, msg, sizeof(msg));
        fail(w, TB_LIVE_NOT_SSE, "HTTP %ld with Content-Type '%s', not an event stream: %s",
             hr->status, hr->content_type[0] ? hr->content_type : "(none)", msg);
    } else if (hr->curl_code != 0 && !hr->aborted) {
        if (n > 0 || hr->bytes > 0)
            fail(w, TB_LIVE_TRANSPORT, "connection lost after %zu deltas: %s", n, hr->error);
        else
            fail(w, TB_LIVE_TRANSPORT, "request failed: %s", hr->error);
    } else if (tb_api_pending(w->parser) > 0 && !w->done_seen) {
        fail(w, TB_LIVE_TRUNCATED, "the stream ended mid-event, before %s, after %zu deltas",
             w->api->end_name, n);
    } else if (!w->done_seen && w->finish[0] == '\0') {
        fail(w, TB_LIVE_TRUNCATED, "the stream ended before %s, after %zu deltas", w->api->end_name,
             n);
    }
}
