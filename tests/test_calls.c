/*
 * test_calls.c - `ttsbuf bench --conversations`: calls whose turns are sent
 * on the speech clock (bench_calls.h).  The library's tb_bench_run
 * against the mock provider with a prefill cost per input token (the
 * first-token time of each turn against the mock's schedule, computed
 * from the exact messages sent), a scripted peer that records every
 * request body (each turn carries the conversation so far, the answers as
 * streamed) and fails a chosen turn (the call ends there), and the binary
 * end to end (play_end_s against `sim --trace`, shards + merge, bad
 * values).
 */
#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tcp_peer.h"
#include "lag.h"
#include "tests.h"
#include "ttsbuf.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/serve.h"

#define TWENTY "tests/data/calls/twenty.jsonl"
#define FEW "tests/data/calls/few.jsonl"

static void *serve_main(void *arg)
{
    tb_serve_run(arg);
    return NULL;
}

/* The mock provider with a prefill cost of `prefill` s per input token:
 * n events " w0" .. (a sentence every 5), event k at t0 + k dt. */
static void mock_up(struct tb_test_mock *m, size_t n, double t0, double dt, double prefill)
{
    struct tb_serve_opts o;
    char err[256];
    tb_stream_init(&m->s);
    for (size_t k = 0; k < n; k++) {
        char w[32];
        int len = snprintf(w, sizeof(w), " w%zu%s", k, k % 5 == 4 || k + 1 == n ? "." : "");
        assert_int_equal(
            tb_stream_append(&m->s, t0 + dt * (double)k, w, (size_t)len, 1, TB_KIND_CONTENT), 0);
    }
    memset(&o, 0, sizeof(o));
    tb_faults_init(&o.faults);
    o.host = "127.0.0.1";
    o.port = 0;
    o.stream = &m->s;
    o.prefill_per_token = prefill;
    if (tb_serve_create(&o, &m->srv, err, sizeof(err)) != 0)
        fail_msg("tb_serve_create: %s", err);
    snprintf(m->base, sizeof(m->base), "http://127.0.0.1:%d/v1", tb_serve_port(m->srv));
    assert_int_equal(pthread_create(&m->th, NULL, serve_main, m->srv), 0);
}

/* Options for a closed loop of `calls` calls, `at_once` at a time, the
 * caller speaking `uturn` s before each later turn, speech at 1000 wpm. */
static void call_opts(struct tb_bench_opts *o, const char *url, const struct tb_convos *cv,
                      uint32_t at_once, size_t calls, double uturn)
{
    memset(o, 0, sizeof(*o));
    o->http.url = url;
    o->http.idle_timeout = 5;
    tb_api_request_init(&o->req);
    o->req.model = "m";
    o->req.include_usage = 1;
    o->level.mode = TB_BENCH_CALLS;
    o->level.concurrency = at_once;
    o->calls = calls;
    o->nshards = 1;
    o->seed = 1;
    o->convos = cv;
    o->user_turn.kind = TB_UTURN_CONST;
    o->user_turn.a = uturn;
    tb_sim_opts_default(&o->sim);
    o->sim.play.wpm = 1000;
}

/* The records of call `call` in turn order (pointers into r); returns
 * how many. */
static size_t turns_of(const struct tb_bench_recs *r, int64_t call, const struct tb_bench_rec **v,
                       size_t cap)
{
    size_t n = 0;
    for (int32_t t = 0; t < (int32_t)cap; t++)
        for (size_t i = 0; i < r->n; i++)
            if (r->v[i].call == call && r->v[i].turn == t)
                v[n++] = &r->v[i];
    return n;
}

/* One 20-turn call against a prefill of S s per input token (the caller
 * speaking U s): asserts what holds exactly (the records, the answers,
 * each turn's schedule: t_start(k-1) + play_end(k-1) + U) and returns how
 * many turns missed the timing bound (printed): a first-token time off
 * S x (P_k - P_0), or a turn sent later than tol after its schedule.  On
 * a busy machine the bounds grow by what the probe of lag.h measured
 * while the call ran: a turn's send is one wake-up (the client's timer);
 * a TTFT holds three (the mock reading the request, its timer for the
 * first token, the client reading it), so a difference of two TTFTs six. */
