/*
 * sweep_rec.h - what `ttsbuf sweep` adopts of its recordings
 * (sweep_rec.c), as `ttsbuf sim` does of one: a trace's modelled end of
 * turn (its header's eou_s, per stream), leading silence
 * (options.tts_lead) and constant TTS latency (bench's
 * options.tts_latency_s), each only when no option gives it; and the
 * report's line that says so.  And the refusal of a measured TTS without
 * a model.  One thread.
 */
#ifndef TTSBUF_CLI_SWEEP_REC_H
#define TTSBUF_CLI_SWEEP_REC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sweep_axis.h"
#include "turn_opts.h"
#include "ttsbuf/sweep.h"

struct tb_cli_sweep_rec {
    const struct tb_sweep_input *in; /* the swept streams, for the eou */
    size_t n;
    size_t eou;  /* streams whose recorded eou_s is adopted (0: none) */
    size_t tool; /* tool turns (a recorded tool_s), whose tool wait is not swept */
    int lead;    /* the recordings' --tts-lead adopted */
    int latency; /* their constant --tts-latency adopted (the axis's value) */
    char lead_spec[256], latency_spec[256];
    /* A model the recordings give but sweep cannot adopt (they differ, or
     * a latency that is not a constant): its option's name, or NULL. */
    const char *skipped;
};

/* A recording that kept what a real TTS did (its "tts" lines) is not
 * swept on a TTS it did not have: sweep models the TTS and does not
 * replay a measured one (sim --trace does), so without a TTS model option
 * (model 0) its first audio and gaps would silently come from a latency
 * of 0.  With one, the sweep is the "what if" that option asks.  0, or
 * TB_EINVAL printed. */
int tb_cli_sweep_rec_measured(const struct tb_sweep_input *in, size_t n, int model);

/*
 * tb_cli_sweep_rec_adopt - r from the n swept streams in (r keeps in):
 * without --eou (turn->eou NULL), each stream's recorded eou_s; without
 * --tts-lead, the lead the recordings agree on (set on turn as if given,
 * lead_recorded); with tts_given 0 (no TTS option), the constant latency
 * they agree on, pushed onto lat (the --tts-latency axis).  0, or an
 * option's error printed (TB_EINVAL, TB_ENOMEM).
 */
int tb_cli_sweep_rec_adopt(struct tb_cli_sweep_rec *r, const struct tb_sweep_input *in, size_t n,
                           struct tb_cli_turn *turn, struct tb_cli_axis *lat, int tts_given);

/* The eou_at of tb_sweep_opts (ud: a tb_cli_sweep_rec): stream k's
 * (1-based) recorded end of turn, 0 where its recording has none. */
double tb_cli_sweep_rec_eou(void *ud, uint32_t k);

/* The report's line of what was adopted ("  as recorded (as sim plays
 * them): ..."), and of a model not adopted; nothing when neither. */
void tb_cli_sweep_rec_line(FILE *f, const struct tb_cli_sweep_rec *r);

#endif
