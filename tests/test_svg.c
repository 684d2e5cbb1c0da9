/*
 * test_svg.c - the pictures, end to end through the real binary:
 *   - every SVG is well-formed XML (xmllint, Debian libxml2-utils);
 *   - the timeline has one shaded gap rectangle per underrun of the same
 *     run's --json report, at the right x and width, each with a <title>;
 *   - the sweep picture has one point per setting and one heat-map cell
 *     per pair of its two numeric axes, carrying the --json shares;
 *   - rendered by headless Chromium (Debian chromium) to a PNG, the
 *     timeline's pixels are red where, and only where, the gaps are.
 * The render test is skipped, saying why, only when chromium is not
 * installed (.ci/deps installs it); a chromium that fails is a failure.
 */
#include <cJSON.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#define SYNTH "--synth tps=6,ttft=0.5,tokens=90,jitter=0,stall=0.08:2.5,seed=5 --chunk token"

struct files {
    char svg[96], json[96], png[96], dir[96];
};

static void names(struct files *f, const char *tag)
{
    snprintf(f->svg, sizeof(f->svg), "/tmp/ttsbuf-svg-%d-%s.svg", (int)getpid(), tag);
    snprintf(f->json, sizeof(f->json), "/tmp/ttsbuf-svg-%d-%s.json", (int)getpid(), tag);
    snprintf(f->png, sizeof(f->png), "/tmp/ttsbuf-svg-%d-%s.png", (int)getpid(), tag);
    snprintf(f->dir, sizeof(f->dir), "/tmp/ttsbuf-svg-%d-chromium", (int)getpid());
}

static void cleanup(const struct files *f)
{
    char cmd[160];
    remove(f->svg);
    remove(f->json);
    remove(f->png);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    (void)system(cmd);
}

static void xml_valid(const char *path)
{
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", path);
    if (system(cmd) != 0)
        fail_msg("%s is not well-formed XML (xmllint)", path);
}

/* The number after `key="` at or after p, or NAN. */
static double attr(const char *p, const char *end, const char *key)
{
    char pat[64];
    const char *a;
    snprintf(pat, sizeof(pat), " %s=\"", key);
    a = strstr(p, pat);
    if (a == NULL || (end != NULL && a > end))
        return NAN;
    return strtod(a + strlen(pat), NULL);
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(s, what); p != NULL; p = strstr(p + 1, what))
        n++;
    return n;
}

/* Runs sim with --json and --svg; returns the report (caller deletes). */
static cJSON *sim_with_svg(const struct files *f, const char *args)
{
    char cmd[1024];
    struct tb_test_out o;
    cJSON *j;
    snprintf(cmd, sizeof(cmd), "sim %s --json --svg '%s'", args, f->svg);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("ttsbuf %s: exit %d: %s", cmd, o.code, o.se);
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    tb_test_out_free(&o);
    return j;
}

