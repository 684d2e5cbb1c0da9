/*
 * test_bench.c - `ttsbuf bench` and `ttsbuf merge`: the library's
 * tb_bench_run against the mock provider (tb_serve on a thread, loopback,
 * known schedules and faults), the summary's statistics, the records
 * file, and the binary end to end (gates, bad values, --out and replay
 * through `sim --trace`, shards + merge, SIGINT).
 *
 * Streams are short (20 events in 0.24 s) so the group stays quick; the
 * accuracy figures at scale are `make bench`'s.
 */
#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tcp_peer.h"
#include "lag.h"
#include "tests.h"
#include "ttsbuf.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/serve.h"

#define N_EV 20
#define T0 0.05
#define DT 0.01

/* Options for a closed loop of `requests` at concurrency c against the
 * mock with this model (faults after '+'); url and p are the caller's. */
static void opts_init(struct tb_bench_opts *o, const struct tb_test_mock *m, char *url,
                      size_t urllen, struct tb_bench_prompts *p, const char *model, uint32_t c,
                      size_t requests)
{
    memset(o, 0, sizeof(*o));
    snprintf(url, urllen, "%s/chat/completions", m->base);
    assert_int_equal(tb_bench_prompts_builtin(p), 0);
    o->http.url = url;
    o->http.idle_timeout = 5;
    tb_api_request_init(&o->req);
    o->req.model = model;
    o->req.include_usage = 1;
    o->prompts = p;
    o->level.mode = TB_BENCH_CLOSED;
    o->level.concurrency = c;
    o->requests = requests;
    o->nshards = 1;
    tb_sim_opts_default(&o->sim);
}

/* Runs one closed-loop level with speech at wpm. */
/*
 * The bounds on the mock's timing (its schedule: T0, then an event every
 * DT) on an idle machine, each grown by what a busy one adds, lag being
 * the largest wake-up delay the probe of lag.h measured while the level
 * ran: a first token waits on three wake-ups (the mock reading the
 * request, its timer, the client reading), an inter-token gap on four (two
 * events' timers and reads); the decode rate's 10 tokens/s are 10% of its
 * span of N_EV - 1 gaps, which four wake-ups lengthen or shorten.
 */
static double ttft_tol(double lag)
{
    return 0.05 * TB_TEST_TIME_SCALE + 3 * lag;
}

static double itl_tol(double lag)
{
    return 0.005 * TB_TEST_TIME_SCALE + 4 * lag;
}

static double tps_tol(double lag)
{
    return 10 * TB_TEST_TIME_SCALE + (1.0 / DT) * 4 * lag / ((N_EV - 1) * DT);
}

/* The largest gap between a record's content events. */
static double itl_max(const struct tb_bench_rec *x)
{
    double m = 0;
    for (size_t i = 0; i < x->nitl; i++)
        m = x->itl[i] > m ? x->itl[i] : m;
    return m;
}

/* A record of the known schedule: its timings within the bounds, named
 * with their values when they are not.  Speech at 1000 wpm runs dry only
 * if an arrival gap outlasts the speech already buffered (a chunk of 16
 * code points is 0.16 s, the next closes 0.05 s later): an underrun is a
 * failure unless the recorded arrivals had such a gap (a stalled machine,
 * which the replay then reports truly). */
static void check_known(const struct tb_bench_rec *x, double lag)
{
    double gap = itl_max(x);
    if (fabs(x->ttft - T0) > ttft_tol(lag))
        fail_msg("request %u: ttft %.4f s, want %.2f within %.4f (lag %.4f)", (unsigned)x->id,
                 x->ttft, T0, ttft_tol(lag), lag);
    if (fabs(x->decode_tps - 1.0 / DT) > tps_tol(lag))
        fail_msg("request %u: decode_tps %.2f, want %.0f within %.2f (lag %.4f)", (unsigned)x->id,
                 x->decode_tps, 1.0 / DT, tps_tol(lag), lag);
    if (x->underruns != 0 && gap < 0.1)
        fail_msg("request %u: %u underruns with no arrival gap over 0.1 s (largest %.4f s)",
                 (unsigned)x->id, (unsigned)x->underruns, gap);
}

static void run_level(const struct tb_test_mock *m, const char *model, uint32_t c, size_t requests,
                      double wpm, struct tb_bench_recs *out)
{
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    char url[128], err[256];
    opts_init(&o, m, url, sizeof(url), &p, model, c, requests);
    o.sim.play.wpm = wpm;
    if (tb_bench_run(&o, 0, out, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    tb_bench_prompts_free(&p);
}

/* Known schedule, known numbers: TTFT, decode TPS, usage, no underrun
 * but where the arrivals stalled (check_known);
 * every id once.  The timing bounds grow by the wake-up delay the probe of
 * lag.h measured while the level ran (lag_tol). */
static void known_schedule(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_recs r;
    struct tb_bench_summary s;
    unsigned seen = 0, clean = 0;
    double lag;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    tb_test_lag_start();
    run_level(&m, "mock", 3, 6, 1000, &r);
    lag = tb_test_lag_stop();
    assert_int_equal(r.n, 6);
    for (size_t i = 0; i < r.n; i++) {
        const struct tb_bench_rec *x = &r.v[i];
        assert_int_equal(x->error, 0);
        assert_int_equal(x->http_status, 200);
        assert_int_equal(x->events, N_EV);
        assert_int_equal(x->usage_tokens, N_EV);
        assert_int_equal(x->nitl, N_EV - 1);
        check_known(x, lag);
        clean += x->underruns == 0;
        assert_true(x->t_end > x->t_start);
        assert_true(x->id < 6);
        seen |= 1u << x->id;
        assert_int_equal(x->prompt, x->id);
    }
    assert_int_equal(seen, 0x3f);
    assert_int_equal(tb_bench_summarize(&r, 0, &s), 0);
    assert_int_equal(s.requests, 6);
    assert_int_equal(s.ok, 6);
    assert_int_equal(s.gapless, clean);
    assert_near(s.gapless_share, clean / 6.0, 1e-12);
    assert_int_equal(s.events, 6 * N_EV);
    assert_int_equal(s.tokens, 6 * N_EV);
    assert_int_equal(s.m[TB_BM_ITL].count, 6 * (N_EV - 1));
    assert_near(s.m[TB_BM_ITL].p50, DT, 0.003 * TB_TEST_TIME_SCALE + 4 * lag);
    assert_near(s.m[TB_BM_TTFT].p50, T0, ttft_tol(lag));
    assert_true(s.system_tps > 0);
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* A 0.5 s stall before token 12 at wpm 1000: chunk 3 (tokens 10..14)
 * closes at T0 + 14 DT + 0.5 = 0.69 s, while chunks 1 and 2 (16 code
 * points each, 0.16 s) end at 0.09 + 0.32 = 0.41 s: one gap of 0.28 s. */
static void known_underrun(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_recs r;
    struct tb_bench_summary s;
    double lag;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    tb_test_lag_start();
    run_level(&m, "mock+stall@12:0.5", 2, 2, 1000, &r);
    lag = tb_test_lag_stop();
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.v[i].error, 0);
        assert_int_equal(r.v[i].underruns, 1);
        assert_near(r.v[i].gap_max, 0.28, 0.05 + 4 * lag);
        assert_near(r.v[i].gap_total, r.v[i].gap_max, 0);
    }
    assert_int_equal(tb_bench_summarize(&r, 0, &s), 0);
    assert_int_equal(s.gapless, 0);
    assert_near(s.m[TB_BM_UNDERRUNS].max, 1, 0);
    assert_near(s.m[TB_BM_ITL].max, DT + 0.5, 0.08 + 4 * lag); /* a loaded machine is late */
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* Every fault the mock has lands in its error kind, and is counted. */
static void errors_by_kind(void **state)
{
    (void)state;
    /* Each with the end its stream records, which counts it as cut off
     * or failed (never in the gapless share). */
    static const struct {
        const char *model;
        int kind, end;
    } cases[] = {
        {"mock+status@429", TB_READER_HTTP, TB_END_ERROR},
        {"mock+html", TB_READER_NOT_SSE, TB_END_ERROR},
        {"mock+drop@5", TB_READER_TRANSPORT, TB_END_LOST},
        {"mock+malformed@3", TB_READER_JSON, TB_END_ERROR},
        {"mock+error@3", TB_READER_ERROR_EVENT, TB_END_ERROR},
        {"mock+nodone", 0, TB_END_NO_MARKER},
        {"mock", 0, TB_END_COMPLETE},
    };
    struct tb_test_mock m;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct tb_bench_recs r;
        struct tb_bench_summary s;
        tb_bench_recs_init(&r);
        run_level(&m, cases[c].model, 2, 2, 150, &r);
        assert_int_equal(r.n, 2);
        for (size_t i = 0; i < r.n; i++) {
            if (r.v[i].error != cases[c].kind)
                fail_msg("%s: error %s (%s), expected %s", cases[c].model,
                         tb_reader_error_name(r.v[i].error), r.v[i].message,
                         tb_reader_error_name(cases[c].kind));
            if (cases[c].kind != 0)
                assert_true(r.v[i].message[0] != '\0');
            if (r.v[i].end != cases[c].end || r.v[i].stream->end.kind != cases[c].end)
                fail_msg("%s: ends %s, expected %s", cases[c].model, tb_end_name(r.v[i].end),
                         tb_end_name(cases[c].end));
        }
        assert_int_equal(tb_bench_summarize(&r, 0, &s), 0);
        assert_int_equal(s.requests, 2);
        assert_int_equal(s.ok, cases[c].kind == 0 ? 2 : 0);
        if (cases[c].kind != 0)
            assert_int_equal(s.errors[cases[c].kind], 2);
        assert_int_equal(s.incomplete, cases[c].end == TB_END_LOST ? 2 : 0);
        assert_int_equal(s.failed, cases[c].end == TB_END_ERROR ? 2 : 0);
        assert_true(s.gapless <= s.ok);
        tb_bench_recs_free(&r);
    }
    tb_test_mock_stop(&m);
}

/* Bench's total over all its streams (records of an earlier level
 * included): the stream whose delta crosses it stops there as too_long,
 * naming the total; the per-stream caps alone let c flooding streams
 * hold c x 170 MB. */
static void held_total_bounded(void **state)
{
    struct tb_test_mock m;
    struct tb_bench_recs r;
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    char url[128], err[256];
    uint64_t one;
    (void)state;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    /* Level 0, uncapped: one stream's size. */
    run_level(&m, "mock", 1, 1, 150, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.v[0].error, 0);
    one = (uint64_t)r.v[0].stream->n * sizeof(struct tb_event) + r.v[0].stream->text_len;
    assert_true(one > 0);
    /* Level 1 under a total of 2.5 streams: one more fits, the next stops
     * in its middle, the last at its first delta. */
    opts_init(&o, &m, url, sizeof(url), &p, "mock", 1, 3);
    o.held_max = one * 5 / 2;
    if (tb_bench_run(&o, 1, &r, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.v[1].error, 0);
    for (size_t i = 2; i < 4; i++) {
        if (r.v[i].error != TB_READER_TOO_LONG ||
            strstr(r.v[i].message, "held of all the streams: the stream stops there (bench's "
                                   "total cap)") == NULL)
            fail_msg("request %zu: error %s '%s'", i, tb_reader_error_name(r.v[i].error),
                     r.v[i].message);
    }
    assert_true(r.v[2].stream->n > 0 && r.v[2].stream->n < r.v[1].stream->n);
    assert_int_equal(r.v[3].stream->n, 1);
    tb_bench_prompts_free(&p);
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* An idle stream is cut by the loop's own scan, with the idle kind. */
static void idle_timeout(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    struct tb_bench_recs r;
    char url[128], err[256];
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    opts_init(&o, &m, url, sizeof(url), &p, "mock+stall@2:30", 2, 2);
    o.http.idle_timeout = 0.3;
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), 0);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.v[i].error, TB_READER_IDLE);
        assert_int_equal(r.v[i].events, 2);
        assert_true(r.v[i].t_end - r.v[i].t_start < 1.5);
    }
    tb_bench_prompts_free(&p);
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* Many streams, all silent for 1.2 s mid-stream (longer than the loop's
 * 1 s "silent" mark, so each socket is also handed to libcurl with its
 * events unknown at a scan): every stream intact, the stall measured where
 * it was, the other gaps unchanged. */
