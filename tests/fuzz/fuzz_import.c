/*
 * fuzz_import.c - the benchmark-file importers (import.h): vllm, sglang,
 * genai-perf, aiperf-raw, aiperf, and auto (the format told from the content).
 *
 * Input: 1 byte choosing the format (auto among them), then the file.  Properties: the
 * importer returns 0 or one of its documented errors with a one-line
 * message naming the file; every request it hands out (on success, and
 * those read before an error) has a NUL-terminated name and error text
 * and a stream with the stream's invariants: times in 0..TB_TIME_MAX, never
 * decreasing, texts non-empty valid UTF-8, tokens within the cap.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "ttsbuf/error.h"
#include "ttsbuf/import.h"
#include "ttsbuf/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_import im;
    enum tb_import_format f;
    char err[512];
    int rc;
    if (size < 1)
        return 0;
    f = (enum tb_import_format)(data[0] % TB_IMPORT__COUNT);
    tb_import_init(&im);
    err[0] = '\0';
    rc = tb_import_mem(f, (const char *)data + 1, size - 1, "f", &im, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == TB_EFORMAT || rc == TB_ETOOBIG || rc == TB_EEMPTY);
    if (rc != 0) {
        FUZZ_CHECK(strncmp(err, "f", 1) == 0);
        FUZZ_CHECK(strchr(err, '\n') == NULL);
    } else {
        FUZZ_CHECK(im.n > 0);
        FUZZ_CHECK(im.format < TB_IMPORT_AUTO); /* auto names what it read */
    }
    for (size_t r = 0; r < im.n; r++) {
        const struct tb_import_request *q = &im.req[r];
        const struct tb_stream *s = &q->stream;
        FUZZ_CHECK(strnlen(q->name, sizeof(q->name)) < sizeof(q->name));
        FUZZ_CHECK(strnlen(q->error, sizeof(q->error)) < sizeof(q->error));
        for (size_t i = 0; i < s->n; i++) {
            const struct tb_event *e = &s->ev[i];
            FUZZ_CHECK(e->t >= 0 && e->t <= TB_TIME_MAX);
            FUZZ_CHECK(i == 0 || e->t >= s->ev[i - 1].t);
            FUZZ_CHECK(e->len > 0 && e->tokens >= 1 && e->tokens <= TB_EVENT_TOKENS_MAX);
            FUZZ_CHECK(tb_utf8_check(tb_stream_text(s, i), e->len) == e->len);
        }
    }
    tb_import_free(&im);
    return 0;
}
