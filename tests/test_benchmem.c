/*
 * test_benchmem.c - what `ttsbuf bench` keeps in memory (bench.h,
 * drop_streams and fold; ttsbuf(1), BENCH, Memory): a level that drops its
 * streams keeps every record's fields and gaps, played out as each
 * request ended, and no stream; one that folds its records keeps none and
 * summarises the same counts; past TB_STATACC_EXACT samples a metric's
 * percentiles are within the stated error of the exact ones (statacc.h);
 * the binary's peak memory over a run ten times longer stays within 10%
 * of the shorter run's, where it grew by about 0.9 KB a request when each
 * record was kept and 5 KB when every stream was; with --out too, every
 * record and trace written as its request ends.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/statacc.h"

#define N_EV 20
#define T0 0.02
#define DT 0.002

/* One closed-loop level of `requests` against the mock, streams kept
 * (drop 0), dropped (1), or dropped and the records folded (2). */
static void run_level(const struct tb_test_mock *m, int drop, size_t requests,
                      struct tb_bench_recs *out)
{
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    char url[128], err[256];
    memset(&o, 0, sizeof(o));
    snprintf(url, sizeof(url), "%s/chat/completions", m->base);
    assert_int_equal(tb_bench_prompts_builtin(&p), 0);
    o.http.url = url;
    o.http.idle_timeout = 5;
    tb_api_request_init(&o.req);
    o.req.model = "mock";
    o.req.include_usage = 1;
    o.prompts = &p;
    o.level.mode = TB_BENCH_CLOSED;
    o.level.concurrency = 4;
    o.requests = requests;
    o.nshards = 1;
    tb_sim_opts_default(&o.sim);
    o.sim.play.wpm = 1000;
    o.drop_streams = drop > 0;
    o.fold = drop == 2;
    if (tb_bench_run(&o, 0, out, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    tb_bench_prompts_free(&p);
}

/* A level that drops its streams: no record holds one, and every record
 * has what the kept streams give (events, tokens, gaps, playout), so the
 * summaries agree on everything the schedule fixes. */
static void dropped_streams_keep_fields(void **state)
{
    struct tb_test_mock m;
    struct tb_bench_recs kept, dropped;
    struct tb_bench_summary sk, sd;
    (void)state;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&kept);
    tb_bench_recs_init(&dropped);
    run_level(&m, 0, 12, &kept);
    run_level(&m, 1, 12, &dropped);
    tb_test_mock_stop(&m);
    assert_int_equal(kept.n, 12);
    assert_int_equal(dropped.n, 12);
    for (size_t i = 0; i < dropped.n; i++) {
        const struct tb_bench_rec *k = &kept.v[i], *d = &dropped.v[i];
        assert_non_null(k->stream);
        assert_int_equal(k->stream->n, N_EV);
        assert_null(d->stream);
        assert_int_equal(d->error, 0);
        assert_string_equal(d->message, "");
        assert_int_equal(d->events, k->events);
        assert_int_equal(d->content_tokens, k->content_tokens);
        assert_int_equal(d->nitl, N_EV - 1);
        assert_non_null(d->itl);
        assert_false(isnan(d->ttft));
        assert_false(isnan(d->ttfa));
        assert_false(isnan(d->gap_total));
        assert_false(isnan(d->min_tps));
        assert_false(isnan(d->play_end));
    }
    assert_int_equal(tb_bench_summarize(&kept, 0, &sk), 0);
    assert_int_equal(tb_bench_summarize(&dropped, 0, &sd), 0);
    assert_int_equal(sd.requests, sk.requests);
    assert_int_equal(sd.ok, sk.ok);
    assert_int_equal(sd.events, sk.events);
    assert_int_equal(sd.tokens, sk.tokens);
    assert_int_equal(sd.m[TB_BM_ITL].count, sk.m[TB_BM_ITL].count);
    assert_int_equal(sd.m[TB_BM_TTFA].count, sk.m[TB_BM_TTFA].count);
    tb_bench_summary_free(&sk);
    tb_bench_summary_free(&sd);
    tb_bench_recs_free(&kept);
    tb_bench_recs_free(&dropped);
}

/* A level that folds its records (bench.h, fold): none is kept, and its
 * summary counts what the kept records' does, with exact percentiles at
 * this size (under TB_STATACC_EXACT samples a metric). */
static void folded_records_summarised(void **state)
{
    struct tb_test_mock m;
    struct tb_bench_recs kept, folded;
    struct tb_bench_summary sk, sf;
    size_t n, ok, nomem;
    (void)state;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&kept);
    tb_bench_recs_init(&folded);
    run_level(&m, 0, 12, &kept);
    run_level(&m, 2, 12, &folded);
    tb_test_mock_stop(&m);
    assert_int_equal(folded.n, 0);
    assert_int_equal(folded.nfolds, 1);
    tb_bench_recs_count(&folded, &n, &ok, &nomem);
    assert_int_equal(n, 12);
    assert_int_equal(ok, 12);
    assert_int_equal(nomem, 0);
    assert_int_equal(tb_bench_summarize(&kept, 0, &sk), 0);
    assert_int_equal(tb_bench_summarize(&folded, 0, &sf), 0);
    assert_int_equal(sf.requests, sk.requests);
    assert_int_equal(sf.ok, sk.ok);
    assert_int_equal(sf.gapless + sf.heard_whole, sk.gapless + sk.heard_whole);
    assert_int_equal(sf.events, sk.events);
    assert_int_equal(sf.tokens, sk.tokens);
    assert_true(sf.span > 0);
    for (int k = 0; k < TB_BM__COUNT; k++)
        assert_int_equal(sf.m[k].count, sk.m[k].count);
    assert_int_equal(sf.m[TB_BM_ITL].count, 12 * (N_EV - 1));
    assert_int_equal(sf.pct_hist, 0);
    assert_string_equal(tb_bench_percentiles(&sf), "exact");
    tb_bench_summary_free(&sk);
    tb_bench_summary_free(&sf);
    tb_bench_recs_free(&kept);
    tb_bench_recs_free(&folded);
}

