/*
 * test_outputs.c - one run, one truth: asking for an output never changes
 * a number.  Each command (sim, run, bench, sweep) runs with every
 * combination of its output flags (--json, --svg, --html, --record,
 * --audio wav:, --csv, --out as it has them); every combination must give
 * the numbers and the exit status of the bare command, and every file it
 * wrote must carry those numbers too (the page's embedded JSON, the
 * picture's title and minimum TPS, the recording replayed by sim).
 *
 * sim and sweep run on the simulated clock: their numbers must be equal
 * to the last printed digit.  run and bench stream over real HTTP from
 * `ttsbuf serve`, whose timing is exact to a few milliseconds: their counts
 * (underruns, gapless streams) and exit status must be equal, the minimum
 * TPS within 1% (eSpeak's durations move this stream's by 4.5%), and the
 * seconds within what a loaded machine's scheduling moves an arrival by
 * (tens of milliseconds).
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lag.h"
#include "tests.h"

/* A stream with one stall the rate model hears as one gap, of 0.75 s: a
 * run on a loaded machine read late by less than that still has it. */
#define OUT_SYNTH "tps=60,ttft=0.05,tokens=24,jitter=0,stall=0.15:1.0,seed=3"
#define OUT_PLAY "--wpm 800 --chunk clause"

/* The numbers one run reports, as its outputs print them. */
struct fp {
    int code;
    unsigned underruns;
    double gap, min_tps, ttfa; /* NAN: "-" / null */
    const char *unnamed;       /* an output that does not name the voice model */
};

struct tol {
    double gap, min_tps_rel, ttfa;
};

static const struct tol exact = {0, 0, 0};
static const struct tol live = {0.05, 0.01, 0.1};

static char dir[64];

static void mkdir_tmp(void)
{
    char cmd[160];
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-outputs-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir '%s'", dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
}

static void rm_tmp(void)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    (void)tb_test_sh(cmd);
}

/* Rounded as the human report prints them, so that every output can be
 * held to every other. */
static double r2(double v)
{
    return isnan(v) ? v : round(v * 100.0) / 100.0;
}
static double r1(double v)
{
    return isnan(v) ? v : round(v * 10.0) / 10.0;
}
static double r3(double v)
{
    return isnan(v) ? v : round(v * 1000.0) / 1000.0;
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (v == NULL || !cJSON_IsNull(v))
        fail_msg("no number or null \"%s\"", k);
    return NAN;
}

static void fp_of_json(const cJSON *j, struct fp *f)
{
    f->underruns = (unsigned)jnum(j, "underruns");
    f->gap = r2(jnum(j, "gap_total_s"));
    f->min_tps = r1(jnum(j, "min_tps"));
    f->ttfa = r3(jnum(j, "ttfa_s"));
}

/* The value after label on its line of the human report ("-": NAN). */
static double text_value(const char *rep, const char *label)
{
    const char *p = strstr(rep, label);
    char *end;
    double v;
    if (p == NULL)
        fail_msg("the report has no \"%s\":\n%s", label, rep);
    p += strlen(label);
    while (*p == ' ')
        p++;
    if (*p == '-')
        return NAN;
    v = strtod(p, &end);
    if (end == p)
        fail_msg("no number after \"%s\"", label);
    return v;
}

static void fp_of_text(const char *rep, struct fp *f)
{
    const char *v = strstr(rep, "\nverdict: ");
    if (v == NULL)
        fail_msg("no verdict line:\n%s", rep);
    if (strncmp(v, "\nverdict: no gaps", 17) == 0) {
        f->underruns = 0;
        f->gap = 0;
    } else if (sscanf(v, "\nverdict: %u underrun%*[s,] %lf s of silence", &f->underruns, &f->gap) !=
               2) {
        fail_msg("cannot read the verdict: %.80s", v + 1);
    }
    f->min_tps = text_value(rep, "minimum TPS");
    f->ttfa = text_value(rep, "time to first audio");
}

