/*
 * test_turnlat_html.c - the turnlat group's pages (tb_test_turnlat runs
 * these cases): the waterfall of where a turn's wait went, on sim's and
 * bench's pages; bench --tts-url --html, whose TTS's audio is not kept,
 * drawing every turn's measured parts (the records', to the microsecond,
 * a leading silence of the server's 0.2 s) and replaying its streams
 * with the measured TTS, without audio; sim --html of such a trace
 * giving the same parts with no TTS model given; a tool call's part,
 * drawn and on bench's page.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/svg.h"
#include "ttsbuf/turnlat.h"

/* The pictures: the page's waterfall holds each part (its data-s, to the
 * microsecond, is the JSON's), the timeline marks the first audible
 * sample; bench's page stacks each level's p50 and p95. */
void tb_test_turnlat_pictures(void **state)
{
    (void)state;
    char dir[256], args[1024], path[320], *page, *p;
    cJSON *j;
    const cJSON *l;
    int parts = 0, port;
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "pic");
    snprintf(args, sizeof(args),
             "sim --synth tps=20,ttft=0.3,tokens=80,seed=3 --eou 0.4 --tts-lead 0.1 "
             "--tts-latency 0.2 --html %s/p.html --svg %s/t.svg --json",
             dir, dir);
    j = tb_test_run_json(NULL, args, 0);
    l = cJSON_GetObjectItemCaseSensitive(j, "latency");
    snprintf(path, sizeof(path), "%s/p.html", dir);
    page = tb_test_slurp_str(path);
    p = strstr(page, "data-chart=\"wait\"");
    assert_non_null(p);
    for (int i = 0; i < TB_TURN_LAT_PARTS - 1; i++) {
        char want[96];
        snprintf(want, sizeof(want), "data-part=\"%d\" data-s=\"%.6f\"", i,
                 tb_test_num(l, tb_turn_lat_keys[i]));
        parts += strstr(p, want) != NULL;
    }
    assert_int_equal(parts, TB_TURN_LAT_PARTS - 1);
    assert_non_null(strstr(p, "class=\"total\""));
    free(page);
    snprintf(path, sizeof(path), "%s/t.svg", dir);
    page = tb_test_slurp_str(path);
    assert_non_null(strstr(page, "first audible 0.97 s"));
    assert_non_null(strstr(page, "from the caller&apos;s last word to sound"));
    free(page);
    cJSON_Delete(j);
    /* bench: two bars a level */
    tb_test_serve_up("--synth tps=200,ttft=0.05,tokens=20", &port);
    snprintf(args, sizeof(args),
             "bench -q --base-url http://127.0.0.1:%d/v1 --model m -c 1,2 --requests 2 --eou 0.3 "
             "--html %s/b.html",
             port, dir);
    {
        struct tb_test_out o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        tb_test_out_free(&o);
    }
    snprintf(path, sizeof(path), "%s/b.html", dir);
    page = tb_test_slurp_str(path);
    assert_non_null(strstr(page, "data-label=\"c=1 p50\""));
    assert_non_null(strstr(page, "data-label=\"c=2 p95\""));
    free(page);
    tb_test_rm_rf(dir);
}

/* bench --html replays each stream at its own record's end of turn (a
 * drawn --eou): the page's wait for request i starts at -eou_s of record
 * i, not at request 0's. */