static void long_stall_many(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_recs r;
    struct tb_bench_summary s;
    double lag;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    tb_test_lag_start();
    run_level(&m, "mock+stall@10:1.2", 64, 64, 1000, &r);
    lag = tb_test_lag_stop();
    assert_int_equal(r.n, 64);
    for (size_t i = 0; i < r.n; i++) {
        const struct tb_bench_rec *x = &r.v[i];
        const struct tb_stream *st = x->stream;
        assert_int_equal(x->error, 0);
        assert_int_equal(x->events, N_EV);
        assert_int_equal(x->usage_tokens, N_EV);
        /* event 10 is 1.2 s after event 9; no event before its forerunner */
        assert_near(st->ev[10].t - st->ev[9].t, DT + 1.2, 0.1 + 4 * lag);
        for (size_t k = 1; k < st->n; k++)
            assert_true(st->ev[k].t >= st->ev[k - 1].t);
    }
    assert_int_equal(tb_bench_summarize(&r, 0, &s), 0);
    assert_int_equal(s.ok, 64);
    assert_int_equal(s.events, 64 * N_EV);
    assert_near(s.m[TB_BM_ITL].p50, DT, itl_tol(lag));
    assert_near(s.m[TB_BM_ITL].max, DT + 1.2, 0.1 + 4 * lag);
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* A progress callback that holds the loop 35 ms of every 50 (a client
 * falling behind): sockets then wait with several events in them. */
static void hold_loop(void *ud, const struct tb_bench_progress *p)
{
    struct timespec ts = {0, 35L * 1000 * 1000};
    (void)ud;
    (void)p;
    nanosleep(&ts, NULL);
}

/* Stamps are never earlier than the bytes they date, even when the loop
 * is behind by several of the streams' gaps (a socket then holds several
 * events, read in one pass: the second and later ones are dated apart
 * from the first): event k left the mock at T0 + k DT after the request
 * arrived, so it cannot be recorded before that from the request's start.
 * (Late is what a held loop is.)  The subtler early stamps, bytes that
 * arrive after a socket was seen and before it is handled, need a loop
 * behind in the middle of a pass; `make bench`'s client section, 1000
 * streams near one core's worth, is where those showed (a P99 of 20 ms: one
 * event a gap early shifts its whole stream). */
static void stamps_never_early(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    struct tb_bench_recs r;
    char url[128], err[256];
    size_t late = 0;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    opts_init(&o, &m, url, sizeof(url), &p, "mock", 40, 80);
    o.progress = hold_loop;
    o.progress_interval = 0.05;
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), 0);
    assert_int_equal(r.n, 80);
    for (size_t i = 0; i < r.n; i++) {
        const struct tb_stream *st = r.v[i].stream;
        assert_int_equal(r.v[i].error, 0);
        assert_int_equal(st->n, N_EV);
        for (size_t k = 0; k < st->n; k++) {
            if (st->ev[k].t < T0 + (double)k * DT - 0.0005)
                fail_msg("request %zu, event %zu recorded at %.4f s, sent at %.4f s", i, k,
                         st->ev[k].t, T0 + (double)k * DT);
            late += st->ev[k].t > T0 + (double)k * DT + DT;
        }
    }
    assert_true(late > 0); /* the loop was held: some events are late */
    tb_bench_prompts_free(&p);
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* Over TLS (socat terminating it in front of the mock, a certificate made
 * with openssl): OpenSSL keeps bytes of its own that epoll cannot see, and
 * the edge-triggered loop must still get every event in time. */
static void over_tls(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    struct tb_bench_recs r;
    struct tb_bench_summary s;
    double lag;
    char dir[64], cmd[512], url[128], err[256], listen[320], target[64];
    int port = tb_test_free_port(), mport, status;
    pid_t pid;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    assert_int_equal(sscanf(m.base, "http://127.0.0.1:%d", &mport), 1);
    tb_test_tls_cert("tlsbench", dir, sizeof(dir));
    if (system("command -v socat >/dev/null 2>&1") != 0)
        fail_msg("socat is missing (.ci/deps installs it)");
    snprintf(listen, sizeof(listen),
             "OPENSSL-LISTEN:%d,bind=127.0.0.1,reuseaddr,fork,verify=0,cert=%s/c.pem,key=%s/k.pem",
             port, dir, dir);
    snprintf(target, sizeof(target), "TCP:127.0.0.1:%d", mport);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execlp("socat", "socat", listen, target, (char *)NULL);
        _exit(127);
    }
    tb_test_wait_port(port);
    tb_bench_recs_init(&r);
    opts_init(&o, &m, url, sizeof(url), &p, "mock", 10, 20);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/v1/chat/completions", port);
    o.http.insecure = 1;
    tb_test_lag_start();
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), 0);
    lag = tb_test_lag_stop();
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(r.n, 20);
    for (size_t i = 0; i < r.n; i++) {
        if (r.v[i].error != 0)
            fail_msg("request %zu: %s", i, r.v[i].message);
        assert_int_equal(r.v[i].events, N_EV);
    }
    assert_int_equal(tb_bench_summarize(&r, 0, &s), 0);
    /* socat relays each event: two more wake-ups */
    assert_near(s.m[TB_BM_ITL].p50, DT, itl_tol(lag) + 2 * lag);
    assert_true(s.m[TB_BM_ITL].max < 0.5 + 6 * lag); /* no read left for a scan */
    tb_bench_prompts_free(&p);
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* Open loop, constant arrivals: requests are scheduled 1/rate apart; a
 * cap of 1 makes the later ones wait (start >= schedule). */
static void open_loop(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    struct tb_bench_recs r;
    char url[128], err[256];
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    opts_init(&o, &m, url, sizeof(url), &p, "mock", 1, 4);
    o.level.mode = TB_BENCH_CONSTANT;
    o.level.rate = 20;
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), 0);
    assert_int_equal(r.n, 4);
    for (size_t i = 0; i < r.n; i++) {
        const struct tb_bench_rec *x = &r.v[i];
        assert_int_equal(x->error, 0);
        assert_near(x->t_sched, 0.05 * (double)x->id, 1e-9);
        assert_true(x->t_start >= x->t_sched - 1e-6);
        if (x->id > 0) /* each waited for the one before (0.24 s each) */
            assert_true(x->t_start - x->t_sched > 0.1);
    }
    /* Bad options are refused before anything is sent. */
    o.level.rate = 0;
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), TB_EINVAL);
    o.level.rate = 1;
    o.nshards = 2;
    o.shard = 2;
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(r.n, 4);
    tb_bench_prompts_free(&p);
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* Poisson arrivals for a duration, after a warm-up: only measured
 * requests are recorded, ids 0..n-1, scheduled inside the duration in
 * id order (about rate x duration = 12 of them: arrivals must not start
 * during the warm-up, nor outlive the duration). */
