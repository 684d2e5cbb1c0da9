/*
 * test_usage.c - the command line keeps its word: -q means errors only,
 * what --help says is listed below is listed, the common mistakes get an
 * error that says what to do, the status line counts the gap the
 * listener hears, a pre-roll that is never reached is said, tables fit
 * 100 columns, gate failures come after the report, and the mock
 * provider streams one default answer whichever command starts it.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/cli/report.h"
#include "tests.h"
#include "ttsbuf/utf8.h"
#include "ttsbuf/drain.h"
#include "ttsbuf/live.h"
#include "ttsbuf/ring.h"
#include "ttsbuf/seg.h"

/* A scratch file of this process. */
static const char *scratch(const char *name)
{
    static char path[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof(path[k]), "/tmp/ttsbuf-usage-%d-%s", (int)getpid(), name);
    return path[k];
}

/* -q is errors only: no report on stdout, nothing on stderr, for run,
 * bench, sweep and sim alike; the outputs asked for are still written, and an
 * error is still said. */
static void quiet_is_errors_only(void **state)
{
    static const struct {
        const char *args, *out;
    } runs[] = {
        {"run --mock --max-tokens 4 -q --record ", ""},
        {"bench --mock --max-tokens 4 -c 1 --requests 1 -q --out ", ".d"},
        {"sweep --preset demo --preroll 0,1 -q --csv ", ""},
        {"sim --preset demo -q --record ", ""},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        char args[512], cmd[600];
        const char *out = scratch("quiet");
        struct tb_test_out o;
        snprintf(args, sizeof(args), "%s%s%s", runs[i].args, out, runs[i].out);
        o = tb_test_run(args);
        if (o.code != 0 || o.so[0] != '\0' || o.se[0] != '\0')
            fail_msg("ttsbuf %s: exit %d, stdout '%.300s', stderr '%.300s' (wanted 0 and "
                     "nothing)",
                     args, o.code, o.so, o.se);
        tb_test_out_free(&o);
        snprintf(cmd, sizeof(cmd), "test -s %s || test -s %s.d/records.jsonl", out, out);
        if (tb_test_sh(cmd) != 0)
            fail_msg("ttsbuf %s wrote no output file", args);
        snprintf(cmd, sizeof(cmd), "rm -rf %s %s.d", out, out);
        tb_test_sh(cmd);
    }
    /* --json is an output too, and a failure is an error. */
    {
        struct tb_test_out o = tb_test_run("run --mock --max-tokens 4 -q --json");
        assert_int_equal(o.code, 0);
        assert_non_null(strstr(o.so, "\"schema\""));
        assert_string_equal(o.se, "");
        tb_test_out_free(&o);
    }
    {
        char args[128];
        struct tb_test_out o;
        snprintf(args, sizeof(args), "run --base-url http://127.0.0.1:%d/v1 --model m -q",
                 tb_test_refused_port());
        o = tb_test_run(args);
        assert_int_equal(o.code, 3);
        assert_string_equal(o.so, "");
        assert_true(strncmp(o.se, "ttsbuf: ", 8) == 0);
        tb_test_out_free(&o);
    }
}

/* During a gap the status line says SILENT and counts the gap it is in:
 * an underrun more, and the silence so far; the drain's live view gives
 * that gap's length, and once the audio resumes the count is the
 * playout's own.  One token is "1 token". */
