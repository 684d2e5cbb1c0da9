/*
 * serve_http.c - the mock server's HTTP/1.1 request heads and response
 * heads (see serve_http.h).
 *
 * Strict on purpose: the server exists to test clients, and a lenient
 * parser hides client bugs.  It reads what RFC 9112 requires of a request
 * and refuses the rest with a status the client can act on: 400 for a
 * malformed head, 411 for a chunked request body (not implemented; send
 * Content-Length), 505 for a version other than HTTP/1.0 or 1.1.  Header
 * names are compared case-insensitively; values other than Content-Length,
 * Host presence and Expect are ignored.
 */
#include "serve_http.h"

#include <stdio.h>
#include <string.h>

#include "ttsbuf/error.h"

int tb_serve_http_scan(const char *buf, size_t len, size_t *scan)
{
    for (size_t i = *scan; i < len; i++) {
        /* Looking back one byte also catches a CR that ended the previous
         * read and is not followed by LF. */
        if (i > 0 && buf[i - 1] == '\r' && buf[i] != '\n')
            return -1;
        if (buf[i] != '\n')
            continue;
        if (i == 0 || buf[i - 1] != '\r')
            return -1;
        /* The head ends at the first empty line: CRLF CRLF, or a CRLF at
         * the very start (an empty request line, refused by the parser). */
        if (i == 1 || (i >= 3 && buf[i - 2] == '\n')) {
            *scan = i + 1;
            return 1;
        }
    }
    *scan = len;
    return 0;
}

/* RFC 9110 tchar: the characters of a method or a header name. */
static int tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int name_is(const char *p, size_t n, const char *name)
{
    if (strlen(name) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)p[i], b = (unsigned char)name[i];
        if (a >= 'A' && a <= 'Z')
            a = (unsigned char)(a - 'A' + 'a');
        if (a != b)
            return 0;
    }
    return 1;
}

static int fail(struct tb_serve_http_head *h, int status, char *err, size_t errlen, const char *msg)
{
    h->status = status;
    return tb_seterr(err, errlen, TB_EFORMAT, "%s", msg);
}

/* Parses the request line [p, end); fills method, path, *minor. */
static int request_line(const char *p, const char *end, struct tb_serve_http_head *h, int *minor,
                        char *err, size_t errlen)
{
    const char *buf = p, *m = p, *sp1, *t, *sp2, *v;
    while (p < end && tchar((unsigned char)*p))
        p++;
    if (p == m || p == end || *p != ' ')
        return fail(h, 400, err, errlen, "malformed request line");
    sp1 = p++;
    t = p;
    while (p < end && (unsigned char)*p > 0x20 && (unsigned char)*p < 0x7F)
        p++;
    if (p == t || p == end || *p != ' ' || *t != '/')
        return fail(h, 400, err, errlen, "malformed request target (expected /path)");
    sp2 = p++;
    v = p;
    if (end - v != 8 || memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' || v[6] != '.' ||
        v[7] < '0' || v[7] > '9')
        return fail(h, 400, err, errlen, "malformed HTTP version");
    if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
        return fail(h, 505, err, errlen, "only HTTP/1.0 and HTTP/1.1 are supported");
    *minor = v[7] - '0';
    if (sp1 - m == 3 && memcmp(m, "GET", 3) == 0)
        h->method = TB_SERVE_HTTP_GET;
    else if (sp1 - m == 4 && memcmp(m, "POST", 4) == 0)
        h->method = TB_SERVE_HTTP_POST;
    else
        h->method = TB_SERVE_HTTP_OTHER;
    h->method_off = (size_t)(m - buf);
    h->method_len = (size_t)(sp1 - m);
    h->path_off = (size_t)(t - buf);
    h->path_len = (size_t)(sp2 - t);
    for (size_t i = 0; i < h->path_len; i++)
        if (t[i] == '?') {
            h->query_off = h->path_off + i + 1;
            h->query_len = h->path_len - i - 1;
            h->path_len = i;
            break;
        }
    return 0;
}

