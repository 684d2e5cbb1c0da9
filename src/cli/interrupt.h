/*
 * interrupt.h - SIGINT and SIGTERM during `run`, `bench` and a WAV render
 * (interrupt.c).
 */
#ifndef TTSBUF_CLI_INTERRUPT_H
#define TTSBUF_CLI_INTERRUPT_H

#include <stdatomic.h>

/* Installs the handler (idempotent) and returns the flag it sets: a
 * lock-free atomic, async-signal-safe, set on whichever thread takes the
 * signal and read by the network loop, which then ends the run and
 * flushes what it has. */
atomic_int *tb_cli_catch_interrupts(void);

#endif
