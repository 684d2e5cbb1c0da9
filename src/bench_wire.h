/*
 * bench_wire.h - private to libttsbuf: the wire dialect `ttsbuf bench`
 * speaks, in one place.  Building a request body and turning a stream's
 * body bytes into deltas are the only two calls the bench loop makes
 * about the API; a second dialect goes behind these two functions.
 *
 * Today this is the OpenAI-compatible dialect (oai.h over sse.h), with
 * the same rules and the same one-line messages as `ttsbuf run`.
 *
 * Ownership: a wire state owns its SSE parser; the JSON parser is the
 * caller's (one per thread).  Threads: one thread per state.
 */
#ifndef TTSBUF_BENCH_WIRE_H
#define TTSBUF_BENCH_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/bench.h"
#include "ttsbuf/http.h"
#include "ttsbuf/oai.h"
#include "ttsbuf/sse.h"
#include "ttsbuf/stream.h"

struct tb_bench_wire {
    struct tb_sse *sse;
    struct tb_oai *oai;    /* borrowed */
    struct tb_stream *out; /* deltas go here, borrowed */
    double t0;             /* the request's start: event times are t - t0 */
    double t_now;
    int done_seen;
    long long usage;
    char finish[32];
    int error;         /* enum tb_live_error */
    char message[256]; /* when error != 0 */
    uint64_t sse_events;
};

/* Returns 0 or TB_ENOMEM. */
int tb_bench_wire_init(struct tb_bench_wire *w, struct tb_oai *oai);
void tb_bench_wire_free(struct tb_bench_wire *w);
/* A new request starting at t0, its deltas into out.  Keeps memory. */
void tb_bench_wire_reset(struct tb_bench_wire *w, struct tb_stream *out, double t0);

/*
 * tb_bench_wire_body - the request body for prompt p with the template's
 * model and options.  *out is malloc'd.  Returns 0, TB_EINVAL (bad
 * messages/extra JSON, err says) or TB_ENOMEM.
 */
int tb_bench_wire_body(const struct tb_oai_request *tmpl, const struct tb_bench_prompt *p,
                       char **out, char *err, size_t errlen);

/* Body bytes of the stream, arrived at t (a tb_http_body_fn: returns
 * non-zero to stop the transfer, the error recorded). */
int tb_bench_wire_feed(void *w, const char *buf, size_t len, double t);

/* The transfer ended: classifies how (unless feeding already failed). */
void tb_bench_wire_conclude(struct tb_bench_wire *w, const struct tb_http_resp *hr,
                            double idle_timeout);

#endif