void tb_test_turnlat_html_own_eou(void **state)
{
    (void)state;
    char dir[256], args[1024], path[320], want[64];
    int port;
    char *page, *recs, *at;
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "hoe");
    tb_test_serve_up("--synth tps=200,ttft=0.05,tokens=20", &port);
    snprintf(args, sizeof(args),
             "bench -q --base-url http://127.0.0.1:%d/v1 --model m -c 1 --requests 3 "
             "--eou uniform:0.1..0.5 --html-streams 3 --out %s/D --html %s/D.html",
             port, dir, dir);
    {
        struct tb_test_out o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        tb_test_out_free(&o);
    }
    snprintf(path, sizeof(path), "%s/D.html", dir);
    page = tb_test_slurp_str(path);
    snprintf(path, sizeof(path), "%s/D/records.jsonl", dir);
    recs = tb_test_slurp_str(path);
    int n = 0;
    double first = NAN;
    int differ = 0;
    for (at = strstr(recs, "\"eou_s\":"); at != NULL; at = strstr(at + 1, "\"eou_s\":")) {
        double e = strtod(at + 8, NULL);
        if (n == 0)
            first = e;
        else if (fabs(e - first) > 1e-6)
            differ = 1;
        snprintf(want, sizeof(want), "data-from=\"-%.6f\"", e);
        if (strstr(page, want) == NULL)
            fail_msg("record eou_s %.6f: no %s on the page", e, want);
        n++;
    }
    assert_int_equal(n, 3);
    assert_true(differ); /* the draws differ, so the check can fail */
    free(page);
    free(recs);
    tb_test_rm_rf(dir);
}

/* A record's part i (tb_turn_lat_keys), NAN when null. */
static double rec_part(const cJSON *lat, int i)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(lat, tb_turn_lat_keys[i]);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A bar of the browsed page (html-page.mjs's "waits") holds lat's parts
 * and its v2v_s as the tick, each within 1e-6; no tool call, no part 7. */
static void bar_is(const cJSON *bar, const cJSON *lat, const char *what)
{
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(bar, "parts");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(bar, "total");
    for (int i = 0; i < TB_TURN_LAT_PARTS - 1; i++) {
        char k[16];
        const cJSON *v;
        double want = rec_part(lat, i);
        snprintf(k, sizeof(k), "%d", i);
        v = cJSON_GetObjectItemCaseSensitive(parts, k);
        if (isnan(want) ? !cJSON_IsNull(v)
                        : !cJSON_IsNumber(v) || fabs(v->valuedouble - want) > 1e-6)
            fail_msg("%s: %s is %s on the page, %.9f in the record", what, tb_turn_lat_keys[i],
                     v == NULL ? "absent" : cJSON_PrintUnformatted(v), want);
    }
    assert_null(cJSON_GetObjectItemCaseSensitive(parts, "7"));
    if (!cJSON_IsNumber(total) ||
        fabs(total->valuedouble - rec_part(lat, TB_TURN_LAT_PARTS - 1)) > 1e-6)
        fail_msg("%s: v2v_s's tick is not the record's %.9f", what,
                 rec_part(lat, TB_TURN_LAT_PARTS - 1));
}

/* The bar of the browsed page labelled label (in section sec, or in none
 * when sec < 0), or NULL. */
static const cJSON *bar_named(const cJSON *seen, const char *label, int sec)
{
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(seen, "waits"))
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(b, "section");
        if (strcmp(tb_test_str(b, "label"), label) == 0 &&
            (sec < 0 ? cJSON_IsNull(s) : cJSON_IsNumber(s) && (int)s->valuedouble == sec))
            return b;
    }
    return NULL;
}

/* A page's text holds each of lat's parts as its waterfall writes them
 * (data-part, data-s to the microsecond), has no audio, and says the TTS
 * was live. */
static void page_has_parts(const char *page, const cJSON *lat, const char *what)
{
    for (int i = 0; i < TB_TURN_LAT_PARTS - 1; i++) {
        char want[96];
        snprintf(want, sizeof(want), "data-part=\"%d\" data-s=\"%.6f\"", i, rec_part(lat, i));
        if (strstr(page, want) == NULL)
            fail_msg("%s: no %s (%s) on the page", what, want, tb_turn_lat_keys[i]);
    }
    assert_null(strstr(page, "<audio"));
    assert_non_null(strstr(page, "The TTS was live"));
}

/* bench --tts-url --html of calls against a TTS that starts each chunk
 * with 0.2 s of digital silence: the page says the TTS was live, draws
 * every turn's waterfall from its record (eou drawn per turn, so the
 * bars differ), replays each stream with its measured TTS (its own
 * waterfall the record's again), has no audio; sim --html of each turn's
 * trace, with no TTS model given, draws the same parts. */
