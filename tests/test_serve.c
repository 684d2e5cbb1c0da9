/*
 * test_serve.c - the mock provider (tb_serve) over real sockets.
 *
 * Each case starts the real server on 127.0.0.1, port 0, in a thread,
 * talks to it with a small raw HTTP client that timestamps every read, and
 * de-chunks what came back.  The expected bytes are written out here by
 * hand (not built with the server's own code), so a change of shape shows
 * up as a failed comparison.  Timing is checked against the schedule with
 * one strict side (never early: an event may not arrive before
 * send + t_k) and one generous side (a correctness check, not a
 * benchmark: sanitizers and a loaded machine must pass).
 */
#include <arpa/inet.h>
#include <cJSON.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/serve.h"
#include "ttsbuf/stream.h"

/* How late an event may arrive and still pass (s): generous on purpose. */
#define SLACK 0.15

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- Streams ----------------------------------------------------------- */

/* The short stream most cases use: three events, four tokens, 30 ms, text
 * that needs JSON escaping. */
static void stream_short(struct tb_stream *s)
{
    tb_stream_init(s);
    assert_int_equal(tb_stream_append(s, 0.010, "Hi", 2, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(s, 0.020, " \"there\"", 8, 2, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(s, 0.030, "\n", 1, 1, TB_KIND_CONTENT), 0);
}

/* Evenly spaced one-token events. */
static void stream_even(struct tb_stream *s, size_t n, double dt)
{
    tb_stream_init(s);
    for (size_t i = 0; i < n; i++) {
        char w[16];
        int len = snprintf(w, sizeof(w), " w%zu", i);
        assert_int_equal(
            tb_stream_append(s, dt * (double)(i + 1), w, (size_t)len, 1, TB_KIND_CONTENT), 0);
    }
}

/* ---- The server in a thread -------------------------------------------- */

struct srv {
    struct tb_serve *s;
    pthread_t th;
    int rc;
    int port;
    struct tb_serve_stats st;
};

static void *srv_main(void *arg)
{
    struct srv *v = arg;
    v->rc = tb_serve_run(v->s);
    return NULL;
}

static size_t srv_budget; /* the next srv_start's memory budget (0: the default) */

static void srv_start(struct srv *v, const struct tb_stream *st, const char *faults,
                      size_t max_conns)
{
    struct tb_serve_opts o;
    char err[256] = "";
    memset(v, 0, sizeof(*v));
    memset(&o, 0, sizeof(o));
    o.host = "127.0.0.1";
    o.port = 0;
    o.stream = st;
    o.max_conns = max_conns;
    o.mem_budget = srv_budget;
    srv_budget = 0;
    tb_faults_init(&o.faults);
    if (faults != NULL)
        assert_int_equal(tb_faults_parse(faults, &o.faults, err, sizeof(err)), 0);
    if (tb_serve_create(&o, &v->s, err, sizeof(err)) != 0)
        fail_msg("tb_serve_create: %s", err);
    v->port = tb_serve_port(v->s);
    assert_true(v->port > 0);
    assert_int_equal(pthread_create(&v->th, NULL, srv_main, v), 0);
}

static void srv_stop(struct srv *v)
{
    tb_serve_stop(v->s);
    assert_int_equal(pthread_join(v->th, NULL), 0);
    assert_int_equal(v->rc, 0);
    tb_serve_stats(v->s, &v->st);
    tb_serve_destroy(v->s);
    v->s = NULL;
}

/* ---- A raw HTTP client ------------------------------------------------- */

struct reply {
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

static void reply_free(struct reply *r)
{
    free(r->raw);
    free(r->rt);
    free(r->rend);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

static int connect_to(int port)
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

static void send_all(int fd, const char *p, size_t n)
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
static ssize_t read_some(int fd, struct reply *r, double t_send)
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
    r->rt[r->nr] = now_s() - t_send;
    r->rend[r->nr++] = r->len;
    return n;
}

/* When the byte at raw offset off had arrived. */
static double arrival(const struct reply *r, size_t off)
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
static void reply_parse(struct reply *r)
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
static double exchange(int port, const char *req, size_t len, struct reply *r)
{
    int fd = connect_to(port);
    double t;
    memset(r, 0, sizeof(*r));
    t = now_s();
    send_all(fd, req, len);
    while (read_some(fd, r, t) > 0) {
    }
    close(fd);
    reply_parse(r);
    return t;
}

static char *post_req(const char *path, const char *json)
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

static double post(int port, const char *path, const char *json, struct reply *r)
{
    char *q = post_req(path, json);
    double t = exchange(port, q, strlen(q), r);
    free(q);
    return t;
}

static void get(int port, const char *path, struct reply *r)
{
    char q[512];
    snprintf(q, sizeof(q), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
    exchange(port, q, strlen(q), r);
}

static int has(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

#define assert_has(hay, needle)                                                                    \
    do {                                                                                           \
        if (!has((hay), (needle)))                                                                 \
            fail_msg("expected \"%s\" in:\n%s", (needle), (hay));                                  \
    } while (0)

/* Splits an LF event stream into its data payloads (comment lines
 * skipped).  Returns the count; payloads are malloc'd. */
static size_t sse_split(const char *body, char **out, size_t max)
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

static void free_all(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

/* The expected chat chunk: delta and finish are JSON text. */
static char *chat_chunk(unsigned id, const char *model, const char *delta, const char *finish)
{
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 1024,
             "{\"id\":\"chatcmpl-ttsbuf-%u\",\"object\":\"chat.completion.chunk\",\"created\":0,"
             "\"model\":\"%s\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}",
             id, model, delta, finish);
    return b;
}

static const char *const SHORT_STREAM_REQ =
    "{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
    "\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}";

/* The body SHORT_STREAM_REQ gets from stream_short, request id 1. */
static const char *const SHORT_STREAM_BODY =
    "data: {\"id\":\"chatcmpl-ttsbuf-1\",\"object\":\"chat.completion.chunk\",\"created\":0,"
    "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-ttsbuf-1\",\"object\":\"chat.completion.chunk\",\"created\":0,"
    "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-ttsbuf-1\",\"object\":\"chat.completion.chunk\",\"created\":0,"
    "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" \\\"there\\\"\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-ttsbuf-1\",\"object\":\"chat.completion.chunk\",\"created\":0,"
    "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\n\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-ttsbuf-1\",\"object\":\"chat.completion.chunk\",\"created\":0,"
    "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"id\":\"chatcmpl-ttsbuf-1\",\"object\":\"chat.completion.chunk\",\"created\":0,"
    "\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":4,"
    "\"total_tokens\":6}}\n\n"
    "data: [DONE]\n\n";

/* ---- Fault specs ------------------------------------------------------- */

static void faults_parse_ok(void **state)
{
    (void)state;
    struct tb_faults f;
    char err[256];
    tb_faults_init(&f);
    assert_int_equal(f.stall_at, -1);
    assert_int_equal(f.drop_at, -1);
    assert_int_equal(f.malformed_at, -1);
    assert_int_equal(f.error_at, -1);
    assert_int_equal(f.status, 0);
    assert_int_equal(tb_faults_parse("", &f, err, sizeof(err)), 0);
    assert_int_equal(tb_faults_parse(NULL, &f, err, sizeof(err)), 0);
    assert_int_equal(tb_faults_parse("stall@40:1.5+drop@7+status@503:html+html+malformed@3+"
                                     "error@9+burst@4+reasoning@2+crlf+comments+nodone+"
                                     "reject-usage",
                                     &f, err, sizeof(err)),
                     0);
    assert_int_equal(f.stall_at, 40);
    assert_near(f.stall_s, 1.5, 0);
    assert_int_equal(f.drop_at, 7);
    assert_int_equal(f.status, 503);
    assert_int_equal(f.status_html, 1);
    assert_int_equal(f.html, 1);
    assert_int_equal(f.malformed_at, 3);
    assert_int_equal(f.error_at, 9);
    assert_int_equal(f.burst, 4);
    assert_int_equal(f.reasoning, 2);
    assert_true(f.crlf && f.comments && f.nodone && f.reject_usage);
    /* Parsing adds to what is there; a later value replaces an earlier. */
    tb_faults_init(&f);
    assert_int_equal(tb_faults_parse("crlf+status@429", &f, err, sizeof(err)), 0);
    assert_int_equal(tb_faults_parse("stall@0:0", &f, err, sizeof(err)), 0);
    assert_int_equal(tb_faults_parse("status@500", &f, err, sizeof(err)), 0);
    assert_true(f.crlf);
    assert_int_equal(f.stall_at, 0);
    assert_near(f.stall_s, 0, 0);
    assert_int_equal(f.status, 500);
    assert_int_equal(f.status_html, 0);
}

static void faults_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *named, *why;
    } bad[] = {
        {"bogus", "\"bogus\"", "unknown fault"},
        {"crlf+stall@x:1", "\"stall@x:1\"", "K must be"},
        {"stall@3", "\"stall@3\"", "stall@K:S"},
        {"stall@3:-1", "\"stall@3:-1\"", "S must be"},
        {"stall@3:inf", "\"stall@3:inf\"", "S must be"},
        {"stall@3:1e3", "\"stall@3:1e3\"", "S must be"},
        {"stall@3:2000000", "\"stall@3:2000000\"", "S must be"},
        {"drop@-1", "\"drop@-1\"", "K must be"},
        {"drop@", "\"drop@\"", "K must be"},
        {"drop", "\"drop\"", "needs an '@'"},
        {"malformed@1x", "\"malformed@1x\"", "K must be"},
        {"error@99999999999999999999999", "\"error@99999999999999999999999\"", "K must be"},
        {"status@200", "\"status@200\"", "400..599"},
        {"status@429:json", "\"status@429:json\"", "status@N:html"},
        {"burst@0", "\"burst@0\"", "1..1000000"},
        {"reasoning@x", "\"reasoning@x\"", "0..1000000"},
        {"crlf@1", "\"crlf@1\"", "no '@' argument"},
        {"html++crlf", "empty item", ""},
        {"+html", "empty item", ""},
        {"html+", "empty item", ""},
        {"Crlf", "\"Crlf\"", "unknown fault"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tb_faults f, before;
        char err[512] = "";
        tb_faults_init(&f);
        f.nodone = 1;
        before = f;
        if (tb_faults_parse(bad[i].spec, &f, err, sizeof(err)) != TB_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i].spec);
        assert_has(err, bad[i].named);
        assert_has(err, bad[i].why);
        /* A failed parse leaves the struct alone. */
        assert_memory_equal(&f, &before, sizeof(f));
    }
}

/* ---- Shapes and timing ------------------------------------------------- */

static void stream_exact_bytes(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions", SHORT_STREAM_REQ, &r);
    assert_int_equal(r.status, 200);
    assert_has(r.raw, "HTTP/1.1 200 OK\r\n");
    assert_has(r.raw, "\r\nContent-Type: text/event-stream\r\n");
    assert_has(r.raw, "\r\nCache-Control: no-cache\r\n");
    assert_has(r.raw, "\r\nTransfer-Encoding: chunked\r\n");
    assert_has(r.raw, "\r\nConnection: close\r\n");
    assert_true(r.terminated);
    assert_true(r.eof);
    assert_string_equal(r.body, SHORT_STREAM_BODY);
    /* One HTTP chunk per SSE event. */
    assert_int_equal(r.nchunks, 7);
    reply_free(&r);
    srv_stop(&v);
    assert_int_equal(v.st.requests, 1);
    assert_int_equal(v.st.streams, 1);
    assert_int_equal(v.st.events, 3);
    assert_int_equal(v.st.tokens, 4);
    assert_int_equal(v.st.dropped, 0);
    assert_int_equal(v.st.late_n, 3);
    assert_true(v.st.late_p50 <= v.st.late_p99 && v.st.late_p99 <= v.st.late_max);
    tb_stream_free(&st);
}

/* Event k arrives no earlier than send + t_k, and not much later. */
static void stream_timing(void **state)
{
    (void)state;
    static const double t[] = {0.05, 0.10, 0.15, 0.25, 0.30};
    struct tb_stream st;
    struct srv v;
    struct reply r;
    tb_stream_init(&st);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(tb_stream_append(&st, t[i], "tok", 3, 1, TB_KIND_CONTENT), 0);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}", &r);
    assert_true(r.terminated);
    assert_int_equal(r.nchunks, 1 + 5 + 2); /* role, events, finish, [DONE] */
    assert_true(r.chunk_t[0] < SLACK);      /* the role chunk at once */
    for (size_t k = 0; k < 5; k++) {
        double a = r.chunk_t[k + 1];
        if (!(a >= t[k] && a <= t[k] + SLACK))
            fail_msg("event %zu arrived at %.6f s, schedule %.3f s", k, a, t[k]);
    }
    reply_free(&r);
    srv_stop(&v);
    assert_int_equal(v.st.late_n, 5);
    assert_true(v.st.late_max < SLACK);
    tb_stream_free(&st);
}

static void max_tokens_cut(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char *ev[16];
    size_t n;
    stream_short(&st); /* tokens 1, 2, 1 */
    srv_start(&v, &st, NULL, 0);

    /* 3 tokens: "Hi" (1) and " \"there\"" (2) fit, "\n" does not. */
    post(v.port, "/v1/chat/completions",
         "{\"model\":\"m\",\"stream\":true,\"max_tokens\":3,"
         "\"stream_options\":{\"include_usage\":true}}",
         &r);
    n = sse_split(r.body, ev, 16);
    assert_int_equal(n, 6);
    assert_string_equal(ev[1], chat_chunk(1, "m", "{\"content\":\"Hi\"}", "null"));
    assert_string_equal(ev[2], chat_chunk(1, "m", "{\"content\":\" \\\"there\\\"\"}", "null"));
    assert_string_equal(ev[3], chat_chunk(1, "m", "{}", "\"length\""));
    assert_has(ev[4], "\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":3,\"total_tokens\":3}");
    assert_string_equal(ev[5], "[DONE]");
    free_all(ev, n);
    reply_free(&r);

    /* max_completion_tokens 2: the 2-token event does not fit either. */
    post(v.port, "/v1/chat/completions",
         "{\"model\":\"m\",\"stream\":true,\"max_completion_tokens\":2}", &r);
    n = sse_split(r.body, ev, 16);
    assert_int_equal(n, 4);
    assert_string_equal(ev[1], chat_chunk(2, "m", "{\"content\":\"Hi\"}", "null"));
    assert_string_equal(ev[2], chat_chunk(2, "m", "{}", "\"length\""));
    free_all(ev, n);
    reply_free(&r);

    /* Exactly enough: nothing is cut, so "stop". */
    post(v.port, "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true,\"max_tokens\":4}", &r);
    n = sse_split(r.body, ev, 16);
    assert_int_equal(n, 6);
    assert_string_equal(ev[4], chat_chunk(3, "m", "{}", "\"stop\""));
    free_all(ev, n);
    reply_free(&r);

    /* Non-streamed, cut too. */
    post(v.port, "/v1/chat/completions", "{\"model\":\"m\",\"max_tokens\":1}", &r);
    assert_string_equal(
        r.body, "{\"id\":\"chatcmpl-ttsbuf-4\",\"object\":\"chat.completion\",\"created\":0,"
                "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
                "\"assistant\",\"content\":\"Hi\"},\"finish_reason\":\"length\"}],"
                "\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":1,\"total_tokens\":1}}");
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

static void nonstream_chat(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    const char *want = "{\"id\":\"chatcmpl-ttsbuf-1\",\"object\":\"chat.completion\",\"created\":0,"
                       "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
                       "\"assistant\",\"content\":\"Hi \\\"there\\\"\\n\"},\"finish_reason\":"
                       "\"stop\"}],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":4,"
                       "\"total_tokens\":6}}";
    char cl[64];
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions",
         "{\"model\":\"m\",\"stream\":false,\"messages\":[{\"role\":\"system\",\"content\":"
         "\"Be\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hello!\"}]}]}",
         &r);
    assert_int_equal(r.status, 200);
    assert_false(r.chunked);
    assert_has(r.raw, "\r\nContent-Type: application/json\r\n");
    snprintf(cl, sizeof(cl), "\r\nContent-Length: %zu\r\n", strlen(want));
    assert_has(r.raw, cl);
    assert_string_equal(r.body, want);
    /* Sent when the last token would have been: 30 ms after the request. */
    assert_true(r.rt[0] >= 0.030);
    assert_true(r.rt[0] < 0.030 + SLACK);
    reply_free(&r);
    srv_stop(&v);
    assert_int_equal(v.st.requests, 1);
    assert_int_equal(v.st.streams, 0);
    assert_int_equal(v.st.tokens, 4);
    tb_stream_free(&st);
}

static void legacy_completions(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/completions",
         "{\"model\":\"m\",\"prompt\":\"Say\",\"stream\":true,"
         "\"stream_options\":{\"include_usage\":true}}",
         &r);
    assert_string_equal(
        r.body,
        "data: {\"id\":\"cmpl-ttsbuf-1\",\"object\":\"text_completion\",\"created\":0,\"model\":"
        "\"m\",\"choices\":[{\"text\":\"Hi\",\"index\":0,\"logprobs\":null,\"finish_reason\":"
        "null}]}\n\n"
        "data: {\"id\":\"cmpl-ttsbuf-1\",\"object\":\"text_completion\",\"created\":0,\"model\":"
        "\"m\",\"choices\":[{\"text\":\" \\\"there\\\"\",\"index\":0,\"logprobs\":null,"
        "\"finish_reason\":null}]}\n\n"
        "data: {\"id\":\"cmpl-ttsbuf-1\",\"object\":\"text_completion\",\"created\":0,\"model\":"
        "\"m\",\"choices\":[{\"text\":\"\\n\",\"index\":0,\"logprobs\":null,\"finish_reason\":"
        "null}]}\n\n"
        "data: {\"id\":\"cmpl-ttsbuf-1\",\"object\":\"text_completion\",\"created\":0,\"model\":"
        "\"m\",\"choices\":[{\"text\":\"\",\"index\":0,\"logprobs\":null,\"finish_reason\":"
        "\"stop\"}]}\n\n"
        "data: {\"id\":\"cmpl-ttsbuf-1\",\"object\":\"text_completion\",\"created\":0,\"model\":"
        "\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":4,"
        "\"total_tokens\":5}}\n\n"
        "data: [DONE]\n\n");
    reply_free(&r);
    post(v.port, "/v1/completions", "{\"model\":\"m\",\"prompt\":[\"Say\",\"it\"]}", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body,
                        "{\"id\":\"cmpl-ttsbuf-2\",\"object\":\"text_completion\",\"created\":0,"
                        "\"model\":\"m\",\"choices\":[{\"text\":\"Hi \\\"there\\\"\\n\",\"index\":"
                        "0,\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{"
                        "\"prompt_tokens\":2,\"completion_tokens\":4,\"total_tokens\":6}}");
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

/* The stream's own reasoning events: reasoning_content in chat, left out
 * of the legacy API (it has no field for them). */
static void reasoning_events(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char *ev[16];
    size_t n;
    tb_stream_init(&st);
    assert_int_equal(tb_stream_append(&st, 0.01, "hmm", 3, 2, TB_KIND_REASONING), 0);
    assert_int_equal(tb_stream_append(&st, 0.02, "Yes", 3, 1, TB_KIND_CONTENT), 0);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}", &r);
    n = sse_split(r.body, ev, 16);
    assert_int_equal(n, 5);
    assert_string_equal(ev[1], chat_chunk(1, "m", "{\"reasoning_content\":\"hmm\"}", "null"));
    assert_string_equal(ev[2], chat_chunk(1, "m", "{\"content\":\"Yes\"}", "null"));
    free_all(ev, n);
    reply_free(&r);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m\"}", &r);
    assert_has(r.body, "\"message\":{\"role\":\"assistant\",\"content\":\"Yes\","
                       "\"reasoning_content\":\"hmm\"}");
    assert_has(r.body, "\"completion_tokens\":3");
    reply_free(&r);
    post(v.port, "/v1/completions", "{\"model\":\"m\",\"stream\":true}", &r);
    n = sse_split(r.body, ev, 16);
    assert_int_equal(n, 3);
    assert_has(ev[0], "\"text\":\"Yes\"");
    free_all(ev, n);
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

/* ---- Event JSON against cJSON ------------------------------------------- */

/* The text of the escaping stream's events, each with its kind. */
struct esc_event {
    char text[512];
    size_t len;
    int kind;
};

/* Every byte value 1..255 in a valid UTF-8 context where it has one, the
 * bytes that never appear in UTF-8 raw, and the edge cases: the server
 * renders event JSON without cJSON, and must print what cJSON would. */
static size_t esc_events(struct esc_event *e)
{
    size_t n = 0, k;
    /* 0x01..0x7f: every control byte, quote, backslash, slash, DEL. */
    for (k = 0; k < 127; k++)
        e[n].text[k] = (char)(k + 1);
    e[n].len = k, e[n++].kind = TB_KIND_CONTENT;
    /* Every continuation byte after C2 (U+0080..U+00BF). */
    for (k = 0; k < 64; k++)
        e[n].text[2 * k] = (char)0xc2, e[n].text[2 * k + 1] = (char)(0x80 + k);
    e[n].len = 128, e[n++].kind = TB_KIND_CONTENT;
    /* Every lead byte: C3..DF, E0..EF, F0..F4, each starting a valid
     * sequence. */
    k = 0;
    for (int b = 0xc3; b <= 0xdf; b++)
        e[n].text[k++] = (char)b, e[n].text[k++] = (char)0x80;
    for (int b = 0xe0; b <= 0xef; b++) {
        e[n].text[k++] = (char)b;
        e[n].text[k++] = (char)(b == 0xe0 ? 0xa0 : 0x80);
        e[n].text[k++] = (char)0x80;
    }
    for (int b = 0xf0; b <= 0xf4; b++) {
        e[n].text[k++] = (char)b;
        e[n].text[k++] = (char)(b == 0xf0 ? 0x90 : 0x80);
        e[n].text[k++] = (char)0x80;
        e[n].text[k++] = (char)0x80;
    }
    e[n].len = k, e[n++].kind = TB_KIND_CONTENT;
    /* Bytes no UTF-8 holds pass through cJSON unchanged too. */
    k = 0;
    for (int b = 0xc0; b <= 0xc1; b++)
        e[n].text[k++] = (char)b;
    for (int b = 0xf5; b <= 0xff; b++)
        e[n].text[k++] = (char)b;
    e[n].len = k, e[n++].kind = TB_KIND_CONTENT;
    /* Edge cases, one reasoning event among them. */
    static const char *const edge[] = {
        "\"",
        "\\",
        "\\\"\\\\\"",
        "</script>",
        "\xe2\x80\xa8\xe2\x80\xa9",
        "\xf0\x9f\x98\x80",
        "\\u0000",
        "\x7f\x1f\x01",
        " \t\r\n\b\f",
        "\x1b[0m",
    };
    for (k = 0; k < sizeof(edge) / sizeof(edge[0]); k++) {
        e[n].len = strlen(edge[k]);
        memcpy(e[n].text, edge[k], e[n].len);
        e[n++].kind = k == 3 ? TB_KIND_REASONING : TB_KIND_CONTENT;
        if (k == 3) {
            /* A NUL ends a cJSON string: "x" is all cJSON prints of "x\0y",
             * and with burst@3 this event starts a group, whose later
             * events' text goes too. */
            memcpy(e[n].text, "x\0y", 3);
            e[n].len = 3, e[n++].kind = TB_KIND_CONTENT;
        }
    }
    return n;
}

/* cJSON_PrintUnformatted of the chunk the server should send. */
static char *cjson_chunk(int id, int legacy, const char *model, const char *text, int reasoning)
{
    cJSON *o = cJSON_CreateObject(), *arr, *ch, *d;
    char *out, ids[48];
    assert_non_null(o);
    snprintf(ids, sizeof(ids), "%s-ttsbuf-%d", legacy ? "cmpl" : "chatcmpl", id);
    cJSON_AddStringToObject(o, "id", ids);
    cJSON_AddStringToObject(o, "object", legacy ? "text_completion" : "chat.completion.chunk");
    cJSON_AddNumberToObject(o, "created", 0);
    cJSON_AddStringToObject(o, "model", model);
    arr = cJSON_AddArrayToObject(o, "choices");
    ch = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, ch);
    if (legacy) {
        cJSON_AddStringToObject(ch, "text", text);
        cJSON_AddNumberToObject(ch, "index", 0);
        cJSON_AddNullToObject(ch, "logprobs");
    } else {
        cJSON_AddNumberToObject(ch, "index", 0);
        d = cJSON_AddObjectToObject(ch, "delta");
        cJSON_AddStringToObject(d, reasoning ? "reasoning_content" : "content", text);
    }
    cJSON_AddNullToObject(ch, "finish_reason");
    out = cJSON_PrintUnformatted(o);
    assert_non_null(out);
    cJSON_Delete(o);
    return out;
}

