/*
 * test_schema.c - every kind of file ttsbuf writes (sim/run/sim --import
 * results, bench records, summaries and traces, merge, sweep, CSV) is
 * validated against its JSON Schema in schema/ by a real validator
 * (python3-jsonschema, through tests/schema_check.py); so is every JSON,
 * JSONL and CSV file the binary wrote in any group that ran before this
 * one (tests/collect/collect.c keeps copies in $TB_COLLECT_DIR).  CSV
 * headers must equal the schema's flattened names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests.h"

/* Debian's interpreter: the one with python3-jsonschema (a python3 on
 * PATH may be another without it). */
#define PYTHON "/usr/bin/python3"

/* Runs the validator on args; fails the test with its report unless the
 * exit status is want (0: valid). */
static void validate(const char *args, int want)
{
    char cmd[4096], out[96], *text;
    int code;
    snprintf(out, sizeof(out), "/tmp/ttsbuf-schema-%d.txt", (int)getpid());
    snprintf(cmd, sizeof(cmd), PYTHON " tests/schema_check.py schema %s >%s 2>&1", args, out);
    code = tb_test_sh(cmd);
    text = tb_test_slurp_str(out);
    remove(out);
    if (code != want) {
        print_error("schema_check %s: exit %d, wanted %d:\n%s", args, code, want, text);
        free(text); /* fail() does not return */
        fail();
    }
    if (want == 0) /* "N checked, 0 problems" */
        print_message("schema_check: %s", text);
    free(text);
}

static void sh_ok(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    if (tb_test_sh(cmd) != 0)
        fail_msg("failed: %s", cmd);
}

/* A fast mock for bench (the built-in one speaks for ten seconds a
 * stream): its base URL in url. */
#define FAST "--synth tps=400,ttft=0.05,tokens=40"
static void fast_mock(char *url, size_t len)
{
    int port;
    tb_test_serve_up(FAST, &port);
    snprintf(url, len, "--base-url http://127.0.0.1:%d/v1 --model mock", port);
}

/* One of each output, written by the binary into a fresh directory. */
static void every_output_kind(void **state)
{
    char dir[] = "/tmp/ttsbuf-schema-XXXXXX", args[2048], mock[96];
    const char *b = tb_test_bin();
    (void)state;
    assert_non_null(mkdtemp(dir));
    fast_mock(mock, sizeof(mock));
    sh_ok("'%s' sim --preset demo --json >%s/sim.json", b, dir);
    sh_ok("'%s' sim --preset demo --chunks --json >%s/chunks.json", b, dir);
    sh_ok("'%s' sim --preset demo --record %s/trace.jsonl >/dev/null", b, dir);
    sh_ok("'%s' sim --trace %s/trace.jsonl --json >%s/replay.json", b, dir, dir);
    sh_ok("'%s' sim --import 'aiperf:%s' --json >%s/import.jsonl", b,
          tb_test_data("import/aiperf/good.jsonl"), dir);
    sh_ok("'%s' run --mock " FAST " --json --record %s/run-trace.jsonl >%s/run.json 2>/dev/null", b,
          dir, dir);
    sh_ok("'%s' run --mock --model mock+status@500 --json >%s/run-failed.json 2>/dev/null; test $? "
          "-eq 3",
          b, dir);
    sh_ok("'%s' sweep --preset demo --preroll 0,0.5 --target-gapless 0.5 --json %s/sweep.json "
          "--csv %s/sweep.csv >/dev/null",
          b, dir, dir);
    sh_ok("'%s' bench %s -c 1,2 --requests 3 --out %s/b --json >%s/bench.json 2>/dev/null", b, mock,
          dir, dir);
    sh_ok("'%s' bench %s -c 1 --requests 2 --csv >%s/bench.csv 2>/dev/null", b, mock, dir);
    tb_test_serve_down(NULL);
    sh_ok("'%s' merge %s/b --json >%s/merge.json", b, dir, dir);
    /* A recorded trace's header says when and by which command. */
    {
        char path[256], *t;
        snprintf(path, sizeof(path), "%s/trace.jsonl", dir);
        t = tb_test_slurp_str(path);
        *strchr(t, '\n') = '\0';
        assert_non_null(strstr(t, "\"started_at\":\"20"));
        assert_non_null(strstr(t, "\"command\":\"sim\""));
        free(t);
        snprintf(path, sizeof(path), "%s/run-trace.jsonl", dir);
        t = tb_test_slurp_str(path);
        *strchr(t, '\n') = '\0';
        assert_non_null(strstr(t, "\"command\":\"run\""));
        free(t);
    }
    snprintf(args, sizeof(args),
             "%s/*.json %s/*.jsonl %s/b/records.jsonl %s/b/summary.json %s/b/traces/*", dir, dir,
             dir, dir, dir);
    validate(args, 0);
    snprintf(args, sizeof(args), "--csv sweep %s/sweep.csv", dir);
    validate(args, 0);
    snprintf(args, sizeof(args), "--csv bench_summary %s/bench.csv", dir);
    validate(args, 0);
    sh_ok("rm -rf '%s'", dir);
}

