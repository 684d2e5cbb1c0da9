/*
 * test_goodput.c - voice goodput (bench --slo) and the per-turn
 * statistics: records files written here (calls of several turns, failed
 * and unmeasured requests among them) run through `ttsbuf merge` and
 * `ttsbuf compare`, and one real `bench --slo` against `ttsbuf serve`.
 * Every figure is held to a recomputation from the records with this
 * file's own code; a contradictory "good", shards or runs of other SLOs,
 * the gates' exit codes and bad --slo values are refused as documented.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "tests.h"
#include "ttsbuf/bench.h"

static char dir[64];

#define CALLS 6
#define TURNS 5
#define NREC 30 /* CALLS * TURNS */
_Static_assert(NREC == CALLS * TURNS, "a record per turn of each call");

/* The SLOs of the runs written here, as the header carries them, and the
 * other set a second run uses. */
#define SLO_A "{\"ttfa_s\":0.8,\"gapless\":true}"
#define SLO_B "{\"ttfa_s\":1,\"gapless\":true}"

#define OPTIONS                                                                                    \
    "{\"chunk\":\"sentence\",\"min_chars\":1,\"wpm\":150,\"tts_latency_s\":0,\"preroll_s\":0,"     \
    "\"rebuffer\":false,\"voice_model\":\"rate\",\"ring_slots\":65536,\"ring_bytes\":4194304,"     \
    "\"max_tokens\":300,\"api\":\"chat\"}"

/* One request of a call, as a records line holds it. */
struct rec {
    int id, call, turn;
    int err; /* 0 ok, 1 HTTP 503 (nothing measured), 2 connection lost
              * after first audio */
    double ttft, ttfa, gap_total, t_start, t_end;
    int underruns;
};

static struct rec recs[NREC];

/* A small deterministic generator (the records differ by seed). */
static double uni(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffff) / 65536.0;
}

/* Calls whose first token and first audio grow with the turn, some with
 * an underrun, some failed, some with no content (nothing measured). */
static void make_recs(unsigned seed)
{
    unsigned s = seed;
    for (int i = 0; i < NREC; i++) {
        struct rec *r = &recs[i];
        r->id = i;
        r->call = i / TURNS;
        r->turn = i % TURNS;
        r->err = i % 11 == 5 ? 1 : i % 13 == 7 ? 2 : 0;
        r->ttft = 0.1 + 0.05 * r->turn + 0.02 * uni(&s);
        r->ttfa = r->ttft + 0.3 + 0.6 * uni(&s);
        r->underruns = uni(&s) < 0.3;
        r->gap_total = r->underruns ? 0.1 + uni(&s) : 0;
        r->t_start = 0.5 * r->call + 2.0 * r->turn + 0.001 * uni(&s);
        r->t_end = r->t_start + 1.5 + uni(&s);
        if (r->err == 1 || i % 7 == 3) { /* nothing measured */
            r->ttft = r->ttfa = r->gap_total = NAN;
            r->underruns = 0;
        }
    }
}

/* This file's own verdict: complete, first audio measured and within
 * ttfa_max, no underrun. */
static int is_good(const struct rec *r, double ttfa_max)
{
    return r->err == 0 && !isnan(r->ttfa) && r->ttfa <= ttfa_max && r->underruns == 0;
}

static void put_num(FILE *f, const char *key, double v)
{
    if (isnan(v))
        fprintf(f, ",\"%s\":null", key);
    else
        fprintf(f, ",\"%s\":%.17g", key, v);
}

