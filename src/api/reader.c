/*
 * reader.c - one stream reader (see reader.h): deltas out of the
 * dialect's parser into a recorded stream, and how the stream ended.
 */
#include "ttsbuf/reader.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/jsonfield.h"
#include "base/jsontext.h"
#include "evjson.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

const char *tb_reader_error_name(int error)
{
    static const char *const names[TB_READER__COUNT] = {
        "ok",          "http",      "transport", "idle_timeout", "not_sse", "sse",      "json",
        "error_event", "truncated", "cancelled", "nomem",        "timeout", "too_long", "tts"};
    return error >= 0 && error < TB_READER__COUNT ? names[error] : "?";
}

int tb_reader_error_parse(const char *name)
{
    for (int k = 0; k < TB_READER__COUNT; k++)
        if (strcmp(name, tb_reader_error_name(k)) == 0)
            return k;
    return -1;
}

int tb_reader_end_kind(int error, int marker, int data_came)
{
    switch (error) {
    case TB_READER_OK: return marker ? TB_END_COMPLETE : TB_END_NO_MARKER;
    case TB_READER_CANCELLED: return TB_END_INTERRUPTED;
    case TB_READER_IDLE:
    case TB_READER_TIMEOUT: return TB_END_TIMEOUT;
    case TB_READER_TOO_LONG: return TB_END_CAP;
    case TB_READER_TRUNCATED: return TB_END_LOST;
    case TB_READER_TRANSPORT: return data_came ? TB_END_LOST : TB_END_ERROR;
    default: return TB_END_ERROR;
    }
}

int tb_reader_over_cap(const struct tb_stream *s, size_t len, size_t max_deltas, char *msg,
                       size_t msglen)
{
    size_t cap = max_deltas > 0 ? max_deltas : TB_READER_DELTAS_MAX;
    if (s->n >= cap) {
        snprintf(msg, msglen, "over %zu deltas: the stream stops there (the cap of a live stream)",
                 cap);
        return 1;
    }
    if (s->text_len + len > TB_READER_TEXT_MAX) {
        snprintf(msg, msglen,
                 "over %u bytes of text: the stream stops there (the cap of a live stream)",
                 TB_READER_TEXT_MAX);
        return 1;
    }
    return 0;
}

int tb_reader_init(struct tb_reader *rd, enum tb_api api)
{
    int rc;
    memset(rd, 0, sizeof(*rd));
    rd->api = tb_api_info(api);
    if (rd->api == NULL)
        return TB_EINVAL;
    rc = tb_api_parser_create(api, &rd->parser);
    if (rc == 0 && (rc = tb_secrets_masker_create(&rd->masker)) != 0) {
        tb_api_parser_destroy(rd->parser);
        rd->parser = NULL;
    }
    return rc;
}

void tb_reader_free(struct tb_reader *rd)
{
    tb_api_parser_destroy(rd->parser);
    rd->parser = NULL;
    tb_secrets_masker_destroy(rd->masker);
    rd->masker = NULL;
}

void tb_reader_recorded(struct tb_reader *rd)
{
    tb_api_parser_adopt(rd->parser);
}

void tb_reader_begin(struct tb_reader *rd, struct tb_stream *out, double t0)
{
    tb_api_parser_reset(rd->parser);
    rd->out = out;
    rd->t0 = t0;
    rd->t_now = t0;
    rd->last_data = t0;
    rd->done_seen = 0;
    rd->t_done = t0;
    tb_secrets_masker_reset(rd->masker, (size_t)out->text_len);
    rd->fed = 0;
    rd->ignored = 0;
    tb_stream_end_init(&out->end);
    rd->usage_completion = rd->usage_prompt = -1;
    rd->tool_calls = 0;
    rd->nopen_tools = 0;
    rd->finish_reason[0] = '\0';
    rd->have_server = 0;
    tb_stream_timing_init(&rd->server);
    rd->error = 0;
    rd->message[0] = '\0';
    rd->warning[0] = '\0';
}

