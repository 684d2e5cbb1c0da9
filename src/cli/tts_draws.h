/*
 * tts_draws.h - --tts-draws M and --target-gapless X of sim and run
 * (tts_draws.c): the stream replayed under M independent draws of a
 * random TTS latency (draws.h), reported as distributions after the run's
 * own report ("tts_draws" in the JSON: tb_cli_json_draws, jsonout.h).  Option handlers answer as
 * cli.h says.
 */
#ifndef TTSBUF_CLI_TTS_DRAWS_H
#define TTSBUF_CLI_TTS_DRAWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "optdoc.h"
#include "ttsbuf/draws.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttslat.h"

enum { TB_O_TTS_DRAWS = 520, TB_O_TTS_TARGET };

#define TB_CLI_DRAWS_TARGET_DEFAULT 0.95

/* Their rows, after tb_opt_tts in sim's and run's sections. */
extern const struct tb_optdoc tb_opt_tts_draws[3];

struct tb_cli_draws {
    size_t draws;        /* --tts-draws M; 0: not asked */
    double target;       /* --target-gapless X (0: not given, the default) */
    int ran;             /* res holds the draws */
    const char *not_run; /* asked for and not run: why (the report says so) */
    struct tb_draws_result res;
};

/* One of the two options: an option handler (cli.h). */
int tb_cli_draws_option(struct tb_cli_draws *d, int c, const char *arg);

/* After the latency is resolved: --tts-draws needs a latency that draws
 * (seeded: lognormal, uniform, empirical; spec names the one given), and
 * --target-gapless needs --tts-draws.  0, or TB_EINVAL printed. */
int tb_cli_draws_check(const struct tb_cli_draws *d, int seeded, const char *spec);

/*
 * tb_cli_draws_run - when asked for: the draws over stream s played with
 * o (the rate model), latencies from lat and base seed.  played is the
 * run's result and whatif whether its what-if numbers were measured
 * (report.h).  The draws are not run on a stream cut off or failed, on
 * one with nothing to play, nor when the run's ring filled (backpressure,
 * a forced cut or start: the run played the ring's times, not the
 * stream's that the draws replay); not_run says which.  A progress line
 * on a terminal unless quiet; cmd names the command in it.  0, or an
 * error printed (TB_ENOMEM).
 */
int tb_cli_draws_run(struct tb_cli_draws *d, const char *cmd, const struct tb_stream *s,
                     const struct tb_sim_opts *o, const struct tb_ttslat *lat, uint64_t seed,
                     const struct tb_sim_result *played, int whatif, int quiet);

/* The human report's part (after the run's own), when asked for. */
void tb_cli_draws_human(FILE *f, const struct tb_cli_draws *d, uint64_t seed);

#endif
