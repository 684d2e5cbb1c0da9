/*
 * test_html.c - the --html pages, opened in a real browser: Debian's
 * Chromium, headless, driven through the DevTools protocol by
 * tests/node/html-page.mjs (puppeteer-core, no browser download).
 *
 * Held against what the tool itself reports: the embedded JSON equals the
 * --json output of the same run, the gap list equals its gaps, the audio
 * element lasts as long as the embedded WAV (decoded here), clicking a gap
 * seeks to its start - 1 s and draws the play head there, playing moves
 * both, the keys move between gaps, the page makes no request and logs no
 * error, and without scripts the report, the picture and the audio remain.
 * The WAV is decoded here too: silent inside every gap (after the 12 ms
 * tick of the stall cue), speech between them.  The README's screenshots
 * are drawn again and must show the same text as the committed ones.
 * What the browser reads while the audio plays is real time: a page whose
 * readings are off is browsed again, up to three tries (browse).
 */
#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

struct page {
    char html[96], json[96], out[96];
    cJSON *tool; /* the --json output of the run */
    cJSON *seen; /* what the browser saw */
    int16_t *pcm;
    size_t frames;
    unsigned rate;
};

/* The base64 WAV of the k-th <audio> of the page (from 0), decoded. */
static void decode_audio(struct page *p, int k)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len, n = 0;
    char *h = tb_test_slurp(p->html, &len);
    const char *s = strstr(h, "data:audio/wav;base64,"), *e;
    unsigned char *b;
    uint32_t acc = 0;
    int bits = 0;
    for (int i = 0; i < k && s != NULL; i++)
        s = strstr(s + 1, "data:audio/wav;base64,");
    assert_non_null(s);
    free(p->pcm);
    s += strlen("data:audio/wav;base64,");
    e = strchr(s, '"');
    assert_non_null(e);
    b = malloc((size_t)(e - s));
    assert_non_null(b);
    for (; s < e && *s != '='; s++) {
        const char *q = strchr(a, *s);
        assert_non_null(q);
        acc = (acc << 6) | (uint32_t)(q - a);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b[n++] = (unsigned char)(acc >> bits);
        }
    }
    assert_true(n >= 44);
    assert_memory_equal(b, "RIFF", 4);
    assert_memory_equal(b + 36, "data", 4);
    p->rate = (unsigned)(b[24] | b[25] << 8 | b[26] << 16 | (unsigned)b[27] << 24);
    p->frames = (n - 44) / 2;
    assert_int_equal((size_t)(b[40] | b[41] << 8 | b[42] << 16 | (size_t)b[43] << 24), n - 44);
    p->pcm = malloc(p->frames * sizeof(*p->pcm) + 1);
    assert_non_null(p->pcm);
    for (size_t i = 0; i < p->frames; i++)
        p->pcm[i] = (int16_t)(uint16_t)(b[44 + 2 * i] | b[45 + 2 * i] << 8);
    free(b);
    free(h);
}

/* The seek point the page's n (dir 1) or p (dir -1) key goes to from t:
 * the next gap's (a second before it, from 0) more than 0.05 s after t,
 * or the last one more than 0.5 s before t; -1 when there is none. */
static double key_target(const cJSON *jg, double t, int dir)
{
    int n = cJSON_GetArraySize(jg);
    for (int i = dir > 0 ? 0 : n - 1; i >= 0 && i < n; i += dir) {
        const cJSON *g = cJSON_GetObjectItem(cJSON_GetArrayItem(jg, i), "at_s");
        double s = cJSON_IsNumber(g) ? fmax(0, g->valuedouble - 1) : 0;
        if (dir > 0 ? s > t + 0.05 : s < t - 0.5)
            return s;
    }
    return -1;
}

/* The real-time part of a page: what the browser read while the audio
 * played (a click's seek, 1.5 s of playing, the keys while playing).  A
 * loaded machine can hold Chromium's player back; a wrong page is wrong
 * every time.  0 with the reason when a section's reading is off. */
