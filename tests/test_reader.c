/*
 * test_reader.c - one stream reader (reader.h): the same response bytes
 * reach the same conclusion whichever command reads them.  Each case's
 * bytes are served by a one-shot loopback peer to `run` (tb_live_run) and
 * to `bench` (tb_bench_run), and put into a GenAI-Perf export for the
 * import; the three must agree on the error kind and its message.
 *
 * The timeout cases: the peer sends its bytes and then holds the
 * connection open, silent or dripping SSE keep-alive comments, until the
 * client gives up.  run and bench must stop at the same timeout with the
 * same message.  An import has no clock and no timeouts: the bytes a
 * timed-out stream left behind have no end marker, so the import
 * concludes as for any stream cut there (truncated, the deltas counted).
 */
#include <arpa/inet.h>
#include <cJSON.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_peer.h"
#include "tests.h"
#include "ttsbuf.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/import.h"
#include "ttsbuf/live.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/secrets.h"

/* After its bytes, the peer closes, or holds the connection open. */
enum hold { HOLD_NONE, HOLD_SILENT, HOLD_KEEPALIVE };

/* A loopback server that answers every request with the same bytes. */
struct canned {
    int lfd, port;
    const char *body;
    enum hold hold;
    atomic_int stop;
    pthread_t th;
};

/* Keeps fd open until the client closes it (or the test stops, or 30 s
 * pass), writing a keep-alive comment every 50 ms when asked. */
static void hold_open(struct canned *c, int fd)
{
    static const char ka[] = ": keep-alive\n\n";
    for (int i = 0; i < 600 && !atomic_load(&c->stop); i++) {
        struct pollfd rp = {fd, POLLIN, 0};
        char junk[256];
        if (poll(&rp, 1, 50) > 0 && read(fd, junk, sizeof(junk)) <= 0)
            return; /* the client closed: it concluded */
        if (c->hold == HOLD_KEEPALIVE && send(fd, ka, sizeof(ka) - 1, MSG_NOSIGNAL) < 0)
            return;
    }
}

