/*
 * test_cli.c - end to end: runs the real ttsbuf binary ($TTSBUF) and
 * checks exit codes, one-line errors, --json keys, --record round trips.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"

static void version_and_help(void **state)
{
    (void)state;
    struct tb_test_out o = tb_test_run("--version");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "ttsbuf 0."));
    tb_test_out_free(&o);
    o = tb_test_run("--help");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "sim"));
    tb_test_out_free(&o);
    o = tb_test_run("sim --help");
    assert_int_equal(o.code, 0);
    for (const char *w = "token\0sentence\0clause\0pipecat\0livekit\0openai-agents\0"
                         "fixed40\0elevenlabs\0gc-8b\0voice-60\0--preroll\0--json\0";
         *w; w += strlen(w) + 1)
        if (strstr(o.so, w) == NULL)
            fail_msg("sim --help does not mention %s", w);
    tb_test_out_free(&o);
}

static void bad_usage(void **state)
{
    (void)state;
    tb_test_expect_error("frobnicate", 2, "unknown command 'frobnicate'");
    tb_test_expect_error("sim --wpm abc", 2, "--wpm: 'abc' is not a number");
    tb_test_expect_error("sim --wpm 5", 2, "--wpm: '5' is outside 20..1000");
    tb_test_expect_error("sim --preroll -1", 2, "--preroll: '-1' is outside");
    tb_test_expect_error("sim --tts-latency 1e999", 2, "--tts-latency: '1e999' is not a number");
    tb_test_expect_error("sim --min-chars 0", 2, "--min-chars: '0' is outside");
    tb_test_expect_error("sim --ring-slots -4", 2, "--ring-slots: '-4' is not a whole number");
    tb_test_expect_error("sim --chunk paragraph", 2, "--chunk: unknown policy 'paragraph'");
    tb_test_expect_error("sim --preset nope", 2, "--preset: unknown preset 'nope'");
    tb_test_expect_error("sim --synth tps=0", 2, "tps");
    tb_test_expect_error("sim --synth bogus=1", 2, "unknown key 'bogus'");
    tb_test_expect_error("sim --preset demo --synth tps=5", 2, "give one source");
    tb_test_expect_error("sim --no-such-flag", 2, "unknown option '--no-such-flag'");
    tb_test_expect_error("sim --wpm", 2, "--wpm needs a value");
    tb_test_expect_error("sim stray", 2, "unexpected argument 'stray'");
}

static void bad_trace_names_the_line(void **state)
{
    (void)state;
    char path[64], args[128];
    FILE *f;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-test-%d.jsonl", (int)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"t\": 0.1, \"text\": \"a\"}\n{\"t\": 0.9, \"text\": \"b\"}\n"
          "{\"t\": 0.5, \"text\": \"c\"}\n",
          f);
    fclose(f);
    snprintf(args, sizeof(args), "sim --trace %s", path);
    tb_test_expect_error(args, 2, ":3: \"t\" goes backwards (0.5 < 0.9)");
    remove(path);
    tb_test_expect_error("sim --trace /nonexistent/trace.jsonl", 2,
                         "/nonexistent/trace.jsonl: No such file or directory");
    tb_test_expect_error("sim --trace - </dev/null", 2, "<stdin>: the trace holds no event");
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("--json: \"%s\" is missing or not a number", k);
    return v->valuedouble;
}

static void json_report_has_keys(void **state)
{
    (void)state;
    struct tb_test_out o = tb_test_run("sim --preset demo --json");
    cJSON *j;
    const char *keys[] = {"ttft_s",    "ttfa_s",  "events",        "chunks",        "decode_tps",
                          "speech_s",  "end_s",   "underruns",     "interruptions", "gap_total_s",
                          "gap_max_s", "min_tps", "speedup_needed"};
    assert_int_equal(o.code, 0);
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        (void)num(j, keys[i]);
    assert_true(num(j, "underruns") > 0); /* the demo stream stalls */
    assert_true(num(j, "gap_max_s") <= num(j, "gap_total_s"));
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "preroll_curve")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "preroll_curve")), 6);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "gaps")),
                     (int)num(j, "underruns"));
    cJSON_Delete(j);
    tb_test_out_free(&o);
}

static void human_report_verdict(void **state)
{
    (void)state;
    struct tb_test_out o = tb_test_run("sim");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "verdict: 2 underruns"));
    assert_non_null(strstr(o.so, "minimum TPS"));
    assert_non_null(strstr(o.so, "pre-roll"));
    assert_non_null(strstr(o.so, "ring: high water"));
    tb_test_out_free(&o);
    o = tb_test_run("sim --preset gc-8b");
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "verdict: no gaps"));
    tb_test_out_free(&o);
}

