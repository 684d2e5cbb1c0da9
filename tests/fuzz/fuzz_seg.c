/*
 * fuzz_seg.c - the segmenter (seg.h): every policy on text the network
 * chose.
 *
 * Input: byte 0 picks the policy, byte 1 the minimum chunk length
 * (sentence and clause); the rest is the content, cut into events at each
 * NUL.  An empty event (two NULs in a row) is a forced cut (tb_seg_cut);
 * an event that is not valid UTF-8 is dropped (the reader validates
 * before the segmenter sees text).  At most 8 KiB of content.
 *
 * Properties: chunks tile the content from its start, in order, without
 * gaps or overlaps; each chunk's `cps` is the code points of its span, and
 * its `event` the event being fed (or the last one fed, for a cut and the
 * end); nothing reported lies past what was fed; after the end, what no
 * chunk covers is nothing (the cutting rules) or whitespace alone (the
 * framework profiles, which send no chunk of whitespace); `token` gives
 * one chunk an event; and tb_seg_reset then the same events give the same
 * chunks.
 */
#include <string.h>

#include "../../src/seg/seg_priv.h"
#include "../../src/seg/seg_livekit.h"
#include "fuzz.h"
#include "ttsbuf/seg.h"

#define MAX_TEXT 8192
#define MAX_CHUNKS (MAX_TEXT + 64)

struct seen {
    const char *text; /* the content fed so far (the concatenation) */
    uint64_t end;     /* where the last chunk ended */
    uint32_t event;   /* the event the next chunk may carry at most */
    size_t n;
    struct tb_chunk c[MAX_CHUNKS];
};

static void on_chunk(void *ud, const struct tb_chunk *c)
{
    struct seen *s = ud;
    FUZZ_CHECK(s->n < MAX_CHUNKS);
    FUZZ_CHECK(c->end > s->end);
    FUZZ_CHECK(c->cps >= 1);
    FUZZ_CHECK(c->cps == tb_utf8_count(s->text + s->end, (size_t)(c->end - s->end)));
    FUZZ_CHECK(c->event == s->event);
    s->end = c->end;
    s->c[s->n++] = *c;
}

static int all_space(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n)
        if (!tb_seg_py_space(tb_seg_next_cp((const unsigned char *)p, n, &i)))
            return 0;
    return 1;
}

/* Feeds the events of in[0..n) (see the top); the content fed goes to
 * text (of MAX_TEXT bytes).  Returns the content length. */
static size_t run(struct tb_seg *seg, const uint8_t *in, size_t n, char *text, struct seen *s,
                  size_t *events)
{
    size_t fed = 0, i = 0;
    memset(s, 0, sizeof(*s));
    s->text = text;
    *events = 0;
    while (i <= n) {
        const uint8_t *nul = i < n ? memchr(in + i, 0, n - i) : NULL;
        size_t len = (nul != NULL ? (size_t)(nul - in) : n) - i;
        if (len == 0 && nul != NULL) { /* a forced cut */
            s->event = *events > 0 ? (uint32_t)(*events - 1) : 0;
            tb_seg_cut(seg, on_chunk, s);
            FUZZ_CHECK(s->end == fed); /* nothing is left open */
            FUZZ_CHECK(tb_seg_fed(seg) == fed);
        } else if (len > 0 && tb_utf8_check((const char *)in + i, len) == len) {
            memcpy(text + fed, in + i, len);
            fed += len;
            s->event = (uint32_t)*events;
            tb_seg_feed(seg, text + fed - len, len, on_chunk, s);
            FUZZ_CHECK(tb_seg_fed(seg) == fed);
            FUZZ_CHECK(s->end <= fed);
            (*events)++;
        }
        if (nul == NULL)
            break;
        i += len + 1;
    }
    s->event = *events > 0 ? (uint32_t)(*events - 1) : 0;
    tb_seg_finish(seg, on_chunk, s);
    FUZZ_CHECK(s->end <= fed);
    return fed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char text[MAX_TEXT];
    static struct seen first, again;
    struct tb_seg_opts o;
    struct tb_seg *seg = NULL;
    size_t fed, events, n;
    if (size < 2)
        return 0;
    memset(&o, 0, sizeof(o));
    o.policy = (enum tb_chunk_policy)(data[0] % TB_CHUNK__COUNT);
    o.min_chars = 1u + data[1] % 64u;
    n = size - 2 < MAX_TEXT ? size - 2 : MAX_TEXT;
    FUZZ_CHECK(tb_seg_create(&o, &seg) == 0);
    fed = run(seg, data + 2, n, text, &first, &events);
    if (o.policy == TB_CHUNK_LIVEKIT || o.policy == TB_CHUNK_PIPECAT ||
        o.policy == TB_CHUNK_OPENAI_AGENTS || o.policy == TB_CHUNK_ELEVENLABS_SDK)
        FUZZ_CHECK(all_space(text + first.end, (size_t)(fed - first.end)));
    else
        FUZZ_CHECK(first.end == fed);
    if (o.policy == TB_CHUNK_TOKEN && memchr(data + 2, 0, n) == NULL)
        FUZZ_CHECK(first.n == events);
    tb_seg_reset(seg);
    FUZZ_CHECK(run(seg, data + 2, n, text, &again, &events) == fed);
    FUZZ_CHECK(again.n == first.n);
    for (size_t k = 0; k < first.n; k++)
        FUZZ_CHECK(again.c[k].end == first.c[k].end && again.c[k].cps == first.c[k].cps &&
                   again.c[k].event == first.c[k].event);
    tb_seg_destroy(seg);
    return 0;
}
