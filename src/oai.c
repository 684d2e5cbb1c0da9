/*
 * oai.c - the OpenAI-compatible dialect (see oai.h): request bodies out,
 * streamed event JSON in.  cJSON stays in this file: what callers get is
 * plain C values and text copied into the parser's own buffer.
 */
#include "ttsbuf/oai.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evjson.h"
#include "jsontext.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

struct tb_oai {
    struct tb_jsontext_texts texts; /* copied out of the cJSON tree */
};

int tb_oai_create(struct tb_oai **out)
{
    *out = calloc(1, sizeof(**out));
    return *out != NULL ? 0 : TB_ENOMEM;
}

void tb_oai_destroy(struct tb_oai *p)
{
    if (p == NULL)
        return;
    tb_jsontext_free(&p->texts);
    free(p);
}

void tb_oai_reset(struct tb_oai *p)
{
    tb_jsontext_reset(&p->texts);
}

uint64_t tb_oai_replaced(const struct tb_oai *p)
{
    return tb_jsontext_replaced(&p->texts);
}

static cJSON *parse_text(const char *text, const char *what, char *err, size_t errlen, int *rc)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(text, &end, 1);
    *rc = 0;
    if (v == NULL) {
        size_t at = end != NULL && end >= text ? (size_t)(end - text) : 0;
        *rc = tb_seterr(err, errlen, TB_EINVAL, "%s: invalid JSON near byte %zu", what, at + 1);
    }
    return v;
}

int tb_oai_request_body(const struct tb_oai_request *q, char **out, char *err, size_t errlen)
{
    cJSON *root = cJSON_CreateObject(), *v = NULL;
    int rc = 0;
    *out = NULL;
    if (root == NULL)
        return TB_ENOMEM;
    cJSON_AddStringToObject(root, "model", q->model != NULL ? q->model : "");
    if (q->api == TB_API_CHAT) {
        if (q->messages_json != NULL) {
            v = parse_text(q->messages_json, "--messages", err, errlen, &rc);
            if (rc != 0)
                goto out;
            if (!cJSON_IsArray(v)) {
                rc = tb_seterr(err, errlen, TB_EINVAL, "--messages: not a JSON array");
                cJSON_Delete(v);
                goto out;
            }
            cJSON_AddItemToObject(root, "messages", v);
        } else {
            cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
            cJSON *m = cJSON_CreateObject();
            cJSON_AddStringToObject(m, "role", "user");
            cJSON_AddStringToObject(m, "content", q->prompt != NULL ? q->prompt : "");
            cJSON_AddItemToArray(msgs, m);
        }
    } else {
        cJSON_AddStringToObject(root, "prompt", q->prompt != NULL ? q->prompt : "");
    }
    cJSON_AddTrueToObject(root, "stream");
    if (q->include_usage) {
        cJSON *so = cJSON_AddObjectToObject(root, "stream_options");
        cJSON_AddTrueToObject(so, "include_usage");
    }
    if (q->max_tokens >= 0)
        cJSON_AddNumberToObject(root, "max_tokens", (double)q->max_tokens);
    if (q->temperature >= 0)
        cJSON_AddNumberToObject(root, "temperature", q->temperature);
    if (q->extra_json != NULL) {
        cJSON *x = parse_text(q->extra_json, "--body-json", err, errlen, &rc);
        if (rc != 0)
            goto out;
        if (!cJSON_IsObject(x)) {
            rc = tb_seterr(err, errlen, TB_EINVAL, "--body-json: not a JSON object");
            cJSON_Delete(x);
            goto out;
        }
        /* Each key replaces the one the request already has. */
        while (x->child != NULL) {
            cJSON *item = cJSON_DetachItemViaPointer(x, x->child);
            cJSON *old = cJSON_GetObjectItemCaseSensitive(root, item->string);
            /* Via the pointer: item keeps its own name (the by-name
             * replace frees the name it is handed when it is item's). */
            if (old != NULL)
                cJSON_ReplaceItemViaPointer(root, old, item);
            else
                cJSON_AddItemToObject(root, item->string, item);
        }
        cJSON_Delete(x);
    }
    *out = cJSON_PrintUnformatted(root);
    if (*out == NULL)
        rc = TB_ENOMEM;
out:
    cJSON_Delete(root);
    return rc;
}

