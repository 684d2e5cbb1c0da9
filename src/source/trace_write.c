/*
 * trace_write.c - a stream as a JSONL trace (trace.h's tb_trace_write):
 * the header, one line an event, the tool and TTS lines, usage, the end;
 * times printed so that they read back bit-identical.
 */
#include "ttsbuf/trace.h"
#include "ttsbuf/version.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "ttsbuf/error.h"
#include "ttsbuf/jsonline.h"
#include "trace_tool.h"
#include "trace_tts.h"

/*
 * Adds "t" so that it reads back bit-identical.  cJSON's printer is not
 * enough: it keeps a 15-digit form whenever that reads back within a
 * relative DBL_EPSILON, which drops the last bit (0.1 + 0.2 came back as
 * 0.3).  tb_numfmt_double prints the shortest form that reads back exactly.
 */
static void add_time(cJSON *o, double t)
{
    char num[32];
    if (!isfinite(t)) {
        cJSON_AddNumberToObject(o, "t", t); /* printed as null; rejected on load */
        return;
    }
    cJSON_AddRawToObject(o, "t", tb_numfmt_double(num, sizeof(num), t));
}

static int has_server(const struct tb_server_timing *t)
{
    return t->total_ns >= 0 || t->load_ns >= 0 || t->prompt_eval_ns >= 0 || t->eval_ns >= 0 ||
           t->prompt_eval_count >= 0 || t->eval_count >= 0;
}

static void add_server(cJSON *o, const struct tb_server_timing *t)
{
    cJSON *v = cJSON_AddObjectToObject(o, "server");
    const char *const names[] = {"total_ns",       "load_ns",    "prompt_eval_count",
                                 "prompt_eval_ns", "eval_count", "eval_ns"};
    const long long vals[] = {t->total_ns,       t->load_ns,    t->prompt_eval_count,
                              t->prompt_eval_ns, t->eval_count, t->eval_ns};
    for (size_t i = 0; v != NULL && i < sizeof(names) / sizeof(names[0]); i++)
        if (vals[i] >= 0)
            cJSON_AddNumberToObject(v, names[i], (double)vals[i]);
}

/* {"usage": {...}, "server": {...}}: each part when known. */
static int write_usage(FILE *f, const struct tb_stream *s)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return TB_ENOMEM;
    if (s->usage_tokens >= 0) {
        cJSON *u = cJSON_AddObjectToObject(o, "usage");
        if (u != NULL)
            cJSON_AddNumberToObject(u, "completion_tokens", (double)s->usage_tokens);
    }
    if (has_server(&s->server))
        add_server(o, &s->server);
    return tb_json_put_line(f, o);
}

/* The last line: how the stream ended (an unknown end says so). */
static int write_end(FILE *f, const struct tb_stream_end *end)
{
    cJSON *o = cJSON_CreateObject(), *e;
    char num[32];
    if (o == NULL)
        return TB_ENOMEM;
    e = cJSON_AddObjectToObject(o, "end");
    if (e == NULL) {
        cJSON_Delete(o);
        return TB_ENOMEM;
    }
    cJSON_AddStringToObject(e, "kind", tb_end_name(end->kind));
    if (isfinite(end->t) && end->t >= 0)
        cJSON_AddRawToObject(e, "t", tb_numfmt_double(num, sizeof(num), end->t));
    else
        cJSON_AddNullToObject(e, "t");
    tb_json_add_error(e, end->error[0] ? end->error : NULL, end->message, end->http_status);
    cJSON_AddNumberToObject(e, "ignored_bytes", (double)end->ignored_bytes);
    if (end->finish_reason[0])
        cJSON_AddStringToObject(e, "finish_reason", end->finish_reason);
    return tb_json_put_line(f, o);
}

int tb_trace_write(FILE *f, const struct tb_stream *s)
{
    return tb_trace_write_opts(f, s, NULL);
}

