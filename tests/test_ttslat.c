/*
 * test_ttslat.c - a TTS engine's first-byte latency per chunk (ttslat.h):
 * each kind's values, the draws as a pure function of (seed, j) (the
 * documented counter-based generator, recomputed here; the same values in
 * any order and however often asked), the distributions' quantiles over
 * 100,000 draws against the spec, list cycling, the canonical text round
 * trip, the report's info, and every bad spec and bad FILE refused with
 * its key and range or its file:line.
 *
 * The statistical cases use fixed seeds, so they are deterministic.
 * Their tolerances are at least five standard errors wide: the sample
 * median of n = 100,000 log-normal draws has a relative standard error of
 * about sigma x 0.0040 (sigma x 0.0054 for the 90th percentile), under
 * 0.4% for every spec below, against a 2% tolerance; an empirical share
 * of 0.1 has a standard error of 0.00095, against 0.005.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttslat.h"

#define ERRLEN 512
#define DRAWS 100000

static struct tb_ttslat *make(const char *spec, uint64_t seed)
{
    struct tb_ttslat *t = NULL;
    char err[ERRLEN] = "";
    int rc = tb_ttslat_create(spec, seed, &t, err, sizeof(err));
    if (rc != 0)
        fail_msg("'%s': %s (%s)", spec, err, tb_strerror(rc));
    return t;
}

static struct tb_ttslat *make_mem(const char *spec, const char *data, uint64_t seed)
{
    struct tb_ttslat *t = NULL;
    char err[ERRLEN] = "";
    int rc = tb_ttslat_create_mem(spec, data, data != NULL ? strlen(data) : 0, seed, &t, err,
                                  sizeof(err));
    if (rc != 0)
        fail_msg("'%s': %s (%s)", spec, err, tb_strerror(rc));
    return t;
}

/* The generator as ttslat.h documents it, written out again. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double doc_unit(uint64_t seed, uint64_t n)
{
    uint64_t r = mix(mix(seed) + n * 0x9E3779B97F4A7C15ull);
    return ((double)(r >> 11) + 0.5) * 0x1.0p-53;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Draws for j = 1..n, sorted (caller frees). */
static double *sorted_draws(struct tb_ttslat *t, size_t n)
{
    double *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    for (size_t j = 1; j <= n; j++)
        v[j - 1] = tb_ttslat_at(t, (uint32_t)j);
    qsort(v, n, sizeof(*v), cmp_double);
    return v;
}

static void assert_rel(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * want))
        fail_msg("%s: %.9g, want %.9g within %g%%", what, got, want, rel * 100);
}

/* ---- kinds ---------------------------------------------------------- */

static void constant(void **state)
{
    struct tb_ttslat *t = make("0.25", 7);
    struct tb_ttslat_info in;
    char buf[64];
    double (*hook)(void *, uint32_t) = tb_ttslat_at; /* the playout hook's type */
    (void)state;
    for (uint32_t j = 0; j < 1000; j++)
        assert_true(hook(t, j) == 0.25);
    assert_true(hook(t, UINT32_MAX) == 0.25);
    tb_ttslat_format(t, buf, sizeof(buf));
    assert_string_equal(buf, "0.25");
    tb_ttslat_info(t, &in);
    assert_int_equal(in.kind, TB_TTSLAT_CONST);
    assert_int_equal(in.seeded, 0);
    assert_true(in.seed == 7);
    assert_true(in.p50 == 0.25 && in.p90 == 0.25 && in.lo == 0.25 && in.hi == 0.25);
    assert_int_equal(in.values, 0);
    tb_ttslat_destroy(t);
    t = make("0", 0);
    assert_true(tb_ttslat_at(t, 1) == 0.0);
    tb_ttslat_destroy(t);
    t = make("-0", 0); /* reads as 0, formats as 0 */
    tb_ttslat_format(t, buf, sizeof(buf));
    assert_string_equal(buf, "0");
    assert_true(tb_test_same_bits(tb_ttslat_at(t, 1), 0.0));
    tb_ttslat_destroy(t);
    t = make("60", 0);
    assert_true(tb_ttslat_at(t, 3) == 60.0);
    tb_ttslat_destroy(t);
    tb_ttslat_destroy(NULL);
}

