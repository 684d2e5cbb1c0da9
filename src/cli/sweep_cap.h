/*
 * sweep_cap.h - sweep's TTS capacity shared by its streams: the options
 * (--tts-capacity, --arrivals, --target-ttfa), each stream's arrival, and
 * the capacity search (the smallest N that keeps P95 first audio under a
 * target), its table and JSON.  Option handlers answer as cli.h says.
 */
#ifndef TTSBUF_CLI_SWEEP_CAP_H
#define TTSBUF_CLI_SWEEP_CAP_H

#include <stdint.h>
#include <stdio.h>

#include "optdoc.h"
#include "ttsbuf/sweep.h"

enum { TB_O_TTS_CAPACITY = 600, TB_O_ARRIVALS, TB_O_TARGET_TTFA, TB_O_LLM_CAPACITY };

extern const struct tb_optdoc tb_opt_sweep_cap[];

#define TB_CLI_CAP_ROWS_MAX 4096 /* capacities the search tries at most */

struct tb_cli_cap_row {
    int capacity;
    double ttfa_p95, wait_p95, wait_max;
};

struct tb_cli_sweep_cap {
    size_t capacity;             /* --tts-capacity (0: none) */
    size_t llm_capacity;         /* --llm-capacity (0: none) */
    const char *arrivals;        /* --arrivals, or NULL (burst) */
    int kind;                    /* 0 burst, 1 poisson:R, 2 uniform:W */
    double arg;                  /* R or W */
    double target;               /* --target-ttfa S (0: none) */
    double *arrival;             /* each stream's, once made (owned) */
    struct tb_cli_cap_row *rows; /* the search's (owned) */
    size_t nrows;
    int answer; /* the smallest N that met the target; 0: none did */
};

int tb_cli_sweep_cap_option(struct tb_cli_sweep_cap *c, int opt, const char *arg);

/* After the options and the inputs (n streams): --arrivals and
 * --target-ttfa without what they need are usage errors; the arrivals
 * drawn from seed (stream i's a pure function of seed and i); so's
 * capacity and arrival set.  0, or an error printed (TB_EINVAL,
 * TB_ENOMEM). */
int tb_cli_sweep_cap_apply(struct tb_cli_sweep_cap *c, uint64_t seed, size_t n,
                           struct tb_sweep_opts *so);

/* --target-ttfa: sweeps so's one setting at N = 1, 2, ... until its P95
 * first audio is at most the target (the answer) or no chunk waits any
 * more (more slots change nothing: no answer).  0, or an error printed. */
int tb_cli_sweep_cap_search(struct tb_cli_sweep_cap *c, const struct tb_sweep_opts *so,
                            const struct tb_sweep_input *in, size_t n, unsigned threads);

/* The LLM capacity's waits (with --llm-capacity), then the search's
 * table and answer (with --target-ttfa); nothing without either. */
void tb_cli_sweep_cap_print(FILE *f, const struct tb_cli_sweep_cap *c, const struct tb_sweep *sw);

struct cJSON;
/* The options' keys (tts_capacity, llm_capacity, arrivals) into opts,
 * the streams' llm_capacity_wait_s and the search's "capacity_search"
 * into root, each only when set. */
void tb_cli_sweep_cap_json(struct cJSON *root, struct cJSON *opts, const struct tb_cli_sweep_cap *c,
                           const struct tb_sweep *sw);

void tb_cli_sweep_cap_free(struct tb_cli_sweep_cap *c);

#endif
