/*
 * api.c - provider dialects (see api.h): the table, request bodies, and
 * the stream reader: framing (SSE through sse.c, or NDJSON lines here)
 * and each event's JSON turned into a dialect-neutral delta.  The OpenAI
 * events are read by oai.c; Anthropic's and Ollama's here.  cJSON stays
 * in this file (and oai.c): callers get plain values and text copied
 * into the parser's own buffer.
 */
#include "ttsbuf/api.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evjson.h"
#include "jsonfield.h"
#include "ttsbuf/error.h"
#include "ttsbuf/sse.h"
#include "ttsbuf/utf8.h"

#define ANTHROPIC_VERSION "2023-06-01"
#define ANTHROPIC_MAX_TOKENS 1024 /* sent when none is given: the API requires one */

static const struct tb_api_info table[TB_API__COUNT] = {
    {"chat", "/chat/completions", "OPENAI_BASE_URL", "OPENAI_API_KEY", NULL, NULL,
     "text/event-stream", TB_API_SSE, "[DONE]", 1, "https://api.openai.com/v1"},
    {"completions", "/completions", "OPENAI_BASE_URL", "OPENAI_API_KEY", NULL, NULL,
     "text/event-stream", TB_API_SSE, "[DONE]", 1, "https://api.openai.com/v1"},
    {"anthropic", "/messages", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "x-api-key",
     "anthropic-version: " ANTHROPIC_VERSION, "text/event-stream", TB_API_SSE, "message_stop", 0,
     "https://api.anthropic.com/v1"},
    {"ollama", "/api/chat", "OLLAMA_HOST", NULL, NULL, NULL, "application/x-ndjson", TB_API_NDJSON,
     "a \"done\": true line", 0, "http://127.0.0.1:11434"},
};

const struct tb_api_info *tb_api_info(enum tb_api api)
{
    return (unsigned)api < TB_API__COUNT ? &table[api] : NULL;
}

void tb_api_http_req(const struct tb_api_info *api, const struct tb_http_req *in,
                     const char **headers, struct tb_http_req *out)
{
    *out = *in;
    out->key_header = api->key_header; /* NULL: Bearer (http.c sends one or the other) */
    out->stream_type = api->stream_type;
    out->nheaders = 0;
    if (api->fixed_header != NULL)
        headers[out->nheaders++] = api->fixed_header;
    for (size_t i = 0; i < in->nheaders; i++)
        headers[out->nheaders++] = in->headers[i];
    out->headers = headers;
}

int tb_api_delta_is_data(const struct tb_api_delta *ad)
{
    const struct tb_oai_delta *d = &ad->d;
    return d->content != NULL || d->reasoning != NULL || d->tool_calls > 0 ||
           d->usage_completion >= 0 || d->finish_reason[0] != '\0' || d->done || d->error;
}

int tb_api_by_name(const char *name, enum tb_api *out)
{
    for (int i = 0; i < TB_API__COUNT; i++)
        if (strcmp(name, table[i].name) == 0) {
            *out = (enum tb_api)i;
            return 0;
        }
    return TB_EINVAL;
}

/* ---- Request bodies ---------------------------------------------------- */

/* Anthropic takes system prompts in a top-level "system", not as
 * messages: move them there (their texts joined by a blank line). */
static int move_system(cJSON *root)
{
    cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages"), *m, *next;
    char *sys = NULL;
    size_t n = 0;
    for (m = msgs != NULL ? msgs->child : NULL; m != NULL; m = next) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
        next = m->next;
        if (!cJSON_IsString(role) || strcmp(role->valuestring, "system") != 0)
            continue;
        if (cJSON_IsString(c)) {
            size_t k = strlen(c->valuestring);
            char *ns = realloc(sys, n + k + 3);
            if (ns == NULL) {
                free(sys);
                return TB_ENOMEM;
            }
            sys = ns;
            if (n > 0) {
                memcpy(sys + n, "\n\n", 2);
                n += 2;
            }
            memcpy(sys + n, c->valuestring, k + 1);
            n += k;
        }
        cJSON_Delete(cJSON_DetachItemViaPointer(msgs, m));
    }
    if (sys != NULL && cJSON_GetObjectItemCaseSensitive(root, "system") == NULL)
        cJSON_AddStringToObject(root, "system", sys);
    free(sys);
    return 0;
}

