/*
 * test_docs.c - the documentation agrees with the program.
 *
 * Every option `ttsbuf COMMAND --help` lists appears in man/ttsbuf.1, and
 * the option lists there are exactly what the option rows generate
 * (`ttsbuf --man-options`); every option a page or the README's commands
 * name is accepted by the program; the man pages render without a groff
 * warning; `make install` puts the three pages where man finds them; the
 * README is the short front door it promises to be.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "../src/cli/optdoc.h"
#include "tests.h"

static const char *const commands[] = {"sim", "run", "serve", "sweep", "bench", "merge", "compare"};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char *const man_pages[] = {"man/ttsbuf.1", "man/ttsbuf-trace.5", "man/ttsbuf-model.7"};

/* Text with roff's escapes for '-' undone ("\-" -> "-"). */
static char *plain(const char *path)
{
    char *s = tb_test_slurp_str(path), *w = s;
    for (const char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] == '-')
            r++;
        *w++ = *r;
    }
    *w = '\0';
    return s;
}

/* Whether doc holds `opt` not followed by another name character. */
static int mentions(const char *doc, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = strstr(doc, opt); p != NULL; p = strstr(p + 1, opt))
        if (!isalnum((unsigned char)p[n]) && p[n] != '-')
            return 1;
    return 0;
}

/* A file of the source tree, with roff's "\-" undone when roff. */
static char *tree_file(const char *name, int roff)
{
    char path[8192];
    char *doc;
    snprintf(path, sizeof(path), "%s/%s", tb_test_top(), name);
    doc = roff ? plain(path) : tb_test_slurp_str(path);
    if (strlen(doc) < 500)
        fail_msg("%s is missing or nearly empty", name);
    return doc;
}

/* An option as --help lists it. */
struct opt {
    char name[48]; /* "--wpm" or "-c" */
    int arg;       /* takes a value */
};

/* The options `ttsbuf cmd --help` lists: the lines that start "  -",
 * whose label runs to two blanks or the end of the line. */
static size_t help_options(const char *cmd, struct opt *v, size_t max)
{
    char args[64];
    struct tb_test_out o;
    size_t n = 0;
    snprintf(args, sizeof(args), "%s --help", cmd);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    for (const char *line = o.so; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
        if (len > 3 && strncmp(line, "  -", 3) == 0) {
            const char *p = line + 2, *stop = strstr(p, "  ");
            size_t first = n;
            int arg = 0;
            if (stop == NULL || stop > line + len)
                stop = line + len;
            while (p < stop && !arg) {
                size_t w = 0;
                while (p + w < stop && p[w] != ' ' && p[w] != ',')
                    w++;
                if (p[0] != '-') {
                    arg = 1; /* the argument's name: every name of the label takes it */
                } else {
                    assert_true(n < max && w < sizeof(v[n].name));
                    memcpy(v[n].name, p, w);
                    v[n].name[w] = '\0';
                    n++;
                }
                p += w;
                while (p < stop && (*p == ' ' || *p == ','))
                    p++;
            }
            for (size_t k = first; k < n; k++)
                v[k].arg = arg;
        }
        line = end != NULL ? end + 1 : NULL;
    }
    tb_test_out_free(&o);
    return n;
}

static void man_covers_every_option(void **state)
{
    char *doc = tree_file("man/ttsbuf.1", 1);
    struct opt v[128];
    (void)state;
    for (size_t c = 0; c < NCOMMANDS; c++) {
        char what[64];
        size_t n = help_options(commands[c], v, 128);
        assert_true(n > 2);
        snprintf(what, sizeof(what), "ttsbuf %s", commands[c]);
        if (!mentions(doc, what))
            fail_msg("man/ttsbuf.1 has nothing on '%s'", what);
        for (size_t i = 0; i < n; i++)
            if (!mentions(doc, v[i].name))
                fail_msg("man/ttsbuf.1 does not mention %s (from ttsbuf %s --help)", v[i].name,
                         commands[c]);
    }
    free(doc);
}

/* Every option a command's --help lists is one its parser takes: with no
 * value it says the value is missing; a flag goes by and the parser stops
 * at the unknown option after it. */
