/*
 * serve.c - the mock OpenAI-compatible provider's event loop (see serve.h).
 *
 * One thread, one epoll set: the listening socket, a timerfd, an eventfd
 * for tb_serve_stop, and every connection.  A connection has at most one
 * deadline at a time (its read timeout, its next event, its non-streamed
 * body, the end of its linger), and the deadlines live in a binary
 * min-heap of connections: the next one is the top, and rescheduling a
 * connection is O(log n), about 14 comparisons at ten thousand streams.
 * The timerfd (CLOCK_MONOTONIC, absolute, nanoseconds) is re-armed only
 * when the heap's top changes, and after it fired (re-arming clears it,
 * so it is never read); epoll_wait's millisecond timeout is never used
 * for timing.  While the loop runs, its thread's timer slack is set
 * to 1 ns (and restored after), or the kernel may fire the timer up to
 * 50 us late to batch wake-ups.
 *
 * A connection's life:
 *   READ    the request (head + Content-Length body, together capped at
 *           TB_SERVE_REQUEST_MAX); T is when its last byte was read
 *   STREAM  SSE events at T + t_k (serve_plan.c says what and when)
 *   WAIT    a non-streamed body, sent when its last token is due
 *   FLUSH   the response is complete; its bytes are draining
 *   LINGER  write side shut; reading to the client's EOF, so request bytes
 *           we never read do not turn our close into a reset that
 *           destroys the response in flight
 * Output is buffered per connection and sent without blocking
 * (MSG_NOSIGNAL: a vanished client is an error code, not a SIGPIPE).  A
 * client that stops reading is dropped once its unsent bytes would pass
 * TB_SERVE_OUTBUF_MAX; one item larger than the cap is still queued when
 * nothing else waits, so a big body is not mistaken for a stuck client.
 * EOF from a client whose response is unfinished means it has gone (a
 * client that half-closes after sending its request looks the same).
 *
 * Lateness is write time minus schedule, read once per batch of due
 * events when they are handed to send(): bytes that then wait in our
 * buffer for a slow client are not counted.  It goes into a histogram of
 * 10 us buckets up to 1 s plus one overflow bucket (800 KB, allocated
 * once), so memory does not grow with traffic and percentiles are exact
 * to 10 us.
 */
#define _GNU_SOURCE /* accept4 */
#include "ttsbuf/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "serve_chunk.h"
#include "serve_http.h"
#include "serve_json.h"
#include "serve_plan.h"
#include "ttsbuf/error.h"

#define NS 1000000000LL
#define NEVER INT64_MAX
#define ARM_STALE INT64_MIN /* no deadline equals it: arm() re-arms */
#define NO_HEAP ((size_t)-1)
#define LATE_BUCKET_NS 10000LL     /* 10 us */
#define LATE_BUCKETS 100000        /* up to 1 s, then one overflow bucket */
#define READ_TIMEOUT_NS (30 * NS)  /* to send a whole request */
#define FLUSH_TIMEOUT_NS (30 * NS) /* without reading any of a finished response */
#define LINGER_NS (2 * NS)
#define ACCEPT_RETRY_NS (NS / 10) /* after running out of descriptors */
#define EPOLL_BATCH 256
#define ACCEPT_BATCH 64
#define IN_FIRST 4096
#define SEND_EARLY (64u << 10) /* send mid-batch once this much is queued */
#define PASS_BYTES (64u << 10) /* a connection's share of one loop pass */
#define PASS_ITEMS 16384       /* ... of items walked without output */
#define MAX_CONNS_DEFAULT 4096
#define BUF_FREE 4096 /* bytes a buffer may hold outside the memory budget */

enum cstate { C_READ, C_STREAM, C_WAIT, C_FLUSH, C_LINGER };
enum ending { END_BODY, END_DROP, END_ERROR }; /* how a non-streamed response ends */

/* A growing text; its capacity counts against the memory budget. */
struct sbuf {
    char *p;
    size_t len, cap;
};

struct conn {
    struct tb_serve *s; /* its server (the memory budget) */
    int fd;
    enum cstate st;
    uint32_t events; /* registered with epoll */
    size_t hidx;     /* position in the heap, or NO_HEAP */
    int64_t due;     /* CLOCK_MONOTONIC ns */
    struct conn *prev, *next;

    /* Request. */
    char *in;
    size_t in_len, in_cap, scan, need;
    int have_head;
    struct tb_serve_http_head head; /* offsets into in */

    /* Response. */
    int64_t t0; /* T */
    struct tb_serve_json_req rq;
    struct tb_serve_json_ctx ctx;
    struct tb_serve_chunk chunk; /* a streamed event's fixed bytes */
    struct tb_faults f;
    struct tb_serve_plan plan;
    struct tb_serve_item item; /* the next item, when have_item */
    int have_item;
    uint64_t sent_tokens;
    enum ending ending;
    int body_malformed;
    int block;                   /* anthropic: the open content block, -1 none */
    int block_reasoning;         /* ... and whether it is a thinking block */
    int64_t first_due, last_due; /* ollama: due times of the first and last items */
    /* A non-streamed body, gathered over loop passes (body_send). */
    struct tb_serve_plan walk; /* a copy of the plan, walked to find the end */
    int walking;
    int64_t body_due; /* when the body is due, after the request */
    struct sbuf content, reasoning;
    uint64_t body_tokens, body_events;

    /* Output. */
    char *out;
    size_t out_off, out_len, out_cap;
    int final;      /* close once out drains */
    int hard_close; /* ... at once, without lingering (drop@K) */
    int broken;     /* an output step failed: drop the connection */
    int yielded;    /* its share of a pass ran out: due again at once */
};

/* A heap entry keeps its key beside the pointer: sifting through a
 * thousand connections then compares within one small array instead of
 * chasing a pointer (a likely cache miss) per comparison. */
struct hent {
    int64_t due;
    struct conn *c;
};

