/*
 * test_utf8.c - tb_utf8_check and tb_utf8_count.
 *
 * Every class of invalid input named by RFC 3629 (overlongs, surrogates,
 * code points above U+10FFFF, stray continuation bytes, truncated and
 * broken sequences) is checked at many offsets, so the error is also found
 * after the validator's 8-bytes-at-a-time ASCII fast path.  Inputs are
 * copied into heap buffers of exactly their length, so under
 * AddressSanitizer a read past the end fails the test.
 */
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/utf8.h"

/* tb_utf8_check over an exact-size heap copy of s[0..len). */
static size_t check(const char *s, size_t len)
{
    char *buf = malloc(len > 0 ? len : 1);
    size_t r;
    assert_non_null(buf);
    memcpy(buf, s, len);
    r = tb_utf8_check(buf, len);
    free(buf);
    return r;
}

/* Asserts that literal s (a string constant) is valid. */
#define assert_valid(s) assert_int_equal(check(s, sizeof(s) - 1), sizeof(s) - 1)

/* Asserts that literal s is invalid, first bad byte at offset off. */
#define assert_bad_at(s, off) assert_int_equal(check(s, sizeof(s) - 1), (off))

static void valid_ascii(void **state)
{
    (void)state;
    assert_int_equal(check("", 0), 0);
    assert_valid("a");
    assert_valid("Hello, world!\n\t\r");
    assert_valid("0123456789abcdefghijklmnopqrstuvwxyz"); /* several words */
    assert_valid("\x01\x7f");
    /* NUL is a valid code point; the length, not a terminator, bounds it. */
    assert_int_equal(check("a\0b", 3), 3);
}

static void valid_two_byte(void **state)
{
    (void)state;
    assert_valid("\xC2\x80"); /* U+0080, the smallest */
    assert_valid("\xC3\xA9"); /* U+00E9 e acute */
    assert_valid("\xDF\xBF"); /* U+07FF, the largest */
    assert_valid("caf\xC3\xA9 cr\xC3\xA8me");
}

static void valid_three_byte(void **state)
{
    (void)state;
    assert_valid("\xE0\xA0\x80"); /* U+0800, the smallest */
    assert_valid("\xE2\x82\xAC"); /* U+20AC euro sign */
    assert_valid("\xE2\x80\xA6"); /* U+2026 ellipsis */
    assert_valid("\xED\x9F\xBF"); /* U+D7FF, just below the surrogates */
    assert_valid("\xEE\x80\x80"); /* U+E000, just above them */
    assert_valid("\xEF\xBF\xBF"); /* U+FFFF */
}

static void valid_four_byte(void **state)
{
    (void)state;
    assert_valid("\xF0\x90\x80\x80"); /* U+10000, the smallest */
    assert_valid("\xF0\x9F\x98\x80"); /* U+1F600 grinning face */
    assert_valid("\xF3\xBF\xBF\xBF"); /* U+FFFFF */
    assert_valid("\xF4\x8F\xBF\xBF"); /* U+10FFFF, the largest */
}

