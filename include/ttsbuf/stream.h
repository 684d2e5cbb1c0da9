/*
 * stream.h - a token stream held in memory: timed events plus their text.
 *
 * This is what every token source produces (a trace file, the synthetic
 * generator, later a live HTTP stream or an imported benchmark) and what
 * the simulator consumes.  Events live in one array, their text in one
 * arena, so a million-event stream costs two allocations, not a million.
 *
 * Ownership: the stream owns both arrays and its TTS log (tts);
 * tb_stream_free() releases them.  A copy of the struct is a view or a
 * move, never a second owner.
 * Threads: a stream is plain data; one writer at a time, any number of
 * readers once writing has finished.
 */
#ifndef TTSBUF_STREAM_H
#define TTSBUF_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct tb_tts_log;

enum tb_kind {
    TB_KIND_CONTENT = 0,  /* spoken text */
    TB_KIND_REASONING = 1 /* counted, never spoken */
};

struct tb_event {
    double t;        /* seconds since the request was sent */
    uint64_t off;    /* byte offset of the text in the stream's arena */
    uint32_t len;    /* text length in bytes (never 0) */
    uint32_t tokens; /* tokens this event carries (>= 1) */
    uint8_t kind;    /* enum tb_kind */
};

/* Documented caps (ttsbuf(1) LIMITS). */
#define TB_EVENT_TEXT_MAX (1u << 20)      /* bytes of text in one event */
#define TB_EVENT_TOKENS_MAX 1000000u      /* tokens claimed by one event */
#define TB_STREAM_EVENTS_MAX (1ull << 31) /* events in one stream */
/* The latest time an event read from outside may have, in seconds (about
 * 31 years).  Every reader (traces, imports, bench records) checks its
 * times against it where it reads them, so the error names the place, and
 * every integer a time becomes (audio frames at 48 kHz, nanoseconds in an
 * int64_t) holds it.  A stream built in memory may go further (a search
 * over rates retimes streams far out); only what it feeds is bounded. */
#define TB_TIME_MAX 1e9

/* Server-side timings a provider reported about one request (Ollama's
 * final line); -1 for each one it did not report. */
struct tb_server_timing {
    long long total_ns, load_ns;
    long long prompt_eval_count, prompt_eval_ns;
    long long eval_count, eval_ns;
};

/*
 * How a stream ended (ttsbuf-trace(5): the "end" line).  The stream
 * reader (reader.h) decides it for what it reads; a trace keeps it; a
 * synthetic stream is complete.  Names (tb_end_name) in every output:
 */
enum tb_end {
    TB_END_UNKNOWN = 0, /* "unknown": not recorded (a trace older than the end
                         * line, or one cut short) */
    TB_END_COMPLETE,    /* "complete": the server's end marker came */
    TB_END_NO_MARKER,   /* "no_end_marker": a finish reason came but no end
                         * marker: complete, with a warning */
    TB_END_INTERRUPTED, /* "interrupted": stopped by the user (Ctrl-C, SIGTERM) */
    TB_END_LOST,        /* "connection_lost": the connection broke or closed
                         * before the end marker */
    TB_END_ERROR,       /* "error": an HTTP or stream error (a status, not an
                         * event stream, bad event JSON, an error event, a
                         * request that never got an answer) */
    TB_END_TIMEOUT,     /* "timeout": the idle or the total timeout */
    TB_END_CAP,         /* "cap": a stream's cap (deltas or bytes) */
    TB_END__COUNT
};

/* What an end means for a verdict: whether the answer is whole. */
enum tb_end_class {
    TB_END_CLASS_UNKNOWN = 0, /* unknown: read as complete, and said so */
    TB_END_CLASS_COMPLETE,    /* complete, no_end_marker */
    TB_END_CLASS_INCOMPLETE,  /* interrupted, connection_lost, timeout, cap: cut off */
    TB_END_CLASS_FAILED       /* error */
};

#define TB_END_MESSAGE_MAX 256

/* The end of a stream, as recorded. */
struct tb_stream_end {
    int kind;                         /* enum tb_end */
    double t;                         /* when it ended, s since the request was
                                       * sent; NaN when not known */
    char error[16];                   /* the error's kind (reader.h's names:
                                       * "http", "transport", ...), or "" */
    char message[TB_END_MESSAGE_MAX]; /* its one-line message, or "" */
    long http_status;                 /* the response's status; 0: none */
    uint64_t ignored_bytes;           /* bytes of data after the end marker,
                                       * not kept (blanks not counted) */
    char finish_reason[32];           /* the server's, or "" */
};

