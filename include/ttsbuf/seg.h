/*
 * seg.h - the segmenter: how a TTS consumer cuts streamed text into
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
 *   pipecat   Pipecat 1.x (1.7.0 and later): SimpleTextAggregator with
 *             match_endofsentence.  A character of its sentence-ending set
 *             (. ! ? ; and others) arms a lookahead; the next non-space
 *             character makes it run NLTK's Punkt with the English
 *             parameters (src/seg/punkt.c, data/punkt_tab/) over the buffer,
 *             and the first sentence, if Punkt finds one, is sent.
 *   livekit   LiveKit Agents 1.x (livekit-agents 1.7.0): the basic sentence
 *             tokenizer (tokenize/_basic_sent.py, min_sentence_len 20) in
 *             its BufferedTokenStream (stream_context_len 10).  Once the
 *             buffer holds 10 code points, each event re-splits it; while
 *             the split has two sentences or more, the first is sent.
 *             Since livekit-agents 1.2 the TTS default is the blingfire
 *             tokenizer (a native library); this profile is the basic one.
 *   openai-agents  openai-agents-python's voice pipeline: after every text
 *             delta, get_sentence_based_splitter(20) splits the stripped
 *             buffer at whitespace after . ! ? and sends all but the last
 *             sentence once they hold >= 20 code points (joined by one
 *             space); the rest is sent at the end.
 *   fixed40   once 40 code points are buffered, cut at the last whitespace
 *             (or everything, when there is none)
 *   elevenlabs  the chunk_length_schedule 120,160,250,290 as its documentation
 *             reads (the server is closed): chunk i closes at the event that
 *             brings the buffer, counted from the previous chunk, to
 *             schedule[min(i,3)] code points (whole buffer)
 *   elevenlabs-sdk  the ElevenLabs Python SDK's convert_realtime
 *             (elevenlabs-python realtime_tts.py): text_chunker re-cuts the
 *             stream into pieces ending at a splitter (. , ? ! ; : - ( ) [
 *             ] } space, em dash), each sent with a space appended when it
 *             lacks one, with chunk_length_schedule [50] as that helper
 *             sets it: a chunk closes when a piece brings the received text
 *             to >= 50 characters; the end of the stream flushes the rest
 * pipecat, livekit and openai-agents match the frameworks' own code on the
 * corpus
 * in tests/data/chunk/ (same cuts, same releasing event).  Neither sends
 * a chunk of whitespace alone at the end.
 * All rules depend on the text only, never on time: this is what makes the
 * closed-form minimum TPS exact for every policy.
 *
 * Ownership: tb_seg_create allocates one small object (plus, for livekit
 * and pipecat, a buffer of the open chunk's code points, TB_SEG_LK_CAP =
 * 4096 of them, and pipecat's Punkt working memory, about 200 KB); no
 * allocation after.  A livekit or pipecat chunk that reaches 4096 code
 * points without a cut is cut there (the frameworks would keep buffering).
 * Threads: one thread per segmenter.
 */
#ifndef TTSBUF_SEG_H
#define TTSBUF_SEG_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/stream.h"

enum tb_chunk_policy {
    TB_CHUNK_TOKEN = 0,
    TB_CHUNK_SENTENCE,
    TB_CHUNK_CLAUSE,
    TB_CHUNK_PIPECAT,
    TB_CHUNK_LIVEKIT,
    TB_CHUNK_OPENAI_AGENTS,
    TB_CHUNK_FIXED40,
    TB_CHUNK_ELEVENLABS,
    TB_CHUNK_ELEVENLABS_SDK,
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

/*
 * tb_seg_spoken_until - the time of the last content event of s holding
 * a character that is not whitespace (Python's str.isspace, the notion
 * every policy uses to leave text unsent), or -1 when none does.  Every
 * policy sends that character in a chunk closing no earlier, so a speaker
 * plays until at least then, plus the TTS latency: a lower bound on how
 * long the stream's audio lasts, known before any of it is rendered.
 * O(text); pure; any thread.
 */
double tb_seg_spoken_until(const struct tb_stream *s);

#endif
