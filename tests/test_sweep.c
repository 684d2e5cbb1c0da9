/*
 * test_sweep.c - the sweep (sweep.h) against the plain per-stream analysis.
 *
 * Every grid point's statistics are recomputed here the slow way: each
 * stream re-timed as a new tb_stream when the point has a tps (the sweep
 * maps chunk times instead), segmented and played with tb_analyze_*, the
 * percentiles by sorting.  The inverse answers are held to their
 * definitions: at the answer the share is reached, a millisecond (or a
 * 0.1% rate) below it is not.  One and two threads give identical bytes.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/sweep.h"
#include "ttsbuf/synth.h"

#define NS 24

struct fix {
    struct tb_stream s[NS];
    struct tb_sweep_input in[NS];
    char names[NS][32];
};

static int setup(void **state)
{
    struct fix *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    for (int i = 0; i < NS; i++) {
        struct tb_synth_spec sp;
        tb_synth_default(&sp);
        sp.tps = 6.0 + 3.0 * (i % 5);
        sp.tokens = 60 + 10 * (uint32_t)(i % 7);
        sp.jitter = 0.6;
        sp.stall_p = 0.02;
        sp.stall_s = 1.5;
        sp.burst = 1 + (uint32_t)(i % 3 == 0);
        sp.seed = 100 + (uint64_t)i;
        tb_stream_init(&f->s[i]);
        if (tb_synth_generate(&sp, &f->s[i]) != 0)
            return -1;
        /* A reasoning event first: never spoken, never the first token. */
        if (i % 4 == 1) {
            struct tb_stream t;
            tb_stream_init(&t);
            tb_stream_append(&t, 0.01, "hmm", 3, 2, TB_KIND_REASONING);
            for (size_t k = 0; k < f->s[i].n; k++)
                tb_stream_append(&t, f->s[i].ev[k].t, tb_stream_text(&f->s[i], k),
                                 f->s[i].ev[k].len, f->s[i].ev[k].tokens,
                                 (enum tb_kind)f->s[i].ev[k].kind);
            tb_stream_free(&f->s[i]);
            f->s[i] = t;
        }
        snprintf(f->names[i], sizeof(f->names[i]), "s%d", i);
        f->in[i].name = f->names[i];
        f->in[i].s = &f->s[i];
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;
    for (int i = 0; i < NS; i++)
        tb_stream_free(&f->s[i]);
    free(f);
    return 0;
}

static const double ax_chunk[] = {TB_CHUNK_TOKEN, TB_CHUNK_SENTENCE, TB_CHUNK_CLAUSE};
static const double ax_minc[] = {1, 20};
static const double ax_tps[] = {0, 9};
static const double ax_wpm[] = {150, 200};
static const double ax_lat[] = {0, 0.2};
static const double ax_reb[] = {0, 1};
static const double ax_pre[] = {0, 0.5, 1.5};

static void opts(struct tb_sweep_opts *o, double target)
{
    tb_sweep_opts_default(o);
#define AX(a, v)                                                                                   \
    do {                                                                                           \
        o->axis[a] = v;                                                                            \
        o->n[a] = sizeof(v) / sizeof((v)[0]);                                                      \
    } while (0)
    AX(TB_AX_CHUNK, ax_chunk);
    AX(TB_AX_MINCHARS, ax_minc);
    AX(TB_AX_TPS, ax_tps);
    AX(TB_AX_WPM, ax_wpm);
    AX(TB_AX_LAT, ax_lat);
    AX(TB_AX_REBUFFER, ax_reb);
    AX(TB_AX_PREROLL, ax_pre);
#undef AX
    o->target = target;
}

/* s re-timed to a constant rate (content events only). */
static void retime(const struct tb_stream *s, double tps, struct tb_stream *out)
{
    uint64_t tok = 0, t0 = 0;
    double a0 = 0;
    int first = 1;
    tb_stream_clear(out);
    for (size_t k = 0; k < s->n; k++) {
        const struct tb_event *e = &s->ev[k];
        double t = e->t;
        if (e->kind == TB_KIND_CONTENT) {
            tok += e->tokens;
            if (first) {
                a0 = e->t;
                t0 = tok - 1;
                first = 0;
            }
            t = a0 + (double)(tok - 1 - t0) / tps;
        }
        assert_int_equal(tb_stream_append(out, t, tb_stream_text(s, k), e->len, e->tokens,
                                          (enum tb_kind)e->kind),
                         0);
    }
}

/* The slow way: per-stream results at point p (optionally overriding
 * pre-roll and tps). */
