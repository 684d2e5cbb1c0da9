/*
 * test_callsout.c - calls in every output: one rule for a turn the caller
 * interrupted (barge-in), and a progress line that counts calls.
 *
 * The rule (ttsbuf(1), BENCH, Barge-in; bench_stats.h): an interrupted
 * turn is neither failed nor gapless, it is counted on its own; gapless is
 * over the turns heard to their end; what was heard before the
 * interruption is judged for gaps; goodput judges an interrupted turn on
 * the same fields.  A records file written here (turns of every kind)
 * goes through merge and compare in each output (the table, --json,
 * --csv), each held to this file's own count of the rule; then a real
 * bench of calls with barge-in against `ttsbuf serve`, its report,
 * summary, CSV and --html page (in Chromium: the first-audio, call, turn,
 * interrupted and good columns, the calls, barge-in and gates lines) held
 * to its records.  The progress line: its text and its cadence without a
 * terminal on made-up reports, and a short run of calls against the mock
 * counting its calls by state.
 */
#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/cli/bench_progress.h"
#include "tests.h"
#include "ttsbuf.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/convo.h"

#define FEW "tests/data/calls/few.jsonl"
#define OPTIONS                                                                                    \
    "{\"chunk\":\"sentence\",\"min_chars\":1,\"wpm\":150,\"tts_latency_s\":0,\"preroll_s\":0,"     \
    "\"rebuffer\":false,\"voice_model\":\"rate\",\"ring_slots\":65536,\"ring_bytes\":4194304,"     \
    "\"max_tokens\":300,\"api\":\"chat\"}"

/* One turn of the records written here: ok (0), failed with HTTP 503
 * (1, nothing measured) or cut after its first audio (2); interrupted;
 * its first audio; its underruns (heard before the interruption when
 * interrupted); what it left unheard. */
struct turn {
    int call, turn, err, intr;
    double ttfa;
    int under;
    unsigned unheard, unplayed;
};

/* Every kind: heard whole with and without a gap, interrupted with and
 * without a gap before the interruption, late first audio either way, a
 * failed turn, a cut one. */
static const struct turn mixed[] = {
    {0, 0, 0, 0, 0.5, 0, 0, 0},  {0, 1, 0, 1, 0.6, 0, 7, 30}, {0, 2, 0, 0, 0.5, 1, 0, 0},
    {1, 0, 0, 1, 0.5, 1, 4, 12}, {1, 1, 0, 1, 0.9, 0, 2, 9},  {1, 2, 0, 0, 0.9, 0, 0, 0},
    {2, 0, 1, 0, NAN, 0, 0, 0},  {3, 0, 0, 0, 0.7, 0, 0, 0},  {3, 1, 2, 0, 0.4, 0, 0, 0},
};
/* Every turn heard is interrupted: no gapless share. */
static const struct turn all_cut[] = {
    {0, 0, 0, 1, 0.5, 0, 3, 10},
    {0, 1, 0, 1, 0.5, 1, 5, 20},
};
#define TTFA_SLO 0.8

/* The rule, counted by this file's own code. */
struct want {
    size_t requests, ok, intr, intr_gapless, heard_whole, gapless, good, good_intr;
    unsigned long long unheard, unplayed;
    size_t intr_by_turn[3];
};

static int good(const struct turn *t)
{
    return t->err == 0 && !isnan(t->ttfa) && t->ttfa <= TTFA_SLO && t->under == 0;
}

static struct want count(const struct turn *v, size_t n)
{
    struct want w;
    memset(&w, 0, sizeof(w));
    for (size_t i = 0; i < n; i++) {
        const struct turn *t = &v[i];
        w.requests++;
        w.unheard += t->unheard;
        w.unplayed += t->unplayed;
        w.good += (size_t)good(t);
        if (t->err != 0)
            continue;
        w.ok++;
        if (t->intr) {
            w.intr++;
            w.intr_by_turn[t->turn]++;
            w.intr_gapless += t->under == 0;
            w.good_intr += (size_t)good(t);
        } else {
            w.heard_whole++;
            w.gapless += t->under == 0;
        }
    }
    return w;
}

