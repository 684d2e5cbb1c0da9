/*
 * serve_route.c - the mock server's routing (see serve_route.h): a
 * complete request goes to the dialect its path names, with the faults
 * its model name asks for, to a stream (serve_stream.c) or a whole body
 * (serve_body.c); or it is answered at once (serve_reply.c): the fault
 * statuses, the captive-portal page, the model list, 404 and 405.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_body.h"
#include "serve_conn.h"
#include "serve_http.h"
#include "serve_json.h"
#include "serve_log.h"
#include "serve_plan.h"
#include "serve_priv.h"
#include "serve_reply.h"
#include "serve_route.h"
#include "serve_stream.h"
#include "serve_tool.h"
#include "serve_tts.h"
#include "ttsbuf/error.h"

static const char html_page[] =
    "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n"
    "<body><h1>Sign in to continue</h1><p>This network requires you to sign in "
    "before you can reach the internet.</p></body></html>\n";

static int fault_status(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    int st = c->f.status;
    const char *reason = tb_serve_http_reason(st);
    const char *extra = st == 429 || st == 503 ? "Retry-After: 1\r\n" : NULL;
    const char *type = st == 429   ? "requests"
                       : st >= 500 ? "server_error"
                                   : "invalid_request_error";
    const char *code = st == 401   ? "invalid_api_key"
                       : st == 404 ? "model_not_found"
                       : st == 429 ? "rate_limit_exceeded"
                                   : NULL;
    char msg[256];
    int n;

    if (c->f.status_html) {
        /* What a gateway in front of the API sends: nginx's error page. */
        n = snprintf(msg, sizeof(msg),
                     "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n"
                     "<center><h1>%d %s</h1></center>\r\n<hr><center>ttsbuf</center>\r\n"
                     "</body>\r\n</html>\r\n",
                     st, reason, st, reason);
        return tb_serve_respond(s, c, st, "text/html", msg, (size_t)n, extra);
    }
    if (st == 429)
        snprintf(msg, sizeof(msg),
                 "Rate limit reached for requests (ttsbuf fault "
                 "status@429). Please try again in 1s.");
    else if (st == 500)
        snprintf(msg, sizeof(msg),
                 "The server had an error while processing your request. "
                 "Sorry about that! (ttsbuf fault status@500)");
    else
        snprintf(msg, sizeof(msg), "%s (ttsbuf fault status@%d)", reason, st);
    return tb_serve_respond_error(s, c, st, msg, type, code, extra);
}

static int path_is(const struct tb_serve_conn *c, const char *path)
{
    return c->head.path_len == strlen(path) &&
           memcmp(c->in + c->head.path_off, path, c->head.path_len) == 0;
}

/* "METHOD /path" of the request, for messages. */
static void request_name(const struct tb_serve_conn *c, char *buf, size_t len)
{
    const struct tb_serve_http_head *h = &c->head;
    snprintf(buf, len, "%.*s %.*s", (int)(h->method_len > 16 ? 16 : h->method_len),
             c->in + h->method_off, (int)(h->path_len > 200 ? 200 : h->path_len),
             c->in + h->path_off);
}

static int not_allowed(struct tb_serve_loop *s, struct tb_serve_conn *c, const char *allow)
{
    char name[232], msg[280], extra[32];
    request_name(c, name, sizeof(name));
    snprintf(msg, sizeof(msg), "Invalid method for URL (%s)", name);
    snprintf(extra, sizeof(extra), "Allow: %s\r\n", allow);
    return tb_serve_respond_error(s, c, 405, msg, "invalid_request_error", NULL, extra);
}

/* Frees the stream drawn for c (request_stream), when it closes. */
static void own_free(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    if (c->own == NULL)
        return;
    tb_serve_mem_give(s->srv, c->own_bytes);
    tb_stream_free(c->own);
    free(c->own);
    c->own = NULL;
}

/* The stream c's request gets (serve.h's Streams): the server's, or one
 * drawn for it, held under the memory budget until c closes.  0; 1 over
 * the budget; -1 when the hook failed or memory ran out. */
static int request_stream(struct tb_serve_loop *s, struct tb_serve_conn *c,
                          const struct tb_stream **out)
{
    struct tb_serve *srv = s->srv;
    const char *rid = c->lg.rid[0] != '\0' ? c->lg.rid : NULL;
    size_t bytes;
    *out = srv->stream;
    if (srv->stream_for == NULL)
        return 0;
    c->lg.seed = tb_serve_request_seed(srv->seed, rid,
                                       rid != NULL ? 0 : atomic_fetch_add(&srv->draws, 1) + 1);
    c->lg.seeded = 1;
    c->own = calloc(1, sizeof(*c->own));
    if (c->own == NULL)
        return -1;
    tb_stream_init(c->own);
    c->on_close = own_free;
    if (srv->stream_for(srv->stream_for_ud, c->lg.seed, c->own) != 0)
        return -1;
    bytes = c->own->n * sizeof(*c->own->ev) + (size_t)c->own->text_len;
    if (tb_serve_mem_take(srv, bytes, 1) != 0)
        return 1;
    c->own_bytes = bytes;
    *out = c->own;
    return 0;
}

