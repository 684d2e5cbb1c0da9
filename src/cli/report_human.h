/*
 * report_human.h - the human report of `sim` and `run` about one stream
 * played out (report_human.c); its types and the other outputs are
 * report.h's.
 */
#ifndef TTSBUF_CLI_REPORT_HUMAN_H
#define TTSBUF_CLI_REPORT_HUMAN_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"

/* The human report (f).  max_gaps limits the gap list; live is NULL for
 * `sim`. */
void tb_cli_report_human(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                         const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                         size_t max_gaps, const struct tb_report_live *live);

#endif
