/*
 * bench_memory.c - what `ttsbuf bench` holds over a long run: its peak RSS
 * (through bench --maxrss, a fresh process) at -c 100 for N and 10 N
 * requests against the mock (one stream of 20 tokens at 1,000 tokens/s,
 * no first-token wait: about 2,000 requests a second on this machine), the
 * smallest of 3 runs each; the figure is the longer run's peak over the
 * shorter's and the bytes each further request added (goal: flat, the
 * longer within 10%).  A request's record is folded into its level's
 * summary as it ends (ttsbuf(1), BENCH, Memory): its samples go to
 * fixed-size accumulators (exact up to 4,096 a metric, then a log
 * histogram within 0.28%), so nothing grows with the requests.
 */
#include <stdio.h>

#include "bench.h"
#include "ttsbuf.h"

#define REPS 3
#define SHORT 2000
#define LONG 20000

/* Peak RSS, KiB, of bench --requests n against the mock on port. */
static long bench_rss(int port, int n)
{
    char args[256];
    long best = -1;
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 100 --requests %d -q", port, n);
    for (int r = 0; r < REPS; r++) {
        long kib = bench_ttsbuf_rss("bench memory", args);
        if (best < 0 || kib < best)
            best = kib;
    }
    return best;
}

void bench_memory(void)
{
    struct tb_stream s;
    struct bench_mock m;
    struct bench_mock_result r;
    long a, b;
    tb_stream_init(&s);
    bench_synth(1000, 0, 20, &s);
    bench_mock_start(&s, &m);
    a = bench_rss(m.port, SHORT);
    b = bench_rss(m.port, LONG);
    bench_mock_stop(&m, &r);
    tb_stream_free(&s);
    printf("bench memory: ttsbuf bench -c 100 --requests %d and %d against the mock (20 tokens "
           "at 1000 tok/s)\n"
           "  peak RSS %ld / %ld KiB: x%.2f (goal <= 1.10, flat); %.0f bytes per further request\n",
           SHORT, LONG, a, b, (double)b / (double)a,
           (double)(b - a) * 1024.0 / (double)(LONG - SHORT));
}