/* Streams the escaping events (group events a burst; 1: one by one) with
 * a model name that needs escaping, and compares every event's JSON with
 * cJSON's, for chat and the legacy API. */
static void escape_matches_cjson(void **state)
{
    (void)state;
    /* The model as the request spells it, and as its parsed value. */
    static const char *const model_json[] = {"m\\\"\\\\/\\u0001\\u001f\\u007f\\u00e9\\u2028",
                                             "m\\u0007+burst@3"};
    static const char *const model[] = {"m\"\\/\x01\x1f\x7f\xc3\xa9\xe2\x80\xa8", "m\x07+burst@3"};
    struct esc_event e[32];
    struct tb_stream st;
    struct srv v;
    size_t ne = esc_events(e);

    tb_stream_init(&st);
    for (size_t i = 0; i < ne; i++)
        assert_int_equal(tb_stream_append(&st, 0.001, e[i].text, e[i].len, 1, e[i].kind), 0);
    srv_start(&v, &st, NULL, 0);
    for (int legacy = 0; legacy <= 1; legacy++) {
        for (int m = 0; m < 2; m++) {
            size_t group = m == 0 ? 1 : 3, k = legacy ? 0 : 1, n;
            char req[256], *ev[64];
            struct reply r;
            snprintf(req, sizeof(req), "{\"model\":\"%s\",\"stream\":true}", model_json[m]);
            post(v.port, legacy ? "/v1/completions" : "/v1/chat/completions", req, &r);
            assert_int_equal(r.status, 200);
            n = sse_split(r.body, ev, 64);
            for (size_t i = 0; i < ne;) {
                /* A group: up to `group` events of one kind (the legacy
                 * API leaves reasoning out). */
                char text[2048] = "";
                int kind = e[i].kind;
                size_t len = 0, j = i;
                if (legacy && kind == TB_KIND_REASONING) {
                    i++;
                    continue;
                }
                for (; j < ne && j - i < group && e[j].kind == kind; j++) {
                    memcpy(text + len, e[j].text, e[j].len);
                    len += e[j].len;
                }
                text[len] = '\0';
                i = j;
                char *want = cjson_chunk(2 * legacy + m + 1, legacy, model[m], text,
                                         kind == TB_KIND_REASONING);
                assert_true(k < n);
                assert_string_equal(ev[k], want);
                cJSON_free(want);
                k++;
            }
            assert_true(k < n);
            assert_has(ev[k], "\"finish_reason\":\"stop\"");
            free_all(ev, n);
            reply_free(&r);
        }
    }
    srv_stop(&v);
    tb_stream_free(&st);
}

