/*
 * seg.c - chunking policies (see seg.h for the rules).
 *
 * Positions are kept as global counters over the content stream: `fed`
 * bytes and `gcps` code points so far.  A chunk is the span between two
 * cut points, so most policies need no copy of the text: they remember the
 * (byte, code point) position of their candidate cut.  livekit and pipecat
 * re-read their framework's whole buffer at each decision, as the
 * frameworks do, so they keep the open chunk's code points (bounded).
 *
 * The three v1 policies (token, sentence, clause) decide once per event
 * and touch each byte once (code point count) plus a short backward scan
 * for the last significant character; that is the simulator's hot path.
 * fixed40, openai-agents and the ElevenLabs ones are linear in the text;
 * livekit costs O(buffer) per event and pipecat O(buffer) per sentence
 * end; the buffer is one sentence or two on prose.
 */
#include "ttsbuf/seg.h"

#include <stdlib.h>
#include <string.h>

#include "punkt.h"
#include "seg_livekit.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

struct tb_seg {
    struct tb_seg_opts o;
    uint64_t fed;       /* content bytes fed so far */
    uint64_t gcps;      /* content code points fed so far */
    uint64_t start_b;   /* open chunk's start: byte */
    uint64_t start_cps; /* open chunk's start: code point */
    uint32_t event;     /* index of the event being fed */
    uint32_t nchunks;   /* chunks closed so far */
    uint32_t last_sig;  /* sentence/clause: last significant code point */
    int state;          /* scanning policies: see scan_cp */
    int pending;        /* livekit: a candidate waits for context */
    uint64_t cand_b, cand_cps;
    uint64_t ws_b, ws_cps; /* fixed40: just after the last whitespace */
    /* openai-agents: the splitter's view of its buffer (see feed_openai) */
    int oa_ns, oa_term, oa_run, oa_bnd;
    /* elevenlabs-sdk: text_chunker's buffer runs from the sent position to
     * `fed`; el_last is its last code point (0: empty); el_ns tells
     * whether the open chunk holds a non-space */
    uint64_t el_sent_b, el_sent_cps, el_server;
    uint32_t el_last;
    int el_ns;
    uint64_t oa_first;           /* code point of the buffer's first non-space */
    uint64_t oa_run_b, oa_run_cps; /* whitespace run after a sentence end */
    uint64_t oa_bnd_b, oa_bnd_cps, oa_bnd_end; /* last confirmed boundary */
    uint64_t oa_bnd_len, oa_collapsed;
    /* livekit: BufferedTokenStream's input buffer (the open chunk);
     * pipecat: SimpleTextAggregator's text */
    uint32_t *lk_cp;
    uint8_t *lk_len, *lk_flags;
    size_t lk_n;
    struct tb_punkt *punkt; /* pipecat */
    int pc_look;            /* pipecat: waiting for the lookahead character */
};

static const char *const names[TB_CHUNK__COUNT] = {
    "token",         "sentence", "clause",     "pipecat",        "livekit",
    "openai-agents", "fixed40",  "elevenlabs", "elevenlabs-sdk",
};

static const char *const abouts[TB_CHUNK__COUNT] = {
    "every event is a chunk",
    "ends after an event once the text ends in . ! ? or an ellipsis "
    "(ignoring trailing spaces, quotes, brackets) or the event holds a "
    "newline; at least --min-chars code points",
    "as sentence, plus , ; : and em dash",
    "Pipecat 1.x SimpleTextAggregator (checked against 1.7.0): after . ! ? ; "
    "... the next non-space character makes it ask NLTK's Punkt (English "
    "parameters) where the first sentence ends; no cut at abbreviations",
    "LiveKit Agents 1.x basic sentence tokenizer and its buffered stream "
    "(livekit-agents 1.7.0; not the blingfire default of 1.2+): a sentence "
    "(>= 20 code points, joined to the next when shorter) goes out when the "
    "split shows another one after it",
    "OpenAI Agents SDK voice pipeline (openai-agents-python, "
    "get_sentence_based_splitter(20) after every text delta): everything up "
    "to the last . ! ? that whitespace and a non-space follow, once it holds "
    ">= 20 code points",
    "a 40-code-point buffer cut after its last whitespace (or whole, when "
    "there is none)",
    "ElevenLabs chunk_length_schedule 120,160,250,290 as documented (the "
    "server is closed): chunk i closes at the event that brings the buffer "
    "to schedule[min(i,3)] code points, counted from the previous chunk",
    "ElevenLabs Python SDK convert_realtime: its text_chunker re-cuts the "
    "stream at word and punctuation boundaries, and the schedule it sets, "
    "[50], closes a chunk once 50 characters have been sent",
};

