/*
 * test_compare.c - `ttsbuf compare`: three bench runs against three
 * `ttsbuf serve` mocks of different speeds, compared; the table, --json
 * and --csv held to a recomputation from the records, the options that
 * differ named, the refusals, the page in Chromium, and bad input.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "tests.h"

static char dir[128];
static const char *const labels[] = {"fast", "slow", "late"};
/* Three providers: quick, too slow for speech (underruns), late to start. */
static const char *const synths[] = {"tps=60,ttft=0.1,tokens=12", "tps=3,ttft=0.1,tokens=16",
                                     "tps=60,ttft=0.6,tokens=12"};

/* Runs the shell line; fails unless it exits with code. */
static void sh_expect(const char *cmd, int code)
{
    int got = tb_test_sh(cmd);
    if (got != code)
        fail_msg("exit %d, wanted %d: %s", got, code, cmd);
}

/* dir/NAME: three bench runs (and a fourth at another --wpm), made once
 * for the group; the slow one at c=2 only (a level a run did not run). */
static int setup(void **state)
{
    char cmd[4096], log[256];
    int port[3], pid[3];
    size_t k = 0;
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-compare-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", dir, dir);
    tb_test_sh(cmd);
    for (int i = 0; i < 3; i++) {
        snprintf(log, sizeof(log), "%s/serve-%d.log", dir, i);
        pid[i] = tb_test_serve_spawn(synths[i], log, &port[i]);
    }
    /* The four runs at once (the slow one takes 5 s a request). */
    for (int i = 0; i < 4; i++)
        k += (size_t)snprintf(cmd + k, sizeof(cmd) - k,
                              "'%s' bench --base-url http://127.0.0.1:%d/v1 --model m -c %s "
                              "--requests 2 %s -q --out %s/%s >/dev/null 2>&1 & ",
                              tb_test_bin(), port[i % 3], i == 1 ? "2" : "1,2",
                              i == 3 ? "--wpm 220" : "", dir, i == 3 ? "wpm" : labels[i]);
    /* Two runs of calls against the quick one, their calls' settings apart. */
    for (int i = 0; i < 2; i++)
        k += (size_t)snprintf(cmd + k, sizeof(cmd) - k,
                              "'%s' bench --base-url http://127.0.0.1:%d/v1 --model m "
                              "--conversations builtin --calls 2 --turns 2 --wpm 1000 "
                              "--user-turn %s --barge-in %s -q --out %s/calls%d >/dev/null 2>&1 & ",
                              tb_test_bin(), port[0], i == 0 ? "0.1" : "0.2", i == 0 ? "0.5" : "1",
                              dir, i + 1);
    snprintf(cmd + k, sizeof(cmd) - k, "wait && ls %s/*/records.jsonl | wc -l | grep -qx 6", dir);
    sh_expect(cmd, 0);
    for (int i = 0; i < 3; i++)
        tb_test_serve_stop(pid[i]);
    return 0;
}

static int teardown(void **state)
{
    char cmd[256];
    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's default percentile (linear between the closest ranks). */
static double pct(const double *v, size_t n, double p)
{
    double r = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(r), hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (r - (double)lo);
}

/* The records of run `label` at level: the values of key (null skipped;
 * ok_only: records without an error), sorted. */
static size_t values(const char *label, const char *level, const char *key, int ok_only, double *v,
                     size_t cap)
{
    char path[256], line[65536];
    size_t n = 0;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s/records.jsonl", dir, label);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        cJSON *r = cJSON_Parse(line), *x;
        assert_non_null(r);
        x = cJSON_GetObjectItem(r, key);
        if (cJSON_IsString(cJSON_GetObjectItem(r, "level")) &&
            strcmp(cJSON_GetObjectItem(r, "level")->valuestring, level) == 0 && cJSON_IsNumber(x) &&
            (!ok_only || cJSON_IsNull(cJSON_GetObjectItem(r, "error")))) {
            assert_true(n < cap);
            v[n++] = x->valuedouble;
        }
        cJSON_Delete(r);
    }
    fclose(f);
    qsort(v, n, sizeof(*v), cmp_d);
    return n;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItem(o, k);
    if (!cJSON_IsNumber(x))
        fail_msg("no number %s in %s", k, cJSON_PrintUnformatted(o));
    return x->valuedouble;
}