static void poisson_duration_warmup(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    struct tb_bench_recs r;
    char url[128], err[256];
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    opts_init(&o, &m, url, sizeof(url), &p, "mock", 0, 0);
    o.level.mode = TB_BENCH_POISSON;
    o.level.rate = 40;
    o.duration = 0.3;
    o.warmup = 2;
    o.seed = 7;
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), 0);
    assert_true(r.n >= 2);
    assert_true(r.n < 40);
    for (size_t i = 0; i < r.n; i++) {
        const struct tb_bench_rec *x = &r.v[i];
        assert_int_equal(x->error, 0);
        assert_true(x->id < r.n);
        if (!(x->t_sched < 0.3))
            fail_msg("request %llu of %zu scheduled at %g, start %g", (unsigned long long)x->id,
                     r.n, x->t_sched, x->t_start);
        for (size_t j = 0; j < r.n; j++)
            if (r.v[j].id < x->id)
                assert_true(r.v[j].t_sched <= x->t_sched);
    }
    tb_bench_prompts_free(&p);
    tb_bench_recs_free(&r);
    tb_test_mock_stop(&m);
}

/* numpy's default (linear) percentiles, mean and population std; p95 is
 * the high tail of every metric, p5 the low one; a failed request's
 * partial stream counts where it was measured. */
static void percentiles(void **state)
{
    (void)state;
    double v[] = {5, 1, 4, 2, 3};
    double one[] = {7};
    double two[] = {5, 0};
    struct tb_stats st;
    struct tb_bench_recs r;
    struct tb_bench_summary s;
    tb_stats_of(v, 5, &st);
    assert_int_equal(st.count, 5);
    assert_near(st.p50, 3, 0);
    assert_near(st.p95, 4.8, 1e-12);
    assert_near(st.p99, 4.96, 1e-12);
    assert_near(st.p5, 1.2, 1e-12);
    assert_near(st.p90, 4.6, 1e-12);
    assert_near(st.mean, 3, 0);
    assert_near(st.std, sqrt(2.0), 1e-12);
    assert_near(st.min, 1, 0);
    assert_near(st.max, 5, 0);
    assert_near(tb_stats_percentile(v, 5, 0), 1, 0);
    assert_near(tb_stats_percentile(v, 5, 100), 5, 0);
    tb_stats_of(one, 1, &st);
    assert_near(st.p95, 7, 0);
    assert_near(st.std, 0, 0);
    tb_stats_of(two, 2, &st); /* linear interpolation: P50 of {5, 0} is 2.5 */
    assert_near(st.p50, 2.5, 0);
    tb_stats_of(NULL, 0, &st);
    assert_int_equal(st.count, 0);
    assert_true(isnan(st.p50) && isnan(st.mean) && isnan(st.max));
    tb_bench_recs_init(&r);
    for (int i = 0; i < 100; i++) {
        struct tb_bench_rec *x = tb_bench_recs_add(&r);
        assert_non_null(x);
        x->id = (uint64_t)i;
        x->decode_tps = (double)(i + 1); /* 1..100 */
        x->ttft = (double)(i + 1) / 100.0;
        x->ttfa = x->ttft;
        x->min_tps = 10;
        x->underruns = i < 10 ? 1 : 0;
        if (i == 99) {
            x->error = TB_READER_HTTP;
            x->ttft = 1000; /* measured before it failed: counted */
        }
    }
    assert_int_equal(tb_bench_summarize(&r, 0, &s), 0);
    assert_int_equal(s.requests, 100);
    assert_int_equal(s.ok, 99);
    assert_int_equal(s.errors[TB_READER_HTTP], 1);
    assert_int_equal(s.gapless, 89);
    assert_int_equal(s.m[TB_BM_TPS].count, 100);
    assert_near(s.m[TB_BM_TPS].p5, 1 + 0.05 * 99, 1e-9);  /* the low tail, by name */
    assert_near(s.m[TB_BM_TPS].p95, 1 + 0.95 * 99, 1e-9); /* the high tail */
    assert_near(s.m[TB_BM_TPS].min, 1, 0);
    assert_near(s.m[TB_BM_TPS].mean, 50.5, 1e-9);
    assert_int_equal(s.m[TB_BM_TTFT].count, 100);
    assert_near(s.m[TB_BM_TTFT].max, 1000, 0);
    assert_near(s.m[TB_BM_TTFT].p95, 0.95 + 0.01 * 0.05, 1e-9);
    assert_int_equal(s.m[TB_BM_MIN_TPS].count, 99);     /* no what-if for a failed one */
    assert_int_equal(tb_bench_summarize(&r, 1, &s), 0); /* another level: empty */
    assert_int_equal(s.requests, 0);
    assert_int_equal(s.m[TB_BM_TTFT].count, 0);
    tb_bench_recs_free(&r);
}

/* Records written and read back give the same summary, bit for bit, in
 * any order. */
static void records_round_trip(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_recs r, back;
    struct tb_bench_summary a, b;
    struct tb_bench_meta meta, meta2;
    char path[64], err[256];
    FILE *f;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_bench_recs_init(&r);
    tb_bench_recs_init(&back);
    run_level(&m, "mock+stall@7:0.1", 4, 5, 600, &r);
    run_level(&m, "mock+status@500", 1, 1, 600, &r); /* a failed record too */
    memset(&meta, 0, sizeof(meta));
    meta.nshards = 1;
    meta.nlevels = 1;
    meta.levels[0].concurrency = 4;
    snprintf(meta.options, sizeof(meta.options), "{\"chunk\":\"sentence\"}");
    snprintf(path, sizeof(path), "/tmp/ttsbuf-bench-rt-%d.jsonl", (int)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(tb_bench_write_header(f, &meta), 0);
    for (size_t i = r.n; i-- > 0;) /* reversed */
        assert_int_equal(tb_bench_write_rec(f, &meta, &r.v[i], NULL), 0);
    assert_int_equal(fclose(f), 0);
    if (tb_bench_read(path, &meta2, &back, err, sizeof(err)) != 0)
        fail_msg("tb_bench_read: %s", err);
    assert_int_equal(back.n, 6);
    assert_string_equal(meta2.options, "{\"chunk\":\"sentence\"}");
    assert_int_equal(tb_bench_summarize(&r, 0, &a), 0);
    assert_int_equal(tb_bench_summarize(&back, 0, &b), 0);
    assert_int_equal(a.errors[TB_READER_HTTP], 1);
    /* No padding; its doubles are meant to be the same bit for bit. */
    /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison,cert-exp42-c,cert-flp37-c) */
    assert_memory_equal(&a, &b, sizeof(a));
    unlink(path);
    tb_bench_recs_free(&r);
    tb_bench_recs_free(&back);
    tb_test_mock_stop(&m);
}

/* The start of a records header of the versions this reads: 2 (a
 * record's level is an index) and 3 (its name). */
#define V2 "{\"schema\":{\"name\":\"ttsbuf.bench_records\",\"version\":2},\"options\":{},"
#define V3 "{\"schema\":{\"name\":\"ttsbuf.bench_records\",\"version\":3},\"options\":{},"

/* Bad records and prompt files name the line. */
/* A records header and a record's fields but "id" (cJSON keeps the
 * first of a duplicated key, so a case puts its own value first). */
#define REC_HDR                                                                                    \
    V2 "\"shard\":0,\"shards\":1,\"levels\":[{\"mode\":\"closed\","                                \
       "\"concurrency\":1,\"rate\":0}]}\n"
#define REC_BODY                                                                                   \
    "\"level\":0,\"prompt\":0,\"t_sched\":0,\"t_start\":0,\"t_end\":1,\"error\":null,"             \
    "\"http_status\":200,\"events\":1,\"content_tokens\":1,\"usage_tokens\":null,"                 \
    "\"ttft_s\":0.1,\"ttfa_s\":null,\"decode_tps\":null,\"decode_tps_usage\":null,"                \
    "\"underruns\":0,\"gap_total_s\":0,\"gap_max_s\":0,\"min_tps\":null,"                          \
    "\"speedup_needed\":null,\"itl_s\":[]"

