/*
 * serve_json.c - the mock server's request bodies and response JSON, in
 * OpenAI's shapes (see serve_json.h).  cJSON never leaves this file: the
 * request becomes a plain struct, responses become strings.
 *
 * Key order follows OpenAI's own responses ("id", "object", "created",
 * "model", "choices", "usage"), so a byte-level comparison with a real
 * capture differs only in values.  "created" is 0: the server never reads
 * the wall clock.  Building a cJSON tree costs a few microseconds, so
 * the per-event chunks of a stream are rendered in serve_chunk.c instead
 * (and must match what tb_serve_json_chunk prints, byte for byte); this
 * file makes the once-a-response pieces.
 */
#include "serve_json.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

static int bad(char *err, size_t errlen, const char *msg)
{
    return tb_seterr(err, errlen, TB_EFORMAT, "%s", msg);
}

/* Bytes of prompt text in a message content: a string, or an array of
 * parts whose "text" strings count. */
static size_t text_bytes(const cJSON *v)
{
    size_t n = 0;
    const cJSON *part;
    if (cJSON_IsString(v))
        return strlen(v->valuestring);
    cJSON_ArrayForEach(part, v)
    {
        const cJSON *t =
            cJSON_IsObject(part) ? cJSON_GetObjectItemCaseSensitive(part, "text") : part;
        if (cJSON_IsString(t))
            n += strlen(t->valuestring);
    }
    return n;
}

static uint64_t prompt_estimate(const cJSON *root, enum tb_serve_api api)
{
    size_t n = 0;
    if (api == TB_SERVE_API_CHAT) {
        const cJSON *m;
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "messages"))
        {
            if (cJSON_IsObject(m))
                n += text_bytes(cJSON_GetObjectItemCaseSensitive(m, "content"));
        }
    } else {
        n = text_bytes(cJSON_GetObjectItemCaseSensitive(root, "prompt"));
    }
    return (uint64_t)(n + 3) / 4; /* the usual four bytes a token */
}

/* A token limit: absent or null (0), else a whole number >= 1. */
static int limit(const cJSON *v, uint64_t *out)
{
    if (v == NULL || cJSON_IsNull(v)) {
        *out = 0;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1) || v->valuedouble > 1e15 ||
        v->valuedouble != floor(v->valuedouble))
        return -1;
    *out = (uint64_t)v->valuedouble;
    return 0;
}

int tb_serve_json_request(const char *body, size_t len, enum tb_serve_api api,
                          struct tb_serve_json_req *r, char *err, size_t errlen)
{
    const char *end = NULL;
    cJSON *root = NULL;
    const cJSON *v, *so;
    uint64_t mt, mct;
    int rc = 0;

