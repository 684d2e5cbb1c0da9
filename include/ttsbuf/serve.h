/*
 * serve.h - `ttsbuf serve`: a mock OpenAI-compatible provider that streams
 * a token stream with exact timing, and injects faults on request.
 *
 * Endpoints (HTTP/1.1, one request per connection, Connection: close):
 *   POST /v1/chat/completions   stream true: SSE chat.completion.chunk
 *                               events; false: one chat.completion JSON
 *   POST /v1/completions        the legacy API (choices[0].text; no role
 *                               chunk, and no reasoning: it has no field)
 *   POST /v1/messages           Anthropic Messages: SSE with event: lines
 *                               (message_start, ping, a thinking block for
 *                               reasoning then a text block, message_delta
 *                               with usage, message_stop); errors in
 *                               Anthropic's {"type":"error",...} shape
 *   POST /api/chat              Ollama: NDJSON (application/x-ndjson),
 *                               streamed unless "stream": false,
 *                               options.num_predict as the limit, a final
 *                               "done": true line with the server's
 *                               durations (prompt_eval_duration: the first
 *                               token's time; eval_duration: first to last)
 *   GET  /v1/models             the model list
 * Every route streams the same stream with the same timing and faults
 * (nodone drops message_stop or the final line; comments apply to SSE).
 * Other paths get 404, a known path with the wrong method 405, both with
 * an OpenAI-style error body.  Requests are parsed strictly: a malformed
 * head or body gets 400, a chunked request body 411, a version other than
 * HTTP/1.0 or 1.1 505, a request over TB_SERVE_REQUEST_MAX 413; each then
 * closes.  "Expect: 100-continue" is honoured.  Streamed bodies use
 * chunked transfer encoding, so a dropped connection is detectable.
 * "created" is always 0 (the server never reads the wall clock), ids are
 * chatcmpl-ttsbuf-N / cmpl-ttsbuf-N with N counting requests from 1, and
 * usage.prompt_tokens is an estimate: the bytes of the prompt text
 * (messages[].content or prompt) divided by 4, rounded up.
 *
 * Timing: the response to a request read completely at time T sends the
 * role chunk at once, then event k of the stream at T + t_k (the stream's
 * own times, so its ttft is the first token's).  max_tokens (or
 * max_completion_tokens) cuts the stream.  With stream_options.include_usage
 * the usage chunk (empty choices) follows the last event; then
 * `data: [DONE]`.  usage.completion_tokens is the sum of the sent events'
 * tokens.  max_tokens never splits an event: the stream stops before the
 * first event that would pass it (finish_reason "length").  A
 * non-streamed body is sent when its last token would have been.  A
 * client whose EOF arrives before its response ends has gone (a client
 * that half-closes after its request is treated the same).
 *
 * Prefill: with prefill_per_token = S > 0, every item of a completion
 * response (any dialect, streamed or not) is due S x P seconds later, P
 * the request's input tokens (usage.prompt_tokens above: the bytes of the
 * text of every message, Anthropic's top-level "system" too, or of the
 * legacy prompt, over 4, rounded up), as if the server read the context
 * before its first token: first-token time grows with a conversation's
 * context.  Each completion response's head says what was applied:
 * "X-Ttsbuf-Prompt-Tokens: P" and "X-Ttsbuf-Prefill: S x P" (seconds,
 * nine decimals), so a client can check every time against the schedule;
 * usage reports P as prompt_tokens (Anthropic: input_tokens; Ollama:
 * prompt_eval_count, and prompt_eval_duration includes the prefill).
 * TTS requests never pay it.
 *
 * Tool calls: with tool_call_rate = P > 0, a streamed chat, Anthropic or
 * Ollama request that offers tools ("tools": a non-empty array) and
 * carries no tool result is answered, for a fraction P of such requests
 * (drawn from the seed, in the order they come), with a tool call in its
 * dialect's documented shape instead of speech: OpenAI's tool_calls
 * deltas (id and name, the arguments in two fragments, finish_reason
 * "tool_calls"), Anthropic's tool_use block with input_json_delta
 * fragments (stop_reason "tool_use"), Ollama's message.tool_calls whole in
 * one line.  It calls the request's first tool with {"query": WORD}, the
 * word drawn too, sent at once (no prefill, no pacing).  A request
 * carrying the result (a message of role "tool", an Anthropic
 * "tool_result" block) is answered with speech.
 *
 * Streams: without stream_for, every completion request streams
 * `stream`.  With it, each completion request streams one of its own,
 * drawn for it: stream_for(ud, seed_r, out) appends to out the stream of
 * seed seed_r = tb_serve_request_seed(seed, the request's
 * X-Ttsbuf-Request-Id, n), n counting the completion requests without
 * one from 1; the first of those has seed_r = seed (the source's own
 * stream, byte for byte), so a single client sees what it would without
 * draws, and a client that names its requests (bench does) gets the same
 * stream for the same name from every server of that seed.  The stream
 * is held, under the memory budget (a request whose stream does not fit
 * gets 503 with Retry-After: 1, stats: refused), until its connection
 * closes; the request log says each request's seed_r.  A hook that fails
 * closes the connection.
 *
 * Faults: the spec and its items are in faults.h; the server applies
 * the ones it was given to every completion request, and the ones a
 * request's "model" name carries (after its first '+') to that request.
 *
 * Fairness: a connection makes at most 64 KiB of due events per pass of
 * the loop (a non-streamed body: gathers 64 KiB of text, or walks 16384
 * items of its plan), then yields to every connection already due, so a
 * client reading a flood at full speed does not make the others late.
 * The final rendering of a non-streamed body is still one step (O(its
 * size)).
 *
 * Memory: the request buffers and unsent output of all connections
 * together stay within a budget (mem_budget, default 256 MiB), besides the
 * first 4 KiB of each buffer (so a refusal can still be sent: at most
 * 8 KiB a connection more).  A request that would need more while the
 * budget is in use (a big head or body still arriving, or a completion
 * arriving when the budget is full, or a non-streamed body that does not
 * fit) gets 503 with Retry-After: 1 (stats: refused); a streaming client
 * so far behind that its unsent output cannot grow within the budget is
 * dropped, as at its own cap (stats: over_budget).
 *
 * Connections: at most max_conns are served at once.  One accepted past
 * that is answered at once, before its request is read, with 503, an
 * OpenAI-style error body naming the cap and Retry-After: 1, then closed
 * once the client has read it (stats: over_conns); at most
 * max_conns / 8 + 64 such refusals are open at a time, and past that the
 * server stops accepting (new connections wait in the kernel's backlog)
 * until one of them ends, so no client gets an empty reply.  A
 * connection that waits for its request holds its state and nothing else
 * (no buffer until its first byte); ttsbuf(1) states the measured memory
 * per idle connection.  tb_serve_fds_needed says how many descriptors a
 * server holds: one a connection and a few of its own, exactly; the
 * refusals over the cap take what the process's limit leaves above that.
 * One that runs out of them stops accepting for 100 ms (new connections
 * wait in the backlog).
 *
 * Text to speech (a mock: eSpeak NG speaks, whatever the voice or model
 * asked; responses carry "X-Ttsbuf-Mock: tts"), one request per
 * connection, the PCM mono signed 16-bit little-endian:
 *   POST /v1/audio/speech                    OpenAI: model, input, voice,
 *                                            response_format "pcm" (24000 Hz)
 *   POST /v1/text-to-speech/{voice_id}[/stream]
 *                                            ElevenLabs: ?output_format=pcm_R
 *                                            (R 8000 16000 22050 24000 44100
 *                                            48000); text, model_id
 *   POST /v1/speak                           Deepgram: ?encoding=linear16&
 *                                            container=none&sample_rate=R (R
 *                                            8000 16000 24000 32000 48000,
 *                                            default 24000); text
 *   POST /tts/bytes                          Cartesia (Cartesia-Version
 *                                            header): model_id, transcript,
 *                                            voice {mode "id", id},
 *                                            output_format {container "raw",
 *                                            encoding "pcm_s16le", sample_rate
 *                                            8000 16000 22050 24000 44100 48000}
 * Each checks its request as the provider documents it and answers a bad
 * one (400, 401, 422) with the provider's error body.  With tts_key set,
 * the dialect's key header must carry it (Authorization: Bearer,
 * xi-api-key, Authorization: Token, X-API-Key or Authorization: Bearer),
 * or 401; without it any key, or none, is accepted.  The i-th TTS request
 * (i from 1, in the order requests are complete) sends its head and first
 * audio at T + L_i, L_i = tts_latency_at(tts_latency_ud, i) (0 without
 * the hook); the audio goes out in 20 ms pieces, piece k (bytes b_k
 * before it, a_k seconds of audio) at T + L_i + max(tts_rtf x a_k,
 * b_k / drip), as HTTP chunks; X-Ttsbuf-Audio-Bytes says how many bytes
 * will come (after a cut).  Synthesis runs on one thread of the server's
 * own, started by the first TTS request: the process's only eSpeak NG
 * thread (tts.h), so a process runs at most one server that speaks, and
 * synthesis finishing after T + L_i makes the first byte that late.
 * Faults: tts_faults for every TTS request, plus the request's model
 * after its first '+' (faults.h).
 *
 * Capacity (a provider's concurrency limit): with max_inflight = N > 0,
 * a completion request (any dialect, streamed or not) that is read while
 * N completion requests are in flight is answered at once with 429, a
 * "Retry-After: S" header (S = retry_after) and the dialect's documented
 * rate-limit error (OpenAI: {"error":{"message","type":"requests",
 * "code":"rate_limit_exceeded"}}; Anthropic: {"type":"error","error":
 * {"type":"rate_limit_error","message"}}; Ollama: {"error":"..."}), the
 * message naming the cap.  A request is in flight from the moment it is
 * read until its response's last byte is handed to send() or its
 * connection closes; a refusal never is.  tts_max_inflight does the same
 * for the TTS routes, in each TTS dialect's error shape.  The counts are
 * shared by every loop (one atomic each); stats: over_inflight,
 * tts_over_inflight; the request log names the cap and the Retry-After.
 *
 * The request log: with request_log set, the server calls it once for
 * each request when the request ends, on a loop thread, with a
 * struct tb_serve_request that lives only during the call (nothing is
 * kept after it: memory does not grow with requests).  Times are
 * CLOCK_MONOTONIC nanoseconds (tb_clock_mono_ns), so a client on the same
 * machine can set them beside its own.  A request ends when the last
 * byte of its response has been handed to send() (complete, fault,
 * error), or when its connection is closed before that (client_closed,
 * dropped, stopped).  A connection that closes without sending a byte
 * and without a response (a bare connect, a port probe) is not a
 * request.  A client's close is seen as soon as the kernel reports it
 * (EOF or a reset on the socket, watched with EPOLLRDHUP in every state:
 * between tokens, in a stall, in the prefill, waiting for a body or for
 * speech), not at the next write: the stream stops there and its
 * connection is freed.  "X-Ttsbuf-Request-Id: ID" names a request in the
 * log: 1..TB_SERVE_RID_MAX characters of A-Z a-z 0-9 . _ : - (anything
 * else gets 400 at once, in the OpenAI error shape).  No other header is
 * passed on (an API key never is).
 *
 * Threads: tb_serve_run runs the server's event loops (epoll + timerfd: no
 * thread per connection), opts.threads of them: the first in the calling
 * thread, each other on a thread of its own (which blocks every signal).
 * The first loop accepts every connection and hands it to the loop with
 * the fewest open; a connection stays on its loop until it closes.  The
 * loops share the connection cap, the memory budget and the numbering of
 * requests, ids, draws and TTS requests; the hooks (stream_for,
 * tts_latency_at) may then run on several loops at once, and request_log
 * on any loop, one call at a time (seq in the order of the calls).
 * tb_serve_stop may be called from any thread or a signal handler.
 * Ownership: the server borrows the stream, which must outlive it.
 */
