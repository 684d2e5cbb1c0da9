/*
 * test_secrets.c - the secrets of a run and the scrubber (secrets.h),
 * and what http.h takes for secrets from a request (tb_http_secrets,
 * tb_http_redact's userinfo).  That every output of every command holds
 * none of them is the fault matrix's job (test_fault.c, "secrets:").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/secrets_oracle.h"
#include "tcp_peer.h"
#include "tests.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/http.h"
#include "ttsbuf/secrets.h"
#include "ttsbuf/utf8.h"

#define KEY "sk-SECRET-abcdef123456"

static struct tb_secrets *set_of(const char *const *v, size_t n)
{
    struct tb_secrets *s;
    assert_int_equal(tb_secrets_create(&s), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tb_secrets_add(s, v[i], strlen(v[i])), 0);
    return s;
}

/* in, scrubbed with s, is want. */
static void scrubs(const struct tb_secrets *s, const char *in, const char *want)
{
    char buf[512];
    size_t n;
    snprintf(buf, sizeof(buf), "%s", in);
    n = tb_secrets_scrub(s, buf);
    if (strcmp(buf, want) != 0 || n != strlen(buf))
        fail_msg("scrub '%s': got '%s' (length %zu), want '%s'", in, buf, n, want);
}

static void whole_and_in_part(void **state)
{
    const char *const keys[] = {KEY};
    struct tb_secrets *s = set_of(keys, 1);
    (void)state;
    assert_int_equal(tb_secrets_count(s), 1);
    scrubs(s, "Incorrect API key provided: Bearer " KEY ".",
           "Incorrect API key provided: Bearer ***.");
    scrubs(s, KEY KEY, "***");
    scrubs(s, "key sk-SECRET-abcd... is wrong", "key ***... is wrong"); /* the first 14 */
    scrubs(s, "...ef123456", "...***");                                 /* the last 8 */
    scrubs(s, "x=CRET-abcd!", "x=***!");                                /* 9 inside */
    /* 7 characters are too few to tell from ordinary text. */
    scrubs(s, "sk-SECR, then ef12345", "sk-SECR, then ef12345");
    scrubs(s, "no secret here", "no secret here");
    scrubs(s, "", "");
    tb_secrets_destroy(s);
}

static void cut_or_escaped(void **state)
{
    const char *const keys[] = {KEY};
    struct tb_secrets *s = set_of(keys, 1);
    (void)state;
    /* Cut by whitespace into pieces of under 8: one echo, one mask. */
    scrubs(s, "[sk-SECR\nET-abcd ef123456]", "[***]");
    scrubs(s, "[sk-SECR \t ET]", "[***]");
    /* Two echoes apart stay apart. */
    scrubs(s, "A sk-SECRET B ef123456 C", "A *** B *** C");
    /* Escapes read as what they stand for, decoded or not. */
    scrubs(s, "\"sk\\u002dSECRET\\u002dabcdef123456\"", "\"***\"");
    scrubs(s, "sk-SECR\\nET-", "***");
    scrubs(s, "sk-SECR\\r\\n\\tET-", "***");
    scrubs(s, "%73k-SECRE", "***");
    scrubs(s, "&#115;k-SECRE and &#x73;k-SECRE", "*** and ***");
    scrubs(s, "\\x73k-SECRE", "***");
    scrubs(s, "sk%2DSECRE", "***");
    /* An escape that stands for no character of it breaks it. */
    scrubs(s, "sk-SECR\\u0041ET-abc", "sk-SECR\\u0041ET-abc");
    tb_secrets_destroy(s);
}

/* A key quoted back base64-encoded (an "Authorization: Basic" header, a
 * key the server encoded), in either alphabet, padded or not, at any
 * alignment: masked but for the one or two characters at its ends that
 * mix in a neighbour's bits; other base64 is left alone. */
