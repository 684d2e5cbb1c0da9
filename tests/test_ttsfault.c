/*
 * test_ttsfault.c - the fault matrix's TTS side, end to end: `ttsbuf run
 * --mock --tts-url` against a TTS that fails, in every dialect.  Two
 * tables:
 *   mock rows    the mock TTS of `ttsbuf serve` with a --tts-fault (or
 *                nothing listening): the first chunk's request fails;
 *   peer rows    a scripted TTS (tcp_peer.h) that speaks two chunks
 *                (PCM, Content-Length, Connection: close) and fails the
 *                third: an error in the dialect's shape, a body cut or
 *                reset, a stall, an HTML page, an odd byte count, no
 *                byte at all, compressed audio (audio/mpeg, audio/ogg)
 *                of an even length, a WAV that is not mono 16-bit PCM.
 * Each must end the speech at that chunk: exit 3, one line on stderr
 * ("the speech ended at chunk J: tts KIND (HTTP N): message", the
 * provider's message in it, and the TTS with its URL), the JSON report's
 * tts_end, a trace that keeps every TTS record up to the failure, and
 * `sim --trace` of that trace saying the same.  A TTS that fails the
 * first chunk (or refuses) is dead: the LLM stream is stopped within a
 * second of the failure by the trace's own times, the line says so; a
 * TTS that fails the third lets every LLM event come.  And a third table, secrets: a
 * TTS that quotes the key back (in headers and a 401 body, every way
 * secret_scan.h knows), with the key from the dialect's variable or
 * --tts-api-key-file: no output of run or of sim of its recording holds
 * it.
 */
#define _DEFAULT_SOURCE
#include <cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "secret_scan.h"
#include "tcp_peer.h"
#include "tests.h"

static const char *const dialects[] = {"openai", "elevenlabs", "deepgram", "cartesia"};
static const char *const keyvars[] = {"OPENAI_API_KEY", "ELEVENLABS_API_KEY", "DEEPGRAM_API_KEY",
                                      "CARTESIA_API_KEY"};
#define NDIALECTS (sizeof(dialects) / sizeof(dialects[0]))

/* An answer of about 2 s of tokens: six sentences, so six chunks. */
#define ANSWER "--synth tps=40,ttft=0.2,tokens=80,seed=3"
#define ANSWER_EVENTS 80

#define KEY "sk-ttsbuf-TTSFAULT-4d7e91c0b2"

/* ---- the scripted TTS ---- */

/* The case's dialect, set before the peer's thread starts (which then
 * only reads it). */
static size_t cur_dialect;

/* An error body in the dialect's documented shape, message msg. */
static void error_body(char *out, size_t len, const char *msg)
{
    switch (cur_dialect) {
    case 0:
        snprintf(out, len,
                 "{\"error\":{\"message\":\"%s\",\"type\":\"server_error\",\"param\":null,"
                 "\"code\":null}}",
                 msg);
        break;
    case 1:
        snprintf(out, len, "{\"detail\":{\"status\":\"server_error\",\"message\":\"%s\"}}", msg);
        break;
    case 2:
        snprintf(out, len,
                 "{\"err_code\":\"INTERNAL\",\"err_msg\":\"%s\",\"request_id\":"
                 "\"00000000-0000-4000-8000-000000000001\"}",
                 msg);
        break;
    default:
        snprintf(out, len,
                 "{\"error_code\":\"internal\",\"title\":\"Internal Server Error\","
                 "\"message\":\"%s\",\"request_id\":\"00000000-0000-4000-8000-000000000001\"}",
                 msg);
        break;
    }
}

static void send_status(int fd, int status, const char *reason, const char *ctype,
                        const char *extra, const char *body)
{
    char head[1024];
    snprintf(head, sizeof(head),
             "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%sContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n",
             status, reason, ctype, extra, strlen(body));
    if (peer_send_str(fd, head) == 0)
        peer_send_str(fd, body);
}

/* 200 with audio/pcm: a head announcing len bytes, then sent of them
 * (silence). */
