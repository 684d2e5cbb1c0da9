/*
 * serve_conn.c - a mock-server connection's output and end (see
 * serve_conn.h): sending what is buffered, finishing the response,
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
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_chunk.h"
#include "serve_conn.h"
#include "serve_json.h"
#include "serve_log.h"
#include "serve_priv.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"

static int watch(struct tb_serve_loop *s, struct tb_serve_conn *c, uint32_t want)
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
 * Sends what is buffered.  Once a final response has drained, shuts the
 * write side and lingers (or closes at once for drop@K).  Returns 0, or
 * -1 when c was closed (the caller must not touch it again).
 */
int tb_serve_flush(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    int progress = 0;
    if (c->broken)
        return tb_serve_conn_close(s, c, 1);
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            if (c->lg.first_byte < 0 && c->st != C_READ) /* not a 100 Continue */
                c->lg.first_byte = tb_clock_mono_ns();
            c->lg.bytes += (uint64_t)n;
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
        if (errno == EPIPE || errno == ECONNRESET)
            tb_serve_log_closed(c); /* the client is gone */
        return tb_serve_conn_close(s, c, 1);
    }
    c->out_off = c->out_len = 0;
    if (watch(s, c, 0) != 0)
        return tb_serve_conn_close(s, c, 1);
    if (!c->final)
        return 0;
    tb_serve_slot_give(c); /* its last byte is sent: no longer in flight */
    tb_serve_log_end(s, c,
                     c->lg.fault           ? TB_SERVE_END_FAULT
                     : c->lg.status >= 400 ? TB_SERVE_END_ERROR
                                           : TB_SERVE_END_COMPLETE);
    if (c->hard_close)
        return tb_serve_conn_close(s, c, 0);
    shutdown(c->fd, SHUT_WR);
    c->st = C_LINGER;
    if (tb_serve_heap_set(&s->heap, &c->hn, tb_clock_mono_ns() + LINGER_NS) != 0)
        return tb_serve_conn_close(s, c, 0);
    return 0;
}

/* The response is all in the buffer: send it and end the connection. */
int tb_serve_finish(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    tb_serve_in_free(c); /* up to TB_SERVE_REQUEST_MAX, no longer needed */
    c->final = 1;
    c->st = C_FLUSH;
    tb_serve_heap_remove(&s->heap, &c->hn);
    return tb_serve_flush(s, c);
}

int tb_serve_conn_close(struct tb_serve_loop *s, struct tb_serve_conn *c, int dropped)
{
    tb_serve_slot_give(c); /* before its log line: a reader of the log sees the place free */
    /* Not a request: closed before a byte of one, without a response. */
    if (c->lg.received >= 0 || c->lg.status != 0 || c->in_len > 0)
        tb_serve_log_end(s, c,
                         c->lg.closed >= 0 ? TB_SERVE_END_CLIENT_CLOSED
                         : s->stopping     ? TB_SERVE_END_STOPPED
                         : c->lg.fault     ? TB_SERVE_END_FAULT
                                           : TB_SERVE_END_DROPPED);
    if (dropped)
        s->st.dropped++;
    if (dropped && c->lg.closed >= 0)
        s->st.client_closed++; /* the log's word for it */
    if (c->refusal) {
        s->nrefusals--;
        if (s->refusals_full) {
            /* A refusal ended: accept (and refuse) the next one. */
            s->refusals_full = 0;
            s->accept_retry = 0; /* run_due listens again */
        }
    }
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
    if (c->on_close != NULL)
        c->on_close(s, c); /* a route's own state (the TTS's) */
    free(c);
    tb_serve_conn_gone(s);
    return -1;
}

int tb_serve_piece_made(struct tb_serve_loop *s, struct tb_serve_conn *c, size_t made)
{
    if (c->out_len - c->out_off >= SEND_EARLY && tb_serve_flush(s, c) != 0)
        return -1;
    if (made >= PASS_BYTES && !c->broken) {
        c->yielded = 1;
        if (tb_serve_heap_set(&s->heap, &c->hn, tb_clock_mono_ns()) != 0)
            return tb_serve_conn_close(s, c, 1);
        return tb_serve_flush(s, c);
    }
    return 1;
}