static void bad_files(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } recs[] = {
        {"", "empty"},
        {"{\"x\": 1}\n", ":1: not a ttsbuf bench records header"},
        /* Another schema version: both versions named. */
        {"{\"ttsbuf_bench\":1,\"shard\":0,\"shards\":1,\"levels\":[]}\n",
         ":1: bench records of schema version 1 (\"ttsbuf_bench\": 1, an older ttsbuf); this "
         "ttsbuf reads ttsbuf.bench_records version 3"},
        {"{\"schema\":{\"name\":\"ttsbuf.bench_records\",\"version\":4},\"options\":{},"
         "\"shard\":0,\"shards\":1,\"levels\":[]}\n",
         ":1: bench records of schema version 4; this ttsbuf reads ttsbuf.bench_records versions "
         "2 and 3"},
        /* Version 3 names a record's level as the report does. */
        {V3 "\"shard\":0,\"shards\":1,\"levels\":[{\"mode\":\"closed\","
            "\"concurrency\":1,\"rate\":0}]}\n{\"level\": 0}\n",
         ":2: \"level\" is missing or not the name of one of the header's levels"},
        {V3 "\"shard\":0,\"shards\":1,\"levels\":[{\"mode\":\"closed\","
            "\"concurrency\":1,\"rate\":0}]}\n{\"level\": \"c=2\"}\n",
         ":2: \"level\" is missing or not the name"},
        {V3 "\"shard\":0,\"shards\":1,\"levels\":[{\"mode\":\"closed\",\"concurrency\":1,"
            "\"rate\":0},{\"mode\":\"closed\",\"concurrency\":1,\"rate\":5}]}\n",
         ":1: not a ttsbuf bench records header (schema, options, shard, shards, levels of "
         "distinct names)"},
        {V2 "\"shard\":0,\"shards\":1,\"levels\":[{\"mode\":\"closed\","
            "\"concurrency\":1,\"rate\":0}]}\n{\"level\": 3}\n",
         ":2: \"level\""},
        {V2 "\"shard\":0,\"shards\":1,\"levels\":[]}\nnot json\n", ":2: not a JSON object"},
        /* Numbers out of the range of the type they are stored in. */
        {V2 "\"shard\":100,\"shards\":4294967306,\"levels\":[]}\n",
         ":1: not a ttsbuf bench records header"},
        {V2 "\"shard\":0.5,\"shards\":1,\"levels\":[]}\n", ":1: not a ttsbuf bench records header"},
        {V2 "\"shard\":0,\"shards\":1,\"levels\":[{\"mode\":\"closed\","
            "\"concurrency\":1e300,\"rate\":0}]}\n",
         ":1: not a ttsbuf bench records header"},
        {REC_HDR "{\"id\":1e300," REC_BODY "}\n", ":2: \"id\""},
        {REC_HDR "{\"id\":-0.5," REC_BODY "}\n", ":2: \"id\""},
        {REC_HDR "{\"prompt\":4294967296,\"id\":1," REC_BODY "}\n", ":2: \"id\" or \"prompt\""},
        {REC_HDR "{\"underruns\":5e9,\"id\":1," REC_BODY "}\n", ":2: a count"},
        {REC_HDR "{\"http_status\":1e20,\"id\":1," REC_BODY "}\n", ":2: a count"},
        {REC_HDR "{\"usage_tokens\":1e19,\"id\":1," REC_BODY "}\n", ":2: a count"},
        {REC_HDR "{\"events\":2.5,\"id\":1," REC_BODY "}\n", ":2: a count"},
        {REC_HDR "{\"level\":0.5,\"id\":1," REC_BODY "}\n", ":2: \"level\""},
        {REC_HDR "{\"warning\":7,\"id\":1," REC_BODY "}\n", ":2: \"warning\" is not a string"},
        {REC_HDR "{\"id\":1," REC_BODY "}\n{\"id\":2," REC_BODY "}\n{\"id\":1e19," REC_BODY "}\n",
         ":4: \"id\""},
        /* A version that is not the one read is named as written: %g
         * called 2.0000001 "2", beside "reads version 2". */
        {"{\"schema\":{\"name\":\"ttsbuf.bench_records\",\"version\":2.0000001},\"options\":{},"
         "\"shard\":0,\"shards\":1,\"levels\":[]}\n",
         ":1: bench records of schema version 2.0000001; this ttsbuf reads "
         "ttsbuf.bench_records versions 2 and 3"},
        {"{\"ttsbuf_bench\":0.99999999999,\"shard\":0,\"shards\":1,\"levels\":[]}\n",
         ":1: bench records of schema version 0.99999999999 (\"ttsbuf_bench\": 0.99999999999"},
        /* Negative times and metrics: a summary over them would be
         * quietly wrong. */
        {REC_HDR "{\"ttft_s\":-0.1,\"id\":1," REC_BODY "}\n",
         ":2: \"ttft_s\" is negative or past 1e9 s, or not a number or null"},
        {REC_HDR "{\"ttfa_s\":1e300,\"id\":1," REC_BODY "}\n",
         ":2: \"ttfa_s\" is negative or past"},
        {REC_HDR "{\"gap_max_s\":-1e-9,\"id\":1," REC_BODY "}\n", ":2: \"gap_max_s\" is negative"},
        {REC_HDR "{\"min_tps\":-5,\"id\":1," REC_BODY "}\n", ":2: \"min_tps\" is negative"},
        {REC_HDR "{\"t_start\":-1,\"id\":1," REC_BODY "}\n",
         ":2: \"t_sched\", \"t_start\" or \"t_end\" is negative or past 1e9 s"},
        {REC_HDR "{\"t_end\":1.7e308,\"id\":1," REC_BODY "}\n", ":2: \"t_sched\", \"t_start\""},
        {REC_HDR "{\"itl_s\":[0.1,-0.2],\"id\":1," REC_BODY "}\n",
         ":2: \"itl_s\" holds a negative number, one past 1e9 s or a non-number"},
    };
    static const struct {
        const char *text, *want;
    } prompts[] = {
        {"{\"prompt\": \"hi\"}\n{\"prompt\": 3}\n", ":2: \"prompt\" is not"},
        {"\n\n", "holds no prompt"},
        {"{\"prompt\": \"a\", \"messages\": []}\n", ":1: give one of"},
        {"{\"messages\": [{\"role\":\"user\",\"content\":\"x\"}]}\n[1]\n", ":2: not a JSON object"},
        {"{\"prompt\": \"\xff\"}\n", ":1: invalid UTF-8"},
    };
    char path[64], err[256];
    snprintf(path, sizeof(path), "/tmp/ttsbuf-bench-bad-%d.jsonl", (int)getpid());
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
        struct tb_bench_recs r;
        struct tb_bench_meta m;
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(recs[i].text, f);
        fclose(f);
        tb_bench_recs_init(&r);
        assert_true(tb_bench_read(path, &m, &r, err, sizeof(err)) < 0);
        if (strstr(err, recs[i].want) == NULL)
            fail_msg("records case %zu: '%s' lacks '%s'", i, err, recs[i].want);
        tb_bench_recs_free(&r);
    }
    for (size_t i = 0; i < sizeof(prompts) / sizeof(prompts[0]); i++) {
        struct tb_bench_prompts p;
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(prompts[i].text, f);
        fclose(f);
        assert_true(tb_bench_prompts_load(path, &p, err, sizeof(err)) < 0);
        if (strstr(err, prompts[i].want) == NULL)
            fail_msg("prompts case %zu: '%s' lacks '%s'", i, err, prompts[i].want);
    }
    {
        struct tb_bench_prompts p;
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(
            "{\"prompt\": \"one\"}\n\n{\"messages\": [{\"role\":\"user\",\"content\":\"two\"}]}\n",
            f);
        fclose(f);
        assert_int_equal(tb_bench_prompts_load(path, &p, err, sizeof(err)), 0);
        assert_int_equal(p.n, 2);
        assert_string_equal(p.v[0].prompt, "one");
        assert_non_null(strstr(p.v[1].messages_json, "\"two\""));
        tb_bench_prompts_free(&p);
    }
    unlink(path);
}

/* ---- the binary ---- */

/* Bad values: exit 2 and one line naming the flag. */
static void cli_bad_values(void **state)
{
    (void)state;
    static const struct {
        const char *args, *want;
    } bad[] = {
        {"-c 0", "-c: '0' is outside"},
        {"-c 1,,2", "-c: '1,,2' is not a comma-separated list"},
        {"-c 1,", "-c: a trailing comma"},
        {"-c 1.5", "-c: '1.5' is not a whole number"},
        {"--rate -1", "--rate: '-1' is outside"},
        {"-c 2 --rate 1", "not both"},
        {"--max-concurrency 4", "--max-concurrency applies to --rate"},
        {"--requests 0", "--requests: '0' is outside"},
        {"--requests 5 --duration 2", "not both"},
        {"--shard 3/3", "--shard"},
        {"--shard x", "--shard: 'x' is not I/N"},
        {"--shards 4", "no index in $JOB_COMPLETION_INDEX"},
        {"--require foo=1", "--require: unknown gate 'foo'"},
        {"--require ttft-p95=abc", "--require: 'abc' is not a number"},
        {"--require gapless=2", "is outside 0..1"},
        {"--require ttft", "is not NAME=VALUE"},
        {"--arrivals sometimes", "--arrivals: 'sometimes'"},
        {"--record x", "unknown option '--record'"},
        {"--svg x.svg", "unknown option '--svg'"},
        {"--api klingon", "--api: 'klingon' is not chat"},
        {"--max-tokens 0", "--max-tokens: '0' is outside"},
        {"-H nocolon", "-H: 'nocolon' is not 'Name: value'"},
        {"--api-key-file /nonexistent/k", "--api-key-file: /nonexistent/k"},
        {"--chunk nope", "--chunk: unknown policy"},
        {"--prompts /nonexistent/p.jsonl", "/nonexistent/p.jsonl"},
        {"--bogus", "unknown option '--bogus'"},
    };
    char dir[128], cmd[1024];
    tb_test_tmpdir(dir, sizeof(dir), "bench", "bad");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *err;
        int code;
        snprintf(cmd, sizeof(cmd),
                 "env -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID '%s' bench --base-url "
                 "http://127.0.0.1:9/v1 --model m %s -q >%s/out 2>%s/err",
                 tb_test_bin(), bad[i].args, dir, dir);
        code = tb_test_sh(cmd);
        snprintf(cmd, sizeof(cmd), "%s/err", dir);
        err = tb_test_slurp_str(cmd);
        if (code != 2 || strstr(err, bad[i].want) == NULL || strncmp(err, "ttsbuf: ", 8) != 0)
            fail_msg("bench %s: exit %d, stderr '%s' (wanted 2 and '%s')", bad[i].args, code, err,
                     bad[i].want);
        free(err);
    }
    {
        /* Chat messages with the prompt-only API: refused before a level
         * starts, naming the prompt (they used to be sent as empty
         * prompts, or fail the level's first request). */
        char *err;
        FILE *f;
        snprintf(cmd, sizeof(cmd), "%s/p.jsonl", dir);
        f = fopen(cmd, "w");
        assert_non_null(f);
        fputs("{\"prompt\": \"Hello.\"}\n{\"messages\": [{\"role\": \"user\", \"content\": "
              "\"Hi.\"}]}\n",
              f);
        fclose(f);
        snprintf(cmd, sizeof(cmd),
                 "'%s' bench --mock --api completions --prompts %s/p.jsonl -c 1 --requests 2 "
                 ">%s/out 2>%s/err",
                 tb_test_bin(), dir, dir, dir);
        assert_int_equal(tb_test_sh(cmd), 2);
        snprintf(cmd, sizeof(cmd), "%s/out", dir);
        err = tb_test_slurp_str(cmd);
        assert_string_equal(err, ""); /* no report of an empty level */
        free(err);
        snprintf(cmd, sizeof(cmd), "%s/err", dir);
        err = tb_test_slurp_str(cmd);
        assert_non_null(strstr(err, "p.jsonl: prompt 2 is chat messages, which need a chat API"));
        free(err);
    }
    snprintf(cmd, sizeof(cmd), "env -u OPENAI_BASE_URL '%s' bench --model m 2>%s/err",
             tb_test_bin(), dir);
    assert_int_equal(tb_test_sh(cmd), 2);
    snprintf(cmd, sizeof(cmd), "env -u OPENAI_MODEL '%s' bench --base-url http://x/v1 2>%s/err",
             tb_test_bin(), dir);
    assert_int_equal(tb_test_sh(cmd), 2);
    /* Nothing listening: every request fails, exit 3, the kind counted. */
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url http://127.0.0.1:9/v1 --model m -c 2 --requests 2 --json "
             ">%s/out 2>%s/err",
             tb_test_bin(), dir, dir);
    assert_int_equal(tb_test_sh(cmd), 3);
    {
        char *out;
        snprintf(cmd, sizeof(cmd), "%s/out", dir);
        out = tb_test_slurp_str(cmd);
        assert_non_null(strstr(out, "\"transport\":2"));
        free(out);
    }
    tb_test_rm_rf(dir);
}

