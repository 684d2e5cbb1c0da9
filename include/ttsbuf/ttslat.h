/*
 * ttslat.h - a TTS engine's first-byte latency per chunk (L_j): a
 * constant, a distribution or a list of values, as a pure function of
 * (seed, j).
 *
 * A spec is one of
 *   S                       the constant S seconds (0 <= S <= TB_TTSLAT_MAX)
 *   lognormal:p50=A,p90=B   log-normal with median A and 90th percentile B
 *                           (TB_TTSLAT_LOGNORMAL_MIN <= A <= B <= TB_TTSLAT_MAX;
 *                           the keys in either order, each once):
 *                           mu = ln(A), sigma = (ln(B) - ln(A)) / z_0.9,
 *                           z_0.9 = TB_TTSLAT_Z90 = 1.2815515655446004 (the
 *                           standard normal's 90th percentile); a draw above
 *                           TB_TTSLAT_MAX is TB_TTSLAT_MAX (a share
 *                           1 - Phi((ln(TB_TTSLAT_MAX) - mu) / sigma) of the
 *                           draws: 2e-14 for p50=1,p90=2)
 *   uniform:A..B            uniform on [A, B] (0 <= A <= B <= TB_TTSLAT_MAX)
 *   empirical:FILE          a value of FILE drawn at random, each line equally
 *                           likely (the file's empirical distribution)
 *   list:FILE               chunk j takes FILE's j-th value, cycling: value
 *                           ((j - 1) mod n) + 1 of n (no seed involved)
 * FILE holds one value in seconds a line (0 <= v <= TB_TTSLAT_MAX, decimal
 * as strtod reads it, blanks around it ignored); empty lines and lines
 * whose first non-blank character is '#' are skipped.  At most
 * TB_TTSLAT_FILE_MAX bytes; at least one value.  "-" is standard input.
 *
 * Draws: chunk j's draw uses the 64-bit outputs number 2j - 1 and 2j of
 * splitmix64 started at splitmix64's mix of the seed (a counter-based
 * generator: output n is mix(mix(seed) + n * 0x9E3779B97F4A7C15)), so L_j
 * depends on (seed, j) only: not on how often, or in which order, chunks
 * are asked for (the minimum-TPS search replays the stream many times).
 * A uniform u in (0, 1) comes from the first output's top 53 bits; the
 * log-normal's normal deviate is Box-Muller's cos branch of both.
 *
 * Ownership: tb_ttslat_create/tb_ttslat_destroy; the object is read-only
 * after create, so any number of threads may call tb_ttslat_at on it.
 */
#ifndef TTSBUF_TTSLAT_H
#define TTSBUF_TTSLAT_H

#include <stddef.h>
#include <stdint.h>

#define TB_TTSLAT_MAX 60.0               /* seconds: the largest latency a spec may give */
#define TB_TTSLAT_LOGNORMAL_MIN 0.001    /* seconds: the smallest log-normal median */
#define TB_TTSLAT_FILE_MAX (1u << 20)    /* bytes of an empirical: or list: FILE */
#define TB_TTSLAT_SPEC_MAX 4096          /* bytes of a spec's text, FILE's path included */
#define TB_TTSLAT_Z90 1.2815515655446004 /* the standard normal's 90th percentile */

enum tb_ttslat_kind {
    TB_TTSLAT_CONST = 0,
    TB_TTSLAT_LOGNORMAL,
    TB_TTSLAT_UNIFORM,
    TB_TTSLAT_EMPIRICAL,
    TB_TTSLAT_LIST
};

/* What a report says about the latency used.  Every kind's quantiles are
 * known: a constant's are itself; the log-normal's are A and B; a
 * uniform's A + p (B - A); FILE's (empirical and list alike) are the
 * values' own, the smallest v with at least a share p of the values <= v. */
struct tb_ttslat_info {
    enum tb_ttslat_kind kind;
    int seeded;      /* 1 when the draws depend on the seed (lognormal, uniform, empirical) */
    uint64_t seed;   /* as given to create (recorded even when not seeded) */
    double p50, p90; /* the distribution's median and 90th percentile, seconds */
    double lo, hi;   /* every value tb_ttslat_at returns lies in [lo, hi] */
    size_t values;   /* FILE's values (empirical, list); 0 for the others */
};

struct tb_ttslat;

