/*
 * ttsnet.h - a real TTS in the loop: each chunk of text sent to a TTS
 * provider over HTTP (ttsapi.h's dialects), in order and at most N at
 * once, its PCM handed over as it arrives, and what happened to it
 * recorded in a struct tb_tts_log (ttsmeas.h).
 *
 * The model's rule (playout.h): chunk j is sent once it is closed (c_j,
 * the tb_ttsnet_submit call), chunk j-1 was sent and chunk j-N has
 * ended, b_j = max(c_j, b_{j-1}, end_{j-N}); at once when all hold.  "Sent" is when the request is
 * handed to libcurl, which connects and writes it in the next
 * tb_ttsnet_step: step soon after a submit.  A blank chunk (ttsmeas.h's
 * tb_tts_blank) is skipped: not sent, not counted as sent; at its turn it
 * ends complete with no audio (sent and end that time, no first byte, 0
 * bytes; ttsmeas.h: a number not measured is NAN).  Every other chunk is
 * identified by its own transfer, so a blank one shifts nothing.
 *
 * How a chunk ends (the record's fail, ttsmeas.h):
 *   "none"      the whole body came, 2xx, raw PCM (ttscheck.h's media
 *               types, or a WAV of mono 16-bit PCM at the rate asked,
 *               its header not counted), an even number of bytes, at
 *               least two;
 *   "http"      a status other than 2xx: status, and the provider's
 *               message from its error body (the first 64 KiB read);
 *   "format"    2xx but not the audio asked: a Content-Type of JSON,
 *               HTML, XML or text (an error in a 200), of compressed or
 *               other audio (audio/mpeg, audio/ogg: named), a WAV whose
 *               header is not mono 16-bit PCM at the rate asked; no audio
 *               byte for a chunk with text; the body ended on half a
 *               sample;
 *   "cut"       the body ended early: the connection closed or was reset
 *               mid-body, or fewer bytes came than announced;
 *   "timeout"   no byte for idle_timeout, or the chunk's total_timeout;
 *   "transport" no answer: refused, DNS, TLS, a redirect refused, no
 *               descriptor left for the socket (EMFILE, with the limit);
 *   "canceled"  tb_ttsnet_cancel, on_audio asked to stop, or an earlier
 *               chunk failed.
 * A failed chunk ends the run's speech: the chunks after it are never
 * sent (those in flight are stopped), and end "canceled"; what was
 * measured is kept.  The caller decides what the run does then.
 *
 * Times: every time given or recorded is on the run's clock: seconds of
 * opts.clock minus opts.origin, the origin the run's events' t use (the
 * LLM request was sent at 0), ttsmeas.h.
 *
 * Secrets: the key goes into its header only (ttsapi.h), and out of the
 * first URL's origin never (http.h's redirect rule); every message
 * passes through the secrets scrubber (secrets.h), then the sanitizer
 * every peer's words pass (one line of valid UTF-8), so a server that
 * echoes the key does not get it into a record; the log's url has
 * secrets masked.  The library prints nothing.
 *
 * Threads: one thread, the caller's, calls every function of a client
 * and receives its callbacks (inside tb_ttsnet_step, tb_ttsnet_finish,
 * tb_ttsnet_cancel); tb_http_global_init must have run.  Different
 * clients may run on different threads.  Inside a callback: on_end may
 * call tb_ttsnet_submit and tb_ttsnet_cancel; on_audio calls nothing of
 * the client (it runs inside libcurl) and asks to stop by its return.
 */
#ifndef TTSBUF_TTSNET_H
#define TTSBUF_TTSNET_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/clock.h"
#include "ttsbuf/http.h"
#include "ttsbuf/secrets.h"
#include "ttsbuf/ttsmeas.h"

/*
 * Audio of chunk j (1-based): pcm[0..n) (n even: whole 16-bit samples,
 * mono s16le at the client's rate; an odd trailing byte is held until
 * its pair comes), which arrived at time t.  The bytes are the
 * client's: copy them.  Return 0 to go on; non-zero stops the run as
 * tb_ttsnet_cancel does (this chunk ends "canceled" with what it had).
 */
typedef int (*tb_ttsnet_audio_fn)(void *ud, uint32_t j, const char *pcm, size_t n, double t);

/*
 * Chunk j ended (complete or failed): its record, valid during the call
 * only (the log may move afterwards; tb_ttsnet_log has it too).  Called
 * once per chunk submitted, in the order the chunks end (with N > 1 not
 * always chunk order).
 */
