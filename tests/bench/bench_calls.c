/*
 * bench_calls.c - calls held: how many voice calls one `ttsbuf bench`
 * process holds at once (tb_bench_run over calls), with the timing of the
 * streams in flight and the memory a call costs.
 *
 * Each call runs CALL_TURNS turns of a built-in conversation; the caller
 * speaks UTURN seconds before each later turn, and each answer, STREAM_TOKENS
 * events at STREAM_TPS after STREAM_TTFT from the mock (its own process,
 * max_conns above N), plays at the default 150 wpm for a few seconds: most
 * calls are speaking or listening at any moment, a fraction have a stream
 * in flight.  Rows: N calls started at once (TB_BENCH_CALLS, a closed loop
 * of N: every call's turn 0 in one burst of N connections, and, the
 * answers being alike, each later turn of every call within the user
 * turn's spread), and N calls arriving over RAMP_S seconds
 * (TB_BENCH_CALLS_POISSON at N / RAMP_S a second; a call lasts longer
 * than the ramp, so all N are held at once when the last arrives), each
 * of 10,000 on one loop thread and on two (bench.h: loop threads; the
 * mock shares the machine's cores).  The goal, P99 of the in-flight
 * error at most 5 ms with nothing lost, is for the arriving calls (the
 * mock on one loop).  Started at once, every call streams at turn 0: a
 * burst of N streams whose events fall due together, judged on the
 * mock's own lateness (P99 under 10 ms, nothing lost), the mock on a loop
 * per CPU (serve --threads auto: tb_serve_threads_auto).
 *
 * Per row:
 *   held      calls at once, from the records: a call is held from its
 *             turn 0's start to its last turn's play end (or its stream's
 *             end when nothing played); the most that overlap
 *   in flight the most streams in flight at a progress tick (10 Hz)
 *   error     e_k of every event of every turn (bench_score.c), ms; turn 0
 *             (the burst of N requests at once) and the later turns apart
 *   send late t_start - t_sched of every turn: how late the loop sent a
 *             turn the speech clock had made due
 *   memory    the process's VmRSS before (after malloc_trim) and its peak
 *             (VmHWM, reset through /proc/self/clear_refs before the
 *             level), the records' own bytes (the record structs and their
 *             streams' arrays, which the figure keeps for scoring), and
 *             (peak - before - records) / N: what the call loop and
 *             libcurl keep per call.  It is an upper bound for an idle
 *             call: the peak includes the turn-0 burst, N transfers at
 *             once, whose handles the loop keeps for reuse.
 *   threads   opts.threads as set (0: "auto"), and the most threads the
 *             process had at a progress tick
 *
 * Each row runs in a child process of its own (a fresh heap for its
 * memory figure).  TB_BENCH_CALLS_N=1000 runs some rows only.  One run
 * per row.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "ttsbuf.h"
#include "ttsbuf/bench.h"

#define CALL_TURNS 3
#define UTURN "uniform:2,6"
#define STREAM_TPS 50.0
#define STREAM_TTFT 0.2
#define STREAM_TOKENS 20
#define GOAL_N 10000
#define GOAL_P99 0.005
#define GOAL_BURST_LATE 0.010 /* the mock's lateness P99 in a burst (issue 42) */
#define FLOOR_SOCKETS 1000     /* the send floor's connections, */
#define FLOOR_ROUNDS 20        /* and events each */
#define RAMP_S 10.0

/* A row: n calls in all, started at once (ramp 0: a closed loop of n,
 * TB_BENCH_CALLS) or arriving over ramp seconds (Poisson at n / ramp a
 * second, TB_BENCH_CALLS_POISSON: a call lasts longer than the ramp, so
 * all n are still held when the last one arrives). */
