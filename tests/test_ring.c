/*
 * test_ring.c - the SPSC token ring: creation, order and content, both
 * kinds of full, wrap-around of text, release rules, high-water marks, and
 * a two-thread stress test.
 *
 * The stress test pushes 10 million items of random sizes from one thread
 * and checks them in another; it is what `make tsan` runs under
 * ThreadSanitizer.  Assertions in the consumer
 * thread would longjmp across threads, so the threads only record the
 * first mismatch and the main thread asserts after joining.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ring.h"
#include "ttsbuf/stream.h"

/* Where single-thread tests pop text to (the largest ring they make fits). */
static char popbuf[1 << 20];

static struct tb_ring *make_ring(size_t slots, size_t bytes)
{
    struct tb_ring *r = NULL;
    assert_int_equal(tb_ring_create(slots, bytes, &r), 0);
    assert_non_null(r);
    return r;
}

/* Pushes a NUL-terminated string with tokens as a tag. */
static int push_str(struct tb_ring *r, double t, const char *s, uint32_t tokens)
{
    return tb_ring_push(r, t, s, (uint32_t)strlen(s), tokens, TB_KIND_CONTENT);
}

/* Asserts that item i is (t, s, tokens). */
static void assert_item(struct tb_ring *r, size_t i, double t, const char *s, uint32_t tokens)
{
    struct tb_ring_item it;
    assert_int_equal(tb_ring_peek(r, i, &it), 0);
    assert_true(it.t == t);
    assert_int_equal(it.len, strlen(s));
    assert_memory_equal(it.text, s, it.len);
    assert_int_equal(it.tokens, tokens);
}

/* A text of n bytes: c, c+1, ... (so neighbours differ). */
static void fill(char *buf, size_t n, int c)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('A' + (c + (int)i) % 26);
}

static void create_rounds_up(void **state)
{
    static const struct {
        size_t slots, bytes, want_slots, want_bytes;
    } cases[] = {
        {1, 1, 2, 64},  /* minimums */
        {2, 64, 2, 64}, /* already powers of two */
        {3, 65, 4, 128}, {8, 100, 8, 128}, {1000, 1000, 1024, 1024}, {1025, 4096, 2048, 4096},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tb_ring *r = make_ring(cases[i].slots, cases[i].bytes);
        assert_int_equal(tb_ring_slot_capacity(r), cases[i].want_slots);
        assert_int_equal(tb_ring_byte_capacity(r), cases[i].want_bytes);
        assert_int_equal(tb_ring_count(r), 0);
        tb_ring_destroy(r);
    }
}

static void create_rejects_bad_sizes(void **state)
{
    const size_t cap = (size_t)1 << 30; /* the documented maximum */
    const struct {
        size_t slots, bytes;
    } bad[] = {
        {0, 64}, {2, 0}, {0, 0}, {cap + 1, 64}, {2, cap + 1}, {SIZE_MAX, 64}, {2, SIZE_MAX},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tb_ring *r = (struct tb_ring *)&r; /* must be reset to NULL */
        assert_int_equal(tb_ring_create(bad[i].slots, bad[i].bytes, &r), TB_EINVAL);
        assert_null(r);
    }
    tb_ring_destroy(NULL); /* a no-op */
}

static void push_peek_pop_in_order(void **state)
{
    struct tb_ring *r = make_ring(8, 64);
    struct tb_ring_item it;
    (void)state;
    assert_int_equal(push_str(r, 0.5, "Hello", 1), 0);
    assert_int_equal(tb_ring_push(r, 0.75, "ignored", 0, 2, TB_KIND_REASONING), 0);
    assert_int_equal(push_str(r, 1.25, " world", 3), 0);
    assert_int_equal(tb_ring_count(r), 3);

    /* Peeking takes nothing and sees every field. */
    assert_item(r, 0, 0.5, "Hello", 1);
    assert_item(r, 1, 0.75, "", 2);
    assert_item(r, 2, 1.25, " world", 3);
    assert_int_equal(tb_ring_peek(r, 1, &it), 0);
    assert_int_equal(it.kind, TB_KIND_REASONING);
    assert_int_equal(tb_ring_peek(r, 3, &it), TB_EEMPTY);
    assert_int_equal(tb_ring_count(r), 3);

    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
    assert_true(it.t == 0.5);
    assert_int_equal(it.len, 5);
    assert_memory_equal(it.text, "Hello", 5);
    assert_int_equal(it.kind, TB_KIND_CONTENT);
    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
    assert_int_equal(it.tokens, 2);
    assert_int_equal(it.len, 0);
    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
    assert_int_equal(it.tokens, 3);
    assert_memory_equal(it.text, " world", 6);
    assert_int_equal(tb_ring_count(r), 0);
    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), TB_EEMPTY);
    assert_int_equal(tb_ring_peek(r, 0, &it), TB_EEMPTY);
    tb_ring_destroy(r);
}