int tb_reader_fail(struct tb_reader *rd, int kind, const char *fmt, ...)
{
    va_list ap;
    if (rd->error != 0)
        return rd->error; /* the first error is the one that matters */
    rd->error = kind;
    va_start(ap, fmt);
    vsnprintf(rd->message, sizeof(rd->message), fmt, ap);
    va_end(ap);
    tb_secrets_scrub(rd->secrets, rd->message);
    return kind;
}

/* Masks the secrets echoed in the recorded text up to its end (final:
 * the stream ends there), in the delta just recorded and in the deltas
 * before it that an echo began in. */
static void mask(struct tb_reader *rd, int final)
{
    struct tb_stream *s = rd->out;
    tb_secrets_masker_feed(rd->masker, rd->secrets, s->text, (size_t)s->text_len, final);
}

/* Records one delta, within a stream's caps, masks what it echoes, and
 * hands it, masked, to the hook. */
static int record(struct tb_reader *rd, const char *text, size_t len, uint8_t kind)
{
    double t = rd->t_now - rd->t0;
    char msg[160];
    if (t < 0)
        t = 0;
    if (tb_reader_over_cap(rd->out, len, rd->max_deltas, msg, sizeof(msg))) {
        tb_reader_fail(rd, TB_READER_TOO_LONG, "%s", msg);
        return -1;
    }
    if (tb_stream_append(rd->out, t, text, len, 1, kind) != 0) {
        tb_reader_fail(rd, TB_READER_NOMEM, "out of memory recording the stream");
        return -1;
    }
    if (len > 0) {
        mask(rd, 0);
        text = rd->out->text + rd->out->text_len - len;
    }
    return rd->push != NULL ? rd->push(rd->push_ud, rd, t, text, len, kind) : 0;
}

/* The open call at index, or -1. */
static int open_tool(const struct tb_reader *rd, long index)
{
    for (size_t i = 0; i < rd->nopen_tools; i++)
        if (rd->open_tools[i].index == index)
            return (int)i;
    return -1;
}

/* Ends open call k at t (k < 0: every open call). */
static void end_tools(struct tb_reader *rd, int k, double t)
{
    size_t from = k < 0 ? 0 : (size_t)k, to = k < 0 ? rd->nopen_tools : (size_t)k + 1;
    for (size_t i = from; i < to; i++)
        rd->out->tools[rd->open_tools[i].call].t_end = t;
    if (k < 0)
        rd->nopen_tools = 0;
    else
        rd->open_tools[k] = rd->open_tools[--rd->nopen_tools];
}

/* A new call for item it at t, open.  0, or the stream's failure. */
static int start_tool(struct tb_reader *rd, const struct tb_api_tool *it, double t,
                      uint64_t offset)
{
    struct tb_tool_call c = {.t_start = t, .t_end = NAN};
    int rc;
    if (rd->nopen_tools >= TB_API_TOOLS_MAX)
        return tb_reader_fail(rd, TB_READER_TOO_LONG,
                              "over %d tool calls open at once at stream byte %llu",
                              TB_API_TOOLS_MAX, (unsigned long long)offset);
    snprintf(c.name, sizeof(c.name), "%s", it->name);
    snprintf(c.id, sizeof(c.id), "%s", it->id);
    tb_secrets_scrub(rd->secrets, c.name);
    tb_secrets_scrub(rd->secrets, c.id);
    rc = tb_stream_tool_add(rd->out, &c);
    if (rc == TB_ENOMEM)
        return tb_reader_fail(rd, TB_READER_NOMEM, "out of memory recording a tool call");
    if (rc != 0)
        return tb_reader_fail(rd, TB_READER_TOO_LONG,
                              "over %u tool calls at stream byte %llu: the stream stops there",
                              TB_STREAM_TOOLS_MAX, (unsigned long long)offset);
    rd->open_tools[rd->nopen_tools].index = it->index;
    rd->open_tools[rd->nopen_tools++].call = rd->out->ntools - 1;
    rd->tool_calls++;
    return 0;
}