static void every_documented_option_is_accepted(void **state)
{
    struct opt v[128];
    /* One command a case (its state: an index into commands), so that the
     * runner can spread them: each runs the binary once an option. */
    const size_t c = *(const size_t *)*state;
    {
        size_t n = help_options(commands[c], v, 128);
        for (size_t i = 0; i < n; i++) {
            char args[8192];
            struct tb_test_out o;
            if (strcmp(v[i].name, "--help") == 0 || strcmp(v[i].name, "-h") == 0)
                continue;
            snprintf(args, sizeof(args), "%s %s%s </dev/null", commands[c], v[i].name,
                     v[i].arg ? "" : " --zz-not-an-option");
            o = tb_test_run(args);
            if (o.code != 2 || strstr(o.se, "unknown option '--zz") == NULL) {
                if (!v[i].arg || strstr(o.se, "needs a value") == NULL ||
                    strstr(o.se, v[i].name) == NULL)
                    fail_msg("ttsbuf %s: exit %d, '%s' (is %s accepted?)", args, o.code, o.se,
                             v[i].name);
            }
            tb_test_out_free(&o);
        }
    }
}

/* What a command's --help says of its exit statuses covers the ones it
 * gives, and it lists no table of settings the command does not take. */
static void help_states_what_the_command_does(void **state)
{
    static const struct {
        const char *cmd, *args;
        int code;
    } runs[] = {
        {"sim", "--fail-on-underrun", 1},
        {"sim", "--wpm 5", 2},
        {"sim", "--import tests/data/import/aiperf/all-cancelled.jsonl", 3},
        {"run", "--base-url http://127.0.0.1:1/v1 --model m -q", 3},
        {"bench", "--base-url http://127.0.0.1:1/v1 --model m -c 1 --requests 1 -q", 3},
        {"sweep", "--preset demo --wpm 5", 2},
        {"sweep", "--import tests/data/import/aiperf/all-cancelled.jsonl", 3},
        {"merge", "/nonexistent/records.jsonl", 2},
        {"serve", "--listen 1.2.3.4.5:1", 2},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        char args[512], code[8];
        struct tb_test_out o, h;
        char *exits, *end;
        snprintf(args, sizeof(args), "%s %s </dev/null", runs[i].cmd, runs[i].args);
        o = tb_test_run(args);
        if (o.code != runs[i].code)
            fail_msg("ttsbuf %s: exit %d, wanted %d ('%s')", args, o.code, runs[i].code, o.se);
        snprintf(args, sizeof(args), "%s --help", runs[i].cmd);
        h = tb_test_run(args);
        exits = strstr(h.so, "Exit status: ");
        assert_non_null(exits);
        end = strstr(exits, "\n\n");
        if (end != NULL)
            *end = '\0'; /* the paragraph only, not the tables after it */
        snprintf(code, sizeof(code), "%d ", runs[i].code);
        if (strstr(exits, code) == NULL)
            fail_msg("ttsbuf %s --help: its exit status says nothing of %d", runs[i].cmd,
                     runs[i].code);
        tb_test_out_free(&o);
        tb_test_out_free(&h);
    }
    {
        struct tb_test_out h = tb_test_run("serve --help");
        if (strstr(h.so, "Chunk policies") != NULL)
            fail_msg("serve --help lists chunk policies, which serve does not take");
        tb_test_out_free(&h);
    }
}

/* Whether `name` ("--x" or "-x") is an option of some command. */
static int known_option(const char *name)
{
    static struct opt all[NCOMMANDS * 128];
    static size_t nall;
    if (nall == 0)
        for (size_t c = 0; c < NCOMMANDS; c++)
            nall += help_options(commands[c], all + nall, 128);
    if (strcmp(name, "--help") == 0 || strcmp(name, "--version") == 0)
        return 1;
    for (size_t i = 0; i < nall; i++)
        if (strcmp(all[i].name, name) == 0)
            return 1;
    return 0;
}

/* Other programs' options, quoted where the pages say which of their
 * outputs ttsbuf reads (vLLM, SGLang, AIPerf, GenAI-Perf, eSpeak NG, npm). */
static int other_program_option(const char *name)
{
    static const char *const other[] = {"--save-result",     "--save-detailed", "--output-details",
                                        "--output-file",     "--export-level",  "--voices",
                                        "--no-package-lock", "--append-result", "--streaming"};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
        if (strcmp(name, other[i]) == 0)
            return 1;
    return strcmp(name, "--man-options") == 0; /* ttsbuf's own, hidden */
}

