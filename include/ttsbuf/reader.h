/*
 * reader.h - one stream reader: a response body's bytes in any dialect
 * (api.h) become a recorded tb_stream, and the reader decides how the
 * stream ended.  `ttsbuf run` (live.h), `ttsbuf bench` (bench.h) and the
 * imports of raw SSE bytes (GenAI-Perf, AIPerf raw records) all read
 * through it, so a stream means the same thing to each of them.
 *
 * The end marker ends the stream: once the dialect's end ([DONE],
 * message_stop, "done": true) has come, nothing after it is recorded,
 * the feed asks the transfer to stop (tb_reader_feed returns non-zero),
 * and the bytes of data it was given after the marker are counted
 * (blanks and line ends not counted) and named in the warning.
 *
 * How a stream ends, strictest reading first (tb_reader_conclude): the
 * end marker, cancelled, idle timeout, total timeout, an HTTP status >=
 * 300, a 2xx that is not the dialect's stream type, a transport error,
 * then from the bytes: an event cut before the dialect's end marker or no
 * end marker at all (TB_READER_TRUNCATED).  A stream with no end marker
 * but a finish reason is complete, with a warning.  Errors found while
 * feeding (an error event, bad event JSON, an event over its cap, a
 * stream over tb_reader_over_cap's caps) stop the feed there, and the
 * first error is the one kept.  What was received before any error stays
 * in the stream, and the conclusion is recorded there too: the stream's
 * end (stream.h: its kind, time, error and the bytes ignored), which a
 * trace keeps.
 *
 * A server's words (an error body or event, a finish reason, the
 * Content-Type, libcurl's message) reach the message, the warning and
 * finish_reason only through tb_secrets_scrub with the reader's secrets:
 * `run` and `bench` mask the request's keys there, once, whatever output
 * they then reach (reports, records, pages, stderr).  The answer's text
 * is masked too, at equal length (tb_secrets_masker, secrets.h), as each
 * delta is recorded and before the push hook sees it, so its numbers
 * (bytes, code points, chunks, durations) stay those of the text
 * unmasked.  An echo cut across deltas is masked in the recorded stream
 * when its 8th character comes, in the deltas before too: every trace,
 * record, page and report made from the stream has it masked, while the
 * hook has already had (and a speaker may have said) the characters that
 * came in the deltas before.
 *
 * Tool calls (api.h's tool items) are recorded in the stream's tools,
 * never as deltas, so never spoken: a call starts at the event that
 * names it (or whose arguments come first), ends at the event that says
 * so (Anthropic's content_block_stop, Ollama's line) or at the finish
 * reason or the end marker; a call never ended keeps t_end NaN.  A
 * call's arguments past TB_TOOL_ARGS_MAX bytes stop the stream
 * (TB_READER_SSE, the stream byte named), more than TB_STREAM_TOOLS_MAX
 * calls or TB_API_TOOLS_MAX open at once too (TB_READER_TOO_LONG).
 *
 * Ownership: a reader owns its parser and borrows the stream it records
 * into.  Threads: one thread per reader.
 */
#ifndef TTSBUF_READER_H
#define TTSBUF_READER_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/api.h"
#include "ttsbuf/http.h"
#include "ttsbuf/secrets.h"
#include "ttsbuf/stream.h"

/* How a stream ended. */
enum tb_reader_error {
    TB_READER_OK = 0,
    TB_READER_HTTP,        /* a non-2xx status */
    TB_READER_TRANSPORT,   /* connect, DNS, TLS, reset, timeout */
    TB_READER_IDLE,        /* --idle-timeout: no data event for that long */
    TB_READER_NOT_SSE,     /* 2xx but not text/event-stream */
    TB_READER_SSE,         /* an SSE line or event over its cap */
    TB_READER_JSON,        /* an event whose JSON is bad */
    TB_READER_ERROR_EVENT, /* the server sent an error event */
    TB_READER_TRUNCATED,   /* the stream ended before its end marker */
    TB_READER_CANCELLED,   /* Ctrl-C */
    TB_READER_NOMEM,
    TB_READER_TIMEOUT,  /* the total timeout (http.total_timeout) */
    TB_READER_TOO_LONG, /* over TB_READER_DELTAS_MAX deltas or TB_READER_TEXT_MAX bytes */
    TB_READER_TTS,      /* --tts-url: the real TTS failed a chunk of the stream (bench),
                         * or was dead and the LLM transfer was stopped for it (run and
                         * bench: tb_tts_log_dead, ttsmeas.h); the message names the
                         * chunk, the TTS's kind and its message */
    TB_READER__COUNT
};

/* A short name for an error kind ("http", "transport", ...).  Any thread. */
const char *tb_reader_error_name(int error);

/* The error kind named, or -1.  Any thread. */
int tb_reader_error_parse(const char *name);

/*
 * tb_reader_end_kind - the stream end (enum tb_end, stream.h) of a
 * conclusion: error (enum tb_reader_error), whether the end marker came,
 * and whether any byte of a response came (a transport error before any
 * is a request that failed, after it a connection lost).  Pure; any
 * thread.
 */
int tb_reader_end_kind(int error, int marker, int data_came);