static int prefill_once(const struct tb_test_mock *m, const struct tb_convos *cv, double S,
                        double U, double tol)
{
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    const struct tb_bench_rec *v[20];
    char url[128], err[256];
    size_t bytes, p0 = 0;
    double lag;
    int missed = 0;
    snprintf(url, sizeof(url), "%s/chat/completions", m->base);
    call_opts(&o, url, cv, 1, 1, U);
    tb_bench_recs_init(&r);
    tb_test_lag_start();
    if (tb_bench_run(&o, 0, &r, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    lag = tb_test_lag_stop();
    assert_int_equal(r.n, 20);
    assert_int_equal(turns_of(&r, 0, v, 20), 20);
    bytes = strlen(cv->v[0].system);
    for (size_t k = 0; k < 20; k++) {
        size_t p;
        char *a;
        assert_int_equal(v[k]->error, 0);
        assert_int_equal(v[k]->id, k);
        assert_int_equal(v[k]->prompt, 0);
        bytes += strlen(cv->v[0].turns[k]);
        p = (bytes + 3) / 4;
        if (k == 0)
            p0 = p;
        if (fabs(v[k]->ttft - v[0]->ttft - S * (double)(p - p0)) > tol + 6 * lag) {
            print_message("turn %zu: TTFT - TTFT(0) %.6f s, the schedule says %.6f s (the "
                          "machine's wake-up delay %.6f s)\n",
                          k, v[k]->ttft - v[0]->ttft, S * (double)(p - p0), lag);
            missed++;
        }
        assert_false(isnan(v[k]->play_end));
        assert_true(v[k]->play_end >= v[k]->ttft);
        if (k > 0) {
            /* Scheduled on the speech clock, and sent then. */
            assert_near(v[k]->t_sched, v[k - 1]->t_start + v[k - 1]->play_end + U, 1e-9);
            assert_true(v[k]->t_start >= v[k]->t_sched);
            /* the loop may wake later than the probe did: twice its
             * delay, as the other timing bounds */
            if (v[k]->t_start - v[k]->t_sched > tol + 2 * lag) {
                print_message("turn %zu sent %.6f s late (the machine's wake-up delay %.6f s)\n", k,
                              v[k]->t_start - v[k]->t_sched, lag);
                missed++;
            }
        }
        a = tb_stream_content_text(v[k]->stream);
        assert_non_null(a);
        assert_string_equal(a, " w0 w1 w2 w3.");
        bytes += strlen(a);
        free(a);
    }
    /* The context grew: the last turn's prefill is well past the bound. */
    assert_true(v[19]->ttft - v[0]->ttft > 0.1);
    tb_bench_recs_free(&r);
    return missed;
}

/* A 20-turn call against a prefill of 1 ms per input token: turn k's
 * first-token time less turn 0's is S x (P_k - P_0) within 5 ms, P_k the
 * mock's count of the exact messages sent (system, user turns 0..k,
 * answers 0..k-1: ceil(bytes / 4)), and each turn is sent within 5 ms of
 * t_start(k-1) + play_end(k-1) + the caller's time.  The mock and the
 * client share this machine with whatever else runs: up to three runs,
 * one of which must hold every bound (the exact checks hold in each). */
static void prefill_growth(void **state)
{
    const double S = 0.001, U = 0.03, tol = 0.005 * TB_TEST_TIME_SCALE;
    struct tb_test_mock m;
    struct tb_convos cv;
    char err[256];
    int missed = 1;
    (void)state;
    assert_int_equal(tb_convos_load(TWENTY, &cv, err, sizeof(err)), 0);
    assert_int_equal(cv.v[0].n_turns, 20);
    mock_up(&m, 4, 0.02, 0.005, S);
    for (int run = 0; run < 3 && missed > 0; run++)
        missed = prefill_once(&m, &cv, S, U, tol);
    assert_int_equal(missed, 0);
    tb_convos_free(&cv);
    tb_test_mock_stop(&m);
}

/* A peer answering turn k with "A<k> "q" é." in two events; the
 * connection numbered pe->xlen (when set) gets HTTP 500 instead. */
static void s_answers(struct peer *pe, int fd, int conn)
{
    char ev[256];
    if (pe->xlen > 0 && conn == (int)pe->xlen) {
        static const char body[] = "{\"error\":{\"message\":\"boom\",\"type\":\"x\"}}";
        snprintf(ev, sizeof(ev),
                 "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                 sizeof(body) - 1);
        peer_send_str(fd, ev);
        peer_send_str(fd, body);
        return;
    }
    peer_send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                      "Connection: close\r\n\r\n");
    snprintf(ev, sizeof(ev),
             "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"A%d \"}}]}\n\n", conn);
    peer_send_str(fd, ev);
    peer_send_str(fd, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\\"q\\\" "
                      "\\u00e9.\"}}]}\n\n");
    peer_send_str(fd, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}"
                      "\n\ndata: [DONE]\n\n");
}

/* Checks request i's messages: the system prompt, then user turns 0..i
 * with the peer's answers 0..i-1 between them. */
static void check_body(const struct peer *pe, int i, const struct tb_convo *c)
{
    const char *req = peer_req(pe, i), *body = strstr(req, "\r\n\r\n");
    cJSON *j, *msgs;
    int k = 0;
    assert_non_null(body);
    j = cJSON_Parse(body + 4);
    assert_non_null(j);
    msgs = cJSON_GetObjectItemCaseSensitive(j, "messages");
    assert_true(cJSON_IsArray(msgs));
    assert_int_equal(cJSON_GetArraySize(msgs), 1 + 2 * i + 1);
    for (int n = 0; n < cJSON_GetArraySize(msgs); n++) {
        const cJSON *mm = cJSON_GetArrayItem(msgs, n);
        const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(mm, "role"));
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(mm, "content"));
        char want[64];
        assert_non_null(role);
        assert_non_null(text);
        assert_int_equal(cJSON_GetArraySize(mm), 2);
        if (n == 0) {
            assert_string_equal(role, "system");
            assert_string_equal(text, c->system);
        } else if (n % 2 == 1) {
            assert_string_equal(role, "user");
            assert_string_equal(text, c->turns[k]);
        } else {
            assert_string_equal(role, "assistant");
            snprintf(want, sizeof(want), "A%d \"q\" \xc3\xa9.", k);
            assert_string_equal(text, want);
            k++;
        }
    }
    cJSON_Delete(j);
}