/* The validator is real: a wrong type, a renamed key, an unversioned
 * document and a CSV header out of step are each refused. */
static void validator_refuses(void **state)
{
    static const char *const bad[] = {
        "{\"schema\":{\"name\":\"ttsbuf.result\",\"version\":1},\"ttsbuf_version\":\"0\","
        "\"started_at\":\"2026-01-01T00:00:00Z\",\"command\":\"sim\",\"source\":\"x\","
        "\"source_name\":\"x\",\"ttft_s\":\"0.1\"}",
        "{\"schema\":{\"name\":\"ttsbuf.result\",\"version\":1},\"ttsbuf_version\":\"0\","
        "\"started_at\":\"2026-01-01T00:00:00Z\",\"command\":\"sim\",\"source\":\"x\","
        "\"source_name\":\"x\",\"ttft\":0.1}",
        "{\"ttft_s\":0.1}",
        "{\"schema\":{\"name\":\"ttsbuf.result\",\"version\":1},\"ttsbuf_version\":\"0\","
        "\"started_at\":\"yesterday\",\"command\":\"sim\",\"source\":\"x\",\"source_name\":\"x\"}",
        /* audio: a key no sink writes; a sink's keys without a sink */
        "{\"schema\":{\"name\":\"ttsbuf.result\",\"version\":1},\"ttsbuf_version\":\"0\","
        "\"started_at\":\"2026-01-01T00:00:00Z\",\"command\":\"sim\",\"source\":\"x\","
        "\"source_name\":\"x\",\"audio\":{\"sink\":\"none\",\"voice_model\":\"espeak\","
        "\"voice\":\"en\",\"wpm\":150,\"rate_hz\":22050,\"chunks\":1,\"audio_s\":1,\"synth_s\":0,"
        "\"cache_hits\":0,\"volume\":1}}",
        "{\"schema\":{\"name\":\"ttsbuf.result\",\"version\":1},\"ttsbuf_version\":\"0\","
        "\"started_at\":\"2026-01-01T00:00:00Z\",\"command\":\"sim\",\"source\":\"x\","
        "\"source_name\":\"x\",\"audio\":{\"sink\":\"none\",\"voice_model\":\"espeak\","
        "\"voice\":\"en\",\"wpm\":150,\"rate_hz\":22050,\"chunks\":1,\"audio_s\":1,\"synth_s\":0,"
        "\"cache_hits\":0,\"underruns\":0}}",
        /* options: bench's keys in a sim result */
        "{\"schema\":{\"name\":\"ttsbuf.result\",\"version\":1},\"ttsbuf_version\":\"0\","
        "\"started_at\":\"2026-01-01T00:00:00Z\",\"command\":\"sim\",\"source\":\"x\","
        "\"source_name\":\"x\",\"options\":{\"chunk\":\"sentence\",\"min_chars\":1,\"wpm\":150,"
        "\"tts_latency_s\":0,\"preroll_s\":0,\"rebuffer\":false,\"api\":\"chat\"}}",
    };
    char path[96], args[256];
    (void)state;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-schema-bad-%d.json", (int)getpid());
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(bad[i], f);
        fclose(f);
        validate(path, 1);
    }
    {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("chunk,min_chars,tps,wpm,tts_latency,rebuffer,preroll,gapless\n", f);
        fclose(f);
        snprintf(args, sizeof(args), "--csv sweep %s", path);
        validate(args, 1);
    }
    remove(path);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The collection check names the broken copy among good ones: a result
 * with a string for a number, a trace whose event lacks "t", and a CSV
 * whose header is not the schema's. */