static void release_frees_oldest(void **state)
{
    struct tb_ring *r = make_ring(8, 64);
    (void)state;
    assert_int_equal(push_str(r, 1, "a", 1), 0);
    assert_int_equal(push_str(r, 2, "bb", 2), 0);
    assert_int_equal(push_str(r, 3, "ccc", 3), 0);
    assert_int_equal(push_str(r, 4, "dddd", 4), 0);
    assert_int_equal(push_str(r, 5, "eeeee", 5), 0);

    assert_int_equal(tb_ring_release(r, 0), 0);
    assert_int_equal(tb_ring_count(r), 5);
    assert_int_equal(tb_ring_release(r, 2), 0);
    assert_int_equal(tb_ring_count(r), 3);
    assert_item(r, 0, 3, "ccc", 3);
    assert_item(r, 2, 5, "eeeee", 5);

    /* Too many: an error, and nothing is freed. */
    assert_int_equal(tb_ring_release(r, 4), TB_EINVAL);
    assert_int_equal(tb_ring_release(r, SIZE_MAX), TB_EINVAL);
    assert_int_equal(tb_ring_count(r), 3);
    assert_item(r, 0, 3, "ccc", 3);

    assert_int_equal(tb_ring_release(r, 3), 0);
    assert_int_equal(tb_ring_count(r), 0);
    assert_int_equal(tb_ring_release(r, 1), TB_EINVAL);
    assert_int_equal(tb_ring_release(r, 0), 0);
    tb_ring_destroy(r);
}

static void full_slots_refuse_and_store_nothing(void **state)
{
    struct tb_ring *r = make_ring(4, 64);
    struct tb_ring_stats st;
    (void)state;
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(push_str(r, i, "x", i), 0);
    assert_int_equal(push_str(r, 9, "new", 9), TB_EFULL);
    assert_int_equal(push_str(r, 9, "new", 9), TB_EFULL);
    assert_int_equal(tb_ring_count(r), 4);
    tb_ring_stats(r, &st);
    assert_int_equal(st.pushed, 4);
    assert_int_equal(st.full, 2);

    /* Nothing was overwritten: the oldest item is still the first. */
    assert_item(r, 0, 0, "x", 0);
    assert_item(r, 3, 3, "x", 3);
    assert_int_equal(tb_ring_release(r, 1), 0);
    assert_int_equal(push_str(r, 9, "new", 9), 0);
    assert_item(r, 0, 1, "x", 1);
    assert_item(r, 3, 9, "new", 9);
    tb_ring_stats(r, &st);
    assert_int_equal(st.pushed, 5);
    assert_int_equal(st.full, 2);
    tb_ring_destroy(r);
}