/* The records of v as bench writes them (the library's writer), at
 * level calls=2 with the SLOs ttfa_s<=0.8 and gapless, to path. */
static void write_recs(const char *path, const struct turn *v, size_t n)
{
    struct tb_bench_meta m;
    struct tb_bench_recs r;
    char err[128];
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    memset(&m, 0, sizeof(m));
    m.nshards = 1;
    m.nlevels = 1;
    m.levels[0].mode = TB_BENCH_CALLS;
    m.levels[0].concurrency = 2;
    snprintf(m.options, sizeof(m.options), "%s", OPTIONS);
    snprintf(m.started_at, sizeof(m.started_at), "2026-12-04T10:00:00Z");
    snprintf(m.ttsbuf_version, sizeof(m.ttsbuf_version), "0.1.0");
    snprintf(m.model, sizeof(m.model), "m");
    snprintf(m.base_url, sizeof(m.base_url), "http://127.0.0.1:9/v1");
    assert_int_equal(tb_bench_slo_add(&m.slo, "ttfa_s=0.8", err, sizeof(err)), 0);
    assert_int_equal(tb_bench_slo_add(&m.slo, "gapless", err, sizeof(err)), 0);
    assert_int_equal(tb_bench_write_header(f, &m), 0);
    tb_bench_recs_init(&r);
    for (size_t i = 0; i < n; i++) {
        const struct turn *t = &v[i];
        struct tb_bench_rec *x = tb_bench_recs_add(&r);
        assert_non_null(x);
        x->id = (uint64_t)t->call * TB_CONVO_TURNS_MAX + (uint64_t)t->turn;
        x->call = t->call;
        x->turn = t->turn;
        x->t_sched = x->t_start = 3.0 * t->turn + 0.1 * t->call;
        x->t_end = x->t_start + 2;
        x->http_status = t->err == 1 ? 503 : 200;
        x->error = t->err == 1 ? TB_READER_HTTP : t->err == 2 ? TB_READER_TRANSPORT : 0;
        x->end = t->err == 1 ? TB_END_ERROR : t->err == 2 ? TB_END_LOST : TB_END_COMPLETE;
        if (t->err == 1)
            assert_int_equal(tb_bench_rec_message(x, "HTTP 503"), 0);
        x->barge = 1;
        if (t->err != 1) {
            x->events = x->content_tokens = 20;
            x->ttft = 0.2;
            x->ttfa = t->ttfa;
            x->decode_tps = 20;
            x->underruns = (uint32_t)t->under;
            x->gap_total = x->gap_max = t->under ? 0.3 : 0;
            x->play_end = t->ttfa + 4;
            x->min_tps = x->speedup = t->intr || t->err ? NAN : 15;
        }
        x->tokens_received = x->content_tokens;
        x->interrupted = t->intr;
        x->barge_in = t->intr ? t->ttfa + 1 : NAN;
        x->tokens_unheard = t->unheard;
        x->chars_unplayed = t->unplayed;
        assert_int_equal(tb_bench_write_rec(f, &m, x, NULL), 0);
    }
    tb_bench_recs_free(&r);
    assert_int_equal(fclose(f), 0);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(x))
        fail_msg("\"%s\" is not a number in %s", k, cJSON_PrintUnformatted(o));
    return x->valuedouble;
}

/* A level's (or a compare row's) counts against the rule. */
static void check_json(const cJSON *lv, const struct want *w)
{
    const cJSON *b = cJSON_GetObjectItem(lv, "barge_in"), *bt = cJSON_GetObjectItem(lv, "by_turn");
    assert_int_equal((size_t)num(lv, "requests"), w->requests);
    assert_int_equal((size_t)num(lv, "ok"), w->ok);
    assert_int_equal((size_t)num(lv, "gapless"), w->gapless);
    if (w->heard_whole > 0)
        assert_near(num(lv, "gapless_share"), (double)w->gapless / (double)w->heard_whole, 1e-15);
    else
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(lv, "gapless_share")));
    assert_int_equal((size_t)num(b, "interruptions"), w->intr);
    assert_near(num(b, "interrupted_share"), (double)w->intr / (double)w->requests, 1e-15);
    assert_int_equal((size_t)num(b, "interrupted_gapless"), w->intr_gapless);
    assert_int_equal((size_t)num(b, "heard_whole"), w->heard_whole);
    assert_int_equal((size_t)num(b, "good"), w->good_intr);
    assert_int_equal((unsigned long long)num(b, "tokens_unheard"), w->unheard);
    assert_int_equal((unsigned long long)num(b, "chars_unplayed"), w->unplayed);
    for (int t = 0; t < cJSON_GetArraySize(bt); t++)
        assert_int_equal((size_t)num(cJSON_GetArrayItem(bt, t), "interrupted"), w->intr_by_turn[t]);
}