static void same(const struct fp *a, const struct fp *b, const struct tol *t, const char *what)
{
    if (a->code != b->code)
        fail_msg("%s: exit %d, the bare command exits %d", what, b->code, a->code);
    if (a->underruns != b->underruns)
        fail_msg("%s: %u underruns, the bare command %u", what, b->underruns, a->underruns);
#define NEAR(x, tl)                                                                                \
    if (isnan(a->x) != isnan(b->x) || (!isnan(a->x) && fabs(a->x - b->x) > (tl)))                  \
    fail_msg("%s: " #x " %.3f, the bare command %.3f", what, b->x, a->x)
    NEAR(gap, t->gap);
    NEAR(min_tps, t->min_tps_rel * a->min_tps);
    NEAR(ttfa, t->ttfa);
#undef NEAR
}

/* The JSON the --html page embeds as <script ... id="result">. */
static cJSON *page_json(const char *path)
{
    char *txt = tb_test_slurp_str(path);
    const char *p = strstr(txt, "id=\"result\">"), *e;
    cJSON *j;
    if (p == NULL)
        fail_msg("%s embeds no result", path);
    p += strlen("id=\"result\">");
    e = strstr(p, "</script>");
    assert_non_null(e);
    j = cJSON_ParseWithLength(p, (size_t)(e - p));
    assert_non_null(j);
    free(txt);
    return j;
}

/* The timeline's title and minimum TPS against the run's numbers. */
static void svg_agrees(const char *path, const struct fp *f, const struct tol *t)
{
    char *svg = tb_test_slurp_str(path);
    const char *p = strstr(svg, "minimum TPS ");
    unsigned n = 0;
    if (p == NULL)
        fail_msg("%s names no minimum TPS", path);
    p += strlen("minimum TPS ");
    if (isnan(f->min_tps)) {
        if (strncmp(p, "not measured", 12) != 0)
            fail_msg("%s draws a minimum TPS the report does not have: %.20s", path, p);
    } else if (fabs(strtod(p, NULL) - f->min_tps) > t->min_tps_rel * f->min_tps) {
        fail_msg("%s: minimum TPS %.20s; the report %.1f", path, p, f->min_tps);
    }
    if (strstr(svg, ">No gaps") == NULL &&
        ((p = strstr(svg, "font-weight=\"bold\" fill=\"#222\">")) == NULL ||
         sscanf(p, "font-weight=\"bold\" fill=\"#222\">%u gap", &n) != 1))
        fail_msg("%s: no title with the gaps", path);
    if (n != f->underruns)
        fail_msg("%s: the title says %u gaps; the report %u", path, n, f->underruns);
    free(svg);
}

/* One combination of sim's or run's outputs (mask over the flags). */
enum { F_JSON = 1, F_SVG = 2, F_HTML = 4, F_RECORD = 8, F_WAV = 16, F_ALL = 32 };

static void run_combo(const char *base, const char *play, int mask, const struct tol *t,
                      struct fp *out)
{
    char args[2048], p[256];
    struct tb_test_out o;
    cJSON *j = NULL;
    snprintf(args, sizeof(args), "%s", base);
#define ADD(flag, fmt)                                                                             \
    if (mask & (flag)) {                                                                           \
        snprintf(p, sizeof(p), fmt, dir);                                                          \
        strncat(args, p, sizeof(args) - strlen(args) - 1);                                         \
    }
    if (mask & F_JSON)
        strncat(args, " --json", sizeof(args) - strlen(args) - 1);
    ADD(F_SVG, " --svg %s/t.svg");
    ADD(F_HTML, " --html %s/p.html");
    ADD(F_RECORD, " --record %s/r.jsonl");
    ADD(F_WAV, " --audio wav:%s/a.wav --stall-cue none");
#undef ADD
    o = tb_test_run(args);
    memset(out, 0, sizeof(*out));
    out->code = o.code;
    if (mask & F_JSON) {
        j = cJSON_Parse(o.so);
        if (j == NULL)
            fail_msg("ttsbuf %s: not JSON: %s %s", args, o.so, o.se);
        fp_of_json(j, out);
        const cJSON *vm = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(j, "options"), "voice_model");
        if (!cJSON_IsString(vm) || strcmp(vm->valuestring, "rate") != 0)
            out->unnamed = "the JSON's options.voice_model";
    } else {
        fp_of_text(o.so, out);
        if (strstr(o.so, "voice-model=rate") == NULL)
            out->unnamed = "the report's header";
    }
    if (mask & F_HTML) {
        struct fp h = *out;
        cJSON *pj;
        snprintf(p, sizeof(p), "%s/p.html", dir);
        pj = page_json(p);
        fp_of_json(pj, &h);
        same(out, &h, &exact, "the --html page's JSON");
        if (j != NULL) {
            /* the page's JSON is the run's, all but the page's own audio */
            cJSON_DeleteItemFromObject(pj, "audio");
            cJSON *c = cJSON_Duplicate(j, 1);
            cJSON_DeleteItemFromObject(c, "audio");
            if (!cJSON_Compare(pj, c, 1))
                fail_msg("ttsbuf %s: the page's JSON differs from --json", args);
            cJSON_Delete(c);
        }
        cJSON_Delete(pj);
        snprintf(p, sizeof(p), "%s/p.html", dir);
        char *page = tb_test_slurp_str(p);
        if (strstr(page, "Voice model: rate") == NULL)
            out->unnamed = "the page";
        free(page);
    }
    if (mask & F_SVG) {
        snprintf(p, sizeof(p), "%s/t.svg", dir);
        svg_agrees(p, out, t);
        char *svg = tb_test_slurp_str(p);
        if (strstr(svg, "voice model rate") == NULL)
            out->unnamed = "the picture";
        free(svg);
    }
    if ((mask & F_WAV) && j != NULL) {
        /* what is heard has the report's gaps */
        const cJSON *au = cJSON_GetObjectItemCaseSensitive(j, "audio");
        assert_int_equal((unsigned)jnum(au, "underruns"), out->underruns);
        if (fabs(jnum(au, "gap_total_s") - jnum(j, "gap_total_s")) > 0.002)
            fail_msg("the WAV has %.4f s of silence; the report %.4f s", jnum(au, "gap_total_s"),
                     jnum(j, "gap_total_s"));
    }
    if (mask & F_RECORD) {
        /* the recording replays to the same numbers */
        struct fp s;
        struct tb_test_out r;
        snprintf(args, sizeof(args), "sim --trace %s/r.jsonl %s --json", dir, play);
        r = tb_test_run(args);
        cJSON *rj = cJSON_Parse(r.so);
        if (rj == NULL)
            fail_msg("ttsbuf %s: %s", args, r.se);
        s = *out;
        fp_of_json(rj, &s);
        same(out, &s, t, "sim --trace of the --record");
        cJSON_Delete(rj);
        tb_test_out_free(&r);
    }
    cJSON_Delete(j);
    tb_test_out_free(&o);
}

