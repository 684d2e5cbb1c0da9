/*
 * test_ttsdraws.c - --tts-draws end to end: draw 0 is the run the report
 * gives; the statistics equal an independent computation over separate
 * single runs with each draw's seed; the pre-roll for a share of draws is
 * gap-free for that share and not at one millisecond less; run's draws
 * equal sim's on its recording; bad values are one line and exit 2.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/draws.h"
#include "ttsbuf/error.h"

/* A stream and TTS stage whose draws differ: some leave a gap no rate
 * removes (min TPS none), others need a rate. */
#define STAGE "sim --preset demo --tts-latency lognormal:p50=0.3,p90=0.8 --tts-concurrency 1"
#define GAMMA 0x9E3779B97F4A7C15ull

static const cJSON *item(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (v == NULL)
        fail_msg("--json: no \"%s\"", k);
    return v;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("--json: \"%s\" is not a number", k);
    return v->valuedouble;
}

/* The document without the keys a second run may change. */
static char *printed_without(cJSON *j, const char *drop)
{
    cJSON_DeleteItemFromObjectCaseSensitive(j, "started_at");
    if (drop != NULL)
        cJSON_DeleteItemFromObjectCaseSensitive(j, drop);
    return cJSON_PrintUnformatted(j);
}

/* The oracle's statistics, written here from the definitions (stats.h):
 * numpy's linear percentiles of the sorted values, the mean of the sorted
 * values summed in order, the population deviation. */
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *v, size_t n, double p)
{
    double pos = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (v[lo + 1] - v[lo]) * (pos - (double)lo);
}

static void close_to(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want))))
        fail_msg("%s: %.17g, the single runs give %.17g", what, got, want);
}

/* stats block b against the oracle over v[0..n). */
static void same_stats(const cJSON *b, double *v, size_t n, const char *what)
{
    static const struct {
        const char *k;
        double p;
    } ps[] = {{"min", 0},  {"p5", 5},   {"p50", 50}, {"p90", 90},
              {"p95", 95}, {"p99", 99}, {"max", 100}};
    double sum = 0, dev = 0, mean;
    char name[64];
    assert_int_equal((int)num(b, "count"), (int)n);
    qsort(v, n, sizeof(double), cmp);
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        dev += (v[i] - mean) * (v[i] - mean);
    snprintf(name, sizeof(name), "%s.mean", what);
    close_to(num(b, "mean"), mean, name);
    snprintf(name, sizeof(name), "%s.std", what);
    close_to(num(b, "std"), sqrt(dev / (double)n), name);
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        snprintf(name, sizeof(name), "%s.%s", what, ps[i].k);
        close_to(num(b, ps[i].k), pct(v, n, ps[i].p), name);
    }
}

/* Draw 0 is the run: the document with --tts-draws is the one without
 * it plus "tts_draws" (every other number the same), the human report
 * the same report plus its part, and one draw's statistics are the run's
 * own numbers. */