static void slow(const struct fix *f, const struct tb_sweep_point *p, double preroll, double tps,
                 struct tb_playout_result *res)
{
    struct tb_seg_opts so = {(enum tb_chunk_policy)p->ax[TB_AX_CHUNK],
                             (uint32_t)p->ax[TB_AX_MINCHARS], 0, 0};
    struct tb_playout_opts po = {.wpm = p->ax[TB_AX_WPM],
                                 .tts_latency = p->ax[TB_AX_LAT],
                                 .preroll = preroll,
                                 .rebuffer = (int)p->ax[TB_AX_REBUFFER]};
    struct tb_seg *seg;
    struct tb_playout *pl;
    struct tb_chunks c;
    struct tb_stream rt;
    tb_analyze_chunks_init(&c);
    tb_stream_init(&rt);
    assert_int_equal(tb_seg_create(&so, &seg), 0);
    assert_int_equal(tb_playout_create(&po, NULL, NULL, &pl), 0);
    for (int i = 0; i < NS; i++) {
        const struct tb_stream *s = &f->s[i];
        if (tps > 0) {
            retime(s, tps, &rt);
            s = &rt;
        }
        assert_int_equal(tb_analyze_segment(s, seg, &c), 0);
        assert_int_equal(tb_analyze_playout(&c, pl, &po, &res[i]), 0);
    }
    tb_playout_destroy(pl);
    tb_seg_destroy(seg);
    tb_analyze_chunks_free(&c);
    tb_stream_free(&rt);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void check_stat(const char *what, size_t pi, double *v, const struct tb_stats *st)
{
    double sum = 0, p50, p95;
    for (int i = 0; i < NS; i++)
        sum += v[i];
    qsort(v, NS, sizeof(double), cmp);
    /* Linear between closest ranks: P50 of 24 sits at rank 11.5, P95 at
     * 21.85 (0-based). */
    p50 = v[11] + (v[12] - v[11]) * 0.5;
    p95 = v[21] + (v[22] - v[21]) * 0.85;
    if (st->count != NS || fabs(st->mean - sum / NS) > 1e-9 || fabs(st->p50 - p50) > 1e-9 ||
        fabs(st->p95 - p95) > 1e-9 || st->max != v[NS - 1] || st->min != v[0])
        fail_msg("point %zu %s: mean/p50/p95/max %g/%g/%g/%g, want %g/%g/%g/%g", pi, what, st->mean,
                 st->p50, st->p95, st->max, sum / NS, p50, p95, v[NS - 1]);
}

static double share(const struct tb_playout_result *r)
{
    int n = 0;
    for (int i = 0; i < NS; i++)
        n += r[i].underruns == 0;
    return (double)n / NS;
}

static struct tb_sweep *run_sweep(const struct fix *f, double target, unsigned threads)
{
    struct tb_sweep_opts o;
    struct tb_sweep *sw;
    char err[256];
    opts(&o, target);
    assert_int_equal(tb_sweep_create(&o, f->in, NS, &sw, err, sizeof(err)), 0);
    assert_int_equal(tb_sweep_run(sw, threads, NULL, NULL), 0);
    return sw;
}

static void grid_matches_slow_path(void **state)
{
    struct fix *f = *state;
    struct tb_sweep *sw = run_sweep(f, 0.0, 2);
    struct tb_playout_result res[NS];
    double v[NS];
    size_t n;
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &n);
    assert_int_equal(n, 3 * 2 * 2 * 2 * 2 * 2 * 3);
    for (size_t p = 0; p < n; p++) {
        size_t idx[TB_AX__COUNT];
        tb_sweep_point_axes(sw, p, idx);
        assert_int_equal(tb_sweep_point_index(sw, idx), p);
        assert_true(pt[p].ax[TB_AX_PREROLL] == ax_pre[idx[TB_AX_PREROLL]]);
        assert_true(pt[p].ax[TB_AX_CHUNK] == ax_chunk[idx[TB_AX_CHUNK]]);
        slow(f, &pt[p], pt[p].ax[TB_AX_PREROLL], pt[p].ax[TB_AX_TPS], res);
        assert_near(pt[p].gapless, share(res), 1e-12);
        for (int k = 0; k < 5; k++) {
            static const char *const what[5] = {"underruns", "interruptions", "gap_total", "ttfa",
                                                "min_tps"};
            const struct tb_stats *st[5] = {&pt[p].underruns, &pt[p].interruptions,
                                            &pt[p].gap_total, &pt[p].ttfa, &pt[p].min_tps};
            for (int i = 0; i < NS; i++) {
                const struct tb_playout_result *r = &res[i];
                double all[5] = {r->underruns, r->interruptions, r->gap_total, r->ttfa, r->min_tps};
                v[i] = all[k];
            }
            check_stat(what[k], p, v, st[k]);
        }
        assert_true(isnan(pt[p].tps_for_target) && isnan(pt[p].preroll_for_target));
    }
    assert_true(tb_sweep_events_per_point(sw) > (size_t)NS * 50);
    tb_sweep_destroy(sw);
}

