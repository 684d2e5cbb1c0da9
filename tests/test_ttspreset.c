/*
 * test_ttspreset.c - the TTS engine presets compiled in from
 * data/tts_presets/tts_presets.json (ttspreset.h): the file loads; names
 * are unique; every figure given names a source with a URL or a file and
 * who measured it, every figure missing says why; every latency spec
 * parses with ttslat.h and its median is the published one; a p90 derived
 * from a published median and IQR follows the file's stated formula; the
 * figures the presets are for (the ElevenLabs schedule, Cartesia's buffer
 * delay, one stream per socket, eSpeak NG's measured RTF, the engines
 * that return a sentence's audio whole) are what the sources say; every
 * preset has a one-line note and a sourced output mode; no connect figure
 * is a difference of medians; and data breaking each rule is refused with
 * the preset and the key.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "play/ttspreset_data.h"
#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttslat.h"
#include "ttsbuf/ttspreset.h"

#define ERRLEN 512

static struct tb_ttspreset_set *load(void)
{
    struct tb_ttspreset_set *s = NULL;
    char err[ERRLEN] = "";
    int rc = tb_ttspreset_load(&s, err, sizeof(err));
    if (rc != 0)
        fail_msg("tts presets: %s (%s)", err, tb_strerror(rc));
    return s;
}

static void check_source(const char *preset, const char *what,
                         const struct tb_ttspreset_source *src)
{
    if (src == NULL)
        fail_msg("%s: %s has no source", preset, what);
    if ((src->url == NULL) == (src->file == NULL))
        fail_msg("%s: %s: source %s needs a url or a file", preset, what, src->id);
    if (src->url != NULL && strncmp(src->url, "https://", 8) != 0)
        fail_msg("%s: %s: source %s: url '%s' is not https", preset, what, src->id, src->url);
    if (src->measured_by == NULL || strlen(src->measured_by) < 10)
        fail_msg("%s: %s: source %s does not say who measured", preset, what, src->id);
}

static void check_fig(const char *preset, const char *what, const struct tb_ttspreset_fig *f)
{
    if (f->known)
        check_source(preset, what, f->source);
    else if (f->note == NULL || strlen(f->note) < 5 || f->source != NULL)
        fail_msg("%s: %s is missing without a note saying why", preset, what);
}

static void loads_with_sources(void **state)
{
    struct tb_ttspreset_set *s = load();
    size_t n = 0;
    const struct tb_ttspreset *p = tb_ttspreset_all(s, &n);
    (void)state;
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(p[i].name);
        assert_non_null(p[i].engine);
        for (size_t k = 0; k < i; k++)
            if (strcmp(p[i].name, p[k].name) == 0)
                fail_msg("preset name '%s' twice", p[i].name);
        assert_ptr_equal(tb_ttspreset_find(s, p[i].name), &p[i]);
        check_fig(p[i].name, "latency", &p[i].latency);
        check_fig(p[i].name, "connect", &p[i].connect);
        check_fig(p[i].name, "concurrency", &p[i].concurrency);
        check_fig(p[i].name, "rtf", &p[i].rtf);
        check_fig(p[i].name, "output", &p[i].output);
        assert_true(p[i].output.known);
        assert_true(p[i].output.value == TB_TTS_STREAM || p[i].output.value == TB_TTS_WHOLE);
        if (p[i].note == NULL || strlen(p[i].note) < 20 || strchr(p[i].note, '\n') != NULL)
            fail_msg("%s: no one-line note", p[i].name);
        /* A cold connection measured, or none: the old figures were a cold
         * median minus a warm one, which measures no connection. */
        if (p[i].connect.known && p[i].connect.source != NULL &&
            strcmp(p[i].connect.source->id, "ttsss-2026") == 0)
            fail_msg("%s: connect from ttsss-2026's cold and warm medians", p[i].name);
        assert_true(p[i].latency.known == (p[i].latency.spec != NULL));
        if (p[i].policy == TB_TTSPRESET_SCHEDULE || p[i].policy == TB_TTSPRESET_MAX_DELAY)
            check_source(p[i].name, "chunking", p[i].policy_source);
    }
    assert_null(tb_ttspreset_find(s, "no-such-engine"));
    tb_ttspreset_destroy(s);
    tb_ttspreset_destroy(NULL);
}

/* Every latency spec through ttslat.h's own parser, and against the
 * published figures kept beside it in the file (p50_s, iqr_s). */