/* "complete", "no_end_marker", ... (above); "?" out of range.  Any thread. */
const char *tb_end_name(int kind);
/* The kind named, or -1.  Any thread. */
int tb_end_parse(const char *name);
/* The class of a kind (enum tb_end_class).  Any thread. */
int tb_end_class(int kind);
/* An unknown end: kind TB_END_UNKNOWN, t NaN, nothing else.  Any thread. */
void tb_stream_end_init(struct tb_stream_end *e);

/* The modelled TTS a recording ran (a trace header's options.tts and
 * options.tts_lead, as sim and run write them): what `sim` of it replays
 * when no option sets a TTS model.  Text as the options take it; "" (and
 * has_tts 0): not recorded. */
struct tb_stream_ttsmodel {
    int has_tts;          /* options.tts was there, or a constant
                           * options.tts_latency_s over 0 (bench's, or a
                           * recording without a TTS stage) */
    char latency[256];    /* its latency spec (the constant, as text) */
    char seed[24];        /* its seed, decimal, or "" (the spec draws nothing) */
    char connect[32];     /* connect_s */
    char concurrency[32]; /* "" for null: unlimited */
    char rtf[32];         /* rtf */
    char output[16];      /* stream, whole */
    char preset[48];      /* or "" */
    char lead[256];       /* options.tts_lead, or "" */
};

/* A tool call the model made instead of (or before) speaking: read from
 * the stream (api.h's tool items), never spoken, kept in a trace's "tool"
 * lines (ttsbuf-trace(5)).  Caps (ttsbuf(1) LIMITS): the reader stops a
 * stream whose call's arguments pass TB_TOOL_ARGS_MAX bytes or that
 * starts more than TB_STREAM_TOOLS_MAX calls. */
#define TB_TOOL_NAME_MAX 64           /* bytes of a name or id kept, NUL included */
#define TB_TOOL_ARGS_MAX (1u << 20)   /* bytes of one call's arguments */
#define TB_STREAM_TOOLS_MAX 1024u     /* calls in one stream */
#define TB_TOOL_ARGS_KEEP (16u << 10) /* bytes of one call's arguments kept as text */
struct tb_tool_call {
    double t_start;      /* s since the request was sent */
    double t_end;        /* ... its arguments were whole; NaN: never ended */
    uint64_t args_bytes; /* bytes of its arguments (JSON text) */
    char name[TB_TOOL_NAME_MAX], id[TB_TOOL_NAME_MAX]; /* "" when not sent */
    /* Its arguments as they came (OpenAI's and Anthropic's fragments
     * joined, Ollama's object printed unformatted), NUL-terminated,
     * args_bytes of them, owned by the stream; NULL when none came, when
     * they passed TB_TOOL_ARGS_KEEP bytes (args_over 1), or in a stream
     * read from a trace (which keeps their size only). */
    char *args;
    int args_over;
};

/* The tool part of a call's turn whose second request (the answer) this
 * stream is, as bench recorded it (a trace header's "tool_turn",
 * ttsbuf-trace(5)), on the turn's clock (its first request sent at 0):
 * calls 0 when the stream is no such answer (every time NaN then).
 * start, the first tool call's start; end, the last call's end; wait,
 * end to this request's send (the record's tool_s).  filler 1: the turn
 * had a filler (bench --filler); filler_at and filler_s, its first
 * audible sample and seconds heard (NaN: none heard, or no filler). */
struct tb_stream_toolturn {
    uint32_t calls;
    int filler;
    double start, end, wait;
    double filler_at, filler_s;
};

