/*
 * test_synth.c - synthetic streams and presets: spec defaults, parsing
 * (every key, partial overrides, every error naming its key), the
 * format/parse round trip, and what a generated stream must be: the exact
 * token count, event sizes, first event at ttft, ordered times, valid
 * non-empty UTF-8, byte-identical for the same seed, exact gaps without
 * jitter, the requested mean rate and CV with it, and stalls.
 *
 * The statistical cases use fixed seeds, so they are deterministic; their
 * tolerances are several standard errors wide, so another seed would pass
 * too.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/utf8.h"

#define ERRLEN 256

/* Field by field, doubles bit for bit (the struct may have padding). */
static void assert_same_spec(const struct tb_synth_spec *a, const struct tb_synth_spec *b)
{
    if (!tb_test_same_bits(a->tps, b->tps) || !tb_test_same_bits(a->ttft, b->ttft) ||
        !tb_test_same_bits(a->jitter, b->jitter) || !tb_test_same_bits(a->stall_p, b->stall_p) ||
        !tb_test_same_bits(a->stall_s, b->stall_s) || a->tokens != b->tokens ||
        a->burst != b->burst || a->seed != b->seed)
        fail_msg("specs differ:\n  tps=%.17g ttft=%.17g tokens=%" PRIu32
                 " jitter=%.17g stall=%.17g:%.17g burst=%" PRIu32 " seed=%" PRIu64
                 "\n  tps=%.17g ttft=%.17g tokens=%" PRIu32
                 " jitter=%.17g stall=%.17g:%.17g burst=%" PRIu32 " seed=%" PRIu64,
                 a->tps, a->ttft, a->tokens, a->jitter, a->stall_p, a->stall_s, a->burst, a->seed,
                 b->tps, b->ttft, b->tokens, b->jitter, b->stall_p, b->stall_s, b->burst, b->seed);
}

static void parse_ok(const char *text, struct tb_synth_spec *spec)
{
    char err[ERRLEN] = "";
    int rc = tb_synth_parse(text, spec, err, sizeof(err));
    if (rc != 0)
        fail_msg("'%s': %s (%s)", text, err, tb_strerror(rc));
}

/* Generates spec into a fresh stream. */
static void gen(const struct tb_synth_spec *spec, struct tb_stream *s)
{
    tb_stream_init(s);
    assert_int_equal(tb_synth_generate(spec, s), 0);
}

/* ---- spec ------------------------------------------------------------- */

static void defaults(void **state)
{
    struct tb_synth_spec s;
    (void)state;
    memset(&s, 0xAB, sizeof(s));
    tb_synth_default(&s);
    assert_true(s.tps == 80.0);
    assert_true(s.ttft == 0.3);
    assert_int_equal(s.tokens, 300);
    assert_true(s.jitter == 0.3);
    assert_true(s.stall_p == 0.0);
    assert_true(s.stall_s == 0.0);
    assert_int_equal(s.burst, 1);
    assert_int_equal(s.seed, 1);
}

static void parse_each_key(void **state)
{
    struct tb_synth_spec def, s, want;
    (void)state;
    tb_synth_default(&def);

    s = def, want = def, want.tps = 123.5;
    parse_ok("tps=123.5", &s);
    assert_same_spec(&s, &want);
    s = def, want = def, want.ttft = 0;
    parse_ok("ttft=0", &s);
    assert_same_spec(&s, &want);
    s = def, want = def, want.tokens = 10000000;
    parse_ok("tokens=10000000", &s);
    assert_same_spec(&s, &want);
    s = def, want = def, want.jitter = 10;
    parse_ok("jitter=10", &s);
    assert_same_spec(&s, &want);
    s = def, want = def, want.stall_p = 0.02, want.stall_s = 1.5;
    parse_ok("stall=0.02:1.5", &s);
    assert_same_spec(&s, &want);
    s = def, want = def, want.burst = 1000;
    parse_ok("burst=1000", &s);
    assert_same_spec(&s, &want);
    s = def, want = def, want.seed = UINT64_MAX;
    parse_ok("seed=18446744073709551615", &s);
    assert_same_spec(&s, &want);
    s = def, want = def, want.seed = 0;
    parse_ok("seed=0", &s);
    assert_same_spec(&s, &want);
    /* The range ends are allowed. */
    s = def, want = def, want.tps = 0.001;
    parse_ok("tps=0.001", &s);
    assert_same_spec(&s, &want);
    s = def, want = def, want.tps = 100000, want.ttft = 3600, want.tokens = 1;
    want.stall_p = 1, want.stall_s = 3600, want.jitter = 0;
    parse_ok("tps=1e5,ttft=3600,tokens=1,stall=1:3600,jitter=0", &s);
    assert_same_spec(&s, &want);
    /* All at once, in any order. */
    s = def;
    parse_ok("seed=7,burst=3,stall=0.5:2,jitter=0.1,tokens=400,ttft=0.25,tps=60", &s);
    want.tps = 60, want.ttft = 0.25, want.tokens = 400, want.jitter = 0.1;
    want.stall_p = 0.5, want.stall_s = 2, want.burst = 3, want.seed = 7;
    assert_same_spec(&s, &want);
}