/* The value of column `col` in CSV text (a header line, then one row),
 * as text ("" when empty). */
static void csv_cell(const char *csv, const char *col, char *out, size_t len)
{
    const char *row = strchr(csv, '\n'), *h = csv, *c;
    int k = 0;
    size_t cl = strlen(col);
    assert_non_null(row);
    row++;
    for (;;) {
        size_t n = strcspn(h, ",\n");
        if (n == cl && strncmp(h, col, cl) == 0)
            break;
        if (h[n] != ',')
            fail_msg("no column %s", col);
        h += n + 1;
        k++;
    }
    for (c = row; k > 0; k--) {
        if (*c == '"')
            c = strchr(c + 1, '"') + 1;
        else
            c += strcspn(c, ",\n");
        assert_int_equal(*c, ',');
        c++;
    }
    snprintf(out, len, "%.*s", (int)strcspn(c, ",\n"), c);
}

/* The CSV's counts against the rule (merge --csv, compare --csv). */
static void check_csv(const char *csv, const struct want *w)
{
    char v[64];
    csv_cell(csv, "gapless", v, sizeof(v));
    assert_int_equal((size_t)atol(v), w->gapless);
    csv_cell(csv, "gapless_share", v, sizeof(v));
    if (w->heard_whole > 0)
        assert_near(strtod(v, NULL), (double)w->gapless / (double)w->heard_whole, 1e-15);
    else
        assert_string_equal(v, "");
    csv_cell(csv, "barge_in_interruptions", v, sizeof(v));
    assert_int_equal((size_t)atol(v), w->intr);
    csv_cell(csv, "barge_in_interrupted_gapless", v, sizeof(v));
    assert_int_equal((size_t)atol(v), w->intr_gapless);
    csv_cell(csv, "barge_in_heard_whole", v, sizeof(v));
    assert_int_equal((size_t)atol(v), w->heard_whole);
    csv_cell(csv, "barge_in_good", v, sizeof(v));
    assert_int_equal((size_t)atol(v), w->good_intr);
    csv_cell(csv, "barge_in_tokens_unheard", v, sizeof(v));
    assert_int_equal((unsigned long long)atoll(v), w->unheard);
}

/* The report's lines (merge, bench) against the rule. */
static void check_report(const char *rep, const char *level, const struct want *w)
{
    char line[512], gl[16];
    if (w->heard_whole > 0)
        snprintf(gl, sizeof(gl), "%.1f%%", 100.0 * (double)w->gapless / (double)w->heard_whole);
    else
        snprintf(gl, sizeof(gl), "-");
    snprintf(line, sizeof(line),
             "\n%s: %zu requests, %zu ok: %zu heard to the end, %zu gapless (%s); %zu interrupted "
             "by the caller\n",
             level, w->requests, w->ok, w->heard_whole, w->gapless, gl, w->intr);
    if (strstr(rep, line) == NULL)
        fail_msg("no line '%s' in:\n%s", line, rep);
    snprintf(line, sizeof(line),
             "\n%s: barge-in: %zu turns interrupted (%.1f%%), %zu of them with no gap before the "
             "interruption;\n  %llu tokens received and never spoken, %llu characters not all "
             "played\n",
             level, w->intr, 100.0 * (double)w->intr / (double)w->requests, w->intr_gapless,
             w->unheard, w->unplayed);
    if (strstr(rep, line) == NULL)
        fail_msg("no line '%s' in:\n%s", line, rep);
    snprintf(line, sizeof(line), "  goodput: %zu of %zu requests within the SLOs (%.1f%%), ",
             w->good, w->requests, 100.0 * (double)w->good / (double)w->requests);
    if (strstr(rep, line) == NULL)
        fail_msg("no line '%s' in:\n%s", line, rep);
    snprintf(line, sizeof(line),
             " good/s; %zu of them interrupted, judged on what was heard before the "
             "interruption\n",
             w->good_intr);
    if (strstr(rep, line) == NULL)
        fail_msg("no words '%s' in:\n%s", line, rep);
}

