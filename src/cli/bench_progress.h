/*
 * bench_progress.h - `ttsbuf bench`'s progress while a level runs
 * (bench_progress.c): a line on standard error, rewritten in place on a
 * terminal, or printed whole every `every` seconds of the level when
 * standard error is a file or a pipe (a CI log, `2>log`), so that a long
 * run never looks hung.  A level of calls counts its calls by what they
 * wait for (the model, the answer to be spoken, the caller) and says the
 * time left, worked out from the turns done.
 */
#ifndef TTSBUF_CLI_BENCH_PROGRESS_H
#define TTSBUF_CLI_BENCH_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

#include "ttsbuf/bench.h"

/* A line every TB_CLI_PROGRESS_EVERY_S seconds without a terminal. */
#define TB_CLI_PROGRESS_EVERY_S 10.0

struct tb_cli_progress {
    const char *name; /* the level's, "calls=20" */
    FILE *f;          /* standard error */
    int tty;          /* 1: a terminal, one line rewritten in place */
    double every;     /* else: a line each time t passes a multiple of it */
    double next;      /* ... the next one (0: the first report sets it) */
};

/* Sets p up for level `name` on f: tty says whether f is a terminal. */
void tb_cli_progress_init(struct tb_cli_progress *p, const char *name, FILE *f, int tty);

/* The progress callback (bench.h's tb_bench_progress_fn; ud is a struct
 * tb_cli_progress): on a terminal, the line rewritten; else a whole line
 * when the level's time has passed the next multiple of `every`.  Called
 * on the thread that runs the level. */
void tb_cli_progress(void *ud, const struct tb_bench_progress *p);

/* Clears a terminal's line at the level's end; nothing otherwise. */
void tb_cli_progress_end(const struct tb_cli_progress *p);

/* The line's text, without the level's name: "12.3 s  4/20 calls done:
 * 6 waiting for the model, 7 speaking, 3 listening; 21/60 turns; ETA 24 s"
 * (calls), "12.3 s  40/100 done  10 in flight  0 errors  5120 events; ETA
 * 18 s" (requests).  The time left is the time so far times what is left
 * over what is done, of the turns (calls) or the requests; "ETA -" before
 * the first is done, none in --duration mode. */
void tb_cli_progress_text(const struct tb_bench_progress *p, char *buf, size_t len);

#endif
