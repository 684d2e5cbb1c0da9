/*
 * test_segment.c - every chunking policy on crafted event sequences.
 *
 * Each case feeds a list of events, then calls tb_seg_finish, and compares
 * the chunks reported (end byte, code points, event index) with a list
 * worked out by hand from the rules in seg.h.  It also checks how many
 * chunks were reported before finish, which tells a chunk closed by an
 * event from one flushed at the end of the stream.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/seg/punkt.h"
#include "../src/seg/punkt_break.h"
#include "../src/seg/punkt_tab.h"
#include "../src/seg/seg_livekit.h"
#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/utf8.h"

#define MAX_CHUNKS 64

struct collected {
    struct tb_chunk v[MAX_CHUNKS];
    size_t n;
};

static void collect(void *ud, const struct tb_chunk *c)
{
    struct collected *out = ud;
    if (out->n == MAX_CHUNKS)
        fail_msg("more than %d chunks", MAX_CHUNKS);
    out->v[out->n++] = *c;
}

static struct tb_seg *make_seg(enum tb_chunk_policy p, uint32_t min_chars)
{
    struct tb_seg_opts o = {p, min_chars, 0, 0};
    struct tb_seg *s = NULL;
    assert_int_equal(tb_seg_create(&o, &s), 0);
    assert_non_null(s);
    return s;
}

/* Feeds events ev[0..nev) to s, then finishes; *before is the number of
 * chunks reported before tb_seg_finish. */
static void run(struct tb_seg *s, const char *const *ev, size_t nev, struct collected *out,
                size_t *before)
{
    out->n = 0;
    for (size_t i = 0; i < nev; i++) {
        assert_true(strlen(ev[i]) > 0); /* the contract: len >= 1 */
        tb_seg_feed(s, ev[i], strlen(ev[i]), collect, out);
    }
    *before = out->n;
    tb_seg_finish(s, collect, out);
}

/* Asserts that got equals want[0..n), naming the first chunk that
 * differs and printing both sides. */
static void assert_chunks(const struct collected *got, const struct tb_chunk *want, size_t n)
{
    for (size_t i = 0; i < n && i < got->n; i++) {
        const struct tb_chunk *g = &got->v[i], *w = &want[i];
        if (g->end != w->end || g->cps != w->cps || g->event != w->event)
            fail_msg("chunk %zu: got {end %llu, cps %u, event %u}, "
                     "want {end %llu, cps %u, event %u}",
                     i, (unsigned long long)g->end, g->cps, g->event, (unsigned long long)w->end,
                     w->cps, w->event);
    }
    if (got->n != n)
        fail_msg("got %zu chunks, want %zu", got->n, n);
}

/*
 * One case: policy, min_chars, the events, the chunks and how many of them
 * close before finish.  The segmenter is created and destroyed here.
 */
static void check_policy(enum tb_chunk_policy p, uint32_t min_chars, const char *const *ev,
                         size_t nev, const struct tb_chunk *want, size_t nwant, size_t want_before)
{
    struct tb_seg *s = make_seg(p, min_chars);
    struct collected got;
    size_t before;
    uint64_t total = 0;
    run(s, ev, nev, &got, &before);
    assert_chunks(&got, want, nwant);
    assert_int_equal(before, want_before);
    for (size_t i = 0; i < nev; i++)
        total += strlen(ev[i]);
    assert_int_equal(tb_seg_fed(s), total);
    tb_seg_destroy(s);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define CHECK(p, min, ev, want, before)                                                            \
    check_policy((p), (min), (ev), N(ev), (want), N(want), (before))

/* ---- token ---- */

static void token_every_event(void **state)
{
    static const char *const ev[] = {"Hello", " wor", "ld", "!", " "};
    static const struct tb_chunk want[] = {
        {5, 5, 0}, {9, 4, 1}, {11, 2, 2}, {12, 1, 3}, {13, 1, 4}};
    (void)state;
    CHECK(TB_CHUNK_TOKEN, 1, ev, want, 5);
}

static void token_multibyte(void **state)
{
    /* "héllo" is 6 bytes and 5 code points; " 😀" 5 bytes, 2 code points. */
    static const char *const ev[] = {"h\xC3\xA9llo", " \xF0\x9F\x98\x80", "\xE2\x82\xAC"};
    static const struct tb_chunk want[] = {{6, 5, 0}, {11, 2, 1}, {14, 1, 2}};
    (void)state;
    CHECK(TB_CHUNK_TOKEN, 1, ev, want, 3);
}

/* ---- sentence ---- */

static void sentence_basic(void **state)
{
    static const char *const ev[] = {"Hello", " world", ".", " How", " are", " you", "?", " Fine"};
    /* "Hello world." closes at event 2, " How are you?" at 6, and " Fine"
     * is the remainder, reported by finish at the last event (7). */
    static const struct tb_chunk want[] = {{12, 12, 2}, {25, 13, 6}, {30, 5, 7}};
    (void)state;
    CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 2);
}

static void sentence_terminals(void **state)
{
    static const char *const ev[] = {"Stop!", " Why?", " Fine.", " Ok"};
    static const struct tb_chunk want[] = {{5, 5, 0}, {10, 5, 1}, {16, 6, 2}, {19, 3, 3}};
    (void)state;
    CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 3);
}

/* A terminal followed by each closer, and by closers plus whitespace. */
static void sentence_closers_after_end(void **state)
{
    /* The last two are U+201D and U+2019, the curly closing quotes. */
    static const char *const closers[] = {"\"", "'", ")", "]", "\xE2\x80\x9D", "\xE2\x80\x99"};
    (void)state;
    for (size_t i = 0; i < N(closers); i++) {
        char e1[16];
        size_t cl = strlen(closers[i]);
        const char *ev[] = {"Wait", e1, " then"};
        snprintf(e1, sizeof(e1), ".%s", closers[i]);
        /* "Wait." plus the closer closes at event 1, closer included. */
        const struct tb_chunk want[] = {{4 + 1 + cl, 6, 1}, {4 + 1 + cl + 5, 5, 2}};
        check_policy(TB_CHUNK_SENTENCE, 1, ev, 3, want, 2, 1);
    }
    {
        static const char *const ev[] = {"He said \"(Yes.)\" \t", "And"};
        static const struct tb_chunk want[] = {{18, 18, 0}, {21, 3, 1}};
        CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 1);
    }
    {
        /* A closer without a terminal before it is no sentence end. */
        static const char *const ev[] = {"(aside)", " \"quote\"", " more"};
        static const struct tb_chunk want[] = {{20, 20, 2}};
        CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 0);
    }
}

static void sentence_ellipsis(void **state)
{
    /* U+2026 is 3 bytes, 1 code point. */
    static const char *const ev[] = {"Well", "\xE2\x80\xA6", " so", "...", " end"};
    static const struct tb_chunk want[] = {{7, 5, 1}, {13, 6, 3}, {17, 4, 4}};
    (void)state;
    CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 2);
}

static void sentence_newline(void **state)
{
    /* The event holding the newline closes the chunk after the whole
     * event, text after the newline included. */
    static const char *const ev[] = {"Title", "\nBody", " text", "\n"};
    static const struct tb_chunk want[] = {{10, 10, 1}, {16, 6, 3}};
    (void)state;
    CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 2);
}