static void *canned_main(void *arg)
{
    struct canned *c = arg;
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               "Connection: close\r\n\r\n";
    while (!atomic_load(&c->stop)) {
        struct pollfd pfd = {c->lfd, POLLIN, 0};
        char req[8192];
        size_t got = 0;
        int fd;
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        fd = accept(c->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        /* The request's head and its (small) body: read until the body's
         * closing brace, or the client stops sending. */
        for (;;) {
            struct pollfd rp = {fd, POLLIN, 0};
            ssize_t n;
            if (poll(&rp, 1, 200) <= 0)
                break;
            n = read(fd, req + got, sizeof(req) - 1 - got);
            if (n <= 0)
                break;
            got += (size_t)n;
            req[got] = '\0';
            if (strstr(req, "\r\n\r\n") != NULL && req[got - 1] == '}')
                break;
        }
        if (send(fd, head, sizeof(head) - 1, MSG_NOSIGNAL) < 0 ||
            send(fd, c->body, strlen(c->body), MSG_NOSIGNAL) < 0)
            (void)0; /* the client went away: its conclusion says so */
        else if (c->hold != HOLD_NONE)
            hold_open(c, fd);
        shutdown(fd, SHUT_WR);
        close(fd);
    }
    return NULL;
}

static void canned_start(struct canned *c, const char *body, enum hold hold)
{
    memset(c, 0, sizeof(*c));
    c->body = body;
    c->hold = hold;
    c->lfd = peer_listen("127.0.0.1", &c->port);
    assert_int_equal(pthread_create(&c->th, NULL, canned_main, c), 0);
}

static void canned_stop(struct canned *c)
{
    atomic_store(&c->stop, 1);
    pthread_join(c->th, NULL);
    close(c->lfd);
}

/* How one command concluded. */
struct verdict {
    int error;
    char message[640];
    char warning[256];
};

/* The timeouts both commands are given (s; 0: none). */
struct limits {
    double idle, total;
};

static void by_run(const struct canned *c, const struct limits *lim, struct verdict *v)
{
    struct tb_live_opts o;
    struct tb_live_result r;
    char url[96];
    tb_live_opts_default(&o);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", c->port);
    o.http.url = url;
    o.http.idle_timeout = lim->idle;
    o.http.total_timeout = lim->total;
    o.req.model = "m";
    o.req.prompt = "hi";
    assert_int_equal(tb_live_run(&o, &r, NULL, NULL), 0);
    v->error = r.error;
    snprintf(v->message, sizeof(v->message), "%s", r.message);
    snprintf(v->warning, sizeof(v->warning), "%s", r.warning);
    tb_live_result_free(&r);
}

static void by_bench(const struct canned *c, const struct limits *lim, struct verdict *v)
{
    struct tb_bench_opts o;
    struct tb_bench_prompts p;
    struct tb_bench_recs out;
    char url[96], err[256];
    memset(&o, 0, sizeof(o));
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", c->port);
    assert_int_equal(tb_bench_prompts_builtin(&p), 0);
    o.http.url = url;
    o.http.idle_timeout = lim->idle;
    o.http.total_timeout = lim->total;
    tb_api_request_init(&o.req);
    o.req.model = "m";
    o.prompts = &p;
    o.level.mode = TB_BENCH_CLOSED;
    o.level.concurrency = 1;
    o.requests = 1;
    o.nshards = 1;
    tb_sim_opts_default(&o.sim);
    tb_bench_recs_init(&out);
    if (tb_bench_run(&o, 0, &out, err, sizeof(err)) != 0)
        fail_msg("tb_bench_run: %s", err);
    assert_int_equal(out.n, 1);
    v->error = out.v[0].error;
    snprintf(v->message, sizeof(v->message), "%s", out.v[0].message);
    snprintf(v->warning, sizeof(v->warning), "%s", out.v[0].warning);
    tb_bench_recs_free(&out);
    tb_bench_prompts_free(&p);
}

/* A GenAI-Perf export with one request whose one output is the bytes.
 * Returns tb_import_mem's value; a feed error's message is in v. */
static int by_import(const char *bytes, struct verdict *v)
{
    struct tb_import im;
    cJSON *root = cJSON_CreateObject(), *exps = cJSON_AddArrayToObject(root, "experiments");
    cJSON *ex = cJSON_CreateObject(), *reqs, *rq = cJSON_CreateObject(), *outs, *o;
    char err[640], *doc;
    int rc;
    cJSON_AddItemToArray(exps, ex);
    reqs = cJSON_AddArrayToObject(ex, "requests");
    cJSON_AddItemToArray(reqs, rq);
    cJSON_AddNumberToObject(rq, "timestamp", 1000);
    cJSON_AddItemToObject(rq, "response_timestamps", cJSON_CreateArray());
    cJSON_AddItemToArray(cJSON_GetObjectItem(rq, "response_timestamps"),
                         cJSON_CreateNumber(2000000));
    outs = cJSON_AddArrayToObject(rq, "response_outputs");
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "response", bytes);
    cJSON_AddItemToArray(outs, o);
    doc = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    tb_import_init(&im);
    rc = tb_import_mem(TB_IMPORT_GENAI_PERF, doc, strlen(doc), "g.json", &im, err, sizeof(err));
    free(doc);
    memset(v, 0, sizeof(*v));
    if (rc != 0) {
        v->error = TB_READER_JSON;
        snprintf(v->message, sizeof(v->message), "%s", err);
    } else {
        assert_int_equal(im.n, 1);
        v->error = im.req[0].stream_error;
        snprintf(v->message, sizeof(v->message), "%s", im.req[0].error);
        snprintf(v->warning, sizeof(v->warning), "%s", im.req[0].warning);
    }
    tb_import_free(&im);
    return rc;
}

#define CHUNK(t) "data: {\"choices\":[{\"delta\":{\"content\":\"" t "\"}}]}\n\n"
#define FINISH "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"

#define IDLE_MSG "no data for 0.4 s (--idle-timeout) after 1 deltas"
#define TOTAL_MSG "stopped after 0.8 s (--timeout), after 1 deltas"
/* Closed after the bytes: the idle timeout only a guard. */
#define CLOSED HOLD_NONE, {5, 0}, 0, NULL
#define CUT_MSG "the stream ended before [DONE], after 1 deltas"