#ifndef TTSBUF_SERVE_H
#define TTSBUF_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/faults.h"
#include "ttsbuf/stream.h"

#define TB_SERVE_PORT_DEFAULT 8788
#define TB_SERVE_REQUEST_MAX (1u << 20)          /* request head + body cap */
#define TB_SERVE_OUTBUF_MAX (4u << 20)           /* unsent bytes per connection */
#define TB_SERVE_MEM_DEFAULT ((size_t)256 << 20) /* the memory budget (below) */
#define TB_SERVE_PREFILL_MAX 1.0                 /* s per input token */
#define TB_SERVE_CONNS_DEFAULT 4096              /* max_conns (below) */
#define TB_SERVE_CONNS_MAX 1000000
#define TB_SERVE_THREADS_MAX 16u     /* opts.threads */
#define TB_SERVE_THREADS_AUTO_MAX 8u /* tb_serve_threads_auto */

#define TB_SERVE_RID_MAX 64
#define TB_SERVE_INFLIGHT_MAX 1000000 /* max_inflight, tts_max_inflight */
#define TB_SERVE_RETRY_AFTER_MAX 3600 /* retry_after, s */ /* X-Ttsbuf-Request-Id's length cap */

/* How a request ended (the request log). */
enum tb_serve_end {
    TB_SERVE_END_COMPLETE,      /* its whole response was sent (status < 400) */
    TB_SERVE_END_CLIENT_CLOSED, /* the client closed (EOF or reset) before that */
    TB_SERVE_END_FAULT,         /* a fault ended or answered it: drop@K, error@K,
                                   status@N, html; the TTS's status@N, cut@F */
    TB_SERVE_END_ERROR,         /* answered 4xx or 5xx, not by a fault */
    TB_SERVE_END_DROPPED,       /* the server gave up: a reader too far behind
                                   (TB_SERVE_OUTBUF_MAX, the memory budget), a
                                   timeout, out of memory */
    TB_SERVE_END_STOPPED        /* the server stopped with it in flight */
};

