/*
 * test_capacity.c - a TTS capacity shared by every stream of a run.
 *
 * The model (capmodel.h) against an independent discrete-event
 * simulation written here from the definition alone: events (a chunk's
 * text closes, a synthesis ends) in time order, a waiting set served
 * first come first served with N slots, on seeded random arrivals; every
 * begin and wait equal to 1e-9 s.  The live queue (capq.h) from several
 * threads: never more than N held, grants in the order of entry.  The
 * command line: bench --tts-capacity and --llm-capacity against ttsbuf
 * serve (the done-criterion: 10 calls, capacity 2; test_capacity_live.c),
 * sweep --tts-capacity, --llm-capacity and --target-ttfa, and bad values
 * refused with one line, exit 2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "ttsbuf/capmodel.h"
#include "ttsbuf/capq.h"
#include "ttsbuf/error.h"

/* ------------------------------------------------ the independent DES */

static uint64_t rng_state;
static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

struct dchunk {
    double close, svc; /* run's clock: close is A + c */
    int blank;
    int state; /* 0 not ready, 1 waiting, 2 synthesizing, 3 done */
    double ready, begin, end;
};

struct dstream {
    int n, conc;
    struct dchunk *v;
    int next; /* the next chunk not yet begun */
};

/*
 * The simulation: time jumps from event to event (a close, an end); at
 * each instant the ends free their slots first, then every stream whose
 * next chunk may go (closed, the one before begun, the one N back done)
 * is marked ready at that instant, and while a slot is free the ready
 * chunk with the earliest readiness (ties: lower stream) begins.  A chunk
 * begun at t can make its stream's next one ready at the same t.
 */
static void des_run(struct dstream *s, int ns, int cap)
{
    int busy = 0;
    double t = -INFINITY;
    for (;;) {
        double nt = INFINITY;
        int again = 1;
        /* the next event: a close not yet seen, or an end */
        for (int i = 0; i < ns; i++)
            for (int j = 0; j < s[i].n; j++) {
                struct dchunk *c = &s[i].v[j];
                if (c->close > t && c->close < nt)
                    nt = c->close;
                if (c->state == 2 && c->end < nt)
                    nt = c->end;
            }
        if (isinf(nt)) {
            int left = 0;
            for (int i = 0; i < ns; i++)
                left += s[i].next < s[i].n;
            if (left == 0)
                return;
            fail_msg("the simulation is stuck at t = %g with chunks left", t);
        }
        t = nt;
        for (int i = 0; i < ns; i++)
            for (int j = 0; j < s[i].n; j++)
                if (s[i].v[j].state == 2 && s[i].v[j].end <= t) {
                    s[i].v[j].state = 3;
                    busy--;
                }
        while (again) {
            int bi = -1;
            again = 0;
            for (int i = 0; i < ns; i++) {
                int j = s[i].next;
                struct dchunk *c;
                if (j >= s[i].n)
                    continue;
                c = &s[i].v[j];
                if (c->state == 0 && c->close <= t && (j == 0 || s[i].v[j - 1].state >= 2) &&
                    (s[i].conc == 0 || j < s[i].conc || s[i].v[j - s[i].conc].state == 3)) {
                    c->state = 1;
                    c->ready = t;
                }
            }
            for (int i = 0; i < ns; i++) {
                int j = s[i].next;
                if (j >= s[i].n || s[i].v[j].state != 1)
                    continue;
                if (s[i].v[j].blank || cap == 0 || busy < cap) {
                    if (bi < 0 || s[i].v[j].ready < s[bi].v[s[bi].next].ready)
                        bi = i;
                }
            }
            if (bi >= 0) {
                struct dchunk *c = &s[bi].v[s[bi].next];
                c->begin = t;
                if (c->blank) {
                    c->end = t;
                    c->state = 3;
                } else {
                    c->end = t + c->svc;
                    c->state = c->svc > 0 ? 2 : 3;
                    busy += c->svc > 0;
                }
                s[bi].next++;
                again = 1;
            }
        }
    }
}

