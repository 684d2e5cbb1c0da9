/*
 * test_fault.c - the fault matrix, end to end: the real binary (`ttsbuf
 * run --json --record`) against `ttsbuf serve` in its own process (faults
 * through the model name) and against raw TCP peers scripted here (an
 * accept() loop on a thread writing exact bytes), plus TLS against
 * `openssl s_server`.
 *
 * The matrix is a table (frows): where the run goes (a fault of `ttsbuf
 * serve`, a peer's script, a refused port or a name that does not
 * resolve), its options, and what it must give: the exit status, the
 * one-line error on stderr (and that it is the JSON report's
 * error.message), the report's event count, error kind and HTTP status,
 * that the --record trace holds exactly the deltas received before the
 * fault, and a time window.  A row marked for every dialect is a case in
 * each.  One runner, registered once per row and dialect; a row that
 * needs more (a human report, a bench of the same peer) names a check.
 *
 * Also here, as functions: redirects never carry the key to another
 * origin, signals flush partial results, SIGPIPE never kills, the API key
 * appears in no output channel (a table of its own), the 100 MB line keeps
 * memory bounded (the client's peak RSS is measured), and `serve` warns
 * when bound to a non-loopback address.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <arpa/inet.h>
#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/cli/request.h"
#include "proc.h"
#include "secret_scan.h"
#include "tclock.h"
#include "tcp_peer.h"
#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/live.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/trace.h"
#include "ttsbuf/utf8.h"

#define SECRET_ENV "sk-ttsbuf-FAULT-ENV-7c41f0a9d2"
#define SECRET_FILE "sk-ttsbuf-FAULT-FILE-93be22d1"
#define SECRET_URL "sk-ttsbuf-FAULT-URL-5e0a7733"
#define SECRET_HDR "sk-ttsbuf-FAULT-HDR-e8d1c6b4"
#define SECRET_ANT "sk-ant-ttsbuf-FAULT-ANT-0b6e3f"
#define HUGE_LINE ((uint64_t)100 << 20)

/* `ttsbuf run` with the row's options, --json, --record and -q. */
static void run_cli(struct proc *p, const char *env, const char *args)
{
    char cmd[3072];
    proc_dir(p);
    snprintf(cmd, sizeof(cmd), "env %s '%s' run --json -q --record %s/t.jsonl %s",
             env != NULL ? env : "", tb_test_bin(), p->dir, args);
    proc_exec(p, cmd, 0, 0, 0);
}

/* `ttsbuf bench --json` for one request, with args. */
static void bench_cli(struct proc *p, const char *env, const char *args)
{
    char cmd[3072];
    proc_dir(p);
    snprintf(cmd, sizeof(cmd),
             "env %s '%s' bench --json -q -c 1 --requests 1 --idle-timeout 5 --wpm 1000 %s",
             env != NULL ? env : "", tb_test_bin(), args);
    proc_exec(p, cmd, 0, 0, 0);
}

/* A bench of one request: how many came back ok, and its events. */
static void check_bench(const char *row, const struct proc *p, size_t ok, size_t events)
{
    cJSON *j = cJSON_Parse(p->out), *l;
    if (j == NULL)
        fail_msg("%s: bench stdout is not JSON: '%.300s'; stderr '%s'", row, p->out, p->err);
    l = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "levels"), 0);
    if (l == NULL || cJSON_GetObjectItem(l, "ok")->valuedouble != (double)ok ||
        cJSON_GetObjectItem(l, "events")->valuedouble != (double)events)
        fail_msg("%s: bench says '%.600s', want %zu ok and %zu events; stderr '%s'", row, p->out,
                 ok, events, p->err);
    cJSON_Delete(j);
}

/* ---- what a row expects ---- */

struct expect {
    int code;         /* exit status */
    const char *kind; /* the JSON error kind, or NULL for a run that succeeded */
    const char *msg;  /* part of the one-line error (or of the warning) */
    size_t events;    /* content deltas received before the fault */
    long status;      /* the JSON's http_status; -1: not checked */
};

/* The deltas every scripted server sends: " w0", " w1", ... */
static void delta_text(size_t k, char *buf, size_t len)
{
    snprintf(buf, len, " w%zu", k);
}

static void check_row(const char *row, const struct proc *p, const struct expect *e)
{
    cJSON *j, *err, *v;
    struct tb_stream s;
    char msg[512];
    int rc;
    if (p->signal != 0)
        fail_msg("%s: killed by signal %d; stderr '%s'", row, p->signal, p->err);
    if (p->code != e->code)
        fail_msg("%s: exit %d, want %d; stderr '%s'", row, p->code, e->code, p->err);
    j = cJSON_Parse(p->out);
    if (j == NULL)
        fail_msg("%s: stdout is not one JSON object: '%.300s'", row, p->out);
    v = cJSON_GetObjectItem(j, "events");
    if (!cJSON_IsNumber(v) || (size_t)v->valuedouble != e->events)
        fail_msg("%s: the report says %g events, want %zu; stderr '%s'", row,
                 cJSON_IsNumber(v) ? v->valuedouble : -1.0, e->events, p->err);
    if (e->status >= 0 && cJSON_GetObjectItem(j, "http_status")->valuedouble != (double)e->status)
        fail_msg("%s: http_status %g, want %ld", row,
                 cJSON_GetObjectItem(j, "http_status")->valuedouble, e->status);
    err = cJSON_GetObjectItem(j, "error");
    if (e->kind != NULL) {
        const char *kind, *m;
        if (!cJSON_IsObject(err))
            fail_msg("%s: no error in the report; stderr '%s'", row, p->err);
        kind = cJSON_GetObjectItem(err, "kind")->valuestring;
        m = cJSON_GetObjectItem(err, "message")->valuestring;
        if (strcmp(kind, e->kind) != 0 || strstr(m, e->msg) == NULL)
            fail_msg("%s: error %s '%s'; want %s '%s'", row, kind, m, e->kind, e->msg);
        /* stderr is exactly that one line. */
        snprintf(msg, sizeof(msg), "ttsbuf: %s\n", m);
        if (strcmp(p->err, msg) != 0)
            fail_msg("%s: stderr '%s', want exactly '%s'", row, p->err, msg);
    } else {
        if (!cJSON_IsNull(err))
            fail_msg("%s: unexpected error in the report; stderr '%s'", row, p->err);
        if (e->msg != NULL && e->msg[0] != '\0') {
            v = cJSON_GetObjectItem(j, "warning");
            if (!cJSON_IsString(v) || strstr(v->valuestring, e->msg) == NULL)
                fail_msg("%s: warning %s, want '%s'", row,
                         cJSON_IsString(v) ? v->valuestring : "(none)", e->msg);
        }
    }
    cJSON_Delete(j);
    /* The trace: a header, exactly the deltas received, in order, and
     * the end: complete for a run that succeeded, else the error's. */
    tb_stream_init(&s);
    snprintf(msg, sizeof(msg), "%s/t.jsonl", p->dir);
    rc = tb_trace_load_file(msg, &s, msg, sizeof(msg));
    if (e->kind == NULL ? tb_end_class(s.end.kind) != TB_END_CLASS_COMPLETE
                        : strcmp(s.end.error, e->kind) != 0 ||
                              tb_end_class(s.end.kind) < TB_END_CLASS_INCOMPLETE)
        fail_msg("%s: the trace ends %s (%s), want %s; '%.300s'", row, tb_end_name(s.end.kind),
                 s.end.error, e->kind != NULL ? e->kind : "complete", p->trace);
    if (e->events == 0) {
        if (rc != TB_EEMPTY || strncmp(p->trace, "{\"ttsbuf_trace\":2", 17) != 0)
            fail_msg("%s: want a trace with a header and no event, got rc %d: '%.200s'", row, rc,
                     p->trace);
    } else {
        if (rc != 0 || s.n != e->events)
            fail_msg("%s: trace holds %zu deltas (rc %d: %s), want %zu", row, s.n, rc, msg,
                     e->events);
        for (size_t k = 0; k < s.n; k++) {
            char want[32];
            delta_text(k, want, sizeof(want));
            if (s.ev[k].len != strlen(want) ||
                memcmp(tb_stream_text(&s, k), want, s.ev[k].len) != 0)
                fail_msg("%s: trace delta %zu is '%.*s', want '%s'", row, k, (int)s.ev[k].len,
                         tb_stream_text(&s, k), want);
            assert_true(k == 0 || s.ev[k].t >= s.ev[k - 1].t);
        }
    }
    tb_stream_free(&s);
}

/* ---- a raw TCP peer ---- */

/* ---- scripts: what a peer sends ---- */

/* The dialects the scripts speak: how a head, a text event and the end
 * look, and what the client calls the end and the text field. */
struct wire {
    const char *api, *path; /* --api, and the base URL's path */
    const char *head, *pre, *post, *end;
    const char *end_name, *text_field;
    /* Against `ttsbuf serve`: its error event's type, and its stream
     * without the end (a warning when the finish reason came). */
    const char *etype;
    struct expect nodone;
    const char *end_usage0; /* the end, with a usage count of 0 */
};

#define SSE_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"

static const struct wire wires[] = {
    {"chat",
     "/v1",
     SSE_HEAD,
     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"",
     "\"},\"finish_reason\":null}]}\n\n",
     "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
     "data: [DONE]\n\n",
     "[DONE]",
     "delta.content",
     "(server_error",
     {0, NULL, "the stream ended without [DONE] (finish_reason stop)", 30, 200},
     "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
     "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":0}}\n\n"
     "data: [DONE]\n\n"},
    {"anthropic",
     "/v1",
     SSE_HEAD,
     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
     "\"delta\":{\"type\":\"text_delta\",\"text\":\"",
     "\"}}\n\n",
     "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
     "\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n"
     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
     "message_stop",
     "the event text",
     "(api_error)",
     {0, NULL, "the stream ended without message_stop (finish_reason end_turn)", 30, 200},
     "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
     "\"end_turn\"},\"usage\":{\"output_tokens\":0}}\n\n"
     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
    {"ollama",
     "",
     "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n",
     "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"",
     "\"},\"done\":false}\n",
     "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,"
     "\"done_reason\":\"stop\",\"eval_count\":5}\n",
     "a \"done\": true line",
     "the event text",
     "(error)",
     {3, "truncated", "the stream ended before a \"done\": true line, after 30 deltas", 30, 200},
     "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,"
     "\"done_reason\":\"stop\",\"eval_count\":0}\n"},
};

/* The dialect the scripts speak now (set by the matrix, chat otherwise). */
static const struct wire *W = &wires[0];

/* A row's words in the dialect the scripts speak: END becomes how the
 * client names the stream's end, TEXT its text field, ETYPE the type of
 * `ttsbuf serve`'s error event. */
