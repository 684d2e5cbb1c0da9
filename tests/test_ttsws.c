/*
 * test_ttsws.c - the WebSocket TTS client (ttsws.h) against a third-party
 * WebSocket server: tests/node/tts-ws-peer.mjs on the npm `ws` package,
 * speaking ElevenLabs' stream-input and Cartesia's contexts protocols on
 * 127.0.0.1, with a synthetic tone 40 ms after each chunk.  Each dialect:
 * the messages sent (field by field), the audio attributed to its chunk
 * by the protocol's markers, the measured first byte against the peer's
 * schedule, the key only in its handshake header; and the faults: an
 * upgrade refused with 401, a binary frame, a frame that is not JSON, the
 * provider's error in the stream, the connection closed mid-audio.
 * Skipped, saying so, only when node is not installed (CI has it).
 */
#include <cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsws.h"
#include "ttsbuf/utf8.h"

#define KEY "sk-ttsws-test-Zq81xPL0secret"
#define LAT 0.040 /* the peer's first-byte delay */
#define MSG_BYTES 1600

struct peer {
    pid_t pid;
    int port;
    char log[128], base[64];
};

static struct peer P;

static void peer_start(const char *dialect, const char *mode)
{
    const char *dir = getenv("TB_NODEDIR") != NULL ? getenv("TB_NODEDIR") : "tests/node";
    char js[512], ws[512], portfile[160];
    snprintf(js, sizeof(js), "%s/tts-ws-peer.mjs", dir);
    snprintf(ws, sizeof(ws), "%s/node_modules/ws/package.json", dir);
    if (access(ws, R_OK) != 0)
        fail_msg("the npm ws package is missing in %s/node_modules: run `make deps`", dir);
    snprintf(P.log, sizeof(P.log), "/tmp/ttsbuf-ttsws-%d.log", (int)getpid());
    unlink(P.log);
    snprintf(portfile, sizeof(portfile), "%s.port", P.log);
    unlink(portfile);
    P.pid = fork();
    assert_true(P.pid >= 0);
    if (P.pid == 0) {
        setenv("PEER_KEY", KEY, 1);
        execlp("node", "node", js, "0", dialect, mode, P.log, (char *)NULL);
        _exit(127);
    }
    /* The peer's own port, not one freed a moment ago for it: with groups
     * side by side another group could take that one first. */
    P.port = tb_test_port_file(portfile);
    unlink(portfile);
    snprintf(P.base, sizeof(P.base), "ws://127.0.0.1:%d", P.port);
}

static int peer_stop(void **state)
{
    (void)state;
    if (P.pid > 0) {
        kill(P.pid, SIGTERM);
        waitpid(P.pid, NULL, 0);
        P.pid = 0;
        unlink(P.log);
    }
    return 0;
}

static int have_node(void)
{
    if (tb_test_sh("command -v node >/dev/null 2>&1") != 0) {
        print_message("    node is not installed: the WebSocket peer tests are skipped\n");
        return 0;
    }
    return 1;
}

/* The peer's log, one JSON value per line, as an array. */
static cJSON *peer_log(void)
{
    char *s = tb_test_slurp_str(P.log), *line, *save = NULL;
    cJSON *a = cJSON_CreateArray();
    for (line = strtok_r(s, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        if (j == NULL)
            fail_msg("peer log line is not JSON: '%s'", line);
        cJSON_AddItemToArray(a, j);
    }
    free(s);
    return a;
}

struct seen {
    size_t audio_bytes;
    int ends;
};

static int on_audio(void *ud, uint32_t j, const char *pcm, size_t n, double t)
{
    struct seen *s = ud;
    (void)j;
    (void)pcm;
    (void)t;
    assert_true(n % 2 == 0);
    s->audio_bytes += n;
    return 0;
}

static void on_end(void *ud, uint32_t j, const struct tb_tts_chunk *c)
{
    struct seen *s = ud;
    (void)j;
    (void)c;
    s->ends++;
}

static const char *const TEXTS[] = {"Hello there. ", "How are you today? ", "Fine, thanks."};
#define NTEXT 3

/* Runs the client over TEXTS (or the first `n`) and returns its log. */
static void run_client(int api, size_t n, struct tb_tts_log *out, struct seen *seen)
{
    struct tb_ttsnet_opts o;
    struct tb_ttsws *c = NULL;
    char err[256] = "";
    tb_ttsnet_opts_init(&o);
    o.url = P.base;
    o.key = KEY;
    o.idle_timeout = 5;
    o.on_audio = on_audio;
    o.on_end = on_end;
    o.ud = seen;
    if (tb_ttsws_create(api, &o, &c, err, sizeof(err)) != 0)
        fail_msg("create: %s", err);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(tb_ttsws_submit(c, TEXTS[i], strlen(TEXTS[i])), 0);
        assert_true(tb_ttsws_step(c, 0) >= 0);
    }
    assert_int_equal(tb_ttsws_finish(c, tb_ttsws_log(c)->n > 0 ? 1e9 : 0), 0);
    tb_ttsws_take_log(c, out);
    tb_ttsws_destroy(c);
}