/* A few escapes written out by hand, so the cJSON comparison above is not
 * the only witness. */
static void escape_by_hand(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char *ev[8];
    size_t n;
    tb_stream_init(&st);
    assert_int_equal(
        tb_stream_append(&st, 0.001, "\x01\x1f\x7f\"\\/\t\xc3\xa9", 9, 1, TB_KIND_CONTENT), 0);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}", &r);
    n = sse_split(r.body, ev, 8);
    assert_int_equal(n, 4);
    assert_string_equal(
        ev[1],
        chat_chunk(1, "m", "{\"content\":\"\\u0001\\u001f\x7f\\\"\\\\/\\t\xc3\xa9\"}", "null"));
    free_all(ev, n);
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

static void models_list(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    get(v.port, "/v1/models", &r);
    assert_int_equal(r.status, 200);
    assert_has(r.raw, "\r\nContent-Type: application/json\r\n");
    assert_string_equal(r.body, "{\"object\":\"list\",\"data\":[{\"id\":\"ttsbuf-mock\",\"object\":"
                                "\"model\",\"created\":0,\"owned_by\":\"ttsbuf\"}]}");
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

/* Malformed requests: 400 (or the status RFC 9112 names) with a JSON body. */
static void bad_requests(void **state)
{
    (void)state;
    static const struct {
        const char *req;
        int status;
        const char *says;
    } cases[] = {
        {"GET /v1/models HTTP/1.1\nHost: x\n\n", 400, "CRLF"},
        {"GET /v1/models HTTP/1.1\r\nHost: x\rY: z\r\n\r\n", 400, "CRLF"},
        {"GARBAGE\r\n\r\n", 400, "request line"},
        {"GET  /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", 400, "target"},
        {"GET v1/models HTTP/1.1\r\nHost: x\r\n\r\n", 400, "target"},
        {"GET /v1/models HTTP/1.1\r\n\r\n", 400, "Host"},
        {"GET /v1/models HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "Host"},
        {"GET /v1/models HTTP/1.1\r\nHost : x\r\n\r\n", 400, "header line"},
        {"GET /v1/models HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, "folding"},
        {"GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400, "Content-Length"},
        {"GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
         400, "Content-Length"},
        {"GET /v1/models HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP/1.1"},
        {"GET /v1/models HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 411,
         "Content-Length"},
        {"\r\n", 400, "request line"},
    };
    static const struct {
        const char *json;
        const char *says;
    } bodies[] = {
        {"{\"model\":", "could not parse the JSON body"},
        {"{\"model\":\"m\"} x", "could not parse the JSON body"},
        {"[1]", "could not parse the JSON body"},
        {"", "could not parse the JSON body"},
        {"{\"messages\":[]}", "you must provide a model parameter"},
        {"{\"model\":7}", "'model'"},
        {"{\"model\":\"m\",\"stream\":\"yes\"}", "'stream'"},
        {"{\"model\":\"m\",\"max_tokens\":0}", "'max_tokens'"},
        {"{\"model\":\"m\",\"max_tokens\":1.5}", "'max_tokens'"},
        {"{\"model\":\"m\",\"max_completion_tokens\":-3}", "'max_completion_tokens'"},
        {"{\"model\":\"m\",\"stream_options\":{\"include_usage\":true}}",
         "only allowed when 'stream' is enabled"},
        {"{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":1}}",
         "include_usage"},
        {"{\"model\":\"m\xff\"}", "UTF-8"},
    };
    struct tb_stream st;
    struct srv v;
    struct reply r;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        exchange(v.port, cases[i].req, strlen(cases[i].req), &r);
        if (r.status != cases[i].status)
            fail_msg("case %zu: status %d, want %d:\n%s", i, r.status, cases[i].status, r.raw);
        assert_has(r.raw, "\r\nContent-Type: application/json\r\n");
        assert_has(r.body, "{\"error\":{\"message\":\"");
        assert_has(r.body, cases[i].says);
        assert_true(r.eof);
        reply_free(&r);
    }
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        post(v.port, "/v1/chat/completions", bodies[i].json, &r);
        if (r.status != 400)
            fail_msg("body %zu: status %d, want 400:\n%s", i, r.status, r.raw);
        assert_has(r.body, bodies[i].says);
        assert_has(r.body, "\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}");
        reply_free(&r);
    }
    /* HTTP/1.0 needs no Host; header names are case-insensitive. */
    exchange(v.port, "GET /v1/models HTTP/1.0\r\n\r\n", 27, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    {
        const char *q = "POST /v1/chat/completions HTTP/1.1\r\nhOsT: x\r\ncontent-LENGTH: 13"
                        "\r\n\r\n{\"model\":\"m\"}";
        exchange(v.port, q, strlen(q), &r);
        assert_int_equal(r.status, 200);
        assert_has(r.body, "\"content\":\"Hi \\\"there\\\"\\n\"");
        reply_free(&r);
    }
    srv_stop(&v);
    assert_int_equal(v.st.dropped, 0);
    tb_stream_free(&st);
}

/* Expect: 100-continue gets its interim response before the body. */
static void expect_continue(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    const char *head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n"
                       "Expect: 100-continue\r\n\r\n";
    int fd;
    double t;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    fd = connect_to(v.port);
    memset(&r, 0, sizeof(r));
    t = now_s();
    send_all(fd, head, strlen(head));
    while (r.len < 25 && read_some(fd, &r, t) > 0) {
    }
    assert_true(r.len >= 25);
    assert_memory_equal(r.raw, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    send_all(fd, "{\"model\":\"m\"}", 13);
    while (read_some(fd, &r, t) > 0) {
    }
    close(fd);
    reply_parse(&r);
    assert_has(r.raw + 25, "HTTP/1.1 200 OK\r\n");
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

static void too_large_413(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char q[256];
    size_t big = TB_SERVE_REQUEST_MAX + 4096, at;
    char *buf;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);

    /* A declared body over the cap: refused before it is sent. */
    snprintf(q, sizeof(q),
             "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %u\r\n\r\n",
             TB_SERVE_REQUEST_MAX);
    exchange(v.port, q, strlen(q), &r);
    assert_int_equal(r.status, 413);
    assert_has(r.body, "\"type\":\"invalid_request_error\"");
    assert_true(r.eof);
    reply_free(&r);

    /* A head that never ends: refused at the cap (the server reads on
     * until our EOF, so our sending never blocks and the 413 arrives). */
    buf = malloc(big);
    assert_non_null(buf);
    at = (size_t)snprintf(buf, big, "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Pad: ");
    memset(buf + at, 'a', big - at);
    exchange(v.port, buf, big, &r);
    assert_int_equal(r.status, 413);
    reply_free(&r);

    /* A large body under the cap is fine: 600 KB of prompt. */
    {
        size_t n = 600000;
        char *json = malloc(n + 100);
        assert_non_null(json);
        at = (size_t)snprintf(json, n + 100, "{\"model\":\"m\",\"prompt\":\"");
        memset(json + at, 'x', n);
        strcpy(json + at + n, "\"}");
        post(v.port, "/v1/completions", json, &r);
        assert_int_equal(r.status, 200);
        assert_has(r.body, "\"prompt_tokens\":150000,");
        reply_free(&r);
        free(json);
    }
    free(buf);
    srv_stop(&v);
    assert_int_equal(v.st.requests, 3);
    tb_stream_free(&st);
}

/* ---- Request and response, as a table --------------------------------- */

/* Replaces every "\n" of s with "\r\n" (the JSON holds no raw newline). */
static char *crlf_of(const char *s)
{
    char *o = malloc(strlen(s) * 2 + 1), *p = o;
    assert_non_null(o);
    for (; *s; s++) {
        if (*s == '\n')
            *p++ = '\r';
        *p++ = *s;
    }
    *p = '\0';
    return o;
}

/* Expected bodies made from SHORT_STREAM_BODY (malloc'd). */
static char *body_crlf(void)
{
    return crlf_of(SHORT_STREAM_BODY);
}

/* ": keep-alive\n" before every event. */
static char *body_comments(void)
{
    char *want = malloc(8192), *w = want;
    assert_non_null(want);
    for (const char *p = SHORT_STREAM_BODY; *p;) {
        const char *e = strstr(p, "\n\n") + 2;
        w += sprintf(w, ": keep-alive\n%.*s", (int)(e - p), p);
        p = e;
    }
    return want;
}

/* Everything up to [DONE]. */
static char *body_nodone(void)
{
    const char *done = strstr(SHORT_STREAM_BODY, "data: [DONE]");
    return strndup(SHORT_STREAM_BODY, (size_t)(done - SHORT_STREAM_BODY));
}

/* One request to a server of stream_short with the server's faults, and
 * what must come back.  NULL fields are not checked. */
struct xcase {
    const char *name, *faults, *path;
    const char *json;              /* NULL: a GET */
    int status;                    /* 0: nothing at all came back */
    const char *has[4], *hasnt[2]; /* in the raw response (head and body) */
    int events;                    /* SSE events in the body; -1: not counted */
    int terminated;                /* the chunked terminator; -1: not checked */
    char *(*body)(void);           /* the exact body */
};

/* clang-format off */
static const struct xcase xcases[] = {
    {"404 names the request", NULL, "/v1/nope", "{}",
     404, {"{\"error\":{\"message\":\"Invalid URL (POST /v1/nope)\",\"type\":"
           "\"invalid_request_error\",\"param\":null,\"code\":null}}"}, {NULL}, -1, -1, NULL},
    {"405 allows POST", NULL, "/v1/chat/completions", NULL,
     405, {"\r\nAllow: POST\r\n", "\"type\":\"invalid_request_error\""}, {NULL}, -1, -1, NULL},
    {"405 allows GET", NULL, "/v1/models", "{}",
     405, {"\r\nAllow: GET\r\n"}, {NULL}, -1, -1, NULL},
    {"a query string keeps the route", NULL, "/v1/models?x=1", NULL,
     200, {"\"object\":\"list\""}, {NULL}, -1, -1, NULL},
    {"status@429", NULL, "/v1/chat/completions", "{\"model\":\"m+status@429\",\"stream\":true}",
     429, {"HTTP/1.1 429 Too Many Requests\r\n", "\r\nContent-Type: application/json\r\n",
           "\r\nRetry-After: 1\r\n",
           "\r\n\r\n{\"error\":{\"message\":\"Rate limit reached for requests (ttsbuf fault "
           "status@429). Please try again in 1s.\",\"type\":\"requests\",\"param\":null,"
           "\"code\":\"rate_limit_exceeded\"}}"}, {"text/event-stream"}, -1, -1, NULL},
    {"status@401 on the legacy API", NULL, "/v1/completions", "{\"model\":\"m+status@401\"}",
     401, {"\"code\":\"invalid_api_key\""}, {NULL}, -1, -1, NULL},
    {"status@500:html", NULL, "/v1/chat/completions",
     "{\"model\":\"m+status@500:html\",\"stream\":true}",
     500, {"HTTP/1.1 500 Internal Server Error\r\n", "\r\nContent-Type: text/html\r\n",
           "<title>500 Internal Server Error</title>", "<h1>500 Internal Server Error</h1>"},
     {"{"}, -1, -1, NULL},
    {"html", NULL, "/v1/chat/completions", "{\"model\":\"m+html\",\"stream\":true}",
     200, {"\r\nContent-Type: text/html\r\n", "\r\n\r\n<!DOCTYPE html>"},
     {"Transfer-Encoding", "data:"}, -1, -1, NULL},
    {"reject-usage", "reject-usage", "/v1/chat/completions", SHORT_STREAM_REQ,
     400, {"Unrecognized request argument supplied: stream_options"}, {NULL}, -1, -1, NULL},
    {"reject-usage: present even as null", "reject-usage", "/v1/chat/completions",
     "{\"model\":\"m\",\"stream\":true,\"stream_options\":null}",
     400, {NULL}, {NULL}, -1, -1, NULL},
    {"reject-usage: absent is fine", "reject-usage", "/v1/chat/completions",
     "{\"model\":\"m\",\"stream\":true}",
     200, {NULL}, {"usage"}, 6, 1, NULL},
    {"drop@2 streamed: the role and \"Hi\", then no terminator", NULL, "/v1/chat/completions",
     "{\"model\":\"m+drop@2\",\"stream\":true}",
     200, {"\"model\":\"m+drop@2\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},"
           "\"finish_reason\":null}]}\n\n"}, {"there"}, 2, 0, NULL},
    {"drop@0 not streamed: nothing", NULL, "/v1/chat/completions", "{\"model\":\"m+drop@0\"}",
     0, {NULL}, {NULL}, -1, -1, NULL},
    {"error@1 ends without finish, usage or [DONE]", NULL, "/v1/chat/completions",
     "{\"model\":\"m+error@1\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
     200, {"data: {\"error\":{\"message\":\"The server had an error while processing your "
           "request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,"
           "\"code\":null}}\n\n"}, {"[DONE]", "usage"}, 3, 1, NULL},
    {"crlf", "crlf", "/v1/chat/completions", SHORT_STREAM_REQ,
     200, {NULL}, {NULL}, -1, 1, body_crlf},
    {"comments", "comments", "/v1/chat/completions", SHORT_STREAM_REQ,
     200, {NULL}, {NULL}, 7, 1, body_comments},
    {"nodone", "nodone", "/v1/chat/completions", SHORT_STREAM_REQ,
     200, {NULL}, {NULL}, 6, 1, body_nodone},
};
/* clang-format on */

static void exchange_table(void **state)
{
    (void)state;
    struct tb_stream st;
    stream_short(&st);
    for (size_t k = 0; k < sizeof(xcases) / sizeof(xcases[0]); k++) {
        const struct xcase *c = &xcases[k];
        struct srv v;
        struct reply r;
        char *ev[16];
        srv_start(&v, &st, c->faults, 0);
        if (c->json != NULL)
            post(v.port, c->path, c->json, &r);
        else
            get(v.port, c->path, &r);
        if (r.status != c->status || (c->status == 0 && r.len != 0))
            fail_msg("%s: status %d, want %d:\n%s", c->name, r.status, c->status,
                     r.raw != NULL ? r.raw : "");
        for (size_t i = 0; i < 4 && c->has[i] != NULL; i++)
            if (!has(r.raw, c->has[i]))
                fail_msg("%s: expected \"%s\" in:\n%s", c->name, c->has[i], r.raw);
        for (size_t i = 0; i < 2 && c->hasnt[i] != NULL; i++)
            if (r.raw != NULL && has(r.raw, c->hasnt[i]))
                fail_msg("%s: did not expect \"%s\" in:\n%s", c->name, c->hasnt[i], r.raw);
        if (c->events >= 0) {
            size_t n = sse_split(r.body, ev, 16);
            free_all(ev, n);
            if (n != (size_t)c->events)
                fail_msg("%s: %zu events, want %d:\n%s", c->name, n, c->events, r.body);
        }
        if (c->terminated >= 0 && r.terminated != c->terminated)
            fail_msg("%s: terminated %d, want %d", c->name, r.terminated, c->terminated);
        if (c->body != NULL) {
            char *want = c->body();
            if (strcmp(r.body, want) != 0)
                fail_msg("%s: body\n%s\nwant\n%s", c->name, r.body, want);
            free(want);
        }
        reply_free(&r);
        srv_stop(&v);
        /* A deliberate drop is not the client's doing. */
        assert_int_equal(v.st.dropped, 0);
    }
    tb_stream_free(&st);
}

/* ---- Faults ------------------------------------------------------------ */

/* stall@2: token 2 is inside the second event (tokens 1-2), so that event
 * and all after it move by the stall; the first does not. */
static void fault_stall(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m+stall@2:0.2\",\"stream\":true}", &r);
    assert_true(r.terminated);
    assert_int_equal(r.nchunks, 6);
    assert_true(r.chunk_t[1] >= 0.010 && r.chunk_t[1] < 0.010 + SLACK);
    assert_true(r.chunk_t[2] >= 0.220);
    assert_true(r.chunk_t[3] >= 0.230 && r.chunk_t[3] < 0.230 + SLACK);
    reply_free(&r);
    /* Non-streamed: the body waits for the stall too. */
    post(v.port, "/v1/chat/completions", "{\"model\":\"m+stall@0:0.1\"}", &r);
    assert_int_equal(r.status, 200);
    assert_true(r.rt[0] >= 0.130);
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

static void fault_malformed(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char *ev[16];
    const char *full;
    size_t n;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m+malformed@1\",\"stream\":true}", &r);
    assert_true(r.terminated);
    n = sse_split(r.body, ev, 16);
    assert_int_equal(n, 6);
    assert_string_equal(ev[1], chat_chunk(1, "m+malformed@1", "{\"content\":\"Hi\"}", "null"));
    /* Token 1's event: the first half of the object it should have been. */
    full = chat_chunk(1, "m+malformed@1", "{\"content\":\" \\\"there\\\"\"}", "null");
    assert_int_equal(strlen(ev[2]), strlen(full) / 2);
    assert_int_equal(strncmp(ev[2], full, strlen(full) / 2), 0);
    /* The rest is whole. */
    assert_string_equal(ev[3], chat_chunk(1, "m+malformed@1", "{\"content\":\"\\n\"}", "null"));
    assert_string_equal(ev[5], "[DONE]");
    free_all(ev, n);
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

/* error@K not streamed: a 500 at the time of token K (the streamed case
 * is a row of the exchange table). */
static void fault_error(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m+error@3\"}", &r);
    assert_int_equal(r.status, 500);
    assert_has(r.body, "\"type\":\"server_error\"");
    assert_true(r.rt[0] >= 0.030);
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

static void fault_burst(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char *ev[16];
    size_t n;
    stream_short(&st); /* tokens 1, 2, 1 */
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions",
         "{\"model\":\"m+burst@2\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
         &r);
    n = sse_split(r.body, ev, 16);
    assert_int_equal(n, 6);
    /* "Hi" (1 token) waits for " \"there\"" (2 more); "\n" is the rest. */
    assert_string_equal(ev[1],
                        chat_chunk(1, "m+burst@2", "{\"content\":\"Hi \\\"there\\\"\"}", "null"));
    assert_string_equal(ev[2], chat_chunk(1, "m+burst@2", "{\"content\":\"\\n\"}", "null"));
    assert_has(ev[4], "\"completion_tokens\":4,");
    /* A group is due when its last event is. */
    assert_true(r.chunk_t[1] >= 0.020);
    free_all(ev, n);
    reply_free(&r);
    srv_stop(&v);
    assert_int_equal(v.st.events, 2);
    assert_int_equal(v.st.tokens, 4);
    tb_stream_free(&st);
}

static void fault_reasoning(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char *ev[16];
    size_t n;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions",
         "{\"model\":\"m+reasoning@2\",\"stream\":true,"
         "\"stream_options\":{\"include_usage\":true}}",
         &r);
    n = sse_split(r.body, ev, 16);
    assert_int_equal(n, 9);
    assert_string_equal(ev[1],
                        chat_chunk(1, "m+reasoning@2", "{\"reasoning_content\":\"Let\"}", "null"));
    assert_string_equal(ev[2],
                        chat_chunk(1, "m+reasoning@2", "{\"reasoning_content\":\" me\"}", "null"));
    assert_string_equal(ev[3], chat_chunk(1, "m+reasoning@2", "{\"content\":\"Hi\"}", "null"));
    /* Reasoning tokens count in usage, as real reasoning models do. */
    assert_has(ev[7], "\"completion_tokens\":6,");
    /* They come first without moving the stream's own times. */
    assert_true(r.chunk_t[3] >= 0.010);
    free_all(ev, n);
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

/* The server's faults and the model name's add up. */
static void faults_combine(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    stream_short(&st);
    srv_start(&v, &st, "crlf+burst@2", 0);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m+nodone+stall@0:0.1\",\"stream\":true}",
         &r);
    assert_true(r.terminated);
    assert_has(r.body, "\"delta\":{\"content\":\"Hi \\\"there\\\"\"}"); /* burst, server */
    assert_has(r.body, "}\r\n\r\ndata: ");                              /* crlf, server */
    assert_false(has(r.body, "[DONE]"));                                /* nodone, model */
    assert_true(r.chunk_t[1] >= 0.120);                                 /* stall, model */
    reply_free(&r);
    /* The server's faults still apply to a plain model name. */
    post(v.port, "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}", &r);
    assert_has(r.body, "data: [DONE]\r\n\r\n");
    reply_free(&r);
    /* A bad spec in the model name: 400 naming the item. */
    post(v.port, "/v1/chat/completions", "{\"model\":\"m+crlf+bogus@1\"}", &r);
    assert_int_equal(r.status, 400);
    assert_has(r.body, "fault \\\"bogus@1\\\": unknown fault");
    reply_free(&r);
    srv_stop(&v);
    tb_stream_free(&st);
}

