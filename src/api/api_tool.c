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

/* n more bytes of an item's arguments appended to the event's buffer:
 * every dialect reads an item's arguments right after the item is made,
 * so the items' bytes lie there in item order (api_parser.c points each
 * item at its own once the event is read).  0, or -1 (no memory). */
static int keep_args(struct tb_api_argbuf *ab, const char *s, size_t n)
{
    if (ab == NULL || n == 0)
        return 0;
    if (ab->len + n > ab->cap) {
        size_t nc = (ab->len + n) * 2;
        char *nb = realloc(ab->buf, nc);
        if (nb == NULL)
            return -1;
        ab->buf = nb;
        ab->cap = nc;
    }
    memcpy(ab->buf + ab->len, s, n);
    ab->len += n;
    return 0;
}

int tb_api_tool_args(struct tb_api_tool *t, const cJSON *v, const char *what,
                     struct tb_api_fields *f)
{
    if (v == NULL || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsString(v)) {
        size_t n = strlen(v->valuestring);
        if (keep_args(f->args, v->valuestring, n) != 0) {
            snprintf(f->bad, sizeof(f->bad), "%s could not be kept (out of memory)", what);
            return -1;
        }
        t->args_len += n;
    } else if (cJSON_IsObject(v)) {
        char *j = cJSON_PrintUnformatted(v);
        size_t n = j != NULL ? strlen(j) : 0;
        if (j == NULL || keep_args(f->args, j, n) != 0) {
            cJSON_free(j);
            snprintf(f->bad, sizeof(f->bad), "%s could not be measured (out of memory)", what);
            return -1;
        }
        t->args_len += n;
        cJSON_free(j);
    } else {
        snprintf(f->bad, sizeof(f->bad), "%s is not a string", what);
        return -1;
    }
    t->ops |= TB_API_TOOL_ARGS;
    return 0;
}
