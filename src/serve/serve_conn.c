/*
 * serve_conn.c - a mock-server connection (see serve_priv.h): its buffers
 * and the memory budget, reading the request, sending the response,
 * lingering and closing.
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
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_priv.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"

static int watch(struct tb_serve *s, struct tb_serve_conn *c, uint32_t want)
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
int tb_serve_buf_resize(struct tb_serve *s, char **p, size_t *have, size_t cap)
{
    char *nb;
    if (cap == 0)
        return -1; /* never asked for: every caller grows */
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
void tb_serve_buf_free(struct tb_serve *s, char **p, size_t *have)
{
    free(*p);
    *p = NULL;
    s->mem -= *have;
    *have = 0;
}

/* Frees c's request buffer (copied out, or no longer needed). */
void tb_serve_in_free(struct tb_serve_conn *c)
{
    tb_serve_buf_free(c->s, &c->in, &c->in_cap);
    c->in_len = 0;
}

/* Appends; 0, 1 over the memory budget, -1 out of memory. */
int tb_serve_sbuf_put(struct tb_serve *s, struct tb_serve_sbuf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap < 256 ? 256 : b->cap;
        int rc;
        while (cap < b->len + n + 1)
            cap *= 2;
        rc = tb_serve_buf_resize(s, &b->p, &b->cap, cap);
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

void tb_serve_sbuf_free(struct tb_serve *s, struct tb_serve_sbuf *b)
{
    tb_serve_buf_free(s, &b->p, &b->cap);
    b->len = 0;
}

/* Makes room for n more output bytes (one whole piece of output, so the
 * cap sees it at once); on failure marks c broken and returns -1. */
int tb_serve_out_room(struct tb_serve_conn *c, size_t n)
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
        rc = tb_serve_buf_resize(c->s, &c->out, &c->out_cap, cap);
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

void tb_serve_out_put(struct tb_serve_conn *c, const char *p, size_t n)
{
    if (tb_serve_out_room(c, n) == 0)
        tb_serve_out_add(c, p, n);
}

/*
 * Sends what is buffered.  Once a final response has drained, shuts the
 * write side and lingers (or closes at once for drop@K).  Returns 0, or
 * -1 when c was closed (the caller must not touch it again).
 */
int tb_serve_flush(struct tb_serve *s, struct tb_serve_conn *c)
{
    int progress = 0;
    if (c->broken)
        return tb_serve_conn_close(s, c, 1);
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
                return tb_serve_conn_close(s, c, 1);
            /* A finished response gives a stuck client FLUSH_TIMEOUT_NS
             * from its last progress. */
            if (c->st == C_FLUSH && (progress || c->hn.idx == TB_SERVE_HEAP_NONE) &&
                tb_serve_heap_set(&s->heap, &c->hn, tb_clock_mono_ns() + FLUSH_TIMEOUT_NS) != 0)
                return tb_serve_conn_close(s, c, 1);
            return 0;
        }
        return tb_serve_conn_close(s, c, 1); /* EPIPE, ECONNRESET: the client is gone */
    }
    c->out_off = c->out_len = 0;
    if (watch(s, c, 0) != 0)
        return tb_serve_conn_close(s, c, 1);
    if (!c->final)
        return 0;
    if (c->hard_close)
        return tb_serve_conn_close(s, c, 0);
    shutdown(c->fd, SHUT_WR);
    c->st = C_LINGER;
    if (tb_serve_heap_set(&s->heap, &c->hn, tb_clock_mono_ns() + LINGER_NS) != 0)
        return tb_serve_conn_close(s, c, 0);
    return 0;
}

/* The response is all in the buffer: send it and end the connection. */
int tb_serve_finish(struct tb_serve *s, struct tb_serve_conn *c)
{
    tb_serve_in_free(c); /* up to TB_SERVE_REQUEST_MAX, no longer needed */
    c->final = 1;
    c->st = C_FLUSH;
    tb_serve_heap_remove(&s->heap, &c->hn);
    return tb_serve_flush(s, c);
}