/* ---- Load, stop, caps -------------------------------------------------- */

#define NCONC 200

static void concurrent_streams(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct pollfd pfd[NCONC];
    struct reply *r = calloc(NCONC, sizeof(*r));
    char *req = post_req("/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}");
    size_t open = NCONC;
    double t;
    assert_non_null(r);
    stream_even(&st, 10, 0.02); /* 10 events over 0.2 s */
    srv_start(&v, &st, NULL, 0);
    for (int i = 0; i < NCONC; i++) {
        pfd[i].fd = connect_to(v.port);
        pfd[i].events = POLLIN;
    }
    t = now_s();
    for (int i = 0; i < NCONC; i++)
        send_all(pfd[i].fd, req, strlen(req));
    while (open > 0) {
        int n = poll(pfd, NCONC, 10000);
        assert_true(n > 0);
        for (int i = 0; i < NCONC; i++) {
            if (pfd[i].fd < 0 || pfd[i].revents == 0)
                continue;
            if (read_some(pfd[i].fd, &r[i], t) <= 0) {
                close(pfd[i].fd);
                pfd[i].fd = -1;
                open--;
            }
        }
    }
    for (int i = 0; i < NCONC; i++) {
        char *ev[32];
        size_t n;
        reply_parse(&r[i]);
        assert_true(r[i].terminated);
        n = sse_split(r[i].body, ev, 32);
        assert_int_equal(n, 1 + 10 + 2);
        assert_has(ev[10], "\"content\":\" w9\"");
        assert_string_equal(ev[12], "[DONE]");
        /* Never early, for every stream. */
        for (size_t k = 0; k < 10; k++)
            assert_true(r[i].chunk_t[k + 1] >= 0.02 * (double)(k + 1));
        free_all(ev, n);
        reply_free(&r[i]);
    }
    srv_stop(&v);
    assert_int_equal(v.st.requests, NCONC);
    assert_int_equal(v.st.streams, NCONC);
    assert_int_equal(v.st.events, NCONC * 10);
    assert_int_equal(v.st.tokens, NCONC * 10);
    assert_int_equal(v.st.late_n, NCONC * 10);
    assert_int_equal(v.st.dropped, 0);
    print_message("    serve: %d streams x 10 events, lateness p50 %.0f us, p99 %.0f us, "
                  "max %.0f us\n",
                  NCONC, v.st.late_p50 * 1e6, v.st.late_p99 * 1e6, v.st.late_max * 1e6);
    free(req);
    free(r);
    tb_stream_free(&st);
}

