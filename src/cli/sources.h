/*
 * sources.h - where a command's token streams come from (sources.c), the
 * one place a new kind of source is added: the one stream `sim` plays
 * (and the mock's under `run` and `bench`), from --trace, --synth or
 * --preset; and many streams with names for `ttsbuf sweep` (traces,
 * directories and globs of traces, synthetic streams over a seed range,
 * presets, imports), which it takes as an array of struct
 * tb_sweep_input.  Helpers as cli.h says.
 */
#ifndef TTSBUF_CLI_SOURCES_H
#define TTSBUF_CLI_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "report.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/sweep.h"

/* The operands of sim and serve (argv[first..argc)): none, or one FILE,
 * taken as --trace FILE.  0, or TB_EINVAL (printed) for more than one. */
int tb_cli_source_operand(struct tb_cli_common *a, const char *cmd, int argc, char **argv,
                          int first);

/* Loads the chosen source (default_preset when none was given) into s.
 * 0, or an error (printed): TB_EINVAL for a source that cannot be read or
 * parsed, TB_ENOMEM.  label holds the source's name for the report. */
int tb_cli_load_source(const struct tb_cli_common *a, const char *default_preset,
                       struct tb_stream *s, struct tb_report_src *src, char *label,
                       size_t labellen);

/* The synthetic spec behind the chosen source (after tb_cli_load_source
 * loaded it): 1 and *spec for --synth or a preset, 0 for a trace (a
 * recording has no seed to draw others from). */
int tb_cli_source_spec(const struct tb_cli_common *a, const char *default_preset,
                       struct tb_synth_spec *spec);

/* Prints the error rc, err of loading the trace at path; when the file is
 * another tool's benchmark result (tb_import_detect), adds that it is and
 * how to read it: `ttsbuf CMD --import PATH` (cmd: "sim" or "sweep").
 * Returns the helper's code: TB_EINVAL (bad input), or TB_ENOMEM. */
int tb_cli_trace_error(const char *cmd, const char *path, int rc, const char *err);

struct tb_cli_source {
    char *name; /* a file, or "synth:SPEC" / "preset:NAME,seed=N" */
    struct tb_stream s;
};

struct tb_cli_sources {
    struct tb_cli_source *v;
    size_t n, cap;
};

void tb_cli_sources_init(struct tb_cli_sources *l);
void tb_cli_sources_free(struct tb_cli_sources *l);

/*
 * Adds a loaded stream under a copy of name (the stream is moved in: the
 * caller's copy must not be freed).  0, or TB_ETOOBIG (over
 * TB_SWEEP_INPUTS_MAX streams) / TB_ENOMEM (printed).
 */
int tb_cli_sources_add(struct tb_cli_sources *l, const char *name, struct tb_stream *s);

/* A trace file, every *.jsonl in a directory (sorted), or a glob pattern
 * (runs/?*.jsonl, quoted so the shell leaves it).  A trace that holds no
 * event (the recording of a request that failed) is added, to be listed.
 * 0 or an error (printed). */
int tb_cli_sources_add_path(struct tb_cli_sources *l, const char *arg);

/* A synthetic spec (preset != 0: a preset name) for every seed in
 * seed_lo..seed_hi, or once with its own seed when !seeds.  0 or an error
 * (printed). */
int tb_cli_sources_add_synth(struct tb_cli_sources *l, const char *arg, int preset, int seeds,
                             uint64_t seed_lo, uint64_t seed_hi);

/* Every request of a benchmark tool's result file, "FORMAT:FILE" as for
 * `sim --import` (requests the tool recorded as failed, or with no
 * content, are skipped; a file of nothing else is TB_CLI_EFAILED).  0 or
 * an error (printed). */
struct tb_cli_import_opts;
int tb_cli_sources_add_import(struct tb_cli_sources *l, const char *spec,
                              const struct tb_cli_import_opts *io);

/*
 * tb_cli_source_standing - where a stream stands in a sweep (enum
 * tb_end_class): COMPLETE or UNKNOWN (a trace without an end line, read
 * as complete) are swept; INCOMPLETE (cut off) and FAILED (an error, or
 * a trace that holds no event) are listed beside the statistics, never in
 * them.
 */
int tb_cli_source_standing(const struct tb_cli_source *src);

/* How many sources stand where (the sweep's counts). */
struct tb_cli_standing {
    size_t swept, unknown_end; /* unknown_end: among the swept */
    size_t incomplete, failed;
};

/* The swept sources as sweep inputs (borrowing names and streams), their
 * count in st->swept and every count in *st; NULL when out of memory.
 * Caller frees the array. */
struct tb_sweep_input *tb_cli_sources_inputs(const struct tb_cli_sources *l,
                                             struct tb_cli_standing *st);

#endif