/* One records line; good: 1/0 written as true/false, -1 left out. */
static void put_rec(FILE *f, const struct rec *r, int good)
{
    int events = isnan(r->ttft) ? 0 : 12;
    fprintf(f, "{\"level\":\"c=2\",\"id\":%d,\"prompt\":0,\"call\":%d,\"turn\":%d", r->id, r->call,
            r->turn);
    put_num(f, "t_sched", r->t_start);
    put_num(f, "t_start", r->t_start);
    put_num(f, "t_end", r->t_end);
    if (r->err == 1)
        fprintf(f, ",\"error\":{\"kind\":\"http\",\"message\":\"HTTP 503\",\"http_status\":503},"
                   "\"end\":\"error\",\"http_status\":503");
    else if (r->err == 2)
        fprintf(f, ",\"error\":{\"kind\":\"transport\",\"message\":\"connection lost\","
                   "\"http_status\":200},\"end\":\"connection_lost\",\"http_status\":200");
    else
        fprintf(f, ",\"error\":null,\"end\":\"complete\",\"http_status\":200");
    fprintf(f,
            ",\"events\":%d,\"content_tokens\":%d,\"usage_tokens\":null,\"usage_ignored\":null,"
            "\"surrogates_replaced\":0",
            events, events);
    put_num(f, "ttft_s", r->ttft);
    put_num(f, "ttfa_s", r->ttfa);
    put_num(f, "decode_tps", isnan(r->ttft) ? NAN : 30);
    put_num(f, "decode_tps_usage", NAN);
    fprintf(f, ",\"underruns\":%d", r->underruns);
    put_num(f, "gap_total_s", r->gap_total);
    put_num(f, "gap_max_s", r->gap_total);
    put_num(f, "min_tps", r->err == 0 && !isnan(r->ttft) ? 20 : NAN);
    put_num(f, "speedup_needed", r->err == 0 && !isnan(r->ttft) ? 0.7 : NAN);
    if (good >= 0)
        fprintf(f, ",\"good\":%s", good ? "true" : "false");
    fprintf(f, ",\"itl_s\":[]}\n");
}

enum good_mode { GOOD_RIGHT, GOOD_FLIP, GOOD_NONE };

/*
 * dir/NAME: shard `shard` of `nshards` (the ids = shard mod nshards), the
 * records reversed or not, with the header's SLOs slo (NULL: none) and
 * good flags: right (against ttfa_max), the record `flip` flipped, or none.
 * Returns the line the record `flip` is on (0 when not in this file).
 */
static int write_run(const char *name, int shard, int nshards, const char *slo, int reverse,
                     enum good_mode mode, double ttfa_max, int flip)
{
    char path[256];
    FILE *f;
    int line = 1, at = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"schema\":{\"name\":\"ttsbuf.bench_records\",\"version\":3},\"ttsbuf_version\":"
            "\"0.1.0\",\"started_at\":\"2026-12-02T10:00:00Z\",\"command\":\"bench\",\"options\":"
            "%s,\"shard\":%d,\"shards\":%d,\"levels\":[{\"mode\":\"closed\",\"concurrency\":2,"
            "\"rate\":0}],\"model\":\"m\",\"base_url\":\"http://127.0.0.1:9/v1\",\"provider\":"
            "\"remote\"%s%s}\n",
            OPTIONS, shard, nshards, slo != NULL ? ",\"slo\":" : "", slo != NULL ? slo : "");
    for (int k = 0; k < NREC; k++) {
        const struct rec *r = &recs[reverse ? NREC - 1 - k : k];
        int good = is_good(r, ttfa_max);
        if (r->id % nshards != shard)
            continue;
        line++;
        if (mode == GOOD_FLIP && r->id == flip) {
            good = !good;
            at = line;
        }
        put_rec(f, r, mode == GOOD_NONE ? -1 : good);
    }
    assert_int_equal(fclose(f), 0);
    return at;
}

static int setup(void **state)
{
    char cmd[512];
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-goodput-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s/shards %s/a %s/b %s/c", dir, dir, dir, dir,
             dir);
    tb_test_sh(cmd);
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

static double num(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItem(o, k);
    if (!cJSON_IsNumber(x))
        fail_msg("no number %s in %s", k, cJSON_PrintUnformatted(o));
    return x->valuedouble;
}

/* A statistics block against values v[0..n) (sorted here). */
static void check_stats(const cJSON *o, const char *key, double *v, size_t n)
{
    const cJSON *st = cJSON_GetObjectItem(o, key);
    double sum = 0;
    qsort(v, n, sizeof(*v), cmp_d);
    if (st == NULL || (size_t)num(st, "count") != n)
        fail_msg("%s: count %s, %zu in the records", key, cJSON_PrintUnformatted(st), n);
    if (n == 0) {
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(st, "p50")));
        return;
    }
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    assert_near(num(st, "mean"), sum / (double)n, 1e-12);
    /* cJSON prints 15 digits when they read back within its epsilon */
    assert_near(num(st, "min"), v[0], 1e-12);
    assert_near(num(st, "max"), v[n - 1], 1e-12);
    assert_near(num(st, "p50"), pct(v, n, 50), 1e-12);
    assert_near(num(st, "p95"), pct(v, n, 95), 1e-12);
}

