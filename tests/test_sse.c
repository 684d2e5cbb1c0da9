/*
 * test_sse.c - the Server-Sent Events parser: every case file in
 * tests/data/sse replayed at every split point (two feeds cut at each
 * byte, one byte a feed, random multi-way cuts with empty feeds, and a
 * callback that stops after every event and is resumed), then the caps,
 * a 100 MB line with no newline, callback stops, reset and the counters
 * built in memory.
 *
 * The case files are read into buffers of exactly their size, so under
 * AddressSanitizer a parser that reads past a feed's end fails.  The file
 * formats are described in tests/data/sse/README.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/sse.h"

#define ERRLEN 256

/* ---- helpers ---------------------------------------------------------- */

/* A growable text buffer, always NUL-terminated. */
struct sbuf {
    char *p;
    size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        char *np;
        while (nc < b->n + n + 1)
            nc *= 2;
        np = realloc(b->p, nc);
        assert_non_null(np);
        b->p = np;
        b->cap = nc;
    }
    if (n > 0)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* Appends s[0..n) in the canonical escaped form of the README. */
static void sb_esc(struct sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[8];
        switch (c) {
        case '\\': sb_add(b, "\\\\", 2); break;
        case '\n': sb_add(b, "\\n", 2); break;
        case '\r': sb_add(b, "\\r", 2); break;
        case '\t': sb_add(b, "\\t", 2); break;
        default:
            if (c >= 0x20 && c <= 0x7e) {
                sb_add(b, (const char *)&s[i], 1);
            } else {
                snprintf(e, sizeof(e), "\\x%02x", c);
                sb_add(b, e, 4);
            }
        }
    }
}

