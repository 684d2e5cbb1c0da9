/*
 * api_openai.c - the OpenAI-compatible pair, chat and completions (api.h
 * says what they read): their rows in the dialect table, their request
 * bodies, their events' fields.  cJSON stays in the dialect files: what
 * callers get is plain C values and text copied into the parser's own
 * buffer.
 */
#include <cJSON.h>
#include <stdint.h>

#include "api_body.h"
#include "api_priv.h"
#include "api_tool.h"
#include "base/jsonfield.h"

/* The pair's bodies: the chat shape itself, and for completions the
 * prompt in place of the messages; usage is asked for when the caller
 * asks (both take stream_options). */
static int pair_body(const struct tb_api_request *q, int prompt, char **out, char *err,
                     size_t errlen)
{
    cJSON *root;
    int rc = tb_api_body_chat(q, prompt, q->include_usage, &root, err, errlen);
    *out = NULL;
    return rc != 0 ? rc : tb_api_body_print(root, out);
}

static int chat_body(const struct tb_api_request *q, char **out, char *err, size_t errlen)
{
    return pair_body(q, 0, out, err, errlen);
}

static int completions_body(const struct tb_api_request *q, char **out, char *err, size_t errlen)
{
    return pair_body(q, 1, out, err, errlen);
}

/* OpenAI's tool_calls deltas: each element's index, and its id and
 * function.name (the first delta of a call) and function.arguments (a
 * fragment).  A call ends at the finish reason (the reader ends it). */
static void tool_calls(const cJSON *tc, struct tb_api_delta *out, struct tb_api_fields *f)
{
    const cJSON *e;
    out->tool_calls = (uint32_t)cJSON_GetArraySize(tc);
    cJSON_ArrayForEach(e, tc)
    {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(e, "function");
        struct tb_api_tool *t = tb_api_tool_new(
            out, f, cJSON_GetObjectItemCaseSensitive(e, "index"), "tool_calls[].index");
        if (t == NULL ||
            tb_api_tool_str(t->id, cJSON_GetObjectItemCaseSensitive(e, "id"), "tool_calls[].id",
                            f) != 0 ||
            tb_api_tool_str(t->name, cJSON_GetObjectItemCaseSensitive(fn, "name"),
                            "tool_calls[].function.name", f) != 0 ||
            tb_api_tool_args(t, cJSON_GetObjectItemCaseSensitive(fn, "arguments"),
                             "tool_calls[].function.arguments", f) != 0)
            return;
        if (t->id[0] != '\0' || t->name[0] != '\0')
            t->ops |= TB_API_TOOL_START;
    }
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
            tool_calls(tc, out, f);
    } else {
        f->text = cJSON_GetObjectItemCaseSensitive(ch0, "text");
        f->what = "choices[0].text";
    }
}

/* The pair's rows differ in name, path and body only: the same
 * environment, bearer auth, framing, end and event reader (fields() reads
 * both shapes). */
#define OPENAI_ROW(name_, path_, body_)                                                            \
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
        .body = (body_), .end_data = "[DONE]", .fields = fields,                                   \
    }

const struct tb_api_dialect tb_api_dialect_chat =
    OPENAI_ROW("chat", "/chat/completions", chat_body);
const struct tb_api_dialect tb_api_dialect_completions =
    OPENAI_ROW("completions", "/completions", completions_body);