static void status_counts_the_gap_in_progress(void **state)
{
    struct tb_sim_opts o;
    struct tb_ring *ring;
    struct tb_drain *d;
    struct tb_drain_status ds;
    struct tb_live_status st;
    double next;
    char line[160];
    (void)state;
    tb_sim_opts_default(&o);
    o.seg.policy = TB_CHUNK_TOKEN;
    assert_int_equal(tb_ring_create(o.ring_slots, o.ring_bytes, &ring), 0);
    assert_int_equal(tb_drain_create(&o, ring, NULL, NULL, &d), 0);
    assert_int_equal(tb_ring_push(ring, 0.1, "word ", 5, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_drain_step(d, 0.1, &next), 0);
    tb_drain_status(d, 0.2, &ds);
    assert_true(ds.playing && ds.buffered_s > 0 && ds.silent_s == 0);
    /* Played out by 2.0 s, more to come: silent since the audio's end. */
    tb_drain_status(d, 2.0, &ds);
    assert_true(ds.playing);
    assert_int_equal(ds.underruns, 0);
    assert_true(ds.buffered_s == 0 && ds.silent_s > 1.0 && ds.silent_s < 1.9);
    memset(&st, 0, sizeof(st));
    st.t = 2.0;
    st.events = 1;
    st.playing = 1;
    st.silent_s = ds.silent_s;
    tb_cli_report_status(line, sizeof(line), &st);
    if (strstr(line, "  1 token  ") == NULL || strstr(line, "SILENT") == NULL ||
        strstr(line, " 1 underrun (1.") == NULL)
        fail_msg("status line during a gap: '%s'", line);
    /* The next token ends the gap: the playout counts it, the line the
     * same. */
    {
        double gap = ds.silent_s;
        assert_int_equal(tb_ring_push(ring, 2.0, "word ", 5, 1, TB_KIND_CONTENT), 0);
        assert_int_equal(tb_drain_step(d, 2.0, &next), 0);
        tb_drain_status(d, 2.0, &ds);
        assert_int_equal(ds.underruns, 1);
        assert_near(ds.gap_total, gap, 1e-9);
        assert_true(ds.silent_s == 0);
    }
    st.events = 2;
    st.underruns = ds.underruns;
    st.gap_total = ds.gap_total;
    st.buffered_s = ds.buffered_s;
    st.silent_s = ds.silent_s;
    tb_cli_report_status(line, sizeof(line), &st);
    if (strstr(line, "  2 tokens  ") == NULL || strstr(line, "playing") == NULL ||
        strstr(line, " 1 underrun (1.") == NULL)
        fail_msg("status line after the gap: '%s'", line);
    tb_drain_destroy(d);
    tb_ring_destroy(ring);
}

/* A pre-roll longer than the whole answer's speech is never reached:
 * the report says so, and does not call the minimum TPS headroom. */
static void unreached_preroll_is_said(void **state)
{
    struct tb_test_out o = tb_test_run("sim --preset demo --preroll 3600");
    (void)state;
    assert_int_equal(o.code, 0);
    if (strstr(o.so, "warning: the pre-roll (3600 s) is more than the answer's whole speech") ==
            NULL ||
        strstr(o.so, "(pre-roll never reached: any rate plays without a gap)") == NULL ||
        strstr(o.so, "headroom") != NULL)
        fail_msg("sim --preroll 3600:\n%s", o.so);
    tb_test_out_free(&o);
    o = tb_test_run("sim --preset demo --preroll 2");
    assert_int_equal(o.code, 0);
    assert_null(strstr(o.so, "never reached"));
    tb_test_out_free(&o);
}

/* serve with no source and run --mock stream the same default answer. */
static void one_default_mock_stream(void **state)
{
    const char *log = scratch("serve.log");
    char cmd[1024];
    char *text, *name;
    cJSON *j;
    (void)state;
    snprintf(cmd, sizeof(cmd),
             "'%s' serve --listen 127.0.0.1:0 2>%s & p=$!; for i in 1 2 3 4 5 6 7 8 9 10; do "
             "grep -q listening %s && break; sleep 0.2; done; kill -INT $p; wait $p",
             tb_test_bin(), log, log);
    assert_int_equal(tb_test_sh(cmd), 0);
    text = tb_test_slurp_str(log);
    remove(log);
    j = tb_test_run_json(NULL, "run --mock --max-tokens 2 --json", 0);
    name = cJSON_GetStringValue(cJSON_GetObjectItem(j, "source_name"));
    assert_non_null(name);
    assert_true(strncmp(name, "mock (", 6) == 0);
    snprintf(cmd, sizeof(cmd), "(preset %s)", name);
    if (strstr(text, cmd) == NULL)
        fail_msg("serve streams '%s'; run --mock '%s'", text, name);
    cJSON_Delete(j);
    free(text);
}

/* Every "listed below" in a command's --help is followed by its list,
 * and the man page (made from the same rows) has it too. */
static void listed_below_is_listed(void **state)
{
    static const char *const cmds[] = {"sim", "run", "serve", "sweep", "bench", "merge"};
    (void)state;
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        char args[64];
        struct tb_test_out o;
        snprintf(args, sizeof(args), "%s --help", cmds[i]);
        o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        if (strstr(o.so, "--chunk") != NULL &&
            (strstr(o.so, "\nChunk policies:\n") == NULL || strstr(o.so, "  clause ") == NULL ||
             strstr(o.so, "  elevenlabs-sdk ") == NULL))
            fail_msg("ttsbuf %s --help takes --chunk but lists no policy", cmds[i]);
        if (strstr(o.so, "--preset") != NULL && strstr(o.so, "\nPresets (") == NULL)
            fail_msg("ttsbuf %s --help takes --preset but lists no preset", cmds[i]);
        if (strstr(o.so, "  --tts PRESET") != NULL && (strstr(o.so, "\nTTS presets (") == NULL ||
                                                       strstr(o.so, "  cartesia-sonic-3 ") == NULL))
            fail_msg("ttsbuf %s --help takes --tts but lists no TTS preset", cmds[i]);
        for (const char *p = strstr(o.so, "listed below"); p != NULL;
             p = strstr(p + 1, "listed below")) {
            const char *line = p;
            while (line > o.so && line[-1] != '\n')
                line--;
            if (strncmp(line, "  --chunk", 9) != 0 && strncmp(line, "  --preset", 10) != 0 &&
                strncmp(line, "  --tts ", 8) != 0 &&
                strncmp(line, "                     ", 21) != 0)
                fail_msg("ttsbuf %s --help: 'listed below' in '%.60s'", cmds[i], line);
        }
        for (const char *p = o.so; *p != '\0'; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != 0))
            if (strcspn(p, "\n") > 100)
                fail_msg("ttsbuf %s --help: a line of %zu columns: '%.100s...'", cmds[i],
                         strcspn(p, "\n"), p);
        tb_test_out_free(&o);
    }
    /* The man page: bench's and sweep's sections list the policies too. */
    {
        char path[4096];
        const char *data = getenv("TB_TESTDATA");
        char *man, *bench, *sweep;
        snprintf(path, sizeof(path), "%s/../../man/ttsbuf.1", data != NULL ? data : "tests/data");
        man = tb_test_slurp_str(path);
        bench = strstr(man, ".\\\" BEGIN OPTIONS bench");
        sweep = strstr(man, ".\\\" BEGIN OPTIONS sweep");
        assert_non_null(bench);
        assert_non_null(sweep);
        assert_non_null(strstr(bench, "Chunk policies:"));
        assert_true(strstr(bench, "Chunk policies:") < strstr(bench, ".\\\" END OPTIONS bench"));
        assert_true(strstr(sweep, "Chunk policies:") < strstr(sweep, ".\\\" END OPTIONS sweep"));
        free(man);
    }
}

