/*
 * test_docs.c - the manual keeps up with the code: every long option that
 * `ttsbuf COMMAND --help` lists, for every command, appears in
 * man/ttsbuf.1 (as roff writes it, \-\-name), and every command has a
 * section there.  The README's option tables are checked the same way.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

static const char *const commands[] = {"sim", "run", "serve", "sweep", "bench", "merge"};

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

static void check_doc(const char *what, const char *doc)
{
    for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
        char args[64], opt[64];
        struct tb_test_out o;
        snprintf(args, sizeof(args), "%s --help", commands[c]);
        o = tb_test_run(args);
        assert_int_equal(o.code, 0);
        snprintf(opt, sizeof(opt), "ttsbuf %s", commands[c]);
        if (!mentions(doc, opt))
            fail_msg("%s has nothing on '%s'", what, opt);
        for (const char *p = strstr(o.so, "--"); p != NULL; p = strstr(p + 2, "--")) {
            size_t n = 2;
            while (isalnum((unsigned char)p[n]) || p[n] == '-')
                n++;
            if (n < 4 || n >= sizeof(opt))
                continue;
            memcpy(opt, p, n);
            opt[n] = '\0';
            if (!mentions(doc, opt))
                fail_msg("%s does not mention %s (from ttsbuf %s --help)", what, opt, commands[c]);
        }
        tb_test_out_free(&o);
    }
}

/* A file of the source tree (TB_TESTDATA is tests/data), with roff's
 * "\-" undone when roff. */
static char *tree_file(const char *name, int roff)
{
    char path[4096];
    const char *data = getenv("TB_TESTDATA");
    char *doc;
    snprintf(path, sizeof(path), "%s/../../%s", data != NULL ? data : "tests/data", name);
    doc = roff ? plain(path) : tb_test_slurp_str(path);
    assert_true(strlen(doc) > 1000);
    return doc;
}

static void man_covers_every_option(void **state)
{
    char *doc = tree_file("man/ttsbuf.1", 1);
    (void)state;
    check_doc("man/ttsbuf.1", doc);
    free(doc);
}

static void readme_covers_every_option(void **state)
{
    char *doc = tree_file("README.md", 0);
    (void)state;
    check_doc("README.md", doc);
    free(doc);
}

int tb_test_docs(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(man_covers_every_option),
        cmocka_unit_test(readme_covers_every_option),
    };
    return TB_RUN_GROUP("docs", tests);
}