/* A statistics block against the records' values. */
static void check_stats(const cJSON *row, const char *key, const double *v, size_t n)
{
    const cJSON *st = cJSON_GetObjectItem(row, key);
    double sum = 0;
    if (st == NULL || (size_t)num(st, "count") != n)
        fail_msg("%s: count %s, %zu in the records", key, cJSON_PrintUnformatted(st), n);
    if (n == 0) {
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(st, "p50")));
        return;
    }
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    assert_near(num(st, "mean"), sum / (double)n, 1e-9);
    assert_near(num(st, "min"), v[0], 1e-12);
    assert_near(num(st, "max"), v[n - 1], 1e-12);
    assert_near(num(st, "p50"), pct(v, n, 50), 1e-12);
    assert_near(num(st, "p95"), pct(v, n, 95), 1e-12);
}

/* The three runs, named three ways (NAME=DIR, NAME=FILE, a directory's
 * own name), then extra. */
static void run_args(char *buf, size_t len, const char *extra)
{
    snprintf(buf, len, "compare fast=%s/fast slow=%s/slow/records.jsonl %s/late%s", dir, dir, dir,
             extra);
}

/* --json: every row recomputed from the records; the options that differ
 * named (the URLs), none refused. */
static void json_equals_records(void **state)
{
    char args[1024];
    cJSON *doc, *rows, *row, *d;
    double v[64], w[64];
    int nrows = 0, seen_url = 0;
    (void)state;
    run_args(args, sizeof(args), " --json");
    doc = tb_test_run_json(NULL, args, 0);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "schema"), "name")->valuestring,
        "ttsbuf.compare");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "runs")), 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "runs"), i), "label")
                ->valuestring,
            labels[i]);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(doc, "forced")));
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(doc, "differ"))
    {
        const char *k = cJSON_GetObjectItem(d, "option")->valuestring;
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(d, "refuses")));
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "values")), 3);
        seen_url |= strcmp(k, "base_url") == 0;
        assert_string_not_equal(k, "wpm");
    }
    assert_true(seen_url);
    rows = cJSON_GetObjectItem(doc, "rows");
    cJSON_ArrayForEach(row, rows)
    {
        const char *lv = cJSON_GetObjectItem(row, "level")->valuestring;
        const char *rn = cJSON_GetObjectItem(row, "run")->valuestring;
        size_t n, ng = 0, nok;
        nrows++;
        n = values(rn, lv, "ttft_s", 0, v, 64);
        check_stats(row, "ttft_s", v, n);
        n = values(rn, lv, "ttfa_s", 0, v, 64);
        check_stats(row, "ttfa_s", v, n);
        n = values(rn, lv, "gap_total_s", 0, v, 64);
        check_stats(row, "gap_total_s", v, n);
        n = values(rn, lv, "min_tps", 1, v, 64);
        check_stats(row, "min_tps", v, n);
        nok = values(rn, lv, "underruns", 1, w, 64);
        for (size_t i = 0; i < nok; i++)
            ng += w[i] == 0;
        assert_int_equal((size_t)num(row, "requests"), 2);
        assert_int_equal((size_t)num(row, "ok"), nok);
        assert_int_equal((size_t)num(row, "gapless"), ng);
        assert_near(num(row, "gapless_share"), (double)ng / (double)nok, 1e-15);
        /* Not measured: null, never 0. */
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(row, "goodput")));
        /* The slow provider cannot keep up with speech: gaps. */
        if (strcmp(rn, "slow") == 0)
            assert_true(ng < nok);
        if (strcmp(rn, "fast") == 0)
            assert_int_equal(ng, nok);
    }
    assert_int_equal(nrows, 5); /* slow ran c=2 only */
    cJSON_Delete(doc);
}

/* The table names every run, every level and what differs; --csv is the
 * JSON's rows. */