static void full_bytes_refuse_and_store_nothing(void **state)
{
    struct tb_ring *r = make_ring(16, 64);
    struct tb_ring_stats st;
    char a[40], b[30], c[24];
    (void)state;
    fill(a, sizeof(a), 0);
    fill(b, sizeof(b), 1);
    fill(c, sizeof(c), 2);
    assert_int_equal(tb_ring_push(r, 1, a, 40, 1, 0), 0);
    /* 40 + 30 > 64 bytes, although 15 slots are free. */
    assert_int_equal(tb_ring_push(r, 2, b, 30, 2, 0), TB_EFULL);
    assert_int_equal(tb_ring_count(r), 1);
    tb_ring_stats(r, &st);
    assert_int_equal(st.full, 1);
    assert_int_equal(st.pushed, 1);
    /* Exactly the rest fits. */
    assert_int_equal(tb_ring_push(r, 3, c, 24, 3, 0), 0);
    assert_int_equal(tb_ring_push(r, 4, "", 0, 4, 0), 0); /* empty text fits */
    assert_int_equal(tb_ring_push(r, 5, "z", 1, 5, 0), TB_EFULL);
    assert_int_equal(tb_ring_count(r), 3);

    struct tb_ring_item it;
    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
    assert_memory_equal(it.text, a, 40);
    assert_int_equal(tb_ring_push(r, 2, b, 30, 2, 0), 0);
    assert_int_equal(tb_ring_peek(r, 0, &it), 0);
    assert_memory_equal(it.text, c, 24);
    assert_int_equal(tb_ring_peek(r, 2, &it), 0);
    assert_memory_equal(it.text, b, 30);
    tb_ring_stats(r, &st);
    assert_int_equal(st.full, 2);
    assert_int_equal(st.pushed, 4);
    tb_ring_destroy(r);
}

static void too_big_is_not_full(void **state)
{
    struct tb_ring *r = make_ring(4, 64);
    struct tb_ring_stats st;
    struct tb_ring_item it;
    char buf[65];
    (void)state;
    fill(buf, sizeof(buf), 3);
    assert_int_equal(tb_ring_push(r, 1, buf, 65, 1, 0), TB_ETOOBIG);
    assert_int_equal(tb_ring_push(r, 1, buf, UINT32_MAX, 1, 0), TB_ETOOBIG);
    assert_int_equal(tb_ring_count(r), 0);
    tb_ring_stats(r, &st);
    assert_int_equal(st.full, 0);
    assert_int_equal(st.pushed, 0);
    /* The whole byte area in one item is allowed. */
    assert_int_equal(tb_ring_push(r, 1, buf, 64, 1, 0), 0);
    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
    assert_int_equal(it.len, 64);
    assert_memory_equal(it.text, buf, 64);
    tb_ring_destroy(r);
}

/*
 * A text that would straddle the end of the byte area is moved to the
 * start, and the skipped bytes count as used until it is released.
 */
static void wrap_keeps_text_contiguous(void **state)
{
    struct tb_ring *r = make_ring(8, 64);
    struct tb_ring_stats st;
    struct tb_ring_item it;
    char a[40], s[10], b[30], c[10], d[11];
    (void)state;
    fill(a, sizeof(a), 0);
    fill(s, sizeof(s), 3);
    fill(b, sizeof(b), 5);
    fill(c, sizeof(c), 9);
    fill(d, sizeof(d), 11);
    assert_int_equal(tb_ring_push(r, 1, a, 40, 1, 0), 0); /* 0..39 */
    assert_int_equal(tb_ring_push(r, 2, s, 10, 2, 0), 0); /* 40..49 */
    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
    /* 50..63 is too short for 30 bytes: b goes to 0..29, whole. */
    assert_int_equal(tb_ring_push(r, 3, b, 30, 3, 0), 0);
    assert_int_equal(tb_ring_peek(r, 1, &it), 0);
    assert_int_equal(it.len, 30);
    assert_memory_equal(it.text, b, 30);
    tb_ring_stats(r, &st);
    /* Held: s (10), the 14 skipped bytes, b (30). */
    assert_int_equal(st.hw_bytes, 54);
    assert_int_equal(tb_ring_push(r, 4, c, 10, 4, 0), 0); /* 30..39 */
    assert_int_equal(tb_ring_push(r, 5, d, 1, 5, 0), TB_EFULL);
    tb_ring_stats(r, &st);
    assert_int_equal(st.hw_bytes, 64);

    /* Releasing s frees its 10 bytes, but the skipped bytes stay held
     * until b (the item after them) is released. */
    assert_int_equal(tb_ring_release(r, 1), 0);
    assert_int_equal(tb_ring_push(r, 5, d, 11, 5, 0), TB_EFULL);
    assert_int_equal(tb_ring_push(r, 5, d, 10, 5, 0), 0); /* 40..49 */
    assert_int_equal(tb_ring_release(r, 1), 0);           /* b */
    assert_int_equal(tb_ring_push(r, 6, d, 11, 6, 0), 0); /* 50..60 */
    assert_int_equal(tb_ring_count(r), 3);
    assert_int_equal(tb_ring_peek(r, 0, &it), 0);
    assert_memory_equal(it.text, c, 10);
    assert_int_equal(tb_ring_peek(r, 1, &it), 0);
    assert_memory_equal(it.text, d, 10);
    assert_int_equal(tb_ring_peek(r, 2, &it), 0);
    assert_memory_equal(it.text, d, 11);
    tb_ring_destroy(r);
}