static void threads_agree(void **state)
{
    struct fix *f = *state;
    struct tb_sweep *a = run_sweep(f, 0.8, 1), *b = run_sweep(f, 0.8, 2);
    size_t na, nb;
    const struct tb_sweep_point *pa = tb_sweep_points(a, &na), *pb = tb_sweep_points(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(pa, pb, na * sizeof(*pa));
    tb_sweep_destroy(a);
    tb_sweep_destroy(b);
}

/* The smallest pre-roll for >= X gap-free, per series: reached at the
 * answer, not a millisecond below. */
static void inverse_preroll(void **state)
{
    static const double targets[] = {0.5, 0.8, 1.0};
    struct fix *f = *state;
    struct tb_playout_result res[NS];
    for (size_t t = 0; t < 3; t++) {
        struct tb_sweep *sw = run_sweep(f, targets[t], 2);
        size_t n;
        const struct tb_sweep_point *pt = tb_sweep_points(sw, &n);
        int positive = 0;
        for (size_t p = 0; p < n; p += 3) { /* one point per series */
            double ans = pt[p].preroll_for_target;
            assert_true(isfinite(ans) && ans >= 0);
            assert_true(pt[p + 1].preroll_for_target == ans);
            assert_true(fabs(ans * 1000.0 - floor(ans * 1000.0 + 0.5)) < 1e-6);
            slow(f, &pt[p], ans, pt[p].ax[TB_AX_TPS], res);
            if (share(res) < targets[t] - 1e-12)
                fail_msg("target %g point %zu: share %g at the answer %g", targets[t], p,
                         share(res), ans);
            if (ans > 0.0) {
                positive++;
                /* A hair under the millisecond below: exactly S_{q-1}
                 * compares either way in floating point. */
                slow(f, &pt[p], ans - 0.001 - 1e-9, pt[p].ax[TB_AX_TPS], res);
                if (share(res) >= targets[t] - 1e-12)
                    fail_msg("target %g point %zu: share %g already at %g - 1 ms", targets[t], p,
                             share(res), ans);
            }
        }
        assert_true(positive > 0);
        tb_sweep_destroy(sw);
    }
}

/* The smallest constant rate for >= X gap-free at a point's pre-roll:
 * at that rate the re-timed streams reach the share; below it, fewer
 * than X of the streams have a minimum TPS that low (a stream's minimum
 * TPS is exact: test_property.c). */
static void inverse_tps(void **state)
{
    struct fix *f = *state;
    struct tb_sweep *sw = run_sweep(f, 0.9, 2);
    struct tb_playout_result res[NS];
    size_t n;
    const struct tb_sweep_point *pt = tb_sweep_points(sw, &n);
    for (size_t p = 0; p < n; p += 7) {
        double r = pt[p].tps_for_target;
        int at = 0, below = 0;
        assert_true(isfinite(r) && r > 0);
        assert_true(r <= pt[p].min_tps.max && r >= pt[p].min_tps.p50);
        slow(f, &pt[p], pt[p].ax[TB_AX_PREROLL], 0, res);
        for (int i = 0; i < NS; i++) {
            at += res[i].min_tps <= r;
            below += res[i].min_tps <= r * 0.999;
        }
        assert_true(at >= 22 && below < 22); /* ceil(0.9 x 24) = 22 */
        slow(f, &pt[p], pt[p].ax[TB_AX_PREROLL], r * (1 + 1e-9), res);
        if (share(res) < 0.9)
            fail_msg("point %zu: share %g at the answer %g", p, share(res), r);
    }
    tb_sweep_destroy(sw);
}

static void count_progress(void *ud, size_t done, size_t total)
{
    size_t *last = ud;
    assert_true(done <= total && total > 0);
    last[0] = done;
    last[1] = total;
    last[2]++;
}

static void progress_and_defaults(void **state)
{
    struct fix *f = *state;
    struct tb_sweep_opts o;
    struct tb_sweep *sw;
    size_t seen[3] = {0, 0, 0}, n;
    const double *v;
    tb_sweep_opts_default(&o);
    assert_int_equal(tb_sweep_create(&o, f->in, NS, &sw, NULL, 0), 0);
    assert_int_equal(tb_sweep_run(sw, 1, count_progress, seen), 0);
    assert_int_equal(seen[0], seen[1]);
    assert_int_equal(seen[1], NS + 1);                            /* NS segmentations, one point */
    assert_int_equal(tb_sweep_run(sw, 1, NULL, NULL), TB_EINVAL); /* once */
    v = tb_sweep_axis_values(sw, TB_AX_CHUNK, &n);
    assert_int_equal(n, 1);
    assert_true(v[0] == TB_CHUNK_SENTENCE);
    v = tb_sweep_axis_values(sw, TB_AX_WPM, &n);
    assert_true(n == 1 && v[0] == 150);
    assert_string_equal(tb_sweep_axis_name(TB_AX_LAT), "tts_latency_s");
    assert_int_equal(tb_sweep_inputs(sw), NS);
    tb_sweep_destroy(sw);
    tb_sweep_destroy(NULL);
}

static void bad_input(void **state)
{
    struct fix *f = *state;
    struct tb_sweep_opts o;
    struct tb_sweep *sw = NULL;
    struct tb_stream only_reasoning;
    struct tb_sweep_input in = {"thinker", &only_reasoning};
    char err[256];
    static const double bad_pol[] = {0, 99};
    static const double bad_wpm[] = {5};
    static const double bad_min[] = {1.5};
    static double many[TB_SWEEP_AXIS_MAX];

    tb_sweep_opts_default(&o);
    o.target = 1.5;
    assert_int_equal(tb_sweep_create(&o, f->in, NS, &sw, err, sizeof(err)), TB_ERANGE);
    assert_null(sw);
    o.target = 0;
    o.axis[TB_AX_CHUNK] = bad_pol;
    o.n[TB_AX_CHUNK] = 2;
    assert_int_equal(tb_sweep_create(&o, f->in, NS, &sw, err, sizeof(err)), TB_ERANGE);
    assert_non_null(strstr(err, "chunk: 99"));
    tb_sweep_opts_default(&o);
    o.axis[TB_AX_WPM] = bad_wpm;
    o.n[TB_AX_WPM] = 1;
    assert_int_equal(tb_sweep_create(&o, f->in, NS, &sw, err, sizeof(err)), TB_ERANGE);
    assert_non_null(strstr(err, "wpm: 5 is outside 20..1000"));
    tb_sweep_opts_default(&o);
    o.axis[TB_AX_MINCHARS] = bad_min;
    o.n[TB_AX_MINCHARS] = 1;
    assert_int_equal(tb_sweep_create(&o, f->in, NS, &sw, err, sizeof(err)), TB_EINVAL);
    tb_sweep_opts_default(&o);
    for (size_t i = 0; i < TB_SWEEP_AXIS_MAX; i++)
        many[i] = (double)i / 10.0;
    o.axis[TB_AX_PREROLL] = many;
    o.n[TB_AX_PREROLL] = TB_SWEEP_AXIS_MAX;
    o.axis[TB_AX_LAT] = many;
    o.n[TB_AX_LAT] = 11;
    assert_int_equal(tb_sweep_create(&o, f->in, NS, &sw, err, sizeof(err)), TB_ETOOBIG);
    assert_non_null(strstr(err, "points"));
    tb_sweep_opts_default(&o);
    assert_int_equal(tb_sweep_create(&o, f->in, 0, &sw, err, sizeof(err)), TB_EEMPTY);
    tb_stream_init(&only_reasoning);
    assert_int_equal(tb_stream_append(&only_reasoning, 0.1, "hmm", 3, 1, TB_KIND_REASONING), 0);
    assert_int_equal(tb_sweep_create(&o, &in, 1, &sw, err, sizeof(err)), TB_EEMPTY);
    assert_string_equal(err, "thinker: no content event");
    tb_stream_free(&only_reasoning);
    assert_int_equal(tb_sweep_create(&o, f->in, NS, &sw, err, sizeof(err)), 0);
    assert_int_equal(tb_sweep_run(sw, 0, NULL, NULL), TB_EINVAL);
    tb_sweep_destroy(sw);
}

/* ------------------------------------------------------ end to end */

/* Exit 2 and one line on stderr containing want; nothing on stdout. */
static void expect_usage(const char *args, const char *want)
{
    struct tb_test_out o = tb_test_run(args);
    if (o.code != 2 || strstr(o.se, want) == NULL || strncmp(o.se, "ttsbuf: ", 8) != 0 ||
        strchr(o.se, '\n') != o.se + strlen(o.se) - 1 || o.so[0] != '\0')
        fail_msg("ttsbuf %s: exit %d, stdout '%s', stderr '%s'; wanted exit 2 and '%s'", args,
                 o.code, o.so, o.se, want);
    tb_test_out_free(&o);
}

/* Three recorded traces in a fresh directory; returns its path. */
static const char *trace_dir(void)
{
    static char dir[64];
    static const char *const specs[] = {"tps=5,tokens=60,seed=1", "tps=9,tokens=80,seed=2",
                                        "tps=30,tokens=70,seed=3"};
    char cmd[256];
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-sweep-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir '%s'", dir, dir);
    assert_int_equal(system(cmd), 0);
    for (int i = 0; i < 3; i++) {
        struct tb_test_out o;
        snprintf(cmd, sizeof(cmd), "sim --synth %s --record '%s/t%d.jsonl'", specs[i], dir, i);
        o = tb_test_run(cmd);
        assert_int_equal(o.code, 0);
        tb_test_out_free(&o);
    }
    return dir;
}

static void rm_dir(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static double num(cJSON *o, const char *k)
{
    cJSON *x = cJSON_GetObjectItem(o, k);
    if (!cJSON_IsNumber(x))
        fail_msg("no number '%s'", k);
    return x->valuedouble;
}

/* A directory, a glob and a file argument load the same streams; the
 * table, CSV and JSON agree with each other and with `sim` per stream. */
static void cli_outputs_agree_with_sim(void **state)
{
    const char *dir = trace_dir();
    char cmd[1024], csv[96], json[96];
    struct tb_test_out o;
    cJSON *j, *pts;
    char *text, *line;
    size_t rows = 0;
    (void)state;
    snprintf(csv, sizeof(csv), "%s/out.csv", dir);
    snprintf(json, sizeof(json), "%s/out.json", dir);
    snprintf(cmd, sizeof(cmd),
             "sweep --trace %s --preroll 0,0.5 --rebuffer both --target-gapless 0.6 --csv %s "
             "--json %s",
             dir, csv, json);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("%s: %d %s", cmd, o.code, o.se);
    assert_non_null(strstr(o.so, "ttsbuf sweep: 3 streams x 4 settings"));
    assert_non_null(strstr(o.so, "smallest pre-roll with >= 60% of the streams gap-free"));
    assert_string_equal(o.se, ""); /* no progress line off a terminal */
    tb_test_out_free(&o);

    text = tb_test_slurp_str(csv);
    {
        static const char head[] =
            "chunk,min_chars,tps,wpm,tts_latency_s,rebuffer,preroll_s,gapless_share,";
        assert_int_equal(strncmp(text, head, strlen(head)), 0);
    }
    for (line = text; (line = strchr(line, '\n')) != NULL; line++)
        rows++;
    assert_int_equal(rows, 5);
    free(text);
    text = tb_test_slurp_str(json);
    j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    assert_int_equal((int)num(j, "streams"), 3);
    pts = cJSON_GetObjectItem(j, "points");
    assert_int_equal(cJSON_GetArraySize(pts), 4);

    /* Each point against sim on each trace. */
    for (int p = 0; p < 4; p++) {
        cJSON *pt = cJSON_GetArrayItem(pts, p);
        double pre = num(pt, "preroll_s");
        int reb = cJSON_IsTrue(cJSON_GetObjectItem(pt, "rebuffer"));
        double und = 0, gmax = 0, tmax = 0;
        int clean = 0;
        for (int i = 0; i < 3; i++) {
            cJSON *r;
            snprintf(cmd, sizeof(cmd), "sim --trace %s/t%d.jsonl --preroll %g %s --json", dir, i,
                     pre, reb ? "--rebuffer" : "");
            o = tb_test_run(cmd);
            assert_int_equal(o.code, 0);
            r = cJSON_Parse(o.so);
            assert_non_null(r);
            und += num(r, "underruns");
            clean += num(r, "underruns") == 0;
            if (num(r, "gap_total_s") > gmax)
                gmax = num(r, "gap_total_s");
            if (num(r, "min_tps") > tmax)
                tmax = num(r, "min_tps");
            cJSON_Delete(r);
            tb_test_out_free(&o);
        }
        assert_near(num(pt, "gapless_share"), clean / 3.0, 1e-12);
        assert_near(num(cJSON_GetObjectItem(pt, "underruns"), "mean"), und / 3.0, 1e-12);
        assert_near(num(cJSON_GetObjectItem(pt, "gap_total_s"), "max"), gmax, 1e-9);
        assert_near(num(cJSON_GetObjectItem(pt, "min_tps"), "max"), tmax, 1e-9);
        assert_true(num(pt, "preroll_for_target_s") >= 0);
    }
    cJSON_Delete(j);

    /* A glob and file arguments give the same numbers as the directory. */
    snprintf(cmd, sizeof(cmd), "sweep --trace '%s/t*.jsonl' --preroll 0,0.5 --csv -", dir);
    o = tb_test_run(cmd);
    assert_int_equal(o.code, 0);
    snprintf(cmd, sizeof(cmd), "sweep %s/t0.jsonl %s/t1.jsonl %s/t2.jsonl --preroll 0,0.5 --csv -",
             dir, dir, dir);
    {
        struct tb_test_out o2 = tb_test_run(cmd);
        assert_int_equal(o2.code, 0);
        assert_string_equal(o.so, o2.so);
        assert_non_null(strstr(o.so, "\nsentence,1,0,150,0,0,0.5,"));
        tb_test_out_free(&o2);
    }
    tb_test_out_free(&o);
    rm_dir(dir);
}

/* Synthetic sources over seed ranges, every policy, ranges on an axis. */
static void cli_synth_seeds_and_ranges(void **state)
{
    struct tb_test_out o;
    cJSON *j, *ax;
    (void)state;
    o = tb_test_run("sweep --synth tps=20,tokens=50 --preset voice-60 --seeds 3:12 --chunk all "
                    "--preroll 0:1:0.25 --tps 0,40 --json -");
    assert_int_equal(o.code, 0);
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    assert_int_equal((int)num(j, "streams"), 20);
    ax = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "axes");
    /* all: every policy but the two time-based ones */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ax, "chunk")), TB_CHUNK__COUNT - 2);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ax, "preroll_s")), 5);
    assert_near(cJSON_GetArrayItem(cJSON_GetObjectItem(ax, "preroll_s"), 3)->valuedouble, 0.75, 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "points")),
                     (TB_CHUNK__COUNT - 2) * 5 * 2);
    cJSON_Delete(j);
    tb_test_out_free(&o);
}

