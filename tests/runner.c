/*
 * runner.c - the suite's groups side by side, one process each (runner.h
 * says why).  The parent forks, waits and reports; it never runs a case.
 *
 * Scheduling: the groups that need the machine alone first, one at a
 * time, then the others, longest expected first (so the run ends soon
 * after its longest group, not after a long group started last), at most
 * `jobs` at once, then the LAST groups.  The parent sleeps in sigtimedwait
 * on SIGCHLD (and SIGINT/SIGTERM, which stop every group), waking for the
 * nearest timeout only.
 */
#define _DEFAULT_SOURCE   /* wait4 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "tests.h"

enum { PENDING, RUNNING, DONE, SKIPPED };

struct slot {
    const struct tb_group *g;
    int shard, shards; /* this process runs shard of shards (0 of 1: all) */
    char name[80];     /* the group's name, and "[I/K]" for a shard */
    int state;
    pid_t pid;
    double start, wall, cpu;
    int cases, failed; /* from the child's result file; -1 unknown */
    int status;        /* wait status */
    int timed_out;
};

static int listed(const char *only, const char *name)
{
    size_t n = strlen(name);
    const char *p = only;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
        p += n;
    }
    return 0;
}

int tb_runner_selected(const char *only, const struct tb_group *g)
{
    if (only == NULL || *only == '\0')
        return 1;
    return listed(only, g->name) || ((g->flags & TB_GROUP_TIMING) && listed(only, "@timing"));
}

int tb_test_run_group(const char *name, const struct CMUnitTest *cases, size_t n,
                      CMFixtureFunction setup, CMFixtureFunction teardown)
{
    const char *sh = getenv("TB_TEST_SHARD");
    struct CMUnitTest *mine;
    unsigned i = 0, k = 1;
    size_t m = 0;
    int failed;
    if (sh != NULL && (sscanf(sh, "%u/%u", &i, &k) != 2 || k == 0 || i >= k)) {
        fprintf(stderr, "tests: TB_TEST_SHARD=%s: want I/K with I < K\n", sh);
        return 1;
    }
    mine = malloc((n > 0 ? n : 1) * sizeof(*mine));
    if (mine == NULL)
        return 1;
    for (size_t c = 0; c < n; c++)
        if (c % k == i)
            mine[m++] = cases[c];
    tb_tests_total += (int)m;
    failed = _cmocka_run_group_tests(name, mine, m, setup, teardown);
    free(mine);
    return failed;
}

int tb_runner_inproc(const struct tb_group *g, size_t n, const char *only)
{
    int failed = 0, ran = 0;
    for (size_t i = 0; i < n; i++) {
        if (!tb_runner_selected(only, &g[i]))
            continue;
        setenv("TB_TEST_GROUP", g[i].name, 1); /* names the copies */
        failed += g[i].run();
        ran++;
    }
    printf("\n%d test groups run\n", ran);
    printf("tests: %d passed, %d failed\n", tb_tests_total - failed, failed);
    return failed;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The child: its own process group, log and TMPDIR; runs the group and
 * leaves "CASES FAILED" in GROUP.res.  exit(), not _exit(): the sanitizers'
 * leak check runs at exit, per group. */
static void child(const struct slot *s, const char *logdir, const char *tmproot)
{
    const struct tb_group *g = s->g;
    char path[4200], tmp[4200];
    sigset_t none;
    int fd;
    FILE *res;
    int failed;
    setpgid(0, 0);
    sigemptyset(&none);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (s->shards > 1) {
        char v[32];
        snprintf(v, sizeof(v), "%d/%d", s->shard, s->shards);
        setenv("TB_TEST_SHARD", v, 1);
    }
    snprintf(path, sizeof(path), "%s/%s.log", logdir, s->name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
        _exit(125);
    close(fd);
    snprintf(tmp, sizeof(tmp), "%s/%s", tmproot, s->name);
    if (mkdir(tmp, 0700) == 0)
        setenv("TMPDIR", tmp, 1);
    setenv("TB_TEST_GROUP", g->name, 1);
    failed = g->run();
    snprintf(path, sizeof(path), "%s/%s.res", logdir, s->name);
    res = fopen(path, "w");
    if (res != NULL) {
        fprintf(res, "%d %d\n", tb_tests_total, failed);
        fclose(res);
    }
    fflush(NULL);
    exit(failed == 0 ? 0 : 1);
}

static int start(struct slot *s, const struct tb_runner_opts *o, const char *tmproot)
{
    pid_t pid;
    fflush(NULL); /* nothing buffered is printed twice */
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "tests: cannot start group %s: %s\n", s->name, strerror(errno));
        return -1;
    }
    if (pid == 0)
        child(s, o->logdir, tmproot);
    setpgid(pid, pid); /* also here: no race with a kill before the child's own */
    s->pid = pid;
    s->state = RUNNING;
    s->start = now_s();
    return 0;
}

