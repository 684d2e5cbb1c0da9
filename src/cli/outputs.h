/*
 * outputs.h - writing what a command outputs (outputs.c).  Helpers as
 * cli.h says: 0 to go on, or a TB_E* code once the error is printed.
 */
#ifndef TTSBUF_CLI_OUTPUTS_H
#define TTSBUF_CLI_OUTPUTS_H

#include <stdio.h>

#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"

/* Before the work (a paid request above all): can path be written?  "-"
 * (standard output) can.  An existing path must be a writable
 * non-directory; a new one is created and removed again (a probe: the real
 * write comes after the work).  0, or TB_EINVAL (printed: "OPT: PATH:
 * reason"). */
int tb_cli_output_probe(const char *opt, const char *path);

/* Opens path ("-": standard output) for writing what opt asks for: the
 * FILE, or NULL with *rc TB_EINVAL (printed: "OPT: cannot write PATH:
 * reason"): an output the command line names that cannot be used. */
FILE *tb_cli_output_open(const char *opt, const char *path, int *rc);

/* 1 when standard output has failed because its reader went away (EPIPE,
 * or a pipe with no reader left): not the user's error, the output ends
 * quietly. */
int tb_cli_stdout_gone(void);

/* fflush(stdout) that keeps the errno of the first failed flush for
 * tb_cli_stdout_errno (by exit, errno has long been overwritten), or of a
 * failed write just before it (stdout's error flag set, errno not yet
 * overwritten): 0 or EOF, as fflush. */
int tb_cli_flush_stdout(void);

/* The errno of the first failed tb_cli_flush_stdout, or 0. */
int tb_cli_stdout_errno(void);

/*
 * tb_cli_out_close - ends a write to path that a writer returned rc for:
 * closes f (flushes it when it is stdout).  0, or when rc or the close
 * failed TB_EIO (TB_ENOMEM when the writer ran out of memory), printed:
 * "FLAG: writing PATH failed: REASON", REASON the system's for an I/O
 * error (errno of the failed write or close: "No space left on device"),
 * not a generic "input/output error".  Standard output whose reader went
 * away is not an error.
 */
int tb_cli_out_close(const char *flag, const char *path, FILE *f, int rc);

/* Writes the stream as a trace to path ("-": stdout), its header naming
 * command and this run's start unless the stream kept its own from a
 * trace, and o when this command made the recording (with a measured TTS
 * log, voice_model "measured" and tts_latency_s null, as the report
 * says), with the modelled TTS (tts, its options.tts) and the leading
 * silence (turn's --tts-lead, options.tts_lead) that `sim` of the
 * recording replays; either may be NULL.  0 or TB_EIO / TB_ENOMEM
 * (printed). */
struct tb_cli_tts;
struct tb_cli_turn;
int tb_cli_record(const char *path, const char *command, const struct tb_sim_opts *o,
                  const struct tb_cli_tts *tts, const struct tb_cli_turn *turn,
                  const struct tb_stream *s);

#endif
