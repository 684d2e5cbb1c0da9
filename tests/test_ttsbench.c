/*
 * test_ttsbench.c - `ttsbuf bench --tts-url`: a real TTS per stream, end
 * to end, against `ttsbuf serve` started as a process on loopback (its
 * LLM routes and its mock TTS): the measured first-byte latencies against
 * the mock's schedule, each stream's numbers against `sim --trace` of its
 * trace, the TTS's failures as failed streams, the key, the refusals.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lag.h"
#include "tests.h"

static const char *const dialects[] = {"openai", "elevenlabs", "deepgram", "cartesia"};

/* A short answer (about 1 s of tokens, three sentences) for each stream. */
#define SHORT "--synth tps=40,ttft=0.2,tokens=40,seed=3"

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The lines of a JSONL file, parsed (owned: cJSON_Delete each). */
static size_t jsonl(const char *path, cJSON **out, size_t max)
{
    char *text = tb_test_slurp_text(path, NULL), *save = NULL;
    size_t n = 0;
    for (char *line = strtok_r(text, "\n", &save); line != NULL && n < max;
         line = strtok_r(NULL, "\n", &save))
        if ((out[n] = cJSON_Parse(line)) != NULL)
            n++;
    free(text);
    return n;
}

static void free_all(cJSON **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(v[i]);
}

/* bench against the server on port: `bench ... --out dir EXTRA`, the exit
 * code asserted. */
static void bench(int port, const char *dir, const char *extra, int code)
{
    char args[2048], cmd[2300];
    struct tb_test_out o;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    tb_test_sh(cmd);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m --tts-url http://127.0.0.1:%d "
             "--out %s -q %s",
             port, port, dir, extra);
    o = tb_test_run(args);
    if (o.code != code)
        fail_msg("bench exited %d (want %d): %s", o.code, code, o.se);
    tb_test_out_free(&o);
}

/* Appends the first-byte latency (first_byte - sent) of each chunk of a
 * trace that had a first byte to ttfb[*voiced], in chunk order. */
static void latencies(const char *trace, double *ttfb, size_t *voiced, size_t max)
{
    cJSON *lines[128];
    size_t n = jsonl(trace, lines, 128);
    for (size_t i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(lines[i], "tts");
        if (t == NULL || cJSON_GetObjectItemCaseSensitive(t, "chunk") == NULL)
            continue;
        if (!isnan(num(t, "first_byte"))) {
            assert_true(*voiced < max);
            ttfb[(*voiced)++] = num(t, "first_byte") - num(t, "sent");
        }
    }
    free_all(lines, n);
}

/* The server log's TTS lines from index from on, in the order it
 * received them, moved to the front of v[from..n); returns how many. */
static int by_received(const void *a, const void *b)
{
    const struct tb_test_slog *x = a, *y = b;
    return (x->received > y->received) - (x->received < y->received);
}

static size_t tts_requests(struct tb_test_slog *v, size_t from, size_t n)
{
    size_t m = from;
    for (size_t i = from; i < n; i++)
        if (strncmp(v[i].route, "tts_", 4) == 0)
            v[m++] = v[i];
    qsort(v + from, m - from, sizeof(v[0]), by_received);
    return m - from;
}

/* sim's report and the record agree on key: the same double, as sim's
 * report prints it (cJSON: 15 significant digits when they read back
 * within its compare_double, else 17; the records always read back
 * bit-identical). */
static void same(const cJSON *sim, const cJSON *rec, const char *key)
{
    char buf[64];
    double r = num(rec, key);
    snprintf(buf, sizeof(buf), "%.15g", r);
    if (r != num(sim, key) && strtod(buf, NULL) != num(sim, key))
        fail_msg("%s: sim --trace %.17g, the record %.17g", key, num(sim, key), r);
}

/* The trace named by a record, in dir. */
static void trace_of(const char *dir, const cJSON *rec, char *path, size_t len)
{
    tb_test_rec_trace(dir, rec, path, len);
}

/* (a) Each dialect, three streams (one at a time: the mock synthesizes one
 * request at a time on its eSpeak NG thread, and a request whose first
 * byte falls due while another's audio is made waits for it), against serve
 * --tts-latency 0.5: every chunk's first byte the mock's 0.5 s, judged
 * against the server's own log of the same request within 5 ms plus what
 * the machine's scheduling added meanwhile (tb_test_sched_check, lag.h;
 * 20 ms sanitized; 3 attempts on a noisy machine), and each stream's
 * numbers exactly what `sim --trace` of its trace gives. */