int tb_trace_write_opts(FILE *f, const struct tb_stream *s, const char *options)
{
    cJSON *o, *sc, *opts = NULL;
    /* Version 3 only when there are "tts" lines: an older ttsbuf refuses
     * them by the version, and reads every other trace as before. */
    int version = s->ntools > 0 || s->turn_tool.calls > 0 ? TB_TRACE_VERSION
                  : s->tts != NULL                        ? TB_TRACE_VERSION_TTS
                                                          : TB_TRACE_VERSION_BASE;
    int rc;
    char *tmp = NULL;
    size_t tmpcap = 0;

    if (options != NULL) {
        opts = cJSON_Parse(options);
        if (!cJSON_IsObject(opts)) {
            cJSON_Delete(opts);
            return TB_EINVAL;
        }
    }
    o = cJSON_CreateObject();
    if (o == NULL) {
        cJSON_Delete(opts);
        return TB_ENOMEM;
    }
    cJSON_AddNumberToObject(o, "ttsbuf_trace", version);
    sc = cJSON_AddObjectToObject(o, "schema");
    if (sc != NULL) {
        cJSON_AddStringToObject(sc, "name", "ttsbuf.trace");
        cJSON_AddNumberToObject(sc, "version", version);
    }
    cJSON_AddStringToObject(o, "ttsbuf_version", tb_version());
    if (s->request >= 0)
        cJSON_AddNumberToObject(o, "request", (double)s->request);
    if (isfinite(s->eou_s))
        tb_json_add_num(o, "eou_s", s->eou_s);
    if (isfinite(s->tool_s))
        tb_json_add_num(o, "tool_s", s->tool_s);
    if (s->started_at[0])
        cJSON_AddStringToObject(o, "started_at", s->started_at);
    if (s->command[0])
        cJSON_AddStringToObject(o, "command", s->command);
    if (s->model[0])
        cJSON_AddStringToObject(o, "model", s->model);
    if (s->base_url[0])
        cJSON_AddStringToObject(o, "base_url", s->base_url);
    if (s->provider[0])
        cJSON_AddStringToObject(o, "provider", s->provider);
    if (opts != NULL)
        cJSON_AddItemToObject(o, "options", opts);
    cJSON_AddNumberToObject(o, "events", (double)s->n);
    if ((s->tts != NULL && tb_trace_tts_add_header(o, s->tts) != 0) ||
        tb_trace_toolturn_add(o, s) != 0) {
        cJSON_Delete(o);
        free(tmp);
        return TB_ENOMEM;
    }
    rc = tb_json_put_line(f, o);
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        const struct tb_event *e = &s->ev[i];
        if ((size_t)e->len + 1 > tmpcap) {
            char *nt = realloc(tmp, (size_t)e->len + 1);
            if (nt == NULL) {
                rc = TB_ENOMEM;
                break;
            }
            tmp = nt;
            tmpcap = (size_t)e->len + 1;
        }
        memcpy(tmp, s->text + e->off, e->len);
        tmp[e->len] = '\0';
        o = cJSON_CreateObject();
        if (o == NULL) {
            rc = TB_ENOMEM;
            break;
        }
        add_time(o, e->t);
        cJSON_AddStringToObject(o, "text", tmp);
        if (e->kind == TB_KIND_REASONING)
            cJSON_AddStringToObject(o, "kind", "reasoning");
        if (e->tokens > 1)
            cJSON_AddNumberToObject(o, "tokens", e->tokens);
        rc = tb_json_put_line(f, o);
    }
    free(tmp);
    if (rc == 0)
        rc = tb_trace_tool_write(f, s);
    if (rc == 0 && (s->usage_tokens >= 0 || has_server(&s->server)))
        rc = write_usage(f, s);
    if (rc == 0 && s->tts != NULL)
        rc = tb_trace_tts_write(f, s->tts);
    if (rc == 0)
        rc = write_end(f, &s->end);
    if (rc == 0 && ferror(f))
        rc = TB_EIO;
    return rc;
}