/* The progress line shows on a terminal (script(1) gives one), and not
 * with --quiet. */
static void cli_progress_on_a_tty(void **state)
{
    const char *bin = getenv("TTSBUF");
    char cmd[1024], out[96];
    char *text;
    (void)state;
    if (system("command -v script >/dev/null 2>&1") != 0) {
        printf("sweep: progress test skipped: script(1) (Debian bsdutils) is missing\n");
        skip();
    }
    snprintf(out, sizeof(out), "/tmp/ttsbuf-sweep-tty-%d", (int)getpid());
    for (int quiet = 0; quiet < 2; quiet++) {
        snprintf(cmd, sizeof(cmd),
                 "script -qec \"'%s' sweep --preset demo --seeds 1:30 --preroll 0:2:0.5 %s "
                 ">/dev/null\" /dev/null >%s 2>&1",
                 bin != NULL ? bin : "./ttsbuf", quiet ? "-q" : "", out);
        assert_int_equal(system(cmd), 0);
        text = tb_test_slurp_str(out);
        if (quiet)
            assert_null(strstr(text, "units)"));
        else if (strstr(text, "ttsbuf sweep: 100% (") == NULL)
            fail_msg("no progress line on a terminal: '%s'", text);
        free(text);
    }
    remove(out);
}