/* One tool item: a call starts (or, its arguments first, starts
 * unnamed), grows, ends.  0, or the stream's failure. */
static int tool_item(struct tb_reader *rd, const struct tb_api_tool *it, double t,
                     uint64_t offset)
{
    int k = open_tool(rd, it->index);
    struct tb_tool_call *c;
    if (k < 0 && (it->ops & (TB_API_TOOL_START | TB_API_TOOL_ARGS)) == 0)
        return 0; /* the stop of a block that was not a call */
    if (k < 0) {
        if (start_tool(rd, it, t, offset) != 0)
            return rd->error;
        k = (int)rd->nopen_tools - 1;
    }
    c = &rd->out->tools[rd->open_tools[k].call];
    if (c->name[0] == '\0' && it->name[0] != '\0')
        snprintf(c->name, sizeof(c->name), "%s", it->name);
    if (tb_stream_tool_args(rd->out, rd->open_tools[k].call, it->args, it->args_len) != 0)
        return tb_reader_fail(rd, TB_READER_NOMEM, "out of memory recording a tool call");
    if (c->args_bytes > TB_TOOL_ARGS_MAX)
        return tb_reader_fail(rd, TB_READER_SSE,
                              "tool call %ld's arguments over %u bytes at stream byte %llu",
                              it->index, TB_TOOL_ARGS_MAX, (unsigned long long)offset);
    if (it->ops & TB_API_TOOL_END)
        end_tools(rd, k, t);
    return 0;
}

/* The event's tool items; every open call ends at a finish reason or the
 * end marker. */
static int tools(struct tb_reader *rd, const struct tb_api_delta *d, uint64_t offset)
{
    double t = rd->t_now - rd->t0 > 0 ? rd->t_now - rd->t0 : 0;
    for (uint32_t i = 0; i < d->ntools; i++)
        if (tool_item(rd, &d->tools[i], t, offset) != 0)
            return 1;
    if (d->finish_reason[0] != '\0' || d->done)
        end_tools(rd, -1, t);
    return 0;
}

static int on_event(void *ud, const struct tb_api_delta *ad, uint64_t offset)
{
    struct tb_reader *rd = ud;
    const struct tb_api_delta *d = ad;
    if (tb_api_delta_is_data(ad) && rd->t_now > rd->last_data)
        rd->last_data = rd->t_now;
    if (ad->have_server) {
        rd->server = ad->server;
        rd->have_server = 1;
    }
    if (d->error) {
        tb_reader_fail(rd, TB_READER_ERROR_EVENT, "the server sent an error event (%s%s%s): %s",
                       d->error_type[0] ? d->error_type : "error", d->error_code[0] ? " " : "",
                       d->error_code, d->error_message[0] ? d->error_message : "(no message)");
        return 1;
    }
    if (d->usage_completion >= 0)
        rd->usage_completion = d->usage_completion;
    if (d->usage_prompt >= 0)
        rd->usage_prompt = d->usage_prompt;
    if (d->finish_reason[0] != '\0') {
        snprintf(rd->finish_reason, sizeof(rd->finish_reason), "%s", d->finish_reason);
        tb_secrets_scrub(rd->secrets, rd->finish_reason);
    }
    if (tools(rd, d, offset) != 0)
        return 1;
    if (d->reasoning != NULL && record(rd, d->reasoning, d->reasoning_len, TB_KIND_REASONING) != 0)
        return 1;
    if (d->content != NULL && record(rd, d->content, d->content_len, TB_KIND_CONTENT) != 0)
        return 1;
    if (d->done) {
        /* The end: the event itself is kept (Ollama's final line carries
         * usage and timings), nothing after it. */
        rd->done_seen = 1;
        rd->t_done = rd->t_now;
        rd->done_at = offset;
        return 1;
    }
    return 0;
}

/* Bytes of data in buf[0..len): what was ignored after the end marker.
 * Blanks and line ends are framing, not data (a CRLF stream's last LF
 * comes after the event it ends). */
