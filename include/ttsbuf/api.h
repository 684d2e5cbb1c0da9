/*
 * api.h - provider dialects behind one interface: what to send (path,
 * auth, request body) and how to read what comes back (stream framing,
 * and each event turned into content, reasoning, usage, error or end).
 * Every reader of a stream goes through it (the stream reader, reader.h,
 * under `run`, `bench` and the imports).  This header owns what is the
 * same in every dialect: enum tb_api, the request, the delta.  Each
 * dialect is a row in one table and a file of its own (api_openai.c,
 * api_anthropic.c, api_ollama.c): adding one means a row and a file, not
 * an `if` in every caller.
 *
 *   dialect      path               auth                 framing  ends with
 *   chat         /chat/completions  Bearer               SSE      data: [DONE]
 *   completions  /completions       Bearer               SSE      data: [DONE]
 *   anthropic    /messages          x-api-key + anthropic-version  SSE  message_stop
 *   ollama       /api/chat          Bearer, when a key is given    NDJSON  "done": true
 *
 * Each dialect sends exactly one credential: Bearer or its key header,
 * never both (tb_api_http_req; a local Ollama needs none, its hosted API
 * takes a Bearer token, so one goes only when a key is given).
 *
 * OpenAI chat and completions (each event's data a JSON object):
 *   chat         choices[0].delta.content
 *   completions  choices[0].text
 *   reasoning    choices[0].delta.reasoning_content, or .reasoning
 *   tool calls   choices[0].delta.tool_calls[]: index (a number, required),
 *                id and function.name (the call starts), function.arguments
 *                (a fragment of its arguments); a call ends at the finish
 *                reason or the stream's end
 *   finish       choices[0].finish_reason
 *   usage        usage.completion_tokens / prompt_tokens (the final chunk
 *                has empty choices)
 *   done         the data "[DONE]" (not JSON)
 *
 * Errors, in every dialect: {"error": {"message", "type", "code"}},
 * {"error": "..."}, {"type": "error", "message": ...}, FastAPI's
 * {"detail": ...}.  Text must be valid UTF-8 once unescaped, and a raw NUL
 * byte anywhere in an event is an error (never valid JSON; cJSON would
 * cut the string there); a \u0000 escape ends the text there.
 *
 * Anthropic Messages streaming (event types, from the data's "type"):
 * message_start (usage.input_tokens), content_block_start (a tool_use
 * block starts a tool call: index, content_block.id and .name), content_block_delta with delta.type
 * text_delta (.text: spoken), thinking_delta (.thinking: reasoning),
 * input_json_delta (.partial_json: a fragment of the call's arguments),
 * signature_delta (ignored), content_block_stop (index: a tool call ends),
 * ping, message_delta (delta.stop_reason; usage.output_tokens, the
 * running total), message_stop (the end; there is no [DONE]), error
 * ({"type":"error","error":{"type","message"}}).  Unknown types are
 * ignored, as Anthropic asks of clients.
 *
 * Ollama /api/chat (one JSON object a line): message.content (spoken),
 * message.thinking (reasoning), message.tool_calls[] (each whole in one
 * line: function.name, function.arguments, an optional id), done,
 * done_reason, and on the final line prompt_eval_count, eval_count and
 * the server's own durations in ns (total_duration, load_duration,
 * prompt_eval_duration, eval_duration), kept as struct tb_server_timing;
 * {"error": "..."} is an error.  /api/generate's "response" and
 * "thinking" are read too.
 *
 * Reasoning is recorded as reasoning: counted, never spoken.  Tool calls
 * are read into tb_api_delta.tools (struct tb_api_tool), never spoken; a
 * malformed tool item (an index that is not a whole number in 0..1023, a
 * name, id or arguments fragment that is not a string, more than
 * TB_API_TOOLS_MAX items in one event) is bad event JSON (TB_EFORMAT,
 * the stream byte named).
 *
 * The wrong dialect is an error, not a quiet success: an event with
 * another dialect's fields (chat chunks on /completions, OpenAI chunks on
 * /messages, ...: tb_api_delta.shape) stops the feed with TB_EFORMAT "the
 * event ending at stream byte N has the chat dialect's fields, not those
 * of the completions dialect asked for: is --api right?", and so does an
 * SSE line where Ollama's NDJSON was asked for.  What came before it is
 * kept by the caller.
 *
 * The parser is a pure function of the bytes fed to it (no I/O, no
 * clock), so a fuzz target is tb_api_feed on arbitrary bytes, or
 * tb_api_parse_event on one event.  Caps: an SSE line / event as sse.h
 * (TB_SSE_LINE_MAX, TB_SSE_EVENT_MAX); an NDJSON line TB_API_LINE_MAX.
 *
 * Ownership: a parser owns the text it hands out; pointers stay valid
 * until its next event.  Threads: one thread per parser; the tables are
 * constant.
 */
