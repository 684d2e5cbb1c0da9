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
    struct tb_api_argbuf *args; /* the tool items' argument bytes (api_tool.c) */
};

/* The parser's buffer of one event's tool arguments: each item's bytes
 * appended, its offset in the item's args until the event is read
 * (api_parser.c makes the pointers then). */
struct tb_api_argbuf {
    char *buf;
    size_t len, cap;
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

#endif