static void table_and_csv(void **state)
{
    char args[1024];
    struct tb_test_out o;
    cJSON *doc;
    const char *p;
    int lines = 0;
    (void)state;
    run_args(args, sizeof(args), "");
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_true(strncmp(o.so, "ttsbuf compare: 3 runs\n", 23) == 0);
    for (int i = 0; i < 3; i++)
        assert_non_null(strstr(o.so, labels[i]));
    assert_non_null(strstr(o.so, "\nc=1\n"));
    assert_non_null(strstr(o.so, "\nc=2\n"));
    assert_non_null(strstr(o.so, "  differs: base_url: fast \"http://127.0.0.1:"));
    assert_non_null(strstr(o.so, "gap_total_s"));
    assert_non_null(strstr(o.so, "\n  slow        (not run at this level)\n"));
    assert_null(strstr(o.so, "MOCK")); /* a remote provider, as far as bench knew */
    tb_test_out_free(&o);
    run_args(args, sizeof(args), " --csv");
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_true(strncmp(o.so, "level,run,requests,ok,gapless,gapless_share,goodput,ttft_s_count,",
                        65) == 0);
    for (p = o.so; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 6);
    run_args(args, sizeof(args), " --json");
    doc = tb_test_run_json(NULL, args, 0);
    {
        /* Row 1 of the CSV: the first JSON row's TTFT median, exactly. */
        const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rows"), 0);
        char want[128];
        snprintf(want, sizeof(want), "\n\"%s\",\"%s\",2,",
                 cJSON_GetObjectItem(r0, "level")->valuestring,
                 cJSON_GetObjectItem(r0, "run")->valuestring);
        assert_non_null(strstr(o.so, want));
        snprintf(want, sizeof(want), ",%.17g,", num(cJSON_GetObjectItem(r0, "ttft_s"), "p50"));
        assert_non_null(strstr(o.so, want));
        /* goodput (the 7th column): an empty cell in every row, not 0. */
        for (p = strchr(o.so, '\n'); p != NULL && p[1] != '\0'; p = strchr(p + 1, '\n')) {
            const char *c = p + 1;
            for (int col = 0; col < 6; col++) {
                c = strchr(c, ',');
                assert_non_null(c);
                c++;
            }
            assert_int_equal(*c, ',');
        }
    }
    cJSON_Delete(doc);
    tb_test_out_free(&o);
}

/* A run at another --wpm: refused, naming the option; --force compares
 * and says so. */
static void refusals(void **state)
{
    char args[512];
    cJSON *doc, *d;
    int wpm = 0;
    struct tb_test_out o;
    (void)state;
    snprintf(args, sizeof(args), "compare %s/fast %s/wpm", dir, dir);
    tb_test_expect_error(args, 2, "compare: the runs differ in wpm (fast 150, wpm 220)");
    snprintf(args, sizeof(args), "compare %s/fast %s/wpm --force --json", dir, dir);
    doc = tb_test_run_json(NULL, args, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(doc, "forced")));
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(doc, "differ"))
    {
        if (strcmp(cJSON_GetObjectItem(d, "option")->valuestring, "wpm") != 0)
            continue;
        wpm = 1;
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(d, "refuses")));
        assert_near(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "values"), 1)->valuedouble, 220, 0);
    }
    assert_true(wpm);
    cJSON_Delete(doc);
    snprintf(args, sizeof(args), "compare %s/fast %s/wpm --force", dir, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "  differs: wpm (FORCED: measured against different speech): "
                                 "fast 150, wpm 220\n"));
    tb_test_out_free(&o);
}