/* Copies s[0..n) as one trimmed line that is safe to print on a terminal
 * and in JSON: control characters (C0, DEL and C1) become spaces, bytes
 * that are not valid UTF-8 become '?', and the cut that makes it fit
 * outlen never splits a character.  A server's text reaches the one-line
 * error only through here, so it can neither break the line nor send
 * terminal escapes.  Linear: each byte is validated once. */
void tb_evjson_line(const char *s, size_t n, char *out, size_t outlen)
{
    size_t k = 0, i = 0;
    if (outlen == 0)
        return;
    while (n > 0 && ((unsigned char)*s <= 0x20 || *s == 0x7F)) {
        s++;
        n--;
    }
    while (n > 0 && ((unsigned char)s[n - 1] <= 0x20 || s[n - 1] == 0x7F))
        n--;
    while (i < n) {
        size_t end = i + tb_utf8_check(s + i, n - i);
        while (i < end) {
            unsigned char c = (unsigned char)s[i];
            size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            if (k + len >= outlen)
                goto done;
            if (len == 1 && (c < 0x20 || c == 0x7F)) {
                out[k++] = ' ';
            } else if (len == 2 && c == 0xC2 && (unsigned char)s[i + 1] < 0xA0) {
                out[k++] = ' '; /* U+0080..U+009F */
            } else {
                memcpy(out + k, s + i, len);
                k += len;
            }
            i += len;
        }
        if (i < n) {
            if (k + 1 >= outlen)
                break;
            out[k++] = '?';
            i++;
        }
    }
done:
    out[k] = '\0';
}

/* A string or number field for a one-line message (see tb_evjson_line). */
static void copy_field(char *dst, size_t cap, const cJSON *v)
{
    dst[0] = '\0';
    if (cJSON_IsString(v) && v->valuestring != NULL)
        tb_evjson_line(v->valuestring, strlen(v->valuestring), dst, cap);
    else if (cJSON_IsNumber(v))
        snprintf(dst, cap, "%g", v->valuedouble);
}

int tb_evjson_keep(struct tb_jsontext_texts *t, const char *c, size_t cl, const char *r, size_t rl,
                   int last, const char *what, struct tb_oai_delta *d, char *err, size_t errlen)
{
    char bad = 0;
    int rc = tb_jsontext_keep(t, c, cl, r, rl, last, &d->content, &d->content_len, &d->reasoning,
                              &d->reasoning_len, &bad);
    if (rc == TB_EFORMAT)
        return tb_seterr(err, errlen, rc, "%s is not valid UTF-8",
                         bad == 'c' ? what : "the reasoning text");
    return rc;
}

int tb_evjson_shape(const cJSON *root)
{
    const cJSON *ch0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
    if (ch0 != NULL) {
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ch0, "delta")))
            return TB_API_CHAT;
        return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ch0, "text")) ? TB_API_COMPLETIONS
                                                                             : -1;
    }
    if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "choices")))
        return -1; /* the usage chunk: either OpenAI dialect */
    /* Anthropic's own event types only: other APIs name events too (the
     * Responses API's "response.output_text.delta"). */
    if (cJSON_IsString(type) && (strncmp(type->valuestring, "message_", 8) == 0 ||
                                 strncmp(type->valuestring, "content_block_", 14) == 0 ||
                                 strcmp(type->valuestring, "ping") == 0))
        return TB_API_ANTHROPIC;
    if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "message")) ||
        cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "response")) ||
        cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(root, "done")))
        return TB_API_OLLAMA;
    return -1;
}

/* The server's words in v: a string; in an object its "error",
 * "message", "detail" or "msg"; in an array its first element.  Servers
 * nest them (Anthropic's error.message, FastAPI's detail[0].msg), so
 * look a few levels down, never further. */
