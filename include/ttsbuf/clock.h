/*
 * clock.h - the one place ttsbuf gets time from.
 *
 * All time in ttsbuf is seconds as a double, relative to a clock's origin
 * (for a live run: the moment the request is sent).  Nothing else reads the
 * wall clock: the simulator and the tests use the virtual clock, which moves
 * only when told to and so makes every run deterministic and faster than
 * real time; live runs and real-time replay use the monotonic clock.
 *
 * A clock is a caller-owned value struct.  It is used from one thread at a
 * time (the thread that drives the simulation); it holds no resources.
 */
#ifndef TTSBUF_CLOCK_H
#define TTSBUF_CLOCK_H

#include <stdint.h>
#include <time.h>

struct tb_clock {
    /* Seconds since the clock's origin. */
    double (*now)(struct tb_clock *c);
    /* Blocks (monotonic) or jumps (virtual) until now() >= t.  A t in the
     * past returns at once; a virtual clock never goes backwards. */
    void (*sleep_until)(struct tb_clock *c, double t);
    double virtual_now; /* virtual clock: current time */
    double origin;      /* monotonic clock: CLOCK_MONOTONIC at origin */
};

/* A virtual clock at t = 0.  Cannot fail. */
void tb_clock_virtual_init(struct tb_clock *c);

/* A monotonic clock whose origin is the moment of this call.  Cannot fail
 * on Linux (CLOCK_MONOTONIC always exists). */
void tb_clock_monotonic_init(struct tb_clock *c);

/* Moves a monotonic clock's origin to the moment of this call. */
void tb_clock_reset_origin(struct tb_clock *c);

/*
 * tb_clock_mono_ns, tb_clock_mono_ts - CLOCK_MONOTONIC now, as integer
 * nanoseconds or as a timespec, for the code that schedules in real time
 * at a finer grain than a double of seconds allows, or hands a deadline
 * to the system (the mock server's timerfd, the PortAudio sink's
 * condition variable).  Cannot fail; any thread.
 */
int64_t tb_clock_mono_ns(void);
void tb_clock_mono_ts(struct timespec *ts);

#endif
