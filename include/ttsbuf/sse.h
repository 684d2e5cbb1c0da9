/*
 * sse.h - a Server-Sent Events (text/event-stream) parser that follows the
 * WHATWG HTML "event stream interpretation" rules, fed bytes as they come.
 *
 * Rules implemented (HTML Living Standard, 9.2.6):
 *  - lines end in CRLF, LF or CR; a CR at the end of one read and an LF at
 *    the start of the next are one line ending;
 *  - a UTF-8 byte order mark at the very start of the stream is skipped;
 *  - a line starting with ':' is a comment (counted, never dispatched);
 *  - "field:value", "field: value" (one leading space removed), and
 *    "field" alone (empty value);
 *  - data: appended to the data buffer plus "\n"; event: sets the type;
 *    id: sets the last event ID unless the value contains NUL; retry: set
 *    when the value is all ASCII digits; other fields are ignored;
 *  - an empty line dispatches: nothing when the data buffer is empty
 *    (the type is reset), else the data with its final "\n" removed, the
 *    type (default "message") and the last event ID;
 *  - at end of stream an unterminated event is not dispatched (it is
 *    reported by tb_sse_pending so callers can call the stream truncated).
 * Bytes are split arbitrarily between feeds: inside a field name, inside a
 * CRLF, inside a multi-byte UTF-8 character.  The parser does not validate
 * UTF-8 (the JSON layer does).
 *
 * Caps (ttsbuf(1) LIMITS): a line over line_max bytes or an event whose
 * data exceeds event_max bytes is an error (TB_ETOOBIG) naming the byte
 * offset; memory stays bounded by the caps whatever the input.
 *
 * Ownership: tb_sse_create allocates; buffers grow up to the caps.  Event
 * pointers are valid only during the callback.  Threads: one thread per
 * parser.
 */
#ifndef TTSBUF_SSE_H
#define TTSBUF_SSE_H

#include <stddef.h>
#include <stdint.h>

#define TB_SSE_LINE_MAX (1u << 20)  /* default line cap: 1 MiB */
#define TB_SSE_EVENT_MAX (4u << 20) /* default event data cap: 4 MiB */

struct tb_sse_event {
    const char *type; /* "message" unless an event: field said otherwise */
    size_t type_len;
    const char *data; /* data lines joined by "\n"; not NUL-terminated */
    size_t data_len;
    const char *id; /* last event ID ("" when none) */
    size_t id_len;
    long retry_ms;   /* last valid retry: value, or -1 */
    uint64_t offset; /* stream byte offset just past the dispatching line
                      * (past its CR when it ends in CRLF: the event is
                      * not held back waiting for the LF) */
};

/* Called once per dispatched event.  Return 0 to go on; any other value
 * stops the feed, which returns it. */
typedef int (*tb_sse_fn)(void *ud, const struct tb_sse_event *ev);

struct tb_sse;

/* line_max / event_max: 0 means the defaults above.  Returns 0 and *out,
 * or TB_ENOMEM. */
int tb_sse_create(size_t line_max, size_t event_max, struct tb_sse **out);
void tb_sse_destroy(struct tb_sse *p); /* NULL is a no-op */

/* Forgets all state (a new stream); keeps memory. */
void tb_sse_reset(struct tb_sse *p);

/*
 * tb_sse_feed - parses buf[0..len), calling fn for each event completed.
 * Returns 0; TB_ETOOBIG with "line over N bytes at byte OFFSET" or "event
 * data over N bytes at byte OFFSET" in err, OFFSET being the stream offset
 * of the first byte past the cap; TB_ENOMEM (the parser is unusable until
 * reset after either); or the callback's non-zero value (the rest of buf
 * is then left unread: see tb_sse_offset).
 */
int tb_sse_feed(struct tb_sse *p, const char *buf, size_t len, tb_sse_fn fn, void *ud, char *err,
                size_t errlen);

/* Bytes of an unfinished line plus data of an undispatched event: non-zero
 * at end of stream means the stream was cut mid-event. */
size_t tb_sse_pending(const struct tb_sse *p);

/* Bytes fed so far (after a callback stopped a feed: bytes consumed, up to
 * just past that event's line), comment lines seen so far. */
uint64_t tb_sse_offset(const struct tb_sse *p);
uint64_t tb_sse_comments(const struct tb_sse *p);

#endif
