/*
 * sweep_axis.h - the value lists of `ttsbuf sweep`'s axes as the user
 * gives them (sweep_axis.c): numbers and ranges (A:B:STEP), the chunk
 * policies, the constant latencies, and the shape of the latency axis.
 *
 * Errors: each function prints its one-line error (cli.h) and returns
 * TB_EINVAL, or TB_ENOMEM.  Ownership: an axis owns v (free it).  One
 * thread.
 */
#ifndef TTSBUF_CLI_SWEEP_AXIS_H
#define TTSBUF_CLI_SWEEP_AXIS_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/sweep.h"
#include "ttsbuf/ttslat.h"

/* One axis as the user gave it. */
struct tb_cli_axis {
    double *v;
    size_t n, cap;
};

/* Appends v (at most TB_SWEEP_AXIS_MAX values); flag names the option in
 * the error. */
int tb_cli_axis_push(struct tb_cli_axis *x, const char *flag, double v);
/* The axis from a list of numbers and ranges A:B:STEP, each within
 * lo..hi (whole numbers when whole); the axis is emptied first. */
int tb_cli_axis_list(struct tb_cli_axis *x, const char *flag, const char *arg, double lo, double hi,
                     int whole);
/* tb_cli_axis_list of any numbers (whole 0). */
int tb_cli_axis_numbers(struct tb_cli_axis *x, const char *flag, const char *arg, double lo,
                        double hi);
/* --tts-latency's constants (a distribution is refused, naming
 * --tts-latency-p50). */
int tb_cli_axis_latency(struct tb_cli_axis *x, const char *arg);
/* --chunk's policies ("all": every one not time-based; a time-based one
 * is refused, naming sim). */
int tb_cli_axis_chunks(struct tb_cli_axis *x, const char *arg);
/* --tts-latency-shape SHAPE (lognormal:ratio=R or uniform:width=W) into
 * t's shape and parameter. */
int tb_cli_axis_shape(const char *arg, struct tb_sweep_tts *t);
/* The shape of a preset's latency distribution into t (its median in
 * *p50): 0, or 1 when it has none to sweep (a constant, a FILE's values,
 * or lat NULL); prints nothing. */
int tb_cli_axis_preset_shape(const struct tb_ttslat *lat, struct tb_sweep_tts *t, double *p50);

/* --seeds A:B: A <= B, B - A < 10^6.  0, or TB_EINVAL printed. */
int tb_cli_axis_seeds(const char *arg, uint64_t *lo, uint64_t *hi);

#endif
