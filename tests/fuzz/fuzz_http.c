/*
 * fuzz_http.c - the mock server's HTTP request head scanner and parser
 * (src/serve/serve_http.h), fed in arbitrary splits.
 *
 * Input: 1 byte of settings (a seed for the split points), then the bytes
 * a client sends.  The scanner is run three ways: over the whole input at
 * once, growing it one byte at a time, and growing it in random steps, as
 * the server's reads do.  Properties: the three agree on the verdict and
 * on where the head ends; a head that ends parses either to offsets inside
 * the head (method and path printable, path starting with '/' and without
 * '?') or to a refusal with a status the server answers (400, 411, 505)
 * and a one-line message; parsing twice gives the same result; and the
 * response head formats within its cap.
 */
#include <string.h>

#include "../../src/serve/serve_http.h"
#include "fuzz.h"
#include "ttsbuf/error.h"

struct verdict {
    int rc;
    size_t scan;
};

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* mode 0: all at once; 1: a byte at a time; 2: random steps. */
static struct verdict scan(const char *s, size_t n, int mode, uint64_t seed)
{
    struct verdict v = {0, 0};
    size_t have = 0;
    seed |= 1;
    while (have < n) {
        size_t k = mode == 0 ? n - have : mode == 1 ? 1 : 1 + (size_t)(next(&seed) % 32);
        if (k > n - have)
            k = n - have;
        have += k;
        v.rc = tb_serve_http_scan(s, have, &v.scan);
        FUZZ_CHECK(v.scan <= have);
        if (v.rc != 0)
            break;
    }
    return v;
}

static void check_head(const char *s, const struct tb_serve_http_head *h)
{
    FUZZ_CHECK(h->method_len > 0 && h->method_off + h->method_len <= h->len);
    FUZZ_CHECK(h->path_len > 0 && h->path_off + h->path_len <= h->len);
    FUZZ_CHECK(s[h->path_off] == '/');
    FUZZ_CHECK(memchr(s + h->path_off, '?', h->path_len) == NULL);
    for (size_t i = 0; i < h->path_len; i++)
        FUZZ_CHECK((unsigned char)s[h->path_off + i] > 0x20 &&
                   (unsigned char)s[h->path_off + i] < 0x7F);
    if (h->method == TB_SERVE_HTTP_GET)
        FUZZ_CHECK(h->method_len == 3 && memcmp(s + h->method_off, "GET", 3) == 0);
    else if (h->method == TB_SERVE_HTTP_POST)
        FUZZ_CHECK(h->method_len == 4 && memcmp(s + h->method_off, "POST", 4) == 0);
    else
        FUZZ_CHECK(h->method == TB_SERVE_HTTP_OTHER);
}

static int same_head(const struct tb_serve_http_head *a, const struct tb_serve_http_head *b)
{
    return a->len == b->len && a->method == b->method && a->method_off == b->method_off &&
           a->method_len == b->method_len && a->path_off == b->path_off &&
           a->path_len == b->path_len && a->content_length == b->content_length &&
           a->expect_continue == b->expect_continue && a->status == b->status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct verdict whole, bytes, steps;
    struct tb_serve_http_head h, h2;
    char err[160], err2[160], resp[512];
    const char *s;
    size_t n;
    if (size < 1)
        return 0;
    s = (const char *)data + 1;
    n = size - 1;
    whole = scan(s, n, 0, data[0]);
    bytes = scan(s, n, 1, data[0]);
    steps = scan(s, n, 2, data[0]);
    FUZZ_CHECK(whole.rc == bytes.rc && whole.rc == steps.rc);
    FUZZ_CHECK(whole.rc < 0 || (whole.scan == bytes.scan && whole.scan == steps.scan));
    if (whole.rc != 1)
        return 0;
    FUZZ_CHECK(whole.scan >= 2 && s[whole.scan - 2] == '\r' && s[whole.scan - 1] == '\n');

    err[0] = err2[0] = '\0';
    int rc = tb_serve_http_parse(s, whole.scan, &h, err, sizeof(err));
    int rc2 = tb_serve_http_parse(s, whole.scan, &h2, err2, sizeof(err2));
    FUZZ_CHECK(rc == rc2 && same_head(&h, &h2) && strcmp(err, err2) == 0);
    FUZZ_CHECK(h.len == whole.scan);
    if (rc == 0) {
        check_head(s, &h);
        FUZZ_CHECK(h.expect_continue == 0 || h.expect_continue == 1);
    } else {
        FUZZ_CHECK(rc == TB_EFORMAT);
        FUZZ_CHECK(h.status == 400 || h.status == 411 || h.status == 505);
        fuzz_safe_line(err, sizeof(err));
        size_t k = tb_serve_http_resp(resp, sizeof(resp), h.status, "application/json",
                                      (long long)strlen(err), NULL);
        FUZZ_CHECK(k > 0 && k < sizeof(resp) && memcmp(resp, "HTTP/1.1 ", 9) == 0);
        FUZZ_CHECK(strcmp(tb_serve_http_reason(h.status), "Error") != 0);
    }
    return 0;
}
