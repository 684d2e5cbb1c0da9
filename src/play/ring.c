/*
 * ring.c - lock-free SPSC ring of tokens (see ring.h for the contract).
 *
 * Layout: `slots` holds item records, `bytes` holds their text.  Both use
 * free-running indices masked on access, so head - tail is the fill level
 * even after the counters wrap (size_t arithmetic is modular).
 *
 * Text is kept contiguous: when an item's text would straddle the end of
 * the byte area, the producer skips to the start (the skipped bytes count
 * as used until that item is released).  The consumer can then hand out a
 * plain pointer, with no second span to stitch.
 *
 * Memory ordering (why each one is what it is):
 *  - The producer writes the text and the slot record, then publishes with
 *    a release store of `head`.  The consumer's acquire load of `head`
 *    therefore sees both writes (kfifo's smp_wmb before the index update).
 *  - The consumer reads what it needs, then publishes freed space with
 *    release stores of `tail_b` then `tail`.  The producer's acquire loads
 *    guarantee it never overwrites bytes the consumer is still reading.
 *    The two stores are not one atomic step; a producer that sees one and
 *    not the other under-estimates free space, which is safe.
 *  - Each side keeps its own index in a private copy and touches the
 *    other's only through the atomics; the two hot atomics sit on separate
 *    cache lines so the threads do not false-share.
 */
#include "ttsbuf/ring.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"

struct slot {
    double t;
    size_t boff; /* free-running byte offset of the text */
    uint32_t len;
    uint32_t tokens;
    uint8_t kind;
};

struct tb_ring {
    alignas(64) atomic_size_t head; /* written by the producer */
    size_t head_b;                  /* producer-private byte head */
    struct tb_ring_stats stats;     /* producer-private */
    int waiting;                    /* producer-private copy of waiting_ */
    atomic_int waiting_;            /* the last push was refused */
    alignas(64) atomic_size_t tail; /* written by the consumer */
    atomic_size_t tail_b;           /* written by the consumer */
    alignas(64) size_t nslots, nbytes, smask, bmask;
    struct slot *slots;
    char *bytes;
};

static size_t pow2_at_least(size_t n, size_t min)
{
    size_t p = min;
    while (p < n)
        p <<= 1;
    return p;
}

int tb_ring_create(size_t slots, size_t bytes, struct tb_ring **out)
{
    const size_t cap = (size_t)1 << 30;
    struct tb_ring *r;
    *out = NULL;
    if (slots == 0 || bytes == 0 || slots > cap || bytes > cap)
        return TB_EINVAL;
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return TB_ENOMEM;
    r->nslots = pow2_at_least(slots, 2);
    r->nbytes = pow2_at_least(bytes, 64);
    r->smask = r->nslots - 1;
    r->bmask = r->nbytes - 1;
    r->slots = malloc(r->nslots * sizeof(struct slot));
    r->bytes = malloc(r->nbytes);
    if (r->slots == NULL || r->bytes == NULL) {
        tb_ring_destroy(r);
        return TB_ENOMEM;
    }
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->tail_b, 0);
    atomic_init(&r->waiting_, 0);
    *out = r;
    return 0;
}

void tb_ring_destroy(struct tb_ring *r)
{
    if (r == NULL)
        return;
    free(r->slots);
    free(r->bytes);
    free(r);
}

size_t tb_ring_slot_capacity(const struct tb_ring *r)
{
    return r->nslots;
}

size_t tb_ring_byte_capacity(const struct tb_ring *r)
{
    return r->nbytes;
}

/* Producer: a push that found no room.  The flag lets the consumer see
 * that the producer is stuck; it is written only when it changes, so a
 * producer that keeps retrying does not bounce the cache line. */
static int refuse(struct tb_ring *r)
{
    r->stats.full++;
    if (!r->waiting) {
        r->waiting = 1;
        atomic_store_explicit(&r->waiting_, 1, memory_order_relaxed);
    }
    return TB_EFULL;
}

int tb_ring_push(struct tb_ring *r, double t, const char *text, uint32_t len, uint32_t tokens,
                 uint8_t kind)
{
    size_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    size_t tl = atomic_load_explicit(&r->tail, memory_order_acquire);
    size_t tb, start, pos;
    struct slot *sl;

    if (len > r->nbytes)
        return TB_ETOOBIG;
    if (h - tl >= r->nslots)
        return refuse(r);
    tb = atomic_load_explicit(&r->tail_b, memory_order_acquire);
    start = r->head_b;
    pos = start & r->bmask;
    if (pos + len > r->nbytes)
        start += r->nbytes - pos; /* skip to the start: keep text contiguous */
    /* When the consumer holds no text (tb == head_b), the skipped bytes are
     * not in use either; counting them would refuse, for ever, any text
     * longer than the write position on an empty ring. */
    if (tb == r->head_b)
        tb = start;
    if (start + len - tb > r->nbytes)
        return refuse(r);
    if (len > 0)
        memcpy(r->bytes + (start & r->bmask), text, len);
    sl = &r->slots[h & r->smask];
    sl->t = t;
    sl->boff = start;
    sl->len = len;
    sl->tokens = tokens;
    sl->kind = kind;
    r->head_b = start + len;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);

    if (r->waiting) {
        r->waiting = 0;
        atomic_store_explicit(&r->waiting_, 0, memory_order_relaxed);
    }
    r->stats.pushed++;
    if (h + 1 - tl > r->stats.hw_items)
        r->stats.hw_items = h + 1 - tl;
    if (r->head_b - tb > r->stats.hw_bytes)
        r->stats.hw_bytes = r->head_b - tb;
    return 0;
}

size_t tb_ring_count(struct tb_ring *r)
{
    size_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t tl = atomic_load_explicit(&r->tail, memory_order_relaxed);
    return h - tl;
}

int tb_ring_peek(struct tb_ring *r, size_t i, struct tb_ring_item *out)
{
    size_t tl = atomic_load_explicit(&r->tail, memory_order_relaxed);
    const struct slot *sl;
    if (i >= tb_ring_count(r))
        return TB_EEMPTY;
    sl = &r->slots[(tl + i) & r->smask];
    out->t = sl->t;
    out->text = r->bytes + (sl->boff & r->bmask);
    out->len = sl->len;
    out->tokens = sl->tokens;
    out->kind = sl->kind;
    return 0;
}

int tb_ring_release(struct tb_ring *r, size_t n)
{
    size_t tl = atomic_load_explicit(&r->tail, memory_order_relaxed);
    const struct slot *last;
    if (n == 0)
        return 0;
    if (n > tb_ring_count(r))
        return TB_EINVAL;
    last = &r->slots[(tl + n - 1) & r->smask];
    atomic_store_explicit(&r->tail_b, last->boff + last->len, memory_order_release);
    atomic_store_explicit(&r->tail, tl + n, memory_order_release);
    return 0;
}

int tb_ring_pop(struct tb_ring *r, struct tb_ring_item *out, char *buf, size_t cap)
{
    int rc = tb_ring_peek(r, 0, out);
    if (rc != 0)
        return rc;
    if (out->len > cap)
        return TB_ETOOBIG;
    if (out->len > 0)
        memcpy(buf, out->text, out->len);
    out->text = buf;
    return tb_ring_release(r, 1);
}

int tb_ring_waiting(struct tb_ring *r)
{
    return atomic_load_explicit(&r->waiting_, memory_order_relaxed);
}

void tb_ring_stats(const struct tb_ring *r, struct tb_ring_stats *out)
{
    *out = r->stats;
}