static int played_ok(const cJSON *seen, char *why, size_t len)
{
    const cJSON *sec;
    cJSON_ArrayForEach(sec, cJSON_GetObjectItem(seen, "sections"))
    {
        const cJSON *au = cJSON_GetObjectItem(cJSON_GetObjectItem(sec, "result"), "audio");
        const cJSON *jg = cJSON_GetObjectItem(au, "gaps"), *cl = cJSON_GetObjectItem(sec, "clicks");
        const cJSON *pl = cJSON_GetObjectItem(sec, "play"), *keys = cJSON_GetObjectItem(sec, "keys");
        const cJSON *b = cJSON_GetObjectItem(pl, "before"), *a = cJSON_GetObjectItem(pl, "after");
        const cJSON *bt = cJSON_GetObjectItem(b, "t"), *at = cJSON_GetObjectItem(a, "t");
        int n = cJSON_GetArraySize(jg);
        if (!cJSON_IsNumber(bt) || !cJSON_IsNumber(at) || !(at->valuedouble > bt->valuedouble + 0.2)) {
            snprintf(why, len, "playing 1.5 s did not move the audio");
            return 0;
        }
        for (int j = 0; j < n && j < cJSON_GetArraySize(cl); j++) {
            const cJSON *g = cJSON_GetObjectItem(cJSON_GetArrayItem(jg, j), "at_s");
            const cJSON *t = cJSON_GetObjectItem(cJSON_GetArrayItem(cl, j), "t");
            double want = cJSON_IsNumber(g) ? fmax(0, g->valuedouble - 1) : 0;
            if (!cJSON_IsNumber(t) || fabs(t->valuedouble - want) > 0.010) {
                snprintf(why, len, "a click on gap %d read off", j);
                return 0;
            }
        }
        if (n >= 2) {
            /* From 0: n, n again, p, each from where the last one went. */
            static const char *const k[] = {"n", "nn", "p"};
            static const int dir[] = {1, 1, -1};
            double t = 0;
            for (int i = 0; i < 3; i++) {
                const cJSON *v = cJSON_GetObjectItem(keys, k[i]);
                double want = key_target(jg, t, dir[i]);
                if (want < 0)
                    break; /* no such gap: the key does nothing */
                if (!cJSON_IsNumber(v) || fabs(v->valuedouble - want) > 0.1) {
                    snprintf(why, len, "key %s read off", k[i]);
                    return 0;
                }
                t = want;
            }
        }
    }
    return 1;
}

/* The page in Chromium, up to three tries while the real-time readings
 * are off; the last try's readings are what the checks then judge. */
static cJSON *browse(const char *html, const char *out)
{
    char why[160] = "";
    for (int attempt = 1;; attempt++) {
        cJSON *seen = tb_test_browse(html, out);
        if (attempt == 3 || played_ok(seen, why, sizeof(why)))
            return seen;
        print_message("%s: try %d: %s\n", html, attempt, why);
        cJSON_Delete(seen);
    }
}

/* Runs `ttsbuf ARGS --html P --json`, then the browser on P. */
static void open_page(struct page *p, const char *args)
{
    char cmd[2048];
    struct tb_test_out o;
    snprintf(p->html, sizeof(p->html), "/tmp/ttsbuf-html-%d.html", (int)getpid());
    snprintf(p->out, sizeof(p->out), "/tmp/ttsbuf-html-%d.seen", (int)getpid());
    snprintf(cmd, sizeof(cmd), "%s --html %s --json", args, p->html);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("ttsbuf %s: exit %d: %s", cmd, o.code, o.se);
    p->tool = cJSON_Parse(o.so);
    assert_non_null(p->tool);
    tb_test_out_free(&o);
    p->seen = browse(p->html, p->out);
    decode_audio(p, 0);
}

static void close_page(struct page *p)
{
    remove(p->html);
    remove(p->out);
    cJSON_Delete(p->tool);
    cJSON_Delete(p->seen);
    free(p->pcm);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("no number \"%s\"", k);
    return v->valuedouble;
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: %.6f, wanted %.6f +- %g", what, got, want, tol);
}

static int16_t peak(const struct page *p, double t0, double t1)
{
    size_t a = t0 <= 0 ? 0 : (size_t)(t0 * p->rate), b = (size_t)(t1 * p->rate);
    int m = 0;
    if (b > p->frames)
        b = p->frames;
    for (size_t i = a; i < b; i++)
        if (abs(p->pcm[i]) > m)
            m = abs(p->pcm[i]);
    return (int16_t)m;
}

/* Everything the figure of one run (section k, its audio decoded in p)
 * must satisfy against tool, the run's --json object; returns the number
 * of gaps. */
