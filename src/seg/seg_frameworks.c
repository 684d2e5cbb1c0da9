/*
 * seg_frameworks.c - the policies that replay a framework's own
 * splitter: pipecat (SimpleTextAggregator and NLTK's Punkt, punkt.c),
 * livekit (BufferedTokenStream and the basic sentence tokenizer,
 * seg_livekit.c), openai-agents (get_sentence_based_splitter) and
 * elevenlabs-sdk (text_chunker).  See seg.h for each rule.
 *
 * openai-agents and elevenlabs-sdk are linear in the text; livekit costs
 * O(buffer) per event and pipecat O(buffer) per sentence end; the buffer
 * is one sentence or two on prose.
 */
#include <string.h>

#include "punkt.h"
#include "seg_priv.h"
#include "seg_frameworks.h"
#include "seg_livekit.h"
#include "ttsbuf/utf8.h"

/*
 * openai-agents: get_sentence_based_splitter(20), called by the voice
 * pipeline with its whole buffer after every text delta.  It splits the
 * stripped buffer at /(?<=[.!?])\s+/, and when the sentences before the
 * last, joined by one space, hold >= 20 code points, sends them and keeps
 * the last sentence (plus trailing whitespace) as the buffer.  Instead of
 * re-splitting the buffer at every delta, the split is kept up to date one
 * code point at a time: a whitespace run right after . ! ? becomes a
 * boundary once a non-space follows it (before that it is trailing and
 * strip() removes it), and the joined length up to the last boundary is
 * its distance from the buffer's first non-space minus what joining
 * shortened the earlier runs by.  The decision is taken at the end of each
 * delta, as the SDK takes it.  The chunk ends at the sentence end; the run
 * after it (dropped by the SDK) starts the next chunk.
 */
void tb_seg_feed_openai(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                        void *ud)
{
    size_t i = 0;
    while (i < len) {
        uint64_t b = s->fed + i, cps = s->gcps;
        uint32_t cp = tb_seg_next_cp(t, len, &i);
        s->gcps++;
        if (tb_seg_py_space(cp)) {
            if (s->oa_term) {
                s->oa_run = 1;
                s->oa_run_b = b;
                s->oa_run_cps = cps;
            }
            s->oa_term = 0;
            continue;
        }
        if (s->oa_run) {
            s->oa_bnd = 1;
            s->oa_bnd_b = s->oa_run_b;
            s->oa_bnd_cps = s->oa_run_cps;
            s->oa_bnd_end = cps;
            s->oa_bnd_len = s->oa_run_cps - s->oa_first - s->oa_collapsed;
            s->oa_collapsed += cps - s->oa_run_cps - 1;
            s->oa_run = 0;
        }
        if (!s->oa_ns) {
            s->oa_ns = 1;
            s->oa_first = cps;
        }
        s->oa_term = cp == '.' || cp == '!' || cp == '?';
    }
    s->fed += len;
    if (s->oa_bnd && s->oa_bnd_len >= 20) {
        tb_seg_emit(s, s->oa_bnd_b, s->oa_bnd_cps, fn, ud);
        s->oa_first = s->oa_bnd_end;
        s->oa_collapsed = 0;
        s->oa_bnd = 0;
    }
}

/* Appends the code point at t[*i] to the buffer (livekit, pipecat),
 * cutting what is buffered first when the buffer is full. */
static uint32_t buf_push(struct tb_seg *s, const unsigned char *t, size_t len, size_t *i,
                         tb_chunk_fn fn, void *ud)
{
    size_t at = *i;
    uint32_t cp = tb_seg_next_cp(t, len, i);
    if (s->lk_n == TB_SEG_LK_CAP) { /* bounded: cut what is buffered */
        tb_seg_emit(s, s->fed + at, s->gcps, fn, ud);
        s->lk_n = 0;
        s->pc_look = 0;
    }
    s->lk_cp[s->lk_n] = cp;
    s->lk_len[s->lk_n++] = (uint8_t)(*i - at);
    s->gcps++;
    return cp;
}

/* Sends the first `end` code points of the buffer as a chunk. */
static void buf_cut(struct tb_seg *s, size_t end, tb_chunk_fn fn, void *ud)
{
    uint64_t bytes = 0;
    for (size_t k = 0; k < end; k++)
        bytes += s->lk_len[k];
    tb_seg_emit(s, s->start_b + bytes, s->start_cps + end, fn, ud);
    memmove(s->lk_cp, s->lk_cp + end, (s->lk_n - end) * sizeof(*s->lk_cp));
    memmove(s->lk_len, s->lk_len + end, s->lk_n - end);
    s->lk_n -= end;
}