/* One gap rectangle per underrun, at the report's time and length. */
static void timeline_marks(void **state)
{
    struct files f = {0};
    cJSON *j, *gaps;
    char *svg;
    double x0, sc;
    const char *p;
    size_t i = 0;
    (void)state;
    names(&f, "marks");
    j = sim_with_svg(&f, SYNTH);
    xml_valid(f.svg);
    svg = tb_test_slurp_str(f.svg);
    x0 = attr(svg, NULL, "data-x0");
    sc = attr(svg, NULL, "data-px-per-s");
    assert_true(isfinite(x0) && isfinite(sc) && sc > 0);
    gaps = cJSON_GetObjectItem(j, "gaps");
    assert_true(cJSON_GetArraySize(gaps) >= 2);
    assert_int_equal(cJSON_GetArraySize(gaps),
                     (int)cJSON_GetObjectItem(j, "underruns")->valuedouble);
    assert_int_equal(count(svg, "class=\"gap\""), (size_t)cJSON_GetArraySize(gaps));
    for (p = strstr(svg, "<rect class=\"gap\""); p != NULL;
         p = strstr(p + 1, "<rect class=\"gap\""), i++) {
        cJSON *g = cJSON_GetArrayItem(gaps, (int)i);
        const char *close = strstr(p, "</rect>");
        double at = cJSON_GetObjectItem(g, "at_s")->valuedouble;
        double len = cJSON_GetObjectItem(g, "gap_s")->valuedouble;
        assert_non_null(close);
        assert_near(attr(p, close, "data-at"), at, 1e-6);
        assert_near(attr(p, close, "data-gap"), len, 1e-6);
        assert_near(attr(p, close, "x"), x0 + at * sc, 0.006);
        assert_near(attr(p, close, "width"), len * sc < 0.5 ? 0.5 : len * sc, 0.006);
        p = strstr(p, "<title>gap: ");
        assert_true(p != NULL && p < close);
    }
    /* Markers, axes with units, a legend, a title per chunk. */
    for (const char *w = "first token\0first audio\0buffered audio (s)\0"
                         "time since the request was sent (s)\0id=\"legend\"\0";
         *w; w += strlen(w) + 1)
        if (strstr(svg, w) == NULL)
            fail_msg("the timeline has no '%s'", w);
    assert_int_equal(count(svg, "class=\"chunk\""),
                     (size_t)cJSON_GetObjectItem(j, "chunks")->valuedouble);
    assert_int_equal(count(svg, "<title>chunk "), count(svg, "class=\"chunk\""));
    assert_null(strstr(svg, "<script"));
    assert_null(strstr(svg, "href"));
    free(svg);
    cJSON_Delete(j);
    cleanup(&f);
}

/* Names with XML's specials stay well-formed; no gap, no gap rectangle. */
static void timeline_escapes_and_no_gap(void **state)
{
    struct files f = {0};
    char args[512], trace[128];
    struct tb_test_out o;
    cJSON *j;
    char *svg;
    (void)state;
    names(&f, "esc");
    snprintf(trace, sizeof(trace), "/tmp/ttsbuf-svg-%d-a&b<c>\"d.jsonl", (int)getpid());
    snprintf(args, sizeof(args), "sim --preset gc-8b --record '%s'", trace);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "--trace '%s' --preroll 2", trace);
    j = sim_with_svg(&f, args);
    xml_valid(f.svg);
    svg = tb_test_slurp_str(f.svg);
    assert_int_equal((int)cJSON_GetObjectItem(j, "underruns")->valuedouble, 0);
    assert_int_equal(count(svg, "class=\"gap\""), 0);
    assert_non_null(strstr(svg, "a&amp;b&lt;c&gt;&quot;d.jsonl"));
    assert_non_null(strstr(svg, "No gaps"));
    free(svg);
    cJSON_Delete(j);
    remove(trace);
    /* A file that cannot be written: exit 2, one line naming the flag. */
    o = tb_test_run("sim --svg /nonexistent-dir/x.svg");
    assert_int_equal(o.code, 2);
    assert_non_null(
        strstr(o.se, "ttsbuf: --svg: /nonexistent-dir/x.svg: No such file or directory"));
    tb_test_out_free(&o);
    cleanup(&f);
}

/* The sweep picture: a point per setting and a cell per pair of the two
 * numeric axes, with the shares of the --json output. */