/* uniform:0..1 is the documented uniform itself; lognormal's deviate is
 * Box-Muller's cos branch of outputs 2j - 1 and 2j. */
static void generator_as_documented(void **state)
{
    const uint64_t seeds[] = {0, 1, 42, 0xFFFFFFFFFFFFFFFFull};
    (void)state;
    for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
        struct tb_ttslat *u = make("uniform:0..1", seeds[s]);
        struct tb_ttslat *l = make("lognormal:p50=0.2,p90=0.5", seeds[s]);
        struct tb_ttslat *e = make_mem("empirical:x", "1\n2\n3\n4\n", seeds[s]);
        double mu = log(0.2), sig = (log(0.5) - log(0.2)) / TB_TTSLAT_Z90;
        for (uint32_t j = 1; j <= 2000; j++) {
            double u1 = doc_unit(seeds[s], 2 * (uint64_t)j - 1);
            double u2 = doc_unit(seeds[s], 2 * (uint64_t)j);
            double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
            if (!tb_test_same_bits(tb_ttslat_at(u, j), u1))
                fail_msg("seed %zu j %u: uniform %.17g, documented %.17g", s, j, tb_ttslat_at(u, j),
                         u1);
            assert_true(tb_test_same_bits(tb_ttslat_at(l, j), exp(mu + sig * z)));
            assert_true(tb_ttslat_at(e, j) == (double)(1 + (int)(u1 * 4)));
        }
        tb_ttslat_destroy(u);
        tb_ttslat_destroy(l);
        tb_ttslat_destroy(e);
    }
}

/* ---- draws: a pure function of (seed, j) ------------------------------ */

static const char *const random_specs[] = {"lognormal:p50=0.3,p90=0.9", "uniform:0.1..0.4",
                                           "empirical:f"};
#define FILE_VALUES "0.11\n0.22\n0.33\n0.44\n0.55\n0.66\n0.77\n"

static void same_seed_same_values(void **state)
{
    (void)state;
    for (size_t k = 0; k < 3; k++) {
        const char *data = k == 2 ? FILE_VALUES : NULL;
        struct tb_ttslat *a = make_mem(random_specs[k], data, 99);
        struct tb_ttslat *b = make_mem(random_specs[k], data, 99);
        struct tb_ttslat *c = make_mem(random_specs[k], data, 100);
        int differ = 0;
        for (uint32_t j = 1; j <= 10000; j++) {
            double x = tb_ttslat_at(a, j);
            assert_true(tb_test_same_bits(x, tb_ttslat_at(b, j)));
            assert_true(tb_test_same_bits(x, tb_ttslat_at(a, j))); /* asked again */
            differ += x != tb_ttslat_at(c, j);
        }
        /* Another seed, other draws (a 7-value file repeats 1 in 7). */
        if (differ < 8000)
            fail_msg("%s: only %d of 10000 draws change with the seed", random_specs[k], differ);
        tb_ttslat_destroy(a);
        tb_ttslat_destroy(b);
        tb_ttslat_destroy(c);
    }
}

static void order_independent(void **state)
{
    enum { N = 5000 };
    static double fwd[N + 1];
    struct tb_rng r = {12345};
    (void)state;
    for (size_t k = 0; k < 3; k++) {
        const char *data = k == 2 ? FILE_VALUES : NULL;
        struct tb_ttslat *a = make_mem(random_specs[k], data, 5);
        struct tb_ttslat *b = make_mem(random_specs[k], data, 5);
        for (uint32_t j = 1; j <= N; j++)
            fwd[j] = tb_ttslat_at(a, j);
        for (uint32_t j = N; j >= 1; j--) /* backwards */
            assert_true(tb_test_same_bits(tb_ttslat_at(b, j), fwd[j]));
        for (int i = 0; i < 20000; i++) { /* at random, with repeats */
            uint32_t j = 1 + tb_rng_below(&r, N);
            assert_true(tb_test_same_bits(tb_ttslat_at(b, j), fwd[j]));
        }
        /* Chunk 1 after a million others: still the same. */
        for (uint32_t j = 1000000; j < 1001000; j++)
            (void)tb_ttslat_at(b, j);
        assert_true(tb_test_same_bits(tb_ttslat_at(b, 1), fwd[1]));
        tb_ttslat_destroy(a);
        tb_ttslat_destroy(b);
    }
}