/* Every combination against the bare command. */
/* Every combination of the outputs against the bare command.  probed: 0
 * on the simulated clock; for a live run, 1: the probe of lag.h runs (the
 * caller started it), and its largest wake-up delay so far widens the
 * seconds' tolerances: an arrival is moved by up to two wake-ups (the
 * server's send, the client's read), a difference of two runs' figures
 * by four. */
static void some_combos(const char *cmd, const char *play, const struct tol *t, int probed, int mod,
                        int q)
{
    struct fp bare, f;
    char what[64], base[1024];
    snprintf(base, sizeof(base), "%s %s --fail-on-underrun", cmd, play);
    run_combo(base, play, 0, t, &bare);
    assert_int_equal(bare.code, 1);
    assert_true(bare.underruns >= 1);
    for (int m = 1; m < F_ALL; m++) {
        struct tol e = *t;
        if (m % mod != q)
            continue;
        run_combo(base, play, m, t, &f);
        snprintf(what, sizeof(what), "%s%s%s%s%s", m & F_JSON ? " --json" : "",
                 m & F_SVG ? " --svg" : "", m & F_HTML ? " --html" : "",
                 m & F_RECORD ? " --record" : "", m & F_WAV ? " --audio wav:" : "");
        if (probed) {
            e.gap += 4 * tb_test_lag_now();
            e.ttfa += 4 * tb_test_lag_now();
        }
        same(&bare, &f, &e, what);
        if (f.unnamed != NULL && bare.unnamed == NULL)
            bare.unnamed = f.unnamed;
    }
    /* the numbers first, then the names */
    if (bare.unnamed != NULL)
        fail_msg("%s does not name the voice model", bare.unnamed);
}

