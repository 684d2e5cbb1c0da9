/*
 * bench.c - `make bench`: prints throughput figures; asserts nothing.
 *
 *   core        segmenter + playout over an in-memory stream (no parsing,
 *               no ring): simulated events per second, per chunk policy
 *   playout     the playout engine alone over a pre-segmented chunk list
 *   tts         the playout with the default TTS stage and with one
 *               streaming context (N = 1), R = 0.1 and a lognormal
 *               first-byte latency (the stage's search included)
 *   draws       --tts-draws 1000 on a 10,000-event stream: wall time of the
 *               draws (tb_draws_run, the command's own call; goal < 1 s,
 *               also where most draws gap)
 *   sim         the full simulator: events through the ring, virtual clock
 *   timed       `ttsbuf sim` of 10,000 tokens under the time-based
 *               policies (cartesia, idle) against sentence: their
 *               minimum-TPS searches re-cut the stream (goal <= 5x
 *               sentence; bench_timed.c)
 *   trace load  a 1-million-event trace file parsed (cJSON), validated and
 *               simulated, against cJSON alone parsing the same lines
 *   sweep       event-simulations per second across a sweep (bench_sweep.c)
 *   sweepmem    peak memory per stream of `ttsbuf sweep` (bench_sweep.c)
 *   sweeptts    `ttsbuf sweep --target-gapless` of the man page's 200
 *               streams with a TTS stage against without (goal <= 5x;
 *               bench_sweeptts.c)
 *   serve       N concurrent streams against the mock provider
 *               (bench_serve.c)
 *   live        CPU per event of ttsbuf's live client path (bench_live.c)
 *   reader      the stream reader per delta, with and without a run's
 *               secrets (bench_reader.c)
 *   client      ttsbuf bench's accuracy and CPU beside the openai SDK
 *               (bench_client.c)
 *   calls       voice calls one bench process holds at once, their
 *               streams' timing and the memory a call costs
 *               (bench_calls.c)
 *   base        this build against an older one named by TB_BENCH_BASE,
 *               core, sim, trace and sweep alternately (goal >= 1.00x on
 *               every row; bench_base.c)
 *
 * Each figure is the best of several runs (the machine is shared; the best
 * run is the least disturbed).  Compare figures from one run as ratios.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "ttsbuf.h"

#define REPS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench: %s: %s\n", what, tb_strerror(rc));
    exit(1);
}

static void make_stream(struct tb_stream *s, uint32_t tokens)
{
    struct tb_synth_spec spec;
    tb_synth_default(&spec);
    spec.tokens = tokens;
    spec.tps = 60;
    spec.seed = 42;
    int rc = tb_synth_generate(&spec, s);
    if (rc != 0)
        die("synth", rc);
}

static void bench_core(const struct tb_stream *s)
{
    struct tb_playout_opts po;
    tb_playout_opts_default(&po);
    printf("core: segmenter + playout, %zu events in memory, best of %d\n", s->n, REPS);
    for (int pol = 0; pol < TB_CHUNK__COUNT; pol++) {
        struct tb_seg_opts so = {(enum tb_chunk_policy)pol, 1, 0, 0};
        struct tb_seg *seg;
        struct tb_playout *p;
        struct tb_chunks ch;
        struct tb_playout_result r;
        double best = 1e30;
        tb_analyze_chunks_init(&ch);
        if (tb_seg_create(&so, &seg) != 0 || tb_playout_create(&po, NULL, NULL, &p) != 0)
            die("create", TB_ENOMEM);
        for (int i = 0; i < REPS; i++) {
            double t0 = now();
            tb_analyze_segment(s, seg, &ch);
            tb_analyze_playout(&ch, p, &po, &r);
            double dt = now() - t0;
            if (dt < best)
                best = dt;
        }
        printf("  %-14s %7.1f M events/s   (%zu chunks, min TPS %.2f)\n",
               tb_seg_policy_name((enum tb_chunk_policy)pol), (double)s->n / best / 1e6, ch.n,
               r.min_tps);
        if (pol == TB_CHUNK_TOKEN) {
            /* The playout engine alone, over the token chunk list. */
            double bp = 1e30;
            for (int i = 0; i < REPS; i++) {
                double t0 = now();
                tb_analyze_playout(&ch, p, &po, &r);
                double dt = now() - t0;
                if (dt < bp)
                    bp = dt;
            }
            printf("  %-14s %7.1f M chunks/s  (playout engine alone)\n", "  playout",
                   (double)ch.n / bp / 1e6);
        }
        tb_analyze_chunks_free(&ch);
        tb_seg_destroy(seg);
        tb_playout_destroy(p);
    }
}