static const struct {
    const char *name, *bytes;
    int error;        /* the conclusion all three reach */
    const char *says; /* in its message (or the warning, when ok) */
    enum hold hold;
    struct limits lim;
    int import_error; /* with import_says: the import's own conclusion */
    const char *import_says;
} cases[] = {
    {"clean", CHUNK("Hello") CHUNK(" world") FINISH "data: [DONE]\n\n", TB_READER_OK, "", CLOSED},
    {"error event",
     CHUNK("Hello") "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\","
                    "\"code\":\"E42\"}}\n\n" CHUNK(" never"),
     TB_READER_ERROR_EVENT, "(server_error E42): overloaded", CLOSED},
    {"data after [DONE]", CHUNK("Hello") FINISH "data: [DONE]\n\n" CHUNK(" after"), TB_READER_OK,
     "48 bytes of data after [DONE] ignored", CLOSED},
    {"no [DONE], finish reason", CHUNK("Hello") FINISH, TB_READER_OK,
     "ended without [DONE] (finish_reason stop)", CLOSED},
    {"no [DONE], no finish reason", CHUNK("Hello") CHUNK(" world"), TB_READER_TRUNCATED,
     "ended before [DONE], after 2 deltas", CLOSED},
    {"truncated mid-event", CHUNK("Hello") "data: {\"choices\":[{\"delta\":{\"con",
     TB_READER_TRUNCATED, "ended mid-event, before [DONE], after 1 deltas", CLOSED},
    {"malformed", CHUNK("Hello") "data: {\"choices\":[{\"delta\":{\"content\":oops}}]}\n\n",
     TB_READER_JSON, "bad event JSON ending at stream byte", CLOSED},
    /* A server that stops sending, and one that drips keep-alives only
     * (comments, not data: they do not hold off the idle timeout). */
    {"silent, idle timeout",
     CHUNK("Hello"),
     TB_READER_IDLE,
     IDLE_MSG,
     HOLD_SILENT,
     {0.4, 0},
     TB_READER_TRUNCATED,
     CUT_MSG},
    {"keep-alives only, idle timeout",
     CHUNK("Hello"),
     TB_READER_IDLE,
     IDLE_MSG,
     HOLD_KEEPALIVE,
     {0.4, 0},
     TB_READER_TRUNCATED,
     CUT_MSG},
    {"silent, total timeout",
     CHUNK("Hello"),
     TB_READER_TIMEOUT,
     TOTAL_MSG,
     HOLD_SILENT,
     {0, 0.8},
     TB_READER_TRUNCATED,
     CUT_MSG},
    {"keep-alives only, total timeout",
     CHUNK("Hello"),
     TB_READER_TIMEOUT,
     TOTAL_MSG,
     HOLD_KEEPALIVE,
     {0, 0.8},
     TB_READER_TRUNCATED,
     CUT_MSG},
};

/* What an export records of the case's bytes: with keep-alives, a few of
 * them after the bytes, as a recording client would have kept them. */
static char *recorded(size_t i)
{
    static const char ka[] = ": keep-alive\n\n";
    size_t n = strlen(cases[i].bytes);
    char *b = malloc(n + 3 * (sizeof(ka) - 1) + 1);
    assert_non_null(b);
    memcpy(b, cases[i].bytes, n + 1);
    for (int k = 0; cases[i].hold == HOLD_KEEPALIVE && k < 3; k++, n += sizeof(ka) - 1)
        memcpy(b + n, ka, sizeof(ka));
    return b;
}

/* The import of a timed-out stream: no clock, so the cut bytes decide. */
static void import_concludes(size_t i)
{
    struct verdict imp;
    char *bytes = recorded(i);
    assert_int_equal(by_import(bytes, &imp), 0);
    free(bytes);
    if (imp.error != cases[i].import_error || strstr(imp.message, cases[i].import_says) == NULL)
        fail_msg("%s: the import concludes %s (%s); want %s (%s)", cases[i].name,
                 tb_reader_error_name(imp.error), imp.message,
                 tb_reader_error_name(cases[i].import_error), cases[i].import_says);
}

static void same_conclusion(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct limits *lim = &cases[i].lim;
        struct canned c;
        struct verdict run, bench, imp;
        int rc;
        canned_start(&c, cases[i].bytes, cases[i].hold);
        by_run(&c, lim, &run);
        by_bench(&c, lim, &bench);
        canned_stop(&c);
        if (cases[i].import_says != NULL) {
            import_concludes(i);
            imp = run; /* compared with run and bench below as run */
            rc = 0;
        } else {
            rc = by_import(cases[i].bytes, &imp);
        }
        if (run.error != cases[i].error || bench.error != cases[i].error ||
            imp.error != cases[i].error)
            fail_msg("%s: run %s (%s), bench %s (%s), import %s (%s); want %s", cases[i].name,
                     tb_reader_error_name(run.error), run.message,
                     tb_reader_error_name(bench.error), bench.message,
                     tb_reader_error_name(imp.error), imp.message,
                     tb_reader_error_name(cases[i].error));
        if (cases[i].error == TB_READER_OK) {
            assert_int_equal(rc, 0);
            assert_string_equal(bench.message, "");
            assert_string_equal(imp.message, "");
            if (strstr(run.warning, cases[i].says) == NULL)
                fail_msg("%s: run's warning '%s' lacks '%s'", cases[i].name, run.warning,
                         cases[i].says);
            assert_string_equal(bench.warning, run.warning);
            assert_string_equal(imp.warning, run.warning);
            continue;
        }
        /* One message, word for word (the import's names its place). */
        assert_string_equal(bench.message, run.message);
        if (strstr(run.message, cases[i].says) == NULL)
            fail_msg("%s: '%s' lacks '%s'", cases[i].name, run.message, cases[i].says);
        if (strstr(imp.message, run.message) == NULL)
            fail_msg("%s: the import says '%s', run '%s'", cases[i].name, imp.message, run.message);
        assert_int_equal(rc, cases[i].error == TB_READER_JSON ? TB_EFORMAT : 0);
    }
}

