/*
 * api_toolmsg.c - a chat body's tools and tool exchange, sent in OpenAI's
 * shape by every caller (api.h, tools_json), made Anthropic's or
 * Ollama's (api_toolmsg.h).  A tool call's arguments are JSON text in
 * OpenAI's shape and an object in the other two: text that is not a JSON
 * object is sent as {} (the model's own arguments are always objects).
 */
#include <string.h>

#include "api_toolmsg.h"
#include "ttsbuf/error.h"

/* Whether m's role is role. */
static int role_is(const cJSON *m, const char *role)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "role");
    return cJSON_IsString(r) && strcmp(r->valuestring, role) == 0;
}

/* A tool call's arguments (OpenAI's JSON text) as an object, or NULL
 * (no memory). */
static cJSON *args_object(const cJSON *fn)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
    cJSON *o = cJSON_IsString(a) ? cJSON_Parse(a->valuestring) : NULL;
    if (cJSON_IsObject(a))
        return cJSON_Duplicate(a, 1);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        o = cJSON_CreateObject();
    }
    return o;
}

/* A string field of o copied into dst (key: its name there), "" when
 * absent.  0 or -1 (no memory). */
static int copy_str(cJSON *dst, const char *key, const cJSON *o, const char *from)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, from);
    return cJSON_AddStringToObject(dst, key, cJSON_IsString(v) ? v->valuestring : "") != NULL ? 0
                                                                                              : -1;
}

/* OpenAI's tools as Anthropic's: {name, description, input_schema}. */
static int anthropic_tools(cJSON *root)
{
    cJSON *tools = cJSON_GetObjectItemCaseSensitive(root, "tools"), *t;
    cJSON_ArrayForEach(t, tools)
    {
        cJSON *fn = cJSON_DetachItemFromObjectCaseSensitive(t, "function"), *par;
        if (fn == NULL)
            continue; /* already Anthropic's (the user's --body-json) */
        cJSON_DeleteItemFromObjectCaseSensitive(t, "type");
        par = cJSON_DetachItemFromObjectCaseSensitive(fn, "parameters");
        if (par == NULL && (par = cJSON_CreateObject()) != NULL)
            cJSON_AddStringToObject(par, "type", "object");
        if (copy_str(t, "name", fn, "name") != 0 ||
            (cJSON_GetObjectItemCaseSensitive(fn, "description") != NULL &&
             copy_str(t, "description", fn, "description") != 0) ||
            par == NULL || !cJSON_AddItemToObject(t, "input_schema", par)) {
            cJSON_Delete(fn);
            return TB_ENOMEM;
        }
        cJSON_Delete(fn);
    }
    return 0;
}

/* An assistant message with tool_calls as Anthropic's: content blocks,
 * its text (if any) then a tool_use block {id, name, input} a call. */
static int anthropic_call(cJSON *m)
{
    cJSON *calls = cJSON_DetachItemFromObjectCaseSensitive(m, "tool_calls"), *c;
    cJSON *text = cJSON_DetachItemFromObjectCaseSensitive(m, "content");
    cJSON *blocks = cJSON_AddArrayToObject(m, "content");
    int rc = blocks != NULL ? 0 : TB_ENOMEM;
    if (rc == 0 && cJSON_IsString(text) && text->valuestring[0] != '\0') {
        cJSON *b = cJSON_CreateObject();
        if (b == NULL || !cJSON_AddItemToArray(blocks, b) ||
            cJSON_AddStringToObject(b, "type", "text") == NULL ||
            cJSON_AddStringToObject(b, "text", text->valuestring) == NULL)
            rc = TB_ENOMEM;
    }
    cJSON_ArrayForEach(c, calls)
    {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(c, "function");
        cJSON *b = cJSON_CreateObject(), *in;
        if (rc != 0 || b == NULL || !cJSON_AddItemToArray(blocks, b) ||
            cJSON_AddStringToObject(b, "type", "tool_use") == NULL || copy_str(b, "id", c, "id") ||
            copy_str(b, "name", fn, "name") || (in = args_object(fn)) == NULL ||
            !cJSON_AddItemToObject(b, "input", in)) {
            rc = TB_ENOMEM;
            break;
        }
    }
    cJSON_Delete(calls);
    cJSON_Delete(text);
    return rc;
}

/* A run of "tool" messages from m on as one user message of tool_result
 * blocks {tool_use_id, content}: m becomes it, the others are deleted. */
static int anthropic_results(cJSON *msgs, cJSON *m)
{
    cJSON *blocks = cJSON_CreateArray(), *next;
    for (cJSON *t = m; t != NULL && role_is(t, "tool"); t = next) {
        cJSON *b = cJSON_CreateObject();
        next = t->next;
        if (blocks == NULL || b == NULL || !cJSON_AddItemToArray(blocks, b) ||
            cJSON_AddStringToObject(b, "type", "tool_result") == NULL ||
            copy_str(b, "tool_use_id", t, "tool_call_id") || copy_str(b, "content", t, "content")) {
            cJSON_Delete(blocks);
            return TB_ENOMEM;
        }
        if (t != m)
            cJSON_Delete(cJSON_DetachItemViaPointer(msgs, t));
    }
    cJSON_DeleteItemFromObjectCaseSensitive(m, "tool_call_id");
    cJSON_DeleteItemFromObjectCaseSensitive(m, "content");
    cJSON_ReplaceItemInObjectCaseSensitive(m, "role", cJSON_CreateString("user"));
    return cJSON_AddItemToObject(m, "content", blocks) ? 0 : TB_ENOMEM;
}

int tb_api_toolmsg_anthropic(cJSON *root)
{
    cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages"), *m;
    int rc = anthropic_tools(root);
    for (m = msgs != NULL ? msgs->child : NULL; rc == 0 && m != NULL; m = m->next) {
        if (role_is(m, "assistant") && cJSON_GetObjectItemCaseSensitive(m, "tool_calls") != NULL)
            rc = anthropic_call(m);
        else if (role_is(m, "tool"))
            rc = anthropic_results(msgs, m);
    }
    return rc;
}

int tb_api_toolmsg_ollama(cJSON *root)
{
    cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages"), *m, *c;
    const char *last = "";
    cJSON_ArrayForEach(m, msgs)
    {
        cJSON *calls = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
        if (role_is(m, "assistant") && calls != NULL) {
            cJSON_ArrayForEach(c, calls)
            {
                cJSON *fn = cJSON_GetObjectItemCaseSensitive(c, "function");
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name");
                cJSON *in = args_object(fn);
                if (in == NULL || !cJSON_ReplaceItemInObjectCaseSensitive(fn, "arguments", in))
                    return cJSON_Delete(in), TB_ENOMEM;
                last = cJSON_IsString(name) ? name->valuestring : "";
                cJSON_DeleteItemFromObjectCaseSensitive(c, "id");
                cJSON_DeleteItemFromObjectCaseSensitive(c, "type");
            }
        } else if (role_is(m, "tool")) {
            /* Ollama's tool message names its tool, not a call id. */
            cJSON_DeleteItemFromObjectCaseSensitive(m, "tool_call_id");
            if (cJSON_GetObjectItemCaseSensitive(m, "tool_name") == NULL &&
                cJSON_AddStringToObject(m, "tool_name", last) == NULL)
                return TB_ENOMEM;
        }
    }
    return 0;
}
