/*
 * test_ttscli.c - the TTS stage from the command line: its options on
 * sim, run and bench (good and bad values), a preset, the defaults giving
 * the output of the version before the stage byte for byte, a
 * mid-stream TTS stall seen end to end through `ttsbuf sim --json`, a
 * whole output (Piper's first audio), the presets that refuse without a
 * figure, and --tts list.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/speaker.h"

static const cJSON *item(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (v == NULL)
        fail_msg("--json: no \"%s\"", k);
    return v;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    if (!cJSON_IsString(v))
        fail_msg("--json: \"%s\" is not a string", k);
    return v->valuestring;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("--json: \"%s\" is not a number", k);
    return v->valuedouble;
}

/* Every option refuses a bad value with one line naming it and its
 * range (exit 2), on each command that plays a stream. */
static void bad_values(void **state)
{
    static const char *const cmds[] = {"sim --preset demo", "run --mock", "bench --mock -c 1"};
    (void)state;
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        char args[256];
#define BAD(opt, want)                                                                             \
    do {                                                                                           \
        snprintf(args, sizeof(args), "%s %s", cmds[i], opt);                                       \
        tb_test_expect_error(args, 2, want);                                                       \
    } while (0)
        BAD("--tts-latency -1", "--tts-latency: '-1' is outside 0..60");
        BAD("--tts-latency abc", "--tts-latency: 'abc' is not a number (allowed 0..60)");
        BAD("--tts-latency lognormal:p50=0.3", "--tts-latency: lognormal: p90 missing");
        BAD("--tts-latency uniform:2..1", "--tts-latency: uniform B 1 is below A 2");
        BAD("--tts-latency list:/nonexistent/lat", "--tts-latency: /nonexistent/lat: No such file");
        BAD("--tts-seed -1", "--tts-seed: '-1' is negative (allowed 0..");
        BAD("--tts-connect 61", "--tts-connect: '61' is outside 0..60");
        BAD("--tts-connect x", "--tts-connect: 'x' is not a number (allowed 0..60)");
        BAD("--tts-concurrency 1025", "--tts-concurrency: '1025' is outside 0..1024");
        BAD("--tts-concurrency 1.5", "--tts-concurrency: '1.5' is not a whole number");
        BAD("--tts-rtf -0.1", "--tts-rtf: '-0.1' is outside 0..100");
        BAD("--tts-rtf 101", "--tts-rtf: '101' is outside 0..100");
        BAD("--tts nope", "--tts: unknown preset 'nope' (--tts list lists them)");
        BAD("--tts-output bursts", "--tts-output: 'bursts' is not stream or whole");
        BAD("--tts-output whole --rebuffer", "--rebuffer: not modelled with a TTS stage");
        BAD("--tts-concurrency 1 --rebuffer", "--rebuffer: not modelled with a TTS stage");
        BAD("--chunk cartesia --max-buffer-delay 0", "--max-buffer-delay: '0' is outside 1..5000");
        BAD("--chunk cartesia --max-buffer-delay 5001",
            "--max-buffer-delay: '5001' is outside 1..5000");
        BAD("--chunk cartesia --max-buffer-delay x", "--max-buffer-delay: 'x' is not a number");
        BAD("--max-buffer-delay 100", "--max-buffer-delay: only with --chunk cartesia (the policy "
                                      "is sentence)");
        BAD("--chunk token --max-buffer-delay 100",
            "--max-buffer-delay: only with --chunk cartesia (the policy is token)");
        BAD("--chunk idle --idle-flush 0", "--idle-flush: '0' is outside 0.001..60");
        BAD("--chunk idle --idle-flush 61", "--idle-flush: '61' is outside 0.001..60");
        BAD("--chunk idle --idle-flush -1", "--idle-flush: '-1' is outside 0.001..60");
        BAD("--chunk cartesia --idle-flush 1", "--idle-flush: only with --chunk idle");
#undef BAD
    }
    /* The speech output plays the stage: no refusal (exit 0), and the
     * audio clock counts the model's underruns. */
    {
        char args[256], wav[64];
        cJSON *j;
        snprintf(wav, sizeof(wav), "/tmp/ttsbuf-ttscli-%d.wav", (int)getpid());
        snprintf(args, sizeof(args),
                 "sim --preset demo --tts-rtf 0.5 --tts-concurrency 1 --tts-latency 0.4 --json "
                 "--audio wav:%s",
                 wav);
        j = tb_test_run_json(NULL, args, 0);
        assert_true(num(item(j, "audio"), "underruns") == num(j, "underruns"));
        cJSON_Delete(j);
        remove(wav);
    }
    tb_test_expect_error("sweep --preset demo --chunk sentence,cartesia", 2,
                         "--chunk: cartesia is time-based: sweep re-times each stream's chunks");
    tb_test_expect_error("sim --preset demo --chunk idle --voice-model espeak", 2,
                         "--chunk idle with --voice-model espeak: the minimum TPS of a time-based "
                         "policy is modelled with the rate voice only");
    /* --html asks for the speech (the page embeds it): the error names it */
    tb_test_expect_error("sim --preset demo --chunk cartesia --html /dev/null", 2,
                         "--chunk cartesia with --html (the page embeds the speech)");
}