/*
 * tb_ttslat_create - the latency of spec (see above) with the given seed;
 * reads FILE for empirical: and list:.  Returns 0 and *out (caller
 * destroys); TB_EINVAL (not a spec: an unknown kind or key, a missing or
 * repeated key, not a number, NaN or infinite) or TB_ERANGE (a value
 * outside its range, p90 < p50, A > B), each naming the key and its
 * allowed range; TB_EIO (FILE cannot be read: "FILE: <strerror>");
 * TB_EFORMAT (a line of FILE that is not a value in range:
 * "FILE:LINE: ..."; a NUL byte); TB_EEMPTY (FILE has no value);
 * TB_ETOOBIG (FILE over TB_TTSLAT_FILE_MAX bytes, spec over
 * TB_TTSLAT_SPEC_MAX); TB_ENOMEM.  One line of detail in err.  Any thread.
 */
int tb_ttslat_create(const char *spec, uint64_t seed, struct tb_ttslat **out, char *err,
                     size_t errlen);

/*
 * tb_ttslat_create_mem - tb_ttslat_create with FILE's contents given:
 * data[0..len) (not NUL-terminated) stands for the file the spec names
 * (the path is kept for messages and the canonical text, never opened).
 * data must be NULL for the kinds without a FILE (TB_EINVAL otherwise).
 * Same returns, but never TB_EIO.  For tests and fuzzing; any thread.
 */
int tb_ttslat_create_mem(const char *spec, const char *data, size_t len, uint64_t seed,
                         struct tb_ttslat **out, char *err, size_t errlen);

/* Frees t.  NULL is a no-op. */
void tb_ttslat_destroy(struct tb_ttslat *t);

/*
 * tb_ttslat_at - chunk j's first-byte latency in seconds (j >= 1; j = 0
 * is not a chunk but gets a value in range all the same), ud a
 * struct tb_ttslat *: the signature of struct tb_playout_opts's
 * tts_latency_at hook.  Finite, within [info.lo, info.hi], the same for
 * the same (spec, seed, j) every time.  No allocation; any thread.
 */
double tb_ttslat_at(void *ud, uint32_t j);

/*
 * Draws: the same latency replayed with other seeds (ttsbuf's --tts-draws).
 * Draw d's seed is tb_ttslat_draw_seed(seed, d) = seed + d x
 * 0x9E3779B97F4A7C15 mod 2^64 (splitmix64's d-th state from the seed):
 * draw 0 is the seed itself, and draw d's latencies are those of a single
 * run with --tts-seed set to that value.  The step is splitmix64's odd
 * gamma, so the M seeds of one call are distinct, and two base seeds share
 * a draw's seed only when they differ by a multiple of the gamma: not for
 * any two nearby seeds, as seed + d would do.
 */
uint64_t tb_ttslat_draw_seed(uint64_t seed, uint64_t d);

/* t with another seed, without copying FILE's values: a plain value that
 * borrows t (t must outlive it).  Fields are private. */
struct tb_ttslat_seeded {
    const struct tb_ttslat *t;
    uint64_t key;
};

/* v: t's latency drawn with seed (tb_ttslat_seeded_at gives what
 * tb_ttslat_at gives for t created with that seed).  Any thread. */
void tb_ttslat_seeded_init(struct tb_ttslat_seeded *v, const struct tb_ttslat *t, uint64_t seed);

/* tb_ttslat_at for a struct tb_ttslat_seeded *ud: the tts_latency_at
 * hook's signature.  No allocation; any thread. */
double tb_ttslat_seeded_at(void *ud, uint32_t j);

/*
 * tb_ttslat_format - the canonical text of t's spec into buf (shortest
 * round-trip numbers; lognormal's keys as p50, p90): it parses back to
 * the same latency with the same seed.  FILE is named as given, so a
 * report records which file; its values are not in the text.  Returns
 * snprintf's count (>= len: truncated; TB_TTSLAT_SPEC_MAX + 64 bytes
 * always suffice).
 */
int tb_ttslat_format(const struct tb_ttslat *t, char *buf, size_t len);

/* What t is (see struct tb_ttslat_info).  Any thread. */
void tb_ttslat_info(const struct tb_ttslat *t, struct tb_ttslat_info *info);

/* The kind's name as specs write it ("constant" for a bare number). */
const char *tb_ttslat_kind_name(enum tb_ttslat_kind kind);

#endif
