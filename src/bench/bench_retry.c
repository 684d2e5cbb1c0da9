/*
 * bench_retry.c - the retry policy of a load level (bench.h's Retries,
 * bench_retry.h): which refusals are retried, how long a stream waits.
 */
#include <math.h>

#include "bench_retry.h"
#include "ttsbuf/bench.h"

/* A uniform in [0, 1) from (seed, id, k) alone: splitmix64's finalizer
 * over their mix, 53 bits. */
static double jitter(uint64_t seed, uint64_t id, unsigned k)
{
    uint64_t z = seed ^ (id * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)(k + 1) * 0xD1B54A32D192ED03ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

double tb_bench_retry_wait(const struct tb_bench_retry *r, uint64_t seed, uint64_t id, unsigned k,
                           double retry_after)
{
    double top;
    if (r->kind == TB_BENCH_RETRY_AFTER) {
        if (!(retry_after >= 0))
            return 1.0;
        return retry_after < TB_BENCH_RETRY_AFTER_CAP ? retry_after : TB_BENCH_RETRY_AFTER_CAP;
    }
    top = r->base * ldexp(1.0, k < 60 ? (int)k : 60);
    if (top > r->max)
        top = r->max;
    return jitter(seed, id, k) * top;
}

int tb_bench_retry_refused(const struct xf *x)
{
    return x->hr.status == 429 || (x->hr.status == 503 && x->hr.retry_after >= 0);
}

int tb_bench_retry_take(struct bench *b, struct xf *x)
{
    const struct tb_bench_retry *r = &b->o->retry;
    unsigned most = r->max_retries > 0 ? r->max_retries : TB_BENCH_RETRY_MAX_DEFAULT;
    double w;
    if (r->kind == TB_BENCH_RETRY_NONE || x->warm || b->stopped || x->hr.cancelled ||
        !tb_bench_retry_refused(x) || x->nretries >= most || x->nretries >= TB_BENCH_RETRIES_MAX)
        return 0;
    w = tb_bench_retry_wait(r, b->o->seed, x->id, x->nretries, x->hr.retry_after);
    x->retry_wait[x->nretries++] = w;
    x->retry_at = b->clk.virtual_now + w;
    x->waiting = 1;
    x->running = 0;
    b->nwaiting++;
    return 1;
}

double tb_bench_retry_next(const struct bench *b)
{
    double at = INFINITY;
    if (b->nwaiting == 0)
        return at;
    for (const struct xf *x = b->inflight; x != NULL; x = x->next)
        if (x->waiting && x->retry_at < at)
            at = x->retry_at;
    return at;
}