struct tb_serve {
    const struct tb_stream *stream;
    struct tb_faults faults;
    size_t max_conns;
    int lfd, epfd, tfd, efd, port;
    int accept_paused;
    int64_t accept_retry;
    int64_t armed; /* the timerfd's deadline, NEVER when disarmed */
    struct hent *heap;
    size_t nheap, capheap, nconns;
    struct conn *conns; /* every open connection */
    uint64_t next_id;
    char *text; /* an item's text */
    size_t text_cap;
    size_t budget;  /* bytes of request and output buffers, over all connections */
    size_t mem;     /* ... held now (buffer capacities) */
    uint64_t *late; /* LATE_BUCKETS + 1 counts */
    int64_t late_max;
    struct tb_serve_stats st;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

/* ---- The deadline heap ------------------------------------------------ */

static void heap_put(struct tb_serve *s, size_t i, struct hent e)
{
    s->heap[i] = e;
    e.c->hidx = i;
}

static void heap_up(struct tb_serve *s, size_t i)
{
    struct hent e = s->heap[i];
    while (i > 0 && s->heap[(i - 1) / 2].due > e.due) {
        heap_put(s, i, s->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_put(s, i, e);
}

static void heap_down(struct tb_serve *s, size_t i)
{
    struct hent e = s->heap[i];
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= s->nheap)
            break;
        if (k + 1 < s->nheap && s->heap[k + 1].due < s->heap[k].due)
            k++;
        if (s->heap[k].due >= e.due)
            break;
        heap_put(s, i, s->heap[k]);
        i = k;
    }
    heap_put(s, i, e);
}

static void unschedule(struct tb_serve *s, struct conn *c)
{
    size_t i = c->hidx;
    if (i == NO_HEAP)
        return;
    c->hidx = NO_HEAP;
    if (i == --s->nheap)
        return;
    /* Move the last entry into the hole; it may belong above or below. */
    struct conn *moved = s->heap[s->nheap].c;
    heap_put(s, i, s->heap[s->nheap]);
    heap_up(s, i);
    heap_down(s, moved->hidx);
}

/* Sets c's deadline.  Fails (TB_ENOMEM) only when the heap cannot grow. */
static int schedule(struct tb_serve *s, struct conn *c, int64_t due)
{
    struct hent e = {due, c};
    c->due = due;
    if (c->hidx != NO_HEAP) {
        s->heap[c->hidx].due = due;
        heap_up(s, c->hidx);
        heap_down(s, c->hidx);
        return 0;
    }
    if (s->nheap == s->capheap) {
        struct hent *h = tb_grow(s->heap, &s->capheap, sizeof(*h), 64);
        if (h == NULL)
            return TB_ENOMEM;
        s->heap = h;
    }
    heap_put(s, s->nheap, e);
    s->nheap++;
    heap_up(s, s->nheap - 1);
    return 0;
}

/* Arms the timerfd at the earliest deadline, if that changed. */
static int arm(struct tb_serve *s)
{
    int64_t d = s->nheap > 0 ? s->heap[0].due : NEVER;
    struct itimerspec its;
    if (s->accept_paused && s->accept_retry < d)
        d = s->accept_retry;
    if (d == s->armed)
        return 0;
    memset(&its, 0, sizeof(its));
    if (d != NEVER) {
        if (d < 1)
            d = 1; /* all zero would disarm */
        its.it_value.tv_sec = (time_t)(d / NS);
        its.it_value.tv_nsec = (long)(d % NS);
    }
    if (timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
        return TB_EIO;
    s->armed = d;
    return 0;
}

/* ---- Statistics ------------------------------------------------------- */

static void late_record(struct tb_serve *s, int64_t late)
{
    int64_t b = late / LATE_BUCKET_NS;
    if (late < 0)
        late = b = 0;
    s->late[b < LATE_BUCKETS ? b : LATE_BUCKETS]++;
    if (late > s->late_max)
        s->late_max = late;
    s->st.late_n++;
}

/* The q-quantile: the top of the bucket holding it, never above the max. */
static double late_quantile(const struct tb_serve *s, double q)
{
    double want = q * (double)s->st.late_n;
    uint64_t rank = (uint64_t)want, cum = 0;
    double max = (double)s->late_max / NS;
    if ((double)rank < want || rank < 1)
        rank++; /* the nearest-rank definition: ceil(q * n), at least 1 */
    for (size_t b = 0; b < LATE_BUCKETS; b++) {
        cum += s->late[b];
        if (cum >= rank) {
            double top = (double)((int64_t)(b + 1) * LATE_BUCKET_NS) / NS;
            return top < max ? top : max;
        }
    }
    return max;
}

/* ---- Connections and output ------------------------------------------- */

static int conn_close(struct tb_serve *s, struct conn *c, int dropped);
static int busy(struct tb_serve *s, struct conn *c);

static int watch(struct tb_serve *s, struct conn *c, uint32_t want)
{
    struct epoll_event ev;
    want |= EPOLLIN | EPOLLRDHUP;
    if (want == c->events)
        return 0;
    memset(&ev, 0, sizeof(ev));
    ev.events = want;
    ev.data.ptr = c;
    if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
        return TB_EIO;
    c->events = want;
    return 0;
}

/*
 * The memory budget.  Every connection's request and output buffers are
 * counted by their capacity; a buffer may always grow to BUF_FREE bytes
 * (room for a request head of ordinary size, or an error response), so
 * a refusal can still be sent; past that, growth must fit the budget.
 * Returns 0 and the buffer resized to cap (> 0) bytes, 1 when the budget
 * has no room, -1 when memory ran out.
 */
static int buf_resize(struct tb_serve *s, char **p, size_t *have, size_t cap)
{
    char *nb;
    if (cap > *have && cap > BUF_FREE && s->mem - *have + cap > s->budget)
        return 1;
    if ((nb = realloc(*p, cap)) == NULL)
        return -1;
    s->mem = s->mem - *have + cap;
    if (s->mem > s->st.mem_peak)
        s->st.mem_peak = s->mem;
    *p = nb;
    *have = cap;
    return 0;
}

/* Frees a buffer buf_resize made. */
static void buf_free(struct tb_serve *s, char **p, size_t *have)
{
    free(*p);
    *p = NULL;
    s->mem -= *have;
    *have = 0;
}

/* Frees c's request buffer (copied out, or no longer needed). */
static void in_free(struct conn *c)
{
    buf_free(c->s, &c->in, &c->in_cap);
    c->in_len = 0;
}

/* Appends; 0, 1 over the memory budget, -1 out of memory. */
static int sbuf_put(struct tb_serve *s, struct sbuf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap < 256 ? 256 : b->cap;
        int rc;
        while (cap < b->len + n + 1)
            cap *= 2;
        rc = buf_resize(s, &b->p, &b->cap, cap);
        if (rc != 0)
            return rc;
    }
    if (b->p == NULL)
        return -1; /* cannot happen (cap > len): for the analyzer */
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static void sbuf_free(struct tb_serve *s, struct sbuf *b)
{
    buf_free(s, &b->p, &b->cap);
    b->len = 0;
}

/* Makes room for n more output bytes (one whole piece of output, so the
 * cap sees it at once); on failure marks c broken and returns -1. */
static int out_room(struct conn *c, size_t n)
{
    size_t pending = c->out_len - c->out_off;
    if (c->broken)
        return -1;
    if (pending > 0 && pending + n > TB_SERVE_OUTBUF_MAX) {
        c->broken = 1; /* the client is not keeping up */
        return -1;
    }
    if (c->out_len + n > c->out_cap && c->out_off > 0) {
        /* Compact only when out of room: a slow client's backlog is moved
         * once per buffer-full, not once per event. */
        memmove(c->out, c->out + c->out_off, pending);
        c->out_off = 0;
        c->out_len = pending;
    }
    if (c->out_len + n > c->out_cap) {
        size_t cap = c->out_cap < 4096 ? 4096 : c->out_cap;
        int rc;
        while (cap < c->out_len + n)
            cap *= 2;
        rc = buf_resize(c->s, &c->out, &c->out_cap, cap);
        if (rc != 0) {
            /* Over the budget: a client this far behind is dropped, as
             * at its own cap, so the others keep their memory. */
            c->s->st.over_budget += rc > 0;
            c->broken = 1;
            return -1;
        }
    }
    return 0;
}

/* Appends into room out_room made. */
static void out_add(struct conn *c, const char *p, size_t n)
{
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
}

static void out_put(struct conn *c, const char *p, size_t n)
{
    if (out_room(c, n) == 0)
        out_add(c, p, n);
}

/* The chunk-size line of an HTTP chunk of `body` bytes, with room made for
 * them (plus `extra`, plus the chunk's closing CRLF).  0, or -1 when the
 * output step failed. */
static int chunk_open(struct conn *c, size_t body, size_t extra)
{
    char hex[2 * sizeof(size_t) + 2];
    size_t hl = sizeof(hex);
    hex[--hl] = '\n';
    hex[--hl] = '\r';
    for (size_t v = body;; v >>= 4) { /* the chunk size in lower-case hex */
        hex[--hl] = "0123456789abcdef"[v & 15];
        if (v < 16)
            break;
    }
    if (out_room(c, sizeof(hex) - hl + body + extra + 2) != 0)
        return -1;
    out_add(c, hex + hl, sizeof(hex) - hl);
    return 0;
}

/*
 * One SSE event (comment line, optional event: line, data line, blank
 * line) in one HTTP chunk,
 * framed in place: sse_open writes the chunk size line and everything
 * before the data, and returns where len data bytes go (with room for
 * `room` >= len of them, so a malformed@K event can be made whole and then
 * cut); the caller writes them, and sse_close ends the event.  NULL when
 * the output step failed (c is broken then).
 */
static char *sse_open(struct conn *c, const char *type, size_t len, size_t room)
{
    const char *eol = c->f.crlf ? "\r\n" : "\n";
    size_t el = c->f.crlf ? 2 : 1, tl = type != NULL ? strlen(type) : 0;
    size_t body =
        (c->f.comments ? 12 + el : 0) + (type != NULL ? 7 + tl + el : 0) + 6 + len + 2 * el;
    char *data;

    if (chunk_open(c, body, room - len) != 0)
        return NULL;
    if (c->f.comments) {
        out_add(c, ": keep-alive", 12);
        out_add(c, eol, el);
    }
    if (type != NULL) {
        out_add(c, "event: ", 7);
        out_add(c, type, tl);
        out_add(c, eol, el);
    }
    out_add(c, "data: ", 6);
    data = c->out + c->out_len;
    c->out_len += len;
    return data;
}

static void sse_close(struct conn *c)
{
    if (c->f.crlf)
        out_add(c, "\r\n\r\n\r\n", 6);
    else
        out_add(c, "\n\n\r\n", 4);
}

static void sse_event(struct conn *c, const char *type, const char *data, size_t len)
{
    char *p = sse_open(c, type, len, len);
    if (p == NULL)
        return;
    memcpy(p, data, len);
    sse_close(c);
}

/* One NDJSON line (Ollama) in one HTTP chunk: data[0..len), then the line
 * end (CRLF with the crlf fault). */
static void ndjson_line(struct conn *c, const char *data, size_t len)
{
    size_t el = c->f.crlf ? 2 : 1;
    if (chunk_open(c, len + el, 0) != 0)
        return;
    out_add(c, data, len);
    out_add(c, c->f.crlf ? "\r\n\r\n" : "\n\r\n", el + 2);
}

/*
 * Sends what is buffered.  Once a final response has drained, shuts the
 * write side and lingers (or closes at once for drop@K).  Returns 0, or
 * -1 when c was closed (the caller must not touch it again).
 */
static int flush(struct tb_serve *s, struct conn *c)
{
    int progress = 0;
    if (c->broken)
        return conn_close(s, c, 1);
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            progress = 1;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (watch(s, c, EPOLLOUT) != 0)
                return conn_close(s, c, 1);
            /* A finished response gives a stuck client FLUSH_TIMEOUT_NS
             * from its last progress. */
            if (c->st == C_FLUSH && (progress || c->hidx == NO_HEAP) &&
                schedule(s, c, mono_ns() + FLUSH_TIMEOUT_NS) != 0)
                return conn_close(s, c, 1);
            return 0;
        }
        return conn_close(s, c, 1); /* EPIPE, ECONNRESET: the client is gone */
    }
    c->out_off = c->out_len = 0;
    if (watch(s, c, 0) != 0)
        return conn_close(s, c, 1);
    if (!c->final)
        return 0;
    if (c->hard_close)
        return conn_close(s, c, 0);
    shutdown(c->fd, SHUT_WR);
    c->st = C_LINGER;
    if (schedule(s, c, mono_ns() + LINGER_NS) != 0)
        return conn_close(s, c, 0);
    return 0;
}

