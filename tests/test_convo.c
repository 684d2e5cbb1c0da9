/*
 * test_convo.c - the conversations reader (convo.h): ttsbuf's JSONL
 * shape, ShareGPT arrays and records, the built-in set; and every
 * refusal, one case a file under tests/data/convo/ (bad_*), each with
 * the one-line error it must give, its place (file:line, the byte of a
 * JSON error, a ShareGPT record's path) included.  The caps are held
 * with files made here (a long line, many turns, many conversations, a
 * sparse file over the JSON cap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests.h"
#include "ttsbuf/convo.h"
#include "ttsbuf/error.h"

static void turns_are(const struct tb_convo *v, const char *id, const char *system, size_t n,
                      const char *const *turns)
{
    if (id == NULL)
        assert_null(v->id);
    else
        assert_string_equal(v->id, id);
    if (system == NULL)
        assert_null(v->system);
    else
        assert_string_equal(v->system, system);
    assert_int_equal(v->n_turns, n);
    for (size_t k = 0; k < n; k++)
        assert_string_equal(v->turns[k], turns[k]);
}

static void own_shape(void **state)
{
    struct tb_convos c;
    char err[512] = "";
    static const char *const t0[] = {"Hello there.", "What time is it?"};
    static const char *const t1[] = {"Just one turn \xf0\x9f\x98\x80 with an emoji"};
    static const char *const t2[] = {"x"};
    static const char *const t3[] = {"crlf line"};
    (void)state;
    if (tb_convos_load(tb_test_data("convo/ok_own.jsonl"), &c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.skipped, 0);
    turns_are(&c.v[0], "a", "Be brief.", 2, t0);
    turns_are(&c.v[1], NULL, NULL, 1, t1);
    turns_are(&c.v[2], "crlf", NULL, 1, t2);
    turns_are(&c.v[3], NULL, NULL, 1, t3);
    tb_convos_free(&c);
    tb_convos_free(&c); /* freed twice: a no-op */
    tb_convos_free(NULL);
}

/* A turn given as an object: its text, and its tools kept as JSON text
 * that reads back as given; a string turn has none. */
static void turn_tools(void **state)
{
    struct tb_convos c;
    char err[512] = "";
    cJSON *t;
    (void)state;
    if (tb_convos_load(tb_test_data("convo/ok_tools.jsonl"), &c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.v[0].n_turns, 2);
    assert_string_equal(c.v[0].turns[0], "Rain?");
    assert_non_null(c.v[0].tools);
    assert_null(c.v[0].tools[1]);
    t = cJSON_Parse(c.v[0].tools[0]);
    assert_non_null(t);
    assert_int_equal(cJSON_GetArraySize(t), 1);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 0), "function"), "name")
            ->valuestring,
        "get_weather");
    cJSON_Delete(t);
    tb_convos_free(&c);
}

/* The human turns; the first system value; the model's answers and other
 * speakers left out; records with no usable human turn skipped, counted. */