/* A deterministic sample: log-uniform over 1 us .. 10 s, every 37th 0. */
static double sample(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    if ((*s >> 33) % 37 == 0)
        return 0;
    return 1e-6 * pow(10, 7.0 * (double)(*s >> 11) / 9007199254740992.0);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-th percentile of sorted v[0..n), linear between the closest
 * ranks (numpy's default), computed here on its own. */
static double pct(const double *v, size_t n, double q)
{
    double pos = q / 100 * (double)(n - 1);
    size_t lo = (size_t)pos;
    return lo + 1 >= n ? v[n - 1] : v[lo] + (v[lo + 1] - v[lo]) * (pos - (double)lo);
}

/* Past TB_STATACC_EXACT samples the percentiles come from the histogram,
 * each within the stated relative error of the exact one on the same data
 * (sorted here); count, min and max exact, the mean and std to rounding;
 * at the bound still the exact bits of tb_stats_of. */
static void histogram_within_stated_error(void **state)
{
    const size_t n = 50000;
    const double q[] = {5, 50, 90, 95, 99};
    double *v = malloc(n * sizeof(*v)), sum = 0, dev = 0;
    struct tb_statacc a, b;
    struct tb_stats st, ex;
    uint64_t seed = 42;
    (void)state;
    assert_non_null(v);
    tb_statacc_init(&a);
    tb_statacc_init(&b);
    for (size_t i = 0; i < n; i++) {
        v[i] = sample(&seed);
        /* half merged from a second accumulator, as a lane's fold is */
        assert_int_equal(tb_statacc_add(i % 2 ? &a : &b, v[i]), 0);
        if (i + 1 == TB_STATACC_EXACT) {
            struct tb_statacc c;
            tb_statacc_init(&c);
            for (size_t j = 0; j <= i; j++)
                assert_int_equal(tb_statacc_add(&c, v[j]), 0);
            assert_true(tb_statacc_exact(&c));
            tb_statacc_stats(&c, &st);
            memcpy(v + n - TB_STATACC_EXACT, v, TB_STATACC_EXACT * sizeof(*v));
            tb_stats_of(v + n - TB_STATACC_EXACT, TB_STATACC_EXACT, &ex);
            assert_int_equal(st.count, ex.count);
            for (int f = 0; f < TB_STATS_NFIELDS; f++)
                assert_true(tb_stats_field(&st, f) == tb_stats_field(&ex, f));
            tb_statacc_free(&c);
        }
    }
    assert_int_equal(tb_statacc_merge(&a, &b), 0);
    assert_false(tb_statacc_exact(&a));
    tb_statacc_stats(&a, &st);
    qsort(v, n, sizeof(*v), cmp_d);
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    for (size_t i = 0; i < n; i++)
        dev += (v[i] - sum / (double)n) * (v[i] - sum / (double)n);
    assert_int_equal(st.count, n);
    assert_true(st.min == v[0] && st.max == v[n - 1]);
    assert_true(fabs(st.mean - sum / (double)n) <= 1e-9 * sum / (double)n);
    assert_true(fabs(st.std - sqrt(dev / (double)n)) <= 1e-9 * sqrt(dev / (double)n));
    for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++) {
        double x = tb_stats_field(&st, 3 + (int)k), e = pct(v, n, q[k]);
        if (fabs(x - e) > TB_STATACC_REL_ERR * fabs(e))
            fail_msg("p%g: %.9g from the histogram, %.9g exact", q[k], x, e);
    }
    tb_statacc_free(&a);
    tb_statacc_free(&b);
    free(v);
}

/* `bench --requests N` against serve (with --out DIR unless out is
 * NULL); its peak RSS (KiB), after checking that every request was
 * measured and, with --out, that the records file holds every one and
 * each has its trace (a header in its level's traces file). */
static long bench_rss(int port, size_t n, const char *out_dir)
{
    char cmd[1400], path[96], more[300] = "", *out;
    cJSON *j, *lv;
    long rss;
    int code;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-benchmem-%d.json", (int)getpid());
    /* A sanitizer build's quarantine of freed blocks would grow with the
     * requests (each frees what libcurl allocated for it): none here, so
     * that the bound is on what bench keeps. */
    if (out_dir != NULL)
        snprintf(more, sizeof(more), " --out %s --force", out_dir);
    snprintf(cmd, sizeof(cmd),
             "ASAN_OPTIONS=\"$ASAN_OPTIONS:quarantine_size_mb=0\" '%s' bench --base-url "
             "http://127.0.0.1:%d/v1 --model m -c 50 --requests %zu -q --json%s >%s",
             tb_test_bin(), port, n, more, path);
    rss = tb_test_sh_rss(cmd, &code);
    out = tb_test_slurp_str(path);
    remove(path);
    j = cJSON_Parse(out);
    lv = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "levels"), 0);
    if (code != 0 || lv == NULL ||
        cJSON_GetNumberValue(cJSON_GetObjectItem(lv, "requests")) != (double)n ||
        cJSON_GetNumberValue(cJSON_GetObjectItem(lv, "ok")) != (double)n ||
        cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(lv, "itl_s"), "count")) !=
            (double)n * 19)
        fail_msg("%s: exit %d, '%.400s'", cmd, code, out);
    /* 19 gaps a request: over TB_STATACC_EXACT, so from the histogram, and
     * the summary says so */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(lv, "percentiles")),
                        "histogram (relative error <= 0.28%)");
    cJSON_Delete(j);
    free(out);
    if (out_dir != NULL) {
        char c[600];
        snprintf(c, sizeof(c),
                 "test $(wc -l <%s/records.jsonl) -eq %zu && "
                 "test $(grep -h '^{\"ttsbuf_trace\"' %s/traces/*.jsonl | wc -l) -eq %zu && "
                 "test $(grep -c '\"trace\":\"traces/' %s/records.jsonl) -eq %zu",
                 out_dir, n + 1, out_dir, n, out_dir, n);
        if (tb_test_sh(c) != 0)
            fail_msg("%s: the records or traces of %zu requests are not all there", cmd, n);
    }
    return rss;
}