#ifndef TTSBUF_API_H
#define TTSBUF_API_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/http.h"
#include "ttsbuf/stream.h"

#define TB_API_LINE_MAX (4u << 20) /* one NDJSON line */

/* The provider dialects: one row each in the dialect table, one file each
 * (api_openai.c for the pair, api_anthropic.c, api_ollama.c). */
enum tb_api {
    TB_API_CHAT = 0,    /* POST /chat/completions */
    TB_API_COMPLETIONS, /* POST /completions (legacy) */
    TB_API_ANTHROPIC,   /* POST /messages (Anthropic Messages, SSE) */
    TB_API_OLLAMA,      /* POST /api/chat (Ollama native, NDJSON) */
    TB_API__COUNT
};

/* A streaming request, in any dialect. */
struct tb_api_request {
    enum tb_api api;
    const char *model;
    const char *prompt;        /* the user message (chat) or the prompt */
    const char *messages_json; /* chat: a JSON array replacing the prompt, or NULL
                                * (refused by the completions API) */
    long max_tokens;           /* -1: not sent */
    double temperature;        /* negative: not sent */
    const char *extra_json;    /* a JSON object whose keys are merged in, or NULL */
    int include_usage;         /* ask for stream_options.include_usage */
    /* chat: the tools offered, a JSON array in OpenAI's function-tool
     * shape ({"type": "function", "function": {name, description,
     * parameters}}), or NULL.  With them messages_json may hold OpenAI's
     * tool exchange: an assistant message with "tool_calls" ({id, type,
     * function: {name, arguments: a JSON text}}) and a message of role
     * "tool" ({tool_call_id, content}); each dialect sends both its own
     * way: Anthropic's tools {name, description, input_schema}, an
     * assistant tool_use block {id, name, input} and a user tool_result
     * block {tool_use_id, content}; Ollama's tool_calls with arguments an
     * object and a "tool" message naming tool_name. */
    const char *tools_json;
};

/* What one event says of one tool call (ops: a set of these bits). */
enum tb_api_tool_op {
    TB_API_TOOL_START = 1, /* the call begins: its name and id */
    TB_API_TOOL_ARGS = 2,  /* args_len more bytes of its arguments */
    TB_API_TOOL_END = 4    /* its arguments are whole */
};
#define TB_API_TOOLS_MAX 16 /* tool items one event may carry (more: a parse error) */
struct tb_api_tool {
    unsigned ops;
    long index; /* the call's place in the message: OpenAI's tool_calls[].index,
                 * Anthropic's content block index, Ollama's position */
    char name[TB_TOOL_NAME_MAX], id[TB_TOOL_NAME_MAX]; /* "" when the event has none */
    size_t args_len;
    /* Its arguments' args_len bytes as sent (a fragment of JSON text, or
     * an object's JSON printed unformatted: Ollama's), in the parser's
     * buffer, valid until its next event; NULL when args_len is 0. */
    const char *args;
};

/* One event, dialect-neutral. */
struct tb_api_delta {
    int done;  /* the stream's proper end ("[DONE]", message_stop, "done": true) */
    int error; /* an error object; message/type/code below */
    char error_message[512];
    char error_type[64];
    char error_code[64];
    const char *content; /* spoken text, or NULL */
    size_t content_len;
    const char *reasoning; /* reasoning text, or NULL */
    size_t reasoning_len;
    uint32_t tool_calls;        /* tool-call deltas in this event */
    uint32_t ntools;            /* tool items below (tools[0..ntools)) */
    struct tb_api_tool tools[TB_API_TOOLS_MAX];
    long long usage_completion; /* -1 when absent */
    long long usage_prompt;     /* -1 when absent */
    char finish_reason[32];     /* "" when absent or null */
    int shape;                  /* the dialect (enum tb_api) whose fields the event has, when
                                 * it can be told: chat (choices[0].delta), completions
                                 * (choices[0].text), anthropic ("type" message_*,
                                 * content_block_* or ping), ollama ("message",
                                 * "response" or "done"); -1 otherwise (usage only, [DONE]) */
    int have_server;            /* server timings were on this event */
    struct tb_server_timing server;
};

enum tb_api_framing { TB_API_SSE = 0, TB_API_NDJSON };

/* What a caller needs to know to talk a dialect. */
struct tb_api_info {
    const char *name;         /* "chat", "completions", "anthropic", "ollama" */
    const char *path;         /* appended to the base URL */
    const char *base_env;     /* environment variable with the base URL */
    const char *key_env;      /* environment variable with the key, or NULL */
    const char *key_header;   /* NULL: bearer auth; else the header that carries
                               * the key (a secret: never logged) */
    const char *fixed_header; /* one more header line every request sends, or NULL */
    const char *stream_type;  /* Content-Type of a stream (and Accept) */
    enum tb_api_framing framing;
    const char *end_name;     /* how a complete stream ends, for messages */
    int usage_option;         /* asks for usage with stream_options.include_usage */
    const char *default_base; /* the API root when a key is given and no base
                               * URL (the vendor SDKs' default) */
};