/* Each turn's request body is the conversation so far, the answers
 * exactly as streamed (split over events, escapes and UTF-8 included). */
static void bodies_are_the_conversation(void **state)
{
    struct peer pe;
    struct tb_convos cv;
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    char url[128], err[256];
    (void)state;
    assert_int_equal(tb_convos_load(FEW, &cv, err, sizeof(err)), 0);
    memset(&pe, 0, sizeof(pe));
    peer_start(&pe, "127.0.0.1", s_answers);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", pe.port);
    call_opts(&o, url, &cv, 1, 1, 0.01);
    tb_bench_recs_init(&r);
    if (tb_bench_run(&o, 0, &r, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    peer_halt(&pe);
    assert_int_equal(r.n, 4);
    assert_int_equal(pe.conns, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r.v[i].error, 0);
        check_body(&pe, i, &cv.v[0]);
    }
    peer_free(&pe);
    tb_bench_recs_free(&r);
    tb_convos_free(&cv);
}

/* A turn that fails (HTTP 500 on the third request) ends its call: its
 * record says so and the fourth turn is never sent. */
static void failed_turn_ends_call(void **state)
{
    struct peer pe;
    struct tb_convos cv;
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    char url[128], err[256];
    (void)state;
    assert_int_equal(tb_convos_load(FEW, &cv, err, sizeof(err)), 0);
    memset(&pe, 0, sizeof(pe));
    peer_bind(&pe, "127.0.0.1", s_answers);
    pe.xlen = 2;
    peer_go(&pe);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", pe.port);
    call_opts(&o, url, &cv, 1, 1, 0.01);
    tb_bench_recs_init(&r);
    if (tb_bench_run(&o, 0, &r, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    {
        /* a fourth connection would have come by now */
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    peer_halt(&pe);
    assert_int_equal(pe.conns, 3);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.v[0].error, 0);
    assert_int_equal(r.v[1].error, 0);
    assert_int_equal(r.v[2].turn, 2);
    assert_int_not_equal(r.v[2].error, 0);
    assert_int_equal(r.v[2].http_status, 500);
    check_body(&pe, 2, &cv.v[0]);
    peer_free(&pe);
    tb_bench_recs_free(&r);
    tb_convos_free(&cv);
}

/* Open loop: calls arrive (Poisson) and each runs its turns; the call's
 * conversation is its id mod the count, its record ids call x 1000 +
 * turn. */
static void open_loop_calls(void **state)
{
    struct tb_test_mock m;
    struct tb_convos cv;
    struct tb_bench_opts o;
    struct tb_bench_recs r;
    const struct tb_bench_rec *v[4];
    char url[128], err[256];
    (void)state;
    assert_int_equal(tb_convos_load(FEW, &cv, err, sizeof(err)), 0);
    mock_up(&m, 3, 0.01, 0.005, 0);
    snprintf(url, sizeof(url), "%s/chat/completions", m.base);
    call_opts(&o, url, &cv, 0, 3, 0.01);
    o.level.mode = TB_BENCH_CALLS_POISSON;
    o.level.rate = 20;
    o.turns = 2;
    tb_bench_recs_init(&r);
    if (tb_bench_run(&o, 0, &r, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    assert_int_equal(r.n, 6);
    for (int64_t c = 0; c < 3; c++) {
        assert_int_equal(turns_of(&r, c, v, 4), 2);
        for (int t = 0; t < 2; t++) {
            assert_int_equal(v[t]->error, 0);
            assert_int_equal(v[t]->prompt, (uint32_t)(c % 2));
            assert_int_equal(v[t]->id, (uint64_t)c * 1000 + (uint64_t)t);
        }
        assert_true(v[1]->t_sched > v[0]->t_start + v[0]->play_end);
    }
    /* Bad options are refused. */
    o.calls = 0;
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), TB_EINVAL);
    o.calls = 1;
    o.req.api = TB_API_COMPLETIONS;
    assert_int_equal(tb_bench_run(&o, 0, &r, err, sizeof(err)), TB_EINVAL);
    tb_bench_recs_free(&r);
    tb_convos_free(&cv);
    tb_test_mock_stop(&m);
}

/* --user-turn: the specs, their names, and draws that depend on (seed,
 * call, turn) only. */
static void user_turn_specs(void **state)
{
    static const char *const bad[] = {"",          "x",     "-1",      "uniform:3,1",
                                      "uniform:1", "exp:0", "words:0", "words:150,-1",
                                      "4000",      "exp:"};
    struct tb_uturn u;
    char err[256], name[96];
    double a, b;
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(tb_uturn_parse(bad[i], &u, err, sizeof(err)), TB_EINVAL);
    assert_int_equal(tb_uturn_parse("0.2", &u, err, sizeof(err)), 0);
    tb_uturn_name(&u, name, sizeof(name));
    assert_string_equal(name, "0.2");
    assert_near(tb_uturn_draw(&u, 1, 5, 2, "x"), 0.2, 0);
    assert_int_equal(tb_uturn_parse(TB_UTURN_DEFAULT, &u, err, sizeof(err)), 0);
    tb_uturn_name(&u, name, sizeof(name));
    assert_string_equal(name, "words:150,0.5");
    /* Five words at 150 wpm: 2 s, plus the pause. */
    assert_near(tb_uturn_draw(&u, 1, 0, 1, "  one two\tthree four five. "), 2.5, 1e-12);
    assert_int_equal(tb_uturn_parse("uniform:1..3", &u, err, sizeof(err)), 0);
    a = tb_uturn_draw(&u, 7, 11, 3, NULL);
    b = tb_uturn_draw(&u, 7, 11, 3, NULL);
    assert_true(a >= 1 && a <= 3);
    assert_near(a, b, 0);
    assert_true(tb_uturn_draw(&u, 7, 12, 3, NULL) != a || tb_uturn_draw(&u, 8, 11, 3, NULL) != a);
    assert_int_equal(tb_uturn_parse("exp:2", &u, err, sizeof(err)), 0);
    {
        double sum = 0;
        for (uint32_t k = 0; k < 20000; k++)
            sum += tb_uturn_draw(&u, 1, k, 1, NULL);
        assert_near(sum / 20000, 2, 0.1);
    }
}

/* How a level's calls went, counted from records in any order: a call
 * whose every turn came is completed, one whose last turn failed or was
 * cut ended early, one cut between turns (interrupted) neither. */
static void calls_counted(void **state)
{
    static const struct {
        int64_t call;
        int32_t turn;
        int error, end;
    } rs[] = {{1, 1, 0, TB_END_COMPLETE}, {0, 0, 0, TB_END_COMPLETE}, {1, 0, 0, TB_END_COMPLETE},
              {2, 0, 0, TB_END_COMPLETE}, {3, 0, 0, TB_END_COMPLETE}, {3, 1, 0, TB_END_LOST},
              {0, 1, 0, TB_END_COMPLETE}, {4, 0, 1, TB_END_ERROR}};
    struct tb_convos cv;
    struct tb_bench_recs r;
    struct tb_bench_calls_count c;
    char err[256];
    (void)state;
    assert_int_equal(tb_convos_load(FEW, &cv, err, sizeof(err)), 0);
    tb_bench_recs_init(&r);
    for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
        struct tb_bench_rec *x = tb_bench_recs_add(&r);
        assert_non_null(x);
        x->call = rs[i].call;
        x->turn = rs[i].turn;
        x->prompt = (uint32_t)(rs[i].call % 2);
        x->error = rs[i].error;
        x->end = rs[i].end;
    }
    /* two turns a call: 0 and 1 completed, 2 between turns, 3 cut, 4 failed */
    assert_int_equal(tb_bench_calls_count(&r, 0, &cv, 2, &c), 0);
    assert_int_equal(c.calls, 5);
    assert_int_equal(c.completed, 2);
    assert_int_equal(c.ended_early, 2);
    assert_int_equal(c.turns, 8);
    /* every turn: conversation a has 4, b 3; none completed */
    assert_int_equal(tb_bench_calls_count(&r, 0, &cv, 0, &c), 0);
    assert_int_equal(c.completed, 0);
    assert_int_equal(tb_bench_calls_count(&r, 1, &cv, 0, &c), 0);
    assert_int_equal(c.calls, 0);
    tb_bench_recs_free(&r);
    tb_convos_free(&cv);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_true(cJSON_IsNumber(x));
    return x->valuedouble;
}

/* The binary: records with call, turn and play_end_s (which `sim
 * --trace` of the turn's trace reproduces), turns on the speech clock,
 * and the records header's conversations block. */
static void cli_records_and_traces(void **state)
{
    struct tb_test_mock m;
    char dir[128], cmd[2048], path[256];
    cJSON *v[16];
    size_t n;
    char *hdr;
    double lag;
    (void)state;
    mock_up(&m, 6, 0.01, 0.005, 0.0005);
    tb_test_tmpdir(dir, sizeof(dir), "calls", "cli");
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url %s --model mock --conversations " FEW
             " --calls 2 --turns 3 --user-turn 0.02 --wpm 1000 --out %s/o >%s/report",
             tb_test_bin(), m.base, dir, dir);
    tb_test_lag_start();
    assert_int_equal(tb_test_sh(cmd), 0);
    lag = tb_test_lag_stop();
    snprintf(path, sizeof(path), "%s/report", dir);
    hdr = tb_test_slurp_str(path);
    assert_non_null(
        strstr(hdr, "\ncalls=2: 2 calls, 2 completed, 0 ended by a failed or cut turn; 6 turns\n"));
    free(hdr);
    snprintf(path, sizeof(path), "%s/o/records.jsonl", dir);
    hdr = tb_test_slurp_str(path);
    assert_non_null(strstr(hdr, "\"levels\":[{\"mode\":\"calls\",\"concurrency\":2,\"rate\":0}]"));
    assert_non_null(strstr(hdr, "\"conversations\":{\"source\":\"" FEW
                                "\",\"count\":2,\"turns\":3,\"user_turn\":\"0.02\"}"));
    free(hdr);
    n = tb_test_jsonl_records(path, v, 16);
    assert_int_equal(n, 6); /* two calls of 3 turns */
    for (size_t i = 0; i < n; i++) {
        const cJSON *tr = cJSON_GetObjectItemCaseSensitive(v[i], "trace");
        cJSON *sim;
        char args[512];
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v[i], "level")),
                            "calls=2");
        assert_non_null(tr);
        snprintf(args, sizeof(args), "sim --trace %s/o/%s --request %.0f --wpm 1000 --json", dir,
                 cJSON_GetStringValue(tr), num(v[i], "id"));
        sim = tb_test_run_json(NULL, args, 0);
        assert_near(num(v[i], "play_end_s"), num(sim, "end_s"), 1e-9);
        cJSON_Delete(sim);
        /* the next turn of its call, sent after this one's answer played
         * and the caller spoke: within 5 ms of its schedule, and twice
         * the wake-up delay the probe measured meanwhile (lag.h) */
        for (size_t j = 0; j < n; j++)
            if (num(v[j], "call") == num(v[i], "call") &&
                num(v[j], "turn") == num(v[i], "turn") + 1) {
                assert_near(num(v[j], "t_sched"),
                            num(v[i], "t_start") + num(v[i], "play_end_s") + 0.02, 1e-9);
                assert_true(num(v[j], "t_start") >= num(v[j], "t_sched"));
                /* two wake-ups: the client's timer, then its send */
                assert_near(num(v[j], "t_start") - num(v[j], "t_sched"), 0,
                            0.005 * TB_TEST_TIME_SCALE + 2 * lag);
            }
    }
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(v[i]);
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* Two shards together run exactly the calls and turns one run does, and
 * merge combines them; merge refuses a shard of requests beside one of
 * calls. */