static void latency_specs_parse_and_match(void **state)
{
    cJSON *root = cJSON_Parse(tb_ttspreset_json), *it;
    int derived = 0;
    (void)state;
    assert_non_null(root);
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "presets"))
    {
        const char *name = cJSON_GetObjectItemCaseSensitive(it, "name")->valuestring;
        const cJSON *lat = cJSON_GetObjectItemCaseSensitive(it, "latency");
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lat, "spec");
        const cJSON *p50 = cJSON_GetObjectItemCaseSensitive(lat, "p50_s");
        const cJSON *iqr = cJSON_GetObjectItemCaseSensitive(lat, "iqr_s");
        struct tb_ttslat *t = NULL;
        struct tb_ttslat_info in;
        char err[ERRLEN] = "";
        int rc;
        if (cJSON_IsNull(spec))
            continue;
        assert_true(cJSON_IsString(spec));
        rc = tb_ttslat_create(spec->valuestring, 1, &t, err, sizeof(err));
        if (rc != 0)
            fail_msg("%s: latency '%s': %s", name, spec->valuestring, err);
        tb_ttslat_info(t, &in);
        if (!cJSON_IsNumber(p50) || fabs(in.p50 - p50->valuedouble) > 1e-12)
            fail_msg("%s: the spec's median %g is not the published p50_s", name, in.p50);
        if (cJSON_IsNumber(iqr)) {
            /* The file's "about": p90 = P50 exp(z_0.9 asinh(IQR / 2 P50) / z_0.75),
             * rounded to the millisecond. */
            double sig = asinh(iqr->valuedouble / (2 * p50->valuedouble)) / 0.6744897501960817;
            double p90 = p50->valuedouble * exp(TB_TTSLAT_Z90 * sig);
            if (in.kind != TB_TTSLAT_LOGNORMAL || fabs(in.p90 - p90) > 0.0005 + 1e-12)
                fail_msg("%s: p90 %g, derived %g", name, in.p90, p90);
            derived++;
        }
        tb_ttslat_destroy(t);
    }
    assert_int_equal(derived, 3); /* Flash v2.5, Sonic-3, Aura-2 */
    cJSON_Delete(root);
}

static void figures_as_sourced(void **state)
{
    struct tb_ttspreset_set *s = load();
    const struct tb_ttspreset *p;
    static const unsigned sched[] = {120, 160, 250, 290};
    static const char *const one_stream[] = {"elevenlabs-flash-v2.5", "elevenlabs-multilingual-v2",
                                             "cartesia-sonic-3", "deepgram-aura-2", "espeak-ng"};
    (void)state;
    p = tb_ttspreset_find(s, "elevenlabs-flash-v2.5");
    assert_non_null(p);
    assert_int_equal(p->policy, TB_TTSPRESET_SCHEDULE);
    assert_int_equal(p->schedule_n, 4);
    assert_memory_equal(p->schedule, sched, sizeof(sched));
    assert_string_equal(p->latency.spec, "lognormal:p50=0.288,p90=0.316");
    assert_true(p->latency.value == 0.288);
    assert_false(p->rtf.known);
    p = tb_ttspreset_find(s, "cartesia-sonic-3");
    assert_non_null(p);
    assert_int_equal(p->policy, TB_TTSPRESET_MAX_DELAY);
    assert_true(p->max_delay_s == 3.0);
    for (size_t i = 0; i < sizeof(one_stream) / sizeof(one_stream[0]); i++) {
        p = tb_ttspreset_find(s, one_stream[i]);
        assert_non_null(p);
        assert_true(p->concurrency.known && p->concurrency.value == 1);
    }
    p = tb_ttspreset_find(s, "espeak-ng");
    assert_true(p->rtf.known && p->rtf.value == 0.0012);
    assert_non_null(p->rtf.source->file);
    p = tb_ttspreset_find(s, "openai-tts-1");
    assert_non_null(p);
    assert_false(p->latency.known); /* no figure found: absent, not guessed */
    assert_null(p->latency.spec);
    assert_true(p->output.value == TB_TTS_STREAM); /* chunked transfer */
    /* The engines that return a sentence's audio whole say so, with the
     * source that says it, and carry the RTF their first audio needs;
     * Piper's first audio is all RTF (its latency 0, from the RTF's own
     * source). */
    {
        static const char *const whole[] = {"piper-medium-desktop", "piper-medium-rpi4",
                                            "espeak-ng"};
        size_t n = 0, nwhole = 0;
        const struct tb_ttspreset *all = tb_ttspreset_all(s, &n);
        for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
            p = tb_ttspreset_find(s, whole[i]);
            assert_non_null(p);
            assert_true(p->output.value == TB_TTS_WHOLE);
            assert_true(p->rtf.known);
            assert_true(p->connect.known && p->connect.value == 0.0); /* in process */
        }
        for (size_t i = 0; i < n; i++)
            nwhole += all[i].output.value == TB_TTS_WHOLE;
        assert_int_equal(nwhole, 3);
        p = tb_ttspreset_find(s, "piper-medium-rpi4");
        assert_string_equal(p->output.source->id, "piper-api-2025");
        assert_string_equal(p->latency.spec, "0");
        assert_string_equal(p->latency.source->id, "piper-rtf-2023");
        assert_true(p->rtf.value == 0.803);
        p = tb_ttspreset_find(s, "cartesia-sonic-3");
        assert_false(p->connect.known);
        p = tb_ttspreset_find(s, "deepgram-aura-2");
        assert_false(p->connect.known);
    }
    assert_string_equal(tb_ttspreset_policy_name(TB_TTSPRESET_SCHEDULE), "chunk_length_schedule");
    tb_ttspreset_destroy(s);
}

