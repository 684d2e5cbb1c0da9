/*
 * turn_opts.h - the turn's wait (turnlat.h): --eou SPEC, the caller's end
 * of speech to the request, and --tts-lead SPEC, a chunk's leading silence
 * where the TTS is modelled (turn_opts.c); their rows, the models they
 * make, and what the reports say of them.  Option handlers answer as cli.h
 * says.
 */
#ifndef TTSBUF_CLI_TURN_OPTS_H
#define TTSBUF_CLI_TURN_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "optdoc.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/ttslat.h"

enum { TB_O_EOU = 560, TB_O_TTS_LEAD };

#define TB_CLI_TURN_ROWS_N 2
extern const struct tb_optdoc tb_opt_turn[TB_CLI_TURN_ROWS_N + 1];

struct tb_cli_turn {
    const char *eou, *lead;    /* the specs as given, or NULL */
    struct tb_ttslat *eou_lat; /* made by tb_cli_turn_apply */
    struct tb_ttslat *lead_lat;
    char eou_spec[TB_TTSLAT_SPEC_MAX + 64]; /* canonical; "0" by default */
    char lead_spec[TB_TTSLAT_SPEC_MAX + 64];
    int lead_recorded; /* lead is a recording's (sim adopts it), not an option */
    /* The TTS latency is a recording's (sim and sweep adopt it, as the
     * lead): its spec as recorded, said beside the TTS's first byte. */
    int latency_recorded;
    char latency_spec[256];
};

void tb_cli_turn_init(struct tb_cli_turn *t);
void tb_cli_turn_free(struct tb_cli_turn *t);

int tb_cli_turn_option(struct tb_cli_turn *t, int c, const char *arg);

/*
 * tb_cli_turn_apply - after the options: both specs read (seeded with
 * seed, the --tts-seed), o's end of turn set to turn 1's draw and its
 * eou_at hook to the spec (a command of many turns draws turn k), its
 * leading silence to the --tts-lead spec.  0, or an error printed (as
 * tb_cli_tts_apply's spec errors).
 */
int tb_cli_turn_apply(struct tb_cli_turn *t, uint64_t seed, struct tb_sim_opts *o);

/*
 * tb_cli_turn_stream - the end of turn of the stream s played: without
 * --eou, the one its recording modelled (a trace header's eou_s: the
 * model is then said as "recorded"); else the spec's draw for its turn
 * (turn request + 1 for a request of bench's, 1 otherwise).  Sets o's
 * eou_s, and with --eou s's, which a --record of it keeps.
 */
struct tb_stream;
struct cJSON;
void tb_cli_turn_stream(struct tb_cli_turn *t, struct tb_stream *s, struct tb_sim_opts *o);

/* The models given, in a command's options object (bench's: they must
 * match to merge, and compare names them when they differ): "eou" and
 * "tts_lead", each its canonical spec, only when given. */
void tb_cli_turn_json_opts(struct cJSON *opts, const struct tb_cli_turn *t);

/* Refuses --tts-lead where the leading silence is measured (a live TTS or
 * a trace's TTS records, named by what): 0 or TB_EINVAL, printed. */
int tb_cli_turn_measured(const struct tb_cli_turn *t, const char *what);

/* The report's "where the wait went" block: each part, v2v last, and the
 * models' specs ("--" for a part not measured or modelled); o the
 * options played (its lead_at says whether the lead was measured). */
void tb_cli_turn_lines(FILE *f, const struct tb_cli_turn *t, const struct tb_sim_opts *o,
                       const struct tb_turn_lat *l);

/* The "latency" object of a JSON report: the parts (null where NAN), the
 * tool's wait (tool_s: null, a replay has none), the chunk j* and the
 * models.  0 or TB_ENOMEM. */
struct cJSON;
int tb_cli_turn_json(struct cJSON *root, const struct tb_cli_turn *t, const struct tb_sim_opts *o,
                     const struct tb_turn_lat *l);

/* The one-line warning on stderr that ntool of the n turns played were
 * tool turns (a bench trace header's tool_s) whose tool wait a replay
 * leaves out of v2v (cmd: "sim", "sweep"; tool_s: the one turn's, or
 * NAN); nothing when ntool is 0. */
void tb_cli_turn_tool_warn(const char *cmd, size_t ntool, size_t n, double tool_s);

#endif