/* The response is all in the buffer: send it and end the connection. */
static int finish(struct tb_serve *s, struct conn *c)
{
    in_free(c); /* up to TB_SERVE_REQUEST_MAX, no longer needed */
    c->final = 1;
    c->st = C_FLUSH;
    unschedule(s, c);
    return flush(s, c);
}

static int respond(struct tb_serve *s, struct conn *c, int status, const char *ctype,
                   const char *body, size_t len, const char *extra)
{
    char head[512];
    size_t hl = tb_serve_http_resp(head, sizeof(head), status, ctype, (long long)len, extra);
    if (hl + len > BUF_FREE && s->mem + hl + len > s->budget)
        return busy(s, c); /* a big body over the budget: refused, not cut */
    if (out_room(c, hl + len) == 0) {
        out_add(c, head, hl);
        out_add(c, body, len);
    }
    s->st.requests++;
    return finish(s, c);
}

/* Anthropic's error type for an HTTP status (its API reference's table). */
static const char *anth_type(int status)
{
    switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
    }
}

static int respond_error(struct tb_serve *s, struct conn *c, int status, const char *msg,
                         const char *type, const char *code, const char *extra)
{
    /* Each dialect's own error shape, once the route is known. */
    char *body = c->ctx.api == TB_API_ANTHROPIC
                     ? tb_serve_json_anth_error(anth_type(status), msg)
                 : c->ctx.api == TB_API_OLLAMA ? tb_serve_json_ollama_error(msg)
                                                     : tb_serve_json_error(msg, type, code);
    int rc;
    if (body == NULL)
        return conn_close(s, c, 1);
    rc = respond(s, c, status, "application/json", body, strlen(body), extra);
    tb_serve_json_free(body);
    return rc;
}

