/*
 * live.h - a live run: stream a completion from a provider (any dialect
 * of api.h: OpenAI-compatible, Anthropic, Ollama) and play it out, as it
 * arrives, on the wall clock.
 *
 * Two threads.  The network thread runs the HTTP transfer; each body read
 * goes through the SSE parser and the event JSON, and every content or
 * reasoning delta is stamped with its arrival time (the monotonic clock,
 * zero when the request is sent), recorded, and pushed into the ring (a
 * full ring makes the network thread wait: TCP backpressure, never a
 * dropped token).  The calling thread is the speech-rate drain: the same
 * drain the simulator uses, stepped on the same clock.  So the final
 * numbers equal `ttsbuf sim` on the recorded trace.
 *
 * Whatever goes wrong (HTTP status, transport, idle or total timeout, not
 * an event stream, bad SSE or JSON, an error event, a stream cut before
 * [DONE], Ctrl-C), the run ends with a one-line message, and everything
 * received before is in the result: its stream (for the trace) and its
 * numbers.  The message, the warning and the finish reason never hold the
 * request's secrets (tb_http_secrets; masked by the reader, secrets.h),
 * even when the server quotes them back, whole, in part or cut; nor do
 * verbose lines.
 *
 * A real TTS in the loop (opts.tts): each chunk the drain closes is sent
 * to the TTS as it closes (ttsnet.h: in order, at most N at once), on the
 * calling thread, which steps the TTS client while it waits; its audio
 * goes to opts.tts's on_audio (the speaker), and once the stream is over
 * the run waits for the TTS to finish every chunk (its per-chunk
 * timeouts, Ctrl-C) and moves the client's log into the result's stream
 * (stream.tts).  The drain itself runs on the rate model then (the status
 * line's figures); the run's numbers are the measured TTS replayed over
 * the stream (the caller: sim's replay of stream and log), which is what
 * `ttsbuf sim --trace` gives on the recording.  The TTS's clock is the
 * run's (t = 0 when the LLM request is sent) and its secrets the run's
 * too (the TTS key added).
 *
 * Ownership: the result owns its stream (tb_live_result_free).
 */
#ifndef TTSBUF_LIVE_H
#define TTSBUF_LIVE_H

#include "ttsbuf/http.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsnet.h"

struct tb_live_opts {
    struct tb_http_req http;   /* url, key, headers, timeouts (body: built here) */
    struct tb_api_request req; /* the request; include_usage is retried without
                                * once if the server rejects it */
    struct tb_sim_opts sim;
    double status_interval; /* s between status callbacks; 0: 0.1 */
    tb_play_fn play_fn;     /* each chunk's schedule, on the calling
                             * thread; may be NULL */
    void *play_ud;
    size_t max_deltas; /* deltas kept before the run stops (TB_READER_TOO_LONG);
                        * 0: TB_READER_DELTAS_MAX */
    /* A real TTS (above), or NULL.  Its clock, origin and secrets are set
     * by the run; its callbacks run on the calling thread. */
    const struct tb_ttsnet_opts *tts;
};

/* What the status callback sees, on the calling thread. */
struct tb_live_status {
    double t;      /* seconds since the request */
    size_t events; /* content events so far */
    uint32_t underruns;
    double gap_total;
    double buffered_s; /* audio ready but not yet played, s */
    double silent_s;   /* the gap in progress (not yet in underruns and
                        * gap_total): s since the audio ran dry, or 0 */
    int playing;       /* playback has started */
};
typedef void (*tb_live_status_fn)(void *ud, const struct tb_live_status *st);

struct tb_live_result {
    struct tb_sim_result sim;
    struct tb_stream stream; /* every delta received, with arrival times */
    long http_status;
    int error;         /* enum tb_reader_error */
    char message[640]; /* one line when error != 0 */
    char warning[256]; /* one line worth saying even on success, or "" */
    int usage_retried; /* include_usage was rejected and dropped */
    uint64_t sse_events, comments, tool_calls;
    long long usage_completion, usage_prompt;
    long long usage_ignored;      /* a usage count not credible beside the events
                                   * that came (tb_stream_usage_credible), or -1 */
    uint64_t surrogates_replaced; /* lone UTF-16 halves made U+FFFD (api.h) */
    char finish_reason[32];
    int done_seen;
    int tts_error; /* the TTS client could not start or failed
                    * (TB_E*; tts_message says why), 0 */
    char tts_message[256];
    int have_server;                /* the provider reported its own timings */
    struct tb_server_timing server; /* (Ollama's final line), ns */
};

/* Every option at its default: tb_http_req_init, tb_api_request_init,
 * tb_sim_opts_default, no callbacks, the default caps.  Any thread. */
void tb_live_opts_default(struct tb_live_opts *o);

/*
 * tb_live_run - runs the request.  Returns 0 when it ran (check r->error:
 * a failed request still ran), TB_EINVAL for bad options, TB_ENOMEM or
 * TB_EIO (no thread) before anything was sent.  fn may be NULL.
 */
int tb_live_run(const struct tb_live_opts *o, struct tb_live_result *r, tb_live_status_fn fn,
                void *ud);

void tb_live_result_free(struct tb_live_result *r);

#endif
