/*
 * serve_read.c - reading a mock-server request (see serve_read.h): a new
 * connection, its events, the request's head and body under
 * TB_SERVE_REQUEST_MAX, then routing it (serve_route.c); what a client
 * sends after its request is read and dropped.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_conn.h"
#include "serve_http.h"
#include "serve_log.h"
#include "serve_priv.h"
#include "serve_read.h"
#include "serve_reply.h"
#include "serve_route.h"
#include "ttsbuf/clock.h"

/* Reads request bytes; answers when the request is complete or wrong. */
static int read_request(struct tb_serve_loop *s, struct tb_serve_conn *c)
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
        if (n == 0) {
            tb_serve_log_closed(c);
            return tb_serve_conn_close(s, c, c->in_len > 0); /* a bare connect is not a drop */
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            tb_serve_log_closed(c);
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
 * ends the connection (a drop unless the response was complete).  EOF
 * is seen here in every state, between a stream's tokens too (the socket
 * is always watched for EPOLLIN and EPOLLRDHUP): a client's close ends
 * its request at once, not at the server's next write. */
static int drain(struct tb_serve_loop *s, struct tb_serve_conn *c)
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
        if (c->st != C_LINGER)
            tb_serve_log_closed(c);
        return tb_serve_conn_close(s, c, c->st != C_LINGER);
    }
    return 0;
}

void tb_serve_conn_event(struct tb_serve_loop *s, struct tb_serve_conn *c, uint32_t ev)
{
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        if ((c->st == C_READ ? read_request(s, c) : drain(s, c)) != 0)
            return;
    }
    if (ev & EPOLLOUT)
        tb_serve_flush(s, c);
}

struct tb_serve_conn *tb_serve_conn_open(struct tb_serve_loop *s, int fd)
{
    struct tb_serve_conn *c = calloc(1, sizeof(*c));
    struct epoll_event ev;
    int one = 1;

    if (c == NULL) {
        close(fd);
        tb_serve_conn_gone(s);
        s->st.dropped++;
        return NULL;
    }
    s->taken++;
    c->s = s;
    c->fd = fd;
    tb_serve_heap_node_init(&c->hn);
    tb_serve_log_init(c);
    c->st = C_READ;
    c->events = EPOLLIN | EPOLLRDHUP;
    c->next = s->conns;
    if (s->conns != NULL)
        s->conns->prev = c;
    s->conns = c;
    /* Small writes on a schedule: Nagle would hold an event back until the
     * previous one is acknowledged (up to a delayed-ACK 40 ms). */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    memset(&ev, 0, sizeof(ev));
    ev.events = c->events;
    ev.data.ptr = c;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0 ||
        tb_serve_heap_set(&s->heap, &c->hn, tb_clock_mono_ns() + READ_TIMEOUT_NS) != 0) {
        tb_serve_conn_close(s, c, 1);
        return NULL;
    }
    return c;
}