static void parse_overrides_only_given_keys(void **state)
{
    struct tb_synth_spec s, want;
    (void)state;
    s.tps = 1, s.ttft = 2, s.tokens = 3, s.jitter = 4, s.stall_p = 0.5, s.stall_s = 6;
    s.burst = 7, s.seed = 8;
    want = s;
    parse_ok("", &s);
    assert_same_spec(&s, &want);
    parse_ok(",,", &s);
    assert_same_spec(&s, &want);
    parse_ok("ttft=0.75", &s);
    want.ttft = 0.75;
    assert_same_spec(&s, &want);
    parse_ok("burst=2,,seed=9", &s);
    want.burst = 2, want.seed = 9;
    assert_same_spec(&s, &want);
    /* A repeated key: the last one wins. */
    parse_ok("tps=5,tps=6", &s);
    want.tps = 6;
    assert_same_spec(&s, &want);
}

static void parse_errors_name_the_key(void **state)
{
    static const struct {
        const char *text;
        int code;
        const char *msg; /* must appear in the message */
    } cases[] = {
        {"bogus=1", TB_EINVAL, "unknown key 'bogus'"},
        {"TPS=80", TB_EINVAL, "unknown key 'TPS'"},
        {"=5", TB_EINVAL, "unknown key ''"},
        {"tps", TB_EINVAL, "'tps' is not key=value"},
        {"tps=80,seed", TB_EINVAL, "'seed' is not key=value"},
        {"tps=fast", TB_EINVAL, "tps=fast is not a number"},
        {"tps=", TB_EINVAL, "tps= is not a number"},
        {"tps=80x", TB_EINVAL, "tps=80x is not a number"},
        {"tps=nan", TB_EINVAL, "tps=nan is not a number"},
        {"tps=inf", TB_EINVAL, "tps=inf is not a number"},
        {"tps=1e999", TB_EINVAL, "tps=1e999 is not a number"},
        {"tps=0", TB_ERANGE, "tps=0 is outside"},
        {"tps=-5", TB_ERANGE, "tps=-5 is outside"},
        {"tps=100001", TB_ERANGE, "tps=100001 is outside"},
        {"ttft=-0.1", TB_ERANGE, "ttft=-0.1 is outside 0..3600"},
        {"ttft=3601", TB_ERANGE, "ttft=3601 is outside 0..3600"},
        {"jitter=11", TB_ERANGE, "jitter=11 is outside 0..10"},
        {"jitter=-0.1", TB_ERANGE, "jitter=-0.1 is outside 0..10"},
        {"stall=0.5", TB_EINVAL, "stall=0.5 is not PROBABILITY:SECONDS"},
        {"stall=", TB_EINVAL, "stall= is not PROBABILITY:SECONDS"},
        {"stall=2:1", TB_ERANGE, "stall probability=2 is outside 0..1"},
        {"stall=-0.1:1", TB_ERANGE, "stall probability=-0.1 is outside 0..1"},
        {"stall=:1", TB_EINVAL, "stall probability= is not a number"},
        {"stall=0.5:-1", TB_ERANGE, "stall seconds=-1 is outside 0..3600"},
        {"stall=0.5:3601", TB_ERANGE, "stall seconds=3601 is outside 0..3600"},
        {"stall=0.5:x", TB_EINVAL, "stall seconds=x is not a number"},
        {"stall=0.5:1:2", TB_EINVAL, "stall seconds=1:2 is not a number"},
        {"tokens=0", TB_ERANGE, "tokens=0 is outside"},
        {"tokens=10000001", TB_ERANGE, "tokens=10000001 is outside"},
        {"tokens=1.5", TB_EINVAL, "tokens=1.5 is not a whole number"},
        {"tokens=-3", TB_ERANGE, "tokens=-3 is outside"},
        {"burst=0", TB_ERANGE, "burst=0 is outside 1..1000"},
        {"burst=1001", TB_ERANGE, "burst=1001 is outside 1..1000"},
        {"burst=2.5", TB_EINVAL, "burst=2.5 is not a whole number"},
        {"seed=-1", TB_EINVAL, "seed=-1 is not a whole number in 0..2^64-1"},
        {"seed= -1", TB_EINVAL, "seed= -1 is not a whole number"},
        {"seed=+1", TB_EINVAL, "seed=+1 is not a whole number"},
        {"seed=18446744073709551616", TB_EINVAL, "seed=18446744073709551616 is not"},
        {"seed=1.5", TB_EINVAL, "seed=1.5 is not a whole number"},
        {"seed=", TB_EINVAL, "seed= is not a whole number"},
        {"seed=0x10", TB_EINVAL, "seed=0x10 is not a whole number"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tb_synth_spec s, before;
        char err[ERRLEN] = "";
        int rc;
        tb_synth_default(&s);
        /* A valid key before the bad one must not be applied either. */
        before = s;
        {
            char text[128];
            snprintf(text, sizeof(text), "ttft=9,%s", cases[i].text);
            rc = tb_synth_parse(text, &s, err, sizeof(err));
        }
        if (rc != cases[i].code)
            fail_msg("'%s': code %d (%s), want %d (%s): %s", cases[i].text, rc, tb_strerror(rc),
                     cases[i].code, tb_strerror(cases[i].code), err);
        if (strncmp(err, "synth spec: ", 12) != 0 || strstr(err, cases[i].msg) == NULL)
            fail_msg("'%s': message '%s' lacks '%s'", cases[i].text, err, cases[i].msg);
        assert_same_spec(&s, &before);
    }
}

static void parse_too_long(void **state)
{
    char text[700], err[ERRLEN] = "";
    struct tb_synth_spec s, before;
    (void)state;
    tb_synth_default(&s);
    before = s;
    memset(text, ',', sizeof(text) - 1);
    memcpy(text, "tps=5", 5);
    text[sizeof(text) - 1] = '\0';
    assert_int_equal(tb_synth_parse(text, &s, err, sizeof(err)), TB_ETOOBIG);
    assert_string_equal(err, "synth spec: longer than 511 bytes");
    assert_same_spec(&s, &before);
    /* 511 bytes still parse. */
    text[511] = '\0';
    assert_int_equal(tb_synth_parse(text, &s, err, sizeof(err)), 0);
    assert_true(s.tps == 5);
}

static void parse_long_values_not_cut(void **state)
{
    /* A value longer than any internal copy must be read whole. */
    char text[300], err[ERRLEN] = "";
    struct tb_synth_spec s;
    (void)state;
    tb_synth_default(&s);
    snprintf(text, sizeof(text), "stall=0.%0100d1:1.%0100d5", 0, 0);
    assert_int_equal(tb_synth_parse(text, &s, err, sizeof(err)), 0);
    assert_true(s.stall_p == 1e-101);
    assert_true(s.stall_s == 1.0); /* 1.0...05 rounds to 1 */
    snprintf(text, sizeof(text), "stall=0.5:0.%0100d1", 0);
    assert_int_equal(tb_synth_parse(text, &s, err, sizeof(err)), 0);
    assert_true(s.stall_s > 0.0 && s.stall_s < 1e-99);
    snprintf(text, sizeof(text), "stall=0.5:0%0100d1", 0); /* = 1, not 0 */
    assert_int_equal(tb_synth_parse(text, &s, err, sizeof(err)), 0);
    assert_true(s.stall_s == 1.0);
}

static void format_canonical(void **state)
{
    struct tb_synth_spec s;
    char buf[256];
    int n;
    (void)state;
    tb_synth_default(&s);
    n = tb_synth_format(&s, buf, sizeof(buf));
    assert_string_equal(buf, "tps=80,ttft=0.3,tokens=300,jitter=0.3,stall=0:0,burst=1,seed=1");
    assert_int_equal(n, strlen(buf));
    /* Truncates like snprintf and returns the full length. */
    assert_int_equal(tb_synth_format(&s, buf, 8), n);
    assert_string_equal(buf, "tps=80,");
    parse_ok("tps=87.5,ttft=0.15,stall=0.02:1.5,burst=4,seed=30,tps=100000", &s);
    tb_synth_format(&s, buf, sizeof(buf));
    assert_string_equal(
        buf, "tps=100000,ttft=0.15,tokens=300,jitter=0.3,stall=0.02:1.5,burst=4,seed=30");
}

static void format_parse_round_trip(void **state)
{
    struct tb_synth_spec specs[6], back;
    char buf[512];
    size_t n = 0, np;
    const struct tb_preset *p = tb_preset_all(&np);
    (void)state;
    tb_synth_default(&specs[n++]);
    specs[n] = specs[0];
    parse_ok("tps=7,ttft=0.4,tokens=300,jitter=0.6,stall=0.02:1.5,seed=30", &specs[n++]);
    /* Values that need all 17 digits, and the extremes. */
    specs[n].tps = 0.1 + 0.2;
    specs[n].ttft = 1.0 / 3.0;
    specs[n].tokens = 10000000;
    specs[n].jitter = 0.30000000000000004;
    specs[n].stall_p = 1e-9;
    specs[n].stall_s = 3599.9999999999995;
    specs[n].burst = 1000;
    specs[n].seed = UINT64_MAX;
    n++;
    specs[n] = specs[0];
    specs[n].tps = 87.123456789, specs[n].ttft = 0.123456789012, specs[n].seed = 0;
    n++;
    specs[n] = specs[0];
    specs[n].tps = 100000, specs[n].ttft = 3600, specs[n].stall_p = 1;
    specs[n].stall_s = 1e-300, specs[n].jitter = 10, specs[n].tokens = 1;
    n++;
    specs[n] = specs[0];
    specs[n].tps = 0.001, specs[n].ttft = 0, specs[n].jitter = 0, specs[n].stall_s = 3600;
    n++;
    for (size_t i = 0; i < n; i++) {
        tb_synth_format(&specs[i], buf, sizeof(buf));
        tb_synth_default(&back);
        back.seed = 12345, back.burst = 77; /* must be overwritten */
        parse_ok(buf, &back);
        assert_same_spec(&back, &specs[i]);
    }
    /* Every preset: parse, format, parse again. */
    for (size_t i = 0; i < np; i++) {
        struct tb_synth_spec a;
        tb_synth_default(&a);
        parse_ok(p[i].spec, &a);
        tb_synth_format(&a, buf, sizeof(buf));
        tb_synth_default(&back);
        parse_ok(buf, &back);
        assert_same_spec(&back, &a);
    }
}

/* ---- generate --------------------------------------------------------- */

/* The invariants every generated stream satisfies. */
static void check_stream(const struct tb_synth_spec *sp, const struct tb_stream *s)
{
    uint64_t total = 0, text = 0;
    size_t want_events = (sp->tokens + sp->burst - 1) / sp->burst;
    if (s->n != want_events)
        fail_msg("tokens=%" PRIu32 " burst=%" PRIu32 ": %zu events, want %zu", sp->tokens,
                 sp->burst, s->n, want_events);
    assert_true(s->ev[0].t == sp->ttft);
    for (size_t i = 0; i < s->n; i++) {
        const struct tb_event *e = &s->ev[i];
        total += e->tokens;
        assert_true(e->len > 0);
        assert_int_equal(e->off, text);
        text += e->len;
        assert_int_equal(tb_utf8_check(tb_stream_text(s, i), e->len), e->len);
        assert_null(memchr(tb_stream_text(s, i), '\0', e->len));
        assert_int_equal(e->kind, TB_KIND_CONTENT);
        /* Full bursts, except that the last event may carry fewer. */
        if (i + 1 < s->n)
            assert_int_equal(e->tokens, sp->burst);
        else
            assert_true(e->tokens >= 1 && e->tokens <= sp->burst);
        /* A token is a word piece with its space, or one mark: short. */
        assert_true(e->len <= 8 * e->tokens);
        if (i > 0 && !(e->t >= s->ev[i - 1].t))
            fail_msg("event %zu: t %.17g before %.17g", i, e->t, s->ev[i - 1].t);
        assert_true(isfinite(e->t));
    }
    assert_int_equal(total, sp->tokens);
    assert_int_equal(s->text_len, text);
    assert_int_equal(s->usage_tokens, -1);
}

static void generate_invariants(void **state)
{
    static const char *const specs[] = {
        "tokens=1",
        "tokens=1,burst=1000",
        "tokens=2,burst=3",
        "tokens=10,burst=3",
        "tokens=999,burst=7,jitter=2",
        "tokens=1000,burst=10,stall=0.3:0.5",
        "tokens=5000,jitter=10,seed=3",
        "tokens=3000,jitter=0,ttft=0",
        "tokens=2000,tps=100000,ttft=3600",
        "tokens=300,tps=0.001",
        "tokens=20000,burst=1000,seed=99",
        "tokens=10001,burst=1000",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        struct tb_synth_spec sp;
        struct tb_stream s;
        tb_synth_default(&sp);
        parse_ok(specs[i], &sp);
        gen(&sp, &s);
        check_stream(&sp, &s);
        tb_stream_free(&s);
    }
}

static void generate_many_seeds(void **state)
{
    /* Every corpus sentence and split shows up across these. */
    (void)state;
    for (uint64_t seed = 0; seed < 200; seed++) {
        struct tb_synth_spec sp;
        struct tb_stream s;
        tb_synth_default(&sp);
        sp.seed = seed;
        sp.tokens = 500;
        sp.burst = (uint32_t)(1 + seed % 5);
        gen(&sp, &s);
        check_stream(&sp, &s);
        tb_stream_free(&s);
    }
}

static void generate_looks_like_prose(void **state)
{
    struct tb_synth_spec sp;
    struct tb_stream s;
    size_t spaces = 0, words = 0, breaks = 0, multibyte = 0;
    (void)state;
    tb_synth_default(&sp);
    sp.tokens = 20000;
    gen(&sp, &s);
    check_stream(&sp, &s);
    for (size_t i = 0; i < s.n; i++) {
        const char *p = tb_stream_text(&s, i);
        uint32_t len = s.ev[i].len;
        assert_true(len <= 7); /* " " + six letters at most */
        if (len == 2 && memcmp(p, "\n\n", 2) == 0)
            breaks++;
        else if (p[0] == ' ')
            spaces++;
        if ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || p[0] == ' ')
            words++;
        for (uint32_t k = 0; k < len; k++)
            multibyte += (unsigned char)p[k] >= 0x80;
        /* A space only ever leads a piece. */
        assert_null(memchr(p + 1, ' ', len - 1));
    }
    /* Most pieces are words, a good share start with a space, and there
     * are paragraph breaks now and then. */
    assert_true(words > s.n / 2);
    assert_true(spaces > s.n / 3);
    assert_true(breaks > 0 && breaks < s.n / 20);
    /* The corpus's non-ASCII characters (e-acute, em dash, ellipsis) occur,
     * whole: the UTF-8 check in check_stream covers their splitting. */
    assert_true(multibyte > 0);
    tb_stream_free(&s);
}