/* No record's message, url or text holds the key. */
static void no_key(const struct tb_tts_log *l)
{
    assert_null(strstr(l->url, KEY));
    for (size_t i = 0; i < l->n; i++)
        assert_null(strstr(l->c[i].message, KEY));
}

static void check_ok(const struct tb_tts_log *l, const struct seen *s, const char *api)
{
    assert_string_equal(l->api, api);
    assert_int_equal(l->n, NTEXT);
    assert_int_equal(s->ends, NTEXT);
    assert_int_equal(s->audio_bytes, NTEXT * 2 * MSG_BYTES);
    for (size_t i = 0; i < l->n; i++) {
        const struct tb_tts_chunk *r = &l->c[i];
        double lat = r->first_byte - r->sent;
        if (r->fail != TB_TTS_OK)
            fail_msg("chunk %zu: %s: %s", i + 1, tb_tts_fail_name(r->fail), r->message);
        assert_int_equal(r->bytes, 2 * MSG_BYTES);
        assert_true(r->rate == 24000);
        assert_true(fabs(r->duration - 2.0 * MSG_BYTES / 2 / 24000) < 1e-9);
        /* The peer answers LAT after the text (node's timers are late,
         * never early, but a loaded machine is slow). */
        if (!(lat >= LAT - 0.002 && lat < LAT + 0.5))
            fail_msg("chunk %zu: first byte %.4f s after sent, the peer's schedule %.3f s", i + 1,
                     lat, LAT);
        /* The end after the first byte; not by the peer's 10 ms between
         * its two messages: a loaded machine can read both at once. */
        assert_true(r->end >= r->first_byte);
        assert_true(r->narr >= 1);
        /* In order, one at a time: chunk j after chunk j-1 ended. */
        if (i > 0)
            assert_true(r->sent >= l->c[i - 1].end);
    }
    no_key(l);
}

static void elevenlabs_stream_input(void **state)
{
    struct tb_tts_log l;
    struct seen s = {0, 0};
    cJSON *log, *e;
    int texts = 0, end = 0, first = 0;
    (void)state;
    if (!have_node())
        skip();
    peer_start("elevenlabs", "ok");
    run_client(TB_TTSWS_ELEVENLABS, NTEXT, &l, &s);
    check_ok(&l, &s, "elevenlabs-ws");
    assert_non_null(strstr(l.url, "/v1/text-to-speech/"));
    assert_non_null(strstr(l.url, "/stream-input?model_id="));
    assert_non_null(strstr(l.url, "output_format=pcm_24000"));
    assert_non_null(strstr(l.url, "inactivity_timeout=180"));
    log = peer_log();
    e = cJSON_GetArrayItem(log, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "key_ok")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(e, "key_in_url")));
    cJSON_ArrayForEach(e, log)
    {
        const cJSON *m = cJSON_GetObjectItem(e, "msg");
        const char *t;
        assert_null(cJSON_GetObjectItem(e, "key_in_message"));
        assert_null(cJSON_GetObjectItem(e, "bad"));
        if (m == NULL)
            continue;
        t = cJSON_GetObjectItem(m, "text")->valuestring;
        if (strcmp(t, " ") == 0) {
            assert_int_equal(texts, 0); /* the opening message comes first */
            first = 1;
        } else if (t[0] == '\0') {
            end = 1;
        } else {
            size_t k = strlen(t);
            assert_true(first && !end);
            assert_true(k > 0 && t[k - 1] == ' '); /* ends with a space */
            assert_true(cJSON_IsTrue(cJSON_GetObjectItem(m, "flush")));
            assert_int_equal(strncmp(t, TEXTS[texts], strlen(TEXTS[texts]) - 1), 0);
            texts++;
        }
    }
    assert_int_equal(texts, NTEXT);
    assert_true(end);
    cJSON_Delete(log);
    tb_tts_log_free(&l);
}

