/*
 * http_xfer.c - one streaming POST over libcurl (http.h's tb_http_stream,
 * and the easy handle of http_xfer.h for callers that drive it on their
 * own event loop).
 *
 * The write callback decides once, at the first body byte, whether this is
 * a stream to hand over (2xx, text/event-stream) or a body to keep for the
 * error message (anything else, first 64 KiB).  The progress callback is
 * where the idle timeout and Ctrl-C are noticed.
 *
 * Redirects are followed here, not by libcurl: libcurl keeps sending
 * CURLOPT_HTTPHEADER lines to wherever a redirect points (it holds back
 * only Authorization and Cookie), so an `x-api-key` given with -H would
 * reach another host.  tb_http_stream performs one hop at a time on the
 * same handle; once a redirect leaves the first URL's origin (scheme, host
 * and port), the key and every extra header are dropped for the rest of
 * the request.  tb_http_xfer_redirect decides each hop, so a transfer
 * driven by a multi handle (bench) follows the same redirects as
 * tb_http_stream.
 */
#include "http_xfer.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "ttsbuf/error.h"
#include "ttsbuf/http.h"
#include "ttsbuf/secrets.h"
#include "ttsbuf/version.h"

/*
 * Whether a Content-Type names media type `want` (RFC 9110 8.3.1: type
 * "/" subtype, case-insensitive, then optional ";"-parameters, blanks
 * allowed around them): "text/event-stream; charset=utf-8" does,
 * "text/event-streamXX" and "text/event-stream-x" do not.
 */
static int media_type_is(const char *ct, const char *want)
{
    size_t n = strlen(want);
    const char *p;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    if (strncasecmp(ct, want, n) != 0)
        return 0;
    p = ct + n;
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == '\0' || *p == ';';
}

/* Whether a Content-Type says text a person or a parser reads (an error
 * page, a JSON error), not a stream of bytes: text/..., or a type naming
 * JSON, XML or HTML ("application/problem+json"). */
static int media_type_text(const char *ct)
{
    static const char *const words[] = {"json", "xml", "html"};
    size_t n;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    n = strcspn(ct, ";");
    if (strncasecmp(ct, "text/", 5) == 0)
        return 1;
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
        for (size_t i = 0; i + strlen(words[w]) <= n; i++)
            if (strncasecmp(ct + i, words[w], strlen(words[w])) == 0)
                return 1;
    return 0;
}

/* libcurl's socket(): as its own, and the reason kept when it fails (its
 * message would say only that it could not connect). */
static curl_socket_t open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct tb_http_xfer *x = ud;
    curl_socket_t fd = socket(a->family, a->socktype, a->protocol);
    (void)purpose;
    if (fd == CURL_SOCKET_BAD)
        x->socket_errno = errno;
    return fd;
}

