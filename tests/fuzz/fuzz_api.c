/*
 * fuzz_api.c - the provider dialects' stream readers (api.h): chat,
 * completions, anthropic (SSE) and ollama (NDJSON), fed in arbitrary
 * splits.
 *
 * Input: 1 byte choosing the dialect, 2 bytes of split seed, then the
 * body.  Properties: fed whole and fed in random pieces, the reader hands
 * out the same deltas (content, reasoning, tool calls, usage, finish, end,
 * error) at the same offsets, with the same result and message; texts are
 * non-empty valid UTF-8; every string bound for a one-line message is
 * NUL-terminated, valid UTF-8 and free of control characters.
 */
#include <string.h>

#include "fuzz.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

static int on_delta(void *ud, const struct tb_api_delta *a, uint64_t offset)
{
    struct fuzz_log *l = ud;
    const struct tb_api_delta *d = a;
    fuzz_safe_line(d->error_message, sizeof(d->error_message));
    fuzz_safe_line(d->error_type, sizeof(d->error_type));
    fuzz_safe_line(d->error_code, sizeof(d->error_code));
    fuzz_safe_line(d->finish_reason, sizeof(d->finish_reason));
    fuzz_log_put(l, &offset, sizeof(offset));
    fuzz_log_put(l, &d->done, sizeof(d->done));
    fuzz_log_put(l, &d->error, sizeof(d->error));
    fuzz_log_put(l, &d->tool_calls, sizeof(d->tool_calls));
    fuzz_log_put(l, &d->usage_completion, sizeof(d->usage_completion));
    fuzz_log_put(l, d->finish_reason, strlen(d->finish_reason) + 1);
    fuzz_log_put(l, d->error_message, strlen(d->error_message) + 1);
    fuzz_log_put(l, &d->content_len, sizeof(d->content_len));
    if (d->content != NULL) {
        FUZZ_CHECK(d->content_len > 0);
        FUZZ_CHECK(tb_utf8_check(d->content, d->content_len) == d->content_len);
        fuzz_log_put(l, d->content, d->content_len);
    }
    fuzz_log_put(l, &d->reasoning_len, sizeof(d->reasoning_len));
    if (d->reasoning != NULL) {
        FUZZ_CHECK(d->reasoning_len > 0);
        FUZZ_CHECK(tb_utf8_check(d->reasoning, d->reasoning_len) == d->reasoning_len);
        fuzz_log_put(l, d->reasoning, d->reasoning_len);
    }
    return 0;
}

struct outcome {
    struct fuzz_log log;
    int rc;
    char err[256];
    size_t pending;
    uint64_t events;
};

static void run(enum tb_api api, const uint8_t *s, size_t n, uint64_t seed, int split,
                struct outcome *o)
{
    struct tb_api_parser *p;
    size_t i = 0;
    memset(o, 0, sizeof(*o));
    FUZZ_CHECK(tb_api_parser_create(api, &p) == 0);
    seed |= 1;
    while (i < n) {
        size_t k = n - i;
        if (split) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            k = 1 + (size_t)(seed % 48);
            if (k > n - i)
                k = n - i;
        }
        o->rc = tb_api_feed(p, (const char *)s + i, k, on_delta, &o->log, o->err, sizeof(o->err));
        if (o->rc != 0)
            break;
        i += k;
    }
    FUZZ_CHECK(o->rc == 0 || o->rc == TB_EFORMAT || o->rc == TB_ETOOBIG);
    if (o->rc != 0) {
        FUZZ_CHECK(o->err[0] != '\0');
        FUZZ_CHECK(strchr(o->err, '\n') == NULL);
    } else {
        o->pending = tb_api_pending(p);
        o->events = tb_api_events(p);
    }
    tb_api_parser_destroy(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct outcome whole, split;
    enum tb_api api;
    uint64_t seed;
    if (size < 3)
        return 0;
    api = (enum tb_api)(data[0] % 4);
    if (tb_api_info(api) == NULL)
        return 0;
    seed = (uint64_t)data[1] | (uint64_t)data[2] << 8;
    run(api, data + 3, size - 3, seed, 0, &whole);
    run(api, data + 3, size - 3, seed, 1, &split);
    FUZZ_CHECK(whole.rc == split.rc);
    FUZZ_CHECK(strcmp(whole.err, split.err) == 0);
    FUZZ_CHECK(whole.log.len == split.log.len);
    FUZZ_CHECK(whole.log.len == 0 || memcmp(whole.log.buf, split.log.buf, whole.log.len) == 0);
    FUZZ_CHECK(whole.pending == split.pending && whole.events == split.events);
    free(whole.log.buf);
    free(split.log.buf);
    return 0;
}
