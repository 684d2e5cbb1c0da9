/*
 * html_live.h - the parts of a page whose TTS was live and whose audio was
 * not kept (html_live.c): `bench --tts-url --html`, and `sim --trace
 * --html` of a trace that recorded a real TTS.  What such a run kept is
 * when each chunk's bytes came, not its PCM: the pages draw what was
 * measured (the records' parts of the wait, the arrivals replayed) and
 * leave out, never zero, what needs the audio.  Output only; main thread.
 */
#ifndef TTSBUF_CLI_HTML_LIVE_H
#define TTSBUF_CLI_HTML_LIVE_H

#include <stddef.h>
#include <stdio.h>

#include "ttsbuf/bench_rec.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/ttsmeas.h"

/* The most turns the waterfall of a bench page draws, a bar each (a page
 * stays readable; it says when there were more). */
#define TB_CLI_HTML_TURN_BARS 200

/* The first record of r whose stream kept a real TTS's log, or NULL (no
 * --tts-url, or every stream dropped). */
const struct tb_tts_log *tb_cli_html_live_log(const struct tb_bench_recs *r);

/* The waterfall of every turn of r (the first TB_CLI_HTML_TURN_BARS with
 * any part measured), each bar the record's own parts (lat, tool_s
 * included) and its v2v_s as the tick: the numbers the records say, to
 * the microsecond.  A bar is labelled "call C turn T", or "request ID"
 * outside calls (both unique over the levels).  Nothing when no turn has
 * a v2v_s.  0 or TB_ENOMEM. */
int tb_cli_html_live_turns(FILE *f, const struct tb_bench_recs *r);

/* One record's figure (html_report.h's, without audio): its stream
 * replayed with its measured TTS (replay.h) on the options base, at its
 * own end of turn, as `sim --trace --request ID --html` replays its
 * trace.  name heads it ("request 3 (calls=2)"), suffix makes its ids
 * unique.  0, or an error printed (TB_ENOMEM, TB_EIO). */
int tb_cli_html_live_figure(FILE *f, const struct tb_sim_opts *base, const struct tb_bench_rec *x,
                            const char *name, const char *suffix, size_t max_gaps);

#endif