static void cli_shards_merge(void **state)
{
    struct tb_test_mock m;
    char dir[128], cmd[4096], path[256], common[1024], cwd[512], *one, *two;
    (void)state;
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    snprintf(common, sizeof(common),
             "--model mock --conversations %s/" FEW
             " --calls 2 --call-count 5 --turns 2 --user-turn uniform:0,0.02 --wpm 1000 -q",
             cwd);
    mock_up(&m, 3, 0.01, 0.005, 0);
    tb_test_tmpdir(dir, sizeof(dir), "calls", "shards");
    snprintf(cmd, sizeof(cmd),
             "cd %s && B='%s'; $B bench --base-url %s %s --out one && "
             "$B bench --base-url %s %s --shard 0/2 --out sh && "
             "$B bench --base-url %s %s --shard 1/2 --out sh && "
             "P='s/.*\"call\":\\([0-9]*\\),\"turn\":\\([0-9]*\\),.*/\\1 \\2/'; "
             "tail -q -n +2 one/records.jsonl | sed \"$P\" | sort >one.pairs && "
             "tail -q -n +2 sh/records-*-of-2.jsonl | sed \"$P\" | sort >sh.pairs && "
             "'%s' merge sh --json >merged.json",
             dir, tb_test_bin(), m.base, common, m.base, common, m.base, common, tb_test_bin());
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(path, sizeof(path), "%s/one.pairs", dir);
    one = tb_test_slurp_str(path);
    snprintf(path, sizeof(path), "%s/sh.pairs", dir);
    two = tb_test_slurp_str(path);
    /* 5 calls of 2 turns: the same pairs; the first turn's schedule is
     * the arrival, so compare call and turn only */
    {
        char *p = one;
        int lines = 0;
        while ((p = strchr(p, '\n')) != NULL) {
            lines++;
            p++;
        }
        assert_int_equal(lines, 10);
    }
    {
        /* keep "call turn" of each line */
        char a[1024] = "", b[1024] = "";
        char *s1 = NULL, *s2 = NULL, *l;
        for (l = strtok_r(one, "\n", &s1); l != NULL; l = strtok_r(NULL, "\n", &s1)) {
            char c[32];
            int ci, ti;
            assert_int_equal(sscanf(l, "%d %d", &ci, &ti), 2);
            snprintf(c, sizeof(c), "%d.%d ", ci, ti);
            strncat(a, c, sizeof(a) - strlen(a) - 1);
        }
        for (l = strtok_r(two, "\n", &s2); l != NULL; l = strtok_r(NULL, "\n", &s2)) {
            char c[32];
            int ci, ti;
            assert_int_equal(sscanf(l, "%d %d", &ci, &ti), 2);
            snprintf(c, sizeof(c), "%d.%d ", ci, ti);
            strncat(b, c, sizeof(b) - strlen(b) - 1);
        }
        assert_string_equal(a, b);
        assert_string_equal(a, "0.0 0.1 1.0 1.1 2.0 2.1 3.0 3.1 4.0 4.1 ");
    }
    free(one);
    free(two);
    snprintf(path, sizeof(path), "%s/merged.json", dir);
    one = tb_test_slurp_str(path);
    assert_non_null(strstr(one, "\"level\":\"calls=2\""));
    free(one);
    /* A shard of requests beside a shard of calls. */
    snprintf(cmd, sizeof(cmd),
             "cd %s && mkdir mix && cp sh/records-0-of-2.jsonl mix/ && '%s' bench --base-url %s "
             "--model mock -c 2 --requests 2 --wpm 1000 -q --shard 1/2 --out mix",
             dir, tb_test_bin(), m.base);
    assert_int_equal(tb_test_sh(cmd), 0);
    snprintf(cmd, sizeof(cmd), "merge %s/mix", dir);
    tb_test_expect_error(cmd, 2, "the levels: c=2 here, calls=2 there");
    tb_test_rm_rf(dir);
    tb_test_mock_stop(&m);
}