static void wire_words(const char *in, char *out, size_t len)
{
    const char *const tokens[] = {"END", "TEXT", "ETYPE"};
    const char *const words[] = {W->end_name, W->text_field, W->etype};
    size_t k = 0;
    while (*in != '\0' && k + 1 < len) {
        size_t t = 0;
        while (t < 3 && strncmp(in, tokens[t], strlen(tokens[t])) != 0)
            t++;
        if (t < 3) {
            k += (size_t)snprintf(out + k, len - k, "%s", words[t]);
            in += strlen(tokens[t]);
        } else {
            out[k++] = *in++;
        }
    }
    out[k < len ? k : len - 1] = '\0';
}

static const char sse_head[] = SSE_HEAD;

/* The args that point `run` at a peer. */
static void peer_args(const struct peer *pe, char *buf, size_t len, const char *more)
{
    snprintf(buf, len, "--api %s --base-url http://%s:%d%s --model m %s", W->api, pe->host,
             pe->port, W->path, more);
}

/* One text event holding text[0..n) (may hold a NUL). */
static int send_text(int fd, const char *text, size_t n)
{
    char ev[512];
    size_t a = strlen(W->pre), b = strlen(W->post);
    assert_true(a + n + b <= sizeof(ev));
    memcpy(ev, W->pre, a);
    memcpy(ev + a, text, n);
    memcpy(ev + a + n, W->post, b);
    return peer_send(fd, ev, a + n + b);
}

static int send_delta(int fd, size_t k)
{
    char w[32];
    delta_text(k, w, sizeof(w));
    return send_text(fd, w, strlen(w));
}

static void send_deltas(int fd, size_t n)
{
    for (size_t k = 0; k < n; k++)
        send_delta(fd, k);
}

static void send_end(int fd)
{
    peer_send_str(fd, W->end);
}

static void reset(int fd)
{
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)); /* close sends RST */
}

/* The end, then three text events and the end again, in one write: the
 * read that brings the end marker brings what follows it too. */
static void send_past_end(int fd)
{
    char buf[2048], ev[512];
    size_t n = 0;
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", W->end);
    for (size_t k = 0; k < 3; k++) {
        snprintf(ev, sizeof(ev), "%s after%zu%s", W->pre, k, W->post);
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", ev);
    }
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", W->end);
    assert_true(n < sizeof(buf));
    peer_send(fd, buf, n);
}

/* Text events " x" in the dialect, 100 MB of them, as fast as the
 * client takes them, until it goes. */
static void flood_text(struct peer *pe, int fd)
{
    enum { PER_BLOCK = 1000 };
    size_t a = strlen(W->pre), b = strlen(W->post), ev = a + 2 + b;
    char *block = malloc(PER_BLOCK * ev);
    if (block == NULL)
        return;
    for (int i = 0; i < PER_BLOCK; i++) {
        char *e = block + (size_t)i * ev;
        memcpy(e, W->pre, a);
        memcpy(e + a, " x", 2);
        memcpy(e + a + 2, W->post, b);
    }
    for (uint64_t n = 0; n < HUGE_LINE && !atomic_load(&pe->stop); n += PER_BLOCK * ev) {
        if (peer_send(fd, block, PER_BLOCK * ev) != 0)
            break;
        atomic_fetch_add(&pe->sent, PER_BLOCK * ev);
    }
    free(block);
}

/* A script, one letter a step: H the dialect's head, D<n> the deltas
 * " w0" .. " w<n-1>", E the end, U the end with a usage count of 0, P a
 * text event cut after " w3" (never closed), X one text event of the
 * peer's x bytes (they may hold a NUL), Z a pause of 0.2 s (the client has
 * read it all), R a reset at the close, K holding the connection until
 * the client goes, F 100 MB of text events (flood_text) until it goes, A
 * the end with text events and another end after it, in one write. */
static void run_script(struct peer *pe, int fd, const char *s)
{
    for (; *s != '\0'; s++) {
        char *end;
        switch (*s) {
        case 'H': peer_send_str(fd, W->head); break;
        case 'D':
            send_deltas(fd, (size_t)strtoul(s + 1, &end, 10));
            s = end - 1;
            break;
        case 'E': send_end(fd); break;
        case 'U': peer_send_str(fd, W->end_usage0); break;
        case 'P':
            peer_send_str(fd, W->pre);
            peer_send_str(fd, " w3");
            break;
        case 'X': send_text(fd, pe->x, pe->xlen); break;
        case 'Z': tclock_sleep(0.2); break;
        case 'R': reset(fd); break;
        case 'K': peer_hold(pe, fd); break;
        case 'F': flood_text(pe, fd); break;
        case 'A': send_past_end(fd); break;
        default: fail_msg("script '%s': no step '%c'", pe->script, *s);
        }
    }
}

static void s_script(struct peer *pe, int fd, int conn)
{
    (void)conn;
    run_script(pe, fd, pe->script);
}

static void s_ok(struct peer *pe, int fd, int conn)
{
    (void)conn;
    run_script(pe, fd, "HD5E");
}

/* Text sliced by UTF-16 code units, as JavaScript servers do: an emoji
 * and a CJK extension B character each split over two events, then a
 * high half that never gets its partner. */
static void s_halves(struct peer *pe, int fd, int conn)
{
    static const char *const parts[] = {"a\\ud83d", "\\ude00b\\ud840", "\\udc00", "c\\ud83d"};
    (void)pe;
    (void)conn;
    peer_send_str(fd, W->head);
    for (size_t i = 0; i < 4; i++)
        send_text(fd, parts[i], strlen(parts[i]));
    send_end(fd);
}

static void s_drip(struct peer *pe, int fd, int conn)
{
    static const char ev[] = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w2\"}}]}";
    (void)conn;
    peer_send_str(fd, sse_head);
    send_deltas(fd, 2);
    for (size_t i = 0; i < sizeof(ev) - 1 && !atomic_load(&pe->stop); i++) {
        if (peer_send(fd, ev + i, 1) != 0)
            return;
        for (int k = 0; k < 20 && !atomic_load(&pe->stop); k++)
            tclock_sleep(0.05); /* one byte a second */
    }
}

/* Two deltas, then only keep-alives, every 0.2 s, until the client goes:
 * SSE comments and empty deltas (what gateways send while a model is
 * stuck).  Bytes keep coming; data never does. */
static void s_keepalive(struct peer *pe, int fd, int conn)
{
    (void)conn;
    peer_send_str(fd, sse_head);
    send_deltas(fd, 2);
    for (int k = 0; !atomic_load(&pe->stop); k++) {
        if (peer_send_str(fd, k % 2 ? ": keep-alive\n\n"
                                    : "data: {\"choices\":[{\"index\":0,\"delta\":{}}]}\n\n") != 0)
            return;
        tclock_sleep(0.2);
    }
}

/* The first connection: deltas as fast as the client takes them, 3,000,000
 * of them (three times a live stream's cap), then the end; the others: a
 * short clean stream (s_ok). */
#define FLOOD_DELTAS 3000000
static void s_flood(struct peer *pe, int fd, int conn)
{
    static const char ev[] =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" x\"}}]}\n\n";
    enum { PER_BLOCK = 1000 };
    char *block;
    if (conn > 0) {
        s_ok(pe, fd, conn);
        return;
    }
    block = malloc(PER_BLOCK * (sizeof(ev) - 1));
    if (block == NULL)
        return;
    for (int i = 0; i < PER_BLOCK; i++)
        memcpy(block + (size_t)i * (sizeof(ev) - 1), ev, sizeof(ev) - 1);
    peer_send_str(fd, sse_head);
    for (int n = 0; n < FLOOD_DELTAS / PER_BLOCK && !atomic_load(&pe->stop); n++)
        if (peer_send(fd, block, PER_BLOCK * (sizeof(ev) - 1)) != 0)
            break;
    free(block);
    send_end(fd);
}

/* After `prefix`, 100 MB of 'x' with no newline, until the client goes. */
static void fill(struct peer *pe, int fd, const char *prefix)
{
    static char block[1 << 16];
    memset(block, 'x', sizeof(block));
    if (peer_send_str(fd, prefix) != 0)
        return;
    for (uint64_t n = 0; n < HUGE_LINE && !atomic_load(&pe->stop); n += sizeof(block)) {
        if (peer_send(fd, block, sizeof(block)) != 0)
            return;
        atomic_fetch_add(&pe->sent, sizeof(block));
    }
}

static void s_huge_line(struct peer *pe, int fd, int conn)
{
    (void)conn;
    peer_send_str(fd, sse_head);
    send_deltas(fd, 2);
    fill(pe, fd, "data: ");
}

static void s_huge_html_500(struct peer *pe, int fd, int conn)
{
    (void)conn;
    fill(pe, fd,
         "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\n"
         "Connection: close\r\n\r\n<html><head><title>500 Internal Server Error</title>"
         "</head><body>");
}