/* A level's goodput and by_turn against the records (ttfa_max: the SLO). */
static void check_level(const cJSON *lv, double ttfa_max)
{
    const cJSON *g = cJSON_GetObjectItem(lv, "goodput"), *bt = cJSON_GetObjectItem(lv, "by_turn");
    size_t good = 0;
    double t0 = INFINITY, t1 = -INFINITY;
    for (int i = 0; i < NREC; i++) {
        good += (size_t)is_good(&recs[i], ttfa_max);
        t0 = recs[i].t_start < t0 ? recs[i].t_start : t0;
        t1 = recs[i].t_end > t1 ? recs[i].t_end : t1;
    }
    assert_true(good > 0 && good < NREC); /* the records test both sides */
    assert_non_null(g);
    assert_int_equal((size_t)num(g, "good"), good);
    assert_near(num(g, "share"), (double)good / NREC, 1e-15);
    assert_near(num(g, "per_s"), (double)good / (t1 - t0), 1e-12);
    assert_near(num(cJSON_GetObjectItem(g, "slo"), "ttfa_s"), ttfa_max, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(g, "slo"), "gapless")));
    assert_int_equal(cJSON_GetArraySize(bt), TURNS);
    for (int t = 0; t < TURNS; t++) {
        const cJSON *row = cJSON_GetArrayItem(bt, t);
        double a[NREC], b[NREC], c[NREC];
        size_t na = 0, nb = 0, nc = 0, n = 0, ok = 0, gd = 0;
        for (int i = 0; i < NREC; i++) {
            const struct rec *r = &recs[i];
            if (r->turn != t)
                continue;
            n++;
            ok += r->err == 0;
            gd += (size_t)is_good(r, ttfa_max);
            if (!isnan(r->ttft))
                a[na++] = r->ttft;
            if (!isnan(r->ttfa))
                b[nb++] = r->ttfa;
            if (!isnan(r->gap_total))
                c[nc++] = r->gap_total;
        }
        assert_int_equal((int)num(row, "turn"), t);
        assert_int_equal((size_t)num(row, "n"), n);
        assert_int_equal((size_t)num(row, "ok"), ok);
        assert_int_equal((size_t)num(row, "good"), gd);
        assert_near(num(row, "good_share"), (double)gd / (double)n, 1e-15);
        check_stats(row, "ttft_s", a, na);
        check_stats(row, "ttfa_s", b, nb);
        check_stats(row, "gap_total_s", c, nc);
    }
}

/* The levels of a merge --json, as text (for order-independence). */
static char *levels_text(const char *args)
{
    cJSON *doc = tb_test_run_json(NULL, args, 0);
    char *t = cJSON_PrintUnformatted(cJSON_GetObjectItem(doc, "levels"));
    cJSON_Delete(doc);
    assert_non_null(t);
    return t;
}

/* Two shards merged: goodput and the per-turn table equal this file's
 * recomputation; the same records in one file, reversed, give the same
 * bits; the text report and the CSV carry them. */
static void merge_equals_records(void **state)
{
    char args[512], *one, *two;
    cJSON *doc;
    struct tb_test_out o;
    (void)state;
    make_recs(7);
    write_run("shards/records-0-of-2.jsonl", 0, 2, SLO_A, 0, GOOD_RIGHT, 0.8, -1);
    write_run("shards/records-1-of-2.jsonl", 1, 2, SLO_A, 1, GOOD_RIGHT, 0.8, -1);
    write_run("a/records.jsonl", 0, 1, SLO_A, 1, GOOD_RIGHT, 0.8, -1);
    snprintf(args, sizeof(args), "merge --json --require errors=100 %s/shards", dir);
    doc = tb_test_run_json(NULL, args, 0);
    check_level(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "levels"), 0), 0.8);
    cJSON_Delete(doc);
    two = levels_text(args);
    snprintf(args, sizeof(args), "merge --json --require errors=100 %s/a/records.jsonl", dir);
    one = levels_text(args);
    assert_string_equal(one, two);
    cJSON_free(one);
    cJSON_free(two);
    snprintf(args, sizeof(args), "merge %s/shards", dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 1); /* the default gate: failed requests */
    assert_non_null(strstr(o.so, "  SLOs: ttfa_s<=0.8 gapless"));
    assert_non_null(strstr(o.so, "  goodput: "));
    assert_non_null(strstr(o.so, "    turn      n     ok  TTFT p50"));
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "merge --csv %s/shards", dir);
    o = tb_test_run(args);
    assert_non_null(strstr(o.so, ",goodput_slo,goodput_good,goodput_share,goodput_per_s,"));
    assert_non_null(strstr(o.so, ",\"ttfa_s<=0.8 gapless\","));
    tb_test_out_free(&o);
}