int tb_seg_policy_parse(const char *name, enum tb_chunk_policy *out)
{
    for (int i = 0; i < TB_CHUNK__COUNT; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (enum tb_chunk_policy)i;
            return 0;
        }
    }
    return TB_EINVAL;
}

const char *tb_seg_policy_name(enum tb_chunk_policy p)
{
    return (unsigned)p < TB_CHUNK__COUNT ? names[p] : "?";
}

const char *tb_seg_policy_about(enum tb_chunk_policy p)
{
    return (unsigned)p < TB_CHUNK__COUNT ? abouts[p] : "?";
}

int tb_seg_create(const struct tb_seg_opts *o, struct tb_seg **out)
{
    struct tb_seg *s;
    *out = NULL;
    if ((unsigned)o->policy >= TB_CHUNK__COUNT)
        return TB_EINVAL;
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return TB_ENOMEM;
    s->o = *o;
    if (s->o.min_chars == 0)
        s->o.min_chars = 1;
    if (o->policy == TB_CHUNK_LIVEKIT || o->policy == TB_CHUNK_PIPECAT) {
        s->lk_cp = malloc(TB_SEG_LK_CAP * sizeof(*s->lk_cp));
        s->lk_len = malloc(TB_SEG_LK_CAP);
        s->lk_flags = malloc(TB_SEG_LK_CAP);
        if (o->policy == TB_CHUNK_PIPECAT)
            s->punkt = tb_punkt_create();
        if (s->lk_cp == NULL || s->lk_len == NULL || s->lk_flags == NULL ||
            (o->policy == TB_CHUNK_PIPECAT && s->punkt == NULL)) {
            tb_seg_destroy(s);
            return TB_ENOMEM;
        }
    }
    *out = s;
    return 0;
}

void tb_seg_destroy(struct tb_seg *s)
{
    if (s == NULL)
        return;
    free(s->lk_cp);
    free(s->lk_len);
    free(s->lk_flags);
    tb_punkt_destroy(s->punkt);
    free(s);
}

void tb_seg_reset(struct tb_seg *s)
{
    struct tb_seg keep = *s;
    memset(s, 0, sizeof(*s));
    s->o = keep.o;
    s->lk_cp = keep.lk_cp;
    s->lk_len = keep.lk_len;
    s->lk_flags = keep.lk_flags;
    s->punkt = keep.punkt;
}

uint64_t tb_seg_fed(const struct tb_seg *s)
{
    return s->fed;
}

/* Decodes the code point at s[*i] (valid UTF-8) and advances *i. */
static uint32_t next_cp(const unsigned char *s, size_t len, size_t *i)
{
    unsigned char c = s[*i];
    uint32_t cp;
    size_t n;
    if (c < 0x80) {
        *i += 1;
        return c;
    }
    if (c >= 0xF0) {
        cp = c & 0x07;
        n = 3;
    } else if (c >= 0xE0) {
        cp = c & 0x0F;
        n = 2;
    } else {
        cp = c & 0x1F;
        n = 1;
    }
    for (size_t k = 1; k <= n && *i + k < len; k++)
        cp = (cp << 6) | (s[*i + k] & 0x3F);
    *i += n + 1;
    return cp;
}

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