/* ---- distributions ------------------------------------------------------ */

static void lognormal_quantiles(void **state)
{
    static const double specs[][2] = {{0.2, 0.35}, {1.0, 3.0}, {0.05, 0.08}, {0.5, 2.0}};
    (void)state;
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
        char spec[96], what[128];
        struct tb_ttslat *t;
        struct tb_ttslat_info in;
        double *v, mean = 0, sig = (log(specs[k][1]) - log(specs[k][0])) / TB_TTSLAT_Z90;
        snprintf(spec, sizeof(spec), "lognormal:p50=%g,p90=%g", specs[k][0], specs[k][1]);
        t = make(spec, 2024);
        v = sorted_draws(t, DRAWS);
        snprintf(what, sizeof(what), "%s p50", spec);
        assert_rel(v[DRAWS / 2 - 1], specs[k][0], 0.02, what);
        snprintf(what, sizeof(what), "%s p90", spec);
        assert_rel(v[DRAWS * 9 / 10 - 1], specs[k][1], 0.02, what);
        /* The mean too: exp(mu + sigma^2 / 2) (standard error < 0.5%). */
        for (size_t i = 0; i < DRAWS; i++)
            mean += v[i] / DRAWS;
        snprintf(what, sizeof(what), "%s mean", spec);
        assert_rel(mean, specs[k][0] * exp(sig * sig / 2), 0.03, what);
        assert_true(v[0] > 0 && v[DRAWS - 1] <= TB_TTSLAT_MAX);
        tb_ttslat_info(t, &in);
        assert_int_equal(in.kind, TB_TTSLAT_LOGNORMAL);
        assert_int_equal(in.seeded, 1);
        assert_true(in.p50 == specs[k][0] && in.p90 == specs[k][1]);
        assert_true(in.lo == 0 && in.hi == TB_TTSLAT_MAX);
        free(v);
        tb_ttslat_destroy(t);
    }
}

static void lognormal_degenerate_and_capped(void **state)
{
    struct tb_ttslat *t = make("lognormal:p90=0.3,p50=0.3", 1); /* either order */
    struct tb_ttslat_info in;
    char buf[64];
    (void)state;
    for (uint32_t j = 1; j <= 1000; j++)
        assert_true(tb_ttslat_at(t, j) == 0.3);
    tb_ttslat_format(t, buf, sizeof(buf));
    assert_string_equal(buf, "lognormal:p50=0.3,p90=0.3");
    tb_ttslat_info(t, &in);
    assert_true(in.lo == 0.3 && in.hi == 0.3);
    tb_ttslat_destroy(t);
    /* sigma = ln(60000) / z_0.9 = 8.6: a third of the draws pass the cap
     * and are clamped to it; none is above it, none is not finite. */
    t = make("lognormal:p50=0.001,p90=60", 3);
    for (uint32_t j = 1, capped = 0; j <= DRAWS; j++) {
        double x = tb_ttslat_at(t, j);
        assert_true(isfinite(x) && x >= 0 && x <= TB_TTSLAT_MAX);
        capped += x == TB_TTSLAT_MAX;
        if (j == DRAWS)
            assert_in_range(capped, DRAWS / 20, DRAWS / 5);
    }
    tb_ttslat_destroy(t);
}