/* Good values: each reaches the JSON as given, the spec in canonical
 * form with its seed. */
static void good_values(void **state)
{
    (void)state;
    cJSON *j = tb_test_run_json(NULL,
                                "sim --preset demo --json --tts-latency lognormal:p90=0.5,p50=0.25 "
                                "--tts-seed 18446744073709551615 --tts-connect 0.4 "
                                "--tts-concurrency 2 --tts-rtf 0.25",
                                0);
    const cJSON *o = item(j, "options"), *t = item(o, "tts");
    struct tb_test_out raw = tb_test_run("sim --preset demo --json --tts-latency uniform:0..1 "
                                         "--tts-seed 18446744073709551615");
    assert_true(cJSON_IsNull(item(o, "tts_latency_s"))); /* not a constant */
    assert_string_equal(str(t, "latency"), "lognormal:p50=0.25,p90=0.5");
    /* exact, not a rounded double */
    assert_non_null(strstr(raw.so, "\"seed\":18446744073709551615,"));
    tb_test_out_free(&raw);
    assert_true(num(t, "connect_s") == 0.4);
    assert_true(num(t, "concurrency") == 2);
    assert_true(num(t, "rtf") == 0.25);
    assert_true(cJSON_IsNull(item(t, "preset")));
    cJSON_Delete(j);
    /* Unlimited concurrency is null, not 0; a list: draws nothing: seed null. */
    j = tb_test_run_json(NULL, "sim --preset demo --json --tts-rtf 0.5", 0);
    t = item(item(j, "options"), "tts");
    assert_true(cJSON_IsNull(item(t, "concurrency")));
    assert_true(cJSON_IsNull(item(t, "seed")));
    assert_string_equal(str(t, "latency"), "0");
    cJSON_Delete(j);
    /* The same seed gives the same draws; another seed other ones. */
    {
        struct tb_test_out a =
            tb_test_run("sim --preset demo --json --tts-latency "
                        "uniform:0..3 --tts-seed 5 | sed 's/\"started_at\":\"[^\"]*\"//'");
        struct tb_test_out b =
            tb_test_run("sim --preset demo --json --tts-latency "
                        "uniform:0..3 --tts-seed 5 | sed 's/\"started_at\":\"[^\"]*\"//'");
        struct tb_test_out c =
            tb_test_run("sim --preset demo --json --tts-latency "
                        "uniform:0..3 --tts-seed 6 | sed 's/\"started_at\":\"[^\"]*\"//'");
        assert_string_equal(a.so, b.so);
        assert_true(strcmp(a.so, c.so) != 0);
        tb_test_out_free(&a);
        tb_test_out_free(&b);
        tb_test_out_free(&c);
    }
}

/* --tts PRESET sets the stage from the data file; an explicit option
 * overrides it; a figure the preset does not know keeps its default and
 * a warning line says so (its connect figure is a cold connection or
 * none: Cartesia's is none); --help lists the presets. */