int tb_api_request_body(const struct tb_oai_request *q, char **out, char *err, size_t errlen)
{
    struct tb_oai_request base = *q;
    char *chat = NULL;
    cJSON *root = NULL, *v;
    int rc;

    if (q->api == TB_API_CHAT || q->api == TB_API_COMPLETIONS)
        return tb_oai_request_body(q, out, err, errlen);
    if (q->api != TB_API_ANTHROPIC && q->api != TB_API_OLLAMA)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown API");
    /* The chat body has the same model, messages and stream; move the
     * rest to where this dialect wants it.  --body-json keys were merged
     * into it last, so anything the user set is kept as given. */
    base.api = TB_API_CHAT;
    base.include_usage = 0;
    *out = NULL;
    rc = tb_oai_request_body(&base, &chat, err, errlen);
    if (rc != 0)
        return rc;
    root = cJSON_Parse(chat);
    free(chat);
    if (root == NULL)
        return TB_ENOMEM;
    if (q->api == TB_API_ANTHROPIC) {
        if (cJSON_GetObjectItemCaseSensitive(root, "max_tokens") == NULL)
            cJSON_AddNumberToObject(root, "max_tokens", ANTHROPIC_MAX_TOKENS);
        rc = move_system(root);
    } else {
        /* Ollama: limits and sampling live in "options". */
        cJSON *opts = cJSON_GetObjectItemCaseSensitive(root, "options");
        if (!cJSON_IsObject(opts)) {
            cJSON_DeleteItemFromObjectCaseSensitive(root, "options");
            opts = cJSON_AddObjectToObject(root, "options");
        }
        if (opts == NULL) {
            rc = TB_ENOMEM;
        } else {
            if (q->max_tokens >= 0 &&
                cJSON_GetObjectItemCaseSensitive(opts, "num_predict") == NULL) {
                v = cJSON_DetachItemFromObjectCaseSensitive(root, "max_tokens");
                cJSON_Delete(v);
                cJSON_AddNumberToObject(opts, "num_predict", (double)q->max_tokens);
            }
            if (q->temperature >= 0 &&
                cJSON_GetObjectItemCaseSensitive(opts, "temperature") == NULL) {
                v = cJSON_DetachItemFromObjectCaseSensitive(root, "temperature");
                cJSON_Delete(v);
                cJSON_AddNumberToObject(opts, "temperature", q->temperature);
            }
        }
    }
    if (rc == 0) {
        *out = cJSON_PrintUnformatted(root);
        if (*out == NULL)
            rc = TB_ENOMEM;
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- The parser --------------------------------------------------------- */

struct tb_api_parser {
    enum tb_api api;
    enum tb_api asked; /* the dialect created with (reset returns to it) */
    int adopt;         /* the first shaped event of the OpenAI pair sets api */
    int adopted;       /* ... and it came */
    struct tb_sse *sse;
    struct tb_oai *oai;
    char *line; /* NDJSON: the unfinished line */
    size_t line_len, line_cap;
    uint64_t offset, events;
    struct tb_jsontext_texts texts; /* text handed out (anthropic, ollama) */
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
    if (tb_sse_create(0, 0, &p->sse) != 0 || tb_oai_create(&p->oai) != 0) {
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
    tb_oai_destroy(p->oai);
    free(p->line);
    tb_jsontext_free(&p->texts);
    free(p);
}

void tb_api_parser_reset(struct tb_api_parser *p)
{
    tb_sse_reset(p->sse);
    tb_oai_reset(p->oai);
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
    return table[p->api].framing == TB_API_SSE ? tb_sse_pending(p->sse) : p->line_len;
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
    return tb_oai_replaced(p->oai) + tb_jsontext_replaced(&p->texts);
}

static void anthropic_event(const cJSON *root, const char *type, struct tb_api_delta *out,
                            const cJSON **text, const cJSON **thinking)
{
    struct tb_oai_delta *d = &out->d;
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(root, "delta");
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (strcmp(type, "message_start") == 0) {
        usage = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "message"),
                                                 "usage");
        d->usage_prompt = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(usage, "input_tokens"));
    } else if (strcmp(type, "content_block_start") == 0) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "content_block");
        const cJSON *bt = cJSON_GetObjectItemCaseSensitive(b, "type");
        if (cJSON_IsString(bt) && strcmp(bt->valuestring, "tool_use") == 0)
            d->tool_calls = 1;
        else if (cJSON_IsString(bt) && strcmp(bt->valuestring, "text") == 0)
            *text = cJSON_GetObjectItemCaseSensitive(b, "text");
        else if (cJSON_IsString(bt) && strcmp(bt->valuestring, "thinking") == 0)
            *thinking = cJSON_GetObjectItemCaseSensitive(b, "thinking");
    } else if (strcmp(type, "content_block_delta") == 0) {
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(delta, "type");
        if (cJSON_IsString(dt) && strcmp(dt->valuestring, "text_delta") == 0)
            *text = cJSON_GetObjectItemCaseSensitive(delta, "text");
        else if (cJSON_IsString(dt) && strcmp(dt->valuestring, "thinking_delta") == 0)
            *thinking = cJSON_GetObjectItemCaseSensitive(delta, "thinking");
    } else if (strcmp(type, "message_delta") == 0) {
        tb_jsonfield_line(d->finish_reason, sizeof(d->finish_reason),
                 cJSON_GetObjectItemCaseSensitive(delta, "stop_reason"));
        d->usage_completion = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(usage, "output_tokens"));
    } else if (strcmp(type, "message_stop") == 0) {
        d->done = 1;
    }
    /* error: read before (tb_evjson_error); ping, content_block_stop
     * and types added later: nothing to record. */
}