static void read_result(struct slot *s, const char *logdir)
{
    char path[4200];
    FILE *f;
    s->cases = s->failed = -1;
    snprintf(path, sizeof(path), "%s/%s.res", logdir, s->name);
    f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fscanf(f, "%d %d", &s->cases, &s->failed) != 2)
        s->cases = s->failed = -1;
    fclose(f);
}

static int slot_failed(const struct slot *s)
{
    return s->timed_out || !WIFEXITED(s->status) || WEXITSTATUS(s->status) != 0 || s->failed != 0;
}

static void print_line(const struct slot *s)
{
    char what[128];
    if (s->timed_out)
        snprintf(what, sizeof(what), "timed out (killed)");
    else if (WIFSIGNALED(s->status))
        snprintf(what, sizeof(what), "killed by signal %d", WTERMSIG(s->status));
    else if (s->cases < 0)
        snprintf(what, sizeof(what), "ended (status %d) before its summary",
                 WEXITSTATUS(s->status));
    else if (s->failed > 0)
        snprintf(what, sizeof(what), "%d of %d cases failed", s->failed, s->cases);
    else if (WEXITSTATUS(s->status) != 0)
        snprintf(what, sizeof(what), "%d cases passed, then it exited %d (a sanitizer's report?)",
                 s->cases, WEXITSTATUS(s->status));
    else
        snprintf(what, sizeof(what), "%d cases", s->cases);
    printf("%-4s %-10s %7.1f s wall %6.1f s cpu   %s\n", slot_failed(s) ? "FAIL" : "ok", s->name,
           s->wall, s->cpu, what);
    fflush(stdout);
}

/* The group whose process pid ended: its line.  Returns 1, or 0 when pid
 * is no group's (a busy process). */
static int reap(struct slot *v, size_t n, pid_t pid, int status, const struct rusage *ru,
                const struct tb_runner_opts *o, const char *tmproot)
{
    for (size_t i = 0; i < n; i++) {
        char tmp[4200];
        struct slot *s = &v[i];
        if (s->state != RUNNING || s->pid != pid)
            continue;
        s->state = DONE;
        s->status = status;
        s->wall = now_s() - s->start;
        /* The group's own CPU and that of every process it waited for
         * (the binaries it ran, the servers it stopped). */
        s->cpu = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec * 1e-6 +
                 (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec * 1e-6;
        kill(-pid, SIGKILL); /* anything the group left running in its process group */
        read_result(s, o->logdir);
        if (!slot_failed(s)) {
            snprintf(tmp, sizeof(tmp), "%s/%s", tmproot, s->name);
            rm_tree(tmp);
        }
        print_line(s);
        return 1;
    }
    return 0;
}

/* The next group to start, or NULL: alone groups first, each by itself
 * (its own shards beside it: alone is the group, not each process); then
 * the others while fewer than jobs run; LAST when nothing else is left.
 * alone: the ALONE group running, or NULL.  v is in start order already. */
static struct slot *next(struct slot *v, size_t n, int running, const struct tb_group *alone,
                         int jobs)
{
    int other_left = 0;
    if (running >= jobs)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (v[i].state == PENDING && (v[i].g->flags & TB_GROUP_ALONE))
            return running == 0 || v[i].g == alone ? &v[i] : NULL;
    if (alone != NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i].state != PENDING || (v[i].g->flags & TB_GROUP_LAST))
            continue;
        return &v[i];
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].state == RUNNING && !(v[i].g->flags & TB_GROUP_LAST))
            other_left = 1;
    if (other_left)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (v[i].state == PENDING)
            return &v[i];
    return NULL;
}