/* A header line of 100 MB (the client gives up long before). */
static void s_huge_header(struct peer *pe, int fd, int conn)
{
    (void)conn;
    fill(pe, fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Big: ");
}

static void s_redirect(struct peer *pe, int fd, int conn)
{
    char head[512];
    (void)conn;
    snprintf(head, sizeof(head),
             "HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n"
             "Connection: close\r\n\r\n",
             pe->location);
    peer_send_str(fd, head);
}

/* First a redirect (to pe->location), then a stream. */
static void s_redirect_once(struct peer *pe, int fd, int conn)
{
    if (conn == 0)
        s_redirect(pe, fd, conn);
    else
        s_ok(pe, fd, conn);
}

/* A 401 whose message quotes `quoted` (a server quoting back a key),
 * with the error's other fields (JSON text). */
static void send_401(int fd, const char *quoted, const char *fields)
{
    char body[1024], resp[1400];
    snprintf(body, sizeof(body), "{\"error\":{\"message\":\"Incorrect API key provided: %s\",%s}}",
             quoted, fields);
    snprintf(resp, sizeof(resp),
             "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
             strlen(body), body);
    peer_send_str(fd, resp);
}

/* Quotes back the key it got, held in pe->location. */
static void s_401_echo_key(struct peer *pe, int fd, int conn)
{
    char quoted[300];
    (void)conn;
    snprintf(quoted, sizeof(quoted), "%s.", pe->location);
    send_401(fd, quoted, "\"code\":\"x\"");
}

/* The 5 deltas and the end of s_ok, gzip-compressed (mtime 0). */
static const char gzip_ok[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xad\xcc\xb1\x0a\x83\x30\x10"
                              "\x06\xe0\x3d\x4f\x21\xff\xec"
                              "\x60\xb5\xd3\xcd\xed\x5a\x1f\x40\x44\x82\xb9\x62\x20\x5c\xc4\x9c\xb4"
                              "\x20\x79\xf7\x76\x2c\x74\x2a"
                              "\xcd\xfc\xc1\xe7\xac\x5a\xaa\x0e\xcc\x4b\xf4\x33\x27\xd0\x70\xc0\x8b"
                              "\xe3\x27\xa8\xa9\xe1\x38\xa8"
                              "\x05\xbd\x39\x8a\xb2\x28\x08\xd5\xa3\x41\xae\x71\xf7\xe2\xd3\x32\x6d"
                              "\x6c\x53\x14\x90\xec\x21\xe4"
                              "\x31\x1b\xe3\x7e\xff\x4e\x85\xbf\xb6\xf0\xd7\x15\xfe\xce\xff\x7f\xdf"
                              "\x01\x92\xc6\x15\x1f\xc5\x70"
                              "\xe9\x6f\xd7\xd1\x98\x17\xb8\x17\xea\xcd\xe1\x01\x00\x00";

/* A head with Content-Encoding pe->x, then gzip_ok (when it says gzip and
 * pe->script is NULL) or the script's plain text. */
static void s_encoded(struct peer *pe, int fd, int conn)
{
    char head[256];
    (void)conn;
    snprintf(head, sizeof(head),
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: %s\r\n"
             "Connection: close\r\n\r\n",
             pe->x);
    peer_send_str(fd, head);
    if (pe->script == NULL)
        peer_send(fd, gzip_ok, sizeof(gzip_ok) - 1);
    else
        run_script(pe, fd, pe->script);
}

/* A 200 with Content-Type pe->x, then the script's events. */
static void s_ctype(struct peer *pe, int fd, int conn)
{
    char head[256];
    (void)conn;
    snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nConnection: close\r\n\r\n",
             pe->x);
    peer_send_str(fd, head);
    run_script(pe, fd, pe->script);
}

/* ---- `ttsbuf serve` in its own process ---- */

struct server {
    pid_t pid;
    int port;
    char dir[64];
};

/* Serves " w0" .. " w29", 2.5 ms apart from 20 ms, to every request. */
static void server_start(struct server *sv, const char *listen, int want_port)
{
    static int seq;
    char path[512];
    FILE *f;
    memset(sv, 0, sizeof(*sv));
    snprintf(sv->dir, sizeof(sv->dir), "/tmp/ttsbuf-fsrv-%d-%d", (int)getpid(), seq++);
    snprintf(path, sizeof(path), "mkdir -p %s", sv->dir);
    assert_int_equal(system(path), 0);
    snprintf(path, sizeof(path), "%s/s.jsonl", sv->dir);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int k = 0; k < 30; k++)
        fprintf(f, "{\"t\": %g, \"text\": \" w%d\"}\n", 0.02 + 0.0025 * k, k);
    fclose(f);
    sv->pid = fork();
    assert_true(sv->pid >= 0);
    if (sv->pid == 0) {
        char log[128];
        snprintf(log, sizeof(log), "%s/log", sv->dir);
        if (freopen(log, "w", stderr) == NULL)
            _exit(126);
        execl(tb_test_bin(), tb_test_bin(), "serve", "--listen", listen, "--trace", path,
              (char *)NULL);
        _exit(127);
    }
    if (!want_port)
        return;
    for (int i = 0; i < 500 && sv->port == 0; i++) {
        char *log;
        const char *p;
        tclock_sleep(0.01);
        snprintf(path, sizeof(path), "%s/log", sv->dir);
        log = tb_test_slurp_str(path);
        p = strstr(log, "http://");
        if (p != NULL && (p = strchr(p + 7, ':')) != NULL)
            sv->port = atoi(p + 1);
        free(log);
    }
    if (sv->port == 0) {
        kill(sv->pid, SIGKILL);
        waitpid(sv->pid, NULL, 0);
        fail_msg("ttsbuf serve did not print its port");
    }
}

/* Stops the server; returns its log (caller frees). */
static char *server_stop(struct server *sv)
{
    char path[512];
    char *log;
    int st;
    if (tb_test_interrupt(sv->pid, &st) != 0)
        print_message("ttsbuf serve (pid %d) did not stop on SIGINT: killed\n", (int)sv->pid);
    snprintf(path, sizeof(path), "%s/log", sv->dir);
    log = tb_test_slurp_str(path);
    snprintf(path, sizeof(path), "rm -rf %s", sv->dir);
    if (system(path) != 0)
        print_message("cannot remove %s\n", sv->dir);
    return log;
}

/* The one `ttsbuf serve` the matrix's rows share: started by the first
 * row that needs it, stopped when the group ends. */
static struct server shared;

static int shared_port(void)
{
    if (shared.pid == 0)
        server_start(&shared, "127.0.0.1:0", 1);
    return shared.port;
}

/* ---- the matrix: a row ---- */

struct frow;
typedef void (*frow_check)(const struct frow *r, const struct proc *p, const struct proc extra[2],
                           const struct peer *pe);

enum target {
    AT_PEER,    /* a raw peer here: fn, or script */
    AT_SERVE,   /* `ttsbuf serve` with fault in the model name */
    AT_REFUSED, /* a port nobody listens on */
    AT_NAME     /* a name that cannot resolve (RFC 6761 .invalid) */
};

/* One run of `ttsbuf run` and what it must give.  Zero fields are not
 * used; every row is checked with check_row unless `own` says its check
 * is all. */
struct frow {
    const char *name;
    int every; /* a case in every dialect (else the chat dialect only) */
    enum target at;
    const char *fault;
    peer_fn fn;
    const char *script, *x; /* the peer's script and its bytes */
    size_t xlen;            /* of x, when it holds a NUL */
    const char *location;   /* the peer's location */
    const char *env, *more;
    struct expect e;
    int nodone;          /* expect the dialect's stream without its end */
    double min_s, max_s; /* the run's wall time, in [min_s, max_s) */
    void (*runs)(const char *args, struct proc extra[2]); /* more, while the peer is up */
    frow_check check;
    int own;
};

/* ---- more runs and checks that rows name ---- */

/* The same run with a human report, in extra[0]. */
static void run_human(const char *args, struct proc extra[2])
{
    char cmd[1024];
    proc_dir(&extra[0]);
    snprintf(cmd, sizeof(cmd), "'%s' run %s", tb_test_bin(), args);
    proc_exec(&extra[0], cmd, 0, 0, 0);
}

/* `ttsbuf bench -c 1` with args (-q, --out): its records in p->trace. */
static void bench_out(struct proc *p, const char *args)
{
    char cmd[1024];
    proc_dir(p);
    snprintf(cmd, sizeof(cmd), "'%s' bench -c 1 -q --out %s/b %s", tb_test_bin(), p->dir, args);
    proc_exec(p, cmd, 0, 0, 0);
    free(p->trace); /* a run's trace: there is none */
    p->trace = proc_file(p, "b/records.jsonl");
}

/* And a bench of one request, in extra[1]. */
static void run_human_and_bench(const char *args, struct proc extra[2])
{
    run_human(args, extra);
    bench_cli(&extra[1], NULL, args);
}

static void run_bench_once(const char *args, struct proc extra[2])
{
    char more[900];
    snprintf(more, sizeof(more), "%s --requests 1", args);
    bench_out(&extra[0], more);
}

/* Three tokens an event: the deltas are joined, so the report's token
 * count stands for the texts. */
static void check_burst(const struct frow *r, const struct proc *p, const struct proc extra[2],
                        const struct peer *pe)
{
    cJSON *j = cJSON_Parse(p->out);
    (void)r, (void)extra, (void)pe;
    if (p->code != 0 || j == NULL)
        fail_msg("%s: exit %d, stderr '%s'", W->api, p->code, p->err);
    assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 10);
    assert_int_equal(cJSON_GetObjectItem(j, "usage_tokens")->valueint, 30);
    cJSON_Delete(j);
}

/* Surrogate halves split over events play out as their characters; the
 * orphan at the end is U+FFFD, counted in the JSON and the human report;
 * the trace holds the joined text. */
static void check_halves(const struct frow *r, const struct proc *p, const struct proc extra[2],
                         const struct peer *pe)
{
    struct tb_stream s;
    char path[128], text[64] = "", err[256];
    cJSON *j;
    (void)r, (void)pe;
    if (p->code != 0)
        fail_msg("%s: exit %d, stderr '%s'", W->api, p->code, p->err);
    j = cJSON_Parse(p->out);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "surrogates_replaced")->valueint, 1);
    /* a, 😀b, 𠀀, c, and U+FFFD at the end: five deltas. */
    assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 5);
    cJSON_Delete(j);
    if (strstr(extra[0].out, "1 UTF-16 surrogate half without a partner replaced by U+FFFD") ==
        NULL)
        fail_msg("%s: the human report does not say so:\n%s", W->api, extra[0].out);
    tb_stream_init(&s);
    snprintf(path, sizeof(path), "%s/t.jsonl", p->dir);
    assert_int_equal(tb_trace_load_file(path, &s, err, sizeof(err)), 0);
    for (size_t k = 0; k < s.n; k++)
        strncat(text, tb_stream_text(&s, k), s.ev[k].len);
    tb_stream_free(&s);
    if (strcmp(text, "a\xF0\x9F\x98\x80"
                     "b\xF0\xA0\x80\x80"
                     "c\xEF\xBF\xBD") != 0)
        fail_msg("%s: the trace's text is '%s'", W->api, text);
}

/* Usage that says 0 for 5 content events is not trusted: run reports no
 * token count (null, not 0) and says why, in the JSON and the human
 * report; bench counts the events instead. */
static void check_usage_zero(const struct frow *r, const struct proc *p, const struct proc extra[2],
                             const struct peer *pe)
{
    cJSON *j = cJSON_Parse(p->out), *l, *u;
    (void)r, (void)pe;
    assert_non_null(j);
    u = cJSON_GetObjectItem(j, "usage_tokens");
    if (u != NULL && !cJSON_IsNull(u))
        fail_msg("%s: the report gives tokens: %s", W->api, p->out);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(j, "usage_ignored")));
    assert_int_equal(cJSON_GetObjectItem(j, "usage_ignored")->valueint, 0);
    cJSON_Delete(j);
    if (strstr(extra[0].out, "usage said 0 tokens for 5 content events: not trusted") == NULL)
        fail_msg("%s: the human report does not say so:\n%s", W->api, extra[0].out);
    check_bench(W->api, &extra[1], 1, 5);
    j = cJSON_Parse(extra[1].out);
    l = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "levels"), 0);
    assert_int_equal(cJSON_GetObjectItem(l, "tokens")->valueint, 5);
    assert_int_equal(cJSON_GetObjectItem(l, "usage_ignored")->valueint, 1);
    assert_true(cJSON_GetObjectItem(l, "system_tps")->valuedouble > 0);
    cJSON_Delete(j);
}

/* bench at the same peer: one request, ok, the 5 deltas before the end
 * marker and nothing after it (not a stream over its cap). */
static void check_bench_stops_at_end(const struct frow *r, const struct proc *p,
                                     const struct proc extra[2], const struct peer *pe)
{
    (void)r, (void)p, (void)pe;
    check_bench(W->api, &extra[1], 1, 5);
}

