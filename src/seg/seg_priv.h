/*
 * seg_priv.h - the segmenter's state and closing its open chunk (seg.c):
 * what the policies' feeds share, seg_rules.c (token, sentence, clause,
 * fixed40, elevenlabs) and seg_frameworks.c (pipecat, livekit,
 * openai-agents, elevenlabs-sdk), the rows of seg_policy.c's table.
 * Internal to the segmenter; one thread per segmenter, as seg.h says.
 */
#ifndef TTSBUF_SEG_PRIV_H
#define TTSBUF_SEG_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/seg.h"

struct tb_seg {
    struct tb_seg_opts o;
    int timed;             /* cartesia or idle: the timer runs (seg_policy.c) */
    uint64_t fed;          /* content bytes fed so far */
    uint64_t gcps;         /* content code points fed so far */
    uint64_t start_b;      /* open chunk's start: byte */
    uint64_t start_cps;    /* open chunk's start: code point */
    uint32_t event;        /* index of the event being fed */
    uint32_t nchunks;      /* chunks closed so far */
    uint32_t last_sig;     /* sentence/clause: last significant code point */
    uint64_t ws_b, ws_cps; /* fixed40: just after the last whitespace */
    /* openai-agents: the splitter's view of its buffer (see
     * tb_seg_feed_openai) */
    int oa_ns, oa_term, oa_run, oa_bnd;
    /* elevenlabs-sdk: text_chunker's buffer runs from the sent position to
     * `fed`; el_last is its last code point (0: empty); el_ns tells
     * whether the open chunk holds a non-space */
    uint64_t el_sent_b, el_sent_cps, el_server;
    uint32_t el_last;
    int el_ns;
    uint64_t oa_first;                         /* code point of the buffer's first non-space */
    uint64_t oa_run_b, oa_run_cps;             /* whitespace run after a sentence end */
    uint64_t oa_bnd_b, oa_bnd_cps, oa_bnd_end; /* last confirmed boundary */
    uint64_t oa_bnd_len, oa_collapsed;
    /* livekit: BufferedTokenStream's input buffer (the open chunk);
     * pipecat: SimpleTextAggregator's text */
    uint32_t *lk_cp;
    uint8_t *lk_len, *lk_flags;
    size_t lk_n;
    struct tb_punkt *punkt; /* pipecat */
    int pc_look;            /* pipecat: waiting for the lookahead character */
    /* cartesia and idle: the arrival of the event being fed, of the one
     * that opened the chunk, and of the last one fed (NAN: untimed) */
    double now, t_open, t_last;
    uint32_t ev_open; /* cartesia: the index of the event that opened the chunk */
    double close_t;   /* the time tb_seg_emit reports (NAN: the event's) */
    int ca_end;       /* cartesia: the chunk's text ends a sentence */
};

/*
 * A policy's feed: reads one event's len bytes of valid UTF-8 text t,
 * advances fed and gcps by them, and reports each chunk it closes through
 * fn (by tb_seg_emit).  No allocation; errors: none.
 */
typedef void tb_seg_feed_fn(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                            void *ud);

/*
 * tb_seg_emit - closes the open chunk at content byte end_b, code point
 * end_cps, at the event being fed, and reports it through fn; the next
 * chunk starts there.  Nothing is reported when the chunk would hold no
 * code point.
 */
void tb_seg_emit(struct tb_seg *s, uint64_t end_b, uint64_t end_cps, tb_chunk_fn fn, void *ud);

/*
 * tb_seg_count - the code points of len bytes of valid UTF-8 t (as
 * tb_utf8_count), and in *newline whether they hold a '\n': one pass,
 * inline, for the rules that decide once per event (seg_rules.c), where a
 * call to each of tb_utf8_count and memchr cost more than the few bytes
 * of a token.
 */
static inline uint64_t tb_seg_count(const unsigned char *t, size_t len, int *newline)
{
    uint64_t n = 0;
    int nl = 0;
    for (size_t i = 0; i < len; i++) {
        n += (t[i] & 0xC0) != 0x80;
        nl |= t[i] == '\n';
    }
    *newline = nl;
    return n;
}

/* Decodes the code point at s[*i] (valid UTF-8) and advances *i. */
static inline uint32_t tb_seg_next_cp(const unsigned char *s, size_t len, size_t *i)
{
    unsigned char c = s[*i];
    uint32_t cp;
    size_t n;
    if (c < 0x80) {
        *i += 1;
        return c;
    }
    if (c >= 0xF0) {
        cp = c & 0x07;
        n = 3;
    } else if (c >= 0xE0) {
        cp = c & 0x0F;
        n = 2;
    } else {
        cp = c & 0x1F;
        n = 1;
    }
    for (size_t k = 1; k <= n && *i + k < len; k++)
        cp = (cp << 6) | (s[*i + k] & 0x3F);
    *i += n + 1;
    return cp;
}

#endif
