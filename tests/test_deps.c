/*
 * test_deps.c - `make test` works on a machine that has only what `sh
 * .ci/deps test` installs.
 *
 * tests/commands.txt lists every program the suite runs besides ttsbuf,
 * with the Debian package that brings it.  Here: each of those packages is
 * in .ci/deps's test set (or Debian's base system); every program the test
 * sources run is in the list; and the README names exactly the packages
 * .ci/deps installs.  tb_test_need() is how a case asks for a program: a
 * missing one fails with the package that brings it.
 *
 * Which programs the sources run is read from their string literals: a
 * word where a shell expects a command (the start of a command line, after
 * |, ||, &&, ; or $(, after `command -v`), followed by something shaped
 * like an argument (an option, a path, a redirection, a %s), or the name
 * given to execlp or find_exe.  Such a word counts when it names a program
 * on PATH: English in a message is not one, and a program a case needs is
 * on PATH wherever the suite passes, so a program used but not listed
 * fails this group on every machine the suite runs on.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"

#define COMMANDS_MAX 128

struct command {
    char name[64], package[64];
};

/* tests/commands.txt into v; returns the count. */
static size_t read_commands(struct command *v, size_t max)
{
    char path[4096], line[256];
    size_t n = 0;
    FILE *f;
    snprintf(path, sizeof(path), "%s/tests/commands.txt", tb_test_top());
    f = fopen(path, "r");
    if (f == NULL)
        fail_msg("cannot read %s", path);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (n == max || sscanf(line, "%63s %63s", v[n].name, v[n].package) != 2) {
            fclose(f);
            fail_msg("tests/commands.txt: '%s' is not COMMAND PACKAGE", line);
        }
        n++;
    }
    fclose(f);
    return n;
}

/* The command's row, or NULL. */
static const struct command *find_command(const struct command *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

/* Whether name is an executable file in a directory of $PATH. */
static int on_path(const char *name)
{
    const char *p = getenv("PATH");
    char dir[4096];
    struct stat st;
    while (p != NULL && *p != '\0') {
        size_t n = strcspn(p, ":");
        if (n > 0 && n + strlen(name) + 2 < sizeof(dir)) {
            snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, p, name);
            if (stat(dir, &st) == 0 && S_ISREG(st.st_mode) && access(dir, X_OK) == 0)
                return 1;
        }
        p += n + (p[n] == ':');
    }
    return 0;
}

void tb_test_need(const char *name)
{
    struct command v[COMMANDS_MAX];
    size_t n = read_commands(v, COMMANDS_MAX);
    const struct command *c = find_command(v, n, name);
    if (c == NULL)
        fail_msg("the suite runs %s, which tests/commands.txt does not list", name);
    if (!on_path(name))
        fail_msg("%s is not installed: `sh .ci/deps test` (make test) installs it (Debian "
                 "package %s)",
                 name, c->package);
}

/* The packages of .ci/deps's sets (`--list`), one a line into buf. */
static char *deps_list(const char *sets)
{
    char cmd[4200];
    char *out;
    snprintf(cmd, sizeof(cmd), "sh '%s/.ci/deps' --list %s >/tmp/ttsbuf-deps-%d.txt", tb_test_top(),
             sets, (int)getpid());
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "/tmp/ttsbuf-deps-%d.txt", (int)getpid());
    out = tb_test_slurp_text(cmd, NULL);
    remove(cmd);
    return out;
}

/* Whether the --list output holds package (the first word of a line). */
static int deps_has(const char *list, const char *package)
{
    size_t n = strlen(package);
    for (const char *p = list; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : p)
        if (strncmp(p, package, n) == 0 && p[n] == ' ')
            return 1;
    return 0;
}

/* Every listed program comes from the base system or from a package of
 * .ci/deps's test set (which includes the build set). */
static void listed_commands_are_installed_by_deps(void **state)
{
    struct command v[COMMANDS_MAX];
    size_t n = read_commands(v, COMMANDS_MAX);
    char *list = deps_list("test");
    (void)state;
    assert_true(n > 10);
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].package, "base") != 0 && !deps_has(list, v[i].package))
            fail_msg("the suite runs %s (Debian package %s), which `sh .ci/deps test` does not "
                     "install",
                     v[i].name, v[i].package);
    free(list);
}

/* An argument's shape: an option, a path, a quoted word, a redirection, a
 * variable, a %s. */
