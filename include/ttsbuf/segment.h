/*
 * segment.h - the segmenter: how a TTS consumer cuts streamed text into
 * chunks it synthesizes one at a time.
 *
 * Text arrives as content events, k = 0, 1, ...  The segmenter sees each
 * event's text once, in order, and reports each chunk as it closes: the
 * content byte offset where it ends (in the concatenation of all content
 * text), its length in code points, and the index of the event at whose
 * arrival it closed.  Whatever is left when the stream ends is one final
 * chunk (tb_seg_finish).
 *
 * Policies (ttsbuf-model(7) gives each rule in full):
 *   token     every event is a chunk
 *   sentence  closes after an event once the chunk, without trailing
 *             whitespace and closing quotes/brackets, ends in . ! ? or an
 *             ellipsis, or the event holds a newline; only once the chunk
 *             has --min-chars code points
 *   clause    as sentence, plus , ; : and em dash
 *   pipecat   sentence end confirmed when the next non-space character
 *             arrives (lookahead); the cut is made right after the
 *             punctuation (and closers), before the whitespace
 *   livekit   sentence ends followed by whitespace, merged until >= 20 code
 *             points, confirmed once 10 more code points have arrived
 *   openai-agents  sentence ends (. ! ?) followed by whitespace, cut once
 *             the text before the end holds >= 20 code points
 *   fixed40   once 40 code points are buffered, cut at the last whitespace
 *             (or everything, when there is none)
 *   elevenlabs  the chunk_length_schedule 120,160,250,290: chunk i closes at
 *             the event that brings the buffer to schedule[min(i,3)] code
 *             points (whole buffer)
 * All rules depend on the text only, never on time: this is what makes the
 * closed-form minimum TPS exact for every policy.
 *
 * Ownership: tb_seg_create allocates one small object; no allocation after.
 * Threads: one thread per segmenter.
 */
#ifndef TTSBUF_SEGMENT_H
#define TTSBUF_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

enum tb_chunk_policy {
    TB_CHUNK_TOKEN = 0,
    TB_CHUNK_SENTENCE,
    TB_CHUNK_CLAUSE,
    TB_CHUNK_PIPECAT,
    TB_CHUNK_LIVEKIT,
    TB_CHUNK_OPENAI_AGENTS,
    TB_CHUNK_FIXED40,
    TB_CHUNK_ELEVENLABS,
    TB_CHUNK__COUNT
};

struct tb_seg_opts {
    enum tb_chunk_policy policy;
    uint32_t min_chars; /* sentence and clause only; default 1 */
};

struct tb_chunk {
    uint64_t end;   /* content byte offset where the chunk ends (exclusive) */
    uint32_t cps;   /* Unicode code points in the chunk (>= 1) */
    uint32_t event; /* index of the content event at which it closed */
};

typedef void (*tb_chunk_fn)(void *ud, const struct tb_chunk *c);

struct tb_seg;

/* Name <-> policy.  parse returns 0 or TB_EINVAL; name never NULL. */
int tb_seg_policy_parse(const char *name, enum tb_chunk_policy *out);
const char *tb_seg_policy_name(enum tb_chunk_policy p);
/* One line describing the rule, for --help. */
const char *tb_seg_policy_about(enum tb_chunk_policy p);

/* Returns 0 and *out, TB_EINVAL (bad policy) or TB_ENOMEM. */
int tb_seg_create(const struct tb_seg_opts *o, struct tb_seg **out);
void tb_seg_destroy(struct tb_seg *s); /* NULL is a no-op */

/* Starts a new stream with the same options. */
void tb_seg_reset(struct tb_seg *s);

/*
 * tb_seg_feed - one content event's text (valid UTF-8, len >= 1).  Calls
 * fn once per chunk it closes (possibly several for one event, for the
 * policies that cut inside events), in order.
 */
void tb_seg_feed(struct tb_seg *s, const char *text, size_t len, tb_chunk_fn fn, void *ud);

/* End of stream: reports the final chunk, if any text is left.  `event`
 * is the index of the last content event. */
void tb_seg_finish(struct tb_seg *s, tb_chunk_fn fn, void *ud);

/* Forced cut: closes the open chunk now, at the last event fed.  Used
 * when a bounded buffer cannot hold more of it; counted by the caller. */
void tb_seg_cut(struct tb_seg *s, tb_chunk_fn fn, void *ud);

/* Content bytes fed so far (the `end` the next chunk can reach). */
uint64_t tb_seg_fed(const struct tb_seg *s);

#endif
