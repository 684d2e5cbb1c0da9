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
#include "ttsbuf/bench_stats.h"

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
    tb_test_expect_error("sim --ring-slots -4", 2, "--ring-slots: '-4' is negative (allowed");
    tb_test_expect_error("serve --max-inflight -1", 2,
                         "--max-inflight: '-1' is negative (allowed 1..");
    tb_test_expect_error("sim --chunk paragraph", 2, "--chunk: unknown policy 'paragraph'");
    tb_test_expect_error("sim --preset nope", 2, "--preset: unknown preset 'nope'");
    tb_test_expect_error("sim --synth tps=0", 2, "tps");
    tb_test_expect_error("sim --synth bogus=1", 2, "unknown key 'bogus'");
    tb_test_expect_error("sim --preset demo --synth tps=5", 2, "give one source");
    tb_test_expect_error("sim --no-such-flag", 2, "unknown option '--no-such-flag'");
    tb_test_expect_error("sim --wpm", 2, "--wpm needs a value");
    tb_test_expect_error("sim stray", 2, "stray: No such file or directory");
    tb_test_expect_error("sim a b", 2, "unexpected argument 'b'");
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

/* sim --chunks: each chunk's text and the content event that released it
 * (a reasoning event is not counted), in the human table and in JSON. */
static void chunks_list(void **state)
{
    (void)state;
    char path[64], args[160];
    const char *want[] = {"Hello there, friend.", " It is Mr. Smith. "};
    const int ev[] = {5, 9};
    struct tb_test_out o;
    cJSON *j, *a;
    FILE *f;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-chunks-%d.jsonl", (int)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"t\": 0.1, \"text\": \"hm\", \"kind\": \"reasoning\"}\n"
          "{\"t\": 0.2, \"text\": \"Hello\"}\n{\"t\": 0.3, \"text\": \" there\"}\n"
          "{\"t\": 0.4, \"text\": \", fri\"}\n{\"t\": 0.5, \"text\": \"end\"}\n"
          "{\"t\": 0.6, \"text\": \".\"}\n{\"t\": 0.7, \"text\": \" It\"}\n"
          "{\"t\": 0.8, \"text\": \" is Mr\"}\n{\"t\": 0.9, \"text\": \". Smith\"}\n"
          "{\"t\": 1.0, \"text\": \".\"}\n{\"t\": 1.1, \"text\": \" \"}\n",
          f);
    fclose(f);
    snprintf(args, sizeof(args), "sim --trace %s --chunk openai-agents --chunks --json", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    a = cJSON_GetObjectItemCaseSensitive(j, "chunk_list");
    assert_true(cJSON_IsArray(a));
    assert_int_equal(cJSON_GetArraySize(a), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *c = cJSON_GetArrayItem(a, i);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "text");
        assert_true(cJSON_IsString(t));
        assert_string_equal(t->valuestring, want[i]);
        assert_int_equal((int)num(c, "event"), ev[i]);
        assert_true(num(c, "start_s") >= num(c, "ready_s"));
        assert_true(num(c, "duration_s") > 0);
    }
    cJSON_Delete(j);
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "sim --trace %s --chunk openai-agents --chunks", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "\"Hello there, friend.\""));
    assert_non_null(strstr(o.so, "\" It is Mr. Smith. \""));
    tb_test_out_free(&o);
    remove(path);
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