/* Bad values and combinations: one line each, exit 2. */
static void cli_bad_values(void **state)
{
    static const struct {
        const char *args, *want;
    } cases[] = {
        {"--conversations builtin --prompts x.jsonl", "--prompts is for one-shot requests"},
        {"--conversations builtin -c 2", "-c is for one-shot requests"},
        {"--conversations builtin --rate 1", "--rate is for one-shot requests"},
        {"--conversations builtin --requests 3", "--requests is for one-shot requests"},
        {"--conversations builtin --api completions", "--api completions has none"},
        {"--conversations builtin --turns 0", "--turns"},
        {"--conversations builtin --calls 0", "--calls"},
        {"--conversations builtin --calls 1,x", "--calls"},
        {"--conversations builtin --call-rate 0", "--call-rate"},
        {"--conversations builtin --calls 1 --call-rate 1", "not both"},
        {"--conversations builtin --call-count 0", "--call-count"},
        {"--conversations builtin --user-turn fast", "--user-turn: 'fast' is not S"},
        {"--conversations builtin --user-turn uniform:3,1", "is not uniform:A..B"},
        {"--conversations builtin --user-turn words:0", "is not words:WPM"},
        {"--conversations builtin --user-turn exp:-1", "'exp:-1' is negative"},
        {"--calls 2", "--calls drives calls: it needs --conversations"},
        {"--user-turn 1", "--user-turn drives calls"},
        {"--conversations /nonexistent/c.jsonl", "--conversations: "},
        {"--conversations " FEW " --turns 1001", "--turns"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[512];
        snprintf(args, sizeof(args), "bench --mock %s", cases[i].args);
        tb_test_expect_error(args, 2, cases[i].want);
    }
}

int tb_test_calls(void)
{
    const struct CMUnitTest cases[] = {
        cmocka_unit_test(user_turn_specs),
        cmocka_unit_test(prefill_growth),
        cmocka_unit_test(bodies_are_the_conversation),
        cmocka_unit_test(failed_turn_ends_call),
        cmocka_unit_test(open_loop_calls),
        cmocka_unit_test(calls_counted),
        cmocka_unit_test(cli_records_and_traces),
        cmocka_unit_test(cli_shards_merge),
        cmocka_unit_test(cli_bad_values),
    };
    return TB_RUN_GROUP("calls", cases);
}
