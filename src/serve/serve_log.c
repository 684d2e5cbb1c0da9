/*
 * serve_log.c - the mock server's request log (see serve_log.h and, for
 * what a line means, serve.h): a request's facts gathered in its
 * connection, handed to the caller's request_log once it ends.
 */
#include <string.h>

#include "serve_http.h"
#include "serve_log.h"
#include "serve_plan.h"
#include "serve_priv.h"
#include "ttsbuf/clock.h"

const char *tb_serve_end_name(enum tb_serve_end e)
{
    switch (e) {
    case TB_SERVE_END_COMPLETE: return "complete";
    case TB_SERVE_END_CLIENT_CLOSED: return "client_closed";
    case TB_SERVE_END_FAULT: return "fault";
    case TB_SERVE_END_ERROR: return "error";
    case TB_SERVE_END_DROPPED: return "dropped";
    case TB_SERVE_END_STOPPED: return "stopped";
    }
    return "unknown";
}

void tb_serve_log_init(struct tb_serve_conn *c)
{
    memset(&c->lg, 0, sizeof(c->lg));
    c->lg.received = c->lg.first_byte = c->lg.closed = c->lg.late_max = -1;
    c->lg.prompt_tokens = c->lg.tts_chars = -1;
    c->lg.audio_sent = c->lg.audio_planned = -1;
    c->lg.stream = -1;
    c->lg.tool_call = c->lg.tool_result = -1;
    c->lg.tool_args[0] = '\0';
}

static int rid_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == ':' || ch == '-';
}

int tb_serve_log_rid(struct tb_serve_conn *c)
{
    const char *v;
    size_t n;
    c->lg.rid[0] = '\0';
    if (!tb_serve_http_header(c->in, c->head.len, "x-ttsbuf-request-id", &v, &n))
        return 0;
    if (n == 0 || n > TB_SERVE_RID_MAX)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!rid_char(v[i]))
            return -1;
    memcpy(c->lg.rid, v, n);
    c->lg.rid[n] = '\0';
    return 0;
}

void tb_serve_log_closed(struct tb_serve_conn *c)
{
    if (c->lg.closed < 0)
        c->lg.closed = tb_clock_mono_ns();
}

/* The tokens the plan would send in all: those it yielded, and the rest
 * of it, without the tokens a drop@K or error@K item stands for. */
static uint64_t tokens_planned(const struct tb_serve_conn *c)
{
    struct tb_serve_plan p = c->plan;
    struct tb_serve_item it;
    uint64_t excl = c->item.drop || c->item.error ? c->item.ntok : 0;
    while (tb_serve_plan_next(&p, &it))
        if (it.drop || it.error)
            excl = it.ntok;
    return p.tok - excl;
}

void tb_serve_log_end(struct tb_serve_loop *s, struct tb_serve_conn *c, enum tb_serve_end end)
{
    struct tb_serve_request r;
    if (c->lg.done)
        return;
    c->lg.done = 1;
    if (s->srv->request_log == NULL)
        return;
    memset(&r, 0, sizeof(r));
    r.route = c->lg.route;
    r.request_id = c->lg.rid[0] != '\0' ? c->lg.rid : NULL;
    r.stream = c->lg.stream;
    r.end = end;
    r.http_status = c->lg.status;
    r.received = c->lg.received;
    r.first_byte = c->lg.first_byte;
    r.late_max = c->lg.late_max;
    r.closed = end == TB_SERVE_END_CLIENT_CLOSED ? c->lg.closed : -1;
    r.ended = r.closed >= 0 ? r.closed : tb_clock_mono_ns();
    r.prompt_tokens = c->lg.prompt_tokens;
    r.tokens_sent = r.tokens_planned = r.tokens_unsent = -1;
    if (c->lg.planned) {
        r.tokens_sent = (int64_t)c->sent_tokens;
        r.tokens_planned = (int64_t)tokens_planned(c);
        if (r.tokens_planned < r.tokens_sent)
            r.tokens_planned = r.tokens_sent; /* cannot happen: for the reader */
        r.tokens_unsent = r.tokens_planned - r.tokens_sent;
    }
    r.seeded = c->lg.seeded;
    r.seed = c->lg.seed;
    r.tts_chars = c->lg.tts_chars;
    r.audio_sent = c->lg.audio_sent;
    r.audio_planned = c->lg.audio_planned;
    r.bytes_sent = c->lg.bytes;
    r.refused_over = c->lg.over;
    r.retry_after = c->lg.over != NULL ? (int64_t)s->srv->retry_after : -1;
    r.tool_call = c->lg.tool_call;
    r.tool_result = c->lg.tool_result;
    r.tool_args = c->lg.tool_args[0] != '\0' ? c->lg.tool_args : NULL;
    /* One line at a time, whichever loop ends it: seq is taken under the
     * same lock, so the lines come in the order of their seq. */
    pthread_mutex_lock(&s->srv->log_mu);
    r.seq = ++s->srv->log_seq;
    s->srv->request_log(s->srv->request_log_ud, &r);
    pthread_mutex_unlock(&s->srv->log_mu);
}