/* A request that did not measure its SLO's quantity fails it: first
 * audio null (no content) is not good, and a file that says it is is
 * refused at its line; as is a good that contradicts the fields either
 * way, one missing under SLOs, and one without SLOs. */
static void contradictions_refused(void **state)
{
    char args[512], want[300];
    struct tb_test_out o;
    int line;
    (void)state;
    make_recs(7);
    assert_true(isnan(recs[3].ttfa) && recs[3].err == 0); /* complete, unmeasured */
    assert_false(is_good(&recs[3], 0.8));
    /* the unmeasured record marked good */
    line = write_run("b/records.jsonl", 0, 1, SLO_A, 0, GOOD_FLIP, 0.8, 3);
    snprintf(args, sizeof(args), "merge %s/b/records.jsonl", dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    snprintf(want, sizeof(want), "%s/b/records.jsonl:%d: \"good\" is true", dir, line);
    if (strstr(o.se, want) == NULL)
        fail_msg("wanted '%s' in '%s'", want, o.se);
    assert_true(strchr(o.se, '\n') == o.se + strlen(o.se) - 1); /* one line */
    tb_test_out_free(&o);
    /* a good record marked bad */
    for (line = 0; line < NREC && !is_good(&recs[line], 0.8); line++)
        ;
    line = write_run("b/records.jsonl", 0, 1, SLO_A, 0, GOOD_FLIP, 0.8, line);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    snprintf(want, sizeof(want), "%s/b/records.jsonl:%d: \"good\" is false", dir, line);
    assert_non_null(strstr(o.se, want));
    tb_test_out_free(&o);
    /* SLOs without good; good without SLOs */
    write_run("b/records.jsonl", 0, 1, SLO_A, 0, GOOD_NONE, 0.8, -1);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    assert_non_null(strstr(o.se, ":2: \"good\" (true or false) is missing"));
    tb_test_out_free(&o);
    write_run("b/records.jsonl", 0, 1, NULL, 0, GOOD_RIGHT, 0.8, -1);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    assert_non_null(strstr(o.se, ":2: \"good\" without SLOs"));
    tb_test_out_free(&o);
    /* an SLO of an unknown quantity in the header */
    write_run("b/records.jsonl", 0, 1, "{\"loudness\":3}", 0, GOOD_NONE, 0.8, -1);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    assert_non_null(strstr(o.se, ":1: \"slo\" is not an object of SLOs"));
    tb_test_out_free(&o);
    /* without SLOs: no goodput (null), the records as before */
    write_run("b/records.jsonl", 0, 1, NULL, 0, GOOD_NONE, 0.8, -1);
    snprintf(args, sizeof(args), "merge --json --require success_share=0 %s/b/records.jsonl", dir);
    {
        cJSON *doc = tb_test_run_json(NULL, args, 0);
        const cJSON *g = cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "levels"), 0), "goodput");
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(g, "slo")));
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(g, "good")));
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(g, "share")));
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(g, "per_s")));
        /* by_turn has no good share without SLOs, but its statistics */
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(
            cJSON_GetArrayItem(
                cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "levels"), 0),
                                    "by_turn"),
                0),
            "good_share")));
        cJSON_Delete(doc);
    }
}

/* Shards of other SLOs: merge refuses, naming both; runs of other SLOs:
 * compare refuses unless --force, and says so. */