/* One records file through merge (the table, --json, --csv) and compare
 * (twice the file: --json, --csv, the table's barge-in and turn rows). */
static void through_every_output(const char *dir, const char *name, const struct turn *v, size_t n)
{
    struct want w = count(v, n);
    char path[256], args[1024];
    struct tb_test_out o;
    cJSON *doc;
    snprintf(path, sizeof(path), "%s/%s.jsonl", dir, name);
    write_recs(path, v, n);
    snprintf(args, sizeof(args), "merge --json --require errors=10 %s", path);
    doc = tb_test_run_json(NULL, args, 0);
    check_json(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "levels"), 0), &w);
    assert_int_equal(
        (size_t)num(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "levels"), 0),
                                        "goodput"),
                    "good"),
        w.good);
    cJSON_Delete(doc);
    snprintf(args, sizeof(args), "merge --csv --require errors=10 %s", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    check_csv(o.so, &w);
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "merge --require errors=10 %s", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    check_report(o.so, "calls=2", &w);
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "compare --json a=%s b=%s", path, path);
    doc = tb_test_run_json(NULL, args, 0);
    for (int i = 0; i < 2; i++)
        check_json(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rows"), i), &w);
    cJSON_Delete(doc);
    snprintf(args, sizeof(args), "compare --csv a=%s b=%s | head -2", path, path);
    o = tb_test_run(args);
    check_csv(o.so, &w);
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "compare a=%s b=%s", path, path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "\n  barge-in    interrupted  share   no gap heard whole"));
    assert_non_null(strstr(o.so, "\n    turn run              n     ok  TTFT p50"));
    for (int i = 0; i < 2; i++) {
        char line[256];
        /* the barge-in row and the rows by turn of each run */
        snprintf(line, sizeof(line), "\n  %-11s %11zu ", i == 0 ? "a" : "b", w.intr);
        if (strstr(o.so, line) == NULL)
            fail_msg("no barge-in row '%s' in:\n%s", line + 1, o.so);
        snprintf(line, sizeof(line), "\n  %6d %-11s", 1, i == 0 ? "a" : "b");
        if (strstr(o.so, line) == NULL)
            fail_msg("no row of turn 1 '%s' in:\n%s", line + 1, o.so);
    }
    tb_test_out_free(&o);
}

/* The rule in every output of merge and compare, on records of every
 * kind of turn, and on records whose every turn heard was interrupted
 * (no gapless share: null, an empty cell, "-"). */
static void interrupted_counted_on_their_own(void **state)
{
    char dir[128];
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "callsout", "rule");
    through_every_output(dir, "mixed", mixed, sizeof(mixed) / sizeof(mixed[0]));
    through_every_output(dir, "all_cut", all_cut, sizeof(all_cut) / sizeof(all_cut[0]));
    tb_test_rm_rf(dir);
}

/* The records of dir/records.jsonl counted by the rule, from their own
 * fields (interrupted, underruns, error, good). */
static struct want count_records(const char *dir, cJSON **v, size_t *n)
{
    char path[512];
    struct want w;
    memset(&w, 0, sizeof(w));
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    *n = tb_test_jsonl_records(path, v, 64);
    for (size_t i = 0; i < *n; i++) {
        const cJSON *r = v[i];
        int ok = cJSON_IsNull(cJSON_GetObjectItem(r, "error"));
        int intr = cJSON_IsTrue(cJSON_GetObjectItem(r, "interrupted"));
        int g = cJSON_IsTrue(cJSON_GetObjectItem(r, "good"));
        int clean = cJSON_IsNumber(cJSON_GetObjectItem(r, "ttfa_s")) && num(r, "underruns") == 0;
        w.requests++;
        w.good += (size_t)g;
        w.unheard += (unsigned long long)num(r, "tokens_unheard");
        w.unplayed += (unsigned long long)num(r, "chars_unplayed");
        if (!ok)
            continue;
        w.ok++;
        if (intr) {
            w.intr++;
            w.intr_by_turn[(int)num(r, "turn")]++;
            w.intr_gapless += (size_t)clean;
            w.good_intr += (size_t)g;
        } else {
            w.heard_whole++;
            w.gapless += (size_t)clean;
        }
    }
    return w;
}