static void latency_and_replay_each_dialect(void **state)
{
    char slog[96], sargs[256];
    size_t seen = 0;
    int port;
    (void)state;
    snprintf(slog, sizeof(slog), "/tmp/ttsbuf-ttsbench-serve-%d.jsonl", (int)getpid());
    snprintf(sargs, sizeof(sargs), SHORT " --tts-latency 0.5 --log %s", slog);
    tb_test_serve_up(sargs, &port);
    for (size_t d = 0; d < sizeof(dialects) / sizeof(dialects[0]); d++) {
        const double tol = 0.005 * TB_TEST_TIME_SCALE;
        char why[320] = "";
        int ok = 0;
        for (int attempt = 0; attempt < 3 && !ok; attempt++) {
            char dir[256], extra[256], path[512], msg[256];
            static struct tb_test_slog lines[512];
            cJSON *recs[16];
            double ttfb[64], lag;
            size_t n, nl, voiced = 0;
            snprintf(dir, sizeof(dir), "/tmp/ttsbuf-ttsbench-a-%d", (int)getpid());
            snprintf(extra, sizeof(extra), "-c 1 --requests 3 --tts-api %s", dialects[d]);
            tb_test_lag_start();
            bench(port, dir, extra, 0);
            lag = tb_test_lag_stop();
            snprintf(path, sizeof(path), "%s/records.jsonl", dir);
            n = jsonl(path, recs, 16);
            assert_int_equal(n, 4); /* the header and 3 records */
            for (size_t i = 1; i < n; i++) {
                char args[1024];
                cJSON *sim;
                assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(recs[i], "error")));
                trace_of(dir, recs[i], path, sizeof(path));
                latencies(path, ttfb, &voiced, 64);
                snprintf(args, sizeof(args), "sim --trace %s --json", path);
                sim = tb_test_run_json(NULL, args, 0);
                assert_string_equal(str(sim, "tts_source"), "measured");
                same(sim, recs[i], "ttfa_s");
                same(sim, recs[i], "underruns");
                same(sim, recs[i], "gap_total_s");
                same(sim, recs[i], "gap_max_s");
                same(sim, recs[i], "min_tps");
                cJSON_Delete(sim);
            }
            assert_true(voiced >= 6);
            /* The streams ran one at a time and each sent its chunks in
             * order: the server received them in the records' order. */
            nl = tb_test_slog_wait(slog, lines, 512, seen, "tts_", voiced);
            assert_int_equal(tts_requests(lines, seen, nl), voiced);
            ok = 1;
            for (size_t i = 0; i < voiced && ok; i++) {
                const struct tb_test_slog *l = &lines[seen + i];
                if (tb_test_sched_check(0.5, ttfb[i], l->first_byte - l->received, l, lag, tol,
                                        TB_TEST_PIECE_LATE, msg, sizeof(msg)) != NULL) {
                    snprintf(why, sizeof(why), "TTS request %zu's first byte: %s", i + 1, msg);
                    print_message("%s: %s\n", dialects[d], why);
                    ok = 0;
                }
            }
            seen = nl;
            free_all(recs, n);
            snprintf(path, sizeof(path), "rm -rf %s", dir);
            tb_test_sh(path);
        }
        if (!ok)
            fail_msg("%s: no bench with every first byte within the bound: %s", dialects[d], why);
    }
    tb_test_serve_down(NULL);
    unlink(slog);
}

/* The records of dir (header first). */
static size_t records(const char *dir, cJSON **recs, size_t max)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/records.jsonl", dir);
    return jsonl(path, recs, max);
}

/* A failed stream's trace: every event came (stopped 0), or its LLM
 * stream was stopped for a dead TTS (stopped 1): fewer events, its end
 * "tts", within a second of chunk 1's failure by the trace's own times. */