static void generate_appends(void **state)
{
    struct tb_synth_spec sp;
    struct tb_stream s, alone;
    (void)state;
    tb_synth_default(&sp);
    sp.tokens = 50;
    tb_stream_init(&s);
    assert_int_equal(tb_stream_append(&s, 0.0, "pre", 3, 1, TB_KIND_REASONING), 0);
    assert_int_equal(tb_synth_generate(&sp, &s), 0);
    gen(&sp, &alone);
    assert_int_equal(s.n, 1 + alone.n);
    assert_memory_equal(tb_stream_text(&s, 0), "pre", 3);
    assert_int_equal(s.text_len, 3 + alone.text_len);
    for (size_t i = 0; i < alone.n; i++) {
        assert_true(s.ev[i + 1].t == alone.ev[i].t);
        assert_int_equal(s.ev[i + 1].len, alone.ev[i].len);
        assert_int_equal(s.ev[i + 1].off, 3 + alone.ev[i].off);
        assert_memory_equal(tb_stream_text(&s, i + 1), tb_stream_text(&alone, i), alone.ev[i].len);
    }
    tb_stream_free(&alone);
    tb_stream_free(&s);
}

/* 1 when the streams are identical: same events and the same text bytes. */
static int same_stream(const struct tb_stream *a, const struct tb_stream *b)
{
    if (a->n != b->n || a->text_len != b->text_len ||
        memcmp(a->text, b->text, (size_t)a->text_len) != 0)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (!tb_test_same_bits(a->ev[i].t, b->ev[i].t) || a->ev[i].off != b->ev[i].off ||
            a->ev[i].len != b->ev[i].len || a->ev[i].tokens != b->ev[i].tokens ||
            a->ev[i].kind != b->ev[i].kind)
            return 0;
    return 1;
}

