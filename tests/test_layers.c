/*
 * test_layers.c - the source tree's include rule (tests/layers.sh, each
 * src/FOLDER/README.md): the real tree has no finding, and a tree with an
 * include that runs back up, a circle of files, a folder without its
 * README or a header declaring what another file defines is refused with
 * the file:line of the finding and exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

/* Runs layers.sh on tree (its stdout and stderr into *out, owned);
 * returns the exit status. */
static int layers(const char *tree, char **out)
{
    char cmd[4600], path[64];
    int rc;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-layers-%d.out", (int)getpid());
    snprintf(cmd, sizeof(cmd), "sh '%s/tests/layers.sh' '%s' >%s 2>&1", tb_test_top(), tree, path);
    rc = tb_test_sh(cmd);
    *out = tb_test_slurp_str(path);
    remove(path);
    return rc;
}

/* A tree of two folders, base below net, each file given as
 * "PATH\nTEXT" in files (NULL-ended); returns its directory (static). */
static const char *fixture(const char *const *files)
{
    static char dir[128];
    char cmd[1536];
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-layers-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "rm -rf %s && mkdir -p %s/src/base %s/src/net %s/include/ttsbuf && cd %s && "
             "printf '# base\\n- May include: nothing\\n- Included by: net\\n- Public headers: "
             "`error.h`\\n' >src/base/README.md && "
             "printf '# net\\n- May include: base\\n- Included by: nothing\\n- Public headers: "
             "`http.h`\\n' >src/net/README.md && "
             "printf 'int tb_err(void);\\n' >include/ttsbuf/error.h && "
             "printf 'int tb_get(void);\\n' >include/ttsbuf/http.h",
             dir, dir, dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    for (const char *const *f = files; *f != NULL; f++) {
        const char *nl = strchr(*f, '\n');
        char path[512];
        FILE *fp;
        assert_non_null(nl);
        snprintf(path, sizeof(path), "%s/%.*s", dir, (int)(nl - *f), *f);
        fp = fopen(path, "w");
        assert_non_null(fp);
        fputs(nl + 1, fp);
        fclose(fp);
    }
    return dir;
}

static void fixture_free(void)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf /tmp/ttsbuf-layers-%d", (int)getpid());
    tb_test_sh(cmd);
}

/* Exit 1 with a line holding want. */
static void refused(const char *const *files, const char *want)
{
    char *out;
    int rc;
    rc = layers(fixture(files), &out);
    if (rc != 1 || strstr(out, want) == NULL)
        fail_msg("layers.sh: exit %d, '%s'; wanted exit 1 and '%s'", rc, out, want);
    free(out);
    fixture_free();
}

/* The real tree: no finding. */
static void tree_keeps_the_rule(void **state)
{
    char *out;
    int rc;
    (void)state;
    tb_test_need("awk");
    rc = layers(tb_test_top(), &out);
    if (rc != 0 || *out != '\0')
        fail_msg("layers.sh on the source tree: exit %d:\n%s", rc, out);
    free(out);
}

/* The fixture as it is: no finding (so each case below fails for its own
 * reason). */
static void fixture_is_clean(void **state)
{
    static const char *const ok[] = {
        "src/base/error.c\n#include \"ttsbuf/error.h\"\nint tb_err(void)\n{\n    return 0;\n}\n",
        "src/net/http.c\n#include \"ttsbuf/http.h\"\n#include \"ttsbuf/error.h\"\n"
        "int tb_get(void)\n{\n    return tb_err();\n}\n",
        NULL};
    char *out;
    (void)state;
    assert_int_equal(layers(fixture(ok), &out), 0);
    assert_string_equal(out, "");
    free(out);
    fixture_free();
}

static void upward_include_refused(void **state)
{
    static const char *const up[] = {
        "src/base/error.c\n#include \"ttsbuf/error.h\"\n#include \"ttsbuf/http.h\"\n"
        "int tb_err(void)\n{\n    return 0;\n}\n",
        NULL};
    static const char *const up_priv[] = {"src/net/conn.h\nstruct conn;\n",
                                          "src/base/error.c\n#include \"net/conn.h\"\n", NULL};
    (void)state;
    refused(up, "src/base/error.c:2: includes ttsbuf/http.h, a header of net, which base may "
                "not include");
    refused(up_priv, "src/base/error.c:1: includes net/conn.h, a header of net, which base may "
                     "not include");
}

static void circle_refused(void **state)
{
    static const char *const circ[] = {"src/net/a.h\nstruct a;\n", "src/net/b.h\nstruct b;\n",
                                       "src/net/a.c\n#include \"a.h\"\n#include \"b.h\"\n",
                                       "src/net/b.c\n#include \"b.h\"\n#include \"a.h\"\n", NULL};
    (void)state;
    refused(circ, "circle: src/net/");
}

static void readme_and_headers_checked(void **state)
{
    static const char *const decl[] = {
        "src/net/a.h\nint tb_b_go(void);\n", "src/net/a.c\n#include \"a.h\"\n",
        "src/net/b.c\nint tb_b_go(void)\n{\n    return 0;\n}\n", NULL};
    static const char *const spelled[] = {"src/net/a.h\nstruct a;\n",
                                          "src/net/b.c\n#include \"net/a.h\"\n", NULL};
    char *out, cmd[256];
    const char *dir;
    int rc;
    (void)state;
    refused(decl, "src/net/a.h:1: declares tb_b_go, which src/net/b.c defines");
    refused(spelled, "src/net/b.c:1: includes net/a.h by its folder");
    /* A folder without its README. */
    dir = fixture((const char *const[]){NULL});
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/src/audio", dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    rc = layers(dir, &out);
    if (rc != 1 || strstr(out, "src/audio/: no README.md") == NULL)
        fail_msg("a folder without README.md: exit %d, '%s'", rc, out);
    free(out);
    /* Not a source tree at all: 2. */
    rc = layers("/nonexistent-ttsbuf-tree", &out);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "not a ttsbuf source tree"));
    free(out);
    fixture_free();
}

int tb_test_layers(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(tree_keeps_the_rule),        cmocka_unit_test(fixture_is_clean),
        cmocka_unit_test(upward_include_refused),     cmocka_unit_test(circle_refused),
        cmocka_unit_test(readme_and_headers_checked),
    };
    return TB_RUN_GROUP("layers", t);
}