/* The common mistakes get an error that says what to do. */
static void errors_say_what_to_do(void **state)
{
    struct tb_test_mock m;
    char args[512], root[64];
    (void)state;
    /* A base URL without its /v1: the 404 says to add it (run and bench). */
    tb_test_mock_start(&m, 4, 0.01, 0.01, NULL);
    snprintf(root, sizeof(root), "%.*s", (int)(strlen(m.base) - 3), m.base);
    snprintf(args, sizeof(args), "run --base-url %s --model m --json", root);
    {
        struct tb_test_out o = tb_test_run(args);
        char want[160];
        assert_int_equal(o.code, 3);
        snprintf(want, sizeof(want), "(the API root usually ends in /v1: try --base-url %s/v1)\n",
                 root);
        if (strstr(o.se, "HTTP 404") == NULL || strstr(o.se, want) == NULL)
            fail_msg("ttsbuf %s: stderr '%s' lacks '%s'", args, o.se, want);
        tb_test_out_free(&o);
    }
    snprintf(args, sizeof(args), "bench --base-url %s --model m -c 1 --requests 1 -q", root);
    tb_test_expect_error(args, 3, "(the API root usually ends in /v1: try --base-url ");
    /* With /v1 there is no such hint, whatever the status. */
    snprintf(args, sizeof(args), "run --base-url %s --model mock+status@404 -q", m.base);
    {
        struct tb_test_out o = tb_test_run(args);
        assert_int_equal(o.code, 3);
        assert_null(strstr(o.se, "usually ends in /v1"));
        tb_test_out_free(&o);
    }
    tb_test_mock_stop(&m);
    /* Another tool's result given as a trace: the error says to import it. */
    snprintf(args, sizeof(args), "sim --trace %s", tb_test_data("import/sglang/good.jsonl"));
    tb_test_expect_error(args, 2,
                         "good.jsonl:1: missing \"t\" (this is an SGLang bench_serving result, not "
                         "a trace: read it with ttsbuf sim --import ");
    snprintf(args, sizeof(args), "sweep %s", tb_test_data("import/vllm/good.json"));
    tb_test_expect_error(args, 2,
                         "(this is a vLLM bench serve result, not a trace: read it with "
                         "ttsbuf sweep --import ");
    /* A percentage for a share. */
    tb_test_expect_error("sweep --preset demo --target-gapless 95", 2,
                         "--target-gapless: '95' is outside 0..1 (a share: 95% is 0.95)");
    tb_test_expect_error("sweep --preset demo --target-gapless 950", 2,
                         "--target-gapless: '950' is outside 0..1");
}