static void cartesia_contexts(void **state)
{
    struct tb_tts_log l;
    struct seen s = {0, 0};
    cJSON *log, *e;
    int texts = 0, flushes = 0, last = 0;
    char ctx[64] = "";
    (void)state;
    if (!have_node())
        skip();
    peer_start("cartesia", "ok");
    run_client(TB_TTSWS_CARTESIA, NTEXT, &l, &s);
    check_ok(&l, &s, "cartesia-ws");
    assert_non_null(strstr(l.url, "/tts/websocket?cartesia_version="));
    log = peer_log();
    e = cJSON_GetArrayItem(log, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "key_ok")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(e, "key_in_url")));
    assert_true(cJSON_IsString(cJSON_GetObjectItem(e, "version")));
    cJSON_ArrayForEach(e, log)
    {
        const cJSON *m = cJSON_GetObjectItem(e, "msg"), *f;
        const char *t, *id;
        assert_null(cJSON_GetObjectItem(e, "key_in_message"));
        if (m == NULL)
            continue;
        t = cJSON_GetObjectItem(m, "transcript")->valuestring;
        id = cJSON_GetObjectItem(m, "context_id")->valuestring;
        if (ctx[0] == '\0')
            snprintf(ctx, sizeof(ctx), "%s", id);
        assert_string_equal(id, ctx); /* one context per stream */
        f = cJSON_GetObjectItem(m, "output_format");
        assert_string_equal(cJSON_GetObjectItem(f, "container")->valuestring, "raw");
        assert_string_equal(cJSON_GetObjectItem(f, "encoding")->valuestring, "pcm_s16le");
        assert_int_equal(cJSON_GetObjectItem(f, "sample_rate")->valueint, 24000);
        assert_string_equal(
            cJSON_GetObjectItem(cJSON_GetObjectItem(m, "voice"), "mode")->valuestring, "id");
        assert_false(last);
        if (cJSON_IsFalse(cJSON_GetObjectItem(m, "continue"))) {
            assert_string_equal(t, "");
            last = 1;
        } else if (cJSON_IsTrue(cJSON_GetObjectItem(m, "flush"))) {
            assert_string_equal(t, "");
            flushes++;
            assert_int_equal(flushes, texts);
        } else {
            assert_true(cJSON_IsTrue(cJSON_GetObjectItem(m, "continue")));
            assert_string_equal(t, TEXTS[texts]);
            texts++;
        }
    }
    assert_int_equal(texts, NTEXT);
    assert_int_equal(flushes, NTEXT);
    assert_true(last);
    cJSON_Delete(log);
    tb_tts_log_free(&l);
}

/* One fault: chunk 1 ends `kind` with `word` in its message, the rest
 * canceled. */