/* All of them (mod 1). */
static void all_combos(const char *cmd, const char *play, const struct tol *t, int probed)
{
    some_combos(cmd, play, t, probed, 1, 0);
}

static void outputs_sim(void **state)
{
    (void)state;
    mkdir_tmp();
    all_combos("sim --synth " OUT_SYNTH, OUT_PLAY, &exact, 0);
    /* the built-in mock's answer at 0.3 s of pre-roll: eSpeak's durations
     * gave it another gap */
    all_combos("sim --preset mock", "--preroll 0.3", &exact, 0);
    rm_tmp();
}

/* `ttsbuf serve` with the stream, for run and bench: started by the
 * case's setup, stopped by its teardown (which runs after a failure too). */
static int serve_pid = -1, serve_port;

static int serve_up(void **state)
{
    char log[128];
    (void)state;
    mkdir_tmp();
    snprintf(log, sizeof(log), "%s/serve.log", dir);
    serve_pid = tb_test_serve_spawn(OUT_SYNTH, log, &serve_port);
    return 0;
}

static int serve_down(void **state)
{
    (void)state;
    if (serve_pid > 0)
        tb_test_serve_stop(serve_pid);
    serve_pid = -1;
    rm_tmp();
    return 0;
}

static void outputs_run(void **state)
{
    char base[512];
    /* The combinations whose mask is q modulo 4 (the case's state), each
     * against the bare run (run again in each case). */
    const int q = *(const int *)*state;
    snprintf(base, sizeof(base), "run --base-url http://127.0.0.1:%d/v1 --model mock", serve_port);
    tb_test_lag_start();
    some_combos(base, OUT_PLAY, &live, 1, 4, q);
    tb_test_lag_stop();
}

/* bench: per level, requests, ok and gapless streams and the silence. */
struct bfp {
    int code;
    unsigned ok[2], gapless[2];
    double underruns_mean[2], min_tps_p50[2];
};

static void bfp_of_json(const cJSON *j, struct bfp *b)
{
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(j, "levels");
    assert_int_equal(cJSON_GetArraySize(lv), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *l = cJSON_GetArrayItem(lv, i);
        b->ok[i] = (unsigned)jnum(l, "ok");
        b->gapless[i] = (unsigned)jnum(l, "gapless");
        b->underruns_mean[i] = jnum(cJSON_GetObjectItemCaseSensitive(l, "underruns"), "mean");
        b->min_tps_p50[i] = jnum(cJSON_GetObjectItemCaseSensitive(l, "min_tps"), "p50");
    }
}