static void other_slo_refused(void **state)
{
    char args[512];
    struct tb_test_out o;
    (void)state;
    make_recs(7);
    write_run("c/records-0-of-2.jsonl", 0, 2, SLO_A, 0, GOOD_RIGHT, 0.8, -1);
    write_run("c/records-1-of-2.jsonl", 1, 2, SLO_B, 0, GOOD_RIGHT, 1.0, -1);
    snprintf(args, sizeof(args), "merge %s/c", dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    assert_non_null(
        strstr(o.se, "the SLOs (bench --slo): ttfa_s<=1 gapless here, ttfa_s<=0.8 gapless there"));
    tb_test_out_free(&o);
    write_run("a/records.jsonl", 0, 1, SLO_A, 0, GOOD_RIGHT, 0.8, -1);
    write_run("b/records.jsonl", 0, 1, SLO_B, 0, GOOD_RIGHT, 1.0, -1);
    snprintf(args, sizeof(args), "compare %s/a %s/b", dir, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    assert_non_null(strstr(o.se, "compare: the runs differ in slo (a {\"ttfa_s\":0.8,"));
    assert_non_null(strstr(o.se, "goodput would count against different SLOs"));
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "compare --force %s/a %s/b", dir, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "  differs: slo (FORCED: goodput against different SLOs): a "
                                 "{\"ttfa_s\":0.8,\"gapless\":true}, b "
                                 "{\"ttfa_s\":1,\"gapless\":true}\n"));
    tb_test_out_free(&o);
    /* a run without SLOs beside one with: a difference too */
    write_run("b/records.jsonl", 0, 1, NULL, 0, GOOD_NONE, 0.8, -1);
    snprintf(args, sizeof(args), "compare --force --json %s/a %s/b", dir, dir);
    {
        cJSON *doc = tb_test_run_json(NULL, args, 0), *d, *row;
        int seen = 0;
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(doc, "differ"))
        {
            if (strcmp(cJSON_GetObjectItem(d, "option")->valuestring, "slo") != 0)
                continue;
            seen = 1;
            assert_true(cJSON_IsTrue(cJSON_GetObjectItem(d, "refuses")));
            assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "values"), 1)));
        }
        assert_true(seen);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(doc, "forced")));
        row = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rows"), 1);
        assert_string_equal(cJSON_GetObjectItem(row, "run")->valuestring, "b");
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(row, "goodput")));
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(row, "good")));
        cJSON_Delete(doc);
    }
}

/* compare: goodput per level and run from the records (table, --json,
 * --csv), and drawn per level on the page. */
static void compare_goodput(void **state)
{
    char args[1024], page[256];
    struct tb_test_out o;
    cJSON *doc, *row;
    size_t good[2] = {0, 0};
    double span[2];
    (void)state;
    for (int k = 0; k < 2; k++) {
        double t0 = INFINITY, t1 = -INFINITY;
        make_recs(k == 0 ? 7 : 99);
        write_run(k == 0 ? "a/records.jsonl" : "b/records.jsonl", 0, 1, SLO_A, 0, GOOD_RIGHT, 0.8,
                  -1);
        for (int i = 0; i < NREC; i++) {
            good[k] += (size_t)is_good(&recs[i], 0.8);
            t0 = recs[i].t_start < t0 ? recs[i].t_start : t0;
            t1 = recs[i].t_end > t1 ? recs[i].t_end : t1;
        }
        span[k] = t1 - t0;
    }
    snprintf(page, sizeof(page), "%s/compare.html", dir);
    snprintf(args, sizeof(args), "compare --json --html %s one=%s/a two=%s/b", page, dir, dir);
    doc = tb_test_run_json(NULL, args, 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "differ")), 0);
    for (int k = 0; k < 2; k++) {
        row = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rows"), k);
        assert_int_equal((size_t)num(row, "good"), good[k]);
        assert_near(num(row, "goodput"), (double)good[k] / NREC, 1e-15);
        assert_near(num(row, "goodput_per_s"), (double)good[k] / span[k], 1e-12);
        assert_near(
            num(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "runs"), k), "slo"),
                "ttfa_s"),
            0.8, 0);
    }
    cJSON_Delete(doc);
    {
        char *html = tb_test_slurp_str(page);
        assert_non_null(html);
        assert_non_null(strstr(html, "Goodput per level (requests within the SLOs)"));
        free(html);
    }
    snprintf(args, sizeof(args), "compare one=%s/a two=%s/b", dir, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    {
        char want[128];
        snprintf(want, sizeof(want), " %7.1f%%", 100.0 * (double)good[0] / NREC);
        assert_non_null(strstr(o.so, "goodput   good/s\n"));
        assert_non_null(strstr(o.so, want));
    }
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "compare --csv one=%s/a two=%s/b", dir, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "turn_late_s_max,barge_tts_close_s_count,"));
    assert_non_null(strstr(o.so, "barge_stop_s_max,good,goodput_per_s,"));
    tb_test_out_free(&o);
}