static void sentence_min_chars_holds_back(void **state)
{
    (void)state;
    {
        /* "Hi." (3) and "Hi. Ok." (7) are shorter than 10: held. */
        static const char *const ev[] = {"Hi.", " Ok.", " This is longer."};
        static const struct tb_chunk want[] = {{23, 23, 2}};
        CHECK(TB_CHUNK_SENTENCE, 10, ev, want, 1);
    }
    {
        /* Held, then the chunk no longer ends a sentence: only finish. */
        static const char *const ev[] = {"Hi.", " there"};
        static const struct tb_chunk want[] = {{9, 9, 1}};
        CHECK(TB_CHUNK_SENTENCE, 10, ev, want, 0);
    }
    {
        /* Exactly min_chars is enough. */
        static const char *const ev[] = {"Hi.", " Yo."};
        static const struct tb_chunk want[] = {{3, 3, 0}, {7, 4, 1}};
        CHECK(TB_CHUNK_SENTENCE, 3, ev, want, 2);
    }
    {
        /* A newline does not override min_chars either. */
        static const char *const ev[] = {"A\n", "B\n", "C"};
        static const struct tb_chunk want[] = {{4, 4, 1}, {5, 1, 2}};
        CHECK(TB_CHUNK_SENTENCE, 4, ev, want, 1);
    }
    {
        /* min_chars 0 means the default, 1. */
        static const char *const ev[] = {"!", "A."};
        static const struct tb_chunk want[] = {{1, 1, 0}, {3, 2, 1}};
        CHECK(TB_CHUNK_SENTENCE, 0, ev, want, 2);
    }
}

static void sentence_multibyte_counts_code_points(void **state)
{
    /* "Ça va" 6 bytes/5 cps, " très" 6/5, " bien !" 7/7: 19 bytes, 17 cps. */
    static const char *const ev[] = {"\xC3\x87\x61 va", " tr\xC3\xA8s", " bien !"};
    (void)state;
    {
        static const struct tb_chunk want[] = {{19, 17, 2}};
        CHECK(TB_CHUNK_SENTENCE, 17, ev, want, 1);
    }
    {
        /* 17 code points are fewer than 18, although 19 bytes are not. */
        static const struct tb_chunk want[] = {{19, 17, 2}};
        CHECK(TB_CHUNK_SENTENCE, 18, ev, want, 0);
    }
}

static void sentence_whitespace_only_events(void **state)
{
    (void)state;
    {
        /* Whitespace after a closed chunk opens the next one. */
        static const char *const ev[] = {"Done.", " ", "\t", " Next."};
        static const struct tb_chunk want[] = {{5, 5, 0}, {13, 8, 3}};
        CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 2);
    }
    {
        /* A held sentence end still counts once whitespace-only events
         * bring the chunk to min_chars. */
        static const char *const ev[] = {"Done.", " ", "  ", "x"};
        static const struct tb_chunk want[] = {{8, 8, 2}, {9, 1, 3}};
        CHECK(TB_CHUNK_SENTENCE, 7, ev, want, 1);
    }
}

static void sentence_finish_edge_cases(void **state)
{
    struct collected got = {.n = 0};
    struct tb_seg *s;
    (void)state;
    {
        /* Everything already closed: finish reports nothing. */
        static const char *const ev[] = {"One.", " Two."};
        static const struct tb_chunk want[] = {{4, 4, 0}, {9, 5, 1}};
        CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 2);
    }
    /* No events at all: nothing. */
    s = make_seg(TB_CHUNK_SENTENCE, 1);
    tb_seg_finish(s, collect, &got);
    assert_int_equal(got.n, 0);
    assert_int_equal(tb_seg_fed(s), 0);
    tb_seg_destroy(s);
}

/* ---- clause ---- */

static void clause_marks(void **state)
{
    /* "—" (U+2014) is 3 bytes, 1 code point. */
    static const char *const ev[] = {"First",        ",",     " second;", " third:", " fourth",
                                     "\xE2\x80\x94", "fifth", "?",        " six"};
    static const struct tb_chunk want[] = {{6, 6, 1},  {14, 8, 2}, {21, 7, 3},
                                           {31, 8, 5}, {37, 6, 7}, {41, 4, 8}};
    (void)state;
    CHECK(TB_CHUNK_CLAUSE, 1, ev, want, 5);
}

static void clause_closers_and_min_chars(void **state)
{
    (void)state;
    {
        static const char *const ev[] = {"(a,)", " b\xE2\x80\x94\"", " c"};
        static const struct tb_chunk want[] = {{4, 4, 0}, {10, 4, 1}, {12, 2, 2}};
        CHECK(TB_CHUNK_CLAUSE, 1, ev, want, 2);
    }
    {
        static const char *const ev[] = {"A,", " b,", " c"};
        static const struct tb_chunk want[] = {{5, 5, 1}, {7, 2, 2}};
        CHECK(TB_CHUNK_CLAUSE, 4, ev, want, 1);
    }
    {
        /* The sentence policy ignores clause marks. */
        static const char *const ev[] = {"a,", " b;", " c:", " d\xE2\x80\x94"};
        static const struct tb_chunk want[] = {{13, 11, 3}};
        CHECK(TB_CHUNK_SENTENCE, 1, ev, want, 0);
    }
}

/* ---- pipecat ---- */

static void pipecat_lookahead(void **state)
{
    (void)state;
    {
        /* "Hello world." is confirmed by the "H" of " How" (event 3); the
         * cut is before the space, which opens the next chunk. */
        static const char *const ev[] = {"Hello", " world", ".", " How", " are", " you?"};
        static const struct tb_chunk want[] = {{12, 12, 3}, {25, 13, 5}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 1);
    }
    {
        /* Whitespace-only events do not confirm. */
        static const char *const ev[] = {"Yes.", " ", "\n", "No"};
        static const struct tb_chunk want[] = {{4, 4, 3}, {8, 4, 3}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 1);
    }
    {
        /* A terminal followed by a non-space is no sentence end. */
        static const char *const ev[] = {"Pi is 3.", "14 and e.g", ". so"};
        static const struct tb_chunk want[] = {{19, 19, 2}, {22, 3, 2}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 1);
    }
}

static void pipecat_closers_ellipsis_multibyte(void **state)
{
    (void)state;
    {
        /* The closing quote is the lookahead character: Punkt keeps it in
         * the sentence, no single sentence ends in punctuation, no cut. */
        static const char *const ev[] = {"He said \"Hi.\"", " Then"};
        static const struct tb_chunk want[] = {{18, 18, 1}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 0);
    }
    {
        /* Several sentences in one event: several chunks at that event. */
        static const char *const ev[] = {"A b. C d! E"};
        static const struct tb_chunk want[] = {{4, 4, 0}, {9, 5, 0}, {11, 2, 0}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 2);
    }
    {
        /* "Très bien." is 11 bytes, 10 cps; " Ça" 4 bytes, 3 cps. */
        static const char *const ev[] = {"Tr\xC3\xA8s bien. \xC3\x87\x61"}; /* ...Ça */
        static const struct tb_chunk want[] = {{11, 10, 0}, {15, 3, 0}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 1);
    }
    {
        /* Punkt does not end a sentence at an ellipsis before a lower-case
         * word. */
        static const char *const ev[] = {"Wait\xE2\x80\xA6", " what"};
        static const struct tb_chunk want[] = {{12, 10, 1}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 0);
    }
}

/* A decision context of more words than the scratch holds, spread over
 * lines: the words past TB_PUNKT_MAX_TOKS are not read (the scratch is
 * exactly that long and on the heap, so ASan sees one entry too many),
 * and a break within the words read is still found. */