/* The streams table's column `key` (the page's sort of it) holds the
 * records' values of `field` (a boolean as 1/0; an interruption's time,
 * or "" for a turn not interrupted). */
static void check_column(const cJSON *seen, const char *key, cJSON **v, size_t n, const char *field)
{
    const cJSON *col = cJSON_GetObjectItem(cJSON_GetObjectItem(seen, "sorts"), key);
    size_t used[64] = {0};
    if (cJSON_GetArraySize(col) != (int)n)
        fail_msg("the page has no column %s of %zu rows: %s", key, n,
                 cJSON_PrintUnformatted(cJSON_GetObjectItem(seen, "sorts")));
    for (int i = 0; i < (int)n; i++) {
        const char *cell = cJSON_GetArrayItem(col, i)->valuestring;
        int found = 0;
        for (size_t k = 0; k < n && !found; k++) {
            const cJSON *f = cJSON_GetObjectItem(v[k], field);
            if (used[k])
                continue;
            if (cJSON_IsBool(f))
                found = atoi(cell) == cJSON_IsTrue(f);
            else if (cJSON_IsNumber(f))
                found = cell[0] != '\0' && strtod(cell, NULL) == f->valuedouble;
            else
                found = cell[0] == '\0';
            used[k] = (size_t)found;
        }
        if (!found)
            fail_msg("the cells of %s: '%s' is no record's %s", key, cell, field);
    }
}

/* A real bench of calls with barge-in and SLOs against `ttsbuf serve`
 * (answers that stream 1.5 s and play longer): its report, summary.json
 * and merge --csv hold the rule as counted from its records; its page, in
 * Chromium, has the calls columns with the records' values, and the calls,
 * barge-in and gates lines. */
static void bench_calls_every_output(void **state)
{
    char dir[128], cmd[2048], path[256];
    cJSON *v[64], *sum, *seen;
    size_t n;
    struct want w;
    int port;
    char *rep;
    struct tb_test_out o;
    (void)state;
    tb_test_serve_up("--synth tps=20,ttft=0.1,tokens=30,jitter=0", &port);
    tb_test_tmpdir(dir, sizeof(dir), "callsout", "bench");
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && '%s' bench --base-url http://127.0.0.1:%d/v1 --model mock "
             "--conversations '%s/" FEW "' --wpm 600 --calls 2 --turns 3 --user-turn 0.05 "
             "--barge-in 0.5 --barge-in-at uniform:0.1,0.5 --seed 3 --slo ttfa_s=0.6 --slo "
             "gapless --out o --html o.html --html-streams 0 >report",
             dir, tb_test_bin(), port, tb_test_top());
    assert_int_equal(tb_test_sh(cmd), 0);
    tb_test_serve_down(NULL);
    snprintf(path, sizeof(path), "%s/o", dir);
    w = count_records(path, v, &n);
    assert_int_equal(n, 6);
    /* both kinds of turn, so that the columns and counts test something */
    assert_true(w.intr > 0 && w.heard_whole > 0);
    snprintf(path, sizeof(path), "%s/report", dir);
    rep = tb_test_slurp_str(path);
    check_report(rep, "calls=2", &w);
    assert_non_null(strstr(rep, "\ncalls=2: 2 calls, 2 completed, 0 ended by a failed or cut turn; "
                                "6 turns\n"));
    free(rep);
    snprintf(path, sizeof(path), "%s/o/summary.json", dir);
    rep = tb_test_slurp_str(path);
    sum = cJSON_Parse(rep);
    free(rep);
    check_json(cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "levels"), 0), &w);
    snprintf(cmd, sizeof(cmd), "merge --csv %s/o", dir);
    o = tb_test_run(cmd);
    check_csv(o.so, &w);
    tb_test_out_free(&o);
    /* the page */
    tb_test_need("chromium");
    tb_test_need("node");
    snprintf(path, sizeof(path), "%s/o.html", dir);
    snprintf(cmd, sizeof(cmd), "%s/o.seen", dir);
    seen = tb_test_browse(path, cmd);
    assert_true(cJSON_Compare(cJSON_GetObjectItem(seen, "result"), sum, 1));
    check_column(seen, "ttfa", v, n, "ttfa_s");
    check_column(seen, "call", v, n, "call");
    check_column(seen, "turn", v, n, "turn");
    check_column(seen, "interrupted", v, n, "barge_in_s");
    check_column(seen, "good", v, n, "good");
    {
        const char *pre = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(seen, "noscript"), "report"));
        const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(seen, "levels"), 0);
        assert_non_null(pre);
        check_report(pre, "calls=2", &w);
        assert_non_null(strstr(pre, "\ncalls=2: 2 calls, 2 completed"));
        assert_non_null(strstr(pre, "\nGates: success_share >= 1"));
        /* the level table: the turns interrupted after ok */
        assert_int_equal(atoi(cJSON_GetArrayItem(row, 3)->valuestring), (int)w.intr);
    }
    cJSON_Delete(seen);
    cJSON_Delete(sum);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(v[i]);
    tb_test_rm_rf(dir);
}

