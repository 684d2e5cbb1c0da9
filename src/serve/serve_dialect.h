/*
 * serve_dialect.h - private to libttsbuf: the mock server's Anthropic and Ollama
 * streams (serve_dialect.c).
 */
#ifndef TTSBUF_SERVE_DIALECT_H
#define TTSBUF_SERVE_DIALECT_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

void tb_serve_dialect_json(struct tb_serve_conn *c, const char *type, char *json, int malformed);
void tb_serve_anth_event(struct tb_serve_conn *c, enum tb_serve_anth ev, const char *text,
                         int malformed);
void tb_serve_dialect_item(struct tb_serve_loop *s, struct tb_serve_conn *c,
                           const struct tb_serve_item *it, int64_t late);
void tb_serve_dialect_end(struct tb_serve_conn *c);

#endif
