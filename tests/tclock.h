/*
 * tclock.h - the tests' monotonic clock and sleep, in seconds (for timing
 * a run or a read, and pacing a scripted peer).
 */
#ifndef TTSBUF_TESTS_TCLOCK_H
#define TTSBUF_TESTS_TCLOCK_H

#include <errno.h>
#include <time.h>

static inline double tclock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleeps s seconds, resumed after a signal. */
static inline void tclock_sleep(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

#endif