/* The CSV's columns by name. */
static void bfp_of_csv(const char *csv, struct bfp *b)
{
    const char *names[] = {"ok", "gapless", "underruns_mean", "min_tps_p50"};
    int col[4] = {-1, -1, -1, -1}, c = 0;
    const char *p = csv, *row;
    for (const char *q = csv; *q != '\n' && *q != '\0'; c++) {
        size_t n = strcspn(q, ",\n");
        for (int k = 0; k < 4; k++)
            if (strlen(names[k]) == n && strncmp(q, names[k], n) == 0)
                col[k] = c;
        q += n + (q[n] == ',');
        if (q[-1] != ',' && q[0] == '\n')
            break;
    }
    for (int k = 0; k < 4; k++)
        if (col[k] < 0)
            fail_msg("the CSV has no column %s", names[k]);
    row = strchr(p, '\n');
    for (int i = 0; i < 2; i++) {
        assert_non_null(row);
        row++;
        c = 0;
        for (const char *q = row; *q != '\n' && *q != '\0'; c++) {
            size_t n = strcspn(q, ",\n");
            double v = strtod(q, NULL);
            if (c == col[0])
                b->ok[i] = (unsigned)v;
            else if (c == col[1])
                b->gapless[i] = (unsigned)v;
            else if (c == col[2])
                b->underruns_mean[i] = v;
            else if (c == col[3])
                b->min_tps_p50[i] = n == 0 ? NAN : v;
            q += n + (q[n] == ',');
            if (q[-1] != ',')
                break;
        }
        row = strchr(row, '\n');
    }
}

/* The human report: "N requests, N ok, N gapless" of each level. */
static void bfp_of_text(const char *rep, struct bfp *b)
{
    const char *p = rep;
    for (int i = 0; i < 2; i++) {
        unsigned req;
        p = strstr(p, " requests, ");
        if (p == NULL)
            fail_msg("no per-level line in the report:\n%s", rep);
        while (p > rep && p[-1] != ' ')
            p--;
        if (sscanf(p, "%u requests, %u ok, %u gapless", &req, &b->ok[i], &b->gapless[i]) != 3)
            fail_msg("cannot read %.60s", p);
        p = strchr(p, '\n');
        assert_non_null(p);
        b->underruns_mean[i] = NAN;
        b->min_tps_p50[i] = NAN;
    }
}

static void bsame(const struct bfp *a, const struct bfp *b, const char *what)
{
    if (a->code != b->code)
        fail_msg("bench%s: exit %d, the bare command %d", what, b->code, a->code);
    for (int i = 0; i < 2; i++) {
        if (a->ok[i] != b->ok[i] || a->gapless[i] != b->gapless[i])
            fail_msg("bench%s: level %d: %u ok, %u gapless; the bare command %u, %u", what, i + 1,
                     b->ok[i], b->gapless[i], a->ok[i], a->gapless[i]);
        if (isnan(a->underruns_mean[i]) || isnan(b->underruns_mean[i]))
            continue;
        if (a->underruns_mean[i] != b->underruns_mean[i] ||
            fabs(a->min_tps_p50[i] - b->min_tps_p50[i]) > 0.01 * a->min_tps_p50[i])
            fail_msg("bench%s: level %d: underruns %.3f, min TPS %.3f; the first %.3f, %.3f", what,
                     i + 1, b->underruns_mean[i], b->min_tps_p50[i], a->underruns_mean[i],
                     a->min_tps_p50[i]);
    }
}

enum { B_JSON = 1, B_CSV = 2, B_HTML = 4, B_OUT = 8, B_WAV = 16 };

