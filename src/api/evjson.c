/*
 * evjson.c - one streamed event's JSON object, read the same way by every
 * dialect (see evjson.h): parsing with the surrogate pre-pass, the
 * dialect an event's fields belong to, error objects in every shape
 * servers send, and the texts handed out.
 */
#include "evjson.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "ttsbuf/error.h"

int tb_evjson_keep(struct tb_jsontext_texts *t, const char *c, size_t cl, const char *r, size_t rl,
                   int last, const char *what, struct tb_api_delta *d, char *err, size_t errlen)
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

const cJSON *tb_evjson_message(const cJSON *root)
{
    return message_in(root, 4);
}

int tb_evjson_error(const cJSON *root, struct tb_api_delta *d)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "type");
    const cJSON *o;
    if ((e == NULL || cJSON_IsNull(e) || cJSON_IsFalse(e)) &&
        !(cJSON_IsString(t) && strcmp(t->valuestring, "error") == 0) &&
        cJSON_GetObjectItemCaseSensitive(root, "detail") == NULL)
        return 0;
    d->error = 1;
    tb_jsonfield_line(d->error_message, sizeof(d->error_message), message_in(root, 4));
    o = error_object(root);
    if (o != NULL) {
        tb_jsonfield_line(d->error_type, sizeof(d->error_type),
                          cJSON_GetObjectItemCaseSensitive(o, "type"));
        tb_jsonfield_line(d->error_code, sizeof(d->error_code),
                          cJSON_GetObjectItemCaseSensitive(o, "code"));
    }
    return 1;
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
