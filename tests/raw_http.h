/*
 * raw_http.h - a small raw HTTP client for the tests of the mock server
 * (test_serve.c): one request a connection, every read timestamped from
 * the send, the reply split into head and de-chunked body, and an SSE
 * body split into its data payloads.  Written here, not with the server's
 * code, so that a change of the server's bytes shows up as a failed
 * comparison.  Failures end the current case (cmocka).
 */
#ifndef TTSBUF_TESTS_RAW_HTTP_H
#define TTSBUF_TESTS_RAW_HTTP_H

#include <stddef.h>
#include <sys/types.h>

/* What came back on one connection. */
struct raw_reply {
    char *raw; /* every byte received */
    size_t len, cap;
    double *rt; /* rt[i]: when the read ending at rend[i] returned, from t_send */
    size_t *rend;
    size_t nr, capr;
    int eof; /* the server closed (read returned 0) */
    int status;
    size_t head_len;
    char *body; /* de-chunked (or the raw body), NUL-terminated */
    size_t body_len;
    int chunked, terminated; /* chunked: the 0-size chunk arrived */
    double chunk_t[64];      /* arrival of each chunk's last byte, from t_send */
    size_t nchunks;
};

/* A loopback connection to port (10 s send and receive timeouts). */
int raw_connect(int port);
/* Sends all of p (stops quietly when the server has closed). */
void raw_send(int fd, const char *p, size_t n);
/* One read into r; returns its size (0 at EOF, -1 on error or timeout). */
ssize_t raw_read(int fd, struct raw_reply *r, double t_send);
/* Splits the head off and de-chunks the body (after the last read). */
void raw_parse(struct raw_reply *r);
void raw_reply_free(struct raw_reply *r);

/* Sends req on a new connection and reads to EOF; returns the send time. */
double raw_exchange(int port, const char *req, size_t len, struct raw_reply *r);
/* A POST of json to path (malloc'd). */
char *raw_post_req(const char *path, const char *json);
double raw_post(int port, const char *path, const char *json, struct raw_reply *r);
void raw_get(int port, const char *path, struct raw_reply *r);

int raw_has(const char *hay, const char *needle);
#define assert_raw_has(hay, needle)                                                                \
    do {                                                                                           \
        if (!raw_has((hay), (needle)))                                                             \
            fail_msg("expected \"%s\" in:\n%s", (needle), (hay));                                  \
    } while (0)

/* Splits an LF event stream into its data payloads (comment lines
 * skipped); returns the count.  Payloads are malloc'd: raw_free_all. */
size_t raw_sse_split(const char *body, char **out, size_t max);
void raw_free_all(char **v, size_t n);

#endif