static size_t check_figure(const struct page *p, int k, const cJSON *tool)
{
    const cJSON *au = cJSON_GetObjectItem(tool, "audio");
    const cJSON *jg = cJSON_GetObjectItem(au, "gaps");
    const cJSON *sec = cJSON_GetArrayItem(cJSON_GetObjectItem(p->seen, "sections"), k);
    const cJSON *gl = cJSON_GetObjectItem(sec, "gaps"), *cl = cJSON_GetObjectItem(sec, "clicks");
    const cJSON *pl = cJSON_GetObjectItem(sec, "play");
    const cJSON *keys = cJSON_GetObjectItem(sec, "keys");
    double x0 = num(sec, "x0"), pps = num(sec, "pps");
    double first = num(au, "first_audio_s"), prev_end;
    size_t n = (size_t)cJSON_GetArraySize(jg);

    /* The figure's JSON is the tool's, all of it. */
    if (!cJSON_Compare(cJSON_GetObjectItem(sec, "result"), tool, 1))
        fail_msg("the figure's embedded JSON differs from the run's --json");
    /* The audio lasts as long as the WAV. */
    near(num(sec, "duration"), (double)p->frames / p->rate, 0.010, "audio.duration");
    assert_int_equal((size_t)num(sec, "frames"), p->frames);
    /* The gap list is the JSON's gaps. */
    assert_int_equal(cJSON_GetArraySize(gl), n);
    assert_int_equal(cJSON_GetArraySize(cl), n);
    prev_end = first;
    for (size_t j = 0; j < n; j++) {
        const cJSON *g = cJSON_GetArrayItem(jg, (int)j), *s = cJSON_GetArrayItem(gl, (int)j);
        const cJSON *c = cJSON_GetArrayItem(cl, (int)j);
        double at = num(g, "at_s"), len = num(g, "gap_s"), want = at - 1 < 0 ? 0 : at - 1;
        near(cJSON_GetArrayItem(s, 0)->valuedouble, at, 1e-6, "gap start in the list");
        near(cJSON_GetArrayItem(s, 1)->valuedouble, len, 1e-6, "gap length in the list");
        /* Clicking it: 1 s before, play head there. */
        near(num(c, "t"), want, 0.010, "currentTime after clicking a gap");
        near(num(c, "x"), x0 + want * pps, 2.0, "play head x after clicking a gap");
        /* The WAV: silent after the cue's 12 ms tick, speech before it. */
        if (len > 0.03 && peak(p, at + 0.015, at + len - 0.002) > 1)
            fail_msg("gap at %.3f s (%.3f s): the audio is not silent (peak %d)", at, len,
                     peak(p, at + 0.015, at + len - 0.002));
        if (at - prev_end > 0.5 && peak(p, prev_end, at) < 1000)
            fail_msg("no speech between %.3f s and the gap at %.3f s", prev_end, at);
        prev_end = at + len;
    }
    /* Before the first audio: silence; after the last gap: speech. */
    assert_true(peak(p, 0, first - 0.002) <= 1);
    assert_true(peak(p, prev_end, num(au, "end_audio_s")) >= 1000);
    /* Playing a moment moves the position and the play head along. */
    {
        const cJSON *b = cJSON_GetObjectItem(pl, "before"), *a = cJSON_GetObjectItem(pl, "after");
        if (!(num(a, "t") > num(b, "t") + 0.2))
            fail_msg("playing 1.5 s moved the audio from %.3f to %.3f s", num(b, "t"), num(a, "t"));
        near(num(a, "x"), x0 + num(a, "t") * pps, 0.5 * pps + 2.0, "play head x while playing");
        assert_true(num(a, "x") > num(b, "x") + 1.0);
    }
    /* Keys: n to the next gap's seek point, n again to the one after, p back. */
    if (n >= 2) {
        /* n goes to the next gap's seek point after the position (a gap
         * in the first second has its seek point at 0: n from 0 skips it). */
        double s0 = key_target(jg, 0, 1), s1 = s0 < 0 ? -1 : key_target(jg, s0, 1);
        double sp = s1 < 0 ? -1 : key_target(jg, s1, -1);
        if (s0 >= 0)
            near(num(keys, "n"), s0, 0.1, "key n");
        if (s1 >= 0)
            near(num(keys, "nn"), s1, 0.1, "key n twice");
        if (sp >= 0)
            near(num(keys, "p"), sp, 0.1, "key p");
    }
    return n;
}