static void uniform_quantiles(void **state)
{
    struct tb_ttslat *t = make("uniform:0.1..0.5", 77);
    struct tb_ttslat_info in;
    double *v = sorted_draws(t, DRAWS);
    (void)state;
    assert_true(v[0] >= 0.1 && v[DRAWS - 1] <= 0.5);
    assert_rel(v[0], 0.1, 0.01, "uniform min");
    assert_rel(v[DRAWS - 1], 0.5, 0.01, "uniform max");
    assert_rel(v[DRAWS / 2 - 1], 0.3, 0.01, "uniform p50");
    assert_rel(v[DRAWS * 9 / 10 - 1], 0.46, 0.01, "uniform p90");
    tb_ttslat_info(t, &in);
    assert_rel(in.p50, 0.3, 1e-12, "info p50");
    assert_rel(in.p90, 0.46, 1e-12, "info p90");
    assert_true(in.lo == 0.1 && in.hi == 0.5 && in.seeded == 1);
    free(v);
    tb_ttslat_destroy(t);
    t = make("uniform:0.2..0.2", 1);
    assert_true(tb_ttslat_at(t, 9) == 0.2);
    tb_ttslat_destroy(t);
}

static void empirical_shares(void **state)
{
    /* Ten values, one a line, with comments, blanks and CRLF. */
    const char *data = "# measured\n0.10\n0.20\r\n  0.30\t\n\n0.40\n0.50\n0.60\n0.70\n"
                       "0.80\n0.90\n   # the slow one\n2.5";
    static const double vals[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 2.5};
    struct tb_ttslat *t = make_mem("empirical:lat.txt", data, 31);
    struct tb_ttslat_info in;
    size_t count[10] = {0};
    char buf[64];
    (void)state;
    for (uint32_t j = 1; j <= DRAWS; j++) {
        double x = tb_ttslat_at(t, j);
        size_t i = 0;
        while (i < 10 && vals[i] != x)
            i++;
        if (i == 10)
            fail_msg("draw %u: %.17g is not a value of the file", j, x);
        count[i]++;
    }
    for (size_t i = 0; i < 10; i++)
        if (fabs((double)count[i] / DRAWS - 0.1) > 0.005)
            fail_msg("value %g drawn %zu times of %d, want 10%% +- 0.5%%", vals[i], count[i],
                     DRAWS);
    tb_ttslat_info(t, &in);
    assert_int_equal(in.kind, TB_TTSLAT_EMPIRICAL);
    assert_int_equal(in.values, 10);
    assert_true(in.p50 == 0.5 && in.p90 == 0.9); /* the 5th and 9th of 10 */
    assert_true(in.lo == 0.1 && in.hi == 2.5 && in.seeded == 1);
    tb_ttslat_format(t, buf, sizeof(buf));
    assert_string_equal(buf, "empirical:lat.txt");
    tb_ttslat_destroy(t);
}

static void list_cycles(void **state)
{
    static const double want[] = {0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3};
    struct tb_ttslat *a = make_mem("list:l.txt", "0.3\n# skip\n\n 0.1 \n0.2", 1);
    struct tb_ttslat *b = make_mem("list:l.txt", "0.3\n# skip\n\n 0.1 \n0.2", 2);
    struct tb_ttslat_info in;
    (void)state;
    for (uint32_t j = 1; j <= 7; j++)
        assert_true(tb_ttslat_at(a, j) == want[j - 1]);
    for (uint32_t j = 1; j <= 3000; j++) { /* no seed in it */
        assert_true(tb_ttslat_at(a, j) == tb_ttslat_at(b, j));
        assert_true(tb_ttslat_at(a, j) == want[(j - 1) % 3]);
    }
    /* The last chunk number cycles too: 2^32 - 2 = 2 (mod 3), line 3. */
    assert_true(tb_ttslat_at(a, UINT32_MAX) == 0.2);
    tb_ttslat_info(a, &in);
    assert_int_equal(in.kind, TB_TTSLAT_LIST);
    assert_int_equal(in.seeded, 0);
    assert_int_equal(in.values, 3);
    assert_true(in.p50 == 0.2 && in.p90 == 0.3 && in.lo == 0.1 && in.hi == 0.3);
    tb_ttslat_destroy(a);
    tb_ttslat_destroy(b);
    a = make_mem("list:one", "1.5\n", 1);
    assert_true(tb_ttslat_at(a, 1) == 1.5 && tb_ttslat_at(a, 2) == 1.5);
    tb_ttslat_destroy(a);
    /* A UTF-8 byte order mark at the start (some editors write one) is
     * skipped, for list: and empirical: alike; elsewhere it is no number. */
    a = make_mem("list:bom",
                 "\xEF\xBB\xBF"
                 "0.4\n0.6\n",
                 1);
    assert_true(tb_ttslat_at(a, 1) == 0.4 && tb_ttslat_at(a, 2) == 0.6);
    tb_ttslat_destroy(a);
    a = make_mem("empirical:bom",
                 "\xEF\xBB\xBF"
                 "0.4\n",
                 1);
    assert_true(tb_ttslat_at(a, 1) == 0.4);
    tb_ttslat_destroy(a);
    {
        char err[ERRLEN] = "";
        const char *mid = "0.4\n\xEF\xBB\xBF"
                          "0.6\n";
        assert_int_not_equal(
            tb_ttslat_create_mem("list:mid", mid, strlen(mid), 1, &a, err, sizeof(err)), 0);
        assert_non_null(strstr(err, "mid:2:"));
    }
}