/* Multi-byte sequences that straddle the fast path's 8-byte words. */
static void valid_across_word_boundaries(void **state)
{
    static const char *const seqs[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
    char buf[64];
    (void)state;
    for (size_t s = 0; s < 3; s++) {
        size_t sl = strlen(seqs[s]);
        for (size_t pre = 0; pre < 20; pre++) {
            memset(buf, 'a', pre);
            memcpy(buf + pre, seqs[s], sl);
            memset(buf + pre + sl, 'b', 17);
            assert_int_equal(check(buf, pre + sl + 17), pre + sl + 17);
        }
    }
}

static void invalid_overlong(void **state)
{
    (void)state;
    assert_bad_at("\xC0\x80", 0);         /* NUL in two bytes */
    assert_bad_at("\xC0\xAF", 0);         /* '/' in two bytes */
    assert_bad_at("\xC1\xBF", 0);         /* U+007F in two bytes */
    assert_bad_at("\xE0\x80\x80", 0);     /* NUL in three bytes */
    assert_bad_at("\xE0\x9F\xBF", 0);     /* U+07FF in three bytes */
    assert_bad_at("\xF0\x80\x80\x80", 0); /* NUL in four bytes */
    assert_bad_at("\xF0\x8F\xBF\xBF", 0); /* U+FFFF in four bytes */
}

static void invalid_surrogate(void **state)
{
    (void)state;
    assert_bad_at("\xED\xA0\x80", 0); /* U+D800 */
    assert_bad_at("\xED\xAD\xBF", 0); /* U+DB7F */
    assert_bad_at("\xED\xB0\x80", 0); /* U+DC00 */
    assert_bad_at("\xED\xBF\xBF", 0); /* U+DFFF */
    /* A CESU-8 pair is two surrogates, not one code point. */
    assert_bad_at("ok\xED\xA0\xBD\xED\xB8\x80", 2);
}

static void invalid_above_max(void **state)
{
    (void)state;
    assert_bad_at("\xF4\x90\x80\x80", 0); /* U+110000 */
    assert_bad_at("\xF4\xBF\xBF\xBF", 0);
    assert_bad_at("\xF5\x80\x80\x80", 0); /* lead bytes F5..FF never occur */
    assert_bad_at("\xF7\xBF\xBF\xBF", 0);
    assert_bad_at("\xF8\x88\x80\x80\x80", 0); /* old five-byte form */
    assert_bad_at("\xFC\x84\x80\x80\x80\x80", 0);
    assert_bad_at("\xFE", 0);
    assert_bad_at("\xFF", 0);
}

static void invalid_stray_continuation(void **state)
{
    (void)state;
    assert_bad_at("\x80", 0);
    assert_bad_at("\xBF", 0);
    assert_bad_at("ab\x80", 2);
    assert_bad_at("\xC3\xA9\xA9", 2); /* one continuation too many */
    assert_bad_at("\xE2\x82\xAC\x80 x", 3);
}

static void invalid_broken_sequence(void **state)
{
    (void)state;
    /* The lead byte is reported, not the byte that broke the sequence. */
    assert_bad_at("\xC3"
                  "a",
                  0);
    assert_bad_at("x\xE2"
                  "a\xAC",
                  1);
    assert_bad_at("x\xE2\x82"
                  "a",
                  1);
    assert_bad_at("xy\xF0\x9F\x98"
                  "a",
                  2);
    assert_bad_at("\xF0\x9F"
                  "a\x80",
                  0);
    assert_bad_at("\xC3\xC3\xA9", 0); /* a lead where a continuation belongs */
}

static void invalid_truncated_at_end(void **state)
{
    (void)state;
    assert_bad_at("\xC3", 0);
    assert_bad_at("abc\xC3", 3);
    assert_bad_at("abc\xE2", 3);
    assert_bad_at("abc\xE2\x82", 3);
    assert_bad_at("abc\xF0\x9F", 3);
    assert_bad_at("abc\xF0\x9F\x98", 3);
    /* A valid sequence cut by len (the bytes after it are not read). */
    assert_int_equal(check("\xE2\x82\xAC", 2), 0);
    assert_int_equal(check("0123456789\xF0\x9F\x98\x80", 13), 10);
}

/*
 * Each bad sequence at every offset 0..40, after ASCII (which the fast path
 * skips eight bytes at a time) or after a mix of multi-byte characters (so
 * the word reads are unaligned).  The offset returned is always the first
 * byte of the bad sequence.
 */
static void invalid_past_fast_path(void **state)
{
    static const struct {
        const char *s;
        size_t len;
    } bad[] = {
        {"\xC0\x80", 2},
        {"\xE0\x80\x80", 3},
        {"\xED\xA0\x80", 3},
        {"\xF4\x90\x80\x80", 4},
        {"\x80", 1},
        {"\xFF", 1},
        {"\xE2\x82", 2}, /* truncated: it ends the buffer */
        {"\xE2"
         "a",
         2},
    };
    char buf[128];
    (void)state;
    for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
        for (size_t off = 0; off <= 40; off++) {
            int truncated = b == 6;
            size_t n;
            /* Plain ASCII prefix. */
            memset(buf, 'x', off);
            memcpy(buf + off, bad[b].s, bad[b].len);
            n = off + bad[b].len;
            if (!truncated) {
                memset(buf + n, 'y', 9);
                n += 9;
            }
            if (check(buf, n) != off)
                fail_msg("bad case %zu after %zu ASCII bytes: got %zu", b, off, check(buf, n));
            /* A prefix of the same length made of "\xC3\xA9" pairs and one
             * ASCII byte when off is odd. */
            for (size_t i = 0; i + 1 < off; i += 2)
                memcpy(buf + i, "\xC3\xA9", 2);
            if (off % 2 == 1)
                buf[off - 1] = 'z';
            if (check(buf, n) != off)
                fail_msg("bad case %zu after %zu mixed bytes: got %zu", b, off, check(buf, n));
        }
    }
}

static void count_code_points(void **state)
{
    (void)state;
    assert_int_equal(tb_utf8_count("", 0), 0);
    assert_int_equal(tb_utf8_count("hello", 5), 5);
    assert_int_equal(tb_utf8_count("h\xC3\xA9llo", 6), 5);
    assert_int_equal(tb_utf8_count("\xE2\x82\xAC", 3), 1);
    assert_int_equal(tb_utf8_count("\xF0\x9F\x98\x80", 4), 1);
    assert_int_equal(tb_utf8_count("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z", 11), 5);
    /* Counts only the bytes given. */
    assert_int_equal(tb_utf8_count("abcdef", 3), 3);
    assert_int_equal(tb_utf8_count("a\0b", 3), 3);
}

int tb_test_utf8(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_ascii),
        cmocka_unit_test(valid_two_byte),
        cmocka_unit_test(valid_three_byte),
        cmocka_unit_test(valid_four_byte),
        cmocka_unit_test(valid_across_word_boundaries),
        cmocka_unit_test(invalid_overlong),
        cmocka_unit_test(invalid_surrogate),
        cmocka_unit_test(invalid_above_max),
        cmocka_unit_test(invalid_stray_continuation),
        cmocka_unit_test(invalid_broken_sequence),
        cmocka_unit_test(invalid_truncated_at_end),
        cmocka_unit_test(invalid_past_fast_path),
        cmocka_unit_test(count_code_points),
    };
    return TB_RUN_GROUP("utf8", tests);
}