static void bench_combo(const char *base, int mask, struct bfp *b)
{
    char args[2048], p[256];
    struct tb_test_out o;
    snprintf(args, sizeof(args), "%s%s%s", base, mask & B_JSON ? " --json" : "",
             mask & B_CSV ? " --csv" : "");
    if (mask & B_HTML) {
        snprintf(p, sizeof(p), " --html %s/b.html", dir);
        strncat(args, p, sizeof(args) - strlen(args) - 1);
    }
    if (mask & B_OUT) {
        snprintf(p, sizeof(p), " --out %s/out%d", dir, mask);
        strncat(args, p, sizeof(args) - strlen(args) - 1);
    }
    if (mask & B_WAV) {
        snprintf(p, sizeof(p), " --audio wav:%s/b.wav --stall-cue none", dir);
        strncat(args, p, sizeof(args) - strlen(args) - 1);
    }
    o = tb_test_run(args);
    memset(b, 0, sizeof(*b));
    b->code = o.code;
    if (mask & B_JSON) {
        cJSON *j = cJSON_Parse(o.so);
        if (j == NULL)
            fail_msg("ttsbuf %s: not JSON: %s", args, o.se);
        bfp_of_json(j, b);
        cJSON_Delete(j);
    } else if (mask & B_CSV) {
        bfp_of_csv(o.so, b);
    } else {
        bfp_of_text(o.so, b);
    }
    if (mask & B_HTML) {
        struct bfp h;
        cJSON *pj;
        snprintf(p, sizeof(p), "%s/b.html", dir);
        pj = page_json(p);
        h = *b;
        bfp_of_json(pj, &h);
        bsame(b, &h, " --html page");
        cJSON_Delete(pj);
    }
    if (mask & B_OUT) {
        struct bfp s = *b;
        char *txt;
        cJSON *sj;
        snprintf(p, sizeof(p), "%s/out%d/summary.json", dir, mask);
        txt = tb_test_slurp_str(p);
        sj = cJSON_Parse(txt);
        assert_non_null(sj);
        bfp_of_json(sj, &s);
        bsame(b, &s, " --out summary.json");
        cJSON_Delete(sj);
        free(txt);
    }
    if ((mask & B_WAV) && strstr(o.se, "audio clock (wav:") == NULL)
        fail_msg("ttsbuf %s: played nothing: %s", args, o.se);
    tb_test_out_free(&o);
}

/* bench: the combinations of its outputs whose mask is q modulo 8 (q: the
 * case's state), each against the bare run and against the --json run
 * (both run again in each case, so that the eight cases are one truth and
 * the runner can spread them). */
static void outputs_bench(void **state)
{
    const int q = *(const int *)*state;
    char base[512], what[96];
    struct bfp bare, first_json, b;
    snprintf(base, sizeof(base),
             "bench --base-url http://127.0.0.1:%d/v1 --model mock -c 1,2 --requests 2 " OUT_PLAY
             " --require gapless_share=1",
             serve_port);
    bench_combo(base, 0, &bare);
    assert_int_equal(bare.code, 1);
    assert_int_equal(bare.gapless[0], 0);
    bench_combo(base, B_JSON, &first_json);
    bsame(&bare, &first_json, " --json");
    assert_false(isnan(first_json.underruns_mean[0]));
    for (int m = 1; m < 32; m++) {
        if (m % 8 != q || m == B_JSON)
            continue;
        if ((m & B_JSON) && (m & B_CSV))
            continue; /* two formats for one stdout: one at a time */
        bench_combo(base, m, &b);
        snprintf(what, sizeof(what), "%s%s%s%s%s", m & B_JSON ? " --json" : "",
                 m & B_CSV ? " --csv" : "", m & B_HTML ? " --html" : "", m & B_OUT ? " --out" : "",
                 m & B_WAV ? " --audio wav:" : "");
        bsame(&bare, &b, what);
        if (!isnan(b.underruns_mean[0]))
            bsame(&first_json, &b, what);
    }
}

/* sweep: the table on stdout, and each file, the same in every
 * combination; the page's JSON is the --json file's. */
enum { S_JSON = 1, S_CSV = 2, S_SVG = 4, S_HTML = 8 };

/* The JSON less what is the wall clock's: when it started, how long it
 * took. */
