/*
 * serve.c - the mock server's state (see serve.h and serve_priv.h): its
 * connections' buffers under the memory budget, their output, and the
 * lateness of what is sent, and the memory budget its loops share.  The
 * event loop is serve_loop.c.
 */
#include "ttsbuf/serve.h"

#include <stdlib.h>
#include <string.h>

#include "serve_priv.h"

void tb_serve_conn_gone(struct tb_serve_loop *s)
{
    atomic_fetch_sub(&s->srv->nconns, 1);
    atomic_fetch_sub(&s->nopen, 1);
}

int tb_serve_mem_take(struct tb_serve *srv, size_t n, int check)
{
    size_t now = atomic_fetch_add_explicit(&srv->mem, n, memory_order_relaxed) + n;
    size_t peak = atomic_load_explicit(&srv->mem_peak, memory_order_relaxed);
    if (check && now > srv->budget) {
        atomic_fetch_sub_explicit(&srv->mem, n, memory_order_relaxed);
        return 1;
    }
    /* The peak: raised by whichever loop holds the most, never lowered. */
    while (now > peak &&
           !atomic_compare_exchange_weak_explicit(&srv->mem_peak, &peak, now, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
    return 0;
}

void tb_serve_mem_give(struct tb_serve *srv, size_t n)
{
    atomic_fetch_sub_explicit(&srv->mem, n, memory_order_relaxed);
}

size_t tb_serve_mem_held(struct tb_serve *srv)
{
    return atomic_load_explicit(&srv->mem, memory_order_relaxed);
}

/*
 * The memory budget.  Every connection's request and output buffers are
 * counted by their capacity; a buffer may always grow to BUF_FREE bytes
 * (room for a request head of ordinary size, or an error response), so
 * a refusal can still be sent; past that, growth must fit the budget,
 * which the loops share (its bytes are taken before the allocation, so
 * two loops cannot both take the last of it).  Returns 0 and the buffer
 * resized to cap (> 0) bytes, 1 when the budget has no room, -1 when
 * memory ran out.
 */
int tb_serve_buf_resize(struct tb_serve_loop *s, char **p, size_t *have, size_t cap)
{
    char *nb;
    size_t grow = cap > *have ? cap - *have : 0;
    if (cap == 0)
        return -1; /* never asked for: every caller grows */
    if (grow > 0 && tb_serve_mem_take(s->srv, grow, cap > BUF_FREE) != 0)
        return 1;
    if ((nb = realloc(*p, cap)) == NULL) {
        tb_serve_mem_give(s->srv, grow);
        return -1;
    }
    if (grow == 0)
        tb_serve_mem_give(s->srv, *have - cap);
    *p = nb;
    *have = cap;
    return 0;
}

/* Frees a buffer buf_resize made. */
void tb_serve_buf_free(struct tb_serve_loop *s, char **p, size_t *have)
{
    free(*p);
    *p = NULL;
    tb_serve_mem_give(s->srv, *have);
    *have = 0;
}

/* Frees c's request buffer (copied out, or no longer needed). */
void tb_serve_in_free(struct tb_serve_conn *c)
{
    tb_serve_buf_free(c->s, &c->in, &c->in_cap);
    c->in_len = 0;
}

/* Appends; 0, 1 over the memory budget, -1 out of memory. */
int tb_serve_sbuf_put(struct tb_serve_loop *s, struct tb_serve_sbuf *b, const char *p, size_t n)
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

void tb_serve_sbuf_free(struct tb_serve_loop *s, struct tb_serve_sbuf *b)
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

void tb_serve_late_record(struct tb_serve_loop *s, struct tb_serve_conn *c, int64_t late)
{
    int64_t b = late / LATE_BUCKET_NS;
    if (late < 0)
        late = b = 0;
    if (late > c->lg.late_max)
        c->lg.late_max = late;
    s->late[b < LATE_BUCKETS ? b : LATE_BUCKETS]++;
    if (late > s->late_max)
        s->late_max = late;
    s->st.late_n++;
}