struct stopper {
    struct tb_serve *s;
    double at;
};

static void *stop_later(void *arg)
{
    struct stopper *sp = arg;
    sleep_s(0.05);
    sp->at = now_s();
    tb_serve_stop(sp->s);
    return NULL;
}

/* tb_serve_stop from another thread ends the loop at once, with a stream
 * open that would run for 1000 s. */
static void stop_promptly(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    struct stopper sp;
    pthread_t th;
    char *req = post_req("/v1/chat/completions", "{\"model\":\"m+stall@0:1000\",\"stream\":true}");
    int fd;
    double t;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    fd = connect_to(v.port);
    memset(&r, 0, sizeof(r));
    t = now_s();
    send_all(fd, req, strlen(req));
    assert_true(read_some(fd, &r, t) > 0); /* the head and the role chunk */
    sp.s = v.s;
    assert_int_equal(pthread_create(&th, NULL, stop_later, &sp), 0);
    assert_int_equal(pthread_join(v.th, NULL), 0);
    t = now_s();
    assert_int_equal(pthread_join(th, NULL), 0); /* before reading sp.at */
    t -= sp.at;
    assert_int_equal(v.rc, 0);
    if (t > 0.5)
        fail_msg("tb_serve_run returned %.3f s after tb_serve_stop", t);
    /* The loop closed the stream on its way out. */
    while (read_some(fd, &r, t) > 0) {
    }
    assert_true(r.eof);
    close(fd);
    tb_serve_stats(v.s, &v.st);
    tb_serve_destroy(v.s);
    assert_int_equal(v.st.streams, 1);
    assert_int_equal(v.st.dropped, 0);
    reply_free(&r);
    free(req);
    tb_stream_free(&st);
}