static void sweep_marks(void **state)
{
    struct files f = {0};
    char cmd[1024];
    struct tb_test_out o;
    cJSON *j, *pts;
    char *svg, *json;
    const char *p;
    int i = 0;
    (void)state;
    names(&f, "sweep");
    snprintf(cmd, sizeof(cmd),
             "sweep --synth tps=8,tokens=80,jitter=0.6,stall=0.03:1.5 --seeds 1:20 "
             "--chunk sentence,token --tps 0,20 --preroll 0,1,2 --target-gapless 0.9 "
             "--json '%s' --svg '%s'",
             f.json, f.svg);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("ttsbuf %s: exit %d: %s", cmd, o.code, o.se);
    tb_test_out_free(&o);
    xml_valid(f.svg);
    svg = tb_test_slurp_str(f.svg);
    json = tb_test_slurp_str(f.json);
    j = cJSON_Parse(json);
    assert_non_null(j);
    pts = cJSON_GetObjectItem(j, "points");
    assert_int_equal(cJSON_GetArraySize(pts), 12);
    /* Lines over pre-roll, one per (chunk, tps): circle k is point k. */
    assert_int_equal(count(svg, "<circle "), 12);
    assert_int_equal(count(svg, "class=\"series\""), 4);
    for (p = strstr(svg, "<circle "); p != NULL; p = strstr(p + 1, "<circle "), i++) {
        double share =
            cJSON_GetObjectItem(cJSON_GetArrayItem(pts, i), "gapless_share")->valuedouble;
        assert_near(attr(p, NULL, "data-share"), share, 1e-6);
        assert_non_null(strstr(p, "<title>"));
    }
    /* Heat map over pre-roll x tps, chunk at its first value (sentence):
     * cells go column by column (pre-roll), each bottom to top (tps). */
    assert_int_equal(count(svg, "class=\"cell\""), 6);
    i = 0;
    for (p = strstr(svg, "class=\"cell\""); p != NULL; p = strstr(p + 1, "class=\"cell\""), i++) {
        int pre = i / 2, tps = i % 2;
        cJSON *pt = cJSON_GetArrayItem(pts, tps * 3 + pre);
        assert_string_equal(cJSON_GetObjectItem(pt, "chunk")->valuestring, "sentence");
        assert_near(attr(p, NULL, "data-share"),
                    cJSON_GetObjectItem(pt, "gapless_share")->valuedouble, 1e-6);
    }
    assert_non_null(strstr(svg, "id=\"target\""));
    free(svg);
    free(json);
    /* Without a target there is no target line. */
    snprintf(cmd, sizeof(cmd), "sweep --preset demo --seeds 1:3 --wpm 100,200 --svg '%s'", f.svg);
    o = tb_test_run(cmd);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    xml_valid(f.svg);
    svg = tb_test_slurp_str(f.svg);
    assert_null(strstr(svg, "id=\"target\""));
    assert_non_null(strstr(svg, "a heat map needs two numeric axes"));
    free(svg);
    cJSON_Delete(j);
    cleanup(&f);
}

/* The first x at which a step path (M x y, then H x / V y) reaches y at
 * or above the target's (a smaller y), or NAN when it never does. */
static double step_reach(const char *d, const char *end, double ty)
{
    double x = NAN, y = NAN;
    for (const char *p = d; p < end && *p != '"';) {
        char op = *p++;
        char *e;
        double v = strtod(p, &e);
        if (e == p)
            fail_msg("cannot read the path at %.20s", p - 1);
        p = e;
        if (op == 'M') {
            x = v;
            y = strtod(p, &e);
            p = e;
        } else if (op == 'H') {
            x = v;
        } else if (op == 'V') {
            y = v;
        } else {
            fail_msg("a sweep line is not a step path: '%c'", op);
        }
        if (y <= ty + 0.01)
            return x;
    }
    return NAN;
}

/* The tuning picture agrees with the inverse answers: each line is a step
 * path that first reaches the target exactly at its answer's mark, the
 * mark carrying the answer of the --json output; and lines that coincide
 * stay apart by their dash patterns and say so in the legend. */
