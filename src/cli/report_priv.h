/*
 * report_priv.h - what the human report (report_human.c) and the --json
 * object (report_json.c) share (report.c): which numbers were measured,
 * the stream's error, a number or "-", and whether gaps have causes.
 */
#ifndef TTSBUF_CLI_REPORT_PRIV_H
#define TTSBUF_CLI_REPORT_PRIV_H

#include <stddef.h>

struct tb_report_src;
struct tb_report_live;
struct tb_sim_result;

/* Which numbers were measured.  A stream that failed or was cut off has
 * no verdict and no what-if for the whole answer (minimum TPS, speed-up,
 * the pre-roll curve's minimum TPS); a stream without a content event has
 * no TTFT, one with fewer than two no decode rate, one without a chunk no
 * first audio, no playback end and no gaps (nothing was played).  What was
 * not measured is null in JSON and "-" in the human report, never 0.  A
 * stream whose end is not known (a trace without an end line) is read as
 * complete, and the report says so. */
struct tb_cli_measured {
    int failed, cut, unknown, ttft, tps, audio, whatif;
};

struct tb_cli_measured tb_cli_report_measured(const struct tb_report_src *src,
                                              const struct tb_sim_result *r,
                                              const struct tb_report_live *live);

/* The error of the stream: a live run's, else the one its end records
 * (kind NULL, msg "" and status 0 when none). */
void tb_cli_report_error(const struct tb_report_src *src, const struct tb_report_live *live,
                         const char **kind, const char **msg, long *status);

/* v with prec decimals in buf, or "-" when not measured (!have), "none"
 * for NaN (a minimum TPS that no rate reaches); returns the text. */
const char *tb_cli_report_num(char *buf, size_t len, int have, int prec, double v);

/* Whether the report says which side caused each gap: a TTS option was
 * given (without one, every output is as before the stage). */
int tb_cli_report_causes(const struct tb_report_src *src);

#endif