/* Bad input: one line naming the file (and line), exit 2. */
static void bad_input(void **state)
{
    char args[1024], cmd[1024];
    (void)state;
    snprintf(args, sizeof(args), "compare %s/fast", dir);
    tb_test_expect_error(args, 2, "compare: give at least two runs");
    tb_test_expect_error("compare", 2, "compare: give at least two runs");
    snprintf(args, sizeof(args), "compare %s/fast %s/nonexistent", dir, dir);
    tb_test_expect_error(args, 2, "/nonexistent: No such file or directory");
    snprintf(args, sizeof(args), "compare %s/fast %s/slow/summary.json", dir, dir);
    tb_test_expect_error(args, 2, "summary.json is a bench summary (ttsbuf.bench_summary)");
    snprintf(args, sizeof(args), "compare %s/fast %s/fast", dir, dir);
    tb_test_expect_error(args, 2, "compare: two runs named 'fast'");
    snprintf(args, sizeof(args), "compare %s/fast %s", dir, dir);
    tb_test_expect_error(args, 2, "holds no records*.jsonl");
    /* A records file cut in the middle of its third line. */
    snprintf(cmd, sizeof(cmd),
             "cd %s && mkdir -p cut && head -c $(( $(head -2 slow/records.jsonl | wc -c) + 40 )) "
             "slow/records.jsonl >cut/records.jsonl",
             dir);
    sh_expect(cmd, 0);
    snprintf(args, sizeof(args), "compare %s/fast %s/cut", dir, dir);
    tb_test_expect_error(args, 2, "cut/records.jsonl:3: ");
    /* Another schema: a trace is not a records file. */
    snprintf(cmd, sizeof(cmd),
             "cd %s && mkdir -p other && sed '1s/ttsbuf.bench_records/ttsbuf.other/' "
             "slow/records.jsonl >other/records.jsonl",
             dir);
    sh_expect(cmd, 0);
    snprintf(args, sizeof(args), "compare %s/fast %s/other", dir, dir);
    tb_test_expect_error(args, 2, "other/records.jsonl:1: ");
    /* Half a sharded run. */
    snprintf(cmd, sizeof(cmd),
             "cd %s && mkdir -p half && sed '1s/\"shard\":0,\"shards\":1/\"shard\":0,"
             "\"shards\":2/' slow/records.jsonl >half/records-0-of-2.jsonl",
             dir);
    sh_expect(cmd, 0);
    snprintf(args, sizeof(args), "compare %s/fast %s/half", dir, dir);
    tb_test_expect_error(args, 2, "half: shard 1 of 2 is missing");
    tb_test_expect_error("compare a b --bogus", 2, "unknown option '--bogus'");
}

/* A sharded run's directory is merged as `merge` merges it: the slow run
 * split into two shards compares exactly as the slow run. */
static void sharded_run_merged(void **state)
{
    char cmd[2048], args[512];
    cJSON *doc;
    const cJSON *rows;
    (void)state;
    snprintf(cmd, sizeof(cmd),
             "cd %s && mkdir -p split && for i in 0 1; do "
             "head -1 slow/records.jsonl | sed 's/\"shard\":0,\"shards\":1/\"shard\":'$i',"
             "\"shards\":2/' >split/records-$i-of-2.jsonl; "
             "tail -n +2 slow/records.jsonl | awk -v i=$i -F'\"id\":' "
             "'{split($2,a,\",\"); if (a[1] %% 2 == i) print}' >>split/records-$i-of-2.jsonl; "
             "done",
             dir);
    sh_expect(cmd, 0);
    snprintf(args, sizeof(args), "compare slow=%s/slow split=%s/split --json", dir, dir);
    doc = tb_test_run_json(NULL, args, 0);
    rows = cJSON_GetObjectItem(doc, "rows");
    assert_int_equal(cJSON_GetArraySize(rows), 2);
    assert_int_equal((int)num(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "runs"), 1), "shards"),
                     2);
    for (const char *const *k =
             (const char *const[]){"ttft_s", "ttfa_s", "gap_total_s", "min_tps", NULL};
         *k != NULL; k++)
        assert_true(cJSON_Compare(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), *k),
                                  cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 1), *k), 1));
    assert_int_equal((int)num(cJSON_GetArrayItem(rows, 1), "requests"), 2);
    cJSON_Delete(doc);
    /* One shard alone is half a run. */
    snprintf(args, sizeof(args), "compare %s/slow %s/split/records-1-of-2.jsonl", dir, dir);
    tb_test_expect_error(args, 2, "records-1-of-2.jsonl: shard 0 of 2 is missing");
}

/* --html: the page opens in Chromium with no error and no request; each
 * chart has one series per run (per run that ran the level), each CDF as
 * many samples as the JSON's count. */
