/*
 * trace_tool.c - a trace's tool-call lines (see trace_tool.h).
 */
#include "trace_tool.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "ttsbuf/error.h"
#include "ttsbuf/jsonline.h"

/* A string key of the tool object into dst: absent is "", else it must
 * be a string that fits. */
static int read_str(const cJSON *v, const char *key, char *dst, char *msg, size_t msglen)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, key);
    dst[0] = '\0';
    if (s == NULL || cJSON_IsNull(s))
        return 0; /* none came (an Ollama call's id) */
    if (!cJSON_IsString(s) || strlen(s->valuestring) >= TB_TOOL_NAME_MAX) {
        snprintf(msg, msglen, "\"tool.%s\" is not a string of at most %d bytes", key,
                 TB_TOOL_NAME_MAX - 1);
        return TB_EFORMAT;
    }
    memcpy(dst, s->valuestring, strlen(s->valuestring) + 1);
    return 0;
}

/* The latest call named c->name and c->id still open, or NULL. */
static struct tb_tool_call *open_call(struct tb_stream *s, const struct tb_tool_call *c)
{
    for (size_t i = s->ntools; i-- > 0;)
        if (isnan(s->tools[i].t_end) && strcmp(s->tools[i].name, c->name) == 0 &&
            strcmp(s->tools[i].id, c->id) == 0)
            return &s->tools[i];
    return NULL;
}

int tb_trace_tool_read(const cJSON *t, const cJSON *v, struct tb_stream *s, char *msg,
                       size_t msglen)
{
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(v, "phase");
    const cJSON *ab = cJSON_GetObjectItemCaseSensitive(v, "args_bytes");
    struct tb_tool_call c = {.t_end = NAN}, *o;
    double b = cJSON_IsNumber(ab) ? ab->valuedouble : -1;
    int rc;
    if (!cJSON_IsObject(v))
        return snprintf(msg, msglen, "\"tool\" is not an object"), TB_EFORMAT;
    if (!cJSON_IsNumber(t) || !(t->valuedouble >= 0 && t->valuedouble <= TB_TIME_MAX))
        return snprintf(msg, msglen, "\"t\" of a tool line is not a time in 0..1e9"), TB_EFORMAT;
    if (!(b >= 0 && b <= TB_TOOL_ARGS_MAX && b == floor(b)))
        return snprintf(msg, msglen, "\"tool.args_bytes\" is not a whole number in 0..%u",
                        TB_TOOL_ARGS_MAX),
               TB_EFORMAT;
    if ((rc = read_str(v, "name", c.name, msg, msglen)) != 0 ||
        (rc = read_str(v, "id", c.id, msg, msglen)) != 0)
        return rc;
    c.t_start = t->valuedouble;
    c.args_bytes = (uint64_t)b;
    if (cJSON_IsString(ph) && strcmp(ph->valuestring, "start") == 0) {
        rc = tb_stream_tool_add(s, &c);
        if (rc == TB_ETOOBIG)
            snprintf(msg, msglen, "over %u tool calls", TB_STREAM_TOOLS_MAX);
        return rc;
    }
    if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "end") != 0)
        return snprintf(msg, msglen, "\"tool.phase\" must be \"start\" or \"end\""), TB_EFORMAT;
    o = open_call(s, &c);
    if (o == NULL)
        return snprintf(msg, msglen, "a tool \"end\" line with no call of that name and id open"),
               TB_EFORMAT;
    if (c.t_start < o->t_start)
        return snprintf(msg, msglen, "a tool call ends before it starts"), TB_EFORMAT;
    o->t_end = c.t_start;
    o->args_bytes = c.args_bytes;
    return 0;
}

/* One line: the call's start or end. */
struct mark {
    double t;
    size_t call;
    int end;
};

static int mark_cmp(const void *a, const void *b)
{
    const struct mark *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->end != y->end)
        return x->end - y->end; /* a start before an end at the same time */
    return x->call < y->call ? -1 : x->call > y->call;
}

static int put_mark(FILE *f, const struct tb_tool_call *c, const struct mark *m)
{
    char num[32];
    cJSON *o = cJSON_CreateObject(), *v;
    if (o == NULL ||
        cJSON_AddRawToObject(o, "t", tb_numfmt_double(num, sizeof(num), m->t)) == NULL ||
        (v = cJSON_AddObjectToObject(o, "tool")) == NULL) {
        cJSON_Delete(o);
        return TB_ENOMEM;
    }
    cJSON_AddStringToObject(v, "phase", m->end ? "end" : "start");
    cJSON_AddStringToObject(v, "name", c->name);
    if (c->id[0] != '\0')
        cJSON_AddStringToObject(v, "id", c->id);
    else
        cJSON_AddNullToObject(v, "id"); /* none came: Ollama's calls have no id */
    cJSON_AddNumberToObject(v, "args_bytes", (double)c->args_bytes);
    return tb_json_put_line(f, o);
}

