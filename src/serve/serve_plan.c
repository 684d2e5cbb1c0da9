/*
 * serve_plan.c - the mock server's schedule for one request (see
 * serve_plan.h).
 *
 * Times: an item of stream events is due at the last event's t (all its
 * tokens exist then), plus every stall that came before it or on it; a
 * stall shifts the rest of the response, as a real stalled server would.
 * The reasoning@N deltas are spread evenly over [0, t of the first event),
 * so they come first without moving the stream's own times.  The prefill
 * cost shifts the whole response, reasoning included, as a stall before
 * token 0 would.  Times are
 * clamped to [0, 1e9] s so the nanosecond arithmetic never overflows.
 * And which stream a request gets when each draws its own
 * (tb_serve_request_seed, serve.h).
 */
#include "serve_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/serve.h"

/* Reasoning@N text, word by word. */
static const char *const think_words[] = {"Let", " me", " think", " this", " through", "."};
#define THINK_WORDS (sizeof(think_words) / sizeof(think_words[0]))

static int64_t ns(double t)
{
    if (!(t > 0))
        return 0;
    if (t > 1e9)
        t = 1e9;
    return (int64_t)llround(t * 1e9);
}

void tb_serve_plan_init(struct tb_serve_plan *p, const struct tb_stream *s,
                        const struct tb_faults *f, int legacy, uint64_t max_tokens)
{
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->f = *f;
    p->legacy = legacy;
    p->max_tokens = max_tokens;
    if (legacy)
        p->f.reasoning = 0;
}

void tb_serve_plan_prefill(struct tb_serve_plan *p, double per_token, uint64_t tokens)
{
    p->prefill = ns(per_token * (double)tokens);
    p->shift += p->prefill;
}

/* Does fault position k (-1: none) fall on tokens [t0, t0 + n)? */
static int hits(long k, uint64_t t0, uint64_t n)
{
    return k >= 0 && (uint64_t)k >= t0 && (uint64_t)k - t0 < n;
}

int tb_serve_plan_next(struct tb_serve_plan *p, struct tb_serve_item *it)
{
    const struct tb_stream *s = p->s;
    int64_t due;

    if (p->done)
        return 0;
    memset(it, 0, sizeof(*it));
    if (p->r < p->f.reasoning) {
        int64_t first = s->n > 0 ? ns(s->ev[0].t) : 0;
        it->kind = TB_KIND_REASONING;
        it->i0 = it->i1 = p->i;
        it->r = p->r;
        it->ntok = 1;
        /* first * r / N in double: exact to the nanosecond below 2^53 ns
         * (104 days), and first * r could overflow int64. */
        due = (int64_t)((double)first * p->r / p->f.reasoning);
    } else {
        size_t i = p->i;
        uint32_t want = p->f.burst ? p->f.burst : 1;
        while (p->legacy && i < s->n && s->ev[i].kind == TB_KIND_REASONING)
            i++;
        if (i >= s->n) {
            p->i = i;
            p->done = 1;
            return 0;
        }
        it->kind = s->ev[i].kind;
        it->i0 = i;
        do {
            it->ntok += s->ev[i].tokens;
            i++;
        } while (it->ntok < want && i < s->n && s->ev[i].kind == it->kind);
        it->i1 = i;
        due = ns(s->ev[i - 1].t);
    }
    it->tok0 = p->tok;
    if (p->max_tokens != 0 && p->tok + it->ntok > p->max_tokens) {
        p->done = 1;
        p->cut = 1;
        return 0;
    }
    if (hits(p->f.stall_at, it->tok0, it->ntok))
        p->shift += ns(p->f.stall_s);
    it->due = due + p->shift;
    it->drop = hits(p->f.drop_at, it->tok0, it->ntok);
    it->error = !it->drop && hits(p->f.error_at, it->tok0, it->ntok);
    it->malformed = hits(p->f.malformed_at, it->tok0, it->ntok);
    if (it->drop || it->error)
        p->done = 1;
    if (it->i1 > it->i0)
        p->i = it->i1;
    else
        p->r++;
    p->tok += it->ntok;
    return 1;
}

size_t tb_serve_plan_text(const struct tb_serve_plan *p, const struct tb_serve_item *it, char **buf,
                          size_t *cap)
{
    const struct tb_stream *s = p->s;
    size_t len = 0;

    if (it->i1 == it->i0) {
        const char *w = think_words[it->r % THINK_WORDS];
        len = strlen(w);
    } else {
        for (size_t i = it->i0; i < it->i1; i++)
            len += s->ev[i].len;
    }
    if (len + 1 > *cap) {
        char *nb = realloc(*buf, len + 1);
        if (nb == NULL)
            return (size_t)-1;
        *buf = nb;
        *cap = len + 1;
    }
    if (it->i1 == it->i0) {
        memcpy(*buf, think_words[it->r % THINK_WORDS], len);
    } else {
        /* Copied event by event: the arena need not hold a group's texts
         * side by side. */
        size_t at = 0;
        for (size_t i = it->i0; i < it->i1; i++) {
            memcpy(*buf + at, tb_stream_text(s, i), s->ev[i].len);
            at += s->ev[i].len;
        }
    }
    (*buf)[len] = '\0';
    return len;
}

int tb_serve_plan_piece(const struct tb_serve_plan *p, const struct tb_serve_item *it, size_t k,
                        const char **text, size_t *len)
{
    if (it->i1 == it->i0) {
        if (k > 0)
            return 0;
        *text = think_words[it->r % THINK_WORDS];
        *len = strlen(*text);
        return 1;
    }
    if (k >= it->i1 - it->i0)
        return 0;
    *text = tb_stream_text(p->s, it->i0 + k);
    *len = p->s->ev[it->i0 + k].len;
    return 1;
}

/* splitmix64's finalizer: every bit of x reaches every bit out. */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t tb_serve_request_seed(uint64_t seed, const char *rid, uint64_t n)
{
    uint64_t k = 0xCBF29CE484222325ull; /* FNV-1a over the id's bytes */
    if (rid == NULL && n <= 1)
        return seed;
    if (rid != NULL) {
        for (const unsigned char *p = (const unsigned char *)rid; *p; p++)
            k = (k ^ *p) * 0x100000001B3ull;
    } else {
        k = n;
    }
    /* Ids and numbers apart (a tag in the high bit), then mixed with the
     * seed; 53 bits so that a log's number reads back exactly. */
    return mix(seed + 0x9E3779B97F4A7C15ull * mix(k ^ (rid != NULL ? 1ull << 63 : 0))) &
           ((1ull << 53) - 1);
}