/* The import stops at an error event: nothing after it is recorded. */
static void import_stops_at_error(void **state)
{
    struct tb_import im;
    char err[256];
    const char *doc =
        "{\"experiments\":[{\"requests\":[{\"timestamp\":0,\"response_timestamps\":[1,2,3],"
        "\"response_outputs\":[{\"response\":\"data: {\\\"choices\\\":[{\\\"delta\\\":"
        "{\\\"content\\\":\\\"a\\\"}}]}\\n\\n\"},{\"response\":\"data: {\\\"error\\\":"
        "{\\\"message\\\":\\\"boom\\\"}}\\n\\n\"},{\"response\":\"data: {\\\"choices\\\":"
        "[{\\\"delta\\\":{\\\"content\\\":\\\"b\\\"}}]}\\n\\ndata: [DONE]\\n\\n\"}]}]}]}";
    (void)state;
    tb_import_init(&im);
    assert_int_equal(
        tb_import_mem(TB_IMPORT_GENAI_PERF, doc, strlen(doc), "g.json", &im, err, sizeof(err)), 0);
    assert_int_equal(im.n, 1);
    assert_int_equal(im.req[0].stream.n, 1);
    assert_int_equal(im.req[0].stream_error, TB_READER_ERROR_EVENT);
    assert_non_null(strstr(im.req[0].error, "boom"));
    tb_import_free(&im);
}

/* Recorded bytes of either OpenAI endpoint read alike; a chat stream
 * that turns into completions chunks is still the wrong dialect. */
static void import_adopts_endpoint(void **state)
{
    struct tb_reader rd;
    struct tb_stream s;
    static const char comp[] = "data: {\"choices\":[{\"text\":\"Hi\"}]}\n\ndata: [DONE]\n\n";
    static const char mixed[] = CHUNK("Hi") "data: {\"choices\":[{\"text\":\"x\"}]}\n\n";
    (void)state;
    tb_stream_init(&s);
    assert_int_equal(tb_reader_init(&rd, TB_API_CHAT), 0);
    tb_reader_recorded(&rd);
    tb_reader_begin(&rd, &s, 0);
    /* [DONE] ends it: the feed asks to stop there. */
    assert_int_not_equal(tb_reader_feed(&rd, comp, sizeof(comp) - 1, 0.5), 0);
    assert_true(rd.done_seen);
    assert_int_equal(tb_reader_end(&rd), TB_READER_OK);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.end.kind, TB_END_COMPLETE);
    tb_stream_clear(&s);
    tb_reader_begin(&rd, &s, 0);
    assert_int_not_equal(tb_reader_feed(&rd, mixed, sizeof(mixed) - 1, 0.5), 0);
    assert_int_equal(rd.error, TB_READER_JSON);
    assert_non_null(strstr(rd.message, "is --api right?"));
    tb_reader_free(&rd);
    tb_stream_free(&s);
}

/* The push hook's view: each delta's text, '|' after each. */
static int keep_pushed(void *ud, struct tb_reader *rd, double t, const char *text, size_t len,
                       uint8_t kind)
{
    char *got = ud;
    size_t n = strlen(got);
    (void)rd;
    (void)t;
    (void)kind;
    assert_true(n + len + 2 < 512);
    memcpy(got + n, text, len);
    memcpy(got + n + len, "|", 2);
    return 0;
}

/*
 * The answer's text is masked as each delta is recorded, before the push
 * hook sees it: an echo whole in a delta reaches the hook masked; one cut
 * across deltas of 7 from its 8th character on (its first 7 came before),
 * and the recorded stream has it masked whole; a delta that ends in an
 * escape's first byte is read with the stream's end.  Numbers: every
 * delta keeps its length.
 */
