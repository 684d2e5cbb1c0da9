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

/* The input tokens: the bytes of every message's text (and Anthropic's
 * top-level "system", a string or text blocks; the other dialects carry
 * the system prompt as a message), or the legacy API's prompt, divided by
 * four and rounded up.  serve.h documents the rule: the prefill cost and
 * every usage count build on it. */
static uint64_t prompt_estimate(const cJSON *root, enum tb_api api)
{
    size_t n = 0;
    if (api == TB_API_ANTHROPIC)
        n += text_bytes(cJSON_GetObjectItemCaseSensitive(root, "system"));
    if (api != TB_API_COMPLETIONS) {
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

/* A message carries a tool's result: role "tool" (OpenAI, Ollama), or a
 * content block of type "tool_result" (Anthropic). */
static int is_result(const cJSON *m)
{
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content"), *b;
    if (cJSON_IsString(role) && strcmp(role->valuestring, "tool") == 0)
        return 1;
    if (!cJSON_IsArray(content))
        return 0;
    cJSON_ArrayForEach(b, content)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(b, "type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, "tool_result") == 0)
            return 1;
    }
    return 0;
}

/* m's role is role. */
static int role_is(const cJSON *m, const char *role)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "role");
    return cJSON_IsString(r) && strcmp(r->valuestring, role) == 0;
}

/* A string field of o that is not empty, or NULL. */
static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring : NULL;
}

/* Anthropic: a user message's tool_result block answers the tool_use
 * block of the assistant message just before it (same id). */
static int anthropic_answers(const cJSON *prev, const cJSON *m)
{
    const cJSON *b, *u;
    if (prev == NULL || !role_is(prev, "assistant") || !role_is(m, "user"))
        return 0;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(m, "content"))
    {
        const char *t = str_of(b, "type"), *id = str_of(b, "tool_use_id");
        if (t == NULL || strcmp(t, "tool_result") != 0 || id == NULL)
            continue;
        cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(prev, "content"))
        {
            const char *ut = str_of(u, "type"), *uid = str_of(u, "id");
            if (ut != NULL && strcmp(ut, "tool_use") == 0 && uid != NULL &&
                strcmp(uid, id) == 0 && str_of(u, "name") != NULL &&
                cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(u, "input")))
                return 1;
        }
    }
    return 0;
}

/* OpenAI and Ollama: a "tool" message answers an earlier assistant
 * message's tool_calls: by tool_call_id (OpenAI: arguments a JSON text),
 * or by the function's name, tool_name (Ollama: arguments an object). */
static int call_answers(const cJSON *msgs, const cJSON *m, enum tb_api api)
{
    const cJSON *a, *c;
    const char *id = str_of(m, api == TB_API_OLLAMA ? "tool_name" : "tool_call_id");
    if (id == NULL || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, "content")))
        return 0;
    for (a = msgs->child; a != NULL && a != m; a = a->next) {
        if (!role_is(a, "assistant"))
            continue;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(a, "tool_calls"))
        {
            const cJSON *fn = cJSON_GetObjectItemCaseSensitive(c, "function");
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
            const char *key = api == TB_API_OLLAMA ? str_of(fn, "name") : str_of(c, "id");
            int shaped = api == TB_API_OLLAMA ? cJSON_IsObject(args) : cJSON_IsString(args);
            if (key != NULL && strcmp(key, id) == 0 && shaped && str_of(fn, "name") != NULL)
                return 1;
        }
    }
    return 0;
}

/* Whether every tool result of the body is in its dialect's shape
 * (serve_json.h, tool_shape). */
static int results_shaped(const cJSON *msgs, enum tb_api api)
{
    const cJSON *m, *prev = NULL;
    int all = 1;
    cJSON_ArrayForEach(m, msgs)
    {
        if (is_result(m))
            all &= api == TB_API_ANTHROPIC ? anthropic_answers(prev, m)
                                           : !role_is(m, "user") && call_answers(msgs, m, api);
        prev = m;
    }
    return all;
}

/* The arguments the last assistant message with calls gave its first
 * call, as text into out (serve_json.h, tool_args): "" when none. */
static void carried_args(const cJSON *msgs, enum tb_api api, char *out, size_t outlen)
{
    const cJSON *m, *args = NULL;
    char *p;
    out[0] = '\0';
    cJSON_ArrayForEach(m, msgs)
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content"), *b;
        const cJSON *blocks = cJSON_IsArray(c) ? c : NULL;
        if (!role_is(m, "assistant"))
            continue;
        if (api == TB_API_ANTHROPIC) {
            cJSON_ArrayForEach(b, blocks)
            {
                const char *t = str_of(b, "type");
                if (t != NULL && strcmp(t, "tool_use") == 0) {
                    args = cJSON_GetObjectItemCaseSensitive(b, "input");
                    break;
                }
            }
        } else {
            const cJSON *c0 =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "tool_calls"), 0);
            if (c0 != NULL)
                args = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(c0, "function"), "arguments");
        }
    }
    if (args != NULL && cJSON_IsString(args)) {
        if (strlen(args->valuestring) < outlen)
            snprintf(out, outlen, "%s", args->valuestring);
        return;
    }
    p = args != NULL ? cJSON_PrintUnformatted(args) : NULL;
    if (p != NULL && strlen(p) < outlen)
        snprintf(out, outlen, "%s", p);
    cJSON_free(p);
}