/* A request with nothing chosen: chat, no model or prompt, max_tokens and
 * temperature not sent, no usage asked for.  Any thread. */
void tb_api_request_init(struct tb_api_request *q);

/* The dialect's row; NULL for a value outside enum tb_api.  Any thread. */
const struct tb_api_info *tb_api_info(enum tb_api api);

/*
 * tb_api_http_req - the transfer options of a request in api's dialect,
 * for `run` and `bench` alike: a copy of in with the dialect's credential
 * (the key as Bearer, or in the dialect's key header: exactly one), its
 * stream type, and its fixed header before the caller's headers.
 * headers must have room for in->nheaders + 1 entries; out borrows it and
 * everything in borrows.  Any thread.
 */
void tb_api_http_req(const struct tb_api_info *api, const struct tb_http_req *in,
                     const char **headers, struct tb_http_req *out);

/* By name: 0 and *out, or TB_EINVAL. */
int tb_api_by_name(const char *name, enum tb_api *out);

/*
 * tb_api_request_body - the JSON body of a streaming request in q->api's
 * dialect (the dialect table's body row): chat {model, messages, stream, stream_options
 * {include_usage} when asked, max_tokens, temperature}, completions the same with prompt for
 * messages; anthropic {model, max_tokens (1024 when not given: the API requires it), messages
 * (system messages moved to "system"), stream, temperature}; ollama {model, messages, stream,
 * options {num_predict, temperature}}.  --body-json keys are merged last (theirs win).  *out is
 * malloc'd (caller frees).  Returns 0, TB_EINVAL (bad messages_json / extra_json, detail in
 * err), TB_ENOMEM.
 */
int tb_api_request_body(const struct tb_api_request *q, char **out, char *err, size_t errlen);

/* 1 when the event carries data: content, reasoning, a tool call, output
 * usage, a finish reason, the end or an error.  Keep-alives (Anthropic's
 * ping, an empty delta) and SSE comments carry none: they show the
 * connection is up, not that the model is producing, so they do not
 * restart an idle timeout.  Any thread. */
int tb_api_delta_is_data(const struct tb_api_delta *d);

struct tb_api_parser;

/* 0 and *out, TB_EINVAL (unknown api) or TB_ENOMEM. */
int tb_api_parser_create(enum tb_api api, struct tb_api_parser **out);
void tb_api_parser_destroy(struct tb_api_parser *p); /* NULL is a no-op */
void tb_api_parser_reset(struct tb_api_parser *p);   /* a new stream; keeps memory */

/* tb_api_parser_adopt - for recorded bytes whose endpoint is not known (a
 * parser created for chat or completions): in each stream the first event
 * with the fields of either sets the dialect, and only another dialect's
 * fields after it are an error. */
void tb_api_parser_adopt(struct tb_api_parser *p);

/* Called once per event (SSE event or NDJSON line) that says anything;
 * offset: the stream byte just past it.  Non-zero stops the feed. */
typedef int (*tb_api_fn)(void *ud, const struct tb_api_delta *d, uint64_t offset);

/*
 * tb_api_feed - parses body bytes (any split).  Returns 0; TB_EFORMAT for
 * an event whose JSON is bad ("bad event JSON ending at stream byte N:
 * ...") or in another dialect's shape (above); TB_ETOOBIG for a line or event over its cap ("... at
 * byte N"); TB_ENOMEM; or fn's non-zero value.  After an error the parser must be reset before
 * reuse.
 */
int tb_api_feed(struct tb_api_parser *p, const char *buf, size_t len, tb_api_fn fn, void *ud,
                char *err, size_t errlen);

/* Bytes of an unfinished line or event: non-zero at end of stream means
 * it was cut mid-event. */
size_t tb_api_pending(const struct tb_api_parser *p);

/* Events (SSE events or NDJSON lines) seen, and SSE comment lines. */
uint64_t tb_api_events(const struct tb_api_parser *p);
uint64_t tb_api_comments(const struct tb_api_parser *p);

/* UTF-16 surrogate halves replaced by U+FFFD in this stream (every
 * dialect): a lone "\ud83d" escape pairs with the "\ude00" that starts
 * the next event's text; one that never finds its partner is replaced
 * and counted, never an error. */
uint64_t tb_api_replaced(const struct tb_api_parser *p);

/*
 * tb_api_parse_event - one event's data (len bytes, need not be
 * NUL-terminated) in the parser's dialect; type: the SSE event type, or
 * NULL.  Returns 0; TB_EFORMAT (invalid JSON "near byte N of the event",
 * not an object, text not UTF-8); TB_ENOMEM.  An error event is not a
 * parse error: out->error is set.
 */
int tb_api_parse_event(struct tb_api_parser *p, const char *type, size_t type_len, const char *data,
                       size_t len, struct tb_api_delta *out, char *err, size_t errlen);

#endif