static void sweep_answers_on_lines(void **state)
{
    struct files f = {0};
    char cmd[1024];
    struct tb_test_out o;
    cJSON *j, *pts;
    char *svg, *json;
    const char *p, *t;
    double ty;
    int series = 0, inside = 0;
    (void)state;
    names(&f, "answers");
    snprintf(cmd, sizeof(cmd),
             "sweep --synth tps=10,tokens=300,jitter=0.6,stall=0.02:1.5 --seeds 1:60 "
             "--chunk sentence,clause,token --preroll 0:2:0.25 --target-gapless 0.95 "
             "--json '%s' --svg '%s'",
             f.json, f.svg);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("ttsbuf %s: exit %d: %s", cmd, o.code, o.se);
    tb_test_out_free(&o);
    xml_valid(f.svg);
    svg = tb_test_slurp_str(f.svg);
    json = tb_test_slurp_str(f.json);
    j = cJSON_Parse(json);
    assert_non_null(j);
    pts = cJSON_GetObjectItem(j, "points");
    assert_null(strstr(svg, "<polyline"));
    /* the target line's y */
    t = strstr(svg, "<g id=\"target\">");
    assert_non_null(t);
    ty = attr(t, NULL, "y1");
    /* series k's first point is point 9k (nine pre-rolls a line) */
    for (p = strstr(svg, "class=\"step\""); p != NULL;
         p = strstr(p + 1, "class=\"step\""), series++) {
        const cJSON *pt = cJSON_GetArrayItem(pts, series * 9);
        double want = cJSON_GetObjectItem(pt, "preroll_for_target_s")->valuedouble;
        const char *d = strstr(p, " d=\"") + 4, *g = strstr(p, "</g>");
        const char *a = strstr(p, "class=\"answer\"");
        double reach = step_reach(d, strchr(d, '"'), ty);
        assert_non_null(a);
        assert_true(a < g);
        assert_near(attr(a, NULL, "data-preroll"), want, 1e-6);
        if (want <= 2.0) {
            /* the mark is where the line first reaches the target */
            double mx = strtod(strstr(a, " d=\"M") + 5, NULL);
            if (fabs(reach - mx) > 0.02)
                fail_msg("line %d reaches the target at x %.2f; its answer (%.3f s) is at x %.2f",
                         series + 1, reach, want, mx);
            inside++;
        } else if (!isnan(reach)) {
            fail_msg("line %d reaches the target inside the axis; its answer is %.3f s", series + 1,
                     want);
        }
    }
    assert_int_equal(series, 3);
    assert_true(inside >= 1);
    free(svg);
    free(json);
    cJSON_Delete(j);
    /* Rebuffering never changes the gap-free share: two identical lines. */
    snprintf(cmd, sizeof(cmd),
             "sweep --preset demo --seeds 1:5 --chunk sentence --preroll 0,1,2 --rebuffer both "
             "--target-gapless 0.9 --svg '%s'",
             f.svg);
    o = tb_test_run(cmd);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    svg = tb_test_slurp_str(f.svg);
    assert_non_null(
        strstr(svg, "rebuffer on: 90% from 2.401 s (beyond the axis) (same as line 1)"));
    p = strstr(svg, "class=\"step\"");
    t = p != NULL ? strstr(p + 1, "class=\"step\"") : NULL;
    assert_non_null(t);
    if (strncmp(strstr(p, "stroke-dasharray="), strstr(t, "stroke-dasharray="), 24) == 0)
        fail_msg("two coinciding lines have the same dash pattern");
    free(svg);
    cleanup(&f);
}

/* `run --svg`: the live run's timeline, one gap rectangle per underrun of
 * its own report (the built-in mock streams over real HTTP). */