/* One random run: ns streams, their arrivals (all at 0 when burst),
 * chunks, per-stream concurrency, a capacity; the model and the DES must
 * agree on every chunk. */
static void one_random(uint64_t seed, int burst)
{
    int ns, cap;
    struct tb_capmodel_stream ms[12];
    struct dstream ds[12];
    double a = 0;
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    ns = 1 + (int)(urand() * 12);
    cap = (int)(urand() * 5); /* 0: unlimited */
    for (int i = 0; i < ns; i++) {
        int n = 1 + (int)(urand() * 15);
        double c = urand() * 0.5;
        a += burst ? 0.0 : -log(1.0 - urand()) * 0.7; /* Poisson, 1.4 a second */
        ms[i].arrival = a;
        ms[i].concurrency = (int)(urand() * 4);
        ms[i].n = (size_t)n;
        ms[i].v = calloc((size_t)n, sizeof(*ms[i].v));
        ds[i].n = n;
        ds[i].conc = ms[i].concurrency;
        ds[i].next = 0;
        ds[i].v = calloc((size_t)n, sizeof(*ds[i].v));
        assert_non_null(ms[i].v);
        assert_non_null(ds[i].v);
        for (int j = 0; j < n; j++) {
            c += urand() < 0.2 ? 0.0 : urand() * 0.4; /* some close together */
            ms[i].v[j].c = c;
            ms[i].v[j].blank = urand() < 0.1;
            ms[i].v[j].svc = urand() < 0.05 ? 0.0 : 0.05 + urand() * 0.9;
            ds[i].v[j].close = a + c;
            ds[i].v[j].svc = ms[i].v[j].svc;
            ds[i].v[j].blank = ms[i].v[j].blank;
        }
    }
    assert_int_equal(tb_capmodel_run(ms, (size_t)ns, cap), 0);
    des_run(ds, ns, cap);
    for (int i = 0; i < ns; i++) {
        for (int j = 0; j < ds[i].n; j++) {
            const struct tb_capmodel_chunk *m = &ms[i].v[j];
            const struct dchunk *d = &ds[i].v[j];
            double w = d->begin - d->ready;
            if (fabs(m->begin + ms[i].arrival - d->begin) > 1e-9 ||
                fabs(m->ready + ms[i].arrival - d->ready) > 1e-9 ||
                (d->blank ? !isnan(m->wait) : fabs(m->wait - w) > 1e-9))
                fail_msg("seed %llu cap %d stream %d chunk %d: model ready %.12f begin %.12f "
                         "wait %.12f, DES ready %.12f begin %.12f wait %.12f",
                         (unsigned long long)seed, cap, i, j + 1, m->ready + ms[i].arrival,
                         m->begin + ms[i].arrival, m->wait, d->ready, d->begin, w);
            assert_true(m->wait >= 0 || d->blank);
            assert_true(cap > 0 || d->blank || m->wait == 0);
        }
        free(ms[i].v);
        free(ds[i].v);
    }
}

/* 2,000 seeded runs, half of them every stream at once (the ties). */
static void model_vs_des(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        one_random(seed, 0);
        one_random(seed, 1);
    }
}

/* Never more than C in flight; with C = 1 and one chunk a stream, every
 * stream at once, the waits are the partial sums of the services. */
static void model_closed_form(void **state)
{
    struct tb_capmodel_chunk v[5];
    struct tb_capmodel_stream s[5];
    (void)state;
    for (int i = 0; i < 5; i++) {
        v[i] = (struct tb_capmodel_chunk){.c = 0.1, .svc = 0.25 * (i + 1)};
        s[i] = (struct tb_capmodel_stream){.arrival = 0, .concurrency = 1, .v = &v[i], .n = 1};
    }
    assert_int_equal(tb_capmodel_run(s, 5, 1), 0);
    for (int i = 0, acc = 0; i < 5; acc += i + 1, i++)
        assert_true(fabs(v[i].wait - 0.25 * acc) < 1e-12);
    assert_int_equal(tb_capmodel_run(s, 5, 0), 0);
    for (int i = 0; i < 5; i++)
        assert_true(v[i].wait == 0 && v[i].begin == 0.1);
    /* bad input */
    assert_int_equal(tb_capmodel_run(s, 5, -1), TB_EINVAL);
    v[2].svc = -1;
    assert_int_equal(tb_capmodel_run(s, 5, 1), TB_EINVAL);
    v[2].svc = NAN;
    assert_int_equal(tb_capmodel_run(s, 5, 1), TB_EINVAL);
}

