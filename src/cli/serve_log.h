/*
 * serve_log.h - `ttsbuf serve --log FILE`: the request log, JSONL (schema
 * ttsbuf.serve_log version 2, schema/serve_log.schema.json): a header
 * line, then one line per request as it ends (tb_serve_request, serve.h),
 * each flushed as it is written.  Main thread (the server's loop runs
 * there).
 */
#ifndef TB_CLI_SERVE_LOG_H
#define TB_CLI_SERVE_LOG_H

#include <stdint.h>
#include <stdio.h>

#include "report.h"
#include "ttsbuf/serve.h"

#define TB_SCHEMA_SERVE_LOG "ttsbuf.serve_log"
#define TB_SCHEMA_SERVE_LOG_V 2

struct tb_cli_serve_log {
    FILE *f;          /* NULL: no log */
    int owned;        /* f is ours to close (not stdout) */
    int rc;           /* the first write's failure (TB_EIO, TB_ENOMEM), 0 none */
    const char *path; /* for messages (borrowed) */
    char err[320];
};

/* Opens path ("-": stdout) for writing, truncated.  Returns 0, or
 * TB_EINVAL with the one-line error printed (a usage error: the file
 * cannot be made). */
int tb_cli_serve_log_open(struct tb_cli_serve_log *l, const char *path);

/* The header line: schema, ttsbuf_version, started_at, command, source
 * {kind, name, seed: the source's seed, null for a trace, and streams:
 * "per_request" when each request draws its own (serve.h's Streams),
 * else "same"}, listen (the URL bound), clock.  seed NULL: none.
 * Returns 0 or the write's error (also kept in l->rc). */
int tb_cli_serve_log_header(struct tb_cli_serve_log *l, const struct tb_report_src *src,
                            const uint64_t *seed, int per_request, const char *url);

/* One request's line, flushed.  Returns 0 or the write's error (also
 * kept in l->rc, with a message in l->err). */
int tb_cli_serve_log_write(struct tb_cli_serve_log *l, const struct tb_serve_request *r);

/* What the server served, on stderr when it stopped: requests, streams,
 * lateness, and each cap's refusals (--max-connections, the memory
 * budget, --max-inflight, --tts-max-inflight). */
void tb_cli_serve_summary(const struct tb_serve_stats *st, const struct tb_serve_opts *so);

/* Closes the file (not stdout); returns 0, or TB_EIO when that failed or
 * a write had (l->err says which). */
int tb_cli_serve_log_close(struct tb_cli_serve_log *l);

#endif