/* "complete", "client_closed", "fault", "error", "dropped", "stopped";
 * static.  Any thread. */
const char *tb_serve_end_name(enum tb_serve_end e);

/*
 * One request, as the request log sees it when it ends.  Times are
 * CLOCK_MONOTONIC ns, -1 when there is none; counts -1 when they do not
 * apply.  Token counts are of a completion route (reasoning and content
 * tokens alike, as usage counts them):
 *   tokens_sent     tokens of the events (or the body) the server had made
 *                   and queued for sending when the request ended
 *   tokens_planned  tokens its schedule would have sent had the client
 *                   stayed (after max_tokens, without the tokens a drop@K
 *                   or error@K replaces); for a complete stream, sent
 *   tokens_unsent   planned - sent: what the client never got.  The mock
 *                   makes token k only when it is due, so after a close
 *                   it generated none of them; a real server would have
 *                   generated some until it noticed the close (how many
 *                   is the server's own).
 * The TTS's audio bytes likewise: audio_planned is -1 until the speech
 * exists.
 */
struct tb_serve_request {
    uint64_t seq;           /* 1, 2, ... in the order requests end */
    const char *route;      /* "chat", "completions", "anthropic", "ollama",
                               "models", "tts_openai", "tts_elevenlabs",
                               "tts_deepgram", "tts_cartesia"; NULL: none
                               (unread, or an unknown path) */
    const char *request_id; /* the X-Ttsbuf-Request-Id, or NULL */
    int stream;             /* 1 streamed, 0 a whole body, -1 unknown */
    enum tb_serve_end end;
    int http_status;       /* of the response sent, 0: none */
    int64_t received;      /* the request's last byte read */
    int64_t first_byte;    /* the response's first byte handed to send() */
    int64_t late_max;      /* the largest lateness of its timed writes (the
                              first byte, each event, each audio piece, a
                              whole body) against their schedule, ns; -1:
                              none was timed */
    int64_t ended;         /* when it ended (client_closed: = closed) */
    int64_t closed;        /* client_closed: when the server saw the close */
    int64_t prompt_tokens; /* the prefill's input tokens (usage's) */
    int64_t tokens_sent, tokens_planned, tokens_unsent;
    int seeded;                        /* its stream was drawn for it (Streams, above)... */
    uint64_t seed;                     /* ... from this seed */
    int64_t tts_chars;                 /* code points of the text to speak */
    int64_t audio_sent, audio_planned; /* PCM bytes */
    uint64_t bytes_sent;               /* every response byte handed to send() */
    const char *refused_over; /* "max_inflight" or "tts_max_inflight": answered
                                 429 over that cap (Capacity, above); NULL */
    int64_t retry_after;      /* ... the Retry-After it sent, s; -1: none */
    /* Tool calls (above): a request offering tools answered with a call
     * (1) or with speech (0), -1 one offering none; a request carrying a
     * tool's result with it in its dialect's shape (1: OpenAI's role
     * "tool" message whose tool_call_id is an earlier assistant
     * tool_calls id, arguments a JSON text; Anthropic's user tool_result
     * block whose tool_use_id is the tool_use block's {id, name, input}
     * in the assistant message just before; Ollama's "tool" message whose
     * tool_name an earlier assistant tool_calls function has, arguments an
     * object), 0 in another shape (answered all the same), -1 none. */
    int tool_call, tool_result;
    /* The tool call's arguments as JSON text: those a request answered
     * with a call was called with, or those the call a request's result
     * answers carried (the last assistant message's first call: OpenAI's
     * arguments text as sent, an Anthropic input or Ollama arguments
     * object printed unformatted); NULL: none, or over 255 bytes. */
    const char *tool_args;
};

