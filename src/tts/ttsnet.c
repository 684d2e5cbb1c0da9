/*
 * ttsnet.c - the TTS client (ttsnet.h): the options resolved (the URL a
 * user wrote, the dialect's path), the endpoint said once, and every
 * call handed to the client of the dialect's wire: ttshttp.c (a request
 * per chunk over libcurl's multi interface) or ttsws.c (one WebSocket per
 * stream).  Both stand on one engine (ttscore.h) and differ only in the
 * wire.
 */
#include "ttsbuf/ttsnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_xfer.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/ttsws.h"
#include "ttsbuf/utf8.h"
#include "ttshttp.h"
#include "ttsws_conn.h"

struct tb_ttsnet {
    struct tb_ttsws *ws;  /* a WebSocket dialect's client, or NULL */
    struct tb_ttshttp *h; /* else the HTTP one */
};

void tb_ttsnet_opts_init(struct tb_ttsnet_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->api = TB_TTSAPI_OPENAI;
    o->rate = TB_TTSAPI_RATE;
    o->concurrency = 1;
    o->max_redirects = -1;
}

/* The endpoint, for -v: once, as the client starts. */
static void say_endpoint(const struct tb_ttsnet_opts *o, const struct tb_tts_log *l)
{
    char line[700];
    if (o->log == NULL)
        return;
    snprintf(line, sizeof(line), "* TTS %s: %s %s, voice %s, model %s", l->api,
             o->ws ? "each chunk on one WebSocket to" : "each chunk POSTed to", l->url,
             l->voice[0] ? l->voice : "(none)", l->model[0] ? l->model : "(none)");
    o->log(o->log_ud, line);
}

/* o with the URL a user wrote resolved (tb_ttsapi_base): *r is o with
 * url and voice set to *base and *voice, which the caller frees. */
static int resolve(const struct tb_ttsnet_opts *o, struct tb_ttsnet_opts *r, char **base,
                   char **voice, char *err, size_t errlen)
{
    const struct tb_ttsapi_info *in = tb_ttsapi_info(o->api);
    const char *path = o->ws != 0 ? tb_ttsws_path(o->ws - 1) : in != NULL ? in->path : NULL;
    int rc;
    *r = *o;
    *base = *voice = NULL;
    if (o->url == NULL || o->url[0] == '\0')
        return tb_seterr(err, errlen, TB_EINVAL, "no TTS URL (the provider's base URL)");
    if (path == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS API %d",
                         o->ws != 0 ? o->ws - 1 : o->api);
    rc = o->ws == 0 ? tb_ttsapi_http_scheme(o->url, err, errlen)
                    : tb_ttsws_url_check(o->url, err, errlen);
    if (rc == 0)
        rc = tb_ttsapi_base(path, o->url, o->voice, base, voice, err, errlen);
    if (rc == 0 && *base == NULL)
        rc = TB_ENOMEM; /* cannot be: for the analyzer */
    r->url = *base;
    r->voice = *voice;
    return rc;
}