/* Removes the "started_at":"..." member from a JSON text, in place. */
static void drop_started_at(char *s)
{
    char *p = strstr(s, "\"started_at\":\""), *e;
    if (p == NULL || (e = strchr(p + strlen("\"started_at\":\""), '"')) == NULL)
        return;
    memmove(p, e + 1, strlen(e + 1) + 1);
}

/* A name the user typed is echoed only through the sanitizer: an unknown
 * --tts or --preset with bytes that are not UTF-8 and a terminal escape
 * comes back as one line of valid UTF-8 without them. */
static void unknown_names_echoed_safely(void **state)
{
    static const char *const args[] = {
        "sim --tts \"$(printf 'ab\\377\\033[31mc')\"",
        "sim --preset \"$(printf 'ab\\377\\033[31mc')\"",
        "run --mock --tts \"$(printf 'x\\300\\257\\tz')\"",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
        struct tb_test_out o = tb_test_run(args[i]);
        size_t n = strlen(o.se);
        if (o.code != 2 || strstr(o.se, "unknown preset '") == NULL ||
            tb_utf8_check(o.se, n) != n || strchr(o.se, '\033') != NULL ||
            strchr(o.se, '\t') != NULL || strchr(o.se, '\n') != o.se + n - 1)
            fail_msg("ttsbuf %s: exit %d, stderr '%s'", args[i], o.code, o.se);
        tb_test_out_free(&o);
    }
}

/* A bare file is the trace, for sim (whose usage shows it) as for sweep:
 * the same report as --trace FILE; a second one is refused. */