static void page_in_chromium(void **state)
{
    char args[2048], extra[320], page[256], seen[256], colors[3][16] = {"", "", ""};
    cJSON *doc, *out, *ch;
    int ncdf = 0, nlev = 0;
    (void)state;
    tb_test_need("chromium");
    tb_test_need("node");
    snprintf(page, sizeof(page), "%s/page.html", dir);
    snprintf(seen, sizeof(seen), "%s/page.seen", dir);
    snprintf(extra, sizeof(extra), " --json --html %s", page);
    run_args(args, sizeof(args), extra);
    doc = tb_test_run_json(NULL, args, 0);
    out = tb_test_browse(page, seen);
    assert_string_equal(cJSON_GetObjectItem(out, "kind")->valuestring, "compare");
    /* The page's JSON is --json's but for the start time. */
    cJSON_DeleteItemFromObject(doc, "started_at");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(out, "result"), "started_at");
    assert_true(cJSON_Compare(cJSON_GetObjectItem(out, "result"), doc, 1));
    cJSON_ArrayForEach(ch, cJSON_GetObjectItem(out, "charts"))
    {
        const char *kind = cJSON_GetObjectItem(ch, "chart")->valuestring;
        const char *title = cJSON_GetObjectItem(ch, "title")->valuestring;
        const cJSON *series = cJSON_GetObjectItem(ch, "series"), *s;
        /* The level of a CDF ("... at c=1: ..."); the per-level chart has
         * every run, a CDF those that ran its level (slow: c=2 only). */
        const char *lv = strstr(title, " at c=") != NULL ? strstr(title, " at c=") + 4 : NULL;
        int c1 = lv != NULL && strncmp(lv, "c=1", 3) == 0, i = 0;
        assert_int_equal(cJSON_GetArraySize(series), c1 ? 2 : 3);
        cJSON_ArrayForEach(s, series)
        {
            const char *color = cJSON_GetStringValue(cJSON_GetObjectItem(s, "color"));
            if (c1 && i == 1)
                i = 2; /* no slow */
            assert_true(i < 3);
            assert_string_equal(cJSON_GetObjectItem(s, "run")->valuestring, labels[i]);
            assert_int_equal((int)num(s, "lines"), strcmp(kind, "cdf") == 0 || i != 1 ? 1 : 0);
            /* A run keeps its colour in every chart, whichever runs the
             * chart has. */
            assert_non_null(color);
            if (colors[i][0] == '\0')
                snprintf(colors[i], sizeof(colors[i]), "%s", color);
            if (strcmp(colors[i], color) != 0)
                fail_msg("%s is %s in '%s', %s before", labels[i], color, title, colors[i]);
            if (strcmp(kind, "cdf") == 0) {
                /* The samples drawn are the statistics block's. */
                const char *key = strncmp(title, "First audio", 11) == 0 ? "ttfa_s" : "gap_total_s";
                const cJSON *row;
                int found = 0;
                assert_non_null(lv);
                cJSON_ArrayForEach(row, cJSON_GetObjectItem(doc, "rows"))
                {
                    if (strncmp(cJSON_GetObjectItem(row, "level")->valuestring, lv, 3) == 0 &&
                        strcmp(cJSON_GetObjectItem(row, "run")->valuestring, labels[i]) == 0) {
                        assert_near(num(s, "n"), num(cJSON_GetObjectItem(row, key), "count"), 0);
                        found = 1;
                    }
                }
                assert_true(found);
            } else {
                /* A point a level the run ran; none where it did not. */
                assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(s, "points")),
                                 i == 1 ? 1 : 2);
            }
            i++;
        }
        ncdf += strcmp(kind, "cdf") == 0;
        nlev += strcmp(kind, "levels") == 0;
    }
    assert_string_not_equal(colors[0], colors[1]);
    assert_string_not_equal(colors[1], colors[2]);
    assert_string_not_equal(colors[0], colors[2]);
    assert_int_equal(ncdf, 4); /* two levels x (first audio, silence) */
    assert_int_equal(nlev, 1);
    cJSON_Delete(out);
    cJSON_Delete(doc);
}

/* Two runs with the same values (the same records, named twice): on the
 * page neither hides the other, as on sweep's: every chart draws each
 * with its own dash pattern, the per-level chart puts their points side
 * by side, and the legend says the second is the same as the first. */
