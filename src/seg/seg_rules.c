/*
 * seg_rules.c - the policies that decide from counts and the last
 * characters, not from a framework's buffer: token, sentence, clause
 * (ttsbuf's own rules), fixed40, and elevenlabs (the documented
 * chunk_length_schedule).  See seg.h for each rule.
 *
 * token, sentence and clause decide once per event and touch each byte
 * once (code point count) plus a short backward scan for the last
 * significant character; that is the simulator's hot path.  fixed40 and
 * elevenlabs are linear in the text.
 */

#include "seg_priv.h"
#include "seg_rules.h"

static int is_space(uint32_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xA0;
}

static int is_closer(uint32_t c)
{
    return c == '"' || c == '\'' || c == ')' || c == ']' || c == 0x201D || c == 0x2019;
}

static int is_terminal(uint32_t c)
{
    return c == '.' || c == '!' || c == '?' || c == 0x2026;
}

static int is_clause(uint32_t c)
{
    return is_terminal(c) || c == ',' || c == ';' || c == ':' || c == 0x2014;
}

/* sentence/clause: the last code point that is not whitespace or a closer,
 * or 0 when the text has none. */
static uint32_t last_significant(const unsigned char *t, size_t len)
{
    size_t i = len;
    while (i > 0) {
        size_t b = i - 1;
        while (b > 0 && (t[b] & 0xC0) == 0x80)
            b--;
        size_t j = b;
        uint32_t cp = tb_seg_next_cp(t, len, &j);
        if (!is_space(cp) && !is_closer(cp))
            return cp;
        i = b;
    }
    return 0;
}

void tb_seg_feed_token(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                       void *ud)
{
    int newline;
    s->gcps += tb_seg_count(t, len, &newline);
    s->fed += len;
    tb_seg_emit(s, s->fed, s->gcps, fn, ud);
}

/* sentence and clause: a cut after an event once the text so far ends
 * (ignoring trailing spaces and closers) in a terminal mark (clause: or a
 * clause mark), or the event holds a newline, at least min_chars code
 * points in.  `clause` is a constant at each caller, not a function
 * pointer: this is the default's hot path, and a call per event through a
 * pointer cost it 8-10 %. */
static inline void feed_marks(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                              void *ud, int clause)
{
    int newline;
    uint32_t sig;
    s->gcps += tb_seg_count(t, len, &newline);
    s->fed += len;
    sig = last_significant(t, len);
    if (sig != 0)
        s->last_sig = sig;
    if (s->gcps - s->start_cps < s->o.min_chars)
        return;
    if (newline || (clause ? is_clause(s->last_sig) : is_terminal(s->last_sig))) {
        tb_seg_emit(s, s->fed, s->gcps, fn, ud);
        s->last_sig = 0;
    }
}

void tb_seg_feed_sentence(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                          void *ud)
{
    feed_marks(s, t, len, fn, ud, 0);
}

void tb_seg_feed_clause(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                        void *ud)
{
    feed_marks(s, t, len, fn, ud, 1);
}

/* fixed40 when the event cannot bring the chunk to 40 code points (it
 * has fewer bytes than the chunk lacks): no cut, only the last whitespace
 * to remember, found byte by byte (is_space's code points are ASCII and
 * U+00A0, C2 A0), which is most events and cheaper than decoding. */
static void fixed40_short(struct tb_seg *s, const unsigned char *t, size_t len)
{
    uint64_t cps = s->gcps;
    for (size_t i = 0; i < len; i++) {
        unsigned char b = t[i];
        cps += (b & 0xC0) != 0x80;
        if (b == ' ' || (b >= '\t' && b <= '\r') || (b == 0xA0 && i > 0 && t[i - 1] == 0xC2)) {
            s->ws_b = s->fed + i + 1;
            s->ws_cps = cps;
        }
    }
    s->gcps = cps;
    s->fed += len;
}

/* fixed40, one code point at a time: a cut at 40 code points, after the
 * last whitespace when the chunk holds one.  The counters live in locals
 * through the loop (a cut reads and moves only the chunk's start). */
void tb_seg_feed_fixed40(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                         void *ud)
{
    size_t i = 0;
    uint64_t cps = s->gcps, ws_b = s->ws_b, ws_cps = s->ws_cps;
    if (s->gcps - s->start_cps + len < 40) {
        fixed40_short(s, t, len);
        return;
    }
    while (i < len) {
        uint32_t cp = tb_seg_next_cp(t, len, &i);
        uint64_t b_after = s->fed + i;
        cps++;
        if (is_space(cp)) {
            ws_b = b_after;
            ws_cps = cps;
        }
        if (cps - s->start_cps >= 40) {
            if (ws_b > s->start_b)
                tb_seg_emit(s, ws_b, ws_cps, fn, ud);
            else
                tb_seg_emit(s, b_after, cps, fn, ud);
        }
    }
    s->gcps = cps;
    s->ws_b = ws_b;
    s->ws_cps = ws_cps;
    s->fed += len;
}

void tb_seg_feed_elevenlabs(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                            void *ud)
{
    static const uint32_t sched[4] = {120, 160, 250, 290};
    uint32_t need = sched[s->nchunks < 3 ? s->nchunks : 3];
    int newline;
    s->gcps += tb_seg_count(t, len, &newline);
    s->fed += len;
    if (s->gcps - s->start_cps >= need)
        tb_seg_emit(s, s->fed, s->gcps, fn, ud);
}

/* cartesia, the text's side (seg_policy.c keeps the timer): a sentence
 * end, decided per event as sentence decides it, waits for more text; an
 * event holding a non-space then closes the chunk before itself. */
void tb_seg_feed_cartesia(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                          void *ud)
{
    int newline, ns = 0;
    uint32_t sig;
    uint64_t cps = tb_seg_count(t, len, &newline);
    for (size_t i = 0; i < len && !ns;)
        ns = !is_space(tb_seg_next_cp(t, len, &i));
    if (s->ca_end && ns) {
        tb_seg_emit(s, s->fed, s->gcps, fn, ud);
        s->ca_end = 0;
        s->last_sig = 0;
    }
    s->gcps += cps;
    s->fed += len;
    sig = last_significant(t, len);
    if (sig != 0)
        s->last_sig = sig;
    if (newline || is_terminal(s->last_sig))
        s->ca_end = s->gcps > s->start_cps;
    else if (ns)
        s->ca_end = 0;
}
