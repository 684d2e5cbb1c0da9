/*
 * serve_reply.c - mock-server responses written whole (see serve_reply.h):
 * a head and a body, errors in each dialect's shape, and the refusals
 * (413 too large, 503 over the memory budget or the connection cap, 429
 * over the requests in flight).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "serve_conn.h"
#include "serve_http.h"
#include "serve_json.h"
#include "serve_priv.h"
#include "serve_reply.h"

int tb_serve_respond(struct tb_serve_loop *s, struct tb_serve_conn *c, int status,
                     const char *ctype, const char *body, size_t len, const char *extra)
{
    char head[512];
    size_t hl = tb_serve_http_resp(head, sizeof(head), status, ctype, (long long)len, extra);
    if (hl + len > BUF_FREE && tb_serve_mem_held(s->srv) + hl + len > s->srv->budget)
        return tb_serve_busy(s, c); /* a big body over the budget: refused, not cut */
    c->lg.status = status;
    if (c->lg.stream < 0)
        c->lg.stream = 0;
    if (tb_serve_out_room(c, hl + len) == 0) {
        tb_serve_out_add(c, head, hl);
        tb_serve_out_add(c, body, len);
    }
    s->st.requests++;
    return tb_serve_finish(s, c);
}

void tb_serve_plan_head(const struct tb_serve_conn *c, const char *first, char *buf, size_t len)
{
    snprintf(buf, len, "%sX-Ttsbuf-Prompt-Tokens: %llu\r\nX-Ttsbuf-Prefill: %lld.%09lld\r\n", first,
             (unsigned long long)c->rq.prompt_tokens, (long long)(c->plan.prefill / 1000000000LL),
             (long long)(c->plan.prefill % 1000000000LL));
}

/* Anthropic's error type for an HTTP status (its API reference's table). */
static const char *anth_type(int status)
{
    switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
    }
}

int tb_serve_respond_error(struct tb_serve_loop *s, struct tb_serve_conn *c, int status,
                           const char *msg, const char *type, const char *code, const char *extra)
{
    /* Each dialect's own error shape, once the route is known. */
    char *body = c->ctx.api == TB_API_ANTHROPIC ? tb_serve_json_anth_error(anth_type(status), msg)
                 : c->ctx.api == TB_API_OLLAMA  ? tb_serve_json_ollama_error(msg)
                                                : tb_serve_json_error(msg, type, code);
    int rc;
    if (body == NULL)
        return tb_serve_conn_close(s, c, 1);
    rc = tb_serve_respond(s, c, status, "application/json", body, strlen(body), extra);
    tb_serve_json_free(body);
    return rc;
}

/* New work over the memory budget: 503, and the request's buffer (and a
 * body gathered so far) is freed at once. */
int tb_serve_busy(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    char msg[160];
    tb_serve_in_free(c);
    tb_serve_sbuf_free(s, &c->content);
    tb_serve_sbuf_free(s, &c->reasoning);
    c->have_head = 0;
    s->st.refused++;
    snprintf(msg, sizeof(msg),
             "Server busy: its memory budget (%zu bytes for requests and unsent output) is in "
             "use. Retry later.",
             s->srv->budget);
    return tb_serve_respond_error(s, c, 503, msg, "server_error", NULL, "Retry-After: 1\r\n");
}

int tb_serve_over_conns(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    char msg[200];
    s->st.over_conns++;
    snprintf(msg, sizeof(msg),
             "Server busy: it serves at most %zu connection%s at once (ttsbuf serve "
             "--max-connections). Retry later.",
             s->srv->max_conns, s->srv->max_conns == 1 ? "" : "s");
    return tb_serve_respond_error(s, c, 503, msg, "server_error", NULL, "Retry-After: 1\r\n");
}

int tb_serve_too_large(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "Request too large: over %u bytes of head and body.",
             TB_SERVE_REQUEST_MAX);
    return tb_serve_respond_error(s, c, 413, msg, "invalid_request_error", NULL, NULL);
}

int tb_serve_slot_take(struct tb_serve_loop *s, struct tb_serve_conn *c, int tts)
{
    struct tb_serve *srv = s->srv;
    size_t cap = tts ? srv->tts_max_inflight : srv->max_inflight;
    atomic_size_t *n = tts ? &srv->tts_inflight : &srv->inflight;
    if (cap == 0 || c->slot != NULL)
        return 0;
    if (atomic_fetch_add(n, 1) >= cap) {
        atomic_fetch_sub(n, 1);
        c->lg.over = tts ? "tts_max_inflight" : "max_inflight";
        if (tts)
            s->st.tts_over_inflight++;
        else
            s->st.over_inflight++;
        return 1;
    }
    c->slot = n;
    return 0;
}

void tb_serve_retry_after(const struct tb_serve *srv, char *buf, size_t len)
{
    snprintf(buf, len, "Retry-After: %u\r\n", srv->retry_after);
}

/* The message follows OpenAI's 429 "Rate limit reached for requests"
 * (help.openai.com/en/articles/6891829; body {"error":{"message","type":
 * "requests","param":null,"code":"rate_limit_exceeded"}}); Anthropic's
 * errors page gives {"type":"error","error":{"type":"rate_limit_error",
 * "message"}} for 429 with a retry-after header; Ollama's api/errors,
 * {"error":"..."} (sources: tests/data/rate_limit_sources.txt). */
int tb_serve_over_inflight(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    char msg[200], extra[40];
    tb_serve_retry_after(s->srv, extra, sizeof(extra));
    snprintf(msg, sizeof(msg),
             "Rate limit reached for requests: at most %zu in flight at once (ttsbuf serve "
             "--max-inflight). Please try again in %us.",
             s->srv->max_inflight, s->srv->retry_after);
    return tb_serve_respond_error(s, c, 429, msg, "requests", "rate_limit_exceeded", extra);
}