static void draw0_is_the_run(void **state)
{
    (void)state;
    cJSON *plain = tb_test_run_json(NULL, STAGE " --tts-seed 11 --json", 0);
    cJSON *drawn = tb_test_run_json(NULL, STAGE " --tts-seed 11 --tts-draws 5 --json", 0);
    cJSON *one = tb_test_run_json(NULL, STAGE " --tts-seed 11 --tts-draws 1 --json", 0);
    const cJSON *d = item(one, "tts_draws");
    char *a, *b;
    struct tb_test_out ha = tb_test_run(STAGE " --tts-seed 11");
    struct tb_test_out hb = tb_test_run(STAGE " --tts-seed 11 --tts-draws 5");
    assert_true(cJSON_IsObject(item(drawn, "tts_draws")));
    assert_true(num(d, "draws") == 1);
    assert_true(num(item(d, "underruns"), "p50") == num(plain, "underruns"));
    assert_true(num(item(d, "gap_total_s"), "max") == num(plain, "gap_total_s"));
    assert_true(num(item(d, "ttfa_s"), "min") == num(plain, "ttfa_s"));
    assert_true(num(d, "gapless_share") == (num(plain, "underruns") == 0 ? 1 : 0));
    if (cJSON_IsNull(item(plain, "min_tps"))) {
        assert_true(num(d, "min_tps_none") == 1);
        assert_true(num(item(d, "min_tps"), "count") == 0);
        assert_true(cJSON_IsNull(item(item(d, "min_tps"), "p50")));
    } else {
        assert_true(num(d, "min_tps_none") == 0);
        assert_true(num(item(d, "min_tps"), "p50") == num(plain, "min_tps"));
    }
    a = printed_without(plain, NULL);
    b = printed_without(drawn, "tts_draws");
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* The human report: the same run's report, the draws after it. */
    assert_int_equal(ha.code, 0);
    assert_int_equal(hb.code, 0);
    assert_memory_equal(ha.so, hb.so, strlen(ha.so));
    assert_non_null(
        strstr(hb.so + strlen(ha.so), "tts draws: 5, seed 11 + d x 0x9E3779B97F4A7C15"));
    assert_non_null(strstr(hb.so + strlen(ha.so), "gap-free pre-roll (s)"));
    tb_test_out_free(&ha);
    tb_test_out_free(&hb);
    cJSON_Delete(plain);
    cJSON_Delete(drawn);
    cJSON_Delete(one);
}

#define M 16

/* The statistics over M draws equal those the test computes from M
 * separate runs, each with --tts-seed N + d x gamma (mod 2^64). */
static void stats_from_single_runs(void **state)
{
    const uint64_t base = 18446744073709551610ull; /* wraps past 2^64 */
    double under[M], gap[M], ttfa[M], tps[M];
    size_t ntps = 0, none = 0, clean = 0, worst = 0;
    double worst_gap = -1;
    char args[512], seed[64];
    struct tb_test_out raw;
    cJSON *j;
    const cJSON *d, *w;
    (void)state;
    for (size_t i = 0; i < M; i++) {
        uint64_t s = base + (uint64_t)i * GAMMA;
        cJSON *one;
        snprintf(args, sizeof(args), STAGE " --tts-seed %llu --json", (unsigned long long)s);
        one = tb_test_run_json(NULL, args, 0);
        under[i] = num(one, "underruns");
        gap[i] = num(one, "gap_total_s");
        ttfa[i] = num(one, "ttfa_s");
        clean += under[i] == 0;
        if (cJSON_IsNull(item(one, "min_tps")))
            none++;
        else
            tps[ntps++] = num(one, "min_tps");
        if (gap[i] > worst_gap) {
            worst_gap = gap[i];
            worst = i;
        }
        cJSON_Delete(one);
    }
    /* The case is worth its name only when both kinds of draw occur. */
    assert_true(none > 0 && ntps > 0);
    snprintf(args, sizeof(args), STAGE " --tts-seed %llu --tts-draws %d --json",
             (unsigned long long)base, M);
    raw = tb_test_run(args);
    assert_int_equal(raw.code, 0);
    j = cJSON_Parse(raw.so);
    assert_non_null(j);
    d = item(j, "tts_draws");
    assert_true(num(d, "draws") == M);
    assert_true(num(d, "min_tps_none") == (double)none);
    close_to(num(d, "min_tps_none_share"), (double)none / M, "min_tps_none_share");
    close_to(num(d, "gapless_share"), (double)clean / M, "gapless_share");
    same_stats(item(d, "underruns"), under, M, "underruns");
    same_stats(item(d, "gap_total_s"), gap, M, "gap_total_s");
    same_stats(item(d, "ttfa_s"), ttfa, M, "ttfa_s");
    same_stats(item(d, "min_tps"), tps, ntps, "min_tps");
    w = item(d, "worst");
    assert_true(num(w, "draw") == (double)worst);
    assert_true(num(w, "gap_total_s") == worst_gap);
    /* The seeds are exact integers, not doubles. */
    snprintf(seed, sizeof(seed), "\"seed\":%llu,\"gap_total_s\"",
             (unsigned long long)(base + (uint64_t)worst * GAMMA));
    assert_non_null(strstr(raw.so, seed));
    snprintf(seed, sizeof(seed), "\"seed\":%llu,\"target_gapless\"", (unsigned long long)base);
    assert_non_null(strstr(raw.so, seed));
    tb_test_out_free(&raw);
    cJSON_Delete(j);
}

