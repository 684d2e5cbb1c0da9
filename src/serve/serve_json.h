/*
 * serve_json.h - private to libttsbuf: the mock server's JSON, in and out
 * (serve_json.c, the only server file that sees cJSON).
 *
 * Builders return a NUL-terminated string the caller releases with
 * tb_serve_json_free, or NULL when memory ran out.  Any thread.
 */
#ifndef TTSBUF_SERVE_JSON_H
#define TTSBUF_SERVE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/api.h"

/* The mock speaks the client's dialects, enum tb_api (api.h):
 * TB_API_CHAT /v1/chat/completions, TB_API_COMPLETIONS /v1/completions,
 * TB_API_ANTHROPIC /v1/messages, TB_API_OLLAMA /api/chat (NDJSON). */

#define TB_SERVE_TOOL_ARGS_MAX 256 /* bytes of a call's arguments logged, NUL included */

struct tb_serve_json_req {
    char *model;            /* malloc'd copy */
    int stream;             /* "stream": true */
    int stream_options;     /* "stream_options" present (any value) */
    int include_usage;      /* stream_options.include_usage */
    uint64_t max_tokens;    /* 0: no limit */
    uint64_t prompt_tokens; /* estimate: prompt text bytes / 4, rounded up */
    int tools;              /* offers tools (serve_tool.h) */
    int tool_result;        /* ... carries a tool's result */
    int tool_shape;         /* ... in its dialect's shape (serve_json.c): 1,
                             * else 0 */
    char tool_name[64];     /* the first tool's name, "" none */
    /* A body carrying a result: the arguments of the first call of the
     * last assistant message with calls (OpenAI's text as sent; an
     * Anthropic input or Ollama arguments object printed unformatted),
     * for the log; "" when none, or over TB_SERVE_TOOL_ARGS_MAX - 1
     * bytes. */
    char tool_args[TB_SERVE_TOOL_ARGS_MAX];
};

/*
 * tb_serve_json_request - reads a request body as the API would.  Returns
 * 0 and *r (free with tb_serve_json_request_free); TB_EFORMAT with the
 * message for a 400 body in err (bad JSON or UTF-8, no model, a field of
 * the wrong type, max_tokens < 1, stream_options without stream);
 * TB_ENOMEM.
 */
int tb_serve_json_request(const char *body, size_t len, enum tb_api api,
                          struct tb_serve_json_req *r, char *err, size_t errlen);
void tb_serve_json_request_free(struct tb_serve_json_req *r);

/* What every piece of one response shares. */
struct tb_serve_json_ctx {
    enum tb_api api;
    uint64_t id;       /* "chatcmpl-ttsbuf-<id>" / "cmpl-ttsbuf-<id>" */
    const char *model; /* echoed as sent */
};

/* The once-per-response chunks; token events are rendered without cJSON
 * by serve_chunk.c. */
enum tb_serve_json_part {
    TB_SERVE_PART_ROLE,   /* chat only: delta {role, content ""} */
    TB_SERVE_PART_FINISH, /* empty delta, finish_reason = text */
    TB_SERVE_PART_USAGE   /* choices [], usage */
};

/* One streamed chunk object.  text: see the part; prompt/completion: the
 * usage part's counts. */
char *tb_serve_json_chunk(const struct tb_serve_json_ctx *c, enum tb_serve_json_part part,
                          const char *text, uint64_t prompt, uint64_t completion);

/* A whole non-streamed response (chat.completion or text_completion);
 * reasoning NULL: no reasoning_content. */
char *tb_serve_json_body(const struct tb_serve_json_ctx *c, const char *content,
                         const char *reasoning, const char *finish, uint64_t prompt,
                         uint64_t completion);

/* {"error":{"message","type","param":null,"code"}}; code NULL: null. */
char *tb_serve_json_error(const char *message, const char *type, const char *code);

/* ---- Anthropic Messages and Ollama /api/chat -------------------------- */

/* Anthropic stream events, in the order a stream sends them. */
enum tb_serve_anth {
    TB_SERVE_ANTH_START,       /* message_start (usage.input_tokens = prompt) */
    TB_SERVE_ANTH_PING,        /* ping */
    TB_SERVE_ANTH_BLOCK_START, /* content_block_start: thinking or text block */
    TB_SERVE_ANTH_DELTA,       /* content_block_delta: thinking_delta or text_delta */
    TB_SERVE_ANTH_BLOCK_STOP,  /* content_block_stop */
    TB_SERVE_ANTH_MSG_DELTA,   /* message_delta: stop_reason = text, usage.output_tokens */
    TB_SERVE_ANTH_STOP         /* message_stop */
};

/* The event's name ("message_start", ...): its SSE event: line. */
const char *tb_serve_json_anth_name(enum tb_serve_anth ev);

/* One event's data.  index: the content block; reasoning: a thinking
 * block / delta; text: the delta's text or the stop reason. */
char *tb_serve_json_anth(const struct tb_serve_json_ctx *c, enum tb_serve_anth ev, int index,
                         int reasoning, const char *text, uint64_t prompt, uint64_t completion);

/* A whole non-streamed Message (reasoning NULL: no thinking block). */
char *tb_serve_json_anth_body(const struct tb_serve_json_ctx *c, const char *content,
                              const char *reasoning, const char *stop_reason, uint64_t prompt,
                              uint64_t completion);

/* {"type":"error","error":{"type","message"}}: an error event or body. */
char *tb_serve_json_anth_error(const char *type, const char *message);

/* What Ollama's final line reports. */
struct tb_serve_ollama_end {
    const char *done_reason; /* "stop" or "length" */
    uint64_t prompt, completion;
    int64_t total_ns, prompt_ns, eval_ns;
};

/* One /api/chat line: message {role, content, thinking when reasoning is
 * not NULL}; end NULL: "done": false, else the final line's fields. */
char *tb_serve_json_ollama(const struct tb_serve_json_ctx *c, const char *content,
                           const char *reasoning, const struct tb_serve_ollama_end *end);

/* {"error": message}. */
char *tb_serve_json_ollama_error(const char *message);

/* The GET /v1/models list. */
char *tb_serve_json_models(void);

void tb_serve_json_free(char *s); /* NULL is a no-op */

#endif