struct tb_stream {
    struct tb_event *ev;
    size_t n, cap;
    char *text;
    uint64_t text_len, text_cap;
    long long usage_tokens;         /* usage.completion_tokens, or -1 when unknown */
    char model[128];                /* from a trace header, or "" */
    char base_url[256];             /* from a trace header, or "" (never a key) */
    char provider[16];              /* "mock" (ttsbuf's built-in mock), "remote",
                                     * or "" (not said) */
    struct tb_server_timing server; /* all -1 unless the provider said */
    char started_at[32];            /* UTC RFC 3339 from a trace header, or "" */
    char command[16];               /* the command that recorded it, or "" */
    long long request;              /* its request's id (a trace header's
                                     * "request": bench's), or -1 */
    double eou_s;                   /* the turn's end of speech before the
                                     * request as the recording modelled it
                                     * (a trace header's "eou_s", turnlat.h),
                                     * or NAN */
    double tool_s;                  /* a tool turn's tool wait, which its
                                     * trace does not replay (a bench
                                     * trace header's "tool_s"), or NAN */
    char chunk_policy[24];          /* the recording's chunk policy (a trace
                                     * header's options.chunk), or "" */
    struct tb_stream_ttsmodel *rec; /* the recording's modelled TTS, or NULL; owned */
    struct tb_stream_end end;       /* how it ended (unknown unless said) */
    struct tb_tts_log *tts;         /* what a real TTS did with the stream's
                                     * chunks (ttsmeas.h), owned; NULL: the
                                     * run had no live TTS */
    struct tb_tool_call *tools;     /* the tool calls, in the order they
                                     * started; owned */
    size_t ntools, tools_cap;
    struct tb_stream_toolturn turn_tool; /* the turn's tool part (calls 0: none) */
};

/*
 * tb_stream_usage_credible - whether a server's usage count (completion tokens)
 * can stand for a stream that brought `events` content events: not when
 * it is below an eighth of them (0 included).  A token may be cut over
 * several events (a server that slices text by characters sends about
 * four a token), but a count far below that is a server that did not
 * count (a gateway whose upstream sent no usage reports 0): callers then
 * count events instead and say so.  A count of -1 (none) is not
 * credible.  Pure; any thread.
 */
int tb_stream_usage_credible(long long usage, uint64_t events);

/* No tool part (calls 0, times NaN).  Any thread. */
void tb_stream_toolturn_init(struct tb_stream_toolturn *t);

/* Every timing unknown (-1).  Any thread. */
void tb_stream_timing_init(struct tb_server_timing *t);

/* Empty stream; cannot fail (allocates nothing). */
void tb_stream_init(struct tb_stream *s);

/* Releases the arrays (and the TTS log) and re-initialises; NULL is a
 * no-op. */
void tb_stream_free(struct tb_stream *s);

/* Forgets all events, the header strings and the end, but keeps the
 * memory, for reuse.  The TTS log, which belongs to the stream that is
 * forgotten, is released. */
void tb_stream_clear(struct tb_stream *s);

/* Grows capacity to at least nev events and ntext bytes of text.
 * Returns 0 or TB_ENOMEM (the stream is unchanged then). */
int tb_stream_reserve(struct tb_stream *s, size_t nev, uint64_t ntext);

/* Gives back the capacity past the events and text held (a loaded stream
 * kept next to many others costs about its own size).  Cannot fail: when
 * the allocator will not shrink a block, the stream keeps it. */
void tb_stream_shrink(struct tb_stream *s);

/* The text of the stream's content events, in order, NUL-terminated and
 * malloc'd (the caller frees it): what a listener was told.  NULL: no
 * memory.  Pure; any thread. */
char *tb_stream_content_text(const struct tb_stream *s);

/*
 * tb_stream_append - adds one event.  Empty text is ignored (returns 0):
 * real servers send an empty first delta, and it is not a token.
 * The caller validates order and UTF-8 (the trace loader does, to name the
 * line); this function checks only the caps.
 * Returns 0, TB_ETOOBIG (text over TB_EVENT_TEXT_MAX, tokens 0 or over
 * TB_EVENT_TOKENS_MAX, too many events), TB_ERANGE (t not finite: no
 * trace could hold it) or TB_ENOMEM.
 */
int tb_stream_append(struct tb_stream *s, double t, const char *text, size_t len, uint32_t tokens,
                     enum tb_kind kind);

/* tb_stream_tool_add - adds a tool call (a copy of c, whose args must be
 * NULL: tb_stream_tool_args adds them).  Returns 0, TB_ETOOBIG
 * (TB_STREAM_TOOLS_MAX calls already) or TB_ENOMEM. */
int tb_stream_tool_add(struct tb_stream *s, const struct tb_tool_call *c);

/* tb_stream_tool_args - n more bytes of call i's arguments (i < ntools),
 * counted in args_bytes and kept in args while TB_TOOL_ARGS_KEEP bytes
 * hold them (past it args is freed and args_over set).  0, or TB_ENOMEM
 * (the count kept, the text dropped). */
int tb_stream_tool_args(struct tb_stream *s, size_t i, const char *bytes, size_t n);

/* Text of event i (not NUL-terminated; length s->ev[i].len). */
static inline const char *tb_stream_text(const struct tb_stream *s, size_t i)
{
    return s->text + s->ev[i].off;
}

#endif
