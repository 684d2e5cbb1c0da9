/*
 * test_exits.c - one exit status per kind of failure, for every command
 * (src/cli/cli.h, ttsbuf(1) EXIT STATUS): bad usage is 2; a failure while
 * the work runs is 3, out of memory and a write that failed (a full disk:
 * /dev/full as the output) among them.  The out-of-memory cases run
 * build/ttsbuf-failalloc ($TB_TTSBUF_FAILALLOC, the Makefile's; the cases
 * are skipped without it), whose allocator fails the N-th allocation
 * (tests/failalloc/failalloc.c), for every N of a small run: whichever
 * allocation fails, the command says so and exits 3, or copes and
 * exits 0; it never crashes, and never says 2 (the user's mistake).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/cli/cli.h"
#include "tests.h"
#include "ttsbuf/error.h"

/* A scratch path of this process. */
static const char *scratch(const char *name)
{
    static char path[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof(path[k]), "/tmp/ttsbuf-exits-%d-%s", (int)getpid(), name);
    return path[k];
}

/* Runs "'bin' args 2>ERR" through sh with env first (args hold the
 * command's own stdout redirection); returns the exit status (fails the
 * case on a signal) and stderr in *se (owned). */
static int run_bin(const char *bin, const char *env, const char *args, char **se)
{
    char cmd[4096];
    const char *err = scratch("err");
    int st;
    snprintf(cmd, sizeof(cmd), "env %s '%s' %s 2>%s", env != NULL ? env : "", bin, args, err);
    st = system(cmd);
    if (!WIFEXITED(st))
        fail_msg("%s %s %s: ended by a signal (status %d)", env != NULL ? env : "", bin, args, st);
    *se = tb_test_slurp_str(err);
    remove(err);
    return WEXITSTATUS(st);
}

