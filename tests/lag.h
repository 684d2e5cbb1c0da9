/*
 * lag.h - how late this machine wakes a sleeping thread, measured while a
 * timing case runs (tests/lag.c).
 *
 * Why: a case that bounds a real-time event (a first byte, a turn's send,
 * a close seen by the server) on a machine that is also compiling, or
 * running the suite's other groups, sees the event late by however long
 * the scheduler took to wake the process that does it.  That delay is not
 * the code's, and no fixed tolerance both holds on a busy machine and
 * catches a few milliseconds of bias on an idle one.  So a timing case
 * measures the delay while it runs and allows the event's own bound plus
 * what was measured: on an idle machine the bound is the same as before;
 * on a busy one it grows by exactly what the machine added.
 *
 * How: a probe thread sleeps to absolute deadlines 1 ms apart
 * (clock_nanosleep, TIMER_ABSTIME, CLOCK_MONOTONIC) and keeps the largest
 * lateness of its wake-ups.  A client or server process woken by a socket
 * or a timer in the same interval waits on the same scheduler; a case
 * that involves two such wake-ups (a server's send and a client's read)
 * allows twice the probe's largest.
 *
 * One probe a process, in static storage: a case that fails between start
 * and stop (cmocka jumps out of it) leaves the probe running, harmlessly,
 * until the next start stops it.  Call from the case's thread.
 */
#ifndef TTSBUF_TESTS_LAG_H
#define TTSBUF_TESTS_LAG_H

/* Starts the probe, stopping one a failed case left running (fails the
 * case if the thread cannot start). */
void tb_test_lag_start(void);

/* The largest wake-up lateness since start, in seconds, so far: the probe
 * goes on. */
double tb_test_lag_now(void);

/* Stops the probe; returns the largest wake-up lateness since start, in
 * seconds (0 when none runs). */
double tb_test_lag_stop(void);

#endif