static void failed_trace(const char *path, int stopped)
{
    char *t = tb_test_slurp_str(path), *p;
    size_t events = 0;
    for (p = t; (p = strstr(p, "{\"t\":")) != NULL; p++)
        events++;
    assert_non_null(p = strstr(t, "\"tts\":{\"chunk\":1,"));
    if (stopped) {
        cJSON *c1 = cJSON_Parse(strstr(t, "\n{\"tts\":{\"chunk\":1,") + 1),
              *end = cJSON_Parse(strstr(t, "\n{\"end\":") + 1);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(end, "end");
        double t_fail = num(cJSON_GetObjectItemCaseSensitive(c1, "tts"), "end"),
               t_end = num(e, "t");
        assert_true(events < 40);
        assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(e, "error"), "kind"), "tts");
        if (!(t_end >= t_fail && t_end - t_fail < 1.0 * TB_TEST_TIME_SCALE))
            fail_msg("%s: chunk 1 failed at %.3f s, the LLM stream ended at %.3f s", path, t_fail,
                     t_end);
        cJSON_Delete(c1);
        cJSON_Delete(end);
    } else {
        assert_int_equal(events, 40);
    }
    free(t);
}

/* (b) A TTS fault fails exactly the streams it hits, with the kind "tts"
 * and a message naming the chunk, the TTS's kind, its status and the
 * provider's message; what was measured is kept (the trace holds the
 * events that came and the failed chunk's record).  A status 500 and a
 * cut for every request: the TTS is dead, so each stream's LLM transfer
 * still streaming is stopped (bench.h; most of the six, and the trace
 * says which), and the message names the TTS; then a 4 s first
 * byte for the 4th TTS request only (streams one at a time, 3 chunks
 * each) with a 2 s idle timeout (the others' 0.05 s stay far from it on a
 * loaded machine): exactly one stream fails, by that timeout, after its
 * LLM stream came whole, and the others do not.  Which stream and chunk
 * is not judged: the mock numbers TTS requests as it reads them, and in
 * CI (eight groups at once, the mock's eSpeak NG thread 1.8 s behind)
 * the 4th it read was the second stream's chunk 2. */
static void fault_fails_those_streams(void **state)
{
    static const struct {
        const char *serve, *client, *msg;
        int code, stopped;
        int failed[3]; /* which streams fail; all -1: exactly one, any */
    } rows[] = {
        {"--tts-fault status@500",
         "",
         "TTS chunk 1: http 500: Internal Server Error (ttsbuf fault status@500) (the TTS: openai "
         "at http://127.0.0.1:",
         3,
         1,
         {1, 1, 1}},
        {"", "--tts-model tts-1+cut@0.5", "TTS chunk 1: cut", 3, 1, {1, 1, 1}},
        {"--tts-latency list:LIST", "--tts-idle-timeout 2",
         ": timeout: no audio byte for 2 s (the idle timeout)", 0, 0, {-1, -1, -1}},
    };
    char list[256], dir[256];
    FILE *f;
    int stopped, nstopped = 0;
    (void)state;
    snprintf(list, sizeof(list), "/tmp/ttsbuf-ttsbench-list-%d", (int)getpid());
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-ttsbench-b-%d", (int)getpid());
    f = fopen(list, "w");
    assert_non_null(f);
    fprintf(f, "0.05\n0.05\n0.05\n4\n0.05\n0.05\n0.05\n0.05\n0.05\n0.05\n0.05\n0.05\n");
    fclose(f);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char sargs[512], extra[512], path[512];
        const char *at = strstr(rows[i].serve, "LIST");
        cJSON *recs[16];
        size_t n;
        int port;
        if (at != NULL)
            snprintf(sargs, sizeof(sargs), SHORT " %.*s%s", (int)(at - rows[i].serve),
                     rows[i].serve, list);
        else
            snprintf(sargs, sizeof(sargs), SHORT " %s", rows[i].serve);
        tb_test_serve_up(sargs, &port);
        snprintf(extra, sizeof(extra), "-c 1 --requests 3 %s --require errors=3", rows[i].client);
        bench(port, dir, extra, rows[i].code);
        tb_test_serve_down(NULL);
        n = records(dir, recs, 16);
        assert_int_equal(n, 4);
        if (rows[i].failed[0] < 0) {
            int nfailed = 0;
            for (size_t k = 1; k < n; k++)
                nfailed += !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(recs[k], "error"));
            if (nfailed != 1)
                fail_msg("row %zu: %d streams failed, want exactly one", i, nfailed);
        }
        for (size_t k = 1; k < n; k++) {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(recs[k], "error");
            int id = (int)num(recs[k], "id");
            assert_true(id >= 0 && id < 3);
            if (rows[i].failed[id] == 0 || (rows[i].failed[id] < 0 && cJSON_IsNull(e))) {
                if (!cJSON_IsNull(e))
                    fail_msg("row %zu: stream %d failed: %s", i, id,
                             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message")));
                continue;
            }
            assert_string_equal(str(e, "kind"), "tts");
            if (strstr(str(e, "message"), rows[i].msg) == NULL)
                fail_msg("row %zu: message '%s', want '%s'", i, str(e, "message"), rows[i].msg);
            /* A dead TTS stops the LLM stream it finds still streaming;
             * one that came whole first (a loaded machine can delay the
             * failure's reply past the stream's 1.2 s) is not stopped,
             * and its message does not say so. */
            stopped = strstr(str(e, "message"), "; the LLM stream was stopped") != NULL;
            if (stopped && !rows[i].stopped)
                fail_msg("row %zu: stream %d: '%s'", i, id, str(e, "message"));
            nstopped += stopped;
            /* everything measured is kept: the events and the record */
            trace_of(dir, recs[k], path, sizeof(path));
            failed_trace(path, stopped);
        }
        free_all(recs, n);
    }
    assert_true(nstopped >= 3); /* of the six dead-TTS streams */
    {
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, list);
        tb_test_sh(cmd);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile of sorted v[0..n), interpolated linearly. */