static void generate_deterministic(void **state)
{
    static const char *const specs[] = {
        "tokens=3000",
        "tokens=3000,burst=5,jitter=1.5,stall=0.05:2,seed=123456789",
        "tokens=100,seed=18446744073709551615",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        struct tb_synth_spec sp;
        struct tb_stream a, b, c;
        tb_synth_default(&sp);
        parse_ok(specs[i], &sp);
        gen(&sp, &a);
        gen(&sp, &b);
        assert_true(same_stream(&a, &b));
        /* Another seed: other times and other text. */
        sp.seed ^= 1;
        gen(&sp, &c);
        assert_false(same_stream(&a, &c));
        assert_false(a.text_len == c.text_len && memcmp(a.text, c.text, a.text_len) == 0);
        {
            int times_differ = 0;
            for (size_t k = 1; k < a.n && k < c.n; k++)
                times_differ |= a.ev[k].t != c.ev[k].t;
            assert_true(times_differ);
        }
        tb_stream_free(&a);
        tb_stream_free(&b);
        tb_stream_free(&c);
    }
}

static void generate_known_stream(void **state)
{
    /* Pins the generator: a change in the RNG, the corpus or the splitting
     * shows up here.  Update the expected text on purpose, when such a
     * change is meant (saved traces and reports then change too). */
    static const char *const want[] = {"That", " pause", " is", " what", " we",  " want",
                                       " to",  " avoid", ".",   " You",  " can", " also"};
    struct tb_synth_spec sp;
    struct tb_stream s;
    (void)state;
    tb_synth_default(&sp);
    sp.tokens = 12;
    sp.jitter = 0;
    gen(&sp, &s);
    assert_int_equal(s.n, 12);
    for (size_t i = 0; i < s.n; i++) {
        assert_int_equal(s.ev[i].len, strlen(want[i]));
        assert_memory_equal(tb_stream_text(&s, i), want[i], s.ev[i].len);
        assert_near(s.ev[i].t, 0.3 + (double)i / 80.0, 1e-12);
    }
    tb_stream_free(&s);
}