/* A trace file of the test's, in /tmp; returns its path (static). */
static const char *end_trace(const char *tag, const char *text)
{
    static char path[4][96];
    static int k;
    FILE *f;
    char *p = path[k++ % 4];
    snprintf(p, 96, "/tmp/ttsbuf-end-%d-%s.jsonl", (int)getpid(), tag);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

#define V2 "{\"ttsbuf_trace\": 2, \"command\": \"run\"}\n"
#define THREE "{\"t\": 0.1, \"text\": \"One.\"}\n{\"t\": 0.2, \"text\": \" Two.\"}\n"
#define LOST                                                                                       \
    "{\"end\": {\"kind\": \"connection_lost\", \"t\": 3.5, \"error\": {\"kind\": \"transport\", "  \
    "\"message\": \"connection lost after 3 deltas: reset\", \"http_status\": 200}}}\n"

/* How a recorded stream ended decides what sim may say.  A stream cut
 * off gives no verdict and no what-if, only what arrived ("incomplete: N
 * gaps before it was cut at T s"), and fails --fail-on-underrun even
 * without a gap; a recording of a failed request (no event) is reported,
 * every unmeasured number "-" and null (the pre-roll table too); a trace
 * without an end line says its end is unknown; a synthetic stream is
 * complete. */
static void sim_says_how_the_stream_ended(void **state)
{
    const char *cut = end_trace("cut", V2 THREE "{\"t\": 3.0, \"text\": \" Three.\"}\n" LOST);
    const char *cut0 = end_trace("cut0", V2 THREE LOST);
    const char *failed = end_trace(
        "503", V2 "{\"end\": {\"kind\": \"error\", \"t\": 0.2, \"error\": {\"kind\": \"http\", "
                  "\"message\": \"HTTP 503: overloaded\", \"http_status\": 503}}}\n");
    const char *old = end_trace("old", "{\"ttsbuf_trace\": 1}\n" THREE);
    char cmd[512];
    struct tb_test_out o;
    cJSON *j, *c;
    (void)state;

    snprintf(cmd, sizeof(cmd), "sim --trace %s", cut);
    o = tb_test_run(cmd);
    if (o.code != 0 ||
        strstr(o.so, "incomplete: 1 gap before it was cut at 3.50 s (connection_lost: connection "
                     "lost after 3 deltas: reset)") == NULL ||
        strstr(o.so, "verdict:") != NULL ||
        strstr(o.so, "  minimum TPS                 - tokens/s") == NULL)
        fail_msg("%s: exit %d\n%s", cmd, o.code, o.so);
    tb_test_out_free(&o);
    snprintf(cmd, sizeof(cmd), "sim --trace %s --json", cut);
    j = tb_test_run_json(NULL, cmd, 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "min_tps")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "speedup_needed")));
    assert_int_equal(cJSON_GetObjectItem(j, "underruns")->valueint, 1);
    c = cJSON_GetObjectItem(j, "end");
    assert_string_equal(cJSON_GetObjectItem(c, "kind")->valuestring, "connection_lost");
    assert_true(cJSON_GetObjectItem(c, "t_s")->valuedouble == 3.5);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "kind")->valuestring,
                        "transport");
    cJSON_Delete(j);

    /* No gap in what arrived is still no verdict, and no pass. */
    snprintf(cmd, sizeof(cmd), "sim --trace %s --fail-on-underrun", cut0);
    o = tb_test_run(cmd);
    if (o.code != 1 || strstr(o.so, "incomplete: no gap before it was cut at 3.50 s") == NULL ||
        strstr(o.se, "--fail-on-underrun: no verdict: the stream was cut off (connection_lost: "
                     "connection lost after 3 deltas: reset)") == NULL)
        fail_msg("%s: exit %d\n%s%s", cmd, o.code, o.so, o.se);
    tb_test_out_free(&o);

    snprintf(cmd, sizeof(cmd), "sim --trace %s", failed);
    o = tb_test_run(cmd);
    if (o.code != 0 ||
        strstr(o.so, "no verdict: the request failed (http: HTTP 503: overloaded)") == NULL ||
        strstr(o.so, "    0.00 s         -           -       - s       - s          - s") == NULL)
        fail_msg("%s: exit %d\n%s%s", cmd, o.code, o.so, o.se);
    tb_test_out_free(&o);
    snprintf(cmd, sizeof(cmd), "sim --trace %s --json", failed);
    j = tb_test_run_json(NULL, cmd, 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "underruns")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "gap_total_s")));
    c = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "preroll_curve"), 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "underruns")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "gap_total_s")));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "http_status")->valueint,
                     503);
    cJSON_Delete(j);

    snprintf(cmd, sizeof(cmd), "sim --trace %s", old);
    o = tb_test_run(cmd);
    if (o.code != 0 ||
        strstr(o.so, "note: the trace does not say how the stream ended (no end line") == NULL ||
        strstr(o.so, "verdict: ") == NULL)
        fail_msg("%s: exit %d\n%s", cmd, o.code, o.so);
    tb_test_out_free(&o);
    snprintf(cmd, sizeof(cmd), "sim --trace %s --json", old);
    j = tb_test_run_json(NULL, cmd, 0);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "end"), "kind")->valuestring,
                        "unknown");
    cJSON_Delete(j);
    j = tb_test_run_json(NULL, "sim --preset gc-8b --json", 0);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "end"), "kind")->valuestring,
                        "complete");
    cJSON_Delete(j);
    remove(cut);
    remove(cut0);
    remove(failed);
    remove(old);
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
    /* The same events, byte for byte; the headers differ at most in
     * started_at (the two runs may straddle a second). */
    assert_non_null(strchr(ta, '\n'));
    assert_non_null(strchr(tb, '\n'));
    assert_string_equal(strchr(ta, '\n'), strchr(tb, '\n'));
    {
        /* The header names the recording command and its playout options. */
        char *nl = strchr(ta, '\n');
        cJSON *h;
        *nl = '\0';
        h = cJSON_Parse(ta);
        *nl = '\n';
        assert_non_null(h);
        assert_string_equal(cJSON_GetObjectItem(h, "command")->valuestring, "sim");
        assert_string_equal(
            cJSON_GetObjectItem(cJSON_GetObjectItem(h, "options"), "chunk")->valuestring, "clause");
        cJSON_Delete(h);
    }
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