/* Every "--name" in text names a real option. */
static void check_named_options(const char *what, const char *text)
{
    for (const char *p = strstr(text, "--"); p != NULL; p = strstr(p + 2, "--")) {
        char name[64];
        size_t n = 2;
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))
            continue;
        while (isalnum((unsigned char)p[n]) || p[n] == '-')
            n++;
        if (n < 4 || n >= sizeof(name) || !isalpha((unsigned char)p[2]))
            continue;
        memcpy(name, p, n);
        name[n] = '\0';
        if (other_program_option(name))
            continue;
        if (!known_option(name))
            fail_msg("%s names %s, which no command accepts", what, name);
    }
}

static void pages_name_only_real_options(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(man_pages) / sizeof(man_pages[0]); i++) {
        char *doc = tree_file(man_pages[i], 1);
        check_named_options(man_pages[i], doc);
        free(doc);
    }
}

/* The README's command lines (its ``` blocks) use real options. */
static void readme_commands_use_real_options(void **state)
{
    char *doc = tree_file("README.md", 0);
    int in_code = 0;
    (void)state;
    for (char *line = doc, *end; line != NULL; line = end != NULL ? end + 1 : NULL) {
        end = strchr(line, '\n');
        if (end != NULL)
            *end = '\0';
        if (strncmp(line, "```", 3) == 0)
            in_code = !in_code;
        else if (in_code && strstr(line, "ttsbuf") != NULL)
            check_named_options("README.md", line);
    }
    free(doc);
}

/* The text between man/ttsbuf.1's markers for cmd is what the option rows
 * generate (`make man` rewrites it). */
static void man_option_lists_are_generated(void **state)
{
    char *doc = tree_file("man/ttsbuf.1", 0);
    (void)state;
    for (size_t c = 0; c < NCOMMANDS; c++) {
        char begin[64], endm[64], args[64];
        const char *b, *e;
        struct tb_test_out o;
        snprintf(begin, sizeof(begin), ".\\\" BEGIN OPTIONS %s\n", commands[c]);
        snprintf(endm, sizeof(endm), ".\\\" END OPTIONS %s\n", commands[c]);
        b = strstr(doc, begin);
        e = b != NULL ? strstr(b, endm) : NULL;
        if (b == NULL || e == NULL)
            fail_msg("man/ttsbuf.1 has no generated options of %s (run make man)", commands[c]);
        b += strlen(begin);
        snprintf(args, sizeof(args), "--man-options %s", commands[c]);
        o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        if (strlen(o.so) != (size_t)(e - b) || memcmp(o.so, b, (size_t)(e - b)) != 0)
            fail_msg("man/ttsbuf.1: the options of %s differ from their rows (run make man)",
                     commands[c]);
        tb_test_out_free(&o);
    }
    free(doc);
}

/* The rows themselves: every command's tables make getopt arrays (no
 * long name twice), no key twice, every row helped. */
static void option_rows_are_sound(void **state)
{
    (void)state;
    for (const struct tb_cmddoc *const *d = tb_cmddocs; *d != NULL; d++) {
        struct tb_cli_getopt g;
        int keys[256];
        size_t nk = 0;
        assert_int_equal(tb_cli_getopt_init(&g, *d), 0);
        for (const struct tb_optsec *s = (*d)->secs; s->rows != NULL; s++)
            for (const struct tb_optdoc *r = s->rows; r->key != 0; r++) {
                if (r->help == NULL || r->help[0] == '\0')
                    fail_msg("%s: --%s has no help", (*d)->name, r->name ? r->name : "?");
                for (size_t k = 0; k < nk; k++)
                    if (keys[k] == r->key)
                        fail_msg("%s: key %d is on two rows", (*d)->name, r->key);
                assert_true(nk < 256);
                keys[nk++] = r->key;
            }
    }
}

/* Every line of the rendered SYNOPSIS is a command line ttsbuf takes:
 * `ttsbuf`, then nothing, a command, COMMAND, or --help/--version. */
