/*
 * api_ollama.c - Ollama's native dialect, /api/chat as NDJSON (api.h says
 * what it reads): its row in the dialect table, its request body, its
 * events, with the server's own timings on the final line.
 */
#include <stdio.h>
#include <string.h>

#include "api_body.h"
#include "api_priv.h"
#include "api_tool.h"
#include "api_toolmsg.h"
#include "base/jsonfield.h"
#include "ttsbuf/error.h"

/* The chat body made Ollama's: limits and sampling live in "options";
 * tool calls' arguments are objects. */
static int adapt(cJSON *root, const struct tb_api_request *q)
{
    cJSON *opts = cJSON_GetObjectItemCaseSensitive(root, "options"), *v;
    if (!cJSON_IsObject(opts)) {
        cJSON_DeleteItemFromObjectCaseSensitive(root, "options");
        opts = cJSON_AddObjectToObject(root, "options");
    }
    if (opts == NULL)
        return TB_ENOMEM;
    if (q->max_tokens >= 0 && cJSON_GetObjectItemCaseSensitive(opts, "num_predict") == NULL) {
        v = cJSON_DetachItemFromObjectCaseSensitive(root, "max_tokens");
        cJSON_Delete(v);
        cJSON_AddNumberToObject(opts, "num_predict", (double)q->max_tokens);
    }
    if (q->temperature >= 0 && cJSON_GetObjectItemCaseSensitive(opts, "temperature") == NULL) {
        v = cJSON_DetachItemFromObjectCaseSensitive(root, "temperature");
        cJSON_Delete(v);
        cJSON_AddNumberToObject(opts, "temperature", q->temperature);
    }
    return tb_api_toolmsg_ollama(root);
}

static int body(const struct tb_api_request *q, char **out, char *err, size_t errlen)
{
    return tb_api_body_adapted(q, adapt, out, err, errlen);
}

/* Ollama's tool calls come whole, each in one line: started, its
 * arguments (an object) measured, ended.  index: function.index when
 * given, else its place in the list. */
static void tool_calls(const cJSON *tc, struct tb_api_delta *d, struct tb_api_fields *f)
{
    const cJSON *e;
    int i = 0;
    d->tool_calls = (uint32_t)cJSON_GetArraySize(tc);
    cJSON_ArrayForEach(e, tc)
    {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(e, "function");
        const cJSON *ix = cJSON_GetObjectItemCaseSensitive(fn, "index");
        cJSON *pos = cJSON_CreateNumber(i++);
        struct tb_api_tool *t =
            tb_api_tool_new(d, f, ix != NULL ? ix : pos, "message.tool_calls[].function.index");
        cJSON_Delete(pos);
        if (t == NULL ||
            tb_api_tool_str(t->id, cJSON_GetObjectItemCaseSensitive(e, "id"),
                            "message.tool_calls[].id", f) != 0 ||
            tb_api_tool_str(t->name, cJSON_GetObjectItemCaseSensitive(fn, "name"),
                            "message.tool_calls[].function.name", f) != 0 ||
            tb_api_tool_args(t, cJSON_GetObjectItemCaseSensitive(fn, "arguments"),
                             "message.tool_calls[].function.arguments", f) != 0)
            return;
        t->ops |= TB_API_TOOL_START | TB_API_TOOL_END;
    }
}

static void fields(const cJSON *root, const char *type, size_t type_len, struct tb_api_delta *out,
                   struct tb_api_fields *f)
{
    struct tb_api_delta *d = out;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
    struct tb_server_timing *s = &out->server;
    (void)type;
    (void)type_len;
    f->what = "the event text";
    f->text = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "content")
                                : cJSON_GetObjectItemCaseSensitive(root, "response");
    f->thinking = cJSON_GetObjectItemCaseSensitive(cJSON_IsObject(m) ? m : root, "thinking");
    if (cJSON_IsArray(tc))
        tool_calls(tc, d, f);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "done")))
        return;
    d->done = 1;
    tb_jsonfield_line(d->finish_reason, sizeof(d->finish_reason),
                      cJSON_GetObjectItemCaseSensitive(root, "done_reason"));
    d->usage_completion = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "eval_count"));
    d->usage_prompt =
        tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "prompt_eval_count"));
    s->total_ns = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "total_duration"));
    s->load_ns = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "load_duration"));
    s->prompt_eval_count = d->usage_prompt;
    s->prompt_eval_ns =
        tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "prompt_eval_duration"));
    s->eval_count = d->usage_completion;
    s->eval_ns = tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(root, "eval_duration"));
    out->have_server =
        s->total_ns >= 0 || s->eval_ns >= 0 || s->prompt_eval_ns >= 0 || s->load_ns >= 0;
}

const struct tb_api_dialect tb_api_dialect_ollama = {
    {"ollama", "/api/chat", "OLLAMA_HOST", NULL, NULL, NULL, "application/x-ndjson", TB_API_NDJSON,
     "a \"done\": true line", 0, "http://127.0.0.1:11434"},
    body,
    NULL,
    fields,
};