/* ------------------------------------------------ the live queue */

#define QT_THREADS 4
#define QT_ROUNDS 2000
#define QT_CAP 3

struct qt {
    struct tb_capq *q;
    pthread_mutex_t *mu;
    int *held_now, *held_max;
    double *order; /* grants seen, in the order they happened */
    int *norder;
};

static void *qt_main(void *arg)
{
    struct qt *t = arg;
    struct tb_capq_slot s = {0};
    for (int r = 0; r < QT_ROUNDS; r++) {
        double g;
        tb_capq_enter(t->q, &s);
        while (!tb_capq_held(t->q, &s, &g))
            ;
        pthread_mutex_lock(t->mu);
        (*t->held_now)++;
        if (*t->held_now > *t->held_max)
            *t->held_max = *t->held_now;
        if (!(g >= s.enter))
            (*t->held_max) += 1000; /* a grant before its entry */
        (*t->held_now)--;
        pthread_mutex_unlock(t->mu);
        tb_capq_leave(t->q, &s);
    }
    return NULL;
}

static void queue_threads(void **state)
{
    struct tb_clock clk;
    struct tb_capq *q;
    pthread_t th[QT_THREADS];
    struct qt t[QT_THREADS];
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    int now = 0, max = 0, held, waiting;
    (void)state;
    tb_clock_monotonic_init(&clk);
    assert_int_equal(tb_capq_create(0, &clk, &q), TB_EINVAL);
    assert_int_equal(tb_capq_create(TB_CAPQ_MAX + 1, &clk, &q), TB_EINVAL);
    assert_int_equal(tb_capq_create(QT_CAP, &clk, &q), 0);
    for (int i = 0; i < QT_THREADS; i++) {
        t[i] = (struct qt){.q = q, .mu = &mu, .held_now = &now, .held_max = &max};
        assert_int_equal(pthread_create(&th[i], NULL, qt_main, &t[i]), 0);
    }
    for (int i = 0; i < QT_THREADS; i++)
        pthread_join(th[i], NULL);
    assert_true(max >= 1 && max <= QT_CAP);
    tb_capq_counts(q, &held, &waiting);
    assert_int_equal(held, 0);
    assert_int_equal(waiting, 0);
    tb_capq_destroy(q);
}

/* FCFS on one thread: three waiting slots are granted in their order of
 * entry as slots free; one that leaves while waiting is skipped. */
static void queue_fcfs(void **state)
{
    struct tb_clock clk;
    struct tb_capq *q;
    struct tb_capq_slot a = {0}, b = {0}, c = {0}, d = {0};
    double g;
    (void)state;
    tb_clock_virtual_init(&clk);
    assert_int_equal(tb_capq_create(1, &clk, &q), 0);
    assert_int_equal(tb_capq_enter(q, &a), 1);
    clk.virtual_now = 1;
    assert_int_equal(tb_capq_enter(q, &b), 0);
    clk.virtual_now = 2;
    assert_int_equal(tb_capq_enter(q, &c), 0);
    clk.virtual_now = 3;
    assert_int_equal(tb_capq_enter(q, &d), 0);
    tb_capq_leave(q, &c); /* canceled while waiting */
    clk.virtual_now = 4;
    tb_capq_leave(q, &a);
    assert_true(tb_capq_held(q, &b, &g) && g == 4 && b.enter == 1);
    assert_false(tb_capq_held(q, &d, NULL));
    clk.virtual_now = 6;
    tb_capq_leave(q, &b);
    assert_true(tb_capq_held(q, &d, &g) && g == 6 && d.enter == 3);
    tb_capq_leave(q, &d);
    tb_capq_destroy(q);
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double stat(const cJSON *pt, const char *key, const char *field)
{
    return num(cJSON_GetObjectItemCaseSensitive(pt, key), field);
}

/* ------------------------------------------------ sweep */

#define SW0                                                                                        \
    "sweep --preset mock --seeds 1:30 --tts-latency 0.3 --tts-rtf 0.2 --tts-concurrency 1 "        \
    "--tts-seed 7 --json -"
#define SW SW0 " --arrivals uniform:5"

static const cJSON *point0(const cJSON *d)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(d, "points");
    assert_true(cJSON_IsArray(p) && cJSON_GetArraySize(p) == 1);
    return cJSON_GetArrayItem(p, 0);
}