static void sharegpt_array(void **state)
{
    struct tb_convos c;
    char err[512] = "";
    static const char *const t0[] = {"First question?", "Second question?"};
    static const char *const t1[] = {"A user turn, as some datasets say."};
    (void)state;
    if (tb_convos_load(tb_test_data("convo/ok_sharegpt.json"), &c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.skipped, 3); /* no human turn; an empty one; an empty list */
    turns_are(&c.v[0], "sg1", "You answer tersely.", 2, t0);
    turns_are(&c.v[1], NULL, NULL, 1, t1);
    tb_convos_free(&c);
}

static void sharegpt_lines(void **state)
{
    struct tb_convos c;
    char err[512] = "";
    static const char *const t0[] = {"A ShareGPT record as a JSONL line."};
    static const char *const t1[] = {"and an own-shape line beside it"};
    (void)state;
    if (tb_convos_load(tb_test_data("convo/ok_sharegpt_lines.jsonl"), &c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(c.n, 2);
    turns_are(&c.v[0], "r1", NULL, 1, t0);
    turns_are(&c.v[1], NULL, NULL, 1, t1);
    tb_convos_free(&c);
}

/* 8 to 12 conversations of 3 to 8 turns, each named, read by the same
 * reader; the data file is valid against the schema too. */
static void builtin_set(void **state)
{
    struct tb_convos c;
    char err[512] = "", cmd[1024];
    (void)state;
    if (tb_convos_builtin(&c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_true(c.n >= 8 && c.n <= 12);
    for (size_t i = 0; i < c.n; i++) {
        assert_non_null(c.v[i].id);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(c.v[i].id, c.v[j].id);
        if (c.v[i].n_turns < 3 || c.v[i].n_turns > 8)
            fail_msg("%s: %zu turns", c.v[i].id, c.v[i].n_turns);
    }
    tb_convos_free(&c);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && /usr/bin/python3 -c 'import json, jsonschema, sys\n"
             "s = json.load(open(\"schema/conversation.schema.json\"))\n"
             "for f in sys.argv[1:]:\n"
             "    for l in open(f):\n"
             "        l.strip() and jsonschema.validate(json.loads(l), s)\n' "
             "data/conversations/builtin.jsonl tests/data/convo/ok_own.jsonl "
             "tests/data/convo/ok_tools.jsonl",
             tb_test_top());
    if (tb_test_sh(cmd) != 0)
        fail_msg("the built-in set or ok_own.jsonl fails schema/conversation.schema.json");
    /* ... and the schema refuses what the reader refuses. */
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && for f in no_turns turns_empty turn_not_string turn_empty "
             "system_not_string system_empty unknown_key; do /usr/bin/python3 -c 'import json, "
             "jsonschema, sys\n"
             "s = json.load(open(\"schema/conversation.schema.json\"))\n"
             "jsonschema.validate(json.loads(open(sys.argv[1]).readline()), s)\n' "
             "tests/data/convo/bad_$f.jsonl 2>/dev/null && exit 1; done; exit 0",
             tb_test_top());
    if (tb_test_sh(cmd) != 0)
        fail_msg("the schema accepts a line the reader refuses");
}

/* ---- Refusals: one file a case ---- */

struct bad_case {
    const char *file;
    int rc;
    const char *want; /* the message after the path */
};

static const struct bad_case bad_cases[] = {
    {"bad_json.jsonl", TB_EFORMAT, ":2: invalid JSON near byte 21"},
    {"bad_not_object.jsonl", TB_EFORMAT, ":2: not a JSON object"},
    {"bad_no_turns.jsonl", TB_EFORMAT,
     ":1: no \"turns\" (the caller's turns: an array of strings)"},
    {"bad_turns_empty.jsonl", TB_EFORMAT, ":1: \"turns\" is not a non-empty array"},
    {"bad_turns_not_array.jsonl", TB_EFORMAT, ":1: \"turns\" is not a non-empty array"},
    {"bad_turn_not_string.jsonl", TB_EFORMAT, ":1: turns[2] is not a string or a turn object"},
    {"bad_tool_name.jsonl", TB_EFORMAT,
     ":1: turns[1].tools[0].function.name is not 1..63 characters of A-Z a-z 0-9 _ -"},
    {"bad_tools_empty.jsonl", TB_EFORMAT, ":1: turns[0].tools is not an array of 1..16 tools"},
    {"bad_turn_key.jsonl", TB_EFORMAT, ":1: turns[0] has a key other than \"text\" and \"tools\""},
    {"bad_turn_no_text.jsonl", TB_EFORMAT, ":1: turns[0].text is not a non-blank string"},
    {"bad_turn_empty.jsonl", TB_EFORMAT, ":1: turns[1] is empty"},
    {"bad_system_not_string.jsonl", TB_EFORMAT, ":1: system is not a string"},
    {"bad_system_empty.jsonl", TB_EFORMAT, ":1: system is empty (leave it out)"},
    {"bad_unknown_key.jsonl", TB_EFORMAT,
     ":1: unknown key \"turn\" (a conversation has \"turns\", and may have \"id\" and "
     "\"system\")"},
    {"bad_two_objects.jsonl", TB_EFORMAT, ":1: invalid JSON near byte 18"},
    {"bad_utf8.jsonl", TB_EFORMAT, ":1: invalid UTF-8 at byte 16"},
    {"bad_empty.jsonl", TB_EEMPTY, " holds no conversation"},
    {"bad_value_not_string.jsonl", TB_EFORMAT, ":1: conversations[0].value is not a string"},
    {"bad_sharegpt_json.json", TB_EFORMAT, ":4: invalid JSON near byte 115"},
    {"bad_sharegpt_from.json", TB_EFORMAT, ": [1].conversations[1].from is not a string"},
    {"bad_sharegpt_not_object.json", TB_EFORMAT, ": [1]: not an object"},
    {"bad_sharegpt_no_conversations.json", TB_EFORMAT, ": [0].conversations is missing"},
    {"bad_sharegpt_no_human.json", TB_EEMPTY,
     " holds no conversation with a human turn (1 skipped)"},
    {"bad_sharegpt_list_not_array.json", TB_EFORMAT, ": [0].conversations is not an array"},
};

static void bad_run(void **state)
{
    const struct bad_case *c = *state;
    struct tb_convos v;
    char err[512] = "", want[5200];
    const char *path = tb_test_data("convo/");
    char full[4096];
    int rc;
    snprintf(full, sizeof(full), "%s%s", path, c->file);
    rc = tb_convos_load(full, &v, err, sizeof(err));
    snprintf(want, sizeof(want), "%s%s", full, c->want);
    if (rc != c->rc || strcmp(err, want) != 0)
        fail_msg("%s: %s (%d)\nwant %s (%d)", c->file, err, rc, want, c->rc);
    assert_null(v.v);
    assert_int_equal(v.n, 0);
}

/* ---- The caps, with files made here ---- */

static char *tmp_path(const char *what)
{
    static char p[256];
    snprintf(p, sizeof(p), "/tmp/ttsbuf-convo-%d-%s", (int)getpid(), what);
    return p;
}

static void expect(const char *path, int rc, const char *want)
{
    struct tb_convos v;
    char err[512] = "";
    int got = tb_convos_load(path, &v, err, sizeof(err));
    if (got != rc || strstr(err, want) == NULL)
        fail_msg("%s: %s (%d); want \"%s\" (%d)", path, err, got, want, rc);
    assert_int_equal(v.n, 0);
}

static void caps(void **state)
{
    const char *p = tmp_path("caps");
    FILE *f;
    char want[512];
    (void)state;
    /* A line over TB_CONVO_LINE_MAX, after a good one. */
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"turns\": [\"ok\"]}\n{\"turns\": [\"", f);
    for (size_t i = 0; i < TB_CONVO_LINE_MAX; i++)
        fputc('a', f);
    fputs("\"]}\n", f);
    fclose(f);
    snprintf(want, sizeof(want), "%s:2: line is over the 1048576-byte cap", p);
    expect(p, TB_ETOOBIG, want);
    /* One turn more than TB_CONVO_TURNS_MAX. */
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"turns\": [\"t\"", f);
    for (int i = 0; i < TB_CONVO_TURNS_MAX; i++)
        fputs(", \"t\"", f);
    fputs("]}\n", f);
    fclose(f);
    snprintf(want, sizeof(want), "%s:1: more than 1000 turns", p);
    expect(p, TB_ETOOBIG, want);
    /* One conversation more than TB_CONVO_MAX. */
    f = fopen(p, "w");
    assert_non_null(f);
    for (int i = 0; i <= TB_CONVO_MAX; i++)
        fputs("{\"turns\":[\"a\"]}\n", f);
    fclose(f);
    snprintf(want, sizeof(want), "%s:100001: more than 100000 conversations", p);
    expect(p, TB_ETOOBIG, want);
    /* A JSON array over TB_CONVO_FILE_MAX (sparse: nothing is written). */
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("[", f);
    fclose(f);
    assert_int_equal(truncate(p, (off_t)TB_CONVO_FILE_MAX + 1), 0);
    snprintf(want, sizeof(want),
             "%s: over the 256 MiB cap for a JSON array (give it as JSONL: one record a line)", p);
    expect(p, TB_ETOOBIG, want);
    unlink(p);
    expect("/nonexistent/convo.jsonl", TB_EIO, "/nonexistent/convo.jsonl: No such file");
}

/* A ShareGPT array is walked a record at a time, never parsed whole
 * (cJSON's tree of "[0,0,...]" takes about 40 times the file): a 64 MiB
 * array of zeros stops at record 0, one record of 32M values is refused
 * naming its size, each under 512 MiB of peak RSS (a 255 MiB file took
 * 10.7 GB). */
static void sharegpt_memory_bounded(void **state)
{
    static const struct {
        const char *head, *tail, *want;
    } cases[] = {
        {"[", "]", ": [0]: not an object"},
        {"[{\"conversations\": [", "]}]",
         ": [0] would take about 2559 MiB to read, over the cap of 64 MiB for one record"},
    };
    const char *p = tmp_path("big.json");
    char errp[64], cmd[512], *err;
    (void)state;
    snprintf(errp, sizeof(errp), "/tmp/ttsbuf-convo-big-%d.err", (int)getpid());
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long rss;
        int code;
        tb_test_zeros_json(p, cases[i].head, cases[i].tail, (size_t)64 << 20);
        snprintf(cmd, sizeof(cmd), "'%s' bench --mock --conversations %s -q 2>%s >/dev/null",
                 tb_test_bin(), p, errp);
        rss = tb_test_sh_rss(cmd, &code);
        err = tb_test_slurp_str(errp);
        if (code != 2 || strstr(err, cases[i].want) == NULL ||
            rss > 512L * 1024 * TB_TEST_RSS_SCALE)
            fail_msg("%s: exit %d, peak RSS %ld KiB, stderr '%s'", cmd, code, rss, err);
        free(err);
    }
    unlink(p);
    unlink(errp);
}

#define NROWS(a) (sizeof(a) / sizeof((a)[0]))

int tb_test_convo(void)
{
    static const struct CMUnitTest own[] = {
        cmocka_unit_test(own_shape),
        cmocka_unit_test(turn_tools),
        cmocka_unit_test(sharegpt_array),
        cmocka_unit_test(sharegpt_lines),
        cmocka_unit_test(builtin_set),
        cmocka_unit_test(caps),
        cmocka_unit_test(sharegpt_memory_bounded),
    };
    struct CMUnitTest tests[NROWS(own) + NROWS(bad_cases)];
    size_t n = 0;
    for (size_t i = 0; i < NROWS(own); i++)
        tests[n++] = own[i];
    for (size_t i = 0; i < NROWS(bad_cases); i++)
        tests[n++] =
            (struct CMUnitTest){bad_cases[i].file, bad_run, NULL, NULL, (void *)&bad_cases[i]};
    return tb_test_run_group("convo", tests, n, NULL, NULL);
}
