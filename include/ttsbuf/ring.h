/*
 * ring.h - a lock-free single-producer/single-consumer ring of tokens.
 *
 * Carries token text with its arrival time from the producer (the network,
 * or the simulator's source) to the consumer (the speech-rate drain).
 * Two fixed-size power-of-two arrays: item slots and a text byte area.
 * Indices run freely and are masked on access (Linux kfifo, PortAudio
 * pa_ringbuffer), so full and empty are told apart without a spare slot.
 *
 * Rules:
 *  - Exactly one producer thread calls tb_ring_push/tb_ring_free_*; exactly
 *    one consumer thread calls tb_ring_count/peek/release/pop.  Any thread
 *    may call tb_ring_stats after both have stopped.
 *  - Full means backpressure: tb_ring_push returns TB_EFULL and stores
 *    nothing; the producer waits (or pauses its transfer) and retries.  A
 *    token is never dropped or overwritten.
 *  - The consumer may look at unconsumed items without taking them
 *    (peek), and frees them in order (release): a chunk's tokens stay in
 *    the ring until playback needs them, which is what the high-water mark
 *    measures.
 *  - Text pointers from peek stay valid until that item is released;
 *    pop copies the text out, since its slot is free the moment it returns.
 *
 * No allocation after tb_ring_create; no locks; no system calls.
 */
#ifndef TTSBUF_RING_H
#define TTSBUF_RING_H

#include <stddef.h>
#include <stdint.h>

struct tb_ring;

struct tb_ring_item {
    double t;         /* arrival time, seconds */
    const char *text; /* points into the ring; valid until released */
    uint32_t len;     /* bytes of text (may be 0) */
    uint32_t tokens;  /* tokens carried */
    uint8_t kind;     /* enum tb_kind */
};

/*
 * tb_ring_create - a ring of at least `slots` items and `bytes` bytes of
 * text (both rounded up to powers of two; minimum 2 and 64).
 * Returns 0 and *out, TB_EINVAL (0 or over 2^30), or TB_ENOMEM.
 * Caller owns the ring; free it with tb_ring_destroy.
 */
int tb_ring_create(size_t slots, size_t bytes, struct tb_ring **out);

/* Frees the ring; NULL is a no-op.  Neither thread may use it after. */
void tb_ring_destroy(struct tb_ring *r);

/* Capacity actually allocated (after rounding). */
size_t tb_ring_slot_capacity(const struct tb_ring *r);
size_t tb_ring_byte_capacity(const struct tb_ring *r);

/*
 * Producer: tb_ring_push - appends one item, copying len bytes of text.
 * Returns 0; TB_EFULL when there is no room now (retry later);
 * TB_ETOOBIG when len can never fit (len > byte capacity).
 */
int tb_ring_push(struct tb_ring *r, double t, const char *text, uint32_t len, uint32_t tokens,
                 uint8_t kind);

/* Consumer: unconsumed items now visible (acquire). */
size_t tb_ring_count(struct tb_ring *r);

/* Consumer: the i-th unconsumed item (0 = oldest), i < tb_ring_count().
 * Returns 0, or TB_EEMPTY when there is no such item. */
int tb_ring_peek(struct tb_ring *r, size_t i, struct tb_ring_item *out);

/* Consumer: frees the n oldest items (n <= tb_ring_count()).
 * Returns 0 or TB_EINVAL when n is too large (nothing is freed then). */
int tb_ring_release(struct tb_ring *r, size_t n);

/* Consumer: takes the oldest item, copying its text into buf (cap bytes)
 * before freeing its slot; out->text then points to buf.  Returns 0,
 * TB_EEMPTY, or TB_ETOOBIG (nothing taken) when the text exceeds cap. */
int tb_ring_pop(struct tb_ring *r, struct tb_ring_item *out, char *buf, size_t cap);

/* Consumer: non-zero when the producer's last push was refused (it is
 * waiting for room).  A hint, not a synchronisation point. */
int tb_ring_waiting(struct tb_ring *r);

/* High-water marks, maintained by the producer at each push. */
struct tb_ring_stats {
    uint64_t pushed; /* items pushed */
    uint64_t full;   /* pushes refused with TB_EFULL */
    size_t hw_items; /* most items held at once */
    size_t hw_bytes; /* most text bytes held at once (with padding) */
};

/* Producer thread, or any thread once both sides have stopped. */
void tb_ring_stats(const struct tb_ring *r, struct tb_ring_stats *out);

#endif