/* A client that goes away mid-stream is noticed and counted. */
static void client_gone(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char *req = post_req("/v1/chat/completions", "{\"model\":\"m+stall@0:1000\",\"stream\":true}");
    int fd;
    stream_short(&st);
    srv_start(&v, &st, NULL, 0);
    fd = connect_to(v.port);
    memset(&r, 0, sizeof(r));
    send_all(fd, req, strlen(req));
    assert_true(read_some(fd, &r, now_s()) > 0);
    close(fd);
    sleep_s(0.1);
    /* The loop is still serving. */
    reply_free(&r);
    get(v.port, "/v1/models", &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    srv_stop(&v);
    assert_int_equal(v.st.dropped, 1);
    free(req);
    tb_stream_free(&st);
}

/* The memory budget (2 MiB here): clients each sending a request head of
 * 600 KiB that never ends hold at most the budget between them (plus 8
 * KiB a connection); past it, new ones get 503.  And non-streamed bodies
 * of 1.5 MiB that nobody reads: past the budget, 503 instead of a body.
 * The server's own counters say what it held. */
static void memory_budget_503(void **state)
{
    enum { NCLIENT = 8, HEAD = 600 * 1024 };
    (void)state;
    struct tb_stream st;
    struct srv v;
    char *head = malloc(HEAD);
    int fds[NCLIENT], refused = 0, waiting = 0;
    const size_t budget = 2u << 20;
    assert_non_null(head);
    /* A request line and then one header line that never ends. */
    memset(head, 'a', HEAD);
    memcpy(head, "POST /v1/chat/completions HTTP/1.1\r\nX-Long: ", 45);
    stream_short(&st);
    srv_budget = budget;
    srv_start(&v, &st, NULL, 0);
    for (int i = 0; i < NCLIENT; i++) {
        fds[i] = connect_to(v.port);
        send_all(fds[i], head, HEAD);
    }
    for (int i = 0; i < NCLIENT; i++) {
        struct pollfd pfd = {fds[i], POLLIN, 0};
        char buf[64] = "";
        if (poll(&pfd, 1, 1000) > 0 && recv(fds[i], buf, sizeof(buf) - 1, 0) > 0 &&
            strncmp(buf, "HTTP/1.1 503", 12) == 0)
            refused++;
        else
            waiting++;
        close(fds[i]);
    }
    /* A completion while the budget is free again: served. */
    {
        struct reply r;
        sleep_s(0.2);
        post(v.port, "/v1/chat/completions", "{\"model\":\"m\"}", &r);
        assert_int_equal(r.status, 200);
        reply_free(&r);
    }
    srv_stop(&v);
    print_message("memory budget %zu: peak %zu bytes held, %llu refused, %d waiting\n", budget,
                  v.st.mem_peak, (unsigned long long)v.st.refused, waiting);
    assert_true(refused >= 1 && waiting >= 1);
    assert_int_equal(v.st.refused, (uint64_t)refused);
    assert_true(v.st.mem_peak <= budget + NCLIENT * 8192);
    tb_stream_free(&st);
    free(head);
}

static void memory_budget_bodies(void **state)
{
    enum { NCLIENT = 6 };
    (void)state;
    struct tb_stream st;
    struct srv v;
    char *text = malloc(1u << 20), *req = post_req("/v1/chat/completions", "{\"model\":\"m\"}");
    int fds[NCLIENT], refused = 0, small = 4096;
    const size_t budget = 4u << 20;
    assert_non_null(text);
    memset(text, 'b', 1u << 20);
    tb_stream_init(&st);
    /* One body of about 1.5 MiB, due at once. */
    assert_int_equal(tb_stream_append(&st, 0.0, text, 1u << 20, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_stream_append(&st, 0.0, text, 1u << 19, 1, TB_KIND_CONTENT), 0);
    srv_budget = budget;
    srv_start(&v, &st, NULL, 0);
    for (int i = 0; i < NCLIENT; i++) {
        /* A small receive buffer, never read: the body stays with the server. */
        struct sockaddr_in a;
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)v.port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof(a)), 0);
        send_all(fds[i], req, strlen(req));
        sleep_s(0.1);
    }
    for (int i = 0; i < NCLIENT; i++) {
        char buf[64] = "";
        struct pollfd pfd = {fds[i], POLLIN, 0};
        if (poll(&pfd, 1, 1000) > 0 && recv(fds[i], buf, sizeof(buf) - 1, 0) > 0 &&
            strncmp(buf, "HTTP/1.1 503", 12) == 0)
            refused++;
        close(fds[i]);
    }
    srv_stop(&v);
    print_message("memory budget %zu: bodies: peak %zu bytes held, %llu refused\n", budget,
                  v.st.mem_peak, (unsigned long long)v.st.refused);
    assert_true(refused >= 1);
    assert_true(v.st.mem_peak <= budget + NCLIENT * 8192);
    tb_stream_free(&st);
    free(text);
    free(req);
}

