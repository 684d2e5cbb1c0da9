/*
 * bench_barge.c - barge-in's draws (bench_calls.h): whether the caller
 * interrupts a turn, and how long into its playback, from a generator
 * seeded by (seed, call, turn) alone (splitmix64), apart from the
 * speaking time's (bench_uturn.c), so a shard draws what one run would and
 * P = 0 changes no other draw.
 */
#include <math.h>
#include <string.h>

#include "ttsbuf/bench_calls.h"
#include "ttsbuf/error.h"

int tb_barge_at_parse(const char *spec, struct tb_uturn *u, char *err, size_t errlen)
{
    if (strncmp(spec, "words:", 6) == 0)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "'%s': the moment of a barge-in is S, uniform:A,B or exp:MEAN (seconds "
                         "of playback), not words",
                         spec);
    return tb_uturn_parse(spec, u, err, errlen);
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* Two uniform draws in [0, 1) for (seed, call, turn), on a stream of
 * their own (the constant keeps them apart from --user-turn's). */
static void units(uint64_t seed, uint64_t call, uint32_t turn, double *u1, double *u2)
{
    uint64_t x = splitmix(splitmix(splitmix(seed ^ 0xB4A6E1B0C2D3F405ULL) ^ call) ^ turn);
    uint64_t y = splitmix(x);
    *u1 = (double)(x >> 11) / 9007199254740992.0;
    *u2 = (double)(y >> 11) / 9007199254740992.0;
}

double tb_barge_draw(double p, const struct tb_uturn *at, uint64_t seed, uint64_t call,
                     uint32_t turn)
{
    double u1, u2;
    if (!(p > 0))
        return NAN;
    units(seed, call, turn, &u1, &u2);
    if (!(u1 < p))
        return NAN;
    switch (at->kind) {
    case TB_UTURN_UNIFORM: return at->a + (at->b - at->a) * u2;
    case TB_UTURN_EXP: return -at->a * log1p(-u2);
    default: return at->a;
    }
}