static int arg_shaped(const char *t)
{
    if (t[0] == '-')
        return isalpha((unsigned char)t[1]) || (t[1] == '-' && isalpha((unsigned char)t[2]));
    if (isdigit((unsigned char)t[0]) && t[1] == '>')
        return 1;
    return strncmp(t, "%s", 2) == 0 || strchr("'/<>$", t[0]) != NULL;
}

/* A command's name: lower case, digits, '-', '_', '.', '+'. */
static int name_shaped(const char *w)
{
    if (!islower((unsigned char)w[0]))
        return 0;
    for (const char *p = w; *p; p++)
        if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && !strchr("-_.+", *p))
            return 0;
    return 1;
}

struct scan {
    const struct command *v;
    size_t n;
    const char *file;
    char missing[2048]; /* "FILE:LINE NAME" of each unlisted program */
};

static void found(struct scan *sc, const char *name, int line)
{
    size_t k = strlen(sc->missing);
    /* ttsbuf itself is what the suite tests, always by path (tb_test_bin);
     * an installed copy on PATH (the Debian package) is not a program the
     * suite needs. */
    if (strcmp(name, "ttsbuf") == 0)
        return;
    if (!name_shaped(name) || !on_path(name) || find_command(sc->v, sc->n, name) != NULL)
        return;
    snprintf(sc->missing + k, sizeof(sc->missing) - k, "%s%s:%d runs %s", k > 0 ? "; " : "",
             sc->file, line, name);
}

/* The command words of one shell segment (tokens t[0..nt)). */
static void segment(struct scan *sc, char **t, size_t nt, int line)
{
    if (nt >= 2 && strcmp(t[0], "command") == 0 && strcmp(t[1], "-v") == 0) {
        if (nt >= 3)
            found(sc, t[2], line);
        return;
    }
    if (nt >= 2 && (strcmp(t[0], "exec") == 0 || strcmp(t[0], "env") == 0 ||
                    strcmp(t[0], "timeout") == 0 || strcmp(t[0], "nohup") == 0)) {
        t++;
        nt--;
    }
    for (size_t i = 1; i < nt && i < 4; i++)
        if (arg_shaped(t[i])) {
            char w[64];
            snprintf(w, sizeof(w), "%s", t[0][0] == '\'' ? t[0] + 1 : t[0]);
            w[strcspn(w, "'")] = '\0';
            found(sc, w, line);
            return;
        }
}

/* One string literal's text (escapes left as they are). */
static void literal(struct scan *sc, char *s, int line, int named)
{
    char *seg = s;
    if (named) { /* execlp("NAME", ...), find_exe("NAME", ...) */
        found(sc, s, line);
        return;
    }
    for (char *p = s;; p++) {
        int cut = *p == '\0' || *p == '|' || *p == ';' || *p == '`' ||
                  (p[0] == '&' && p[1] == '&') || (p[0] == '$' && p[1] == '(');
        if (!cut)
            continue;
        {
            char *t[8], *save = NULL, end = *p;
            size_t nt = 0;
            *p = '\0';
            for (char *w = strtok_r(seg, " \t", &save); w != NULL && nt < 8;
                 w = strtok_r(NULL, " \t", &save))
                t[nt++] = w;
            segment(sc, t, nt, line);
            if (end == '\0')
                return;
            if ((end == '&' || end == '$' || end == '|') && p[1] != '\0')
                p++;
            seg = p + 1;
        }
    }
}

/* Every string literal of a C source, comments and character constants
 * skipped. */
static void scan_source(struct scan *sc, const char *src)
{
    int line = 1;
    for (const char *p = src; *p; p++) {
        if (*p == '\n') {
            line++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            for (const char *q = p; q < (e != NULL ? e : p + strlen(p)); q++)
                line += *q == '\n';
            if (e == NULL)
                return;
            p = e + 1;
        } else if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n") - 1;
        } else if (*p == '\'') {
            p += p[1] == '\\' ? 3 : 2; /* 'x' or '\x' */
        } else if (*p == '"') {
            char buf[4096];
            size_t n = 0;
            int named = (p - src >= 7 && strncmp(p - 7, "execlp(", 7) == 0) ||
                        (p - src >= 9 && strncmp(p - 9, "find_exe(", 9) == 0);
            for (p++; *p && *p != '"' && *p != '\n'; p++) {
                if (*p == '\\' && p[1] != '\0' && n + 2 < sizeof(buf)) {
                    buf[n++] = *p++;
                    buf[n++] = *p;
                } else if (n + 1 < sizeof(buf)) {
                    buf[n++] = *p;
                }
            }
            buf[n] = '\0';
            literal(sc, buf, line, named);
            if (*p == '\0')
                return;
        }
    }
}