/* Retry-After's delta-seconds form, or -1 (none, a date, malformed). */
static double retry_after(CURL *h)
{
    struct curl_header *hh = NULL;
    char *end;
    long v;
    if (curl_easy_header(h, "Retry-After", 0, CURLH_HEADER, -1, &hh) != CURLHE_OK || hh == NULL)
        return -1;
    v = strtol(hh->value, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    return end == hh->value || *end != '\0' || v < 0 || v > 86400 ? -1 : (double)v;
}

static void decide(struct tb_http_xfer *x)
{
    char *ct = NULL;
    x->decided = 1;
    x->r->retry_after = retry_after(x->h);
    curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->r->status);
    if (curl_easy_getinfo(x->h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct != NULL) {
        /* It goes into a one-line message: no control bytes. */
        snprintf(x->r->content_type, sizeof(x->r->content_type), "%s", ct);
        for (char *c = x->r->content_type; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7F)
                *c = '?';
    }
    x->r->sse = x->r->status >= 200 && x->r->status < 300 &&
                (x->q->any_stream ? !media_type_text(ct != NULL ? ct : "")
                                  : media_type_is(ct != NULL ? ct : "", x->q->stream_type != NULL
                                                                            ? x->q->stream_type
                                                                            : "text/event-stream"));
    x->r->t_headers = x->clk->now(x->clk);
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    struct tb_http_xfer *x = ud;
    size_t n = size * nmemb;
    double t = x->clk->now(x->clk);
    /* A transfer's stamps never go backwards.  A clock that dates a read
     * by when its socket was first seen ready (bench's loop) can see the
     * socket ready again while an earlier read is handed over, and would
     * date the next read before it; those bytes came after that read's
     * recv, so its time is the earliest they can have. */
    if (t < x->last)
        t = x->last;
    if (!x->decided)
        decide(x);
    x->last = t;
    x->r->bytes += n;
    if (x->r->sse) {
        int rc = x->fn(x->ud, p, n, t);
        if (rc != 0) {
            x->r->aborted = rc;
            return 0; /* libcurl stops with CURLE_WRITE_ERROR */
        }
        return n;
    }
    /* Not a stream: keep the start of it for the error message. */
    if (x->r->body_len < TB_HTTP_ERRBODY_MAX) {
        size_t take = TB_HTTP_ERRBODY_MAX - x->r->body_len;
        char *nb;
        if (take > n)
            take = n;
        nb = realloc(x->r->body, x->r->body_len + take + 1);
        if (nb == NULL)
            return 0;
        memcpy(nb + x->r->body_len, p, take);
        x->r->body_len += take;
        nb[x->r->body_len] = '\0';
        x->r->body = nb;
    }
    if (x->r->body_len < TB_HTTP_ERRBODY_MAX)
        return n;
    x->body_full = 1; /* enough read: stop (not a transport error) */
    return 0;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct tb_http_xfer *x = ud;
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    if ((x->q->cancel != NULL && atomic_load_explicit(x->q->cancel, memory_order_relaxed)) ||
        (x->q->stop != NULL && atomic_load_explicit(x->q->stop, memory_order_relaxed))) {
        x->r->cancelled = 1;
        return 1;
    }
    if (x->q->idle_timeout > 0) {
        double last = x->q->data_at == NULL       ? x->last
                      : *x->q->data_at > x->start ? *x->q->data_at
                                                  : x->start;
        if (x->clk->now(x->clk) - last <= x->q->idle_timeout)
            return 0;
        x->r->idle_timeout = 1;
        return 1;
    }
    return 0;
}

static int on_debug(CURL *h, curl_infotype type, char *data, size_t size, void *ud)
{
    struct tb_http_xfer *x = ud;
    char line[1024];
    const char *tag;
    (void)h;
    switch (type) {
    case CURLINFO_TEXT: tag = "* "; break;
    case CURLINFO_HEADER_OUT: tag = "> "; break;
    case CURLINFO_HEADER_IN: tag = "< "; break;
    default: return 0; /* bodies are not logged */
    }
    /* One call may hold several lines (all request headers at once). */
    while (size > 0) {
        const char *nl = memchr(data, '\n', size);
        size_t n = nl != NULL ? (size_t)(nl - data) + 1 : size;
        size_t m = n;
        char red[1000];
        while (m > 0 && (data[m - 1] == '\n' || data[m - 1] == '\r'))
            m--;
        if (m > 0) {
            /* Secret headers by name, then any echo of a secret: a
             * response header may quote the key back. */
            tb_http_redact(data, m, red, sizeof(red));
            tb_secrets_scrub(x->secrets, red);
            snprintf(line, sizeof(line), "%s%s", tag, red);
            x->q->log(x->q->log_ud, line);
        }
        data += n;
        size -= n;
    }
    return 0;
}

/* "scheme://host:port" of a URL, lower case, the port always given. */
static int origin(const char *url, char *out, size_t outlen)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    int ok = u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK;
    if (ok) {
        snprintf(out, outlen, "%s://%s:%s", scheme, host, port);
        for (char *c = out; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return ok;
}

static int same_origin(const char *a, const char *b)
{
    char oa[512], ob[512];
    return origin(a, oa, sizeof(oa)) && origin(b, ob, sizeof(ob)) && strcmp(oa, ob) == 0;
}

static void log_cross_origin(const struct tb_http_xfer *x, const char *url)
{
    const struct tb_http_req *q = x->q;
    char red[800], line[1024];
    tb_http_redact(url, strlen(url), red, sizeof(red));
    tb_secrets_scrub(x->secrets, red); /* the server's Location */
    snprintf(line, sizeof(line),
             "* redirect to %s: another origin, so no API key or -H header goes there", red);
    q->log(q->log_ud, line);
}

static int is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* The credentials of one hop: the key and the extra headers, or neither. */
static void set_creds(CURL *h, const struct tb_http_req *q, int creds, struct curl_slist *all,
                      struct curl_slist *plain)
{
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, creds ? all : plain);
    if (q->bearer != NULL && q->key_header == NULL) { /* the key goes one way only */
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, creds ? q->bearer : NULL);
    }
}

