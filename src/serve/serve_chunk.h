/*
 * serve_chunk.h - private to libttsbuf: the mock server's per-event chunk
 * JSON, written straight into the connection's output buffer without
 * cJSON (serve_chunk.c).  The rare pieces of a response (role, finish and
 * usage chunks, errors, non-streamed bodies) still go through cJSON in
 * serve_json.c; these bytes must equal what that file would print.
 */
#ifndef TTSBUF_SERVE_CHUNK_H
#define TTSBUF_SERVE_CHUNK_H

#include <stddef.h>

#include "serve_json.h"
#include "serve_plan.h"

/* One response's fixed bytes: everything before the delta's text. */
struct tb_serve_chunk {
    char *head; /* malloc'd; {"id":..,"model":"<escaped>","choices":[{ */
    size_t head_len;
    int legacy;
};

/* Renders the head for c (the model escaped once, here).  Returns 0 or
 * TB_ENOMEM.  Free with tb_serve_chunk_free. */
int tb_serve_chunk_init(struct tb_serve_chunk *k, const struct tb_serve_json_ctx *c);
void tb_serve_chunk_free(struct tb_serve_chunk *k); /* zeroed or freed: a no-op */

/*
 * tb_serve_chunk_len - the length of the chunk object for a content or
 * reasoning item (what tb_serve_json_chunk prints for the item's text);
 * tb_serve_chunk_write writes exactly that many bytes to dst and returns
 * the length.  No NUL is written.
 */
size_t tb_serve_chunk_len(const struct tb_serve_chunk *k, const struct tb_serve_plan *p,
                          const struct tb_serve_item *it);
size_t tb_serve_chunk_write(const struct tb_serve_chunk *k, const struct tb_serve_plan *p,
                            const struct tb_serve_item *it, char *dst);

#endif
