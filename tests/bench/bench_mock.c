/*
 * bench_mock.c - the mock provider in a child process, for the benchmarks that
 * stream over loopback, and the helpers the bench files share.
 *
 * Why a process and not a thread: getrusage then splits CPU time cleanly
 * (the child's RUSAGE_SELF is the server, the parent's is the client),
 * and the two compete for the two cores the way a real client and server
 * on one box would.  The child reports through a pipe: first its port
 * (or -1), then, once SIGTERM has stopped tb_serve_run, its statistics
 * and the CPU time it spent inside tb_serve_run.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "ttsbuf.h"

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_cpu(int who, double *sys)
{
    struct rusage ru;
    double s;
    if (getrusage(who, &ru) != 0)
        bench_die("getrusage", strerror(errno));
    s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    if (sys != NULL)
        *sys = s;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + s;
}

_Noreturn void bench_die(const char *what, const char *detail)
{
    fprintf(stderr, "bench: %s: %s\n", what, detail);
    exit(1);
}

void bench_synth(double tps, double ttft, uint32_t tokens, struct tb_stream *s)
{
    struct tb_synth_spec spec;
    int rc;
    tb_synth_default(&spec);
    spec.tps = tps;
    spec.ttft = ttft;
    spec.tokens = tokens;
    spec.jitter = 0;
    spec.seed = 42;
    rc = tb_synth_generate(&spec, s);
    if (rc != 0)
        bench_die("synth", tb_strerror(rc));
}

static struct tb_serve *child_srv; /* for the SIGTERM handler */

static void on_term(int sig)
{
    (void)sig;
    tb_serve_stop(child_srv); /* async-signal-safe */
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    char *b = p;
    while (n > 0) {
        ssize_t r = read(fd, b, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

/* The child: never returns. */
static void child_main(const struct tb_stream *s, size_t max_conns, unsigned threads, int fd)
{
    struct tb_serve_opts o;
    struct bench_mock_result r;
    struct sigaction sa;
    char err[256];
    int port = -1;
    double c0, s0, s1;

    memset(&o, 0, sizeof(o));
    tb_faults_init(&o.faults);
    o.host = "127.0.0.1";
    o.port = 0;
    o.stream = s;
    o.max_conns = max_conns;
    o.threads = threads;
    if (tb_serve_create(&o, &child_srv, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench: mock: %s\n", err);
        write_all(fd, &port, sizeof(port));
        _exit(1);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL); /* before the port: the parent stops us after */
    port = tb_serve_port(child_srv);
    if (write_all(fd, &port, sizeof(port)) != 0)
        _exit(1);
    memset(&r, 0, sizeof(r));
    c0 = bench_cpu(RUSAGE_SELF, &s0);
    if (tb_serve_run(child_srv) != 0)
        fprintf(stderr, "bench: mock: tb_serve_run failed\n");
    r.cpu_s = bench_cpu(RUSAGE_SELF, &s1) - c0;
    r.sys_s = s1 - s0;
    tb_serve_stats(child_srv, &r.st);
    tb_serve_destroy(child_srv);
    _exit(write_all(fd, &r, sizeof(r)) == 0 ? 0 : 1);
}

void bench_nofile_max(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

void bench_mock_start(const struct tb_stream *s, struct bench_mock *m)
{
    bench_mock_start_conns(s, 0, 1, m);
}

void bench_mock_start_conns(const struct tb_stream *s, size_t max_conns, unsigned threads,
                            struct bench_mock *m)
{
    int p[2];
    fflush(NULL); /* or the child would inherit, and repeat, buffered output */
    if (pipe(p) != 0)
        bench_die("pipe", strerror(errno));
    m->pid = fork();
    if (m->pid < 0)
        bench_die("fork", strerror(errno));
    if (m->pid == 0) {
        close(p[0]);
        child_main(s, max_conns, threads, p[1]);
    }
    close(p[1]);
    m->fd = p[0];
    if (read_all(m->fd, &m->port, sizeof(m->port)) != 0 || m->port <= 0)
        bench_die("mock", "the mock provider did not start");
}

void bench_mock_stop(struct bench_mock *m, struct bench_mock_result *r)
{
    int status;
    kill(m->pid, SIGTERM);
    if (read_all(m->fd, r, sizeof(*r)) != 0)
        bench_die("mock", "no statistics from the mock provider");
    close(m->fd);
    if (waitpid(m->pid, &status, 0) != m->pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_die("mock", "the mock provider did not exit cleanly");
}
