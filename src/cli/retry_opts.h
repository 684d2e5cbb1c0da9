/*
 * retry_opts.h - bench's --retry and --retry-max (retry_opts.c): their
 * rows and their reading into a struct tb_bench_retry (bench.h).  Helpers
 * as cli.h says.
 */
#ifndef TTSBUF_CLI_RETRY_OPTS_H
#define TTSBUF_CLI_RETRY_OPTS_H

#include "optdoc.h"
#include "ttsbuf/bench.h"

enum { TB_O_RETRY = 580, TB_O_RETRY_MAX };

extern const struct tb_optdoc tb_opt_retry[];

/* One of the rows' options into *r: 0, TB_CLI_NOT_MINE, or TB_EINVAL
 * (a one-line error printed). */
int tb_cli_retry_option(struct tb_bench_retry *r, int c, const char *arg);

/* After the options: --retry-max without a policy that retries is
 * refused.  0, or TB_EINVAL (a one-line error printed). */
int tb_cli_retry_check(const struct tb_bench_retry *r);

#endif