struct level {
    size_t n;
    double ramp;
    unsigned threads; /* opts.threads: 0 auto */
    int mock_auto;    /* the mock on a loop per CPU, else on one */
};
static const struct level levels[] = {{1000, 0, 0, 0},
                                      {10000, 0, 1, 1},
                                      {10000, 0, 2, 1},
                                      {10000, RAMP_S, 1, 0},
                                      {10000, RAMP_S, 2, 0}};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* What the progress ticks saw. */
struct ticks {
    size_t inflight_max, n;
    double inflight_sum;
    long threads_max;
};

/* Field `key` ("VmRSS:") of /proc/self/status, in kB; -1 when missing. */
static long proc_status(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, key, n) == 0) {
            v = strtol(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* Resets VmHWM to the current RSS (Linux 4.0+); 0 or -1. */
static int reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int rc;
    if (f == NULL)
        return -1;
    rc = fputs("5", f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

static void on_tick(void *ud, const struct tb_bench_progress *p)
{
    struct ticks *t = ud;
    long th = proc_status("Threads:");
    if (p->inflight > t->inflight_max)
        t->inflight_max = p->inflight;
    t->inflight_sum += (double)p->inflight;
    t->n++;
    if (th > t->threads_max)
        t->threads_max = th;
}

/* The bytes the records hold: their array and each one's own arrays. */
static double records_bytes(const struct tb_bench_recs *r)
{
    double b = (double)r->cap * sizeof(struct tb_bench_rec);
    for (size_t i = 0; i < r->n; i++) {
        const struct tb_bench_rec *x = &r->v[i];
        b += (double)x->stream->cap * sizeof(struct tb_event) + (double)x->stream->text_cap;
        b += (double)(x->nitl + x->ntts_fb + x->ntts_rtf) * sizeof(double);
    }
    return b;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The most calls held at once: each call's [start, end) from its turns,
 * swept in time order (an end sorts before a start at the same time). */
static size_t calls_held(const struct tb_bench_recs *r, size_t n)
{
    double *start = malloc(n * sizeof(double)), *end = malloc(n * sizeof(double));
    size_t held = 0, most = 0, j = 0;
    if (start == NULL || end == NULL)
        bench_die("calls", "out of memory");
    for (size_t c = 0; c < n; c++)
        start[c] = end[c] = NAN;
    for (size_t i = 0; i < r->n; i++) {
        const struct tb_bench_rec *x = &r->v[i];
        double e = isnan(x->play_end) ? x->t_end : x->t_start + x->play_end;
        if (x->call < 0 || (size_t)x->call >= n)
            continue;
        if (x->turn == 0)
            start[x->call] = x->t_start;
        if (isnan(end[x->call]) || e > end[x->call])
            end[x->call] = e;
    }
    qsort(start, n, sizeof(double), cmp_double); /* NaN (no turn 0) sorts last */
    qsort(end, n, sizeof(double), cmp_double);
    for (size_t i = 0; i < n && !isnan(start[i]); i++) {
        while (j < n && end[j] <= start[i]) {
            j++;
            held--;
        }
        if (++held > most)
            most = held;
    }
    free(start);
    free(end);
    return most;
}

static void ms(const char *what, struct bench_samples *s)
{
    struct tb_stats st;
    if (s->n == 0) {
        printf("    %-22s (no samples)\n", what);
        return;
    }
    tb_stats_of(s->v, s->n, &st); /* sorts them */
    printf("    %-22s P50 %8.3f  P99 %8.3f  max %9.3f ms  (%zu)\n", what, st.p50 * 1e3,
           st.p99 * 1e3, st.max * 1e3, s->n);
}

/* The level's options: n calls in all, at once or over the ramp. */
static void call_opts(struct tb_bench_opts *o, const char *url, const struct tb_convos *cv,
                      const struct level *lv)
{
    size_t n = lv->n;
    char err[256];
    memset(o, 0, sizeof(*o));
    o->http.url = url;
    o->http.bearer = "sk-bench-calls-0123456789abcdefghijklmnopqrstu"; /* as a real run's */
    o->http.idle_timeout = 30;
    tb_api_request_init(&o->req);
    o->req.model = "ttsbuf-mock";
    o->level.mode = lv->ramp > 0 ? TB_BENCH_CALLS_POISSON : TB_BENCH_CALLS;
    o->level.concurrency = lv->ramp > 0 ? 0 : (uint32_t)n;
    o->level.rate = lv->ramp > 0 ? (double)n / lv->ramp : 0;
    o->calls = n;
    o->turns = CALL_TURNS;
    o->convos = cv;
    o->nshards = 1;
    o->seed = 1;
    o->threads = lv->threads;
    if (tb_uturn_parse(UTURN, &o->user_turn, err, sizeof(err)) != 0)
        bench_die("calls: user turn", err);
    tb_sim_opts_default(&o->sim);
}

struct row {
    size_t held;
    int goal;
    double err_p99;
    uint64_t lost;
    double late_p99; /* the mock's */
    unsigned mock_loops;
};

static void run_row(const struct tb_stream *sched, const struct tb_convos *cv,
                    const struct level *lv, struct row *row)
{
    size_t n = lv->n;
    struct bench_mock mock;
    struct bench_mock_result mr;
    struct tb_bench_opts o;
    struct tb_bench_recs recs;
    struct ticks tk = {0, 0, 0, 0};
    struct bench_samples err0 = {NULL, 0, 0}, err1 = {NULL, 0, 0}, all = {NULL, 0, 0};
    struct bench_samples ttft = {NULL, 0, 0}, late = {NULL, 0, 0};
    struct bench_count cnt = {0, 0};
    char url[96], e[256], th[16];
    double a[STREAM_TOKENS], c0, c1, s0, s1, wall, recb;
    long base_kb, peak_kb;
    uint64_t expected;
    size_t ok = 0;
    int hwm;

    row->mock_loops = lv->mock_auto ? tb_serve_threads_auto() : 1;
    bench_mock_start_conns(sched, n + 64, row->mock_loops, &mock);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", mock.port);
    call_opts(&o, url, cv, lv);
    o.progress = on_tick;
    o.progress_ud = &tk;
    tb_bench_recs_init(&recs);
    malloc_trim(0);
    base_kb = proc_status("VmRSS:");
    hwm = reset_hwm();
    c0 = bench_cpu(RUSAGE_SELF, &s0);
    wall = bench_now();
    if (tb_bench_run(&o, 0, &recs, e, sizeof(e)) != 0)
        bench_die("calls: tb_bench_run", e);
    wall = bench_now() - wall;
    c1 = bench_cpu(RUSAGE_SELF, &s1);
    peak_kb = proc_status(hwm == 0 ? "VmHWM:" : "VmRSS:");
    bench_mock_stop(&mock, &mr);
    recb = records_bytes(&recs);
    for (size_t i = 0; i < recs.n; i++) {
        const struct tb_bench_rec *x = &recs.v[i];
        size_t k = bench_arrivals(x->stream, a, STREAM_TOKENS);
        ok += x->error == 0;
        bench_score(sched, STREAM_TOKENS, a, k, x->turn == 0 ? &err0 : &err1, &ttft, &cnt);
        bench_push(&late, x->t_start - x->t_sched);
    }
    for (size_t i = 0; i < err0.n; i++)
        bench_push(&all, err0.v[i]);
    for (size_t i = 0; i < err1.n; i++)
        bench_push(&all, err1.v[i]);
    row->held = calls_held(&recs, n);
    if (o.threads == 0)
        snprintf(th, sizeof(th), "auto");
    else
        snprintf(th, sizeof(th), "%u", o.threads);
    if (lv->ramp > 0)
        printf("  N = %zu calls arriving over %g s (Poisson), threads %s (the process had %ld "
               "at most)\n",
               n, lv->ramp, th, tk.threads_max);
    else
        printf("  N = %zu calls started at once, threads %s (the process had %ld at most)\n", n, th,
               tk.threads_max);
    printf("    held %zu calls at once; streams in flight at a tick: mean %.0f, max %zu; %.1f s\n",
           row->held, tk.n > 0 ? tk.inflight_sum / (double)tk.n : 0.0, tk.inflight_max, wall);
    /* Every turn of every call is expected: a turn never sent (its call
     * ended early) lost all its events. */
    expected = (uint64_t)n * CALL_TURNS * (sched->n < STREAM_TOKENS ? sched->n : STREAM_TOKENS);
    row->lost = expected > cnt.received ? expected - cnt.received : 0;
    printf("    turns ok %zu / %zu; events %llu expected, %llu received, %llu lost\n", ok,
           n * CALL_TURNS, (unsigned long long)expected, (unsigned long long)cnt.received,
           (unsigned long long)row->lost);
    {
        struct tb_stats st;
        tb_stats_of(all.v, all.n, &st);
        row->err_p99 = all.n > 0 ? st.p99 : INFINITY;
    }
    ms("error, every turn", &all);
    ms("error, turn 0", &err0);
    ms("error, turns 1+", &err1);
    ms("send late", &late);
    ms("TTFT error", &ttft);
    row->late_p99 = mr.st.late_p99;
    printf(
        "    server (%u loop%s): late P99 %.3f ms, max %.3f ms; CPU %.2f s (%.1f%% of the run)\n",
        row->mock_loops, row->mock_loops == 1 ? "" : "s", mr.st.late_p99 * 1e3,
        mr.st.late_max * 1e3, mr.cpu_s, 100.0 * mr.cpu_s / wall);
    printf("    client CPU %.2f s (system %.2f), %.1f us per event, %.1f%% of a core\n", c1 - c0,
           s1 - s0, cnt.received > 0 ? (c1 - c0) * 1e6 / (double)cnt.received : 0.0,
           100.0 * (c1 - c0) / wall);
    printf("    memory: RSS %.1f MiB before, peak %.1f MiB%s; records %.1f MiB;\n"
           "            %.1f KiB per call (peak - before - records) / N\n",
           (double)base_kb / 1024, (double)peak_kb / 1024,
           hwm == 0 ? "" : " (at the end: no VmHWM reset)", recb / 1048576,
           ((double)(peak_kb - base_kb) * 1024 - recb) / (double)n / 1024);
    if (lv->ramp > 0)
        row->goal = n == GOAL_N && row->held == GOAL_N && row->err_p99 <= GOAL_P99 &&
                    row->lost == 0 && ok == n * CALL_TURNS;
    else /* a burst: judged on the mock's lateness */
        row->goal = n == GOAL_N && row->late_p99 < GOAL_BURST_LATE && row->lost == 0 &&
                    ok == n * CALL_TURNS;
    tb_bench_recs_free(&recs);
    bench_samples_free(&err0);
    bench_samples_free(&err1);
    bench_samples_free(&all);
    bench_samples_free(&ttft);
    bench_samples_free(&late);
}

/* Why a burst's goal is out of reach on a small machine: its N events due
 * together leave one by one, so the P99 one waits for 0.99 N sends spread
 * over the mock's loops, whatever else the server does. */
static void burst_floor(unsigned loops)
{
    size_t len;
    double nl = loops > 0 ? loops : 1;
    double us = 1e6 * bench_floor_send(FLOOR_SOCKETS, FLOOR_ROUNDS, &len);
    double p99 = 0.99 * GOAL_N * us / 1e3 / nl;
    printf("  floor: a send() of one %zu-byte event on loopback TCP costs %.1f us of CPU here "
           "(%d connections, bench_floor.c); %d events due together on %u loop%s cannot all go "
           "out before P99 %.1f ms (0.99 N x cost / loops, on free cores); under %g ms needs <= "
           "%.2f us a send\n",
           len, us, FLOOR_SOCKETS, GOAL_N, loops, loops == 1 ? "" : "s", p99,
           GOAL_BURST_LATE * 1e3, GOAL_BURST_LATE * 1e6 * nl / (0.99 * GOAL_N));
}

/* run_row in a child process of its own, so that each row's memory is
 * measured from a fresh heap (not one an earlier figure or row grew):
 * its printed lines and its row come back through stdout and a pipe. */
static void run_row_apart(const struct tb_stream *sched, const struct tb_convos *cv,
                          const struct level *lv, struct row *row)
{
    int fd[2], st;
    pid_t pid;
    ssize_t n;
    fflush(stdout);
    if (pipe(fd) != 0)
        bench_die("calls: pipe", strerror(errno));
    pid = fork();
    if (pid < 0)
        bench_die("calls: fork", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        run_row(sched, cv, lv, row);
        fflush(stdout);
        _exit(write(fd[1], row, sizeof(*row)) == (ssize_t)sizeof(*row) ? 0 : 1);
    }
    close(fd[1]);
    n = read(fd[0], row, sizeof(*row));
    close(fd[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        n != (ssize_t)sizeof(*row))
        bench_die("calls", "a row's process failed");
}

void bench_calls(void)
{
    struct tb_stream sched;
    struct tb_convos cv;
    struct row rows[NLEVELS];
    char e[256];

    bench_nofile_max();
    tb_stream_init(&sched);
    bench_synth(STREAM_TPS, STREAM_TTFT, STREAM_TOKENS, &sched);
    if (tb_convos_builtin(&cv, e, sizeof(e)) != 0)
        bench_die("calls: conversations", e);
    printf("calls: one bench process holding N voice calls at once (N calls in all, started\n"
           "  at once or arriving over %g s; %d turns each, built-in conversations, the caller\n"
           "  speaking %s s before each later turn); each answer %d events at %g tokens/s\n"
           "  after %g s from the mock (its own process), played at 150 wpm; error = each\n"
           "  event's lateness against the schedule, its stream aligned on its earliest event,\n"
           "  ms (server lateness included)\n",
           RAMP_S, CALL_TURNS, UTURN, STREAM_TOKENS, STREAM_TPS, STREAM_TTFT);
    memset(rows, 0, sizeof(rows));
    for (size_t l = 0; l < NLEVELS; l++)
        if (bench_level_on("TB_BENCH_CALLS_N", levels[l].n))
            run_row_apart(&sched, &cv, &levels[l], &rows[l]);
    for (size_t l = 0; l < NLEVELS; l++) {
        /* Calls as a voice agent holds them (arriving, a fraction
         * streaming) are judged on the client's in-flight error; started
         * at once (a burst: every call streams at turn 0), on the mock's
         * lateness. */
        if (levels[l].n != GOAL_N || !bench_level_on("TB_BENCH_CALLS_N", levels[l].n))
            continue;
        if (levels[l].ramp > 0)
            printf("  goal (%d calls held, arriving over %g s, %u loop thread%s: in-flight error "
                   "P99 <= %g ms, none lost): %s\n",
                   GOAL_N, levels[l].ramp, levels[l].threads, levels[l].threads == 1 ? "" : "s",
                   GOAL_P99 * 1e3, rows[l].goal ? "met" : "NOT met");
        else
            printf("  goal (%d calls started at once, %u loop thread%s, the mock on %u: its "
                   "lateness P99 < %g ms, none lost): %.3f ms, %s\n",
                   GOAL_N, levels[l].threads, levels[l].threads == 1 ? "" : "s", rows[l].mock_loops,
                   GOAL_BURST_LATE * 1e3, rows[l].late_p99 * 1e3, rows[l].goal ? "met" : "NOT met");
        if (levels[l].ramp <= 0)
            burst_floor(rows[l].mock_loops);
    }
    tb_convos_free(&cv);
    tb_stream_free(&sched);
}
