/*
 * api_priv.h - private to libttsbuf: the dialect table behind api.h.  A
 * dialect is one row (struct tb_api_dialect) defined in a file of its own
 * (api_openai.c: chat and completions; api_anthropic.c; api_ollama.c),
 * as curl keeps one file per TLS backend behind one table; api.c holds
 * the table, the framing (SSE or NDJSON) and what every dialect's events
 * share (tb_api_event).  Adding a dialect is a row, a file and an entry
 * in enum tb_api.
 *
 * Threads: the rows are constant.
 */
#ifndef TTSBUF_API_PRIV_H
#define TTSBUF_API_PRIV_H

#include <cJSON.h>
#include <stddef.h>

#include "base/jsontext.h"
#include "ttsbuf/api.h"

/* Where one event's texts are (in root's tree), for tb_api_event to keep;
 * what: the content field's name, for messages. */
struct tb_api_fields {
    const cJSON *text, *thinking;
    const char *what;
};

struct tb_api_dialect {
    struct tb_api_info info;
    /* Turns the chat body built from q (root) into this dialect's: returns
     * 0 or TB_ENOMEM.  NULL: the OpenAI pair, whose body oai.h builds. */
    int (*body)(cJSON *root, const struct tb_api_request *q);
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

/*
 * tb_api_event - one event's data (len bytes, need not be NUL-terminated)
 * in dialect d, the frame every dialect shares: the end data, the JSON
 * (evjson.h), an error object, the shape, then d->fields, then the texts
 * kept in t (surrogate halves paired across events).  Returns as
 * tb_api_parse_event.
 */
int tb_api_event(const struct tb_api_dialect *d, struct tb_jsontext_texts *t, const char *type,
                 size_t type_len, const char *data, size_t len, struct tb_api_delta *out, char *err,
                 size_t errlen);

#endif