static uint32_t *punkt_text(const char *second, size_t *n)
{
    /* three lines of 400 words; the second begins with `second` */
    size_t cap = (size_t)3 * 400 * 2 + strlen(second) + 1, k = 0;
    uint32_t *s = malloc(cap * sizeof(*s));
    assert_non_null(s);
    for (int line = 0; line < 3; line++) {
        if (line == 1)
            for (const char *c = second; *c != '\0'; c++)
                s[k++] = (uint8_t)*c;
        for (int w = 0; w < 400; w++) {
            s[k++] = 'a';
            s[k++] = w == 399 ? '\n' : ' ';
        }
    }
    *n = k;
    return s;
}

static void punkt_break_scratch_bound(void **state)
{
    (void)state;
    struct tb_punkt_tok *toks = malloc(TB_PUNKT_MAX_TOKS * sizeof(*toks));
    size_t n;
    uint32_t *s = punkt_text("", &n);
    assert_non_null(toks);
    assert_int_equal(tb_punkt_break(s, n, toks), 0);
    free(s);
    s = punkt_text("It is done. The end came ", &n);
    assert_int_equal(tb_punkt_break(s, n, toks), 1);
    free(s);
    free(toks);
}

static void pipecat_punkt_cases(void **state)
{
    (void)state;
    {
        /* Known abbreviations are no sentence ends. */
        static const char *const ev[] = {"Mr. Smith is here. Dr", ". Lee too."};
        static const struct tb_chunk want[] = {{18, 18, 0}, {31, 13, 1}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 1);
    }
    {
        /* CJK: a cut at the ideographic full stop, no space needed. */
        static const char *const ev[] = {"\xE6\x88\x91\xE5\xBE\x88\xE5\xA5\xBD\xE3\x80\x82"
                                         "\xE8\xB0\xA2\xE8\xB0\xA2"};
        static const struct tb_chunk want[] = {{12, 4, 0}, {18, 2, 0}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 1);
    }
    {
        /* "?!": the "!" is the lookahead character and starts the next
         * chunk. */
        static const char *const ev[] = {"Are you sure?! Yes."};
        static const struct tb_chunk want[] = {{13, 13, 0}, {19, 6, 0}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 1);
    }
    {
        /* List numbers are cut. */
        static const char *const ev[] = {"1. Eggs\n2. Milk"};
        static const struct tb_chunk want[] = {{2, 2, 0}, {10, 8, 0}, {15, 5, 0}};
        CHECK(TB_CHUNK_PIPECAT, 1, ev, want, 2);
    }
}

/* ---- livekit ---- */

static void livekit_merge_and_context(void **state)
{
    /*
     * LiveKit's splitter joins "Short one." (shorter than 20 code points)
     * to the next sentence; the buffered stream sends a sentence once the
     * split shows another one after it, which " Then more" does.
     */
    static const char *const ev[] = {"Short one.", " Now a longer sentence.", " Then more",
                                     " words follow here."};
    static const struct tb_chunk want[] = {{33, 33, 2}, {62, 29, 3}};
    (void)state;
    CHECK(TB_CHUNK_LIVEKIT, 1, ev, want, 1);
}

static void livekit_release_and_flush(void **state)
{
    (void)state;
    {
        /* The first non-space after the sentence releases it. */
        static const char *const ev[] = {"This sentence is long enough.", " Tail"};
        static const struct tb_chunk want[] = {{29, 29, 1}, {34, 5, 1}};
        CHECK(TB_CHUNK_LIVEKIT, 1, ev, want, 1);
    }
    {
        /* Abbreviations, decimals and ellipses are not sentence ends; the
         * rest is flushed at the end, at the last event. */
        static const char *const ev[] = {"Mr. Smith went to town.", " It was 3.5 km",
                                         " away. Wait... ok"};
        static const struct tb_chunk want[] = {{23, 23, 1}, {54, 31, 2}};
        CHECK(TB_CHUNK_LIVEKIT, 1, ev, want, 1);
    }
    {
        /* Trailing whitespace is no chunk of its own. */
        static const char *const ev[] = {"Hello there my friend.", " ", " "};
        static const struct tb_chunk want[] = {{24, 24, 2}};
        CHECK(TB_CHUNK_LIVEKIT, 1, ev, want, 0);
    }
}

static void livekit_twenty_boundary(void **state)
{
    (void)state;
    {
        /* 19 code points: joined to the next sentence. */
        static const char *const ev[] = {"abcdefghijklmnopqr.", " and then more text here.",
                                         " Next one"};
        static const struct tb_chunk want[] = {{44, 44, 2}, {53, 9, 2}};
        CHECK(TB_CHUNK_LIVEKIT, 1, ev, want, 1);
    }
    {
        /* 20, and a cut even with no space after the period. */
        static const char *const ev[] = {"abcdefghijklmnopqrs.X and more text"};
        static const struct tb_chunk want[] = {{20, 20, 0}, {35, 15, 0}};
        CHECK(TB_CHUNK_LIVEKIT, 1, ev, want, 1);
    }
}

/* ---- openai-agents ---- */

static void openai_agents_twenty_rule(void **state)
{
    (void)state;
    {
        /* "Short one." (10) is joined to the next sentence; the cut, after
         * "one.", is sent when "And" arrives. */
        static const char *const ev[] = {"Short one.", " Then a second one.", " And more"};
        static const struct tb_chunk want[] = {{29, 29, 2}, {38, 9, 2}};
        CHECK(TB_CHUNK_OPENAI_AGENTS, 1, ev, want, 1);
    }
    {
        /* 19 code points before the space: no cut. */
        static const char *const ev[] = {"abcdefghijklmnopqr. x"};
        static const struct tb_chunk want[] = {{21, 21, 0}};
        CHECK(TB_CHUNK_OPENAI_AGENTS, 1, ev, want, 0);
    }
    {
        /* 20: the space alone does not release it, the next character does. */
        static const char *const ev[] = {"abcdefghijklmnopqrs?", " ", "x"};
        static const struct tb_chunk want[] = {{20, 20, 2}, {22, 2, 2}};
        CHECK(TB_CHUNK_OPENAI_AGENTS, 1, ev, want, 1);
    }
    {
        /* No cut after a period inside quotes. */
        static const char *const ev[] = {"He said \"Go home.\" Then", " he left."};
        static const struct tb_chunk want[] = {{32, 32, 1}};
        CHECK(TB_CHUNK_OPENAI_AGENTS, 1, ev, want, 0);
    }
    {
        /* Two sentence ends in one event: everything up to the last. */
        static const char *const ev[] = {"First sentence here. Second one. Th", "ird"};
        static const struct tb_chunk want[] = {{32, 32, 0}, {38, 6, 1}};
        CHECK(TB_CHUNK_OPENAI_AGENTS, 1, ev, want, 1);
    }
}

static void openai_agents_needs_period_and_space(void **state)
{
    (void)state;
    {
        /* The ellipsis is not one of . ! ? for this policy. */
        static const char *const ev[] = {"This is a long enough sentence"
                                         "\xE2\x80\xA6 and more"};
        static const struct tb_chunk want[] = {{42, 40, 0}};
        CHECK(TB_CHUNK_OPENAI_AGENTS, 1, ev, want, 0);
    }
    {
        static const char *const ev[] = {"This is a long enough sentence.Next"};
        static const struct tb_chunk want[] = {{35, 35, 0}};
        CHECK(TB_CHUNK_OPENAI_AGENTS, 1, ev, want, 0);
    }
    {
        /* A newline is whitespace. */
        static const char *const ev[] = {"This is a long enough sentence!\nNext"};
        static const struct tb_chunk want[] = {{31, 31, 0}, {36, 5, 0}};
        CHECK(TB_CHUNK_OPENAI_AGENTS, 1, ev, want, 1);
    }
}

/* ---- fixed40 ---- */

