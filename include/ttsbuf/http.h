/*
 * http.h - one streaming HTTP POST over libcurl, bytes handed over as
 * they arrive, each stamped with the caller's clock.
 *
 * HTTP/1.1 or HTTP/2 (negotiated over TLS), TLS verified unless told
 * otherwise, redirects (301, 302, 303, 307, 308; the POST is repeated)
 * followed up to a limit and only to http/https.  The key never leaves the
 * first URL's origin: once a redirect points to another scheme, host or
 * port, neither the key (bearer or key_header) nor any extra header is
 * sent again.  The
 * key is never logged: verbose lines pass through tb_http_redact (secret
 * headers and URL keys, by name) and then tb_secrets_scrub (any echo of a
 * secret, such as a response header quoting the key back).
 * A redirect that is not followed (over the limit, or to another scheme)
 * ends the request as a transport failure, status 0.
 *
 * Idle timeout: no body byte for idle_timeout seconds (counted from the
 * request's start, so a slow first token counts) aborts the transfer;
 * with data_at, no data event for that long (a caller that parses the
 * stream says when one came: keep-alive comments then do not count).
 * libcurl's progress callback checks it at least once a second, so it
 * fires up to a second late.  The total timeout is libcurl's own; a body
 * callback that blocks (backpressure) must watch it itself.
 *
 * Threads: tb_http_global_init once in main before any thread; then any
 * thread may run a transfer (each has its own handle).  The body callback
 * runs on the calling thread.  Ownership: the response's body buffer is
 * the caller's (tb_http_resp_free).
 */
#ifndef TTSBUF_HTTP_H
#define TTSBUF_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/clock.h"
#include "ttsbuf/secrets.h"

#define TB_HTTP_ERRBODY_MAX (64u << 10) /* bytes of a non-stream body kept */

typedef void (*tb_http_log_fn)(void *ud, const char *line);

struct tb_http_req {
    const char *url;
    const char *bearer;         /* API key, or NULL: a secret */
    const char *key_header;     /* NULL: the key goes as Bearer auth; else in this
                                 * header ("x-api-key"); either way it stays in
                                 * the first URL's origin */
    const char *stream_type;    /* the Content-Type of a stream (also sent as
                                 * Accept); NULL: "text/event-stream" */
    const char *const *headers; /* extra "Name: value" header lines */
    size_t nheaders;
    const char *body;       /* POST body, NUL-terminated */
    double connect_timeout; /* s; 0: 10 s */
    double idle_timeout;    /* s; 0: none */
    double total_timeout;   /* s; 0: none */
    /* The clock time of the last data event, written by the body callback
     * (on the transfer's thread), or NULL: every body byte restarts the
     * idle clock.  Times before the transfer's start count from it. */
    const double *data_at;
    int insecure;       /* do not verify TLS (off by default) */
    long max_redirects; /* -1: the default, 3; 0: none followed */
    tb_http_log_fn log; /* verbose lines (redacted), or NULL */
    void *log_ud;
    /* Non-zero: a 2xx body is the stream whatever its Content-Type
     * (audio: providers name raw PCM differently, or not at all), unless
     * it is text/..., or names JSON, XML or HTML (an error in a 200), kept
     * as a body; stream_type is then only what Accept says. */
    int any_stream;
    /* The run's secrets (tb_http_secrets of this request, and any more),
     * borrowed, read-only: verbose lines and resp.error are masked with
     * them.  NULL: a transfer with a log builds the request's own. */
    const struct tb_secrets *secrets;
    /* Non-zero stops the transfer.  An atomic, not a volatile
     * sig_atomic_t: a signal handler on one thread sets it and the transfer
     * reads it on another (lock-free atomics are async-signal-safe). */
    const atomic_int *cancel;
    /* The caller's own stop, beside cancel (`run` stops its LLM transfer
     * when its TTS is dead, live.h): non-zero stops the transfer as
     * cancel does (resp.cancelled); NULL: none. */
    const atomic_int *stop;
};

/* Body bytes of a 2xx text/event-stream response, as they arrive; t is the
 * clock's now() when libcurl delivered them.  Return 0 to go on, non-zero
 * to stop (tb_http_stream then returns with resp.aborted = that value). */
typedef int (*tb_http_body_fn)(void *ud, const char *buf, size_t len, double t);

struct tb_http_resp {
    long status; /* final HTTP status, 0 when none came */
    char content_type[128];
    int sse;    /* 2xx and Content-Type the stream type (text/event-stream,
                 * or the request's stream_type) */
    char *body; /* any other body: its first TB_HTTP_ERRBODY_MAX bytes */
    size_t body_len;
    int curl_code;     /* CURLcode; 0 for a clean end */
    char error[256];   /* libcurl's message for curl_code */
    int idle_timeout;  /* the idle timeout fired */
    int total_timeout; /* the total timeout fired */
    int cancelled;     /* *cancel (or *stop) was set */
    int aborted;       /* the body callback's non-zero value */
    uint64_t bytes;    /* body bytes received */
    double t_headers;  /* clock time the response headers were complete */
    double retry_after; /* a Retry-After header's delta-seconds (RFC 9110
                         * 10.2.3), 0..86400; -1: none, or an HTTP date */
};

/* A request with every option at its default (no URL yet; redirects: the
 * default).  Any thread. */
void tb_http_req_init(struct tb_http_req *q);

/* curl_global_init; call once from main before any thread.  0 or TB_EIO. */
int tb_http_global_init(void);
void tb_http_global_cleanup(void);

/*
 * tb_http_stream - runs the request to its end.  Returns 0 when a response
 * was received to its end (whatever its status: check resp->status,
 * resp->sse and resp->curl_code), or TB_ENOMEM / TB_EINVAL (no URL).
 * Transport failures (DNS, refused, TLS, reset, timeouts) are reported in
 * resp->curl_code / resp->error, not as a return value.
 */
int tb_http_stream(const struct tb_http_req *q, struct tb_clock *clk, tb_http_body_fn fn, void *ud,
                   struct tb_http_resp *resp);

void tb_http_resp_free(struct tb_http_resp *r);

/*
 * tb_http_nofd_text - when err (an errno) is EMFILE or ENFILE, the words
 * for a socket or pipe that could not be made, with this process's limit (its
 * RLIMIT_NOFILE, as ulimit -n sets it), into out, and returns 1; else
 * returns 0 and leaves out alone.  Any thread.
 */
int tb_http_nofd_text(int err, char *out, size_t outlen);

/*
 * tb_http_redact - copies text (one line or a URL) with secrets masked:
 * Authorization / Proxy-Authorization values after the scheme word,
 * x-api-key / api-key / x-goog-api-key / xi-api-key header values, the
 * values of key=, api_key=, apikey=, access_token= and token= query
 * parameters, and the password of a URL's userinfo ("://user:***@")
 * become "***".
 * Always NUL-terminates out (outlen > 0).  Any thread.
 */
void tb_http_redact(const char *text, size_t len, char *out, size_t outlen);

/*
 * tb_http_secrets - adds the request's secrets to set: the key (bearer),
 * the values of the secret headers tb_http_redact masks (after the scheme
 * word for Authorization), the values of the key query parameters of its
 * URL and the password of its userinfo.  A server may quote any of them
 * back; tb_secrets_scrub masks them.  Returns 0 or TB_ENOMEM.  Any
 * thread, while set is being built.
 */
int tb_http_secrets(const struct tb_http_req *q, struct tb_secrets *set);

#endif
