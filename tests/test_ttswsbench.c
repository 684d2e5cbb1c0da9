/*
 * test_ttswsbench.c - `ttsbuf bench --tts-api elevenlabs-ws|cartesia-ws`:
 * 100 concurrent streams, each with a WebSocket TTS, against the
 * third-party peer (tests/node/tts-ws-peer.mjs on the npm `ws` package)
 * and `ttsbuf serve`'s LLM routes, all on loopback.  Each dialect: every
 * stream complete, every chunk's first byte against what the peer logged
 * doing for it (its own delay from the chunk's arrival to its first
 * audio), and the threads of the bench process counted in
 * /proc/PID/task while its 100 connections are open: the level's loop
 * threads and the main one, never one per connection (ttsws.h: one
 * libwebsockets context per loop thread); and the loop's API as a
 * caller's event loop drives it, 100 clients in this process.  Skipped,
 * saying so, only when
 * node is not installed (CI has it).
 */
#include <cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lag.h"
#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsnet.h"
#include "ttsbuf/ttsws.h"

#define KEY "sk-ttswsbench-Q7v2secret"
#define STREAMS 100
#define CHUNKS_MAX ((size_t)STREAMS * 8)
#define LAT 0.040 /* the peer's first-audio delay (tts-ws-peer.mjs) */
/* A short answer (about 1 s of tokens, three chunks) for each stream. */
#define SHORT "--synth tps=40,ttft=0.2,tokens=40,seed=3"

static pid_t peer_pid;
static char peer_log_path[128];

static int have_node(void)
{
    if (tb_test_sh("command -v node >/dev/null 2>&1") != 0) {
        print_message("    node is not installed: the WebSocket peer tests are skipped\n");
        return 0;
    }
    return 1;
}

/* The peer for dialect ("elevenlabs", "cartesia") in mode (ok: answering
 * every chunk; tts-ws-peer.mjs's faults); its port. */
static int peer_start_mode(const char *dialect, const char *mode)
{
    const char *dir = getenv("TB_NODEDIR") != NULL ? getenv("TB_NODEDIR") : "tests/node";
    char js[512], portfile[160];
    int port;
    snprintf(js, sizeof(js), "%s/tts-ws-peer.mjs", dir);
    snprintf(peer_log_path, sizeof(peer_log_path), "/tmp/ttsbuf-ttswsbench-%d.log", (int)getpid());
    unlink(peer_log_path);
    snprintf(portfile, sizeof(portfile), "%s.port", peer_log_path);
    unlink(portfile);
    peer_pid = fork();
    assert_true(peer_pid >= 0);
    if (peer_pid == 0) {
        setenv("PEER_KEY", KEY, 1);
        execlp("node", "node", js, "0", dialect, mode, peer_log_path, (char *)NULL);
        _exit(127);
    }
    port = tb_test_port_file(portfile);
    unlink(portfile);
    return port;
}

static int peer_start(const char *dialect)
{
    return peer_start_mode(dialect, "ok");
}

static void peer_stop(void)
{
    if (peer_pid > 0) {
        kill(peer_pid, SIGTERM);
        waitpid(peer_pid, NULL, 0);
        peer_pid = 0;
        unlink(peer_log_path);
    }
}

static int teardown(void **state)
{
    peer_stop();
    return tb_test_serve_down(state);
}

/* The threads of process pid now (its /proc/PID/task entries), or 0. */
static int threads_of(pid_t pid)
{
    char path[64];
    struct dirent *e;
    DIR *d;
    int n = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Runs `ttsbuf bench` with argv (NULL-ended), counting its threads every
 * 2 ms while it runs; returns its exit status, the most threads seen in
 * *max_threads. */
static int bench_counting(char *const argv[], int *max_threads)
{
    struct timespec tick = {0, 2000000};
    int st = 0;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 1);
        execv(tb_test_bin(), argv);
        _exit(127);
    }
    *max_threads = 0;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        int n = threads_of(pid);
        if (n > *max_threads)
            *max_threads = n;
        nanosleep(&tick, NULL);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The peer's own first-audio delays (s), sorted; how many; the most its
 * event loop was late (s) in *loop_lag. */