static void fixed40_cut_after_last_whitespace(void **state)
{
    /*
     * Words of five letters: the spaces are code points 5, 11, ..., 35 and
     * 41.  The 40th code point (index 39) arrives in event 2; the last
     * space before it is index 35, so the chunk is 36 code points, the
     * space included.
     */
    static const char *const ev[] = {"aaaaa bbbbb ccccc ", "ddddd eeeee fffff ", "ggggg hh"};
    static const struct tb_chunk want[] = {{36, 36, 2}, {44, 8, 2}};
    (void)state;
    CHECK(TB_CHUNK_FIXED40, 1, ev, want, 1);
}

static void fixed40_no_whitespace(void **state)
{
    char a[21], b[26];
    (void)state;
    memset(a, 'x', 20);
    a[20] = '\0';
    memset(b, 'y', 25);
    b[25] = '\0';
    {
        const char *ev[] = {a, b};
        const struct tb_chunk want[] = {{40, 40, 1}, {45, 5, 1}};
        check_policy(TB_CHUNK_FIXED40, 1, ev, 2, want, 2, 1);
    }
    {
        /* A space just before the buffer does not count as inside it. */
        const char *ev[] = {"a b c d e f g h i j k l m n o p q r s t", " ", a, b};
        /* Event 0 is 39 cps; the space makes 40: cut after it (40). */
        const struct tb_chunk want[] = {{40, 40, 1}, {80, 40, 3}, {85, 5, 3}};
        check_policy(TB_CHUNK_FIXED40, 1, ev, 4, want, 3, 2);
    }
}

static void fixed40_multibyte(void **state)
{
    char buf[2 * 41 + 1];
    (void)state;
    for (int i = 0; i < 41; i++)
        memcpy(buf + (size_t)2 * i, "\xC3\xA9", 2);
    buf[82] = '\0';
    {
        /* 41 "é": cut after 40 code points, 80 bytes, inside the event. */
        const char *ev[] = {buf};
        const struct tb_chunk want[] = {{80, 40, 0}, {82, 1, 0}};
        check_policy(TB_CHUNK_FIXED40, 1, ev, 1, want, 2, 1);
    }
}

/* ---- elevenlabs ---- */

static void elevenlabs_schedule(void **state)
{
    struct tb_seg *s = make_seg(TB_CHUNK_ELEVENLABS, 1);
    struct collected got = {.n = 0};
    /* 114 events of 10 code points: chunks of 120, 160, 250, 290, 290 and
     * the remaining 30 at finish. */
    static const struct tb_chunk want[] = {{120, 120, 11}, {280, 160, 27},   {530, 250, 52},
                                           {820, 290, 81}, {1110, 290, 110}, {1140, 30, 113}};
    (void)state;
    for (int i = 0; i < 114; i++)
        tb_seg_feed(s, "0123456789", 10, collect, &got);
    assert_int_equal(got.n, 5);
    tb_seg_finish(s, collect, &got);
    assert_chunks(&got, want, N(want));
    tb_seg_destroy(s);
}

static void elevenlabs_whole_buffer(void **state)
{
    struct tb_seg *s = make_seg(TB_CHUNK_ELEVENLABS, 1);
    struct collected got = {.n = 0};
    char big[300];
    (void)state;
    memset(big, 'x', sizeof(big));
    /* 119 code points: not yet; one more overshoots to 130 (whole buffer).
     * Then 159 + 1 is exactly 160.  One event of 300 closes one chunk. */
    tb_seg_feed(s, big, 119, collect, &got);
    assert_int_equal(got.n, 0);
    tb_seg_feed(s, big, 11, collect, &got);
    tb_seg_feed(s, big, 159, collect, &got);
    assert_int_equal(got.n, 1);
    tb_seg_feed(s, "\xC3\xA9", 2, collect, &got); /* 1 cp, 2 bytes */
    tb_seg_feed(s, big, 300, collect, &got);
    {
        static const struct tb_chunk want[] = {{130, 130, 1}, {291, 160, 3}, {591, 300, 4}};
        assert_chunks(&got, want, N(want));
    }
    tb_seg_destroy(s);
}

/* ---- cut, reset, names ---- */

static void elevenlabs_sdk_pieces_and_schedule(void **state)
{
    /*
     * text_chunker sends "Hello " at " there", "there, " at ", my", ...:
     * 6 + 7 + 4 + 5 + 8 + 5 + 4 + 4 + 6 = 49 characters (appended spaces
     * count), and "today? " (sent when "? I" arrives, event 10) brings 56:
     * the chunk ends after "today?".  The rest is flushed at the end.
     */
    static const char *const ev[] = {"Hello", " there", ", my", " good",  " friend",
                                     ". How", " are",   " you", " doing", " today",
                                     "? I",   " am",    " fine"};
    static const struct tb_chunk want[] = {{53, 53, 10}, {63, 10, 12}};
    (void)state;
    CHECK(TB_CHUNK_ELEVENLABS_SDK, 1, ev, want, 1);
    {
        /* A stream that ends in whitespace gives no chunk of it alone. */
        static const char *const ev2[] = {"This is the first sentence.", " And a second one here.",
                                          " "};
        static const struct tb_chunk want2[] = {{50, 50, 2}};
        CHECK(TB_CHUNK_ELEVENLABS_SDK, 1, ev2, want2, 1);
    }
}

static void cut_closes_open_chunk(void **state)
{
    struct tb_seg *s = make_seg(TB_CHUNK_SENTENCE, 1);
    struct collected got = {.n = 0};
    (void)state;
    /* Nothing fed: nothing to cut. */
    tb_seg_cut(s, collect, &got);
    assert_int_equal(got.n, 0);
    tb_seg_feed(s, "Hello", 5, collect, &got);
    tb_seg_feed(s, " wor", 4, collect, &got);
    tb_seg_cut(s, collect, &got); /* closes at the last event fed, 1 */
    tb_seg_cut(s, collect, &got); /* nothing left */
    tb_seg_feed(s, "ld.", 3, collect, &got);
    tb_seg_feed(s, " x", 2, collect, &got);
    tb_seg_finish(s, collect, &got);
    {
        static const struct tb_chunk want[] = {{9, 9, 1}, {12, 3, 2}, {14, 2, 3}};
        assert_chunks(&got, want, N(want));
    }
    tb_seg_destroy(s);
}

static void cut_clears_pending_state(void **state)
{
    struct collected got = {.n = 0};
    struct tb_seg *s = make_seg(TB_CHUNK_PIPECAT, 1);
    (void)state;
    /* A pipecat candidate waiting for confirmation is dropped by a cut:
     * "No" must not close a stale chunk. */
    tb_seg_feed(s, "Yes.", 4, collect, &got);
    tb_seg_feed(s, " ", 1, collect, &got);
    tb_seg_cut(s, collect, &got);
    tb_seg_feed(s, "No", 2, collect, &got);
    tb_seg_finish(s, collect, &got);
    {
        static const struct tb_chunk want[] = {{5, 5, 1}, {7, 2, 2}};
        assert_chunks(&got, want, N(want));
    }
    tb_seg_destroy(s);

    /* The same for a livekit candidate waiting for context. */
    got.n = 0;
    s = make_seg(TB_CHUNK_LIVEKIT, 1);
    tb_seg_feed(s, "This sentence is long enough. ", 30, collect, &got);
    tb_seg_cut(s, collect, &got);
    tb_seg_feed(s, "0123456789abc", 13, collect, &got);
    tb_seg_finish(s, collect, &got);
    {
        static const struct tb_chunk want[] = {{30, 30, 0}, {43, 13, 1}};
        assert_chunks(&got, want, N(want));
    }
    tb_seg_destroy(s);
}

