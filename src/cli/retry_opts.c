/*
 * retry_opts.c - bench's --retry POLICY and --retry-max K (retry_opts.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "retry_opts.h"
#include "ttsbuf/error.h"

_Static_assert(TB_BENCH_RETRY_MAX_DEFAULT == 5 && TB_BENCH_RETRIES_MAX == 10,
               "--retry-max's help states them");

const struct tb_optdoc tb_opt_retry[] = {
    {"retry", TB_O_RETRY, "none|after|exp[:BASE,MAX]",
     "what an LLM request refused with 429 (or 503 with Retry-After) does: none (default: the refusal "
     "is its error), after (waits what Retry-After says, at most 60 s; 1 s without one) or exp "
     "(waits a uniform draw in [0, BASE x 2^k] s, at most MAX, before retry k from 0; default "
     "0.5,8), then sends it again",
     "A TTS request refused (--tts-url; serve --tts-max-inflight) is not retried: the 429 is "
     "its chunk's error (http 429), as any TTS status. "
     "exp's draws come from --seed and the request's id alone, so the same seed gives the same "
     "waits. A waiting request keeps its place in flight; its ttft and every other time count "
     "from its first attempt's send. Each record says its refusals and the wait before each retry "
     "(retry_waits_s); the level's summary's retry block counts refusals, retries, the requests "
     "that succeeded after one (retried_ok) and those that gave up (gave_up), and sums the waits "
     "(wait_total_s; wait_s, their statistics). A request "
     "that gives up is an error with the last refusal's status and message. A policy other than "
     "none is in the run's options (retry: policy, base_s and max_s for exp, max_retries), so "
     "merge refuses runs of other policies and compare names the difference."},
    {"retry-max", TB_O_RETRY_MAX, "K", "retries a request makes at most (default 5, at most 10)",
     "With --retry after or exp; refused with --retry none, which retries nothing."},
    TB_OPTDOC_END,
};

/* "BASE,MAX" of exp: 0 < BASE <= MAX <= 3600.  0 or TB_EINVAL. */
static int exp_args(const char *arg, const char *s, struct tb_bench_retry *r)
{
    char *end;
    double base, max;
    base = strtod(s, &end);
    if (end == s || *end != ',')
        goto bad;
    s = end + 1;
    max = strtod(s, &end);
    if (end == s || *end != '\0')
        goto bad;
    if (!(base > 0 && max >= base && max <= 3600))
        goto bad;
    r->base = base;
    r->max = max;
    return 0;
bad:
    tb_cli_error("--retry: '%s': exp takes BASE,MAX seconds with 0 < BASE <= MAX <= 3600", arg);
    return TB_EINVAL;
}

int tb_cli_retry_option(struct tb_bench_retry *r, int c, const char *arg)
{
    size_t k = 0;
    int rc;
    switch (c) {
    case TB_O_RETRY:
        r->base = TB_BENCH_RETRY_EXP_BASE;
        r->max = TB_BENCH_RETRY_EXP_MAX;
        if (strcmp(arg, "none") == 0)
            r->kind = TB_BENCH_RETRY_NONE;
        else if (strcmp(arg, "after") == 0)
            r->kind = TB_BENCH_RETRY_AFTER;
        else if (strcmp(arg, "exp") == 0)
            r->kind = TB_BENCH_RETRY_EXP;
        else if (strncmp(arg, "exp:", 4) == 0) {
            r->kind = TB_BENCH_RETRY_EXP;
            return exp_args(arg, arg + 4, r);
        } else {
            tb_cli_error("--retry: '%s' is not none, after or exp[:BASE,MAX]", arg);
            return TB_EINVAL;
        }
        return 0;
    case TB_O_RETRY_MAX:
        rc = tb_cli_opt_size("--retry-max", arg, 1, TB_BENCH_RETRIES_MAX, &k);
        r->max_retries = (unsigned)k;
        return rc;
    default: return TB_CLI_NOT_MINE;
    }
}

int tb_cli_retry_check(const struct tb_bench_retry *r)
{
    if (r->max_retries == 0 || r->kind != TB_BENCH_RETRY_NONE)
        return 0;
    tb_cli_error("bench: --retry-max bounds the retries of --retry after or exp; with --retry "
                 "none (the default) nothing is retried");
    return TB_EINVAL;
}