struct tb_serve_opts {
    const char *host;               /* numeric address; default "127.0.0.1" */
    int port;                       /* 0: ephemeral */
    const struct tb_stream *stream; /* what every request streams, unless... */
    /* ... each draws its own (Streams, above): the hook appends the stream
     * of a seed to out (0, or non-zero: the connection is closed); runs on
     * a loop thread (several at once with opts.threads > 1).  NULL: none. */
    int (*stream_for)(void *ud, uint64_t seed, struct tb_stream *out);
    void *stream_for_ud;
    uint64_t seed;            /* the draws' seed (the first request's stream's) */
    struct tb_faults faults;  /* applied to every request */
    size_t max_conns;         /* 0: TB_SERVE_CONNS_DEFAULT (Connections, above) */
    unsigned threads;         /* event loops (Threads, above): 0 or 1: one, the
                                 caller's; at most TB_SERVE_THREADS_MAX */
    size_t mem_budget;        /* bytes; 0: TB_SERVE_MEM_DEFAULT */
    double prefill_per_token; /* s per input token, 0..TB_SERVE_PREFILL_MAX (below) */
    double tool_call_rate;    /* 0..1: the fraction of streamed requests offering tools
                               * answered with a tool call (Tool calls, above) */
    /* The mock TTS (above). */
    double (*tts_latency_at)(void *ud, uint32_t i); /* seconds >= 0; NULL: 0 */
    void *tts_latency_ud;
    double tts_rtf;                  /* >= 0 */
    double tts_lead;                 /* 0..10 s of zero samples before each
                                      * answer's speech, whose own leading
                                      * zeros are dropped; 0: eSpeak NG's
                                      * audio as it is */
    struct tb_tts_faults tts_faults; /* zero: none */
    const char *tts_key;             /* borrowed; NULL: any key */
    /* Capacity (above): completion and TTS requests in flight at once;
     * 0: no cap.  retry_after: the seconds a refusal's Retry-After says
     * (0: 1). */
    size_t max_inflight, tts_max_inflight;
    unsigned retry_after;
    /* The request log (above): called on a loop thread as each request
     * ends, one call at a time; r lives during the call.  NULL: none. */
    void (*request_log)(void *ud, const struct tb_serve_request *r);
    void *request_log_ud;
};