static void emit(struct tb_seg *s, uint64_t end_b, uint64_t end_cps, tb_chunk_fn fn, void *ud)
{
    struct tb_chunk c;
    if (end_cps <= s->start_cps)
        return; /* nothing to speak */
    c.end = end_b;
    c.cps = (uint32_t)(end_cps - s->start_cps);
    c.event = s->event;
    s->start_b = end_b;
    s->start_cps = end_cps;
    s->nchunks++;
    fn(ud, &c);
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
        uint32_t cp = next_cp(t, len, &j);
        if (!is_space(cp) && !is_closer(cp))
            return cp;
        i = b;
    }
    return 0;
}

static void feed_v1(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn, void *ud)
{
    int newline = memchr(t, '\n', len) != NULL;
    uint32_t sig;
    s->gcps += tb_utf8_count((const char *)t, len);
    s->fed += len;
    if (s->o.policy == TB_CHUNK_TOKEN) {
        emit(s, s->fed, s->gcps, fn, ud);
        return;
    }
    sig = last_significant(t, len);
    if (sig != 0)
        s->last_sig = sig;
    if (s->gcps - s->start_cps < s->o.min_chars)
        return;
    if (newline ||
        (s->o.policy == TB_CHUNK_SENTENCE ? is_terminal(s->last_sig) : is_clause(s->last_sig))) {
        emit(s, s->fed, s->gcps, fn, ud);
        s->last_sig = 0;
    }
}

/*
 * The scanning policies, one code point at a time.  `state`:
 *   0  in text
 *   1  just after a sentence terminal (and any closers): cut candidate
 *   2  after terminal + whitespace: the sentence end is established
 * b/cps are the position *before* code point cp.
 */
static void scan_cp(struct tb_seg *s, uint32_t cp, uint64_t b, uint64_t cps, uint64_t b_after,
                    tb_chunk_fn fn, void *ud)
{
    enum tb_chunk_policy p = s->o.policy;
    int term = is_terminal(cp);
    if (p == TB_CHUNK_FIXED40) {
        if (is_space(cp)) {
            s->ws_b = b_after;
            s->ws_cps = cps + 1;
        }
        if (cps + 1 - s->start_cps >= 40) {
            if (s->ws_b > s->start_b)
                emit(s, s->ws_b, s->ws_cps, fn, ud);
            else
                emit(s, b_after, cps + 1, fn, ud);
        }
        return;
    }
    switch (s->state) {
    case 0:
        if (term)
            s->state = 1;
        break;
    case 1:
        if (term || is_closer(cp))
            break;
        if (!is_space(cp)) {
            s->state = 0;
        } else {
            s->state = 2;
            s->cand_b = b;
            s->cand_cps = cps;
        }
        break;
    case 2: /* pipecat: waiting for the confirming character */
        if (is_space(cp))
            break;
        emit(s, s->cand_b, s->cand_cps, fn, ud);
        s->state = term ? 1 : 0;
        break;
    }
}