/*
 * pipecat: SimpleTextAggregator (Pipecat 1.x) one character at a time.
 * A character of SENTENCE_ENDING_PUNCTUATION arms the lookahead; the next
 * non-whitespace character (whatever it is, and it arms nothing itself)
 * makes it call match_endofsentence on the whole buffer, which asks NLTK's
 * Punkt (punkt.c) where the first sentence ends, and a non-zero answer
 * sends that many code points.  The buffer keeps the rest, the lookahead
 * character included.
 */
void tb_seg_feed_pipecat(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                         void *ud)
{
    size_t i = 0, end;
    while (i < len) {
        uint32_t cp = buf_push(s, t, len, &i, fn, ud);
        if (!s->pc_look) {
            s->pc_look = tb_punkt_pipecat_end(cp);
            continue;
        }
        if (tb_seg_py_space(cp))
            continue;
        s->pc_look = 0;
        end = tb_punkt_pipecat_eos(s->punkt, s->lk_cp, s->lk_n);
        if (end > 0)
            buf_cut(s, end, fn, ud);
    }
    s->fed += len;
}

/*
 * livekit: BufferedTokenStream.push_text with the basic sentence
 * tokenizer's defaults (min_sentence_len 20, stream_context_len 10).  Once
 * the buffer holds >= 10 code points, it is split (seg_livekit.c) and, as
 * long as the split gives two sentences or more, the first is sent (every
 * sentence but the last holds >= 20 code points, so the output buffer
 * sends it at once) and the buffer is sliced after it.  The splitter reads
 * the whole buffer: O(buffer) per event, and the buffer holds one
 * sentence plus the text that has not ended one yet.
 */
void tb_seg_feed_livekit(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                         void *ud)
{
    size_t i = 0, end;
    while (i < len)
        (void)buf_push(s, t, len, &i, fn, ud);
    s->fed += len;
    if (s->lk_n < 10)
        return;
    while ((end = tb_seg_lk_first(s->lk_cp, s->lk_flags, s->lk_n)) > 0)
        buf_cut(s, end, fn, ud);
}

/* text_chunker's splitters. */
static int el_splitter(uint32_t c)
{
    return c == '.' || c == ',' || c == '?' || c == '!' || c == ';' || c == ':' || c == 0x2014 ||
           c == '-' || c == '(' || c == ')' || c == '[' || c == ']' || c == '}' || c == ' ';
}

/* The SDK sends its buffer up to (end_b, end_cps) to the server; `last`
 * is the piece's last code point (a space is appended when it is not one). */
static void el_send(struct tb_seg *s, uint64_t end_b, uint64_t end_cps, uint32_t last,
                    tb_chunk_fn fn, void *ud)
{
    s->el_server += end_cps - s->el_sent_cps + (last != ' ');
    s->el_sent_b = end_b;
    s->el_sent_cps = end_cps;
    if (s->el_server >= 50) {
        tb_seg_emit(s, end_b, end_cps, fn, ud);
        s->el_server = 0;
    }
}

/*
 * elevenlabs-sdk: text_chunker(chunks) one delta at a time.  If the buffer
 * ends with a splitter it is sent and the delta becomes the buffer; else
 * if the delta starts with a splitter, the buffer and that character are
 * sent and the rest of the delta becomes the buffer; else the delta is
 * appended.  The server side is the reading of chunk_length_schedule of
 * `elevenlabs`, with the helper's schedule [50].
 */
void tb_seg_feed_elevenlabs_sdk(struct tb_seg *s, const unsigned char *t, size_t len,
                                tb_chunk_fn fn, void *ud)
{
    size_t i = 0, first_len;
    uint32_t c0 = tb_seg_next_cp(t, len, &i), last = c0;
    uint64_t n = tb_utf8_count((const char *)t, len);
    uint64_t chunks = s->nchunks;
    int ns_rest = 0; /* a non-space after the first code point */
    first_len = i;
    while (i < len) {
        last = tb_seg_next_cp(t, len, &i);
        ns_rest |= !tb_seg_py_space(last);
    }
    if (s->el_last != 0 && el_splitter(s->el_last)) {
        el_send(s, s->fed, s->gcps, s->el_last, fn, ud);
        s->el_last = last;
        if (s->nchunks != chunks)
            s->el_ns = 0;
        s->el_ns |= ns_rest || !tb_seg_py_space(c0);
    } else if (el_splitter(c0)) {
        s->el_ns |= !tb_seg_py_space(c0);
        el_send(s, s->fed + first_len, s->gcps + 1, c0, fn, ud);
        s->el_last = n > 1 ? last : 0;
        if (s->nchunks != chunks)
            s->el_ns = 0;
        s->el_ns |= ns_rest;
    } else {
        s->el_last = last;
        s->el_ns |= ns_rest || !tb_seg_py_space(c0);
    }
    s->fed += len;
    s->gcps += n;
}