/* Free bytes on both sides of the end do not add up: text needs one span. */
static void wrap_needs_one_span(void **state)
{
    struct tb_ring *r = make_ring(8, 64);
    struct tb_ring_item it;
    char a[10], b[40], c[20], d[14], e[10];
    (void)state;
    fill(a, sizeof(a), 0);
    fill(b, sizeof(b), 1);
    fill(c, sizeof(c), 2);
    fill(d, sizeof(d), 3);
    fill(e, sizeof(e), 4);
    assert_int_equal(tb_ring_push(r, 1, a, 10, 1, 0), 0); /* bytes 0..9 */
    assert_int_equal(tb_ring_push(r, 2, b, 40, 2, 0), 0); /* bytes 10..49 */
    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
    /* 24 bytes are free (50..63 and 0..9), but 20 fit in neither span. */
    assert_int_equal(tb_ring_push(r, 3, c, 20, 3, 0), TB_EFULL);
    assert_int_equal(tb_ring_count(r), 1);
    /* Each span on its own is usable. */
    assert_int_equal(tb_ring_push(r, 4, d, 14, 4, 0), 0); /* 50..63 */
    assert_int_equal(tb_ring_push(r, 5, e, 10, 5, 0), 0); /* 0..9 */
    assert_int_equal(tb_ring_push(r, 6, "", 0, 6, 0), 0);
    assert_int_equal(tb_ring_push(r, 7, "x", 1, 7, 0), TB_EFULL);
    assert_int_equal(tb_ring_count(r), 4);
    assert_int_equal(tb_ring_peek(r, 0, &it), 0);
    assert_memory_equal(it.text, b, 40);
    assert_int_equal(tb_ring_peek(r, 1, &it), 0);
    assert_memory_equal(it.text, d, 14);
    assert_int_equal(tb_ring_peek(r, 2, &it), 0);
    assert_memory_equal(it.text, e, 10);
    assert_int_equal(tb_ring_peek(r, 3, &it), 0);
    assert_int_equal(it.len, 0);
    assert_int_equal(it.tokens, 6);
    tb_ring_destroy(r);
}

/*
 * Once the consumer has released everything, any text up to the byte
 * capacity must fit, wherever the write position is: the skip to the
 * start does not count against an empty ring, so a 50-byte push after a
 * 40-byte one is accepted, not refused with TB_EFULL for ever.
 */
static void empty_ring_accepts_any_fitting_text(void **state)
{
    struct tb_ring *r = make_ring(4, 64);
    struct tb_ring_stats st;
    struct tb_ring_item it;
    char buf[64];
    (void)state;
    for (uint32_t first = 1; first < 64; first++) {
        for (uint32_t len = 1; len <= 64; len++) {
            fill(buf, len, (int)(first + len));
            assert_int_equal(tb_ring_push(r, 1, buf, first, 1, 0), 0);
            assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
            if (tb_ring_push(r, 2, buf, len, 2, 0) != 0)
                fail_msg("empty ring refused %u bytes after %u", len, first);
            assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
            assert_int_equal(it.len, len);
            assert_memory_equal(it.text, buf, len);
        }
    }
    tb_ring_stats(r, &st);
    assert_true(st.hw_bytes <= 64);
    assert_int_equal(st.full, 0);
    tb_ring_destroy(r);
}

