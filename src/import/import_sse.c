/*
 * import_sse.c - the raw SSE bytes some tools keep (genai-perf,
 * aiperf-raw), read through the stream reader (reader.h) into a request's
 * stream, as a live run reads them (see import_sse.h).
 */
#include "import_sse.h"

#include <stdio.h>
#include <string.h>

#include "ttsbuf/api.h"
#include "ttsbuf/error.h"

int tb_import_sse_open(struct tb_import_sse *x)
{
    memset(x, 0, sizeof(*x));
    if (tb_reader_init(&x->rd, TB_API_CHAT) != 0) {
        tb_import_sse_close(x);
        return TB_ENOMEM;
    }
    tb_reader_recorded(&x->rd); /* the tools record chat and completions alike */
    return 0;
}

void tb_import_sse_close(struct tb_import_sse *x)
{
    tb_reader_free(&x->rd);
}

void tb_import_sse_begin(struct tb_import_sse *x, struct tb_stream *s)
{
    tb_reader_begin(&x->rd, s, 0);
    x->fed = 0;
    x->err[0] = '\0';
}

int tb_import_sse_feed(struct tb_import_sse *x, const char *buf, size_t len, double t)
{
    int kind;
    x->fed = 1;
    if (x->rd.error != 0 || tb_reader_feed(&x->rd, buf, len, t) == 0)
        return 0; /* a stream that ended in an error event reads no further */
    kind = x->rd.error;
    snprintf(x->err, sizeof(x->err), "%s", x->rd.message);
    switch (kind) {
    case TB_READER_JSON: return TB_EFORMAT;
    case TB_READER_SSE:
    case TB_READER_TOO_LONG: return TB_ETOOBIG;
    case TB_READER_NOMEM: return TB_ENOMEM;
    default: return 0; /* an error event: the request's own conclusion */
    }
}

void tb_import_sse_end(struct tb_import_sse *x, struct tb_import_request *r)
{
    if (!x->fed)
        return;
    r->stream_error = tb_reader_end(&x->rd);
    if (x->rd.usage_completion >= 0)
        r->stream.usage_tokens = x->rd.usage_completion;
    if (r->stream_error != 0 && r->error[0] == '\0')
        snprintf(r->error, sizeof(r->error), "%.*s", (int)sizeof(r->error) - 1, x->rd.message);
    if (r->stream_error == 0)
        snprintf(r->warning, sizeof(r->warning), "%.*s", (int)sizeof(r->warning) - 1,
                 x->rd.warning);
}