/* A lognormal first-byte latency, p50 0.3 s and p90 0.6 s, drawn from j
 * alone (a hash, not a running generator): the hook must be pure. */
static double lognormal_at(void *ud, uint32_t j)
{
    uint64_t x = (uint64_t)j * 0x9e3779b97f4a7c15u;
    double u1, u2, z;
    (void)ud;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    x ^= x >> 31;
    u1 = ((double)(x >> 40) + 0.5) / 16777216.0;
    u2 = ((double)(x & 0xffffff) + 0.5) / 16777216.0;
    z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    return 0.3 * exp(z * log(2.0) / 1.2815515655446004);
}

/* Best of REPS playout passes over ch with options o: events/s. */
static double playout_rate(const struct tb_stream *s, const struct tb_chunks *ch,
                           const struct tb_playout_opts *o, struct tb_playout_result *r)
{
    struct tb_playout *p;
    double best = 1e30;
    if (tb_playout_create(o, NULL, NULL, &p) != 0)
        die("create", TB_ENOMEM);
    for (int i = 0; i < REPS; i++) {
        double t0 = now();
        int rc = tb_analyze_playout(ch, p, o, r);
        double dt = now() - t0;
        if (rc != 0)
            die("playout", rc);
        if (dt < best)
            best = dt;
    }
    tb_playout_destroy(p);
    return (double)s->n / best;
}

static void bench_tts(const struct tb_stream *s)
{
    struct tb_seg_opts so = {TB_CHUNK_SENTENCE, 1, 0, 0};
    struct tb_playout_opts def, st;
    struct tb_playout_result r0, r1;
    struct tb_seg *seg;
    struct tb_chunks ch;
    double a, b;
    tb_playout_opts_default(&def);
    st = def;
    st.tts_concurrency = 1;
    st.tts_rtf = 0.1;
    st.tts_latency_at = lognormal_at;
    tb_analyze_chunks_init(&ch);
    if (tb_seg_create(&so, &seg) != 0 || tb_analyze_segment(s, seg, &ch) != 0)
        die("segment", TB_ENOMEM);
    printf("tts: playout over %zu sentence chunks of %zu events, best of %d\n", ch.n, s->n, REPS);
    a = playout_rate(s, &ch, &def, &r0);
    b = playout_rate(s, &ch, &st, &r1);
    printf("  %-26s %8.2f M events/s  (min TPS %.2f)\n", "default TTS", a / 1e6, r0.min_tps);
    printf("  %-26s %8.2f M events/s  (min TPS %.2f%s, %u gaps, %.0f s of them the TTS's)\n",
           "N 1, R 0.1, lognormal L", b / 1e6, r1.min_tps, r1.min_tps_none ? " none" : "",
           r1.underruns, r1.gap_tts);
    printf("  %-26s %8.1fx\n", "default / stage", a / b);
    tb_analyze_chunks_free(&ch);
    tb_seg_destroy(seg);
}

/* --tts-draws M on a stream of n events: the library call behind the
 * command (tb_draws_run over the sentence chunks), wall time, best of 3;
 * with N 1, R 0.1 and a log-normal latency (the tts figure's stage), and
 * with the latency alone; at 60 tokens/s (gap-free draws: one schedule
 * finds the pre-roll) and at 6 (near the minimum TPS: most draws gap, the
 * pre-roll is bisected). */