/* A client reading a flood (a million reasoning deltas, all due at
 * once) as fast as it can, on its own thread. */
struct hog {
    int port;
    int stream; /* 0: a non-streamed body */
    atomic_int stop;
    unsigned long long bytes;
    pthread_t th;
};

static void *hog_main(void *arg)
{
    struct hog *h = arg;
    char *q = post_req("/v1/chat/completions",
                       h->stream ? "{\"model\":\"m+reasoning@1000000\",\"stream\":true}"
                                 : "{\"model\":\"m+reasoning@1000000\",\"stream\":false}");
    char *buf = malloc(1u << 16);
    int fd = connect_to(h->port);
    send_all(fd, q, strlen(q));
    while (buf != NULL && !atomic_load(&h->stop)) {
        ssize_t n = recv(fd, buf, 1u << 16, 0);
        if (n <= 0)
            break;
        h->bytes += (unsigned long long)n;
    }
    close(fd);
    free(buf);
    free(q);
    return NULL;
}

/* The first event's lateness (arrival minus its schedule, 0.2 s) of a
 * normal request. */
static double first_late(int port)
{
    struct reply r;
    double late;
    post(port, "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}", &r);
    assert_true(r.terminated && r.nchunks >= 2);
    late = r.chunk_t[1] - 0.2;
    reply_free(&r);
    return late;
}