int tb_serve_http_parse(const char *buf, size_t head_len, struct tb_serve_http_head *h, char *err,
                        size_t errlen)
{
    const char *p = buf, *end = buf + head_len - 2; /* before the final CRLF */
    const char *eol;
    int minor = 1, hosts = 0, lengths = 0, rc;

    memset(h, 0, sizeof(*h));
    h->len = head_len;
    if (head_len < 4)
        return fail(h, 400, err, errlen, "empty request line");
    eol = memchr(p, '\r', (size_t)(end - p));
    rc = request_line(p, eol, h, &minor, err, errlen);
    if (rc != 0)
        return rc;
    for (p = eol + 2; p < end; p = eol + 2) {
        const char *n = p, *colon, *v, *ve;
        eol = memchr(p, '\r', (size_t)(end - p));
        while (p < eol && tchar((unsigned char)*p))
            p++;
        if (p == n || p == eol || *p != ':')
            return fail(h, 400, err, errlen,
                        n < eol && (*n == ' ' || *n == '\t')
                            ? "obsolete header line folding is not accepted"
                            : "malformed header line (expected name: value)");
        colon = p;
        v = colon + 1;
        while (v < eol && (*v == ' ' || *v == '\t'))
            v++;
        ve = eol;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        for (const char *q = v; q < ve; q++) {
            unsigned char c = (unsigned char)*q;
            if ((c < 0x20 && c != '\t') || c == 0x7F)
                return fail(h, 400, err, errlen, "control character in a header value");
        }
        if (name_is(n, (size_t)(colon - n), "content-length")) {
            uint64_t cl = 0;
            if (ve == v || lengths++ > 0)
                return fail(h, 400, err, errlen, "empty or repeated Content-Length");
            for (const char *q = v; q < ve; q++) {
                if (*q < '0' || *q > '9')
                    return fail(h, 400, err, errlen, "Content-Length is not a number");
                /* Saturate: anything this large is over the cap anyway. */
                cl = cl > UINT64_MAX / 20 ? UINT64_MAX / 2 : cl * 10 + (uint64_t)(*q - '0');
            }
            h->content_length = cl;
        } else if (name_is(n, (size_t)(colon - n), "host")) {
            hosts++;
        } else if (name_is(n, (size_t)(colon - n), "transfer-encoding")) {
            return fail(h, 411, err, errlen,
                        "chunked request bodies are not supported; send Content-Length");
        } else if (name_is(n, (size_t)(colon - n), "expect")) {
            h->expect_continue = name_is(v, (size_t)(ve - v), "100-continue");
        }
    }
    if (minor == 1 && hosts != 1)
        return fail(h, 400, err, errlen, "an HTTP/1.1 request needs exactly one Host header");
    return 0;
}

const char *tb_serve_http_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

size_t tb_serve_http_resp(char *buf, size_t cap, int status, const char *ctype,
                          long long content_length, const char *extra)
{
    char len[48];
    int n;
    if (content_length >= 0)
        snprintf(len, sizeof(len), "Content-Length: %lld", content_length);
    else
        snprintf(len, sizeof(len), "Transfer-Encoding: chunked");
    n = snprintf(buf, cap,
                 "HTTP/1.1 %d %s\r\n"
                 "Content-Type: %s\r\n"
                 "%s\r\n"
                 "Connection: close\r\n"
                 "%s\r\n",
                 status, tb_serve_http_reason(status), ctype, len, extra != NULL ? extra : "");
    return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

int tb_serve_http_header(const char *buf, size_t head_len, const char *name, const char **val,
                         size_t *vlen)
{
    const char *end = buf + head_len - 2, *p = memchr(buf, '\r', head_len);
    size_t nl = strlen(name);
    /* The head was parsed: every line is "name: value" CRLF. */
    for (p = p != NULL ? p + 2 : end; p < end;) {
        const char *eol = memchr(p, '\r', (size_t)(end - p)), *v;
        if (eol == NULL)
            break;
        if ((size_t)(eol - p) > nl && p[nl] == ':' && name_is(p, nl, name)) {
            const char *ve = eol;
            v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t'))
                v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            *val = v;
            *vlen = (size_t)(ve - v);
            return 1;
        }
        p = eol + 2;
    }
    return 0;
}
