/*
 * tts_opts.h - the TTS stage's options shared by the commands that play a
 * stream (tts_opts.c): --tts-latency SPEC, --tts-seed, --tts-connect,
 * --tts-concurrency, --tts-rtf, --tts-output and --tts PRESET (--tts list
 * lists the presets); the latency object their
 * spec makes; what the reports say about them.  Option handlers answer as
 * cli.h says.
 */
#ifndef TTSBUF_CLI_TTS_OPTS_H
#define TTSBUF_CLI_TTS_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "optdoc.h"
#include "tts_draws.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/ttslat.h"

enum {
    TB_O_TTS_LAT = 500,
    TB_O_TTS_SEED,
    TB_O_TTS_CONNECT,
    TB_O_TTS_CONC,
    TB_O_TTS_RTF,
    TB_O_TTS_PRESET,
    TB_O_TTS_OUTPUT,
};

#define TB_CLI_TTS_CONC_MAX 1024 /* --tts-concurrency's upper bound */
#define TB_CLI_TTS_RTF_MAX 100.0 /* --tts-rtf's upper bound */

/* Their rows, placed in tb_opt_playout (options.c). */
#define TB_CLI_TTS_ROWS_N 7
extern const struct tb_optdoc tb_opt_tts[TB_CLI_TTS_ROWS_N + 1];

/* The options as given, and what they resolved to (tb_cli_tts_apply). */
struct tb_cli_tts {
    const char *latency; /* --tts-latency SPEC, or NULL */
    const char *preset;  /* --tts PRESET, or NULL */
    uint64_t seed;       /* --tts-seed (default 0) */
    int seed_set, connect_set, conc_set, rtf_set, output_set;
    double connect, rtf;
    int concurrency;
    int output;                         /* enum tb_tts_output: --tts-output, else the preset's */
    int any;                            /* an option of the stage beyond a constant latency */
    struct tb_ttslat *lat;              /* the spec's latency (NULL: a constant) */
    char spec[TB_TTSLAT_SPEC_MAX + 64]; /* the canonical spec used */
    int seeded;                         /* the draws depend on the seed */
    /* the chunk policy: --chunk, --max-buffer-delay, --idle-flush given
     * (options.c); the preset's policy used as the default */
    int chunk_set, delay_set, idle_set;
    int chunk_from_preset;
    struct tb_cli_draws draws; /* --tts-draws, --target-gapless (sim, run) */
};

void tb_cli_tts_init(struct tb_cli_tts *t);
void tb_cli_tts_free(struct tb_cli_tts *t); /* the latency object */

/* One TTS option: an option handler (cli.h).  --tts list prints the
 * presets (tb_cli_tts_presets_print) on stdout: TB_CLI_DONE. */
int tb_cli_tts_option(struct tb_cli_tts *t, int c, const char *arg);

/* A latency spec read (tb_ttslat_create) for option opt: 0 and *out, or
 * the error printed as "OPT: detail" (TB_EINVAL for an unreadable FILE,
 * else the spec's code).  --tts-latency's and the turn's options'. */
int tb_cli_ttslat_create(const char *opt, const char *spec, uint64_t seed, struct tb_ttslat **out);

/*
 * tb_cli_tts_apply - after the options: the preset's figures where no
 * option overrides them (a first-byte latency the preset does not know,
 * or a real-time factor with a whole output, refuses with TB_EINVAL
 * naming the option to give; another figure it does not know leaves the
 * default, and a warning line on stderr says so), its output mode where
 * --tts-output does not say, the chunk policy the
 * preset implies where --chunk is not given (seg; ElevenLabs' schedule,
 * Cartesia's buffering with its delay, Piper's sentences; none where the
 * client chooses the chunks), the latency spec read (its FILE too) with
 * the seed, and the playout options o set: the constant latency for a
 * constant spec, else the hook.  0, or an error printed (TB_EINVAL,
 * TB_ERANGE: usage, also --max-buffer-delay or --idle-flush with another
 * policy; TB_EIO, TB_EFORMAT, TB_EEMPTY, TB_ETOOBIG: the spec's FILE;
 * TB_ENOMEM).
 */
int tb_cli_tts_apply(struct tb_cli_tts *t, struct tb_seg_opts *seg, struct tb_playout_opts *o);

/* The one-line description the human report prints after the options
 * ("tts: latency=SPEC seed=N connect=S concurrency=N rtf=R output=O
 * preset=P"),
 * when the stage's options were given.  Prints nothing otherwise. */
void tb_cli_tts_line(FILE *f, const struct tb_cli_tts *t);

/* --help's table of the TTS presets: name, latency, concurrency, RTF,
 * output and the latency's source, a line each. */
void tb_cli_usage_tts_presets(FILE *f);

/* --tts list: the same table with each preset's engine and note. */
void tb_cli_tts_presets_print(FILE *f);

/* "stream" or "whole": enum tb_tts_output's name (as --tts-output takes
 * it and the outputs write it). */
const char *tb_cli_tts_output_name(int output);

#endif