/* With an end of turn and a leading silence, each draw's v2v is its
 * first audio plus both: the statistics equal those of the single runs'
 * latency.v2v_s (seeds N + d x gamma); without them there is none. */
static void v2v_across_draws(void **state)
{
    double v2v[8];
    char args[512];
    cJSON *j;
    struct tb_test_out o;
    (void)state;
    for (size_t i = 0; i < 8; i++) {
        cJSON *one;
        snprintf(args, sizeof(args), STAGE " --eou 0.25 --tts-lead 0.1 --tts-seed %llu --json",
                 (unsigned long long)(7 + (uint64_t)i * GAMMA));
        one = tb_test_run_json(NULL, args, 0);
        v2v[i] = num(item(one, "latency"), "v2v_s");
        cJSON_Delete(one);
    }
    j = tb_test_run_json(NULL, STAGE " --eou 0.25 --tts-lead 0.1 --tts-seed 7 --tts-draws 8 --json",
                         0);
    same_stats(item(item(j, "tts_draws"), "v2v_s"), v2v, 8, "v2v_s");
    cJSON_Delete(j);
    j = tb_test_run_json(NULL, STAGE " --tts-seed 7 --tts-draws 8 --json", 0);
    assert_null(cJSON_GetObjectItem(item(j, "tts_draws"), "v2v_s"));
    cJSON_Delete(j);
    o = tb_test_run(STAGE " --eou 0.25 --tts-seed 7 --tts-draws 8");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "  v2v (s)  "));
    tb_test_out_free(&o);
}

/* Draws gap-free at pre-roll p (seconds, printed to the millisecond) over
 * n single runs from seed 3. */
static size_t gapless_at(double p, size_t n)
{
    size_t clean = 0;
    for (size_t i = 0; i < n; i++) {
        char args[512];
        cJSON *one;
        snprintf(args, sizeof(args), STAGE " --tts-seed %llu --preroll %.3f --json",
                 (unsigned long long)(3 + (uint64_t)i * GAMMA), p);
        one = tb_test_run_json(NULL, args, 0);
        clean += num(one, "underruns") == 0;
        cJSON_Delete(one);
    }
    return clean;
}

/* The pre-roll for a share X: at it at least ceil(X M) of the draws play
 * with no underrun (each checked by a single run), at 1 ms less fewer. */
static void gapless_preroll(void **state)
{
    cJSON *j =
        tb_test_run_json(NULL, STAGE " --tts-seed 3 --tts-draws 10 --target-gapless 0.8 --json", 0);
    const cJSON *d = item(j, "tts_draws");
    double p = num(d, "preroll_for_target_s");
    (void)state;
    assert_true(num(d, "target_gapless") == 0.8);
    assert_true(p > 0.001);
    assert_true(fabs(p * 1000 - round(p * 1000)) < 1e-6); /* whole milliseconds */
    assert_true(gapless_at(p, 10) >= 8);
    assert_true(gapless_at(p - 0.001, 10) < 8);
    /* The per-draw pre-rolls' largest makes every draw gap-free. */
    assert_true(gapless_at(num(item(d, "preroll_gapless_s"), "max"), 10) == 10);
    cJSON_Delete(j);
    /* The default share is 0.95: of 10 draws, the 10th smallest. */
    j = tb_test_run_json(NULL, STAGE " --tts-seed 3 --tts-draws 10 --json", 0);
    d = item(j, "tts_draws");
    assert_true(num(d, "target_gapless") == 0.95);
    assert_true(num(d, "preroll_for_target_s") == num(item(d, "preroll_gapless_s"), "max"));
    cJSON_Delete(j);
}

/* run --tts-draws replays what arrived: the same draws sim gives on the
 * run's recording; a stream cut off is not drawn (null, and said). */