/* The request is complete (read at t0): answer it. */
int tb_serve_dispatch(struct tb_serve_loop *s, struct tb_serve_conn *c, int64_t t0)
{
    const struct tb_serve_http_head *h = &c->head;
    const struct tb_stream *st;
    uint64_t draw = 0;
    enum tb_api api;
    char msg[512], why[320], name[232];
    const char *plus;
    int rc;

    c->t0 = t0;
    c->ctx.id = atomic_fetch_add(&s->srv->next_id, 1) + 1;
    c->lg.received = t0;
    if (tb_serve_log_rid(c) != 0)
        return tb_serve_respond_error(s, c, 400,
                                      "X-Ttsbuf-Request-Id must be 1 to 64 characters of A-Z a-z "
                                      "0-9 . _ : -",
                                      "invalid_request_error", NULL, NULL);
    if (path_is(c, "/v1/models")) {
        char *m;
        c->lg.route = "models";
        if (h->method != TB_SERVE_HTTP_GET)
            return not_allowed(s, c, "GET");
        m = tb_serve_json_models();
        if (m == NULL)
            return tb_serve_conn_close(s, c, 1);
        rc = tb_serve_respond(s, c, 200, "application/json", m, strlen(m), NULL);
        tb_serve_json_free(m);
        return rc;
    }
    if (path_is(c, "/v1/chat/completions")) {
        api = TB_API_CHAT;
        c->lg.route = "chat";
    } else if (path_is(c, "/v1/completions")) {
        api = TB_API_COMPLETIONS;
        c->lg.route = "completions";
    } else if (path_is(c, "/v1/messages")) {
        api = TB_API_ANTHROPIC;
        c->lg.route = "anthropic";
    } else if (path_is(c, "/api/chat")) {
        api = TB_API_OLLAMA;
        c->lg.route = "ollama";
    } else if (tb_serve_tts_is_route(c)) {
        return tb_serve_tts_dispatch(s, c);
    } else {
        request_name(c, name, sizeof(name));
        snprintf(msg, sizeof(msg), "Invalid URL (%s)", name);
        return tb_serve_respond_error(s, c, 404, msg, "invalid_request_error", NULL, NULL);
    }
    if (h->method != TB_SERVE_HTTP_POST)
        return not_allowed(s, c, "POST");
    c->ctx.api = api; /* errors from here on take the dialect's shape */
    if (tb_serve_mem_held(s->srv) >= s->srv->budget)
        return tb_serve_busy(s, c);
    rc = tb_serve_json_request(c->in + h->len, c->need - h->len, api, &c->rq, msg, sizeof(msg));
    if (rc == TB_ENOMEM)
        return tb_serve_conn_close(s, c, 1);
    if (rc != 0)
        return tb_serve_respond_error(s, c, 400, msg, "invalid_request_error", NULL, NULL);
    tb_serve_in_free(c); /* the request is copied out; the head's offsets die here */
    c->lg.prompt_tokens = (int64_t)c->rq.prompt_tokens;
    c->lg.stream = c->rq.stream != 0;
    /* Over --max-inflight once it is read, so --log says what it asked
     * (its stream flag, its prompt) of a refused request too. */
    if (tb_serve_slot_take(s, c, 0) != 0)
        return tb_serve_over_inflight(s, c);

    c->ctx.api = api;
    c->ctx.model = c->rq.model;
    c->f = s->srv->faults;
    plus = strchr(c->rq.model, '+');
    if (plus != NULL && tb_faults_parse(plus + 1, &c->f, why, sizeof(why)) != 0) {
        snprintf(msg, sizeof(msg), "Invalid fault spec in the model name: %s", why);
        return tb_serve_respond_error(s, c, 400, msg, "invalid_request_error", NULL, NULL);
    }
    c->lg.fault = c->f.status != 0 || (c->f.reject_usage && c->rq.stream_options) || c->f.html;
    if (c->f.status != 0)
        return fault_status(s, c);
    if (c->f.reject_usage && c->rq.stream_options)
        return tb_serve_respond_error(s, c, 400,
                                      "Unrecognized request argument supplied: stream_options",
                                      "invalid_request_error", NULL, NULL);
    if (c->f.html)
        return tb_serve_respond(s, c, 200, "text/html", html_page, sizeof(html_page) - 1, NULL);
    rc = request_stream(s, c, &st);
    if (rc != 0)
        return rc > 0 ? tb_serve_busy(s, c) : tb_serve_conn_close(s, c, 1);
    tb_serve_plan_init(&c->plan, st, &c->f, api == TB_API_COMPLETIONS, c->rq.max_tokens);
    tb_serve_plan_prefill(&c->plan, s->srv->prefill, c->rq.prompt_tokens);
    c->lg.planned = 1;
    c->lg.tool_result = c->rq.tool_result ? c->rq.tool_shape : -1;
    c->lg.tool_call = c->rq.tools ? 0 : -1;
    snprintf(c->lg.tool_args, sizeof(c->lg.tool_args), "%s", c->rq.tool_args);
    if (tb_serve_tool_drawn(s->srv, c, &draw)) {
        c->lg.tool_call = 1;
        return tb_serve_tool_stream(s, c, draw);
    }
    return c->rq.stream ? tb_serve_stream_start(s, c) : tb_serve_body_start(s, c);
}
