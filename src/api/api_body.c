/*
 * api_body.c - the request body every dialect starts from: the OpenAI chat
 * shape, with the user's --body-json merged last (see api_body.h).
 */
#include "api_body.h"

#include <cJSON.h>

#include "ttsbuf/error.h"

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

int tb_api_body_chat(const struct tb_api_request *q, int prompt, int usage, cJSON **out, char *err,
                     size_t errlen)
{
    cJSON *root = cJSON_CreateObject(), *v = NULL;
    int rc = 0;
    *out = NULL;
    if (root == NULL)
        return TB_ENOMEM;
    cJSON_AddStringToObject(root, "model", q->model != NULL ? q->model : "");
    if (!prompt) {
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
    } else if (q->messages_json != NULL) {
        /* A prompt-only API: the messages would be dropped, and an empty
         * prompt sent in their place. */
        rc = tb_seterr(err, errlen, TB_EINVAL,
                       "chat messages need a chat API (the completions API sends one prompt)");
        goto out;
    } else {
        cJSON_AddStringToObject(root, "prompt", q->prompt != NULL ? q->prompt : "");
    }
    if (!prompt && q->tools_json != NULL) {
        v = parse_text(q->tools_json, "tools", cJSON_IsArray, "array", err, errlen, &rc);
        if (rc != 0)
            goto out;
        cJSON_AddItemToObject(root, "tools", v);
    }
    cJSON_AddTrueToObject(root, "stream");
    if (usage) {
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
    *out = root;
    return 0;
out:
    cJSON_Delete(root);
    return rc;
}

int tb_api_body_print(cJSON *root, char **out)
{
    *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return *out != NULL ? 0 : TB_ENOMEM;
}

int tb_api_body_adapted(const struct tb_api_request *q,
                        int (*adapt)(cJSON *root, const struct tb_api_request *q), char **out,
                        char *err, size_t errlen)
{
    cJSON *root;
    int rc = tb_api_body_chat(q, 0, 0, &root, err, errlen);
    *out = NULL;
    if (rc != 0)
        return rc;
    /* --body-json keys were merged into the chat body last, so anything
     * the user set is kept as given by the dialect's moves. */
    rc = adapt(root, q);
    if (rc != 0) {
        cJSON_Delete(root);
        return rc;
    }
    return tb_api_body_print(root, out);
}
