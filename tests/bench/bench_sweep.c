/*
 * bench_sweep.c - the sweep's throughput: 1000 synthetic streams of 400
 * events x 25 grid points (5 pre-rolls x 5 token rates: as recorded and
 * 4 constant rates), segmentation included, on 1 thread and on 2; with
 * sentence chunking (about 25 chunks a stream) and with token chunking
 * (every event a chunk: the playout engine's worst case).  The figure is event-simulations per
 * second: content events x grid points / wall time (goal >= 10 M/s on 2 cores).  Best of 3 runs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "ttsbuf.h"

#define NSTREAMS 1000
#define NEVENTS 400
#define REPS 3

static double one_run(const struct tb_sweep_input *in, double policy, unsigned threads,
                      uint64_t *sims)
{
    static const double pre[] = {0, 0.5, 1, 1.5, 2};
    static const double tps[] = {0, 10, 20, 40, 80};
    struct tb_sweep_opts o;
    struct tb_sweep *sw;
    char err[256];
    double t0, dt;
    size_t npt;
    tb_sweep_opts_default(&o);
    o.axis[TB_AX_CHUNK] = &policy;
    o.n[TB_AX_CHUNK] = 1;
    o.axis[TB_AX_PREROLL] = pre;
    o.n[TB_AX_PREROLL] = 5;
    o.axis[TB_AX_TPS] = tps;
    o.n[TB_AX_TPS] = 5;
    t0 = bench_now();
    if (tb_sweep_create(&o, in, NSTREAMS, &sw, err, sizeof(err)) != 0)
        bench_die("sweep", err);
    if (tb_sweep_run(sw, threads, NULL, NULL) != 0)
        bench_die("sweep", "run failed");
    dt = bench_now() - t0;
    tb_sweep_points(sw, &npt);
    *sims = tb_sweep_events_per_point(sw) * npt;
    tb_sweep_destroy(sw);
    return dt;
}

void bench_sweep(void)
{
    static struct tb_stream s[NSTREAMS];
    static struct tb_sweep_input in[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++) {
        struct tb_synth_spec sp;
        tb_synth_default(&sp);
        sp.tps = 10 + (i % 7) * 10;
        sp.tokens = NEVENTS;
        sp.jitter = 0.6;
        sp.stall_p = 0.01;
        sp.stall_s = 1.5;
        sp.seed = (uint64_t)i + 1;
        tb_stream_init(&s[i]);
        if (tb_synth_generate(&sp, &s[i]) != 0)
            bench_die("synth", "out of memory");
        in[i].name = "synth";
        in[i].s = &s[i];
    }
    printf("sweep: %d streams x %d events x 25 settings (5 pre-rolls x 5 rates),\n"
           "       segmentation included, best of %d\n",
           NSTREAMS, NEVENTS, REPS);
    for (int pol = 0; pol < 2; pol++) {
        double policy = pol == 0 ? TB_CHUNK_SENTENCE : TB_CHUNK_TOKEN;
        double best[3] = {1e30, 1e30, 1e30};
        uint64_t sims = 0;
        for (int r = 0; r < REPS; r++)
            for (unsigned t = 1; t <= 2; t++) {
                double dt = one_run(in, policy, t, &sims);
                if (dt < best[t])
                    best[t] = dt;
            }
        for (unsigned t = 1; t <= 2; t++)
            printf("  %-8s  %u thread%s  %6.3f s  %6.1f M event-simulations/s%s\n",
                   tb_seg_policy_name((enum tb_chunk_policy)policy), t, t == 1 ? " " : "s", best[t],
                   (double)sims / best[t] / 1e6,
                   t == 1                           ? ""
                   : (double)sims / best[t] >= 10e6 ? "   (goal >= 10 M/s: met)"
                                                    : "   (goal >= 10 M/s: NOT met)");
    }
    for (int i = 0; i < NSTREAMS; i++)
        tb_stream_free(&s[i]);
}