static int send_pcm(int fd, size_t len, size_t sent)
{
    static const char zeros[4096];
    char head[256];
    snprintf(head, sizeof(head),
             "HTTP/1.1 200 OK\r\nContent-Type: audio/pcm\r\nContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n",
             len);
    if (peer_send_str(fd, head) != 0)
        return -1;
    while (sent > 0) {
        size_t n = sent < sizeof(zeros) ? sent : sizeof(zeros);
        if (peer_send(fd, zeros, n) != 0)
            return -1;
        sent -= n;
    }
    return 0;
}

/* Connections 0 and 1 speak 0.2 s at 24000 Hz; connection 2 fails as
 * pe->script says; later ones (none should come) are refused with 500. */
static void s_third_fails(struct peer *pe, int fd, int conn)
{
    char body[512];
    const char *how = pe->script;
    if (conn < 2) {
        send_pcm(fd, 9600, 9600);
        return;
    }
    if (conn > 2 || strcmp(how, "status") == 0) {
        error_body(body, sizeof(body), "the synthesizer fell over at the third chunk");
        send_status(fd, 500, "Internal Server Error", "application/json", "", body);
    } else if (strcmp(how, "cut") == 0) {
        send_pcm(fd, 9600, 3200);
    } else if (strcmp(how, "reset") == 0) {
        struct linger lg = {1, 0};
        send_pcm(fd, 9600, 3200);
        usleep(50000);
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)); /* close sends RST */
    } else if (strcmp(how, "stall") == 0) {
        peer_hold(pe, fd);
    } else if (strcmp(how, "html") == 0) {
        send_status(fd, 200, "OK", "text/html", "", "<html><body>Service paused</body></html>");
    } else if (strcmp(how, "odd") == 0) {
        send_pcm(fd, 9601, 9601);
    } else if (strcmp(how, "empty") == 0) {
        send_pcm(fd, 0, 0); /* 200 audio/pcm, no byte: silence is no speech */
    } else if (strcmp(how, "mpeg") == 0 || strcmp(how, "ogg") == 0) {
        /* An even byte count of compressed audio: not PCM, whatever its length. */
        static const char frame[] = "\xFF\xFB\x90\x64ID3\x04OggS"; /* 12 bytes, no NUL */
        char b[4096];
        size_t k;
        for (k = 0; k + sizeof(frame) - 1 <= sizeof(b); k += sizeof(frame) - 1)
            memcpy(b + k, frame, sizeof(frame) - 1);
        b[k] = '\0';
        send_status(fd, 200, "OK", strcmp(how, "mpeg") == 0 ? "audio/mpeg" : "audio/ogg", "", b);
    } else if (strcmp(how, "wav8") == 0) {
        /* A WAV header saying 8-bit stereo at 44100 Hz. */
        static const unsigned char h[44] = {
            'R', 'I', 'F', 'F', 0xFF, 0xFF, 0xFF, 0xFF, 'W', 'A',  'V',  'E',  'f',  'm',  't',
            ' ', 16,  0,   0,   0,    1,    0,    2,    0,   0x44, 0xAC, 0,    0,    0x88, 0x58,
            1,   0,   2,   0,   8,    0,    'd',  'a',  't', 'a',  0xFF, 0xFF, 0xFF, 0xFF};
        char head[256];
        snprintf(head, sizeof(head),
                 "HTTP/1.1 200 OK\r\nContent-Type: audio/wav\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n",
                 sizeof(h) + 3200);
        if (peer_send_str(fd, head) == 0 && peer_send(fd, h, sizeof(h)) == 0) {
            static const char zeros[3200];
            peer_send(fd, zeros, sizeof(zeros));
        }
    }
}

/* Every connection: 401 quoting the key (pe->x) in headers and body. */
static void s_echo_401(struct peer *pe, int fd, int conn)
{
    char forms[512], msg[640], body[1024], extra[512];
    (void)conn;
    secret_echo_forms(pe->x, 1, forms, sizeof(forms));
    snprintf(msg, sizeof(msg), "Invalid API key: %s", forms);
    error_body(body, sizeof(body), msg);
    snprintf(extra, sizeof(extra), "X-Echo-Key: %s\r\nX-Echo-Part: %.14s\r\n", pe->x, pe->x);
    send_status(fd, 401, "Unauthorized", "application/json", extra, body);
}