static void preset(void **state)
{
    (void)state;
    struct tb_test_out h;
    cJSON *j = tb_test_run_json(NULL, "sim --preset demo --json --tts cartesia-sonic-3", 0);
    const cJSON *t = item(item(j, "options"), "tts");
    assert_string_equal(str(t, "preset"), "cartesia-sonic-3");
    assert_string_equal(str(t, "latency"), "lognormal:p50=0.188,p90=0.31");
    assert_true(num(t, "seed") == 0);
    assert_true(num(t, "concurrency") == 1);
    assert_true(num(t, "connect_s") == 0); /* no cold-connection figure: the default */
    assert_true(num(t, "rtf") == 0);       /* not published: the default */
    assert_string_equal(str(t, "output"), "stream");
    cJSON_Delete(j);
    j = tb_test_run_json(NULL,
                         "sim --preset demo --json --tts cartesia-sonic-3 --tts-concurrency 3 "
                         "--tts-latency 0.5",
                         0);
    t = item(item(j, "options"), "tts");
    assert_true(num(t, "concurrency") == 3);
    assert_string_equal(str(t, "latency"), "0.5");
    assert_true(num(item(j, "options"), "tts_latency_s") == 0.5);
    cJSON_Delete(j);
    h = tb_test_run("sim --preset demo --tts cartesia-sonic-3");
    assert_int_equal(h.code, 0);
    assert_non_null(strstr(h.se, "warning: --tts cartesia-sonic-3: no published real-time factor"));
    assert_non_null(strstr(h.se, "warning: --tts cartesia-sonic-3: no published connect latency"));
    assert_non_null(strstr(h.so, "rtf=0  output=stream  preset=cartesia-sonic-3"));
    tb_test_out_free(&h);
    for (int i = 0; i < 3; i++) {
        static const char *const cmds[] = {"sim --help", "run --help", "bench --help"};
        h = tb_test_run(cmds[i]);
        assert_int_equal(h.code, 0);
        assert_non_null(strstr(h.so, "TTS presets (--tts"));
        assert_non_null(strstr(h.so, "elevenlabs-flash-v2.5       lognormal:p50=0.288,p90=0.316"));
        assert_non_null(strstr(h.so,
                               "piper-medium-rpi4           0                                    "
                               "1    0.803  whole"));
        tb_test_out_free(&h);
    }
}

/* A preset's input rule is the default --chunk: ElevenLabs' schedule,
 * Cartesia's buffering with the preset's delay, Piper's sentences; the
 * client's own chunks (the user's default) where the engine takes what
 * it is given; an explicit --chunk (and --max-buffer-delay) overrides it.
 * The report and the JSON say where the policy came from. */