static void run_timeline(void **state)
{
    struct files f = {0};
    char cmd[512], *svg;
    struct tb_test_out o;
    cJSON *j;
    (void)state;
    names(&f, "run");
    snprintf(cmd, sizeof(cmd),
             "run -q --synth tps=30,ttft=0.1,tokens=30,jitter=0,stall=0.15:0.5,seed=4 "
             "--chunk token --wpm 1000 --json --svg '%s'",
             f.svg);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("ttsbuf %s: exit %d: %s", cmd, o.code, o.se);
    j = cJSON_Parse(o.so);
    assert_non_null(j);
    xml_valid(f.svg);
    svg = tb_test_slurp_str(f.svg);
    assert_true(cJSON_GetObjectItem(j, "underruns")->valuedouble >= 1);
    assert_int_equal(count(svg, "class=\"gap\""),
                     (size_t)cJSON_GetObjectItem(j, "underruns")->valuedouble);
    assert_int_equal(count(svg, "class=\"chunk\""), 30);
    free(svg);
    cJSON_Delete(j);
    tb_test_out_free(&o);
    cleanup(&f);
}

/* What a picture says, one item a line: the text of every <text> and
 * <title> (names, numbers, tooltips) and every data-* number.  Coordinates,
 * colours and paths are left out: a picture that only moves is current. */
static char *svg_says(const char *svg)
{
    size_t cap = strlen(svg) + 1, n = 0;
    char *out = calloc(cap, 1);
    assert_non_null(out);
    for (const char *p = svg; *p != '\0'; p++) {
        const char *e = NULL;
        if (strncmp(p, "<text", 5) == 0 || strncmp(p, "<title>", 7) == 0) {
            p = strchr(p, '>');
            assert_non_null(p);
            e = strchr(++p, '<');
        } else if (strncmp(p, " data-", 6) == 0) {
            p++;
            e = strchr(p, '"');
            e = e != NULL ? strchr(e + 1, '"') : NULL;
            if (e != NULL)
                e++;
        }
        if (e == NULL)
            continue;
        memcpy(out + n, p, (size_t)(e - p));
        n += (size_t)(e - p);
        out[n++] = '\n';
        p = e - 1;
    }
    out[n] = '\0';
    return out;
}

/* The README's pictures say what the tool draws today: the same names
 * and numbers (not necessarily the same pixels). */
