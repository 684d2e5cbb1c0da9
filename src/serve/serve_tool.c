/*
 * serve_tool.c - the mock server's tool-call turns (see serve_tool.h).
 */
#include "serve_tool.h"

#include <cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "serve_conn.h"
#include "serve_dialect.h"
#include "serve_frame.h"
#include "serve_json.h"
#include "serve_oai.h"
#include "serve_stream.h"

/* The arguments' words, one drawn a call. */
static const char *const words[] = {"Paris", "Toronto", "Lagos", "Osaka", "Lima", "Oslo"};
#define NWORDS (sizeof(words) / sizeof(words[0]))

int tb_serve_tool_drawn(struct tb_serve *srv, const struct tb_serve_conn *c, uint64_t *draw)
{
    uint64_t n;
    double u;
    if (!c->rq.tools || c->rq.tool_result || !c->rq.stream || srv->tool_rate <= 0)
        return 0;
    n = atomic_fetch_add(&srv->tool_draws, 1);
    /* A stream of draws of its own: the seed tagged, the n-th (from 2,
     * where tb_serve_request_seed mixes). */
    *draw = tb_serve_request_seed(srv->seed ^ 0x746F6F6C73ull, NULL, n + 2);
    u = (double)(*draw >> 1) / (double)(1ull << 52);
    return u < srv->tool_rate;
}

/* One OpenAI chat chunk of the call: its head (id and name, arguments
 * ""), a fragment, or the finish. */
static void oai_chunk(struct tb_serve_conn *c, const char *name, const char *frag,
                      const char *finish)
{
    char id[48], head[48];
    cJSON *o = cJSON_CreateObject(), *ch, *d, *tc, *fn;
    char *json;
    snprintf(head, sizeof(head), "chatcmpl-ttsbuf-%llu", (unsigned long long)c->ctx.id);
    snprintf(id, sizeof(id), "call_ttsbuf_%llu", (unsigned long long)c->ctx.id);
    cJSON_AddStringToObject(o, "id", head);
    cJSON_AddStringToObject(o, "object", "chat.completion.chunk");
    cJSON_AddNumberToObject(o, "created", 0);
    cJSON_AddStringToObject(o, "model", c->ctx.model);
    ch = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "choices"), ch);
    cJSON_AddNumberToObject(ch, "index", 0);
    d = cJSON_AddObjectToObject(ch, "delta");
    if (finish == NULL) {
        if (name != NULL) {
            cJSON_AddStringToObject(d, "role", "assistant");
            cJSON_AddNullToObject(d, "content");
        }
        tc = cJSON_CreateObject();
        cJSON_AddItemToArray(cJSON_AddArrayToObject(d, "tool_calls"), tc);
        cJSON_AddNumberToObject(tc, "index", 0);
        if (name != NULL) {
            cJSON_AddStringToObject(tc, "id", id);
            cJSON_AddStringToObject(tc, "type", "function");
        }
        fn = cJSON_AddObjectToObject(tc, "function");
        if (name != NULL)
            cJSON_AddStringToObject(fn, "name", name);
        cJSON_AddStringToObject(fn, "arguments", frag);
        cJSON_AddNullToObject(ch, "finish_reason");
    } else {
        cJSON_AddStringToObject(ch, "finish_reason", finish);
    }
    json = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (json == NULL) {
        c->broken = 1;
        return;
    }
    tb_serve_sse_event(c, NULL, json, strlen(json));
    cJSON_free(json);
}

