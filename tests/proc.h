/*
 * proc.h - runs a command line the way the end-to-end tests need: through
 * sh, stdout and stderr to files in a directory of its own, optionally a
 * stdout pipe whose reader has gone or a signal after a delay; then its
 * exit status, the signal that killed it, its peak RSS (wait4) and wall
 * time, and the files it wrote.  Failures end the current case.
 */
#ifndef TTSBUF_TESTS_PROC_H
#define TTSBUF_TESTS_PROC_H

#include <stdatomic.h>

struct proc {
    int code;     /* exit status; -1 when killed by a signal */
    int signal;   /* the signal that killed it, or 0 */
    long maxrss;  /* peak resident set, KiB */
    double secs;  /* wall time */
    char dir[64]; /* out, err, t.jsonl */
    char *out, *err, *trace;
    /* Set before proc_exec: its sig_after counts from when *sig_when
     * turns non-zero (a peer reaching the step under test), not from the
     * start, which a sanitizer-built binary on a busy machine may take
     * longer than sig_after to get through.  NULL: from the start. */
    const atomic_int *sig_when;
};

/* A new, empty directory for p (p is zeroed). */
void proc_dir(struct proc *p);

/* The file name in p's directory ("" when it does not exist; caller frees). */
char *proc_file(const struct proc *p, const char *name);

/* Runs `sh -c "exec <cmd>"` in p's directory (stdout to out, stderr to
 * err; broken_stdout: a pipe whose reader has gone), with SIGPIPE back at
 * its default; sig != 0: sends sig after sig_after seconds.  Waits, then
 * reads out, err and t.jsonl into p. */
void proc_exec(struct proc *p, const char *cmd, int broken_stdout, int sig, double sig_after);

/* Frees p's texts and removes its directory. */
void proc_free(struct proc *p);

#endif