static void pictures_are_current(void **state)
{
    const char *bin = getenv("TTSBUF"), *data = getenv("TB_TESTDATA");
    char dir[64], cmd[8192], a[4096], b[4096];
    (void)state;
    if (data == NULL)
        data = "tests/data";
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-pictures-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "rm -rf '%s' && mkdir '%s' && TTSBUF='%s' sh '%s/../../examples/pictures.sh' '%s'",
             dir, dir, bin != NULL ? bin : "./ttsbuf", data, dir);
    assert_int_equal(system(cmd), 0);
    for (int i = 0; i < 2; i++) {
        const char *name = i == 0 ? "timeline.svg" : "sweep.svg";
        char *want, *got;
        snprintf(a, sizeof(a), "%s/../../examples/%s", data, name);
        snprintf(b, sizeof(b), "%s/%s", dir, name);
        xml_valid(a);
        want = tb_test_slurp_str(a);
        got = tb_test_slurp_str(b);
        {
            char *ws = svg_says(want), *gs = svg_says(got);
            const char *w = ws, *g = gs;
            for (; *w != '\0' && *w == *g; w++, g++)
                ;
            if (*w != *g) {
                while (w > ws && w[-1] != '\n')
                    w--, g--;
                fail_msg("examples/%s is not what ttsbuf draws today (\"%.*s\" where it now says "
                         "\"%.*s\"): run `TTSBUF=./ttsbuf sh examples/pictures.sh` and commit",
                         name, (int)strcspn(w, "\n"), w, (int)strcspn(g, "\n"), g);
            }
            free(ws);
            free(gs);
        }
        free(want);
        free(got);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static int have_chromium(void)
{
    return system("command -v chromium >/dev/null 2>&1") == 0;
}

/* Reads an RGB PNG with libpng's simplified API. */
static unsigned char *read_png(const char *path, unsigned *w, unsigned *h)
{
    png_image img;
    unsigned char *buf;
    memset(&img, 0, sizeof(img));
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        fail_msg("%s: %s", path, img.message);
    img.format = PNG_FORMAT_RGB;
    buf = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(buf);
    if (!png_image_finish_read(&img, NULL, buf, 0, NULL))
        fail_msg("%s: %s", path, img.message);
    *w = img.width;
    *h = img.height;
    return buf;
}

/* The gap shading over white: red well above green and blue. */
static int reddish(const unsigned char *px)
{
    return px[0] > 200 && px[0] > px[1] + 30 && px[0] > px[2] + 30;
}

/* Headless Chromium renders the timeline; along a row through the
 * buffer chart, red pixels are inside the gaps (give or take a pixel of
 * anti-aliasing) and every gap wider than 4 px is red in its middle. */
static void timeline_renders_red_gaps(void **state)
{
    struct files f = {0};
    cJSON *j, *gaps;
    char *svg, cmd[1024];
    unsigned w, h;
    unsigned char *img;
    double x0, sc, gx[64], gw[64];
    int ng, wide = 0;
    (void)state;
    if (!have_chromium()) {
        printf("svg: render test skipped: chromium is not installed (Debian package "
               "chromium; .ci/deps installs it)\n");
        skip();
    }
    names(&f, "render");
    j = sim_with_svg(&f, SYNTH);
    svg = tb_test_slurp_str(f.svg);
    x0 = attr(svg, NULL, "data-x0");
    sc = attr(svg, NULL, "data-px-per-s");
    free(svg);
    snprintf(cmd, sizeof(cmd),
             "timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
             "--force-device-scale-factor=1 --user-data-dir='%s' --screenshot='%s' "
             "--window-size=960,520 'file://%s' >/dev/null 2>&1",
             f.dir, f.png, f.svg);
    if (system(cmd) != 0)
        fail_msg("chromium could not render %s: %s", f.svg, cmd);
    img = read_png(f.png, &w, &h);
    assert_int_equal(w, 960);
    assert_int_equal(h, 520);
    gaps = cJSON_GetObjectItem(j, "gaps");
    ng = cJSON_GetArraySize(gaps);
    assert_true(ng >= 2 && ng <= 64);
    for (int i = 0; i < ng; i++) {
        cJSON *g = cJSON_GetArrayItem(gaps, i);
        gx[i] = x0 + cJSON_GetObjectItem(g, "at_s")->valuedouble * sc;
        gw[i] = cJSON_GetObjectItem(g, "gap_s")->valuedouble * sc;
    }
    /* Row 390: inside the buffer chart, below the gap labels. */
    for (unsigned x = 0; x < w; x++) {
        int in = 0, near = 0;
        for (int i = 0; i < ng; i++) {
            in |= x >= gx[i] + 1.5 && x + 1.5 <= gx[i] + gw[i];
            near |= x + 1.5 >= gx[i] && x <= gx[i] + gw[i] + 1.5;
        }
        if (in && !reddish(&img[((size_t)390 * w + x) * 3]))
            fail_msg("pixel (%u, 390) in a gap is not red: %d,%d,%d", x,
                     img[((size_t)390 * w + x) * 3], img[((size_t)390 * w + x) * 3 + 1],
                     img[(390 * w + x) * 3 + 2]);
        if (!near && reddish(&img[((size_t)390 * w + x) * 3]))
            fail_msg("pixel (%u, 390) outside every gap is red", x);
    }
    for (int i = 0; i < ng; i++)
        wide += gw[i] > 4;
    assert_true(wide >= 2);
    free(img);
    cJSON_Delete(j);
    cleanup(&f);
}

int tb_test_svg(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(timeline_marks),
        cmocka_unit_test(timeline_escapes_and_no_gap),
        cmocka_unit_test(sweep_marks),
        cmocka_unit_test(run_timeline),
        cmocka_unit_test(sweep_answers_on_lines),
        cmocka_unit_test(pictures_are_current),
        cmocka_unit_test(timeline_renders_red_gaps),
    };
    return TB_RUN_GROUP("svg", tests);
}