static double pct(const double *v, size_t n, double p)
{
    double pos = p / 100.0 * (double)(n - 1), lo = floor(pos);
    if ((size_t)lo >= n - 1)
        return v[n - 1];
    return v[(size_t)lo] + (v[(size_t)lo + 1] - v[(size_t)lo]) * (pos - lo);
}

/* a == b as cJSON prints a double (15 digits when they read back within
 * an ulp or so, its compare_double). */
static int near(double a, double b)
{
    return fabs(a - b) <= 1e-14 * fabs(b);
}

/* A level's statistics block against the pooled samples. */
static void block_is(const cJSON *blk, double *v, size_t n)
{
    qsort(v, n, sizeof(double), cmp_double);
    assert_true(num(blk, "count") == (double)n);
    assert_true(n > 0);
    assert_true(near(num(blk, "min"), v[0]));
    assert_true(near(num(blk, "max"), v[n - 1]));
    assert_true(near(num(blk, "p50"), pct(v, n, 50)));
    assert_true(near(num(blk, "p95"), pct(v, n, 95)));
}

/* (c) The per-level TTS statistics are a recomputation from the records:
 * counts summed, first-byte latencies and real-time factors pooled; and
 * each record's latencies are its trace's chunks' first byte - sent. */
static void level_stats_from_records(void **state)
{
    char dir[256], path[512], args[1024];
    cJSON *sum, *recs[16];
    const cJSON *lv, *ts;
    double fb[256], rtf[256], chunks = 0, sent = 0, chars = 0, audio = 0;
    size_t nfb = 0, nrtf = 0, n;
    int port;
    (void)state;
    tb_test_serve_up(SHORT " --tts-latency uniform:0.05..0.3 --tts-rtf 0.05", &port);
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-ttsbench-c-%d", (int)getpid());
    snprintf(path, sizeof(path), "rm -rf %s", dir);
    tb_test_sh(path);
    snprintf(args, sizeof(args),
             "bench --base-url http://127.0.0.1:%d/v1 --model m --tts-url http://127.0.0.1:%d "
             "--tts-api deepgram --tts-concurrency 2 -c 2 --requests 4 --out %s --json",
             port, port, dir);
    sum = tb_test_run_json(NULL, args, 0);
    tb_test_serve_down(NULL);
    lv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sum, "levels"), 0);
    ts = cJSON_GetObjectItemCaseSensitive(lv, "tts_stats");
    assert_true(cJSON_IsObject(ts));
    n = records(dir, recs, 16);
    assert_int_equal(n, 5);
    for (size_t i = 1; i < n; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(recs[i], "tts"), *v;
        cJSON *lines[128];
        size_t nl, k = 0;
        assert_true(cJSON_IsObject(t));
        chunks += num(t, "chunks");
        sent += num(t, "sent");
        chars += num(t, "chars");
        audio += num(t, "audio_s");
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(t, "first_byte_s"))
        {
            assert_true(nfb < 256);
            fb[nfb++] = v->valuedouble;
        }
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(t, "rtf"))
        {
            assert_true(nrtf < 256);
            rtf[nrtf++] = v->valuedouble;
        }
        /* the record's samples are its trace's chunks' */
        trace_of(dir, recs[i], path, sizeof(path));
        nl = jsonl(path, lines, 128);
        v = cJSON_GetObjectItemCaseSensitive(t, "first_byte_s");
        for (size_t j = 0; j < nl; j++) {
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(lines[j], "tts");
            if (c == NULL || cJSON_GetObjectItemCaseSensitive(c, "chunk") == NULL)
                continue;
            assert_true(num(c, "first_byte") - num(c, "sent") ==
                        cJSON_GetArrayItem(v, (int)k)->valuedouble);
            k++;
        }
        assert_int_equal(k, (size_t)cJSON_GetArraySize(v));
        free_all(lines, nl);
    }
    assert_true(num(ts, "chunks") == chunks);
    assert_true(num(ts, "sent") == sent);
    assert_true(num(ts, "chars") == chars);
    assert_true(fabs(num(ts, "audio_s") - audio) <= 1e-9);
    assert_true(num(ts, "failed") == 0);
    block_is(cJSON_GetObjectItemCaseSensitive(ts, "first_byte_s"), fb, nfb);
    block_is(cJSON_GetObjectItemCaseSensitive(ts, "rtf"), rtf, nrtf);
    assert_true(nfb >= 8);
    free_all(recs, n);
    cJSON_Delete(sum);
    snprintf(path, sizeof(path), "rm -rf %s", dir);
    tb_test_sh(path);
}