static void run_and_cut_streams(void **state)
{
    char rec[128], args[1024], cut[160];
    cJSON *r, *s;
    char *a, *b;
    struct tb_test_out h;
    (void)state;
    snprintf(rec, sizeof(rec), "/tmp/ttsbuf-ttsdraws-%d.jsonl", (int)getpid());
    snprintf(args, sizeof(args),
             "run --mock --synth tps=400,tokens=120,ttft=0.01 -q --tts-latency uniform:0..0.6 "
             "--tts-concurrency 1 --tts-draws 20 --json --record %s",
             rec);
    r = tb_test_run_json(NULL, args, 0);
    snprintf(args, sizeof(args),
             "sim %s --tts-latency uniform:0..0.6 --tts-concurrency 1 --tts-draws 20 --json", rec);
    s = tb_test_run_json(NULL, args, 0);
    a = cJSON_PrintUnformatted(item(r, "tts_draws"));
    b = cJSON_PrintUnformatted(item(s, "tts_draws"));
    assert_true(cJSON_IsObject(item(r, "tts_draws")));
    assert_string_equal(a, b);
    free(a);
    free(b);
    cJSON_Delete(r);
    cJSON_Delete(s);
    /* The same recording, cut off: no draws, and the report says why. */
    snprintf(cut, sizeof(cut), "%s.cut", rec);
    snprintf(args, sizeof(args),
             "sed 's/\"kind\":\"complete\"/\"kind\":\"connection_lost\"/' %s >%s && grep -q "
             "connection_lost %s",
             rec, cut, cut);
    assert_int_equal(tb_test_sh(args), 0);
    snprintf(args, sizeof(args), "sim %s --tts-latency uniform:0..0.6 --tts-draws 20 --json", cut);
    s = tb_test_run_json(NULL, args, 0);
    assert_true(cJSON_IsNull(item(s, "tts_draws")));
    cJSON_Delete(s);
    snprintf(args, sizeof(args), "sim %s --tts-latency uniform:0..0.6 --tts-draws 20", cut);
    h = tb_test_run(args);
    assert_non_null(strstr(h.so, "tts draws: not run: the stream was cut off or failed"));
    tb_test_out_free(&h);
    remove(rec);
    remove(cut);
    /* A ring too small: the run played the ring's times; no draws. */
    s = tb_test_run_json(NULL, STAGE " --ring-slots 4 --tts-draws 5 --json", 0);
    assert_true(num(item(s, "ring"), "forced_cuts") > 0);
    assert_true(cJSON_IsNull(item(s, "tts_draws")));
    cJSON_Delete(s);
    h = tb_test_run(STAGE " --ring-slots 4 --tts-draws 5");
    assert_non_null(strstr(h.so, "tts draws: not run: the ring filled"));
    tb_test_out_free(&h);
}

/* Bad values: one line naming the option and its range, exit 2, on both
 * commands; what does not go together is refused the same way. */