/* Every program the test sources run is in tests/commands.txt. */
static void the_suite_runs_only_listed_commands(void **state)
{
    static const char *const dirs[] = {"tests", "tests/collect"};
    struct command v[COMMANDS_MAX];
    struct scan sc;
    size_t files = 0;
    (void)state;
    memset(&sc, 0, sizeof(sc));
    sc.v = v;
    sc.n = read_commands(v, COMMANDS_MAX);
    for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
        char dir[4096], path[8192];
        char **names;
        size_t nn;
        snprintf(dir, sizeof(dir), "%s/%s", tb_test_top(), dirs[d]);
        nn = tb_test_list(dir, "", ".c", 0, &names);
        for (size_t i = 0; i < nn; i++) {
            char *src;
            snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
            src = tb_test_slurp_text(path, NULL);
            sc.file = names[i];
            scan_source(&sc, src);
            free(src);
            files++;
        }
        tb_test_free_names(names, nn);
    }
    assert_true(files > 30);
    if (sc.missing[0] != '\0')
        fail_msg("programs the suite runs that tests/commands.txt does not list (add each with "
                 "its Debian package, and the package to .ci/deps's test set): %s",
                 sc.missing);
}

/* The scanner finds a program in the shapes the suite uses, and leaves
 * English alone (a scan that finds nothing would pass anything). */
static void the_scanner_sees_commands(void **state)
{
    static const struct command none[1] = {{"", ""}};
    static const char *const runs[] = {
        "x = \"sh -c 'exit 0'\";",
        "snprintf(cmd, n, \"cd %s && sh '%s' >/dev/null\", a, b);",
        "x = \"command -v sh >/dev/null 2>&1\";",
        "execlp(\"sh\", \"sh\", NULL);",
        "x = \"true; sh -e x\";",
    };
    static const char *const words[] = {
        "fail_msg(\"sh than %d chunks\", n);",
        "/* sh -c 'x' */ x = 1;",
        "c = '\"'; x = \"sh\";",
    };
    struct scan sc;
    (void)state;
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        memset(&sc, 0, sizeof(sc));
        sc.v = none;
        sc.n = 1;
        sc.file = "t.c";
        scan_source(&sc, runs[i]);
        if (strstr(sc.missing, "runs sh") == NULL)
            fail_msg("the scan does not see sh in %s", runs[i]);
    }
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        memset(&sc, 0, sizeof(sc));
        sc.v = none;
        sc.n = 1;
        sc.file = "t.c";
        scan_source(&sc, words[i]);
        if (sc.missing[0] != '\0')
            fail_msg("the scan takes %s for a command line: %s", words[i], sc.missing);
    }
}

/* Whether word is a dependency of tests/node/package.json (an npm
 * package, not a Debian one). */
static int npm_package(const char *pkgjson, const char *word)
{
    char key[96];
    snprintf(key, sizeof(key), "\"%s\":", word);
    return strstr(pkgjson, key) != NULL;
}

/* The README's install section names, in backquotes, exactly the Debian
 * packages .ci/deps installs for `make demo` and `make test`. */