/* (d) The TTS key: sent in the dialect's header (serve refuses a wrong
 * one), never in an output, a trace or a record. */
static void key_kept_secret(void **state)
{
    const char *key = "sk-ttsbench-SECRET-4242-abcdefgh";
    char kf[256], args[1024], dir[256], cmd[1024];
    int port;
    FILE *f;
    (void)state;
    snprintf(kf, sizeof(kf), "/tmp/ttsbuf-ttsbench-key-%d", (int)getpid());
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-ttsbench-d-%d", (int)getpid());
    f = fopen(kf, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", key);
    fclose(f);
    snprintf(args, sizeof(args), SHORT " --tts-api-key-file %s", kf);
    tb_test_serve_up(args, &port);
    for (size_t d = 0; d < sizeof(dialects) / sizeof(dialects[0]); d++) {
        struct tb_test_out o;
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        tb_test_sh(cmd);
        snprintf(args, sizeof(args),
                 "bench --base-url http://127.0.0.1:%d/v1 --model m --tts-url "
                 "http://127.0.0.1:%d --tts-api %s --tts-api-key-file %s -c 2 --requests 2 "
                 "--out %s --json",
                 port, port, dialects[d], kf, dir);
        o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("%s: exit %d: %s", dialects[d], o.code, o.se);
        assert_null(strstr(o.so, "SECRET"));
        assert_null(strstr(o.se, "SECRET"));
        tb_test_out_free(&o);
        snprintf(cmd, sizeof(cmd), "grep -r SECRET %s", dir);
        assert_int_equal(tb_test_sh(cmd), 1); /* nothing found */
        /* a wrong key: each stream fails with the provider's 401, no key */
        snprintf(args, sizeof(args),
                 "env %s_API_KEY=sk-wrong-SECRET-9999 %s bench --base-url "
                 "http://127.0.0.1:%d/v1 --model m --tts-url http://127.0.0.1:%d --tts-api %s "
                 "-c 1 --requests 1 --out %s --force --json >%s.out 2>&1",
                 d == 0   ? "OPENAI"
                 : d == 1 ? "ELEVENLABS"
                 : d == 2 ? "DEEPGRAM"
                          : "CARTESIA",
                 tb_test_bin(), port, port, dialects[d], dir, dir);
        assert_int_equal(tb_test_sh(args), 3);
        snprintf(cmd, sizeof(cmd), "grep -q 'http 401' %s.out", dir);
        assert_int_equal(tb_test_sh(cmd), 0);
        snprintf(cmd, sizeof(cmd), "grep -r SECRET %s %s.out", dir, dir);
        assert_int_equal(tb_test_sh(cmd), 1);
    }
    tb_test_serve_down(NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s.out %s", dir, dir, kf);
    tb_test_sh(cmd);
}

/* SIGINT while the TTS stalls: bench stops, exit 3, and every stream is
 * recorded; a stream that came whole but whose speech the interrupt cut
 * is failed (tts, "canceled: interrupted"), never ok.  The SIGINT goes
 * once the server's log shows the first two answers sent whole (and half
 * a second for the client to read their end), not at a fixed time, which
 * a loaded machine's slow start passed before they ended. */
static void interrupt_cuts_speech(void **state)
{
    char dir[256], log[300], args[400], cmd[2048];
    cJSON *recs[16];
    size_t n, cut = 0;
    int port;
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/ttsbuf-ttsbench-i-%d", (int)getpid());
    snprintf(log, sizeof(log), "%s.log", dir);
    snprintf(args, sizeof(args), SHORT " --tts-fault stall --log %s", log);
    tb_test_serve_up(args, &port);
    snprintf(cmd, sizeof(cmd),
             "rm -rf %s; %s bench --base-url http://127.0.0.1:%d/v1 --model m "
             "--tts-url http://127.0.0.1:%d -c 2 --requests 3 --out %s -q 2>/dev/null & p=$!; "
             "i=0; while [ \"$(grep -c '\"route\":\"chat\".*\"end\":\"complete\"' %s)\" "
             "-lt 2 ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.5; "
             "kill -INT $p; wait $p",
             dir, tb_test_bin(), port, port, dir, log);
    assert_int_equal(tb_test_sh(cmd), 3);
    tb_test_serve_down(NULL);
    n = records(dir, recs, 16);
    assert_true(n >= 3);
    for (size_t i = 1; i < n; i++) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(recs[i], "error");
        assert_true(cJSON_IsObject(e));
        if (strcmp(str(e, "kind"), "tts") == 0) {
            assert_non_null(strstr(str(e, "message"), "canceled: interrupted"));
            cut++;
        }
        assert_true(num(cJSON_GetObjectItemCaseSensitive(recs[i], "tts"), "canceled") >= 1);
    }
    assert_true(cut >= 1);
    free_all(recs, n);
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, log);
    tb_test_sh(cmd);
}

