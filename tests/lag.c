/*
 * lag.c - the wake-up lateness probe of lag.h.
 */
#define _DEFAULT_SOURCE /* clock_nanosleep's TIMER_ABSTIME */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "lag.h"
#include "tests.h"

#define PERIOD_NS 1000000 /* 1 ms: many samples, little CPU */

static struct {
    pthread_t th;
    int running;
    atomic_int stop;
    _Atomic int64_t max_ns; /* the largest lateness so far */
} probe_state;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *probe(void *arg)
{
    int64_t due = mono_ns();
    (void)arg;
    while (!atomic_load(&probe_state.stop)) {
        struct timespec ts;
        int64_t late;
        due += PERIOD_NS;
        ts.tv_sec = (time_t)(due / 1000000000);
        ts.tv_nsec = (long)(due % 1000000000);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
            ;
        late = mono_ns() - due;
        if (late > atomic_load(&probe_state.max_ns))
            atomic_store(&probe_state.max_ns, late);
        /* After a long delay, the next deadline is from now: one delay is
         * one sample, not a run of catching up. */
        if (late > PERIOD_NS)
            due = mono_ns();
    }
    return NULL;
}

double tb_test_lag_stop(void)
{
    if (probe_state.running) {
        atomic_store(&probe_state.stop, 1);
        pthread_join(probe_state.th, NULL);
        probe_state.running = 0;
    }
    return tb_test_lag_now();
}

void tb_test_lag_start(void)
{
    tb_test_lag_stop();
    atomic_store(&probe_state.stop, 0);
    atomic_store(&probe_state.max_ns, 0);
    if (pthread_create(&probe_state.th, NULL, probe, NULL) != 0)
        fail_msg("the lag probe's thread did not start");
    probe_state.running = 1;
}

double tb_test_lag_now(void)
{
    return (double)atomic_load(&probe_state.max_ns) * 1e-9;
}