/* The request's two header lists: the one returned, with the key's own
 * header (a key_header request) and the extra headers, and x->plain
 * without them (after a redirect to another origin).  NULL on ENOMEM
 * (x->plain may then be set: the caller frees both). */
static struct curl_slist *header_lists(struct tb_http_xfer *x, const struct tb_http_req *q)
{
    struct curl_slist *hl = NULL;
    char accept[160];
    char *keyline = NULL; /* "x-api-key: KEY": scrubbed once copied */
    snprintf(accept, sizeof(accept), "Accept: %s",
             q->stream_type != NULL ? q->stream_type : "text/event-stream");
    x->plain = curl_slist_append(NULL, "Content-Type: application/json");
    x->plain = x->plain ? curl_slist_append(x->plain, accept) : NULL;
    hl = curl_slist_append(hl, "Content-Type: application/json");
    hl = hl ? curl_slist_append(hl, accept) : NULL;
    if (hl != NULL && q->bearer != NULL && q->key_header != NULL) {
        size_t n = strlen(q->key_header) + strlen(q->bearer) + 3;
        keyline = malloc(n);
        if (keyline != NULL) {
            snprintf(keyline, n, "%s: %s", q->key_header, q->bearer);
            hl = curl_slist_append(hl, keyline);
        } else {
            hl = NULL;
        }
    }
    if (keyline != NULL) {
        /* The list holds its own copy (freed in tb_http_xfer_end). */
        volatile char *v = keyline;
        while (*v)
            *v++ = 0;
        free(keyline);
    }
    for (size_t i = 0; hl != NULL && i < q->nheaders; i++)
        hl = curl_slist_append(hl, q->headers[i]);
    return hl;
}

/* The transfer's libcurl options: the request, its limits and TLS, the
 * key, and x's callbacks. */