static const cJSON *message_in(const cJSON *v, int depth)
{
    static const char *const keys[] = {"error", "message", "detail", "msg"};
    if (cJSON_IsString(v) && v->valuestring != NULL && v->valuestring[0] != '\0')
        return v;
    if (depth <= 0)
        return NULL;
    if (cJSON_IsArray(v))
        return message_in(v->child, depth - 1);
    if (!cJSON_IsObject(v))
        return NULL;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const cJSON *m = message_in(cJSON_GetObjectItemCaseSensitive(v, keys[i]), depth - 1);
        if (m != NULL)
            return m;
    }
    return NULL;
}

/* Where an error's "type" and "code" live: the "error" object, else a
 * "message" object (Anthropic-style servers that send
 * {"type":"error","message":{...}}). */
static const cJSON *error_object(const cJSON *root)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (cJSON_IsObject(e))
        return e;
    e = cJSON_GetObjectItemCaseSensitive(root, "message");
    return cJSON_IsObject(e) ? e : NULL;
}

int tb_evjson_error(const cJSON *root, struct tb_oai_delta *d)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "type");
    const cJSON *o;
    if ((e == NULL || cJSON_IsNull(e) || cJSON_IsFalse(e)) &&
        !(cJSON_IsString(t) && strcmp(t->valuestring, "error") == 0) &&
        cJSON_GetObjectItemCaseSensitive(root, "detail") == NULL)
        return 0;
    d->error = 1;
    copy_field(d->error_message, sizeof(d->error_message), message_in(root, 4));
    o = error_object(root);
    if (o != NULL) {
        copy_field(d->error_type, sizeof(d->error_type),
                   cJSON_GetObjectItemCaseSensitive(o, "type"));
        copy_field(d->error_code, sizeof(d->error_code),
                   cJSON_GetObjectItemCaseSensitive(o, "code"));
    }
    return 1;
}

static long long count_field(const cJSON *v)
{
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15)
        return (long long)v->valuedouble;
    return -1;
}

void tb_evjson_text(const cJSON *v, const char **s, size_t *len)
{
    *s = NULL;
    *len = 0;
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): cJSON_IsString(NULL) is false */
    if (!cJSON_IsString(v) || v->valuestring == NULL || v->valuestring[0] == '\0')
        return;
    *len = strlen(v->valuestring);
    *s = v->valuestring;
}

cJSON *tb_evjson_parse(const char *data, size_t len, int *rc, char *err, size_t errlen)
{
    const char *end = NULL, *nul = memchr(data, '\0', len);
    char *fixed = NULL;
    size_t flen = 0, at = 0;
    cJSON *root;
    /* A raw NUL is never valid JSON, and cJSON would end a string at it
     * and keep the rest: the text after it would vanish. */
    if (nul != NULL) {
        *rc = tb_seterr(err, errlen, TB_EFORMAT, "a NUL byte at byte %zu of the event",
                        (size_t)(nul - data) + 1);
        return NULL;
    }
    /* Lone surrogate escapes become their halves' bytes, for the text
     * layer to pair across events (jsontext.h).  The rewrite only
     * shortens the text, so the offsets below may then be a little
     * early; an event that needs it is rare. */
    *rc = tb_jsontext_fix(data, len, TB_JSONTEXT_HALVES, &fixed, &flen, &at);
    if (*rc == TB_EFORMAT) {
        tb_seterr(err, errlen, TB_EFORMAT,
                  "a raw UTF-16 surrogate (not UTF-8) at byte %zu of the event", at);
        return NULL;
    }
    if (*rc != 0)
        return NULL;
    if (fixed != NULL) {
        data = fixed;
        len = flen;
    }
    root = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (root == NULL) {
        at = end != NULL && end >= data ? (size_t)(end - data) : 0;
        free(fixed);
        *rc = tb_seterr(err, errlen, TB_EFORMAT, "invalid JSON near byte %zu of the event", at + 1);
        return NULL;
    }
    {
        /* cJSON stops at the end of the first value: what follows must be
         * blank, or the event is malformed ({"a":1}garbage). */
        at = (size_t)(end - data);
        while (at < len &&
               (data[at] == ' ' || data[at] == '\t' || data[at] == '\r' || data[at] == '\n'))
            at++;
        free(fixed);
        if (at < len) {
            cJSON_Delete(root);
            *rc =
                tb_seterr(err, errlen, TB_EFORMAT,
                          "unexpected data after the JSON object at byte %zu of the event", at + 1);
            return NULL;
        }
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        *rc = tb_seterr(err, errlen, TB_EFORMAT, "event data is not a JSON object");
        return NULL;
    }
    *rc = 0;
    return root;
}