static void bad_values(void **state)
{
    static const char *const cmds[] = {"sim --preset demo", "run --mock"};
    char args[512], list[128];
    FILE *f;
    (void)state;
    /* list:FILE is deterministic: every draw would be the same. */
    snprintf(list, sizeof(list), "/tmp/ttsbuf-ttsdraws-%d.lat", (int)getpid());
    f = fopen(list, "w");
    assert_non_null(f);
    fputs("0.1\n0.5\n", f);
    fclose(f);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
#define BAD(opt, want)                                                                             \
    do {                                                                                           \
        snprintf(args, sizeof(args), "%s --tts-latency uniform:0..1 %s", cmds[i], opt);            \
        tb_test_expect_error(args, 2, want);                                                       \
    } while (0)
        BAD("--tts-draws 0", "--tts-draws: '0' is outside 1..1000000");
        BAD("--tts-draws -3", "--tts-draws: '-3' is negative (allowed 1..1000000)");
        BAD("--tts-draws 1000001", "--tts-draws: '1000001' is outside 1..1000000");
        BAD("--tts-draws 99999999999999999999999", "--tts-draws: '99999999999999999999999' is not");
        BAD("--tts-draws many", "--tts-draws: 'many' is not a whole number (allowed 1..1000000)");
        BAD("--tts-draws 2.5", "--tts-draws: '2.5' is not a whole number");
        BAD("--tts-draws ''", "--tts-draws: '' is not a whole number");
        BAD("--tts-draws 5 --target-gapless 0", "--target-gapless: '0' is not above 0");
        BAD("--tts-draws 5 --target-gapless 95", "--target-gapless: '95' is outside 0..1 (a share: "
                                                 "95% is 0.95)");
        BAD("--tts-draws 5 --target-gapless -0.5", "--target-gapless: '-0.5' is outside 0..1");
        BAD("--tts-draws 5 --target-gapless x", "--target-gapless: 'x' is not a number");
        BAD("--target-gapless 0.9", "--target-gapless needs --tts-draws");
#undef BAD
        snprintf(args, sizeof(args), "%s --tts-latency 0.3 --tts-draws 5", cmds[i]);
        tb_test_expect_error(args, 2, "--tts-draws: the latency '0.3' does not draw");
        snprintf(args, sizeof(args), "%s --tts-concurrency 1 --tts-draws 5", cmds[i]);
        tb_test_expect_error(args, 2, "--tts-draws: the latency '0' does not draw");
        snprintf(args, sizeof(args), "%s --tts-latency list:%s --tts-draws 5", cmds[i], list);
        tb_test_expect_error(args, 2, "--tts-draws: the latency 'list:");
    }
    remove(list);
    /* The draws are of one stream: an import of several must name one. */
    snprintf(args, sizeof(args), "sim --import vllm:%s --tts-latency uniform:0..1 --tts-draws 5",
             tb_test_data("import/vllm/append.json"));
    tb_test_expect_error(args, 2, "--tts-draws: ");
    tb_test_expect_error(args, 2, "has 3 requests; choose one with --request N");
    snprintf(args, sizeof(args),
             "sim --import vllm:%s --request 1 --tts-latency uniform:0..1 --tts-draws 5 --json",
             tb_test_data("import/vllm/append.json"));
    cJSON_Delete(tb_test_run_json(NULL, args, 0));
    tb_test_expect_error("sim --preset demo --tts-latency list:/dev/null --tts-draws 5", 2,
                         "--tts-latency: ");
    tb_test_expect_error("bench --mock -c 1 --tts-latency uniform:0..1 --tts-draws 5", 2,
                         "bench: unknown option '--tts-draws'");
}

/* Both kinds of tts_draws (an object, null) validate against the schema. */
static void json_schema(void **state)
{
    char path[2][128], args[2048];
    (void)state;
    for (int i = 0; i < 2; i++)
        snprintf(path[i], sizeof(path[i]), "/tmp/ttsbuf-ttsdraws-%d-%d.json", (int)getpid(), i);
    snprintf(args, sizeof(args),
             "'%s' " STAGE " --tts-draws 7 --json >%s && "
             "printf '{\"ttsbuf_trace\":2}\\n{\"t\":0.1,\"text\":\"Hi there. \"}\\n"
             "{\"end\":{\"kind\":\"timeout\",\"t\":0.2}}\\n' | "
             "'%s' sim - --tts-latency uniform:0..1 --tts-draws 7 --json >%s && "
             "grep -q '\"tts_draws\":null' %s && grep -q '\"tts_draws\":{' %s && "
             "/usr/bin/python3 tests/schema_check.py schema %s %s",
             tb_test_bin(), path[0], tb_test_bin(), path[1], path[1], path[0], path[0], path[1]);
    assert_int_equal(tb_test_sh(args), 0);
    remove(path[0]);
    remove(path[1]);
}

/* A latency with another seed (the view the draws use) is the latency
 * created with that seed, chunk for chunk; draw 0's seed is the seed. */
