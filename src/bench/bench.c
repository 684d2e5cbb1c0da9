/*
 * bench.c - what a load level of `ttsbuf bench` asks of this shard (see
 * bench.h and bench_priv.h): the options checked, and the shard's share of
 * the requests, the streams in flight and the rate.  The level itself is
 * bench_run.c.
 */
#include "ttsbuf/bench.h"

#include <math.h>
#include <stdint.h>

#include "bench_priv.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"

double tb_bench_expo(uint64_t *rng)
{
    uint64_t x = *rng;
    double u;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    u = (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
    return -log1p(-u);
}

/* Calls (bench_calls.h): conversations, a call count, a load, and none of
 * what only requests take. */
static int calls_check(const struct tb_bench_opts *o, char *err, size_t errlen)
{
    const struct tb_bench_level *l = &o->level;
    if (o->convos == NULL || o->convos->n == 0)
        return tb_seterr(err, errlen, TB_EINVAL, "no conversations");
    if (o->calls == 0)
        return tb_seterr(err, errlen, TB_EINVAL, "no call count");
    if (o->warmup > 0 || o->duration > 0)
        return tb_seterr(err, errlen, TB_EINVAL, "calls take no warm-up or duration");
    if (l->mode == TB_BENCH_CALLS && (l->concurrency < 1 || l->concurrency > TB_BENCH_CONC_MAX))
        return tb_seterr(err, errlen, TB_EINVAL, "calls at once %u outside 1..%u", l->concurrency,
                         TB_BENCH_CONC_MAX);
    if (l->mode == TB_BENCH_CALLS_POISSON && !(l->rate > 0))
        return tb_seterr(err, errlen, TB_EINVAL, "bad call rate");
    if (o->req.api != TB_API_CHAT && o->req.api != TB_API_ANTHROPIC && o->req.api != TB_API_OLLAMA)
        return tb_seterr(err, errlen, TB_EINVAL, "calls need a chat dialect (messages)");
    return 0;
}

int tb_bench_opts_check(const struct tb_bench_opts *o, char *err, size_t errlen)
{
    const struct tb_bench_level *l = &o->level;
    if (o->http.url == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "no URL");
    if (o->nshards == 0 || o->shard >= o->nshards)
        return tb_seterr(err, errlen, TB_EINVAL, "shard %u of %u", o->shard, o->nshards);
    if (o->threads > TB_BENCH_THREADS_MAX)
        return tb_seterr(err, errlen, TB_EINVAL, "%u loop threads: at most %u", o->threads,
                         TB_BENCH_THREADS_MAX);
    if (l->mode == TB_BENCH_CALLS || l->mode == TB_BENCH_CALLS_POISSON)
        return tb_api_info(o->req.api) == NULL
                   ? tb_seterr(err, errlen, TB_EINVAL, "unknown dialect")
                   : calls_check(o, err, errlen);
    if (o->prompts == NULL || o->prompts->n == 0)
        return tb_seterr(err, errlen, TB_EINVAL, "no prompts");
    if (o->nshards == 0 || o->shard >= o->nshards)
        return tb_seterr(err, errlen, TB_EINVAL, "shard %u of %u", o->shard, o->nshards);
    if (o->requests == 0 && !(o->duration > 0))
        return tb_seterr(err, errlen, TB_EINVAL, "neither a request count nor a duration");
    if (l->mode == TB_BENCH_CLOSED && (l->concurrency < 1 || l->concurrency > TB_BENCH_CONC_MAX))
        return tb_seterr(err, errlen, TB_EINVAL, "concurrency %u outside 1..%u", l->concurrency,
                         TB_BENCH_CONC_MAX);
    if (l->mode != TB_BENCH_CLOSED && (!(l->rate > 0) || l->concurrency > TB_BENCH_CONC_MAX))
        return tb_seterr(err, errlen, TB_EINVAL, "bad rate or cap");
    if (tb_api_info(o->req.api) == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown dialect");
    return 0;
}

/* This shard's share of c streams: c*(I+1)/N - c*I/N, at least 1. */
static size_t share(uint32_t c, uint32_t i, uint32_t n)
{
    uint64_t s = (uint64_t)c * (i + 1) / n - (uint64_t)c * i / n;
    return s > 0 ? (size_t)s : 1;
}

void tb_bench_shard_share(const struct tb_bench_opts *o, size_t *target, size_t *cap, double *rate)
{
    if (o->level.mode == TB_BENCH_CALLS || o->level.mode == TB_BENCH_CALLS_POISSON)
        *target = o->calls > o->shard ? (o->calls - o->shard + o->nshards - 1) / o->nshards : 0;
    else if (o->requests > 0)
        *target =
            o->requests > o->shard ? (o->requests - o->shard + o->nshards - 1) / o->nshards : 0;
    else
        *target = SIZE_MAX;
    if (o->level.mode == TB_BENCH_CLOSED || o->level.mode == TB_BENCH_CALLS)
        *cap = share(o->level.concurrency, o->shard, o->nshards);
    else
        *cap = o->level.concurrency > 0 ? share(o->level.concurrency, o->shard, o->nshards)
                                        : TB_BENCH_CONC_MAX;
    *rate = o->level.rate / o->nshards;
}
