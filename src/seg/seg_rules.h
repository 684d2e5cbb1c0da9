/*
 * seg_rules.h - the policies that decide from counts and the last characters
 * (seg_rules.c), each a tb_seg_feed_fn of seg.c's table.  Internal to the
 * segmenter.
 */
#ifndef TTSBUF_SEG_RULES_H
#define TTSBUF_SEG_RULES_H

#include <stddef.h>

#include "seg_priv.h"

void tb_seg_feed_token(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                       void *ud);
void tb_seg_feed_sentence(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                          void *ud);
void tb_seg_feed_clause(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                        void *ud);
void tb_seg_feed_fixed40(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                         void *ud);
void tb_seg_feed_elevenlabs(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                            void *ud);

#endif