static void base64_echoes(void **state)
{
    const char *const keys[] = {KEY, "tok_~~~?>>>?~~~0123"};
    struct tb_secrets *s = set_of(keys, 2);
    char buf[64];
    (void)state;
    scrubs(s, "c2stU0VDUkVULWFiY2RlZjEyMzQ1Ng==", "***g==");
    scrubs(s, "Authorization: Basic dXNlcjpzay1TRUNSRVQtYWJjZGVmMTIzNDU2",
           "Authorization: Basic dXNlcjp***");
    scrubs(s, "key c2stU0VDUkVULW...", "key ***..."); /* its first 14 */
    scrubs(s, "aWQ9dG9rX35+fj8+Pj4/fn5+MDEyMw==", "aWQ9***w==");
    scrubs(s, "aWQ9dG9rX35-fj8-Pj4_fn5-MDEyMw", "aWQ9***w");
    scrubs(s, "\"rX35+fj8+Pj4\\/fn\"", "\"***\""); /* cut, its '/' escaped as JSON may */
    scrubs(s, "SGVsbG8gd29ybGQ=", "SGVsbG8gd29ybGQ=");
    /* The equal-length mode: letters and digits masked, where they were. */
    snprintf(buf, sizeof(buf), "c2stU0VDUkVULWFiY2RlZjEyMzQ1Ng==");
    assert_int_equal(tb_secrets_mask(s, buf, strlen(buf)), 29);
    assert_string_equal(buf, "*****************************g==");
    tb_secrets_destroy(s);
}

static void short_secrets_and_others(void **state)
{
    const char *const keys[] = {"Zq", "k7Q", "abc+def/ghi", "  "};
    struct tb_secrets *s = set_of(keys, 4);
    (void)state;
    assert_int_equal(tb_secrets_count(s), 3); /* blank: nothing to mask */
    scrubs(s, "provided: Zq.", "provided: **.");
    scrubs(s, "provided: k7Q.", "provided: ***.");
    scrubs(s, "aZqb", "a**b"); /* whole, even inside a word */
    scrubs(s, "Z", "Z");
    /* A key with URL characters, echoed percent-encoded or with \/. */
    scrubs(s, "key=abc%2Bdef%2Fghi&x", "key=***&x");
    scrubs(s, "abc+def\\/ghi", "***");
    tb_secrets_destroy(s);
}

static void utf8_and_no_set(void **state)
{
    const char *const keys[] = {"\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-secret"};
    struct tb_secrets *s = set_of(keys, 1), *empty;
    char buf[64] = "left " KEY;
    (void)state;
    scrubs(s, "\xc3\xa9 \xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-secret \xe2\x82\xac",
           "\xc3\xa9 *** \xe2\x82\xac");
    /* Its tail (8 characters past the Cyrillic) is still an echo. */
    scrubs(s, "x\xd1\x8e\xd1\x87-secret", "x***");
    tb_secrets_destroy(s);
    assert_int_equal(tb_secrets_scrub(NULL, buf), strlen(buf));
    assert_string_equal(buf, "left " KEY);
    assert_int_equal(tb_secrets_create(&empty), 0);
    assert_int_equal(tb_secrets_count(empty), 0);
    scrubs(empty, buf, "left " KEY);
    tb_secrets_destroy(empty);
    tb_secrets_destroy(NULL);
}

/* Feeds text[0..n) to a masker in three pieces, cut at i and j (i <= j),
 * the buffer holding only what came so far; returns it (malloc'd). */
static char *mask_in_pieces(const struct tb_secrets *s, const char *text, size_t n, size_t i,
                            size_t j)
{
    struct tb_secrets_masker *m;
    char *buf = malloc(n + 1);
    const size_t cut[3] = {i, j, n};
    size_t had = 0;
    assert_non_null(buf);
    memset(buf, 0xFF, n + 1); /* what has not come: a read of it shows */
    assert_int_equal(tb_secrets_masker_create(&m), 0);
    tb_secrets_masker_reset(m, 0);
    for (size_t k = 0; k < 3; k++) {
        memcpy(buf + had, text + had, cut[k] - had);
        had = cut[k];
        tb_secrets_masker_feed(m, s, buf, had, k == 2);
    }
    buf[n] = '\0';
    tb_secrets_masker_destroy(m);
    return buf;
}

/* in, masked at equal length with s, is want: at once, and fed in three
 * pieces cut anywhere. */
static void masks(const struct tb_secrets *s, const char *in, const char *want)
{
    char buf[512];
    size_t n = strlen(in), changed, diff = 0;
    assert_true(n < sizeof(buf) && strlen(want) == n);
    snprintf(buf, sizeof(buf), "%s", in);
    changed = tb_secrets_mask(s, buf, n);
    for (size_t i = 0; i < n; i++)
        diff += buf[i] != in[i];
    if (strcmp(buf, want) != 0 || changed != diff)
        fail_msg("mask '%s': got '%s' (%zu bytes changed, %zu said), want '%s'", in, buf, diff,
                 changed, want);
    assert_int_equal(tb_utf8_count(buf, n), tb_utf8_count(in, n));
    for (size_t i = 0; i <= n; i++)
        for (size_t j = i; j <= n; j++) {
            char *got = mask_in_pieces(s, in, n, i, j);
            if (strcmp(got, want) != 0)
                fail_msg("mask '%s' cut at %zu and %zu: got '%s', want '%s'", in, i, j, got, want);
            free(got);
        }
}