static uint64_t data_bytes(const char *buf, size_t len)
{
    uint64_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n';
    return n;
}

int tb_reader_feed(void *ud, const char *buf, size_t len, double t)
{
    struct tb_reader *rd = ud;
    char err[200];
    int rc;
    if (rd->error != 0)
        return 1; /* a stream stops at its first error */
    if (rd->done_seen) {
        rd->ignored += data_bytes(buf, len); /* and at its end marker */
        rd->fed += len;
        return 1;
    }
    rd->t_now = t;
    rc = tb_api_feed(rd->parser, buf, len, on_event, rd, err, sizeof(err));
    if (rd->done_seen && rd->error == 0) {
        size_t at = rd->done_at > rd->fed ? (size_t)(rd->done_at - rd->fed) : 0;
        if (at < len)
            rd->ignored += data_bytes(buf + at, len - at);
        rd->fed += len;
        return 1;
    }
    rd->fed += len;
    if (rc == TB_ETOOBIG)
        tb_reader_fail(rd, TB_READER_SSE, "event stream: %s", err);
    else if (rc == TB_EFORMAT)
        tb_reader_fail(rd, TB_READER_JSON, "%s", err);
    else if (rc == TB_ENOMEM)
        tb_reader_fail(rd, TB_READER_NOMEM, "out of memory");
    return rc != 0;
}

/* Records the conclusion in the stream (stream.h's end), and masks what
 * the last delta left cut (an escape at its end) as it is. */
static void set_end(struct tb_reader *rd, int data_came)
{
    struct tb_stream_end *e = &rd->out->end;
    double t = (rd->done_seen ? rd->t_done : rd->t_now) - rd->t0;
    mask(rd, 1);
    e->kind = tb_reader_end_kind(rd->error, rd->done_seen, data_came);
    e->t = t > 0 ? t : 0;
    snprintf(e->error, sizeof(e->error), "%s",
             rd->error != 0 ? tb_reader_error_name(rd->error) : "");
    tb_utf8_copy(e->message, sizeof(e->message), rd->error != 0 ? rd->message : "");
    e->ignored_bytes = rd->ignored;
    snprintf(e->finish_reason, sizeof(e->finish_reason), "%s", rd->finish_reason);
}

/* The bytes' own conclusion: the end marker, or how they stopped short. */
static int end_of_bytes(struct tb_reader *rd)
{
    size_t n = rd->out->n;
    if (rd->error != 0)
        return rd->error;
    if (rd->done_seen) {
        if (rd->ignored > 0)
            snprintf(rd->warning, sizeof(rd->warning),
                     "%llu bytes of data after %s ignored: the stream ends at its end marker",
                     (unsigned long long)rd->ignored, rd->api->end_name);
        return 0;
    }
    if (tb_api_pending(rd->parser) > 0)
        return tb_reader_fail(rd, TB_READER_TRUNCATED,
                              "the stream ended mid-event, before %s, after %zu deltas",
                              rd->api->end_name, n);
    if (rd->finish_reason[0] == '\0')
        return tb_reader_fail(rd, TB_READER_TRUNCATED,
                              "the stream ended before %s, after %zu deltas", rd->api->end_name, n);
    snprintf(rd->warning, sizeof(rd->warning), "the stream ended without %s (finish_reason %s)",
             rd->api->end_name, rd->finish_reason);
    tb_secrets_scrub(rd->secrets, rd->warning);
    return 0;
}

int tb_reader_end(struct tb_reader *rd)
{
    int rc = end_of_bytes(rd);
    set_end(rd, rd->fed > 0);
    return rc;
}

/* How the transfer itself ended, when it decides (else 0 and the bytes
 * do). */