static void reset_reuses_segmenter(void **state)
{
    static const char *const ev[] = {"Hi.", " Ok.", " This is longer."};
    static const struct tb_chunk want[] = {{23, 23, 2}};
    struct tb_seg *s = make_seg(TB_CHUNK_SENTENCE, 10);
    struct collected got;
    size_t before;
    (void)state;
    /* Leave a stream half done, with a chunk open and the counters moved. */
    run(s, ev, 2, &got, &before);
    tb_seg_feed(s, "dangling", 8, collect, &got);
    assert_true(tb_seg_fed(s) > 0);
    tb_seg_reset(s);
    assert_int_equal(tb_seg_fed(s), 0);
    /* Offsets and event indices start at 0 again; min_chars is kept. */
    run(s, ev, N(ev), &got, &before);
    assert_chunks(&got, want, N(want));
    assert_int_equal(before, 1);

    /* The elevenlabs schedule starts again at 120. */
    tb_seg_destroy(s);
    s = make_seg(TB_CHUNK_ELEVENLABS, 1);
    got.n = 0;
    {
        char big[200];
        memset(big, 'x', sizeof(big));
        tb_seg_feed(s, big, 130, collect, &got);
        tb_seg_reset(s);
        got.n = 0;
        tb_seg_feed(s, big, 125, collect, &got);
        assert_int_equal(got.n, 1);
        assert_int_equal(got.v[0].cps, 125);
        assert_int_equal(got.v[0].event, 0);
    }
    tb_seg_destroy(s);
}

static void policy_names_round_trip(void **state)
{
    static const char *const names[] = {"token",          "sentence",      "clause",  "pipecat",
                                        "livekit",        "openai-agents", "fixed40", "elevenlabs",
                                        "elevenlabs-sdk", "cartesia",      "idle"};
    (void)state;
    assert_int_equal(N(names), TB_CHUNK__COUNT);
    for (int i = 0; i < TB_CHUNK__COUNT; i++) {
        enum tb_chunk_policy p = TB_CHUNK__COUNT;
        assert_string_equal(tb_seg_policy_name((enum tb_chunk_policy)i), names[i]);
        assert_int_equal(tb_seg_policy_parse(names[i], &p), 0);
        assert_int_equal(p, i);
        assert_true(strlen(tb_seg_policy_about(p)) > 10);
    }
    assert_string_equal(tb_seg_policy_name(TB_CHUNK__COUNT), "?");
    assert_string_equal(tb_seg_policy_about(TB_CHUNK__COUNT), "?");
}

/*
 * The time-based policies on hand-made traces with exact times (binary
 * fractions, so every deadline compares exactly).
 */
struct timed_ev {
    double t;
    const char *text;
};

/* A collector that also keeps each chunk's closing time. */
struct timed_collected {
    struct collected c;
    double t[MAX_CHUNKS];
    const struct tb_seg *seg;
};

static void collect_timed(void *ud, const struct tb_chunk *c)
{
    struct timed_collected *x = ud;
    if (x->c.n < MAX_CHUNKS)
        x->t[x->c.n] = tb_seg_close_time(x->seg);
    collect(&x->c, c);
}

/* Feeds ev[0..n) at their times to a segmenter of policy p with the
 * given delays, then finishes; *before as run(). */
static void run_timed(enum tb_chunk_policy p, double max_delay, double idle,
                      const struct timed_ev *ev, size_t n, struct timed_collected *out,
                      size_t *before)
{
    struct tb_seg_opts o = {p, 1, max_delay, idle};
    struct tb_seg *s = NULL;
    assert_int_equal(tb_seg_create(&o, &s), 0);
    out->c.n = 0;
    out->seg = s;
    for (size_t i = 0; i < n; i++)
        tb_seg_feed_at(s, ev[i].t, ev[i].text, strlen(ev[i].text), collect_timed, out);
    *before = out->c.n;
    tb_seg_finish(s, collect_timed, out);
    tb_seg_destroy(s);
}

/* Asserts the closing times: t_want[i] < 0 for a close at its event. */
static void assert_times(const struct timed_collected *got, const double *t_want, size_t n)
{
    for (size_t i = 0; i < n && i < got->c.n; i++) {
        if (t_want[i] < 0 && !isnan(got->t[i]))
            fail_msg("chunk %zu: a timed close at %.17g, want one at its event", i, got->t[i]);
        if (t_want[i] >= 0 && !(got->t[i] == t_want[i]))
            fail_msg("chunk %zu: closed at %.17g, want the deadline %.17g", i, got->t[i],
                     t_want[i]);
    }
}

/* cartesia: a sentence end waits for more text (whitespace is not more
 * text); a chunk's first text waits at most the delay, counted from the
 * event that opened it; the end of the stream sends the rest. */
static void cartesia_lookahead_and_delay(void **state)
{
    static const struct timed_ev ev[] = {
        {0.0, "Hello"}, {0.5, " world."}, {1.0, " "}, {1.25, " How"}, {5.0, " are"}, {9.5, " you"},
    };
    static const struct tb_chunk want[] = {
        {13, 13, 3}, /* "Hello world. ": closes when " How" arrives */
        {17, 4, 3},  /* " How": 1.25 + 3 s */
        {21, 4, 4},  /* " are": 5 + 3 s */
        {25, 4, 5},  /* " you": the end */
    };
    static const double t_want[] = {-1, 4.25, 8.0, -1};
    struct timed_collected got;
    size_t before;
    (void)state;
    run_timed(TB_CHUNK_CARTESIA, 3.0, 0, ev, N(ev), &got, &before);
    assert_chunks(&got.c, want, N(want));
    assert_times(&got, t_want, N(t_want));
    assert_int_equal(before, 3);
}

/* cartesia counts the delay from the chunk's first event, idle from its
 * last: the same trace cuts at 3 s and at 3.25 s.  An event arriving
 * exactly at the deadline starts the next chunk. */
static void cartesia_first_idle_last(void **state)
{
    static const struct timed_ev ev[] = {{0.0, "a"}, {1.0, "b"}, {2.0, "c"}, {3.5, "d"}};
    static const struct timed_ev at[] = {{0.0, "a"}, {3.0, "b"}};
    static const struct tb_chunk want[] = {{3, 3, 2}, {4, 1, 3}};
    static const struct tb_chunk want_at[] = {{1, 1, 0}, {2, 1, 1}};
    static const double t_c[] = {3.0, -1}, t_i[] = {3.25, -1}, t_at[] = {3.0, -1};
    struct timed_collected got;
    size_t before;
    (void)state;
    run_timed(TB_CHUNK_CARTESIA, 3.0, 0, ev, N(ev), &got, &before);
    assert_chunks(&got.c, want, N(want));
    assert_times(&got, t_c, N(t_c));
    run_timed(TB_CHUNK_IDLE, 0, 1.25, ev, N(ev), &got, &before);
    assert_chunks(&got.c, want, N(want));
    assert_times(&got, t_i, N(t_i));
    run_timed(TB_CHUNK_CARTESIA, 3.0, 0, at, N(at), &got, &before);
    assert_chunks(&got.c, want_at, N(want_at));
    assert_times(&got, t_at, N(t_at));
    assert_int_equal(before, 1);
}

/* idle: the sentence rule closes at once; inactivity closes the rest;
 * the defaults are 3 s (cartesia) and 0.5 s (idle). */
