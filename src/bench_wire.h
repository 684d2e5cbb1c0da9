/*
 * bench_wire.h - private to libttsbuf: the wire side of one `ttsbuf bench`
 * stream, in one place.  Building a request body and turning a stream's
 * body bytes into deltas are the only two calls the bench loop makes
 * about the API; both go through the dialect interface (api.h), so bench
 * speaks every dialect `ttsbuf run` does (chat, completions, anthropic,
 * ollama), with the same rules and the same one-line messages.
 *
 * Ownership: a wire state owns its parser.  Threads: one thread per state.
 */
#ifndef TTSBUF_BENCH_WIRE_H
#define TTSBUF_BENCH_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/api.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/http.h"
#include "ttsbuf/stream.h"

struct tb_bench_wire {
    struct tb_api_parser *parser;
    const struct tb_api_info *api;
    struct tb_stream *out; /* deltas go here, borrowed */
    double t0;             /* the request's start: event times are t - t0 */
    double t_now;
    double last_data; /* time of the last data event (or t0): the idle clock */
    int done_seen;
    long long usage;
    char finish[32];
    int error;         /* enum tb_live_error */
    char message[256]; /* when error != 0 */
};

/* Returns 0, TB_EINVAL (unknown dialect) or TB_ENOMEM. */
int tb_bench_wire_init(struct tb_bench_wire *w, enum tb_api api);
void tb_bench_wire_free(struct tb_bench_wire *w);
/* A new request starting at t0, its deltas into out.  Keeps memory. */
void tb_bench_wire_reset(struct tb_bench_wire *w, struct tb_stream *out, double t0);

/*
 * tb_bench_wire_body - the request body for prompt p with the template's
 * dialect, model and options.  *out is malloc'd.  Returns 0, TB_EINVAL
 * (bad messages/extra JSON, err says) or TB_ENOMEM.
 */
int tb_bench_wire_body(const struct tb_oai_request *tmpl, const struct tb_bench_prompt *p,
                       char **out, char *err, size_t errlen);

/* Body bytes of the stream, arrived at t (a tb_http_body_fn: returns
 * non-zero to stop the transfer, the error recorded).  A stream past a
 * live stream's caps (tb_live_over_cap) stops there, TB_LIVE_TOO_LONG. */
int tb_bench_wire_feed(void *w, const char *buf, size_t len, double t);

/* The transfer ended: classifies how (unless feeding already failed);
 * q: the request's timeouts, for the messages. */
void tb_bench_wire_conclude(struct tb_bench_wire *w, const struct tb_http_resp *hr,
                            const struct tb_http_req *q);

#endif