static void readme_names_the_packages_deps_installs(void **state)
{
    char path[4096];
    char *readme, *pkgjson, *list = deps_list("build test");
    const char *sec, *end;
    char named[4096] = " ";
    (void)state;
    snprintf(path, sizeof(path), "%s/README.md", tb_test_top());
    readme = tb_test_slurp_text(path, NULL);
    snprintf(path, sizeof(path), "%s/tests/node/package.json", tb_test_top());
    pkgjson = tb_test_slurp_text(path, NULL);
    sec = strstr(readme, "## Install");
    assert_non_null(sec);
    end = strstr(sec + 3, "\n## ");
    assert_non_null(end);
    for (const char *p = strchr(sec, '`'); p != NULL && p < end; p = strchr(p + 1, '`')) {
        const char *q = strchr(p + 1, '`');
        char span[512], *save = NULL;
        if (strncmp(p, "```", 3) == 0) { /* a code block: commands */
            q = strstr(p + 3, "```");
            if (q == NULL)
                break;
            p = q + 2;
            continue;
        }
        if (q == NULL || q > end)
            break;
        snprintf(span, sizeof(span), "%.*s", (int)(q - p - 1), p + 1);
        p = q;
        if (strncmp(span, "make", 4) == 0 || strchr(span, '/') != NULL ||
            strstr(span, " -") != NULL || span[0] == '-' || span[0] == '.')
            continue; /* a command line, a path, an option */
        for (char *w = strtok_r(span, " \n", &save); w != NULL; w = strtok_r(NULL, " \n", &save)) {
            size_t k = strlen(named);
            if (!name_shaped(w) || strchr(w, '/') != NULL || npm_package(pkgjson, w) ||
                strcmp(w, "apt-get") == 0 || strcmp(w, "sudo") == 0 || strcmp(w, "git") == 0)
                continue;
            if (!deps_has(list, w))
                fail_msg("README.md's install section names `%s`, which .ci/deps does not "
                         "install",
                         w);
            snprintf(named + k, sizeof(named) - k, "%s ", w);
        }
    }
    for (const char *p = list; *p != '\0'; p = strchr(p, '\n') + 1) {
        char pkg[96], key[100];
        sscanf(p, "%95s", pkg);
        snprintf(key, sizeof(key), " %s ", pkg);
        if (strstr(named, key) == NULL)
            fail_msg("README.md's install section does not name `%s`, which .ci/deps installs",
                     pkg);
    }
    free(list);
    free(pkgjson);
    free(readme);
}

/* A field of debian/control's paragraph that starts with first_line (the
 * source paragraph: "Source: "), continuation lines and comments
 * included, into out as " name name ... " (versions, alternatives after
 * the first, substitution variables and debhelper-compat left out). */
static void control_field(const char *control, const char *first_line, const char *field, char *out,
                          size_t outlen)
{
    const char *para = strstr(control, first_line), *end, *f;
    size_t k = 1;
    char key[64];
    assert_non_null(para);
    end = strstr(para, "\n\n");
    if (end == NULL)
        end = para + strlen(para);
    snprintf(key, sizeof(key), "\n%s:", field);
    f = strstr(para, key);
    if (f == NULL || f > end)
        fail_msg("debian/control: no %s in the paragraph of '%s'", field, first_line);
    snprintf(out, outlen, " ");
    f += strlen(key);
    for (int skip = 0; f < end; f++) {
        if (*f == '\n' && f[1] != ' ' && f[1] != '#')
            break; /* the next field */
        if (*f == '\n' && f[1] == '#') {
            f = strchr(f + 1, '\n') - 1; /* a comment line */
            continue;
        }
        if (*f == ',') {
            skip = 0;
            if (k > 1 && out[k - 1] != ' ' && k + 1 < outlen)
                out[k++] = ' ';
        } else if (*f == '|' || *f == '(' || *f == '$') {
            skip = 1;
        } else if (!skip && !isspace((unsigned char)*f) && k + 1 < outlen) {
            out[k++] = *f;
        }
    }
    if (k > 1 && out[k - 1] != ' ' && k + 1 < outlen)
        out[k++] = ' ';
    out[k] = '\0';
}

/* debian/control builds with .ci/deps's build set (less build-essential,
 * which Debian implies, and espeak-ng-data, which libespeak-ng-dev
 * brings), and libttsbuf-dev depends on every -dev package of the build
 * set (the pkg-config modules ttsbuf.pc requires, and sonic, which it names
 * in Libs), so that the package, `make deps` and the container image follow
 * one list. */