/* A number from the JSON summary: levels[level].metrics[metric][stat] or
 * levels[level][key]. */
static double json_level(const char *text, int level, const char *metric, const char *key)
{
    cJSON *root = cJSON_Parse(text), *l, *v;
    double out;
    assert_non_null(root);
    l = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "levels"), level);
    assert_non_null(l);
    if (metric != NULL)
        l = cJSON_GetObjectItem(l, metric);
    v = cJSON_GetObjectItem(l, key);
    if (!cJSON_IsNumber(v))
        fail_msg("no number %s.%s in %s", metric ? metric : "", key, text);
    out = v->valuedouble;
    cJSON_Delete(root);
    return out;
}

/* Gates: pass, fail with one line per failed gate (per level), exit 1. */
static void cli_gates(void **state)
{
    (void)state;
    struct tb_test_mock m;
    char dir[128], cmd[1024], *err;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_test_tmpdir(dir, sizeof(dir), "bench", "gates");
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock -c 2 --requests 2 --wpm 1000 "
             "--require gapless=1 --require ttft-p95=1 --require tps-p95=50 --require errors=0 "
             "-q >%s/out 2>%s/err",
             tb_test_bin(), m.base, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    /* The same gates in the one vocabulary (the names above are aliases). */
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock -c 2 --requests 2 --wpm 1000 "
             "--require gapless_share=1 --require ttft_s_p95=1 --require decode_tps_p5=50 "
             "--require errors=0 --require ttft_s_mean=1 --require itl_s_p99=1 -q >%s/out 2>%s/err",
             tb_test_bin(), m.base, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    /* A rate's gate is a floor whatever the statistic: the fast tail of a
     * fast stream passes decode_tps_p95=10 and fails at 100000. */
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock -c 1 --requests 2 --wpm 1000 "
             "--require decode_tps_p95=10 --require decode_tps_max=10 -q >%s/out 2>%s/err",
             tb_test_bin(), m.base, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock -c 1 --requests 2 --wpm 1000 "
             "--require decode_tps_p95=100000 -q >%s/out 2>%s/err",
             tb_test_bin(), m.base, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 1);
    snprintf(cmd, sizeof(cmd), "%s/err", dir);
    err = tb_test_slurp_str(cmd);
    assert_non_null(strstr(err, "ttsbuf: gate decode_tps_p95 failed at c=1: "));
    assert_non_null(strstr(err, "needs >= 100000"));
    free(err);
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock -c 1 --requests 2 --wpm 1000 "
             "--require decode_tps_p5=100000 -q >%s/out 2>%s/err",
             tb_test_bin(), m.base, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 1);
    snprintf(cmd, sizeof(cmd), "%s/err", dir);
    err = tb_test_slurp_str(cmd);
    assert_non_null(strstr(err, "ttsbuf: gate decode_tps_p5 failed at c=1: "));
    assert_non_null(strstr(err, "needs >= 100000"));
    free(err);
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock -c 1,2 --requests 2 --wpm 1000 "
             "--require ttft-p95=0.001 --require tps-min=1000 --require gapless=0.5 "
             "--preroll 0.5 -q >%s/out 2>%s/err",
             tb_test_bin(), m.base, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 1);
    snprintf(cmd, sizeof(cmd), "%s/err", dir);
    err = tb_test_slurp_str(cmd);
    assert_non_null(strstr(err, "ttsbuf: gate ttft-p95 failed at c=1: "));
    assert_non_null(strstr(err, "ttsbuf: gate ttft-p95 failed at c=2: "));
    assert_non_null(strstr(err, "ttsbuf: gate tps-min failed at c=2: "));
    /* gapless passes: the 0.5 s pre-roll holds through a busy machine's
     * stall (without it, a run beside eight other groups gapped one) */
    assert_null(strstr(err, "gapless"));
    {
        size_t lines = 0;
        for (const char *p = err; *p; p++)
            lines += *p == '\n';
        assert_int_equal(lines, 4);
    }
    free(err);
    /* --fail-on-underrun is the gate gapless=1. */
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock+stall@12:0.5 -c 1 --requests 1 --wpm 1000 "
             "--fail-on-underrun -q --csv >%s/out 2>%s/err",
             tb_test_bin(), m.base, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 1);
    snprintf(cmd, sizeof(cmd), "%s/out", dir);
    err = tb_test_slurp_str(cmd);
    assert_non_null(strstr(err, "level,mode,concurrency,rate,requests,ok,errors,incomplete,failed,"
                                "errors_by_kind_http,"));
    assert_non_null(strstr(err, ",gapless,gapless_share,success_share,"));
    assert_non_null(strstr(err, "\"c=1\",closed,1,,1,1,0,0,"));
    free(err);
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* A provider that refuses its first connection (HTTP 503) and streams a
 * short answer on every later one. */
static void s_first_refused(struct peer *pe, int fd, int conn)
{
    static const char refused[] = "{\"error\":{\"message\":\"overloaded\",\"type\":\"x\"}}";
    char head[256];
    (void)pe;
    if (conn == 0) {
        snprintf(head, sizeof(head),
                 "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                 sizeof(refused) - 1);
        peer_send_str(fd, head);
        peer_send_str(fd, refused);
        return;
    }
    peer_send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                      "Connection: close\r\n\r\n");
    for (int k = 0; k < 4; k++) {
        char ev[160];
        snprintf(ev, sizeof(ev),
                 "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d.\"}}]}\n\n", k);
        peer_send_str(fd, ev);
    }
    peer_send_str(fd, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}"
                      "\n\ndata: [DONE]\n\n");
}

/* A run with a failed request fails (exit 1) through the default gate
 * success_share=1, which the report states and the failure line names,
 * after the report; a success_share or errors gate allows failures. */
static void cli_default_gate(void **state)
{
    static const struct {
        const char *gate;
        int code;
    } runs[] = {{"", 1},
                {"--require success_share=0.5", 0},
                {"--require errors=1", 0},
                {"--require errors=0", 1}};
    char path[64], cmd[1024];
    (void)state;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-bench-gate-%d.out", (int)getpid());
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        struct peer pe;
        char *out;
        int code;
        memset(&pe, 0, sizeof(pe));
        peer_start(&pe, "127.0.0.1", s_first_refused);
        /* The report and the failure lines in one file, as on a terminal
         * or in a CI log. */
        snprintf(cmd, sizeof(cmd),
                 "'%s' bench --base-url http://127.0.0.1:%d/v1 --model m -c 1 --requests 4 %s "
                 ">%s 2>&1",
                 tb_test_bin(), pe.port, runs[i].gate, path);
        code = tb_test_sh(cmd);
        peer_stop(&pe);
        out = tb_test_slurp_str(path);
        if (code != runs[i].code)
            fail_msg("bench %s: exit %d, wanted %d:\n%s", runs[i].gate, code, runs[i].code, out);
        assert_non_null(strstr(out, "; errors: http 1\n"));
        if (runs[i].gate[0] == '\0') {
            const char *rep = strstr(out, "Gates: success_share >= 1 (the default: every "
                                          "request must succeed)\n");
            const char *line = strstr(out, "ttsbuf: gate success_share failed at c=1: 0.75, "
                                           "needs >= 1 (the default gate: every request must "
                                           "succeed; --require success_share=X or errors=N "
                                           "allows failures)\n");
            if (rep == NULL || line == NULL || line < rep)
                fail_msg("the default gate is not stated, or its failure not after the "
                         "report:\n%s",
                         out);
        } else {
            assert_null(strstr(out, "(the default"));
        }
        free(out);
    }
    remove(path);
}

/* --out: records and traces; each trace replays through `sim --trace`
 * to its record's numbers, with the same playout options (to the 15
 * significant digits sim's JSON prints). */