static void no_jitter_gaps_exact(void **state)
{
    static const double tps[] = {80, 7, 1000, 0.5, 100000};
    (void)state;
    for (size_t k = 0; k < sizeof(tps) / sizeof(tps[0]); k++) {
        struct tb_synth_spec sp;
        struct tb_stream s;
        tb_synth_default(&sp);
        sp.tps = tps[k];
        sp.jitter = 0;
        sp.tokens = 500;
        gen(&sp, &s);
        assert_true(s.ev[0].t == sp.ttft);
        for (size_t i = 1; i < s.n; i++)
            assert_near(s.ev[i].t - s.ev[i - 1].t, 1.0 / sp.tps, 1e-12 * (1.0 + s.ev[i].t));
        /* The stream ends (tokens - 1) gaps after ttft. */
        assert_near(s.ev[s.n - 1].t, sp.ttft + 499.0 / sp.tps, 1e-9 * (1 + 499.0 / sp.tps));
        tb_stream_free(&s);
    }
}

static void no_jitter_bursts(void **state)
{
    struct tb_synth_spec sp;
    struct tb_stream s;
    (void)state;
    tb_synth_default(&sp);
    sp.tps = 100, sp.jitter = 0, sp.burst = 4, sp.tokens = 10, sp.ttft = 0.5;
    gen(&sp, &s);
    /* Events of 4, 4, 2 tokens: the first at ttft, each later one after
     * one 1/tps gap per token it carries. */
    assert_int_equal(s.n, 3);
    assert_int_equal(s.ev[0].tokens, 4);
    assert_int_equal(s.ev[1].tokens, 4);
    assert_int_equal(s.ev[2].tokens, 2);
    assert_true(s.ev[0].t == 0.5);
    assert_near(s.ev[1].t, 0.54, 1e-12);
    assert_near(s.ev[2].t, 0.56, 1e-12);
    tb_stream_free(&s);

    sp.burst = 7, sp.tokens = 7000;
    gen(&sp, &s);
    assert_int_equal(s.n, 1000);
    for (size_t i = 1; i < s.n; i++)
        assert_near(s.ev[i].t - s.ev[i - 1].t, 0.07, 1e-11);
    tb_stream_free(&s);
}