/* The equal-length mode: the same echoes, every letter and digit a '*',
 * punctuation and whitespace where they were. */
static void equal_length(void **state)
{
    const char *const keys[] = {KEY};
    const char *const others[] = {"Zq", "a+b", "-_-_-_-_-_",
                                  "\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-secret"};
    struct tb_secrets *s = set_of(keys, 1), *o = set_of(others, 4);
    char none[] = "left " KEY;
    (void)state;
    masks(s, "Your key is " KEY ".", "Your key is **-******-************.");
    masks(s, "key sk-SECRET-abcd... is wrong", "key **-******-****... is wrong");
    masks(s, "...ef123456", "...********");
    masks(s, "x=CRET-abcd!", "x=****-****!");
    masks(s, "sk-SECR, then ef12345", "sk-SECR, then ef12345");
    masks(s, "no secret here", "no secret here");
    masks(s, "", "");
    /* Cut by whitespace: the whitespace stays. */
    masks(s, "[sk-SECR\nET-abcd ef123456]", "[**-****\n**-**** ********]");
    masks(s, "A sk-SECRET B ef123456 C", "A **-****** B ******** C");
    /* Escapes: of a letter, every byte masked; of punctuation, kept. */
    masks(s, "\"sk\\u002dSECRET\\u002dabcdef\"", "\"**\\u002d******\\u002d******\"");
    masks(s, "%73k-SECRE and &#115;k-SECRE", "****-***** and *******-*****");
    masks(s, "sk-SECR\\nET-", "**-****\\n**-");
    masks(s, "sk-SECR\\u0041ET-abc", "sk-SECR\\u0041ET-abc");
    /* Short secrets whole; an echo of punctuation alone all masked;
     * UTF-8 as characters of as many bytes. */
    masks(o, "provided: Zq.", "provided: **.");
    masks(o, "x a+b.", "x *+*.");
    masks(o, "a-_-_-_-_b -_-", "a********b -_-");
    masks(o, "\xc3\xa9 \xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-secret \xe2\x82\xac",
          "\xc3\xa9 \xc3\x97\xc3\x97\xc3\x97\xc3\x97-****** \xe2\x82\xac");
    /* No set, an empty one: nothing. */
    assert_int_equal(tb_secrets_mask(NULL, none, strlen(none)), 0);
    tb_secrets_destroy(o);
    o = set_of(NULL, 0);
    assert_int_equal(tb_secrets_mask(o, none, strlen(none)), 0);
    assert_string_equal(none, "left " KEY);
    tb_secrets_destroy(o);
    tb_secrets_destroy(s);
}

/* Every secret a request holds, whichever way it goes. */
static void from_a_request(void **state)
{
    const char *const hdrs[] = {"x-api-key: hdr-key-0123456",
                                "Authorization: Bearer auth-key-98765",
                                "X-Goog-Api-Key:goog-key-5555", "Accept-Language: en-GB-oxendict"};
    struct tb_http_req q;
    struct tb_secrets *s;
    (void)state;
    tb_http_req_init(&q);
    q.url = "https://user:pass-word-42@h.example/v1/chat?alt=sse&key=url-key-31337&token=tk-99#f";
    q.bearer = KEY;
    q.headers = hdrs;
    q.nheaders = 4;
    assert_int_equal(tb_secrets_create(&s), 0);
    assert_int_equal(tb_http_secrets(&q, s), 0);
    assert_int_equal(tb_secrets_count(s), 7);
    scrubs(s,
           "sk-SECRET-abcdef123456 hdr-key-0123456 auth-key-98765 goog-key-5555 url-key-31337 "
           "tk-99 pass-word-42 Bearer en-GB-oxendict sse",
           "*** *** *** *** *** *** *** Bearer en-GB-oxendict sse");
    tb_secrets_destroy(s);
    /* A request without any: an empty set. */
    tb_http_req_init(&q);
    q.url = "http://127.0.0.1:8788/v1/chat/completions";
    assert_int_equal(tb_secrets_create(&s), 0);
    assert_int_equal(tb_http_secrets(&q, s), 0);
    assert_int_equal(tb_secrets_count(s), 0);
    tb_secrets_destroy(s);
}