/* Fairness: while hogs read a flood at full speed, a normal request's
 * first event keeps its time (each connection gets a bounded share of a
 * loop pass).  Before, the hog's whole backlog went out in one pass and a
 * normal TTFT of 0.20 s became 0.33-0.42 s. */
/* The first event's lateness beside n hogs (streamed or not). */
static double late_beside(int port, int n, int stream, unsigned long long *bytes)
{
    struct hog h[8];
    double late;
    memset(h, 0, sizeof(h));
    for (int i = 0; i < n; i++) {
        h[i].port = port;
        h[i].stream = stream;
        atomic_init(&h[i].stop, 0);
        assert_int_equal(pthread_create(&h[i].th, NULL, hog_main, &h[i]), 0);
    }
    /* Their million deltas each fall due over the next 0.2 s, faster than
     * any loop makes them: a backlog builds up. */
    sleep_s(0.05);
    late = first_late(port);
    for (int i = 0; i < n; i++) {
        atomic_store(&h[i].stop, 1);
        pthread_join(h[i].th, NULL);
        *bytes += h[i].bytes;
    }
    return late;
}

static void hog_does_not_delay_others(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    double alone, with, bodies;
    unsigned long long bytes = 0, body_bytes = 0;
    tb_stream_init(&st);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(
            tb_stream_append(&st, 0.2 + 0.01 * (double)i, "tok", 3, 1, TB_KIND_CONTENT), 0);
    srv_start(&v, &st, NULL, 0);
    alone = first_late(v.port);
    with = late_beside(v.port, 2, 1, &bytes);
    bodies = late_beside(v.port, 6, 0, &body_bytes);
    srv_stop(&v);
    print_message("first event late by %.1f ms alone, %.1f ms beside two streaming hogs (%.1f MB "
                  "read), %.1f ms beside six non-streamed ones\n",
                  alone * 1e3, with * 1e3, (double)bytes / 1e6, bodies * 1e3);
    assert_true(bytes > 1000000); /* they did read at full speed */
    if (!(with < 0.1 * TB_TEST_TIME_SCALE))
        fail_msg("beside two hogs the first event was %.1f ms late (alone %.1f ms)", with * 1e3,
                 alone * 1e3);
    if (!(bodies < 0.15 * TB_TEST_TIME_SCALE))
        fail_msg("beside six non-streamed hogs the first event was %.1f ms late (alone %.1f ms)",
                 bodies * 1e3, alone * 1e3);
    tb_stream_free(&st);
}

/* A client that stops reading is dropped at the output cap, and the loop
 * keeps serving others meanwhile. */
static void slow_client_dropped(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    char *req = post_req("/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}");
    size_t ev_len = 512 * 1024, nev = 24;
    char *text = malloc(ev_len);
    int fd, small = 4096;
    assert_non_null(text);
    memset(text, 'a', ev_len);
    tb_stream_init(&st);
    for (size_t i = 0; i < nev; i++) /* 12 MiB, all due at once */
        assert_int_equal(tb_stream_append(&st, 0.0, text, ev_len, 1, TB_KIND_CONTENT), 0);
    srv_start(&v, &st, NULL, 0);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    {
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)v.port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    }
    send_all(fd, req, strlen(req));
    sleep_s(0.2); /* never read */
    get(v.port, "/v1/models", &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    close(fd);
    srv_stop(&v);
    assert_int_equal(v.st.dropped, 1);
    assert_true(v.st.events < nev);
    free(req);
    free(text);
    tb_stream_free(&st);
}

/* One response larger than the output cap still goes out whole when
 * nothing else is waiting: the cap is for clients that stop reading. */
static void big_body_not_dropped(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r;
    size_t ev_len = 1u << 20, nev = 6;
    char *text = malloc(ev_len);
    assert_non_null(text);
    memset(text, 'b', ev_len);
    tb_stream_init(&st);
    for (size_t i = 0; i < nev; i++)
        assert_int_equal(tb_stream_append(&st, 0.001 * (double)i, text, ev_len, 1, TB_KIND_CONTENT),
                         0);
    srv_start(&v, &st, NULL, 0);
    post(v.port, "/v1/chat/completions", "{\"model\":\"m\"}", &r);
    assert_int_equal(r.status, 200);
    assert_true(r.body_len > nev * ev_len);
    assert_true(r.body_len > TB_SERVE_OUTBUF_MAX);
    assert_has(r.body, "\"completion_tokens\":6,");
    reply_free(&r);
    srv_stop(&v);
    assert_int_equal(v.st.dropped, 0);
    free(text);
    tb_stream_free(&st);
}

static void max_conns_refused(void **state)
{
    (void)state;
    struct tb_stream st;
    struct srv v;
    struct reply r, r2;
    char *req = post_req("/v1/chat/completions", "{\"model\":\"m+stall@0:1000\",\"stream\":true}");
    int fd;
    stream_short(&st);
    srv_start(&v, &st, NULL, 1);
    fd = connect_to(v.port);
    memset(&r, 0, sizeof(r));
    send_all(fd, req, strlen(req));
    assert_true(read_some(fd, &r, now_s()) > 0); /* holds the one slot */
    /* A second connection is accepted and closed: no bytes, just EOF (or
     * a reset, if our request crossed the close). */
    get(v.port, "/v1/models", &r2);
    assert_int_equal(r2.len, 0);
    reply_free(&r2);
    close(fd);
    sleep_s(0.1);
    /* The slot is free again. */
    get(v.port, "/v1/models", &r2);
    assert_int_equal(r2.status, 200);
    reply_free(&r2);
    srv_stop(&v);
    assert_int_equal(v.st.dropped, 2); /* the refused one, and the stream we left */
    reply_free(&r);
    free(req);
    tb_stream_free(&st);
}

static void create_errors(void **state)
{
    (void)state;
    struct tb_stream st;
    struct tb_serve_opts o;
    struct tb_serve *s = NULL;
    struct srv v;
    char err[256];
    stream_short(&st);
    memset(&o, 0, sizeof(o));
    o.stream = &st;
    tb_faults_init(&o.faults);
    o.host = "localhost"; /* numeric only */
    assert_int_equal(tb_serve_create(&o, &s, err, sizeof(err)), TB_EINVAL);
    assert_null(s);
    assert_has(err, "localhost");
    o.host = NULL;
    o.port = 70000;
    assert_int_equal(tb_serve_create(&o, &s, err, sizeof(err)), TB_EINVAL);
    o.port = 0;
    o.stream = NULL;
    assert_int_equal(tb_serve_create(&o, &s, err, sizeof(err)), TB_EINVAL);
    /* A port in use: TB_EIO with the reason. */
    srv_start(&v, &st, NULL, 0);
    o.stream = &st;
    o.port = v.port;
    assert_int_equal(tb_serve_create(&o, &s, err, sizeof(err)), TB_EIO);
    assert_has(err, "bind");
    srv_stop(&v);
    tb_serve_destroy(NULL);
    tb_stream_free(&st);
}

int tb_test_serve(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(faults_parse_ok),
        cmocka_unit_test(faults_parse_errors),
        cmocka_unit_test(stream_exact_bytes),
        cmocka_unit_test(stream_timing),
        cmocka_unit_test(max_tokens_cut),
        cmocka_unit_test(nonstream_chat),
        cmocka_unit_test(legacy_completions),
        cmocka_unit_test(reasoning_events),
        cmocka_unit_test(escape_matches_cjson),
        cmocka_unit_test(escape_by_hand),
        cmocka_unit_test(models_list),
        cmocka_unit_test(exchange_table),
        cmocka_unit_test(bad_requests),
        cmocka_unit_test(expect_continue),
        cmocka_unit_test(too_large_413),
        cmocka_unit_test(fault_stall),
        cmocka_unit_test(fault_malformed),
        cmocka_unit_test(fault_error),
        cmocka_unit_test(fault_burst),
        cmocka_unit_test(fault_reasoning),
        cmocka_unit_test(faults_combine),
        cmocka_unit_test(concurrent_streams),
        cmocka_unit_test(stop_promptly),
        cmocka_unit_test(client_gone),
        cmocka_unit_test(memory_budget_503),
        cmocka_unit_test(memory_budget_bodies),
        cmocka_unit_test(hog_does_not_delay_others),
        cmocka_unit_test(slow_client_dropped),
        cmocka_unit_test(big_body_not_dropped),
        cmocka_unit_test(max_conns_refused),
        cmocka_unit_test(create_errors),
    };
    return TB_RUN_GROUP("serve", tests);
}
