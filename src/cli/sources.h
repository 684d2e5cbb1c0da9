/*
 * sources.h - many token streams with names, loaded for `ttsbuf sweep`:
 * the one place a new kind of source is added (traces, directories and
 * globs of traces, synthetic streams over a seed range, presets; an
 * importer adds its own tb_cli_sources_add_* and nothing else changes).
 * The sweep takes the list as an array of struct tb_sweep_input.
 */
#ifndef TTSBUF_CLI_SOURCES_H
#define TTSBUF_CLI_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/stream.h"
#include "ttsbuf/sweep.h"

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
 * caller's copy must not be freed).  Returns -1 to go on, or an exit code
 * (the error is printed).  Importers call this.
 */
int tb_cli_sources_add(struct tb_cli_sources *l, const char *name, struct tb_stream *s);

/* A trace file, every *.jsonl in a directory (sorted), or a glob pattern
 * (runs/?*.jsonl, quoted so the shell leaves it).  A trace that holds no
 * event (the recording of a request that failed) is added, to be listed.
 * -1 or an exit code. */
int tb_cli_sources_add_path(struct tb_cli_sources *l, const char *arg);

/* A synthetic spec (preset != 0: a preset name) for every seed in
 * seed_lo..seed_hi, or once with its own seed when !seeds.  -1 or an exit
 * code. */
int tb_cli_sources_add_synth(struct tb_cli_sources *l, const char *arg, int preset, int seeds,
                             uint64_t seed_lo, uint64_t seed_hi);

/* Every request of a benchmark tool's result file, "FORMAT:FILE" as for
 * `sim --import` (requests the tool recorded as failed, or with no
 * content, are skipped; so is a file of nothing else: an error).  -1 or an
 * exit code. */
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