static void redact(const char *in, const char *want)
{
    char out[256];
    tb_http_redact(in, strlen(in), out, sizeof(out));
    if (strcmp(out, want) != 0)
        fail_msg("redact '%s': got '%s', want '%s'", in, out, want);
}

static void redacts_userinfo(void **state)
{
    (void)state;
    redact("https://user:pass@h.example/v1", "https://user:***@h.example/v1");
    redact("* redirect to http://a:b@c:8/x?key=k", "* redirect to http://a:***@c:8/x?key=***");
    redact("https://user@h.example/v1", "https://user@h.example/v1");
    redact("https://h.example/v1?x=a:b@c", "https://h.example/v1?x=a:b@c");
}

/* A 401 whose headers quote the key back. */
static void s_echo_header(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    peer_send_str(fd, "HTTP/1.1 401 Unauthorized\r\nX-Echo-Key: " KEY "\r\n"
                      "Set-Cookie: s=sk-SECRET-abcd; Path=/\r\nContent-Length: 0\r\n"
                      "Connection: close\r\n\r\n");
}

struct lines {
    char text[8192];
    size_t n;
};

static void keep_line(void *ud, const char *line)
{
    struct lines *l = ud;
    l->n += (size_t)snprintf(l->text + l->n, sizeof(l->text) - l->n, "%s\n", line);
    if (l->n >= sizeof(l->text))
        l->n = sizeof(l->text) - 1;
}

/* A transfer with a log and no set of its own masks its verbose lines
 * with the request's secrets (http.h: secrets NULL). */
static void verbose_lines_without_a_set(void **state)
{
    struct peer pe;
    struct tb_http_req q;
    struct tb_http_resp r;
    struct tb_clock clk;
    struct lines l = {"", 0};
    char url[96];
    (void)state;
    peer_start(&pe, "127.0.0.1", s_echo_header);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", pe.port);
    tb_http_req_init(&q);
    q.url = url;
    q.bearer = KEY;
    q.body = "{}";
    q.log = keep_line;
    q.log_ud = &l;
    tb_clock_monotonic_init(&clk);
    assert_int_equal(tb_http_stream(&q, &clk, NULL, NULL, &r), 0);
    peer_stop(&pe);
    assert_int_equal(r.status, 401);
    tb_http_resp_free(&r);
    if (strstr(l.text, "< X-Echo-Key: ***") == NULL || strstr(l.text, "s=***;") == NULL ||
        strstr(l.text, "Bearer ***") == NULL || strstr(l.text, "SECRET") != NULL)
        fail_msg("verbose lines:\n%s", l.text);
}

/* A usage error that names the endpoint names it with its keys masked. */
static void usage_errors_mask_url_keys(void **state)
{
    static const char *const cmds[] = {
        "run --base-url 'http://127.0.0.1:9/v1?key=url-key-31337'",
        "bench -c 1 --base-url 'http://user:pass-word-42@127.0.0.1:9/v1?token=url-key-31337'",
    };
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct tb_test_out o = tb_test_run(cmds[i]);
        if (o.code != 2 || strstr(o.se, "--model is required for http://") == NULL ||
            strstr(o.se, "=***") == NULL || strstr(o.se, "url-key") != NULL ||
            strstr(o.se, "pass-word") != NULL)
            fail_msg("%s: exit %d, stderr '%s'", cmds[i], o.code, o.se);
        tb_test_out_free(&o);
    }
}

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A random text made of what an echo is made of: pieces of the secrets,
 * whitespace (raw and escaped), escaped characters of them, other ASCII
 * and non-ASCII characters. */
static void random_text(uint64_t *rng, const char *const *keys, size_t nkeys, char *out, size_t cap)
{
    size_t k = 0;
    size_t parts = 1 + next(rng) % 8;
    for (size_t p = 0; p < parts && k + 40 < cap; p++) {
        const char *key = keys[next(rng) % nkeys];
        size_t kl = strlen(key), from = next(rng) % kl, len = 1 + next(rng) % (kl - from);
        switch (next(rng) % 6) {
        case 0:
        case 1:
            len = len > 30 ? 30 : len;
            memcpy(out + k, key + from, len);
            k += len;
            break;
        case 2: {
            static const char *const noise[] = {" ", "\n", "\\n", "\t", "\\u0020", "%20"};
            const char *w = noise[next(rng) % 6];
            memcpy(out + k, w, strlen(w));
            k += strlen(w);
            break;
        }
        case 3:
            k += (size_t)snprintf(out + k, cap - k,
                                  next(rng) % 2   ? "\\u%04x"
                                  : next(rng) % 2 ? "%%%02X"
                                                  : "&#%d;",
                                  (unsigned char)key[from]);
            break;
        case 4: out[k++] = (char)('a' + next(rng) % 26); break;
        default:
            memcpy(out + k, "\xc3\xa9", 2);
            k += 2;
            break;
        }
    }
    out[k] = '\0';
}