static void sim_takes_a_bare_file(void **state)
{
    const char *trace = scratch("bare.jsonl");
    char args[512];
    struct tb_test_out a, b;
    (void)state;
    snprintf(args, sizeof(args), "sim --preset demo --record %s", trace);
    a = tb_test_run(args);
    assert_int_equal(a.code, 0);
    tb_test_out_free(&a);
    snprintf(args, sizeof(args), "sim --trace %s --json", trace);
    a = tb_test_run(args);
    snprintf(args, sizeof(args), "sim %s --json", trace);
    b = tb_test_run(args);
    assert_int_equal(a.code, 0);
    assert_int_equal(b.code, 0);
    /* The two runs may straddle a second: their started_at is left out. */
    drop_started_at(a.so);
    drop_started_at(b.so);
    assert_string_equal(a.so, b.so);
    tb_test_out_free(&a);
    tb_test_out_free(&b);
    snprintf(args, sizeof(args), "sim %s %s", trace, trace);
    tb_test_expect_error(args, 2, "sim: unexpected argument");
    snprintf(args, sizeof(args), "sim %s --preset demo", trace);
    tb_test_expect_error(args, 2, "give one source");
    remove(trace);
}

/* Every line of the reports fits 100 columns: sim's, bench's (its
 * options as key=value words, not a JSON line) and sweep's table with
 * three axes and a target. */
static void tables_fit_100_columns(void **state)
{
    static const char *const runs[] = {
        "sim --preset demo --preroll 3600",
        "bench --mock --max-tokens 20 -c 1,10 --requests 2",
        "sweep --preset demo --seeds 1:4 --chunk sentence,elevenlabs-sdk --wpm 150,180 "
        "--preroll 0,0.5 --target-gapless 0.95",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        struct tb_test_out o = tb_test_run(runs[i]);
        assert_int_equal(o.code, 0);
        for (const char *p = o.so; *p != '\0';) {
            size_t n = strcspn(p, "\n");
            if (n > 100)
                fail_msg("ttsbuf %s: a line of %zu columns: '%.*s'", runs[i], n, (int)n, p);
            p += n + (p[n] == '\n');
        }
        if (i == 1 && (strstr(o.so, "{\"chunk\"") != NULL ||
                       strstr(o.so, "  options: chunk=sentence min_chars=1 wpm=150") == NULL))
            fail_msg("bench's options are not key=value words:\n%s", o.so);
        tb_test_out_free(&o);
    }
}

/* A gate's failure comes after the report it judges, on one terminal or
 * log (standard output is a file here: fully buffered). */
static void gate_failures_come_last(void **state)
{
    const char *out = scratch("gate.out");
    char cmd[512];
    char *text;
    const char *rep, *fail;
    (void)state;
    snprintf(cmd, sizeof(cmd), "'%s' sim --preset demo --fail-on-underrun >%s 2>&1", tb_test_bin(),
             out);
    assert_int_equal(tb_test_sh(cmd), 1);
    text = tb_test_slurp_str(out);
    remove(out);
    rep = strstr(text, "ttsbuf sim: ");
    fail = strstr(text, "ttsbuf: --fail-on-underrun: ");
    if (rep == NULL || fail == NULL || fail < rep || strstr(fail, "\n  ring: ") != NULL)
        fail_msg("the gate's failure is not after the report:\n%s", text);
    free(text);
}

int tb_test_usage(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_is_errors_only),
        cmocka_unit_test(status_counts_the_gap_in_progress),
        cmocka_unit_test(unreached_preroll_is_said),
        cmocka_unit_test(one_default_mock_stream),
        cmocka_unit_test(listed_below_is_listed),
        cmocka_unit_test(errors_say_what_to_do),
        cmocka_unit_test(unknown_names_echoed_safely),
        cmocka_unit_test(sim_takes_a_bare_file),
        cmocka_unit_test(tables_fit_100_columns),
        cmocka_unit_test(gate_failures_come_last),
    };
    return TB_RUN_GROUP("usage", tests);
}