/* What the body says of tools (serve_tool.h): whether it offers any,
 * carries a result, and the first tool's name. */
static void tool_request(const cJSON *root, enum tb_api api, struct tb_serve_json_req *r)
{
    const cJSON *tools = cJSON_GetObjectItemCaseSensitive(root, "tools");
    const cJSON *t0 = cJSON_GetArrayItem(tools, 0), *name, *m;
    r->tools = cJSON_IsArray(tools) && t0 != NULL && api != TB_API_COMPLETIONS;
    name = api == TB_API_ANTHROPIC
               ? cJSON_GetObjectItemCaseSensitive(t0, "name")
               : cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t0, "function"),
                                                  "name");
    r->tool_name[0] = '\0';
    if (cJSON_IsString(name) && strlen(name->valuestring) < sizeof(r->tool_name) &&
        strpbrk(name->valuestring, "\"\\") == NULL)
        snprintf(r->tool_name, sizeof(r->tool_name), "%s", name->valuestring);
    r->tool_result = 0;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "messages"))
    {
        r->tool_result |= is_result(m);
    }
    r->tool_shape =
        r->tool_result && results_shaped(cJSON_GetObjectItemCaseSensitive(root, "messages"), api);
    r->tool_args[0] = '\0';
    if (r->tool_result)
        carried_args(cJSON_GetObjectItemCaseSensitive(root, "messages"), api, r->tool_args,
                     sizeof(r->tool_args));
}