static void cli_bad_usage(void **state)
{
    char cmd[256];
    const char *dir;
    (void)state;
    expect_usage("sweep", "give at least one source");
    expect_usage("sweep --preset demo --preroll 1:0:0.5", "needs START <= STOP and STEP > 0");
    expect_usage("sweep --preset demo --preroll 0:1:0", "needs START <= STOP and STEP > 0");
    expect_usage("sweep --preset demo --preroll 0:1", "'0:1' is not START:STOP:STEP");
    expect_usage("sweep --preset demo --preroll 0,x", "--preroll: 'x' is not a number");
    expect_usage("sweep --preset demo --preroll 0:1000:0.01", "more than 10000 values");
    expect_usage("sweep --preset demo --wpm 5", "--wpm: '5' is outside 20..1000");
    expect_usage("sweep --preset demo --chunk sentence,nope", "--chunk: unknown policy 'nope'");
    expect_usage("sweep --preset demo --rebuffer maybe", "'maybe' is not off, on or both");
    expect_usage("sweep --preset demo --target-gapless 0", "is not above 0");
    expect_usage("sweep --preset demo --target-gapless 1.5", "is outside 0..1");
    expect_usage("sweep --preset demo --seeds 5:1", "--seeds: '5:1' is not A:B");
    expect_usage("sweep --trace x.jsonl --seeds 1:2", "x.jsonl: No such file or directory");
    expect_usage("sweep --trace '/nonexistent/*.jsonl'", "no file matches /nonexistent/*.jsonl");
    expect_usage("sweep --preset nope", "--preset: unknown preset 'nope'");
    expect_usage("sweep --synth tps=0", "--synth: ");
    expect_usage("sweep --preset demo --threads 0", "--threads: '0' is outside 1..64");
    expect_usage("sweep --preset demo --csv - --json -",
                 "only one of --csv, --json, --svg and --html");
    expect_usage("sweep --preset demo --bogus", "sweep: unknown option '--bogus'");
    expect_usage("sweep --preset demo --preroll", "sweep: --preroll needs a value");
    expect_usage("sweep --preset demo --csv /nonexistent/x.csv", "--csv: cannot write");
    snprintf(cmd, sizeof(cmd), "sweep --trace %s", tb_test_data("trace/bad_backwards.jsonl"));
    expect_usage(cmd, "bad_backwards.jsonl:");
    dir = trace_dir();
    snprintf(cmd, sizeof(cmd), "sweep --trace %s/t0.jsonl --seeds 1:3", dir);
    expect_usage(cmd, "--seeds applies to --synth and --preset");
    snprintf(cmd, sizeof(cmd), "rm %s/*.jsonl", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "sweep --trace %s", dir);
    expect_usage(cmd, "no *.jsonl file in the directory");
    rm_dir(dir);
}

/* ------------------------------------------------------ the TTS stage */

/* Without a TTS option every output of sweep is the one before the TTS
 * axes, byte for byte: tests/data/tts/sweep_v1.txt was written by that
 * binary (the table, --csv, --json and --svg of one sweep; times, the
 * start and the version blanked). */
static void cli_no_tts_axis_is_v1(void **state)
{
    static const char args[] =
        "sweep --synth tps=30,ttft=0.3,tokens=300,jitter=0.5,stall=0.05:1.5 --seeds 1:4 "
        "--preroll 0,0.5,1 --tts-latency 0,0.2 --wpm 150,180 --target-gapless 0.75 --threads 1";
    static const char *const fmts[] = {"", "--csv -", "--json -", "--svg -"};
    char cmd[1024], *want = tb_test_slurp_str(tb_test_data("tts/sweep_v1.txt"));
    size_t used = 0, len = strlen(want);
    (void)state;
    for (int i = 0; i < 4; i++) {
        struct tb_test_out o;
        snprintf(cmd, sizeof(cmd),
                 "%s %s | sed 's/\"started_at\":\"[^\"]*\"/\"started_at\":\"-\"/; "
                 "s/\"ttsbuf_version\":\"[^\"]*\"/\"ttsbuf_version\":\"-\"/; "
                 "s/\"seconds\":[^,]*,/\"seconds\":0,/; "
                 "s/settings, [0-9.]* s on 1 thread ([0-9.]* M/settings, - s on 1 thread (- M/'",
                 args, fmts[i]);
        o = tb_test_run(cmd);
        assert_int_equal(o.code, 0);
        if (used + strlen(o.so) > len || strncmp(want + used, o.so, strlen(o.so)) != 0)
            fail_msg("sweep %s differs from tests/data/tts/sweep_v1.txt (part %d)", fmts[i], i);
        used += strlen(o.so);
        tb_test_out_free(&o);
    }
    assert_int_equal(used, len);
    free(want);
}

static int is_null(cJSON *o, const char *k)
{
    return cJSON_IsNull(cJSON_GetObjectItem(o, k));
}

/* sim on one trace with a point's TTS options and pre-roll p: its JSON. */
static cJSON *sim_point(const char *dir, int i, cJSON *pt, const char *seed, double p)
{
    char cmd[1024];
    cJSON *conc = cJSON_GetObjectItem(pt, "tts_concurrency"), *r;
    struct tb_test_out o;
    snprintf(cmd, sizeof(cmd),
             "sim --trace %s/t%d.jsonl --tts-latency '%s' --tts-seed %s --tts-concurrency %d "
             "--tts-rtf %.17g --tts-connect %.17g --preroll %.17g --json",
             dir, i, cJSON_GetObjectItem(pt, "tts_latency")->valuestring, seed,
             cJSON_IsNull(conc) ? 0 : (int)conc->valuedouble, num(pt, "tts_rtf"),
             num(pt, "tts_connect_s"), p);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("%s: %d %s", cmd, o.code, o.se);
    r = cJSON_Parse(o.so);
    assert_non_null(r);
    tb_test_out_free(&o);
    return r;
}

/* Each TTS axis's values appear per setting, and every setting's numbers
 * are `sim`'s with the same options on each stream (an independent
 * check: another command, the latency given as the spec the point
 * names); the smallest pre-roll for the target is exact against sim at
 * it and a millisecond below. */