void tb_test_turnlat_calls_html(void **state)
{
    char dir[256], args[1024], path[320];
    cJSON *recs[8], *seen;
    size_t n;
    int port, sections = 0;
    const cJSON *sec;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "callshtml");
    tb_test_serve_up("--tts-lead 0.2 --tts-latency 0.1 --synth tps=100,ttft=0.1,tokens=8,seed=2",
                     &port);
    snprintf(args, sizeof(args),
             "bench -q --base-url http://127.0.0.1:%d/v1 --model m --conversations builtin "
             "--calls 2 --call-count 2 --turns 2 --user-turn 0.05 --eou uniform:0.1..0.5 "
             "--tts-url http://127.0.0.1:%d --html-streams 4 --out %s/o --html %s/b.html",
             port, port, dir, dir);
    {
        struct tb_test_out o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("bench --tts-url --html: exit %d: %s", o.code, o.se);
        tb_test_out_free(&o);
    }
    snprintf(path, sizeof(path), "%s/o/records.jsonl", dir);
    n = tb_test_jsonl_records(path, recs, 8);
    assert_int_equal(n, 4);
    snprintf(path, sizeof(path), "%s/b.html", dir);
    {
        char out[320];
        snprintf(out, sizeof(out), "%s/b.json", dir);
        seen = tb_test_browse(path, out);
    }
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(seen, "live_notes")) >= 1);
    assert_non_null(strstr(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(seen, "live_notes"), 0)->valuestring,
        "The TTS was live: openai at http://127.0.0.1:"));
    for (size_t i = 0; i < n; i++) {
        const cJSON *lat = cJSON_GetObjectItemCaseSensitive(recs[i], "latency");
        char label[64];
        const cJSON *bar;
        snprintf(label, sizeof(label), "call %.0f turn %.0f", tb_test_num(recs[i], "call"),
                 tb_test_num(recs[i], "turn"));
        bar = bar_named(seen, label, -1);
        if (bar == NULL)
            fail_msg("no bar \"%s\" on the page", label);
        bar_is(bar, lat, label);
        if (fabs(tb_test_num(lat, "leading_silence_s") - 0.2) > 0.0101)
            fail_msg("%s: leading silence %.4f s, the server sent 0.2 s", label,
                     tb_test_num(lat, "leading_silence_s"));
    }
    /* each stream replayed with its measured TTS: no audio, its own
     * waterfall its record's */
    cJSON_ArrayForEach(sec, cJSON_GetObjectItemCaseSensitive(seen, "sections"))
    {
        const char *id = tb_test_str(sec, "details");
        double rid = strtod(strrchr(id, '-') + 1, NULL);
        const cJSON *bar = bar_named(seen, "this turn", sections);
        assert_false(tb_test_is_true(sec, "audio"));
        assert_non_null(bar);
        for (size_t i = 0; i < n; i++)
            if (tb_test_num(recs[i], "id") == rid)
                bar_is(bar, cJSON_GetObjectItemCaseSensitive(recs[i], "latency"), id);
        sections++;
    }
    assert_int_equal(sections, 4);
    cJSON_Delete(seen);
    /* sim --html of each turn's trace: no --tts-latency, the same parts */
    for (size_t i = 0; i < n; i++) {
        char *page;
        snprintf(args, sizeof(args), "sim -q --trace '%s/o/%s' --request %.0f --html %s/s.html",
                 dir, tb_test_str(recs[i], "trace"), tb_test_num(recs[i], "id"), dir);
        {
            struct tb_test_out o = tb_test_run(args);
            if (o.code != 0)
                fail_msg("sim --html of a live TTS's trace: exit %d: %s", o.code, o.se);
            tb_test_out_free(&o);
        }
        snprintf(path, sizeof(path), "%s/s.html", dir);
        page = tb_test_slurp_str(path);
        page_has_parts(page, cJSON_GetObjectItemCaseSensitive(recs[i], "latency"), "sim");
        assert_null(strstr(page, "The LLM was a mock"));
        free(page);
    }
    tb_test_json_free(recs, n);
    tb_test_rm_rf(dir);
}

