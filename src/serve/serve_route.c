/*
 * serve_route.c - the mock server's routing (see serve_priv.h): a complete
 * request goes to the dialect its path names, with the faults its model
 * name asks for; and the responses that are not a stream: errors in each
 * dialect's shape, the fault statuses, the captive-portal page, the
 * model list, and the refusals (405, 413, 503 over the memory budget).
 */
#include <stdio.h>
#include <string.h>

#include "serve_priv.h"
#include "ttsbuf/error.h"

int tb_serve_respond(struct tb_serve *s, struct tb_serve_conn *c, int status, const char *ctype,
                     const char *body, size_t len, const char *extra)
{
    char head[512];
    size_t hl = tb_serve_http_resp(head, sizeof(head), status, ctype, (long long)len, extra);
    if (hl + len > BUF_FREE && s->mem + hl + len > s->budget)
        return tb_serve_busy(s, c); /* a big body over the budget: refused, not cut */
    if (tb_serve_out_room(c, hl + len) == 0) {
        tb_serve_out_add(c, head, hl);
        tb_serve_out_add(c, body, len);
    }
    s->st.requests++;
    return tb_serve_finish(s, c);
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

int tb_serve_respond_error(struct tb_serve *s, struct tb_serve_conn *c, int status, const char *msg,
                           const char *type, const char *code, const char *extra)
{
    /* Each dialect's own error shape, once the route is known. */
    char *body = c->ctx.api == TB_API_ANTHROPIC
                     ? tb_serve_json_anth_error(anth_type(status), msg)
                 : c->ctx.api == TB_API_OLLAMA ? tb_serve_json_ollama_error(msg)
                                                     : tb_serve_json_error(msg, type, code);
    int rc;
    if (body == NULL)
        return tb_serve_conn_close(s, c, 1);
    rc = tb_serve_respond(s, c, status, "application/json", body, strlen(body), extra);
    tb_serve_json_free(body);
    return rc;
}

/* ---- Requests --------------------------------------------------------- */

static const char html_page[] =
    "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n"
    "<body><h1>Sign in to continue</h1><p>This network requires you to sign in "
    "before you can reach the internet.</p></body></html>\n";

static int fault_status(struct tb_serve *s, struct tb_serve_conn *c)
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

static int not_allowed(struct tb_serve *s, struct tb_serve_conn *c, const char *allow)
{
    char name[232], msg[280], extra[32];
    request_name(c, name, sizeof(name));
    snprintf(msg, sizeof(msg), "Invalid method for URL (%s)", name);
    snprintf(extra, sizeof(extra), "Allow: %s\r\n", allow);
    return tb_serve_respond_error(s, c, 405, msg, "invalid_request_error", NULL, extra);
}

/* The request is complete (read at t0): answer it. */
int tb_serve_dispatch(struct tb_serve *s, struct tb_serve_conn *c, int64_t t0)
{
    const struct tb_serve_http_head *h = &c->head;
    enum tb_api api;
    char msg[512], why[320], name[232];
    const char *plus;
    int rc;

    c->t0 = t0;
    c->ctx.id = ++s->next_id;
    if (path_is(c, "/v1/models")) {
        char *m;
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
    } else if (path_is(c, "/v1/completions")) {
        api = TB_API_COMPLETIONS;
    } else if (path_is(c, "/v1/messages")) {
        api = TB_API_ANTHROPIC;
    } else if (path_is(c, "/api/chat")) {
        api = TB_API_OLLAMA;
    } else {
        request_name(c, name, sizeof(name));
        snprintf(msg, sizeof(msg), "Invalid URL (%s)", name);
        return tb_serve_respond_error(s, c, 404, msg, "invalid_request_error", NULL, NULL);
    }
    if (h->method != TB_SERVE_HTTP_POST)
        return not_allowed(s, c, "POST");
    c->ctx.api = api; /* errors from here on take the dialect's shape */
    if (s->mem >= s->budget)
        return tb_serve_busy(s, c);
    rc = tb_serve_json_request(c->in + h->len, c->need - h->len, api, &c->rq, msg, sizeof(msg));
    if (rc == TB_ENOMEM)
        return tb_serve_conn_close(s, c, 1);
    if (rc != 0)
        return tb_serve_respond_error(s, c, 400, msg, "invalid_request_error", NULL, NULL);
    tb_serve_in_free(c); /* the request is copied out; the head's offsets die here */

    c->ctx.api = api;
    c->ctx.model = c->rq.model;
    c->f = s->faults;
    plus = strchr(c->rq.model, '+');
    if (plus != NULL && tb_faults_parse(plus + 1, &c->f, why, sizeof(why)) != 0) {
        snprintf(msg, sizeof(msg), "Invalid fault spec in the model name: %s", why);
        return tb_serve_respond_error(s, c, 400, msg, "invalid_request_error", NULL, NULL);
    }
    if (c->f.status != 0)
        return fault_status(s, c);
    if (c->f.reject_usage && c->rq.stream_options)
        return tb_serve_respond_error(s, c, 400,
                                      "Unrecognized request argument supplied: stream_options",
                                      "invalid_request_error", NULL, NULL);
    if (c->f.html)
        return tb_serve_respond(s, c, 200, "text/html", html_page, sizeof(html_page) - 1, NULL);
    tb_serve_plan_init(&c->plan, s->stream, &c->f, api == TB_API_COMPLETIONS, c->rq.max_tokens);
    return c->rq.stream ? tb_serve_stream_start(s, c) : tb_serve_body_start(s, c);
}

/* New work over the memory budget: 503, and the request's buffer (and a
 * body gathered so far) is freed at once. */
int tb_serve_busy(struct tb_serve *s, struct tb_serve_conn *c)
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
             s->budget);
    return tb_serve_respond_error(s, c, 503, msg, "server_error", NULL, "Retry-After: 1\r\n");
}

int tb_serve_too_large(struct tb_serve *s, struct tb_serve_conn *c)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "Request too large: over %u bytes of head and body.",
             TB_SERVE_REQUEST_MAX);
    return tb_serve_respond_error(s, c, 413, msg, "invalid_request_error", NULL, NULL);
}