static void mean_rate_and_cv(void **state)
{
    struct tb_synth_spec sp;
    struct tb_stream s;
    double sum = 0, sum2 = 0, mean, sd, rate;
    size_t n;
    (void)state;
    tb_synth_default(&sp);
    parse_ok("tps=80,jitter=0.3,tokens=200000,seed=7", &sp);
    gen(&sp, &s);
    n = s.n - 1;
    for (size_t i = 1; i < s.n; i++) {
        double g = s.ev[i].t - s.ev[i - 1].t;
        assert_true(g > 0);
        sum += g;
        sum2 += g * g;
    }
    mean = sum / (double)n;
    sd = sqrt(sum2 / (double)n - mean * mean);
    rate = (double)n / (s.ev[s.n - 1].t - s.ev[0].t);
    print_message("synth tps=80 jitter=0.3: rate %.3f tok/s, CV %.4f\n", rate, sd / mean);
    assert_near(rate, 80.0, 80.0 * 0.05);
    assert_near(sd / mean, 0.3, 0.3 * 0.05);
    tb_stream_free(&s);

    /* A heavy tail (CV 2) still averages to the rate over a long run. */
    parse_ok("tps=50,jitter=2,tokens=200000,seed=11", &sp);
    gen(&sp, &s);
    rate = (double)(s.n - 1) / (s.ev[s.n - 1].t - s.ev[0].t);
    print_message("synth tps=50 jitter=2: rate %.3f tok/s\n", rate);
    assert_near(rate, 50.0, 50.0 * 0.05);
    tb_stream_free(&s);
}