/* run --mock with a live TTS, recorded: sim --html of the recording (no
 * TTS model given) draws the run's parts, its leading silence the
 * server's 0.2 s, without audio, and says the TTS was live and the LLM a
 * mock; the page opens in a browser with no error and no request. */
void tb_test_turnlat_run_mock_html(void **state)
{
    char dir[256], args[1024], path[320], out[320], *page;
    cJSON *run, *seen;
    const cJSON *lat, *bar;
    int port;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "runhtml");
    tb_test_serve_up("--tts-lead 0.2 --tts-latency 0.1", &port);
    snprintf(args, sizeof(args),
             "run --mock --synth tps=40,ttft=0.2,tokens=30,seed=3 --tts-url "
             "http://127.0.0.1:%d --eou 0.35 --json --record %s/r.jsonl",
             port, dir);
    run = tb_test_run_json(NULL, args, 0);
    lat = cJSON_GetObjectItemCaseSensitive(run, "latency");
    assert_true(fabs(tb_test_num(lat, "leading_silence_s") - 0.2) < 0.0101);
    snprintf(args, sizeof(args), "sim -q --trace %s/r.jsonl --html %s/p.html", dir, dir);
    {
        struct tb_test_out o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("sim --html of a live TTS's trace: exit %d: %s", o.code, o.se);
        tb_test_out_free(&o);
    }
    snprintf(path, sizeof(path), "%s/p.html", dir);
    page = tb_test_slurp_str(path);
    page_has_parts(page, lat, "sim of run --mock");
    assert_non_null(strstr(page, "The LLM was a mock"));
    free(page);
    snprintf(out, sizeof(out), "%s/p.json", dir);
    seen = tb_test_browse(path, out);
    bar = bar_named(seen, "this turn", 0);
    assert_non_null(bar);
    bar_is(bar, lat, "sim of run --mock");
    assert_false(tb_test_is_true(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(seen, "sections"), 0), "audio"));
    cJSON_Delete(seen);
    cJSON_Delete(run);
    tb_test_rm_rf(dir);
}

/* The text of the bar labelled label in the first wait picture that has
 * one (owned), up to the next bar or the picture's end; NULL when none. */
static char *bar_text(const char *page, const char *label)
{
    char want[96];
    const char *p, *e, *g;
    snprintf(want, sizeof(want), "<g class=\"wait\" data-label=\"%s\"", label);
    p = strstr(page, want);
    if (p == NULL)
        return NULL;
    e = strstr(p, "</svg>");
    g = strstr(p + 1, "<g class=\"wait\"");
    if (g != NULL && (e == NULL || g < e))
        e = g;
    return strndup(p, e != NULL ? (size_t)(e - p) : strlen(p));
}

/* Calls whose turns call a tool, against a live TTS: each turn's bar on
 * bench's page holds the record's tool_s as the tool call's part (none
 * for a turn without one) beside its other parts, all to the
 * microsecond. */