static void bench_draws(uint32_t n, size_t m)
{
    static const char *const spec = "lognormal:p50=0.3,p90=0.6";
    static const double rates[2] = {60, 6};
    struct tb_seg_opts so = {.policy = TB_CHUNK_SENTENCE, .min_chars = 1};
    struct tb_playout_opts o[2];
    struct tb_draws_opts d = {m, 0.95, 0, NAN};
    struct tb_ttslat *lat;
    struct tb_seg *seg;
    char err[256];
    if (tb_ttslat_create(spec, 0, &lat, err, sizeof(err)) != 0 || tb_seg_create(&so, &seg) != 0)
        die("draws: create", TB_EINVAL);
    tb_playout_opts_default(&o[0]);
    o[0].tts_concurrency = 1;
    o[0].tts_rtf = 0.1;
    o[1] = o[0];
    o[1].tts_concurrency = 0;
    o[1].tts_rtf = 0.0;
    printf("draws: --tts-draws %zu on %u events (sentence chunks), %s, best of 3\n", m, n, spec);
    for (int t = 0; t < 2; t++) {
        struct tb_stream s;
        struct tb_chunks ch;
        tb_stream_init(&s);
        tb_analyze_chunks_init(&ch);
        bench_synth(rates[t], 0.3, n, &s);
        if (tb_analyze_segment(&s, seg, &ch) != 0)
            die("segment", TB_ENOMEM);
        for (int k = 0; k < 2; k++) {
            struct tb_draws_result r;
            double best = 1e30;
            for (int i = 0; i < 3; i++) {
                double t0 = now();
                int rc = tb_draws_run(&ch, &o[k], lat, &d, NULL, NULL, &r);
                double dt = now() - t0;
                if (rc != 0)
                    die("draws", rc);
                if (dt < best)
                    best = dt;
            }
            printf(
                "  %2.0f tokens/s, %-21s %6.3f s  %5.2f ms a draw  (%zu chunks; gap-free %4.1f%%, "
                "pre-roll for 95%% %.3f s; goal < 1 s: %s)\n",
                rates[t], k == 0 ? "N 1, R 0.1, lognormal" : "lognormal alone", best,
                1e3 * best / (double)m, ch.n, 100.0 * (double)r.gapless / (double)m,
                r.preroll_for_target, best < 1.0 ? "met" : "NOT met");
        }
        tb_analyze_chunks_free(&ch);
        tb_stream_free(&s);
    }
    tb_ttslat_destroy(lat);
    tb_seg_destroy(seg);
}

static void bench_sim(const struct tb_stream *s)
{
    struct tb_sim_opts o;
    struct tb_sim_result r;
    double best;
    tb_sim_opts_default(&o);
    best = bench_sim_seconds(s, &o, REPS, &r);
    printf("sim: through the ring on the virtual clock (sentence), %zu events: "
           "%.1f M events/s (ring high water %zu tokens)\n",
           s->n, (double)s->n / best / 1e6, r.hw_items);
}