static void stall_always(void **state)
{
    struct tb_synth_spec sp;
    struct tb_stream s;
    (void)state;
    tb_synth_default(&sp);
    parse_ok("tps=100,jitter=0,tokens=1000,stall=1:0.5", &sp);
    gen(&sp, &s);
    assert_true(s.ev[0].t == sp.ttft); /* no stall before the first token */
    for (size_t i = 1; i < s.n; i++)
        assert_near(s.ev[i].t - s.ev[i - 1].t, 0.01 + 0.5, 1e-9);
    tb_stream_free(&s);
}

static void stall_sometimes(void **state)
{
    struct tb_synth_spec sp;
    struct tb_stream s;
    size_t stalls = 0;
    double frac;
    (void)state;
    tb_synth_default(&sp);
    parse_ok("tps=100,jitter=0,tokens=20001,stall=0.1:1,seed=5", &sp);
    gen(&sp, &s);
    for (size_t i = 1; i < s.n; i++) {
        double g = s.ev[i].t - s.ev[i - 1].t;
        if (g > 0.5) {
            stalls++;
            assert_near(g, 1.01, 1e-9);
        } else {
            assert_near(g, 0.01, 1e-9);
        }
    }
    frac = (double)stalls / 20000.0;
    print_message("synth stall=0.1:1: %.4f of gaps stalled\n", frac);
    assert_near(frac, 0.1, 0.01);
    tb_stream_free(&s);

    /* Probability 0 never stalls, whatever the seconds. */
    parse_ok("stall=0:100,tokens=5000", &sp);
    gen(&sp, &s);
    for (size_t i = 1; i < s.n; i++)
        assert_true(s.ev[i].t - s.ev[i - 1].t < 0.5);
    tb_stream_free(&s);
}

