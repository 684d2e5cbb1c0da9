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
 Time-based (they need the events' arrival times, tb_seg_feed_at):
 *   cartesia  Cartesia's managed buffering (max_buffer_delay_ms, default
 *             3000 ms, range 0..5000; docs.cartesia.ai, "Buffering"): the
 *             open chunk closes at the first of (a) the arrival of an event
 *             holding a non-space after the chunk's text ended a sentence
 *             (as sentence: . ! ? ellipsis or a newline), the cut before
 *             that event, or (b) max_delay_s after the arrival of the
 *             event that opened the chunk, with the text buffered then
 *   idle      a flush on inactivity: as sentence, plus the open chunk
 *             closes idle_s after the last event fed when no event came
 *             in between (default 0.5 s)
 * A timed close is reported with its time (tb_seg_close_time, the
 * deadline); an event arriving exactly at a deadline starts the next chunk.
 * pipecat, livekit and openai-agents match the frameworks' own code on the
 * corpus
 * in tests/data/chunk/ (same cuts, same releasing event).  Neither sends
 * a chunk of whitespace alone at the end.
 * Every other rule depends on the text only, never on time: this is what
 * makes the closed-form minimum TPS exact for them.
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
    TB_CHUNK_CARTESIA,
    TB_CHUNK_IDLE,
    TB_CHUNK__COUNT
};

struct tb_seg_opts {
    enum tb_chunk_policy policy;
    uint32_t min_chars; /* sentence and clause only; default 1 */
    double max_delay_s; /* cartesia: > 0, seconds; 0: the default */
    double idle_s;      /* idle: > 0, seconds; 0: the default */
};

#define TB_SEG_CARTESIA_DELAY_S 3.0 /* Cartesia's documented default */
#define TB_SEG_IDLE_S 0.5           /* idle's default */

struct tb_chunk {
    uint64_t end;   /* content byte offset where the chunk ends (exclusive) */
    uint32_t cps;   /* Unicode code points in the chunk (>= 1) */
    uint32_t event; /* index of the content event at which it closed (a
                     * timed close: the last event fed before it) */
};

typedef void (*tb_chunk_fn)(void *ud, const struct tb_chunk *c);

struct tb_seg;

/* Name <-> policy.  parse returns 0 or TB_EINVAL; name never NULL. */
int tb_seg_policy_parse(const char *name, enum tb_chunk_policy *out);
const char *tb_seg_policy_name(enum tb_chunk_policy p);
/* One line describing the rule, for --help. */
const char *tb_seg_policy_about(enum tb_chunk_policy p);

/* Whether p's cuts depend on the events' arrival times. */
int tb_seg_policy_timed(enum tb_chunk_policy p);

/* Whether s's policy is time-based (tb_seg_policy_timed of it): a caller
 * that feeds events without a timer's bookkeeping (tb_seg_feed, no
 * tb_seg_tick) loses nothing when this is 0. */
int tb_seg_timed(const struct tb_seg *s);

/* Returns 0 and *out, TB_EINVAL (bad policy, a negative or NAN delay) or
 * TB_ENOMEM. */
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

/*
 * tb_seg_feed_at - as tb_seg_feed, for an event arriving at time t
 * (non-decreasing).  A time-based policy first closes the open chunk when
 * its deadline is at or before t.  Without a time (tb_seg_feed) a
 * time-based policy's timer never fires.
 */
void tb_seg_feed_at(struct tb_seg *s, double t, const char *text, size_t len, tb_chunk_fn fn,
                    void *ud);

/* A time-based policy's pending deadline: when the open chunk closes if
 * no event comes first; INFINITY when none is pending (any other policy,
 * an empty chunk). */
double tb_seg_deadline(const struct tb_seg *s);

/*
 * tb_seg_timer - what the pending deadline is made of: the index (0 for
 * the first event fed since the last reset) of the event whose arrival
 * time dates it (cartesia: the one that opened the chunk; idle: the last
 * one fed) and the delay after that arrival (max_delay_s, idle_s), so that
 * tb_seg_deadline is exactly that arrival + *delay.  Returns 0, or -1 (and
 * leaves both alone) when none is pending.  A caller re-timing a stream
 * learns from it which arrival each timer decision compares with which
 * (recut.c).
 */
int tb_seg_timer(const struct tb_seg *s, uint32_t *event, double *delay);

/* Inside a tb_chunk_fn: the time of the close being reported when it is
 * a timed one (the deadline), else NAN (the arrival of its event). */
double tb_seg_close_time(const struct tb_seg *s);

/* Closes the open chunk when its deadline is at or before now (a live
 * consumer's clock ticking between events). */
void tb_seg_tick(struct tb_seg *s, double now, tb_chunk_fn fn, void *ud);

/* End of stream: reports the final chunk, if any text is left.  `event`
 * is the index of the last content event. */
void tb_seg_finish(struct tb_seg *s, tb_chunk_fn fn, void *ud);

/* Forced cut: closes the open chunk now, at the last event fed.  Used
 * when a bounded buffer cannot hold more of it; counted by the caller. */
void tb_seg_cut(struct tb_seg *s, tb_chunk_fn fn, void *ud);

/* Content bytes fed so far (the `end` the next chunk can reach). */
uint64_t tb_seg_fed(const struct tb_seg *s);

/* Content code points fed so far (every policy counts each one once, as
 * tb_utf8_count would): a caller feeding an event learns its code points
 * from the difference, without counting them a second time. */
uint64_t tb_seg_fed_cps(const struct tb_seg *s);

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
