/*
 * seg_rules.h - the policies that decide from counts and the last characters
 * (seg_rules.c), each a tb_seg_feed_fn of seg_policy.c's table.  Internal
 * to the segmenter.
 */
#ifndef TTSBUF_SEG_RULES_H
#define TTSBUF_SEG_RULES_H

#include <stddef.h>

#include "seg_priv.h"

tb_seg_feed_fn tb_seg_feed_token;
tb_seg_feed_fn tb_seg_feed_sentence;
tb_seg_feed_fn tb_seg_feed_clause;
tb_seg_feed_fn tb_seg_feed_fixed40;
tb_seg_feed_fn tb_seg_feed_elevenlabs;
tb_seg_feed_fn tb_seg_feed_cartesia;

#endif
