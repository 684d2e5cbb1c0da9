/*
 * fuzz_oai.c - the OpenAI pair's event JSON (a chat parser of the dialect
 * table, api.h) and the error-body reader.
 *
 * The input is one event's data (tb_api_parse_event) and also an error
 * response body (tb_reader_error_text).  Properties: a parse returns 0 or
 * TB_EFORMAT with a message; texts handed out are non-empty valid UTF-8
 * inside the parser's own buffer; every string that ends up in a one-line
 * message (error message, type, code, finish_reason, the error text) is
 * NUL-terminated within its array and is valid UTF-8 with no control character (C0, DEL, C1), so a
 * hostile server cannot break the one-line error rule or inject terminal
 * escapes.  A second parse with the same parser, reset for a new stream
 * (a surrogate half may wait for the next event), gives the same result.
 */
#include <string.h>

#include "fuzz.h"
#include "ttsbuf/api.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

static void check_delta(const struct tb_api_delta *d)
{
    fuzz_safe_line(d->error_message, sizeof(d->error_message));
    fuzz_safe_line(d->error_type, sizeof(d->error_type));
    fuzz_safe_line(d->error_code, sizeof(d->error_code));
    fuzz_safe_line(d->finish_reason, sizeof(d->finish_reason));
    if (d->content != NULL) {
        FUZZ_CHECK(d->content_len > 0);
        FUZZ_CHECK(tb_utf8_check(d->content, d->content_len) == d->content_len);
    }
    if (d->reasoning != NULL) {
        FUZZ_CHECK(d->reasoning_len > 0);
        FUZZ_CHECK(tb_utf8_check(d->reasoning, d->reasoning_len) == d->reasoning_len);
    }
    FUZZ_CHECK(d->usage_completion >= -1 && d->usage_prompt >= -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tb_api_parser *p;
    struct tb_api_delta d, d2;
    char err[160], err2[160], text[400], small[8];
    int rc, rc2;
    if (p == NULL)
        FUZZ_CHECK(tb_api_parser_create(TB_API_CHAT, &p) ==
                   0); /* kept: buffers reused across inputs */
    err[0] = '\0';
    tb_api_parser_reset(p);
    rc = tb_api_parse_event(p, NULL, 0, (const char *)data, size, &d, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == TB_EFORMAT);
    if (rc != 0) {
        FUZZ_CHECK(err[0] != '\0');
        fuzz_safe_line(err, sizeof(err));
    } else {
        char *copy = NULL;
        size_t clen = d.content_len;
        check_delta(&d);
        if (d.content != NULL) {
            copy = malloc(clen);
            FUZZ_CHECK(copy != NULL);
            memcpy(copy, d.content, clen);
        }
        tb_api_parser_reset(p);
        rc2 = tb_api_parse_event(p, NULL, 0, (const char *)data, size, &d2, err2, sizeof(err2));
        FUZZ_CHECK(rc2 == 0);
        FUZZ_CHECK(d2.done == d.done && d2.error == d.error && d2.tool_calls == d.tool_calls);
        FUZZ_CHECK(d2.content_len == clen);
        FUZZ_CHECK(copy == NULL || memcmp(d2.content, copy, clen) == 0);
        free(copy);
    }
    tb_reader_error_text((const char *)data, size, text, sizeof(text));
    fuzz_safe_line(text, sizeof(text));
    tb_reader_error_text((const char *)data, size, small, sizeof(small));
    fuzz_safe_line(small, sizeof(small));
    return 0;
}