static void fault(int api, const char *dialect, const char *mode, int kind, long status,
                  const char *word)
{
    struct tb_tts_log l;
    struct seen s = {0, 0};
    peer_start(dialect, mode);
    run_client(api, 2, &l, &s);
    assert_int_equal(l.n, 2);
    if (l.c[0].fail != kind || strstr(l.c[0].message, word) == NULL)
        fail_msg("%s %s: chunk 1 ended %s (%s), not %s with '%s'", dialect, mode,
                 tb_tts_fail_name(l.c[0].fail), l.c[0].message, tb_tts_fail_name(kind), word);
    if (status != 0)
        assert_int_equal(l.c[0].status, status);
    /* Sent means written: a refused upgrade wrote nothing (no sent, no
     * end, as a chunk never sent); any other fault came after the text. */
    if (strcmp(mode, "refuse") == 0) {
        assert_true(isnan(l.c[0].sent) && isnan(l.c[0].end));
        assert_non_null(strstr(l.c[0].message, "before this chunk was sent"));
    } else {
        assert_false(isnan(l.c[0].sent) || isnan(l.c[0].end));
    }
    assert_int_equal(l.c[1].fail, TB_TTS_CANCELED);
    assert_int_equal(s.ends, 2);
    no_key(&l);
    tb_tts_log_free(&l);
    peer_stop(NULL);
}

static void faults(void **state)
{
    (void)state;
    if (!have_node())
        skip();
    fault(TB_TTSWS_ELEVENLABS, "elevenlabs", "refuse", TB_TTS_HTTP, 401, "401");
    fault(TB_TTSWS_CARTESIA, "cartesia", "refuse", TB_TTS_HTTP, 401, "401");
    fault(TB_TTSWS_ELEVENLABS, "elevenlabs", "binary", TB_TTS_FORMAT, 0, "binary frame");
    fault(TB_TTSWS_CARTESIA, "cartesia", "badjson", TB_TTS_FORMAT, 0, "not a JSON object");
    fault(TB_TTSWS_ELEVENLABS, "elevenlabs", "error", TB_TTS_HTTP, 0, "voice_not_found");
    fault(TB_TTSWS_CARTESIA, "cartesia", "error", TB_TTS_HTTP, 404, "voice not found");
    fault(TB_TTSWS_ELEVENLABS, "elevenlabs", "cut", TB_TTS_CUT, 0, "closed mid-audio");
    fault(TB_TTSWS_CARTESIA, "cartesia", "cut", TB_TTS_CUT, 0, "closed mid-audio");
}

/* The provider closed the connection between chunks (ElevenLabs does
 * after its inactivity timeout): chunk 1 complete, chunk 2, submitted
 * later, ends "transport" saying the connection had closed, with its
 * close code and reason. */
static void closed_between_chunks(void **state)
{
    static const char *const d[] = {"elevenlabs", "cartesia"};
    (void)state;
    if (!have_node())
        skip();
    for (int api = 0; api < 2; api++) {
        struct tb_ttsnet_opts o;
        struct tb_ttsws *c = NULL;
        struct tb_tts_log l;
        char err[256];
        peer_start(d[api], "close");
        tb_ttsnet_opts_init(&o);
        o.url = P.base;
        o.key = KEY;
        o.idle_timeout = 5;
        assert_int_equal(tb_ttsws_create(api, &o, &c, err, sizeof(err)), 0);
        assert_int_equal(tb_ttsws_submit(c, TEXTS[0], strlen(TEXTS[0])), 0);
        for (int k = 0; k < 200 && tb_ttsws_step(c, 10) > 0; k++)
            ;
        assert_int_equal(tb_ttsws_log(c)->c[0].fail, TB_TTS_OK);
        for (int k = 0; k < 20; k++) /* 200 ms: the close comes at 20 */
            tb_ttsws_step(c, 10);
        assert_int_equal(tb_ttsws_submit(c, TEXTS[1], strlen(TEXTS[1])), 0);
        assert_int_equal(tb_ttsws_finish(c, 1e9), 0);
        tb_ttsws_take_log(c, &l);
        tb_ttsws_destroy(c);
        if (l.c[1].fail != TB_TTS_TRANSPORT || strstr(l.c[1].message, "had closed") == NULL ||
            strstr(l.c[1].message, "1000: inactivity") == NULL)
            fail_msg("%s: chunk 2 ended %s (%s)", d[api], tb_tts_fail_name(l.c[1].fail),
                     l.c[1].message);
        tb_tts_log_free(&l);
        peer_stop(NULL);
    }
}