/* A capacity no run fills changes nothing: the first audio of every
 * stream as without one (the same model, played as recorded times), and
 * no chunk waits; a capacity of 1 makes them wait, and a larger one never
 * waits more at P95 here; the options say the capacity and arrivals. */
static void sweep_capacity(void **state)
{
    cJSON *free_run = tb_test_run_json(NULL, SW0, 0);
    cJSON *big = tb_test_run_json(NULL, SW " --tts-capacity 100000", 0);
    cJSON *one = tb_test_run_json(NULL, SW " --tts-capacity 1", 0);
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(one, "options");
    (void)state;
    for (int i = 0; i < 4; i++) {
        const char *f[] = {"mean", "p50", "p95", "max"};
        double a = stat(point0(free_run), "ttfa_s", f[i]), b = stat(point0(big), "ttfa_s", f[i]);
        if (!(fabs(a - b) <= 1e-9))
            fail_msg("ttfa %s: %.12f alone, %.12f at capacity 100000", f[i], a, b);
    }
    assert_true(stat(point0(big), "tts_capacity_wait_s", "max") == 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(point0(free_run), "tts_capacity_wait_s"));
    assert_true(stat(point0(one), "tts_capacity_wait_s", "max") > 0.1);
    assert_true(stat(point0(one), "ttfa_s", "p95") > stat(point0(big), "ttfa_s", "p95"));
    assert_true(num(opts, "tts_capacity") == 1);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(opts, "arrivals")->valuestring,
                        "uniform:5");
    cJSON_Delete(free_run);
    cJSON_Delete(big);
    cJSON_Delete(one);
    { /* the table says the capacity its points were played with */
        struct tb_test_out o = tb_test_run(
            "sweep --preset mock --seeds 1:5 --tts-latency 0.3 --tts-capacity 3 --arrivals "
            "uniform:5");
        assert_int_equal(o.code, 0);
        assert_non_null(strstr(o.so, "\nTTS capacity 3: the streams share 3 syntheses at once "
                                     "(arrivals uniform:5), first come first served"));
        tb_test_out_free(&o);
    }
}

/* --target-ttfa: the answer meets the target, the capacity below it does
 * not, and the rows are N = 1, 2, ... in order. */
static void sweep_target_ttfa(void **state)
{
    cJSON *d = tb_test_run_json(NULL, SW " --target-ttfa 3.6", 0);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(d, "capacity_search");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(s, "rows");
    int n = cJSON_GetArraySize(rows);
    double ans = num(s, "tts_capacity");
    (void)state;
    assert_true(num(s, "target_ttfa_s") == 3.6);
    assert_true(n >= 2 && ans == n);
    for (int i = 0; i < n; i++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        assert_true(num(r, "tts_capacity") == i + 1);
        if (i + 1 < n)
            assert_true(num(r, "ttfa_p95_s") > 3.6);
        else
            assert_true(num(r, "ttfa_p95_s") <= 3.6);
    }
    cJSON_Delete(d);
    /* an unreachable target: no answer, null */
    d = tb_test_run_json(NULL, SW " --target-ttfa 0.01", 0);
    s = cJSON_GetObjectItemCaseSensitive(d, "capacity_search");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(s, "tts_capacity")));
    cJSON_Delete(d);
}