static void collection_refuses(void **state)
{
    char dir[] = "/tmp/ttsbuf-schema-dir-XXXXXX", path[256], args[512], out[96], cmd[1024];
    char *text;
    const char *b = tb_test_bin();
    static const char *const bad[][2] = {
        {"neg.1-0.sim.stdout.json",
         "{\"schema\":{\"name\":\"ttsbuf.result\",\"version\":1},\"ttsbuf_version\":\"0\","
         "\"started_at\":\"2026-01-01T00:00:00Z\",\"command\":\"sim\",\"source\":\"x\","
         "\"source_name\":\"x\",\"ttft_s\":\"0.1\"}\n"},
        {"neg.1-1.sweep.csv.sweep.csv", "chunk,tps,preroll\n1,2,3\n"},
    };
    (void)state;
    assert_non_null(mkdtemp(dir));
    /* A good copy of each kind beside them. */
    sh_ok("'%s' sim --preset demo --json >%s/neg.0-0.sim.stdout.json", b, dir);
    sh_ok("'%s' sweep --preset demo --preroll 0,0.5 --csv %s/neg.0-1.sweep.csv.sweep.csv "
          ">/dev/null",
          b, dir);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, bad[i][0]);
        write_file(path, bad[i][1]);
    }
    /* A trace whose second event has no time. */
    snprintf(cmd, sizeof(cmd),
             "'%s' sim --preset demo --record %s/t.jsonl >/dev/null && "
             "sed '3s/\"t\":[^,]*,//' %s/t.jsonl >%s/neg.1-2.run.record.jsonl && rm %s/t.jsonl",
             b, dir, dir, dir, dir);
    sh_ok("%s", cmd);
    snprintf(out, sizeof(out), "/tmp/ttsbuf-schema-dir-%d.txt", (int)getpid());
    snprintf(args, sizeof(args), PYTHON " tests/schema_check.py schema --dir %s >%s 2>&1", dir,
             out);
    assert_int_equal(tb_test_sh(args), 1);
    text = tb_test_slurp_str(out);
    remove(out);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (strstr(text, bad[i][0]) == NULL)
            fail_msg("the report does not name %s:\n%s", bad[i][0], text);
    if (strstr(text, "neg.1-2.run.record.jsonl:3: trace_event") == NULL)
        fail_msg("the report does not name the trace's line 3:\n%s", text);
    if (strstr(text, "neg.0-") != NULL)
        fail_msg("a good copy is reported:\n%s", text);
    assert_non_null(strstr(text, "per group: neg 5"));
    free(text);
    sh_ok("rm -rf '%s'", dir);
}

/* The collector keeps each kind of output under its name, and only what
 * the run itself wrote. */