/* Nobody listening: "transport"; bad options: TB_EINVAL with a reason. */
static void no_server_and_bad_options(void **state)
{
    struct tb_ttsnet_opts o;
    struct tb_ttsws *c = NULL;
    struct tb_tts_log l;
    char err[256], url[64];
    (void)state;
    tb_ttsnet_opts_init(&o);
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d", tb_test_refused_port());
    o.url = url;
    o.key = KEY;
    assert_int_equal(tb_ttsws_create(TB_TTSWS_CARTESIA, &o, &c, err, sizeof(err)), 0);
    assert_int_equal(tb_ttsws_submit(c, "Hi.", 3), 0);
    assert_int_equal(tb_ttsws_finish(c, 1e9), 0);
    tb_ttsws_take_log(c, &l);
    tb_ttsws_destroy(c);
    if (l.c[0].fail != TB_TTS_TRANSPORT)
        fail_msg("refused: %s (%s)", tb_tts_fail_name(l.c[0].fail), l.c[0].message);
    no_key(&l);
    tb_tts_log_free(&l);

    o.url = "ftp://example.com";
    assert_int_equal(tb_ttsws_create(TB_TTSWS_ELEVENLABS, &o, &c, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "scheme"));
    o.url = "wss://user:" KEY "@example.com";
    assert_int_equal(tb_ttsws_create(TB_TTSWS_ELEVENLABS, &o, &c, err, sizeof(err)), TB_EINVAL);
    assert_null(strstr(err, KEY));
    o.url = url;
    o.rate = 11025;
    assert_int_equal(tb_ttsws_create(TB_TTSWS_CARTESIA, &o, &c, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, "11025"));
    assert_int_equal(tb_ttsws_parse("elevenlabs-ws"), TB_TTSWS_ELEVENLABS);
    assert_int_equal(tb_ttsws_parse("cartesia-ws"), TB_TTSWS_CARTESIA);
    assert_int_equal(tb_ttsws_parse("cartesia"), -1);
}

/* wss:// to a plain ws:// server: the TLS handshake failed, said so
 * (not OpenSSL's "error:00000001:lib(0)::reason(1)"); a client of the
 * wrong dialect fails "format" at the peer's first message, not after
 * the idle timeout. */
static void tls_to_plain_and_wrong_dialect(void **state)
{
    struct tb_ttsnet_opts o;
    struct tb_ttsws *c = NULL;
    const struct tb_tts_chunk *r;
    char err[256], url[96];
    (void)state;
    if (!have_node())
        skip();
    peer_start("cartesia", "ok");
    tb_ttsnet_opts_init(&o);
    snprintf(url, sizeof(url), "wss://127.0.0.1:%d", P.port);
    o.url = url;
    o.key = KEY;
    o.idle_timeout = 15;
    assert_int_equal(tb_ttsws_create(TB_TTSWS_CARTESIA, &o, &c, err, sizeof(err)), 0);
    assert_int_equal(tb_ttsws_submit(c, TEXTS[0], strlen(TEXTS[0])), 0);
    assert_int_equal(tb_ttsws_finish(c, 1e9), 0);
    r = &tb_ttsws_log(c)->c[0];
    if (r->fail != TB_TTS_TRANSPORT ||
        strstr(r->message, "TLS handshake failed (is the server plain ws://?)") == NULL ||
        strstr(r->message, "lib(0)") != NULL)
        fail_msg("wss to ws: %s (%s)", tb_tts_fail_name(r->fail), r->message);
    tb_ttsws_destroy(c);

    o.url = P.base;
    assert_int_equal(tb_ttsws_create(TB_TTSWS_ELEVENLABS, &o, &c, err, sizeof(err)), 0);
    assert_int_equal(tb_ttsws_submit(c, TEXTS[0], strlen(TEXTS[0])), 0);
    assert_int_equal(tb_ttsws_finish(c, 1e9), 0);
    r = &tb_ttsws_log(c)->c[0];
    if (r->fail != TB_TTS_FORMAT ||
        strstr(r->message, "not in ElevenLabs' stream-input format") == NULL ||
        !(r->end - r->sent < 5))
        fail_msg("elevenlabs-ws at a Cartesia peer: %s after %.1f s (%s)",
                 tb_tts_fail_name(r->fail), r->end - r->sent, r->message);
    tb_ttsws_destroy(c);
}