/* ---- what every failing case must give ---- */

/* The "tts" lines of a trace, parsed (owned: cJSON_Delete each). */
static size_t tts_lines(const char *text, cJSON **out, size_t max)
{
    size_t n = 0;
    for (const char *p = text; p != NULL && *p != '\0' && n < max;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        if (len > 7 && strncmp(p, "{\"tts\":", 7) == 0)
            assert_non_null(out[n++] = cJSON_ParseWithLength(p, len));
        p = nl != NULL ? nl + 1 : NULL;
    }
    return n;
}

static size_t count_events(const char *text)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, "{\"t\":")) != NULL; p++)
        n++;
    return n;
}

/* The end line of a trace, parsed (owned), or NULL. */
static cJSON *end_line(const char *text)
{
    const char *p = strstr(text, "\n{\"end\":");
    return p != NULL ? cJSON_Parse(p + 1) : NULL;
}

/* A dead TTS (its first chunk failed, or it refused): the LLM stream was
 * stopped within a second of the failure, by the record's own times (the
 * trace's end against the failed chunk's end), and says why; the one line
 * names the TTS and its URL. */
static void check_stopped(const char *name, struct proc *p, const cJSON *failed)
{
    cJSON *end = end_line(p->trace);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(end, "end"),
                *err = cJSON_GetObjectItemCaseSensitive(e, "error");
    double t_end = cJSON_GetObjectItemCaseSensitive(e, "t")->valuedouble,
           t_fail = cJSON_GetObjectItemCaseSensitive(failed, "end")->valuedouble;
    if (count_events(p->trace) >= ANSWER_EVENTS)
        fail_msg("%s: the LLM stream was not stopped: %zu events", name, count_events(p->trace));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(err, "kind")->valuestring, "tts");
    if (!(t_end >= t_fail && t_end - t_fail < 1.0 * TB_TEST_TIME_SCALE))
        fail_msg("%s: the chunk failed at %.3f s, the LLM stream ended at %.3f s", name, t_fail,
                 t_end);
    if (strstr(p->err, "; the LLM stream was stopped then, at ") == NULL ||
        strstr(p->err, "(the TTS: ") == NULL || strstr(p->err, " at http://127.0.0.1:") == NULL)
        fail_msg("%s: stderr '%s' does not name the TTS and the stop", name, p->err);
    cJSON_Delete(end);
}

/* The run in p ended the speech at chunk j with kind and HTTP status
 * (-1: no response head; 0: not checked), its stderr line holding msg; its JSON and trace say so;
 * `sim
 * --trace` of the trace says the same line.  stopped: the TTS was dead,
 * and the LLM stream was stopped for it (check_stopped); else every LLM
 * event came. */