/* The progress line from made-up reports: a level of calls counts its
 * calls by state and says the time left from the turns done; without a
 * terminal a line comes each time the level's time passes a multiple of
 * `every` (once, however late), with a terminal the line is rewritten in
 * place at every report. */
static void progress_lines(void **state)
{
    struct tb_bench_progress p;
    struct tb_cli_progress pr;
    char line[400], *out = NULL;
    size_t len = 0;
    FILE *f;
    static const double ts[] = {0, 4.9, 9.99, 10.0, 10.5, 19.0, 31.5, 31.6};
    (void)state;
    memset(&p, 0, sizeof(p));
    p.calls = 1;
    p.t = 12;
    p.started = 18;
    p.target = 20;
    p.done = 4;
    p.waiting_model = 6;
    p.speaking = 5;
    p.listening = 3;
    p.turns_done = 20;
    p.turns_target = 60;
    tb_cli_progress_text(&p, line, sizeof(line));
    assert_string_equal(line, "  12.0 s  4/20 calls done, 2 to come: 6 waiting for the model, 5 "
                              "speaking, 3 listening; 20/60 turns, 0 errors; ETA 24 s");
    p.turns_done = 0;
    tb_cli_progress_text(&p, line, sizeof(line));
    assert_non_null(strstr(line, "; ETA -"));
    f = open_memstream(&out, &len);
    assert_non_null(f);
    tb_cli_progress_init(&pr, "calls=20", f, 0);
    pr.every = 10;
    p.turns_done = 10;
    for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
        p.t = ts[i];
        tb_cli_progress(&pr, &p);
    }
    tb_cli_progress_end(&pr);
    assert_int_equal(fclose(f), 0);
    /* 10.0 and 31.5: one line a crossing, each whole */
    assert_non_null(strstr(out, "calls=20    10.0 s  4/20 calls done"));
    assert_non_null(strstr(out, "calls=20    31.5 s  4/20 calls done"));
    assert_int_equal(strchr(out, '\r'), NULL);
    {
        size_t lines = 0;
        for (const char *c = out; *c; c++)
            lines += *c == '\n';
        assert_int_equal(lines, 2);
    }
    free(out);
    out = NULL;
    f = open_memstream(&out, &len);
    assert_non_null(f);
    tb_cli_progress_init(&pr, "calls=20", f, 1);
    p.t = 0.2;
    tb_cli_progress(&pr, &p);
    tb_cli_progress_end(&pr);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(out, "\r\033[Kcalls=20     0.2 s  4/20 calls done"));
    assert_string_equal(out + strlen(out) - 4, "\r\033[K");
    free(out);
}