    memset(r, 0, sizeof(*r));
    if (tb_utf8_check(body, len) != len)
        return bad(err, errlen, "The request body is not valid UTF-8.");
    root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    if (root != NULL)
        while (end < body + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
            end++;
    if (root == NULL || end != body + len || !cJSON_IsObject(root)) {
        rc = bad(err, errlen,
                 "We could not parse the JSON body of your request. (HINT: This likely "
                 "means you aren't using your HTTP library correctly. The OpenAI API "
                 "expects a JSON payload, but what was sent was not valid JSON.)");
        goto out;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (v == NULL || cJSON_IsNull(v)) {
        rc = bad(err, errlen, "you must provide a model parameter");
        goto out;
    }
    if (!cJSON_IsString(v)) {
        rc = bad(err, errlen, "Invalid type for 'model': expected a string.");
        goto out;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "stream");
    if (v != NULL && !cJSON_IsNull(v) && !cJSON_IsBool(v)) {
        rc = bad(err, errlen, "Invalid type for 'stream': expected a boolean.");
        goto out;
    }
    r->stream = cJSON_IsTrue(v);
    so = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
    r->stream_options = so != NULL;
    if (so != NULL && !cJSON_IsNull(so)) {
        if (!cJSON_IsObject(so)) {
            rc = bad(err, errlen, "Invalid type for 'stream_options': expected an object.");
            goto out;
        }
        if (!r->stream) {
            rc = bad(err, errlen,
                     "The 'stream_options' parameter is only allowed when 'stream' is enabled.");
            goto out;
        }
        v = cJSON_GetObjectItemCaseSensitive(so, "include_usage");
        if (v != NULL && !cJSON_IsNull(v) && !cJSON_IsBool(v)) {
            rc = bad(err, errlen,
                     "Invalid type for 'stream_options.include_usage': expected a boolean.");
            goto out;
        }
        r->include_usage = cJSON_IsTrue(v);
    }
    if (limit(cJSON_GetObjectItemCaseSensitive(root, "max_tokens"), &mt) != 0) {
        rc = bad(err, errlen, "Invalid 'max_tokens': expected an integer >= 1.");
        goto out;
    }
    if (limit(cJSON_GetObjectItemCaseSensitive(root, "max_completion_tokens"), &mct) != 0) {
        rc = bad(err, errlen, "Invalid 'max_completion_tokens': expected an integer >= 1.");
        goto out;
    }
    /* Both given: the tighter one wins. */
    r->max_tokens = mt == 0 ? mct : mct == 0 ? mt : mt < mct ? mt : mct;
    r->prompt_tokens = prompt_estimate(root, api);
    r->model = strdup(cJSON_GetObjectItemCaseSensitive(root, "model")->valuestring);
    if (r->model == NULL)
        rc = tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
out:
    cJSON_Delete(root);
    return rc;
}

void tb_serve_json_request_free(struct tb_serve_json_req *r)
{
    free(r->model);
    r->model = NULL;
}

/* Prints and deletes o; NULL when anything failed on the way (ok == 0).
 * A failed cJSON add leaves a hole rather than an error in the tree, so
 * every builder chains its adds into ok and prints only a whole tree. */
static char *print(cJSON *o, int ok)
{
    char *s = NULL;
    if (o != NULL && ok)
        s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static int add_str(cJSON *o, const char *k, const char *v)
{
    return cJSON_AddStringToObject(o, k, v) != NULL;
}

static int add_num(cJSON *o, const char *k, uint64_t v)
{
    return cJSON_AddNumberToObject(o, k, (double)v) != NULL;
}

/* "id", "object", "created", "model": the head of every response object. */
static cJSON *head(const struct tb_serve_json_ctx *c, const char *object, int *ok)
{
    cJSON *o = cJSON_CreateObject();
    char id[48];
    snprintf(id, sizeof(id), "%s-ttsbuf-%llu", c->api == TB_SERVE_API_CHAT ? "chatcmpl" : "cmpl",
             (unsigned long long)c->id);
    *ok = o != NULL && add_str(o, "id", id) && add_str(o, "object", object) &&
          add_num(o, "created", 0) && add_str(o, "model", c->model);
    return o;
}

static int add_usage(cJSON *o, uint64_t prompt, uint64_t completion)
{
    cJSON *u = cJSON_AddObjectToObject(o, "usage");
    return u != NULL && add_num(u, "prompt_tokens", prompt) &&
           add_num(u, "completion_tokens", completion) &&
           add_num(u, "total_tokens", prompt + completion);
}

/* Appends choices[0] = {index 0, ...} and returns it. */
static cJSON *choice0(cJSON *o)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "choices"), *ch;
    if (arr == NULL)
        return NULL;
    ch = cJSON_CreateObject();
    if (ch == NULL)
        return NULL;
    cJSON_AddItemToArray(arr, ch);
    return ch;
}

/* finish NULL: "finish_reason": null. */
static int add_finish(cJSON *ch, const char *finish)
{
    return finish != NULL ? add_str(ch, "finish_reason", finish)
                          : cJSON_AddNullToObject(ch, "finish_reason") != NULL;
}

char *tb_serve_json_chunk(const struct tb_serve_json_ctx *c, enum tb_serve_json_part part,
                          const char *text, uint64_t prompt, uint64_t completion)
{
    int legacy = c->api == TB_SERVE_API_LEGACY, ok;
    cJSON *o = head(c, legacy ? "text_completion" : "chat.completion.chunk", &ok), *ch, *d = NULL;

    if (!ok)
        return print(o, 0);
    if (part == TB_SERVE_PART_USAGE)
        return print(o, cJSON_AddArrayToObject(o, "choices") != NULL &&
                            add_usage(o, prompt, completion));
    ch = choice0(o);
    if (ch == NULL)
        return print(o, 0);
    if (legacy) {
        /* The legacy chunk: {"text", "index", "logprobs", "finish_reason"}. */
        ok = add_str(ch, "text", "") &&
             add_num(ch, "index", 0) && cJSON_AddNullToObject(ch, "logprobs") != NULL &&
             add_finish(ch, part == TB_SERVE_PART_FINISH ? text : NULL);
        return print(o, ok);
    }
    ok = add_num(ch, "index", 0) && (d = cJSON_AddObjectToObject(ch, "delta")) != NULL;
    if (ok && part == TB_SERVE_PART_ROLE)
        ok = add_str(d, "role", "assistant") && add_str(d, "content", "");
    ok = ok && add_finish(ch, part == TB_SERVE_PART_FINISH ? text : NULL);
    return print(o, ok);
}

char *tb_serve_json_body(const struct tb_serve_json_ctx *c, const char *content,
                         const char *reasoning, const char *finish, uint64_t prompt,
                         uint64_t completion)
{
    int legacy = c->api == TB_SERVE_API_LEGACY, ok;
    cJSON *o = head(c, legacy ? "text_completion" : "chat.completion", &ok), *ch, *m = NULL;

    ch = ok ? choice0(o) : NULL;
    if (ch == NULL)
        return print(o, 0);
    if (legacy) {
        ok = add_str(ch, "text", content) && add_num(ch, "index", 0) &&
             cJSON_AddNullToObject(ch, "logprobs") != NULL;
    } else {
        ok = add_num(ch, "index", 0) && (m = cJSON_AddObjectToObject(ch, "message")) != NULL &&
             add_str(m, "role", "assistant") && add_str(m, "content", content) &&
             (reasoning == NULL || add_str(m, "reasoning_content", reasoning));
    }
    ok = ok && add_finish(ch, finish) && add_usage(o, prompt, completion);
    return print(o, ok);
}

char *tb_serve_json_error(const char *message, const char *type, const char *code)
{
    cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
    int ok = e != NULL && add_str(e, "message", message) && add_str(e, "type", type) &&
             cJSON_AddNullToObject(e, "param") != NULL &&
             (code != NULL ? add_str(e, "code", code) : cJSON_AddNullToObject(e, "code") != NULL);
    return print(o, ok);
}

char *tb_serve_json_models(void)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL, *m = NULL;
    int ok = o != NULL && add_str(o, "object", "list") &&
             (arr = cJSON_AddArrayToObject(o, "data")) != NULL &&
             (m = cJSON_CreateObject()) != NULL;
    if (ok) {
        cJSON_AddItemToArray(arr, m);
        ok = add_str(m, "id", "ttsbuf-mock") && add_str(m, "object", "model") &&
             add_num(m, "created", 0) && add_str(m, "owned_by", "ttsbuf");
    }
    return print(o, ok);
}

void tb_serve_json_free(char *s)
{
    cJSON_free(s);
}