struct tb_serve_stats {
    uint64_t requests; /* requests answered (any status) */
    uint64_t streams;  /* streaming responses started */
    uint64_t events;   /* token events sent (a non-streamed body counts
                          the events it carries) */
    uint64_t tokens;
    uint64_t dropped;       /* connections closed early: client gone (EOF or
                               a send error before the response ended),
                               output over TB_SERVE_OUTBUF_MAX, timeouts; not
                               drop@K, not stop, not over_conns */
    uint64_t client_closed; /* of those, the ones whose client had closed
                               (the request log's client_closed) */
    /* Lateness of token events: time handed to send() minus schedule, s;
     * one sample per streamed event and per non-streamed body.  Kept in
     * 10 us buckets: p50/p99 are bucket tops (never above late_max). */
    double late_p50, late_p99, late_max;
    uint64_t late_n;
    uint64_t refused;     /* requests answered 503: over the memory budget */
    uint64_t over_budget; /* connections dropped: their output did not fit it */
    size_t mem_peak;      /* the most request and output buffer bytes held */
    uint64_t over_conns;  /* connections answered 503: over max_conns */
    uint64_t tts;         /* TTS requests answered with audio */
    uint64_t tts_bytes;   /* audio bytes sent */
    uint64_t over_inflight, tts_over_inflight; /* answered 429 over the caps */
    unsigned loops;       /* the event loops it ran (opts.threads) */
    uint64_t loop_conns[TB_SERVE_THREADS_MAX]; /* connections each loop took */
};