/* (e) What the command line refuses, each with one line naming it. */
static void usage_refusals(void **state)
{
    (void)state;
    tb_test_expect_error("bench --mock --tts-url mock --tts-latency 0.2", 2,
                         "bench: --tts-latency models a TTS");
    tb_test_expect_error("bench --mock --tts-url mock --tts-seed 3", 2, "--tts-seed models a TTS");
    tb_test_expect_error("bench --mock --tts-url mock --tts-rtf 2", 2, "--tts-rtf models a TTS");
    tb_test_expect_error("bench --mock --tts-voice alloy", 2, "go with --tts-url");
    tb_test_expect_error("bench --mock --tts-url mock --tts-api openai --tts-sample-rate 16000", 2,
                         "openai does not take 16000 Hz");
    tb_test_expect_error("bench --mock --tts-url mock --tts-api klingon", 2,
                         "--tts-api: 'klingon' is not");
    tb_test_expect_error("bench --base-url http://127.0.0.1:9/v1 --model m --tts-url mock", 2,
                         "--tts-url mock is the built-in mock's TTS");
    tb_test_expect_error("bench --mock --tts-url mock --audio wav:/tmp/x.wav", 2,
                         "--audio replays a stream with eSpeak NG; bench does not keep the TTS's "
                         "audio");
    /* The WebSocket dialects run in bench (ttswsbench), not on the mock. */
    tb_test_expect_error("bench --mock --tts-url mock --tts-api cartesia-ws", 2,
                         "the built-in mock speaks the HTTP dialects only; cartesia-ws needs");
    /* A URL an HTTP dialect cannot take: refused before any level runs,
     * its prefix said once; a WebSocket URL points at the -ws dialects. */
    tb_test_expect_error("bench --mock -c 1,2 --tts-url ftp://127.0.0.1:9", 2,
                         "ttsbuf: --tts-url ftp://127.0.0.1:9: scheme 'ftp' (an HTTP dialect "
                         "takes http or https)");
    tb_test_expect_error("bench --mock --tts-url mock --tts-concurrency 0", 2,
                         "bench: --tts-concurrency 0 (unlimited) is the model's; a real TTS "
                         "(--tts-url) takes 1..1024");
    tb_test_expect_error("run --mock --tts-url mock --tts-concurrency 0", 2,
                         "run: --tts-concurrency 0 (unlimited)");
    tb_test_expect_error("run --mock --tts-url ftp://127.0.0.1:9", 2,
                         "ttsbuf: --tts-url ftp://127.0.0.1:9: scheme 'ftp'");
    /* A WebSocket dialect's URL too, before any level runs. */
    tb_test_expect_error("bench --mock -c 1,2 --tts-url ftp://127.0.0.1:9 --tts-api elevenlabs-ws",
                         2, "ttsbuf: --tts-url: scheme 'ftp' (a WebSocket dialect takes ws, wss");
    tb_test_expect_error("bench --mock -c 1 --tts-url ws://127.0.0.1:99999 --tts-api cartesia-ws",
                         2, "ttsbuf: --tts-url: port '99999': from 1 to 65535");
    tb_test_expect_error("bench --mock -c 1 --tts-url ws://u:p@127.0.0.1:9 --tts-api cartesia-ws",
                         2, "credentials in the URL");
    tb_test_expect_error("bench --mock -c 1 --tts-url ws://127.0.0.1:9 --tts-api deepgram", 2,
                         "a WebSocket URL, for a WebSocket dialect (--tts-api elevenlabs-ws or "
                         "cartesia-ws)");
}