static void cli_out_replay(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_recs r;
    struct tb_bench_meta meta;
    char dir[128], cmd[2048], err[256], path[256];
    const char *opts = "--chunk clause --wpm 900 --preroll 0.05 --tts-latency 0.02";
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_test_tmpdir(dir, sizeof(dir), "bench", "out");
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock+stall@9:0.3 -c 3 --requests 3 %s --out %s -q "
             ">%s/report 2>%s/err",
             tb_test_bin(), m.base, opts, dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    tb_bench_recs_init(&r);
    if (tb_bench_read(path, &meta, &r, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(r.n, 3);
    assert_non_null(strstr(meta.options, "\"chunk\":\"clause\""));
    for (size_t i = 0; i < r.n; i++) {
        char *out;
        cJSON *j;
        snprintf(cmd, sizeof(cmd), "'%s' sim --trace %s/traces/c=3.jsonl --request %llu %s --json >%s/sim",
                 tb_test_bin(), dir, (unsigned long long)r.v[i].id, opts, dir);
        assert_int_equal(tb_test_sh(cmd), 0);
        snprintf(path, sizeof(path), "%s/sim", dir);
        out = tb_test_slurp_str(path);
        j = cJSON_Parse(out);
        assert_non_null(j);
        assert_true(r.v[i].underruns >= 1);
        assert_near(cJSON_GetObjectItem(j, "ttft_s")->valuedouble, r.v[i].ttft,
                    1e-12 * fabs(r.v[i].ttft));
        assert_near(cJSON_GetObjectItem(j, "ttfa_s")->valuedouble, r.v[i].ttfa,
                    1e-12 * fabs(r.v[i].ttfa));
        assert_near(cJSON_GetObjectItem(j, "min_tps")->valuedouble, r.v[i].min_tps,
                    1e-12 * fabs(r.v[i].min_tps));
        assert_near(cJSON_GetObjectItem(j, "speedup_needed")->valuedouble, r.v[i].speedup,
                    1e-12 * fabs(r.v[i].speedup));
        assert_near(cJSON_GetObjectItem(j, "gap_total_s")->valuedouble, r.v[i].gap_total,
                    1e-12 * fabs(r.v[i].gap_total));
        assert_near(cJSON_GetObjectItem(j, "gap_max_s")->valuedouble, r.v[i].gap_max,
                    1e-12 * fabs(r.v[i].gap_max));
        assert_near(cJSON_GetObjectItem(j, "decode_tps")->valuedouble, r.v[i].decode_tps,
                    1e-12 * fabs(r.v[i].decode_tps));
        assert_int_equal(cJSON_GetObjectItem(j, "underruns")->valueint, r.v[i].underruns);
        assert_int_equal(cJSON_GetObjectItem(j, "usage_tokens")->valueint, r.v[i].usage_tokens);
        cJSON_Delete(j);
        free(out);
    }
    tb_bench_recs_free(&r);
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* With a TTS stage that stalls 5 s on chunk 3, every record says its
 * silence by cause and that no LLM rate removes it (min_tps null and the
 * reason), as sim says for the same trace; the summary counts those
 * requests, and the reader refuses a record whose min_tps contradicts
 * its reason. */
static void cli_out_tts_stage(void **state)
{
    (void)state;
    struct tb_test_mock m;
    struct tb_bench_recs r;
    struct tb_bench_meta meta;
    char dir[128], cmd[2048], err[256], path[256], opts[512];
    cJSON *sum;
    char *text;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_test_tmpdir(dir, sizeof(dir), "bench", "tts");
    snprintf(opts, sizeof(opts), "--tts-latency list:%s", tb_test_data("tts/stall.lat"));
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock -c 2 --requests 2 %s --out %s "
             "--html %s/page.html -q >%s/report 2>%s/err",
             tb_test_bin(), m.base, opts, dir, dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    /* The page's table says none (no rate helps), not "-" (not measured). */
    snprintf(path, sizeof(path), "%s/page.html", dir);
    text = tb_test_slurp_str(path);
    assert_non_null(strstr(text, "title=\"" TB_MIN_TPS_NONE_REASON "\">none</td>"));
    free(text);
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    tb_bench_recs_init(&r);
    if (tb_bench_read(path, &meta, &r, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < r.n; i++) {
        cJSON *j;
        const cJSON *why;
        assert_true(r.v[i].staged);
        assert_true(r.v[i].min_tps_none);
        assert_true(isnan(r.v[i].min_tps) && isnan(r.v[i].speedup));
        assert_true(r.v[i].gap_tts > 0);
        assert_near(r.v[i].gap_llm + r.v[i].gap_tts, r.v[i].gap_total, 1e-9);
        snprintf(cmd, sizeof(cmd), "'%s' sim --trace %s/traces/c=2.jsonl --request %llu %s --json >%s/sim",
                 tb_test_bin(), dir, (unsigned long long)r.v[i].id, opts, dir);
        assert_int_equal(tb_test_sh(cmd), 0);
        snprintf(path, sizeof(path), "%s/sim", dir);
        text = tb_test_slurp_str(path);
        j = cJSON_Parse(text);
        assert_non_null(j);
        assert_near(cJSON_GetObjectItem(j, "gap_llm_s")->valuedouble, r.v[i].gap_llm, 1e-12);
        assert_near(cJSON_GetObjectItem(j, "gap_tts_s")->valuedouble, r.v[i].gap_tts, 1e-12);
        why = cJSON_GetObjectItem(j, "min_tps_reason");
        assert_true(cJSON_IsString(why));
        assert_string_equal(why->valuestring, TB_MIN_TPS_NONE_REASON);
        cJSON_Delete(j);
        free(text);
    }
    tb_bench_recs_free(&r);
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    text = tb_test_slurp_str(path);
    sum = cJSON_Parse(text);
    assert_non_null(sum);
    {
        const cJSON *lv = cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "levels"), 0);
        assert_non_null(lv);
        assert_int_equal(cJSON_GetObjectItem(lv, "min_tps_none")->valueint, 2);
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(lv, "min_tps"), "count")->valueint,
                         0);
    }
    cJSON_Delete(sum);
    free(text);
    snprintf(cmd, sizeof(cmd),
             "sed '2s/\"min_tps\":null/\"min_tps\":7.5/' %s/records.jsonl >%s/bad.jsonl", dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/bad.jsonl", dir);
    tb_bench_recs_init(&r);
    assert_int_not_equal(tb_bench_read(path, &meta, &r, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "\"min_tps\" is a number beside a reason why there is none"));
    assert_non_null(strstr(err, ":2"));
    tb_bench_recs_free(&r);
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* A stream with a finish reason but no [DONE]: bench keeps it as a
 * success with run's warning, writes the warning into its record, and
 * merge reads it back and says it as bench did. */
static void cli_out_warning(void **state)
{
    (void)state;
    static const char want[] = "the stream ended without [DONE] (finish_reason stop)";
    struct tb_test_mock m;
    struct tb_bench_recs r;
    struct tb_bench_meta meta;
    char dir[128], cmd[2048], err[256], path[256];
    char *text, *bench_err, *merge_err;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_test_tmpdir(dir, sizeof(dir), "bench", "warn");
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock+nodone -c 2 --requests 2 --out %s "
             ">%s/report 2>%s/err && '%s' merge %s 2>%s/merge_err >/dev/null",
             tb_test_bin(), m.base, dir, dir, dir, tb_test_bin(), dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    text = tb_test_slurp_str(path);
    /* Both records carry it, as a plain string beside a null error. */
    {
        const char *p = text;
        int n = 0;
        snprintf(cmd, sizeof(cmd), "\"error\":null,\"warning\":\"%s\"", want);
        while ((p = strstr(p, cmd)) != NULL) {
            n++;
            p++;
        }
        if (n != 2)
            fail_msg("%d records say '%s' in:\n%s", n, cmd, text);
    }
    free(text);
    tb_bench_recs_init(&r);
    if (tb_bench_read(path, &meta, &r, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.v[i].error, 0);
        assert_string_equal(r.v[i].warning, want);
    }
    {
        const char *first = NULL;
        assert_int_equal(tb_bench_recs_warned(&r, &first), 2);
        assert_string_equal(first, want);
    }
    tb_bench_recs_free(&r);
    snprintf(path, sizeof(path), "%s/err", dir);
    bench_err = tb_test_slurp_str(path);
    snprintf(path, sizeof(path), "%s/merge_err", dir);
    merge_err = tb_test_slurp_str(path);
    snprintf(cmd, sizeof(cmd), "ttsbuf: note: 2 streams, the first: %s\n", want);
    if (strstr(bench_err, cmd) == NULL || strcmp(merge_err, cmd) != 0)
        fail_msg("bench said '%s', merge '%s'; want '%s'", bench_err, merge_err, cmd);
    free(bench_err);
    free(merge_err);
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* Shards: (1) one run's records split by id into 3 shard files merge to
 * exactly that run's summary, byte for byte; (2) three processes with
 * --shard (and the Kubernetes / Slurm index variables) + merge cover the
 * same requests as one process, with the same counts. */
static void cli_shards_merge(void **state)
{
    (void)state;
    struct tb_test_mock m;
    char dir[128], cmd[4096], path[256], *one, *merged, *again;
    const char *common = "--model mock+stall@12:0.3 -c 3,6 --requests 6 --wpm 1000 -q";
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_test_tmpdir(dir, sizeof(dir), "bench", "shards");
    snprintf(cmd, sizeof(cmd), "'%s' bench --base-url %s %s --out %s/one --json >%s/one.json",
             tb_test_bin(), m.base, common, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    /* (1) split the records file by id mod 3, rewriting the header. */
    snprintf(cmd, sizeof(cmd),
             "cd %s && for i in 0 1 2; do mkdir -p split; "
             "head -1 one/records.jsonl | sed 's/\"shard\":0,\"shards\":1/\"shard\":'$i',"
             "\"shards\":3/' >split/records-$i-of-3.jsonl; "
             "tail -n +2 one/records.jsonl | awk -v i=$i -F'\"id\":' "
             "'{split($2,a,\",\"); if (a[1] %% 3 == i) print}' >>split/records-$i-of-3.jsonl; "
             "done && '%s' merge --json split >merged.json",
             dir, tb_test_bin());
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/one/summary.json", dir);
    one = tb_test_slurp_str(path);
    snprintf(path, sizeof(path), "%s/merged.json", dir);
    merged = tb_test_slurp_str(path);
    assert_true(strlen(one) > 100);
    /* The same document but for its head (which command, and when). */
    assert_non_null(strstr(one, "\"command\":\"bench\""));
    assert_non_null(strstr(merged, "\"command\":\"merge\""));
    assert_non_null(strstr(one, "\"options\":"));
    assert_non_null(strstr(merged, "\"options\":"));
    assert_string_equal(strstr(one, "\"options\":"), strstr(merged, "\"options\":"));
    free(merged);
    /* merge heads its own report, and says which field of a shard's
     * header differs from the first's. */
    snprintf(
        cmd, sizeof(cmd),
        "cd %s && '%s' merge split >merged.txt && mkdir -p odd && "
        "cp split/records-0-of-3.jsonl split/records-2-of-3.jsonl odd/ && "
        "sed '1s/\"wpm\":1000/\"wpm\":900/; 1s/\"model\":\"mock+stall/\"model\":\"other+stall/' "
        "split/records-1-of-3.jsonl >odd/records-1-of-3.jsonl",
        dir, tb_test_bin());
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/merged.txt", dir);
    merged = tb_test_slurp_str(path);
    assert_true(strncmp(merged, "ttsbuf merge: ", 14) == 0);
    free(merged);
    snprintf(cmd, sizeof(cmd), "merge %s/odd", dir);
    tb_test_expect_error(cmd, 2, "records-1-of-3.jsonl is not of the run of ");
    tb_test_expect_error(cmd, 2, ": the model: other+stall@12:0.3 here, mock+stall@12:0.3 there");
    snprintf(cmd, sizeof(cmd),
             "cd %s && sed -i '1s/\"model\":\"other+stall/\"model\":\"mock+stall/' "
             "odd/records-1-of-3.jsonl",
             dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "merge %s/odd", dir);
    tb_test_expect_error(cmd, 2, ": option wpm: 900 here, 1000 there");
    /* A shard missing, or given twice. */
    snprintf(cmd, sizeof(cmd),
             "'%s' merge %s/split/records-0-of-3.jsonl %s/split/records-1-of-3.jsonl 2>%s/err",
             tb_test_bin(), dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 2);
    snprintf(path, sizeof(path), "%s/err", dir);
    merged = tb_test_slurp_str(path);
    assert_non_null(strstr(merged, "shard 2 of 3 is missing"));
    free(merged);
    snprintf(cmd, sizeof(cmd), "'%s' merge %s/split %s/split/records-1-of-3.jsonl 2>%s/err",
             tb_test_bin(), dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 2);
    /* (2) three processes at once: --shard, the Kubernetes and the Slurm
     * index.  They share one --out directory, so the output collector is
     * off for them (it would copy a sibling's file while still empty); the
     * records of (1) and the merged result below are collected. */
    snprintf(cmd, sizeof(cmd),
             "cd %s && B='env -u TB_COLLECT_DIR %s'; "
             "$B bench --base-url %s %s --shard 0/3 --out par >/dev/null & "
             "JOB_COMPLETION_INDEX=1 $B bench --base-url %s %s --shards 3 --out par >/dev/null & "
             "env -u JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID=2 $B bench --base-url %s %s "
             "--shards 3 --out par >/dev/null & wait && ls par/records-*-of-3.jsonl | wc -l "
             ">count && '%s' merge par --json >par.json",
             dir, tb_test_bin(), m.base, common, m.base, common, m.base, common, tb_test_bin());
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/count", dir);
    again = tb_test_slurp_str(path);
    assert_int_equal(atoi(again), 3);
    free(again);
    snprintf(path, sizeof(path), "%s/par.json", dir);
    again = tb_test_slurp_str(path);
    for (int l = 0; l < 2; l++) {
        assert_near(json_level(again, l, NULL, "requests"), json_level(one, l, NULL, "requests"),
                    0);
        assert_near(json_level(again, l, NULL, "ok"), 6, 0);
        assert_near(json_level(again, l, NULL, "events"), json_level(one, l, NULL, "events"), 0);
        assert_near(json_level(again, l, NULL, "tokens"), json_level(one, l, NULL, "tokens"), 0);
        assert_near(json_level(again, l, NULL, "gapless"), 0, 0);
        assert_near(json_level(again, l, "underruns", "max"), 1, 0);
        assert_near(json_level(again, l, "itl_s", "count"), json_level(one, l, "itl_s", "count"),
                    0);
        /* Times differ between runs (three processes at once on a busy
         * machine): only sanity here, the exact equality is (1)'s. */
        assert_near(json_level(again, l, "ttft_s", "p50"), T0 + 0.2, 0.2);
        assert_true(json_level(again, l, "gap_max_s", "min") > 0.001);
    }
    free(again);
    free(one);
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* merge on headers whose shard numbers wrap or overflow the integer they
 * are stored in: a one-line error naming the file and line, never a write
 * past the shard table (the ASan build catches one). */
static void cli_merge_hostile(void **state)
{
    (void)state;
    static const char *const hdr[] = {
        "\"shard\":100,\"shards\":4294967306",
        "\"shard\":3e9,\"shards\":4",
        "\"shard\":0,\"shards\":1e300",
        "\"shard\":1,\"shards\":-1e300",
    };
    char dir[128], path[256], args[512];
    tb_test_tmpdir(dir, sizeof(dir), "bench", "hostile");
    for (size_t i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++) {
        FILE *f;
        snprintf(path, sizeof(path), "%s/records-%zu.jsonl", dir, i);
        f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, V2 "%s,\"levels\":[]}\n", hdr[i]);
        fclose(f);
        snprintf(args, sizeof(args), "merge %s", path);
        snprintf(path, sizeof(path), "records-%zu.jsonl:1: not a ttsbuf bench records header", i);
        tb_test_expect_error(args, 2, path);
    }
    /* Records of the version before the output contract: refused, naming
     * the version they have and the one merge needs. */
    {
        FILE *f;
        snprintf(path, sizeof(path), "%s/records-old.jsonl", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "{\"ttsbuf_bench\":1,\"shard\":0,\"shards\":1,\"levels\":[],"
                   "\"options\":\"chunk=clause\"}\n");
        fclose(f);
        snprintf(args, sizeof(args), "merge %s", path);
        tb_test_expect_error(args, 2,
                             "records-old.jsonl:1: bench records of schema version 1 "
                             "(\"ttsbuf_bench\": 1, an older ttsbuf); this ttsbuf reads "
                             "ttsbuf.bench_records version 3: record them again with this "
                             "version");
    }
    /* A negative TTFT was merged into the summary's percentiles. */
    {
        FILE *f;
        snprintf(path, sizeof(path), "%s/records-neg.jsonl", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(REC_HDR "{\"ttft_s\":-3,\"id\":0," REC_BODY "}\n", f);
        fclose(f);
        snprintf(args, sizeof(args), "merge %s", path);
        tb_test_expect_error(args, 2, "records-neg.jsonl:2: \"ttft_s\" is negative or past 1e9 s");
    }
    tb_test_rm_rf(dir);
}

/* --prompts is read a line at a time: 400 MB of zeros without a newline
 * stop at the 1 MiB line cap, in bounded memory (getline read them all). */
static void cli_prompts_bounded(void **state)
{
    char cmd[512], path[64], *err;
    long rss;
    int code;
    (void)state;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-prompts-%d.err", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "head -c 400000000 /dev/zero | '%s' bench --prompts /dev/stdin --base-url "
             "http://127.0.0.1:9/v1 --model m -q 2>%s",
             tb_test_bin(), path);
    rss = tb_test_sh_rss(cmd, &code);
    err = tb_test_slurp_str(path);
    remove(path);
    if (code != 2 || strstr(err, "/dev/stdin:1: line is over the 1048576-byte cap") == NULL ||
        rss > TB_TEST_RSS_SCALE * 160L * 1024) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "%s: exit %d, peak RSS %ld KiB, stderr '%s'", cmd, code, rss,
                 err);
        free(err);
        fail_msg("%s", msg);
    }
    free(err);
}

/* Every dialect `run` speaks, bench speaks: each streams the mock's
 * events in full, with the usage where the dialect reports it. */
static void cli_dialects(void **state)
{
    (void)state;
    static const char *const apis[] = {"chat", "completions", "anthropic", "ollama"};
    struct tb_test_mock m;
    char dir[128], cmd[1024], root[64], *out;
    double lag;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_test_tmpdir(dir, sizeof(dir), "bench", "dialects");
    snprintf(root, sizeof(root), "%.*s", (int)(strlen(m.base) - 3), m.base); /* no "/v1" */
    for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++) {
        snprintf(cmd, sizeof(cmd),
                 "'%s' bench --api %s --base-url %s%s --model mock -c 2 --requests 2 -q --json "
                 ">%s/out 2>%s/err",
                 tb_test_bin(), apis[i], root, strcmp(apis[i], "ollama") == 0 ? "" : "/v1", dir,
                 dir);
        tb_test_lag_start();
        assert_int_equal(tb_test_sh(cmd), 0);
        lag = tb_test_lag_stop();
        snprintf(cmd, sizeof(cmd), "%s/out", dir);
        out = tb_test_slurp_str(cmd);
        assert_near(json_level(out, 0, NULL, "ok"), 2, 0);
        assert_near(json_level(out, 0, NULL, "events"), 2 * N_EV, 0);
        assert_near(json_level(out, 0, "decode_tps", "count"), 2, 0);
        assert_near(json_level(out, 0, "ttft_s", "p50"), T0, ttft_tol(lag));
        free(out);
    }
    snprintf(cmd, sizeof(cmd), "'%s' bench --api klingon --base-url %s --model m 2>%s/err",
             tb_test_bin(), root, dir);
    assert_int_equal(tb_test_sh(cmd), 2);
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* SIGINT mid-level: the requests cut are recorded as cancelled, the
 * partial report and records are written, exit 3.  While the level runs,
 * the records file already holds its header. */
static void cli_sigint(void **state)
{
    static const char head[] = "{\"schema\":{\"name\":\"ttsbuf.bench_records\"";
    (void)state;
    struct tb_test_mock m;
    char dir[128], cmd[2048], path[256], *out;
    tb_test_mock_start(&m, N_EV, T0, DT, NULL);
    tb_test_tmpdir(dir, sizeof(dir), "bench", "int");
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock+stall@3:20 -c 2 --requests 4 --out %s "
             ">%s/out 2>%s/err & p=$!; "
             /* the level has begun (its records' header), then 1.5 s: a
              * sanitizer's slow start on a loaded machine is not the stall */
             "for i in $(seq 300); do [ -s %s/records.jsonl ] && break; sleep 0.1; done; "
             "sleep 1.5; cp %s/records.jsonl %s.early; kill -INT $p; wait $p",
             tb_test_bin(), m.base, dir, dir, dir, dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 3);
    snprintf(path, sizeof(path), "%s.early", dir);
    out = tb_test_slurp_str(path);
    remove(path);
    assert_true(strncmp(out, head, strlen(head)) == 0);
    assert_non_null(strchr(out, '\n'));
    free(out);
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    out = tb_test_slurp_str(path);
    assert_non_null(strstr(out, "\"cancelled\":2"));
    assert_non_null(strstr(out, "\"incomplete\":2,\"failed\":0"));
    free(out);
    /* The report agrees with itself: the cut streams measured their first
     * token (the table counts them), so the text says so and never that
     * nothing arrived or that the percentiles are over no stream. */
    snprintf(path, sizeof(path), "%s/out", dir);
    out = tb_test_slurp_str(path);
    if (strstr(out, "0 events arrived") != NULL || strstr(out, "over 0 streams") != NULL ||
        strstr(out, "c=2: 2 requests, none complete: no gapless share, no system rate\n  the "
                    "metrics below are what the 2 cut or failed streams measured before they "
                    "ended\n") == NULL ||
        strstr(out, "\n  ttft_s                 2 ") == NULL)
        fail_msg("the interrupted report contradicts itself:\n%s", out);
    free(out);
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    out = tb_test_slurp_str(path);
    assert_non_null(strstr(out, "\"kind\":\"cancelled\""));
    assert_non_null(strstr(out, "\"end\":\"interrupted\""));
    free(out);
    /* Its traces say they were cut: a sweep of them finds no complete
     * stream (it counted them gap-free before they said so). */
    snprintf(cmd, sizeof(cmd), "'%s' sweep --trace %s/traces >%s/sw 2>&1", tb_test_bin(), dir, dir);
    assert_int_equal(tb_test_sh(cmd), 3);
    snprintf(path, sizeof(path), "%s/sw", dir);
    out = tb_test_slurp_str(path);
    if (strstr(out, "no complete stream to sweep (2 cut off, 0 failed)") == NULL ||
        strstr(out, "cut off (interrupted at ") == NULL)
        fail_msg("sweep of an interrupted bench's traces: '%s'", out);
    free(out);
    snprintf(path, sizeof(path), "%s/err", dir);
    out = tb_test_slurp_str(path);
    assert_non_null(strstr(out, "ttsbuf: bench: interrupted; 2 requests recorded"));
    free(out);
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* Against a closed port no stream has a TTFT: the percentiles are "-" in
 * the table and null in JSON (with n 0), never 0; the table states over
 * how many streams they are. */
static void cli_nothing_measured(void **state)
{
    (void)state;
    char args[256];
    struct tb_test_out o;
    cJSON *j, *lv, *ttft;
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m -c 2 --requests 4",
             tb_test_refused_port());
    o = tb_test_run(args);
    assert_int_equal(o.code, 3);
    assert_null(strstr(o.so, "0.000"));
    /* A refused connection is a failed request, not a cut-off one. */
    assert_non_null(
        strstr(o.so, "  c=2             4      0/4        0       -        -        -"));
    assert_non_null(strstr(o.so, "c=2: 4 requests, none complete, and no stream measured "
                                 "anything\n"));
    tb_test_out_free(&o);
    snprintf(args + strlen(args), sizeof(args) - strlen(args), " --json");
    j = tb_test_run_json(NULL, args, 3);
    lv = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "levels"), 0);
    assert_non_null(lv);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(lv, "gapless_share")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(lv, "system_tps")));
    ttft = cJSON_GetObjectItem(lv, "ttft_s");
    assert_int_equal(cJSON_GetObjectItem(ttft, "count")->valueint, 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(ttft, "p95")));
    cJSON_Delete(j);
}