/* A live stream records every delta (for the trace), so an endless stream
 * would grow without bound: past this many it stops (ttsbuf(1) LIMITS; a
 * real answer is a few thousand). */
#define TB_READER_DELTAS_MAX 1000000u
#define TB_READER_TEXT_MAX (256u << 20) /* bytes of delta text kept, likewise */

/*
 * tb_reader_over_cap - 1 when one more delta of len bytes would take the
 * recorded stream s past a stream's caps (max_deltas deltas, 0:
 * TB_READER_DELTAS_MAX; TB_READER_TEXT_MAX bytes), with the one-line reason in
 * msg; else 0.  The reader stops a stream there (TB_READER_TOO_LONG).  Any
 * thread.
 */
int tb_reader_over_cap(const struct tb_stream *s, size_t len, size_t max_deltas, char *msg,
                       size_t msglen);

struct tb_reader;

/* Called after each delta is recorded (t: its time in the stream); the
 * hook `run` uses to push it into the ring.  Non-zero stops the feed (the
 * hook records why with tb_reader_fail). */
typedef int (*tb_reader_push_fn)(void *ud, struct tb_reader *rd, double t, const char *text,
                                 size_t len, uint8_t kind);

struct tb_reader {
    struct tb_api_parser *parser;
    const struct tb_api_info *api;
    struct tb_stream *out;  /* deltas go here, borrowed */
    size_t max_deltas;      /* tb_reader_over_cap's; 0: TB_READER_DELTAS_MAX */
    tb_reader_push_fn push; /* may be NULL */
    void *push_ud;
    /* Masked in message, warning, finish_reason and the recorded text;
     * borrowed, or NULL. */
    const struct tb_secrets *secrets;
    /* Masks them in the recorded text; owned. */
    struct tb_secrets_masker *masker;
    double t0;        /* the request's start: delta times are t - t0 */
    double t_now;     /* arrival time of the bytes being fed */
    double last_data; /* time of the last data event (or t0): the idle clock */
    int done_seen;    /* the dialect's end marker came */
    double t_done;    /* ... at this time (t, as fed) */
    uint64_t fed;     /* body bytes fed so far */
    uint64_t done_at; /* the stream byte just past the end marker's event */
    uint64_t ignored; /* bytes of data fed after the end marker (blanks not
                       * counted) */
    long long usage_completion, usage_prompt; /* -1 when not reported */
    uint64_t tool_calls; /* tool calls started (out->tools) */
    /* The tool calls still open: their index in the message, their
     * place in out->tools. */
    struct {
        long index;
        size_t call;
    } open_tools[TB_API_TOOLS_MAX];
    size_t nopen_tools;
    char finish_reason[32];
    int have_server;                /* the provider reported its own timings */
    struct tb_server_timing server; /* (Ollama's final line), ns */
    int error;                      /* enum tb_reader_error; the first one */
    char message[640];              /* one line when error != 0 */
    char warning[256];              /* one line worth saying even on success, or "" */
};

/* Returns 0, TB_EINVAL (unknown dialect) or TB_ENOMEM. */
int tb_reader_init(struct tb_reader *rd, enum tb_api api);
void tb_reader_free(struct tb_reader *rd);

/* A new stream starting at t0, its deltas into out.  Keeps memory, the
 * push hook and the secrets. */
void tb_reader_begin(struct tb_reader *rd, struct tb_stream *out, double t0);

/*
 * tb_reader_recorded - reads recorded bytes whose endpoint is not known:
 * the first event with the fields of chat or completions sets the
 * dialect (imports; see tb_api_parser_adopt).
 */
void tb_reader_recorded(struct tb_reader *rd);

/* Body bytes arrived at t (a tb_http_body_fn: non-zero stops the
 * transfer: an error, recorded in rd, or the end marker, rd->done_seen;
 * bytes fed after either are not read, those after the marker counted). */
int tb_reader_feed(void *rd, const char *buf, size_t len, double t);

/* Records an error of kind (enum tb_reader_error) unless one is already
 * recorded; returns the error kept. */
int tb_reader_fail(struct tb_reader *rd, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * tb_reader_conclude - the transfer ended at time t (the feed's clock;
 * hr; q: the request's timeouts, for the messages): classifies how,
 * unless the end marker came or feeding already failed, records the end
 * in the stream, and returns the conclusion (rd->error; rd->message and
 * rd->warning say it).
 */
int tb_reader_conclude(struct tb_reader *rd, const struct tb_http_resp *hr,
                       const struct tb_http_req *q, double t);

/* The bytes ended with no transfer to judge (recorded bytes): the
 * stream's own part of tb_reader_conclude, its end at the last bytes'
 * time.  Recorded bytes carry no clock to time out on: the bytes a
 * timed-out stream left behind conclude as any stream cut there
 * (TB_READER_TRUNCATED). */
int tb_reader_end(struct tb_reader *rd);

/*
 * tb_reader_error_text - the server's own message from an error response body,
 * in any dialect: from JSON the message an error event carries
 * (error.message, a string "error", "message", FastAPI's "detail"), else
 * the HTML <title>, else the first non-blank line, trimmed to one line of
 * at most outlen-1 bytes with control characters replaced.  Never fails.
 * Any thread.
 */
void tb_reader_error_text(const char *body, size_t len, char *out, size_t outlen);

#endif