int tb_oai_parse_event(struct tb_oai *p, const char *data, size_t len, struct tb_oai_delta *out,
                       char *err, size_t errlen)
{
    cJSON *root;
    const cJSON *ch0, *delta, *usage;
    const char *content = NULL, *reasoning = NULL;
    size_t clen = 0, rlen = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->usage_completion = out->usage_prompt = -1;
    out->shape = -1;
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->done = 1; /* a surrogate half still waiting ends here */
        return tb_evjson_keep(&p->texts, NULL, 0, NULL, 0, 1, "delta.content", out, err, errlen);
    }
    root = tb_evjson_parse(data, len, &rc, err, errlen);
    if (root == NULL)
        return rc;
    if (tb_evjson_error(root, out))
        goto out;
    out->shape = tb_evjson_shape(root);
    usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (cJSON_IsObject(usage)) {
        out->usage_completion =
            count_field(cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens"));
        out->usage_prompt = count_field(cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens"));
    }
    ch0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0);
    if (ch0 == NULL)
        goto out;
    copy_field(out->finish_reason, sizeof(out->finish_reason),
               cJSON_GetObjectItemCaseSensitive(ch0, "finish_reason"));
    delta = cJSON_GetObjectItemCaseSensitive(ch0, "delta");
    if (cJSON_IsObject(delta)) {
        const cJSON *tc = cJSON_GetObjectItemCaseSensitive(delta, "tool_calls");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(delta, "reasoning_content");
        if (!cJSON_IsString(r))
            r = cJSON_GetObjectItemCaseSensitive(delta, "reasoning");
        tb_evjson_text(cJSON_GetObjectItemCaseSensitive(delta, "content"), &content, &clen);
        tb_evjson_text(r, &reasoning, &rlen);
        if (cJSON_IsArray(tc))
            out->tool_calls = (uint32_t)cJSON_GetArraySize(tc);
    } else {
        tb_evjson_text(cJSON_GetObjectItemCaseSensitive(ch0, "text"), &content, &clen);
    }
    rc = tb_evjson_keep(&p->texts, content, clen, reasoning, rlen, 0,
                        cJSON_IsObject(delta) ? "delta.content" : "choices[0].text", out, err,
                        errlen);
out:
    cJSON_Delete(root);
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

void tb_oai_error_text(const char *body, size_t len, char *out, size_t outlen)
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
        const cJSON *m = message_in(root, 4);
        if (m != NULL)
            tb_evjson_line(m->valuestring, strlen(m->valuestring), out, outlen);
        cJSON_Delete(root);
        if (out[0] != '\0')
            return;
    }
    /* HTML: the <title> says it best. */
    t = find_ci(body, len, "<title>");
    if (t != NULL) {
        te = find_ci(t + 7, len - (size_t)(t + 7 - body), "</title>");
        if (te != NULL) {
            tb_evjson_line(t + 7, (size_t)(te - (t + 7)), out, outlen);
            if (out[0] != '\0')
                return;
        }
    }
    /* Otherwise the first non-blank line. */
    while (len > 0) {
        nl = memchr(body, '\n', len);
        size_t n = nl != NULL ? (size_t)(nl - body) : len;
        tb_evjson_line(body, n, out, outlen);
        if (out[0] != '\0')
            return;
        if (nl == NULL)
            break;
        len -= n + 1;
        body = nl + 1;
    }
}
