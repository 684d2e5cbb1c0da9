/*
 * min-tps.c - a program of your own against the installed libttsbuf: one
 * recorded trace through the ring and the playout engine, on a virtual
 * clock, and the minimum tokens/s it needed to play with no gap.
 *
 *   cc examples/min-tps.c $(pkg-config --cflags --libs ttsbuf) -o min-tps
 *   ttsbuf sim --preset demo --record demo.jsonl >/dev/null
 *   ./min-tps demo.jsonl
 *
 * The settings are ttsbuf sim's defaults (sentence chunks, 150 words a
 * minute, no pre-roll), so the figure is the one `ttsbuf sim --trace
 * demo.jsonl` reports.  Exit status: 0, 2 for a usage error, 3 when the
 * trace cannot be read or played.
 */
#include <stdio.h>

#include "ttsbuf.h"

int main(int argc, char **argv)
{
    struct tb_stream s;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    struct tb_clock clk;
    char err[512];
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: min-tps TRACE.jsonl\n");
        return 2;
    }
    tb_stream_init(&s);
    rc = tb_trace_load_file(argv[1], &s, err, sizeof(err));
    if (rc == 0) {
        tb_sim_opts_default(&o);
        tb_clock_virtual_init(&clk);
        rc = tb_sim_run(&s, &o, &clk, NULL, NULL, &r, err, sizeof(err));
    }
    tb_stream_free(&s);
    if (rc != 0) {
        fprintf(stderr, "min-tps: %s (%s)\n", err, tb_strerror(rc));
        return 3;
    }
    printf("min TPS %.1f tokens/s (first audio %.3f s, %u underruns, %.2f s of silence)\n",
           r.play.min_tps, r.play.ttfa, r.play.underruns, r.play.gap_total);
    return 0;
}