/* ---- the canonical text and real files ----------------------------------- */

static void format_round_trip(void **state)
{
    static const char *const specs[][2] = {
        {"0.1", "0.1"},
        {"1e-3", "0.001"},
        {"lognormal:p50=0.19,p90=0.3", "lognormal:p50=0.19,p90=0.3"},
        {"lognormal:p90=2.5,p50=1", "lognormal:p50=1,p90=2.5"},
        {"0.1000000000000000000000000000000000000000000000000000000000000000000000001", "0.1"},
        {"lognormal:p50=0.1234567890123,p90=0.3", "lognormal:p50=0.1234567890123,p90=0.3"},
        {"uniform:.1..0.50", "uniform:0.1..0.5"},
        {"uniform:0..60", "uniform:0..60"},
        {"empirical:f.txt", "empirical:f.txt"},
        {"list:dir/a b.txt", "list:dir/a b.txt"},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
        int file =
            strncmp(specs[k][0], "empirical:", 10) == 0 || strncmp(specs[k][0], "list:", 5) == 0;
        const char *data = file ? "0.5\n0.25\n1\n" : NULL;
        struct tb_ttslat *t = make_mem(specs[k][0], data, 8), *u;
        struct tb_ttslat_info a, b;
        char buf[128];
        int n = tb_ttslat_format(t, buf, sizeof(buf));
        assert_int_equal(n, (int)strlen(specs[k][1]));
        assert_string_equal(buf, specs[k][1]);
        u = make_mem(buf, data, 8);
        for (uint32_t j = 1; j <= 500; j++)
            assert_true(tb_test_same_bits(tb_ttslat_at(t, j), tb_ttslat_at(u, j)));
        tb_ttslat_info(t, &a);
        tb_ttslat_info(u, &b);
        assert_true(a.kind == b.kind && a.seeded == b.seeded && a.seed == b.seed &&
                    a.p50 == b.p50 && a.p90 == b.p90 && a.lo == b.lo && a.hi == b.hi &&
                    a.values == b.values);
        tb_ttslat_destroy(t);
        tb_ttslat_destroy(u);
    }
    assert_string_equal(tb_ttslat_kind_name(TB_TTSLAT_CONST), "constant");
    assert_string_equal(tb_ttslat_kind_name(TB_TTSLAT_EMPIRICAL), "empirical");
}