/* Every key of sim's JSON report equals run's, but those that say where
 * the stream came from. */
static void same_report(const cJSON *run, const cJSON *sim)
{
    static const char *const skip[] = {"started_at", "command", "source", "source_name"};
    const cJSON *k;
    size_t checked = 0;
    cJSON_ArrayForEach(k, sim)
    {
        int skipped = 0;
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(run, k->string);
        for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
            skipped |= strcmp(k->string, skip[i]) == 0;
        if (skipped)
            continue;
        if (r == NULL || !cJSON_Compare(r, k, 1))
            fail_msg("run and sim --trace of its recording differ at %s", k->string);
        checked++;
    }
    assert_true(checked > 20);
}

/* `ttsbuf run --tts-api elevenlabs-ws|cartesia-ws --tts-url ws://...`
 * against the peer: measured, recorded with the dialect's name, the key
 * only in its header and nowhere in the outputs, and replayed by
 * `sim --trace` to the same report; `--tts-url mock` is refused. */
static void run_records_and_sim_replays(void **state)
{
    static const char *const d[][2] = {{"elevenlabs", "elevenlabs-ws"},
                                       {"cartesia", "cartesia-ws"}};
    char kf[128], path[128], args[1024];
    FILE *f;
    (void)state;
    if (!have_node())
        skip();
    snprintf(kf, sizeof(kf), "/tmp/ttsbuf-ttsws-key-%d", (int)getpid());
    snprintf(path, sizeof(path), "/tmp/ttsbuf-ttsws-%d.jsonl", (int)getpid());
    f = fopen(kf, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", KEY);
    fclose(f);
    for (size_t i = 0; i < 2; i++) {
        struct tb_test_out o;
        cJSON *run, *sim, *log, *e, *st;
        char *trace, *line, *save = NULL;
        int lines = 0, header = 0;
        peer_start(d[i][0], "ok");
        snprintf(args, sizeof(args),
                 "run --mock --synth tps=40,ttft=0.2,tokens=40,seed=3 --tts-url %s --tts-api %s "
                 "--tts-api-key-file %s --json --record %s -v",
                 P.base, d[i][1], kf, path);
        o = tb_test_run(args);
        if (o.code != 0)
            fail_msg("%s: exit %d: %s", d[i][1], o.code, o.se);
        assert_null(strstr(o.so, KEY));
        assert_null(strstr(o.se, KEY));
        run = cJSON_Parse(o.so);
        assert_non_null(run);
        tb_test_out_free(&o);
        assert_string_equal(cJSON_GetObjectItem(run, "tts_source")->valuestring, "measured");
        st = cJSON_GetObjectItem(run, "tts_stats");
        assert_non_null(st);
        assert_true(cJSON_GetObjectItem(st, "chunks")->valuedouble >= 3);
        assert_true(cJSON_GetObjectItem(st, "failed")->valuedouble == 0);
        trace = tb_test_slurp_str(path);
        assert_null(strstr(trace, KEY));
        for (line = strtok_r(trace, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
            cJSON *j = cJSON_Parse(line), *t = cJSON_GetObjectItem(j, "tts");
            if (t != NULL && cJSON_GetObjectItem(t, "api") != NULL) {
                assert_string_equal(cJSON_GetObjectItem(t, "api")->valuestring, d[i][1]);
                header++;
            } else if (t != NULL && cJSON_GetObjectItem(t, "chunk") != NULL) {
                assert_string_equal(cJSON_GetObjectItem(t, "fail")->valuestring, "none");
                lines++;
            }
            cJSON_Delete(j);
        }
        free(trace);
        assert_int_equal(header, 1);
        assert_true(lines >= 3);
        log = peer_log();
        e = cJSON_GetArrayItem(log, 0);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "key_ok")));
        cJSON_Delete(log);
        snprintf(args, sizeof(args), "sim --trace %s --json", path);
        sim = tb_test_run_json(NULL, args, 0);
        same_report(run, sim);
        cJSON_Delete(run);
        cJSON_Delete(sim);
        peer_stop(NULL);
        /* the built-in mock does not speak it: a usage error naming why */
        snprintf(args, sizeof(args), "run --mock --tts-url mock --tts-api %s", d[i][1]);
        o = tb_test_run(args);
        assert_int_equal(o.code, 2);
        assert_non_null(strstr(o.se, "HTTP dialects only"));
        tb_test_out_free(&o);
    }
    unlink(kf);
    unlink(path);
}