static char *without_started_at(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    char *s;
    assert_non_null(j);
    cJSON_DeleteItemFromObject(j, "started_at");
    cJSON_DeleteItemFromObject(j, "seconds");
    s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

static void outputs_sweep(void **state)
{
    const char *base = "sweep --synth " OUT_SYNTH " --seeds 1:12 --chunk sentence,clause "
                       "--preroll 0,0.25,0.5,1 --target-gapless 0.9";
    char *table = NULL, *json = NULL, *csv = NULL, *svg = NULL, args[1024], p[256];
    (void)state;
    mkdir_tmp();
    for (int m = 0; m < 16; m++) {
        struct tb_test_out o;
        snprintf(args, sizeof(args), "%s", base);
#define ADD(flag, fmt)                                                                             \
    if (m & (flag)) {                                                                              \
        snprintf(p, sizeof(p), fmt, dir);                                                          \
        strncat(args, p, sizeof(args) - strlen(args) - 1);                                         \
    }
        ADD(S_JSON, " --json %s/s.json");
        ADD(S_CSV, " --csv %s/s.csv");
        ADD(S_SVG, " --svg %s/s.svg");
        ADD(S_HTML, " --html %s/s.html");
#undef ADD
        o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("ttsbuf %s: exit %d: %s", args, o.code, o.se);
        /* the first line is the wall time the sweep took */
        const char *body = strchr(o.so, '\n') != NULL ? strchr(o.so, '\n') : o.so;
        if (table == NULL)
            table = strdup(body);
        else if (strcmp(table, body) != 0)
            fail_msg("ttsbuf %s: the table differs from the bare sweep's:\n%s\n---\n%s", args, body,
                     table);
        if (m & S_JSON) {
            char *t;
            snprintf(p, sizeof(p), "%s/s.json", dir);
            t = tb_test_slurp_str(p);
            char *n = without_started_at(t);
            free(t);
            if (json == NULL)
                json = n;
            else if (strcmp(json, n) != 0)
                fail_msg("ttsbuf %s: --json differs from another combination's", args);
            else
                cJSON_free(n);
            if (m & S_HTML) {
                cJSON *pj;
                snprintf(p, sizeof(p), "%s/s.html", dir);
                pj = page_json(p);
                cJSON_DeleteItemFromObject(pj, "started_at");
                cJSON_DeleteItemFromObject(pj, "seconds");
                char *ps = cJSON_PrintUnformatted(pj);
                if (strcmp(ps, json) != 0)
                    fail_msg("ttsbuf %s: the page's JSON differs from --json", args);
                cJSON_free(ps);
                cJSON_Delete(pj);
            }
        }
        if (m & S_CSV) {
            snprintf(p, sizeof(p), "%s/s.csv", dir);
            char *t = tb_test_slurp_str(p);
            if (csv == NULL)
                csv = t;
            else if (strcmp(csv, t) != 0)
                fail_msg("ttsbuf %s: --csv differs from another combination's", args);
            if (csv != t)
                free(t);
        }
        if (m & S_SVG) {
            snprintf(p, sizeof(p), "%s/s.svg", dir);
            char *t = tb_test_slurp_str(p);
            if (svg == NULL)
                svg = t;
            else if (strcmp(svg, t) != 0)
                fail_msg("ttsbuf %s: --svg differs from another combination's", args);
            if (svg != t)
                free(t);
        }
        tb_test_out_free(&o);
    }
    free(table);
    cJSON_free(json);
    free(csv);
    free(svg);
    rm_tmp();
}

/* A failed run leaves its page, headed by what failed, and neither the
 * page nor the picture shows a number the report calls not measured. */
static void outputs_failed_run_page(void **state)
{
    char args[1024], page[128], svgp[128];
    struct tb_test_out o;
    char *html, *svg;
    cJSON *j;
    (void)state;
    mkdir_tmp();
    snprintf(page, sizeof(page), "%s/drop.html", dir);
    snprintf(svgp, sizeof(svgp), "%s/drop.svg", dir);
    /* the connection drops before token 30: some chunks, no verdict */
    snprintf(args, sizeof(args), "run --mock --model 'm+drop@30' -q --json --html %s --svg %s",
             page, svgp);
    o = tb_test_run(args);
    assert_int_equal(o.code, 3);
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "min_tps")));
    assert_true(jnum(j, "chunks") >= 1);
    html = tb_test_slurp_str(page);
    svg = tb_test_slurp_str(svgp);
    if (strstr(html, "<h2 class=\"failed\" id=\"failure\">The request failed") == NULL)
        fail_msg("the dropped run's page is not headed by the failure");
    if (strstr(html, "<title>ttsbuf run: FAILED: ") == NULL)
        fail_msg("the dropped run's page title does not say it failed");
    for (int k = 0; k < 2; k++) {
        const char *doc = k == 0 ? html : svg;
        const char *m = strstr(doc, "minimum TPS ");
        if (m == NULL || strstr(doc, "minimum TPS not measured") == NULL)
            fail_msg("the %s does not say the minimum TPS was not measured",
                     k == 0 ? "page" : "picture");
        for (; m != NULL; m = strstr(m + 1, "minimum TPS ")) {
            const char *v = m + strlen("minimum TPS ");
            if (*v >= '0' && *v <= '9')
                fail_msg("the %s draws a minimum TPS (%.12s); the report has none",
                         k == 0 ? "page" : "picture", m);
        }
    }
    if (strstr(svg, "Failed: ") == NULL && strstr(svg, "Incomplete: ") == NULL)
        fail_msg("the picture's title does not say the stream failed or was cut off");
    free(html);
    free(svg);
    cJSON_Delete(j);
    tb_test_out_free(&o);
    /* refused at connect: nothing arrived, and still a page */
    snprintf(page, sizeof(page), "%s/refused.html", dir);
    snprintf(args, sizeof(args), "run --base-url http://127.0.0.1:%d/v1 --model m -q --html %s",
             tb_test_refused_port(), page);
    o = tb_test_run(args);
    assert_int_equal(o.code, 3);
    if (access(page, R_OK) != 0)
        fail_msg("a run refused at connect wrote no page: %s", o.se);
    html = tb_test_slurp_str(page);
    if (strstr(html, "id=\"failure\">The request failed: transport") == NULL ||
        strstr(html, "Nothing arrived") == NULL)
        fail_msg("the refused run's page is not headed by the failure");
    free(html);
    tb_test_out_free(&o);
    rm_tmp();
}