static void seeded_view_is_created_seed(void **state)
{
    static const char *const specs[] = {"lognormal:p50=0.3,p90=0.9", "uniform:0.1..2",
                                        "empirical:lat"};
    static const char vals[] = "0.1\n0.25\n0.7\n1.5\n";
    struct tb_rng g = {5};
    char err[256];
    (void)state;
    assert_true(tb_ttslat_draw_seed(77, 0) == 77);
    assert_true(tb_ttslat_draw_seed(UINT64_MAX, 1) == UINT64_MAX + GAMMA);
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
        const char *data = k == 2 ? vals : NULL;
        size_t len = k == 2 ? sizeof(vals) - 1 : 0;
        struct tb_ttslat *base;
        assert_int_equal(tb_ttslat_create_mem(specs[k], data, len, 1, &base, err, sizeof(err)), 0);
        for (int i = 0; i < 20; i++) {
            uint64_t seed = tb_rng_next(&g);
            struct tb_ttslat *t;
            struct tb_ttslat_seeded v;
            assert_int_equal(tb_ttslat_create_mem(specs[k], data, len, seed, &t, err, sizeof(err)),
                             0);
            tb_ttslat_seeded_init(&v, base, seed);
            for (uint32_t j = 0; j < 64; j++)
                assert_true(tb_test_same_bits(tb_ttslat_seeded_at(&v, j), tb_ttslat_at(t, j)));
            tb_ttslat_destroy(t);
        }
        tb_ttslat_destroy(base);
    }
}

/* Whether c plays with no underrun at pre-roll ms milliseconds: the whole
 * engine, search included (the oracle does not share the draws' path). */
static int clean_at(const struct tb_chunks *c, const struct tb_playout_opts *o, uint64_t ms)
{
    struct tb_playout_opts po = *o;
    struct tb_playout_result r;
    struct tb_playout *p;
    po.preroll = (double)ms / 1000.0;
    assert_int_equal(tb_playout_create(&po, NULL, NULL, &p), 0);
    assert_int_equal(tb_analyze_playout(c, p, &po, &r), 0);
    tb_playout_destroy(p);
    return r.underruns == 0;
}

/* The gap-free pre-roll against a scan of every millisecond: the
 * bisection's answer is the first gap-free one, and every one after it
 * is gap-free too (the monotonicity the bisection rests on). */
static void gapless_preroll_oracle(void **state)
{
    struct tb_rng g = {24};
    size_t searched = 0;
    (void)state;
    for (int n = 0; n < 60; n++) {
        struct tb_chunks c;
        struct tb_playout_opts o;
        struct tb_playout *p;
        struct tb_ttslat *lat;
        struct tb_ttslat_seeded v;
        double t = 0, got, speech = 0;
        uint64_t ms, first = UINT64_MAX;
        char err[256];
        tb_analyze_chunks_init(&c);
        tb_playout_opts_default(&o);
        o.wpm = 600; /* short chunks: a short scan */
        o.tts_concurrency = (int)tb_rng_below(&g, 3);
        o.tts_rtf = tb_rng_below(&g, 3) == 0 ? 0 : 1.6 * tb_rng_unit(&g);
        o.tts_connect = tb_rng_below(&g, 2) * 0.3 * tb_rng_unit(&g);
        assert_int_equal(
            tb_ttslat_create("lognormal:p50=0.2,p90=0.7", tb_rng_next(&g), &lat, err, sizeof(err)),
            0);
        tb_ttslat_seeded_init(&v, lat, tb_rng_next(&g));
        o.tts_latency_at = tb_ttslat_seeded_at;
        o.tts_latency_ud = &v;
        for (uint32_t j = 0, m = 1 + tb_rng_below(&g, 8); j < m; j++) {
            uint32_t cps = 1 + tb_rng_below(&g, 40);
            t += 0.6 * tb_rng_unit(&g);
            assert_int_equal(tb_analyze_chunks_push(&c, t, j, cps), 0);
            speech += cps * 10.0 / o.wpm;
        }
        assert_int_equal(tb_playout_create(&o, NULL, NULL, &p), 0);
        assert_int_equal(tb_draws_gapless_preroll(&c, p, &o, &got), 0);
        tb_playout_destroy(p);
        for (ms = 0; ms <= (uint64_t)ceil(speech * 1000) + 1; ms++) {
            int clean = clean_at(&c, &o, ms);
            if (clean && first == UINT64_MAX)
                first = ms;
            if (!clean && first != UINT64_MAX)
                fail_msg("case %d: gap-free at %llu ms, not at %llu", n, (unsigned long long)first,
                         (unsigned long long)ms);
        }
        assert_true(first != UINT64_MAX);
        if (!tb_test_same_bits(got, (double)first / 1000.0))
            fail_msg("case %d: bisection %.3f s, scan %.3f s", n, got, (double)first / 1000.0);
        searched += first > 0;
        tb_ttslat_destroy(lat);
        tb_analyze_chunks_free(&c);
    }
    assert_true(searched > 10); /* most cases needed a pre-roll */
}