static void equal_runs_stay_visible(void **state)
{
    char args[1024], page[256], seen[256];
    struct tb_test_out o;
    cJSON *out, *ch;
    int charts = 0;
    (void)state;
    tb_test_need("chromium");
    tb_test_need("node");
    snprintf(page, sizeof(page), "%s/same.html", dir);
    snprintf(seen, sizeof(seen), "%s/same.seen", dir);
    snprintf(args, sizeof(args), "compare fast=%s/fast same=%s/fast --html %s >/dev/null", dir, dir,
             page);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    out = tb_test_browse(page, seen);
    cJSON_ArrayForEach(ch, cJSON_GetObjectItem(out, "charts"))
    {
        const cJSON *sr = cJSON_GetObjectItem(ch, "series");
        const cJSON *a = cJSON_GetArrayItem(sr, 0), *b = cJSON_GetArrayItem(sr, 1);
        const cJSON *lg = cJSON_GetObjectItem(ch, "legend");
        const char *da = cJSON_GetStringValue(cJSON_GetObjectItem(a, "dash"));
        const char *db = cJSON_GetStringValue(cJSON_GetObjectItem(b, "dash"));
        if (strcmp(cJSON_GetObjectItem(ch, "chart")->valuestring, "levels") != 0 &&
            strcmp(cJSON_GetObjectItem(ch, "chart")->valuestring, "cdf") != 0)
            continue;
        charts++;
        assert_int_equal(cJSON_GetArraySize(sr), 2);
        /* the same points (CDF: the same samples) */
        assert_true(
            cJSON_Compare(cJSON_GetObjectItem(a, "points"), cJSON_GetObjectItem(b, "points"), 1));
        assert_true(cJSON_Compare(cJSON_GetObjectItem(a, "n"), cJSON_GetObjectItem(b, "n"), 1));
        if (da == NULL || db == NULL || strcmp(da, db) == 0)
            fail_msg("'%s': the two lines are dashed alike (%s, %s): one hides the other",
                     cJSON_GetObjectItem(ch, "title")->valuestring, da ? da : "none",
                     db ? db : "none");
        assert_int_equal(cJSON_GetArraySize(lg), 2);
        assert_string_equal(cJSON_GetArrayItem(lg, 0)->valuestring, "fast");
        assert_string_equal(cJSON_GetArrayItem(lg, 1)->valuestring, "same (same as fast)");
        for (int i = 0; i < cJSON_GetArraySize(cJSON_GetObjectItem(a, "xs")); i++)
            assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "xs"), i)->valuedouble !=
                        cJSON_GetArrayItem(cJSON_GetObjectItem(b, "xs"), i)->valuedouble);
    }
    assert_int_equal(charts, 5); /* gapless per level, two levels x two CDFs */
    cJSON_Delete(out);
}

/* Calls' settings (the header's conversations block) differ as options
 * do: each key named with both runs' values, in the table and --json. */
static void calls_settings_differ(void **state)
{
    char args[512];
    struct tb_test_out o;
    cJSON *doc, *d;
    int seen = 0;
    (void)state;
    snprintf(args, sizeof(args), "compare a=%s/calls1 b=%s/calls2", dir, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "  differs: conversations.user_turn: a \"0.1\", b \"0.2\"\n"));
    assert_non_null(strstr(o.so, "  differs: conversations.barge_in: a 0.5, b 1\n"));
    assert_null(strstr(o.so, "options: the same in every run"));
    assert_null(strstr(o.so, "differs: conversations.turns"));
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "compare a=%s/calls1 b=%s/calls2 --json", dir, dir);
    doc = tb_test_run_json(NULL, args, 0);
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(doc, "differ"))
        seen += strncmp(cJSON_GetObjectItem(d, "option")->valuestring, "conversations.", 14) == 0;
    assert_int_equal(seen, 2);
    cJSON_Delete(doc);
}

int tb_test_compare(void)
{
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(json_equals_records),
        cmocka_unit_test(table_and_csv),
        cmocka_unit_test(refusals),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(sharded_run_merged),
        cmocka_unit_test(page_in_chromium),
        cmocka_unit_test(equal_runs_stay_visible),
        cmocka_unit_test(calls_settings_differ),
    };
    return tb_test_run_group("compare", cases, sizeof(cases) / sizeof((cases)[0]), setup, teardown);
}
