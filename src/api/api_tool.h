/*
 * api_tool.h - private to libttsbuf: the tool items every dialect's row
 * reads (api_tool.c), each checked alike.
 */
#ifndef TTSBUF_API_TOOL_H
#define TTSBUF_API_TOOL_H

#include <cJSON.h>

#include "api_priv.h"

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
 * whole arguments) adds its JSON text's bytes; else -1.  The bytes are
 * appended to f->args (when set): call it for an item right after making
 * it (tb_api_tool_new), so that each item's bytes follow the one's
 * before. */
int tb_api_tool_args(struct tb_api_tool *t, const cJSON *v, const char *what,
                     struct tb_api_fields *f);

#endif
