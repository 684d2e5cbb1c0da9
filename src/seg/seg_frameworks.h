/*
 * seg_frameworks.h - the policies that replay a framework's own splitter
 * (seg_frameworks.c), each a tb_seg_feed_fn of seg_policy.c's table.  Internal
 * to the segmenter.
 */
#ifndef TTSBUF_SEG_FRAMEWORKS_H
#define TTSBUF_SEG_FRAMEWORKS_H

#include <stddef.h>

#include "seg_priv.h"

tb_seg_feed_fn tb_seg_feed_openai;
tb_seg_feed_fn tb_seg_feed_pipecat;
tb_seg_feed_fn tb_seg_feed_livekit;
tb_seg_feed_fn tb_seg_feed_elevenlabs_sdk;

#endif