static void synopsis_runs(const char *text)
{
    const char *a = strstr(text, "SYNOPSIS\n"), *b = strstr(text, "\nDESCRIPTION\n");
    assert_non_null(a);
    assert_non_null(b);
    for (const char *p = a; p != NULL && p < b; p = strchr(p + 1, '\n')) {
        const char *w = p + 1;
        size_t n;
        while (*w == ' ')
            w++;
        if (strncmp(w, "ttsbuf", 6) != 0 || (w[6] != ' ' && w[6] != '\n'))
            continue;
        w += 6;
        while (*w == ' ')
            w++;
        n = strcspn(w, " \n");
        if (n == 0)
            continue;
        if (!(n == 7 && strncmp(w, "COMMAND", 7) == 0) && strncmp(w, "--help", 6) != 0 &&
            strncmp(w, "--version", 9) != 0) {
            int known = 0;
            for (size_t c = 0; c < NCOMMANDS; c++)
                known |= strlen(commands[c]) == n && strncmp(w, commands[c], n) == 0;
            if (!known)
                fail_msg("man/ttsbuf.1 SYNOPSIS: 'ttsbuf %.*s' is not a command line", (int)n, w);
        }
    }
}

/* groff renders every page, its tables through tbl (-t, as lintian does), with no warning (-ww: all
 * of them), and the rendered trace line keeps its quotes; no page shows a trade mark sign (the
 * multiplication sign is \[mu], not \[tm]). */
static void man_pages_render(void **state)
{
    char cmd[8192], out[128], err[128];
    char *text;
    (void)state;
    if (tb_test_sh("command -v groff >/dev/null 2>&1") != 0) {
        printf("    (groff not installed: rendering not checked)\n");
        return;
    }
    snprintf(out, sizeof(out), "/tmp/ttsbuf-man-%d.txt", (int)getpid());
    snprintf(err, sizeof(err), "/tmp/ttsbuf-man-%d.err", (int)getpid());
    for (size_t i = 0; i < sizeof(man_pages) / sizeof(man_pages[0]); i++) {
        snprintf(cmd, sizeof(cmd), "groff -t -man -Tutf8 -ww -P-cbou '%s/%s' >%s 2>%s",
                 tb_test_top(), man_pages[i], out, err);
        assert_int_equal(tb_test_sh(cmd), 0);
        text = tb_test_slurp_str(err);
        if (text[0] != '\0')
            fail_msg("groff warns on %s: %s", man_pages[i], text);
        free(text);
        text = tb_test_slurp_str(out);
        if (strlen(text) < 1000)
            fail_msg("%s renders to %zu bytes", man_pages[i], strlen(text));
        if (i == 0 && strstr(text, "{\"t\": SECONDS, \"text\": \"...\"}") == NULL)
            fail_msg("man/ttsbuf.1: the trace line lost its quotes");
        if (i == 0 && strstr(text, "\xe2\x80\x90-") != NULL)
            fail_msg("man/ttsbuf.1: an option renders with a typographic hyphen");
        if (strstr(text, "\xe2\x84\xa2") != NULL) /* \[tm] where \[mu] (x) was meant */
            fail_msg("%s renders a trade mark sign: ...%.40s", man_pages[i],
                     strstr(text, "\xe2\x84\xa2"));
        if (i == 0)
            synopsis_runs(text);
        free(text);
    }
    remove(out);
    remove(err);
}

/* `make install-man` (part of `make install`) with DESTDIR and PREFIX puts
 * the three pages under share/man, and `make uninstall-man` removes them. */
static void make_install_puts_the_pages(void **state)
{
    char dir[64], cmd[8192], path[256];
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-inst-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "make -s -C '%s' install-man DESTDIR=%s PREFIX=/opt/tb",
             tb_test_top(), dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    for (size_t i = 0; i < sizeof(man_pages) / sizeof(man_pages[0]); i++) {
        const char *name = strchr(man_pages[i], '/') + 1;
        char *a, *b;
        snprintf(path, sizeof(path), "%s/opt/tb/share/man/man%c/%s", dir, name[strlen(name) - 1],
                 name);
        a = tree_file(man_pages[i], 0);
        b = tb_test_slurp_str(path);
        if (strcmp(a, b) != 0)
            fail_msg("make install-man: %s is not %s", path, man_pages[i]);
        free(a);
        free(b);
    }
    snprintf(cmd, sizeof(cmd), "make -s -C '%s' uninstall-man DESTDIR=%s PREFIX=/opt/tb",
             tb_test_top(), dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "test -z \"$(find %s -type f)\"", dir);
    if (tb_test_sh(cmd) != 0)
        fail_msg("make uninstall-man left files in %s", dir);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
}

