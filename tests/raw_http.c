/*
 * raw_http.c - the raw HTTP client of the mock server's tests (see
 * raw_http.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "raw_http.h"
#include "tclock.h"
#include "tests.h"

void raw_reply_free(struct raw_reply *r)
{
    free(r->raw);
    free(r->rt);
    free(r->rend);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

int raw_connect(int port)
{
    struct sockaddr_in a;
    struct timeval tv = {10, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

void raw_send(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return; /* the server may refuse and close: the reply says how */
        p += k;
        n -= (size_t)k;
    }
}

/* One read into r; returns its size (0 at EOF, -1 on error or timeout). */
ssize_t raw_read(int fd, struct raw_reply *r, double t_send)
{
    ssize_t n;
    if (r->cap - r->len < 65536) {
        r->cap = r->cap ? r->cap * 2 : 1 << 17;
        r->raw = realloc(r->raw, r->cap + 1);
        assert_non_null(r->raw);
    }
    do
        n = recv(fd, r->raw + r->len, r->cap - r->len, 0);
    while (n < 0 && errno == EINTR);
    if (n == 0)
        r->eof = 1;
    if (n <= 0)
        return n;
    if (r->nr == r->capr) {
        r->capr = r->capr ? r->capr * 2 : 64;
        r->rt = realloc(r->rt, r->capr * sizeof(*r->rt));
        r->rend = realloc(r->rend, r->capr * sizeof(*r->rend));
        assert_true(r->rt != NULL && r->rend != NULL);
    }
    r->len += (size_t)n;
    r->rt[r->nr] = tclock_now() - t_send;
    r->rend[r->nr++] = r->len;
    return n;
}

/* When the byte at raw offset off had arrived. */
static double arrival(const struct raw_reply *r, size_t off)
{
    for (size_t i = 0; i < r->nr; i++)
        if (r->rend[i] > off)
            return r->rt[i];
    return -1;
}

static size_t hexval(const char *p, const char *end, const char **after)
{
    size_t v = 0;
    while (p < end && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) {
        v = v * 16 + (size_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
        p++;
    }
    *after = p;
    return v;
}

/* Splits the head off and de-chunks the body. */
void raw_parse(struct raw_reply *r)
{
    const char *p, *end;
    r->raw = realloc(r->raw, r->len + 1);
    assert_non_null(r->raw);
    r->raw[r->len] = '\0';
    p = strstr(r->raw, "\r\n\r\n");
    r->body = calloc(1, r->len + 1);
    assert_non_null(r->body);
    if (p == NULL)
        return;
    r->head_len = (size_t)(p - r->raw) + 4;
    if (sscanf(r->raw, "HTTP/1.1 %d ", &r->status) != 1)
        r->status = -1;
    r->chunked = strstr(r->raw, "Transfer-Encoding: chunked\r\n") != NULL &&
                 strstr(r->raw, "Transfer-Encoding: chunked\r\n") < p;
    p = r->raw + r->head_len;
    end = r->raw + r->len;
    if (!r->chunked) {
        memcpy(r->body, p, (size_t)(end - p));
        r->body_len = (size_t)(end - p);
        return;
    }
    while (p < end) {
        const char *q;
        size_t n = hexval(p, end, &q);
        if (q == p || end - q < 2 || memcmp(q, "\r\n", 2) != 0)
            return;
        q += 2;
        if (n == 0) {
            r->terminated = end - q == 2 && memcmp(q, "\r\n", 2) == 0;
            return;
        }
        if ((size_t)(end - q) < n + 2 || memcmp(q + n, "\r\n", 2) != 0)
            return;
        memcpy(r->body + r->body_len, q, n);
        r->body_len += n;
        if (r->nchunks < 64)
            r->chunk_t[r->nchunks] = arrival(r, (size_t)(q + n - 1 - r->raw));
        r->nchunks++;
        p = q + n + 2;
    }
}

/* Sends req on a new connection and reads to EOF; returns the send time. */
double raw_exchange(int port, const char *req, size_t len, struct raw_reply *r)
{
    int fd = raw_connect(port);
    double t;
    memset(r, 0, sizeof(*r));
    t = tclock_now();
    raw_send(fd, req, len);
    while (raw_read(fd, r, t) > 0) {
    }
    close(fd);
    raw_parse(r);
    return t;
}

char *raw_post_req(const char *path, const char *json)
{
    size_t n = strlen(json) + strlen(path) + 200;
    char *q = malloc(n);
    assert_non_null(q);
    snprintf(q, n,
             "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n%s",
             path, strlen(json), json);
    return q;
}

double raw_post(int port, const char *path, const char *json, struct raw_reply *r)
{
    char *q = raw_post_req(path, json);
    double t = raw_exchange(port, q, strlen(q), r);
    free(q);
    return t;
}

void raw_get(int port, const char *path, struct raw_reply *r)
{
    char q[512];
    snprintf(q, sizeof(q), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
    raw_exchange(port, q, strlen(q), r);
}

int raw_has(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

/* Splits an LF event stream into its data payloads (comment lines
 * skipped).  Returns the count; payloads are malloc'd. */
size_t raw_sse_split(const char *body, char **out, size_t max)
{
    size_t n = 0;
    const char *p = body;
    while (*p != '\0' && n < max) {
        const char *e = strstr(p, "\n\n"), *d;
        if (e == NULL)
            break;
        d = strstr(p, "data: ");
        assert_true(d != NULL && d < e);
        out[n++] = strndup(d + 6, (size_t)(e - d - 6));
        p = e + 2;
    }
    return n;
}

void raw_free_all(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}
