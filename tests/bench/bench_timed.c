/*
 * bench_timed.c - the time-based chunk policies (cartesia, idle), whose
 * minimum TPS re-cuts the stream at the rates its search tests
 * (recut.c), against sentence, whose closed form needs no search: the
 * command of issue 42, `./ttsbuf sim --synth tps=50,tokens=10000,seed=1
 * --chunk P` (wall time of the process, best of REPS; goal: cartesia and
 * idle within 5x sentence), and the same simulation in this process
 * (tb_sim_run with its pre-roll curve: the searches without the
 * process's start and the synthesis of the stream).
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "ttsbuf.h"

#define REPS 5

double bench_command_seconds(char *const argv[], int reps)
{
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
        double t0, dt;
        int st;
        pid_t pid;
        fflush(stdout); /* the child must not print what this process buffered */
        t0 = bench_now();
        pid = fork();
        if (pid < 0)
            return -1.0;
        if (pid == 0) {
            if (freopen("/dev/null", "w", stdout) == NULL)
                _exit(127);
            execv(argv[0], argv);
            _exit(127);
        }
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return -1.0;
        dt = bench_now() - t0;
        if (dt < best)
            best = dt;
    }
    return best;
}

/* `./ttsbuf sim ... --chunk p`: wall seconds, best of REPS. */
static double command_seconds(const char *p)
{
    char *argv[] = {"./ttsbuf", "sim",     "--synth", "tps=50,tokens=10000,seed=1",
                    "--chunk",  (char *)p, NULL};
    return bench_command_seconds(argv, REPS);
}

double bench_sim_seconds(const struct tb_stream *s, const struct tb_sim_opts *o, int reps,
                         struct tb_sim_result *r)
{
    struct tb_clock clk;
    char err[256];
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
        tb_clock_virtual_init(&clk);
        double t0 = bench_now();
        if (tb_sim_run(s, o, &clk, NULL, NULL, r, err, sizeof(err)) != 0)
            bench_die("sim", err);
        double dt = bench_now() - t0;
        if (dt < best)
            best = dt;
    }
    return best;
}

/* tb_sim_run of s under policy p: wall seconds, best of REPS. */
static double sim_seconds(enum tb_chunk_policy p, const struct tb_stream *s)
{
    struct tb_sim_opts o;
    struct tb_sim_result r;
    tb_sim_opts_default(&o);
    o.seg.policy = p;
    return bench_sim_seconds(s, &o, REPS, &r);
}

void bench_timed(void)
{
    static const enum tb_chunk_policy pols[] = {TB_CHUNK_SENTENCE, TB_CHUNK_CARTESIA,
                                                TB_CHUNK_IDLE};
    struct tb_synth_spec spec;
    struct tb_stream s;
    double cmd0 = 0.0, sim0 = 0.0;
    tb_synth_default(&spec);
    spec.tps = 50;
    spec.tokens = 10000;
    spec.seed = 1;
    tb_stream_init(&s);
    if (tb_synth_generate(&spec, &s) != 0)
        bench_die("timed", "synth: out of memory");
    printf("timed: ttsbuf sim --synth tps=50,tokens=10000,seed=1 --chunk P, best of %d\n"
           "       (the command's wall time; in this process, the simulation alone)\n",
           REPS);
    for (size_t i = 0; i < 3; i++) {
        const char *name = tb_seg_policy_name(pols[i]);
        double cmd = command_seconds(name), sim = sim_seconds(pols[i], &s);
        if (i == 0) {
            cmd0 = cmd;
            sim0 = sim;
            printf("  %-9s command %7.4f s   in process %7.4f s\n", name, cmd, sim);
        } else if (cmd < 0.0 || cmd0 < 0.0) {
            printf("  %-9s (./ttsbuf did not run: build it first)   in process %7.4f s "
                   "(%.1fx)\n",
                   name, sim, sim / sim0);
        } else {
            printf("  %-9s command %7.4f s   in process %7.4f s   %4.2fx sentence's command "
                   "(goal <= 5x: %s; in process %.1fx)\n",
                   name, cmd, sim, cmd / cmd0, cmd <= 5.0 * cmd0 ? "met" : "NOT met", sim / sim0);
        }
    }
    tb_stream_free(&s);
}