/* Names of the *.sse files in tests/data/sse without the extension. */
static size_t list_cases(char ***out)
{
    return tb_test_list(tb_test_data("sse"), "", ".sse", 1, out);
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- recording a parse -------------------------------------------------- */

struct rec {
    struct tb_sse *p;
    struct sbuf *out; /* the canonical result text */
    int stop;         /* the callback stops the feed after every event */
};

static int on_event(void *ud, const struct tb_sse_event *ev)
{
    struct rec *r = ud;
    char num[64];
    /* Inside the callback the parser's offset is the event's. */
    if (tb_sse_offset(r->p) != ev->offset)
        fail_msg("tb_sse_offset %" PRIu64 " in the callback, event offset %" PRIu64,
                 tb_sse_offset(r->p), ev->offset);
    assert_non_null(ev->type);
    assert_non_null(ev->id);
    assert_non_null(ev->data);
    sb_str(r->out, "ev\t");
    sb_esc(r->out, ev->type, ev->type_len);
    sb_str(r->out, "\t");
    sb_esc(r->out, ev->id, ev->id_len);
    snprintf(num, sizeof(num), "\t%ld\t%" PRIu64 "\t", ev->retry_ms, ev->offset);
    sb_str(r->out, num);
    sb_esc(r->out, ev->data, ev->data_len);
    sb_str(r->out, "\n");
    return r->stop;
}

/* Feeds one piece; with r->stop, resumes after each stop with the bytes
 * the parser did not consume.  Returns the feed's final code. */
static int feed_piece(struct rec *r, const char *s, size_t n, char *err)
{
    for (;;) {
        uint64_t before = tb_sse_offset(r->p);
        int rc = tb_sse_feed(r->p, s, n, on_event, r, err, ERRLEN);
        uint64_t used;
        if (rc != 1 || !r->stop)
            return rc;
        used = tb_sse_offset(r->p) - before;
        if (used == 0 || used > n)
            fail_msg("a stopped feed consumed %" PRIu64 " of %zu bytes", used, n);
        s += used;
        n -= (size_t)used;
    }
}

/*
 * Parses buf[0..len) from a reset parser in pieces cut at cuts[0..ncuts)
 * (ascending, repeats allowed: an empty feed) and writes the canonical
 * result text to out.
 */
static void replay(struct tb_sse *p, const char *buf, size_t len, const size_t *cuts, size_t ncuts,
                   int stop, struct sbuf *out)
{
    struct rec r = {p, out, stop};
    char err[ERRLEN], num[64];
    size_t prev = 0;
    out->n = 0;
    sb_add(out, "", 0);
    tb_sse_reset(p);
    for (size_t k = 0; k <= ncuts; k++) {
        size_t cut = k < ncuts ? cuts[k] : len;
        int rc;
        err[0] = '\0';
        rc = feed_piece(&r, buf + prev, cut - prev, err);
        if (rc == TB_ETOOBIG) {
            sb_str(out, "error\t");
            sb_esc(out, err, strlen(err));
            sb_str(out, "\n");
            return;
        }
        if (rc != 0)
            fail_msg("feed returned %d (%s): %s", rc, tb_strerror(rc), err);
        prev = cut;
    }
    if (tb_sse_offset(p) != len)
        fail_msg("tb_sse_offset is %" PRIu64 " after %zu bytes", tb_sse_offset(p), len);
    snprintf(num, sizeof(num), "end\t%zu\t%" PRIu64 "\n", tb_sse_pending(p), tb_sse_comments(p));
    sb_str(out, num);
}

/* ---- the case files ----------------------------------------------------- */

/* Reads NAME.events: the caps and the expected text (comments and empty
 * lines dropped).  Returns the expected text (caller frees). */
static char *load_expected(const char *name, size_t *line_max, size_t *event_max)
{
    char rel[512];
    char *text, *line, *next;
    struct sbuf want = {0};
    snprintf(rel, sizeof(rel), "sse/%s.events", name);
    text = tb_test_slurp_text(tb_test_data(rel), NULL);
    *line_max = 0;
    *event_max = 0;
    sb_add(&want, "", 0);
    for (line = text; *line != '\0'; line = next) {
        char *nl = strchr(line, '\n');
        next = nl != NULL ? nl + 1 : line + strlen(line);
        if (nl != NULL)
            *nl = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        if (strncmp(line, "caps ", 5) == 0) {
            if (want.n != 0 || sscanf(line, "caps %zu %zu", line_max, event_max) != 2)
                fail_msg("%s.events: 'caps LINE_MAX EVENT_MAX' must come first", name);
            continue;
        }
        if (strncmp(line, "ev\t", 3) != 0 && strncmp(line, "end\t", 4) != 0 &&
            strncmp(line, "error\t", 6) != 0)
            fail_msg("%s.events: unknown line '%s'", name, line);
        sb_str(&want, line);
        sb_str(&want, "\n");
    }
    free(text);
    if (want.n == 0 || (strstr(want.p, "end\t") == NULL && strstr(want.p, "error\t") == NULL))
        fail_msg("%s.events: no 'end' or 'error' line", name);
    return want.p;
}

static void check_same(const char *name, const char *how, const struct sbuf *got, const char *want)
{
    if (strcmp(got->p, want) != 0)
        fail_msg("%s.sse (%s):\n--- got\n%s--- want\n%s", name, how, got->p, want);
}

/* Replays one case every way; returns the number of replays. */
static size_t run_case(const char *name)
{
    char rel[512], how[128];
    size_t len, line_max, event_max, nrep = 0, *cuts;
    char *buf, *want;
    struct tb_sse *p;
    struct sbuf got = {0};
    uint64_t rng = 0x5eed;

    snprintf(rel, sizeof(rel), "sse/%s.sse", name);
    buf = tb_test_slurp(tb_test_data(rel), &len);
    want = load_expected(name, &line_max, &event_max);
    assert_int_equal(tb_sse_create(line_max, event_max, &p), 0);
    cuts = malloc((len + 1) * sizeof(*cuts));
    assert_non_null(cuts);
    for (size_t i = 0; name[i] != '\0'; i++)
        rng = rng * 31 + (unsigned char)name[i];

    /* Whole, from a fresh parser; then with a stop after every event. */
    replay(p, buf, len, cuts, 0, 0, &got);
    check_same(name, "one feed", &got, want);
    replay(p, buf, len, cuts, 0, 1, &got);
    check_same(name, "one feed, stopped after each event and resumed", &got, want);
    nrep += 2;

    /* Two feeds cut at every offset, 0 and len (an empty feed) included. */
    for (size_t i = 0; i <= len; i++) {
        cuts[0] = i;
        replay(p, buf, len, cuts, 1, 0, &got);
        snprintf(how, sizeof(how), "two feeds cut at byte %zu", i);
        check_same(name, how, &got, want);
        nrep++;
    }

    /* One byte a feed, with and without stops. */
    for (size_t i = 1; i < len; i++)
        cuts[i - 1] = i;
    for (int stop = 0; stop <= 1; stop++) {
        replay(p, buf, len, cuts, len > 0 ? len - 1 : 0, stop, &got);
        check_same(name, stop ? "one byte a feed, stopped after each event" : "one byte a feed",
                   &got, want);
        nrep++;
    }

    /* Random cuts: steps of 0 (an empty feed) to max bytes. */
    for (int t = 0; t < 48; t++) {
        static const size_t maxstep[] = {1, 2, 3, 5, 8, 17, 64, 300};
        size_t m = maxstep[t % 8], n = 0, pos = 0;
        for (;;) {
            pos += (size_t)(splitmix(&rng) % (m + 1));
            if (pos >= len || n == len)
                break;
            cuts[n++] = pos;
        }
        replay(p, buf, len, cuts, n, t & 1, &got);
        snprintf(how, sizeof(how), "random cuts #%d (%zu feeds, steps up to %zu%s)", t, n + 1, m,
                 t & 1 ? ", stopped after each event" : "");
        check_same(name, how, &got, want);
        nrep++;
    }

    tb_sse_destroy(p);
    free(got.p);
    free(cuts);
    free(want);
    free(buf);
    return nrep;
}

static void case_files(void **state)
{
    char **names;
    size_t n = list_cases(&names), replays = 0, errors = 0;
    (void)state;
    for (size_t i = 0; i < n; i++) {
        replays += run_case(names[i]);
        errors += strncmp(names[i], "err_", 4) == 0;
    }
    print_message("sse: %zu case files (%zu error cases), %zu replays\n", n, errors, replays);
    tb_test_free_names(names, n);
    assert_true(n >= 40);
}

/* ---- caps, built in memory ------------------------------------------------ */

/* Counts events and keeps the last one's data. */
struct count {
    int n;
    int stop_at; /* return stop_rc at this event number (1-based); 0 never */
    int stop_rc;
    char last[64];
    uint64_t last_off;
};

static int count_event(void *ud, const struct tb_sse_event *ev)
{
    struct count *c = ud;
    size_t n = ev->data_len < sizeof(c->last) - 1 ? ev->data_len : sizeof(c->last) - 1;
    c->n++;
    memcpy(c->last, ev->data, n);
    c->last[n] = '\0';
    c->last_off = ev->offset;
    return c->n == c->stop_at ? c->stop_rc : 0;
}

static int feed_str(struct tb_sse *p, const char *s, struct count *c, char *err)
{
    return tb_sse_feed(p, s, strlen(s), count_event, c, err, ERRLEN);
}

static void line_cap_in_one_feed(void **state)
{
    const char *in = "data: ok\n\ndata: 0123456789abcdef\n\ndata: never\n\n";
    struct tb_sse *p;
    struct count c = {0};
    char err[ERRLEN] = "";
    (void)state;
    assert_int_equal(tb_sse_create(16, 100, &p), 0);
    assert_int_equal(feed_str(p, in, &c, err), TB_ETOOBIG);
    assert_string_equal(err, "line over 16 bytes at byte 26");
    assert_int_equal(c.n, 1); /* the event before the long line */
    assert_string_equal(c.last, "ok");
    /* Sticky: the same error, whatever is fed, until a reset. */
    err[0] = '\0';
    assert_int_equal(feed_str(p, "data: x\n\n", &c, err), TB_ETOOBIG);
    assert_string_equal(err, "line over 16 bytes at byte 26");
    assert_int_equal(c.n, 1);
    tb_sse_reset(p);
    assert_int_equal(feed_str(p, "data: x\n\n", &c, err), 0);
    assert_int_equal(c.n, 2);
    tb_sse_destroy(p);
}

static void line_cap_across_small_feeds(void **state)
{
    struct tb_sse *p;
    struct count c = {0};
    char err[ERRLEN] = "";
    (void)state;
    assert_int_equal(tb_sse_create(16, 100, &p), 0);
    assert_int_equal(feed_str(p, "data: ok\n\n", &c, err), 0);
    /* A line of 'x' one byte a feed: the 17th byte (stream byte 26) fails. */
    for (int i = 0; i < 16; i++)
        assert_int_equal(tb_sse_feed(p, "x", 1, count_event, &c, err, sizeof(err)), 0);
    assert_int_equal(tb_sse_pending(p), 16);
    assert_int_equal(tb_sse_feed(p, "x", 1, count_event, &c, err, sizeof(err)), TB_ETOOBIG);
    assert_string_equal(err, "line over 16 bytes at byte 26");
    assert_true(tb_sse_pending(p) <= 16);
    tb_sse_destroy(p);
}

static void line_at_default_cap(void **state)
{
    size_t n = TB_SSE_LINE_MAX + 2;
    char *buf = malloc(n), err[ERRLEN] = "", want[ERRLEN];
    struct tb_sse *p;
    struct count c = {0};
    (void)state;
    assert_non_null(buf);
    assert_int_equal(tb_sse_create(0, 0, &p), 0);
    /* A comment line of exactly TB_SSE_LINE_MAX bytes, in two feeds. */
    buf[0] = ':';
    memset(buf + 1, 'c', TB_SSE_LINE_MAX - 1);
    buf[TB_SSE_LINE_MAX] = '\n';
    assert_int_equal(tb_sse_feed(p, buf, 1000, count_event, &c, err, sizeof(err)), 0);
    assert_int_equal(
        tb_sse_feed(p, buf + 1000, TB_SSE_LINE_MAX + 1 - 1000, count_event, &c, err, sizeof(err)),
        0);
    assert_int_equal(tb_sse_comments(p), 1);
    assert_int_equal(tb_sse_pending(p), 0);
    /* One byte more, in one feed: over. */
    tb_sse_reset(p);
    buf[TB_SSE_LINE_MAX] = 'c';
    buf[TB_SSE_LINE_MAX + 1] = '\n';
    assert_int_equal(tb_sse_feed(p, buf, n, count_event, &c, err, sizeof(err)), TB_ETOOBIG);
    snprintf(want, sizeof(want), "line over %u bytes at byte %u", TB_SSE_LINE_MAX, TB_SSE_LINE_MAX);
    assert_string_equal(err, want);
    tb_sse_destroy(p);
    free(buf);
}

static void event_cap_across_data_lines(void **state)
{
    const char *line = "data: 0123456789\n"; /* 17 bytes, 10 of data */
    struct tb_sse *p;
    struct count c = {0};
    char err[ERRLEN] = "";
    (void)state;
    assert_int_equal(tb_sse_create(0, 1000, &p), 0);
    /* 91 lines: 91 * 10 bytes + 90 joining newlines = 1000, the cap. */
    for (int i = 0; i < 91; i++)
        assert_int_equal(feed_str(p, line, &c, err), 0);
    assert_int_equal(feed_str(p, "\n", &c, err), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.last_off, 91 * 17 + 1);
    /* 92 lines: the 92nd line's joining newline is one byte too many; it is
     * charged to where that line's value starts. */
    for (int i = 0; i < 91; i++)
        assert_int_equal(feed_str(p, line, &c, err), 0);
    assert_int_equal(tb_sse_pending(p), 1001);
    assert_int_equal(feed_str(p, line, &c, err), TB_ETOOBIG);
    assert_string_equal(err, "event data over 1000 bytes at byte 3101"); /* 1548 + 91 * 17 + 6 */
    assert_int_equal(c.n, 1);
    /* Over by a data byte, in one feed of many lines. */
    {
        struct sbuf in = {0};
        tb_sse_reset(p);
        for (int i = 0; i < 95; i++)
            sb_str(&in, "data: 0123456789\n");
        sb_str(&in, "\n");
        assert_int_equal(tb_sse_feed(p, in.p, in.n, count_event, &c, err, sizeof(err)), TB_ETOOBIG);
        /* Line 91 ends the 1000 bytes; line 92's newline overflows. */
        assert_string_equal(err, "event data over 1000 bytes at byte 1553"); /* 91 * 17 + 6 */
        free(in.p);
    }
    tb_sse_destroy(p);
}

/* A 100 MB line with no newline, fed in 64 KiB pieces, fails as soon as
 * the cap is passed and the parser holds no more than the cap. */
static void huge_line_fails_at_cap(void **state)
{
    enum { PIECE = 64 * 1024, TOTAL = 100 * 1024 * 1024, CAP = 4096 };
    static char piece[PIECE];
    struct tb_sse *p;
    struct count c = {0};
    char err[ERRLEN] = "";
    (void)state;
    memset(piece, 'a', sizeof(piece));
    assert_int_equal(tb_sse_create(CAP, CAP, &p), 0);
    for (size_t fed = 0, k = 0; fed < TOTAL; fed += PIECE, k++) {
        int rc = tb_sse_feed(p, piece, PIECE, count_event, &c, err, sizeof(err));
        assert_int_equal(rc, TB_ETOOBIG); /* the first piece fails; the rest stay failed */
        if (k == 0)
            assert_string_equal(err, "line over 4096 bytes at byte 4096");
        assert_true(tb_sse_pending(p) <= CAP);
    }
    assert_int_equal(c.n, 0);

    /* Exactly the cap is held; the next byte fails, naming byte 4096. */
    tb_sse_reset(p);
    assert_int_equal(tb_sse_feed(p, piece, CAP, count_event, &c, err, sizeof(err)), 0);
    assert_int_equal(tb_sse_pending(p), CAP);
    assert_int_equal(tb_sse_feed(p, piece, 1, count_event, &c, err, sizeof(err)), TB_ETOOBIG);
    assert_string_equal(err, "line over 4096 bytes at byte 4096");

    /* 1000-byte pieces: the fifth (bytes 4000..4999) is the one that fails. */
    tb_sse_reset(p);
    for (int k = 0; k < 4; k++)
        assert_int_equal(tb_sse_feed(p, piece, 1000, count_event, &c, err, sizeof(err)), 0);
    assert_int_equal(tb_sse_feed(p, piece, 1000, count_event, &c, err, sizeof(err)), TB_ETOOBIG);
    assert_string_equal(err, "line over 4096 bytes at byte 4096");
    tb_sse_destroy(p);
}

/* The same with a data line: the event cap runs out first, long before
 * the (default, 1 MiB) line cap. */
static void huge_data_line_fails_at_event_cap(void **state)
{
    enum { PIECE = 64 * 1024 };
    static char piece[PIECE];
    struct tb_sse *p;
    struct count c = {0};
    char err[ERRLEN] = "";
    (void)state;
    memset(piece, 'a', sizeof(piece));
    assert_int_equal(tb_sse_create(0, 4096, &p), 0);
    assert_int_equal(feed_str(p, "data: ", &c, err), 0);
    assert_int_equal(tb_sse_feed(p, piece, PIECE, count_event, &c, err, sizeof(err)), TB_ETOOBIG);
    assert_string_equal(err, "event data over 4096 bytes at byte 4102");
    assert_true(tb_sse_pending(p) <= TB_SSE_LINE_MAX);
    tb_sse_destroy(p);
}

static void err_buffer_optional_and_bounded(void **state)
{
    struct tb_sse *p;
    struct count c = {0};
    char err[8];
    (void)state;
    assert_int_equal(tb_sse_create(4, 4, &p), 0);
    assert_int_equal(tb_sse_feed(p, "abcdef", 6, count_event, &c, NULL, 0), TB_ETOOBIG);
    memset(err, 'z', sizeof(err));
    assert_int_equal(tb_sse_feed(p, "x", 1, count_event, &c, err, sizeof(err)), TB_ETOOBIG);
    assert_string_equal(err, "line ov"); /* cut to the buffer, NUL-terminated */
    tb_sse_destroy(p);
    tb_sse_destroy(NULL);
}

/* ---- callbacks, reset, counters ------------------------------------------ */

static void callback_stop_is_returned(void **state)
{
    const char *in = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
    const char *crlf = "data: 1\r\n\r\nevent: t\r\ndata: 2\r\n\r\n";
    struct tb_sse *p;
    struct count c = {0};
    char err[ERRLEN] = "";
    (void)state;
    assert_int_equal(tb_sse_create(0, 0, &p), 0);
    c.stop_at = 2;
    c.stop_rc = 42;
    assert_int_equal(feed_str(p, in, &c, err), 42);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.last, "2");
    /* The feed stopped just past the second event's empty line; the rest
     * can be fed again. */
    assert_int_equal(tb_sse_offset(p), 18);
    assert_int_equal(tb_sse_pending(p), 0);
    assert_int_equal(feed_str(p, in + 18, &c, err), 0);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.last_off, 27);
    assert_int_equal(tb_sse_offset(p), 27);

    /* A negative value is passed through too, and a stop at a CRLF's CR
     * leaves the LF to the next feed, which swallows it. */
    tb_sse_reset(p);
    memset(&c, 0, sizeof(c));
    c.stop_at = 1;
    c.stop_rc = TB_EINVAL;
    assert_int_equal(feed_str(p, crlf, &c, err), TB_EINVAL);
    assert_int_equal(tb_sse_offset(p), 10);
    assert_int_equal(feed_str(p, crlf + 10, &c, err), 0);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.last, "2");
    assert_int_equal(c.last_off, 31);
    tb_sse_destroy(p);
}