int tb_trace_tool_write(FILE *f, const struct tb_stream *s)
{
    struct mark *m;
    size_t n = 0;
    int rc = 0;
    if (s->ntools == 0)
        return 0;
    m = malloc(2 * s->ntools * sizeof(*m));
    if (m == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < s->ntools; i++) {
        m[n++] = (struct mark){s->tools[i].t_start, i, 0};
        if (isfinite(s->tools[i].t_end))
            m[n++] = (struct mark){s->tools[i].t_end, i, 1};
    }
    qsort(m, n, sizeof(*m), mark_cmp);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = put_mark(f, &s->tools[m[i].call], &m[i]);
    free(m);
    return rc;
}

/* One time of the tool_turn object: a number of seconds in 0..1e9, or
 * (nullable) null or absent for NaN. */
static int turn_time(const cJSON *v, const char *key, int nullable, double *out, char *msg,
                     size_t msglen)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, key);
    *out = NAN;
    if (nullable && (x == NULL || cJSON_IsNull(x)))
        return 0;
    if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= TB_TIME_MAX)) {
        snprintf(msg, msglen, "\"tool_turn.%s\" is not a time in 0..1e9", key);
        return TB_EFORMAT;
    }
    *out = x->valuedouble;
    return 0;
}

int tb_trace_toolturn_read(const cJSON *v, struct tb_stream *s, char *msg, size_t msglen)
{
    struct tb_stream_toolturn t;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(v, "calls");
    int rc;
    if (v == NULL)
        return 0;
    if (!cJSON_IsObject(v))
        return snprintf(msg, msglen, "\"tool_turn\" is not an object"), TB_EFORMAT;
    if (!cJSON_IsNumber(n) || !(n->valuedouble >= 1 && n->valuedouble <= TB_STREAM_TOOLS_MAX) ||
        n->valuedouble != floor(n->valuedouble))
        return snprintf(msg, msglen, "\"tool_turn.calls\" is not a whole number in 1..%u",
                        TB_STREAM_TOOLS_MAX),
               TB_EFORMAT;
    tb_stream_toolturn_init(&t);
    t.calls = (uint32_t)n->valuedouble;
    if ((rc = turn_time(v, "start_s", 0, &t.start, msg, msglen)) != 0 ||
        (rc = turn_time(v, "end_s", 0, &t.end, msg, msglen)) != 0 ||
        (rc = turn_time(v, "tool_s", 0, &t.wait, msg, msglen)) != 0 ||
        (rc = turn_time(v, "filler_at_s", 1, &t.filler_at, msg, msglen)) != 0 ||
        (rc = turn_time(v, "filler_s", 1, &t.filler_s, msg, msglen)) != 0)
        return rc;
    if (t.end < t.start)
        return snprintf(msg, msglen, "\"tool_turn.end_s\" is before its start_s"), TB_EFORMAT;
    if (isnan(t.filler_at) != isnan(t.filler_s))
        return snprintf(msg, msglen, "\"tool_turn\" has one of filler_at_s and filler_s only"),
               TB_EFORMAT;
    t.filler = cJSON_GetObjectItemCaseSensitive(v, "filler_at_s") != NULL; /* null: none heard */
    s->turn_tool = t;
    return 0;
}

int tb_trace_toolturn_add(cJSON *o, const struct tb_stream *s)
{
    const struct tb_stream_toolturn *t = &s->turn_tool;
    char num[32];
    const struct {
        const char *key;
        double v;
    } row[] = {{"start_s", t->start},
               {"end_s", t->end},
               {"tool_s", t->wait},
               {"filler_at_s", t->filler_at},
               {"filler_s", t->filler_s}};
    cJSON *v;
    if (t->calls == 0)
        return 0;
    if ((v = cJSON_AddObjectToObject(o, "tool_turn")) == NULL ||
        cJSON_AddNumberToObject(v, "calls", t->calls) == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < sizeof(row) / sizeof(row[0]); i++) {
        if (i >= 3 && !t->filler)
            break; /* no filler: absent; one not heard: null */
        if ((isnan(row[i].v)
                 ? cJSON_AddNullToObject(v, row[i].key)
                 : cJSON_AddRawToObject(v, row[i].key,
                                        tb_numfmt_double(num, sizeof(num), row[i].v))) == NULL)
            return TB_ENOMEM;
    }
    return 0;
}