int tb_test_outputs(void)
{
    static const int eighth[] = {0, 1, 2, 3, 4, 5, 6, 7};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(outputs_sim),
        cmocka_unit_test(outputs_sweep),
        {"outputs_run(0)", outputs_run, serve_up, serve_down, (void *)&eighth[0]},
        {"outputs_run(1)", outputs_run, serve_up, serve_down, (void *)&eighth[1]},
        {"outputs_run(2)", outputs_run, serve_up, serve_down, (void *)&eighth[2]},
        {"outputs_run(3)", outputs_run, serve_up, serve_down, (void *)&eighth[3]},
        {"outputs_bench(0)", outputs_bench, serve_up, serve_down, (void *)&eighth[0]},
        {"outputs_bench(1)", outputs_bench, serve_up, serve_down, (void *)&eighth[1]},
        {"outputs_bench(2)", outputs_bench, serve_up, serve_down, (void *)&eighth[2]},
        {"outputs_bench(3)", outputs_bench, serve_up, serve_down, (void *)&eighth[3]},
        {"outputs_bench(4)", outputs_bench, serve_up, serve_down, (void *)&eighth[4]},
        {"outputs_bench(5)", outputs_bench, serve_up, serve_down, (void *)&eighth[5]},
        {"outputs_bench(6)", outputs_bench, serve_up, serve_down, (void *)&eighth[6]},
        {"outputs_bench(7)", outputs_bench, serve_up, serve_down, (void *)&eighth[7]},
        cmocka_unit_test(outputs_failed_run_page),
    };
    return TB_RUN_GROUP("outputs", tests);
}