/* --llm-capacity: each stream's wait moves all of its events, so its
 * first audio moves by exactly its wait (the mean of the first audio
 * grows by the mean wait); one slot with every stream at 0 serves them in
 * order (the first does not wait, the others do); a capacity as large as
 * the streams waits for nothing. */
static void sweep_llm_capacity(void **state)
{
    cJSON *alone = tb_test_run_json(NULL, SW0, 0);
    cJSON *one = tb_test_run_json(NULL, SW0 " --llm-capacity 1", 0);
    cJSON *all = tb_test_run_json(NULL, SW0 " --llm-capacity 30", 0);
    const cJSON *w1 = cJSON_GetObjectItemCaseSensitive(one, "llm_capacity_wait_s");
    const cJSON *w30 = cJSON_GetObjectItemCaseSensitive(all, "llm_capacity_wait_s");
    double d = stat(point0(one), "ttfa_s", "mean") - stat(point0(alone), "ttfa_s", "mean");
    (void)state;
    assert_true(num(w1, "count") == 30 && num(w1, "min") == 0 && num(w1, "max") > 1.0);
    if (!(fabs(d - num(w1, "mean")) < 1e-9))
        fail_msg("first audio moved by %.12f s on average, the waits' mean is %.12f s", d,
                 num(w1, "mean"));
    assert_true(num(w30, "max") == 0);
    assert_true(fabs(stat(point0(all), "ttfa_s", "p95") - stat(point0(alone), "ttfa_s", "p95")) <
                1e-9);
    assert_true(num(cJSON_GetObjectItemCaseSensitive(one, "options"), "llm_capacity") == 1);
    cJSON_Delete(alone);
    cJSON_Delete(one);
    cJSON_Delete(all);
}

/* ------------------------------------------------ bad values */

static void bad_values(void **state)
{
    (void)state;
    tb_test_expect_error("bench --mock --tts-url mock --tts-capacity 0", 2, "--tts-capacity");
    tb_test_expect_error("bench --mock --tts-url mock --tts-capacity x", 2, "--tts-capacity");
    tb_test_expect_error("bench --mock --tts-url mock --tts-capacity 100001", 2, "--tts-capacity");
    tb_test_expect_error("bench --mock --tts-capacity 2", 2, "--tts-url");
    tb_test_expect_error("sweep --preset mock --tts-latency 0.3 --tts-capacity 0", 2,
                         "--tts-capacity");
    tb_test_expect_error("sweep --preset mock --tts-latency 0.3 --tts-capacity 2 --arrivals x", 2,
                         "--arrivals");
    tb_test_expect_error("sweep --preset mock --tts-latency 0.3 --arrivals burst", 2, "--arrivals");
    tb_test_expect_error("sweep --preset mock --llm-capacity 0", 2, "--llm-capacity");
    tb_test_expect_error("bench --mock --llm-capacity 0", 2, "--llm-capacity");
    tb_test_expect_error("sweep --preset mock --tts-latency 0.3 --target-ttfa 0", 2,
                         "--target-ttfa");
    tb_test_expect_error("sweep --preset mock --tts-latency 0.3,0.4 --target-ttfa 2", 2,
                         "one value per axis");
}

int tb_test_capacity(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_vs_des),
        cmocka_unit_test(model_closed_form),
        cmocka_unit_test(queue_fcfs),
        cmocka_unit_test(queue_threads),
        cmocka_unit_test_teardown(tb_test_capacity_ten_calls, tb_test_serve_down),
        cmocka_unit_test_teardown(tb_test_capacity_ten_calls_threads, tb_test_serve_down),
        cmocka_unit_test_teardown(tb_test_capacity_llm, tb_test_serve_down),
        cmocka_unit_test(sweep_capacity),
        cmocka_unit_test(sweep_target_ttfa),
        cmocka_unit_test(sweep_llm_capacity),
        cmocka_unit_test(bad_values),
    };
    return TB_RUN_GROUP("capacity", tests);
}