/* A deterministic PRNG (splitmix64) shared by the model tests. */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Item i's text: length 0..64 and bytes both derived from i alone, so the
 * consumer can regenerate what the producer sent. */
static uint32_t item_text(uint64_t i, char *buf)
{
    uint64_t s = i * 0x2545F4914F6CDD1Dull + 1;
    uint64_t x = splitmix(&s);
    uint32_t len = (uint32_t)(x % 65);
    for (uint32_t k = 0; k < len; k++) {
        if (k % 8 == 0)
            x = splitmix(&s);
        buf[k] = (char)(x >> (8 * (k % 8)));
    }
    return len;
}

/*
 * Many cycles through a small ring, one thread: every text comes back
 * whole and in order however it lands relative to the end, and a push is
 * refused only when the ring holds something.
 */
static void wrap_many_cycles(void **state)
{
    struct tb_ring *r = make_ring(8, 128);
    struct tb_ring_stats st;
    uint64_t rng = 42, next_push = 0, next_pop = 0, refused = 0;
    char want[64];
    (void)state;
    while (next_pop < 200000) {
        uint64_t op = splitmix(&rng) % 4;
        if (op < 2) {
            /* Push the next item, or learn that the ring is full. */
            char buf[64];
            uint32_t len = item_text(next_push, buf);
            int rc = tb_ring_push(r, (double)next_push, buf, len, (uint32_t)next_push, 0);
            if (rc == TB_EFULL) {
                refused++;
                assert_true(tb_ring_count(r) > 0);
            } else {
                assert_int_equal(rc, 0);
                next_push++;
            }
        } else {
            /* Consume a batch of 1..3: peek all, check, release. */
            size_t n = tb_ring_count(r), k = 1 + (size_t)(op - 2) * 2;
            assert_int_equal(n, next_push - next_pop);
            if (k > n)
                k = n;
            for (size_t i = 0; i < k; i++) {
                struct tb_ring_item it;
                uint32_t len = item_text(next_pop + i, want);
                assert_int_equal(tb_ring_peek(r, i, &it), 0);
                assert_int_equal(it.tokens, (uint32_t)(next_pop + i));
                assert_int_equal(it.len, len);
                if (len > 0)
                    assert_memory_equal(it.text, want, len);
            }
            assert_int_equal(tb_ring_release(r, k), 0);
            next_pop += k;
        }
    }
    tb_ring_stats(r, &st);
    assert_int_equal(st.pushed, next_push);
    assert_int_equal(st.full, refused);
    assert_true(refused > 0);
    assert_true(st.hw_items <= 8);
    assert_true(st.hw_bytes <= 128);
    tb_ring_destroy(r);
}

static void high_water_marks(void **state)
{
    struct tb_ring *r = make_ring(8, 64);
    struct tb_ring_stats st;
    struct tb_ring_item it;
    (void)state;
    tb_ring_stats(r, &st);
    assert_int_equal(st.hw_items, 0);
    assert_int_equal(st.hw_bytes, 0);
    assert_int_equal(push_str(r, 1, "abcdefghij", 1), 0); /* 10 bytes */
    assert_int_equal(push_str(r, 2, "klmno", 2), 0);      /* 15 */
    assert_int_equal(push_str(r, 3, "", 3), 0);           /* 15, 3 items */
    tb_ring_stats(r, &st);
    assert_int_equal(st.hw_items, 3);
    assert_int_equal(st.hw_bytes, 15);

    /* Draining does not lower the marks; smaller fills do not move them. */
    assert_int_equal(tb_ring_release(r, 3), 0);
    assert_int_equal(push_str(r, 4, "pq", 4), 0);
    tb_ring_stats(r, &st);
    assert_int_equal(st.hw_items, 3);
    assert_int_equal(st.hw_bytes, 15);

    /* A bigger fill raises them. */
    assert_int_equal(push_str(r, 5, "0123456789012345678901234567890123456789", 5), 0);
    assert_int_equal(push_str(r, 6, "x", 6), 0);
    assert_int_equal(push_str(r, 7, "y", 7), 0);
    assert_int_equal(push_str(r, 8, "z", 8), 0);
    tb_ring_stats(r, &st);
    assert_int_equal(st.hw_items, 5);
    assert_int_equal(st.hw_bytes, 2 + 40 + 3);
    assert_int_equal(st.pushed, 8);
    assert_int_equal(tb_ring_pop(r, &it, popbuf, sizeof(popbuf)), 0);
    assert_memory_equal(it.text, "pq", 2);
    tb_ring_destroy(r);
}