struct tb_serve;

/* Binds and listens (so the port is known before running).  Returns 0 and
 * *out (free with tb_serve_destroy); TB_EINVAL for a bad host, port or no
 * stream; TB_EIO when bind/listen fail (strerror in err); TB_ENOMEM.
 * Any thread. */
int tb_serve_create(const struct tb_serve_opts *o, struct tb_serve **out, char *err, size_t errlen);

/* The file descriptors a server of max_conns connections (0: the
 * default) on `threads` loops (0 as 1) holds at most: one a connection,
 * its listener and stop eventfd, the 3 eSpeak NG holds at once while it
 * reads its voice data (the first TTS request), and each loop's epoll
 * set, timerfd, inbox and speech eventfds (max_conns + 5 + 4 x threads).  Not counted:
 * the process's own (its standard streams, a log file), and the refusals
 * over the cap, which take what the descriptor limit leaves, at most
 * *refusals (max_conns / 8 + 64; refusals may be NULL) at once.  Pure;
 * any thread. */
size_t tb_serve_fds_needed(size_t max_conns, unsigned threads, size_t *refusals);

/* opts.threads for "one a CPU": the online CPUs, at least 1, at most
 * TB_SERVE_THREADS_AUTO_MAX.  Any thread. */
unsigned tb_serve_threads_auto(void);

/* The seed of a request's stream (Streams, above): seed itself for the
 * first request without an id (rid NULL, n <= 1), else a mix of seed
 * with rid (its bytes; n is not read) or with n, below 2^53 (exact in a
 * JSON number).  Pure; any thread. */
uint64_t tb_serve_request_seed(uint64_t seed, const char *rid, uint64_t n);

/* The bound port.  Any thread. */
int tb_serve_port(const struct tb_serve *s);

/* Runs the event loops until tb_serve_stop: the first in the calling
 * thread, the others on threads it starts and joins (each loop's thread
 * has its timer slack set to 1 ns while running).  Open connections are
 * closed on the way out.  Returns 0 or TB_EIO (a loop failed, or a thread
 * could not start: the others stop).  A stop requested before the call
 * makes it return at once. */
int tb_serve_run(struct tb_serve *s);

/* Asks the loop to stop; async-signal-safe, any thread. */
void tb_serve_stop(struct tb_serve *s);

/* Statistics; call after tb_serve_run has returned. */
void tb_serve_stats(const struct tb_serve *s, struct tb_serve_stats *out);

void tb_serve_destroy(struct tb_serve *s); /* NULL is a no-op */

#endif
