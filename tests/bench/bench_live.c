/*
 * bench_live.c - the CPU cost of ttsbuf's own live client path per
 * streamed event: tb_live_run (libcurl easy transfer, SSE, event JSON,
 * recording, ring, and the drain stepped on the wall clock) against the
 * mock provider in its own process, one stream of LIVE_TOKENS events at
 * LIVE_TPS.  The request carries an API key, as a real run's does (the
 * reader then scans what the server sends for an echo of it).
 *
 * The calling thread of tb_live_run is the drain, so RUSAGE_THREAD around
 * the call is the drain's CPU time and RUSAGE_SELF minus that is the
 * network thread's (plus creating it).  The drain polls the ring every
 * 2 ms however fast tokens come, so its share per event falls as the rate
 * rises: at LIVE_TPS it is the polling that shows, not the playout.
 * Best of REPS runs (least CPU).
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "ttsbuf.h"

#define LIVE_TPS 1000.0
#define LIVE_TOKENS 2000
#define REPS 3

void bench_live(void)
{
    struct tb_stream s;
    struct bench_mock mock;
    struct bench_mock_result srv;
    struct tb_live_opts o;
    char url[64];
    double best_all = 1e30, best_drain = 0, best_wall = 0;
    size_t events = 0;
    int ok = 1;

    tb_stream_init(&s);
    bench_synth(LIVE_TPS, 1.0 / LIVE_TPS, LIVE_TOKENS, &s);
    bench_mock_start(&s, &mock);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", mock.port);
    tb_live_opts_default(&o);
    o.http.url = url;
    o.http.bearer = "sk-bench-live-0123456789abcdefghijklmnopqrstuv";
    o.req.model = "ttsbuf-mock";
    o.req.prompt = "hi";
    o.req.include_usage = 1;

    for (int i = 0; i < REPS; i++) {
        struct tb_live_result r;
        double c0 = bench_cpu(RUSAGE_SELF, NULL), d0 = bench_cpu(RUSAGE_THREAD, NULL);
        double t0 = bench_now();
        int rc = tb_live_run(&o, &r, NULL, NULL);
        double wall = bench_now() - t0;
        double all = bench_cpu(RUSAGE_SELF, NULL) - c0, drain = bench_cpu(RUSAGE_THREAD, NULL) - d0;
        if (rc != 0)
            bench_die("live", tb_strerror(rc));
        if (r.error != 0 || r.stream.n != s.n) {
            printf("live: run %d: %zu of %zu deltas, %s: %s\n", i + 1, r.stream.n, s.n,
                   tb_reader_error_name(r.error), r.message);
            ok = 0;
        }
        events = r.stream.n;
        if (all < best_all) {
            best_all = all;
            best_drain = drain;
            best_wall = wall;
        }
        tb_live_result_free(&r);
    }
    bench_mock_stop(&mock, &srv);
    if (events == 0)
        bench_die("live", "no deltas received");
    printf("live: tb_live_run, one stream of %zu events at %.0f tokens/s, best of %d%s\n", s.n,
           LIVE_TPS, REPS, ok ? "" : " (SOME RUNS FAILED)");
    printf("  client process  %6.2f us/event  (%.3f s CPU in %.2f s wall)\n",
           best_all / (double)events * 1e6, best_all, best_wall);
    printf("    network thread %5.2f us/event  (HTTP + SSE + JSON + record + ring)\n",
           (best_all - best_drain) / (double)events * 1e6);
    printf("    drain thread   %5.2f us/event  (woken per network read; segmenter + playout)\n",
           best_drain / (double)events * 1e6);
    printf("  mock server     %6.2f us/event  (all %d runs)\n",
           srv.cpu_s / (double)(srv.st.events ? srv.st.events : 1) * 1e6, REPS);
    tb_stream_free(&s);
}