/* The built-in mock's TTS with bench --mock: measured, and said so. */
/* The records' header says the TTS was measured and which (tts_live),
 * and merge refuses a shard spoken by another TTS. */
static void header_names_the_tts(void **state)
{
    char d[2][128], args[512];
    cJSON *h[4];
    const cJSON *o, *t;
    struct tb_test_out out;
    size_t n;
    (void)state;
    for (int i = 0; i < 2; i++) {
        snprintf(d[i], sizeof(d[i]), "/tmp/ttsbuf-ttsbench-h%d-%d", i, (int)getpid());
        snprintf(args, sizeof(args),
                 "bench --mock -c 1 --requests 2 --shard %d/2 --tts-url mock --tts-api %s "
                 "--out %s -q",
                 i, i == 0 ? "openai" : "deepgram", d[i]);
        out = tb_test_run(args);
        assert_int_equal(out.code, 0);
        tb_test_out_free(&out);
    }
    snprintf(args, sizeof(args), "%s/records-0-of-2.jsonl", d[0]);
    n = jsonl(args, h, 4);
    assert_true(n >= 1);
    o = cJSON_GetObjectItemCaseSensitive(h[0], "options");
    assert_string_equal(str(o, "voice_model"), "measured");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "tts_latency_s")));
    t = cJSON_GetObjectItemCaseSensitive(o, "tts_live");
    assert_string_equal(str(t, "api"), "openai");
    assert_string_equal(str(t, "url"), "mock");
    assert_true(num(t, "sample_rate") == 24000 && num(t, "concurrency") == 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "mock")));
    free_all(h, n);
    snprintf(args, sizeof(args), "merge %s %s", d[0], d[1]);
    out = tb_test_run(args);
    if (out.code != 2 || strstr(out.se, "option tts_live") == NULL)
        fail_msg("merge of two TTS: exit %d, '%s'", out.code, out.se);
    tb_test_out_free(&out);
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof(args), "rm -rf %s", d[i]);
        tb_test_sh(args);
    }
}

/* The human header names the TTS member by member (tts_live.api=..., not
 * "tts_live=-"); "tts sent" speaks of blank chunks only when some were. */
static void human_header_reads(void **state)
{
    struct tb_test_out o = tb_test_run("bench --mock -c 1 --requests 2 --tts-url mock");
    (void)state;
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "tts_live.api=openai"));
    assert_null(strstr(o.so, "tts_live=-"));
    assert_true(strstr(o.so, "tts sent ") != NULL && strstr(o.so, "(0 blank") == NULL);
    tb_test_out_free(&o);
}

static void builtin_mock(void **state)
{
    cJSON *j;
    const cJSON *l;
    (void)state;
    j = tb_test_run_json(
        NULL, "bench --mock -c 2 --requests 2 --tts-url mock --tts-api cartesia --json", 0);
    l = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "levels"), 0);
    assert_non_null(l);
    assert_true(num(l, "ok") == 2);
    cJSON_Delete(j);
}