static void feed_scan(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                      void *ud)
{
    size_t i = 0;
    while (i < len) {
        uint64_t b = s->fed + i;
        uint32_t cp = next_cp(t, len, &i);
        scan_cp(s, cp, b, s->gcps, s->fed + i, fn, ud);
        s->gcps++;
    }
    s->fed += len;
}

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
static void feed_openai(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                        void *ud)
{
    size_t i = 0;
    while (i < len) {
        uint64_t b = s->fed + i, cps = s->gcps;
        uint32_t cp = next_cp(t, len, &i);
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
        emit(s, s->oa_bnd_b, s->oa_bnd_cps, fn, ud);
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
    uint32_t cp = next_cp(t, len, i);
    if (s->lk_n == TB_SEG_LK_CAP) { /* bounded: cut what is buffered */
        emit(s, s->fed + at, s->gcps, fn, ud);
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
    emit(s, s->start_b + bytes, s->start_cps + end, fn, ud);
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
static void feed_pipecat(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
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

/* Whether the livekit buffer holds anything but whitespace (flush sends
 * nothing otherwise). */
static int lk_has_text(const struct tb_seg *s)
{
    for (size_t k = 0; k < s->lk_n; k++)
        if (!tb_seg_py_space(s->lk_cp[k]))
            return 1;
    return 0;
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
static void feed_livekit(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
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

static void feed_elevenlabs(struct tb_seg *s, const unsigned char *t, size_t len, tb_chunk_fn fn,
                            void *ud)
{
    static const uint32_t sched[4] = {120, 160, 250, 290};
    uint32_t need = sched[s->nchunks < 3 ? s->nchunks : 3];
    s->gcps += tb_utf8_count((const char *)t, len);
    s->fed += len;
    if (s->gcps - s->start_cps >= need)
        emit(s, s->fed, s->gcps, fn, ud);
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
        emit(s, end_b, end_cps, fn, ud);
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
static void feed_elevenlabs_sdk(struct tb_seg *s, const unsigned char *t, size_t len,
                                tb_chunk_fn fn, void *ud)
{
    size_t i = 0, first_len;
    uint32_t c0 = next_cp(t, len, &i), last = c0;
    uint64_t n = tb_utf8_count((const char *)t, len);
    uint64_t chunks = s->nchunks;
    int ns_rest = 0; /* a non-space after the first code point */
    first_len = i;
    while (i < len) {
        last = next_cp(t, len, &i);
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

void tb_seg_feed(struct tb_seg *s, const char *text, size_t len, tb_chunk_fn fn, void *ud)
{
    const unsigned char *t = (const unsigned char *)text;
    switch (s->o.policy) {
    case TB_CHUNK_TOKEN:
    case TB_CHUNK_SENTENCE:
    case TB_CHUNK_CLAUSE: feed_v1(s, t, len, fn, ud); break;
    case TB_CHUNK_ELEVENLABS: feed_elevenlabs(s, t, len, fn, ud); break;
    case TB_CHUNK_OPENAI_AGENTS: feed_openai(s, t, len, fn, ud); break;
    case TB_CHUNK_LIVEKIT: feed_livekit(s, t, len, fn, ud); break;
    case TB_CHUNK_PIPECAT: feed_pipecat(s, t, len, fn, ud); break;
    case TB_CHUNK_ELEVENLABS_SDK: feed_elevenlabs_sdk(s, t, len, fn, ud); break;
    default: feed_scan(s, t, len, fn, ud); break;
    }
    s->event++;
}

void tb_seg_cut(struct tb_seg *s, tb_chunk_fn fn, void *ud)
{
    uint32_t ev = s->event;
    if (s->event > 0)
        s->event--; /* the chunk closes at the last event fed */
    emit(s, s->fed, s->gcps, fn, ud);
    s->event = ev;
    s->state = 0;
    s->pending = 0;
    s->last_sig = 0;
    s->lk_n = 0;
    s->pc_look = 0;
    s->el_sent_b = s->fed;
    s->el_sent_cps = s->gcps;
    s->el_server = 0;
    s->el_last = 0;
    s->el_ns = 0;
    s->oa_ns = s->oa_term = s->oa_run = s->oa_bnd = 0;
    s->oa_collapsed = 0;
}

void tb_seg_finish(struct tb_seg *s, tb_chunk_fn fn, void *ud)
{
    uint32_t ev = s->event;
    if (s->event > 0)
        s->event--;
    /* The frameworks send no chunk of whitespace alone. */
    if (!((s->o.policy == TB_CHUNK_LIVEKIT || s->o.policy == TB_CHUNK_PIPECAT) &&
          !lk_has_text(s)) &&
        !(s->o.policy == TB_CHUNK_OPENAI_AGENTS && !s->oa_ns) &&
        !(s->o.policy == TB_CHUNK_ELEVENLABS_SDK && !s->el_ns))
        emit(s, s->fed, s->gcps, fn, ud);
    s->lk_n = 0;
    s->event = ev;
    s->pending = 0;
    s->state = 0;
}