/* Nothing was played: underruns and silence were not measured, so they
 * are null in the JSON (the pre-roll curve's too) and "-" in the human
 * report's pre-roll table, never 0. */
static void check_nothing_played(const struct frow *r, const struct proc *p,
                                 const struct proc extra[2], const struct peer *pe)
{
    cJSON *j = cJSON_Parse(p->out), *c;
    (void)pe;
    assert_non_null(j);
    c = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "preroll_curve"), 0);
    if (!cJSON_IsNull(cJSON_GetObjectItem(j, "underruns")) ||
        !cJSON_IsNull(cJSON_GetObjectItem(j, "gap_total_s")) ||
        !cJSON_IsNull(cJSON_GetObjectItem(j, "gap_max_s")) ||
        !cJSON_IsNull(cJSON_GetObjectItem(c, "underruns")) ||
        !cJSON_IsNull(cJSON_GetObjectItem(c, "gap_total_s")))
        fail_msg("%s: unmeasured numbers are not null: %s", r->name, p->out);
    cJSON_Delete(j);
    if (strstr(extra[0].out, "    0.00 s         -           -       - s       - s          - s") ==
        NULL)
        fail_msg("%s: the pre-roll table:\n%s", r->name, extra[0].out);
}

/* The request offers the encodings it can decode. */
static void check_offers_encoding(const struct frow *r, const struct proc *p,
                                  const struct proc extra[2], const struct peer *pe)
{
    (void)p, (void)extra;
    if (strstr(peer_req(pe, 0), "Accept-Encoding: ") == NULL)
        fail_msg("%s: the request offers no encoding: '%s'", r->name, peer_req(pe, 0));
}

static void check_dns(const struct frow *r, const struct proc *p, const struct proc extra[2],
                      const struct peer *pe)
{
    (void)r, (void)extra, (void)pe;
    if (strstr(p->err, "resolve") == NULL && strstr(p->err, "Resolving timed out") == NULL)
        fail_msg("dns: '%s' does not say the name did not resolve", p->err);
}

/* bench at the same keep-alive peer: the idle timeout fires there too. */
static void check_bench_idle(const struct frow *r, const struct proc *p, const struct proc extra[2],
                             const struct peer *pe)
{
    (void)r, (void)p, (void)pe;
    if (strstr(extra[0].trace, "\"kind\":\"idle_timeout\"") == NULL ||
        strstr(extra[0].trace, "no data for 1 s (--idle-timeout) after 2 deltas") == NULL)
        fail_msg("bench: records '%.600s', stderr '%.300s'", extra[0].trace, extra[0].err);
    assert_true(extra[0].secs < 6);
}

/* A key of any length that a server quotes back is masked: keys shorter
 * than 3 bytes by as many stars, longer ones by "***" (r->x: how it
 * shows; r->location: the key). */
static void check_key_masked(const struct frow *r, const struct proc *p, const struct proc extra[2],
                             const struct peer *pe)
{
    (void)extra;
    assert_non_null(strstr(peer_req(pe, 0), r->location)); /* it was sent */
    if (p->code != 3 || strstr(p->err, r->location) != NULL || strstr(p->err, r->x) == NULL ||
        strstr(p->out, r->location) != NULL)
        fail_msg("key '%s': exit %d, stderr '%s'; want it shown as '%s'", r->location, p->code,
                 p->err, r->x);
}

/* ---- the matrix ---- */

/* `ttsbuf serve`'s status@N fault with a JSON body (its message) and with
 * an HTML one. */
#define STATUS_ROWS(n, json_msg)                                                                   \
    {.name = "status@" #n,                                                                         \
     .every = 1,                                                                                   \
     .at = AT_SERVE,                                                                               \
     .fault = "status@" #n,                                                                        \
     .e = {3, "http", json_msg, 0, n}},                                                            \
    {                                                                                              \
        .name = "status@" #n ":html", .every = 1, .at = AT_SERVE, .fault = "status@" #n ":html",   \
        .e = {                                                                                     \
            3,                                                                                     \
            "http",                                                                                \
            "HTTP " #n ": " #n " ",                                                                \
            0,                                                                                     \
            n                                                                                      \
        }                                                                                          \
    }

#define IDLE1 "no data for 1 s (--idle-timeout) after "

/* clang-format off */
static const struct frow frows[] = {
    /* Against `ttsbuf serve` in every dialect: every HTTP status with a
     * JSON and an HTML body, a 200 that is not an event stream, an error
     * event, malformed JSON, a dropped connection, a stall, a missing end. */
    STATUS_ROWS(400, "(ttsbuf fault status@400)"),
    STATUS_ROWS(401, "(ttsbuf fault status@401)"),
    STATUS_ROWS(403, "(ttsbuf fault status@403)"),
    STATUS_ROWS(404, "(ttsbuf fault status@404)"),
    STATUS_ROWS(429, "HTTP 429: Rate limit reached for requests"),
    STATUS_ROWS(500, "HTTP 500: The server had an error"),
    STATUS_ROWS(503, "(ttsbuf fault status@503)"),
    {.name = "html", .every = 1, .at = AT_SERVE, .fault = "html",
     .e = {3, "not_sse", "HTTP 200 with Content-Type 'text/html", 0, 200}},
    {.name = "error@8", .every = 1, .at = AT_SERVE, .fault = "error@8",
     .e = {3, "error_event", "the server sent an error event ETYPE", 8, 200}},
    {.name = "malformed@5", .every = 1, .at = AT_SERVE, .fault = "malformed@5",
     .e = {3, "json", "bad event JSON ending at stream byte ", 5, 200}},
    {.name = "drop@10", .every = 1, .at = AT_SERVE, .fault = "drop@10",
     .e = {3, "transport",
           "connection lost after 10 deltas: transfer closed with outstanding read data", 10,
           200}},
    {.name = "stall@6:1000", .every = 1, .at = AT_SERVE, .fault = "stall@6:1000",
     .e = {3, "idle_timeout", IDLE1 "6 deltas", 6, 200}},
    {.name = "nodone", .every = 1, .at = AT_SERVE, .fault = "nodone", .nodone = 1},
    {.name = "crlf+comments+burst@3", .every = 1, .at = AT_SERVE,
     .fault = "crlf+comments+burst@3", .check = check_burst, .own = 1},
    /* Against raw peers: what the mock server cannot be made to do, in
     * every dialect. */
    {.name = "reset mid-event", .every = 1, .script = "HD3PZR",
     .e = {3, "transport", "connection lost after 3 deltas: Recv failure: Connection reset", 3,
           200}},
    {.name = "closed mid-event", .every = 1, .script = "HD3P",
     .e = {3, "truncated", "the stream ended mid-event, before END, after 3 deltas", 3, 200}},
    {.name = "no end, no finish_reason", .every = 1, .script = "HD3",
     .e = {3, "truncated", "the stream ended before END, after 3 deltas", 3, 200}},
    /* An idle timeout fires within a second of its time. */
    {.name = "stall forever", .every = 1, .script = "HD2K", .more = "--idle-timeout 1",
     .e = {3, "idle_timeout", IDLE1 "2 deltas", 2, 200}, .max_s = 4},
    {.name = "no answer at all", .every = 1, .script = "K", .more = "--idle-timeout 1",
     .e = {3, "idle_timeout", IDLE1 "0 deltas", 0, 0}, .max_s = 4},
    {.name = "invalid UTF-8 in content", .every = 1, .script = "HD2XD4E", .x = " \xff\xfe",
     .e = {3, "json", "TEXT is not valid UTF-8", 2, 200}},
    {.name = "NUL byte in an event", .every = 1, .script = "HD2XE", .x = " a\0b", .xlen = 4,
     .e = {3, "json", "a NUL byte at byte ", 2, 200}},
    {.name = "clean stream", .every = 1, .script = "HD5E", .e = {0, NULL, NULL, 5, 200}},
    /* The end marker ends the stream: deltas after it (and a second end)
     * are neither recorded nor played nor counted, in run and in bench;
     * a flood after it does not keep the client reading (the peer sends
     * 100 MB until the client closes). */
    {.name = "deltas after the end marker", .every = 1, .script = "HD5A",
     .e = {0, NULL, "bytes of data after END ignored: the stream ends at its end marker", 5,
           200},
     .runs = run_human_and_bench, .check = check_bench_stops_at_end},
    {.name = "100 MB after the end marker", .every = 1, .script = "HD5EF",
     .e = {0, NULL, NULL, 5, 200}, .max_s = 10, .runs = run_human_and_bench,
     .check = check_bench_stops_at_end},
    {.name = "surrogate halves play out", .every = 1, .fn = s_halves, .runs = run_human,
     .check = check_halves, .own = 1},
    {.name = "usage 0 not trusted", .every = 1, .script = "HD5U", .e = {0, NULL, NULL, 5, 200},
     .runs = run_human_and_bench, .check = check_usage_zero},
    /* The stream's media type, exactly (parameters allowed, any case). */
    {.name = "text/event-streamXX is not an event stream", .fn = s_ctype,
     .x = "text/event-streamXX", .script = "D5E",
     .e = {3, "not_sse", "HTTP 200 with Content-Type 'text/event-streamXX', not an event stream",
           0, 200}},
    {.name = "text/event-stream-x is not an event stream", .fn = s_ctype,
     .x = "text/event-stream-x; charset=utf-8", .script = "D5E",
     .e = {3, "not_sse", "with Content-Type 'text/event-stream-x; charset=utf-8', not", 0, 200}},
    {.name = "text/event-stream with parameters", .fn = s_ctype,
     .x = "Text/Event-Stream ; charset=utf-8", .script = "D5E", .e = {0, NULL, NULL, 5, 200}},
    /* Nobody listening; a name that cannot resolve (the connect timeout
     * bounds even a resolver that never answers: it fails fast). */
    {.name = "connection refused", .at = AT_REFUSED,
     .e = {3, "transport", "request failed: Failed to connect to 127.0.0.1 port", 0, 0},
     .runs = run_human, .check = check_nothing_played},
    {.name = "dns", .at = AT_NAME, .env = "RES_OPTIONS='timeout:1 attempts:1'",
     .more = "--connect-timeout 3", .e = {3, "transport", "request failed: ", 0, 0},
     .max_s = 8, .check = check_dns},
    /* Messages that point the right way: a response header over libcurl's
     * cap says so (not "Out of memory"); a compressed stream is decoded
     * (the request offers the encodings); one that cannot be decoded
     * names its Content-Encoding (not "ended mid-event"). */
    {.name = "100 MB response header", .fn = s_huge_header,
     .e = {3, "transport", "request failed: the response header is too large", 0, 200},
     .check = check_offers_encoding},
    {.name = "gzip-encoded stream", .fn = s_encoded, .x = "gzip", .e = {0, NULL, NULL, 5, 200},
     .check = check_offers_encoding},
    {.name = "gzip header on plain text", .fn = s_encoded, .x = "gzip", .script = "D5E",
     .e = {3, "transport", "the response's Content-Encoding \"gzip\" could not be decoded: ", 0,
           200},
     .check = check_offers_encoding},
    {.name = "unknown encoding", .fn = s_encoded, .x = "klingon", .script = "D5E",
     .e = {3, "transport", "the response's Content-Encoding \"klingon\" could not be decoded: ",
           0, 200},
     .check = check_offers_encoding},
    /* One byte a second: bytes keep coming but no event completes, so the
     * idle timeout (2 s: it counts data events, not bytes) fires; with no
     * idle timeout, the total timeout (--timeout 4) bounds it. */
    {.name = "slow drip, idle", .fn = s_drip, .more = "--idle-timeout 2 --timeout 30",
     .e = {3, "idle_timeout", "no data for 2 s (--idle-timeout) after 2 deltas", 2, 200},
     .min_s = 1.9, .max_s = 6},
    {.name = "slow drip, total", .fn = s_drip, .more = "--idle-timeout 0 --timeout 4",
     .e = {3, "timeout", "stopped after 4 s (--timeout), after 2 deltas", 2, 200},
     .min_s = 3.9, .max_s = 8},
    /* Keep-alives forever (SSE comments, empty deltas): the idle timeout
     * counts time without a data event, so it fires in run and in bench
     * alike, though bytes arrive every 0.2 s. */
    {.name = "keep-alives do not hold off the idle timeout", .fn = s_keepalive,
     .more = "--idle-timeout 1 --timeout 30", .e = {3, "idle_timeout", IDLE1 "2 deltas", 2, 200},
     .max_s = 5, .runs = run_bench_once, .check = check_bench_idle},
    {.name = "a key quoted back is masked: sk-abcd", .fn = s_401_echo_key, .location = "sk-abcd",
     .env = "OPENAI_API_KEY=sk-abcd", .x = "provided: ***.", .check = check_key_masked,
     .own = 1},
    {.name = "a key quoted back is masked: Zq", .fn = s_401_echo_key, .location = "Zq",
     .env = "OPENAI_API_KEY=Zq", .x = "provided: **.", .check = check_key_masked, .own = 1},
    {.name = "a key quoted back is masked: k7Q", .fn = s_401_echo_key, .location = "k7Q",
     .env = "OPENAI_API_KEY=k7Q", .x = "provided: ***.", .check = check_key_masked, .own = 1},
};
/* clang-format on */