static void check_ended(const char *name, struct proc *p, unsigned j, const char *kind, int status,
                        const char *msg, int stopped)
{
    char want[128], cmd[1024];
    const char *line = NULL;
    cJSON *rep, *lines[64];
    const cJSON *end;
    size_t n;
    struct proc sim;
    snprintf(want, sizeof(want), "the speech ended at chunk %u: tts %s", j, kind);
    if (p->code != 3 || (line = strstr(p->err, want)) == NULL || strstr(line, msg) == NULL)
        fail_msg("%s: exit %d, stderr '%s' (want '%s ... %s')", name, p->code, p->err, want, msg);
    if (strcmp(kind, "http") == 0) {
        char st[32];
        snprintf(st, sizeof(st), "(HTTP %d): ", status);
        if (strstr(line, st) == NULL)
            fail_msg("%s: stderr '%s' does not say %s", name, p->err, st);
    }
    rep = cJSON_Parse(p->out);
    if (rep == NULL)
        fail_msg("%s: stdout is not JSON: '%.300s'", name, p->out);
    end = cJSON_GetObjectItemCaseSensitive(rep, "tts_end");
    if (!cJSON_IsObject(end))
        fail_msg("%s: no tts_end in '%.300s'", name, p->out);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(end, "chunk")->valueint, (int)j);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(end, "kind")->valuestring, kind);
    if (status > 0)
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(end, "http_status")->valueint, status);
    else if (status < 0)
        assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(end, "http_status")));
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(end, "message")->valuestring, msg));
    cJSON_Delete(rep);
    /* Every LLM event that came, and the TTS records up to the failed one:
     * those before it complete, with their audio. */
    assert_non_null(p->trace);
    n = tts_lines(p->trace, lines, 64);
    if (n < j)
        fail_msg("%s: %zu tts records, want at least %u", name, n, j);
    if (stopped)
        check_stopped(name, p, cJSON_GetObjectItemCaseSensitive(lines[j - 1], "tts"));
    else
        assert_int_equal(count_events(p->trace), ANSWER_EVENTS);
    for (size_t k = 0; k < n; k++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(lines[k], "tts");
        const char *fail = cJSON_GetObjectItemCaseSensitive(t, "fail")->valuestring;
        if (k + 1 < j) {
            assert_string_equal(fail, "none");
            assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(t, "first_byte")));
            assert_true(cJSON_GetObjectItemCaseSensitive(t, "bytes")->valuedouble > 0);
        } else if (k + 1 == j) {
            assert_string_equal(fail, kind);
        }
        cJSON_Delete(lines[k]);
    }
    /* The recording replays to the same end. */
    proc_dir(&sim);
    snprintf(cmd, sizeof(cmd), "'%s' sim --trace %s/t.jsonl --json", tb_test_bin(), p->dir);
    proc_exec(&sim, cmd, 0, 0, 0);
    if (sim.code != 3 || (line = strstr(sim.err, want)) == NULL || strstr(line, msg) == NULL)
        fail_msg("%s: sim --trace: exit %d, stderr '%s'", name, sim.code, sim.err);
    proc_free(&sim);
}

/* `ttsbuf run --mock ANSWER --tts-url URL --tts-api D` with args, --json
 * and --record into p's directory; answer (NULL: ANSWER) another stream. */
static void run_tts_answer(struct proc *p, const char *env, const char *url, size_t d,
                           const char *args, const char *answer)
{
    char cmd[2048];
    proc_dir(p);
    snprintf(cmd, sizeof(cmd),
             "env %s '%s' run --mock %s --tts-url %s --tts-api %s --json --record "
             "%s/t.jsonl %s",
             env, tb_test_bin(), answer != NULL ? answer : ANSWER, url, dialects[d], p->dir, args);
    proc_exec(p, cmd, 0, 0, 0);
}

static void run_tts(struct proc *p, const char *env, const char *url, size_t d, const char *args)
{
    run_tts_answer(p, env, url, d, args, NULL);
}

/* ---- mock rows: the first chunk's request fails ---- */

static const struct {
    const char *serve; /* serve's options; NULL: nothing listens */
    const char *client, *kind;
    int status;
    const char *msg;
    const char *answer; /* the LLM's stream, NULL: ANSWER */
} mrows[] = {
    {"--tts-fault status@500", "", "http", 500, "(ttsbuf fault status@500)", NULL},
    {"--tts-fault status@429", "", "http", 429, "(ttsbuf fault status@429)", NULL},
    {"--tts-fault status@503", "", "http", 503, "(ttsbuf fault status@503)", NULL},
    {"--tts-fault cut@0.5", "", "cut", 200, "the audio stopped after", NULL},
    {"--tts-fault stall", "--tts-idle-timeout 1", "timeout", -1, "", NULL},
    /* the total timeout must come after the head (200), which the mock
     * sends once eSpeak NG has spoken the chunk (an ASan-built mock beside
     * the suite's groups took over 1 s: a CI rehearsal), and before the
     * answer's tokens end, so that the LLM stream is stopped: 2 s against
     * an answer of 4.2 s (80 tokens at 20 a second); the drip's 2000 bytes
     * a second leave the chunk unfinished */
    {"--tts-fault drip@2000", "--tts-timeout 2", "timeout", 200, "the total timeout",
     "--synth tps=20,ttft=0.2,tokens=80,seed=3"},
    {NULL, "", "transport", -1, "", NULL},
};

/* The case's dialect (its state: an index into dialects): one case a
 * dialect, so that the runner can spread them. */