static void real_files(void **state)
{
    char path[64], spec[96], err[ERRLEN] = "";
    struct tb_ttslat *t = NULL;
    FILE *f;
    int rc;
    (void)state;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-ttslat-%ld.txt", (long)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("0.2\n0.4\n", f);
    fclose(f);
    snprintf(spec, sizeof(spec), "list:%s", path);
    t = make(spec, 0);
    assert_true(tb_ttslat_at(t, 1) == 0.2 && tb_ttslat_at(t, 2) == 0.4 &&
                tb_ttslat_at(t, 3) == 0.2);
    tb_ttslat_destroy(t);
    t = NULL;
    /* Over the cap: refused before a byte is read. */
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)TB_TTSLAT_FILE_MAX + 1), 0);
    fclose(f);
    snprintf(spec, sizeof(spec), "empirical:%s", path);
    rc = tb_ttslat_create(spec, 0, &t, err, sizeof(err));
    assert_int_equal(rc, TB_ETOOBIG);
    assert_null(t);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "1 MiB"));
    /* An empty file. */
    f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    rc = tb_ttslat_create(spec, 0, &t, err, sizeof(err));
    assert_int_equal(rc, TB_EEMPTY);
    assert_non_null(strstr(err, "no values"));
    unlink(path);
    /* A missing one. */
    rc = tb_ttslat_create(spec, 0, &t, err, sizeof(err));
    assert_int_equal(rc, TB_EIO);
    assert_null(t);
    if (strstr(err, path) == NULL || strstr(err, "No such file") == NULL)
        fail_msg("missing file: '%s'", err);
}

/* ---- bad input ------------------------------------------------------------ */

struct bad {
    const char *spec, *data; /* data: FILE's contents (NULL: none) */
    int rc;
    const char *want; /* in the message */
};