static void gate_exit_codes(void **state)
{
    (void)state;
    struct tb_test_out o = tb_test_run("sim --preset demo --fail-on-underrun");
    assert_int_equal(o.code, 1);
    assert_non_null(strstr(o.se, "--fail-on-underrun: 2 underruns"));
    tb_test_out_free(&o);
    o = tb_test_run("sim --preset gc-8b --fail-on-underrun");
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
}

/* --record writes a trace that replays to the same numbers, and the same
 * synth spec writes the same bytes twice. */
static void record_round_trip(void **state)
{
    (void)state;
    char a[64], b[64], args[256];
    struct tb_test_out o1, o2, o3;
    char *ta, *tb;
    snprintf(a, sizeof(a), "/tmp/ttsbuf-test-%d-a.jsonl", (int)getpid());
    snprintf(b, sizeof(b), "/tmp/ttsbuf-test-%d-b.jsonl", (int)getpid());
    snprintf(args, sizeof(args),
             "sim --synth tps=9,jitter=0.7,stall=0.03:1,burst=2,seed=5 --chunk clause --json "
             "--record %s",
             a);
    o1 = tb_test_run(args);
    assert_int_equal(o1.code, 0);
    snprintf(args, sizeof(args),
             "sim --synth tps=9,jitter=0.7,stall=0.03:1,burst=2,seed=5 "
             "--chunk clause --json --record %s",
             b);
    o2 = tb_test_run(args);
    ta = tb_test_slurp_str(a);
    tb = tb_test_slurp_str(b);
    assert_string_equal(ta, tb);
    snprintf(args, sizeof(args), "sim --trace - --chunk clause --json <%s", a);
    o3 = tb_test_run(args);
    assert_int_equal(o3.code, 0);
    {
        cJSON *j1 = cJSON_Parse(o1.so), *j3 = cJSON_Parse(o3.so);
        const char *keys[] = {"ttfa_s",         "underruns", "gap_total_s", "min_tps",
                              "speedup_needed", "end_s",     "decode_tps",  "chunks"};
        assert_non_null(j1);
        assert_non_null(j3);
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            if (num(j1, keys[i]) != num(j3, keys[i]))
                fail_msg("%s: synth %.17g, replayed trace %.17g", keys[i], num(j1, keys[i]),
                         num(j3, keys[i]));
        cJSON_Delete(j1);
        cJSON_Delete(j3);
    }
    free(ta);
    free(tb);
    tb_test_out_free(&o1);
    tb_test_out_free(&o2);
    tb_test_out_free(&o3);
    remove(a);
    remove(b);
}

/* A write to a full device names the cause (ENOSPC), not "input/output
 * error", for every output file the commands write. */
static void write_error_names_the_cause(void **state)
{
    static const struct {
        const char *args, *want;
    } cases[] = {
        {"sim --synth tokens=20 --record /dev/full",
         "ttsbuf: --record: writing /dev/full failed: No space left on device\n"},
        {"sim --synth tokens=20 --svg /dev/full",
         "ttsbuf: --svg: writing /dev/full failed: No space left on device\n"},
        {"sweep --synth tokens=20 --csv /dev/full",
         "ttsbuf: --csv: writing /dev/full failed: No space left on device\n"},
        {"sweep --synth tokens=20 --json /dev/full",
         "ttsbuf: --json: writing /dev/full failed: No space left on device\n"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tb_test_out o = tb_test_run(cases[i].args);
        const char *err = o.se;
        if (o.code != 2 || strcmp(err, cases[i].want) != 0)
            fail_msg("ttsbuf %s: exit %d, stderr '%s'; wanted exit 2 and '%s'", cases[i].args,
                     o.code, err, cases[i].want);
        tb_test_out_free(&o);
    }
}

int tb_test_cli(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_and_help),         cmocka_unit_test(bad_usage),
        cmocka_unit_test(bad_trace_names_the_line), cmocka_unit_test(json_report_has_keys),
        cmocka_unit_test(human_report_verdict),     cmocka_unit_test(gate_exit_codes),
        cmocka_unit_test(record_round_trip),        cmocka_unit_test(write_error_names_the_cause),
    };
    return TB_RUN_GROUP("cli", tests);
}