struct keep {
    char type[16], id[16];
    long retry;
    uint64_t off;
    int n;
};

static int keep_event(void *ud, const struct tb_sse_event *ev)
{
    struct keep *k = ud;
    assert_true(ev->type_len < sizeof(k->type) && ev->id_len < sizeof(k->id));
    memcpy(k->type, ev->type, ev->type_len);
    k->type[ev->type_len] = '\0';
    memcpy(k->id, ev->id, ev->id_len);
    k->id[ev->id_len] = '\0';
    k->retry = ev->retry_ms;
    k->off = ev->offset;
    k->n++;
    return 0;
}

static void reset_forgets_state(void **state)
{
    const char *half = "retry: 5\nid: 9\nevent: x\n: c\ndata: abc\ndata: par";
    const char *next = "\xEF\xBB\xBF"
                       "data: z\n\n";
    struct tb_sse *p;
    struct keep k = {0};
    char err[ERRLEN] = "";
    (void)state;
    assert_int_equal(tb_sse_create(0, 0, &p), 0);
    assert_int_equal(tb_sse_feed(p, half, strlen(half), keep_event, &k, err, sizeof(err)), 0);
    assert_int_equal(tb_sse_pending(p), 13); /* "abc\n" and "data: par" */
    assert_int_equal(tb_sse_comments(p), 1);
    assert_int_equal(tb_sse_offset(p), strlen(half));
    tb_sse_reset(p);
    assert_int_equal(tb_sse_pending(p), 0);
    assert_int_equal(tb_sse_comments(p), 0);
    assert_int_equal(tb_sse_offset(p), 0);
    /* A new stream: its byte order mark is skipped; type, id and retry
     * are back to their defaults. */
    assert_int_equal(tb_sse_feed(p, next, strlen(next), keep_event, &k, err, sizeof(err)), 0);
    assert_int_equal(k.n, 1);
    assert_string_equal(k.type, "message");
    assert_string_equal(k.id, "");
    assert_int_equal(k.retry, -1);
    assert_int_equal(k.off, 12);

    /* A partial byte order mark is forgotten too. */
    tb_sse_reset(p);
    assert_int_equal(tb_sse_feed(p, "\xEF", 1, keep_event, &k, err, sizeof(err)), 0);
    assert_int_equal(tb_sse_pending(p), 1);
    tb_sse_reset(p);
    assert_int_equal(tb_sse_feed(p, "data: q\n\n", 9, keep_event, &k, err, sizeof(err)), 0);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.off, 9);
    tb_sse_destroy(p);
}