/* ---- data breaking a rule ------------------------------------------------ */

#define SRC                                                                                        \
    "\"sources\": {\"a\": {\"url\": \"https://x\", \"date\": null, \"measured_by\": "              \
    "\"someone\"}}, "
#define NONE "\"chunking\": {\"policy\": \"none\"}"
#define OUT "\"output\": {\"mode\": \"stream\", \"source\": \"a\"}, "
#define NULLS                                                                                      \
    "\"connect\": {\"value\": null, \"note\": \"none\"}, "                                         \
    "\"concurrency\": {\"value\": null, \"note\": \"none\"}, "                                     \
    "\"rtf\": {\"value\": null, \"note\": \"none\"}, " OUT
#define LAT(spec) "\"latency\": {\"spec\": " spec ", \"source\": \"a\"}, "
#define PRESET(name, body) "{\"name\": \"" name "\", \"engine\": \"e\", \"note\": \"n\", " body "}"
#define DOC(src, presets) "{" src "\"presets\": [" presets "]}"

struct bad {
    const char *json, *want;
};

static void bad_data(void **state)
{
    static const struct bad cases[] = {
        {"{", "not JSON"},
        {"{\"presets\": []}", "no \"presets\" array"},
        {DOC("", PRESET("x", LAT("\"0.2\"") NULLS NONE)), "no \"sources\" object"},
        {DOC("\"sources\": {\"a\": {\"date\": null, \"measured_by\": \"m\"}}, ",
             PRESET("x", LAT("\"0.2\"") NULLS NONE)),
         "source 'a': needs a url or a file"},
        {DOC("\"sources\": {\"a\": {\"url\": \"https://x\", \"measured_by\": \"\"}}, ",
             PRESET("x", LAT("\"0.2\"") NULLS NONE)),
         "source 'a': no measured_by"},
        {DOC(SRC, PRESET("x", "\"latency\": {\"spec\": \"0.2\"}, " NULLS NONE)),
         "preset 'x': latency is given without a source"},
        {DOC(SRC, PRESET("x", "\"latency\": {\"spec\": null}, " NULLS NONE)),
         "preset 'x': latency is null without a note"},
        {DOC(SRC, PRESET("x", "\"latency\": {\"spec\": \"0.2\", \"source\": \"b\"}, " NULLS NONE)),
         "preset 'x': latency: unknown source 'b'"},
        {DOC(SRC, PRESET("x", LAT("\"lognormal:p50=0.3,p90=0.2\"") NULLS NONE)),
         "preset 'x': latency: tts latency: lognormal p90 0.2 is below p50 0.3"},
        {DOC(SRC, PRESET("x", LAT("\"list:lat.txt\"") NULLS NONE)),
         "preset 'x': latency: lat.txt: no values"},
        {DOC(SRC,
             PRESET("x", LAT("\"0.2\"") NULLS NONE) "," PRESET("x", LAT("\"0.2\"") NULLS NONE)),
         "preset 'x' given twice"},
        {DOC(SRC, PRESET("X y", LAT("\"0.2\"") NULLS NONE)), "a name is a-z, 0-9"},
        {DOC(SRC, PRESET("x", LAT("\"0.2\"") "\"connect\": {\"value\": 0.1}, "
                                             "\"concurrency\": {\"value\": null, \"note\": \"n\"}, "
                                             "\"rtf\": {\"value\": null, \"note\": \"n\"}, " NONE)),
         "preset 'x': connect is given without a source"},
        {DOC(SRC, PRESET("x", LAT("\"0.2\"") "\"connect\": {\"value\": null, \"note\": \"n\"}, "
                                             "\"concurrency\": {\"value\": 0, \"source\": \"a\"}, "
                                             "\"rtf\": {\"value\": null, \"note\": \"n\"}, " NONE)),
         "preset 'x': concurrency 0 is outside 1..1000 (a whole number)"},
        {DOC(SRC,
             PRESET("x", LAT("\"0.2\"") "\"connect\": {\"value\": null, \"note\": \"n\"}, "
                                        "\"concurrency\": {\"value\": 1.5, \"source\": \"a\"}, "
                                        "\"rtf\": {\"value\": null, \"note\": \"n\"}, " NONE)),
         "concurrency 1.5 is outside"},
        {DOC(SRC,
             PRESET("x",
                    LAT("\"0.2\"") "\"connect\": {\"value\": null, \"note\": \"n\"}, "
                                   "\"concurrency\": {\"value\": null, \"note\": \"n\"}, "
                                   "\"rtf\": {\"value\": \"fast\", \"source\": \"a\"}, " NONE)),
         "preset 'x': rtf needs a \"value\" number or null"},
        {DOC(SRC, PRESET("x", LAT("\"0.2\"") NULLS "\"chunking\": {\"policy\": \"magic\"}")),
         "unknown chunking policy 'magic'"},
        {DOC(SRC, PRESET("x", LAT("\"0.2\"") NULLS
                         "\"chunking\": {\"policy\": \"chunk_length_schedule\", "
                         "\"schedule\": [120]}")),
         "chunking chunk_length_schedule is given without a source"},
        {DOC(SRC, PRESET("x", LAT("\"0.2\"") NULLS
                         "\"chunking\": {\"policy\": \"chunk_length_schedule\", "
                         "\"source\": \"a\", \"schedule\": [120, 0.5]}")),
         "schedule entries are whole numbers"},
        {DOC(SRC, PRESET("x", LAT("\"0.2\"") NULLS
                         "\"chunking\": {\"policy\": \"max_buffer_delay\", \"source\": \"a\"}")),
         "max_buffer_delay_ms needs a number"},
        {DOC(SRC, "{\"name\": \"x\", \"engine\": \"e\", " LAT("\"0.2\"") NULLS NONE "}"),
         "preset 'x': no one-line note"},
        {DOC(SRC, "{\"name\": \"x\", \"engine\": \"e\", \"note\": \"a\\nb\", " LAT("\"0.2\"")
                      NULLS NONE "}"),
         "preset 'x': no one-line note"},
        {DOC(SRC, PRESET("x", LAT("\"0.2\"") "\"connect\": {\"value\": null, \"note\": \"n\"}, "
                                             "\"concurrency\": {\"value\": null, \"note\": \"n\"}, "
                                             "\"rtf\": {\"value\": null, \"note\": \"n\"}, " NONE)),
         "preset 'x': output needs a \"mode\", stream or whole"},
        {DOC(SRC,
             PRESET("x",
                    LAT("\"0.2\"") "\"connect\": {\"value\": null, \"note\": \"n\"}, "
                                   "\"concurrency\": {\"value\": null, \"note\": \"n\"}, "
                                   "\"rtf\": {\"value\": null, \"note\": \"n\"}, "
                                   "\"output\": {\"mode\": \"burst\", \"source\": \"a\"}, " NONE)),
         "preset 'x': output needs a \"mode\", stream or whole"},
        {DOC(SRC, PRESET("x", LAT("\"0.2\"") "\"connect\": {\"value\": null, \"note\": \"n\"}, "
                                             "\"concurrency\": {\"value\": null, \"note\": \"n\"}, "
                                             "\"rtf\": {\"value\": null, \"note\": \"n\"}, "
                                             "\"output\": {\"mode\": \"whole\"}, " NONE)),
         "preset 'x': output is given without a source"},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct tb_ttspreset_set *s = NULL;
        char err[ERRLEN] = "";
        int rc = tb_ttspreset_parse(cases[k].json, strlen(cases[k].json), &s, err, sizeof(err));
        if (rc != TB_EFORMAT || strstr(err, cases[k].want) == NULL)
            fail_msg("case %zu: got %s '%s', want '%s'", k, tb_strerror(rc), err, cases[k].want);
        assert_null(s);
    }
    /* And the smallest good document loads. */
    {
        const char *good = DOC(SRC, PRESET("x", LAT("\"0.2\"") NULLS NONE));
        struct tb_ttspreset_set *s = NULL;
        char err[ERRLEN] = "";
        assert_int_equal(tb_ttspreset_parse(good, strlen(good), &s, err, sizeof(err)), 0);
        assert_non_null(tb_ttspreset_find(s, "x"));
        tb_ttspreset_destroy(s);
    }
}

int tb_test_ttspreset(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loads_with_sources),
        cmocka_unit_test(latency_specs_parse_and_match),
        cmocka_unit_test(figures_as_sourced),
        cmocka_unit_test(bad_data),
    };
    return TB_RUN_GROUP("ttspreset", tests);
}