static int by_order(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    int ka = (x->g->flags & TB_GROUP_LAST) ? 2 : (x->g->flags & TB_GROUP_ALONE) ? 0 : 1;
    int kb = (y->g->flags & TB_GROUP_LAST) ? 2 : (y->g->flags & TB_GROUP_ALONE) ? 0 : 1;
    if (ka != kb)
        return ka - kb;
    return (x->g->expect_s / x->shards < y->g->expect_s / y->shards) -
           (x->g->expect_s / x->shards > y->g->expect_s / y->shards);
}

static int by_wall(const void *a, const void *b)
{
    const struct slot *x = *(const struct slot *const *)a, *y = *(const struct slot *const *)b;
    return (x->wall < y->wall) - (x->wall > y->wall);
}

/* The CPU-bound processes of opts->busy: each spins until killed.  Their
 * pids in pids[0..n); returns n. */
static int busy_start(int n, pid_t *pids)
{
    int k = 0;
    fflush(NULL);
    for (; k < n; k++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0) {
            volatile unsigned long x = 0;
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            for (;;)
                x++;
        }
        pids[k] = pid;
    }
    return k;
}

static void busy_stop(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
}

static void stop_all(struct slot *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].state == RUNNING)
            kill(-v[i].pid, SIGKILL);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
}

static void print_log(const struct slot *s, const char *logdir)
{
    char path[4200], buf[8192];
    size_t got;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s.log", logdir, s->name);
    printf("\n======== %s: %s ========\n", s->name, path);
    f = fopen(path, "r");
    if (f == NULL) {
        printf("(no log: %s)\n", strerror(errno));
        return;
    }
    while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, got, stdout);
    fclose(f);
    if (s->timed_out)
        printf("(killed after %.0f s: TB_TEST_TIMEOUT)\n", s->wall);
}

static void summary(struct slot *v, size_t n, const struct tb_runner_opts *o, double wall)
{
    struct slot *order[256];
    size_t m = 0;
    int passed = 0, failed = 0, groups_failed = 0;
    double cpu = 0, sum_wall = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].state != DONE)
            continue;
        if (slot_failed(&v[i])) {
            groups_failed++;
            print_log(&v[i], o->logdir);
        }
        if (m < sizeof(order) / sizeof(order[0]))
            order[m++] = &v[i];
        cpu += v[i].cpu;
        sum_wall += v[i].wall;
        if (v[i].cases >= 0) {
            passed += v[i].cases - v[i].failed;
            failed += v[i].failed;
        }
        /* A group that died before its summary: its cases are unknown;
         * count it as one failure rather than none. */
        if (v[i].cases < 0 || (v[i].failed == 0 && slot_failed(&v[i])))
            failed++;
    }
    qsort(order, m, sizeof(order[0]), by_wall);
    printf("\nslowest groups:");
    for (size_t i = 0; i < m && i < 10; i++)
        printf("%s %s %.1f s (cpu %.1f)", i == 0 ? "" : ",", order[i]->name, order[i]->wall,
               order[i]->cpu);
    printf("\n%zu test groups run, %d at a time: %.1f s wall, %.1f s cpu (the groups' walls "
           "add up to %.1f s)%s\n",
           m, o->jobs, wall, cpu, sum_wall, groups_failed ? "; logs of the failures above" : "");
    printf("tests: %d passed, %d failed\n", passed, failed);
}