/* --out refuses a directory that holds an earlier run; --force removes
 * that run's files first, so its traces cannot mix with the new ones;
 * a foreign file in traces/ is refused and never removed. */
static void cli_out_refuses_earlier_run(void **state)
{
    (void)state;
    char cmd[1024], dir[64];
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-bout-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --mock --max-tokens 4 -c 2,3 --requests 3 -q --out %s >/dev/null 2>&1 && "
             "test $(ls %s/traces | wc -l) -eq 2",
             tb_test_bin(), dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "bench --mock --max-tokens 4 -c 1 --requests 1 -q --out %s", dir);
    tb_test_expect_error(cmd, 2, "holds an earlier run");
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --mock --max-tokens 4 -c 1 --requests 1 -q --out %s --force >/dev/null "
             "2>&1 && test \"$(ls %s/traces)\" = c=1.jsonl && test $(wc -l <%s/records.jsonl) -eq 2",
             tb_test_bin(), dir, dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "touch %s/traces/notes.jsonl", dir);
    tb_test_sh(cmd);
    snprintf(cmd, sizeof(cmd), "bench --mock --max-tokens 4 -c 1 --requests 1 -q --out %s --force",
             dir);
    tb_test_expect_error(cmd, 2, "holds notes.jsonl, not a trace of ttsbuf's");
    snprintf(cmd, sizeof(cmd), "test -f %s/traces/notes.jsonl && rm -rf %s", dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
}