/* Whether masked (of orig, n bytes) keeps what the equal-length mode
 * keeps: every whitespace and control byte, and valid UTF-8 valid with
 * as many code points. */
static int keeps_shape(const char *orig, const char *masked, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)orig[i] <= ' ' || orig[i] == 0x7F) && masked[i] != orig[i])
            return 0;
    return tb_utf8_check(orig, n) != n ||
           (tb_utf8_check(masked, n) == n && tb_utf8_count(masked, n) == tb_utf8_count(orig, n));
}

/* Against the brute-force oracle: what is left holds no echo, a text
 * without one is left alone, nothing grows. */
static void property_against_oracle(void **state)
{
    const char *const keys[] = {KEY, "k7Q", "tok_0123456789"};
    struct tb_secrets *s = set_of(keys, 3);
    struct so_text sec[3 * 7];
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    size_t masked = 0, clean = 0, nf = 0;
    (void)state;
    for (size_t k = 0; k < 3; k++)
        nf += so_secret_forms(keys[k], strlen(keys[k]), sec + nf);
    for (int it = 0; it < 20000; it++) {
        char text[400], orig[400];
        struct so_text before, after;
        size_t n;
        random_text(&rng, keys, 3, text, sizeof(text));
        memcpy(orig, text, sizeof(text));
        n = tb_secrets_scrub(s, text);
        assert_true(n == strlen(text) && n <= strlen(orig));
        assert_int_equal(tb_utf8_check(text, n), n);
        after = so_read(text, n);
        before = so_read(orig, strlen(orig));
        if (so_has_echo(&after, sec, nf))
            fail_msg("'%s' scrubbed is '%s': an echo is left", orig, text);
        if (!so_has_echo(&before, sec, nf)) {
            if (strcmp(text, orig) != 0)
                fail_msg("'%s' holds no echo, but was scrubbed to '%s'", orig, text);
            clean++;
        } else {
            masked++;
        }
        so_free(&after);
        /* The equal-length mode: the same, at equal length, and the same
         * fed in pieces. */
        {
            size_t len = strlen(orig), i = next(&rng) % (len + 1),
                   j = i + next(&rng) % (len - i + 1);
            char *pieces = mask_in_pieces(s, orig, len, i, j);
            memcpy(text, orig, sizeof(text));
            tb_secrets_mask(s, text, len);
            if (strlen(text) != len || !keeps_shape(orig, text, len))
                fail_msg("'%s' masked is '%s': not the same shape", orig, text);
            if (strcmp(pieces, text) != 0)
                fail_msg("'%s' masked is '%s', but '%s' in pieces cut at %zu and %zu", orig, text,
                         pieces, i, j);
            after = so_read(text, len);
            if (so_has_echo(&after, sec, nf))
                fail_msg("'%s' masked is '%s': an echo is left", orig, text);
            if (!so_has_echo(&before, sec, nf) && strcmp(text, orig) != 0)
                fail_msg("'%s' holds no echo, but was masked to '%s'", orig, text);
            so_free(&after);
            free(pieces);
        }
        so_free(&before);
    }
    assert_true(masked > 1000 && clean > 1000); /* both sides were tried */
    for (size_t k = 0; k < nf; k++)
        so_free(&sec[k]);
    tb_secrets_destroy(s);
}

int tb_test_secrets(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_and_in_part),
        cmocka_unit_test(cut_or_escaped),
        cmocka_unit_test(base64_echoes),
        cmocka_unit_test(short_secrets_and_others),
        cmocka_unit_test(utf8_and_no_set),
        cmocka_unit_test(equal_length),
        cmocka_unit_test(from_a_request),
        cmocka_unit_test(redacts_userinfo),
        cmocka_unit_test(usage_errors_mask_url_keys),
        cmocka_unit_test(verbose_lines_without_a_set),
        cmocka_unit_test(property_against_oracle),
    };
    return TB_RUN_GROUP("secrets", tests);
}
