/*
 * sweep_out.h - what `ttsbuf sweep` writes: the table (stdout), --csv and
 * --json.  cJSON stays inside sweep_out.c.
 */
#ifndef TTSBUF_CLI_SWEEP_OUT_H
#define TTSBUF_CLI_SWEEP_OUT_H

#include <stdio.h>

#include "sources.h"
#include "sweep_cap.h"
#include "ttsbuf/sweep.h"

/* How the run went, for the table's header and the JSON. */
struct tb_cli_sweep_tool;

struct tb_cli_sweep_info {
    double seconds; /* wall time of tb_sweep_run */
    unsigned threads;
    const struct tb_cli_sources *src; /* every source, swept or not */
    struct tb_cli_standing st;        /* how many stand where */
    const char *tts_preset;           /* --tts PRESET, or NULL */
    int wait; /* the table shows v2v: --eou, --tts-lead or --target-v2v (else it
               * is the first audio) */
    const struct tb_cli_sweep_cap *cap;   /* the shared capacity's options and
                                           * search (sweep_cap.h), or NULL */
    const struct tb_cli_sweep_rec *rec;   /* what the recordings gave (sweep_rec.h), or NULL */
    const struct tb_cli_sweep_tool *tool; /* --tool-latency's answers
                                           * (sweep_tool.h), or NULL */
};

/* The streams left out of the shares (cut off, failed), one line each
 * (at most `max`, then how many more), under a heading; nothing when
 * there is none. */
void tb_cli_sweep_print_not_swept(FILE *f, const struct tb_cli_sweep_info *ri, size_t max);

/* The readable table: a header, one row per grid point (the axes that
 * vary, then the statistics), and the inverse answers. */
void tb_cli_sweep_print_table(FILE *f, const struct tb_sweep *sw,
                              const struct tb_cli_sweep_info *ri);

/* One header row and one row per point.  Returns 0 or TB_EIO. */
int tb_cli_sweep_write_csv(FILE *f, const struct tb_sweep *sw, const struct tb_cli_sweep_info *ri);

/* One JSON object and a newline.  Returns 0, TB_ENOMEM or TB_EIO. */
int tb_cli_sweep_write_json(FILE *f, const struct tb_sweep *sw, const struct tb_cli_sweep_info *ri);

#endif