static int conn_close(struct tb_serve *s, struct conn *c, int dropped)
{
    if (dropped)
        s->st.dropped++;
    unschedule(s, c);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    /* Leave the epoll set explicitly: close() alone does not while another
     * process shares the descriptor (a fork() by another thread, between
     * fork and exec), and a later event would then carry a freed c. */
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    in_free(c);
    buf_free(s, &c->out, &c->out_cap);
    sbuf_free(s, &c->content);
    sbuf_free(s, &c->reasoning);
    tb_serve_json_request_free(&c->rq);
    tb_serve_chunk_free(&c->chunk);
    free(c);
    s->nconns--;
    return -1;
}

/* ---- Streaming -------------------------------------------------------- */

static void emit_part(struct conn *c, enum tb_serve_json_part part, const char *text)
{
    char *json = tb_serve_json_chunk(&c->ctx, part, text, c->rq.prompt_tokens, c->sent_tokens);
    if (json == NULL) {
        c->broken = 1;
        return;
    }
    sse_event(c, NULL, json, strlen(json));
    tb_serve_json_free(json);
}

/* A token event: its chunk is rendered straight into the output buffer
 * (serve_chunk.c), with no allocation or copy on the way. */
static void emit_item(struct tb_serve *s, struct conn *c, const struct tb_serve_item *it,
                      int64_t late)
{
    size_t len = tb_serve_chunk_len(&c->chunk, &c->plan, it);
    size_t cut = it->malformed ? len / 2 : len; /* malformed@K: cut mid-object */
    char *p = sse_open(c, NULL, cut, len);
    if (p == NULL)
        return;
    tb_serve_chunk_write(&c->chunk, &c->plan, it, p);
    sse_close(c);
    c->sent_tokens += it->ntok;
    s->st.events++;
    s->st.tokens += it->ntok;
    late_record(s, late);
}

/* ---- Anthropic and Ollama streams ------------------------------------- */

static int dialect(const struct conn *c)
{
    return c->ctx.api == TB_API_ANTHROPIC || c->ctx.api == TB_API_OLLAMA;
}

/* A rendered piece (freed here) as an Anthropic event or an Ollama line;
 * malformed: cut mid-object (malformed@K). */
static void emit_json(struct conn *c, const char *type, char *json, int malformed)
{
    size_t len;
    if (json == NULL) {
        c->broken = 1;
        return;
    }
    len = strlen(json);
    if (malformed)
        len /= 2;
    if (c->ctx.api == TB_API_OLLAMA)
        ndjson_line(c, json, len);
    else
        sse_event(c, type, json, len);
    tb_serve_json_free(json);
}

static void anth_event(struct conn *c, enum tb_serve_anth ev, const char *text, int malformed)
{
    emit_json(c, tb_serve_json_anth_name(ev),
              tb_serve_json_anth(&c->ctx, ev, c->block, c->block_reasoning, text,
                                 c->rq.prompt_tokens, c->sent_tokens),
              malformed);
}

/* A token item: an Anthropic content_block_delta (opening a thinking or
 * text block when the kind changes), or an Ollama line. */
static void dialect_item(struct tb_serve *s, struct conn *c, const struct tb_serve_item *it,
                         int64_t late)
{
    int reasoning = it->kind == TB_KIND_REASONING;
    size_t n = tb_serve_plan_text(&c->plan, it, &s->text, &s->text_cap);
    if (n == (size_t)-1) {
        c->broken = 1;
        return;
    }
    if (c->ctx.api == TB_API_ANTHROPIC) {
        if (c->block < 0 || c->block_reasoning != reasoning) {
            if (c->block >= 0)
                anth_event(c, TB_SERVE_ANTH_BLOCK_STOP, NULL, 0);
            c->block++;
            c->block_reasoning = reasoning;
            anth_event(c, TB_SERVE_ANTH_BLOCK_START, NULL, 0);
        }
        anth_event(c, TB_SERVE_ANTH_DELTA, s->text, it->malformed);
    } else {
        emit_json(c, NULL,
                  tb_serve_json_ollama(&c->ctx, reasoning ? "" : s->text,
                                       reasoning ? s->text : NULL, NULL),
                  it->malformed);
    }
    if (c->first_due < 0)
        c->first_due = it->due;
    c->last_due = it->due;
    c->sent_tokens += it->ntok;
    s->st.events++;
    s->st.tokens += it->ntok;
    late_record(s, late);
}

/* Anthropic: close the block, message_delta, message_stop; Ollama: the
 * final line with the server's durations.  Then the chunked body's end. */
static void dialect_end(struct conn *c)
{
    if (c->ctx.api == TB_API_ANTHROPIC) {
        if (c->block >= 0)
            anth_event(c, TB_SERVE_ANTH_BLOCK_STOP, NULL, 0);
        anth_event(c, TB_SERVE_ANTH_MSG_DELTA, c->plan.cut ? "max_tokens" : "end_turn", 0);
        if (!c->f.nodone)
            anth_event(c, TB_SERVE_ANTH_STOP, NULL, 0);
    } else if (!c->f.nodone) {
        int64_t first = c->first_due < 0 ? 0 : c->first_due;
        struct tb_serve_ollama_end e = {c->plan.cut ? "length" : "stop",
                                        c->rq.prompt_tokens,
                                        c->sent_tokens,
                                        mono_ns() - c->t0,
                                        first,
                                        c->first_due < 0 ? 0 : c->last_due - first};
        emit_json(c, NULL, tb_serve_json_ollama(&c->ctx, "", NULL, &e), 0);
    }
    out_put(c, "0\r\n\r\n", 5);
}