static void preset_chunk_policy(void **state)
{
    static const struct {
        const char *args, *chunk;
        int from_preset;
    } cases[] = {
        {"--tts elevenlabs-flash-v2.5", "elevenlabs", 1},
        {"--tts elevenlabs-multilingual-v2", "elevenlabs", 1},
        {"--tts cartesia-sonic-3", "cartesia", 1},
        {"--tts piper-medium-desktop", "sentence", 1},
        {"--tts deepgram-aura-2", "sentence", 0},
        {"--tts openai-tts-1-hd", "sentence", 0},
        {"--tts openai-tts-1 --tts-latency 0.4", "sentence", 0},
        {"--tts deepgram-aura-2 --chunk clause", "clause", 0},
        {"--tts elevenlabs-flash-v2.5 --chunk token", "token", 0},
        {"--tts cartesia-sonic-3 --chunk fixed40", "fixed40", 0},
        {"--tts cartesia-sonic-3 --max-buffer-delay 250", "cartesia", 1},
        {"--chunk cartesia --tts cartesia-sonic-3", "cartesia", 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[256];
        cJSON *j;
        const cJSON *o;
        snprintf(args, sizeof(args), "sim --preset demo --json %s", cases[i].args);
        j = tb_test_run_json(NULL, args, 0);
        o = item(j, "options");
        if (strcmp(str(o, "chunk"), cases[i].chunk) != 0)
            fail_msg("%s: chunk %s, want %s", args, str(o, "chunk"), cases[i].chunk);
        assert_int_equal(cJSON_IsTrue(item(item(o, "tts"), "chunk_from_preset")),
                         cases[i].from_preset);
        if (strcmp(cases[i].chunk, "cartesia") == 0)
            assert_true(num(o, "max_buffer_delay_ms") == (strstr(args, "250") ? 250 : 3000));
        else
            assert_null(cJSON_GetObjectItemCaseSensitive(o, "max_buffer_delay_ms"));
        cJSON_Delete(j);
    }
    {
        struct tb_test_out h = tb_test_run("sim --preset demo --tts elevenlabs-flash-v2.5");
        assert_int_equal(h.code, 0);
        assert_non_null(strstr(h.so, "chunk=elevenlabs (the --tts preset's)"));
        tb_test_out_free(&h);
        h = tb_test_run("sim --preset demo --tts cartesia-sonic-3 --chunk cartesia");
        assert_non_null(strstr(h.so, "chunk=cartesia max-buffer-delay=3000 ms"));
        tb_test_out_free(&h);
    }
}

/* The time-based policies end to end: a trace whose chunks close at the
 * documented deadlines, the options in the JSON and the report. */
static void timed_policies_end_to_end(void **state)
{
    static const char trace[] = "{\"t\": 0, \"text\": \"Hello\"}\n"
                                "{\"t\": 0.5, \"text\": \" world.\"}\n"
                                "{\"t\": 1, \"text\": \" How\"}\n"
                                "{\"t\": 5, \"text\": \" are\"}\n"
                                "{\"t\": 9.5, \"text\": \" you\"}\n";
    char path[] = "/tmp/ttsbuf-timed-XXXXXX", args[512];
    int fd = mkstemp(path);
    FILE *f;
    cJSON *j;
    const cJSON *gaps;
    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(trace, f);
    fclose(f);
    /* cartesia, 3 s: "Hello world." goes when " How" comes (1 s), " How"
     * at 1 + 3 s, " are" at 5 + 3 s, " you" at the end (9.5 s). */
    snprintf(args, sizeof(args), "sim --trace %s --chunk cartesia --json", path);
    j = tb_test_run_json(NULL, args, 0);
    assert_true(num(j, "ttfa_s") == 1.0);
    assert_int_equal((int)num(j, "chunks"), 4);
    gaps = item(j, "gaps");
    assert_int_equal(cJSON_GetArraySize(gaps), 3);
    /* each gap ends as its chunk starts: chunk 2 at 4 s, chunk 3 at 8 s */
    assert_true(fabs(num(cJSON_GetArrayItem(gaps, 0), "at_s") +
                     num(cJSON_GetArrayItem(gaps, 0), "gap_s") - 4.0) < 1e-9);
    assert_true(fabs(num(cJSON_GetArrayItem(gaps, 1), "at_s") +
                     num(cJSON_GetArrayItem(gaps, 1), "gap_s") - 8.0) < 1e-9);
    assert_true(num(item(j, "options"), "max_buffer_delay_ms") == 3000);
    cJSON_Delete(j);
    /* idle, 4 s: " How" waits for 5 s, then 5 + 4 s. */
    snprintf(args, sizeof(args), "sim --trace %s --chunk idle --idle-flush 4 --json", path);
    j = tb_test_run_json(NULL, args, 0);
    assert_true(num(j, "ttfa_s") == 0.5);
    assert_int_equal((int)num(j, "chunks"), 4);
    gaps = item(j, "gaps");
    assert_true(fabs(num(cJSON_GetArrayItem(gaps, 0), "at_s") +
                     num(cJSON_GetArrayItem(gaps, 0), "gap_s") - 5.0) < 1e-9);
    assert_true(fabs(num(cJSON_GetArrayItem(gaps, 1), "at_s") +
                     num(cJSON_GetArrayItem(gaps, 1), "gap_s") - 9.0) < 1e-9);
    assert_true(num(item(j, "options"), "idle_flush_s") == 4);
    assert_null(cJSON_GetObjectItemCaseSensitive(item(j, "options"), "max_buffer_delay_ms"));
    cJSON_Delete(j);
    unlink(path);
}

/* With no TTS option (or today's constant --tts-latency) sim --json is
 * the version before the stage's, byte for byte: tests/data/tts/v1.json
 * was written by that binary (started_at and the version blanked). */
static void defaults_are_v1(void **state)
{
    (void)state;
#define BLANK                                                                                      \
    " | sed 's/\"started_at\":\"[^\"]*\"/\"started_at\":\"-\"/; "                                  \
    "s/\"ttsbuf_version\":\"[^\"]*\"/\"ttsbuf_version\":\"-\"/'"
    char args[1024], *want = tb_test_slurp_str(tb_test_data("tts/v1.json")), *got;
    struct tb_test_out a, b;
    a = tb_test_run("sim --synth tps=30,ttft=0.3,tokens=300,jitter=0.5,stall=0.05:1.5,seed=3 "
                    "--tts-latency 0.2 --preroll 1 --json" BLANK);
    snprintf(args, sizeof(args), "sim --trace - --chunk clause --json <%s" BLANK,
             tb_test_data("tts/stall.jsonl"));
    b = tb_test_run(args);
#undef BLANK
    assert_int_equal(a.code, 0);
    assert_int_equal(b.code, 0);
    got = malloc(strlen(a.so) + strlen(b.so) + 1);
    assert_non_null(got);
    snprintf(got, strlen(a.so) + strlen(b.so) + 1, "%s%s", a.so, b.so);
    assert_string_equal(got, want);
    free(got);
    tb_test_out_free(&a);
    tb_test_out_free(&b);
    free(want);
}

/* A TTS engine that stalls 5 s on chunk 3 while the LLM has sent all the
 * text: a gap the TTS caused, that no LLM rate removes.  The JSON says
 * null and why, the report "none", never a number. */
static void stall_end_to_end(void **state)
{
    (void)state;
    char args[1024], trace[512];
    struct tb_test_out h;
    const cJSON *g;
    cJSON *j;
    snprintf(trace, sizeof(trace), "%s", tb_test_data("tts/stall.jsonl"));
    snprintf(args, sizeof(args), "sim %s --tts-latency list:%s --json", trace,
             tb_test_data("tts/stall.lat"));
    j = tb_test_run_json(NULL, args, 0);
    assert_true(num(j, "underruns") == 1);
    assert_true(cJSON_IsNull(item(j, "min_tps")));
    assert_true(cJSON_IsNull(item(j, "speedup_needed")));
    assert_string_equal(str(j, "min_tps_reason"), "the TTS stage alone leaves gaps");
    assert_true(cJSON_IsNull(item(j, "min_tps_method")));
    assert_true(num(j, "gap_llm_s") == 0);
    assert_near(num(j, "gap_tts_s"), num(j, "gap_total_s"), 1e-12);
    g = cJSON_GetArrayItem(item(j, "gaps"), 0);
    assert_non_null(g);
    assert_string_equal(str(g, "cause"), "tts");
    assert_true(num(g, "chunk") == 3);
    /* Chunk 1 (1.2 s of speech) plays from 0.1, chunk 2 (0.6 s) after it
     * to 1.9; chunk 3's first audio is at 0.2 + 5: 3.3 s of silence, all
     * the engine's. */
    assert_near(num(g, "tts_s"), 3.3, 1e-9);
    assert_true(num(g, "llm_s") == 0);
    cJSON_Delete(j);
    snprintf(args, sizeof(args), "sim %s --tts-latency list:%s", trace,
             tb_test_data("tts/stall.lat"));
    h = tb_test_run(args);
    assert_int_equal(h.code, 0);
    assert_non_null(strstr(h.so, "minimum TPS              none"));
    assert_non_null(strstr(h.so, "the TTS stage alone leaves gaps"));
    assert_non_null(strstr(h.so, "before chunk 3   tts (llm 0.000 s, tts 3.300 s)"));
    assert_non_null(strstr(h.so, "tts: latency=list:"));
    assert_null(strstr(h.so, "nan"));
    tb_test_out_free(&h);
    /* A slow LLM: the same stream spread over 20 s makes llm gaps, and a
     * rate does remove them (a number, found by bisection, proven). */
    j = tb_test_run_json(NULL,
                         "sim --synth tps=2,tokens=40,seed=1 --tts-concurrency 1 --tts-latency "
                         "0.1 --json",
                         0);
    assert_true(num(j, "min_tps") > 0);
    assert_true(cJSON_IsNull(item(j, "min_tps_reason")));
    assert_true(cJSON_IsBool(item(j, "min_tps_proven")));
    assert_true(num(j, "gap_llm_s") > 0);
    cJSON_Delete(j);
}

/* The timeline draws each gap in its cause's colour (the LLM's part red,
 * the TTS stage's purple) and says the stage in its subtitle; without a
 * TTS option it is one red shading, as before. */
static void svg_two_colours(void **state)
{
    (void)state;
    char args[1024], trace[512], svg[64];
    struct tb_test_out o;
    char *doc;
    snprintf(svg, sizeof(svg), "/tmp/ttsbuf-ttscli-%d.svg", (int)getpid());
    snprintf(trace, sizeof(trace), "%s", tb_test_data("tts/stall.jsonl"));
    snprintf(args, sizeof(args), "sim %s --tts-latency list:%s --svg %s", trace,
             tb_test_data("tts/stall.lat"), svg);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    doc = tb_test_slurp_str(svg);
    assert_non_null(strstr(doc, "class=\"gap gap-tts\""));
    assert_non_null(strstr(doc, "fill=\"#9467bd\""));
    assert_non_null(strstr(doc, "data-gap=\"3.300000\" data-cause=\"tts\""));
    assert_null(strstr(doc, "gap-llm"));
    assert_non_null(strstr(doc, "minimum TPS none: the TTS stage alone leaves gaps"));
    assert_non_null(strstr(doc, "TTS latency list:"));
    assert_non_null(strstr(doc, ">TTS late<"));
    free(doc);
    snprintf(args, sizeof(args), "sim %s --svg %s", trace, svg);
    o = tb_test_run(args);
    tb_test_out_free(&o);
    doc = tb_test_slurp_str(svg);
    assert_null(strstr(doc, "data-cause"));
    assert_null(strstr(doc, "#9467bd"));
    free(doc);
    remove(svg);
}

/* --html with a TTS stage: the page has the audio, played as the stage
 * has it (its gaps heard are the model's), and lists the model's gaps
 * with their causes; the report and the JSON inside it are the run's. */
static void html_page(void **state)
{
    (void)state;
    char args[1024], trace[512], html[64];
    struct tb_test_out o;
    char *doc;
    snprintf(html, sizeof(html), "/tmp/ttsbuf-ttscli-%d.html", (int)getpid());
    snprintf(trace, sizeof(trace), "%s", tb_test_data("tts/stall.jsonl"));
    snprintf(args, sizeof(args), "sim %s --tts-latency list:%s --html %s", trace,
             tb_test_data("tts/stall.lat"), html);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    doc = tb_test_slurp_str(html);
    assert_non_null(strstr(doc, "<audio"));
    assert_null(strstr(doc, "No audio"));
    assert_non_null(strstr(doc, "(every number, the picture and the audio)"));
    /* heard where the model has it: at 1.9 s, 3.3 s long */
    assert_non_null(strstr(doc, "Gaps heard (1)"));
    assert_non_null(strstr(doc, "at 1.900 s: 3.300 s of silence (interruption)</a>"));
    assert_non_null(strstr(doc, "Gaps in the model (1)"));
    assert_non_null(strstr(doc, "data-cause=\"tts\">at 1.900 s: 3.300 s of silence"));
    assert_non_null(strstr(doc, "the TTS stage alone leaves gaps"));
    assert_non_null(strstr(doc, "class=\"gap gap-tts\""));
    free(doc);
    remove(html);
}

/* One voice-and-TTS struct reaches the speaker: it takes the playout's
 * options as they are, a TTS stage included (it plays the stage's
 * schedule), and refuses a stage no model has (before starting eSpeak or
 * a sink). */
static void speaker_takes_stage(void **state)
{
    (void)state;
    struct tb_speaker_opts so;
    struct tb_speaker *sp = NULL;
    char err[256];
    memset(&so, 0, sizeof(so));
    tb_playout_opts_default(&so.play);
    so.play.tts_rtf = -0.5;
    assert_int_equal(tb_speaker_create(&so, &sp, err, sizeof(err)), TB_EINVAL);
    assert_null(sp);
    assert_non_null(strstr(err, "negative TTS"));
    so.play.tts_rtf = 0;
    so.play.tts_concurrency = -1;
    assert_int_equal(tb_speaker_create(&so, &sp, err, sizeof(err)), TB_EINVAL);
    so.play.tts_concurrency = 1;
    so.play.tts_rtf = 0.5;
    so.play.tts_connect = 0.2;
    assert_int_equal(tb_speaker_create(&so, &sp, err, sizeof(err)), 0);
    assert_non_null(sp);
    tb_speaker_destroy(sp);
}

/* When the pre-roll binds, the minimum TPS comes from a scan: the JSON
 * and the report say it is not proven. */
static void scan_not_proven(void **state)
{
    (void)state;
    struct tb_test_out h;
    cJSON *j = tb_test_run_json(NULL, "sim --preset demo --tts-rtf 0.5 --preroll 2 --json", 0);
    assert_string_equal(str(j, "min_tps_method"), "scan");
    assert_true(cJSON_IsFalse(item(j, "min_tps_proven")));
    assert_true(num(j, "min_tps") > 0);
    cJSON_Delete(j);
    h = tb_test_run("sim --preset demo --tts-rtf 0.5 --preroll 2");
    assert_non_null(strstr(h.so, "(found by a scan: not proven)"));
    tb_test_out_free(&h);
}

/*
 * A non-streaming engine: Piper on a Raspberry Pi 4 returns a sentence's
 * audio whole, RTF 0.803 x its duration after synthesis starts.  The
 * stream's first sentence (2.4 s) closes at 0.373 s: its first audio is
 * 0.373 + 0.803 x 2.4 = 2.30 s (the version before played it at 0.373,
 * its first byte), and every chunk's first audio is its end (ready_s =
 * done_s = sent_s + 0.803 duration_s).  --tts-output stream overrides the
 * preset; --tts-output whole applies to any RTF.
 */
static void whole_output(void **state)
{
    static const char synth[] = "sim --synth tps=100,tokens=200,seed=3 --chunks";
    char args[256];
    const cJSON *c1, *k;
    struct tb_test_out h;
    cJSON *j;
    (void)state;
    snprintf(args, sizeof(args), "%s --tts piper-medium-rpi4 --json", synth);
    j = tb_test_run_json(NULL, args, 0);
    c1 = cJSON_GetArrayItem(item(j, "chunk_list"), 0);
    assert_near(num(c1, "sent_s"), 0.373, 0.0005);
    assert_near(num(c1, "duration_s"), 2.4, 1e-9);
    assert_near(num(j, "ttfa_s"), num(c1, "sent_s") + 0.803 * 2.4, 1e-9);
    cJSON_ArrayForEach(k, item(j, "chunk_list"))
    {
        assert_true(num(k, "ready_s") == num(k, "done_s"));
        assert_near(num(k, "done_s"), num(k, "sent_s") + 0.803 * num(k, "duration_s"), 1e-9);
    }
    assert_string_equal(str(item(item(j, "options"), "tts"), "output"), "whole");
    cJSON_Delete(j);
    snprintf(args, sizeof(args), "%s --tts piper-medium-rpi4", synth);
    h = tb_test_run(args);
    assert_int_equal(h.code, 0);
    assert_non_null(strstr(h.so, "time to first audio     2.300 s"));
    assert_non_null(strstr(h.so, "output=whole  preset=piper-medium-rpi4"));
    assert_non_null(strstr(h.so, "      1       8    0.373 s    2.300 s    2.300 s    2.300 s"));
    assert_null(strstr(h.se, "warning")); /* every figure the preset needs is sourced */
    tb_test_out_free(&h);
    snprintf(args, sizeof(args), "%s --tts piper-medium-rpi4 --tts-output stream --json", synth);
    j = tb_test_run_json(NULL, args, 0);
    assert_near(num(j, "ttfa_s"), 0.373, 0.0005);
    cJSON_Delete(j);
    /* R = 2, whole: no frame player, the chunk plays whole from its end. */
    snprintf(args, sizeof(args), "%s --tts-output whole --tts-rtf 2 --json", synth);
    j = tb_test_run_json(NULL, args, 0);
    c1 = cJSON_GetArrayItem(item(j, "chunk_list"), 0);
    assert_near(num(j, "ttfa_s"), num(c1, "sent_s") + 2 * 2.4, 1e-9);
    cJSON_Delete(j);
    /* Every command that models the stage takes it. */
    h = tb_test_run("bench --mock -c 1 --requests 1 --tts-output whole --tts-rtf 0.5 -q");
    assert_int_equal(h.code, 0);
    tb_test_out_free(&h);
    j = tb_test_run_json(NULL, "sweep --preset demo --tts piper-medium-rpi4 --json -", 0);
    assert_string_equal(str(item(item(j, "options"), "tts"), "output"), "whole");
    cJSON_Delete(j);
}

/* A preset without a figure the model needs refuses to run until it is
 * given (exit 2), on every command that models the stage: a first-byte
 * latency always, a real-time factor when the output is whole.  Given,
 * the preset runs. */
static void preset_needs_figures(void **state)
{
    static const char *const cmds[] = {"sim --preset demo", "run --mock", "bench --mock -c 1",
                                       "sweep --preset demo"};
    (void)state;
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        char args[256];
        snprintf(args, sizeof(args), "%s --tts openai-tts-1", cmds[i]);
        tb_test_expect_error(args, 2,
                             "ttsbuf: --tts openai-tts-1 needs --tts-latency: no published "
                             "first-byte figure (Coval's table names OpenAI TTS-1-HD, not tts-1)");
        snprintf(args, sizeof(args), "%s --tts openai-gpt-4o-mini-tts", cmds[i]);
        tb_test_expect_error(args, 2, "--tts openai-gpt-4o-mini-tts needs --tts-latency");
        snprintf(args, sizeof(args), "%s --tts deepgram-aura-2 --tts-output whole", cmds[i]);
        tb_test_expect_error(args, 2,
                             "--tts deepgram-aura-2 needs --tts-rtf: its output is whole, so its "
                             "first audio is RTF x a chunk's duration, and no real-time factor is "
                             "published\n");
    }
    {
        cJSON *j = tb_test_run_json(
            NULL, "sim --preset demo --json --tts openai-tts-1 --tts-latency 0.4", 0);
        assert_string_equal(str(item(item(j, "options"), "tts"), "latency"), "0.4");
        cJSON_Delete(j);
        j = tb_test_run_json(NULL,
                             "sim --preset demo --json --tts deepgram-aura-2 --tts-output whole "
                             "--tts-rtf 0.1",
                             0);
        assert_string_equal(str(item(item(j, "options"), "tts"), "output"), "whole");
        cJSON_Delete(j);
    }
}