static size_t dialect_of(void **state)
{
    return *(const size_t *)*state;
}

static void mock_rows(void **state)
{
    const size_t d = dialect_of(state);
    for (size_t i = 0; i < sizeof(mrows) / sizeof(mrows[0]); i++) {
        char url[64], name[128];
        int port;
        struct proc p;
        if (mrows[i].serve != NULL)
            tb_test_serve_up(mrows[i].serve, &port);
        else
            port = tb_test_refused_port();
        snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
        snprintf(name, sizeof(name), "%s: %s", dialects[d],
                 mrows[i].serve != NULL ? mrows[i].serve : "nothing listens");
        run_tts_answer(&p, "", url, d, mrows[i].client, mrows[i].answer);
        tb_test_serve_down(NULL);
        check_ended(name, &p, 1, mrows[i].kind, mrows[i].status, mrows[i].msg, 1);
        proc_free(&p);
    }
}

/* ---- peer rows: the third chunk fails, mid-answer ---- */

static const struct {
    const char *script, *client, *kind;
    int status;
    const char *msg;
} prows[] = {
    {"status", "", "http", 500, "the synthesizer fell over at the third chunk"},
    {"cut", "", "cut", 200, "the audio stopped after 3200 bytes"},
    {"reset", "", "cut", 200, "the audio stopped after 3200 bytes"},
    {"stall", "--tts-idle-timeout 1", "timeout", -1, ""},
    {"html", "", "format", 200, "Content-Type 'text/html', not audio"},
    {"odd", "", "format", 200, "an odd number of PCM bytes (9601)"},
    {"empty", "", "format", 200, "no audio for a chunk of"},
    {"mpeg", "", "format", 200, "Content-Type 'audio/mpeg', not the raw 16-bit PCM asked"},
    {"ogg", "", "format", 200, "Content-Type 'audio/ogg', not the raw 16-bit PCM asked"},
    {"wav8", "", "format", 200, "a WAV of format 1, 2 channels, 8 bits at 44100 Hz"},
};

static void peer_rows(void **state)
{
    const size_t d = dialect_of(state);
    for (size_t i = 0; i < sizeof(prows) / sizeof(prows[0]); i++) {
        char url[64], name[128];
        struct peer pe;
        struct proc p;
        cur_dialect = d;
        peer_bind(&pe, "127.0.0.1", s_third_fails);
        pe.script = prows[i].script;
        peer_go(&pe);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d", pe.port);
        snprintf(name, sizeof(name), "%s: the third chunk, %s", dialects[d], prows[i].script);
        run_tts(&p, "", url, d, prows[i].client);
        peer_halt(&pe);
        check_ended(name, &p, 3, prows[i].kind, prows[i].status, prows[i].msg, 0);
        /* Nothing was sent after the failure. */
        if (pe.conns != 3)
            fail_msg("%s: %d TTS requests, want 3", name, pe.conns);
        peer_free(&pe);
        proc_free(&p);
    }
}

/* The human report of a run whose TTS refused: which side failed and how
 * far each got, in words that agree with each other (no "after chunk 0
 * of 0" beside the TTS's count). */
static void dead_tts_report(void **state)
{
    char url[64];
    struct proc p;
    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", tb_test_refused_port());
    proc_dir(&p);
    {
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "'%s' run --mock " ANSWER " --tts-url %s", tb_test_bin(), url);
        proc_exec(&p, cmd, 0, 0, 0);
    }
    assert_int_equal(p.code, 3);
    if (strstr(p.out, "no verdict: the speech ended at chunk 1 (tts transport") == NULL ||
        strstr(p.out, "\n  the TTS: 0 of ") == NULL ||
        strstr(p.out, "\n  the LLM: stopped when the TTS failed, at ") == NULL ||
        strstr(p.out, "\n  played: nothing") == NULL ||
        strstr(p.out, "time to first audio         - s   (no chunk was played)") == NULL ||
        strstr(p.out, "after chunk 0 of 0") != NULL)
        fail_msg("the report does not say which side failed and how far each got:\n%s", p.out);
    if (strstr(p.err, "/v1/audio/speech); the LLM stream was stopped then, at ") == NULL)
        fail_msg("stderr: %s", p.err);
    proc_free(&p);
}