static int end_of_transfer(struct tb_reader *rd, const struct tb_http_resp *hr,
                           const struct tb_http_req *q)
{
    char msg[400];
    size_t n = rd->out->n;
    if (hr->cancelled)
        return tb_reader_fail(rd, TB_READER_CANCELLED, "interrupted after %zu deltas", n);
    if (hr->idle_timeout)
        return tb_reader_fail(rd, TB_READER_IDLE,
                              "no data for %g s (--idle-timeout) after %zu deltas", q->idle_timeout,
                              n);
    if (hr->total_timeout)
        return tb_reader_fail(rd, TB_READER_TIMEOUT,
                              "stopped after %g s (--timeout), after %zu deltas", q->total_timeout,
                              n);
    if (hr->status >= 300 || (hr->status == 0 && hr->curl_code == 0)) {
        tb_reader_error_text(hr->body, hr->body_len, msg, sizeof(msg));
        return tb_reader_fail(rd, TB_READER_HTTP, "HTTP %ld: %s", hr->status,
                              msg[0] ? msg : "(empty body)");
    }
    if (hr->status != 0 && !hr->sse && hr->curl_code == 0) {
        tb_reader_error_text(hr->body, hr->body_len, msg, sizeof(msg));
        return tb_reader_fail(rd, TB_READER_NOT_SSE,
                              "HTTP %ld with Content-Type '%s', not an event stream: %s",
                              hr->status, hr->content_type[0] ? hr->content_type : "(none)", msg);
    }
    if (hr->curl_code != 0 && !hr->aborted) {
        if (n > 0 || hr->bytes > 0)
            return tb_reader_fail(rd, TB_READER_TRANSPORT, "connection lost after %zu deltas: %s",
                                  n, hr->error);
        return tb_reader_fail(rd, TB_READER_TRANSPORT, "request failed: %s", hr->error);
    }
    return 0;
}

int tb_reader_conclude(struct tb_reader *rd, const struct tb_http_resp *hr,
                       const struct tb_http_req *q, double t)
{
    int rc;
    /* The end marker ends the stream, whatever stopped the transfer
     * after it; an error found while feeding keeps its own time. */
    if (rd->error == 0 && !rd->done_seen) {
        rd->t_now = t;
        end_of_transfer(rd, hr, q);
    }
    rc = end_of_bytes(rd);
    set_end(rd, rd->out->n > 0 || hr->bytes > 0);
    rd->out->end.http_status = hr->status;
    return rc;
}

/* Case-insensitive search for an ASCII needle in h[0..hn). */
static const char *find_ci(const char *h, size_t hn, const char *needle)
{
    size_t nn = strlen(needle);
    for (size_t i = 0; i + nn <= hn; i++) {
        size_t k = 0;
        while (k < nn && tolower((unsigned char)h[i + k]) == needle[k])
            k++;
        if (k == nn)
            return h + i;
    }
    return NULL;
}

void tb_reader_error_text(const char *body, size_t len, char *out, size_t outlen)
{
    cJSON *root;
    const char *t, *te, *nl;
    if (outlen == 0)
        return;
    out[0] = '\0';
    if (body == NULL)
        return;
    root = tb_jsontext_parse(body, len, NULL);
    if (root != NULL) {
        const cJSON *m = tb_evjson_message(root);
        if (m != NULL)
            tb_jsonfield_line_of(m->valuestring, strlen(m->valuestring), out, outlen);
        cJSON_Delete(root);
        if (out[0] != '\0')
            return;
    }
    /* HTML: the <title> says it best. */
    t = find_ci(body, len, "<title>");
    if (t != NULL) {
        te = find_ci(t + 7, len - (size_t)(t + 7 - body), "</title>");
        if (te != NULL) {
            tb_jsonfield_line_of(t + 7, (size_t)(te - (t + 7)), out, outlen);
            if (out[0] != '\0')
                return;
        }
    }
    /* Otherwise the first non-blank line. */
    while (len > 0) {
        nl = memchr(body, '\n', len);
        size_t n = nl != NULL ? (size_t)(nl - body) : len;
        tb_jsonfield_line_of(body, n, out, outlen);
        if (out[0] != '\0')
            return;
        if (nl == NULL)
            break;
        len -= n + 1;
        body = nl + 1;
    }
}