static void masks_the_answer(void **state)
{
    static const char body[] = CHUNK("key sk-SECRET-abcdef123456.") CHUNK(" Again: ")
        CHUNK("sk-SECR") CHUNK("ET-abcd") CHUNK("ef12345") CHUNK(" and Zq&");
    static const char *const want[] = {
        "key **-******-************.", " Again: ", "**-****", "**-****", "*******", " and **&"};
    struct tb_reader rd;
    struct tb_stream s;
    struct tb_secrets *set;
    char pushed[512] = "";
    (void)state;
    tb_stream_init(&s);
    assert_int_equal(tb_secrets_create(&set), 0);
    assert_int_equal(tb_secrets_add(set, "sk-SECRET-abcdef123456", 22), 0);
    assert_int_equal(tb_secrets_add(set, "Zq&", 3), 0);
    assert_int_equal(tb_reader_init(&rd, TB_API_CHAT), 0);
    rd.secrets = set;
    rd.push = keep_pushed;
    rd.push_ud = pushed;
    tb_reader_begin(&rd, &s, 0);
    for (size_t i = 0; i < sizeof(body) - 1; i += 5) /* any split */
        tb_reader_feed(&rd, body + i, sizeof(body) - 1 - i < 5 ? sizeof(body) - 1 - i : 5, 0.5);
    assert_string_equal(pushed,
                        "key **-******-************.| Again: |sk-SECR|**-****|*******| and Zq&|");
    tb_reader_end(&rd);
    assert_int_equal(s.n, 6);
    for (size_t i = 0; i < 6; i++)
        if (s.ev[i].len != strlen(want[i]) ||
            memcmp(tb_stream_text(&s, i), want[i], s.ev[i].len) != 0)
            fail_msg("delta %zu recorded as '%.*s', want '%s'", i, (int)s.ev[i].len,
                     tb_stream_text(&s, i), want[i]);
    tb_reader_free(&rd);
    tb_secrets_destroy(set);
    tb_stream_free(&s);
}

/* Each dialect's stream: two deltas, the end marker, then more deltas
 * and a second end (what a hostile server sent after the marker). */
static const struct {
    enum tb_api api;
    const char *before, *after;
} past_end[] = {
    {TB_API_CHAT, CHUNK("Hello") CHUNK(" world") FINISH "data: [DONE]\n\n",
     CHUNK(" more") CHUNK(" and more") "data: [DONE]\n\n"},
    {TB_API_COMPLETIONS,
     "data: {\"choices\":[{\"text\":\"Hello\"}]}\n\ndata: {\"choices\":[{\"text\":\" world\"}]}"
     "\n\ndata: [DONE]\n\n",
     "data: {\"choices\":[{\"text\":\" more\"}]}\n\n"},
    {TB_API_ANTHROPIC,
     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
     "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n"
     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
     "\"delta\":{\"type\":\"text_delta\",\"text\":\" world\"}}\n\n"
     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
     "\"delta\":{\"type\":\"text_delta\",\"text\":\" more\"}}\n\n"},
    {TB_API_OLLAMA,
     "{\"message\":{\"role\":\"assistant\",\"content\":\"Hello\"},\"done\":false}\n"
     "{\"message\":{\"role\":\"assistant\",\"content\":\" world\"},\"done\":false}\n"
     "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,"
     "\"done_reason\":\"stop\",\"eval_count\":2}\n",
     "{\"message\":{\"role\":\"assistant\",\"content\":\" more\"},\"done\":false}\n"},
};

/* Bytes that are not blanks (what the reader counts as ignored). */
static unsigned long long data_len(const char *s)
{
    unsigned long long n = 0;
    for (; *s != '\0'; s++)
        n += *s != ' ' && *s != '\n' && *s != '\r' && *s != '\t';
    return n;
}

/* The end marker ends the stream in every dialect and at every split of
 * the bytes: nothing after it is recorded, the feed asks to stop at the
 * marker (and at every feed after it), the bytes after it are counted and
 * named in the warning, and the stream's end is complete at the marker's
 * time. */