static void bad_specs(void **state)
{
    static const struct bad cases[] = {
        {"", NULL, TB_EINVAL, "constant '' is not a number (allowed: 0..60 s)"},
        {"-0.1", NULL, TB_ERANGE, "constant -0.1 is outside 0..60 s"},
        {"61", NULL, TB_ERANGE, "constant 61 is outside 0..60 s"},
        {"1e300", NULL, TB_ERANGE, "outside 0..60 s"},
        {"nan", NULL, TB_EINVAL, "constant 'nan' is not a number"},
        {"inf", NULL, TB_EINVAL, "constant 'inf' is not a number"},
        {"1e999", NULL, TB_EINVAL, "not a number"},
        {" 0.2", NULL, TB_EINVAL, "not a number"},
        {"0.2 ", NULL, TB_EINVAL, "not a number"},
        {"0.2s", NULL, TB_EINVAL, "constant '0.2s' is not a number"},
        {"gamma:k=2", NULL, TB_EINVAL, "unknown kind 'gamma' (known: SECONDS, lognormal"},
        {":1", NULL, TB_EINVAL, "unknown kind ''"},
        {"Lognormal:p50=1,p90=2", NULL, TB_EINVAL, "unknown kind 'Lognormal'"},
        {"lognormal:", NULL, TB_EINVAL, "lognormal: p50 missing"},
        {"lognormal:p50=0.2", NULL, TB_EINVAL, "lognormal: p90 missing"},
        {"lognormal:p90=0.2", NULL, TB_EINVAL, "lognormal: p50 missing"},
        {"lognormal:p50=0.2,p90=0.1", NULL, TB_ERANGE,
         "lognormal p90 0.1 is below p50 0.2 (want p50 <= p90 <= 60 s)"},
        {"lognormal:p50=0,p90=0.1", NULL, TB_ERANGE, "lognormal p50 0 is outside 0.001..60 s"},
        {"lognormal:p50=-1,p90=0.1", NULL, TB_ERANGE, "lognormal p50 -1 is outside 0.001..60 s"},
        {"lognormal:p50=0.2,p90=61", NULL, TB_ERANGE, "lognormal p90 61 is outside 0.001..60 s"},
        {"lognormal:p50=nan,p90=1", NULL, TB_EINVAL, "lognormal p50 'nan' is not a number"},
        {"lognormal:p50=0.2,p90=inf", NULL, TB_EINVAL, "lognormal p90 'inf' is not a number"},
        {"lognormal:p50=0.2,p50=0.3,p90=1", NULL, TB_EINVAL, "lognormal: p50 given twice"},
        {"lognormal:p50=0.2,p90=1,", NULL, TB_EINVAL, "a trailing ','"},
        {"lognormal:p50=0.2,,p90=1", NULL, TB_EINVAL, "'' is not KEY=SECONDS"},
        {"lognormal:p50=0.2,p95=1", NULL, TB_EINVAL, "unknown key 'p95' (keys: p50, p90)"},
        {"lognormal:p50", NULL, TB_EINVAL, "'p50' is not KEY=SECONDS"},
        {"lognormal:p50=,p90=1", NULL, TB_EINVAL, "lognormal p50 '' is not a number"},
        {"uniform:0.1", NULL, TB_EINVAL, "uniform: '0.1' is not A..B"},
        {"uniform:0.5..0.1", NULL, TB_ERANGE, "uniform B 0.1 is below A 0.5"},
        {"uniform:-1..1", NULL, TB_ERANGE, "uniform A -1 is outside 0..60 s"},
        {"uniform:0..100", NULL, TB_ERANGE, "uniform B 100 is outside 0..60 s"},
        {"uniform:..1", NULL, TB_EINVAL, "uniform A '' is not a number"},
        {"uniform:1..", NULL, TB_EINVAL, "uniform B '' is not a number"},
        {"uniform:0..nan", NULL, TB_EINVAL, "uniform B 'nan' is not a number"},
        {"empirical:", NULL, TB_EINVAL, "empirical: no FILE after the ':'"},
        {"list:", NULL, TB_EINVAL, "list: no FILE after the ':'"},
        {"0.2", "1\n", TB_EINVAL, "constant takes no file"},
        {"lognormal:p50=1,p90=2", "1\n", TB_EINVAL, "lognormal takes no file"},
        /* Text from outside is shown escaped and cut. */
        {"gam\x01ma:1", NULL, TB_EINVAL, "unknown kind 'gam\\x01ma'"},
        {"0.2\x1b[31m", NULL, TB_EINVAL, "'0.2\\x1B[31m' is not a number"},
        {"lognormal:p50=0.123456789012345678901234567890123456789012345678901234567890x,p90=1",
         NULL, TB_EINVAL, "'0.12345678901234567890123456789012345678...' is not a number"},
        /* FILE's lines. */
        {"empirical:a.txt", "", TB_EEMPTY, "a.txt: no values (one number of seconds a line)"},
        {"list:a.txt", "# only\n\n  \n", TB_EEMPTY, "a.txt: no values"},
        {"list:a.txt", "0.1\n0.2\nfast\n", TB_EFORMAT,
         "a.txt:3: 'fast' is not a number of seconds (allowed: 0..60)"},
        {"list:a.txt", "0.1\n-0.2\n", TB_EFORMAT, "a.txt:2: -0.2 is outside 0..60 s"},
        {"empirical:a.txt", "\n\n0.1\n75\n", TB_EFORMAT, "a.txt:4: 75 is outside 0..60 s"},
        {"empirical:a.txt", "nan\n", TB_EFORMAT, "a.txt:1: 'nan' is not a number"},
        {"empirical:a.txt", "0.1\ninf\n", TB_EFORMAT, "a.txt:2: 'inf' is not a number"},
        {"empirical:a.txt", "0.1 0.2\n", TB_EFORMAT, "a.txt:1: '0.1 0.2' is not a number"},
        {"empirical:a.txt", "0.1,\n", TB_EFORMAT, "a.txt:1: '0.1,' is not a number"},
        /* Decimal only: strtod's hexadecimal is no number of seconds. */
        {"list:a.txt", "0.2\n0x10\n", TB_EFORMAT, "a.txt:2: '0x10' is not a number of seconds"},
        {"empirical:a.txt", "0X1p3\n", TB_EFORMAT, "a.txt:1: '0X1p3' is not a number"},
        {"0x10", NULL, TB_EINVAL, "constant '0x10' is not a number"},
        {"uniform:0..0x1", NULL, TB_EINVAL, "uniform B '0x1' is not a number"},
        {"empirical:a\x02.txt", "x\n", TB_EFORMAT, "a\\x02.txt:1: 'x' is not a number"},
        {"list:-", "1\nx\n", TB_EFORMAT, "<stdin>:2: 'x'"},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const struct bad *c = &cases[k];
        struct tb_ttslat *t = NULL;
        char err[ERRLEN] = "";
        int rc = tb_ttslat_create_mem(c->spec, c->data, c->data != NULL ? strlen(c->data) : 0, 1,
                                      &t, err, sizeof(err));
        if (rc != c->rc || strstr(err, c->want) == NULL || strchr(err, '\n') != NULL)
            fail_msg("'%s': got %s '%s', want %s with '%s'", c->spec, tb_strerror(rc), err,
                     tb_strerror(c->rc), c->want);
        assert_null(t);
    }
}

