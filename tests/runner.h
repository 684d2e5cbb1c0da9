/*
 * runner.h - runs the suite's groups side by side, each in a process of its
 * own, and reports them (tests/runner.c; tests/main.c holds the table).
 *
 * Why processes: a group is the unit of isolation the suite can rely on.
 * Each runs in a child forked before any thread exists, in a process group
 * of its own (so a timeout or ^C stops the servers it started too), with
 * its own TMPDIR, stdout and stderr in a log file, and its own pid, which
 * names every /tmp path and the PulseAudio and serve instances the group
 * starts; its ports are ephemeral.  A group that crashes or hangs costs its
 * own cases only.
 *
 * Called once, from main's thread, before any thread is started.
 */
#ifndef TTSBUF_TESTS_RUNNER_H
#define TTSBUF_TESTS_RUNNER_H

#include <stddef.h>

/* The group needs the machine to itself: it judges real time against a
 * capture or holds thousands of connections.  It runs while no other
 * group runs. */
#define TB_GROUP_ALONE 1u
/* The group runs after every other group has ended (schema validates
 * what the others wrote). */
#define TB_GROUP_LAST 2u
/* The group bounds real-time events (a first byte, a turn's send, a close
 * seen, what a capture heard): "@timing" in TB_TEST_ONLY names them all,
 * for the check beside busy processes (TB_TEST_BUSY). */
#define TB_GROUP_TIMING 4u

struct tb_group {
    const char *name;
    int (*run)(void); /* returns its failed cases (cmocka) */
    unsigned flags;   /* TB_GROUP_* */
    /* Its usual wall time in seconds on a 2-core machine: the longest
     * start first, so that the run ends soon after its longest group. */
    double expect_s;
    /* Processes the group's cases are split over (0 or 1: one), case i
     * in shard i mod shards (tb_test_run_group): for a group whose cases
     * are long and independent, so that it does not hold up the run. */
    int shards;
};

struct tb_runner_opts {
    const char *only;   /* "a,b": those groups only ("@timing": the TIMING
                           ones); NULL or "": all */
    int jobs;           /* groups at once, >= 1 */
    int busy;           /* CPU-bound processes run beside the groups, >= 0 */
    double timeout_s;   /* a group running longer is killed (and fails) */
    const char *logdir; /* GROUP.log files; made empty first */
};

/* Cases run so far in this process (TB_RUN_GROUP counts them). */
extern int tb_tests_total;

/*
 * Runs the selected groups, at most opts->jobs at once, and prints one
 * line per group as it ends, then the failures' logs in full, the slowest
 * ten and the totals ("tests: N passed, N failed" last).  Returns the
 * number of groups that failed, crashed or timed out (0: all passed), or
 * -1 when nothing could be started (a message is printed).
 */
int tb_runner_run(const struct tb_group *g, size_t n, const struct tb_runner_opts *opts);

/* The same groups run one after another in this very process, as before
 * the runner (TB_TEST_INPROC=1: for a debugger).  Returns the failed cases. */
int tb_runner_inproc(const struct tb_group *g, size_t n, const char *only);

/* Whether group g is in the comma-separated list only (NULL or "": all;
 * "@timing": every TB_GROUP_TIMING group). */
int tb_runner_selected(const char *only, const struct tb_group *g);

#endif
