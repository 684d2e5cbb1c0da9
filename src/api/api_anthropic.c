/*
 * api_anthropic.c - the Anthropic Messages dialect (api.h says what it
 * reads): its row in the dialect table, its request body, its events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_body.h"
#include "api_priv.h"
#include "api_tool.h"
#include "api_toolmsg.h"
#include "base/jsonfield.h"
#include "ttsbuf/error.h"

#define ANTHROPIC_VERSION "2023-06-01"
#define ANTHROPIC_MAX_TOKENS 1024 /* sent when none is given: the API requires one */

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

/* The chat body made Anthropic's: a max_tokens always, system messages
 * moved out of the list, tools and the tool exchange in its shape. */
static int adapt(cJSON *root, const struct tb_api_request *q)
{
    (void)q;
    int rc;
    if (cJSON_GetObjectItemCaseSensitive(root, "max_tokens") == NULL)
        cJSON_AddNumberToObject(root, "max_tokens", ANTHROPIC_MAX_TOKENS);
    rc = move_system(root);
    return rc == 0 ? tb_api_toolmsg_anthropic(root) : rc;
}

static int body(const struct tb_api_request *q, char **out, char *err, size_t errlen)
{
    return tb_api_body_adapted(q, adapt, out, err, errlen);
}

/* A tool_use block's start (index, id, name), an input_json_delta's
 * fragment (partial_json), a block's stop: tool items. */
static void tool_item(const cJSON *root, unsigned op, const cJSON *block, const cJSON *fragment,
                      struct tb_api_delta *d, struct tb_api_fields *f)
{
    struct tb_api_tool *t =
        tb_api_tool_new(d, f, cJSON_GetObjectItemCaseSensitive(root, "index"), "index");
    if (t == NULL)
        return;
    t->ops = op;
    if (op == TB_API_TOOL_START &&
        (tb_api_tool_str(t->id, cJSON_GetObjectItemCaseSensitive(block, "id"),
                         "content_block.id", f) != 0 ||
         tb_api_tool_str(t->name, cJSON_GetObjectItemCaseSensitive(block, "name"),
                         "content_block.name", f) != 0))
        return;
    if (op == TB_API_TOOL_ARGS) {
        if (!cJSON_IsString(fragment)) {
            snprintf(f->bad, sizeof(f->bad), "delta.partial_json is not a string");
            return;
        }
        tb_api_tool_args(t, fragment, "delta.partial_json", f);
    }
}

static void fields(const cJSON *root, const char *sse_type, size_t type_len, struct tb_api_delta *d,
                   struct tb_api_fields *f)
{
    char type[64] = "";
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(root, "type");
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(root, "delta");
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    /* The data's own "type" names the event; the SSE event: line says the
     * same, and is the fallback. */
    if (cJSON_IsString(jt))
        snprintf(type, sizeof(type), "%s", jt->valuestring);
    else if (sse_type != NULL)
        snprintf(type, sizeof(type), "%.*s", (int)(type_len < 63 ? type_len : 63), sse_type);
    f->what = "the event text";
    if (strcmp(type, "message_start") == 0) {
        usage = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "message"),
                                                 "usage");
        d->usage_prompt =
            tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(usage, "input_tokens"));
    } else if (strcmp(type, "content_block_start") == 0) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "content_block");
        const cJSON *bt = cJSON_GetObjectItemCaseSensitive(b, "type");
        if (cJSON_IsString(bt) && strcmp(bt->valuestring, "tool_use") == 0) {
            d->tool_calls = 1;
            tool_item(root, TB_API_TOOL_START, b, NULL, d, f);
        }
        else if (cJSON_IsString(bt) && strcmp(bt->valuestring, "text") == 0)
            f->text = cJSON_GetObjectItemCaseSensitive(b, "text");
        else if (cJSON_IsString(bt) && strcmp(bt->valuestring, "thinking") == 0)
            f->thinking = cJSON_GetObjectItemCaseSensitive(b, "thinking");
    } else if (strcmp(type, "content_block_delta") == 0) {
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(delta, "type");
        if (cJSON_IsString(dt) && strcmp(dt->valuestring, "text_delta") == 0)
            f->text = cJSON_GetObjectItemCaseSensitive(delta, "text");
        else if (cJSON_IsString(dt) && strcmp(dt->valuestring, "thinking_delta") == 0)
            f->thinking = cJSON_GetObjectItemCaseSensitive(delta, "thinking");
        else if (cJSON_IsString(dt) && strcmp(dt->valuestring, "input_json_delta") == 0)
            tool_item(root, TB_API_TOOL_ARGS, NULL,
                      cJSON_GetObjectItemCaseSensitive(delta, "partial_json"), d, f);
    } else if (strcmp(type, "content_block_stop") == 0) {
        /* Any block's stop: the reader ends a tool call at its index. */
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(root, "index")))
            tool_item(root, TB_API_TOOL_END, NULL, NULL, d, f);
    } else if (strcmp(type, "message_delta") == 0) {
        tb_jsonfield_line(d->finish_reason, sizeof(d->finish_reason),
                          cJSON_GetObjectItemCaseSensitive(delta, "stop_reason"));
        d->usage_completion =
            tb_jsonfield_count(cJSON_GetObjectItemCaseSensitive(usage, "output_tokens"));
    } else if (strcmp(type, "message_stop") == 0) {
        d->done = 1;
    }
    /* error: read before (tb_evjson_error); ping and types added
     * later: nothing to record. */
}

const struct tb_api_dialect tb_api_dialect_anthropic = {
    {"anthropic", "/messages", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "x-api-key",
     "anthropic-version: " ANTHROPIC_VERSION, "text/event-stream", TB_API_SSE, "message_stop", 0,
     "https://api.anthropic.com/v1"},
    body,
    NULL,
    fields,
};