/* Finish chunk, usage, [DONE], end of the chunked body. */
static void stream_end(struct conn *c)
{
    if (dialect(c)) {
        dialect_end(c);
        return;
    }
    emit_part(c, TB_SERVE_PART_FINISH, c->plan.cut ? "length" : "stop");
    if (c->rq.include_usage)
        emit_part(c, TB_SERVE_PART_USAGE, NULL);
    if (!c->f.nodone)
        sse_event(c, NULL, "[DONE]", 6);
    out_put(c, "0\r\n\r\n", 5);
}

/* Sends the items that are due, then waits for the next one.  A
 * connection makes at most PASS_BYTES of events per call: past that it
 * yields, due again at once but behind every connection already due, so
 * a client reading a flood at full speed gets its share of the loop and
 * no more (run_due). */
static int advance(struct tb_serve *s, struct conn *c)
{
    int64_t now = mono_ns();
    size_t made = 0;
    c->yielded = 0;
    for (;;) {
        struct tb_serve_item *it = &c->item;
        int64_t due;
        if (c->broken)
            return flush(s, c);
        if (!c->have_item) {
            if (!tb_serve_plan_next(&c->plan, it)) {
                stream_end(c);
                return finish(s, c);
            }
            c->have_item = 1;
        }
        due = c->t0 + it->due;
        if (due > now) {
            if (schedule(s, c, due) != 0)
                return conn_close(s, c, 1);
            return flush(s, c);
        }
        c->have_item = 0;
        if (it->drop) {
            c->hard_close = 1;
            return finish(s, c);
        }
        if (it->error && dialect(c)) {
            const char *msg = "Internal server error (ttsbuf fault error@K)";
            emit_json(c, "error",
                      c->ctx.api == TB_API_ANTHROPIC
                          ? tb_serve_json_anth_error("api_error", msg)
                          : tb_serve_json_ollama_error(msg),
                      0);
            out_put(c, "0\r\n\r\n", 5);
            return finish(s, c);
        }
        if (it->error) {
            char *json = tb_serve_json_error(
                "The server had an error while processing your request. Sorry about that!",
                "server_error", NULL);
            if (json == NULL)
                return conn_close(s, c, 1);
            sse_event(c, NULL, json, strlen(json));
            tb_serve_json_free(json);
            out_put(c, "0\r\n\r\n", 5);
            return finish(s, c);
        }
        {
            size_t before = c->out_len;
            if (dialect(c))
                dialect_item(s, c, it, now - due);
            else
                emit_item(s, c, it, now - due);
            made += c->out_len >= before ? c->out_len - before : c->out_len;
        }
        /* A long run of due events goes out as it is made, so the kernel's
         * buffer takes it rather than ours. */
        if (c->out_len - c->out_off >= SEND_EARLY && flush(s, c) != 0)
            return -1;
        if (made >= PASS_BYTES && !c->broken) {
            c->yielded = 1;
            if (schedule(s, c, mono_ns()) != 0)
                return conn_close(s, c, 1);
            return flush(s, c);
        }
    }
}

static int stream_start(struct tb_serve *s, struct conn *c)
{
    char head[256];
    size_t hl = tb_serve_http_resp(head, sizeof(head), 200,
                                   c->ctx.api == TB_API_OLLAMA ? "application/x-ndjson"
                                                                     : "text/event-stream",
                                   -1, "Cache-Control: no-cache\r\n");
    out_put(c, head, hl);
    if (!dialect(c) && tb_serve_chunk_init(&c->chunk, &c->ctx) != 0)
        return conn_close(s, c, 1);
    s->st.requests++;
    s->st.streams++;
    c->st = C_STREAM;
    c->block = -1;
    c->first_due = -1;
    if (c->ctx.api == TB_API_CHAT)
        emit_part(c, TB_SERVE_PART_ROLE, "");
    if (c->ctx.api == TB_API_ANTHROPIC) {
        anth_event(c, TB_SERVE_ANTH_START, NULL, 0);
        anth_event(c, TB_SERVE_ANTH_PING, NULL, 0);
    }
    return advance(s, c);
}

/* ---- Non-streamed responses ------------------------------------------- */

/* Walks a copy of the plan to find when and how the response ends,
 * PASS_ITEMS items a call (yielding between, as advance does). */
static int body_walk(struct tb_serve *s, struct conn *c)
{
    struct tb_serve_item it;
    int more = 1;
    c->yielded = 0;
    for (size_t k = 0; k < PASS_ITEMS && (more = tb_serve_plan_next(&c->walk, &it)) != 0; k++) {
        if (it.due > c->body_due)
            c->body_due = it.due;
        c->body_malformed |= it.malformed;
        if (it.drop)
            c->ending = END_DROP;
        else if (it.error)
            c->ending = END_ERROR;
    }
    c->walking = more;
    c->yielded = more;
    if (schedule(s, c, more ? mono_ns() : c->t0 + c->body_due) != 0)
        return conn_close(s, c, 1);
    return 0;
}

static int body_schedule(struct tb_serve *s, struct conn *c)
{
    c->walk = c->plan;
    c->body_due = 0;
    c->first_due = -1;
    c->ending = END_BODY;
    c->st = C_WAIT;
    return body_walk(s, c);
}

/* Sends a non-streamed body when it is due.  The texts are gathered
 * PASS_BYTES a call (a million reasoning deltas take many passes, and the
 * others get theirs in between); then the body is rendered and sent. */