/* A one-run page (sim, run): the figure, and the page without scripts. */
static size_t check_run_page(const struct page *p)
{
    const cJSON *ns = cJSON_GetObjectItem(p->seen, "noscript");
    size_t n = check_figure(p, 0, p->tool);
    /* Scripts off: the report, the pictures (the timeline and where the
     * wait went), a plain audio control. */
    assert_int_equal((int)num(ns, "svgs"), 2);
    assert_int_equal((int)num(ns, "audios"), 1);
    assert_int_equal((size_t)num(ns, "gaps"), n);
    assert_int_equal((int)num(ns, "heads"), 0);
    assert_non_null(strstr(cJSON_GetObjectItem(ns, "report")->valuestring, "verdict: "));
    assert_non_null(strstr(cJSON_GetObjectItem(ns, "report")->valuestring, "pre-roll   min TPS"));
    return n;
}

static void sim_page_in_chromium(void **state)
{
    struct page p;
    (void)state;
    memset(&p, 0, sizeof(p));
    open_page(&p, "sim --preset demo");
    assert_true(check_run_page(&p) >= 2);
    assert_int_equal(p.rate, 22050);
    close_page(&p);
}

/* A live run against the built-in mock (real time, a few seconds). */
static void run_page_in_chromium(void **state)
{
    struct page p;
    (void)state;
    memset(&p, 0, sizeof(p));
    open_page(&p, "run --synth tps=8,ttft=0.3,tokens=40,jitter=0.5,stall=0.1:1.0,seed=8");
    assert_true(check_run_page(&p) >= 1);
    assert_string_equal(cJSON_GetObjectItem(p.tool, "source")->valuestring, "synth");
    close_page(&p);
}

/* The sweep page: the tuning picture, the inverse answers and the table,
 * with the same JSON object as --json. */
static void sweep_page_in_chromium(void **state)
{
    char cmd[512], page[96], json[96], out[96];
    struct tb_test_out o;
    cJSON *seen, *tool;
    char *txt;
    (void)state;
    snprintf(page, sizeof(page), "/tmp/ttsbuf-html-%d-sweep.html", (int)getpid());
    snprintf(json, sizeof(json), "/tmp/ttsbuf-html-%d-sweep.json", (int)getpid());
    snprintf(out, sizeof(out), "/tmp/ttsbuf-html-%d-sweep.seen", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "sweep --preset demo --seeds 1:20 --preroll 0,0.5,1,2 --chunk sentence,clause "
             "--target-gapless 0.9 -q --json %s --html %s",
             json, page);
    o = tb_test_run(cmd);
    if (o.code != 0)
        fail_msg("ttsbuf %s: exit %d: %s", cmd, o.code, o.se);
    tb_test_out_free(&o);
    seen = tb_test_browse(page, out);
    txt = tb_test_slurp_str(json);
    tool = cJSON_Parse(txt);
    assert_non_null(tool);
    free(txt);
    assert_string_equal(cJSON_GetObjectItem(seen, "kind")->valuestring, "sweep");
    assert_true(cJSON_Compare(cJSON_GetObjectItem(seen, "result"), tool, 1));
    {
        const cJSON *ns = cJSON_GetObjectItem(seen, "noscript");
        txt = tb_test_slurp_str(page);
        assert_int_equal((int)num(ns, "svgs"), 1);
        assert_non_null(strstr(txt, "<pre id=\"inverse\">  smallest pre-roll with &gt;= 90%"));
        assert_non_null(strstr(cJSON_GetObjectItem(ns, "report")->valuestring, "gap-free"));
        free(txt);
    }
    cJSON_Delete(seen);
    cJSON_Delete(tool);
    remove(page);
    remove(json);
    remove(out);
}