static void cli_tts_axes_agree_with_sim(void **state)
{
    const char *dir = trace_dir();
    char cmd[1024], json[96], *text;
    struct tb_test_out o;
    cJSON *j, *pts, *tts;
    int npt, seen[2][2][2] = {{{0}}};
    (void)state;
    snprintf(json, sizeof(json), "%s/out.json", dir);
    snprintf(cmd, sizeof(cmd),
             "sweep --trace %s --tts-latency-p50 0.1,0.4 --tts-latency-shape lognormal:ratio=2.5 "
             "--tts-concurrency 0,1 --tts-rtf 0,0.6 --tts-seed 7 --tts-connect 0.3 --preroll 0,0.5 "
             "--target-gapless 0.6 --json %s --csv %s/out.csv",
             dir, json, dir);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("%s: %d %s", cmd, o.code, o.se);
    assert_non_null(strstr(o.so, "latency lognormal around each median, p90 = 2.5 x p50, seed 7"));
    assert_non_null(strstr(o.so, "latency-p50 concurrency rtf"));
    tb_test_out_free(&o);
    text = tb_test_slurp_str(json);
    j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    tts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "tts");
    assert_string_equal(cJSON_GetObjectItem(tts, "latency_shape")->valuestring, "lognormal");
    assert_near(num(tts, "latency_p90_ratio"), 2.5, 0);
    assert_near(num(tts, "seed"), 7, 0);
    pts = cJSON_GetObjectItem(j, "points");
    npt = cJSON_GetArraySize(pts);
    assert_int_equal(npt, 16);
    for (int p = 0; p < npt; p++) {
        cJSON *pt = cJSON_GetArrayItem(pts, p);
        double lat = num(pt, "tts_latency_s"), rtf = num(pt, "tts_rtf"), pre = num(pt, "preroll_s");
        int conc = is_null(pt, "tts_concurrency") ? 0 : (int)num(pt, "tts_concurrency");
        double und = 0, gmax = 0, llm = 0, ttsg = 0, tmax = -1;
        int clean = 0, none = 0;
        char want[128];
        snprintf(want, sizeof(want), "lognormal:p50=%g,p90=%g", lat, lat * 2.5);
        assert_string_equal(cJSON_GetObjectItem(pt, "tts_latency")->valuestring, want);
        assert_true(conc == 0 || conc == 1);
        assert_true(rtf == 0 || rtf == 0.6);
        assert_true(lat == 0.1 || lat == 0.4);
        if (pre == 0)
            seen[lat > 0.2][conc][rtf > 0]++;
        for (int i = 0; i < 3; i++) {
            cJSON *r = sim_point(dir, i, pt, "7", pre);
            und += num(r, "underruns");
            clean += num(r, "underruns") == 0;
            if (num(r, "gap_total_s") > gmax)
                gmax = num(r, "gap_total_s");
            llm += num(r, "gap_llm_s");
            ttsg += num(r, "gap_tts_s");
            if (is_null(r, "min_tps"))
                none++;
            else if (num(r, "min_tps") > tmax)
                tmax = num(r, "min_tps");
            cJSON_Delete(r);
        }
        assert_near(num(pt, "gapless_share"), clean / 3.0, 1e-12);
        assert_near(num(cJSON_GetObjectItem(pt, "underruns"), "mean"), und / 3.0, 1e-12);
        assert_near(num(cJSON_GetObjectItem(pt, "gap_total_s"), "max"), gmax, 1e-9);
        assert_near(num(cJSON_GetObjectItem(pt, "gap_llm_s"), "mean"), llm / 3.0, 1e-9);
        assert_near(num(cJSON_GetObjectItem(pt, "gap_tts_s"), "mean"), ttsg / 3.0, 1e-9);
        assert_int_equal((int)num(pt, "min_tps_none"), none);
        assert_int_equal((int)num(cJSON_GetObjectItem(pt, "min_tps"), "count"), 3 - none);
        if (none < 3)
            assert_near(num(cJSON_GetObjectItem(pt, "min_tps"), "max"), tmax, 1e-9 * tmax);
        /* The smallest pre-roll that makes 2 of the 3 gap-free: sim at it
         * has 2 gap-free, a millisecond less fewer. */
        if (pre == 0) {
            double ans = num(pt, "preroll_for_target_s");
            int at = 0, below = 0;
            for (int i = 0; i < 3; i++) {
                cJSON *r = sim_point(dir, i, pt, "7", ans);
                at += num(r, "underruns") == 0;
                cJSON_Delete(r);
                if (ans > 0) {
                    r = sim_point(dir, i, pt, "7", ans - 0.001);
                    below += num(r, "underruns") == 0;
                    cJSON_Delete(r);
                }
            }
            assert_true(at >= 2);
            if (ans > 0)
                assert_true(below < 2);
        }
    }
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 2; c++)
                assert_int_equal(seen[a][b][c], 1);
    cJSON_Delete(j);
    /* The CSV names the same columns, the spec quoted (it holds a comma). */
    snprintf(cmd, sizeof(cmd), "%s/out.csv", dir);
    text = tb_test_slurp_str(cmd);
    assert_non_null(strstr(text, "tts_latency_s,tts_concurrency,tts_rtf,rebuffer,preroll_s,"
                                 "tts_latency,tts_seed,tts_connect_s,gapless_share,"));
    assert_non_null(strstr(text, ",\"lognormal:p50=0.4,p90=1\",7,0.3,"));
    free(text);

    /* A uniform shape, and a preset's figures as the defaults. */
    snprintf(cmd, sizeof(cmd),
             "sweep --trace %s --tts-latency-p50 0.1 --tts-latency-shape uniform:width=0.2 "
             "--json -",
             dir);
    j = tb_test_run_json(NULL, cmd, 0);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "points"), 0), "tts_latency")
            ->valuestring,
        "uniform:0..0.2");
    cJSON_Delete(j);
    snprintf(cmd, sizeof(cmd), "sweep --trace %s --tts cartesia-sonic-3 --tts-rtf 0,0.1 --json -",
             dir);
    j = tb_test_run_json(NULL, cmd, 0);
    pts = cJSON_GetObjectItem(j, "points");
    assert_int_equal(cJSON_GetArraySize(pts), 2);
    for (int p = 0; p < 2; p++) {
        cJSON *pt = cJSON_GetArrayItem(pts, p);
        assert_string_equal(cJSON_GetObjectItem(pt, "tts_latency")->valuestring,
                            "lognormal:p50=0.188,p90=0.31");
        assert_near(num(pt, "tts_concurrency"), 1, 0);
        assert_near(num(pt, "tts_rtf"), p == 0 ? 0 : 0.1, 0);
    }
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "tts"), "preset")
            ->valuestring,
        "cartesia-sonic-3");
    cJSON_Delete(j);
    rm_dir(dir);
}

/* A setting where the TTS stage alone leaves gaps (an RTF of 2: the
 * player stalls inside every chunk whatever the LLM's rate): its minimum
 * TPS is null in the JSON, empty in the CSV and '-' in the table, never a
 * number, and the streams are counted. */
static void cli_tts_none_is_null(void **state)
{
    const char *dir = trace_dir();
    char cmd[512];
    cJSON *j, *pts, *slow, *fast;
    struct tb_test_out o;
    (void)state;
    snprintf(cmd, sizeof(cmd), "sweep --trace %s --tts-rtf 0,2 --target-gapless 1 --json -", dir);
    j = tb_test_run_json(NULL, cmd, 0);
    pts = cJSON_GetObjectItem(j, "points");
    fast = cJSON_GetArrayItem(pts, 0);
    slow = cJSON_GetArrayItem(pts, 1);
    assert_near(num(slow, "tts_rtf"), 2, 0);
    assert_int_equal((int)num(slow, "min_tps_none"), 3);
    assert_int_equal((int)num(cJSON_GetObjectItem(slow, "min_tps"), "count"), 0);
    assert_true(is_null(cJSON_GetObjectItem(slow, "min_tps"), "p50"));
    assert_true(is_null(cJSON_GetObjectItem(slow, "min_tps"), "max"));
    assert_true(is_null(slow, "tps_for_target"));
    assert_true(num(slow, "preroll_for_target_s") > 0);
    assert_int_equal((int)num(fast, "min_tps_none"), 0);
    assert_false(is_null(fast, "tps_for_target"));
    cJSON_Delete(j);
    snprintf(cmd, sizeof(cmd), "sweep --trace %s --tts-rtf 0,2 --target-gapless 1", dir);
    o = tb_test_run(cmd);
    assert_int_equal(o.code, 0);
    {
        const char *row = strstr(o.so, "\n  2 ");
        assert_non_null(row);
        row++;
        /* min TPS p50 and p95 '-', 3 none, TPS for 100% '-' */
        assert_non_null(strstr(row, "    -     -     3 "));
        assert_true(row[strcspn(row, "\n") - 1] == '-');
    }
    tb_test_out_free(&o);
    /* The picture: the axis by its name, the none in the point's tip. */
    snprintf(cmd, sizeof(cmd), "sweep --trace %s --tts-rtf 0,2 --svg -", dir);
    o = tb_test_run(cmd);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, ">TTS real-time factor (s of synthesis per s of audio)<"));
    assert_non_null(strstr(o.so, "RTF 2: 0.0% gap-free"));
    assert_non_null(strstr(o.so, "min TPS none (the TTS stage alone leaves gaps)<"));
    assert_null(strstr(o.so, "nan"));
    tb_test_out_free(&o);
    rm_dir(dir);
}

