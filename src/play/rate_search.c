/*
 * rate_search.c - the minimum-rate search (see rate_search.h).  About a
 * hundred tests when monotone; a scan costs steps per halving of the
 * rate from where everything falls within a microsecond.
 */
#include "rate_search.h"

#include <math.h>

#include "ttsbuf/playout.h"

int tb_rate_search(tb_gap_free_fn *gap_free, void *ud, double umax, double speech, double theta,
                   int monotone, int steps, double *out)
{
    double hi, lo, floor_, step;
    if (!gap_free(ud, INFINITY))
        return 1;
    *out = 0.0;
    /* Nothing comes after the first, or the start waits for all of the
     * audio: every rate plays the same, or without a gap. */
    if (!(umax > 0.0) || theta >= speech)
        return 0;
    /* Monotone: any gap-free rate bounds the answer.  Otherwise start
     * where everything falls within a microsecond of the first, so the
     * walk down passes every gap-free stretch but the narrowest. */
    hi = monotone ? umax / (speech > TB_FRAME_S ? speech : TB_FRAME_S) : umax / 1e-6;
    while (!gap_free(ud, hi)) {
        hi *= 2.0;
        if (isinf(hi))
            return 1; /* no finite rate: the same answer as none */
    }
    /* Below umax / 1e5 the stream spans more than a day, where doubles
     * keep time to 1e-11 s: gap-free that slow reads as 0. */
    floor_ = umax / 1e5;
    step = monotone ? 0.5 : exp2(-1.0 / steps);
    lo = hi * step;
    while (gap_free(ud, lo)) {
        hi = lo;
        lo *= step;
        if (hi < floor_)
            return 0;
    }
    while (hi - lo > TB_SEARCH_REL * hi) {
        double mid = lo + (hi - lo) / 2.0;
        if (gap_free(ud, mid))
            hi = mid;
        else
            lo = mid;
    }
    *out = hi;
    return 0;
}