/* The members every result writes alike (jsonline.h): a measurement that
 * reads back exactly or null, and the error object or null. */
static void json_members(void **state)
{
    cJSON *o = cJSON_CreateObject(), *back;
    char *s;
    (void)state;
    assert_non_null(o);
    tb_json_add_num(o, "third", 1.0 / 3.0);
    tb_json_add_num(o, "unmeasured", NAN);
    tb_json_add_num(o, "inf", INFINITY);
    tb_json_add_error(o, NULL, "ignored", 500);
    s = cJSON_PrintUnformatted(o);
    assert_non_null(s);
    assert_string_equal(s, "{\"third\":0.3333333333333333,\"unmeasured\":null,\"inf\":null,"
                           "\"error\":null}");
    back = cJSON_Parse(s);
    assert_non_null(back);
    assert_true(cJSON_GetObjectItem(back, "third")->valuedouble == 1.0 / 3.0);
    cJSON_Delete(back);
    cJSON_free(s);
    cJSON_Delete(o);

    o = cJSON_CreateObject();
    assert_non_null(o);
    tb_json_add_error(o, "http", "quota exceeded", 429);
    s = cJSON_PrintUnformatted(o);
    assert_string_equal(s, "{\"error\":{\"kind\":\"http\",\"message\":\"quota exceeded\","
                           "\"http_status\":429}}");
    cJSON_free(s);
    cJSON_Delete(o);

    o = cJSON_CreateObject();
    assert_non_null(o);
    tb_json_add_error(o, "connect", NULL, 0);
    s = cJSON_PrintUnformatted(o);
    assert_string_equal(s, "{\"error\":{\"kind\":\"connect\",\"message\":\"\","
                           "\"http_status\":null}}");
    cJSON_free(s);
    cJSON_Delete(o);
}

/* A failed request's record has no what-if: the minimum TPS and speed-up
 * stay NaN (every output shows them as not measured), while a complete
 * answer of the same stream gets them. */
static void analyze_failed_has_no_whatif(void **state)
{
    struct tb_bench_recs r;
    struct tb_sim_opts o;
    char err[256];
    (void)state;
    tb_bench_recs_init(&r);
    tb_sim_opts_default(&o);
    for (int k = 0; k < 2; k++) {
        struct tb_bench_rec *x = tb_bench_recs_add(&r);
        assert_non_null(x);
        x->error = k == 0 ? 0 : TB_READER_TRUNCATED;
        for (int i = 0; i < 40; i++)
            assert_int_equal(
                tb_stream_append(x->stream, 0.2 + 0.05 * i, "word. ", 6, 1, TB_KIND_CONTENT), 0);
        assert_int_equal(tb_bench_analyze(x, &o, err, sizeof(err)), 0);
    }
    assert_false(isnan(r.v[0].min_tps));
    assert_false(isnan(r.v[0].speedup));
    assert_false(isnan(r.v[1].gap_total)); /* measured, and shown */
    assert_true(isnan(r.v[1].min_tps));
    assert_true(isnan(r.v[1].speedup));
    tb_bench_recs_free(&r);
}

int tb_test_bench(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(percentiles),
        cmocka_unit_test(analyze_failed_has_no_whatif),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(known_schedule),
        cmocka_unit_test(known_underrun),
        cmocka_unit_test(errors_by_kind),
        cmocka_unit_test(idle_timeout),
        cmocka_unit_test(long_stall_many),
        cmocka_unit_test(stamps_never_early),
        cmocka_unit_test(over_tls),
        cmocka_unit_test(open_loop),
        cmocka_unit_test(poisson_duration_warmup),
        cmocka_unit_test(records_round_trip),
        cmocka_unit_test(json_members),
        cmocka_unit_test(cli_bad_values),
        cmocka_unit_test(cli_gates),
        cmocka_unit_test(cli_default_gate),
        cmocka_unit_test(cli_out_replay),
        cmocka_unit_test(cli_out_warning),
        cmocka_unit_test(cli_out_tts_stage),
        cmocka_unit_test(cli_shards_merge),
        cmocka_unit_test(cli_merge_hostile),
        cmocka_unit_test(held_total_bounded),
        cmocka_unit_test(cli_prompts_bounded),
        cmocka_unit_test(cli_dialects),
        cmocka_unit_test(cli_sigint),
        cmocka_unit_test(cli_nothing_measured),
        cmocka_unit_test(cli_out_refuses_earlier_run),
    };
    return TB_RUN_GROUP("bench", tests);
}
