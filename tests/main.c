/*
 * main.c - the table of test groups, and the environment every group
 * starts from; tests/runner.c runs them side by side, a process each.
 *
 *   TB_TEST_ONLY=name,name   those groups only (make tsan: the Makefile's list;
 *                            "@timing": the groups that bound real time)
 *   TB_TEST_BUSY=N           N CPU-bound processes beside the groups (make
 *                            check BUSY=N: the timing groups on a busy machine)
 *   TB_TEST_JOBS=N           groups at once (make check JOBS=N; default: what
 *                            fits the machine, see default_jobs)
 *   TB_TEST_TIMEOUT=S        a group running longer is killed (default 900)
 *   TB_TEST_LOGDIR=DIR       GROUP.log per group (default build/test-logs)
 *   TB_TEST_INPROC=1         one after another in this process (a debugger)
 *
 * Exit status: 0 when every case passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
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

/*
 * The groups.  ALONE: the group judges real time against an audio capture
 * and runs while nothing else does.  TIMING: the group bounds real-time
 * events (TB_TEST_ONLY=@timing: make check-busy).  expect_s: its wall time alone on an
 * idle 2-core machine (the runner's lines tell when one drifts), so that
 * the longest start first.  shards: its cases split over that many
 * processes (case i in shard i mod shards), for a long group of
 * independent cases.
 */
static const struct tb_group groups[] = {
    /* name, run, flags, expect_s, shards */
    {"utf8", tb_test_utf8, 0, 0.1, 1},
    {"ring", tb_test_ring, 0, 1.2, 1},
    {"segment", tb_test_segment, 0, 0.2, 1},
    {"playout", tb_test_playout, 0, 0.1, 1},
    {"property", tb_test_property, 0, 0.7, 1},
    {"trace", tb_test_trace, 0, 1.0, 1},
    {"synth", tb_test_synth, 0, 0.2, 1},
    {"ttslat", tb_test_ttslat, 0, 0.3, 1},
    {"ttspreset", tb_test_ttspreset, 0, 0.1, 1},
    {"sim", tb_test_sim, 0, 10.9, 1},
    {"cli", tb_test_cli, 0, 4.0, 1},
    {"sse", tb_test_sse, 0, 0.4, 1},
    {"serve", tb_test_serve, TB_GROUP_TIMING, 8.9, 1},
    {"ttsserve", tb_test_ttsserve, TB_GROUP_TIMING, 10.2, 1},
    {"servelog", tb_test_servelog, TB_GROUP_TIMING, 2.4, 1},
    {"retry", tb_test_retry, TB_GROUP_TIMING, 15.5, 1},
    {"capacity", tb_test_capacity, TB_GROUP_TIMING, 52.0, 1},
    {"servethreads", tb_test_servethreads, TB_GROUP_TIMING, 3.0, 1},
    {"oai", tb_test_oai, 0, 0.1, 1},
    {"live", tb_test_live, TB_GROUP_TIMING, 13.8, 1},
    {"rebuffer", tb_test_rebuffer, 0, 0.1, 1},
    {"ttsstage", tb_test_ttsstage, 0, 3.6, 1},
    {"recut", tb_test_recut, 0, 3.2, 1},
    {"ttscli", tb_test_ttscli, 0, 6.7, 1},
    {"ttsdraws", tb_test_ttsdraws, 0, 60.0, 2},
    {"preroll", tb_test_preroll, 0, 1.0, 1},
    {"ttstrace", tb_test_ttstrace, 0, 0.7, 1},
    {"recorded", tb_test_recorded, 0, 1.0, 1},
    {"ttslive", tb_test_ttslive, TB_GROUP_TIMING, 31.4, 2},
    {"turnlat", tb_test_turnlat, 0, 20.0, 1},
    {"ttsfault", tb_test_ttsfault, 0, 158.4, 4},
    {"ttsbench", tb_test_ttsbench, TB_GROUP_TIMING, 97.1, 3},
    {"ttsws", tb_test_ttsws, TB_GROUP_TIMING, 14.0, 1},
    {"ttswsbench", tb_test_ttswsbench, TB_GROUP_TIMING, 12.0, 1},
    {"ttswire", tb_test_ttswire, 0, 2.0, 1},
    {"sweep", tb_test_sweep, 0, 36.8, 2},
    {"heard", tb_test_heard, 0, 0.2, 1},
    {"svg", tb_test_svg, 0, 12.0, 1},
    {"docs", tb_test_docs, 0, 21.3, 3},
    {"import", tb_test_import, 0, 4.3, 1},
    {"api", tb_test_api, 0, 6.5, 1},
    {"tools", tb_test_tools, 0, 3.0, 1},
    {"tooluse", tb_test_tooluse, TB_GROUP_TIMING, 10.0, 2},
    {"simtool", tb_test_simtool, 0, 3.0, 1},
    {"audioenv", tb_test_audioenv, TB_GROUP_TIMING, 2.4, 1},
    {"player", tb_test_player, TB_GROUP_TIMING, 0.1, 1},
    {"speech", tb_test_speech, 0, 40.0, 2},
    {"speechrt", tb_test_speechrt, TB_GROUP_ALONE | TB_GROUP_TIMING, 135.0, 3},
    {"ttsplay", tb_test_ttsplay, TB_GROUP_TIMING, 5.7, 1},
    {"bench", tb_test_bench, TB_GROUP_TIMING, 33.4, 2},
    {"fuzz", tb_test_fuzz, 0, 1.3, 1},
    {"fault", tb_test_fault, 0, 104.3, 4},
    {"peer", tb_test_peer, 0, 4.7, 1},
    {"html", tb_test_html, 0, 125.8, 3},
    {"compare", tb_test_compare, 0, 11.5, 1},
    {"goodput", tb_test_goodput, 0, 5.0, 1},
    {"serveunit", tb_test_serve_unit, 0, 0.1, 1},
    {"convo", tb_test_convo, 0, 1.4, 1},
    {"calls", tb_test_calls, TB_GROUP_TIMING, 9.9, 1},
    {"threads", tb_test_threads, TB_GROUP_TIMING, 5.0, 1},
    {"benchmem", tb_test_benchmem, 0, 6.0, 1},
    {"bargein", tb_test_bargein, TB_GROUP_TIMING, 39.6, 2},
    {"callsout", tb_test_callsout, 0, 20.0, 1},
    {"reader", tb_test_reader, 0, 6.2, 1},
    {"ttsapi", tb_test_ttsapi, TB_GROUP_TIMING, 2.4, 1},
    {"deps", tb_test_deps, 0, 0.4, 1},
    {"usage", tb_test_usage, 0, 20.0, 1},
    {"exits", tb_test_exits, 0, 183.4, 6},
    {"layers", tb_test_layers, 0, 1.0, 1},
    {"secrets", tb_test_secrets, 0, 0.4, 1},
    {"outputs", tb_test_outputs, TB_GROUP_TIMING, 383.3, 15},
    {"schemas", tb_test_schemas, 0, 30.0, 1},
    /* Last: it validates what the groups before it collected. */
    {"schema", tb_test_schema, TB_GROUP_LAST, 10.0, 1},
};