/* --tts list: every preset with its figures, output and one-line note,
 * on each command that takes --tts, and with no command (which is sim),
 * exit 0. */
static void tts_list(void **state)
{
    static const char *const cmds[] = {"sim", "run", "bench", "sweep", ""};
    (void)state;
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        char args[64];
        struct tb_test_out h;
        snprintf(args, sizeof(args), "%s --tts list", cmds[i]);
        h = tb_test_run(args);
        assert_int_equal(h.code, 0);
        assert_non_null(strstr(h.so,
                               "piper-medium-rpi4           0                                    "
                               "1    0.803  whole"));
        assert_non_null(strstr(h.so, "openai-tts-1                -"));
        /* the notes: the engine line and what the preset lacks */
        assert_non_null(strstr(h.so, "Piper, a medium-quality ONNX voice on a Raspberry Pi 4"));
        assert_non_null(strstr(h.so, "no published first-byte figure: give\n      --tts-latency"));
        assert_string_equal(h.se, "");
        tb_test_out_free(&h);
    }
}

/* The mock's answer has blank chunks ("\n\n"): with a TTS stage the
 * simulator sends them to no TTS, as live does: no audio, no latency (sent,
 * first audio and all of it at one moment), and the next chunk not held
 * back by a latency it never had; the speech is the chunks' that say
 * something. */