static void nothing_after_the_end_marker(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(past_end) / sizeof(past_end[0]); i++) {
        const char *b = past_end[i].before, *a = past_end[i].after;
        size_t nb = strlen(b), na = strlen(a), n = nb + na;
        char *all = malloc(n + 1);
        assert_non_null(all);
        memcpy(all, b, nb);
        memcpy(all + nb, a, na + 1);
        for (size_t cut = 0; cut <= n; cut++) {
            struct tb_reader rd;
            struct tb_stream s;
            char want[200];
            int r1, r2 = 1;
            tb_stream_init(&s);
            assert_int_equal(tb_reader_init(&rd, past_end[i].api), 0);
            tb_reader_begin(&rd, &s, 0);
            r1 = tb_reader_feed(&rd, all, cut, 0.25);
            if (cut < n)
                r2 = tb_reader_feed(&rd, all + cut, n - cut, 0.5);
            /* A third feed (a read the transfer made anyway) is refused. */
            assert_int_not_equal(tb_reader_feed(&rd, a, na, 0.75), 0);
            if (s.n != 2 || !rd.done_seen || rd.error != 0 || (cut < nb) != (r1 == 0) || r2 == 0)
                fail_msg("%s, cut at %zu: %zu deltas, done %d, error '%s', feeds %d %d",
                         tb_api_info(past_end[i].api)->name, cut, s.n, rd.done_seen, rd.message, r1,
                         r2);
            assert_int_equal(tb_reader_end(&rd), TB_READER_OK);
            assert_int_equal(s.end.kind, TB_END_COMPLETE);
            assert_true(s.end.t == (cut >= nb ? 0.25 : 0.5));
            if (s.end.ignored_bytes != 2 * data_len(a))
                fail_msg("%s, cut at %zu: %llu bytes ignored, want %llu",
                         tb_api_info(past_end[i].api)->name, cut,
                         (unsigned long long)s.end.ignored_bytes, 2 * data_len(a));
            snprintf(want, sizeof(want), "%llu bytes of data after %s ignored", 2 * data_len(a),
                     tb_api_info(past_end[i].api)->end_name);
            if (strstr(rd.warning, want) == NULL)
                fail_msg("%s: warning '%s', want '%s'", tb_api_info(past_end[i].api)->name,
                         rd.warning, want);
            tb_reader_free(&rd);
            tb_stream_free(&s);
        }
        free(all);
    }
}

/* The conclusion is recorded in the stream: each reader error is the end
 * kind the trace format names (stream.h), and a transport error before
 * any byte is a failed request, after one a lost connection. */
static void end_kinds(void **state)
{
    static const struct {
        int error, marker, data, end;
    } k[] = {
        {TB_READER_OK, 1, 1, TB_END_COMPLETE},
        {TB_READER_OK, 0, 1, TB_END_NO_MARKER},
        {TB_READER_CANCELLED, 0, 1, TB_END_INTERRUPTED},
        {TB_READER_TRUNCATED, 0, 1, TB_END_LOST},
        {TB_READER_TRANSPORT, 0, 1, TB_END_LOST},
        {TB_READER_TRANSPORT, 0, 0, TB_END_ERROR},
        {TB_READER_IDLE, 0, 1, TB_END_TIMEOUT},
        {TB_READER_TIMEOUT, 0, 0, TB_END_TIMEOUT},
        {TB_READER_TOO_LONG, 0, 1, TB_END_CAP},
        {TB_READER_HTTP, 0, 1, TB_END_ERROR},
        {TB_READER_NOT_SSE, 0, 1, TB_END_ERROR},
        {TB_READER_SSE, 0, 1, TB_END_ERROR},
        {TB_READER_JSON, 0, 1, TB_END_ERROR},
        {TB_READER_ERROR_EVENT, 0, 1, TB_END_ERROR},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
        if (tb_reader_end_kind(k[i].error, k[i].marker, k[i].data) != k[i].end)
            fail_msg("%s (marker %d, data %d) ends %s, want %s", tb_reader_error_name(k[i].error),
                     k[i].marker, k[i].data,
                     tb_end_name(tb_reader_end_kind(k[i].error, k[i].marker, k[i].data)),
                     tb_end_name(k[i].end));
    for (int e = 0; e < TB_END__COUNT; e++)
        assert_int_equal(tb_end_parse(tb_end_name(e)), e);
    assert_int_equal(tb_end_parse("done"), -1);
}

int tb_test_reader(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_conclusion),        cmocka_unit_test(import_stops_at_error),
        cmocka_unit_test(import_adopts_endpoint), cmocka_unit_test(nothing_after_the_end_marker),
        cmocka_unit_test(masks_the_answer),       cmocka_unit_test(end_kinds),
    };
    return TB_RUN_GROUP("reader", tests);
}
