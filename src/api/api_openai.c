/*
 * api_openai.c - the OpenAI-compatible pair, chat and completions (see
 * oai.h): their rows in the dialect table, request bodies out, streamed
 * event fields in, and a server's message out of an error body.  cJSON
 * stays in the dialect files: what callers get is plain C values and text
 * copied into the parser's own buffer.
 */
#include "oai.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_priv.h"
#include "evjson.h"
#include "base/jsonfield.h"
#include "base/jsontext.h"
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

/* The option what's JSON text, which must be a kind (a JSON array or
 * object, is() says); NULL with *rc TB_EINVAL and the reason in err. */
static cJSON *parse_text(const char *text, const char *what, cJSON_bool (*is)(const cJSON *),
                         const char *kind, char *err, size_t errlen, int *rc)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(text, &end, 1);
    *rc = 0;
    if (v == NULL) {
        size_t at = end != NULL && end >= text ? (size_t)(end - text) : 0;
        *rc = tb_seterr(err, errlen, TB_EINVAL, "%s: invalid JSON near byte %zu", what, at + 1);
    } else if (!is(v)) {
        *rc = tb_seterr(err, errlen, TB_EINVAL, "%s: not a JSON %s", what, kind);
        cJSON_Delete(v);
        v = NULL;
    }
    return v;
}

int tb_oai_request_body(const struct tb_api_request *q, char **out, char *err, size_t errlen)
{
    cJSON *root = cJSON_CreateObject(), *v = NULL;
    int rc = 0;
    *out = NULL;
    if (root == NULL)
        return TB_ENOMEM;
    cJSON_AddStringToObject(root, "model", q->model != NULL ? q->model : "");
    if (q->api == TB_API_CHAT) {
        if (q->messages_json != NULL) {
            v = parse_text(q->messages_json, "--messages", cJSON_IsArray, "array", err, errlen,
                           &rc);
            if (rc != 0)
                goto out;
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
        cJSON *x =
            parse_text(q->extra_json, "--body-json", cJSON_IsObject, "object", err, errlen, &rc);
        if (rc != 0)
            goto out;
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

/* An OpenAI chunk: usage (the final chunk has empty choices), then
 * choices[0]: its finish reason, and a chat delta (content, reasoning,
 * tool calls) or a completions text. */
static void fields(const cJSON *root, const char *type, size_t type_len, struct tb_api_delta *out,
                   struct tb_api_fields *f)
{
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    const cJSON *ch0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0);
    const cJSON *delta;
    (void)type;
    (void)type_len;
    if (cJSON_IsObject(usage)) {
        out->usage_completion =
            tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens"));
        out->usage_prompt =
            tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens"));
    }
    if (ch0 == NULL)
        return;
    tb_jsonfield_line(out->finish_reason, sizeof(out->finish_reason),
                      cJSON_GetObjectItemCaseSensitive(ch0, "finish_reason"));
    delta = cJSON_GetObjectItemCaseSensitive(ch0, "delta");
    if (cJSON_IsObject(delta)) {
        const cJSON *tc = cJSON_GetObjectItemCaseSensitive(delta, "tool_calls");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(delta, "reasoning_content");
        if (!cJSON_IsString(r))
            r = cJSON_GetObjectItemCaseSensitive(delta, "reasoning");
        f->text = cJSON_GetObjectItemCaseSensitive(delta, "content");
        f->thinking = r;
        f->what = "delta.content";
        if (cJSON_IsArray(tc))
            out->tool_calls = (uint32_t)cJSON_GetArraySize(tc);
    } else {
        f->text = cJSON_GetObjectItemCaseSensitive(ch0, "text");
        f->what = "choices[0].text";
    }
}

/* The pair's rows differ in name and path only: the same environment,
 * bearer auth, framing, end and event reader (fields() reads both shapes;
 * oai.h builds both bodies, hence no body hook). */
#define OPENAI_ROW(name_, path_)                                                                   \
    {                                                                                              \
        .info = {.name = (name_),                                                                  \
                 .path = (path_),                                                                  \
                 .base_env = "OPENAI_BASE_URL",                                                    \
                 .key_env = "OPENAI_API_KEY",                                                      \
                 .stream_type = "text/event-stream",                                               \
                 .framing = TB_API_SSE,                                                            \
                 .end_name = "[DONE]",                                                             \
                 .usage_option = 1,                                                                \
                 .default_base = "https://api.openai.com/v1"},                                     \
        .end_data = "[DONE]", .fields = fields,                                                    \
    }

const struct tb_api_dialect tb_api_dialect_chat = OPENAI_ROW("chat", "/chat/completions");
const struct tb_api_dialect tb_api_dialect_completions = OPENAI_ROW("completions", "/completions");

int tb_oai_parse_event(struct tb_oai *p, const char *data, size_t len, struct tb_api_delta *out,
                       char *err, size_t errlen)
{
    return tb_api_event(&tb_api_dialect_chat, &p->texts, NULL, 0, data, len, out, err, errlen);
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