/* The records file of a bench --out DIR, as one array. */
static cJSON *records(const char *dir)
{
    char path[256];
    char *txt, *line, *save = NULL;
    cJSON *all = cJSON_CreateArray();
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    txt = tb_test_slurp_str(path);
    for (line = strtok_r(txt, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        cJSON *r = cJSON_Parse(line);
        assert_non_null(r);
        if (cJSON_GetObjectItem(r, "schema") != NULL)
            cJSON_Delete(r);
        else
            cJSON_AddItemToArray(all, r);
    }
    free(txt);
    return all;
}

static int by_gap_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The bench page against a mock with a stall in every stream: the
 * per-level JSON is summary.json, every record is a row, sorting by total
 * silence orders the rows, and the worst streams' figures pass the same
 * checks as a sim page (their JSON, gaps, audio, play head and keys). */
static void bench_page_in_chromium(void **state)
{
    struct tb_test_mock m;
    struct page p;
    char cmd[1024], dir[96], path[160];
    struct tb_test_out o;
    cJSON *recs, *sum;
    const cJSON *secs, *sorted;
    double g[16];
    int nrec;
    char *txt;
    (void)state;
    memset(&p, 0, sizeof(p));
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-html-%d-bench", (int)getpid());
    snprintf(p.html, sizeof(p.html), "/tmp/ttsbuf-html-%d-bench.html", (int)getpid());
    snprintf(p.out, sizeof(p.out), "/tmp/ttsbuf-html-%d-bench.seen", (int)getpid());
    tb_test_mock_start(&m, 40, 0.2, 0.04, "stall@1:2.5");
    snprintf(
        cmd, sizeof(cmd),
        "bench --base-url %s --model mock -c 2 --requests 3 --chunk token -q --out %s --html %s "
        "--html-streams 2",
        m.base, dir, p.html);
    o = tb_test_run(cmd);
    tb_test_mock_stop(&m);
    if (o.code != 0)
        fail_msg("ttsbuf %s: exit %d: %s", cmd, o.code, o.se);
    tb_test_out_free(&o);
    /* Levels go by their one name, the report's (c=2), in the rows and
     * the replayed streams' headings alike. */
    txt = tb_test_slurp_str(p.html);
    assert_non_null(strstr(txt, "</td><td data-v=\"0\">c=2</td>"));
    assert_non_null(strstr(txt, ", c=2: "));
    assert_null(strstr(txt, "level 1"));
    free(txt);
    p.seen = browse(p.html, p.out);
    assert_string_equal(cJSON_GetObjectItem(p.seen, "kind")->valuestring, "bench");
    /* The page's per-level JSON is summary.json. */
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    txt = tb_test_slurp_str(path);
    sum = cJSON_Parse(txt);
    free(txt);
    assert_true(cJSON_Compare(cJSON_GetObjectItem(p.seen, "result"), sum, 1));
    {
        /* The per-level table: its numbers are the summary's. */
        const cJSON *lv = cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "levels"), 0);
        const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(p.seen, "levels"), 0);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(p.seen, "levels")), 1);
        assert_string_equal(cJSON_GetArrayItem(row, 0)->valuestring,
                            cJSON_GetObjectItem(lv, "level")->valuestring);
        assert_int_equal(atoi(cJSON_GetArrayItem(row, 1)->valuestring), (int)num(lv, "requests"));
        near(strtod(cJSON_GetArrayItem(row, 3)->valuestring, NULL), 100 * num(lv, "gapless_share"),
             1e-9, "gapless share in the level table");
        near(strtod(cJSON_GetArrayItem(row, 10)->valuestring, NULL), num(lv, "system_tps"), 1e-9,
             "system TPS in the level table");
    }
    cJSON_Delete(sum);
    /* Every record a row; sorted by total silence, the worst first. */
    recs = records(dir);
    nrec = cJSON_GetArraySize(recs);
    assert_int_equal(nrec, 3);
    for (int i = 0; i < nrec; i++)
        g[i] = num(cJSON_GetArrayItem(recs, i), "gap_total_s");
    qsort(g, (size_t)nrec, sizeof(g[0]), by_gap_desc);
    sorted = cJSON_GetObjectItem(cJSON_GetObjectItem(p.seen, "sorts"), "gap_total");
    assert_int_equal(cJSON_GetArraySize(sorted), nrec);
    for (int i = 0; i < nrec; i++)
        assert_true(strtod(cJSON_GetArrayItem(sorted, i)->valuestring, NULL) == g[i]);
    /* The two worst streams' figures. */
    secs = cJSON_GetObjectItem(p.seen, "sections");
    assert_int_equal(cJSON_GetArraySize(secs), 2);
    for (int k = 0; k < 2; k++) {
        const cJSON *sec = cJSON_GetArrayItem(secs, k);
        const char *id = cJSON_GetObjectItem(sec, "details")->valuestring;
        int found = 0;
        for (int i = 0; i < nrec; i++) {
            const cJSON *r = cJSON_GetArrayItem(recs, i);
            char want[96];
            /* The level as every output names it (a closed loop's name
             * is its own file-safe stem). */
            snprintf(want, sizeof(want), "s-%s-%d",
                     cJSON_GetStringValue(cJSON_GetObjectItem(r, "level")), (int)num(r, "id"));
            if (strcmp(id, want) == 0) {
                found = 1;
                assert_true(num(r, "gap_total_s") >= g[1]); /* one of the two worst */
            }
        }
        assert_true(found);
        decode_audio(&p, k);
        if (check_figure(&p, k, cJSON_GetObjectItem(sec, "result")) < 1)
            fail_msg("figure %d has no gap: %s", k,
                     cJSON_PrintUnformatted(cJSON_GetObjectItem(sec, "result")));
    }
    cJSON_Delete(recs);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
    close_page(&p);
}