/* Two outputs on stdout are refused; --record - takes stdout and the
 * human report goes to stderr; a reader that closes the pipe early ends
 * the output quietly with exit 0 (as ripgrep does). */
static void stdout_is_one_output(void **state)
{
    (void)state;
    char cmd[1024], dir[64];
    char *s;
    tb_test_expect_error("sim --synth tokens=5 --json --record -", 2,
                         "--json and --record - would both write to stdout");
    tb_test_expect_error("sim --synth tokens=5 --record /nonexistent/t.jsonl", 2,
                         "--record: /nonexistent/t.jsonl: No such file or directory");
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-pipe-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s; mkdir -p %s", dir, dir);
    tb_test_sh(cmd);
    /* The trace alone on stdout, the report on stderr. */
    snprintf(cmd, sizeof(cmd),
             "'%s' sim --synth tokens=5 --record - >%s/out 2>%s/err && '%s' sim --trace %s/out "
             "--json >/dev/null",
             tb_test_bin(), dir, dir, tb_test_bin(), dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/err", dir);
    s = tb_test_slurp_str(cmd);
    assert_non_null(strstr(s, "verdict: "));
    free(s);
    /* A trace far larger than a pipe's buffer, and sweep's table, cut by
     * head -1. */
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof(cmd), "{ '%s' %s 2>%s/err; echo $? >%s/rc; } | head -1 >%s/out",
                 tb_test_bin(),
                 i == 0 ? "sim --synth tokens=20000 --record -"
                        : "sweep --preset demo --seeds 1:300 --preroll 0:3:0.05 --csv -",
                 dir, dir, dir);
        assert_int_equal(tb_test_sh(cmd), 0);
        snprintf(cmd, sizeof(cmd), "%s/rc", dir);
        s = tb_test_slurp_str(cmd);
        assert_string_equal(s, "0\n");
        free(s);
        snprintf(cmd, sizeof(cmd), "%s/err", dir);
        s = tb_test_slurp_str(cmd);
        assert_null(strstr(s, "ttsbuf:")); /* no error line */
        free(s);
        snprintf(cmd, sizeof(cmd), "%s/out", dir);
        s = tb_test_slurp_str(cmd);
        assert_non_null(strstr(s, i == 0 ? "\"ttsbuf_trace\"" : "chunk,"));
        free(s);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
}

/* The example scripts run from a fresh clone right after `make`: with
 * ttsbuf not on PATH and $TTSBUF unset they find the repository's
 * ./ttsbuf (a copy of examples/ next to a ttsbuf link stands for the
 * clone), on short inputs.  A ttsbuf installed on this machine (the
 * Debian package in /usr/bin) is kept out: each directory of PATH that
 * holds one is replaced by a shadow of it, links to all its commands but
 * ttsbuf (dropping /usr/bin would drop env, sh and awk with it). */
static void examples_run_from_a_clone(void **state)
{
    (void)state;
    char cmd[4096], dir[64];
    char *out;
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-ex-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "rm -rf %s && mkdir -p %s/examples %s/pics && cp %s/../../examples/*.sh %s/examples/ "
             "&& ln -s '%s' %s/ttsbuf && %s/ttsbuf sim --synth tps=40,tokens=30,seed=2 "
             "--record %s/t.jsonl >/dev/null",
             dir, dir, dir, tb_test_data(""), dir, tb_test_bin(), dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    /* Each script, from the clone's root, with a PATH that has no ttsbuf. */
    snprintf(cmd, sizeof(cmd),
             "cd %s && n=0 && P= && for d in $(printf %%s \"$PATH\" | tr : ' '); do "
             "if [ -x \"$d/ttsbuf\" ]; then n=$((n+1)) && mkdir -p shadow$n && "
             "for f in \"$d\"/*; do [ \"${f##*/}\" = ttsbuf ] || ln -s \"$f\" shadow$n/; done && "
             "P=$P$PWD/shadow$n:; else P=$P$d:; fi; done && PATH=${P%%:} && "
             "command -v ttsbuf >/dev/null && exit 99; env -u TTSBUF sh -c '"
             "sh examples/provider-gate.sh 0.5 t.jsonl && "
             "OUT=sw sh examples/buffer-sweep.sh t.jsonl >/dev/null && test -s sw.csv && "
             "sh examples/claim-check.sh 2 && "
             "sh examples/pictures.sh pics && test -s pics/timeline.svg && test -s pics/sweep.svg"
             "' >out 2>err",
             dir);
    {
        int rc = tb_test_sh(cmd);
        snprintf(cmd, sizeof(cmd), "%s/err", dir);
        out = tb_test_slurp_str(cmd);
        if (rc != 0)
            fail_msg("examples: exit %d: %s", rc, out);
        free(out);
    }
    snprintf(cmd, sizeof(cmd), "%s/out", dir);
    out = tb_test_slurp_str(cmd);
    assert_non_null(strstr(out, "ok    t.jsonl"));
    assert_non_null(strstr(out, "token     pre-roll"));
    free(out);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
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
        if (o.code != 3 || strcmp(err, cases[i].want) != 0)
            fail_msg("ttsbuf %s: exit %d, stderr '%s'; wanted exit 3 and '%s'", cases[i].args,
                     o.code, err, cases[i].want);
        tb_test_out_free(&o);
    }
}