/* --require goodput / goodput_per_s: 0 when held, 1 when not (one line a
 * level), 1 on records without SLOs (merge), 2 in bench without --slo. */
static void gates(void **state)
{
    char args[512];
    struct tb_test_out o;
    size_t good = 0;
    (void)state;
    make_recs(7);
    write_run("a/records.jsonl", 0, 1, SLO_A, 0, GOOD_RIGHT, 0.8, -1);
    for (int i = 0; i < NREC; i++)
        good += (size_t)is_good(&recs[i], 0.8);
    snprintf(args, sizeof(args), "merge --require errors=100 --require goodput=%.17g %s/a",
             (double)good / NREC, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "merge --require errors=100 --require goodput=%.17g %s/a",
             (double)(good + 1) / NREC, dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 1);
    assert_non_null(strstr(o.se, "gate goodput failed at c=2: "));
    assert_non_null(strstr(o.so, "Gates: errors <= 100, goodput >= "));
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "merge --require errors=100 --require goodput_per_s=1000 %s/a",
             dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 1);
    assert_non_null(strstr(o.se, "gate goodput_per_s failed at c=2: "));
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "merge --require goodput=1.5 %s/a", dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 2);
    tb_test_out_free(&o);
    write_run("b/records.jsonl", 0, 1, NULL, 0, GOOD_NONE, 0.8, -1);
    snprintf(args, sizeof(args), "merge --require errors=100 --require goodput=0.1 %s/b", dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 1);
    assert_non_null(strstr(o.se, "gate goodput failed at c=2: no SLOs"));
    tb_test_out_free(&o);
    o = tb_test_run("bench --mock --require goodput=0.9");
    assert_int_equal(o.code, 2);
    assert_non_null(strstr(o.se, "--require goodput: goodput needs SLOs: give --slo"));
    tb_test_out_free(&o);
}

/* Bad --slo values: one line naming the key and the value, exit 2; merge
 * has no --slo (it takes the records'). */
static void bad_slo(void **state)
{
    static const struct {
        const char *arg, *says;
    } bad[] = {
        {"loudness=3", "'loudness' is not a quantity with an SLO"},
        {"ttfa_s=-1", "ttfa_s=-1: the bound must be a number"},
        {"ttfa_s=abc", "ttfa_s=abc: the bound must be a number"},
        {"ttfa_s=", "ttfa_s=: the bound must be a number"},
        {"ttft_s=inf", "ttft_s=inf: the bound must be a number"},
        {"underruns=1.5", "underruns=1.5: the bound must be a whole number"},
        {"gapless=no", "gapless takes no value"},
        {"ttft_s", "ttft_s needs a bound"},
        {"=1", "'' is not a quantity"},
    };
    char args[256];
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tb_test_out o;
        snprintf(args, sizeof(args), "bench --mock --slo '%s'", bad[i].arg);
        o = tb_test_run(args);
        if (o.code != 2 || strstr(o.se, bad[i].says) == NULL ||
            strncmp(o.se, "ttsbuf: --slo: ", 15) != 0 ||
            strchr(o.se, '\n') != o.se + strlen(o.se) - 1)
            fail_msg("--slo %s: exit %d, stderr '%s'", bad[i].arg, o.code, o.se);
        tb_test_out_free(&o);
    }
    {
        struct tb_test_out o = tb_test_run("bench --mock --slo ttfa_s=1 --slo ttfa_s=2");
        assert_int_equal(o.code, 2);
        assert_non_null(strstr(o.se, "ttfa_s is given twice"));
        tb_test_out_free(&o);
        o = tb_test_run("merge --slo ttfa_s=1 x.jsonl");
        assert_int_equal(o.code, 2);
        tb_test_out_free(&o);
    }
}

/* A real bench --slo against ttsbuf serve: each record's good and the
 * summary's goodput equal this file's verdict on the records' fields;
 * the gate's exit codes. */