static int body_send(struct tb_serve *s, struct conn *c)
{
    struct tb_serve_item it;
    int64_t first = c->first_due, last = c->last_due;
    char *json = NULL;
    size_t made = 0;
    int rc, failed = 0;

    c->yielded = 0;
    if (c->ending == END_DROP)
        return conn_close(s, c, 0);
    if (c->ending == END_ERROR)
        return respond_error(
            s, c, 500, "The server had an error while processing your request. Sorry about that!",
            "server_error", NULL, NULL);
    if (c->content.p == NULL)
        failed |= sbuf_put(s, &c->content, "", 0) | sbuf_put(s, &c->reasoning, "", 0);
    while (!failed && made < PASS_BYTES && tb_serve_plan_next(&c->plan, &it)) {
        size_t n = tb_serve_plan_text(&c->plan, &it, &s->text, &s->text_cap);
        if (n == (size_t)-1) {
            failed = -1;
            break;
        }
        failed |=
            sbuf_put(s, it.kind == TB_KIND_REASONING ? &c->reasoning : &c->content, s->text, n);
        made += n;
        c->body_tokens += it.ntok;
        c->body_events++;
        if (first < 0)
            first = it.due;
        last = it.due;
    }
    c->first_due = first;
    c->last_due = last;
    if (failed > 0)
        return busy(s, c);
    if (failed != 0)
        return conn_close(s, c, 1);
    if (!c->plan.done && made >= PASS_BYTES) {
        c->yielded = 1;
        if (schedule(s, c, mono_ns()) != 0)
            return conn_close(s, c, 1);
        return 0;
    }
    if (c->ctx.api == TB_API_ANTHROPIC) {
        json = tb_serve_json_anth_body(
            &c->ctx, c->content.p, c->reasoning.len > 0 ? c->reasoning.p : NULL,
            c->plan.cut ? "max_tokens" : "end_turn", c->rq.prompt_tokens, c->body_tokens);
    } else if (c->ctx.api == TB_API_OLLAMA) {
        struct tb_serve_ollama_end e = {c->plan.cut ? "length" : "stop",
                                        c->rq.prompt_tokens,
                                        c->body_tokens,
                                        mono_ns() - c->t0,
                                        first < 0 ? 0 : first,
                                        first < 0 ? 0 : last - first};
        json = tb_serve_json_ollama(&c->ctx, c->content.p,
                                    c->reasoning.len > 0 ? c->reasoning.p : NULL, &e);
    } else {
        json = tb_serve_json_body(
            &c->ctx, c->content.p, c->reasoning.len > 0 ? c->reasoning.p : NULL,
            c->plan.cut ? "length" : "stop", c->rq.prompt_tokens, c->body_tokens);
    }
    sbuf_free(s, &c->content);
    sbuf_free(s, &c->reasoning);
    if (json == NULL)
        return conn_close(s, c, 1);
    s->st.events += c->body_events;
    s->st.tokens += c->body_tokens;
    late_record(s, mono_ns() - (c->t0 + c->body_due));
    rc = respond(s, c, 200, "application/json", json,
                 c->body_malformed ? strlen(json) / 2 : strlen(json), NULL);
    tb_serve_json_free(json);
    return rc;
}

/* ---- Requests --------------------------------------------------------- */

static const char html_page[] =
    "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n"
    "<body><h1>Sign in to continue</h1><p>This network requires you to sign in "
    "before you can reach the internet.</p></body></html>\n";

static int fault_status(struct tb_serve *s, struct conn *c)
{
    int st = c->f.status;
    const char *reason = tb_serve_http_reason(st);
    const char *extra = st == 429 || st == 503 ? "Retry-After: 1\r\n" : NULL;
    const char *type = st == 429   ? "requests"
                       : st >= 500 ? "server_error"
                                   : "invalid_request_error";
    const char *code = st == 401   ? "invalid_api_key"
                       : st == 404 ? "model_not_found"
                       : st == 429 ? "rate_limit_exceeded"
                                   : NULL;
    char msg[256];
    int n;

    if (c->f.status_html) {
        /* What a gateway in front of the API sends: nginx's error page. */
        n = snprintf(msg, sizeof(msg),
                     "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n"
                     "<center><h1>%d %s</h1></center>\r\n<hr><center>ttsbuf</center>\r\n"
                     "</body>\r\n</html>\r\n",
                     st, reason, st, reason);
        return respond(s, c, st, "text/html", msg, (size_t)n, extra);
    }
    if (st == 429)
        snprintf(msg, sizeof(msg),
                 "Rate limit reached for requests (ttsbuf fault "
                 "status@429). Please try again in 1s.");
    else if (st == 500)
        snprintf(msg, sizeof(msg),
                 "The server had an error while processing your request. "
                 "Sorry about that! (ttsbuf fault status@500)");
    else
        snprintf(msg, sizeof(msg), "%s (ttsbuf fault status@%d)", reason, st);
    return respond_error(s, c, st, msg, type, code, extra);
}

static int path_is(const struct conn *c, const char *path)
{
    return c->head.path_len == strlen(path) &&
           memcmp(c->in + c->head.path_off, path, c->head.path_len) == 0;
}

/* "METHOD /path" of the request, for messages. */
static void request_name(const struct conn *c, char *buf, size_t len)
{
    const struct tb_serve_http_head *h = &c->head;
    snprintf(buf, len, "%.*s %.*s", (int)(h->method_len > 16 ? 16 : h->method_len),
             c->in + h->method_off, (int)(h->path_len > 200 ? 200 : h->path_len),
             c->in + h->path_off);
}

static int not_allowed(struct tb_serve *s, struct conn *c, const char *allow)
{
    char name[232], msg[280], extra[32];
    request_name(c, name, sizeof(name));
    snprintf(msg, sizeof(msg), "Invalid method for URL (%s)", name);
    snprintf(extra, sizeof(extra), "Allow: %s\r\n", allow);
    return respond_error(s, c, 405, msg, "invalid_request_error", NULL, extra);
}

/* The request is complete (read at t0): answer it. */
static int dispatch(struct tb_serve *s, struct conn *c, int64_t t0)
{
    const struct tb_serve_http_head *h = &c->head;
    enum tb_api api;
    char msg[512], why[320], name[232];
    const char *plus;
    int rc;

    c->t0 = t0;
    c->ctx.id = ++s->next_id;
    if (path_is(c, "/v1/models")) {
        char *m;
        if (h->method != TB_SERVE_HTTP_GET)
            return not_allowed(s, c, "GET");
        m = tb_serve_json_models();
        if (m == NULL)
            return conn_close(s, c, 1);
        rc = respond(s, c, 200, "application/json", m, strlen(m), NULL);
        tb_serve_json_free(m);
        return rc;
    }
    if (path_is(c, "/v1/chat/completions")) {
        api = TB_API_CHAT;
    } else if (path_is(c, "/v1/completions")) {
        api = TB_API_COMPLETIONS;
    } else if (path_is(c, "/v1/messages")) {
        api = TB_API_ANTHROPIC;
    } else if (path_is(c, "/api/chat")) {
        api = TB_API_OLLAMA;
    } else {
        request_name(c, name, sizeof(name));
        snprintf(msg, sizeof(msg), "Invalid URL (%s)", name);
        return respond_error(s, c, 404, msg, "invalid_request_error", NULL, NULL);
    }
    if (h->method != TB_SERVE_HTTP_POST)
        return not_allowed(s, c, "POST");
    c->ctx.api = api; /* errors from here on take the dialect's shape */
    if (s->mem >= s->budget)
        return busy(s, c);
    rc = tb_serve_json_request(c->in + h->len, c->need - h->len, api, &c->rq, msg, sizeof(msg));
    if (rc == TB_ENOMEM)
        return conn_close(s, c, 1);
    if (rc != 0)
        return respond_error(s, c, 400, msg, "invalid_request_error", NULL, NULL);
    in_free(c); /* the request is copied out; the head's offsets die here */

    c->ctx.api = api;
    c->ctx.model = c->rq.model;
    c->f = s->faults;
    plus = strchr(c->rq.model, '+');
    if (plus != NULL && tb_faults_parse(plus + 1, &c->f, why, sizeof(why)) != 0) {
        snprintf(msg, sizeof(msg), "Invalid fault spec in the model name: %s", why);
        return respond_error(s, c, 400, msg, "invalid_request_error", NULL, NULL);
    }
    if (c->f.status != 0)
        return fault_status(s, c);
    if (c->f.reject_usage && c->rq.stream_options)
        return respond_error(s, c, 400, "Unrecognized request argument supplied: stream_options",
                             "invalid_request_error", NULL, NULL);
    if (c->f.html)
        return respond(s, c, 200, "text/html", html_page, sizeof(html_page) - 1, NULL);
    tb_serve_plan_init(&c->plan, s->stream, &c->f, api == TB_API_COMPLETIONS, c->rq.max_tokens);
    return c->rq.stream ? stream_start(s, c) : body_schedule(s, c);
}