void tb_test_turnlat_calls_tool_html(void **state)
{
    char dir[256], args[1024], path[320], *page;
    cJSON *recs[8];
    size_t n, tools = 0;
    int port;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "turnlat", "toolhtml");
    tb_test_serve_up("--tts-lead 0.2 --tts-latency 0.05 --tool-call-rate 1 "
                     "--synth tps=100,ttft=0.05,tokens=10,seed=2",
                     &port);
    snprintf(args, sizeof(args),
             "bench -q --base-url http://127.0.0.1:%d/v1 --model m --conversations builtin "
             "--calls 2 --call-count 4 --turns 2 --user-turn 0.05 --tool-latency 0.2 "
             "--tts-url http://127.0.0.1:%d --html-streams 0 --out %s/o --html %s/b.html",
             port, port, dir, dir);
    {
        struct tb_test_out o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("bench --tts-url --html with tools: exit %d: %s", o.code, o.se);
        tb_test_out_free(&o);
    }
    snprintf(path, sizeof(path), "%s/o/records.jsonl", dir);
    n = tb_test_jsonl_records(path, recs, 8);
    assert_int_equal(n, 8);
    snprintf(path, sizeof(path), "%s/b.html", dir);
    page = tb_test_slurp_str(path);
    for (size_t i = 0; i < n; i++) {
        const cJSON *lat = cJSON_GetObjectItemCaseSensitive(recs[i], "latency");
        const cJSON *tool = cJSON_GetObjectItemCaseSensitive(lat, "tool_s");
        char label[64], want[96], *bar;
        snprintf(label, sizeof(label), "call %.0f turn %.0f", tb_test_num(recs[i], "call"),
                 tb_test_num(recs[i], "turn"));
        bar = bar_text(page, label);
        if (bar == NULL)
            fail_msg("no bar \"%s\" on the page", label);
        for (int k = 0; k < TB_TURN_LAT_PARTS - 1; k++) {
            snprintf(want, sizeof(want), "data-part=\"%d\" data-s=\"%.6f\"", k, rec_part(lat, k));
            if (strstr(bar, want) == NULL)
                fail_msg("%s: no %s (%s)", label, want, tb_turn_lat_keys[k]);
        }
        if (cJSON_IsNumber(tool)) {
            tools++;
            snprintf(want, sizeof(want), "data-part=\"7\" data-s=\"%.6f\"", tool->valuedouble);
            if (strstr(bar, want) == NULL)
                fail_msg("%s: tool_s %.6f is not its bar's tool call", label, tool->valuedouble);
        } else if (strstr(bar, "data-part=\"7\"") != NULL) {
            fail_msg("%s: no tool call, and a tool call's part drawn", label);
        }
        free(bar);
    }
    assert_true(tools > 0); /* the check above can fail */
    assert_non_null(strstr(page, ">tool call<"));
    free(page);
    tb_test_json_free(recs, n);
    tb_test_rm_rf(dir);
}

/* The x of the rect of part i in svg, or NAN when none is drawn. */
static double part_x(const char *svg, int i)
{
    char want[64];
    const char *p, *x;
    snprintf(want, sizeof(want), "<rect class=\"part\" data-part=\"%d\"", i);
    p = strstr(svg, want);
    x = p != NULL ? strstr(p, " x=\"") : NULL;
    return x != NULL ? strtod(x + 4, NULL) : NAN;
}

/* A tool call's wait is a part of the waterfall, drawn after the first
 * token as v2v adds it, and named in the legend; a turn without one
 * draws, says and names nothing of it. */
void tb_test_turnlat_tool_part(void **state)
{
    struct tb_svg_wait b = {"turn", {0.3, 0.2, 0.1, 0.01, 0.1, 0.0, 0.2, 0.5}, 1.41};
    char *svg = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;
    f = open_memstream(&svg, &len);
    assert_non_null(f);
    assert_int_equal(tb_svg_wait(f, "t", &b, 1), 0);
    fclose(f);
    assert_true(part_x(svg, 1) < part_x(svg, TB_SVG_WAIT_TOOL));
    assert_true(part_x(svg, TB_SVG_WAIT_TOOL) < part_x(svg, 2));
    assert_non_null(strstr(svg, "data-part=\"7\" data-s=\"0.500000\""));
    assert_non_null(strstr(svg, ">tool call<"));
    free(svg);
    b.part[TB_SVG_WAIT_TOOL] = NAN;
    b.total = 0.91;
    f = open_memstream(&svg, &len);
    assert_non_null(f);
    assert_int_equal(tb_svg_wait(f, "t", &b, 1), 0);
    fclose(f);
    assert_null(strstr(svg, "data-part=\"7\""));
    assert_null(strstr(svg, "tool call"));
    assert_true(part_x(svg, 1) < part_x(svg, 2));
    free(svg);
}
