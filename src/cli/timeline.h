/*
 * timeline.h - one run's timeline picture (timeline.c).
 */
#ifndef TTSBUF_CLI_TIMELINE_H
#define TTSBUF_CLI_TIMELINE_H

#include <stdio.h>

#include "plays.h"
#include "report.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"

/* The timeline picture of one run into f (live: run's account, or NULL).
 * What the report calls not measured (a failed run's minimum TPS) is not
 * drawn.  A writer: 0, TB_ENOMEM (the schedule was not all kept) or
 * tb_svg_timeline's error, nothing printed. */
int tb_cli_timeline_svg(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                        const struct tb_stream *s, const struct tb_gap_list *all,
                        const struct tb_sim_result *r, const struct tb_report_live *live);

/* --svg FILE: the timeline written to path.  0, or an error (printed):
 * TB_ENOMEM, tb_cli_output_open's, tb_cli_out_close's. */
int tb_cli_timeline_write(const char *path, const struct tb_report_src *src,
                          const struct tb_sim_opts *o, const struct tb_stream *s,
                          const struct tb_gap_list *all, const struct tb_sim_result *r,
                          const struct tb_report_live *live);

#endif