/* Past 600 s the audio is cut (and the page says so): the file stays
 * under 36 MB, whatever the answer's length. */
static void html_audio_is_capped(void **state)
{
    char args[256], path[96];
    struct tb_test_out o;
    size_t len;
    char *page;
    (void)state;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-html-%d-long.html", (int)getpid());
    snprintf(args, sizeof(args), "sim --synth tps=20,tokens=3000,ttft=0.3 --html %s", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    tb_test_out_free(&o);
    page = tb_test_slurp(path, &len);
    remove(path);
    assert_non_null(strstr(page, "data-rate=\"22050\" data-frames=\"13230000\""));
    assert_non_null(strstr(page, "cut here (the page keeps at most 600 s)"));
    assert_true(len < 36ul * 1000 * 1000);
    free(page);
}

/* The text a screenshot carries (html-page.mjs's iTXt "ttsbuf:text"),
 * read with libpng; NULL when it carries none.  Owned by the caller. */
static char *shot_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    png_structp png;
    png_infop info;
    png_textp t;
    int n = 0;
    char *out = NULL; /* set after the last call that can longjmp */
    if (f == NULL)
        fail_msg("cannot read %s", path);
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    info = png != NULL ? png_create_info_struct(png) : NULL;
    assert_non_null(info);
    if (setjmp(png_jmpbuf(png)) == 0) {
        png_init_io(png, f);
        /* the whole file: the text chunk follows the image data */
        png_read_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
        png_get_text(png, info, &t, &n);
        for (int i = 0; i < n && out == NULL; i++)
            if (strcmp(t[i].key, "ttsbuf:text") == 0)
                out = strdup(t[i].text);
    }
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    return out;
}

/* A screenshot's text as compared: one line a text, and each number made
 * '#' where it is the wall clock's (synthesis time, a sweep's speed, the
 * threads, a port) or, with all_numbers, everywhere (a live bench's
 * timings).  In place: the text only shrinks. */
static void normalize(char *s, int all_numbers)
{
    char *o = s;
    for (const char *line = s; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
        int mask = all_numbers;
        /* Which of a live bench's streams are the worst (and so link to
         * their replay, "hear it") is the run's timing, as its numbers are. */
        if (all_numbers && len == strlen("hear it") && strncmp(line, "hear it", len) == 0) {
            line += len + (end != NULL);
            continue;
        }
        for (const char *w = "synthesis\0real time\0event-simulations\0threads\0127.0.0.1\0";
             *w != '\0' && !mask; w += strlen(w) + 1) {
            const char *hit = strstr(line, w);
            mask = hit != NULL && hit < line + len;
        }
        for (size_t i = 0; i < len;) {
            if (mask && isdigit((unsigned char)line[i])) {
                while (i < len && (isdigit((unsigned char)line[i]) || line[i] == '.'))
                    i++;
                /* An exponent is part of the number ("1.005e-04": a timing
                 * a loaded machine made tiny prints so). */
                if (i + 1 < len && line[i] == 'e' &&
                    (isdigit((unsigned char)line[i + 1]) ||
                     ((line[i + 1] == '-' || line[i + 1] == '+') && i + 2 < len &&
                      isdigit((unsigned char)line[i + 2])))) {
                    i += 2;
                    while (i < len && isdigit((unsigned char)line[i]))
                        i++;
                }
                *o++ = '#';
            } else {
                *o++ = line[i++];
            }
        }
        if (end != NULL)
            *o++ = '\n';
        line += len + (end != NULL);
    }
    *o = '\0';
}