/* ---- Two-thread stress test ---- */

/* Order-sensitive running checksum (FNV-1a, 64-bit). */
static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001B3ull;
    return h;
}

#define FNV_START 0xCBF29CE484222325ull

struct stress {
    struct tb_ring *r;
    uint64_t n;        /* items to push */
    atomic_int abort_; /* set by a thread that stops early */
    /* producer's results */
    uint64_t prod_sum, prod_full_waits;
    int prod_err;
    /* consumer's results */
    uint64_t cons_sum, received;
    uint64_t bad_index; /* first item that did not match, or UINT64_MAX */
    char bad_what[96];
};

static void *stress_producer(void *arg)
{
    struct stress *x = arg;
    char buf[64];
    uint64_t h = FNV_START;
    for (uint64_t i = 0; i < x->n; i++) {
        uint32_t len = item_text(i, buf);
        int rc;
        h = fnv(h, buf, len);
        while ((rc = tb_ring_push(x->r, (double)i, buf, len, (uint32_t)i, (uint8_t)(i & 1))) ==
               TB_EFULL) {
            x->prod_full_waits++;
            /* The consumer stops early only after a mismatch. */
            if (atomic_load(&x->abort_))
                goto out;
            sched_yield();
        }
        if (rc != 0) {
            x->prod_err = rc;
            atomic_store(&x->abort_, 1);
            break;
        }
    }
out:
    x->prod_sum = h;
    return NULL;
}

/* Checks one item against what the producer sent; records the first
 * mismatch.  Returns 0 when it matches. */
static int stress_check(struct stress *x, uint64_t i, const struct tb_ring_item *it, uint64_t *h)
{
    char want[64];
    uint32_t len = item_text(i, want);
    const char *what = NULL;
    if (it->tokens != (uint32_t)i || it->t != (double)i)
        what = "sequence number";
    else if (it->kind != (uint8_t)(i & 1))
        what = "kind";
    else if (it->len != len)
        what = "length";
    else if (len > 0 && memcmp(it->text, want, len) != 0)
        what = "text";
    if (what != NULL) {
        x->bad_index = i;
        snprintf(x->bad_what, sizeof(x->bad_what), "%s (got tokens %u len %u, want %u len %u)",
                 what, it->tokens, it->len, (uint32_t)i, len);
        return -1;
    }
    *h = fnv(*h, it->text, it->len);
    return 0;
}

static void *stress_consumer(void *arg)
{
    struct stress *x = arg;
    uint64_t h = FNV_START, rng = 7, i = 0;
    while (i < x->n) {
        size_t n = tb_ring_count(x->r);
        if (n == 0) {
            if (atomic_load(&x->abort_))
                break;
            sched_yield();
            continue;
        }
        if (splitmix(&rng) % 2 == 0) {
            /* Pop one: the text is copied out before the slot is freed,
             * so it is checked after the pop, while the producer runs. */
            struct tb_ring_item it;
            char buf[128];
            if (tb_ring_pop(x->r, &it, buf, sizeof(buf)) != 0 || it.text != buf) {
                x->bad_index = i;
                snprintf(x->bad_what, sizeof(x->bad_what), "pop failed with %zu items visible", n);
                break;
            }
            if (stress_check(x, i, &it, &h) != 0)
                break;
            i++;
        } else {
            /* Peek a batch of up to 16, check it all, then release it:
             * the texts must stay intact while the producer keeps
             * pushing. */
            size_t k = 1 + (size_t)(splitmix(&rng) % 16), j;
            if (k > n)
                k = n;
            for (j = 0; j < k; j++) {
                struct tb_ring_item it;
                if (tb_ring_peek(x->r, j, &it) != 0 || stress_check(x, i + j, &it, &h) != 0)
                    break;
            }
            if (j < k) {
                if (x->bad_index == UINT64_MAX) {
                    x->bad_index = i + j;
                    snprintf(x->bad_what, sizeof(x->bad_what), "peek failed");
                }
                break;
            }
            if (tb_ring_release(x->r, k) != 0) {
                x->bad_index = i;
                snprintf(x->bad_what, sizeof(x->bad_what), "release failed");
                break;
            }
            i += k;
        }
    }
    x->received = i;
    x->cons_sum = h;
    if (x->bad_index != UINT64_MAX)
        atomic_store(&x->abort_, 1);
    return NULL;
}

