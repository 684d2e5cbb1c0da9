/*
 * fuzz_sse.c - the SSE parser (sse.h) fed in arbitrary splits.
 *
 * Input: 4 bytes of settings, then the stream.  Settings pick the caps
 * (the defaults, or small ones so that the cap paths are reached), a seed
 * for the split points, and an event at which the callback stops the feed.
 * The stream is parsed three ways: in one feed, in random-sized feeds, and
 * one byte at a time.  Property (the parser's design rule): events, their
 * offsets, the counters, the pending bytes and any error are the same
 * whatever the split.  Also: an event never exceeds its cap, and a stop
 * requested by the callback leaves tb_sse_offset at that event's offset.
 */
#include <string.h>

#include "fuzz.h"
#include "ttsbuf/error.h"
#include "ttsbuf/sse.h"

struct log {
    struct fuzz_log b;
    size_t events, stop_at, line_max, event_max;
    uint64_t stop_offset;
};

static void put(struct log *l, const void *p, size_t n)
{
    fuzz_log_put(&l->b, p, n);
}

static int on_event(void *ud, const struct tb_sse_event *ev)
{
    struct log *l = ud;
    FUZZ_CHECK(ev->data_len <= l->event_max);
    FUZZ_CHECK(ev->type_len <= l->line_max && ev->id_len <= l->line_max);
    FUZZ_CHECK(ev->type != NULL && ev->data != NULL && ev->id != NULL);
    put(l, &ev->type_len, sizeof(ev->type_len));
    put(l, ev->type, ev->type_len);
    put(l, &ev->data_len, sizeof(ev->data_len));
    put(l, ev->data, ev->data_len);
    put(l, &ev->id_len, sizeof(ev->id_len));
    put(l, ev->id, ev->id_len);
    put(l, &ev->retry_ms, sizeof(ev->retry_ms));
    put(l, &ev->offset, sizeof(ev->offset));
    if (++l->events == l->stop_at) {
        l->stop_offset = ev->offset;
        return 7;
    }
    return 0;
}

struct outcome {
    struct log log;
    int rc;
    char err[160];
    uint64_t offset, comments;
    size_t pending;
};

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* mode 0: one feed; 1: random feeds; 2: a byte at a time. */
static void parse(const uint8_t *s, size_t n, size_t line_max, size_t event_max, size_t stop_at,
                  uint64_t seed, int mode, struct outcome *o)
{
    struct tb_sse *p;
    size_t i = 0;
    memset(o, 0, sizeof(*o));
    o->log.stop_at = stop_at;
    o->log.line_max = line_max;
    o->log.event_max = event_max;
    FUZZ_CHECK(tb_sse_create(line_max, event_max, &p) == 0);
    seed |= 1;
    while (i < n) {
        size_t k = mode == 0 ? n - i : mode == 2 ? 1 : 1 + (size_t)(next(&seed) % 64);
        if (k > n - i)
            k = n - i;
        o->rc = tb_sse_feed(p, (const char *)s + i, k, on_event, &o->log, o->err, sizeof(o->err));
        if (o->rc != 0)
            break;
        i += k;
    }
    if (o->rc == 7)
        FUZZ_CHECK(tb_sse_offset(p) == o->log.stop_offset);
    if (o->rc == TB_ETOOBIG) {
        /* Sticky: a failed parser refuses more input until reset. */
        char e2[160];
        FUZZ_CHECK(tb_sse_feed(p, "x\n\n", 3, on_event, &o->log, e2, sizeof(e2)) == TB_ETOOBIG);
    }
    o->offset = tb_sse_offset(p);
    o->comments = tb_sse_comments(p);
    o->pending = tb_sse_pending(p);
    FUZZ_CHECK(o->offset <= n);
    if (o->rc == 0)
        FUZZ_CHECK(o->offset == n);
    /* A reset parser parses the same input to the same events again. */
    if (mode == 0) {
        struct log again = o->log;
        again.b.buf = NULL;
        again.b.len = again.b.cap = 0;
        again.events = 0;
        tb_sse_reset(p);
        char e2[160];
        int rc = tb_sse_feed(p, (const char *)s, n, on_event, &again, e2, sizeof(e2));
        FUZZ_CHECK(rc == o->rc);
        FUZZ_CHECK(again.b.len == o->log.b.len &&
                   (again.b.len == 0 || memcmp(again.b.buf, o->log.b.buf, again.b.len) == 0));
        free(again.b.buf);
    }
    tb_sse_destroy(p);
}

static void same(const struct outcome *a, const struct outcome *b)
{
    FUZZ_CHECK(a->rc == b->rc);
    FUZZ_CHECK(a->log.b.len == b->log.b.len);
    FUZZ_CHECK(a->log.b.len == 0 || memcmp(a->log.b.buf, b->log.b.buf, a->log.b.len) == 0);
    FUZZ_CHECK(a->comments == b->comments);
    /* After an error the offset counts every byte fed (sse.h), which does
     * depend on the split; the error message names the exact byte. */
    if (a->rc != TB_ETOOBIG) {
        FUZZ_CHECK(a->offset == b->offset);
        FUZZ_CHECK(a->pending == b->pending);
    }
    FUZZ_CHECK(strcmp(a->err, b->err) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t caps[4][2] = {{0, 0}, {16, 64}, {64, 16}, {200, 1000}};
    struct outcome whole, split, bytes;
    size_t line_max, event_max, stop_at;
    uint64_t seed;
    if (size < 4)
        return 0;
    line_max = caps[data[0] & 3][0] ? caps[data[0] & 3][0] : TB_SSE_LINE_MAX;
    event_max = caps[data[0] & 3][1] ? caps[data[0] & 3][1] : TB_SSE_EVENT_MAX;
    stop_at = (data[0] >> 2) & 7; /* 0: never stop */
    seed = (uint64_t)data[1] | (uint64_t)data[2] << 8 | (uint64_t)data[3] << 16;
    data += 4;
    size -= 4;
    parse(data, size, line_max, event_max, stop_at, seed, 0, &whole);
    parse(data, size, line_max, event_max, stop_at, seed, 1, &split);
    same(&whole, &split);
    if (size <= 4096) {
        parse(data, size, line_max, event_max, stop_at, seed, 2, &bytes);
        same(&whole, &bytes);
        free(bytes.log.b.buf);
    }
    free(whole.log.b.buf);
    free(split.log.b.buf);
    return 0;
}
