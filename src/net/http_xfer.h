/*
 * http_xfer.h - one streaming POST as a libcurl easy handle, for callers
 * that drive it themselves (private to the library).
 *
 * tb_http_stream runs a transfer with curl_easy_perform, one redirect hop
 * at a time (http_xfer.c); `ttsbuf bench` adds many of them to one multi
 * handle and re-adds one for each hop.  Both set them up and decide each
 * hop here, so every
 * transfer follows the same rules (redirects, TLS, bearer auth, caps, the
 * idle timeout and cancel flag in the progress callback) and fills the
 * same struct tb_http_resp.
 *
 * Threads: a transfer is driven by one thread at a time.
 */
#ifndef TTSBUF_HTTP_XFER_H
#define TTSBUF_HTTP_XFER_H

#include <curl/curl.h>

#include "ttsbuf/http.h"

struct tb_http_xfer {
    const struct tb_http_req *q; /* borrowed: must outlive the transfer */
    struct tb_clock *clk;
    tb_http_body_fn fn;
    void *ud;
    struct tb_http_resp *r;
    const struct tb_secrets *secrets; /* q->secrets, or own */
    struct tb_secrets *own;           /* built from q for verbose lines, or NULL */
    CURL *h;
    struct curl_slist *headers; /* with the key's header and -H headers */
    struct curl_slist *plain;   /* without: past a cross-origin redirect */
    int decided;
    int body_full;       /* a kept body reached its cap: we stopped reading */
    int redirect_failed; /* a redirect was refused: status 0 */
    int cross_origin;    /* a redirect left the first origin: no credentials */
    long hops;           /* redirects followed */
    char *next;          /* the URL of the current hop after the first */
    double start;        /* clock time the transfer was set up */
    double last;         /* time of the last body byte (or the start) */
    int socket_errno;    /* why libcurl's socket() failed, or 0 */
    char errbuf[CURL_ERROR_SIZE];
};

/*
 * tb_http_xfer_begin - clears *r and sets up x->h (not yet started; the
 * caller performs it or adds it to a multi handle).  Returns 0, TB_EINVAL
 * (no URL) or TB_ENOMEM; on error nothing is left to end.
 */
int tb_http_xfer_begin(struct tb_http_xfer *x, const struct tb_http_req *q, struct tb_clock *clk,
                       tb_http_body_fn fn, void *ud, struct tb_http_resp *r);

/*
 * tb_http_xfer_redirect - one hop ended with *curl_code (a CURLcode; the
 * handle out of any multi handle).  Returns 1 when it was a redirect to
 * follow: the handle is set up for the next hop (URL, credentials: none
 * once the origin changed, the rest of the total timeout) and *r is
 * cleared; perform it again.  Returns 0 when the transfer is over; a
 * redirect refused (over q->max_redirects, to a scheme other than
 * http/https) sets *curl_code and the message.  Then call
 * tb_http_xfer_end with *curl_code.
 */
int tb_http_xfer_redirect(struct tb_http_xfer *x, int *curl_code);

/* The transfer ended with curl_code (a CURLcode): fills r's status and
 * error, and frees the handle (removed from any multi handle first). */
void tb_http_xfer_end(struct tb_http_xfer *x, int curl_code);

#endif