/* Bad TTS options: exit 2, one line naming the option; the concurrency
 * and RTF with sim's own messages. */
static void cli_tts_bad_usage(void **state)
{
    static const char *const same[] = {"--tts-concurrency 2000",
                                       "--tts-concurrency 1.5",
                                       "--tts-concurrency -1",
                                       "--tts-rtf 101",
                                       "--tts-rtf x",
                                       "--tts-connect 61",
                                       "--tts-seed -3",
                                       "--tts nope"};
    (void)state;
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        char a[256], b[256];
        struct tb_test_out x, y;
        snprintf(a, sizeof(a), "sweep --preset demo %s", same[i]);
        snprintf(b, sizeof(b), "sim --preset demo %s", same[i]);
        x = tb_test_run(a);
        y = tb_test_run(b);
        expect_usage(a, "--tts");
        if (strcmp(x.se, y.se) != 0)
            fail_msg("%s: '%s', sim says '%s'", same[i], x.se, y.se);
        tb_test_out_free(&x);
        tb_test_out_free(&y);
    }
    expect_usage("sweep --preset demo --tts-concurrency 0,1.5",
                 "--tts-concurrency: '1.5' is not a whole number");
    expect_usage("sweep --preset demo --tts-rtf 0:200:50", "--tts-rtf: '200' is outside 0..100");
    expect_usage("sweep --preset demo --tts-latency-p50 0.3",
                 "--tts-latency-p50: give its shape with --tts-latency-shape");
    expect_usage("sweep --preset demo --tts-latency-p50 0.3 --tts-latency-shape normal:1",
                 "--tts-latency-shape: 'normal:1' is not lognormal:ratio=R or uniform:width=W");
    expect_usage(
        "sweep --preset demo --tts-latency-p50 0.3 --tts-latency-shape lognormal:ratio=0.5",
        "--tts-latency-shape: ratio: '0.5' is outside 1..");
    expect_usage("sweep --preset demo --tts-latency 0.1 --tts-latency-p50 0.3",
                 "--tts-latency-p50: not with --tts-latency");
    expect_usage("sweep --preset demo --tts-latency-p50 0.3 --tts-latency 0.1",
                 "--tts-latency: not with --tts-latency-p50");
    expect_usage("sweep --preset demo --tts-latency lognormal:p50=1,p90=2",
                 "--tts-latency: sweep takes constants here");
    expect_usage("sweep --preset demo --tts-latency 0.1 --tts-latency-shape lognormal:ratio=2",
                 "--tts-latency-shape: not with --tts-latency");
    expect_usage("sweep --preset demo --tts-latency-shape lognormal:ratio=2",
                 "--tts-latency-shape: give the medians with --tts-latency-p50");
    expect_usage("sweep --preset demo --tts-latency-p50 0.1 --tts-latency-shape uniform:width=1",
                 "tts_latency_s: median 0.1:");
    expect_usage(
        "sweep --preset demo --tts-latency-p50 0.0005 --tts-latency-shape lognormal:ratio=2",
        "tts_latency_s: median 0.0005:");
    expect_usage("sweep --preset demo --tts-latency-p50 40 --tts-latency-shape lognormal:ratio=2",
                 "tts_latency_s: median 40:");
    expect_usage("sweep --preset demo --tts-rtf 0.5 --rebuffer both",
                 "rebuffer: not modelled with a TTS stage");
    /* (the preset's figures no source gives are warned of first) */
    {
        struct tb_test_out o = tb_test_run("sweep --preset demo --tts elevenlabs-multilingual-v2 "
                                           "--tts-latency-shape lognormal:ratio=2");
        assert_int_equal(o.code, 2);
        assert_non_null(strstr(o.se, "ttsbuf: --tts-latency-shape: --tts "
                                     "elevenlabs-multilingual-v2 has a constant latency (1.232)"));
        assert_string_equal(o.so, "");
        tb_test_out_free(&o);
    }
}

