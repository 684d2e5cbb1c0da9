/*
 * html_bench.h - `bench --html`: the page of a whole bench run
 * (html_bench.c).
 */
#ifndef TTSBUF_CLI_HTML_BENCH_H
#define TTSBUF_CLI_HTML_BENCH_H

#include <stddef.h>

#include "audio.h"
#include "bench_gate.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/sim.h"

/* The page of a bench run: the per-level report (with how the calls went,
 * when calls is not NULL, and the gates in force), every stream as a row
 * of a sortable table (a call's turn with its call, turn and whether the
 * caller interrupted it; whether it is good under SLOs), and the figure
 * of the nworst streams with the most silence, each replayed with eSpeak
 * NG (voice and cue from speech) on a virtual clock.  With a live TTS
 * (the records' streams keep its log; its audio is not kept) the page
 * says so, draws every turn's wait from its record, and replays each of
 * the nworst with its measured TTS, without audio (html_live.h).  0, or
 * an error (printed). */
struct tb_cli_html_bench_info {
    const struct tb_bench_meta *m;
    const struct tb_bench_summary *s; /* m->nlevels */
    const struct tb_bench_recs *recs;
    const struct tb_bench_calls_count *calls; /* m->nlevels, or NULL */
    const struct tb_cli_gate *gates;
    size_t ngates;
    const struct tb_sim_opts *o;
    const struct tb_cli_audio *speech;
    size_t nworst, max_gaps;
};
int tb_cli_html_bench(const char *path, const struct tb_cli_html_bench_info *b);

#endif