static void idle_sentence_and_defaults(void **state)
{
    static const struct timed_ev ev[] = {{0.0, "Hi."}, {0.25, " So"}, {0.5, " we"}, {1.5, " go"}};
    static const struct tb_chunk want[] = {{3, 3, 0}, {9, 6, 2}, {12, 3, 3}};
    static const double t_want[] = {-1, 1.0, -1};
    static const struct timed_ev slow[] = {{0.0, "x"}, {2.75, "y"}, {3.0, "z"}};
    static const struct tb_chunk want_slow[] = {{2, 2, 1}, {3, 1, 2}};
    static const double t_slow[] = {3.0, -1};
    struct timed_collected got;
    size_t before;
    (void)state;
    run_timed(TB_CHUNK_IDLE, 0, 0, ev, N(ev), &got, &before);
    assert_chunks(&got.c, want, N(want));
    assert_times(&got, t_want, N(t_want));
    run_timed(TB_CHUNK_CARTESIA, 0, 0, slow, N(slow), &got, &before);
    assert_chunks(&got.c, want_slow, N(want_slow));
    assert_times(&got, t_slow, N(t_slow));
}

/* Every policy counts each code point it is fed once (tb_seg_fed_cps, which
 * the drain reads instead of counting an event again), and each byte
 * (tb_seg_fed), whatever it cuts, with or without times. */
static void fed_counts_every_code_point(void **state)
{
    static const char *const ev[] = {
        "Hello",         " w\xC3\xB6rld.",
        " \xE2\x80\x94", "\n",
        " caf\xC3\xA9,", "\xF0\x9F\x98\x80",
        " \xC2\xA0ok",   " a b c d e f g h i j k l m n o p q r s t u v w x y z!",
        " Yes?",         "  "};
    (void)state;
    for (int p = 0; p < TB_CHUNK__COUNT; p++) {
        struct tb_seg_opts o = {(enum tb_chunk_policy)p, 1, 0, 0};
        struct tb_seg *s = NULL;
        struct collected got = {.n = 0};
        uint64_t bytes = 0, cps = 0;
        assert_int_equal(tb_seg_create(&o, &s), 0);
        for (int round = 0; round < 3; round++)
            for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
                size_t len = strlen(ev[i]);
                bytes += len;
                cps += tb_utf8_count(ev[i], len);
                if (i % 2)
                    tb_seg_feed(s, ev[i], len, collect, &got);
                else
                    tb_seg_feed_at(s, 0.1 * (double)(round * 10 + (int)i), ev[i], len, collect,
                                   &got);
                assert_int_equal(tb_seg_fed(s), bytes);
                assert_int_equal(tb_seg_fed_cps(s), cps);
            }
        tb_seg_destroy(s);
    }
}

/* What a pending deadline is made of (tb_seg_timer): cartesia's counts
 * from the event that opened the chunk, idle's from the last one fed; the
 * deadline is that arrival plus the delay, exactly; none pending, none
 * said.  Only the time-based policies say they are timed. */
static void timer_names_its_arrival(void **state)
{
    struct tb_seg_opts o = {TB_CHUNK_CARTESIA, 1, 2.0, 0.75};
    struct tb_seg *s = NULL;
    struct timed_collected got = {.c.n = 0};
    uint32_t ev = 99;
    double delay = -1.0;
    (void)state;
    assert_int_equal(tb_seg_create(&o, &s), 0);
    got.seg = s;
    assert_int_equal(tb_seg_timed(s), 1);
    assert_int_equal(tb_seg_timer(s, &ev, &delay), -1);
    assert_int_equal(ev, 99);
    tb_seg_feed_at(s, 0.5, " Hi", 3, collect_timed, &got);
    tb_seg_feed_at(s, 0.7, " there.", 7, collect_timed, &got);
    tb_seg_feed_at(s, 0.9, " Next", 5, collect_timed, &got); /* closes " Hi there.", opens */
    assert_int_equal(got.c.n, 1);
    assert_int_equal(tb_seg_timer(s, &ev, &delay), 0);
    assert_int_equal(ev, 2);
    assert_true(delay == 2.0);
    assert_true(tb_seg_deadline(s) == 0.9 + 2.0);
    tb_seg_destroy(s);
    o.policy = TB_CHUNK_IDLE;
    assert_int_equal(tb_seg_create(&o, &s), 0);
    got.seg = s;
    tb_seg_feed_at(s, 0.5, " Hi", 3, collect_timed, &got);
    tb_seg_feed_at(s, 0.7, " there", 6, collect_timed, &got);
    assert_int_equal(tb_seg_timer(s, &ev, &delay), 0);
    assert_int_equal(ev, 1);
    assert_true(delay == 0.75);
    assert_true(tb_seg_deadline(s) == 0.7 + 0.75);
    tb_seg_feed_at(s, 0.8, ".", 1, collect_timed, &got); /* the sentence closes: none pending */
    assert_int_equal(tb_seg_timer(s, &ev, &delay), -1);
    tb_seg_destroy(s);
    o.policy = TB_CHUNK_SENTENCE;
    assert_int_equal(tb_seg_create(&o, &s), 0);
    assert_int_equal(tb_seg_timed(s), 0);
    tb_seg_feed_at(s, 0.5, " Hi", 3, collect_timed, &got);
    assert_int_equal(tb_seg_timer(s, &ev, &delay), -1);
    tb_seg_destroy(s);
}

/* A live consumer ticks between events: the deadline, nothing before it;
 * without times the timer never fires; text-only policies have none. */
static void timed_tick_and_untimed(void **state)
{
    struct tb_seg_opts o = {TB_CHUNK_CARTESIA, 1, 2.0, 0};
    struct tb_seg *s = NULL;
    struct timed_collected got = {.c.n = 0};
    (void)state;
    assert_int_equal(tb_seg_create(&o, &s), 0);
    got.seg = s;
    assert_true(isinf(tb_seg_deadline(s)));
    tb_seg_feed_at(s, 1.0, "abc", 3, collect_timed, &got);
    assert_true(tb_seg_deadline(s) == 3.0);
    tb_seg_tick(s, 2.9375, collect_timed, &got);
    assert_int_equal(got.c.n, 0);
    tb_seg_tick(s, 3.0, collect_timed, &got);
    assert_int_equal(got.c.n, 1);
    assert_true(got.t[0] == 3.0);
    assert_int_equal(got.c.v[0].event, 0);
    assert_true(isinf(tb_seg_deadline(s))); /* nothing open */
    tb_seg_reset(s);
    got.c.n = 0;
    tb_seg_feed(s, "abc", 3, collect_timed, &got);
    tb_seg_tick(s, 1e9, collect_timed, &got);
    tb_seg_feed(s, "def", 3, collect_timed, &got);
    assert_int_equal(got.c.n, 0);
    tb_seg_destroy(s);
    o.policy = TB_CHUNK_SENTENCE;
    assert_int_equal(tb_seg_create(&o, &s), 0);
    got.seg = s;
    tb_seg_feed_at(s, 0.0, "abc", 3, collect_timed, &got);
    assert_true(isinf(tb_seg_deadline(s)));
    tb_seg_destroy(s);
    assert_true(tb_seg_policy_timed(TB_CHUNK_CARTESIA) && tb_seg_policy_timed(TB_CHUNK_IDLE));
    assert_false(tb_seg_policy_timed(TB_CHUNK_ELEVENLABS));
}