static void set_options(struct tb_http_xfer *x, const struct tb_http_req *q, struct curl_slist *hl)
{
    curl_easy_setopt(x->h, CURLOPT_URL, q->url);
    curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, q->body != NULL ? q->body : "");
    curl_easy_setopt(x->h, CURLOPT_USERAGENT, "ttsbuf/" TB_VERSION);
    /* Every encoding this libcurl decodes is offered, and a compressed
     * answer is decoded before the parsers see it. */
    curl_easy_setopt(x->h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(x->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(x->h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(x->h, CURLOPT_FOLLOWLOCATION, 0L); /* tb_http_stream follows */
    curl_easy_setopt(x->h, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)((q->connect_timeout > 0 ? q->connect_timeout : 10.0) * 1000));
    if (q->total_timeout > 0)
        curl_easy_setopt(x->h, CURLOPT_TIMEOUT_MS, (long)(q->total_timeout * 1000));
    if (q->insecure) {
        curl_easy_setopt(x->h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(x->h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (q->bearer != NULL && q->key_header == NULL) {
        curl_easy_setopt(x->h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(x->h, CURLOPT_XOAUTH2_BEARER, q->bearer);
    }
    curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
    /* The progress callback watches the idle timeout and the stop flags;
     * a caller that watches them itself (bench's loop) goes without it,
     * which libcurl would otherwise call on every read. */
    if (q->idle_timeout > 0 || q->cancel != NULL || q->stop != NULL) {
        curl_easy_setopt(x->h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(x->h, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(x->h, CURLOPT_NOPROGRESS, 0L);
    }
    curl_easy_setopt(x->h, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(x->h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(x->h, CURLOPT_OPENSOCKETDATA, x);
    x->socket_errno = 0;
    if (q->log != NULL) {
        curl_easy_setopt(x->h, CURLOPT_DEBUGFUNCTION, on_debug);
        curl_easy_setopt(x->h, CURLOPT_DEBUGDATA, x);
        curl_easy_setopt(x->h, CURLOPT_VERBOSE, 1L);
    }
}

int tb_http_xfer_begin(struct tb_http_xfer *x, const struct tb_http_req *q, struct tb_clock *clk,
                       tb_http_body_fn fn, void *ud, struct tb_http_resp *r)
{
    struct curl_slist *hl;

    memset(r, 0, sizeof(*r));
    r->retry_after = -1;
    memset(x, 0, sizeof(*x));
    if (q->url == NULL)
        return TB_EINVAL;
    x->q = q;
    x->clk = clk;
    x->fn = fn;
    x->ud = ud;
    x->r = r;
    x->secrets = q->secrets;
    if (q->log != NULL && q->secrets == NULL) {
        /* Verbose lines are masked with the request's own secrets. */
        if (tb_secrets_create(&x->own) != 0 || tb_http_secrets(q, x->own) != 0) {
            tb_secrets_destroy(x->own);
            x->own = NULL;
            return TB_ENOMEM;
        }
        x->secrets = x->own;
    }
    x->h = curl_easy_init();
    if (x->h == NULL) {
        tb_secrets_destroy(x->own);
        x->own = NULL;
        return TB_ENOMEM;
    }
    hl = header_lists(x, q);
    x->headers = hl;
    if (hl == NULL || x->plain == NULL) {
        curl_slist_free_all(hl);
        curl_slist_free_all(x->plain);
        curl_easy_cleanup(x->h);
        x->h = NULL;
        tb_secrets_destroy(x->own);
        x->own = NULL;
        return TB_ENOMEM;
    }
    set_options(x, q, hl);
    x->start = x->last = clk->now(clk);
    return 0;
}

/*
 * What went wrong, in words that point the user the right way, where
 * libcurl's own would not: no descriptor left for the socket (EMFILE:
 * this process's limit, which it says; ENFILE: the system's), its "Out of
 * memory" before the first body byte
 * is (this libcurl) a response header over its 100 KiB cap, and a failed
 * decoding names the Content-Encoding that failed.
 */
static void explain(struct tb_http_xfer *x, CURLcode cc, const char *why, char *out, size_t len)
{
    struct curl_header *h = NULL;
    if (tb_http_nofd_text(x->socket_errno, out, len))
        return;
    if (cc == CURLE_OUT_OF_MEMORY && !x->decided) {
        snprintf(out, len,
                 "the response header is too large (libcurl keeps at most %d KiB of a header "
                 "line), or memory ran out",
                 CURL_MAX_HTTP_HEADER / 1024);
        return;
    }
    if (cc == CURLE_BAD_CONTENT_ENCODING) {
        char enc[32] = "?"; /* sized so that the message fits r->error */
        if (curl_easy_header(x->h, "Content-Encoding", 0, CURLH_HEADER, -1, &h) == CURLHE_OK &&
            h != NULL && h->value != NULL) {
            snprintf(enc, sizeof(enc), "%s", h->value);
            for (char *c = enc; *c; c++) /* it goes into a one-line message */
                if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7F)
                    *c = '?';
        }
        snprintf(out, len, "the response's Content-Encoding \"%s\" could not be decoded: %s", enc,
                 why);
        return;
    }
    snprintf(out, len, "%s", why);
}

void tb_http_xfer_end(struct tb_http_xfer *x, int curl_code)
{
    struct tb_http_resp *r = x->r;
    CURLcode cc = (CURLcode)curl_code;
    if (x->h == NULL)
        return;
    if (x->body_full && cc == CURLE_WRITE_ERROR)
        cc = CURLE_OK; /* we stopped reading a kept body at its cap */
    if (!x->decided && cc == CURLE_OK)
        decide(x); /* an empty body */
    if (r->status == 0 && !x->redirect_failed)
        curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &r->status);
    r->curl_code = (int)cc;
    r->total_timeout = cc == CURLE_OPERATION_TIMEDOUT && x->q->total_timeout > 0 &&
                       x->clk->now(x->clk) - x->start >= x->q->total_timeout * 0.99;
    if (cc != CURLE_OK) {
        /* libcurl's messages can quote the URL: mask any key in it. */
        const char *m = x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(cc);
        char why[sizeof(r->error) - 96]; /* room for explain's words around it */
        tb_http_redact(m, strlen(m), why, sizeof(why));
        explain(x, cc, why, r->error, sizeof(r->error));
        tb_secrets_scrub(x->secrets, r->error);
    }
    curl_slist_free_all(x->headers);
    curl_slist_free_all(x->plain);
    curl_easy_cleanup(x->h);
    free(x->next);
    tb_secrets_destroy(x->own);
    x->headers = NULL;
    x->plain = NULL;
    x->next = NULL;
    x->own = NULL;
    x->h = NULL;
}

int tb_http_xfer_redirect(struct tb_http_xfer *x, int *curl_code)
{
    const struct tb_http_req *q = x->q;
    struct tb_http_resp *r = x->r;
    long max_hops = q->max_redirects >= 0 ? q->max_redirects : 3;
    char *loc = NULL;
    if (x->body_full && *curl_code == CURLE_WRITE_ERROR)
        *curl_code = CURLE_OK; /* we stopped reading a kept body at its cap */
    if (!x->decided && *curl_code == CURLE_OK)
        decide(x);
    if (r->status == 0)
        curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &r->status);
    if (*curl_code != CURLE_OK || !is_redirect(r->status) ||
        curl_easy_getinfo(x->h, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || loc == NULL)
        return 0;
    /* A redirect not followed is a failed request, not an answer. */
    if (x->hops == max_hops) {
        *curl_code = CURLE_TOO_MANY_REDIRECTS;
        snprintf(x->errbuf, sizeof(x->errbuf), "Maximum (%ld) redirects followed", max_hops);
        r->status = 0;
        x->redirect_failed = 1;
        return 0;
    }
    if (strncasecmp(loc, "http://", 7) != 0 && strncasecmp(loc, "https://", 8) != 0) {
        *curl_code = CURLE_UNSUPPORTED_PROTOCOL;
        snprintf(x->errbuf, sizeof(x->errbuf),
                 "HTTP %ld redirect to a scheme other than http or https", r->status);
        r->status = 0;
        x->redirect_failed = 1;
        return 0;
    }
    if (!x->cross_origin && !same_origin(q->url, loc)) {
        x->cross_origin = 1;
        if (q->log != NULL)
            log_cross_origin(x, loc);
    }
    /* loc belongs to the handle, which the next hop reuses. */
    free(x->next);
    x->next = strdup(loc);
    if (x->next == NULL) {
        *curl_code = CURLE_OUT_OF_MEMORY;
        return 0;
    }
    curl_easy_setopt(x->h, CURLOPT_URL, x->next);
    set_creds(x->h, q, !x->cross_origin, x->headers, x->plain);
    if (q->total_timeout > 0) {
        /* What is left of it, over every hop. */
        double left = q->total_timeout - (x->clk->now(x->clk) - x->start);
        curl_easy_setopt(x->h, CURLOPT_TIMEOUT_MS, (long)(left > 0.001 ? left * 1000 : 1));
    }
    x->hops++;
    tb_http_resp_free(r);
    memset(r, 0, sizeof(*r));
    r->retry_after = -1;
    x->decided = 0;
    x->body_full = 0;
    x->errbuf[0] = '\0';
    return 1;
}

int tb_http_stream(const struct tb_http_req *q, struct tb_clock *clk, tb_http_body_fn fn, void *ud,
                   struct tb_http_resp *r)
{
    struct tb_http_xfer x;
    int rc = tb_http_xfer_begin(&x, q, clk, fn, ud, r), cc;
    if (rc != 0)
        return rc;
    do {
        x.errbuf[0] = '\0';
        cc = (int)curl_easy_perform(x.h);
    } while (tb_http_xfer_redirect(&x, &cc));
    tb_http_xfer_end(&x, cc);
    return 0;
}
