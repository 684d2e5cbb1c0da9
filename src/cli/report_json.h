/*
 * report_json.h - the --json object of `sim` and `run` about one stream
 * played out (report_json.c; schema ttsbuf.result); its types and the
 * other outputs are report.h's.
 */
#ifndef TTSBUF_CLI_REPORT_JSON_H
#define TTSBUF_CLI_REPORT_JSON_H

#include <stdio.h>

#include "report.h"

/* The --json report, one object and a newline, with the speech part
 * ("audio": null when audio is NULL or unused) and sim --chunks' "chunks"
 * array when chunks is not NULL.  A writer: 0, TB_ENOMEM or TB_EIO,
 * nothing printed. */
struct tb_cli_audio;
struct tb_cli_chunks;
int tb_cli_report_json(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                       const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                       const struct tb_report_live *live, const struct tb_cli_audio *audio,
                       const struct tb_cli_chunks *chunks);

#endif