int tb_runner_run(const struct tb_group *g, size_t n, const struct tb_runner_opts *o)
{
    struct slot v[256];
    size_t m = 0;
    int running = 0, stopped = 0, rc = 0, busy;
    const struct tb_group *alone = NULL; /* the ALONE group running */
    pid_t busy_pids[64];
    char tmproot[64];
    sigset_t set, old;
    double t0 = now_s();
    for (size_t i = 0; i < n; i++) {
        int k = g[i].shards > 1 ? g[i].shards : 1;
        if (!tb_runner_selected(o->only, &g[i]))
            continue;
        for (int j = 0; j < k && m < sizeof(v) / sizeof(v[0]); j++, m++) {
            memset(&v[m], 0, sizeof(v[m]));
            v[m].g = &g[i];
            v[m].shard = j;
            v[m].shards = k;
            if (k > 1)
                snprintf(v[m].name, sizeof(v[m].name), "%s.%d", g[i].name, j + 1);
            else
                snprintf(v[m].name, sizeof(v[m].name), "%s", g[i].name);
            v[m].state = PENDING;
        }
    }
    qsort(v, m, sizeof(v[0]), by_order);
    rm_tree(o->logdir);
    if (mkdir(o->logdir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "tests: cannot make %s: %s\n", o->logdir, strerror(errno));
        return -1;
    }
    snprintf(tmproot, sizeof(tmproot), "/tmp/ttsbuf-tests-%d", (int)getpid());
    rm_tree(tmproot);
    if (mkdir(tmproot, 0700) != 0) {
        fprintf(stderr, "tests: cannot make %s: %s\n", tmproot, strerror(errno));
        return -1;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, &old);
    busy = busy_start(o->busy < 64 ? o->busy : 64, busy_pids);
    printf("%zu test groups, %d at a time; logs in %s\n", m, o->jobs, o->logdir);
    if (busy > 0)
        printf("%d CPU-bound processes run beside them (TB_TEST_BUSY)\n", busy);
    for (;;) {
        struct slot *s;
        struct rusage ru;
        struct timespec wait_ts;
        siginfo_t si;
        double nearest = 3600;
        int status, sig;
        pid_t pid;
        while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0)
            running -= reap(v, m, pid, status, &ru, o, tmproot);
        alone = NULL;
        for (size_t i = 0; i < m; i++)
            if (v[i].state == RUNNING && (v[i].g->flags & TB_GROUP_ALONE))
                alone = v[i].g;
        while (!stopped && (s = next(v, m, running, alone, o->jobs)) != NULL) {
            if (start(s, o, tmproot) != 0) {
                s->state = SKIPPED;
                rc = 1;
                continue;
            }
            running++;
            if (s->g->flags & TB_GROUP_ALONE)
                alone = s->g;
        }
        if (running == 0)
            break;
        for (size_t i = 0; i < m; i++) {
            double left;
            if (v[i].state != RUNNING)
                continue;
            left = v[i].start + o->timeout_s - now_s();
            if (left <= 0 && !v[i].timed_out) {
                v[i].timed_out = 1;
                kill(-v[i].pid, SIGKILL);
            }
            if (left > 0 && left < nearest)
                nearest = left;
        }
        wait_ts.tv_sec = (time_t)nearest;
        wait_ts.tv_nsec = (long)((nearest - (double)wait_ts.tv_sec) * 1e9);
        sig = sigtimedwait(&set, &si, &wait_ts);
        if (sig == SIGINT || sig == SIGTERM) {
            fprintf(stderr, "tests: interrupted: stopping every group\n");
            stop_all(v, m);
            stopped = 1;
            break;
        }
    }
    busy_stop(busy_pids, busy);
    sigprocmask(SIG_SETMASK, &old, NULL);
    summary(v, m, o, now_s() - t0);
    for (size_t i = 0; i < m; i++)
        if (v[i].state == DONE && slot_failed(&v[i]))
            rc++;
    if (rc == 0)
        rm_tree(tmproot);
    else
        printf("temporary files of the failed groups: %s/GROUP\n", tmproot);
    return stopped ? -1 : rc;
}