static void collector_keeps_each_output(void **state)
{
    static const char *const want[] = {
        "probe.*.sim.stdout.json",
        "probe.*.sim.record.jsonl",
        "probe.*.sim.html.json",
        "probe.*.sweep.json.json",
        "probe.*.sweep.csv.sweep.csv",
        "probe.*.sweep.stdout.sweep.csv",
        "probe.*.bench.out.jsonl",
        "probe.*.bench.out.json",
        "probe.*.bench.stdout.bench_summary.csv",
    };
    char dir[] = "/tmp/ttsbuf-collect-XXXXXX", env[256], cmd[4096], path[320], mock[96];
    const char *b = tb_test_bin();
    (void)state;
    if (tb_test_collect_dir() == NULL) {
        print_message("schema: the collector is not in use (TB_COLLECT_DIR is not set)\n");
        skip();
    }
    assert_non_null(mkdtemp(dir));
    fast_mock(mock, sizeof(mock));
    snprintf(env, sizeof(env), "TB_COLLECT_DIR='%s/keep' TB_TEST_GROUP=probe", dir);
    sh_ok("mkdir '%s/keep' && cd '%s' && export %s && "
          "'%s' sim --preset demo --json >r.json && "
          "'%s' sim --preset demo --record t.jsonl --html p.html >/dev/null && "
          "'%s' sweep --preset demo --preroll 0,1 --json s.json --csv s.csv >/dev/null && "
          "'%s' sweep --preset demo --preroll 0,1 --csv - >s2.csv && "
          "'%s' bench %s -c 1 --requests 1 --out b --csv >b.csv 2>/dev/null && "
          "'%s' sim --preset demo --json >mixed.json 2>&1",
          dir, dir, env, b, b, b, b, b, mock, b);
    tb_test_serve_down(NULL);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        snprintf(cmd, sizeof(cmd), "ls %s/keep/%s >/dev/null 2>&1", dir, want[i]);
        if (tb_test_sh(cmd) != 0)
            fail_msg("the collector kept no %s", want[i]);
    }
    /* records.jsonl, summary.json, one trace; two sim stdouts, not three */
    snprintf(cmd, sizeof(cmd),
             "test $(ls %s/keep/probe.*.bench.out.* | wc -l) -eq 3 && "
             "test $(ls %s/keep/probe.*.sim.stdout.json | wc -l) -eq 1",
             dir, dir);
    if (tb_test_sh(cmd) != 0) {
        snprintf(path, sizeof(path), "ls %s/keep >&2", dir);
        tb_test_sh(path);
        fail_msg("the collector kept other files than the runs wrote");
    }
    /* A file the run did not touch is not its output. */
    sh_ok("cd '%s' && rm keep/* && TB_COLLECT_DIR='%s/keep' '%s' sim --trace t.jsonl --json "
          ">/dev/null && test -z \"$(ls keep)\"",
          dir, dir, b);
    sh_ok("rm -rf '%s'", dir);
}

/* Every JSON, JSONL and CSV file the binary wrote in the groups that ran
 * (this one included), kept by tests/collect/collect.c. */
static void collected_outputs(void **state)
{
    const char *d = tb_test_collect_dir();
    char args[4200];
    (void)state;
    if (d == NULL) {
        print_message("schema: nothing collected (TB_COLLECT_DIR is not set: run through make)\n");
        skip();
    }
    snprintf(args, sizeof(args), "--dir '%s'", d);
    validate(args, 0);
}

/* The man pages name every key of every schema (each file's table). */
static void man_names_every_key(void **state)
{
    (void)state;
    validate("--man man/ttsbuf.1 man/ttsbuf-trace.5", 0);
}

/* The validator and the collector themselves, and one of each output:
 * a group that runs beside the others. */
int tb_test_schemas(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validator_refuses),
        cmocka_unit_test(collection_refuses),
        cmocka_unit_test(man_names_every_key),
        cmocka_unit_test_teardown(collector_keeps_each_output, tb_test_serve_down),
        cmocka_unit_test_teardown(every_output_kind, tb_test_serve_down),
    };
    return TB_RUN_GROUP("schemas", tests);
}

/* What every group before it wrote: the last group, run alone. */
int tb_test_schema(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(collected_outputs),
    };
    return TB_RUN_GROUP("schema", tests);
}
