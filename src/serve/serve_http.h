/*
 * serve_http.h - private to libttsbuf: the mock server's HTTP/1.1 request
 * head parser and response heads (serve_http.c).  No I/O, no allocation.
 */
#ifndef TTSBUF_SERVE_HTTP_H
#define TTSBUF_SERVE_HTTP_H

#include <stddef.h>
#include <stdint.h>

enum tb_serve_http_method { TB_SERVE_HTTP_GET, TB_SERVE_HTTP_POST, TB_SERVE_HTTP_OTHER };

struct tb_serve_http_head {
    size_t len;        /* bytes of the head, final CRLF CRLF included */
    int method;        /* enum tb_serve_http_method */
    size_t method_off; /* offsets into the buffer (which may move) */
    size_t method_len;
    size_t path_off; /* the target before any '?' */
    size_t path_len;
    size_t query_off; /* after the '?'; query_len 0: none */
    size_t query_len;
    uint64_t content_length; /* 0 when absent */
    int expect_continue;     /* "Expect: 100-continue" */
    int status;              /* on TB_EFORMAT: the status to answer */
};

/*
 * tb_serve_http_scan - looks for the end of the head in buf[0..len), going
 * on from *scan (0 at first; the function keeps it up to date, so feeding
 * a head byte by byte costs O(n) in all).  Returns 1 when the head ends at
 * *scan (its length), 0 when more bytes are needed, -1 on a line ending
 * that is not CRLF (a bare LF or CR: answer 400 at once).
 */
int tb_serve_http_scan(const char *buf, size_t len, size_t *scan);

/*
 * tb_serve_http_parse - parses a complete head of head_len bytes (found by
 * tb_serve_http_scan) strictly: "METHOD SP /target SP HTTP/1.x" CRLF, then
 * "name: value" lines (no folding, no blank before the colon, no control
 * bytes), one Host for HTTP/1.1, at most one Content-Length of digits only,
 * no Transfer-Encoding.  Returns 0 and *h, or TB_EFORMAT with h->status
 * (400, 411, 505) and a message for the error body in err.
 */
int tb_serve_http_parse(const char *buf, size_t head_len, struct tb_serve_http_head *h, char *err,
                        size_t errlen);

/* tb_serve_http_header - the first header named `name` (any case) of a
 * head tb_serve_http_parse accepted: 1 and its value without the blanks
 * around it in [*val, *val + *vlen), or 0 when there is none. */
int tb_serve_http_header(const char *buf, size_t head_len, const char *name, const char **val,
                         size_t *vlen);

/* The reason phrase of an HTTP status ("Too Many Requests"); "Error" for
 * codes it does not know.  Static string. */
const char *tb_serve_http_reason(int status);

/*
 * tb_serve_http_resp - formats a response head into buf: status line,
 * Content-Type, then Content-Length (content_length >= 0) or
 * Transfer-Encoding: chunked (< 0), Connection: close, the extra lines
 * (each ending in CRLF; NULL for none), and the blank line.  Returns its
 * length, or 0 when it does not fit in cap.
 */
size_t tb_serve_http_resp(char *buf, size_t cap, int status, const char *ctype,
                          long long content_length, const char *extra);

#endif