/* The client of o, whose url and voice are the resolved ones. */
static int create(const struct tb_ttsnet_opts *o, struct tb_ttsnet **out, char *err, size_t errlen)
{
    struct tb_ttsnet *c = calloc(1, sizeof(*c));
    int rc;
    if (c == NULL)
        return TB_ENOMEM;
    if (o->ws != 0)
        rc = tb_ttsws_create(o->ws - 1, o, &c->ws, err, errlen);
    else
        rc = tb_ttshttp_create(o, &c->h, err, errlen);
    if (rc != 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int tb_ttsnet_create(const struct tb_ttsnet_opts *o, struct tb_ttsnet **out, char *err,
                     size_t errlen)
{
    struct tb_ttsnet_opts r;
    char *base, *voice;
    int rc = resolve(o, &r, &base, &voice, err, errlen);
    *out = NULL;
    if (rc == 0)
        rc = create(&r, out, err, errlen);
    if (rc == 0 && *out != NULL)
        say_endpoint(o, tb_ttsnet_log(*out));
    free(base);
    free(voice);
    return rc;
}

int tb_ttsnet_describe(const struct tb_ttsnet_opts *o, struct tb_tts_log *head, char *err,
                       size_t errlen)
{
    struct tb_ttsnet_opts r;
    struct tb_ttsapi_params p;
    struct tb_ttsapi_req q;
    char *base, *voice;
    int api = o->ws != 0 ? tb_ttsws_base_api(o->ws - 1) : o->api;
    const struct tb_ttsapi_info *in = tb_ttsapi_info(api);
    int rc;
    tb_tts_log_init(head);
    if (in == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS API %d", api);
    rc = resolve(o, &r, &base, &voice, err, errlen);
    if (rc == 0 && base == NULL)
        rc = TB_ENOMEM; /* cannot be: for the analyzer */
    if (rc == 0 && o->ws != 0) {
        tb_http_redact(base, strlen(base), head->url, sizeof(head->url));
    } else if (rc == 0) {
        memset(&p, 0, sizeof(p));
        p.base = base;
        p.model = r.model;
        p.voice = voice;
        p.rate = r.rate;
        rc = tb_ttsapi_build(api, &p, "", 0, &q, err, errlen);
        if (rc == 0)
            tb_http_redact(q.url, strlen(q.url), head->url, sizeof(head->url));
        tb_ttsapi_req_free(&q);
    }
    if (rc == 0) {
        snprintf(head->api, sizeof(head->api), "%s",
                 o->ws != 0 ? tb_ttsws_name(o->ws - 1) : in->name);
        tb_utf8_copy(head->model, sizeof(head->model),
                     r.model != NULL && r.model[0] != '\0' ? r.model : in->model);
        tb_utf8_copy(head->voice, sizeof(head->voice), voice != NULL ? voice : in->voice);
        head->concurrency = o->concurrency > 0 ? o->concurrency : 1;
        head->mock = o->mock;
    }
    free(base);
    free(voice);
    return rc;
}

void tb_ttsnet_destroy(struct tb_ttsnet *c)
{
    if (c == NULL)
        return;
    tb_ttsws_destroy(c->ws);
    tb_ttshttp_destroy(c->h);
    free(c);
}

int tb_ttsnet_submit(struct tb_ttsnet *c, const char *text, size_t len)
{
    return c->ws != NULL ? tb_ttsws_submit(c->ws, text, len) : tb_ttshttp_submit(c->h, text, len);
}

int tb_ttsnet_step(struct tb_ttsnet *c, int timeout_ms)
{
    return tb_ttsnet_step_fd(c, -1, timeout_ms);
}

int tb_ttsnet_step_fd(struct tb_ttsnet *c, int fd, int timeout_ms)
{
    return c->ws != NULL ? tb_ttsws_step_fd(c->ws, fd, timeout_ms)
                         : tb_ttshttp_step_fd(c->h, fd, timeout_ms);
}

int tb_ttsnet_finish(struct tb_ttsnet *c, double deadline)
{
    return c->ws != NULL ? tb_ttsws_finish(c->ws, deadline) : tb_ttshttp_finish(c->h, deadline);
}

void tb_ttsnet_cancel(struct tb_ttsnet *c)
{
    if (c->ws != NULL)
        tb_ttsws_cancel(c->ws);
    else
        tb_ttshttp_cancel(c->h);
}

const struct tb_tts_log *tb_ttsnet_log(const struct tb_ttsnet *c)
{
    return c->ws != NULL ? tb_ttsws_log(c->ws) : tb_ttshttp_log(c->h);
}

void tb_ttsnet_take_log(struct tb_ttsnet *c, struct tb_tts_log *out)
{
    if (c->ws != NULL)
        tb_ttsws_take_log(c->ws, out);
    else
        tb_ttshttp_take_log(c->h, out);
}

uint32_t tb_ttsnet_failed(const struct tb_ttsnet *c)
{
    return c->ws != NULL ? tb_ttsws_failed(c->ws) : tb_ttshttp_failed(c->h);
}