/* Groups mostly wait on sockets, servers and speech-rate schedules (the
 * suite's wall time is several times its CPU time), so four run per CPU;
 * the timing cases allow for the wake-up delays that brings (lag.h). */
static int default_jobs(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    return cpus * 4 > 16 ? 16 : (int)cpus * 4;
}

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *v = getenv(name);
    char *end;
    long x;
    if (v == NULL || *v == '\0')
        return dflt;
    x = strtol(v, &end, 10);
    if (*end != '\0' || x < lo || x > hi) {
        fprintf(stderr, "tests: %s=%s: want a whole number from %ld to %ld; using %ld\n", name, v,
                lo, hi, dflt);
        return dflt;
    }
    return x;
}

int main(void)
{
    const char *only = getenv("TB_TEST_ONLY"), *logdir = getenv("TB_TEST_LOGDIR");
    size_t n = sizeof(groups) / sizeof(groups[0]);
    struct tb_runner_opts o;
    int rc;
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
    if (env_long("TB_TEST_INPROC", 0, 0, 1) == 1)
        return tb_runner_inproc(groups, n, only) == 0 ? 0 : 1;
    o.only = only;
    o.jobs = (int)env_long("TB_TEST_JOBS", default_jobs(), 1, 64);
    o.timeout_s = (double)env_long("TB_TEST_TIMEOUT", 900, 1, 86400);
    o.busy = (int)env_long("TB_TEST_BUSY", 0, 0, 64);
    o.logdir = logdir != NULL && *logdir != '\0' ? logdir : "build/test-logs";
    rc = tb_runner_run(groups, n, &o);
    return rc == 0 ? 0 : 1;
}