/* The library refuses what cannot be drawn. */
static void draws_refuse(void **state)
{
    struct tb_chunks c;
    struct tb_playout_opts o;
    struct tb_draws_opts d = {3, 0.95, 0, NAN};
    struct tb_draws_result r;
    struct tb_ttslat *lat;
    char err[256];
    (void)state;
    tb_analyze_chunks_init(&c);
    tb_playout_opts_default(&o);
    assert_int_equal(tb_ttslat_create("uniform:0..1", 0, &lat, err, sizeof(err)), 0);
    assert_int_equal(tb_draws_run(&c, &o, lat, &d, NULL, NULL, &r), TB_EINVAL); /* no chunk */
    assert_int_equal(tb_analyze_chunks_push(&c, 0.5, 0, 10), 0);
    d.draws = 0;
    assert_int_equal(tb_draws_run(&c, &o, lat, &d, NULL, NULL, &r), TB_EINVAL);
    d.draws = TB_DRAWS_MAX + 1;
    assert_int_equal(tb_draws_run(&c, &o, lat, &d, NULL, NULL, &r), TB_EINVAL);
    d.draws = 3;
    d.target = 0;
    assert_int_equal(tb_draws_run(&c, &o, lat, &d, NULL, NULL, &r), TB_EINVAL);
    d.target = 1.01;
    assert_int_equal(tb_draws_run(&c, &o, lat, &d, NULL, NULL, &r), TB_EINVAL);
    d.target = 1;
    assert_int_equal(tb_draws_run(&c, &o, lat, &d, NULL, NULL, &r), 0);
    assert_true(r.draws == 3 && r.underruns.count == 3);
    tb_ttslat_destroy(lat);
    tb_analyze_chunks_free(&c);
}

/* The progress line shows on a terminal (script(1) gives one), not with
 * run's -q, and never when stderr is not a terminal. */
static void progress_on_a_tty(void **state)
{
    char cmd[1024], out[96];
    char *text;
    struct tb_test_out o;
    (void)state;
    tb_test_need("script");
    snprintf(out, sizeof(out), "/tmp/ttsbuf-ttsdraws-tty-%d", (int)getpid());
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof(cmd),
                 "script -qec \"'%s' %s --tts-latency uniform:0..1 --tts-draws 40 --json "
                 ">/dev/null\" /dev/null >%s 2>&1",
                 tb_test_bin(),
                 k == 0 ? "sim --preset demo" : "run --mock --synth tps=400,tokens=40,ttft=0.01 -q",
                 out);
        assert_int_equal(tb_test_sh(cmd), 0);
        text = tb_test_slurp_str(out);
        if (k == 1)
            assert_null(strstr(text, "draw "));
        else if (strstr(text, "ttsbuf sim: draw 40 of 40 (100%)") == NULL)
            fail_msg("no progress line on a terminal: '%s'", text);
        free(text);
    }
    remove(out);
    o = tb_test_run("sim --preset demo --tts-latency uniform:0..1 --tts-draws 40");
    assert_int_equal(o.code, 0);
    assert_string_equal(o.se, "");
    tb_test_out_free(&o);
}

int tb_test_ttsdraws(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(draw0_is_the_run),
        cmocka_unit_test(stats_from_single_runs),
        cmocka_unit_test(v2v_across_draws),
        cmocka_unit_test(gapless_preroll),
        cmocka_unit_test(run_and_cut_streams),
        cmocka_unit_test(bad_values),
        cmocka_unit_test(json_schema),
        cmocka_unit_test(seeded_view_is_created_seed),
        cmocka_unit_test(gapless_preroll_oracle),
        cmocka_unit_test(draws_refuse),
        cmocka_unit_test(progress_on_a_tty),
    };
    return TB_RUN_GROUP("ttsdraws", tests);
}