/* A key file for the CLI cases (path into kf). */
static void key_file(char *kf, size_t len)
{
    FILE *f;
    snprintf(kf, len, "/tmp/ttsbuf-ttsws-key-%d", (int)getpid());
    f = fopen(kf, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", KEY);
    fclose(f);
}

/* The messages of the peer's log with "flush": true (Cartesia) or a text
 * to speak (ElevenLabs: not the opening space, not the end): the chunks
 * the server received. */
static int peer_chunks(int cartesia)
{
    cJSON *log = peer_log(), *e;
    int n = 0;
    cJSON_ArrayForEach(e, log)
    {
        const cJSON *m = cJSON_GetObjectItem(e, "msg");
        const cJSON *t = m != NULL ? cJSON_GetObjectItem(m, "text") : NULL;
        if (m == NULL)
            continue;
        if (cartesia)
            n += cJSON_IsTrue(cJSON_GetObjectItem(m, "flush"));
        else
            n += cJSON_IsString(t) && strcmp(t->valuestring, " ") != 0 && t->valuestring[0] != '\0';
    }
    cJSON_Delete(log);
    return n;
}

/* `run --mock` (the built-in answer: paragraph breaks make blank chunks)
 * in both dialects: complete, the blank chunks skipped and counted apart,
 * "sent" what the server received. */
static void blank_chunks_are_skipped(void **state)
{
    static const char *const d[][2] = {{"elevenlabs", "elevenlabs-ws"},
                                       {"cartesia", "cartesia-ws"}};
    char kf[128], args[512];
    (void)state;
    if (!have_node())
        skip();
    key_file(kf, sizeof(kf));
    for (int i = 0; i < 2; i++) {
        struct tb_test_out o;
        cJSON *run, *st;
        int sent, skipped;
        peer_start(d[i][0], "ok");
        snprintf(args, sizeof(args), "run --mock --tts-url %s --tts-api %s --tts-api-key-file %s",
                 P.base, d[i][1], kf);
        o = tb_test_run(args);
        if (o.code != 0 || strstr(o.so, " blank, skipped)") == NULL)
            fail_msg("%s: exit %d, stdout '%s', stderr '%s'", d[i][1], o.code, o.so, o.se);
        tb_test_out_free(&o);
        snprintf(args, sizeof(args),
                 "run --mock --tts-url %s --tts-api %s --tts-api-key-file %s --json", P.base,
                 d[i][1], kf);
        run = tb_test_run_json(NULL, args, 0);
        st = cJSON_GetObjectItem(run, "tts_stats");
        sent = cJSON_GetObjectItem(st, "sent")->valueint;
        skipped = cJSON_GetObjectItem(st, "skipped")->valueint;
        /* The same answer twice: the server received twice what each sent. */
        if (skipped < 1 || sent + skipped != cJSON_GetObjectItem(st, "chunks")->valueint ||
            2 * sent != peer_chunks(i == 1))
            fail_msg("%s: %d sent, %d skipped of %d chunks; the server received %d in two runs",
                     d[i][1], sent, skipped, cJSON_GetObjectItem(st, "chunks")->valueint,
                     peer_chunks(i == 1));
        cJSON_Delete(run);
        peer_stop(NULL);
    }
    unlink(kf);
}

/* A peer that breaks the protocol, in each dialect: the run ends at the
 * chunk it hit with the kind and the words, exit 3 (never 2), every
 * output valid UTF-8, and `sim --trace` of the recording says the same. */
static const struct {
    const char *mode, *kind;
    unsigned chunk;
    const char *msg[2]; /* ElevenLabs', Cartesia's */
} hostile[] = {
    {"empty", "format", 1, {"no audio for a chunk of", "no audio for a chunk of"}},
    {"flood", "format", 1, {"audio with no chunk in flight", "audio with no chunk in flight"}},
    {"trailing",
     "format",
     2,
     {"audio with no chunk in flight (after chunk 1's end)",
      "a chunk message for chunk 1 (flush_id 1) after its end"}},
    {"badutf8", "http", 2, {"voice ??? not found", "voice ??? not found"}},
};

static void hostile_peers(void **state)
{
    static const char *const d[][2] = {{"elevenlabs", "elevenlabs-ws"},
                                       {"cartesia", "cartesia-ws"}};
    char kf[128], rec[128], args[768], want[96];
    (void)state;
    if (!have_node())
        skip();
    key_file(kf, sizeof(kf));
    snprintf(rec, sizeof(rec), "/tmp/ttsbuf-ttsws-h-%d.jsonl", (int)getpid());
    for (size_t h = 0; h < sizeof(hostile) / sizeof(hostile[0]); h++) {
        for (int i = 0; i < 2; i++) {
            struct tb_test_out o;
            const char *line;
            char *text;
            size_t len;
            cJSON *root, *end;
            peer_start(d[i][0], hostile[h].mode);
            snprintf(args, sizeof(args),
                     "run --mock --synth tps=40,ttft=0.2,tokens=40,seed=3 --tts-url %s "
                     "--tts-api %s --tts-api-key-file %s --json --record %s",
                     P.base, d[i][1], kf, rec);
            o = tb_test_run(args);
            peer_stop(NULL);
            snprintf(want, sizeof(want), "the speech ended at chunk %u: tts %s", hostile[h].chunk,
                     hostile[h].kind);
            line = strstr(o.se, want);
            if (o.code != 3 || line == NULL || strstr(line, hostile[h].msg[i]) == NULL)
                fail_msg("%s %s: exit %d, stderr '%s' (want '%s ... %s')", d[i][1], hostile[h].mode,
                         o.code, o.se, want, hostile[h].msg[i]);
            /* Every output valid UTF-8: the peer's bytes were replaced. */
            assert_int_equal(tb_utf8_check(o.so, strlen(o.so)), strlen(o.so));
            assert_int_equal(tb_utf8_check(o.se, strlen(o.se)), strlen(o.se));
            root = cJSON_Parse(o.so);
            end = cJSON_GetObjectItem(root, "tts_end");
            if (!cJSON_IsObject(end) ||
                strcmp(cJSON_GetObjectItem(end, "kind")->valuestring, hostile[h].kind) != 0)
                fail_msg("%s %s: tts_end in '%.300s'", d[i][1], hostile[h].mode, o.so);
            cJSON_Delete(root);
            text = tb_test_slurp_text(rec, &len);
            assert_int_equal(tb_utf8_check(text, len), len);
            assert_null(strstr(text, KEY));
            free(text);
            tb_test_out_free(&o);
            /* The recording replays to the same end. */
            snprintf(args, sizeof(args), "sim --trace %s --json", rec);
            o = tb_test_run(args);
            line = strstr(o.se, want);
            if (o.code != 3 || line == NULL || strstr(line, hostile[h].msg[i]) == NULL)
                fail_msg("%s %s: sim --trace: exit %d, stderr '%s'", d[i][1], hostile[h].mode,
                         o.code, o.se);
            tb_test_out_free(&o);
        }
    }
    unlink(rec);
    unlink(kf);
}

int tb_test_ttsws(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(elevenlabs_stream_input, peer_stop),
        cmocka_unit_test_teardown(cartesia_contexts, peer_stop),
        cmocka_unit_test_teardown(faults, peer_stop),
        cmocka_unit_test_teardown(closed_between_chunks, peer_stop),
        cmocka_unit_test(no_server_and_bad_options),
        cmocka_unit_test_teardown(tls_to_plain_and_wrong_dialect, peer_stop),
        cmocka_unit_test_teardown(run_records_and_sim_replays, peer_stop),
        cmocka_unit_test_teardown(blank_chunks_are_skipped, peer_stop),
        cmocka_unit_test_teardown(hostile_peers, peer_stop),
    };
    return TB_RUN_GROUP("ttsws", tests);
}
