/*
 * test_threads.c - a `ttsbuf bench` level on several loop threads
 * (bench.h, loop threads): how many threads a level gets; calls and
 * requests split over threads give the records one loop gives (the same
 * ids, calls, turns, prompts and answers, in order of id, one level time);
 * the progress callback on the calling thread with the threads' counts
 * summed; a cancel stops every thread; the binary's --threads and its bad
 * values.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf.h"
#include "ttsbuf/bench.h"

#define FEW "tests/data/calls/few.jsonl"

static void base_opts(struct tb_bench_opts *o, const char *url)
{
    memset(o, 0, sizeof(*o));
    o->http.url = url;
    o->http.idle_timeout = 5;
    tb_api_request_init(&o->req);
    o->req.model = "m";
    o->nshards = 1;
    o->seed = 1;
    tb_sim_opts_default(&o->sim);
    o->sim.play.wpm = 1000;
}

static void calls_opts(struct tb_bench_opts *o, const char *url, const struct tb_convos *cv,
                       uint32_t at_once, size_t calls, double uturn)
{
    base_opts(o, url);
    o->level.mode = TB_BENCH_CALLS;
    o->level.concurrency = at_once;
    o->calls = calls;
    o->turns = 2;
    o->convos = cv;
    o->user_turn.kind = TB_UTURN_CONST;
    o->user_turn.a = uturn;
}

/* How many threads a level gets: auto by its size, an explicit count
 * capped by the streams or calls, a count over the maximum refused. */
static void threads_resolved(void **state)
{
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned want =
        cpus < 2 ? 1
                 : (unsigned)(cpus < TB_BENCH_THREADS_AUTO_MAX ? cpus : TB_BENCH_THREADS_AUTO_MAX);
    char err[256];
    (void)state;
    base_opts(&o, "http://192.0.2.1:9/v1/chat/completions");
    o.level.mode = TB_BENCH_CLOSED;
    o.level.concurrency = TB_BENCH_THREADS_AT - 1;
    o.requests = 100000;
    assert_int_equal(tb_bench_threads(&o), 1); /* auto, small */
    o.level.concurrency = TB_BENCH_THREADS_AT;
    assert_int_equal(tb_bench_threads(&o), want); /* auto, big */
    o.level.concurrency = 2;
    o.threads = 5;
    assert_int_equal(tb_bench_threads(&o), 2); /* no more than the streams */
    o.level.concurrency = 100;
    o.requests = 3;
    assert_int_equal(tb_bench_threads(&o), 3); /* ... or the requests */
    o.requests = 100;
    o.threads = 1;
    assert_int_equal(tb_bench_threads(&o), 1);
    /* An open loop without a cap: its size is not known, one thread. */
    o.threads = 0;
    o.level.mode = TB_BENCH_POISSON;
    o.level.rate = 1000;
    o.level.concurrency = 0;
    assert_int_equal(tb_bench_threads(&o), 1);
    /* This shard's share decides: 1,000 streams over 4 shards is 250. */
    o.level.mode = TB_BENCH_CLOSED;
    o.level.concurrency = 1000;
    o.nshards = 4;
    assert_int_equal(tb_bench_threads(&o), 1);
    o.nshards = 1;
    /* Calls: closed by the calls at once, an open loop by the calls. */
    o.level.mode = TB_BENCH_CALLS_POISSON;
    o.level.rate = 10;
    o.calls = 600;
    assert_int_equal(tb_bench_threads(&o), want);
    o.calls = 10;
    assert_int_equal(tb_bench_threads(&o), 1);
    /* Too many. */
    o.level.mode = TB_BENCH_CLOSED;
    o.threads = TB_BENCH_THREADS_MAX + 1;
    tb_bench_recs_init(&r);
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "loop threads"));
    assert_int_equal(r.n, 0);
}