/* New work over the memory budget: 503, and the request's buffer (and a
 * body gathered so far) is freed at once. */
static int busy(struct tb_serve *s, struct conn *c)
{
    char msg[160];
    in_free(c);
    sbuf_free(s, &c->content);
    sbuf_free(s, &c->reasoning);
    c->have_head = 0;
    s->st.refused++;
    snprintf(msg, sizeof(msg),
             "Server busy: its memory budget (%zu bytes for requests and unsent output) is in "
             "use. Retry later.",
             s->budget);
    return respond_error(s, c, 503, msg, "server_error", NULL, "Retry-After: 1\r\n");
}

static int too_large(struct tb_serve *s, struct conn *c)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "Request too large: over %u bytes of head and body.",
             TB_SERVE_REQUEST_MAX);
    return respond_error(s, c, 413, msg, "invalid_request_error", NULL, NULL);
}

/* Reads request bytes; answers when the request is complete or wrong. */
static int read_request(struct tb_serve *s, struct conn *c)
{
    char msg[256];
    for (;;) {
        size_t limit = c->have_head ? c->need : TB_SERVE_REQUEST_MAX;
        ssize_t n;
        if (c->in_len == c->in_cap) {
            size_t cap = c->in_cap ? c->in_cap * 2 : IN_FIRST;
            int rc;
            if (cap > limit)
                cap = limit;
            rc = buf_resize(s, &c->in, &c->in_cap, cap);
            if (rc < 0)
                return conn_close(s, c, 1);
            if (rc > 0)
                return busy(s, c);
        }
        n = recv(c->fd, c->in + c->in_len, (c->in_cap < limit ? c->in_cap : limit) - c->in_len, 0);
        if (n == 0)
            return conn_close(s, c, c->in_len > 0); /* a bare connect is not a drop */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return conn_close(s, c, 1);
        }
        c->in_len += (size_t)n;
        if (!c->have_head) {
            int r = tb_serve_http_scan(c->in, c->in_len, &c->scan);
            if (r < 0)
                return respond_error(s, c, 400, "Malformed request: lines must end in CRLF.",
                                     "invalid_request_error", NULL, NULL);
            if (r == 0) {
                if (c->in_len >= TB_SERVE_REQUEST_MAX)
                    return too_large(s, c);
                continue;
            }
            if (tb_serve_http_parse(c->in, c->scan, &c->head, msg, sizeof(msg)) != 0)
                return respond_error(s, c, c->head.status, msg, "invalid_request_error", NULL,
                                     NULL);
            if (c->head.content_length > TB_SERVE_REQUEST_MAX - c->head.len)
                return too_large(s, c);
            c->have_head = 1;
            c->need = c->head.len + (size_t)c->head.content_length;
            if (c->head.expect_continue && c->in_len < c->need) {
                out_put(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
                if (flush(s, c) != 0)
                    return -1;
            }
        }
        if (c->have_head && c->in_len >= c->need) {
            unschedule(s, c); /* the read timeout */
            return dispatch(s, c, mono_ns());
        }
    }
}

/* Readable outside READ: discard what the client sends; EOF or an error
 * ends the connection (a drop unless the response was complete). */
static int drain(struct tb_serve *s, struct conn *c)
{
    char junk[4096];
    for (int k = 0; k < 16; k++) {
        ssize_t n = recv(c->fd, junk, sizeof(junk), 0);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return conn_close(s, c, c->st != C_LINGER);
    }
    return 0;
}

static void conn_event(struct tb_serve *s, struct conn *c, uint32_t ev)
{
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        if ((c->st == C_READ ? read_request(s, c) : drain(s, c)) != 0)
            return;
    }
    if (ev & EPOLLOUT)
        flush(s, c);
}

/* A deadline passed. */
static void conn_due(struct tb_serve *s, struct conn *c)
{
    switch (c->st) {
    case C_READ: conn_close(s, c, c->in_len > 0); break; /* too slow to send a request */
    case C_STREAM: advance(s, c); break;
    case C_WAIT: c->walking ? body_walk(s, c) : body_send(s, c); break;
    case C_FLUSH: conn_close(s, c, 1); break; /* stopped reading a finished response */
    case C_LINGER: conn_close(s, c, 0); break;
    }
}

static void conn_open(struct tb_serve *s, int fd)
{
    struct conn *c = calloc(1, sizeof(*c));
    struct epoll_event ev;
    int one = 1;

    if (c == NULL) {
        close(fd);
        s->st.dropped++;
        return;
    }
    c->s = s;
    c->fd = fd;
    c->hidx = NO_HEAP;
    c->st = C_READ;
    c->events = EPOLLIN | EPOLLRDHUP;
    c->next = s->conns;
    if (s->conns != NULL)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    /* Small writes on a schedule: Nagle would hold an event back until the
     * previous one is acknowledged (up to a delayed-ACK 40 ms). */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    memset(&ev, 0, sizeof(ev));
    ev.events = c->events;
    ev.data.ptr = c;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0 ||
        schedule(s, c, mono_ns() + READ_TIMEOUT_NS) != 0)
        conn_close(s, c, 1);
}

static void listen_watch(struct tb_serve *s, int on)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = on ? EPOLLIN : 0;
    ev.data.ptr = &s->lfd;
    epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->lfd, &ev);
    s->accept_paused = !on;
}

