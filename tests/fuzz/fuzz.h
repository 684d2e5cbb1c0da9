/*
 * fuzz.h - what every libFuzzer target in tests/fuzz/ shares.
 *
 * A target is tests/fuzz/fuzz_<name>.c defining LLVMFuzzerTestOneInput;
 * its seed corpus is tests/fuzz/corpus/<name>/ (crashers found so far
 * live there too, named crash-*, so every replay re-checks them).  `make
 * fuzz` builds each with clang -fsanitize=fuzzer,address,undefined;
 * `make test` builds each again with the ordinary compiler and
 * tests/fuzz/replay.c as main, and replays its corpus (test group "fuzz").
 *
 * Targets check properties, not just "no crash": FUZZ_CHECK aborts (a
 * finding for libFuzzer, a failure for the replay) with the condition.
 */
#ifndef TTSBUF_FUZZ_H
#define TTSBUF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A growing byte log: what a parser handed out, to compare two runs. */
struct fuzz_log {
    char *buf;
    size_t len, cap;
};

static inline void fuzz_log_put(struct fuzz_log *l, const void *p, size_t n)
{
    if (l->len + n > l->cap) {
        size_t cap = (l->len + n) * 2;
        char *nb = realloc(l->buf, cap);
        FUZZ_CHECK(nb != NULL);
        l->buf = nb;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, p, n);
    l->len += n;
}

/* A string bound for a one-line message: NUL-terminated within cap, valid
 * UTF-8, no control character (C0, DEL, C1). */
static inline void fuzz_safe_line(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    FUZZ_CHECK(n < cap);
    FUZZ_CHECK(tb_utf8_check(s, n) == n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        FUZZ_CHECK(c >= 0x20 && c != 0x7F);
        FUZZ_CHECK(!(c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] < 0xA0));
    }
}

#endif