static void run_ok(const struct tb_bench_opts *o, struct tb_bench_recs *r)
{
    char err[512];
    tb_bench_recs_init(r);
    if (tb_bench_run(o, 0, r, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
}

/* 12 calls of 2 turns, 6 at once, on one loop and on three: the same
 * records (ids, calls, turns, prompts, answers), the threaded ones in
 * order of id, every turn on the speech clock of one level time. */
static void calls_split_like_one(void **state)
{
    struct tb_test_mock m;
    struct tb_convos cv;
    struct tb_bench_opts o;
    struct tb_bench_recs one, three;
    char url[128], err[256];
    const double U = 0.01;
    (void)state;
    assert_int_equal(tb_convos_load(FEW, &cv, err, sizeof(err)), 0);
    tb_test_mock_start(&m, 3, 0.01, 0.005, NULL);
    snprintf(url, sizeof(url), "%s/chat/completions", m.base);
    calls_opts(&o, url, &cv, 6, 12, U);
    o.threads = 1;
    run_ok(&o, &one);
    o.threads = 3;
    run_ok(&o, &three);
    assert_int_equal(one.n, 24);
    assert_int_equal(three.n, 24);
    for (size_t i = 0; i < three.n; i++) {
        const struct tb_bench_rec *t = &three.v[i], *s = NULL;
        char *a, *b;
        if (i > 0)
            assert_true(three.v[i - 1].id < t->id);
        for (size_t j = 0; j < one.n; j++)
            if (one.v[j].id == t->id)
                s = &one.v[j];
        assert_non_null(s);
        assert_int_equal(t->error, 0);
        assert_int_equal(t->call, s->call);
        assert_int_equal(t->turn, s->turn);
        assert_int_equal(t->prompt, s->prompt);
        assert_int_equal(t->id, (uint64_t)t->call * 1000 + (uint64_t)t->turn);
        a = tb_stream_content_text(t->stream);
        assert_non_null(a);
        b = tb_stream_content_text(s->stream);
        assert_non_null(b);
        assert_string_equal(a, b);
        free(a);
        free(b);
        /* one level time: every call starts at its origin, not at its
         * thread's */
        assert_true(t->t_sched >= 0 && t->t_sched < 5);
        if (t->turn == 1) {
            const struct tb_bench_rec *p = &three.v[i - 1];
            assert_int_equal(p->call, t->call);
            assert_near(t->t_sched, p->t_start + p->play_end + U, 1e-9);
            assert_true(t->t_start >= t->t_sched);
        }
    }
    tb_bench_recs_free(&one);
    tb_bench_recs_free(&three);
    tb_convos_free(&cv);
    tb_test_mock_stop(&m);
}

/* Requests: a closed loop and a capped open loop on threads give each id
 * once, in order. */
static void requests_split_like_one(void **state)
{
    struct tb_test_mock m;
    struct tb_bench_prompts p;
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    char url[128];
    (void)state;
    tb_test_mock_start(&m, 3, 0.01, 0.005, NULL);
    snprintf(url, sizeof(url), "%s/chat/completions", m.base);
    assert_int_equal(tb_bench_prompts_builtin(&p), 0);
    base_opts(&o, url);
    o.prompts = &p;
    o.level.mode = TB_BENCH_CLOSED;
    o.level.concurrency = 6;
    o.requests = 20;
    o.warmup = 3;
    o.threads = 3;
    run_ok(&o, &r);
    assert_int_equal(r.n, 20);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.v[i].id, i);
        assert_int_equal(r.v[i].error, 0);
        assert_int_equal(r.v[i].prompt, i % p.n);
        assert_int_equal(r.v[i].call, -1);
    }
    tb_bench_recs_free(&r);
    o.level.mode = TB_BENCH_POISSON;
    o.level.rate = 200;
    o.level.concurrency = 4;
    o.requests = 10;
    o.warmup = 0;
    o.threads = 2;
    run_ok(&o, &r);
    assert_int_equal(r.n, 10);
    for (size_t i = 0; i < r.n; i++)
        assert_int_equal(r.v[i].id, i);
    tb_bench_recs_free(&r);
    tb_bench_prompts_free(&p);
    tb_test_mock_stop(&m);
}

struct seen {
    pthread_t caller;
    int calls, other_thread;
    struct tb_bench_progress last;
};

static void on_progress(void *ud, const struct tb_bench_progress *p)
{
    struct seen *s = ud;
    s->calls++;
    s->other_thread += !pthread_equal(pthread_self(), s->caller);
    s->last = *p;
}

/* Progress: on the calling thread, the threads' counts summed. */
static void progress_summed(void **state)
{
    struct tb_test_mock m;
    struct tb_convos cv;
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    struct seen s;
    char url[128], err[256];
    (void)state;
    assert_int_equal(tb_convos_load(FEW, &cv, err, sizeof(err)), 0);
    tb_test_mock_start(&m, 3, 0.01, 0.005, NULL);
    snprintf(url, sizeof(url), "%s/chat/completions", m.base);
    calls_opts(&o, url, &cv, 4, 8, 0.1);
    memset(&s, 0, sizeof(s));
    s.caller = pthread_self();
    o.threads = 2;
    o.progress = on_progress;
    o.progress_ud = &s;
    o.progress_interval = 0.02;
    run_ok(&o, &r);
    assert_int_equal(r.n, 16);
    assert_true(s.calls >= 2);
    assert_int_equal(s.other_thread, 0);
    assert_int_equal(s.last.target, 8); /* calls, over both threads */
    assert_int_equal(s.last.started, 8);
    assert_int_equal(s.last.done, 8);
    assert_int_equal(s.last.inflight, 0);
    assert_int_equal(s.last.errors, 0);
    assert_int_equal(s.last.events, 16 * 3);
    tb_bench_recs_free(&r);
    tb_convos_free(&cv);
    tb_test_mock_stop(&m);
}