/* Ten times the requests, the same peak memory: within 10% of the
 * shorter run's (the criterion; a sanitizer build, whose shadow
 * and size-class pools scale what it keeps, 3 MiB more for each factor of
 * TB_TEST_RSS_SCALE over 1: ASan's --out case went 50.4 -> 58.1 MB, the
 * plain build's 20.7 -> 21.3).  The records are folded as they end (bench.h,
 * fold): what bench keeps of a request is a histogram's count; keeping
 * each record and its gaps (392 bytes and 19 x 8) it grew by about 0.9
 * KB a request, 4 MB over the 4,500 more, and keeping every stream by
 * about 5 KB, 23 MB. */
static void flat(const char *out_dir)
{
    long short_rss, long_rss, bound;
    int port;
    tb_test_serve_up_draws("--synth tps=1000,ttft=0,tokens=20,jitter=0", &port);
    short_rss = bench_rss(port, 500, out_dir);
    long_rss = bench_rss(port, 5000, out_dir);
    tb_test_serve_down(NULL);
    bound = short_rss + short_rss / 10 + (TB_TEST_RSS_SCALE - 1) * 3L * 1024;
    print_message("bench -c 50%s: peak RSS %ld KiB at 500 requests, %ld KiB at 5000 (bound %ld)\n",
                  out_dir != NULL ? " --out" : "", short_rss, long_rss, bound);
    if (long_rss > bound)
        fail_msg("peak RSS %ld KiB at 5000 requests, over %ld KiB (500 requests: %ld KiB)",
                 long_rss, bound, short_rss);
}

static void long_run_flat(void **state)
{
    (void)state;
    flat(NULL);
}

/* The same with --out: each record and its trace written as its request
 * ends (bench.h's record callback), every request in the file, no stream
 * kept. */
static void long_run_flat_out(void **state)
{
    char dir[128];
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "benchmem", "out");
    flat(dir);
    tb_test_rm_rf(dir);
}

int tb_test_benchmem(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dropped_streams_keep_fields),
        cmocka_unit_test(folded_records_summarised),
        cmocka_unit_test(histogram_within_stated_error),
        cmocka_unit_test_teardown(long_run_flat, tb_test_serve_down),
        cmocka_unit_test_teardown(long_run_flat_out, tb_test_serve_down),
    };
    return TB_RUN_GROUP("benchmem", tests);
}
