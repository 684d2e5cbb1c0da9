/*
 * interrupt.c - SIGINT and SIGTERM as a flag the run reads (see
 * interrupt.h).
 */
#include "interrupt.h"

#include <signal.h>
#include <string.h>

static atomic_int interrupted;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store_explicit(&interrupted, 1, memory_order_relaxed);
}

atomic_int *tb_cli_catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &interrupted;
}