/* ---- secrets: a TTS quoting the key back ---- */

static void key_quoted_back(void **state)
{
    const size_t d = dialect_of(state);
    char kf[128];
    FILE *f;
    snprintf(kf, sizeof(kf), "/tmp/ttsbuf-ttsfault-key-%d", (int)getpid());
    f = fopen(kf, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", KEY);
    fclose(f);
    for (int from_file = 0; from_file < 2; from_file++) {
        char url[64], env[256], args[512], cmd[1024], name[128];
        struct peer pe;
        struct proc p, sim;
        int files = 0;
        cur_dialect = d;
        peer_bind(&pe, "127.0.0.1", s_echo_401);
        pe.x = KEY;
        peer_go(&pe);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d", pe.port);
        snprintf(name, sizeof(name), "%s, the key from %s", dialects[d],
                 from_file ? "--tts-api-key-file" : keyvars[d]);
        if (from_file) {
            snprintf(env, sizeof(env), "-u %s", keyvars[d]);
            snprintf(args, sizeof(args), "-v --html %s/r.html --tts-api-key-file %s", "@", kf);
        } else {
            snprintf(env, sizeof(env), "%s=%s", keyvars[d], KEY);
            snprintf(args, sizeof(args), "-v --html @/r.html");
        }
        {
            /* '@': the run's own directory */
            char *at = strchr(args, '@');
            proc_dir(&p);
            if (at != NULL) {
                char rest[512];
                snprintf(rest, sizeof(rest), "%s", at + 1);
                snprintf(at, sizeof(args) - (size_t)(at - args), "%s%s", p.dir, rest);
            }
            snprintf(cmd, sizeof(cmd),
                     "env %s '%s' run --mock " ANSWER " --tts-url %s --tts-api %s --json "
                     "--record %s/t.jsonl %s",
                     env, tb_test_bin(), url, dialects[d], p.dir, args);
            proc_exec(&p, cmd, 0, 0, 0);
        }
        peer_halt(&pe);
        /* It was sent, in the dialect's header. */
        if (strstr(peer_req(&pe, 0), KEY) == NULL)
            fail_msg("%s: the request did not carry the key: %s", name, peer_req(&pe, 0));
        check_ended(name, &p, 1, "http", 401, "Invalid API key: *** (", 1);
        proc_dir(&sim);
        snprintf(cmd, sizeof(cmd), "'%s' sim --trace %s/t.jsonl --json --svg %s/s.svg",
                 tb_test_bin(), p.dir, sim.dir);
        proc_exec(&sim, cmd, 0, 0, 0);
        assert_int_equal(sim.code, 3);
        secret_assert_dir_unquoted(p.dir, KEY, &files);
        secret_assert_dir_unquoted(sim.dir, KEY, &files);
        assert_true(files >= 7); /* out, err, trace, page; out, err, picture */
        proc_free(&sim);
        proc_free(&p);
        peer_free(&pe);
    }
    unlink(kf);
}

int tb_test_ttsfault(void)
{
    static const size_t d[] = {0, 1, 2, 3};
    static const struct CMUnitTest cases[] = {
#define PER_DIALECT(fn, k) {#fn "(" #k ")", fn, NULL, tb_test_serve_down, (void *)&d[k]}
        PER_DIALECT(mock_rows, 0),         PER_DIALECT(mock_rows, 1),
        PER_DIALECT(mock_rows, 2),         PER_DIALECT(mock_rows, 3),
        PER_DIALECT(peer_rows, 0),         PER_DIALECT(peer_rows, 1),
        PER_DIALECT(peer_rows, 2),         PER_DIALECT(peer_rows, 3),
        PER_DIALECT(key_quoted_back, 0),   PER_DIALECT(key_quoted_back, 1),
        PER_DIALECT(key_quoted_back, 2),   PER_DIALECT(key_quoted_back, 3),
#undef PER_DIALECT
        cmocka_unit_test(dead_tts_report),
    };
    return TB_RUN_GROUP("ttsfault", cases);
}
