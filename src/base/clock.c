/*
 * clock.c - the virtual and monotonic clocks (see clock.h).
 *
 * The monotonic clock sleeps with clock_nanosleep(TIMER_ABSTIME), so a
 * sequence of sleep_until calls does not accumulate drift from the time
 * spent between them.
 */
#include "ttsbuf/clock.h"

#include <errno.h>
#include <time.h>

int64_t tb_clock_mono_ns(void)
{
    struct timespec ts;
    tb_clock_mono_ts(&ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tb_clock_mono_ts(struct timespec *ts)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
}

static double mono_raw(void)
{
    struct timespec ts;
    tb_clock_mono_ts(&ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double virt_now(struct tb_clock *c)
{
    return c->virtual_now;
}

static void virt_sleep_until(struct tb_clock *c, double t)
{
    if (t > c->virtual_now)
        c->virtual_now = t;
}

static double mono_now(struct tb_clock *c)
{
    return mono_raw() - c->origin;
}

static void mono_sleep_until(struct tb_clock *c, double t)
{
    double abs = c->origin + t;
    struct timespec ts;
    if (abs <= mono_raw())
        return;
    ts.tv_sec = (time_t)abs;
    ts.tv_nsec = (long)((abs - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

void tb_clock_virtual_init(struct tb_clock *c)
{
    c->now = virt_now;
    c->sleep_until = virt_sleep_until;
    c->virtual_now = 0.0;
    c->origin = 0.0;
}

void tb_clock_monotonic_init(struct tb_clock *c)
{
    c->now = mono_now;
    c->sleep_until = mono_sleep_until;
    c->virtual_now = 0.0;
    c->origin = mono_raw();
}

void tb_clock_reset_origin(struct tb_clock *c)
{
    c->origin = mono_raw();
    c->virtual_now = 0.0;
}