/* A row in one dialect: what cmocka runs. */
struct fcase {
    const struct frow *row;
    const struct wire *w;
    char name[112];
};

static void frow_run(void **state)
{
    const struct fcase *fc = *state;
    const struct frow *r = fc->row;
    struct expect e = r->nodone ? fc->w->nodone : r->e;
    struct proc p, extra[2];
    struct peer pe;
    const char *more = r->more != NULL ? r->more : "";
    char args[768], msg[200];
    W = fc->w;
    memset(extra, 0, sizeof(extra));
    if (e.msg != NULL) {
        wire_words(e.msg, msg, sizeof(msg));
        e.msg = msg;
    }
    switch (r->at) {
    case AT_SERVE:
        snprintf(args, sizeof(args),
                 "--api %s --base-url http://127.0.0.1:%d%s --model 'mock+%s' --idle-timeout 1",
                 W->api, shared_port(), W->path, r->fault);
        break;
    case AT_REFUSED: /* bound, no listener */
        snprintf(args, sizeof(args), "--base-url http://127.0.0.1:%d/v1 --model m %s",
                 tb_test_refused_port(), more);
        break;
    case AT_NAME:
        snprintf(args, sizeof(args), "--base-url http://no-such-host.invalid/v1 --model m %s",
                 more);
        break;
    case AT_PEER:
        peer_bind(&pe, "127.0.0.1", r->fn != NULL ? r->fn : s_script);
        pe.script = r->script;
        pe.x = r->x;
        pe.xlen = r->xlen != 0 ? r->xlen : r->x != NULL ? strlen(r->x) : 0;
        snprintf(pe.location, sizeof(pe.location), "%s", r->location != NULL ? r->location : "");
        peer_go(&pe);
        peer_args(&pe, args, sizeof(args), more);
        break;
    }
    run_cli(&p, r->env, args);
    if (r->runs != NULL)
        r->runs(args, extra);
    if (r->at == AT_PEER)
        peer_halt(&pe);
    if (!r->own)
        check_row(fc->name, &p, &e);
    if (r->check != NULL)
        r->check(r, &p, extra, r->at == AT_PEER ? &pe : NULL);
    if (p.secs < r->min_s || (r->max_s > 0 && p.secs >= r->max_s))
        fail_msg("%s: took %.2f s, want [%g, %g)", fc->name, p.secs, r->min_s, r->max_s);
    if (r->at == AT_PEER)
        peer_free(&pe);
    for (int i = 0; i < 2; i++)
        if (extra[i].dir[0] != '\0')
            proc_free(&extra[i]);
    proc_free(&p);
    W = &wires[0];
}

/* ---- cases with logic of their own ---- */

/* The cases below speak the chat dialect: a row that failed in another
 * leaves W there. */
static int chat_wire(void **state)
{
    (void)state;
    W = &wires[0];
    return 0;
}

/* TLS: a local server with a self-signed certificate fails verification,
 * which is on by default; --insecure gets through to the stream. */