/* What a run's reports say, kept by the callback below. */
struct seen {
    struct tb_cli_progress pr;
    size_t reports, most_model, most_speaking, most_listening, bad;
    struct tb_bench_progress last;
};

static void on_progress(void *ud, const struct tb_bench_progress *p)
{
    struct seen *s = ud;
    s->reports++;
    /* every call started and not ended is in one state */
    s->bad += p->waiting_model + p->speaking + p->listening != p->started - p->done;
    s->most_model = p->waiting_model > s->most_model ? p->waiting_model : s->most_model;
    s->most_speaking = p->speaking > s->most_speaking ? p->speaking : s->most_speaking;
    s->most_listening = p->listening > s->most_listening ? p->listening : s->most_listening;
    s->last = *p;
    tb_cli_progress(&s->pr, p);
}

/* A short run of calls against the mock (answers streaming 0.4 s, each
 * played for about a second at 300 wpm, the caller speaking 0.3 s): the reports
 * count every call in one state, each state is seen, the turns add up,
 * and the CLI's line without a terminal (every 0.25 s here) is printed. */
static void progress_of_calls(void **state)
{
    struct tb_test_mock m;
    struct tb_convos cv;
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    struct seen s;
    char url[128], err[256], *out = NULL;
    size_t len = 0, lines = 0;
    FILE *f;
    (void)state;
    assert_int_equal(tb_convos_load(FEW, &cv, err, sizeof(err)), 0);
    tb_test_mock_start(&m, 8, 0.05, 0.05, NULL);
    snprintf(url, sizeof(url), "%s/chat/completions", m.base);
    memset(&o, 0, sizeof(o));
    o.http.url = url;
    o.http.idle_timeout = 5;
    tb_api_request_init(&o.req);
    o.req.model = "m";
    o.level.mode = TB_BENCH_CALLS;
    o.level.concurrency = 2;
    o.calls = 3;
    o.turns = 2;
    o.nshards = 1;
    o.seed = 1;
    o.convos = &cv;
    o.user_turn.kind = TB_UTURN_CONST;
    o.user_turn.a = 0.3;
    tb_sim_opts_default(&o.sim);
    o.sim.play.wpm = 300;
    memset(&s, 0, sizeof(s));
    f = open_memstream(&out, &len);
    assert_non_null(f);
    tb_cli_progress_init(&s.pr, "calls=2", f, 0);
    s.pr.every = 0.25;
    o.progress = on_progress;
    o.progress_ud = &s;
    o.progress_interval = 0.02;
    tb_bench_recs_init(&r);
    if (tb_bench_run(&o, 0, &r, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    tb_test_mock_stop(&m);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(r.n, 6);
    assert_int_equal(s.bad, 0);
    if (s.most_model == 0 || s.most_speaking == 0 || s.most_listening == 0)
        fail_msg("a state never seen: %zu waiting for the model, %zu speaking, %zu listening "
                 "at most, over %zu reports",
                 s.most_model, s.most_speaking, s.most_listening, s.reports);
    assert_true(s.most_model <= 2 && s.most_speaking <= 2 && s.most_listening <= 2);
    /* the last report: every call done, every turn */
    assert_true(s.last.calls);
    assert_int_equal(s.last.done, 3);
    assert_int_equal(s.last.target, 3);
    assert_int_equal(s.last.turns_done, 6);
    assert_int_equal(s.last.turns_target, 6);
    for (const char *c = out; *c; c++)
        lines += *c == '\n';
    if (lines < 2 || strstr(out, "calls done") == NULL || strstr(out, "listening;") == NULL)
        fail_msg("the lines without a terminal: %s", out);
    free(out);
    tb_bench_recs_free(&r);
    tb_convos_free(&cv);
}

int tb_test_callsout(void)
{
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(interrupted_counted_on_their_own),
        cmocka_unit_test_teardown(bench_calls_every_output, tb_test_serve_down),
        cmocka_unit_test(progress_lines),
        cmocka_unit_test(progress_of_calls),
    };
    return TB_RUN_GROUP("callsout", cases);
}