int tb_serve_conn_close(struct tb_serve *s, struct tb_serve_conn *c, int dropped)
{
    if (dropped)
        s->st.dropped++;
    tb_serve_heap_remove(&s->heap, &c->hn);
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
    tb_serve_in_free(c);
    tb_serve_buf_free(s, &c->out, &c->out_cap);
    tb_serve_sbuf_free(s, &c->content);
    tb_serve_sbuf_free(s, &c->reasoning);
    tb_serve_json_request_free(&c->rq);
    tb_serve_chunk_free(&c->chunk);
    free(c);
    s->nconns--;
    return -1;
}

/* Reads request bytes; answers when the request is complete or wrong. */
static int read_request(struct tb_serve *s, struct tb_serve_conn *c)
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
            rc = tb_serve_buf_resize(s, &c->in, &c->in_cap, cap);
            if (rc < 0)
                return tb_serve_conn_close(s, c, 1);
            if (rc > 0)
                return tb_serve_busy(s, c);
        }
        n = recv(c->fd, c->in + c->in_len, (c->in_cap < limit ? c->in_cap : limit) - c->in_len, 0);
        if (n == 0)
            return tb_serve_conn_close(s, c, c->in_len > 0); /* a bare connect is not a drop */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return tb_serve_conn_close(s, c, 1);
        }
        c->in_len += (size_t)n;
        if (!c->have_head) {
            int r = tb_serve_http_scan(c->in, c->in_len, &c->scan);
            if (r < 0)
                return tb_serve_respond_error(s, c, 400,
                                              "Malformed request: lines must end in CRLF.",
                                              "invalid_request_error", NULL, NULL);
            if (r == 0) {
                if (c->in_len >= TB_SERVE_REQUEST_MAX)
                    return tb_serve_too_large(s, c);
                continue;
            }
            if (tb_serve_http_parse(c->in, c->scan, &c->head, msg, sizeof(msg)) != 0)
                return tb_serve_respond_error(s, c, c->head.status, msg, "invalid_request_error",
                                              NULL, NULL);
            if (c->head.content_length > TB_SERVE_REQUEST_MAX - c->head.len)
                return tb_serve_too_large(s, c);
            c->have_head = 1;
            c->need = c->head.len + (size_t)c->head.content_length;
            if (c->head.expect_continue && c->in_len < c->need) {
                tb_serve_out_put(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
                if (tb_serve_flush(s, c) != 0)
                    return -1;
            }
        }
        if (c->have_head && c->in_len >= c->need) {
            tb_serve_heap_remove(&s->heap, &c->hn); /* the read timeout */
            return tb_serve_dispatch(s, c, tb_clock_mono_ns());
        }
    }
}

/* Readable outside READ: discard what the client sends; EOF or an error
 * ends the connection (a drop unless the response was complete). */
static int drain(struct tb_serve *s, struct tb_serve_conn *c)
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
        return tb_serve_conn_close(s, c, c->st != C_LINGER);
    }
    return 0;
}

void tb_serve_conn_event(struct tb_serve *s, struct tb_serve_conn *c, uint32_t ev)
{
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        if ((c->st == C_READ ? read_request(s, c) : drain(s, c)) != 0)
            return;
    }
    if (ev & EPOLLOUT)
        tb_serve_flush(s, c);
}

void tb_serve_conn_open(struct tb_serve *s, int fd)
{
    struct tb_serve_conn *c = calloc(1, sizeof(*c));
    struct epoll_event ev;
    int one = 1;

    if (c == NULL) {
        close(fd);
        s->st.dropped++;
        return;
    }
    c->s = s;
    c->fd = fd;
    tb_serve_heap_node_init(&c->hn);
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
        tb_serve_heap_set(&s->heap, &c->hn, tb_clock_mono_ns() + READ_TIMEOUT_NS) != 0)
        tb_serve_conn_close(s, c, 1);
}