/* The table: each code the library returns is one exit status. */
static void codes_are_one_status_each(void **state)
{
    static const struct {
        int rc, code;
    } t[] = {
        {0, 0},         {TB_CLI_DONE, 0},  {TB_EINVAL, 2}, {TB_ERANGE, 2},      {TB_EFORMAT, 2},
        {TB_EEMPTY, 2}, {TB_ETOOBIG, 2},   {TB_ENOMEM, 3}, {TB_EIO, 3},         {TB_EDEVICE, 3},
        {TB_EBUSY, 3},  {TB_ECANCELED, 3}, {TB_EFULL, 3},  {TB_CLI_EFAILED, 3},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (tb_cli_exit(t[i].rc) != t[i].code)
            fail_msg("tb_cli_exit(%d) = %d, wanted %d", t[i].rc, tb_cli_exit(t[i].rc), t[i].code);
}

/* `ttsbuf ARGS` writing to a full disk: exit 3 and one line naming the
 * cause (want). */
static void expect_full(const char *args, const char *want)
{
    char *se;
    int code = run_bin(tb_test_bin(), NULL, args, &se);
    if (code != 3 || strncmp(se, "ttsbuf: ", 8) != 0 || strstr(se, want) == NULL)
        fail_msg("ttsbuf %s: exit %d, stderr '%s'; wanted exit 3 and '%s'", args, code, se, want);
    if (strchr(se, '\n') != NULL && strchr(se, '\n')[1] != '\0')
        fail_msg("ttsbuf %s: more than one line on stderr: '%s'", args, se);
    free(se);
}

#define NOSPACE "No space left on device"
#define STDOUT_FULL "cannot write standard output"
#define SYNTH "--synth tokens=40,tps=50,ttft=0.2"
#define MOCK "--mock --synth tokens=20,tps=1000,ttft=0"

/* sim, run, sweep and sim --import, each output on a full disk. */
static void full_disk_is_runtime(void **state)
{
    char imp[512], args[1024];
    static const struct {
        const char *args, *want;
    } t[] = {
        {"sim " SYNTH " >/dev/full", STDOUT_FULL ": " NOSPACE},
        {"sim " SYNTH " --json >/dev/full", STDOUT_FULL ": " NOSPACE},
        {"sim " SYNTH " --chunks >/dev/full", STDOUT_FULL ": " NOSPACE},
        {"sim " SYNTH " --record /dev/full", "--record: writing /dev/full failed: " NOSPACE},
        {"sim " SYNTH " --record - >/dev/full", "--record: writing - failed: " NOSPACE},
        {"sim " SYNTH " --svg /dev/full", "--svg: writing /dev/full failed: " NOSPACE},
        {"sim " SYNTH " --html /dev/full", "--html: writing /dev/full failed: " NOSPACE},
        {"sim " SYNTH " --audio wav:/dev/full", NOSPACE},
        {"run " MOCK " >/dev/full", STDOUT_FULL},
        {"run " MOCK " --json >/dev/full", STDOUT_FULL},
        {"run " MOCK " -q --record /dev/full", "--record: writing /dev/full failed: " NOSPACE},
        {"run " MOCK " -q --svg /dev/full", "--svg: writing /dev/full failed: " NOSPACE},
        {"run " MOCK " -q --html /dev/full", "--html: writing /dev/full failed: " NOSPACE},
        {"sweep " SYNTH " >/dev/full", STDOUT_FULL ": " NOSPACE},
        {"sweep " SYNTH " -q --csv /dev/full", "--csv: writing /dev/full failed: " NOSPACE},
        {"sweep " SYNTH " -q --json /dev/full", "--json: writing /dev/full failed: " NOSPACE},
        {"sweep " SYNTH " -q --svg /dev/full", "--svg: writing /dev/full failed: " NOSPACE},
        {"sweep " SYNTH " -q --html /dev/full", "--html: writing /dev/full failed: " NOSPACE},
        {"sim --help >/dev/full", STDOUT_FULL ": " NOSPACE},
        {"--version >/dev/full", STDOUT_FULL ": " NOSPACE},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        expect_full(t[i].args, t[i].want);
    snprintf(imp, sizeof(imp), "vllm:%s", tb_test_data("import/vllm/append.json"));
    snprintf(args, sizeof(args), "sim --import %s >/dev/full", imp);
    expect_full(args, STDOUT_FULL ": " NOSPACE);
    snprintf(args, sizeof(args), "sweep --import %s -q --csv /dev/full", imp);
    expect_full(args, "--csv: writing /dev/full failed: " NOSPACE);
}

/* bench against a served mock, and merge of what it wrote. */
static void full_disk_bench_merge(void **state)
{
    char log[128], base[256], args[1024], out[128], *se;
    int port, pid;
    static const char *const bench[] = {">/dev/full", "--json >/dev/full", "--csv >/dev/full"};
    static const char *const merge[] = {">/dev/full", "--json >/dev/full", "--csv >/dev/full"};
    (void)state;
    snprintf(log, sizeof(log), "%s", scratch("serve.log"));
    snprintf(out, sizeof(out), "%s", scratch("out"));
    pid = tb_test_serve_spawn("tps=2000,tokens=20,ttft=0", log, &port);
    snprintf(base, sizeof(base),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 1 --requests 2", port);
    for (size_t i = 0; i < sizeof(bench) / sizeof(bench[0]); i++) {
        snprintf(args, sizeof(args), "%s %s", base, bench[i]);
        expect_full(args, STDOUT_FULL ": " NOSPACE);
    }
    snprintf(args, sizeof(args), "%s -q --html /dev/full", base);
    expect_full(args, "--html: writing /dev/full failed: " NOSPACE);
    snprintf(args, sizeof(args), "%s -q --out %s", base, out);
    if (run_bin(tb_test_bin(), NULL, args, &se) != 0)
        fail_msg("ttsbuf %s: '%s'", args, se);
    free(se);
    assert_int_equal(tb_test_serve_stop(pid), 0);
    for (size_t i = 0; i < sizeof(merge) / sizeof(merge[0]); i++) {
        snprintf(args, sizeof(args), "merge %s %s", out, merge[i]);
        expect_full(args, STDOUT_FULL ": " NOSPACE);
    }
    snprintf(args, sizeof(args), "rm -rf %s %s", out, log);
    assert_int_equal(system(args), 0);
}

/* ---- out of memory ------------------------------------------------------ */

/* The binary whose allocator fails, or NULL (the case is skipped). */
static const char *failalloc(void)
{
    const char *b = getenv("TB_TTSBUF_FAILALLOC");
    return b != NULL && *b != '\0' && access(b, X_OK) == 0 ? b : NULL;
}

/* The count failalloc wrote at exit (TB_FAILALLOC_COUNT), removed; it
 * must be positive. */
static unsigned long read_count(void)
{
    char *c = tb_test_slurp_str(scratch("count"));
    unsigned long n = strtoul(c, NULL, 10);
    free(c);
    remove(scratch("count"));
    assert_true(n > 0);
    return n;
}

/* How many allocations `args` makes when none fails (it must succeed). */
static unsigned long allocations(const char *bin, const char *args)
{
    char env[256], *se;
    snprintf(env, sizeof(env), "TB_FAILALLOC_COUNT=%s", scratch("count"));
    if (run_bin(bin, env, args, &se) != 0)
        fail_msg("%s %s: '%s'", bin, args, se);
    free(se);
    return read_count();
}

/* The next allocation to fail after k of n: every one of the first 64,
 * then about 24 more spread over the rest (the same paths again and
 * again, by then). */
static unsigned long next_k(unsigned long k, unsigned long n)
{
    return k < 64 ? k + 1 : k + (n - 64) / 24 + 1;
}

/* What a run with the k-th allocation failed must say: 0 (it coped) or
 * 3 with one error line; never 2, never a signal (run_bin). */
static void check_oom(const char *what, unsigned long k, int code, const char *se)
{
    if (code == 0)
        return;
    if (code != 3 || strstr(se, "ttsbuf: ") == NULL)
        fail_msg("%s with allocation %lu failed: exit %d, stderr '%s'; wanted 0, or 3 and "
                 "an error",
                 what, k, code, se);
}

/* Fails each allocation of `ttsbuf args` in turn. */
static void oom_each(const char *args)
{
    const char *bin = failalloc();
    unsigned long n;
    if (bin == NULL)
        skip();
    n = allocations(bin, args);
    for (unsigned long k = 1; k <= n; k = next_k(k, n)) {
        char env[64], *se;
        int code;
        snprintf(env, sizeof(env), "TB_FAILALLOC=%lu", k);
        code = run_bin(bin, env, args, &se);
        check_oom(args, k, code, se);
        free(se);
    }
}

/* Each command line is a case of its own (its state: which one), so that
 * the runner can spread the cases over its shards. */
static int which(void **state)
{
    return *(const int *)*state;
}

static void oom_sim(void **state)
{
    char args[1024];
    switch (which(state)) {
    case 0: oom_each("sim " SYNTH " >/dev/null"); break;
    case 1:
        oom_each("sim " SYNTH " --json --chunks --record /dev/null --svg /dev/null --html "
                 "/dev/null >/dev/null");
        break;
    case 2:
        snprintf(args, sizeof(args), "sim --import vllm:%s >/dev/null",
                 tb_test_data("import/vllm/append.json"));
        oom_each(args);
        break;
    default:
        snprintf(args, sizeof(args), "sim --import vllm:%s --request 0 --json >/dev/null",
                 tb_test_data("import/vllm/append.json"));
        oom_each(args);
        break;
    }
}

static void oom_run(void **state)
{
    if (which(state) == 0)
        oom_each("run " MOCK " >/dev/null");
    else
        oom_each("run " MOCK " --json --record /dev/null --svg /dev/null --html /dev/null "
                 ">/dev/null");
}

static void oom_sweep(void **state)
{
    if (which(state) == 0)
        oom_each("sweep " SYNTH " --preroll 0,1 --threads 2 >/dev/null");
    else
        oom_each("sweep " SYNTH " --preroll 0,1 --threads 2 --json /dev/null --csv /dev/null "
                 "--svg /dev/null --html /dev/null >/dev/null");
}

/* bench against a served mock (0: the report, 1: every output), and (2)
 * merge of what a whole run wrote, both ways. */
static void oom_bench_merge(void **state)
{
    char log[128], out[128], args[1024], *se;
    int port, pid;
    if (failalloc() == NULL)
        skip();
    snprintf(log, sizeof(log), "%s", scratch("serve.log"));
    snprintf(out, sizeof(out), "%s", scratch("out"));
    pid = tb_test_serve_spawn("tps=2000,tokens=20,ttft=0", log, &port);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 1,2 --requests 2 --json "
             "--out %s --force --html /dev/null >/dev/null",
             port, out);
    if (which(state) == 0) {
        snprintf(args, sizeof(args),
                 "bench --base-url http://127.0.0.1:%d/v1 --model m -c 1 --requests 2 >/dev/null",
                 port);
        oom_each(args);
    } else if (which(state) == 1) {
        oom_each(args);
    } else {
        /* What merge reads: a whole run's records. */
        if (run_bin(failalloc(), NULL, args, &se) != 0)
            fail_msg("%s: '%s'", args, se);
        free(se);
    }
    assert_int_equal(tb_test_serve_stop(pid), 0);
    if (which(state) == 2) {
        snprintf(args, sizeof(args), "merge %s >/dev/null", out);
        oom_each(args);
        snprintf(args, sizeof(args), "merge %s --json >/dev/null", out);
        oom_each(args);
    }
    snprintf(args, sizeof(args), "rm -rf %s %s", out, log);
    assert_int_equal(system(args), 0);
}

/* serve with its k-th allocation failed (0: none; count: where the total
 * is written), asked for one stream by `ttsbuf run`: its exit status once
 * stopped with SIGINT (or once it ended by itself), its log in *log. */
static int serve_once(const char *bin, unsigned long k, const char *count, char **log)
{
    const char *path = scratch("serve-oom.log");
    char url[128], args[512], *se;
    int port = 0, st;
    pid_t pid, done = 0;
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char v[32];
        FILE *f = freopen(path, "w", stderr);
        (void)f;
        snprintf(v, sizeof(v), "%lu", k);
        setenv("TB_FAILALLOC", v, 1);
        if (count != NULL)
            setenv("TB_FAILALLOC_COUNT", count, 1);
        execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--synth", "tps=2000,tokens=20,ttft=0",
              (char *)NULL);
        _exit(127);
    }
    /* Bound ("listening on http://127.0.0.1:PORT/v1"), or ended. */
    for (int i = 0; i < 600 && port == 0 && done == 0; i++) {
        struct timespec ts = {0, 10000000};
        char *text, *p;
        nanosleep(&ts, NULL);
        text = tb_test_slurp_str(path);
        p = strstr(text, "http://127.0.0.1:");
        if (p != NULL)
            port = atoi(p + strlen("http://127.0.0.1:"));
        free(text);
        if (port == 0)
            done = waitpid(pid, &st, WNOHANG);
    }
    if (port == 0 && done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("serve with allocation %lu failed neither listened nor ended", k);
    }
    if (port != 0) {
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", port);
        snprintf(args, sizeof(args),
                 "run --base-url %s --model m -q --idle-timeout 2 --timeout 5 >/dev/null", url);
        (void)run_bin(tb_test_bin(), NULL, args, &se);
        free(se);
        if (tb_test_interrupt((int)pid, &st) != 0)
            fail_msg("serve with allocation %lu failed did not stop on SIGINT", k);
    }
    if (!WIFEXITED(st))
        fail_msg("serve with allocation %lu failed: ended by a signal (status %d)", k, st);
    *log = tb_test_slurp_str(path);
    remove(path);
    return WEXITSTATUS(st);
}

