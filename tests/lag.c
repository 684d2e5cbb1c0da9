/*
 * lag.c - the wake-up lateness probe of lag.h.
 */
#define _DEFAULT_SOURCE /* clock_nanosleep's TIMER_ABSTIME */
#include <time.h>

#include "lag.h"
#include "tests.h"

#define PERIOD_NS 1000000 /* 1 ms: many samples, little CPU */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *probe(void *arg)
{
    struct tb_test_lag *l = arg;
    int64_t due = mono_ns();
    while (!atomic_load(&l->stop)) {
        struct timespec ts;
        int64_t late;
        due += PERIOD_NS;
        ts.tv_sec = (time_t)(due / 1000000000);
        ts.tv_nsec = (long)(due % 1000000000);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
            ;
        late = mono_ns() - due;
        if (late > atomic_load(&l->max_ns))
            atomic_store(&l->max_ns, late);
        /* After a long delay, the next deadline is from now: one delay is
         * one sample, not a run of catching up. */
        if (late > PERIOD_NS)
            due = mono_ns();
    }
    return NULL;
}

void tb_test_lag_start(struct tb_test_lag *l)
{
    atomic_init(&l->stop, 0);
    atomic_init(&l->max_ns, 0);
    if (pthread_create(&l->th, NULL, probe, l) != 0)
        fail_msg("the lag probe's thread did not start");
}

double tb_test_lag_now(struct tb_test_lag *l)
{
    return (double)atomic_load(&l->max_ns) * 1e-9;
}

double tb_test_lag_stop(struct tb_test_lag *l)
{
    atomic_store(&l->stop, 1);
    pthread_join(l->th, NULL);
    return tb_test_lag_now(l);
}