static void bad_sizes(void **state)
{
    char *big = malloc(TB_TTSLAT_FILE_MAX + 2), *spec = malloc(TB_TTSLAT_SPEC_MAX + 2);
    char err[ERRLEN] = "";
    struct tb_ttslat *t = NULL;
    int rc;
    (void)state;
    assert_non_null(big);
    assert_non_null(spec);
    /* FILE: one byte over the cap, and a NUL byte inside. */
    for (size_t i = 0; i + 2 <= TB_TTSLAT_FILE_MAX + 1; i += 2)
        memcpy(big + i, "1\n", 2);
    big[TB_TTSLAT_FILE_MAX] = '\n';
    rc = tb_ttslat_create_mem("list:big", big, TB_TTSLAT_FILE_MAX + 1, 1, &t, err, sizeof(err));
    assert_int_equal(rc, TB_ETOOBIG);
    assert_non_null(strstr(err, "big: over the 1 MiB cap"));
    rc = tb_ttslat_create_mem("list:big", big, TB_TTSLAT_FILE_MAX, 1, &t, err, sizeof(err));
    assert_int_equal(rc, 0); /* at the cap: half a million values */
    tb_ttslat_destroy(t);
    t = NULL;
    rc = tb_ttslat_create_mem("list:nul", "1\n2\0\n", 5, 1, &t, err, sizeof(err));
    assert_int_equal(rc, TB_EFORMAT);
    assert_non_null(strstr(err, "nul: a NUL byte at byte 4"));
    /* The spec: at the cap it parses (a long path), past it it does not. */
    memcpy(spec, "list:", 5);
    memset(spec + 5, 'p', TB_TTSLAT_SPEC_MAX - 5);
    spec[TB_TTSLAT_SPEC_MAX] = '\0';
    rc = tb_ttslat_create_mem(spec, "1\n", 2, 1, &t, err, sizeof(err));
    assert_int_equal(rc, 0);
    tb_ttslat_destroy(t);
    t = NULL;
    spec[TB_TTSLAT_SPEC_MAX] = 'p';
    spec[TB_TTSLAT_SPEC_MAX + 1] = '\0';
    rc = tb_ttslat_create_mem(spec, "1\n", 2, 1, &t, err, sizeof(err));
    assert_int_equal(rc, TB_ETOOBIG);
    assert_non_null(strstr(err, "over 4096 bytes"));
    assert_null(t);
    /* A message cut by a small buffer stays a string. */
    rc = tb_ttslat_create_mem("uniform:5..1", NULL, 0, 1, &t, err, 8);
    assert_int_equal(rc, TB_ERANGE);
    assert_int_equal(strlen(err), 7);
    free(big);
    free(spec);
}

int tb_test_ttslat(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constant),
        cmocka_unit_test(generator_as_documented),
        cmocka_unit_test(same_seed_same_values),
        cmocka_unit_test(order_independent),
        cmocka_unit_test(lognormal_quantiles),
        cmocka_unit_test(lognormal_degenerate_and_capped),
        cmocka_unit_test(uniform_quantiles),
        cmocka_unit_test(empirical_shares),
        cmocka_unit_test(list_cycles),
        cmocka_unit_test(format_round_trip),
        cmocka_unit_test(real_files),
        cmocka_unit_test(bad_specs),
        cmocka_unit_test(bad_sizes),
    };
    return TB_RUN_GROUP("ttslat", tests);
}