static void oom_serve(void **state)
{
    const char *bin = failalloc();
    unsigned long n;
    char *log;
    (void)state;
    if (bin == NULL)
        skip();
    assert_int_equal(serve_once(bin, 0, scratch("count"), &log), 0);
    free(log);
    n = read_count();
    for (unsigned long k = 1; k <= n; k = next_k(k, n)) {
        int code = serve_once(bin, k, NULL, &log);
        check_oom("serve", k, code, log);
        free(log);
    }
}

int tb_test_exits(void)
{
    static const int nth[] = {0, 1, 2, 3};
    const struct CMUnitTest t[] = {
        cmocka_unit_test(codes_are_one_status_each),
        cmocka_unit_test(full_disk_is_runtime),
        cmocka_unit_test(full_disk_bench_merge),
        {"oom_sim(plain)", oom_sim, NULL, NULL, (void *)&nth[0]},
        {"oom_sim(outputs)", oom_sim, NULL, NULL, (void *)&nth[1]},
        {"oom_sim(import)", oom_sim, NULL, NULL, (void *)&nth[2]},
        {"oom_sim(import request)", oom_sim, NULL, NULL, (void *)&nth[3]},
        {"oom_run(plain)", oom_run, NULL, NULL, (void *)&nth[0]},
        {"oom_run(outputs)", oom_run, NULL, NULL, (void *)&nth[1]},
        {"oom_sweep(plain)", oom_sweep, NULL, NULL, (void *)&nth[0]},
        {"oom_sweep(outputs)", oom_sweep, NULL, NULL, (void *)&nth[1]},
        {"oom_bench(plain)", oom_bench_merge, NULL, NULL, (void *)&nth[0]},
        {"oom_bench(outputs)", oom_bench_merge, NULL, NULL, (void *)&nth[1]},
        {"oom_merge", oom_bench_merge, NULL, NULL, (void *)&nth[2]},
        cmocka_unit_test(oom_serve),
    };
    return TB_RUN_GROUP("exits", t);
}