/* Writes text into dir/name. */
static void put_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A directory of recordings mixing complete, cut-off and failed streams
 * (what the README's 40-answer recipe meets): it sweeps without error;
 * the cut-off and failed ones are counted in their own columns and
 * listed, never in a share (the shares equal those of the complete ones
 * alone); a trace without an end line is swept and said to be of unknown
 * end; one recording of an HTTP 503, old or new, is not fatal. */
static void cli_mixed_recordings(void **state)
{
    const char *dir = trace_dir(); /* t0..t2: complete (synthetic) */
    struct tb_test_mock m;
    char cmd[1024], only[1024];
    struct tb_test_out o, o2;
    cJSON *j, *ns, *pt;
    (void)state;
    tb_test_mock_start(&m, 60, 0.05, 0.02, NULL);
    /* Cut off by the server (a dropped connection), and an HTTP 503, both
     * recorded by run; an older ttsbuf's 503 recording (a header, no
     * event) and an older complete one (no end line). */
    snprintf(cmd, sizeof(cmd), "run --base-url %s --model 'mock+drop@20' -q --record %s/cut.jsonl",
             m.base, dir);
    o = tb_test_run(cmd);
    assert_int_equal(o.code, 3);
    tb_test_out_free(&o);
    snprintf(cmd, sizeof(cmd),
             "run --base-url %s --model 'mock+status@503' -q --record %s/f503.jsonl", m.base, dir);
    o = tb_test_run(cmd);
    assert_int_equal(o.code, 3);
    tb_test_out_free(&o);
    tb_test_mock_stop(&m);
    put_file(dir, "old503.jsonl", "{\"ttsbuf_trace\": 1, \"command\": \"run\", \"events\": 0}\n");
    put_file(dir, "old.jsonl",
             "{\"ttsbuf_trace\": 1}\n{\"t\": 0.5, \"text\": \"One.\"}\n"
             "{\"t\": 0.6, \"text\": \" Two.\"}\n");

    snprintf(cmd, sizeof(cmd), "sweep --trace %s --preroll 0,2 --json - --target-gapless 0.5", dir);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("%s: exit %d, stderr '%s'", cmd, o.code, o.se);
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    assert_int_equal((int)num(j, "streams"), 4);
    assert_int_equal((int)num(j, "unknown_end"), 1);
    assert_int_equal((int)num(j, "incomplete"), 1);
    assert_int_equal((int)num(j, "failed"), 2);
    ns = cJSON_GetObjectItem(j, "not_swept");
    assert_int_equal(cJSON_GetArraySize(ns), 3);
    {
        static const char *const want[3][3] = {{"cut.jsonl", "incomplete", "connection_lost"},
                                               {"f503.jsonl", "failed", "error"},
                                               {"old503.jsonl", "failed", "unknown"}};
        for (int i = 0; i < 3; i++) {
            cJSON *x = cJSON_GetArrayItem(ns, i);
            const char *name = cJSON_GetObjectItem(x, "name")->valuestring;
            if (strstr(name, want[i][0]) == NULL ||
                strcmp(cJSON_GetObjectItem(x, "standing")->valuestring, want[i][1]) != 0 ||
                strcmp(cJSON_GetObjectItem(x, "end")->valuestring, want[i][2]) != 0)
                fail_msg("not_swept[%d]: %s", i, name);
        }
        char *text = cJSON_PrintUnformatted(ns);
        assert_non_null(strstr(text, "HTTP 503"));
        free(text);
    }
    pt = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "points"), 1);
    assert_int_equal((int)num(pt, "incomplete"), 1);
    assert_int_equal((int)num(pt, "failed"), 2);
    /* The shares are those of the swept streams alone. */
    snprintf(only, sizeof(only),
             "sweep %s/t0.jsonl %s/t1.jsonl %s/t2.jsonl %s/old.jsonl --preroll 0,2 --csv - "
             "--target-gapless 0.5",
             dir, dir, dir, dir);
    o2 = tb_test_run(only);
    assert_int_equal(o2.code, 0);
    {
        struct tb_test_out o3;
        char *a, *b;
        snprintf(cmd, sizeof(cmd), "sweep --trace %s --preroll 0,2 --csv - --target-gapless 0.5",
                 dir);
        o3 = tb_test_run(cmd);
        assert_int_equal(o3.code, 0);
        /* Row for row, up to the two columns of the streams left out. */
        for (a = o3.so, b = o2.so; *a != '\0' && *b != '\0';) {
            char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
            assert_non_null(ea);
            assert_non_null(eb);
            if (a == o3.so) {
                assert_non_null(strstr(a, ",streams,events,incomplete,failed\n"));
            } else if (strncmp(a, b, (size_t)(eb - b) - 4) != 0 ||
                       strncmp(ea - 4, ",1,2", 4) != 0) {
                fail_msg("row '%.*s' vs '%.*s'", (int)(ea - a), a, (int)(eb - b), b);
            }
            a = ea + 1;
            b = eb + 1;
        }
        tb_test_out_free(&o3);
    }
    tb_test_out_free(&o2);
    cJSON_Delete(j);
    tb_test_out_free(&o);

    /* The table says it too, and lists them. */
    snprintf(cmd, sizeof(cmd), "sweep --trace %s", dir);
    o = tb_test_run(cmd);
    assert_int_equal(o.code, 0);
    if (strstr(o.so, "ttsbuf sweep: 4 streams x 1 setting") == NULL ||
        strstr(o.so, "not swept: 1 cut off, 2 failed (listed below; not in any share)") == NULL ||
        strstr(o.so, "note: 1 stream of unknown end") == NULL ||
        strstr(o.so, "cut.jsonl: cut off (connection_lost at ") == NULL ||
        strstr(o.so, "f503.jsonl: failed (error at ") == NULL ||
        strstr(o.so, "old503.jsonl: failed (unknown, 0 events): the trace holds no event") == NULL)
        fail_msg("sweep table:\n%s", o.so);
    tb_test_out_free(&o);

    /* Nothing complete to sweep: exit 3, with the list. */
    snprintf(cmd, sizeof(cmd), "sweep %s/cut.jsonl %s/f503.jsonl", dir, dir);
    o = tb_test_run(cmd);
    if (o.code != 3 || strstr(o.se, "no complete stream to sweep (1 cut off, 1 failed)") == NULL)
        fail_msg("%s: exit %d, stderr '%s'", cmd, o.code, o.se);
    tb_test_out_free(&o);
    rm_dir(dir);
}

/* The recipe in examples/ runs as documented (on its synthetic default). */
static void cli_example_recipe(void **state)
{
    const char *bin = getenv("TTSBUF"), *data = getenv("TB_TESTDATA");
    char cmd[2048], out[64], path[96];
    char *text;
    (void)state;
    snprintf(out, sizeof(out), "/tmp/ttsbuf-recipe-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "TTSBUF='%s' OUT='%s' TARGET=0.9 sh '%s/../../examples/buffer-sweep.sh' "
             ">'%s.txt' 2>&1",
             bin != NULL ? bin : "./ttsbuf", out, data != NULL ? data : "tests/data", out);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof(path), "%s.txt", out);
    text = tb_test_slurp_str(path);
    if (strstr(text, "smallest pre-roll with >= 90% of the streams gap-free") == NULL)
        fail_msg("the recipe printed: %s", text);
    free(text);
    remove(path);
    for (int i = 0; i < 3; i++) {
        FILE *f;
        snprintf(path, sizeof(path), "%s.%s", out, i == 0 ? "csv" : i == 1 ? "json" : "svg");
        f = fopen(path, "r");
        assert_non_null(f);
        fclose(f);
        remove(path);
    }
}

int tb_test_sweep(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(grid_matches_slow_path, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(inverse_preroll, setup, teardown),
        cmocka_unit_test_setup_teardown(inverse_tps, setup, teardown),
        cmocka_unit_test_setup_teardown(progress_and_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_input, setup, teardown),
        cmocka_unit_test(cli_outputs_agree_with_sim),
        cmocka_unit_test(cli_synth_seeds_and_ranges),
        cmocka_unit_test(cli_progress_on_a_tty),
        cmocka_unit_test(cli_bad_usage),
        cmocka_unit_test(cli_mixed_recordings),
        cmocka_unit_test(cli_example_recipe),
        cmocka_unit_test(cli_no_tts_axis_is_v1),
        cmocka_unit_test(cli_tts_axes_agree_with_sim),
        cmocka_unit_test(cli_tts_none_is_null),
        cmocka_unit_test(cli_tts_bad_usage),
        cmocka_unit_test(tb_test_sweep_v2v_matches_sim),
        cmocka_unit_test(tb_test_sweep_v2v_target),
        cmocka_unit_test(tb_test_sweep_v2v_page),
    };
    return TB_RUN_GROUP("sweep", tests);
}