struct later {
    atomic_int *flag;
    double after;
};

static void *set_later(void *arg)
{
    const struct later *l = arg;
    struct timespec ts = {0, (long)(l->after * 1e9)};
    nanosleep(&ts, NULL);
    atomic_store(l->flag, 1);
    return NULL;
}

/* The caller's cancel flag stops every thread: calls waiting 30 s for
 * their caller end at once, each thread's first turns kept. */
static void cancel_stops_all(void **state)
{
    struct tb_test_mock m;
    struct tb_convos cv;
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    struct timespec a, b;
    atomic_int flag;
    struct later l;
    pthread_t th;
    char url[128], err[256];
    (void)state;
    atomic_init(&flag, 0);
    assert_int_equal(tb_convos_load(FEW, &cv, err, sizeof(err)), 0);
    tb_test_mock_start(&m, 3, 0.01, 0.005, NULL);
    snprintf(url, sizeof(url), "%s/chat/completions", m.base);
    calls_opts(&o, url, &cv, 4, 4, 30);
    o.threads = 2;
    o.http.cancel = &flag;
    l.flag = &flag;
    l.after = 0.5;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(pthread_create(&th, NULL, set_later, &l), 0);
    run_ok(&o, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(th, NULL);
    assert_true((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 < 10);
    assert_int_equal(r.n, 4);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.v[i].turn, 0);
        assert_int_equal(r.v[i].error, 0);
    }
    tb_bench_recs_free(&r);
    tb_convos_free(&cv);
    tb_test_mock_stop(&m);
}

/* The binary: --threads on calls, the records as one loop writes them;
 * bad values, one line each, exit 2.  The answers come from a fast mock
 * (the built-in one speaks for ten seconds a turn). */
static void cli_threads(void **state)
{
    char dir[128], cmd[2048], path[256], *one, *two;
    int port;
    (void)state;
    tb_test_serve_up("--synth tps=1000,tokens=20,ttft=0.01", &port);
    tb_test_tmpdir(dir, sizeof(dir), "threads", "cli");
    snprintf(cmd, sizeof(cmd),
             "cd %s && B='%s'; A='--base-url http://127.0.0.1:%d/v1 --model m "
             "--conversations builtin --calls 6 --turns 2 "
             "--user-turn 0.01 --wpm 1000 -q'; $B bench $A --threads 1 --out one && "
             "$B bench $A --threads 3 --out three && "
             "P='s/.*\"id\":\\([0-9]*\\),\"prompt\":\\([0-9]*\\),\"call\":\\([0-9]*\\),"
             "\"turn\":\\([0-9]*\\),.*/\\1 \\2 \\3 \\4/'; "
             "tail -n +2 one/records.jsonl | sed \"$P\" | sort -n >one.ids && "
             "tail -n +2 three/records.jsonl | sed \"$P\" >three.ids",
             dir, tb_test_bin(), port);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/one.ids", dir);
    one = tb_test_slurp_str(path);
    snprintf(path, sizeof(path), "%s/three.ids", dir);
    two = tb_test_slurp_str(path);
    /* 12 lines of "id prompt call turn", and the threaded file is in
     * order of id already */
    assert_non_null(strstr(one, "5001 5 5 1\n"));
    assert_string_equal(one, two);
    free(one);
    free(two);
    tb_test_rm_rf(dir);
    tb_test_serve_down(NULL);
    tb_test_expect_error("bench --mock --threads 0", 2, "--threads");
    tb_test_expect_error("bench --mock --threads 17", 2, "--threads");
    tb_test_expect_error("bench --mock --threads many", 2, "--threads");
}

int tb_test_threads(void)
{
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(threads_resolved),
        cmocka_unit_test(calls_split_like_one),
        cmocka_unit_test(requests_split_like_one),
        cmocka_unit_test(progress_summed),
        cmocka_unit_test(cancel_stops_all),
        cmocka_unit_test_teardown(cli_threads, tb_test_serve_down),
    };
    return TB_RUN_GROUP("threads", cases);
}
