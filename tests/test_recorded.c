/*
 * test_recorded.c - what sim and sweep take of a recording: a bench
 * trace's modelled TTS latency (options.tts_latency_s), leading silence
 * (options.tts_lead) and end of turn (eou_s) replayed as if given, and
 * said so, unless an option gives them; sweep of the same traces gives
 * the same waits as sim; a tool turn's trace (its header's tool_s) warns
 * that its tool wait is not replayed, its latency.tool_s null.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

/* Two turns as bench --out writes them (--eou 0.2 --tts-latency 0.15
 * --tts-lead 0.05): request 0 a tool turn (tool_s 0.3), request 1 not. */
static void write_traces(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int r = 0; r < 2; r++) {
        fprintf(f,
                "{\"ttsbuf_trace\":2,\"request\":%d,\"eou_s\":0.2,%s\"command\":\"bench\","
                "\"options\":{\"chunk\":\"sentence\",\"min_chars\":1,\"wpm\":150,"
                "\"tts_latency_s\":0.15,\"preroll_s\":0,\"rebuffer\":false,\"voice_model\":"
                "\"rate\",\"eou\":\"0.2\",\"tts_lead\":\"0.05\"},\"events\":4}\n",
                r, r == 0 ? "\"tool_s\":0.3," : "");
        fprintf(f, "{\"t\":%g,\"text\":\"Hello there.\"}\n", 0.1 + 0.05 * r);
        fprintf(f, "{\"t\":%g,\"text\":\" How are\"}\n", 0.2 + 0.05 * r);
        fprintf(f, "{\"t\":%g,\"text\":\" you today?\"}\n", 0.3 + 0.05 * r);
        fprintf(f, "{\"t\":%g,\"text\":\" Fine.\"}\n", 0.4 + 0.05 * r);
        fprintf(f, "{\"end\":{\"kind\":\"complete\",\"t\":%g}}\n", 0.45 + 0.05 * r);
    }
    fclose(f);
}

static const cJSON *obj(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (v == NULL)
        fail_msg("no \"%s\"", k);
    return v;
}

/* sim's result of request id of the file at path, with extra options;
 * its stderr into se (owned) when se is not NULL. */
static cJSON *sim(const char *path, int id, const char *extra, char **se)
{
    char args[512];
    struct tb_test_out o;
    cJSON *j;
    snprintf(args, sizeof(args), "sim --trace '%s' --request %d --json %s", path, id, extra);
    o = tb_test_run(args);
    if (o.code != 0)
        fail_msg("%s: exit %d: %s", args, o.code, o.se);
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    if (se != NULL) {
        *se = o.se;
        o.se = NULL;
    }
    tb_test_out_free(&o);
    return j;
}

/* sim adopts the recording's constant TTS latency and lead as it does its
 * end of turn, and says where they came from; an option wins. */