/* Anthropic: the tool_use block's start, or an input_json_delta. */
static void anth_tool(struct tb_serve_conn *c, const char *name, const char *frag)
{
    char id[48];
    cJSON *o = cJSON_CreateObject(), *x;
    snprintf(id, sizeof(id), "toolu_ttsbuf_%llu", (unsigned long long)c->ctx.id);
    cJSON_AddStringToObject(o, "type", name != NULL ? "content_block_start" : "content_block_delta");
    cJSON_AddNumberToObject(o, "index", 0);
    if (name != NULL) {
        x = cJSON_AddObjectToObject(o, "content_block");
        cJSON_AddStringToObject(x, "type", "tool_use");
        cJSON_AddStringToObject(x, "id", id);
        cJSON_AddStringToObject(x, "name", name);
        cJSON_AddObjectToObject(x, "input");
    } else {
        x = cJSON_AddObjectToObject(o, "delta");
        cJSON_AddStringToObject(x, "type", "input_json_delta");
        cJSON_AddStringToObject(x, "partial_json", frag);
    }
    tb_serve_dialect_json(c, name != NULL ? "content_block_start" : "content_block_delta",
                          cJSON_PrintUnformatted(o), 0);
    cJSON_Delete(o);
}

/* Ollama: the call whole in one line. */
static void ollama_tool(struct tb_serve_conn *c, const char *name, const char *word)
{
    cJSON *o = cJSON_CreateObject(), *m, *tc, *fn;
    cJSON_AddStringToObject(o, "model", c->ctx.model);
    cJSON_AddStringToObject(o, "created_at", "1970-01-01T00:00:00Z");
    m = cJSON_AddObjectToObject(o, "message");
    cJSON_AddStringToObject(m, "role", "assistant");
    cJSON_AddStringToObject(m, "content", "");
    tc = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(m, "tool_calls"), tc);
    fn = cJSON_AddObjectToObject(tc, "function");
    cJSON_AddStringToObject(fn, "name", name);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(fn, "arguments"), "query", word);
    cJSON_AddFalseToObject(o, "done");
    tb_serve_dialect_json(c, NULL, cJSON_PrintUnformatted(o), 0);
    cJSON_Delete(o);
}

/* The events of the call in c's dialect. */
static void events(struct tb_serve_conn *c, const char *name, const char *word)
{
    char args[64];
    size_t half;
    snprintf(args, sizeof(args), "{\"query\":\"%s\"}", word);
    snprintf(c->lg.tool_args, sizeof(c->lg.tool_args), "%s", args); /* what it called with */
    half = strlen(args) / 2;
    if (c->ctx.api == TB_API_CHAT) {
        char first[64];
        snprintf(first, sizeof(first), "%.*s", (int)half, args);
        oai_chunk(c, name, "", NULL);
        oai_chunk(c, NULL, first, NULL);
        oai_chunk(c, NULL, args + half, NULL);
        oai_chunk(c, NULL, NULL, "tool_calls");
        if (c->rq.include_usage)
            tb_serve_oai_part(c, TB_SERVE_PART_USAGE, NULL);
        tb_serve_sse_event(c, NULL, "[DONE]", 6);
    } else if (c->ctx.api == TB_API_ANTHROPIC) {
        char first[64];
        snprintf(first, sizeof(first), "%.*s", (int)half, args);
        tb_serve_anth_event(c, TB_SERVE_ANTH_START, NULL, 0);
        anth_tool(c, name, NULL);
        anth_tool(c, NULL, first);
        anth_tool(c, NULL, args + half);
        c->block = 0;
        tb_serve_anth_event(c, TB_SERVE_ANTH_BLOCK_STOP, NULL, 0);
        tb_serve_anth_event(c, TB_SERVE_ANTH_MSG_DELTA, "tool_use", 0);
        tb_serve_anth_event(c, TB_SERVE_ANTH_STOP, NULL, 0);
    } else {
        struct tb_serve_ollama_end e = {"stop", c->rq.prompt_tokens, 0, 0, 0, 0};
        ollama_tool(c, name, word);
        tb_serve_dialect_json(c, NULL, tb_serve_json_ollama(&c->ctx, "", NULL, &e), 0);
    }
}

int tb_serve_tool_stream(struct tb_serve_loop *s, struct tb_serve_conn *c, uint64_t draw)
{
    tb_serve_stream_head(s, c);
    events(c, c->rq.tool_name[0] != '\0' ? c->rq.tool_name : "lookup", words[(draw >> 7) % NWORDS]);
    tb_serve_out_put(c, "0\r\n\r\n", 5);
    if (c->broken)
        return tb_serve_flush(s, c);
    return tb_serve_finish(s, c);
}
