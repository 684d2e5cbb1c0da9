/*
 * proc.c - running a command line for the end-to-end tests (see proc.h).
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "tclock.h"
#include "tests.h"

void proc_dir(struct proc *p)
{
    static int seq;
    char cmd[512];
    memset(p, 0, sizeof(*p));
    snprintf(p->dir, sizeof(p->dir), "/tmp/ttsbuf-fault-%d-%d", (int)getpid(), seq++);
    snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", p->dir, p->dir);
    assert_int_equal(system(cmd), 0);
}

char *proc_file(const struct proc *p, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", p->dir, name);
    return tb_test_slurp_str(path);
}

/* Runs `sh -c "exec <cmd>"` with SIGPIPE back at its default (the test
 * process ignores it, and an ignored signal stays ignored across exec),
 * stdout and stderr to files; `stdin_closed_pipe` gives it a stdout pipe
 * whose reader has gone.  Waits, collecting the peak RSS. */
void proc_exec(struct proc *p, const char *cmd, int broken_stdout, int sig, double sig_after)
{
    char full[4096];
    struct rusage ru;
    int st, pfd[2] = {-1, -1};
    double t0 = tclock_now();
    pid_t pid;
    snprintf(full, sizeof(full), "exec %s 2>%s/err", cmd, p->dir);
    if (!broken_stdout)
        snprintf(full + strlen(full), sizeof(full) - strlen(full), " >%s/out", p->dir);
    else
        assert_int_equal(pipe(pfd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        if (broken_stdout) {
            close(pfd[0]);
            dup2(pfd[1], STDOUT_FILENO);
            close(pfd[1]);
        }
        execl("/bin/sh", "sh", "-c", full, (char *)NULL);
        _exit(127);
    }
    if (broken_stdout) {
        close(pfd[0]); /* the reader goes before anything is written */
        close(pfd[1]);
    }
    for (int i = 0; sig != 0 && p->sig_when != NULL && !atomic_load(p->sig_when) && i < 6000; i++)
        tclock_sleep(0.01); /* up to 60 s; a peer that never got there fails its checks */
    if (sig != 0) {
        struct timespec ts = {(time_t)sig_after,
                              (long)((sig_after - (double)(time_t)sig_after) * 1e9)};
        nanosleep(&ts, NULL);
        kill(pid, sig);
    }
    assert_int_equal(wait4(pid, &st, 0, &ru), pid);
    p->secs = tclock_now() - t0;
    p->maxrss = ru.ru_maxrss;
    p->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    p->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    p->out = proc_file(p, "out");
    p->err = proc_file(p, "err");
    p->trace = proc_file(p, "t.jsonl");
}

void proc_free(struct proc *p)
{
    char cmd[512];
    free(p->out);
    free(p->err);
    free(p->trace);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", p->dir);
    if (system(cmd) != 0)
        print_message("cannot remove %s\n", p->dir);
}