/* The README: short, installs honestly, cites the article by its title,
 * and every relative link resolves. */
static void readme_is_the_front_door(void **state)
{
    char *doc = tree_file("README.md", 0);
    const char *demo = strstr(doc, "make demo");
    (void)state;
    if (strlen(doc) > 14000)
        fail_msg("README.md is %zu bytes (the front door, about 10 KB)", strlen(doc));
    assert_non_null(demo);
    assert_non_null(strstr(doc, "make test"));
    for (const char *w = "apt-get\0sudo\0npm\0"; *w; w += strlen(w) + 1) {
        const char *p = strstr(doc, w);
        if (p == NULL || p > demo)
            fail_msg("README.md does not say '%s' before the first `make demo`", w);
    }
    assert_non_null(strstr(doc, "What Is Tokens Per Second (TPS)? The LLM Throughput Metric That "
                                "Actually Matters"));
    for (const char *p = strstr(doc, "]("); p != NULL; p = strstr(p + 2, "](")) {
        char name[512], path[4096];
        int len;
        size_t n = strcspn(p + 2, ")#");
        if (strncmp(p + 2, "http", 4) == 0 || n == 0 || n >= sizeof(name))
            continue;
        memcpy(name, p + 2, n);
        name[n] = '\0';
        len = snprintf(path, sizeof(path), "%s/%s", tb_test_top(), name);
        if (len < 0 || (size_t)len >= sizeof(path) || access(path, R_OK) != 0)
            fail_msg("README.md links to %s, which does not exist", name);
    }
    free(doc);
}

/* The JSON keys an option's help quotes ("chunk_list") are the keys --json
 * writes, and one it calls an array is one: sim --chunks. */
static void help_names_the_json_keys_written(void **state)
{
    struct tb_test_out o = tb_test_run("sim --help");
    const char *at, *end;
    cJSON *j;
    int arrays = 0;
    (void)state;
    assert_int_equal(o.code, 0);
    at = strstr(o.so, "\n  --chunks");
    assert_non_null(at);
    end = strstr(at + 1, "\n  -");
    assert_non_null(end);
    j = tb_test_run_json(NULL, "sim --synth tps=100,tokens=40,seed=1 --chunks --json", 0);
    for (const char *q = strchr(at, '"'); q != NULL && q < end; q = strchr(q + 1, '"')) {
        char key[64];
        const char *e = strchr(q + 1, '"');
        const cJSON *v;
        assert_true(e != NULL && e < end && (size_t)(e - q) < sizeof(key));
        memcpy(key, q + 1, (size_t)(e - q - 1));
        key[e - q - 1] = '\0';
        v = cJSON_GetObjectItemCaseSensitive(j, key);
        if (v == NULL)
            fail_msg("sim --help names \"%s\" for --chunks; --json writes no such key", key);
        if (strncmp(e + 1, " is an array", 12) == 0) {
            if (!cJSON_IsArray(v))
                fail_msg("sim --help: \"%s\" is an array; --json writes it otherwise", key);
            arrays++;
        }
        q = e;
    }
    assert_int_equal(arrays, 1);
    cJSON_Delete(j);
    tb_test_out_free(&o);
}

int tb_test_docs(void)
{
    static const size_t cmd[] = {0, 1, 2, 3, 4, 5, 6};
    _Static_assert(sizeof(cmd) / sizeof(cmd[0]) == NCOMMANDS, "one EACH below per command");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(option_rows_are_sound),
        cmocka_unit_test(man_covers_every_option),
#define EACH(k)                                                                                    \
    {"every_documented_option_is_accepted(" #k ")", every_documented_option_is_accepted, NULL,     \
     NULL, (void *)&cmd[k]}
        EACH(0),
        EACH(1),
        EACH(2),
        EACH(3),
        EACH(4),
        EACH(5),
        EACH(6),
#undef EACH
        cmocka_unit_test(help_states_what_the_command_does),
        cmocka_unit_test(man_option_lists_are_generated),
        cmocka_unit_test(pages_name_only_real_options),
        cmocka_unit_test(readme_commands_use_real_options),
        cmocka_unit_test(man_pages_render),
        cmocka_unit_test(make_install_puts_the_pages),
        cmocka_unit_test(readme_is_the_front_door),
        cmocka_unit_test(help_names_the_json_keys_written),
    };
    return TB_RUN_GROUP("docs", tests);
}
