/*
 * bench.h - what the benchmark's files share (tests/bench/; `make bench`).
 *
 * bench.c holds main and the in-memory figures; bench_serve.c the concurrency
 * figure (N streams from one libcurl multi thread against the mock
 * provider); bench_live.c the CPU cost of ttsbuf's own live client path.  The
 * mock provider runs in a child process (bench_mock.c), so the kernel accounts
 * its CPU time apart from the client's.  bench_sweep.c: the sweep's
 * event-simulations per second.  bench_fair.c: the mock's fairness, a
 * normal request's first event beside clients reading a flood.
 * bench_client.c: bench's accuracy and CPU beside the openai SDK;
 * bench_calls.c: the calls one bench process holds at once; both score
 * streams against the mock's schedule with bench_score.c.  bench_base.c:
 * this build against an older one, their core, sim, trace and sweep
 * figures run alternately.  bench_timed.c: the time-based policies'
 * simulation against sentence's.  bench_memory.c: bench's peak RSS over
 * a run and one ten times longer.
 *
 * Everything here dies with a one-line message on failure: a benchmark
 * that cannot set itself up has nothing to report.
 */
#ifndef TTSBUF_TESTS_BENCH_H
#define TTSBUF_TESTS_BENCH_H

#include <stdint.h>
#include <sys/types.h>

#include "ttsbuf/serve.h"
#include "ttsbuf/stream.h"

/* CLOCK_MONOTONIC, s. */
double bench_now(void);

/* CPU time (user + system), s, of getrusage(who): RUSAGE_SELF,
 * RUSAGE_THREAD; the system part in *sys unless sys is NULL. */
double bench_cpu(int who, double *sys);

/* Prints "bench: what: detail" and exits 1. */
_Noreturn void bench_die(const char *what, const char *detail);

/* A synthetic stream with exact timing: jitter 0, one token per event,
 * seed 42. */
void bench_synth(double tps, double ttft, uint32_t tokens, struct tb_stream *s);

/* The mock provider (tb_serve on 127.0.0.1, an ephemeral port) serving s
 * in a child process forked from a single-threaded parent. */
struct bench_mock {
    pid_t pid;
    int port;
    int fd; /* the child's result pipe */
};

struct bench_mock_result {
    struct tb_serve_stats st;
    double cpu_s, sys_s; /* the child's CPU time inside tb_serve_run, its
                          * system part */
};

void bench_mock_start(const struct tb_stream *s, struct bench_mock *m);

/* bench_mock_start with the server's max_conns (0: its default,
 * TB_SERVE_CONNS_DEFAULT) and event loops (opts.threads: 0 or 1 one);
 * the child's descriptor limit is the parent's at the fork
 * (bench_nofile_max first). */
void bench_mock_start_conns(const struct tb_stream *s, size_t max_conns, unsigned threads,
                            struct bench_mock *m);

/* Raises RLIMIT_NOFILE's soft limit to the hard one (quietly: a figure
 * that then runs out of descriptors says so itself). */
void bench_nofile_max(void);

/* SIGTERM (tb_serve_stop), then the child's statistics and CPU time. */
void bench_mock_stop(struct bench_mock *m, struct bench_mock_result *r);

/* The accuracy measure (bench_score.c): samples of one row, grown as
 * needed (dies when out of memory). */
struct bench_samples {
    double *v;
    size_t n, cap;
};
void bench_push(struct bench_samples *s, double x);
void bench_samples_free(struct bench_samples *s);

/* Events the schedules sent (as far as max_tokens) and those recorded. */
struct bench_count {
    uint64_t expected, received;
};

/* The times of s's content events, at most cap, into a; returns how many. */
size_t bench_arrivals(const struct tb_stream *s, double *a, size_t cap);

/* One stream's n arrival times a (s, from its own start) against the
 * schedule cut at max_events: its error samples e_k and its TTFT error
 * (bench_score.c) pushed, c counted. */
void bench_score(const struct tb_stream *sched, size_t max_events, const double *a, size_t n,
                 struct bench_samples *err, struct bench_samples *ttft, struct bench_count *c);

/* Whether the environment variable env (a list "1,1000") names level, or
 * is unset or empty (every level). */
int bench_level_on(const char *env, size_t level);

void bench_serve(void);
void bench_live(void);
void bench_sweep(void);
void bench_sweep_memory(void);      /* peak RSS per stream of `ttsbuf sweep` */
int bench_maxrss_main(char **argv); /* bench --maxrss CMD...: its peak RSS, KiB */
/* `./ttsbuf ARGS` (ARGS as sh words) run through bench --maxrss: its peak
 * RSS, KiB; dies naming `what` when it fails. */
long bench_ttsbuf_rss(const char *what, const char *args);
void bench_memory(void); /* ttsbuf bench's peak RSS, a run against one ten times longer */
void bench_speech(void);
void bench_client(void); /* ttsbuf bench vs the openai SDK */
void bench_calls(void);  /* calls held at once by one bench process */
void bench_fair(void);   /* the mock's fairness beside clients reading a flood */
void bench_reader(void); /* the stream reader per delta, with and without secrets */
void bench_base(void);   /* this build against TB_BENCH_BASE's, alternately */
void bench_timed(void);  /* sim under cartesia and idle against sentence */

/* argv (argv[0] a path, e.g. "./ttsbuf"), stdout to /dev/null: the best
 * wall time of reps runs, s; negative when it cannot run or fails
 * (bench_timed.c). */
double bench_command_seconds(char *const argv[], int reps);

/* `ttsbuf sweep --target-gapless` with a TTS stage against the same
 * sweep without it (bench_sweeptts.c). */
void bench_sweep_tts(void);

/* tb_sim_run of s with options o on a virtual clock: the best wall time
 * of reps runs, s; the last run's result in *r (bench_timed.c). */
struct tb_sim_opts;
struct tb_sim_result;
double bench_sim_seconds(const struct tb_stream *s, const struct tb_sim_opts *o, int reps,
                         struct tb_sim_result *r);

/* The floors under the client's CPU per event (bench_floor.c): n streams
 * of max_tokens events from the mock on port, read with bare recv() or
 * through a bare libcurl multi_socket loop.  CPU s over the wave, the
 * system part in *sys. */
double bench_floor_recv(int port, size_t n, int max_tokens, double *sys);
double bench_floor_curl(int port, size_t n, int max_tokens, double *sys);
/* The floor under the mock's lateness in a burst: CPU s a send() of one
 * token's SSE event (its size in *event_len) costs this process, over n
 * loopback TCP connections (2n descriptors), rounds events each. */
double bench_floor_send(size_t n, int rounds, size_t *event_len);

#endif