typedef void (*tb_ttsnet_end_fn)(void *ud, uint32_t j, const struct tb_tts_chunk *c);

struct tb_capq;
struct tb_ttsws_loop; /* ttsws.h */

struct tb_ttsnet_opts {
    int api;                /* enum tb_ttsapi (ttsapi.h) */
    int ws;                 /* 0: HTTP; 1 + enum tb_ttsws_api: that WebSocket
                             * dialect (ttsws.h), every call of the client
                             * then goes to a tb_ttsws (api is not read) */
    const char *url;        /* the provider's URL ("https://api.openai.com",
                             * "http://127.0.0.1:PORT/v1", or the whole
                             * endpoint): tb_ttsapi_base resolves it, and
                             * the dialect appends its path */
    const char *key;        /* the API key (a secret), or NULL / "" for none */
    const char *model;      /* NULL: the dialect's default model */
    const char *voice;      /* NULL: the dialect's default voice */
    unsigned rate;          /* sample rate, Hz; 0: 24000 (tb_ttsapi_build says
                             * which rates a dialect takes) */
    int concurrency;        /* N, chunks in flight at most, >= 1; 0: 1 */
    double connect_timeout; /* s per request; 0: 10 s */
    double idle_timeout;    /* s with no body byte, per chunk (counted from
                             * its send, so a slow first byte counts); 0: none */
    double total_timeout;   /* s per chunk from its send; 0: none */
    int insecure;           /* do not verify TLS (off by default) */
    long max_redirects;     /* -1: the default (http.h), 0: none followed */
    struct tb_clock *clock; /* the run's clock, borrowed (must outlive the
                             * client); NULL: a monotonic clock the client
                             * starts at create */
    double origin;          /* clock time of the run's t = 0 */
    /* The run's secrets, borrowed, read-only (must hold the key, built
     * before the client is created; tb_http_secrets of the LLM request
     * and more); NULL: the client keeps its own set with the key. */
    const struct tb_secrets *secrets;
    int mock;                    /* recorded in the log: 1 when ttsbuf's own mock
                                  * answers, 0 unknown */
    tb_ttsnet_audio_fn on_audio; /* or NULL */
    tb_ttsnet_end_fn on_end;     /* or NULL */
    void *ud;
    const atomic_int *cancel; /* when non-zero (a signal handler may set
                               * it), the next step cancels everything
                               * (tb_ttsnet_cancel); NULL: none */
    tb_http_log_fn log;       /* verbose libcurl lines (redacted), or NULL */
    void *log_ud;
    /* Over HTTP, each chunk's request says "X-Ttsbuf-Request-Id: ID.jJ"
     * (J its 1-based number; ttsbuf serve --log records it): ID copied,
     * at most TB_TTSNET_RID_MAX bytes of [A-Za-z0-9._:-]; NULL: none.
     * The WebSocket dialects do not send it. */
    const char *request_id;
    /* A capacity shared with other clients, on any threads (capq.h),
     * borrowed (must outlive the client), or NULL: none.  A chunk that may
     * go by the rule above then also waits for a slot of it (blank
     * chunks do not), which it holds until it ends (its last audio byte
     * received, or it failed or was canceled); the record keeps its
     * entry and wait (cap_ready, cap_wait; ttsmeas.h). */
    struct tb_capq *capacity;
    /* A WebSocket dialect's connection is served on this loop (ttsws.h:
     * one per event-loop thread, borrowed, the caller's thread's; it must
     * outlive the client); NULL: the client makes a loop of its own.  The
     * HTTP dialects do not read it. */
    struct tb_ttsws_loop *ws_loop;
};

#define TB_TTSNET_RID_MAX 40

struct tb_ttsnet;

/* Options at their defaults: api TB_TTSAPI_OPENAI, no URL, rate 24000,
 * concurrency 1, redirects the default.  Any thread. */
void tb_ttsnet_opts_init(struct tb_ttsnet_opts *o);