static void sim_adopts_latency(void **state)
{
    char dir[256], path[320], args[512];
    cJSON *j;
    const cJSON *l;
    struct tb_test_out o;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "recorded", "sim");
    snprintf(path, sizeof(path), "%s/t.jsonl", dir);
    write_traces(path);
    j = sim(path, 1, "", NULL);
    l = obj(j, "latency");
    assert_true(fabs(tb_test_num_or_nan(l, "tts_ttfb_s") - 0.15) < 1e-9);
    assert_true(fabs(tb_test_num_or_nan(l, "leading_silence_s") - 0.05) < 1e-9);
    assert_true(tb_test_num_or_nan(l, "eou_s") == 0.2);
    cJSON_Delete(j);
    snprintf(args, sizeof(args), "sim --trace '%s' --request 1", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    if (strstr(o.so, "TTS first byte       0.150 s   (the recording's --tts-latency 0.15)") == NULL)
        fail_msg("the report does not name the recording's latency:\n%s", o.so);
    tb_test_out_free(&o);
    j = sim(path, 1, "--tts-latency 0.3", NULL);
    assert_true(fabs(tb_test_num_or_nan(obj(j, "latency"), "tts_ttfb_s") - 0.3) < 1e-9);
    cJSON_Delete(j);
    snprintf(args, sizeof(args), "sim --trace '%s' --request 1 --tts-latency 0.3", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_null(strstr(o.so, "the recording's --tts-latency"));
    tb_test_out_free(&o);
    tb_test_rm_rf(dir);
}

/* sweep of the traces plays each stream's wait as sim does (the recorded
 * end of turn, lead and latency), and says so; options replace them. */
static void sweep_adopts_recorded(void **state)
{
    char dir[256], path[320], args[512];
    double v[2];
    cJSON *j;
    const cJSON *w;
    struct tb_test_out o;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "recorded", "sweep");
    snprintf(path, sizeof(path), "%s/t.jsonl", dir);
    write_traces(path);
    for (int r = 0; r < 2; r++) {
        j = sim(path, r, "", NULL);
        v[r] = tb_test_num_or_nan(obj(j, "latency"), "v2v_s");
        cJSON_Delete(j);
    }
    snprintf(args, sizeof(args), "sweep --trace '%s' --json -", path);
    j = tb_test_run_json(NULL, args, 0);
    w = obj(cJSON_GetArrayItem(obj(j, "points"), 0), "v2v_s");
    if (fabs(tb_test_num_or_nan(w, "min") - fmin(v[0], v[1])) > 1e-9 ||
        fabs(tb_test_num_or_nan(w, "max") - fmax(v[0], v[1])) > 1e-9)
        fail_msg("sweep's v2v %.6f..%.6f, sim's %.6f and %.6f", tb_test_num_or_nan(w, "min"),
                 tb_test_num_or_nan(w, "max"), v[0], v[1]);
    cJSON_Delete(j);
    snprintf(args, sizeof(args), "sweep --trace '%s'", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    if (strstr(o.so, "as recorded (as sim plays them; an option replaces each): the end of turn "
                     "of 2 of 2 streams, the recordings' --tts-lead 0.05, the recordings' "
                     "--tts-latency 0.15\n") == NULL)
        fail_msg("sweep does not say what it adopted:\n%s", o.so);
    tb_test_out_free(&o);
    /* the options given: nothing adopted, the waits are theirs */
    snprintf(args, sizeof(args),
             "sweep --trace '%s' --eou 0.5 --tts-lead 0 --tts-latency 0 --json -", path);
    j = tb_test_run_json(NULL, args, 0);
    w = obj(cJSON_GetArrayItem(obj(j, "points"), 0), "v2v_s");
    assert_true(fabs(tb_test_num_or_nan(w, "min") - (fmin(v[0], v[1]) + 0.5 - 0.2 - 0.05 - 0.15)) <
                1e-9);
    cJSON_Delete(j);
    snprintf(args, sizeof(args), "sweep --trace '%s' --eou 0.5 --tts-lead 0 --tts-latency 0", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_null(strstr(o.so, "as recorded (as sim"));
    tb_test_out_free(&o);
    tb_test_rm_rf(dir);
}

/* A tool turn's trace: sim and sweep warn, in one line each, that the
 * tool wait is not replayed; sim's latency.tool_s is null, not 0. */
static void tool_turn_warns(void **state)
{
    char dir[256], path[320], args[512], *se = NULL;
    cJSON *j;
    struct tb_test_out o;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "recorded", "tool");
    snprintf(path, sizeof(path), "%s/t.jsonl", dir);
    write_traces(path);
    j = sim(path, 0, "", &se);
    assert_true(cJSON_IsNull(obj(obj(j, "latency"), "tool_s")));
    if (strstr(se, "ttsbuf: sim: warning: 1 of 1 turn had a tool call (the recording's tool_s "
                   "0.300 s): its tool wait is not replayed") == NULL ||
        strchr(se, '\n') != se + strlen(se) - 1)
        fail_msg("sim's stderr: %s", se);
    free(se);
    cJSON_Delete(j);
    j = sim(path, 1, "", &se);
    assert_true(cJSON_IsNull(obj(obj(j, "latency"), "tool_s")));
    assert_string_equal(se, "");
    free(se);
    cJSON_Delete(j);
    snprintf(args, sizeof(args), "sweep --trace '%s'", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    if (strstr(o.se, "ttsbuf: sweep: warning: 1 of 2 turns had a tool call: its tool wait is not "
                     "replayed") == NULL)
        fail_msg("sweep's stderr: %s", o.se);
    tb_test_out_free(&o);
    tb_test_rm_rf(dir);
}

int tb_test_recorded(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sim_adopts_latency),
        cmocka_unit_test(sweep_adopts_recorded),
        cmocka_unit_test(tool_turn_warns),
    };
    return TB_RUN_GROUP("recorded", tests);
}