static void tls_self_signed(void **state)
{
    (void)state;
    static const struct expect want[2] = {
        {3, "transport", "request failed: SSL certificate problem", 0, 0}, {0, NULL, NULL, 5, 200}};
    static const char *const flag[2] = {"", " --insecure"};
    char dir[64], cmd[2048], args[256];
    int port[2];
    tb_test_tls_cert("tls", dir, sizeof(dir));
    {
        /* The response s_server will relay from its stdin. */
        char path[512];
        FILE *f;
        snprintf(path, sizeof(path), "%s/resp", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(sse_head, f);
        for (int k = 0; k < 5; k++)
            fprintf(f, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d\"}}]}\n\n",
                    k);
        fputs("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
              "data: [DONE]\n\n",
              f);
        fclose(f);
    }
    for (int i = 0; i < 2; i++) {
        port[i] = tb_test_free_port();
        /* One connection each; s_server sends its stdin to the client and
         * closes when it ends (the sleep keeps it open until sent). */
        snprintf(cmd, sizeof(cmd),
                 "cd %s && ( (cat resp; sleep 3) | timeout 15 openssl s_server -quiet -naccept 1 "
                 "-accept 127.0.0.1:%d -cert c.pem -key k.pem >/dev/null 2>&1 & )",
                 dir, port[i]);
        assert_int_equal(system(cmd), 0);
    }
    for (int i = 0; i < 2; i++)
        tb_test_wait_port(port[i]); /* s_server accepts one connection */
    for (int i = 0; i < 2; i++) {
        struct proc p;
        snprintf(args, sizeof(args), "--base-url https://127.0.0.1:%d/v1 --model m%s", port[i],
                 flag[i]);
        run_cli(&p, NULL, args);
        check_row(i == 0 ? "tls verify (default)" : "tls --insecure", &p, &want[i]);
        proc_free(&p);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* 100,000 events a second into a ring of 1024 slots: the network thread
 * waits on the full ring, and the wait still honours --timeout. */
static void full_ring_honours_timeout(void **state)
{
    (void)state;
    struct proc p;
    char args[512], log[96];
    int port, pid;
    snprintf(log, sizeof(log), "/tmp/ttsbuf-flood-%d.log", (int)getpid());
    pid = tb_test_serve_spawn("tps=100000,tokens=800000,ttft=0.01", log, &port);
    snprintf(args, sizeof(args),
             "--base-url http://127.0.0.1:%d/v1 --model m --max-tokens 10000000 --timeout 3 "
             "--idle-timeout 2 --ring-slots 1024",
             port);
    run_cli(&p, NULL, args);
    tb_test_serve_stop(pid);
    unlink(log);
    if (p.code != 3 || strstr(p.out, "\"kind\":\"timeout\"") == NULL)
        fail_msg("exit %d, stdout '%.300s', stderr '%.300s'", p.code, p.out, p.err);
    assert_non_null(strstr(p.err, "stopped after 3 s (--timeout)"));
    if (!(p.secs >= 2.9 && p.secs < 7))
        fail_msg("ended after %.2f s, want about 3", p.secs);
    /* The delta that waited on the full ring when the run stopped is in
     * the trace and in the report alike: one count. */
    {
        struct tb_stream s;
        char path[600], err[600];
        cJSON *j = cJSON_Parse(p.out);
        assert_non_null(j);
        tb_stream_init(&s);
        snprintf(path, sizeof(path), "%s/t.jsonl", p.dir);
        assert_int_equal(tb_trace_load_file(path, &s, err, sizeof(err)), 0);
        if ((double)s.n != cJSON_GetObjectItem(j, "events")->valuedouble)
            fail_msg("the report says %g events, the trace holds %zu",
                     cJSON_GetObjectItem(j, "events")->valuedouble, s.n);
        assert_int_equal(s.end.kind, TB_END_TIMEOUT);
        cJSON_Delete(j);
        tb_stream_free(&s);
    }
    proc_free(&p);
}

/* bench caps each stream as run does: a flooding stream ends at
 * 1,000,000 deltas with error kind too_long, the client's peak memory
 * stays that of a capped stream, and the other stream is measured. */
static void bench_caps_a_flooding_stream(void **state)
{
    (void)state;
    struct peer pe;
    struct proc p;
    char args[256];
    peer_start(&pe, "127.0.0.1", s_flood);
    snprintf(args, sizeof(args),
             "--base-url http://127.0.0.1:%d/v1 --model m --requests 2 --idle-timeout 20 "
             "--timeout 120",
             pe.port);
    bench_out(&p, args);
    peer_stop(&pe);
    if (strstr(p.trace, "\"kind\":\"too_long\"") == NULL ||
        strstr(p.trace, "over 1000000 deltas: the stream stops there") == NULL)
        fail_msg("bench: exit %d, records '%.600s', stderr '%.300s'", p.code, p.trace, p.err);
    /* The other request: measured, all 5 deltas. */
    if (strstr(p.trace, "\"error\":null") == NULL)
        fail_msg("bench: no measured stream in '%.800s'", p.trace);
    print_message("bench, a flooding stream capped: peak RSS %ld KiB, %.1f s\n", p.maxrss, p.secs);
    /* A capped stream measured 170 MB peak (1e6 events held, played out,
     * written as a trace; under ASan or TSan 680-715 MB); uncapped, the
     * flood's 3e6 would take three times that. */
    if (p.maxrss > TB_TEST_RSS_SCALE * 240L * 1024)
        fail_msg("peak RSS %ld KiB, over %d MiB", p.maxrss, TB_TEST_RSS_SCALE * 240);
    proc_free(&p);
}

/* Without --timeout a run still has a finite bound (the same field and
 * code path as an explicit value: the test above), and --help says it. */
static void total_timeout_has_a_default(void **state)
{
    (void)state;
    static const char *const cmds[] = {"run --help", "bench --help"}; /* the same row */
    struct tb_cli_request r;
    struct tb_http_req q;
    tb_cli_request_init(&r, 300);
    tb_cli_request_http(&r, "http://127.0.0.1:1/v1", NULL, &q);
    assert_true(q.total_timeout > 0 && q.total_timeout <= 3600);
    assert_true(q.total_timeout == TB_CLI_TIMEOUT_DEFAULT);
    for (size_t i = 0; i < 2; i++) {
        struct tb_test_out o = tb_test_run(cmds[i]);
        assert_non_null(strstr(o.so, "--timeout S        give up on a request after S seconds "
                                     "in all (default 600,"));
        tb_test_out_free(&o);
    }
}

/* A 100 MB line with no newline: the SSE line cap fires at 1 MiB, the
 * client stops reading, its memory stays bounded.  And a 500 with a 100
 * MB HTML body: 64 KiB of it are kept for the message. */
static void huge_line_bounded(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        peer_fn fn;
        struct expect e;
    } rows[] = {
        {"100 MB line",
         s_huge_line,
         {3, "sse", "event stream: line over 1048576 bytes at byte ", 2, 200}},
        {"500 with a 100 MB body",
         s_huge_html_500,
         {3, "http", "HTTP 500: 500 Internal Server Error", 0, 500}},
    };
    struct peer pe;
    struct proc base;
    char args[256];
    /* The baseline: the same client on a small clean stream. */
    peer_start(&pe, "127.0.0.1", s_ok);
    peer_args(&pe, args, sizeof(args), "");
    run_cli(&base, NULL, args);
    peer_stop(&pe);
    assert_int_equal(base.code, 0);
    for (size_t i = 0; i < 2; i++) {
        struct proc p;
        uint64_t sent;
        peer_start(&pe, "127.0.0.1", rows[i].fn);
        peer_args(&pe, args, sizeof(args), "");
        run_cli(&p, NULL, args);
        peer_stop(&pe);
        sent = atomic_load(&pe.sent);
        check_row(rows[i].name, &p, &rows[i].e);
        print_message("    %s: client peak RSS %ld KiB (clean run %ld KiB); the peer got %.1f MiB "
                      "out before the client closed\n",
                      rows[i].name, p.maxrss, base.maxrss, (double)sent / (1 << 20));
        assert_true(p.maxrss < base.maxrss + 16L * 1024); /* the 1 MiB cap, not 100 MB */
        if (i == 0)
            assert_true(sent < HUGE_LINE);
        proc_free(&p);
    }
    proc_free(&base);
}

/* A redirect to `location` from a peer that always redirects, and the
 * run and bench both go through it (the peer in *a, stopped, its requests
 * readable until peer_free). */
static void via_redirect(struct peer *a, peer_fn fn, const char *location, const char *more,
                         int bench, struct proc *p)
{
    char args[512];
    peer_bind(a, "127.0.0.1", fn);
    snprintf(a->location, sizeof(a->location), "%s", location);
    peer_go(a);
    peer_args(a, args, sizeof(args), more);
    if (bench)
        bench_cli(p, "OPENAI_API_KEY=" SECRET_ENV, args); /* follows by the same rules */
    else
        run_cli(p, "OPENAI_API_KEY=" SECRET_ENV, args);
    peer_halt(a);
}

/* A loop: three redirects followed, the fourth is an error; and a
 * redirect to another scheme is not followed.  In run and in bench. */
struct redirect_fail {
    const char *location, *msg;
    int conns;
};

static const struct redirect_fail redirect_fails[] = {
    {"/v1/chat/completions", "request failed: Maximum (3) redirects followed", 4},
    {"file:///etc/passwd", "HTTP 307 redirect to a scheme other than http", 1},
};

static void redirect_fail_run(void **state)
{
    const struct redirect_fail *c = *state;
    struct expect e = {3, "transport", c->msg, 0, 0};
    for (int bench = 0; bench <= 1; bench++) {
        struct peer a;
        struct proc p;
        via_redirect(&a, s_redirect, c->location, "", bench, &p);
        if (!bench) {
            check_row(c->location, &p, &e);
        } else {
            check_bench(c->location, &p, 0, 0);
            if (strstr(p.out, "\"transport\":1") == NULL)
                fail_msg("bench %s: want one transport error: %s", c->location, p.out);
        }
        assert_int_equal(a.conns, c->conns);
        peer_free(&a);
        proc_free(&p);
    }
}

/* Redirects: followed within the origin with the key; to another host
 * or port without the key (and without -H headers). */
static void redirects_never_leak_the_key(void **state)
{
    (void)state;
    static const char *const targets[] = {"127.0.0.2", "127.0.0.1"};
    struct expect ok = {0, NULL, NULL, 5, 200};
    for (size_t i = 0; i < 2; i++) {
        /* Another host, then the same host on another port. */
        struct peer a, b;
        struct proc p, pb;
        char location[128], args[512];
        peer_start(&b, targets[i], s_ok);
        snprintf(location, sizeof(location), "http://%s:%d/v1/chat/completions", b.host, b.port);
        peer_bind(&a, "127.0.0.1", s_redirect);
        snprintf(a.location, sizeof(a.location), "%s", location);
        peer_go(&a);
        peer_args(&a, args, sizeof(args), "-H 'x-api-key: " SECRET_HDR "' -H 'X-Plain: 1'");
        run_cli(&p, "OPENAI_API_KEY=" SECRET_ENV, args);
        bench_cli(&pb, "OPENAI_API_KEY=" SECRET_ENV, args);
        peer_halt(&a);
        peer_halt(&b);
        check_row("cross-origin redirect", &p, &ok);
        check_bench("bench: cross-origin redirect", &pb, 1, 5);
        for (int k = 0; k < 2; k++) {
            assert_non_null(strstr(peer_req(&a, k), "Authorization: Bearer " SECRET_ENV));
            assert_non_null(strstr(peer_req(&a, k), "x-api-key: " SECRET_HDR));
            assert_non_null(strstr(peer_req(&b, k), "POST /v1/chat/completions"));
            assert_non_null(strstr(peer_req(&b, k), "\"stream\":true"));
            if (strstr(peer_req(&b, k), SECRET_ENV) != NULL ||
                strstr(peer_req(&b, k), SECRET_HDR) != NULL ||
                strstr(peer_req(&b, k), "X-Plain") != NULL)
                fail_msg("the redirect target %s:%d got: %s", b.host, b.port, peer_req(&b, k));
        }
        peer_free(&a);
        peer_free(&b);
        proc_free(&p);
        proc_free(&pb);
    }
    for (int bench = 0; bench <= 1; bench++) {
        /* The same origin: the key goes along. */
        struct peer a;
        struct proc p;
        via_redirect(&a, s_redirect_once, "/v2/chat/completions", "-H 'x-api-key: " SECRET_HDR "'",
                     bench, &p);
        if (bench)
            check_bench("bench: same-origin redirect", &p, 1, 5);
        else
            check_row("same-origin redirect", &p, &ok);
        assert_non_null(strstr(peer_req(&a, 1), "POST /v2/chat/completions"));
        assert_non_null(strstr(peer_req(&a, 1), "Authorization: Bearer " SECRET_ENV));
        assert_non_null(strstr(peer_req(&a, 1), "x-api-key: " SECRET_HDR));
        peer_free(&a);
        proc_free(&p);
    }
}

/* ---- secrets: every key, every output of every command ---- */

/* Where a run's key comes from: each kind alone in its runs, in its
 * dialect. */
enum key_from { K_ENV, K_HDR, K_FILE, K_URL };

struct skind {
    const char *name, *api, *env; /* env: the variable that holds the key */
    const char *key;
    enum key_from from;
    const char *verbose; /* how -v shows the request's key, masked */
};

static const struct skind skinds[] = {
    {"OPENAI_API_KEY", "chat", "OPENAI_API_KEY", SECRET_ENV, K_ENV, "Authorization: Bearer ***"},
    {"ANTHROPIC_API_KEY", "anthropic", "ANTHROPIC_API_KEY", SECRET_ANT, K_ENV, "x-api-key: ***"},
    {"-H x-api-key", "chat", NULL, SECRET_HDR, K_HDR, "x-api-key: ***"},
    {"--api-key-file", "chat", NULL, SECRET_FILE, K_FILE, "Authorization: Bearer ***"},
    {"?key= in the URL", "chat", NULL, SECRET_URL, K_URL, "?key=***"},
};

/* A head that echoes the key in response headers (shown by -v). */
static void send_echo_head(int fd, const char *key)
{
    char head[1024];
    snprintf(head, sizeof(head),
             "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nX-Echo-Key: %s\r\n"
             "Set-Cookie: s=%s; Path=/\r\nX-Echo-Part: %.14s\r\nX-Echo-Split: %.7s %.7s %s\r\n"
             "Connection: close\r\n\r\n",
             strcmp(W->api, "ollama") == 0 ? "application/x-ndjson" : "text/event-stream", key, key,
             key, key, key + 7, key + 14);
    peer_send_str(fd, head);
}

/* The stream ends with the key as its finish reason, and no end marker
 * (a warning quotes the reason). */
static void s_echo_finish(struct peer *pe, int fd, int conn)
{
    char ev[512];
    (void)conn;
    send_echo_head(fd, pe->x);
    send_deltas(fd, 3);
    if (strcmp(W->api, "anthropic") == 0)
        snprintf(ev, sizeof(ev),
                 "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
                 "{\"stop_reason\":\"%s\"},\"usage\":{\"output_tokens\":3}}\n\n",
                 pe->x);
    else
        snprintf(ev, sizeof(ev),
                 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"%s\"}]}\n\n",
                 pe->x);
    peer_send_str(fd, ev);
}

/* Two deltas, then an error event quoting the key every way. */
static void s_echo_event(struct peer *pe, int fd, int conn)
{
    char forms[512], ev[1024];
    (void)conn;
    secret_echo_forms(pe->x, 1, forms, sizeof(forms));
    send_echo_head(fd, pe->x);
    send_deltas(fd, 2);
    if (strcmp(W->api, "anthropic") == 0)
        snprintf(ev, sizeof(ev),
                 "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
                 "\"message\":\"bad key %s\"}}\n\n",
                 forms);
    else
        snprintf(ev, sizeof(ev), "data: {\"error\":{\"message\":\"bad key %s\"}}\n\n", forms);
    peer_send_str(fd, ev);
}

/* A 401 quoting the key every way: a JSON body, or (pe->script "plain")
 * a text/plain one, whose first line is the message. */
static void s_echo_401(struct peer *pe, int fd, int conn)
{
    char forms[512], body[1024], resp[1400];
    int plain = pe->script != NULL && strcmp(pe->script, "plain") == 0;
    (void)conn;
    secret_echo_forms(pe->x, !plain, forms, sizeof(forms));
    if (plain)
        snprintf(body, sizeof(body), "Incorrect API key provided: %s\nmore\n", forms);
    else
        snprintf(body, sizeof(body),
                 "{\"error\":{\"message\":\"Incorrect API key provided: %s\","
                 "\"type\":\"invalid_request_error\",\"code\":\"%.14s\"}}",
                 forms, pe->x);
    snprintf(resp, sizeof(resp),
             "HTTP/1.1 401 Unauthorized\r\nContent-Type: %s\r\nX-Echo-Key: %s\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
             plain ? "text/plain" : "application/json", pe->x, strlen(body), body);
    peer_send_str(fd, resp);
}

/* The echoing head, two deltas and an event cut by a reset. */
static void s_echo_reset(struct peer *pe, int fd, int conn)
{
    (void)conn;
    send_echo_head(fd, pe->x);
    run_script(pe, fd, "D2PZR");
}

/* The answer's text quotes the key (pe->x) after two deltas: whole in one
 * delta ("whole"), its first 21 characters in three deltas of 7
 * ("split"), or its first 14 in one ("part"); then a sentence end, more
 * text and the end marker. */
static void s_echo_content(struct peer *pe, int fd, int conn)
{
    const char *x = pe->x;
    (void)conn;
    send_echo_head(fd, x);
    send_deltas(fd, 2);
    send_text(fd, " Your key is ", 13);
    if (strcmp(pe->script, "whole") == 0) {
        send_text(fd, x, strlen(x));
    } else if (strcmp(pe->script, "split") == 0) {
        for (size_t k = 0; k < 3; k++)
            send_text(fd, x + 7 * k, 7);
    } else {
        send_text(fd, x, 14);
    }
    send_text(fd, ". Keep it safe,", 15);
    send_text(fd, " it is yours.", 13);
    send_end(fd);
}

struct secho {
    const char *name;
    peer_fn fn;
    const char *script;
    int run_code;     /* run's exit status */
    const char *said; /* on run's stderr, the key masked */
};

static const struct secho sechoes[] = {
    {"finish_reason", s_echo_finish, NULL, 0, NULL},
    {"an error event", s_echo_event, NULL, 3, "bad key *** ("},
    {"a 401 JSON body", s_echo_401, NULL, 3, "HTTP 401: Incorrect API key provided: *** ("},
    {"a 401 text body", s_echo_401, "plain", 3, "HTTP 401: Incorrect API key provided: *** ("},
    {"a reset mid-event", s_echo_reset, NULL, 3, "connection lost after 2 deltas"},
    {"the answer, whole", s_echo_content, "whole", 0, NULL},
    {"the answer, in three deltas of 7", s_echo_content, "split", 0, NULL},
    {"the answer, its first 14", s_echo_content, "part", 0, NULL},
};

struct secret_case {
    const struct skind *k;
    const struct secho *e;
    char name[112];
};

/* The key with each letter and digit replaced by the next one: an
 * innocuous text of the same shape. */
static void innocuous(const char *key, char *out, size_t len)
{
    size_t i = 0;
    for (; key[i] != '\0' && i + 1 < len; i++) {
        char c = key[i];
        if (c == 'z')
            c = 'a';
        else if (c == 'Z')
            c = 'A';
        else if (c == '9')
            c = '0';
        else if (isalnum((unsigned char)c))
            c++;
        out[i] = c;
    }
    out[i] = '\0';
}

/* The numbers of a run's --json report. */
static void run_numbers(const char *json, double v[4])
{
    static const char *const keys[] = {"events", "chunks", "speech_s", "underruns"};
    cJSON *j = cJSON_Parse(json);
    if (j == NULL)
        fail_msg("run's stdout is not JSON: '%.300s'", json);
    for (int i = 0; i < 4; i++) {
        const cJSON *n = cJSON_GetObjectItem(j, keys[i]);
        if (!cJSON_IsNumber(n))
            fail_msg("run's report has no %s: '%.300s'", keys[i], json);
        v[i] = n->valuedouble;
    }
    cJSON_Delete(j);
}

/*
 * The key masked in the answer changes no number: the run that got it
 * and one that got an innocuous text of the same length in its place
 * (run at the same peer) report the same events, chunks, speech and
 * underruns; their traces have the same deltas (bytes, code points), and
 * simulated on the same arrival times they give the same chunks,
 * underruns, gaps and minimum TPS under every chunking policy but the two
 * that read the words around a sentence end (secrets.h): pipecat's Punkt
 * takes the "e." of "...-HDR-e." for an abbreviation, not "*.".
 */
static void same_numbers(const struct proc *keyed, const struct proc *plain)
{
    struct tb_stream a, b;
    char path[1024], err[256];
    double va[4], vb[4];
    tb_stream_init(&a);
    tb_stream_init(&b);
    run_numbers(keyed->out, va);
    run_numbers(plain->out, vb);
    for (int i = 0; i < 4; i++)
        if (va[i] != vb[i])
            fail_msg(
                "run's numbers with the key echoed: %g %g %g %g; with a plain text: %g %g %g %g",
                va[0], va[1], va[2], va[3], vb[0], vb[1], vb[2], vb[3]);
    snprintf(path, sizeof(path), "%s/t.jsonl", keyed->dir);
    if (tb_trace_load_file(path, &a, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    snprintf(path, sizeof(path), "%s/t.jsonl", plain->dir);
    if (tb_trace_load_file(path, &b, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        const struct tb_event *x = &a.ev[i], *y = &b.ev[i];
        if (x->len != y->len || x->kind != y->kind ||
            tb_utf8_count(tb_stream_text(&a, i), x->len) !=
                tb_utf8_count(tb_stream_text(&b, i), y->len))
            fail_msg("delta %zu: '%.*s' masked, '%.*s' plain", i, (int)x->len,
                     tb_stream_text(&a, i), (int)y->len, tb_stream_text(&b, i));
        b.ev[i].t = x->t;
    }
    for (int p = 0; p < TB_CHUNK__COUNT; p++) {
        struct tb_sim_opts o;
        struct tb_sim_result ra, rb;
        struct tb_clock clk;
        if (p == TB_CHUNK_PIPECAT || p == TB_CHUNK_LIVEKIT)
            continue;
        tb_sim_opts_default(&o);
        o.seg.policy = (enum tb_chunk_policy)p;
        tb_clock_virtual_init(&clk);
        assert_int_equal(tb_sim_run(&a, &o, &clk, NULL, NULL, &ra, err, sizeof(err)), 0);
        tb_clock_virtual_init(&clk);
        assert_int_equal(tb_sim_run(&b, &o, &clk, NULL, NULL, &rb, err, sizeof(err)), 0);
        if (ra.play.chunks != rb.play.chunks || ra.play.underruns != rb.play.underruns ||
            ra.play.min_tps != rb.play.min_tps || ra.play.speech != rb.play.speech ||
            ra.play.gap_total != rb.play.gap_total || ra.play.end != rb.play.end)
            fail_msg("--chunk %s: masked %u chunks, %u underruns, min TPS %g, speech %g s; "
                     "plain %u, %u, %g, %g s",
                     tb_seg_policy_name((enum tb_chunk_policy)p), ra.play.chunks, ra.play.underruns,
                     ra.play.min_tps, ra.play.speech, rb.play.chunks, rb.play.underruns,
                     rb.play.min_tps, rb.play.speech);
    }
    tb_stream_free(&a);
    tb_stream_free(&b);
}

/* The command line's server and key options for kind k against port. */
static void secret_args(char *args, size_t n, const struct skind *k, int port, const char *extra)
{
    snprintf(args, n, "--api %s --base-url 'http://127.0.0.1:%d/v1%s' --model m %s", k->api, port,
             k->from == K_URL ? "?key=" SECRET_URL : "", extra);
}

/* One command of a case (line: its words, '@' standing for its own
 * directory, then args), with the key's variable set; every file it
 * wrote and both streams checked. */
static void secret_cmd(struct proc *p, const struct skind *k, const char *line, const char *args)
{
    char cmd[3072];
    size_t n;
    int files = 0;
    proc_dir(p);
    n = (size_t)snprintf(cmd, sizeof(cmd), "env %s%s%s '%s' ", k->from == K_ENV ? k->env : "",
                         k->from == K_ENV ? "=" : "", k->from == K_ENV ? k->key : "",
                         tb_test_bin());
    for (const char *c = line; *c != '\0' && n + sizeof(p->dir) + 2 < sizeof(cmd); c++) {
        if (*c != '@') {
            cmd[n++] = *c;
            continue;
        }
        memcpy(cmd + n, p->dir, strlen(p->dir));
        n += strlen(p->dir);
    }
    snprintf(cmd + n, sizeof(cmd) - n, " %s", args);
    proc_exec(p, cmd, 0, 0, 0);
    if (p->signal != 0)
        fail_msg("'%s': killed by signal %d", cmd, p->signal);
    secret_assert_dir_unquoted(p->dir, k->key, &files);
    assert_true(files >= 2); /* out and err */
}

/*
 * A hostile server quotes the key back (whole, in part, cut, escaped; in
 * a message, an error event, a finish reason, response headers), and
 * every output of every command is searched for it and for any 8
 * characters of it: run (human and JSON reports, stderr with -v, the
 * trace, the HTML page), bench (the report, stderr, records, summary,
 * traces, the page), sim of the recorded trace and merge of the records.
 */
static void secret_run(void **state)
{
    const struct secret_case *c = *state;
    const struct skind *k = c->k;
    const struct secho *e = c->e;
    char keyfile[96], args[1024], extra[256] = "", sim[512], merge[512];
    struct proc run[4], bench, after[3];
    struct peer pe;
    FILE *f;
    W = strcmp(k->api, "anthropic") == 0 ? &wires[1] : &wires[0];
    snprintf(keyfile, sizeof(keyfile), "/tmp/ttsbuf-key-%d", (int)getpid());
    f = fopen(keyfile, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", SECRET_FILE);
    fclose(f);
    peer_bind(&pe, "127.0.0.1", e->fn);
    pe.x = k->key;
    pe.script = e->script;
    peer_go(&pe);
    if (k->from == K_HDR)
        snprintf(extra, sizeof(extra), "-H 'x-api-key: %s'", SECRET_HDR);
    else if (k->from == K_FILE)
        snprintf(extra, sizeof(extra), "--api-key-file %s", keyfile);
    secret_args(args, sizeof(args), k, pe.port, extra);
    secret_cmd(&run[0], k, "run -v --json --record @/t.jsonl --html @/r.html", args);
    secret_cmd(&run[1], k, "run -v -q --svg @/r.svg", args);
    secret_cmd(&bench, k, "bench -c 1 --requests 1 --idle-timeout 5 --out @/b --html @/b.html",
               args);
    if (e->fn == s_echo_content) {
        /* On the rate model (--html times the voice with eSpeak), and the
         * same answer with an innocuous text where the key was. */
        char plain[128], args2[1024];
        struct peer pe2;
        secret_cmd(&run[2], k, "run --json -q --record @/t.jsonl", args);
        /* A peer of its own: only the peer's thread reads pe.x while it
         * runs (tcp_peer.h). */
        innocuous(k->key, plain, sizeof(plain));
        peer_bind(&pe2, "127.0.0.1", e->fn);
        pe2.x = plain;
        pe2.script = e->script;
        peer_go(&pe2);
        secret_args(args2, sizeof(args2), k, pe2.port, extra);
        secret_cmd(&run[3], k, "run --json -q --record @/t.jsonl", args2);
        peer_stop(&pe2);
    }
    peer_halt(&pe);
    remove(keyfile);
    /* It was sent; -v said so, masked; run said what the server said,
     * masked. */
    assert_non_null(strstr(peer_req(&pe, 0), k->key));
    if (strstr(run[0].err, k->verbose) == NULL)
        fail_msg("-v does not show '%s': %s", k->verbose, run[0].err);
    if (e->fn != s_echo_401 && strstr(run[0].err, "< X-Echo-Key: ***") == NULL)
        fail_msg("-v does not show the echoed header masked: %s", run[0].err);
    if (run[0].code != e->run_code || run[1].code != e->run_code)
        fail_msg("run: exit %d and %d, want %d: %s", run[0].code, run[1].code, e->run_code,
                 run[0].err);
    if (e->said != NULL && strstr(run[0].err, e->said) == NULL)
        fail_msg("run's stderr does not say '%s': %s", e->said, run[0].err);
    if (e->said != NULL && strstr(bench.err, e->said) == NULL)
        fail_msg("bench's stderr does not say '%s': %s", e->said, bench.err);
    if (e->fn == s_echo_finish && strstr(run[0].out, "\"finish_reason\":\"***\"") == NULL)
        fail_msg("--json does not give the finish reason masked: %s", run[0].out);
    if (e->fn == s_echo_content) {
        same_numbers(&run[2], &run[3]);
        proc_free(&run[2]);
        proc_free(&run[3]);
    }
    /* What the recordings make of it. */
    snprintf(sim, sizeof(sim), "--trace %s/t.jsonl", run[0].dir);
    snprintf(merge, sizeof(merge), "%s/b", bench.dir);
    secret_cmd(&after[0], k, "sim --json --html @/s.html", sim);
    secret_cmd(&after[1], k, "sim", sim);
    secret_cmd(&after[2], k, "merge", merge);
    if (e->run_code == 0 && (after[0].code != 0 || after[2].code != 0))
        fail_msg("sim: exit %d (%s); merge: exit %d (%s)", after[0].code, after[0].err,
                 after[2].code, after[2].err);
    peer_free(&pe);
    for (int i = 0; i < 3; i++)
        proc_free(&after[i]);
    proc_free(&run[0]);
    proc_free(&run[1]);
    proc_free(&bench);
}

/* SIGTERM (and SIGINT, in test_live) during a run: the partial trace and
 * JSON report are written, exit 3. */
static void sigterm_flushes_partial(void **state)
{
    (void)state;
    struct peer pe;
    struct proc p;
    struct expect e = {3, "cancelled", "interrupted after 2 deltas", 2, 200};
    char cmd[1024], args[256];
    peer_bind(&pe, "127.0.0.1", s_script);
    pe.script = "HD2K"; /* a stall */
    peer_go(&pe);
    peer_args(&pe, args, sizeof(args), "--idle-timeout 30");
    proc_dir(&p);
    snprintf(cmd, sizeof(cmd), "'%s' run --json -q --record %s/t.jsonl %s", tb_test_bin(), p.dir,
             args);
    p.sig_when = &pe.holding; /* 1 s after the stall begins: the 2 deltas are in */
    proc_exec(&p, cmd, 0, SIGTERM, 1.0);
    peer_stop(&pe);
    check_row("SIGTERM", &p, &e);
    assert_true(p.secs < 10);
    proc_free(&p);
}

/* A reader that has gone: no SIGPIPE death; the trace still written; the
 * output ends quietly (no message) with the command's own status, 0 for
 * a run that succeeded.  And sim, with a report far bigger than a pipe
 * buffer. */
static void sigpipe_never_kills(void **state)
{
    (void)state;
    struct peer pe;
    struct tb_stream s;
    char cmd[2][1024], path[128], err[256];
    struct proc p[2];
    peer_start(&pe, "127.0.0.1", s_ok);
    proc_dir(&p[0]);
    proc_dir(&p[1]);
    snprintf(cmd[0], sizeof(cmd[0]),
             "'%s' run --base-url http://127.0.0.1:%d/v1 --model m -q --record %s/t.jsonl",
             tb_test_bin(), pe.port, p[0].dir);
    snprintf(cmd[1], sizeof(cmd[1]), "'%s' sim --synth tokens=20000 --chunk token --gaps 100000",
             tb_test_bin());
    for (int i = 0; i < 2; i++) {
        proc_exec(&p[i], cmd[i], 1, 0, 0);
        if (p[i].signal != 0)
            fail_msg("%s: killed by signal %d", cmd[i], p[i].signal);
        assert_int_equal(p[i].code, 0);
        assert_string_equal(p[i].err, "");
    }
    peer_stop(&pe);
    tb_stream_init(&s);
    snprintf(path, sizeof(path), "%s/t.jsonl", p[0].dir);
    assert_int_equal(tb_trace_load_file(path, &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 5);
    tb_stream_free(&s);
    proc_free(&p[0]);
    proc_free(&p[1]);
}

/* An endless stream cannot grow the recording without bound: past
 * max_deltas (TB_READER_DELTAS_MAX by default) the run stops, keeping what
 * came.  Through the library, with a cap of 3 against a 5-delta stream. */
static void live_delta_cap(void **state)
{
    (void)state;
    struct peer pe;
    struct tb_live_opts o;
    struct tb_live_result r;
    char url[128];
    peer_start(&pe, "127.0.0.1", s_ok);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", pe.port);
    tb_live_opts_default(&o);
    o.http.url = url;
    o.http.idle_timeout = 5;
    o.req.model = "m";
    o.req.prompt = "hi";
    o.max_deltas = 3;
    assert_int_equal(tb_live_run(&o, &r, NULL, NULL), 0);
    peer_stop(&pe);
    assert_int_equal(r.error, TB_READER_TOO_LONG);
    assert_string_equal(r.message,
                        "over 3 deltas: the stream stops there (the cap of a live stream)");
    assert_int_equal(r.stream.n, 3);
    assert_int_equal(r.sim.content_events, 3);
    tb_live_result_free(&r);
}

/* `serve` binds 127.0.0.1 by default and warns on a non-loopback bind. */
static void serve_warns_off_loopback(void **state)
{
    (void)state;
    struct server sv;
    struct tb_test_out o;
    char *log;
    server_start(&sv, "127.0.0.1:0", 1);
    log = server_stop(&sv);
    assert_null(strstr(log, "warning"));
    assert_non_null(strstr(log, "http://127.0.0.1:"));
    assert_non_null(strstr(log, "ttsbuf serve: 0 requests, ")); /* stopped by the SIGINT */
    free(log);
    server_start(&sv, "0.0.0.0:0", 1);
    log = server_stop(&sv);
    if (strstr(log, "ttsbuf: warning: listening on 0.0.0.0, which is not a loopback address") ==
        NULL)
        fail_msg("no warning for 0.0.0.0: '%s'", log);
    free(log);
    /* The default address, without starting anything: --help says it. */
    o = tb_test_run("serve --help");
    assert_non_null(strstr(o.so, "127.0.0.1:8788"));
    tb_test_out_free(&o);
}

#define NROWS(a) (sizeof(a) / sizeof((a)[0]))
#define NWIRES NROWS(wires)

int tb_test_fault(void)
{
    static const struct CMUnitTest own[] = {
        cmocka_unit_test_setup(tls_self_signed, chat_wire),
        cmocka_unit_test_setup(full_ring_honours_timeout, chat_wire),
        cmocka_unit_test_setup(total_timeout_has_a_default, chat_wire),
        cmocka_unit_test_setup(bench_caps_a_flooding_stream, chat_wire),
        cmocka_unit_test_setup(huge_line_bounded, chat_wire),
        cmocka_unit_test_setup(redirects_never_leak_the_key, chat_wire),
        cmocka_unit_test_setup(sigterm_flushes_partial, chat_wire),
        cmocka_unit_test_setup(sigpipe_never_kills, chat_wire),
        cmocka_unit_test_setup(serve_warns_off_loopback, chat_wire),
        cmocka_unit_test_setup(live_delta_cap, chat_wire),
    };
    static struct fcase cases[NROWS(frows) * NWIRES];
    static struct secret_case secret_cases[NROWS(skinds) * NROWS(sechoes)];
    struct CMUnitTest
        tests[NROWS(cases) + NROWS(redirect_fails) + NROWS(secret_cases) + NROWS(own)];
    size_t n = 0, nc = 0;
    int failed;
    signal(SIGPIPE, SIG_IGN);
    for (size_t i = 0; i < NROWS(frows); i++) {
        for (size_t w = 0; w < (frows[i].every ? NWIRES : 1); w++) {
            struct fcase *c = &cases[nc++];
            c->row = &frows[i];
            c->w = &wires[w];
            snprintf(c->name, sizeof(c->name), "%s: %s", wires[w].api, frows[i].name);
            tests[n++] = (struct CMUnitTest){c->name, frow_run, NULL, NULL, c};
        }
    }
    for (size_t i = 0; i < NROWS(redirect_fails); i++)
        tests[n++] = (struct CMUnitTest){redirect_fails[i].location, redirect_fail_run, chat_wire,
                                         NULL, (void *)&redirect_fails[i]};
    for (size_t i = 0; i < NROWS(secret_cases); i++) {
        struct secret_case *c = &secret_cases[i];
        c->k = &skinds[i / NROWS(sechoes)];
        c->e = &sechoes[i % NROWS(sechoes)];
        snprintf(c->name, sizeof(c->name), "secrets: %s quoted back in %s", c->k->name, c->e->name);
        tests[n++] = (struct CMUnitTest){c->name, secret_run, chat_wire, NULL, c};
    }
    for (size_t i = 0; i < NROWS(own); i++)
        tests[n++] = own[i];
    failed = tb_test_run_group("fault", tests, n, NULL, NULL);
    if (shared.pid != 0)
        free(server_stop(&shared));
    return failed;
}
