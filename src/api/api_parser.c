/*
 * api_parser.c - the event parser of api.h: a response body's bytes, in any
 * split, framed as SSE (through sse.c) or NDJSON lines (here), each event
 * read in the frame every dialect shares (the end data, the JSON through
 * evjson.c, an error object, the shape) and then by its dialect's row of
 * the table (api_priv.h); an event in another dialect's shape stops the
 * feed.  cJSON stays in the api/ files: callers get plain values and text
 * copied into the parser's own buffer.
 */
#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_priv.h"
#include "base/jsontext.h"
#include "evjson.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/sse.h"

struct tb_api_parser {
    enum tb_api api;
    enum tb_api asked; /* the dialect created with (reset returns to it) */
    int adopt;         /* the first shaped event of the OpenAI pair sets api */
    int adopted;       /* ... and it came */
    struct tb_sse *sse;
    char *line; /* NDJSON: the unfinished line */
    size_t line_len, line_cap;
    uint64_t offset, events;
    struct tb_jsontext_texts texts; /* text handed out */
    struct tb_api_argbuf args;      /* the event's tool arguments handed out */
    /* the feed in progress */
    tb_api_fn fn;
    void *ud;
    int rc;
    char *err;
    size_t errlen;
};

int tb_api_parser_create(enum tb_api api, struct tb_api_parser **out)
{
    struct tb_api_parser *p;
    *out = NULL;
    if ((unsigned)api >= TB_API__COUNT)
        return TB_EINVAL;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return TB_ENOMEM;
    p->api = p->asked = api;
    if (tb_sse_create(0, 0, &p->sse) != 0) {
        tb_api_parser_destroy(p);
        return TB_ENOMEM;
    }
    *out = p;
    return 0;
}

void tb_api_parser_destroy(struct tb_api_parser *p)
{
    if (p == NULL)
        return;
    tb_sse_destroy(p->sse);
    free(p->line);
    free(p->args.buf);
    tb_jsontext_free(&p->texts);
    free(p);
}

void tb_api_parser_reset(struct tb_api_parser *p)
{
    tb_sse_reset(p->sse);
    tb_jsontext_reset(&p->texts);
    p->line_len = 0;
    p->offset = p->events = 0;
    p->api = p->asked;
    p->adopted = 0;
}

void tb_api_parser_adopt(struct tb_api_parser *p)
{
    p->adopt = 1;
}

size_t tb_api_pending(const struct tb_api_parser *p)
{
    return tb_api_row(p->api)->info.framing == TB_API_SSE ? tb_sse_pending(p->sse) : p->line_len;
}

uint64_t tb_api_events(const struct tb_api_parser *p)
{
    return p->events;
}

uint64_t tb_api_comments(const struct tb_api_parser *p)
{
    return tb_sse_comments(p->sse);
}

uint64_t tb_api_replaced(const struct tb_api_parser *p)
{
    return tb_jsontext_replaced(&p->texts);
}

/* One event's data (len bytes, need not be NUL-terminated) in dialect d,
 * the frame every dialect shares: the end data, the JSON (evjson.h), an
 * error object, the shape, then d->fields, then the texts kept in t
 * (surrogate halves paired across events).  Returns as
 * tb_api_parse_event. */
static int event(const struct tb_api_dialect *d, struct tb_jsontext_texts *t,
                 struct tb_api_argbuf *ab, const char *type, size_t type_len, const char *data,
                 size_t len, struct tb_api_delta *out, char *err, size_t errlen)
{
    struct tb_api_fields f = {NULL, NULL, "the event text", "", ab};
    size_t at = 0;
    const char *c = NULL, *r = NULL;
    size_t cl = 0, rl = 0;
    cJSON *root;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->usage_completion = out->usage_prompt = -1;
    out->shape = -1;
    tb_stream_timing_init(&out->server);
    if (d->end_data != NULL && len == strlen(d->end_data) && memcmp(data, d->end_data, len) == 0) {
        out->done = 1; /* a surrogate half still waiting ends here */
        return tb_evjson_keep(t, NULL, 0, NULL, 0, 1, f.what, out, err, errlen);
    }
    root = tb_evjson_parse(data, len, &rc, err, errlen);
    if (root == NULL)
        return rc;
    if (tb_evjson_error(root, out)) {
        /* The stream ends here: a half still waiting is counted. */
        rc = tb_evjson_keep(t, NULL, 0, NULL, 0, 1, f.what, out, err, errlen);
        goto out;
    }
    out->shape = tb_evjson_shape(root);
    ab->len = 0;
    d->fields(root, type, type_len, out, &f);
    if (f.bad[0] != '\0') {
        rc = tb_seterr(err, errlen, TB_EFORMAT, "%s", f.bad);
        goto out;
    }
    /* each item's argument bytes follow the item's before (api_tool.h) */
    for (uint32_t i = 0; i < out->ntools; i++) {
        out->tools[i].args = out->tools[i].args_len > 0 ? ab->buf + at : NULL;
        at += out->tools[i].args_len;
    }
    tb_evjson_text(f.text, &c, &cl);
    tb_evjson_text(f.thinking, &r, &rl);
    rc = tb_evjson_keep(t, c, cl, r, rl, out->done, f.what, out, err, errlen);
out:
    cJSON_Delete(root);
    return rc;
}