static void bench_against_serve(void **state)
{
    char args[1024], path[256], line[65536];
    int port;
    struct tb_test_out o;
    FILE *f;
    size_t n[2] = {0, 0}, good[2] = {0, 0};
    double t0[2] = {INFINITY, INFINITY}, t1[2] = {-INFINITY, -INFINITY};
    cJSON *sum;
    (void)state;
    tb_test_serve_up("--synth tps=60,ttft=0.1,tokens=12", &port);
    /* ttfa_s=0.55 parts the streams (first audio near it) or not; either
     * way the verdicts are recomputed below */
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 1,2 --requests 4 -q "
             "--slo ttfa_s=0.55 --slo gapless --slo ttft_s=2 --require goodput=0 --out %s/real "
             "--html %s/real.html --html-streams 0",
             port, dir, dir);
    o = tb_test_run(args);
    if (o.code != 0)
        fail_msg("bench: exit %d: %s", o.code, o.se);
    tb_test_out_free(&o);
    snprintf(path, sizeof(path), "%s/real/records.jsonl", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f));
    {
        cJSON *h = cJSON_Parse(line);
        char *slo = cJSON_PrintUnformatted(cJSON_GetObjectItem(h, "slo"));
        cJSON_Delete(h);
        assert_non_null(slo);
        if (strcmp(slo, "{\"ttft_s\":2,\"ttfa_s\":0.55,\"gapless\":true}") != 0)
            fail_msg("the header's slo: %s", slo);
        cJSON_free(slo);
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        cJSON *r = cJSON_Parse(line);
        const cJSON *ttft = cJSON_GetObjectItem(r, "ttft_s"),
                    *ttfa = cJSON_GetObjectItem(r, "ttfa_s");
        int k = strcmp(cJSON_GetObjectItem(r, "level")->valuestring, "c=1") == 0 ? 0 : 1;
        int mine = cJSON_IsNull(cJSON_GetObjectItem(r, "error")) && cJSON_IsNumber(ttft) &&
                   ttft->valuedouble <= 2 && cJSON_IsNumber(ttfa) && ttfa->valuedouble <= 0.55 &&
                   num(r, "underruns") == 0;
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(r, "good")), mine);
        n[k]++;
        good[k] += (size_t)mine;
        t0[k] = fmin(t0[k], num(r, "t_start"));
        t1[k] = fmax(t1[k], num(r, "t_end"));
        cJSON_Delete(r);
    }
    fclose(f);
    snprintf(path, sizeof(path), "%s/real/summary.json", dir);
    {
        char *text = tb_test_slurp_str(path);
        sum = cJSON_Parse(text);
        free(text);
    }
    assert_non_null(sum);
    for (int k = 0; k < 2; k++) {
        const cJSON *g = cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "levels"), k), "goodput");
        assert_int_equal(n[k], 4);
        assert_int_equal((size_t)num(g, "good"), good[k]);
        assert_near(num(g, "share"), (double)good[k] / (double)n[k], 1e-15);
        assert_near(num(g, "per_s"), (double)good[k] / (t1[k] - t0[k]), 1e-12);
        /* one-shot requests: no per-turn table */
        assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "levels"), k),
                                        "by_turn"));
    }
    cJSON_Delete(sum);
    /* the page's level table has the goodput columns */
    snprintf(path, sizeof(path), "%s/real.html", dir);
    {
        char *html = tb_test_slurp_str(path);
        assert_non_null(html);
        assert_non_null(strstr(html, "<th>goodput, %</th><th>good/s</th></tr>"));
        free(html);
    }
    /* the records read back (merge) give the same goodput */
    snprintf(args, sizeof(args), "merge --json %s/real", dir);
    sum = tb_test_run_json(NULL, args, 0);
    assert_int_equal(
        (size_t)num(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "levels"), 0),
                                        "goodput"),
                    "good"),
        good[0]);
    cJSON_Delete(sum);
    /* a gate no stream can meet: exit 1, after the report */
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 1 --requests 2 -q "
             "--slo ttfa_s=0.0001 --require goodput=0.5",
             port);
    o = tb_test_run(args);
    assert_int_equal(o.code, 1);
    assert_non_null(strstr(o.se, "gate goodput failed at c=1: 0, needs >= 0.5"));
    tb_test_out_free(&o);
}

/* The library: a summary's goodput and per-turn rows are the same bits
 * for the same records in any order (read back from a file, shuffled);
 * an SLO set reads back from its JSON as it was given. */