/* A negative, NAN or infinite delay is refused. */
static void timed_bad_delays(void **state)
{
    static const double bad[] = {-1.0, -0.001, NAN, INFINITY};
    (void)state;
    for (size_t i = 0; i < N(bad); i++) {
        struct tb_seg_opts o = {TB_CHUNK_CARTESIA, 1, bad[i], 0};
        struct tb_seg *s = (struct tb_seg *)&o;
        assert_int_equal(tb_seg_create(&o, &s), TB_EINVAL);
        assert_null(s);
        o = (struct tb_seg_opts){TB_CHUNK_IDLE, 1, 0, bad[i]};
        assert_int_equal(tb_seg_create(&o, &s), TB_EINVAL);
    }
}

static void policy_bad_names_and_values(void **state)
{
    static const char *const bad[] = {"",       "Sentence",      "fixed", "fixed400",
                                      "token ", "openai_agents", "eleven"};
    struct tb_seg_opts o = {TB_CHUNK__COUNT, 1, 0, 0};
    struct tb_seg *s = (struct tb_seg *)&o;
    (void)state;
    for (size_t i = 0; i < N(bad); i++) {
        enum tb_chunk_policy p = TB_CHUNK_CLAUSE;
        assert_int_equal(tb_seg_policy_parse(bad[i], &p), TB_EINVAL);
        assert_int_equal(p, TB_CHUNK_CLAUSE); /* untouched */
    }
    assert_int_equal(tb_seg_create(&o, &s), TB_EINVAL);
    assert_null(s);
    tb_seg_destroy(NULL); /* a no-op */
}

/*
 * Conformance with the frameworks' own code (tests/data/chunk/, made by
 * tests/chunk_corpus.py).  A chunk is compared by its text with every
 * whitespace character removed (the frameworks re-join and strip text, and
 * the cut position is all that matters; where the text sent is not the
 * stream's, the expected chunk's "span" is the stream text it consumed)
 * and by the index of the event that released it; a stream matches when
 * every chunk does.
 */
struct conform {
    char *text; /* the stream's content so far */
    size_t len, cap;
    size_t from; /* start of the open chunk in text */
    cJSON *got;  /* array of {"key", "event"} */
};

/* The text without its whitespace (Python's str.isspace: the frameworks
 * strip and re-join with it). */
static char *squeeze(const char *t, size_t n)
{
    char *o = malloc(n + 1), *w = o;
    size_t i = 0;
    assert_non_null(o);
    while (i < n) {
        const unsigned char *u = (const unsigned char *)t + i;
        size_t k = i + (u[0] < 0x80 ? 1 : u[0] < 0xE0 ? 2 : u[0] < 0xF0 ? 3 : 4);
        uint32_t c = u[0] < 0x80   ? u[0]
                     : u[0] < 0xE0 ? ((u[0] & 0x1Fu) << 6) | (u[1] & 0x3Fu)
                     : u[0] < 0xF0 ? ((u[0] & 0x0Fu) << 12) | ((u[1] & 0x3Fu) << 6) | (u[2] & 0x3Fu)
                                   : 0x10000u; /* no whitespace up there */
        if (k > n)
            k = n;
        if (!tb_seg_py_space(c)) {
            memcpy(w, t + i, k - i);
            w += k - i;
        }
        i = k;
    }
    *w = '\0';
    return o;
}

static void conform_chunk(void *ud, const struct tb_chunk *c)
{
    struct conform *x = ud;
    char *k = squeeze(x->text + x->from, (size_t)c->end - x->from);
    cJSON *o = cJSON_CreateObject();
    assert_true(c->end >= x->from && c->end <= x->len);
    cJSON_AddStringToObject(o, "key", k);
    cJSON_AddNumberToObject(o, "event", c->event);
    cJSON_AddItemToArray(x->got, o);
    free(k);
    x->from = (size_t)c->end;
}

/* Drops the entries whose key is empty (whitespace-only chunks). */
static void drop_empty(cJSON *a)
{
    for (int i = cJSON_GetArraySize(a) - 1; i >= 0; i--) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, i), "key");
        if (k->valuestring[0] == '\0')
            cJSON_DeleteItemFromArray(a, i);
    }
}

static int same_chunks(const cJSON *got, const cJSON *want, char *why, size_t whylen)
{
    int n = cJSON_GetArraySize(want);
    if (cJSON_GetArraySize(got) != n)
        snprintf(why, whylen, "%d chunks, want %d", cJSON_GetArraySize(got), n);
    for (int i = 0; i < n && i < cJSON_GetArraySize(got); i++) {
        const cJSON *g = cJSON_GetArrayItem(got, i), *w = cJSON_GetArrayItem(want, i);
        const char *gk = cJSON_GetObjectItemCaseSensitive(g, "key")->valuestring;
        const char *wk = cJSON_GetObjectItemCaseSensitive(w, "key")->valuestring;
        int ge = cJSON_GetObjectItemCaseSensitive(g, "event")->valueint;
        int we = cJSON_GetObjectItemCaseSensitive(w, "event")->valueint;
        if (strcmp(gk, wk) != 0 || ge != we) {
            snprintf(why, whylen, "chunk %d: \"%s\" at event %d, want \"%s\" at event %d", i, gk,
                     ge, wk, we);
            return 0;
        }
    }
    return cJSON_GetArraySize(got) == n;
}

/* Runs `policy` over a corpus of `n` streams; returns the streams that
 * match, in per mille, and prints the rate and the first differences. */
static int conform_rate(enum tb_chunk_policy policy, const char *corpus_name, const char *expected,
                        int nstreams)
{
    char *corpus = tb_test_slurp_str(tb_test_data(corpus_name));
    char *exp = tb_test_slurp_str(tb_test_data(expected));
    char *cl = corpus, *el = exp, why[512];
    struct tb_seg_opts o = {policy, 1, 0, 0};
    struct tb_seg *seg;
    int total = 0, same = 0, shown = 0;
    assert_int_equal(tb_seg_create(&o, &seg), 0);
    while (*cl != '\0' && *el != '\0') {
        char *cn = strchr(cl, '\n'), *en = strchr(el, '\n');
        cJSON *cj, *ej, *toks, *want;
        struct conform x = {NULL, 0, 0, 0, cJSON_CreateArray()};
        int ntok;
        assert_non_null(cn);
        assert_non_null(en);
        *cn = '\0';
        *en = '\0';
        cj = cJSON_Parse(cl);
        ej = cJSON_Parse(el);
        assert_non_null(cj);
        assert_non_null(ej);
        toks = cJSON_GetObjectItemCaseSensitive(cj, "tokens");
        ntok = cJSON_GetArraySize(toks);
        want = cJSON_CreateArray();
        for (int i = 0; i < cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ej, "chunks"));
             i++) {
            const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ej, "chunks"), i);
            const cJSON *span = cJSON_GetObjectItemCaseSensitive(c, "span");
            const char *t = cJSON_IsString(span)
                                ? span->valuestring
                                : cJSON_GetObjectItemCaseSensitive(c, "text")->valuestring;
            char *k = squeeze(t, strlen(t));
            cJSON *w = cJSON_CreateObject();
            cJSON_AddStringToObject(w, "key", k);
            cJSON_AddNumberToObject(w, "event",
                                    cJSON_GetObjectItemCaseSensitive(c, "event")->valueint);
            cJSON_AddItemToArray(want, w);
            free(k);
        }
        tb_seg_reset(seg);
        for (int i = 0; i < ntok; i++) {
            const char *t = cJSON_GetArrayItem(toks, i)->valuestring;
            size_t n = strlen(t);
            if (x.len + n + 1 > x.cap) {
                x.cap = (x.len + n + 1) * 2;
                x.text = realloc(x.text, x.cap);
                assert_non_null(x.text);
            }
            memcpy(x.text + x.len, t, n + 1);
            x.len += n;
            tb_seg_feed(seg, t, n, conform_chunk, &x);
        }
        tb_seg_finish(seg, conform_chunk, &x);
        drop_empty(x.got);
        drop_empty(want);
        why[0] = '\0';
        if (same_chunks(x.got, want, why, sizeof(why)))
            same++;
        else if (shown++ < 8)
            print_message("  %s stream %d differs: %s\n", tb_seg_policy_name(policy), total, why);
        total++;
        cJSON_Delete(want);
        cJSON_Delete(x.got);
        cJSON_Delete(cj);
        cJSON_Delete(ej);
        free(x.text);
        cl = cn + 1;
        el = en + 1;
    }
    tb_seg_destroy(seg);
    free(corpus);
    free(exp);
    print_message("  %s, %s: same cuts and release events as the framework in %d of %d "
                  "streams (%.1f%%)\n",
                  tb_seg_policy_name(policy), corpus_name, same, total, 100.0 * same / total);
    assert_int_equal(total, nstreams);
    return same * 1000 / total;
}

