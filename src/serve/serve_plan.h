/*
 * serve_plan.h - private to libttsbuf: what the mock server sends for one
 * request, and when (serve_plan.c).  Pure: no I/O, no clock, no allocation
 * except the caller's text buffer.
 *
 * A plan walks the stream and yields items: one outgoing token event each
 * (a burst@N group of stream events, a reasoning@N delta or one stream
 * event), with its due time relative to the moment the request was read
 * and the faults that fall on it.  Token positions (the K of stall@K,
 * drop@K, malformed@K, error@K) count the tokens of the items before, so
 * a fault lands on the item that carries token K whatever the grouping.
 */
#ifndef TTSBUF_SERVE_PLAN_H
#define TTSBUF_SERVE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/faults.h"
#include "ttsbuf/stream.h"

struct tb_serve_item {
    int kind;                   /* enum tb_kind */
    size_t i0, i1;              /* stream events [i0, i1); empty for a reasoning@N delta */
    uint32_t r;                 /* which reasoning@N delta, when [i0, i1) is empty */
    uint64_t tok0;              /* tokens before this item */
    uint64_t ntok;              /* tokens it carries */
    int64_t due;                /* ns after the request was read (stalls included) */
    int drop, error, malformed; /* the fault on this item, if any */
};

struct tb_serve_plan {
    const struct tb_stream *s;
    struct tb_faults f;
    int legacy;          /* no reasoning: the legacy API has no field for it */
    uint64_t max_tokens; /* 0: none */
    size_t i;            /* next stream event */
    uint32_t r;          /* reasoning@N deltas yielded */
    uint64_t tok;        /* tokens yielded */
    int64_t prefill;     /* the prefill cost, ns (tb_serve_plan_prefill) */
    int64_t shift;       /* prefill and stall added so far, ns */
    int done;
    int cut; /* ended by max_tokens (finish_reason "length") */
};

void tb_serve_plan_init(struct tb_serve_plan *p, const struct tb_stream *s,
                        const struct tb_faults *f, int legacy, uint64_t max_tokens);

/*
 * tb_serve_plan_prefill - adds the prefill cost of a request with `tokens`
 * input tokens: per_token x tokens seconds (per_token >= 0, finite), before
 * every item, as if the server read the prompt before its first token.
 * Call it after init, before the first item.
 */
void tb_serve_plan_prefill(struct tb_serve_plan *p, double per_token, uint64_t tokens);

/*
 * tb_serve_plan_next - the next item: returns 1 and *it, or 0 at the end.
 * An item with drop or error set is the last one (the response ends
 * there); an item that would take the tokens past max_tokens is not
 * yielded, and the plan ends with cut set.
 */
int tb_serve_plan_next(struct tb_serve_plan *p, struct tb_serve_item *it);

/*
 * tb_serve_plan_text - the item's text, NUL-terminated, in *buf (grown as
 * needed; *cap its size; the caller frees *buf).  Returns its length, or
 * (size_t)-1 when memory ran out.
 */
size_t tb_serve_plan_text(const struct tb_serve_plan *p, const struct tb_serve_item *it, char **buf,
                          size_t *cap);

/*
 * tb_serve_plan_piece - piece k (from 0) of the item's text without
 * copying it: one piece per stream event of a group, one for a
 * reasoning@N delta.  Returns 1 and *text (not NUL-terminated), *len; 0
 * past the last piece.
 */
int tb_serve_plan_piece(const struct tb_serve_plan *p, const struct tb_serve_item *it, size_t k,
                        const char **text, size_t *len);

#endif