static void offset_and_comments(void **state)
{
    static const struct {
        const char *piece;
        uint64_t comments;
        size_t pending;
    } steps[] = {
        {"", 0, 0},    {"\xEF\xBB", 0, 2},  {"\xBF: a\n", 1, 0},
        {": b", 1, 3}, {"\n:", 2, 1},       {"c\r", 3, 0},
        {"\n", 3, 0},  {"data: x\n", 3, 2}, {": d\r\n\r\n", 4, 0},
    };
    struct tb_sse *p;
    struct count c = {0};
    char err[ERRLEN] = "";
    uint64_t total = 0;
    (void)state;
    assert_int_equal(tb_sse_create(0, 0, &p), 0);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        size_t n = strlen(steps[i].piece);
        assert_int_equal(tb_sse_feed(p, steps[i].piece, n, count_event, &c, err, sizeof(err)), 0);
        total += n;
        assert_int_equal(tb_sse_offset(p), total);
        assert_int_equal(tb_sse_comments(p), steps[i].comments);
        assert_int_equal(tb_sse_pending(p), steps[i].pending);
    }
    assert_int_equal(c.n, 1);
    assert_string_equal(c.last, "x");
    assert_int_equal(c.last_off, total - 1); /* past the last CR */
    tb_sse_destroy(p);
}

int tb_test_sse(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(case_files),
        cmocka_unit_test(line_cap_in_one_feed),
        cmocka_unit_test(line_cap_across_small_feeds),
        cmocka_unit_test(line_at_default_cap),
        cmocka_unit_test(event_cap_across_data_lines),
        cmocka_unit_test(huge_line_fails_at_cap),
        cmocka_unit_test(huge_data_line_fails_at_event_cap),
        cmocka_unit_test(err_buffer_optional_and_bounded),
        cmocka_unit_test(callback_stop_is_returned),
        cmocka_unit_test(reset_forgets_state),
        cmocka_unit_test(offset_and_comments),
    };
    return TB_RUN_GROUP("sse", tests);
}