static void bench_trace(const struct tb_stream *s)
{
    const char *path = "build/bench-trace.jsonl";
    FILE *f = fopen(path, "w");
    struct tb_stream in;
    struct tb_sim_opts o;
    struct tb_sim_result r;
    struct tb_clock clk;
    char err[256];
    double best_load = 1e30, best_all = 1e30, best_cjson = 1e30;
    long size;
    char *buf;

    if (f == NULL || tb_trace_write(f, s) != 0)
        die("writing the bench trace", TB_EIO);
    size = ftell(f);
    fclose(f);
    /* cJSON alone: the floor this path cannot go below. */
    f = fopen(path, "rb");
    buf = malloc((size_t)size);
    if (f == NULL || buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size)
        die("reading the bench trace", TB_EIO);
    fclose(f);
    for (int i = 0; i < REPS; i++) {
        double t0 = now();
        char *p = buf, *end = buf + size;
        while (p < end) {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
            cJSON_Delete(cJSON_ParseWithLength(p, len));
            p += len + 1;
        }
        double dt = now() - t0;
        if (dt < best_cjson)
            best_cjson = dt;
    }
    free(buf);
    tb_sim_opts_default(&o);
    for (int i = 0; i < REPS; i++) {
        tb_stream_init(&in);
        double t0 = now();
        int rc = tb_trace_load_file(path, &in, err, sizeof(err));
        double t1 = now();
        if (rc != 0)
            die(err, rc);
        tb_clock_virtual_init(&clk);
        rc = tb_sim_run(&in, &o, &clk, NULL, NULL, &r, err, sizeof(err));
        double t2 = now();
        if (rc != 0)
            die(err, rc);
        if (t1 - t0 < best_load)
            best_load = t1 - t0;
        if (t2 - t0 < best_all)
            best_all = t2 - t0;
        tb_stream_free(&in);
    }
    printf("trace: %zu events, %.1f MB file\n", s->n, (double)size / 1e6);
    printf("  cJSON alone, parse every line   %6.3f s\n", best_cjson);
    printf("  load (read + validate + parse)  %6.3f s   (%.2fx cJSON alone)\n", best_load,
           best_load / best_cjson);
    printf("  load + simulate                 %6.3f s   (goal < 1 s)\n", best_all);
    remove(path);
}

/* TB_BENCH_ONLY=name,name runs only those sections (core, tts, draws, sim, timed,
 * trace, sweep, sweepmem, sweeptts, serve, fair, live, reader, speech, client, calls, benchmem,
 * base);
 * unset: all of them. */
static int want(const char *name)
{
    const char *only = getenv("TB_BENCH_ONLY");
    size_t n = strlen(name);
    if (only == NULL || *only == '\0')
        return 1;
    for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    struct tb_stream s;
    if (argc > 2 && strcmp(argv[1], "--maxrss") == 0)
        return bench_maxrss_main(argv + 2);
    if (tb_http_global_init() != 0) /* before any thread (the live run's) */
        die("curl_global_init", TB_EIO);
    tb_stream_init(&s);
    printf("ttsbuf %s bench (figures, not pass/fail)\n", TB_VERSION);
    if (want("core") || want("tts") || want("sim") || want("trace"))
        make_stream(&s, 1000000);
    if (want("core")) {
        printf("\n");
        bench_core(&s);
    }
    if (want("tts")) {
        printf("\n");
        bench_tts(&s);
    }
    if (want("draws")) {
        printf("\n");
        bench_draws(10000, 1000);
    }
    if (want("sim")) {
        printf("\n");
        bench_sim(&s);
    }
    if (want("timed")) {
        printf("\n");
        bench_timed();
    }
    if (want("trace")) {
        printf("\n");
        bench_trace(&s);
    }
    tb_stream_free(&s);
    if (want("sweep")) {
        printf("\n");
        bench_sweep();
    }
    if (want("sweepmem")) {
        printf("\n");
        bench_sweep_memory();
    }
    if (want("sweeptts")) {
        printf("\n");
        bench_sweep_tts();
    }
    if (want("serve")) {
        printf("\n");
        bench_serve();
    }
    if (want("fair")) {
        printf("\n");
        bench_fair();
    }
    if (want("live")) {
        printf("\n");
        bench_live();
    }
    if (want("reader")) {
        printf("\n");
        bench_reader();
    }
    if (want("speech")) {
        printf("\n");
        bench_speech();
    }
    if (want("client")) {
        printf("\n");
        bench_client();
    }
    if (want("calls")) {
        printf("\n");
        bench_calls();
    }
    if (want("benchmem")) {
        printf("\n");
        bench_memory();
    }
    if (want("base")) {
        printf("\n");
        bench_base();
    }
    tb_http_global_cleanup();
    return 0;
}