/*
 * tb_ttsnet_create - a client with no chunk yet, at o's URL as users write
 * it (the root, with or without "/v1", or the whole endpoint:
 * tb_ttsapi_base, ttsapi.h; o.log, when set, is told the endpoint once);
 * its log (api, url with secrets masked, the model and voice sent (the options, or the
 * dialect's defaults), concurrency, mock) is filled at once.
 * Returns 0, TB_EINVAL (no URL, an unknown dialect, concurrency < 0, a
 * rate the dialect does not take, a URL libcurl cannot read; the reason
 * in err) or TB_ENOMEM.  *out is the caller's (tb_ttsnet_destroy).
 */
int tb_ttsnet_create(const struct tb_ttsnet_opts *o, struct tb_ttsnet **out, char *err,
                     size_t errlen);

/*
 * tb_ttsnet_describe - the head of the log a client of o would keep (api,
 * url, model, voice, concurrency, mock; no record), without a client or
 * the network: o's URL resolved as tb_ttsnet_create resolves it
 * (tb_ttsapi_base), the endpoint (HTTP: the URL a chunk is posted to,
 * query included; WebSocket: the provider's base) with secrets masked.
 * Returns 0 or TB_EINVAL (the reason in err) / TB_ENOMEM; *head owns
 * nothing (tb_tts_log_free is still fine).  Any thread.
 */
int tb_ttsnet_describe(const struct tb_ttsnet_opts *o, struct tb_tts_log *head, char *err,
                       size_t errlen);

/* Stops every transfer (no callback runs) and frees the client and its
 * log; NULL is a no-op. */
void tb_ttsnet_destroy(struct tb_ttsnet *c);

/*
 * tb_ttsnet_submit - chunk j = (chunks so far) + 1 was closed now:
 * text[0..len), valid UTF-8 (copied).  Its record is appended to the log
 * and it is sent at once when allowed (above), else queued.  Callbacks of
 * this chunk never run inside submit (only in step, finish and cancel).
 * Returns 0, TB_EINVAL (invalid UTF-8; after tb_ttsnet_finish or
 * tb_ttsnet_cancel), TB_ETOOBIG (over TB_EVENT_TEXT_MAX), TB_ENOMEM.
 * After a chunk failed, a chunk submitted is recorded and ends
 * "canceled" at the next step.
 */
int tb_ttsnet_submit(struct tb_ttsnet *c, const char *text, size_t len);

/*
 * tb_ttsnet_step - drives the transfers (libcurl's multi interface):
 * waits for network activity at most timeout_ms (0: does what is ready
 * and returns), hands over audio (on_audio), ends chunks (on_end), sends
 * the chunks now allowed, enforces the timeouts.  Returns how many chunks
 * have not ended yet (>= 0), or TB_ENOMEM / TB_EIO (libcurl's multi
 * handle failed; the chunks in flight then end "transport").
 */
int tb_ttsnet_step(struct tb_ttsnet *c, int timeout_ms);

/* tb_ttsnet_step_fd - tb_ttsnet_step that also returns as soon as fd (a
 * descriptor of the caller's, e.g. an eventfd another thread writes; -1:
 * none) is readable; it reads nothing from it. */
int tb_ttsnet_step_fd(struct tb_ttsnet *c, int fd, int timeout_ms);

/*
 * tb_ttsnet_finish - no more chunks will come: steps until every chunk
 * has ended or the run's clock reaches deadline (an absolute time on the
 * run's clock; INFINITY: no deadline), when the chunks still open end
 * "timeout" (in flight) or "canceled" (not sent).  Returns 0, or as
 * tb_ttsnet_step.
 */
int tb_ttsnet_finish(struct tb_ttsnet *c, double deadline);

/*
 * tb_ttsnet_cancel - stops everything now: chunks in flight end
 * "canceled" with what they received, chunks not sent end "canceled"
 * (their callbacks run in here).  Later submits return TB_EINVAL.
 */
void tb_ttsnet_cancel(struct tb_ttsnet *c);

/* The records so far (the client's: valid until the next call on c). */
const struct tb_tts_log *tb_ttsnet_log(const struct tb_ttsnet *c);

/*
 * tb_ttsnet_take_log - moves the log out into *out (the caller's then:
 * tb_tts_log_free); the client keeps an empty one and takes no more
 * chunks (as after finish).  Call after tb_ttsnet_finish or
 * tb_ttsnet_cancel.
 */
void tb_ttsnet_take_log(struct tb_ttsnet *c, struct tb_tts_log *out);

/* The first chunk that failed (its j; canceled ones do not count), or 0
 * when none has. */
uint32_t tb_ttsnet_failed(const struct tb_ttsnet *c);

#endif
