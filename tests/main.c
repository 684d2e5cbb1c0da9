/*
 * main.c - runs every test group; TB_TEST_ONLY=name,name runs a subset
 * (make tsan runs the groups that start threads: the Makefile's list).
 * Exit status: 0 when every case passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

int tb_tests_total;

const char *tb_test_data(const char *name)
{
    static char buf[4096];
    const char *dir = getenv("TB_TESTDATA");
    snprintf(buf, sizeof(buf), "%s/%s", dir != NULL ? dir : "tests/data", name);
    return buf;
}

const char *tb_test_top(void)
{
    static char path[2048];
    const char *data = getenv("TB_TESTDATA");
    snprintf(path, sizeof(path), "%s/../..", data != NULL ? data : "tests/data");
    return path;
}

static const struct {
    const char *name;
    int (*run)(void);
} groups[] = {
    {"utf8", tb_test_utf8},
    {"ring", tb_test_ring},
    {"segment", tb_test_segment},
    {"playout", tb_test_playout},
    {"property", tb_test_property},
    {"trace", tb_test_trace},
    {"synth", tb_test_synth},
    {"ttslat", tb_test_ttslat},
    {"ttspreset", tb_test_ttspreset},
    {"sim", tb_test_sim},
    {"cli", tb_test_cli},
    {"sse", tb_test_sse},
    {"serve", tb_test_serve},
    {"ttsserve", tb_test_ttsserve},
    {"servelog", tb_test_servelog},
    {"oai", tb_test_oai},
    {"live", tb_test_live},
    {"rebuffer", tb_test_rebuffer},
    {"ttsstage", tb_test_ttsstage},
    {"recut", tb_test_recut},
    {"ttscli", tb_test_ttscli},
    {"ttsdraws", tb_test_ttsdraws},
    {"ttstrace", tb_test_ttstrace},
    {"ttslive", tb_test_ttslive},
    {"ttsfault", tb_test_ttsfault},
    {"ttsbench", tb_test_ttsbench},
    {"ttsws", tb_test_ttsws},
    {"ttswire", tb_test_ttswire},
    {"sweep", tb_test_sweep},
    {"heard", tb_test_heard},
    {"svg", tb_test_svg},
    {"docs", tb_test_docs},
    {"import", tb_test_import},
    {"api", tb_test_api},
    {"audioenv", tb_test_audioenv},
    {"player", tb_test_player},
    {"speech", tb_test_speech},
    {"ttsplay", tb_test_ttsplay},
    {"bench", tb_test_bench},
    {"fuzz", tb_test_fuzz},
    {"fault", tb_test_fault},
    {"peer", tb_test_peer},
    {"html", tb_test_html},
    {"compare", tb_test_compare},
    {"goodput", tb_test_goodput},
    {"serveunit", tb_test_serve_unit},
    {"convo", tb_test_convo},
    {"calls", tb_test_calls},
    {"threads", tb_test_threads},
    {"bargein", tb_test_bargein},
    {"reader", tb_test_reader},
    {"ttsapi", tb_test_ttsapi},
    {"deps", tb_test_deps},
    {"usage", tb_test_usage},
    {"exits", tb_test_exits},
    {"layers", tb_test_layers},
    {"secrets", tb_test_secrets},
    {"outputs", tb_test_outputs},
    /* Last: it validates what the groups before it collected. */
    {"schema", tb_test_schema},
};

static int selected(const char *only, const char *name)
{
    size_t n = strlen(name);
    const char *p = only;
    if (only == NULL || *only == '\0')
        return 1;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
        p += n;
    }
    return 0;
}

int main(void)
{
    const char *only = getenv("TB_TEST_ONLY");
    int failed = 0, ran = 0;
    /* Hermetic: a key or endpoint in the caller's shell would send the
     * binary's runs to a real provider (a key alone selects the vendor's
     * API).  The tests that want them set them. */
    static const char *const endpoint_env[] = {"OPENAI_API_KEY",     "OPENAI_BASE_URL",
                                               "OPENAI_MODEL",       "ANTHROPIC_API_KEY",
                                               "ANTHROPIC_BASE_URL", "OLLAMA_HOST"};
    for (size_t i = 0; i < sizeof(endpoint_env) / sizeof(endpoint_env[0]); i++)
        unsetenv(endpoint_env[i]);
    /* The binary's outputs of this run only (tests/collect/collect.c
     * keeps them there; the "schema" group validates them). */
    if (tb_test_collect_dir() != NULL) {
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", tb_test_collect_dir(),
                 tb_test_collect_dir());
        if (system(cmd) != 0)
            fprintf(stderr, "tests: cannot make %s\n", tb_test_collect_dir());
    }
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
        if (!selected(only, groups[i].name))
            continue;
        setenv("TB_TEST_GROUP", groups[i].name, 1); /* names the copies */
        failed += groups[i].run();
        ran++;
    }
    /* The closing line CI reads: "N passed, N failed". */
    printf("\n%d test groups run\n", ran);
    printf("tests: %d passed, %d failed\n", tb_tests_total - failed, failed);
    return failed == 0 ? 0 : 1;
}