static void summary_in_any_order(void **state)
{
    struct tb_bench_meta m;
    struct tb_bench_recs r;
    struct tb_bench_summary a, b;
    struct tb_bench_slo slo, back;
    char path[128], err[300], text[200];
    unsigned seed = 3;
    cJSON *j;
    (void)state;
    make_recs(11);
    write_run("b/records.jsonl", 0, 1, SLO_A, 0, GOOD_RIGHT, 0.8, -1);
    snprintf(path, sizeof(path), "%s/b/records.jsonl", dir);
    tb_bench_recs_init(&r);
    if (tb_bench_read(path, &m, &r, err, sizeof(err)) != 0)
        fail_msg("tb_bench_read: %s", err);
    assert_int_equal(tb_bench_summarize_slo(&r, 0, &m.slo, &a), 0);
    assert_int_equal(a.nturns, TURNS);
    for (int k = 0; k < 5; k++) {
        for (size_t i = r.n; i-- > 1;) { /* Fisher-Yates */
            size_t j2 = (size_t)(uni(&seed) * (double)(i + 1));
            struct tb_bench_rec t = r.v[i];
            r.v[i] = r.v[j2];
            r.v[j2] = t;
        }
        assert_int_equal(tb_bench_summarize_slo(&r, 0, &m.slo, &b), 0);
        assert_int_equal(a.good, b.good);
        assert_true(a.good_share == b.good_share && a.good_per_s == b.good_per_s);
        assert_int_equal(b.nturns, a.nturns);
        /* No padding: the rows' doubles are meant to be the same bits. */
        /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison,cert-exp42-c,cert-flp37-c) */
        assert_memory_equal(a.by_turn, b.by_turn, a.nturns * sizeof(*a.by_turn));
        tb_bench_summary_free(&b);
    }
    /* without SLOs: no goodput, the same per-turn statistics */
    assert_int_equal(tb_bench_summarize(&r, 0, &b), 0);
    assert_false(b.slo);
    assert_true(isnan(b.good_share) && isnan(b.good_per_s) && b.good == 0);
    assert_true(isnan(b.by_turn[0].good_share));
    assert_true(b.by_turn[2].ttft.p95 == a.by_turn[2].ttft.p95);
    tb_bench_summary_free(&b);
    tb_bench_summary_free(&a);
    tb_bench_summary_free(NULL);
    tb_bench_recs_free(&r);
    memset(&slo, 0, sizeof(slo));
    assert_int_equal(tb_bench_slo_add(&slo, "gapless", err, sizeof(err)), 0);
    assert_int_equal(tb_bench_slo_add(&slo, "ttfa_s=0.1", err, sizeof(err)), 0);
    assert_int_equal(tb_bench_slo_add(&slo, "decode_tps=7.25", err, sizeof(err)), 0);
    assert_int_equal(tb_bench_slo_add(&slo, "underruns=2", err, sizeof(err)), 0);
    tb_bench_slo_text(&slo, text, sizeof(text));
    assert_string_equal(text, "ttfa_s<=0.1 underruns<=2 decode_tps>=7.25 gapless");
    j = tb_bench_slo_json(&slo); /* its numbers are raw text, as written */
    {
        char *t = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        assert_non_null(t);
        assert_string_equal(
            t, "{\"ttfa_s\":0.1,\"underruns\":2,\"decode_tps\":7.25,\"gapless\":true}");
        j = cJSON_Parse(t);
        cJSON_free(t);
    }
    assert_int_equal(tb_bench_slo_from_json(j, &back), 0);
    cJSON_Delete(j);
    assert_true(tb_bench_slo_equal(&slo, &back));
    assert_int_equal(tb_bench_slo_add(&back, "min_tps=3", err, sizeof(err)), 0);
    assert_false(tb_bench_slo_equal(&slo, &back));
}

int tb_test_goodput(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merge_equals_records),
        cmocka_unit_test(summary_in_any_order),
        cmocka_unit_test(contradictions_refused),
        cmocka_unit_test(other_slo_refused),
        cmocka_unit_test(compare_goodput),
        cmocka_unit_test(gates),
        cmocka_unit_test(bad_slo),
        cmocka_unit_test_teardown(bench_against_serve, tb_test_serve_down),
    };
    return tb_test_run_group("goodput", tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown);
}