int tb_api_parse_event(struct tb_api_parser *p, const char *type, size_t type_len, const char *data,
                       size_t len, struct tb_api_delta *out, char *err, size_t errlen)
{
    return event(tb_api_row(p->api), &p->texts, &p->args, type, type_len, data, len, out, err,
                 errlen);
}

static int deliver(struct tb_api_parser *p, const char *type, size_t tl, const char *data,
                   size_t len)
{
    struct tb_api_delta d;
    char e[200];
    int rc;
    p->events++;
    if (len == 0)
        return 0;
    if (p->api == TB_API_OLLAMA && ((len >= 5 && memcmp(data, "data:", 5) == 0) ||
                                    (len >= 6 && memcmp(data, "event:", 6) == 0))) {
        p->rc = tb_seterr(p->err, p->errlen, TB_EFORMAT,
                          "the line ending at stream byte %llu is an SSE event, not the NDJSON "
                          "of the ollama dialect asked for: is --api right?",
                          (unsigned long long)p->offset);
        return p->rc;
    }
    rc = tb_api_parse_event(p, type, tl, data, len, &d, e, sizeof(e));
    if (rc == 0 && p->adopt && !p->adopted &&
        (d.shape == TB_API_CHAT || d.shape == TB_API_COMPLETIONS)) {
        p->api = (enum tb_api)d.shape; /* the OpenAI pair share one event reader */
        p->adopted = 1;
    }
    if (rc == 0 && d.shape >= 0 && d.shape != (int)p->api) {
        /* Read on, and a chat stream on /completions would "work" with
         * the wrong endpoint's numbers; Anthropic's and Ollama's readers
         * would find no text at all.  Either way the run is not what was
         * asked for: say so, with what was received kept. */
        p->rc =
            tb_seterr(p->err, p->errlen, TB_EFORMAT,
                      "the event ending at stream byte %llu has the %s dialect's fields, not "
                      "those of the %s dialect asked for: is --api right?",
                      (unsigned long long)p->offset, tb_api_row((enum tb_api)d.shape)->info.name,
                      tb_api_row(p->api)->info.name);
        return p->rc;
    }
    if (rc == TB_EFORMAT) {
        p->rc = tb_seterr(p->err, p->errlen, rc, "bad event JSON ending at stream byte %llu: %s",
                          (unsigned long long)p->offset, e);
        return rc;
    }
    if (rc != 0) {
        p->rc = tb_seterr(p->err, p->errlen, rc, "out of memory");
        return rc;
    }
    rc = p->fn(p->ud, &d, p->offset);
    if (rc != 0)
        p->rc = rc;
    return rc;
}

static int on_sse(void *ud, const struct tb_sse_event *ev)
{
    struct tb_api_parser *p = ud;
    p->offset = ev->offset;
    return deliver(p, ev->type, ev->type_len, ev->data, ev->data_len) != 0;
}

/* NDJSON: one JSON value a line, LF or CRLF; blank lines skipped. */
static int feed_ndjson(struct tb_api_parser *p, const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t n = (nl != NULL ? (size_t)(nl - buf) : len) - i;
        if (p->line_len + n > TB_API_LINE_MAX)
            return tb_seterr(p->err, p->errlen, TB_ETOOBIG, "line over %u bytes at byte %llu",
                             TB_API_LINE_MAX,
                             (unsigned long long)(p->offset + TB_API_LINE_MAX - p->line_len));
        if (p->line_len + n > p->line_cap) {
            size_t cap = p->line_cap ? p->line_cap : 4096;
            char *nb;
            while (cap < p->line_len + n)
                cap *= 2;
            nb = realloc(p->line, cap);
            if (nb == NULL)
                return tb_seterr(p->err, p->errlen, TB_ENOMEM, "out of memory");
            p->line = nb;
            p->line_cap = cap;
        }
        if (n > 0) /* an empty line with no buffer yet: NULL + 0 is undefined */
            memcpy(p->line + p->line_len, buf + i, n);
        p->line_len += n;
        p->offset += n;
        i += n;
        if (nl == NULL)
            break;
        i++;
        p->offset++;
        {
            size_t m = p->line_len;
            int rc;
            while (m > 0 &&
                   (p->line[m - 1] == '\r' || p->line[m - 1] == ' ' || p->line[m - 1] == '\t'))
                m--;
            p->line_len = 0;
            rc = m > 0 ? deliver(p, NULL, 0, p->line, m) : 0;
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

int tb_api_feed(struct tb_api_parser *p, const char *buf, size_t len, tb_api_fn fn, void *ud,
                char *err, size_t errlen)
{
    char e[200];
    int rc;
    p->fn = fn;
    p->ud = ud;
    p->rc = 0;
    p->err = err;
    p->errlen = errlen;
    if (tb_api_row(p->api)->info.framing == TB_API_NDJSON)
        return feed_ndjson(p, buf, len);
    rc = tb_sse_feed(p->sse, buf, len, on_sse, p, e, sizeof(e));
    if (rc == 1)
        return p->rc;
    if (rc != 0)
        return tb_seterr(err, errlen, rc, "%s", e);
    return 0;
}
