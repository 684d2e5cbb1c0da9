/*
 * api_tool.c - the tool items every dialect reads (api_priv.h): a call's
 * index, its name and id, its arguments' bytes, each checked, so a
 * malformed item is bad event JSON in every dialect alike.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_tool.h"
#include "base/jsonfield.h"

#define TOOL_INDEX_MAX 1023

struct tb_api_tool *tb_api_tool_new(struct tb_api_delta *d, struct tb_api_fields *f,
                                    const cJSON *index, const char *what)
{
    struct tb_api_tool *t;
    double v = cJSON_IsNumber(index) ? index->valuedouble : -1;
    if (!(v >= 0 && v <= TOOL_INDEX_MAX && v == floor(v))) {
        snprintf(f->bad, sizeof(f->bad), "%s is not a whole number in 0..%d", what,
                 TOOL_INDEX_MAX);
        return NULL;
    }
    if (d->ntools >= TB_API_TOOLS_MAX) {
        snprintf(f->bad, sizeof(f->bad), "over %d tool calls in one event", TB_API_TOOLS_MAX);
        return NULL;
    }
    t = &d->tools[d->ntools++];
    memset(t, 0, sizeof(*t));
    t->index = (long)v;
    return t;
}

int tb_api_tool_str(char *dst, const cJSON *v, const char *what, struct tb_api_fields *f)
{
    dst[0] = '\0';
    if (v == NULL || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v)) {
        snprintf(f->bad, sizeof(f->bad), "%s is not a string", what);
        return -1;
    }
    tb_jsonfield_line(dst, TB_TOOL_NAME_MAX, v);
    return 0;
}

int tb_api_tool_args(struct tb_api_tool *t, const cJSON *v, const char *what,
                     struct tb_api_fields *f)
{
    if (v == NULL || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsString(v)) {
        t->args_len += strlen(v->valuestring);
    } else if (cJSON_IsObject(v)) {
        char *j = cJSON_PrintUnformatted(v);
        if (j == NULL) {
            snprintf(f->bad, sizeof(f->bad), "%s could not be measured (out of memory)", what);
            return -1;
        }
        t->args_len += strlen(j);
        cJSON_free(j);
    } else {
        snprintf(f->bad, sizeof(f->bad), "%s is not a string", what);
        return -1;
    }
    t->ops |= TB_API_TOOL_ARGS;
    return 0;
}
