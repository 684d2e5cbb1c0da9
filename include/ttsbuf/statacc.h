/*
 * statacc.h - a statistics block (stats.h) built one sample at a time, in
 * bounded memory: the samples are kept exactly up to TB_STATACC_EXACT,
 * then folded into a fixed log-bucketed histogram (HDR-style).
 *
 * Up to TB_STATACC_EXACT samples, tb_statacc_stats is tb_stats_of on
 * them: the same bits.  Past it, count, min and max stay exact, mean and
 * std are running sums (Welford: exact up to rounding, in arrival order),
 * and each percentile is stats.h's interpolation between the two closest
 * ranks, each rank's value taken as its bucket's geometric middle clamped
 * to [min, max].  Buckets are 1/TB_STATACC_SUB octave wide on each sign,
 * with zero counted apart, so every rank's value, and so the percentile
 * when both ranks have one sign, is within TB_STATACC_REL_ERR of the exact
 * one (2^(1/256) - 1 = 0.271%) for magnitudes in [2^-32, 2^32]; outside
 * it a value is counted in the end bucket.  The histogram takes 1 KiB a
 * page, an octave of one sign, allocated when a sample first falls in it
 * (at most 128 KiB).
 */
#ifndef TTSBUF_STATACC_H
#define TTSBUF_STATACC_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/stats.h"

#define TB_STATACC_EXACT 4096 /* samples kept exactly */
#define TB_STATACC_SUB 128     /* buckets per octave */
#define TB_STATACC_OCT 32      /* octaves each side of 1 */
#define TB_STATACC_NB ((size_t)2 * TB_STATACC_OCT * TB_STATACC_SUB) /* buckets a sign */
#define TB_STATACC_REL_ERR 0.0028 /* the bound stated: 2^(1/256) - 1, rounded up */

struct tb_statacc {
    size_t n;           /* samples added */
    double *v;          /* the samples while n <= TB_STATACC_EXACT, else NULL */
    size_t cap;         /* v's room */
    uint64_t **h;       /* NULL while exact; else the 2 * TB_STATACC_NB
                         * counts ([0, NB) negative by magnitude, [NB, 2 NB)
                         * positive) in pages of an octave, each NULL until
                         * a sample falls in it */
    uint64_t zeros;     /* histogram: samples equal to 0 */
    double mean, m2;    /* Welford's running mean and sum of squared deviations */
    double min, max;
};

void tb_statacc_init(struct tb_statacc *a);
void tb_statacc_free(struct tb_statacc *a); /* then as after init; NULL: no-op */
/* Adds sample x (not NaN).  0 or TB_ENOMEM (a is then unchanged). */
int tb_statacc_add(struct tb_statacc *a, double x);
/* Adds every sample of b to a (b unchanged).  0 or TB_ENOMEM. */
int tb_statacc_merge(struct tb_statacc *a, const struct tb_statacc *b);
/* Whether a's percentiles are exact (it kept every sample). */
int tb_statacc_exact(const struct tb_statacc *a);
/* The block of a's samples (stats.h; count 0: all NaN).  Sorts a's kept
 * samples in place. */
void tb_statacc_stats(struct tb_statacc *a, struct tb_stats *out);

#endif
