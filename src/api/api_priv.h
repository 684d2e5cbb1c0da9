/*
 * api_priv.h - private to libttsbuf: the dialect table behind api.h.  A
 * dialect is one row (struct tb_api_dialect) defined in a file of its own
 * (api_openai.c: chat and completions; api_anthropic.c; api_ollama.c),
 * as curl keeps one file per TLS backend behind one table; api.c holds
 * the table, api_parser.c the framing (SSE or NDJSON) and the frame every
 * dialect's events share, and calls each row's hooks.  Adding a dialect is a row, a
 * file and an entry in enum tb_api.
 *
 * Threads: the rows are constant.
 */
#ifndef TTSBUF_API_PRIV_H
#define TTSBUF_API_PRIV_H

#include <cJSON.h>
#include <stddef.h>

#include "ttsbuf/api.h"

/* Where one event's texts are (in root's tree), for the parser to keep;
 * what: the content field's name, for messages; bad: "" or why the event
 * is malformed (a tool item: api_tool.c), which makes it bad event JSON. */
struct tb_api_fields {
    const cJSON *text, *thinking;
    const char *what;
    char bad[128];
};

struct tb_api_dialect {
    struct tb_api_info info;
    /* The request body of q in this dialect (api_body.h builds the shape
     * they share): as tb_api_request_body. */
    int (*body)(const struct tb_api_request *q, char **out, char *err, size_t errlen);
    /* Event data that ends the stream and is not JSON ("[DONE]"), or NULL. */
    const char *end_data;
    /* Reads an event's fields (root: an object that is not an error)
     * into out and f; type: the SSE event type (type_len bytes) or NULL. */
    void (*fields)(const cJSON *root, const char *type, size_t type_len, struct tb_api_delta *out,
                   struct tb_api_fields *f);
};

extern const struct tb_api_dialect tb_api_dialect_chat;        /* api_openai.c */
extern const struct tb_api_dialect tb_api_dialect_completions; /* api_openai.c */
extern const struct tb_api_dialect tb_api_dialect_anthropic;   /* api_anthropic.c */
extern const struct tb_api_dialect tb_api_dialect_ollama;      /* api_ollama.c */

/* The row of a dialect (api.c's table); NULL for a value outside enum
 * tb_api.  Any thread. */
const struct tb_api_dialect *tb_api_row(enum tb_api api);

/* The tool items a dialect reads (api_tool.c).  Each takes the event's
 * delta d and fields f; on a malformed item f->bad says why and they
 * return NULL or -1. */

/* A new, empty tool item in d at index (a JSON number that must be a
 * whole number in 0..1023; what: its field, for f->bad), or NULL. */
struct tb_api_tool *tb_api_tool_new(struct tb_api_delta *d, struct tb_api_fields *f,
                                    const cJSON *index, const char *what);

/* v (absent or null: "") copied into dst (TB_TOOL_NAME_MAX bytes, cut at a
 * character): 0, or -1 when v is something else than a string. */
int tb_api_tool_str(char *dst, const cJSON *v, const char *what, struct tb_api_fields *f);

/* An arguments fragment: absent or null adds nothing; a string adds its
 * bytes to t->args_len and TB_API_TOOL_ARGS to t->ops; an object (Ollama's
 * whole arguments) adds its JSON text's bytes; else -1. */
int tb_api_tool_args(struct tb_api_tool *t, const cJSON *v, const char *what,
                     struct tb_api_fields *f);

#endif