static void debian_control_follows_deps(void **state)
{
    char path[4096], bd[2048], dev[2048], want_bd[2048] = " ", want_dev[2048] = " ";
    char *control, *list = deps_list("build");
    (void)state;
    snprintf(path, sizeof(path), "%s/debian/control", tb_test_top());
    control = tb_test_slurp_text(path, NULL);
    control_field(control, "Source: ", "Build-Depends", bd, sizeof(bd));
    control_field(control, "Package: libttsbuf-dev\n", "Depends", dev, sizeof(dev));
    for (const char *p = list; *p != '\0'; p = strchr(p, '\n') + 1) {
        char pkg[96], how[96];
        size_t k;
        if (sscanf(p, "%95s %95s", pkg, how) != 2)
            fail_msg(".ci/deps --list build: '%.40s' is not PACKAGE HOW", p);
        if (strcmp(pkg, "build-essential") != 0 && strcmp(pkg, "espeak-ng-data") != 0) {
            k = strlen(want_bd);
            snprintf(want_bd + k, sizeof(want_bd) - k, "%s ", pkg);
        }
        if (strlen(pkg) > 4 && strcmp(pkg + strlen(pkg) - 4, "-dev") == 0) {
            k = strlen(want_dev);
            snprintf(want_dev + k, sizeof(want_dev) - k, "%s ", pkg);
        }
    }
    for (int pass = 0; pass < 4; pass++) {
        /* Each name of one list must be in the other: 0, 1 Build-Depends;
         * 2, 3 libttsbuf-dev's Depends. */
        const char *what = pass < 2 ? "Build-Depends" : "libttsbuf-dev's Depends";
        const char *control_side = pass < 2 ? bd : dev, *deps_side = pass < 2 ? want_bd : want_dev;
        const char *from = pass % 2 == 0 ? deps_side : control_side;
        const char *in = pass % 2 == 0 ? control_side : deps_side;
        char words[2048], *save = NULL;
        snprintf(words, sizeof(words), "%s", from);
        for (char *w = strtok_r(words, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
            char key[100];
            snprintf(key, sizeof(key), " %s ", w);
            if (strcmp(w, "debhelper-compat") == 0 || strstr(in, key) != NULL)
                continue;
            if (pass % 2 == 0)
                fail_msg("debian/control: %s lack %s, which .ci/deps's build set installs "
                         "(they are:%s)",
                         what, w, control_side);
            fail_msg("debian/control: %s name %s, which .ci/deps's build set does not (it "
                     "has:%s)",
                     what, w, deps_side);
        }
    }
    free(list);
    free(control);
}

/* The package targets ask only for what they use: `make deb` for the
 * deb set (no lintian, no debootstrap: those are deb-test's), `make
 * deb-test` for the deb-test set; and `make image` without a container
 * engine stops before it asks for or builds the package it would hold.
 * The Makefile runs in a copy of the tree's top whose .ci/deps says which
 * sets it was asked for (and that the build set is there). */
static void package_targets_ask_what_they_use(void **state)
{
    static const char *const goals[][2] = {{"deb", "asked:deb;"},
                                           {"deb-test", "asked:deb-test;"},
                                           {"image ENGINE=", "needs podman or docker"}};
    char *deb = deps_list("deb"), *debtest = deps_list("deb-test"), dir[128], cmd[4600], *out;
    (void)state;
    assert_true(deps_has(deb, "debhelper") && deps_has(deb, "fakeroot"));
    assert_false(deps_has(deb, "lintian") || deps_has(deb, "debootstrap"));
    assert_true(deps_has(debtest, "lintian") && deps_has(debtest, "debootstrap") &&
                deps_has(debtest, "debhelper"));
    tb_test_tmpdir(dir, sizeof(dir), "deps", "make");
    snprintf(cmd, sizeof(cmd),
             "cp '%s/Makefile' %s/ && mkdir %s/.ci && printf '%%s\\n' "
             "'[ \"$2\" = build ] && [ $# -eq 2 ] && exit 0' 'shift; echo \"asked:$*;\"' "
             ">%s/.ci/deps",
             tb_test_top(), dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    for (size_t i = 0; i < sizeof(goals) / sizeof(goals[0]); i++) {
        snprintf(cmd, sizeof(cmd), "make -n -C %s %s >%s/out 2>&1", dir, goals[i][0], dir);
        assert_int_not_equal(tb_test_sh(cmd), 0);
        snprintf(cmd, sizeof(cmd), "%s/out", dir);
        out = tb_test_slurp_str(cmd);
        if (strstr(out, goals[i][1]) == NULL || strstr(out, "dpkg-buildpackage") != NULL ||
            (i == 2 && strstr(out, "asked:") != NULL))
            fail_msg("make %s: %.400s (want '%s', nothing built)", goals[i][0], out, goals[i][1]);
        free(out);
    }
    tb_test_rm_rf(dir);
    free(deb);
    free(debtest);
}

int tb_test_deps(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(listed_commands_are_installed_by_deps),
        cmocka_unit_test(the_scanner_sees_commands),
        cmocka_unit_test(the_suite_runs_only_listed_commands),
        cmocka_unit_test(readme_names_the_packages_deps_installs),
        cmocka_unit_test(debian_control_follows_deps),
        cmocka_unit_test(package_targets_ask_what_they_use),
    };
    return TB_RUN_GROUP("deps", tests);
}
