/*
 * seg_frameworks.h - the policies that replay a framework's own splitter
 * (seg_frameworks.c), each a tb_seg_feed_fn of seg.c's table.  Internal
 * to the segmenter.
 */
#ifndef TTSBUF_SEG_FRAMEWORKS_H
#define TTSBUF_SEG_FRAMEWORKS_H

#include <stddef.h>

#include "seg_priv.h"

void tb_seg_feed_openai(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                        void *ud);
void tb_seg_feed_pipecat(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                         void *ud);
void tb_seg_feed_livekit(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                         void *ud);
void tb_seg_feed_elevenlabs_sdk(struct tb_seg *s, const unsigned char *t, size_t len,
                                tb_chunk_fn fn, void *ud);

#endif