static void blank_chunks_not_spoken(void **state)
{
    cJSON *j = tb_test_run_json(NULL,
                                "sim --preset mock --tts piper-medium-rpi4 --chunks --json", 0);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "chunk_list"), *c;
    double speech = 0.0;
    int blanks = 0;
    (void)state;
    assert_true(cJSON_IsArray(a));
    cJSON_ArrayForEach(c, a)
    {
        const char *t = str(c, "text");
        speech += num(c, "duration_s");
        if (strspn(t, " \n") != strlen(t))
            continue;
        blanks++;
        assert_true(num(c, "duration_s") == 0.0);
        assert_true(num(c, "sent_s") == num(c, "ready_s"));
        assert_true(num(c, "ready_s") == num(c, "done_s"));
    }
    assert_true(blanks >= 1);
    assert_near(num(j, "speech_s"), speech, 1e-9);
    cJSON_Delete(j);
}

/* A preset's figure that no source gives: one warning line per figure,
 * each fact once (never "no published X (not published)", never a
 * note that says again that no figure was published). */
static void preset_warnings_say_it_once(void **state)
{
    static const char *const presets[] = {"elevenlabs-flash-v2.5", "cartesia-sonic-3",
                                          "deepgram-aura-2",       "openai-tts-1-hd",
                                          "openai-tts-1",          "openai-gpt-4o-mini-tts"};
    (void)state;
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
        char args[256];
        struct tb_test_out h;
        size_t lines = 0;
        snprintf(args, sizeof(args), "sim --preset demo -q --tts %s --tts-latency 0.2", presets[i]);
        h = tb_test_run(args);
        assert_int_equal(h.code, 0);
        for (const char *l = h.se; *l != '\0';) {
            const char *e = strchr(l, '\n'), *p;
            size_t n = e != NULL ? (size_t)(e - l) : strlen(l);
            char line[1024];
            int published = 0;
            assert_true(n < sizeof(line));
            memcpy(line, l, n);
            line[n] = '\0';
            for (p = strstr(line, "published"); p != NULL; p = strstr(p + 1, "published"))
                published++;
            if (strstr(line, "warning: --tts ") == NULL || published > 1 ||
                strstr(line, "(no ") != NULL)
                fail_msg("%s: '%s'", presets[i], line);
            lines++;
            l = e != NULL ? e + 1 : l + n;
        }
        assert_true(lines >= 2); /* connect and RTF at least */
        tb_test_out_free(&h);
    }
    tb_test_expect_error("sim --preset demo --tts openai-gpt-4o-mini-tts", 2,
                         "ttsbuf: --tts openai-gpt-4o-mini-tts needs --tts-latency: no published "
                         "first-byte figure\n");
}

int tb_test_ttscli(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_values),
        cmocka_unit_test(good_values),
        cmocka_unit_test(preset),
        cmocka_unit_test(preset_chunk_policy),
        cmocka_unit_test(timed_policies_end_to_end),
        cmocka_unit_test(defaults_are_v1),
        cmocka_unit_test(stall_end_to_end),
        cmocka_unit_test(scan_not_proven),
        cmocka_unit_test(svg_two_colours),
        cmocka_unit_test(html_page),
        cmocka_unit_test(speaker_takes_stage),
        cmocka_unit_test(whole_output),
        cmocka_unit_test(preset_needs_figures),
        cmocka_unit_test(tts_list),
        cmocka_unit_test(preset_warnings_say_it_once),
        cmocka_unit_test(blank_chunks_not_spoken),
    };
    return TB_RUN_GROUP("ttscli", tests);
}
