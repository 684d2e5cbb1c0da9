/*
 * cmd_import.h - another tool's benchmark results as the streams a command
 * plays (cmd_import.c): `sim --import` (one request played, or a table of
 * them all) and `sweep --import` (sources.c).  Helpers as cli.h says.
 */
#ifndef TTSBUF_CLI_CMD_IMPORT_H
#define TTSBUF_CLI_CMD_IMPORT_H

#include <stddef.h>

#include "options.h"
#include "report.h"
#include "ttsbuf/import.h"
#include "ttsbuf/stream.h"

/* --import's companions (sim and sweep): --run N and --chars-per-token X. */
struct tb_cli_import_opts {
    unsigned run;           /* 0: every run; N: only run N of a file of several */
    double chars_per_token; /* text-less imports (TB_IMPORT_CPT_DEFAULT) */
    int quiet;              /* sim -q: no table of several requests */
};
void tb_cli_import_opts_init(struct tb_cli_import_opts *io);

/* Parses --run / --chars-per-token (c is the option's id: 'r' or 'c').
 * 0 or an error (printed). */
int tb_cli_import_option(struct tb_cli_import_opts *io, int c, const char *arg);

/* Loads [FORMAT:]FILE into *im (tb_import_init'ed here; the caller frees
 * it, whatever this returns) with io's settings; *path is the file.  0, or
 * (printed) TB_EINVAL for a file that cannot be read as its format or a
 * --run it does not have, TB_ENOMEM. */
int tb_cli_import_load(const char *spec, const struct tb_cli_import_opts *io, struct tb_import *im,
                       const char **path);

/* How an import of spec was read, for the report: the format when it was
 * told from the content, estimated speech time, not streamed.  "" when
 * there is nothing to say. */
void tb_cli_import_note(const struct tb_import *im, const char *spec, char *buf, size_t len);

/* sim --import SPEC: loads the file; with one request to play (the only
 * one, or `request` >= 0) moves it into *s and returns 0; with several and
 * request < 0 prints the per-request table (or JSON lines) and returns
 * TB_CLI_DONE with the command's verdict in *verdict (TB_EXIT_FAILED when
 * every request failed, TB_EXIT_GATE for --fail-on-underrun).  Else an
 * error (printed); TB_CLI_EFAILED when the one request has nothing to
 * play. */
int tb_cli_import(const struct tb_cli_common *a, const char *spec,
                  const struct tb_cli_import_opts *io, long request, struct tb_stream *s,
                  struct tb_report_src *src, char *label, size_t labellen, int *verdict);

#endif
