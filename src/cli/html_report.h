/*
 * html_report.h - --html: one self-contained HTML page a reviewer opens
 * offline (sim, run, bench, sweep).
 *
 * The page makes no network request: its style and script are inline, the
 * pictures are inline SVG and the audio is a data: URL, and a
 * Content-Security-Policy meta tag forbids anything else.  Its numbers are
 * written here, in C, from the same result the JSON report is made of; the
 * JSON itself is embedded too (<script type="application/json">), and the
 * script only moves the play head, seeks and sorts.  Without scripts the
 * page still shows the report, the pictures and a plain audio control.
 *
 * Audio: the WAV the speaker rendered (16-bit mono PCM, 22.05 kHz: 2.6 MB
 * a minute, 3.5 MB in base64), embedded as it is, cut after
 * TB_HTML_AUDIO_MAX_S seconds (the page says so).
 */
#ifndef TTSBUF_CLI_HTML_REPORT_H
#define TTSBUF_CLI_HTML_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "audio.h"
#include "plays.h"
#include "report.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsmeas.h"

#define TB_HTML_AUDIO_MAX_S 600.0

/* Everything one run's page (sim, run) shows. */
struct tb_cli_html_run_info {
    const char *cmd; /* "sim" or "run" */
    const struct tb_report_src *src;
    const struct tb_sim_opts *o;
    const struct tb_stream *s;
    const struct tb_sim_result *r;
    const struct tb_gap_list *gaps;    /* the underruns */
    const struct tb_gap_list *all;     /* every chunk's schedule */
    const struct tb_report_live *live; /* run only, else NULL */
    const struct tb_cli_audio *au;     /* rendered to a WAV file */
    size_t max_gaps;
};

/* Writes the page of one run to path.  0, or an error (printed):
 * tb_cli_output_open's, the figure's (TB_ENOMEM, TB_EIO reading the
 * audio), tb_cli_out_close's. */
int tb_cli_html_run(const char *path, const struct tb_cli_html_run_info *h);

/* The page of a finished sweep: the tuning picture, the inverse answers,
 * the table and the --json object.  Returns 0, TB_ENOMEM or TB_EIO. */
struct tb_sweep;
struct tb_cli_sweep_info;
int tb_cli_html_sweep(FILE *f, const struct tb_sweep *sw, const struct tb_cli_sweep_info *ri);

/* The building blocks, for pages of several runs (bench, sweep).  The
 * void ones leave write errors to ferror(f), checked at the end. */

/* Head, style, <body data-kind=KIND> and the <h1> title. */
void tb_cli_html_begin(FILE *f, const char *kind, const char *title);
void tb_cli_html_text(FILE *f, const char *s); /* HTML-escaped */
/* An SVG document inline (its XML declaration dropped). */
void tb_cli_html_svg(FILE *f, const char *svg, size_t n);

/* Where the wait went, in a page: a heading (<h3>; none when heading is
 * NULL) and the SVG of bars b[0..n) (svg.h's tb_svg_wait; nothing when
 * no bar has a total).  0 or TB_ENOMEM. */
struct tb_svg_wait;
int tb_cli_html_wait(FILE *f, const char *heading, const char *title, const struct tb_svg_wait *b,
                     size_t n);
/* JSON text as <script type="application/json" id=ID>, every '<' written
 * as \u003c (the same JSON; no string can end the element). */
void tb_cli_html_json(FILE *f, const char *id, const char *json);
/* <p class="note live-tts">: the TTS was live (its dialect, URL and
 * whether ttsbuf's mock answered), its audio not kept; provider is the
 * LLM's ("mock": ttsbuf's built-in mock, said so; NULL or another: not
 * said).  tts NULL writes nothing. */
void tb_cli_html_live_note(FILE *f, const struct tb_tts_log *tts, const char *provider);

/*
 * tb_cli_html_run_figure - one run's figure, as <section class="tb-run">: the
 * verdict, the timeline, the audio (h->au rendered to a WAV), the gaps, the
 * human report (<pre id="report" + suffix>) and the --json object (<script
 * id="result" + suffix>).  Returns 0, TB_ENOMEM, or TB_EIO with the detail
 * in err.
 */
int tb_cli_html_run_figure(FILE *f, const struct tb_cli_html_run_info *h, const char *suffix,
                           char *err, size_t errlen);

/* The script and the end of the page. */
void tb_cli_html_end(FILE *f);

/* Opens a memory stream (*buf, *len; the caller frees *buf after fclose).
 * Returns NULL when out of memory. */
FILE *tb_cli_html_mem(char **buf, size_t *len);

#endif
