/*
 * fuzz_trace.c - the trace loader (trace.h).
 *
 * Properties: the loader returns 0 or one of its documented errors, with a
 * "NAME:LINE: reason" message on one line; a loaded stream obeys the
 * stream's invariants (times finite, >= 0 and never decreasing, texts
 * non-empty valid UTF-8, tokens within the cap); and it round-trips: what
 * tb_trace_write prints loads back to the same stream, bit for bit, and
 * writing that again gives the same bytes (the "tts" lines included).
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "ttsbuf/error.h"
#include "ttsbuf/trace.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/utf8.h"

static void same(const struct tb_stream *a, const struct tb_stream *b)
{
    FUZZ_CHECK(a->n == b->n);
    FUZZ_CHECK(a->usage_tokens == b->usage_tokens);
    FUZZ_CHECK(strcmp(a->model, b->model) == 0);
    FUZZ_CHECK(strcmp(a->base_url, b->base_url) == 0);
    FUZZ_CHECK((a->tts == NULL) == (b->tts == NULL));
    if (a->tts != NULL) {
        FUZZ_CHECK(a->tts->n == b->tts->n && a->tts->n <= a->n);
        for (size_t i = 0; i < a->tts->n; i++) {
            const struct tb_tts_chunk *x = &a->tts->c[i], *y = &b->tts->c[i];
            FUZZ_CHECK(x->chunk == i + 1 && y->chunk == i + 1);
            FUZZ_CHECK(x->len == y->len && x->bytes == y->bytes && x->narr == y->narr);
            FUZZ_CHECK(x->duration == y->duration && x->fail == y->fail);
            FUZZ_CHECK(x->bytes % 2 == 0 && x->rate >= 8000 && x->rate <= 48000);
            FUZZ_CHECK(x->narr == 0 || x->arr[x->narr - 1].bytes == x->bytes);
        }
    }
    for (size_t i = 0; i < a->n; i++) {
        /* Bit for bit: equal, and the same sign (a "-0" reads back -0). */
        FUZZ_CHECK(a->ev[i].t == b->ev[i].t && signbit(a->ev[i].t) == signbit(b->ev[i].t));
        FUZZ_CHECK(a->ev[i].len == b->ev[i].len);
        FUZZ_CHECK(a->ev[i].tokens == b->ev[i].tokens);
        FUZZ_CHECK(a->ev[i].kind == b->ev[i].kind);
        FUZZ_CHECK(memcmp(tb_stream_text(a, i), tb_stream_text(b, i), a->ev[i].len) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_stream s, back;
    char err[256];
    int rc;
    tb_stream_init(&s);
    err[0] = '\0';
    rc = tb_trace_load_mem((const char *)data, size, "f", &s, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == TB_EFORMAT || rc == TB_ETOOBIG || rc == TB_EEMPTY);
    if (rc != 0) {
        FUZZ_CHECK(strncmp(err, "f:", 2) == 0);
        FUZZ_CHECK(strchr(err, '\n') == NULL);
        tb_stream_free(&s);
        return 0;
    }
    for (size_t i = 0; i < s.n; i++) {
        const struct tb_event *e = &s.ev[i];
        FUZZ_CHECK(isfinite(e->t) && e->t >= 0);
        FUZZ_CHECK(i == 0 || e->t >= s.ev[i - 1].t);
        FUZZ_CHECK(e->len > 0 && e->tokens >= 1 && e->tokens <= TB_EVENT_TOKENS_MAX);
        FUZZ_CHECK(e->kind == TB_KIND_CONTENT || e->kind == TB_KIND_REASONING);
        FUZZ_CHECK(tb_utf8_check(tb_stream_text(&s, i), e->len) == e->len);
    }
    {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        FUZZ_CHECK(f != NULL);
        FUZZ_CHECK(tb_trace_write(f, &s) == 0);
        FUZZ_CHECK(fclose(f) == 0);
        tb_stream_init(&back);
        rc = tb_trace_load_mem(buf, len, "back", &back, err, sizeof(err));
        if (rc != 0)
            fprintf(stderr, "reload: %s\n", err);
        FUZZ_CHECK(rc == 0);
        same(&s, &back);
        {
            char *buf2 = NULL;
            size_t len2 = 0;
            FILE *f2 = open_memstream(&buf2, &len2);
            FUZZ_CHECK(f2 != NULL);
            FUZZ_CHECK(tb_trace_write(f2, &back) == 0);
            FUZZ_CHECK(fclose(f2) == 0);
            FUZZ_CHECK(len2 == len && memcmp(buf, buf2, len) == 0);
            free(buf2);
        }
        tb_stream_free(&back);
        free(buf);
    }
    tb_stream_free(&s);
    return 0;
}