/* ---- presets ---------------------------------------------------------- */

static void presets_parse_and_generate(void **state)
{
    size_t n;
    const struct tb_preset *p = tb_preset_all(&n);
    (void)state;
    assert_true(n >= 15);
    for (size_t i = 0; i < n; i++) {
        struct tb_synth_spec sp;
        struct tb_stream s;
        assert_non_null(p[i].name);
        assert_non_null(p[i].spec);
        assert_non_null(p[i].about);
        assert_true(p[i].about[0] != '\0');
        tb_synth_default(&sp);
        parse_ok(p[i].spec, &sp);
        assert_ptr_equal(tb_preset_find(p[i].name), &p[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p[i].name, p[j].name) == 0)
                fail_msg("preset name '%s' appears twice", p[i].name);
        gen(&sp, &s);
        check_stream(&sp, &s);
        tb_stream_free(&s);
    }
}

static void preset_find_unknown(void **state)
{
    (void)state;
    assert_null(tb_preset_find("no-such-preset"));
    assert_null(tb_preset_find(""));
    assert_null(tb_preset_find("GC-8B"));
    assert_null(tb_preset_find("gc-8b "));
    assert_null(tb_preset_find("gc"));
}

/* tps of the named preset, parsed from its spec. */
static double preset_spec(const char *name, struct tb_synth_spec *sp)
{
    const struct tb_preset *p = tb_preset_find(name);
    if (p == NULL)
        fail_msg("no preset '%s'", name);
    tb_synth_default(sp);
    parse_ok(p->spec, sp);
    return sp->tps;
}

static void provider_figures(void **state)
{
    static const struct {
        const char *name;
        double tps;
    } table[] = {
        {"gc-8b", 210},   {"groq-8b", 175},     {"together-8b", 125}, {"gc-70b", 85},
        {"groq-70b", 62}, {"together-70b", 42}, {"voice-60", 60},     {"voice-80", 80},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        struct tb_synth_spec sp;
        char p95[64];
        double tps = preset_spec(table[i].name, &sp);
        if (tps != table[i].tps)
            fail_msg("preset %s: tps %g, want %g", table[i].name, tps, table[i].tps);
        /* The article's example length and voice TTFT target. */
        assert_int_equal(sp.tokens, 300);
        assert_true(sp.ttft == 0.15);
        assert_true(sp.jitter == 0.3);
        if (i >= 6)
            continue;
        /* The P95 variant is 50% lower. */
        snprintf(p95, sizeof(p95), "%s-p95", table[i].name);
        tps = preset_spec(p95, &sp);
        if (tps != table[i].tps / 2)
            fail_msg("preset %s: tps %g, want %g", p95, tps, table[i].tps / 2);
    }
}

int tb_test_synth(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(parse_each_key),
        cmocka_unit_test(parse_overrides_only_given_keys),
        cmocka_unit_test(parse_errors_name_the_key),
        cmocka_unit_test(parse_too_long),
        cmocka_unit_test(parse_long_values_not_cut),
        cmocka_unit_test(format_canonical),
        cmocka_unit_test(format_parse_round_trip),
        cmocka_unit_test(generate_invariants),
        cmocka_unit_test(generate_many_seeds),
        cmocka_unit_test(generate_looks_like_prose),
        cmocka_unit_test(generate_appends),
        cmocka_unit_test(generate_deterministic),
        cmocka_unit_test(generate_known_stream),
        cmocka_unit_test(no_jitter_gaps_exact),
        cmocka_unit_test(no_jitter_bursts),
        cmocka_unit_test(mean_rate_and_cv),
        cmocka_unit_test(stall_always),
        cmocka_unit_test(stall_sometimes),
        cmocka_unit_test(presets_parse_and_generate),
        cmocka_unit_test(preset_find_unknown),
        cmocka_unit_test(provider_figures),
    };
    return TB_RUN_GROUP("synth", tests);
}