static void ollama_event(const cJSON *root, struct tb_api_delta *out, const cJSON **text,
                         const cJSON **thinking)
{
    struct tb_oai_delta *d = &out->d;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
    struct tb_server_timing *s = &out->server;
    *text = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "content")
                              : cJSON_GetObjectItemCaseSensitive(root, "response");
    *thinking = cJSON_GetObjectItemCaseSensitive(cJSON_IsObject(m) ? m : root, "thinking");
    if (cJSON_IsArray(tc))
        d->tool_calls = (uint32_t)cJSON_GetArraySize(tc);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "done")))
        return;
    d->done = 1;
    tb_jsonfield_line(d->finish_reason, sizeof(d->finish_reason),
             cJSON_GetObjectItemCaseSensitive(root, "done_reason"));
    d->usage_completion = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "eval_count"));
    d->usage_prompt = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "prompt_eval_count"));
    s->total_ns = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "total_duration"));
    s->load_ns = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "load_duration"));
    s->prompt_eval_count = d->usage_prompt;
    s->prompt_eval_ns = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "prompt_eval_duration"));
    s->eval_count = d->usage_completion;
    s->eval_ns = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "eval_duration"));
    out->have_server =
        s->total_ns >= 0 || s->eval_ns >= 0 || s->prompt_eval_ns >= 0 || s->load_ns >= 0;
}

int tb_api_parse_event(struct tb_api_parser *p, const char *type, size_t type_len, const char *data,
                       size_t len, struct tb_api_delta *out, char *err, size_t errlen)
{
    const char *c = NULL, *r = NULL;
    const cJSON *text = NULL, *thinking = NULL, *jt;
    size_t cl = 0, rl = 0;
    char tname[64] = "";
    cJSON *root;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->d.usage_completion = out->d.usage_prompt = -1;
    out->d.shape = -1;
    tb_server_timing_init(&out->server);
    if (p->api == TB_API_CHAT || p->api == TB_API_COMPLETIONS)
        return tb_oai_parse_event(p->oai, data, len, &out->d, err, errlen);
    root = tb_evjson_parse(data, len, &rc, err, errlen);
    if (root == NULL)
        return rc;
    if (tb_evjson_error(root, &out->d)) {
        /* The stream ends here: a half still waiting is counted. */
        rc = tb_evjson_keep(&p->texts, NULL, 0, NULL, 0, 1, "the event text", &out->d, err, errlen);
        goto out;
    }
    out->d.shape = tb_evjson_shape(root);
    if (p->api == TB_API_ANTHROPIC) {
        /* The data's own "type" names the event; the SSE event: line says
         * the same, and is the fallback. */
        jt = cJSON_GetObjectItemCaseSensitive(root, "type");
        if (cJSON_IsString(jt))
            snprintf(tname, sizeof(tname), "%s", jt->valuestring);
        else if (type != NULL)
            snprintf(tname, sizeof(tname), "%.*s", (int)(type_len < 63 ? type_len : 63), type);
        anthropic_event(root, tname, out, &text, &thinking);
    } else {
        ollama_event(root, out, &text, &thinking);
    }
    tb_evjson_text(text, &c, &cl);
    tb_evjson_text(thinking, &r, &rl);
    rc = tb_evjson_keep(&p->texts, c, cl, r, rl, out->d.done, "the event text", &out->d, err,
                        errlen);
out:
    cJSON_Delete(root);
    return rc;
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
        (d.d.shape == TB_API_CHAT || d.d.shape == TB_API_COMPLETIONS)) {
        p->api = (enum tb_api)d.d.shape; /* the OpenAI pair share one event reader */
        p->adopted = 1;
    }
    if (rc == 0 && d.d.shape >= 0 && d.d.shape != (int)p->api) {
        /* Read on, and a chat stream on /completions would "work" with
         * the wrong endpoint's numbers; Anthropic's and Ollama's readers
         * would find no text at all.  Either way the run is not what was
         * asked for: say so, with what was received kept. */
        p->rc = tb_seterr(p->err, p->errlen, TB_EFORMAT,
                          "the event ending at stream byte %llu has the %s dialect's fields, not "
                          "those of the %s dialect asked for: is --api right?",
                          (unsigned long long)p->offset, table[d.d.shape].name, table[p->api].name);
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
    if (table[p->api].framing == TB_API_NDJSON)
        return feed_ndjson(p, buf, len);
    rc = tb_sse_feed(p->sse, buf, len, on_sse, p, e, sizeof(e));
    if (rc == 1)
        return p->rc;
    if (rc != 0)
        return tb_seterr(err, errlen, rc, "%s", e);
    return 0;
}