/* Ten million items: about 2 s normally, under a minute with TSan. */
#define STRESS_ITEMS 10000000u

static void two_thread_stress(void **state)
{
    struct stress x;
    pthread_t prod, cons;
    struct tb_ring_stats st;
    (void)state;
    memset(&x, 0, sizeof(x));
    /* Small enough to be full often and to wrap its text constantly. */
    x.r = make_ring(256, 2048);
    x.n = STRESS_ITEMS;
    atomic_init(&x.abort_, 0);
    x.bad_index = UINT64_MAX;
    assert_int_equal(pthread_create(&cons, NULL, stress_consumer, &x), 0);
    assert_int_equal(pthread_create(&prod, NULL, stress_producer, &x), 0);
    assert_int_equal(pthread_join(prod, NULL), 0);
    assert_int_equal(pthread_join(cons, NULL), 0);

    if (x.bad_index != UINT64_MAX)
        fail_msg("item %llu: %s", (unsigned long long)x.bad_index, x.bad_what);
    assert_int_equal(x.prod_err, 0);
    assert_int_equal(x.received, x.n);
    assert_int_equal(x.cons_sum, x.prod_sum);
    assert_int_equal(tb_ring_count(x.r), 0);
    tb_ring_stats(x.r, &st);
    assert_int_equal(st.pushed, x.n);
    assert_int_equal(st.full, x.prod_full_waits);
    assert_true(st.hw_items <= 256);
    assert_true(st.hw_bytes <= 2048);
    tb_ring_destroy(x.r);
}

/* pop copies the text out; a buffer too small takes nothing. */
static void pop_copies_and_refuses_small_buffer(void **state)
{
    (void)state;
    struct tb_ring *r = make_ring(4, 64);
    struct tb_ring_item it;
    char small[3], big[16];
    assert_int_equal(tb_ring_push(r, 0.5, "hello", 5, 2, 1), 0);
    assert_int_equal(tb_ring_pop(r, &it, small, sizeof(small)), TB_ETOOBIG);
    assert_int_equal(tb_ring_count(r), 1);
    assert_int_equal(tb_ring_pop(r, &it, big, sizeof(big)), 0);
    assert_ptr_equal(it.text, big);
    assert_memory_equal(it.text, "hello", 5);
    assert_int_equal(it.len, 5);
    assert_int_equal(it.tokens, 2);
    assert_int_equal(it.kind, 1);
    assert_true(it.t == 0.5);
    assert_int_equal(tb_ring_count(r), 0);
    tb_ring_destroy(r);
}

int tb_test_ring(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_rounds_up),
        cmocka_unit_test(create_rejects_bad_sizes),
        cmocka_unit_test(push_peek_pop_in_order),
        cmocka_unit_test(pop_copies_and_refuses_small_buffer),
        cmocka_unit_test(release_frees_oldest),
        cmocka_unit_test(full_slots_refuse_and_store_nothing),
        cmocka_unit_test(full_bytes_refuse_and_store_nothing),
        cmocka_unit_test(too_big_is_not_full),
        cmocka_unit_test(wrap_keeps_text_contiguous),
        cmocka_unit_test(wrap_needs_one_span),
        cmocka_unit_test(empty_ring_accepts_any_fitting_text),
        cmocka_unit_test(wrap_many_cycles),
        cmocka_unit_test(high_water_marks),
        cmocka_unit_test(two_thread_stress),
    };
    return TB_RUN_GROUP("ring", tests);
}