int tb_serve_json_request(const char *body, size_t len, enum tb_api api,
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
    /* Ollama streams unless told not to. */
    r->stream = cJSON_IsTrue(v) || (api == TB_API_OLLAMA && !cJSON_IsFalse(v));
    so = api == TB_API_CHAT || api == TB_API_COMPLETIONS
             ? cJSON_GetObjectItemCaseSensitive(root, "stream_options")
             : NULL;
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
    if (api == TB_API_OLLAMA) {
        /* options.num_predict; Ollama takes a negative one as "no limit". */
        v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "options"),
                                             "num_predict");
        if (cJSON_IsNumber(v) && v->valuedouble < 0)
            v = NULL;
        if (limit(v, &mt) != 0) {
            rc = bad(err, errlen, "invalid options.num_predict: expected an integer");
            goto out;
        }
        r->max_tokens = mt;
    } else if (limit(cJSON_GetObjectItemCaseSensitive(root, "max_tokens"), &mt) != 0) {
        rc = bad(err, errlen, "Invalid 'max_tokens': expected an integer >= 1.");
        goto out;
    }
    if (limit(cJSON_GetObjectItemCaseSensitive(root, "max_completion_tokens"), &mct) != 0) {
        rc = bad(err, errlen, "Invalid 'max_completion_tokens': expected an integer >= 1.");
        goto out;
    }
    /* Both given: the tighter one wins. */
    if (api != TB_API_OLLAMA)
        r->max_tokens = mt == 0 ? mct : mct == 0 ? mt : mt < mct ? mt : mct;
    r->prompt_tokens = prompt_estimate(root, api);
    tool_request(root, api, r);
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
    snprintf(id, sizeof(id), "%s-ttsbuf-%llu", c->api == TB_API_CHAT ? "chatcmpl" : "cmpl",
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
    int legacy = c->api == TB_API_COMPLETIONS, ok;
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
        ok = add_str(ch, "text", "") && add_num(ch, "index", 0) &&
             cJSON_AddNullToObject(ch, "logprobs") != NULL &&
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
    int legacy = c->api == TB_API_COMPLETIONS, ok;
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

/* ---- Anthropic Messages ------------------------------------------------ */

static const char *const anth_names[] = {
    "message_start",      "ping",          "content_block_start", "content_block_delta",
    "content_block_stop", "message_delta", "message_stop"};

const char *tb_serve_json_anth_name(enum tb_serve_anth ev)
{
    return anth_names[ev];
}

static int anth_usage(cJSON *o, int prompt_too, uint64_t prompt, uint64_t completion)
{
    cJSON *u = cJSON_AddObjectToObject(o, "usage");
    return u != NULL && (!prompt_too || add_num(u, "input_tokens", prompt)) &&
           add_num(u, "output_tokens", completion);
}

/* The Message object, content empty or filled. */
static cJSON *anth_message(const struct tb_serve_json_ctx *c, int *ok)
{
    cJSON *m = cJSON_CreateObject();
    char id[48];
    snprintf(id, sizeof(id), "msg_ttsbuf_%llu", (unsigned long long)c->id);
    *ok = m != NULL && add_str(m, "id", id) && add_str(m, "type", "message") &&
          add_str(m, "role", "assistant") && add_str(m, "model", c->model) &&
          cJSON_AddArrayToObject(m, "content") != NULL;
    return m;
}

char *tb_serve_json_anth(const struct tb_serve_json_ctx *c, enum tb_serve_anth ev, int index,
                         int reasoning, const char *text, uint64_t prompt, uint64_t completion)
{
    cJSON *o = cJSON_CreateObject(), *x = NULL;
    int ok = o != NULL && add_str(o, "type", anth_names[ev]);
    switch (ev) {
    case TB_SERVE_ANTH_START:
        x = anth_message(c, &ok);
        if (x != NULL)
            cJSON_AddItemToObject(o, "message", x);
        ok = ok && x != NULL && cJSON_AddNullToObject(x, "stop_reason") != NULL &&
             cJSON_AddNullToObject(x, "stop_sequence") != NULL && anth_usage(x, 1, prompt, 1);
        break;
    case TB_SERVE_ANTH_BLOCK_START:
        ok = ok && add_num(o, "index", (uint64_t)index) &&
             (x = cJSON_AddObjectToObject(o, "content_block")) != NULL &&
             add_str(x, "type", reasoning ? "thinking" : "text") &&
             add_str(x, reasoning ? "thinking" : "text", "");
        break;
    case TB_SERVE_ANTH_DELTA:
        ok = ok && add_num(o, "index", (uint64_t)index) &&
             (x = cJSON_AddObjectToObject(o, "delta")) != NULL &&
             add_str(x, "type", reasoning ? "thinking_delta" : "text_delta") &&
             add_str(x, reasoning ? "thinking" : "text", text);
        break;
    case TB_SERVE_ANTH_BLOCK_STOP: ok = ok && add_num(o, "index", (uint64_t)index); break;
    case TB_SERVE_ANTH_MSG_DELTA:
        ok = ok && (x = cJSON_AddObjectToObject(o, "delta")) != NULL &&
             add_str(x, "stop_reason", text) && cJSON_AddNullToObject(x, "stop_sequence") != NULL &&
             anth_usage(o, 0, prompt, completion);
        break;
    default: break; /* ping, message_stop: the type alone */
    }
    return print(o, ok);
}

char *tb_serve_json_anth_body(const struct tb_serve_json_ctx *c, const char *content,
                              const char *reasoning, const char *stop_reason, uint64_t prompt,
                              uint64_t completion)
{
    int ok;
    cJSON *m = anth_message(c, &ok), *arr = cJSON_GetObjectItemCaseSensitive(m, "content"), *b;
    if (ok && reasoning != NULL) {
        b = cJSON_CreateObject();
        ok = b != NULL && add_str(b, "type", "thinking") && add_str(b, "thinking", reasoning);
        if (b != NULL)
            cJSON_AddItemToArray(arr, b);
    }
    if (ok) {
        b = cJSON_CreateObject();
        ok = b != NULL && add_str(b, "type", "text") && add_str(b, "text", content);
        if (b != NULL)
            cJSON_AddItemToArray(arr, b);
    }
    ok = ok && add_str(m, "stop_reason", stop_reason) &&
         cJSON_AddNullToObject(m, "stop_sequence") != NULL && anth_usage(m, 1, prompt, completion);
    return print(m, ok);
}

char *tb_serve_json_anth_error(const char *type, const char *message)
{
    cJSON *o = cJSON_CreateObject(), *e = NULL;
    int ok = o != NULL && add_str(o, "type", "error") &&
             (e = cJSON_AddObjectToObject(o, "error")) != NULL && add_str(e, "type", type) &&
             add_str(e, "message", message);
    return print(o, ok);
}

/* ---- Ollama /api/chat --------------------------------------------------- */

char *tb_serve_json_ollama(const struct tb_serve_json_ctx *c, const char *content,
                           const char *reasoning, const struct tb_serve_ollama_end *end)
{
    cJSON *o = cJSON_CreateObject(), *m = NULL;
    /* created_at: the server never reads the wall clock. */
    int ok = o != NULL && add_str(o, "model", c->model) &&
             add_str(o, "created_at", "1970-01-01T00:00:00Z") &&
             (m = cJSON_AddObjectToObject(o, "message")) != NULL &&
             add_str(m, "role", "assistant") &&
             add_str(m, "content", content != NULL ? content : "") &&
             (reasoning == NULL || add_str(m, "thinking", reasoning));
    if (end == NULL)
        return print(o, ok && cJSON_AddFalseToObject(o, "done") != NULL);
    ok = ok && add_str(o, "done_reason", end->done_reason) &&
         cJSON_AddTrueToObject(o, "done") != NULL &&
         add_num(o, "total_duration", (uint64_t)end->total_ns) && add_num(o, "load_duration", 0) &&
         add_num(o, "prompt_eval_count", end->prompt) &&
         add_num(o, "prompt_eval_duration", (uint64_t)end->prompt_ns) &&
         add_num(o, "eval_count", end->completion) &&
         add_num(o, "eval_duration", (uint64_t)end->eval_ns);
    return print(o, ok);
}

char *tb_serve_json_ollama_error(const char *message)
{
    cJSON *o = cJSON_CreateObject();
    return print(o, o != NULL && add_str(o, "error", message));
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
