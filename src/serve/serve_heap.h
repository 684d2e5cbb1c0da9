/*
 * serve_heap.h - private to libttsbuf: the mock server's deadline heap, a
 * binary min-heap of nodes keyed by a due time (as libuv keeps its timer
 * heap in heap-inl.h, apart from the loop).
 *
 * A node is embedded in what it schedules (the server's connections) and
 * knows its own position, so changing or removing its deadline is
 * O(log n), about 14 comparisons at ten thousand nodes, with no search.
 * An entry keeps the key beside the node pointer: sifting compares within
 * one small array instead of chasing a pointer (a likely cache miss) per
 * comparison.  Not thread-safe: the server's loop thread owns it.
 */
#ifndef TTSBUF_SERVE_HEAP_H
#define TTSBUF_SERVE_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/grow.h"
#include "ttsbuf/error.h"

#define TB_SERVE_HEAP_NONE ((size_t)-1)

struct tb_serve_heap_node {
    int64_t due; /* the deadline, when idx != TB_SERVE_HEAP_NONE */
    size_t idx;  /* position in the heap, or TB_SERVE_HEAP_NONE */
};

struct tb_serve_heap_ent {
    int64_t due;
    struct tb_serve_heap_node *node;
};

/* Zero-initialised: empty.  Release with free(h->a). */
struct tb_serve_heap {
    struct tb_serve_heap_ent *a;
    size_t n, cap;
};

static inline void tb_serve_heap_node_init(struct tb_serve_heap_node *x)
{
    x->due = 0;
    x->idx = TB_SERVE_HEAP_NONE;
}

/* The node with the earliest deadline, or NULL when the heap is empty. */
static inline struct tb_serve_heap_node *tb_serve_heap_top(const struct tb_serve_heap *h)
{
    return h->n > 0 ? h->a[0].node : NULL;
}

static inline void tb_serve_heap_put_(struct tb_serve_heap *h, size_t i, struct tb_serve_heap_ent e)
{
    h->a[i] = e;
    e.node->idx = i;
}

static inline void tb_serve_heap_up_(struct tb_serve_heap *h, size_t i)
{
    struct tb_serve_heap_ent e = h->a[i];
    while (i > 0 && h->a[(i - 1) / 2].due > e.due) {
        tb_serve_heap_put_(h, i, h->a[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    tb_serve_heap_put_(h, i, e);
}

static inline void tb_serve_heap_down_(struct tb_serve_heap *h, size_t i)
{
    struct tb_serve_heap_ent e = h->a[i];
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= h->n)
            break;
        if (k + 1 < h->n && h->a[k + 1].due < h->a[k].due)
            k++;
        if (h->a[k].due >= e.due)
            break;
        tb_serve_heap_put_(h, i, h->a[k]);
        i = k;
    }
    tb_serve_heap_put_(h, i, e);
}

/* Takes x out of the heap; nothing when it is not in it. */
static inline void tb_serve_heap_remove(struct tb_serve_heap *h, struct tb_serve_heap_node *x)
{
    size_t i = x->idx;
    struct tb_serve_heap_node *moved;
    if (i == TB_SERVE_HEAP_NONE)
        return;
    x->idx = TB_SERVE_HEAP_NONE;
    if (i == --h->n)
        return;
    /* Move the last entry into the hole; it may belong above or below. */
    moved = h->a[h->n].node;
    tb_serve_heap_put_(h, i, h->a[h->n]);
    tb_serve_heap_up_(h, i);
    tb_serve_heap_down_(h, moved->idx);
}

/* Sets x's deadline, adding x when it is not in the heap.  Returns 0, or
 * TB_ENOMEM when the heap cannot grow (x is then not in it). */
static inline int tb_serve_heap_set(struct tb_serve_heap *h, struct tb_serve_heap_node *x,
                                    int64_t due)
{
    struct tb_serve_heap_ent e = {due, x};
    x->due = due;
    if (x->idx != TB_SERVE_HEAP_NONE) {
        h->a[x->idx].due = due;
        tb_serve_heap_up_(h, x->idx);
        tb_serve_heap_down_(h, x->idx);
        return 0;
    }
    if (h->n == h->cap) {
        struct tb_serve_heap_ent *na = tb_grow(h->a, &h->cap, sizeof(*na), 64);
        if (na == NULL)
            return TB_ENOMEM;
        h->a = na;
    }
    tb_serve_heap_put_(h, h->n, e);
    h->n++;
    tb_serve_heap_up_(h, h->n - 1);
    return 0;
}

#endif
