/*
 * seg_livekit.h - LiveKit Agents' basic sentence splitter
 * (livekit-agents 1.x, tokenize/_basic_sent.py split_sentences with
 * min_sentence_len 20 and retain_format off), for the livekit profile.
 * Internal to the segmenter.
 */
#ifndef TTSBUF_SEG_LIVEKIT_H
#define TTSBUF_SEG_LIVEKIT_H

#include <stddef.h>
#include <stdint.h>

/*
 * tb_seg_lk_first - splits the n code points cp[] (LiveKit's input buffer)
 * as split_sentences does and returns the end of its first sentence (in
 * code points, the offset at which BufferedTokenStream slices its buffer)
 * when the split gives two sentences or more, else 0.  flags[] is scratch
 * space of n bytes.  O(n).
 */
size_t tb_seg_lk_first(const uint32_t *cp, uint8_t *flags, size_t n);

/* Python's str.isspace(), which is what the frameworks' \s and strip()
 * mean.  Inline: the frameworks' splitters and Punkt ask it of every
 * code point, and a call per code point cost them more than the test. */
static inline int tb_seg_py_space(uint32_t c)
{
    if (c < 0x80)
        return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* LiveKit's input buffer, in code points: past it the profile cuts (the
 * framework would keep buffering). */
#define TB_SEG_LK_CAP 4096u

#endif