/* --require's unknown gate names every gate it takes: each level gate,
 * every metric of the summary (the wait's parts and the tool's too), and
 * every statistic, in one line; and each of those names is a gate. */
static void unknown_gate_lists_all(void **state)
{
    struct tb_test_out o = tb_test_run("merge --require foo=1 /dev/null");
    char args[160];
    (void)state;
    assert_int_equal(o.code, 2);
    assert_true(strchr(o.se, '\n') == o.se + strlen(o.se) - 1);
    assert_non_null(strstr(o.se, "--require: unknown gate 'foo' (gapless_share, "));
    for (int m = 0; m < TB_BM__COUNT; m++) {
        char want[64], last[64];
        const char *name = tb_bench_metric_name((enum tb_bench_metric)m);
        snprintf(want, sizeof(want), " %s,", name);
        snprintf(last, sizeof(last), " %s and STAT ", name);
        if (strstr(o.se, want) == NULL && strstr(o.se, last) == NULL)
            fail_msg("the unknown gate's error leaves out %s: %s", name, o.se);
        if (m == TB_BM__COUNT - 1) {
            /* the last metric names a gate too: its p95 */
            struct tb_test_out g;
            snprintf(args, sizeof(args), "merge --require %s_p95=1 /dev/null", name);
            g = tb_test_run(args);
            assert_null(strstr(g.se, "unknown gate"));
            tb_test_out_free(&g);
        }
    }
    for (int k = 0; tb_stats_fields[k] != NULL; k++)
        assert_non_null(strstr(o.se, tb_stats_fields[k]));
    tb_test_out_free(&o);
}

/* sim's report numbers a turn's first chunk with audio one way: the
 * first-audio line and the wait's aggregation line name the same chunk
 * (blank chunks counted in both), and say apart when playback waited for
 * later chunks to close (a TTS stage of one slot here). */
static void sim_numbers_chunks_one_way(void **state)
{
    static const struct {
        const char *first, *events, *audio, *close;
    } cases[] = {
        {"Hi.", "{\"t\":0.12,\"text\":\"\\n\\n\"}\n{\"t\":0.2,\"text\":\" How are you?\"}\n",
         "(chunk 1 of 3, played when 3 had closed)", "(to chunk 1's close)"},
        {"\\n\\n", "{\"t\":0.15,\"text\":\"Hi.\"}\n{\"t\":0.6,\"text\":\" How are you?\"}\n",
         "(chunk 2 of 3)", "(to chunk 2's close)"},
    };
    char dir[128], path[256], args[512];
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "cli", "chunkno");
    snprintf(path, sizeof(path), "%s/t.jsonl", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tb_test_out o;
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "{\"ttsbuf_trace\":2}\n{\"t\":0.1,\"text\":\"%s\"}\n%s", cases[i].first,
                cases[i].events);
        fprintf(f, "{\"end\":{\"kind\":\"complete\",\"t\":1.0}}\n");
        fclose(f);
        snprintf(args, sizeof(args),
                 "sim --trace '%s' --chunk token --tts-latency 0.3 --tts-concurrency 1", path);
        o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        if (strstr(o.so, cases[i].audio) == NULL || strstr(o.so, cases[i].close) == NULL)
            fail_msg("case %zu: want %s and %s:\n%s", i, cases[i].audio, cases[i].close, o.so);
        tb_test_out_free(&o);
    }
    tb_test_rm_rf(dir);
}

int tb_test_cli(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_and_help),
        cmocka_unit_test(bad_usage),
        cmocka_unit_test(bad_trace_names_the_line),
        cmocka_unit_test(json_report_has_keys),
        cmocka_unit_test(human_report_verdict),
        cmocka_unit_test(gate_exit_codes),
        cmocka_unit_test(record_round_trip),
        cmocka_unit_test(chunks_list),
        cmocka_unit_test(examples_run_from_a_clone),
        cmocka_unit_test(stdout_is_one_output),
        cmocka_unit_test(write_error_names_the_cause),
        cmocka_unit_test(sim_says_how_the_stream_ended),
        cmocka_unit_test(unknown_gate_lists_all),
        cmocka_unit_test(sim_numbers_chunks_one_way),
    };
    return TB_RUN_GROUP("cli", tests);
}