static size_t peer_delays(double *v, size_t cap, double *loop_lag)
{
    char *s = tb_test_slurp_str(peer_log_path), *save = NULL;
    size_t n = 0;
    *loop_lag = 0;
    for (char *line = strtok_r(s, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        const cJSON *d = cJSON_GetObjectItem(j, "first_audio_ms");
        const cJSON *l = cJSON_GetObjectItem(j, "loop_lag_ms");
        if (cJSON_IsNumber(d) && n < cap)
            v[n++] = d->valuedouble / 1000.0;
        if (cJSON_IsNumber(l) && l->valuedouble / 1000.0 > *loop_lag)
            *loop_lag = l->valuedouble / 1000.0;
        cJSON_Delete(j);
    }
    free(s);
    qsort(v, n, sizeof(v[0]), cmp_double);
    return n;
}

/* Every record of dir complete, its chunks all sent and none failed;
 * every chunk's first byte (from its send) into v, sorted; how many. */
static size_t client_firsts(const char *dir, double *v, size_t cap)
{
    char path[256];
    cJSON *recs[STREAMS + 2];
    size_t n, m = 0;
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    n = tb_test_jsonl_records(path, recs, STREAMS + 2);
    assert_int_equal(n, STREAMS);
    for (size_t i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetObjectItem(recs[i], "tts"), *fb, *x;
        if (!cJSON_IsNull(cJSON_GetObjectItem(recs[i], "error")))
            fail_msg("stream %zu failed: %s", i, cJSON_PrintUnformatted(recs[i]));
        assert_non_null(t);
        assert_int_equal(cJSON_GetObjectItem(t, "failed")->valueint, 0);
        assert_int_equal(cJSON_GetObjectItem(t, "sent")->valueint,
                         cJSON_GetObjectItem(t, "chunks")->valueint);
        fb = cJSON_GetObjectItem(t, "first_byte_s");
        assert_int_equal(cJSON_GetArraySize(fb), cJSON_GetObjectItem(t, "sent")->valueint);
        cJSON_ArrayForEach(x, fb)
        {
            assert_true(m < cap);
            v[m++] = x->valuedouble;
        }
        cJSON_Delete(recs[i]);
    }
    qsort(v, m, sizeof(v[0]), cmp_double);
    return m;
}

/*
 * The first bytes against the peer's schedule.  Each chunk's first byte
 * as the client measured it (its audio read, from its text's write)
 * holds the peer's own delay for it (its text reaching the peer's handler
 * to the audio's send, LAT plus node's timer lateness) and the way both
 * ways: never less, and more by at most the transit, the client's loop (a
 * 1 ms wake while TTS clients run), and the bursts (100 streams' chunks
 * fall due together, and both ends handle them one after another; 0.1 ms
 * a stream at each end), plus twice the wake-up delay the probe measured
 * (lag.h) and how long a text waited in the peer's socket before its
 * handler ran, which the peer bounds by its event loop's largest delay.
 * The chunks cannot be paired (every stream speaks the same answer), so
 * the two sets are compared sorted: when every chunk's pair holds d <= c
 * <= d + tol, the k-th smallest of each holds it too.
 */
static const char *schedule_check(const double *c, const double *d, size_t n, double lag,
                                  double peer_lag, char *why, size_t len)
{
    const double tol = (0.005 + 0.0001 * STREAMS * 2) * TB_TEST_TIME_SCALE;
    for (size_t k = 0; k < n; k++) {
        /* node's timers may fire up to 1 ms before their time by its clock */
        if (c[k] < d[k] - 0.001 || c[k] < LAT - 0.002) {
            snprintf(why, len, "%zu-th first byte %.4f s: before the peer's %.4f s", k + 1, c[k],
                     d[k]);
            return why;
        }
        if (c[k] > d[k] + tol + 2 * lag + peer_lag) {
            snprintf(why, len,
                     "%zu-th first byte %.4f s: the peer's %.4f s + %.4f + 2 x lag %.4f + the "
                     "peer's loop lag %.4f",
                     k + 1, c[k], d[k], tol, lag, peer_lag);
            return why;
        }
    }
    return NULL;
}

/* One dialect at 100 concurrent streams, on `threads` loop threads
 * (0: the default, one at this level). */
static int run_dialect(const char *peer_dialect, const char *api, int threads, char *why,
                       size_t len)
{
    static double c[CHUNKS_MAX], d[CHUNKS_MAX];
    char dir[128], url[64], base[64], kf[128], nthreads[16], cmd[200];
    char *argv[32];
    int llm, ws, max_threads, code, a = 0;
    size_t nc, nd;
    double lag, peer_lag;
    FILE *f;
    snprintf(kf, sizeof(kf), "/tmp/ttsbuf-ttswsbench-key-%d", (int)getpid());
    f = fopen(kf, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", KEY);
    fclose(f);
    tb_test_serve_up(SHORT, &llm);
    ws = peer_start(peer_dialect);
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-ttswsbench-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
    snprintf(base, sizeof(base), "http://127.0.0.1:%d/v1", llm);
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d", ws);
    snprintf(nthreads, sizeof(nthreads), "%d", threads > 0 ? threads : 1);
    argv[a++] = "ttsbuf";
    argv[a++] = "bench";
    argv[a++] = "--base-url";
    argv[a++] = base;
    argv[a++] = "--model";
    argv[a++] = "m";
    argv[a++] = "--tts-url";
    argv[a++] = url;
    argv[a++] = "--tts-api";
    argv[a++] = (char *)api;
    argv[a++] = "--tts-api-key-file";
    argv[a++] = kf;
    argv[a++] = "-c";
    argv[a++] = "100";
    argv[a++] = "--requests";
    argv[a++] = "100";
    argv[a++] = "--threads";
    argv[a++] = nthreads;
    argv[a++] = "--out";
    argv[a++] = dir;
    argv[a++] = "-q";
    argv[a] = NULL;
    tb_test_lag_start();
    code = bench_counting(argv, &max_threads);
    lag = tb_test_lag_stop();
    assert_int_equal(code, 0);
    /* The loop threads and the thread that waits for them (with one loop,
     * the main thread is the loop): never a thread per connection. */
    if (max_threads < 1 || max_threads > (threads > 1 ? threads + 1 : 1))
        fail_msg("%s: %d threads with %d streams on %d loop(s)", api, max_threads, STREAMS,
                 threads > 0 ? threads : 1);
    nc = client_firsts(dir, c, CHUNKS_MAX);
    nd = peer_delays(d, CHUNKS_MAX, &peer_lag);
    assert_true(nc >= (size_t)2 * STREAMS);
    assert_int_equal(nc, nd); /* every chunk the client sent, the peer answered */
    peer_stop();
    tb_test_serve_down(NULL);
    tb_test_sh(cmd);
    unlink(kf);
    if (schedule_check(c, d, nc, lag, peer_lag, why, len) != NULL) {
        print_message("%s: %s\n", api, why);
        return 0;
    }
    return 1;
}

static int once_elevenlabs(char *why, size_t len)
{
    return run_dialect("elevenlabs", "elevenlabs-ws", 0, why, len);
}

static int once_cartesia(char *why, size_t len)
{
    return run_dialect("cartesia", "cartesia-ws", 0, why, len);
}

static int once_two_loops(char *why, size_t len)
{
    return run_dialect("cartesia", "cartesia-ws", 2, why, len);
}

/* The library's loop as a caller's own event loop would drive it
 * (ttsws.h): 100 ElevenLabs clients on one tb_ttsws_loop in this process,
 * a chunk each; the caller polls the loop's descriptor (bounded by its
 * timeout), services it, steps every client without waiting, services it
 * again; every chunk complete with the peer's audio, and this process's
 * threads (/proc/self/task) the same with 100 connections open as before
 * the first. */
static void loop_api_100_clients(void **state)
{
    static const char text[] = "Hello from one of a hundred streams.";
    struct tb_ttsws *c[STREAMS];
    struct tb_ttsws_loop *l;
    struct tb_ttsnet_opts o;
    char err[256], url[64];
    int before, most = 0, left = STREAMS, port;
    (void)state;
    if (!have_node())
        skip();
    port = peer_start("elevenlabs");
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d", port);
    before = threads_of(getpid());
    assert_int_equal(tb_ttsws_loop_create(&l, 0, err, sizeof(err)), 0);
    assert_true(tb_ttsws_loop_fd(l) >= 0);
    tb_ttsnet_opts_init(&o);
    o.url = url;
    o.key = KEY;
    o.idle_timeout = 10;
    o.ws_loop = l;
    for (int i = 0; i < STREAMS; i++) {
        if (tb_ttsws_create(TB_TTSWS_ELEVENLABS, &o, &c[i], err, sizeof(err)) != 0)
            fail_msg("client %d: %s", i, err);
        assert_int_equal(tb_ttsws_submit(c[i], text, strlen(text)), 0);
    }
    for (int spins = 0; left > 0 && spins < 20000; spins++) {
        struct pollfd p = {tb_ttsws_loop_fd(l), POLLIN, 0};
        int t = tb_ttsws_loop_timeout(l);
        int n = threads_of(getpid());
        if (n > most)
            most = n;
        assert_true(poll(&p, 1, t < 0 || t > 10 ? 10 : t) >= 0);
        tb_ttsws_loop_service(l);
        left = 0;
        for (int i = 0; i < STREAMS; i++) {
            int r = tb_ttsws_step(c[i], 0);
            assert_true(r >= 0);
            left += r;
        }
        tb_ttsws_loop_service(l); /* what the steps queued goes out */
    }
    assert_int_equal(left, 0);
    if (most != before)
        fail_msg("%d threads with %d connections on one loop, %d before", most, STREAMS, before);
    for (int i = 0; i < STREAMS; i++) {
        const struct tb_tts_log *g = tb_ttsws_log(c[i]);
        assert_int_equal(g->n, 1);
        assert_int_equal(g->c[0].fail, TB_TTS_OK);
        assert_true(g->c[0].bytes > 0);
        assert_true(g->c[0].first_byte - g->c[0].sent >= LAT - 0.002);
    }
    for (int i = 0; i < STREAMS; i++)
        tb_ttsws_destroy(c[i]);
    tb_ttsws_loop_destroy(l);
    assert_int_equal(threads_of(getpid()), before);
    /* A client that asks for wss on a loop made without TLS is refused. */
    assert_int_equal(tb_ttsws_loop_create(&l, 0, err, sizeof(err)), 0);
    o.ws_loop = l;
    o.url = "wss://127.0.0.1:9";
    assert_int_equal(tb_ttsws_create(TB_TTSWS_ELEVENLABS, &o, &c[0], err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "without TLS"));
    assert_null(c[0]);
    tb_ttsws_loop_destroy(l);
}

static void elevenlabs_100_streams(void **state)
{
    (void)state;
    if (!have_node())
        skip();
    tb_test_up_to_three(once_elevenlabs, "elevenlabs-ws, 100 streams");
}

static void cartesia_100_streams(void **state)
{
    (void)state;
    if (!have_node())
        skip();
    tb_test_up_to_three(once_cartesia, "cartesia-ws, 100 streams");
}

/* --threads 2: each loop thread its own context, 50 connections each;
 * the process has the two loops and the waiting thread. */
static void two_loop_threads(void **state)
{
    (void)state;
    if (!have_node())
        skip();
    tb_test_up_to_three(once_two_loops, "cartesia-ws, 100 streams on 2 loops");
}

/* bench with the peer in mode against serve's synth (serve_args) and
 * more bench args; its records (an array, *records) and summary. */
static void bench_ws(const char *mode, const char *serve_args, const char *more, const char *dir,
                     cJSON **records, cJSON **summary, char **report)
{
    char args[1024], kf[160], path[256], *s, *line, *save = NULL;
    struct tb_test_out o;
    int llm, ws;
    FILE *f;
    snprintf(kf, sizeof(kf), "%s/key", dir);
    f = fopen(kf, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", KEY);
    fclose(f);
    tb_test_serve_up(serve_args, &llm);
    ws = peer_start_mode("elevenlabs", mode);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m --tts-url ws://127.0.0.1:%d "
             "--tts-api elevenlabs-ws --tts-api-key-file %s --out %s/out --force %s",
             llm, ws, kf, dir, more);
    o = tb_test_run(args);
    peer_stop();
    tb_test_serve_down(NULL);
    /* 3: every request failed (the refusing peer); 2 never. */
    if (o.code != 0 && o.code != 1 && !(o.code == 3 && strcmp(mode, "ok") != 0))
        fail_msg("bench %s: exit %d: %s", more, o.code, o.se);
    *report = strdup(o.so);
    tb_test_out_free(&o);
    snprintf(path, sizeof(path), "%s/out/records.jsonl", dir);
    s = tb_test_slurp_str(path);
    *records = cJSON_CreateArray();
    for (line = strtok_r(s, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        assert_non_null(j);
        if (cJSON_GetObjectItem(j, "id") != NULL) /* not the header */
            cJSON_AddItemToArray(*records, j);
        else
            cJSON_Delete(j);
    }
    free(s);
    snprintf(path, sizeof(path), "%s/out/summary.json", dir);
    s = tb_test_slurp_str(path);
    *summary = cJSON_Parse(s);
    assert_non_null(*summary);
    free(s);
}

/* The level's tts_stats of a bench summary. */
static const cJSON *summary_tts(const cJSON *summary)
{
    const cJSON *lv = cJSON_GetArrayItem(cJSON_GetObjectItem(summary, "levels"), 0);
    const cJSON *t = cJSON_GetObjectItem(lv, "tts_stats");
    if (!cJSON_IsObject(t))
        fail_msg("no levels[0].tts_stats in the summary");
    return t;
}

/* The trial of issue 39, each finding: a barge-in stops chunks that had
 * closed but were not written: every stream of the level's trace file
 * replays in sim (a never-written chunk has no sent and no end); the
 * blank chunks are counted skipped (records, summary, report) as run
 * counts them; a stream whose TTS refused the upgrade has no underrun
 * count (null beside ttfa_s), and no chunk counted as sent. */
static void barge_in_blank_and_refused(void **state)
{
    char dir[160], args[512];
    cJSON *recs, *sum, *r;
    char *report;
    const cJSON *t;
    double skipped = 0;
    int streams = 0;
    (void)state;
    if (!have_node())
        skip();
    tb_test_tmpdir(dir, sizeof(dir), "ttswsbench", "i39");
    bench_ws("ok", "--synth tps=150,ttft=0.2,tokens=120,seed=3",
             "--conversations builtin --calls 4 --turns 3 --barge-in 1 --barge-in-at 0.05 "
             "--user-turn 0.3 -q",
             dir, &recs, &sum, &report);
    cJSON_ArrayForEach(r, recs)
    {
        struct tb_test_out o;
        snprintf(args, sizeof(args),
                 "sim --trace %s/out/traces/calls=4.jsonl --request %.0f --json", dir,
                 cJSON_GetObjectItem(r, "id")->valuedouble);
        o = tb_test_run(args);
        /* 0: an interrupted turn, its chunk canceled by the barge-in, is
         * no TTS failure; never 2 (a trace sim refuses) or 3. */
        if (o.code != 0 || strstr(o.se, "without") != NULL)
            fail_msg("%s: exit %d: %s", args, o.code, o.se);
        tb_test_out_free(&o);
        streams++;
    }
    assert_int_equal(streams, 12);
    cJSON_Delete(recs);
    cJSON_Delete(sum);
    free(report);

    /* Long answers: paragraph breaks, blank chunks. */
    bench_ws("ok", "--synth tps=400,ttft=0.1,tokens=600,seed=5", "--requests 2 -c 2", dir, &recs,
             &sum, &report);
    cJSON_ArrayForEach(r, recs)
    {
        const cJSON *s = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "tts"), "skipped");
        if (!cJSON_IsNumber(s))
            fail_msg("a record's tts has no skipped count");
        skipped += s->valuedouble;
    }
    t = summary_tts(sum);
    if (!(skipped >= 1) || cJSON_GetObjectItem(t, "skipped")->valuedouble != skipped ||
        cJSON_GetObjectItem(t, "sent")->valuedouble + skipped !=
            cJSON_GetObjectItem(t, "chunks")->valuedouble ||
        strstr(report, " blank, skipped)") == NULL)
        fail_msg("%.0f skipped in the records; summary %s; report '%s'", skipped,
                 cJSON_PrintUnformatted(t), report);
    cJSON_Delete(recs);
    cJSON_Delete(sum);
    free(report);

    bench_ws("refuse", "--synth tps=150,ttft=0.2,tokens=60,seed=3", "--requests 2 -c 1", dir, &recs,
             &sum, &report);
    cJSON_ArrayForEach(r, recs)
    {
        if (!cJSON_IsNull(cJSON_GetObjectItem(r, "ttfa_s")) ||
            !cJSON_IsNull(cJSON_GetObjectItem(r, "underruns")) ||
            cJSON_GetObjectItem(cJSON_GetObjectItem(r, "tts"), "sent")->valuedouble != 0)
            fail_msg("a refused stream's record: %s", cJSON_PrintUnformatted(r));
    }
    cJSON_Delete(recs);
    cJSON_Delete(sum);
    free(report);
    snprintf(args, sizeof(args), "rm -rf %s", dir);
    tb_test_sh(args);
}

int tb_test_ttswsbench(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(loop_api_100_clients, teardown),
        cmocka_unit_test_teardown(elevenlabs_100_streams, teardown),
        cmocka_unit_test_teardown(cartesia_100_streams, teardown),
        cmocka_unit_test_teardown(two_loop_threads, teardown),
        cmocka_unit_test_teardown(barge_in_blank_and_refused, teardown),
    };
    return TB_RUN_GROUP("ttswsbench", tests);
}