/* The README's screenshots show what the pages show today: drawn again by
 * examples/html-pages.sh, each carries the same text as the committed one,
 * names and numbers (the bench page's numbers are a live run's timings:
 * its names only).  Pixels are not compared.  One case a page (the
 * case's state: 0 sim, 1 sweep, 2 bench), so that the runner can spread
 * them. */
static void screenshot_is_current(void **state)
{
    static const char *const pages[] = {"sim", "sweep", "bench"};
    static const char *const shots[] = {"html-sim.png", "html-sweep.png", "html-bench.png"};
    const size_t i = *(const size_t *)*state;
    const char *data = getenv("TB_TESTDATA");
    char dir[64], cmd[8192], a[4096], b[4096];
    if (data == NULL)
        data = "tests/data";
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-shots-%d", (int)getpid());
    snprintf(
        cmd, sizeof(cmd),
        "rm -rf '%s' && mkdir '%s' && TTSBUF='%s' sh '%s/../../examples/html-pages.sh' '%s' %s",
        dir, dir, tb_test_bin(), data, dir, pages[i]);
    assert_int_equal(system(cmd), 0);
    {
        char *want, *got;
        const char *w, *g;
        snprintf(a, sizeof(a), "%s/../../examples/%s", data, shots[i]);
        snprintf(b, sizeof(b), "%s/%s", dir, shots[i]);
        want = shot_text(a);
        got = shot_text(b);
        assert_non_null(got);
        if (want == NULL)
            fail_msg("examples/%s carries no text: run `TTSBUF=./ttsbuf sh examples/html-pages.sh` "
                     "and commit",
                     shots[i]);
        normalize(want, i == 2);
        normalize(got, i == 2);
        for (w = want, g = got; *w != '\0' && *w == *g; w++, g++)
            ;
        if (*w != *g) {
            while (w > want && w[-1] != '\n')
                w--, g--;
            fail_msg("examples/%s is not what the page shows today (\"%.*s\" where it now shows "
                     "\"%.*s\"): run `TTSBUF=./ttsbuf sh examples/html-pages.sh` and commit",
                     shots[i], (int)strcspn(w, "\n"), w, (int)strcspn(g, "\n"), g);
        }
        free(want);
        free(got);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void html_errors(void **state)
{
    (void)state;
    tb_test_expect_error("sim --preset demo --html /tmp/x.html --audio portaudio", 2,
                         "--html: the page embeds the audio as a WAV file");
    tb_test_expect_error("sim --preset demo --html /nonexistent-dir/x.html", 2,
                         "--html: cannot write /nonexistent-dir/x.html");
    {
        char args[1024];
        /* A page is of one stream: an import of several must name one. */
        snprintf(args, sizeof(args), "sim --import vllm:%s --html /tmp/x.html",
                 tb_test_data("import/vllm/append.json"));
        tb_test_expect_error(args, 2, "--html: ");
        tb_test_expect_error(args, 2, "has 3 requests; choose one with --request N");
    }
    tb_test_expect_error("sweep --preset demo --seeds 1:2 --json - --html -", 2,
                         "only one of --csv, --json, --svg and --html can write to stdout");
}

int tb_test_html(void)
{
    static const size_t page[] = {0, 1, 2};
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(html_errors),
        cmocka_unit_test(html_audio_is_capped),
        cmocka_unit_test(sim_page_in_chromium),
        cmocka_unit_test(run_page_in_chromium),
        cmocka_unit_test(sweep_page_in_chromium),
        cmocka_unit_test(bench_page_in_chromium),
        {"screenshot_is_current(sim)", screenshot_is_current, NULL, NULL, (void *)&page[0]},
        {"screenshot_is_current(sweep)", screenshot_is_current, NULL, NULL, (void *)&page[1]},
        {"screenshot_is_current(bench)", screenshot_is_current, NULL, NULL, (void *)&page[2]},
    };
    return TB_RUN_GROUP("html", cases);
}