/* The compiled-in Punkt tables (generated by data/punkt_tab/gen.sh into
 * the build directory) hold exactly the lines of the shipped data files. */
static int cmp_ortho_key(const void *k, const void *e)
{
    return strcmp(k, ((const struct tb_punkt_ortho *)e)->type);
}

static size_t table_lines(const char *name, const char *const *v, size_t n)
{
    char path[4096], *text, *line, *save = NULL;
    const char *data = getenv("TB_TESTDATA");
    size_t count = 0;
    snprintf(path, sizeof(path), "%s/../../data/punkt_tab/english/%s",
             data != NULL ? data : "tests/data", name);
    text = tb_test_slurp_str(path);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        int found = 0;
        if (v != NULL) {
            for (size_t i = 0; i < n && !found; i++)
                found = strcmp(v[i], line) == 0;
            if (!found)
                fail_msg("%s: \"%s\" is not in the compiled-in table (gen/punkt_en.c)", name, line);
        } else {
            char *tab = strchr(line, '\t');
            assert_non_null(tab);
            *tab = '\0';
            const struct tb_punkt_ortho *o =
                bsearch(line, tb_punkt_ortho, n, sizeof(*o), cmp_ortho_key);
            found = o != NULL && o->flags == atoi(tab + 1);
            if (!found)
                fail_msg("ortho_context.tab: \"%s\" differs in the compiled-in table", line);
        }
        count++;
    }
    free(text);
    return count;
}

static void punkt_tables_match_data(void **state)
{
    (void)state;
    assert_int_equal(table_lines("abbrev_types.txt", tb_punkt_abbrev, tb_punkt_abbrev_n),
                     tb_punkt_abbrev_n);
    assert_int_equal(table_lines("collocations.tab", tb_punkt_colloc, tb_punkt_colloc_n),
                     tb_punkt_colloc_n);
    assert_int_equal(table_lines("sent_starters.txt", tb_punkt_starters, tb_punkt_starters_n),
                     tb_punkt_starters_n);
    assert_int_equal(tb_punkt_abbrev_n, 156);
    assert_int_equal(tb_punkt_colloc_n, 37);
    assert_int_equal(tb_punkt_starters_n, 39);
    assert_int_equal(table_lines("ortho_context.tab", NULL, tb_punkt_ortho_n), tb_punkt_ortho_n);
    assert_int_equal(tb_punkt_ortho_n, 20366);
    /* sorted, as the lookups' bsearch needs */
    for (size_t i = 1; i < tb_punkt_ortho_n; i++)
        assert_true(strcmp(tb_punkt_ortho[i - 1].type, tb_punkt_ortho[i].type) < 0);
    for (size_t i = 1; i < tb_punkt_abbrev_n; i++)
        assert_true(strcmp(tb_punkt_abbrev[i - 1], tb_punkt_abbrev[i]) < 0);
}

/* The prose, mixed and Unicode corpora, each at 100%. */
static void conform(enum tb_chunk_policy policy)
{
    char want[64];
    snprintf(want, sizeof(want), "chunk/expected-%s.jsonl", tb_seg_policy_name(policy));
    assert_int_equal(conform_rate(policy, "chunk/corpus.jsonl", want, 200), 1000);
    snprintf(want, sizeof(want), "chunk/expected-mixed-%s.jsonl", tb_seg_policy_name(policy));
    assert_int_equal(conform_rate(policy, "chunk/mixed.jsonl", want, 400), 1000);
    snprintf(want, sizeof(want), "chunk/expected-unicode-%s.jsonl", tb_seg_policy_name(policy));
    assert_int_equal(conform_rate(policy, "chunk/unicode.jsonl", want, 300), 1000);
}

static void conform_openai_agents(void **state)
{
    (void)state;
    conform(TB_CHUNK_OPENAI_AGENTS);
}

static void conform_livekit(void **state)
{
    (void)state;
    conform(TB_CHUNK_LIVEKIT);
}

static void conform_pipecat(void **state)
{
    (void)state;
    conform(TB_CHUNK_PIPECAT);
}

int tb_test_segment(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_every_event),
        cmocka_unit_test(token_multibyte),
        cmocka_unit_test(sentence_basic),
        cmocka_unit_test(sentence_terminals),
        cmocka_unit_test(sentence_closers_after_end),
        cmocka_unit_test(sentence_ellipsis),
        cmocka_unit_test(sentence_newline),
        cmocka_unit_test(sentence_min_chars_holds_back),
        cmocka_unit_test(sentence_multibyte_counts_code_points),
        cmocka_unit_test(sentence_whitespace_only_events),
        cmocka_unit_test(sentence_finish_edge_cases),
        cmocka_unit_test(clause_marks),
        cmocka_unit_test(clause_closers_and_min_chars),
        cmocka_unit_test(pipecat_lookahead),
        cmocka_unit_test(pipecat_closers_ellipsis_multibyte),
        cmocka_unit_test(pipecat_punkt_cases),
        cmocka_unit_test(livekit_merge_and_context),
        cmocka_unit_test(livekit_release_and_flush),
        cmocka_unit_test(livekit_twenty_boundary),
        cmocka_unit_test(openai_agents_twenty_rule),
        cmocka_unit_test(openai_agents_needs_period_and_space),
        cmocka_unit_test(fixed40_cut_after_last_whitespace),
        cmocka_unit_test(fixed40_no_whitespace),
        cmocka_unit_test(fixed40_multibyte),
        cmocka_unit_test(elevenlabs_schedule),
        cmocka_unit_test(elevenlabs_whole_buffer),
        cmocka_unit_test(elevenlabs_sdk_pieces_and_schedule),
        cmocka_unit_test(cut_closes_open_chunk),
        cmocka_unit_test(cut_clears_pending_state),
        cmocka_unit_test(reset_reuses_segmenter),
        cmocka_unit_test(policy_names_round_trip),
        cmocka_unit_test(policy_bad_names_and_values),
        cmocka_unit_test(cartesia_lookahead_and_delay),
        cmocka_unit_test(cartesia_first_idle_last),
        cmocka_unit_test(idle_sentence_and_defaults),
        cmocka_unit_test(timed_tick_and_untimed),
        cmocka_unit_test(timer_names_its_arrival),
        cmocka_unit_test(fed_counts_every_code_point),
        cmocka_unit_test(timed_bad_delays),
        cmocka_unit_test(conform_openai_agents),
        cmocka_unit_test(conform_livekit),
        cmocka_unit_test(conform_pipecat),
        cmocka_unit_test(punkt_tables_match_data),
        cmocka_unit_test(punkt_break_scratch_bound),
    };
    return TB_RUN_GROUP("segment", tests);
}
