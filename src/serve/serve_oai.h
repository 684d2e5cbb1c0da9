/*
 * serve_oai.h - private to libttsbuf: the mock server's OpenAI stream events
 * (serve_oai.c).
 */
#ifndef TTSBUF_SERVE_OAI_H
#define TTSBUF_SERVE_OAI_H

#include <stddef.h>
#include <stdint.h>

#include "serve_priv.h"

void tb_serve_oai_part(struct tb_serve_conn *c, enum tb_serve_json_part part, const char *text);
void tb_serve_oai_item(struct tb_serve_loop *s, struct tb_serve_conn *c,
                       const struct tb_serve_item *it, int64_t late);

#endif