static void accept_some(struct tb_serve *s)
{
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* Level-triggered, the listener would wake us in a loop:
                 * stop watching it for a while instead. */
                listen_watch(s, 0);
                s->accept_retry = mono_ns() + ACCEPT_RETRY_NS;
            }
            return;
        }
        if (s->nconns >= s->max_conns) {
            close(fd);
            s->st.dropped++;
            continue;
        }
        conn_open(s, fd);
    }
}

/* Handles every deadline that has passed.  A connection that yielded
 * during this pass waits for the next one (after epoll_wait: new requests
 * and readers get their turn too). */
static void run_due(struct tb_serve *s)
{
    int64_t now = mono_ns(), start = now;
    if (s->accept_paused && s->accept_retry <= now)
        listen_watch(s, 1);
    while (s->nheap > 0) {
        struct conn *c = s->heap[0].c;
        if (c->due > now) {
            now = mono_ns(); /* handling the others took time */
            if (c->due > now || (c->yielded && c->due > start))
                break;
        }
        unschedule(s, c);
        conn_due(s, c);
    }
}

/* ---- The public functions --------------------------------------------- */

int tb_serve_create(const struct tb_serve_opts *o, struct tb_serve **out, char *err, size_t errlen)
{
    const char *host = o->host != NULL ? o->host : "127.0.0.1";
    union {
        struct sockaddr any;
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } sa;
    socklen_t salen;
    struct tb_serve *s = NULL;
    struct epoll_event ev;
    int one = 1, rc;

    *out = NULL;
    memset(&sa, 0, sizeof(sa));
    if (o->stream == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: no stream to serve");
    if (o->port < 0 || o->port > 65535)
        return tb_seterr(err, errlen, TB_EINVAL, "serve: port %d is not in 0..65535", o->port);
    if (inet_pton(AF_INET, host, &sa.v4.sin_addr) == 1) {
        sa.v4.sin_family = AF_INET;
        sa.v4.sin_port = htons((uint16_t)o->port);
        salen = sizeof(sa.v4);
    } else if (inet_pton(AF_INET6, host, &sa.v6.sin6_addr) == 1) {
        sa.v6.sin6_family = AF_INET6;
        sa.v6.sin6_port = htons((uint16_t)o->port);
        salen = sizeof(sa.v6);
    } else {
        return tb_seterr(err, errlen, TB_EINVAL,
                         "serve: host \"%s\" is not a numeric IPv4 or IPv6 address", host);
    }

    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "serve: out of memory");
    s->lfd = s->epfd = s->tfd = s->efd = -1;
    s->stream = o->stream;
    s->faults = o->faults;
    s->max_conns = o->max_conns > 0 ? o->max_conns : MAX_CONNS_DEFAULT;
    s->budget = o->mem_budget > 0 ? o->mem_budget : TB_SERVE_MEM_DEFAULT;
    s->armed = NEVER;
    s->late = calloc(LATE_BUCKETS + 1, sizeof(*s->late));
    if (s->late == NULL) {
        rc = tb_seterr(err, errlen, TB_ENOMEM, "serve: out of memory");
        goto fail;
    }
    s->lfd = socket(sa.any.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->lfd < 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: socket: %s", strerror(errno));
        goto fail;
    }
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s->lfd, &sa.any, salen) != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: bind %s port %d: %s", host, o->port,
                       strerror(errno));
        goto fail;
    }
    /* The kernel caps the backlog at net.core.somaxconn. */
    if (listen(s->lfd, 4096) != 0 || getsockname(s->lfd, &sa.any, &salen) != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: listen: %s", strerror(errno));
        goto fail;
    }
    s->port = ntohs(sa.any.sa_family == AF_INET ? sa.v4.sin_port : sa.v6.sin6_port);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->epfd < 0 || s->tfd < 0 || s->efd < 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: epoll/timerfd/eventfd: %s", strerror(errno));
        goto fail;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.ptr = &s->lfd;
    rc = epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev);
    ev.data.ptr = &s->tfd;
    rc |= epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev);
    ev.data.ptr = &s->efd;
    rc |= epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->efd, &ev);
    if (rc != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "serve: epoll_ctl: %s", strerror(errno));
        goto fail;
    }
    *out = s;
    return 0;
fail:
    tb_serve_destroy(s);
    return rc;
}

int tb_serve_port(const struct tb_serve *s)
{
    return s->port;
}

int tb_serve_run(struct tb_serve *s)
{
    struct epoll_event evs[EPOLL_BATCH];
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    int rc = 0, stop = 0;

    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    while (!stop) {
        int n;
        run_due(s);
        if (arm(s) != 0) {
            rc = TB_EIO;
            break;
        }
        n = epoll_wait(s->epfd, evs, EPOLL_BATCH, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = TB_EIO;
            break;
        }
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            uint64_t v;
            if (p == &s->efd) {
                stop = read(s->efd, &v, sizeof(v)) == (ssize_t)sizeof(v);
            } else if (p == &s->tfd) {
                /* No read: timerfd_settime clears the expiration count,
                 * and the next arm() must call it (the fired connection
                 * has almost always moved the top anyway), which saves a
                 * syscall per wake-up. */
                s->armed = ARM_STALE;
            } else if (p == &s->lfd) {
                accept_some(s);
            } else {
                conn_event(s, p, evs[i].events);
            }
        }
    }
    /* Stopping is not the clients' fault: not counted as drops. */
    while (s->conns != NULL)
        conn_close(s, s->conns, 0);
    arm(s); /* disarms: nothing is scheduled now */
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    return rc;
}

void tb_serve_stop(struct tb_serve *s)
{
    uint64_t one = 1;
    int saved = errno; /* a signal handler must leave errno alone */
    if (write(s->efd, &one, sizeof(one)) < 0) {
        /* EAGAIN: the counter is full, so a stop is pending anyway. */
    }
    errno = saved;
}

void tb_serve_stats(const struct tb_serve *s, struct tb_serve_stats *out)
{
    *out = s->st;
    if (s->st.late_n > 0) {
        out->late_p50 = late_quantile(s, 0.50);
        out->late_p99 = late_quantile(s, 0.99);
        out->late_max = (double)s->late_max / NS;
    }
}

void tb_serve_destroy(struct tb_serve *s)
{
    if (s == NULL)
        return;
    while (s->conns != NULL)
        conn_close(s, s->conns, 0); /* NOLINT(clang-analyzer-unix.Malloc): it unlinks the head */
    if (s->efd >= 0)
        close(s->efd);
    if (s->tfd >= 0)
        close(s->tfd);
    if (s->epfd >= 0)
        close(s->epfd);
    if (s->lfd >= 0)
        close(s->lfd);
    free(s->heap);
    free(s->text);
    free(s->late);
    free(s);
}