/* The CSV holds the JSON summary's blocks flattened (ttsbuf(1), OUTPUT):
 * tts_stats_* with a real TTS, retry_* always, each cell the summary's
 * value; a line of CSV per level, as many cells as the header. */
static void csv_has_json_blocks(void **state)
{
    char dir[256], args[600], path[300];
    struct tb_test_out o;
    cJSON *sum;
    const cJSON *lv;
    char *save = NULL, *line, *hdr[512], *row[512];
    size_t nh = 0, nr = 0;
    int rows = 0;
    (void)state;
    tb_test_tmpdir(dir, sizeof(dir), "ttsbench", "csv");
    snprintf(args, sizeof(args),
             "bench --mock -c 2 --requests 2 --tts-url mock --tts-api cartesia --out %s/o --csv",
             dir);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    snprintf(path, sizeof(path), "%s/o/summary.json", dir);
    {
        char *text = tb_test_slurp_str(path);
        sum = cJSON_Parse(text);
        free(text);
    }
    assert_non_null(sum);
    lv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sum, "levels"), 0);
    assert_non_null(lv);
    for (line = strtok_r(o.so, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char **v = rows == 0 ? hdr : row;
        size_t *n = rows == 0 ? &nh : &nr;
        *n = 0;
        /* no cell of these blocks holds a comma: split on every one */
        for (char *c = line, *e; c != NULL && *n < 512; c = e != NULL ? e + 1 : NULL) {
            e = strchr(c, ',');
            if (e != NULL)
                *e = '\0';
            v[(*n)++] = c;
        }
        rows++;
    }
    assert_int_equal(rows, 2);
    assert_int_equal(nh, nr);
    for (size_t i = 0; i < nh; i++) {
        const char *k = hdr[i];
        const cJSON *blk = NULL, *leaf;
        if (strncmp(k, "tts_stats_", 10) == 0)
            blk = cJSON_GetObjectItemCaseSensitive(lv, "tts_stats"), k += 10;
        else if (strncmp(k, "retry_", 6) == 0)
            blk = cJSON_GetObjectItemCaseSensitive(lv, "retry"), k += 6;
        else
            continue;
        leaf = cJSON_GetObjectItemCaseSensitive(blk, k);
        if (leaf == NULL) { /* a statistic's field: first_byte_s_p50 */
            const char *u = strrchr(k, '_');
            char sub[64];
            assert_non_null(u);
            snprintf(sub, sizeof(sub), "%.*s", (int)(u - k), k);
            leaf = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(blk, sub),
                                                    u + 1);
        }
        if (leaf == NULL)
            fail_msg("CSV column %s is not in the JSON summary", hdr[i]);
        if (cJSON_IsNull(leaf))
            assert_string_equal(row[i], "");
        else if (fabs(strtod(row[i], NULL) - leaf->valuedouble) >
                 1e-12 * (1 + fabs(leaf->valuedouble)))
            fail_msg("%s: CSV %s, JSON %.17g", hdr[i], row[i], leaf->valuedouble);
    }
    for (const char *want[] = {"tts_stats_sent", "tts_stats_skipped", "tts_stats_first_byte_s_p50",
                               "retry_refused", "retry_wait_s_max"},
                    **w = want;
         w < want + 5; w++) {
        size_t i = 0;
        while (i < nh && strcmp(hdr[i], *w) != 0)
            i++;
        if (i == nh)
            fail_msg("CSV lacks %s", *w);
    }
    cJSON_Delete(sum);
    tb_test_out_free(&o);
}

int tb_test_ttsbench(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(latency_and_replay_each_dialect, tb_test_serve_down),
        cmocka_unit_test_teardown(fault_fails_those_streams, tb_test_serve_down),
        cmocka_unit_test_teardown(level_stats_from_records, tb_test_serve_down),
        cmocka_unit_test_teardown(key_kept_secret, tb_test_serve_down),
        cmocka_unit_test_teardown(interrupt_cuts_speech, tb_test_serve_down),
        cmocka_unit_test_teardown(header_names_the_tts, tb_test_serve_down),
        cmocka_unit_test_teardown(usage_refusals, tb_test_serve_down),
        cmocka_unit_test_teardown(builtin_mock, tb_test_serve_down),
        cmocka_unit_test(csv_has_json_blocks),
        cmocka_unit_test(human_header_reads),
    };
    return TB_RUN_GROUP("ttsbench", tests);
}
