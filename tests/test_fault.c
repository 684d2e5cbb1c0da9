/*
 * test_fault.c - the fault matrix, end to end: the real binary (`ttsbuf
 * run --json --record`) against `ttsbuf serve` in its own process (faults
 * through the model name) and against raw TCP peers scripted here (an
 * accept() loop on a thread writing exact bytes), plus TLS against
 * `openssl s_server`.  Each row asserts the exit status, the one-line
 * error on stderr (and that it is the JSON report's error.message), the
 * JSON report's event count, error kind and HTTP status, and that the
 * --record trace holds exactly the deltas received before the fault.
 *
 * Also here: redirects never carry the key to another origin, signals
 * flush partial results, SIGPIPE never kills, the API key appears in no
 * output channel, the 100 MB line keeps memory bounded (the client's peak
 * RSS is measured), and `serve` warns when bound to a non-loopback address.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <arpa/inet.h>
#include <cJSON.h>
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
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/cli/request.h"
#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/live.h"
#include "ttsbuf/trace.h"

#define SECRET_ENV "sk-ttsbuf-FAULT-ENV-7c41f0a9d2"
#define SECRET_FILE "sk-ttsbuf-FAULT-FILE-93be22d1"
#define SECRET_URL "sk-ttsbuf-FAULT-URL-5e0a7733"
#define SECRET_HDR "sk-ttsbuf-FAULT-HDR-e8d1c6b4"
#define HUGE_LINE ((uint64_t)100 << 20)

/* ---- running the binary ---- */

static const char *bin(void)
{
    const char *b = getenv("TTSBUF");
    return b != NULL ? b : "./ttsbuf";
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct proc {
    int code;     /* exit status; -1 when killed by a signal */
    int signal;   /* the signal that killed it, or 0 */
    long maxrss;  /* peak resident set, KiB */
    double secs;  /* wall time */
    char dir[64]; /* out, err, t.jsonl */
    char *out, *err, *trace;
};

static void proc_dir(struct proc *p)
{
    static int seq;
    char cmd[512];
    memset(p, 0, sizeof(*p));
    snprintf(p->dir, sizeof(p->dir), "/tmp/ttsbuf-fault-%d-%d", (int)getpid(), seq++);
    snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", p->dir, p->dir);
    assert_int_equal(system(cmd), 0);
}

static char *proc_file(const struct proc *p, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", p->dir, name);
    return tb_test_slurp_str(path);
}

/* Runs `sh -c "exec <cmd>"` with SIGPIPE back at its default (the test
 * process ignores it, and an ignored signal stays ignored across exec),
 * stdout and stderr to files; `stdin_closed_pipe` gives it a stdout pipe
 * whose reader has gone.  Waits, collecting the peak RSS. */
static void proc_exec(struct proc *p, const char *cmd, int broken_stdout, int sig, double sig_after)
{
    char full[4096];
    struct rusage ru;
    int st, pfd[2] = {-1, -1};
    double t0 = now_s();
    pid_t pid;
    snprintf(full, sizeof(full), "exec %s 2>%s/err", cmd, p->dir);
    if (!broken_stdout)
        snprintf(full + strlen(full), sizeof(full) - strlen(full), " >%s/out", p->dir);
    else
        assert_int_equal(pipe(pfd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        if (broken_stdout) {
            close(pfd[0]);
            dup2(pfd[1], STDOUT_FILENO);
            close(pfd[1]);
        }
        execl("/bin/sh", "sh", "-c", full, (char *)NULL);
        _exit(127);
    }
    if (broken_stdout) {
        close(pfd[0]); /* the reader goes before anything is written */
        close(pfd[1]);
    }
    if (sig != 0) {
        struct timespec ts = {(time_t)sig_after, (long)((sig_after - (time_t)sig_after) * 1e9)};
        nanosleep(&ts, NULL);
        kill(pid, sig);
    }
    assert_int_equal(wait4(pid, &st, 0, &ru), pid);
    p->secs = now_s() - t0;
    p->maxrss = ru.ru_maxrss;
    p->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    p->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    p->out = proc_file(p, "out");
    p->err = proc_file(p, "err");
    p->trace = proc_file(p, "t.jsonl");
}

/* `ttsbuf run` with the row's options, --json, --record and -q. */
static void run_cli(struct proc *p, const char *env, const char *args)
{
    char cmd[3072];
    proc_dir(p);
    snprintf(cmd, sizeof(cmd), "env %s '%s' run --json -q --record %s/t.jsonl %s",
             env != NULL ? env : "", bin(), p->dir, args);
    proc_exec(p, cmd, 0, 0, 0);
}

/* `ttsbuf bench --json` for one request, with args. */
static void bench_cli(struct proc *p, const char *env, const char *args)
{
    char cmd[3072];
    proc_dir(p);
    snprintf(cmd, sizeof(cmd),
             "env %s '%s' bench --json -q -c 1 --requests 1 --idle-timeout 5 --wpm 1000 %s",
             env != NULL ? env : "", bin(), args);
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

static void proc_free(struct proc *p)
{
    char cmd[512];
    free(p->out);
    free(p->err);
    free(p->trace);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", p->dir);
    if (system(cmd) != 0)
        print_message("cannot remove %s\n", p->dir);
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
    /* The trace: a header and exactly the deltas received, in order. */
    tb_stream_init(&s);
    snprintf(msg, sizeof(msg), "%s/t.jsonl", p->dir);
    rc = tb_trace_load_file(msg, &s, msg, sizeof(msg));
    if (e->events == 0) {
        if (rc != TB_EEMPTY || strncmp(p->trace, "{\"ttsbuf_trace\":1", 17) != 0)
            fail_msg("%s: want a trace with a header and no event, got rc %d: '%.200s'", row, rc,
                     p->trace);
    } else {
        if (rc != 0 || s.n != e->events)
            fail_msg("%s: trace holds %zu deltas (rc %d: %s), want %zu", row, s.n, rc, msg,
                     e->events);
        for (size_t k = 0; k < s.n; k++) {
            char want[32];
            delta_text(k, want, sizeof(want));
            if (s.ev[k].len != strlen(want) || memcmp(tb_stream_text(&s, k), want, s.ev[k].len))
                fail_msg("%s: trace delta %zu is '%.*s', want '%s'", row, k, (int)s.ev[k].len,
                         tb_stream_text(&s, k), want);
            assert_true(k == 0 || s.ev[k].t >= s.ev[k - 1].t);
        }
    }
    tb_stream_free(&s);
}

/* ---- a raw TCP peer ---- */

struct peer;
typedef void (*peer_fn)(struct peer *pe, int fd, int conn);

#define PEER_REQS 8

struct peer {
    int lfd, port;
    char host[32];
    pthread_t th;
    peer_fn fn;
    int conns;             /* accepted so far */
    char *req[PEER_REQS];  /* each request as received (head + body) */
    char location[256];    /* for the redirecting scripts */
    _Atomic uint64_t sent; /* bytes a filling script got out */
    atomic_int stop;
};

static int send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_str(int fd, const char *s)
{
    return send_all(fd, s, strlen(s));
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Reads one request: the head, then Content-Length bytes of body. */
static char *read_request(int fd)
{
    size_t cap = 1 << 16, n = 0, need = 0;
    char *buf = malloc(cap + 1);
    double t0 = now_s();
    assert_non_null(buf);
    while (n < cap && now_s() - t0 < 5) {
        struct pollfd pfd = {fd, POLLIN, 0};
        ssize_t r;
        char *end;
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        r = recv(fd, buf + n, cap - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
        buf[n] = '\0';
        end = strstr(buf, "\r\n\r\n");
        if (end != NULL && need == 0) {
            const char *cl = strstr(buf, "Content-Length: ");
            if (cl == NULL)
                cl = strstr(buf, "content-length: ");
            need = (size_t)(end + 4 - buf) + (cl != NULL ? (size_t)atol(cl + 16) : 0);
        }
        if (need != 0 && n >= need)
            break;
    }
    buf[n] = '\0';
    return buf;
}

/* Holds the connection open until the client closes it or the test ends. */
static void hold(struct peer *pe, int fd)
{
    char c[256];
    while (!atomic_load(&pe->stop)) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 50) > 0 && recv(fd, c, sizeof(c), 0) <= 0)
            return;
    }
}

static void *peer_main(void *arg)
{
    struct peer *pe = arg;
    while (!atomic_load(&pe->stop)) {
        struct pollfd pfd = {pe->lfd, POLLIN, 0};
        int fd, conn;
        char *req;
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        fd = accept(pe->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        req = read_request(fd);
        conn = pe->conns++;
        if (conn < PEER_REQS)
            pe->req[conn] = req;
        else
            free(req);
        pe->fn(pe, fd, conn);
        close(fd);
    }
    return NULL;
}

/* Binds and listens (the port is then known); peer_go starts the thread,
 * after which only it touches the peer until peer_halt. */
static void peer_bind(struct peer *pe, const char *host, peer_fn fn)
{
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    int one = 1;
    memset(pe, 0, sizeof(*pe));
    snprintf(pe->host, sizeof(pe->host), "%s", host);
    pe->fn = fn;
    pe->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(pe->lfd >= 0);
    setsockopt(pe->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, host, &a.sin_addr), 1);
    assert_int_equal(bind(pe->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(pe->lfd, 16), 0);
    assert_int_equal(getsockname(pe->lfd, (struct sockaddr *)&a, &al), 0);
    pe->port = ntohs(a.sin_port);
}

static void peer_go(struct peer *pe)
{
    assert_int_equal(pthread_create(&pe->th, NULL, peer_main, pe), 0);
}

static void peer_start(struct peer *pe, const char *host, peer_fn fn)
{
    peer_bind(pe, host, fn);
    peer_go(pe);
}

/* Stops the peer; its requests stay readable until peer_free. */
static void peer_halt(struct peer *pe)
{
    atomic_store(&pe->stop, 1);
    pthread_join(pe->th, NULL);
    close(pe->lfd);
}

static void peer_free(struct peer *pe)
{
    for (int i = 0; i < PEER_REQS; i++)
        free(pe->req[i]);
}

static void peer_stop(struct peer *pe)
{
    peer_halt(pe);
    peer_free(pe);
}

static const char *peer_req(const struct peer *pe, int i)
{
    return i < pe->conns && i < PEER_REQS && pe->req[i] != NULL ? pe->req[i] : "";
}

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
    return send_all(fd, ev, a + n + b);
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
    send_str(fd, W->end);
}

static void reset(int fd)
{
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)); /* close sends RST */
}

static void s_ok(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    send_str(fd, W->head);
    send_deltas(fd, 5);
    send_end(fd);
}

/* Text sliced by UTF-16 code units, as JavaScript servers do: an emoji
 * and a CJK extension B character each split over two events, then a
 * high half that never gets its partner. */
static void s_halves(struct peer *pe, int fd, int conn)
{
    static const char *const parts[] = {"a\\ud83d", "\\ude00b\\ud840", "\\udc00", "c\\ud83d"};
    (void)pe;
    (void)conn;
    send_str(fd, W->head);
    for (size_t i = 0; i < 4; i++)
        send_text(fd, parts[i], strlen(parts[i]));
    send_end(fd);
}

/* A gateway whose upstream sent no usage: it says 0. */
static void s_usage_zero(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    send_str(fd, W->head);
    send_deltas(fd, 5);
    send_str(fd, W->end_usage0);
}

static void s_reset_mid_event(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    send_str(fd, W->head);
    send_deltas(fd, 3);
    send_str(fd, W->pre);
    send_str(fd, " w3");
    sleep_s(0.2); /* the client has read it all: the reset is mid-event */
    reset(fd);
}

static void s_close_mid_event(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    send_str(fd, W->head);
    send_deltas(fd, 3);
    send_str(fd, W->pre);
    send_str(fd, " w3");
}

static void s_no_done(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    send_str(fd, W->head);
    send_deltas(fd, 3);
}

static void s_stall(struct peer *pe, int fd, int conn)
{
    (void)conn;
    send_str(fd, W->head);
    send_deltas(fd, 2);
    hold(pe, fd);
}

static void s_silent(struct peer *pe, int fd, int conn)
{
    (void)conn;
    hold(pe, fd);
}

static void s_drip(struct peer *pe, int fd, int conn)
{
    static const char ev[] = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w2\"}}]}";
    (void)conn;
    send_str(fd, sse_head);
    send_deltas(fd, 2);
    for (size_t i = 0; i < sizeof(ev) - 1 && !atomic_load(&pe->stop); i++) {
        if (send_all(fd, ev + i, 1) != 0)
            return;
        for (int k = 0; k < 20 && !atomic_load(&pe->stop); k++)
            sleep_s(0.05); /* one byte a second */
    }
}

/* Two deltas, then only keep-alives, every 0.2 s, until the client goes:
 * SSE comments and empty deltas (what gateways send while a model is
 * stuck).  Bytes keep coming; data never does. */
static void s_keepalive(struct peer *pe, int fd, int conn)
{
    (void)conn;
    send_str(fd, sse_head);
    send_deltas(fd, 2);
    for (int k = 0; !atomic_load(&pe->stop); k++) {
        if (send_str(fd, k % 2 ? ": keep-alive\n\n"
                               : "data: {\"choices\":[{\"index\":0,\"delta\":{}}]}\n\n") != 0)
            return;
        sleep_s(0.2);
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
    send_str(fd, sse_head);
    for (int n = 0; n < FLOOD_DELTAS / PER_BLOCK && !atomic_load(&pe->stop); n++)
        if (send_all(fd, block, PER_BLOCK * (sizeof(ev) - 1)) != 0)
            break;
    free(block);
    send_end(fd);
}

/* After `prefix`, 100 MB of 'x' with no newline, until the client goes. */
static void fill(struct peer *pe, int fd, const char *prefix)
{
    static char block[1 << 16];
    memset(block, 'x', sizeof(block));
    if (send_str(fd, prefix) != 0)
        return;
    for (uint64_t n = 0; n < HUGE_LINE && !atomic_load(&pe->stop); n += sizeof(block)) {
        if (send_all(fd, block, sizeof(block)) != 0)
            return;
        atomic_fetch_add(&pe->sent, sizeof(block));
    }
}

static void s_huge_line(struct peer *pe, int fd, int conn)
{
    (void)conn;
    send_str(fd, sse_head);
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

static void s_bad_utf8(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    send_str(fd, W->head);
    send_deltas(fd, 2);
    send_text(fd, " \xff\xfe", 3);
    send_deltas(fd, 4);
    send_end(fd);
}

static void s_nul(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    send_str(fd, W->head);
    send_deltas(fd, 2);
    send_text(fd, " a\0b", 4);
    send_end(fd);
}

static void s_redirect(struct peer *pe, int fd, int conn)
{
    char head[512];
    (void)conn;
    snprintf(head, sizeof(head),
             "HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n"
             "Connection: close\r\n\r\n",
             pe->location);
    send_str(fd, head);
}

/* First a redirect (to pe->location), then a stream. */
static void s_redirect_once(struct peer *pe, int fd, int conn)
{
    if (conn == 0)
        s_redirect(pe, fd, conn);
    else
        s_ok(pe, fd, conn);
}

static void s_401_echo(struct peer *pe, int fd, int conn)
{
    char body[1024], resp[1400];
    (void)pe;
    (void)conn;
    /* A server that quotes the key back, whatever way it came. */
    snprintf(body, sizeof(body),
             "{\"error\":{\"message\":\"Incorrect API key provided: %s / %s / %s / %s\","
             "\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}",
             SECRET_ENV, SECRET_FILE, SECRET_URL, SECRET_HDR);
    snprintf(resp, sizeof(resp),
             "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
             strlen(body), body);
    send_str(fd, resp);
}

/* A server quoting back the key it got, held in pe->location. */
static void s_401_echo_key(struct peer *pe, int fd, int conn)
{
    char body[512], resp[800];
    (void)conn;
    snprintf(body, sizeof(body),
             "{\"error\":{\"message\":\"Incorrect API key provided: %s.\",\"code\":\"x\"}}",
             pe->location);
    snprintf(resp, sizeof(resp),
             "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
             strlen(body), body);
    send_str(fd, resp);
}

/* A header line of 100 MB (the client gives up long before). */
static void s_huge_header(struct peer *pe, int fd, int conn)
{
    (void)conn;
    fill(pe, fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Big: ");
}

/* The 5 deltas and the end of s_ok, gzip-compressed (mtime 0). */
static const char gzip_ok[] =
    "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xad\xcc\xb1\x0a\x83\x30\x10\x06\xe0\x3d\x4f\x21\xff\xec"
    "\x60\xb5\xd3\xcd\xed\x5a\x1f\x40\x44\x82\xb9\x62\x20\x5c\xc4\x9c\xb4\x20\x79\xf7\x76\x2c\x74\x2a"
    "\xcd\xfc\xc1\xe7\xac\x5a\xaa\x0e\xcc\x4b\xf4\x33\x27\xd0\x70\xc0\x8b\xe3\x27\xa8\xa9\xe1\x38\xa8"
    "\x05\xbd\x39\x8a\xb2\x28\x08\xd5\xa3\x41\xae\x71\xf7\xe2\xd3\x32\x6d\x6c\x53\x14\x90\xec\x21\xe4"
    "\x31\x1b\xe3\x7e\xff\x4e\x85\xbf\xb6\xf0\xd7\x15\xfe\xce\xff\x7f\xdf\x01\x92\xc6\x15\x1f\xc5\x70"
    "\xe9\x6f\xd7\xd1\x98\x17\xb8\x17\xea\xcd\xe1\x01\x00\x00";

static void encoded_head(int fd, const char *encoding)
{
    char head[256];
    snprintf(head, sizeof(head),
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: %s\r\n"
             "Connection: close\r\n\r\n",
             encoding);
    send_str(fd, head);
}

static void s_gzip(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    encoded_head(fd, "gzip");
    send_all(fd, gzip_ok, sizeof(gzip_ok) - 1);
}

/* Says gzip, sends plain text. */
static void s_gzip_lie(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    encoded_head(fd, "gzip");
    send_deltas(fd, 5);
    send_end(fd);
}

static void s_unknown_encoding(struct peer *pe, int fd, int conn)
{
    (void)pe;
    (void)conn;
    encoded_head(fd, "klingon");
    send_deltas(fd, 5);
    send_end(fd);
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
    char path[512];
    FILE *f;
    memset(sv, 0, sizeof(*sv));
    snprintf(sv->dir, sizeof(sv->dir), "/tmp/ttsbuf-fsrv-%d", (int)getpid());
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
        execl(bin(), bin(), "serve", "--listen", listen, "--trace", path, (char *)NULL);
        _exit(127);
    }
    if (!want_port)
        return;
    for (int i = 0; i < 500 && sv->port == 0; i++) {
        char *log;
        const char *p;
        sleep_s(0.01);
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
    kill(sv->pid, SIGINT);
    waitpid(sv->pid, &st, 0);
    snprintf(path, sizeof(path), "%s/log", sv->dir);
    log = tb_test_slurp_str(path);
    snprintf(path, sizeof(path), "rm -rf %s", sv->dir);
    if (system(path) != 0)
        print_message("cannot remove %s\n", sv->dir);
    return log;
}

/* ---- the rows ---- */

/* Against `ttsbuf serve` in the dialect W: every HTTP status with a JSON
 * and an HTML body, a 200 that is not an event stream, an error event,
 * malformed JSON, a dropped connection, a stall, a missing end. */
static void matrix_serve_dialect(const struct server *sv)
{
    static const int statuses[] = {400, 401, 403, 404, 429, 500, 503};
    static const struct {
        const char *fault;
        struct expect e;
    } rows[] = {
        {"html", {3, "not_sse", "HTTP 200 with Content-Type 'text/html", 0, 200}},
        {"error@8", {3, "error_event", "the server sent an error event ETYPE", 8, 200}},
        {"malformed@5", {3, "json", "bad event JSON ending at stream byte ", 5, 200}},
        {"drop@10",
         {3, "transport",
          "connection lost after 10 deltas: transfer closed with outstanding read data", 10, 200}},
        {"stall@6:1000",
         {3, "idle_timeout", "no data for 1 s (--idle-timeout) after 6 deltas", 6, 200}},
        {"nodone", {0, NULL, NULL, 30, 200}}, /* W->nodone */
        {"crlf+comments+burst@3", {0, NULL, NULL, 10, 200}},
    };
    char args[512], row[96], msg[160];
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
        for (int html = 0; html <= 1; html++) {
            struct proc p;
            struct expect e = {3, "http", msg, 0, statuses[i]};
            if (html)
                snprintf(msg, sizeof(msg), "HTTP %d: %d ", statuses[i], statuses[i]);
            else if (statuses[i] == 429)
                snprintf(msg, sizeof(msg), "HTTP 429: Rate limit reached for requests");
            else if (statuses[i] == 500)
                snprintf(msg, sizeof(msg), "HTTP 500: The server had an error");
            else
                snprintf(msg, sizeof(msg), "(ttsbuf fault status@%d)", statuses[i]);
            snprintf(args, sizeof(args),
                     "--api %s --base-url http://127.0.0.1:%d%s --model 'mock+status@%d%s' "
                     "--idle-timeout 1",
                     W->api, sv->port, W->path, statuses[i], html ? ":html" : "");
            snprintf(row, sizeof(row), "%s: status@%d%s", W->api, statuses[i], html ? ":html" : "");
            run_cli(&p, NULL, args);
            check_row(row, &p, &e);
            proc_free(&p);
        }
    }
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct proc p;
        struct expect e = strcmp(rows[i].fault, "nodone") == 0 ? W->nodone : rows[i].e;
        if (e.msg != NULL) {
            wire_words(e.msg, msg, sizeof(msg));
            e.msg = msg;
        }
        snprintf(args, sizeof(args),
                 "--api %s --base-url http://127.0.0.1:%d%s --model 'mock+%s' --idle-timeout 1",
                 W->api, sv->port, W->path, rows[i].fault);
        snprintf(row, sizeof(row), "%s: %s", W->api, rows[i].fault);
        run_cli(&p, NULL, args);
        if (strstr(rows[i].fault, "burst") != NULL) {
            /* Three tokens an event: the deltas are joined, so check the
             * report's token count instead of the texts. */
            cJSON *j = cJSON_Parse(p.out);
            if (p.code != 0 || j == NULL)
                fail_msg("%s: exit %d, stderr '%s'", row, p.code, p.err);
            assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 10);
            assert_int_equal(cJSON_GetObjectItem(j, "usage_tokens")->valueint, 30);
            cJSON_Delete(j);
        } else {
            check_row(row, &p, &e);
        }
        proc_free(&p);
    }
}

/* The serve matrix in every dialect. */
static void matrix_against_serve(void **state)
{
    struct server sv;
    (void)state;
    server_start(&sv, "127.0.0.1:0", 1);
    for (size_t w = 0; w < sizeof(wires) / sizeof(wires[0]); w++) {
        W = &wires[w];
        matrix_serve_dialect(&sv);
    }
    W = &wires[0];
    free(server_stop(&sv));
}

/* Nobody listening; a name that cannot resolve (RFC 6761 .invalid; the
 * connect timeout bounds even a resolver that never answers). */
static void refused_and_dns(void **state)
{
    (void)state;
    struct proc p;
    struct expect refused = {3, "transport", "request failed: Failed to connect to 127.0.0.1 port",
                             0, 0};
    struct expect dns = {3, "transport", "request failed: ", 0, 0};
    char args[256];
    int port = tb_test_free_port(); /* free a moment ago, no listener */
    snprintf(args, sizeof(args), "--base-url http://127.0.0.1:%d/v1 --model m", port);
    run_cli(&p, NULL, args);
    check_row("connection refused", &p, &refused);
    proc_free(&p);

    run_cli(&p, "RES_OPTIONS='timeout:1 attempts:1'",
            "--base-url http://no-such-host.invalid/v1 --model m --connect-timeout 3");
    check_row("dns", &p, &dns);
    if (strstr(p.err, "resolve") == NULL && strstr(p.err, "Resolving timed out") == NULL)
        fail_msg("dns: '%s' does not say the name did not resolve", p.err);
    assert_true(p.secs < 8); /* fails fast, never hangs */
    proc_free(&p);
}

/* TLS: a local server with a self-signed certificate fails verification,
 * which is on by default; --insecure gets through to the stream. */
static void tls_self_signed(void **state)
{
    (void)state;
    struct proc p;
    struct expect bad = {3, "transport", "request failed: SSL certificate problem", 0, 0};
    struct expect ok = {0, NULL, NULL, 5, 200};
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
    snprintf(args, sizeof(args), "--base-url https://127.0.0.1:%d/v1 --model m", port[0]);
    run_cli(&p, NULL, args);
    check_row("tls verify (default)", &p, &bad);
    proc_free(&p);
    snprintf(args, sizeof(args), "--base-url https://127.0.0.1:%d/v1 --model m --insecure",
             port[1]);
    run_cli(&p, NULL, args);
    check_row("tls --insecure", &p, &ok);
    proc_free(&p);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Against raw peers: what the mock server cannot be made to do, in
 * every dialect. */
static void matrix_against_raw_peer(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        peer_fn fn;
        const char *more;
        struct expect e;
    } rows[] = {
        {"reset mid-event",
         s_reset_mid_event,
         "",
         {3, "transport", "connection lost after 3 deltas: Recv failure: Connection reset", 3,
          200}},
        {"closed mid-event",
         s_close_mid_event,
         "",
         {3, "truncated", "the stream ended mid-event, before END, after 3 deltas", 3, 200}},
        {"no end, no finish_reason",
         s_no_done,
         "",
         {3, "truncated", "the stream ended before END, after 3 deltas", 3, 200}},
        {"stall forever",
         s_stall,
         "--idle-timeout 1",
         {3, "idle_timeout", "no data for 1 s (--idle-timeout) after 2 deltas", 2, 200}},
        {"no answer at all",
         s_silent,
         "--idle-timeout 1",
         {3, "idle_timeout", "no data for 1 s (--idle-timeout) after 0 deltas", 0, 0}},
        {"invalid UTF-8 in content",
         s_bad_utf8,
         "",
         {3, "json", "TEXT is not valid UTF-8", 2, 200}},
        {"NUL byte in an event", s_nul, "", {3, "json", "a NUL byte at byte ", 2, 200}},
        {"clean stream", s_ok, "", {0, NULL, NULL, 5, 200}},
    };
    for (size_t w = 0; w < sizeof(wires) / sizeof(wires[0]); w++) {
        W = &wires[w];
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
            struct peer pe;
            struct proc p;
            struct expect e = rows[i].e;
            char args[512], row[96], msg[160];
            snprintf(row, sizeof(row), "%s: %s", W->api, rows[i].name);
            if (e.msg != NULL) {
                wire_words(e.msg, msg, sizeof(msg));
                e.msg = msg;
            }
            peer_start(&pe, "127.0.0.1", rows[i].fn);
            peer_args(&pe, args, sizeof(args), rows[i].more);
            run_cli(&p, NULL, args);
            peer_stop(&pe);
            check_row(row, &p, &e);
            if (e.kind != NULL && strcmp(e.kind, "idle_timeout") == 0)
                assert_true(p.secs < 4); /* fires within a second of its time */
            proc_free(&p);
        }
    }
    W = &wires[0];
}

/* Surrogate halves split over events play out as their characters in
 * every dialect; the orphan at the end is U+FFFD, counted in the JSON
 * and the human report; the trace holds the joined text. */
static void surrogate_halves_play_out(void **state)
{
    (void)state;
    for (size_t w = 0; w < sizeof(wires) / sizeof(wires[0]); w++) {
        struct peer pe;
        struct proc p, ph;
        struct tb_stream s;
        char args[512], cmd[1024], text[64] = "", err[256];
        cJSON *j;
        W = &wires[w];
        peer_start(&pe, "127.0.0.1", s_halves);
        peer_args(&pe, args, sizeof(args), "");
        run_cli(&p, NULL, args);
        proc_dir(&ph);
        snprintf(cmd, sizeof(cmd), "'%s' run -q %s", bin(), args);
        proc_exec(&ph, cmd, 0, 0, 0);
        peer_stop(&pe);
        if (p.code != 0)
            fail_msg("%s: exit %d, stderr '%s'", W->api, p.code, p.err);
        j = cJSON_Parse(p.out);
        assert_non_null(j);
        assert_int_equal(cJSON_GetObjectItem(j, "surrogates_replaced")->valueint, 1);
        /* a, 😀b, 𠀀, c, and U+FFFD at the end: five deltas. */
        assert_int_equal(cJSON_GetObjectItem(j, "events")->valueint, 5);
        cJSON_Delete(j);
        if (strstr(ph.out, "1 UTF-16 surrogate half without a partner replaced by U+FFFD") == NULL)
            fail_msg("%s: the human report does not say so:\n%s", W->api, ph.out);
        tb_stream_init(&s);
        snprintf(cmd, sizeof(cmd), "%s/t.jsonl", p.dir);
        assert_int_equal(tb_trace_load_file(cmd, &s, err, sizeof(err)), 0);
        for (size_t k = 0; k < s.n; k++)
            strncat(text, tb_stream_text(&s, k), s.ev[k].len);
        tb_stream_free(&s);
        if (strcmp(text, "a\xF0\x9F\x98\x80"
                         "b\xF0\xA0\x80\x80"
                         "c\xEF\xBF\xBD") != 0)
            fail_msg("%s: the trace's text is '%s'", W->api, text);
        proc_free(&p);
        proc_free(&ph);
    }
    W = &wires[0];
}

/* Usage that says 0 for 5 content events is not trusted, in any
 * dialect: run reports no token count (null, not 0) and says why, in
 * the JSON and the human report; bench counts the events instead. */
static void usage_zero_not_trusted(void **state)
{
    (void)state;
    for (size_t w = 0; w < sizeof(wires) / sizeof(wires[0]); w++) {
        struct expect ok = {0, NULL, NULL, 5, 200};
        struct peer pe;
        struct proc p, ph, pb;
        char args[512], row[64];
        cJSON *j, *l;
        W = &wires[w];
        snprintf(row, sizeof(row), "%s: usage 0", W->api);
        peer_start(&pe, "127.0.0.1", s_usage_zero);
        peer_args(&pe, args, sizeof(args), "");
        run_cli(&p, NULL, args);
        proc_dir(&ph);
        {
            char cmd[1024];
            snprintf(cmd, sizeof(cmd), "'%s' run -q %s", bin(), args);
            proc_exec(&ph, cmd, 0, 0, 0);
        }
        bench_cli(&pb, NULL, args);
        peer_stop(&pe);
        check_row(row, &p, &ok);
        j = cJSON_Parse(p.out);
        assert_non_null(j);
        if (!cJSON_IsNull(cJSON_GetObjectItem(j, "usage_tokens")) &&
            cJSON_GetObjectItem(j, "usage_tokens") != NULL)
            fail_msg("%s: the report gives tokens: %s", row, p.out);
        assert_int_equal(cJSON_GetObjectItem(j, "usage_ignored")->valueint, 0);
        assert_true(cJSON_IsNumber(cJSON_GetObjectItem(j, "usage_ignored")));
        cJSON_Delete(j);
        if (strstr(ph.out, "usage said 0 tokens for 5 content events: not trusted") == NULL)
            fail_msg("%s: the human report does not say so:\n%s", row, ph.out);
        check_bench(row, &pb, 1, 5);
        j = cJSON_Parse(pb.out);
        l = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "levels"), 0);
        assert_int_equal(cJSON_GetObjectItem(l, "tokens")->valueint, 5);
        assert_int_equal(cJSON_GetObjectItem(l, "usage_ignored")->valueint, 1);
        assert_true(cJSON_GetObjectItem(l, "system_tps")->valuedouble > 0);
        cJSON_Delete(j);
        proc_free(&p);
        proc_free(&ph);
        proc_free(&pb);
    }
    W = &wires[0];
}

/* Messages that point the right way: a response header over libcurl's
 * cap says so (not "Out of memory"); a compressed stream is decoded (the
 * request offers the encodings); one that cannot be decoded names its
 * Content-Encoding (not "ended mid-event"). */
static void messages_name_the_cause(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        peer_fn fn;
        struct expect e;
    } rows[] = {
        {"100 MB response header",
         s_huge_header,
         {3, "transport", "request failed: the response header is too large", 0, 200}},
        {"gzip-encoded stream", s_gzip, {0, NULL, NULL, 5, 200}},
        {"gzip header on plain text",
         s_gzip_lie,
         {3, "transport", "the response's Content-Encoding \"gzip\" could not be decoded: ", 0,
          200}},
        {"unknown encoding",
         s_unknown_encoding,
         {3, "transport", "the response's Content-Encoding \"klingon\" could not be decoded: ", 0,
          200}},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct peer pe;
        struct proc p;
        char args[512];
        peer_start(&pe, "127.0.0.1", rows[i].fn);
        peer_args(&pe, args, sizeof(args), "");
        run_cli(&p, NULL, args);
        peer_halt(&pe);
        check_row(rows[i].name, &p, &rows[i].e);
        if (strstr(peer_req(&pe, 0), "Accept-Encoding: ") == NULL)
            fail_msg("%s: the request offers no encoding: '%s'", rows[i].name, peer_req(&pe, 0));
        peer_free(&pe);
        proc_free(&p);
    }
}

/* A key of any length that a server quotes back is masked: keys shorter
 * than 3 bytes by as many stars, longer ones by "***". */
static void short_keys_masked(void **state)
{
    (void)state;
    static const struct {
        const char *key, *shown;
    } keys[] = {{"sk-abcd", "provided: ***."}, {"Zq", "provided: **."}, {"k7Q", "provided: ***."}};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        struct peer pe;
        struct proc p;
        char env[64], args[512];
        peer_bind(&pe, "127.0.0.1", s_401_echo_key);
        snprintf(pe.location, sizeof(pe.location), "%s", keys[i].key);
        peer_go(&pe);
        snprintf(env, sizeof(env), "OPENAI_API_KEY=%s", keys[i].key);
        peer_args(&pe, args, sizeof(args), "");
        run_cli(&p, env, args);
        peer_halt(&pe);
        assert_non_null(strstr(peer_req(&pe, 0), keys[i].key)); /* it was sent */
        if (p.code != 3 || strstr(p.err, keys[i].key) != NULL ||
            strstr(p.err, keys[i].shown) == NULL || strstr(p.out, keys[i].key) != NULL)
            fail_msg("key '%s': exit %d, stderr '%s'; want it shown as '%s'", keys[i].key, p.code,
                     p.err, keys[i].shown);
        peer_free(&pe);
        proc_free(&p);
    }
}

/* One byte a second: bytes keep coming but no event completes, so the
 * idle timeout (2 s: it counts data events, not bytes) fires; with no idle
 * timeout, the total timeout (--timeout 4) bounds it. */
static void slow_drip_idle_vs_total(void **state)
{
    (void)state;
    struct peer pe;
    struct proc p;
    struct expect idle = {3, "idle_timeout", "no data for 2 s (--idle-timeout) after 2 deltas", 2,
                          200};
    struct expect e = {3, "timeout", "stopped after 4 s (--timeout), after 2 deltas", 2, 200};
    char args[256];
    peer_start(&pe, "127.0.0.1", s_drip);
    peer_args(&pe, args, sizeof(args), "--idle-timeout 2 --timeout 30");
    run_cli(&p, NULL, args);
    peer_stop(&pe);
    check_row("slow drip, idle", &p, &idle);
    assert_true(p.secs >= 1.9 && p.secs < 6);
    proc_free(&p);
    peer_start(&pe, "127.0.0.1", s_drip);
    peer_args(&pe, args, sizeof(args), "--idle-timeout 0 --timeout 4");
    run_cli(&p, NULL, args);
    peer_stop(&pe);
    check_row("slow drip, total", &p, &e);
    assert_true(p.secs >= 3.9 && p.secs < 8);
    proc_free(&p);
}

/* `bench -c 1` at a peer (stopped after), its records in p->trace. */
static void bench_peer(struct proc *p, struct peer *pe, const char *more)
{
    char cmd[1024];
    proc_dir(p);
    snprintf(cmd, sizeof(cmd),
             "'%s' bench --base-url http://127.0.0.1:%d/v1 --model m -c 1 %s -q --out %s/b", bin(),
             pe->port, more, p->dir);
    proc_exec(p, cmd, 0, 0, 0);
    peer_stop(pe);
    free(p->trace); /* a run's trace: there is none */
    p->trace = proc_file(p, "b/records.jsonl");
}

/* Keep-alives forever (SSE comments, empty deltas): the idle timeout
 * counts time without a data event, so it fires in run and in bench
 * alike, though bytes arrive every 0.2 s. */
static void keepalives_do_not_hold_off_idle(void **state)
{
    (void)state;
    struct peer pe;
    struct proc p;
    struct expect e = {3, "idle_timeout", "no data for 1 s (--idle-timeout) after 2 deltas", 2,
                       200};
    char args[512];
    peer_start(&pe, "127.0.0.1", s_keepalive);
    peer_args(&pe, args, sizeof(args), "--idle-timeout 1 --timeout 30");
    run_cli(&p, NULL, args);
    check_row("keep-alives (run)", &p, &e);
    assert_true(p.secs < 5);
    proc_free(&p);
    bench_peer(&p, &pe, "--requests 1 --idle-timeout 1 --timeout 30");
    if (strstr(p.trace, "\"kind\":\"idle_timeout\"") == NULL ||
        strstr(p.trace, "no data for 1 s (--idle-timeout) after 2 deltas") == NULL)
        fail_msg("bench: records '%.600s', stderr '%.300s'", p.trace, p.err);
    assert_true(p.secs < 6);
    proc_free(&p);
}

/* 100,000 events a second into a ring of 1024 slots: the network thread
 * waits on the full ring, and the wait still honours --timeout (before,
 * it checked only Ctrl-C and ran on for as long as the stream lasted). */
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
    peer_start(&pe, "127.0.0.1", s_flood);
    bench_peer(&p, &pe, "--requests 2 --idle-timeout 20 --timeout 120");
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
    if (p.maxrss > TB_TEST_RSS_SCALE * 240 * 1024)
        fail_msg("peak RSS %ld KiB, over %d MiB", p.maxrss, TB_TEST_RSS_SCALE * 240);
    proc_free(&p);
}

/* Without --timeout a run still has a finite bound (the same field and
 * code path as an explicit value: the test above), and --help says it. */
static void total_timeout_has_a_default(void **state)
{
    (void)state;
    struct tb_cli_request r;
    struct tb_http_req q;
    struct tb_test_out o;
    tb_cli_request_init(&r, 300);
    tb_cli_request_http(&r, "http://127.0.0.1:1/v1", NULL, &q);
    assert_true(q.total_timeout > 0 && q.total_timeout <= 3600);
    assert_true(q.total_timeout == TB_CLI_TIMEOUT_DEFAULT);
    o = tb_test_run("run --help");
    assert_non_null(strstr(o.so, "--timeout S        give up on a request after S seconds in all "
                                 "(default 600,"));
    tb_test_out_free(&o);
    o = tb_test_run("bench --help"); /* the same row */
    assert_non_null(strstr(o.so, "--timeout S        give up on a request after S seconds in all "
                                 "(default 600,"));
    tb_test_out_free(&o);
}

/* A 100 MB line with no newline: the SSE line cap fires at 1 MiB, the
 * client stops reading, its memory stays bounded.  And a 500 with a 100
 * MB HTML body: 64 KiB of it are kept for the message. */
static void huge_line_bounded(void **state)
{
    (void)state;
    struct peer pe;
    struct proc p, base;
    struct expect e = {3, "sse", "event stream: line over 1048576 bytes at byte ", 2, 200};
    struct expect e500 = {3, "http", "HTTP 500: 500 Internal Server Error", 0, 500};
    char args[256];
    uint64_t sent;
    /* The baseline: the same client on a small clean stream. */
    peer_start(&pe, "127.0.0.1", s_ok);
    peer_args(&pe, args, sizeof(args), "");
    run_cli(&base, NULL, args);
    peer_stop(&pe);
    assert_int_equal(base.code, 0);

    peer_start(&pe, "127.0.0.1", s_huge_line);
    peer_args(&pe, args, sizeof(args), "");
    run_cli(&p, NULL, args);
    peer_stop(&pe);
    sent = atomic_load(&pe.sent);
    check_row("100 MB line", &p, &e);
    print_message("    100 MB line: client peak RSS %ld KiB (clean run %ld KiB); the peer got "
                  "%.1f MiB out before the client closed\n",
                  p.maxrss, base.maxrss, (double)sent / (1 << 20));
    assert_true(p.maxrss < base.maxrss + 16 * 1024); /* the 1 MiB cap, not 100 MB */
    assert_true(sent < HUGE_LINE);
    proc_free(&p);

    peer_start(&pe, "127.0.0.1", s_huge_html_500);
    peer_args(&pe, args, sizeof(args), "");
    run_cli(&p, NULL, args);
    peer_stop(&pe);
    check_row("500 with a 100 MB body", &p, &e500);
    print_message("    500 with a 100 MB body: client peak RSS %ld KiB\n", p.maxrss);
    assert_true(p.maxrss < base.maxrss + 16 * 1024);
    proc_free(&p);
    proc_free(&base);
}

/* A peer that always redirects to location: the run fails with msg after
 * conns requests. */
static void redirect_fails(const char *location, const char *msg, int conns)
{
    struct peer a;
    struct proc p;
    struct expect e = {3, "transport", msg, 0, 0};
    char args[256];
    peer_bind(&a, "127.0.0.1", s_redirect);
    snprintf(a.location, sizeof(a.location), "%s", location);
    peer_go(&a);
    peer_args(&a, args, sizeof(args), "");
    run_cli(&p, "OPENAI_API_KEY=" SECRET_ENV, args);
    peer_stop(&a);
    check_row(location, &p, &e);
    assert_int_equal(a.conns, conns);
    proc_free(&p);
    /* bench: the same hops, the same failure. */
    peer_bind(&a, "127.0.0.1", s_redirect);
    snprintf(a.location, sizeof(a.location), "%s", location);
    peer_go(&a);
    peer_args(&a, args, sizeof(args), "");
    bench_cli(&p, "OPENAI_API_KEY=" SECRET_ENV, args);
    peer_stop(&a);
    check_bench(location, &p, 0, 0);
    if (strstr(p.out, "\"transport\":1") == NULL)
        fail_msg("bench %s: want one transport error: %s", location, p.out);
    assert_int_equal(a.conns, conns);
    proc_free(&p);
}

/* Redirects: followed within the origin with the key; to another host
 * or port without the key (and without -H headers); at most 3; only to
 * http/https. */
static void redirects_never_leak_the_key(void **state)
{
    (void)state;
    static const char *const targets[] = {"127.0.0.2", "127.0.0.1"};
    struct expect ok = {0, NULL, NULL, 5, 200};
    char args[512], env[256];
    snprintf(env, sizeof(env), "OPENAI_API_KEY=%s", SECRET_ENV);
    for (size_t i = 0; i < 2; i++) {
        /* Another host, then the same host on another port. */
        struct peer a, b;
        struct proc p, pb;
        peer_start(&b, targets[i], s_ok);
        peer_bind(&a, "127.0.0.1", s_redirect);
        snprintf(a.location, sizeof(a.location), "http://%s:%d/v1/chat/completions", b.host,
                 b.port);
        peer_go(&a);
        peer_args(&a, args, sizeof(args), "-H 'x-api-key: " SECRET_HDR "' -H 'X-Plain: 1'");
        run_cli(&p, env, args);
        bench_cli(&pb, env, args); /* follows by the same rules: requests 1 */
        peer_halt(&a);
        peer_halt(&b);
        check_row("cross-origin redirect", &p, &ok);
        check_bench("bench: cross-origin redirect", &pb, 1, 5);
        proc_free(&pb);
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
    }
    {
        /* The same origin: the key goes along. */
        struct peer a;
        struct proc p;
        peer_bind(&a, "127.0.0.1", s_redirect_once);
        snprintf(a.location, sizeof(a.location), "/v2/chat/completions");
        peer_go(&a);
        peer_args(&a, args, sizeof(args), "-H 'x-api-key: " SECRET_HDR "'");
        run_cli(&p, env, args);
        peer_halt(&a);
        check_row("same-origin redirect", &p, &ok);
        assert_non_null(strstr(peer_req(&a, 1), "POST /v2/chat/completions"));
        assert_non_null(strstr(peer_req(&a, 1), "Authorization: Bearer " SECRET_ENV));
        assert_non_null(strstr(peer_req(&a, 1), "x-api-key: " SECRET_HDR));
        peer_free(&a);
        proc_free(&p);
        /* bench, the same. */
        peer_bind(&a, "127.0.0.1", s_redirect_once);
        snprintf(a.location, sizeof(a.location), "/v2/chat/completions");
        peer_go(&a);
        peer_args(&a, args, sizeof(args), "-H 'x-api-key: " SECRET_HDR "'");
        bench_cli(&p, env, args);
        peer_halt(&a);
        check_bench("bench: same-origin redirect", &p, 1, 5);
        assert_non_null(strstr(peer_req(&a, 1), "POST /v2/chat/completions"));
        assert_non_null(strstr(peer_req(&a, 1), "Authorization: Bearer " SECRET_ENV));
        assert_non_null(strstr(peer_req(&a, 1), "x-api-key: " SECRET_HDR));
        peer_free(&a);
        proc_free(&p);
    }
    /* A loop: three redirects followed, the fourth is an error; and a
     * redirect to another scheme is not followed. */
    redirect_fails("/v1/chat/completions", "request failed: Maximum (3) redirects followed", 4);
    redirect_fails("file:///etc/passwd", "HTTP 307 redirect to a scheme other than http", 1);
}

/* The run held the header key and one more (the echoing server quotes
 * all four; those the run never had are not its to hide). */
static void assert_no_secret(const char *where, const char *text, const char *key)
{
    const char *const secrets[] = {key, SECRET_HDR};
    for (size_t i = 0; i < 2; i++)
        if (strstr(text, secrets[i]) != NULL)
            fail_msg("%s holds the secret %s:\n%s", where, secrets[i], text);
}

/* Every output channel of runs holding a distinctive fake key (from the
 * environment, from --api-key-file, in the URL as ?key=, in an -H
 * header): stdout (human and JSON), stderr with --verbose, the trace,
 * error messages, including a server that quotes the key back. */
static void secrets_never_leak(void **state)
{
    (void)state;
    static const struct {
        peer_fn fn;
        int code;
    } servers[] = {{s_ok, 0}, {s_401_echo, 3}, {s_reset_mid_event, 3}};
    char keyfile[96], env[128], args[1024];
    FILE *f;
    snprintf(keyfile, sizeof(keyfile), "/tmp/ttsbuf-key-%d", (int)getpid());
    f = fopen(keyfile, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", SECRET_FILE);
    fclose(f);
    snprintf(env, sizeof(env), "OPENAI_API_KEY=%s", SECRET_ENV);
    for (size_t i = 0; i < sizeof(servers) / sizeof(servers[0]); i++) {
        for (int variant = 0; variant < 3; variant++) {
            struct peer pe;
            struct proc p;
            char cmd[2048];
            const char *key = variant == 1 ? SECRET_FILE : variant == 0 ? SECRET_ENV : SECRET_URL;
            peer_start(&pe, "127.0.0.1", servers[i].fn);
            /* variant 0: key from the environment, JSON report;
             * 1: from --api-key-file, human report; 2: a ?key= URL. */
            snprintf(args, sizeof(args),
                     "--base-url 'http://127.0.0.1:%d/v1%s' --model m --verbose %s%s "
                     "-H 'x-api-key: %s'",
                     pe.port, variant == 2 ? "?key=" SECRET_URL : "",
                     variant == 1 ? "--api-key-file " : "", variant == 1 ? keyfile : "",
                     SECRET_HDR);
            proc_dir(&p);
            snprintf(cmd, sizeof(cmd), "env %s '%s' run %s --record %s/t.jsonl %s",
                     variant == 0 ? env : "", bin(), variant == 1 ? "" : "--json", p.dir, args);
            proc_exec(&p, cmd, 0, 0, 0);
            peer_halt(&pe);
            if (p.code != servers[i].code)
                fail_msg("secrets run %zu/%d: exit %d: %s", i, variant, p.code, p.err);
            assert_no_secret("stdout", p.out, key);
            assert_no_secret("stderr", p.err, key);
            assert_no_secret("the trace", p.trace, key);
            /* It was sent, and --verbose did log the header, masked. */
            assert_non_null(strstr(peer_req(&pe, 0), key));
            assert_non_null(strstr(p.err, "x-api-key: ***"));
            if (variant != 2) {
                assert_non_null(strstr(p.err, "Authorization: Bearer ***"));
            } else {
                /* The endpoint goes before the query, which stays intact. */
                assert_non_null(
                    strstr(peer_req(&pe, 0), "POST /v1/chat/completions?key=" SECRET_URL " "));
                assert_non_null(strstr(p.err, "?key=***"));
            }
            if (servers[i].fn == s_401_echo)
                assert_non_null(strstr(p.err, "ttsbuf: HTTP 401: Incorrect API key provided: "));
            peer_free(&pe);
            proc_free(&p);
        }
    }
    remove(keyfile);
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
    peer_start(&pe, "127.0.0.1", s_stall);
    peer_args(&pe, args, sizeof(args), "--idle-timeout 30");
    proc_dir(&p);
    snprintf(cmd, sizeof(cmd), "'%s' run --json -q --record %s/t.jsonl %s", bin(), p.dir, args);
    proc_exec(&p, cmd, 0, SIGTERM, 1.0);
    peer_stop(&pe);
    check_row("SIGTERM", &p, &e);
    assert_true(p.secs < 10);
    proc_free(&p);
}

/* A reader that has gone: no SIGPIPE death; the trace still written; the
 * output ends quietly (no message) with the command's own status, 0 for
 * a run that succeeded. */
static void sigpipe_never_kills(void **state)
{
    (void)state;
    struct peer pe;
    struct proc p;
    struct tb_stream s;
    char cmd[1024], path[128], err[256];
    peer_start(&pe, "127.0.0.1", s_ok);
    proc_dir(&p);
    snprintf(cmd, sizeof(cmd),
             "'%s' run --base-url http://127.0.0.1:%d/v1 --model m -q --record %s/t.jsonl", bin(),
             pe.port, p.dir);
    proc_exec(&p, cmd, 1, 0, 0);
    peer_stop(&pe);
    if (p.signal != 0)
        fail_msg("killed by signal %d", p.signal);
    assert_int_equal(p.code, 0);
    assert_string_equal(p.err, "");
    tb_stream_init(&s);
    snprintf(path, sizeof(path), "%s/t.jsonl", p.dir);
    assert_int_equal(tb_trace_load_file(path, &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 5);
    tb_stream_free(&s);
    proc_free(&p);
    /* sim too, with a report far bigger than a pipe buffer. */
    proc_dir(&p);
    snprintf(cmd, sizeof(cmd), "'%s' sim --synth tokens=20000 --chunk token --gaps 100000", bin());
    proc_exec(&p, cmd, 1, 0, 0);
    assert_int_equal(p.signal, 0);
    assert_int_equal(p.code, 0);
    assert_string_equal(p.err, "");
    proc_free(&p);
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
    memset(&o, 0, sizeof(o));
    o.http.url = url;
    o.http.idle_timeout = 5;
    o.http.max_redirects = -1;
    o.req.model = "m";
    o.req.prompt = "hi";
    o.req.max_tokens = -1;
    o.req.temperature = -1;
    tb_sim_opts_default(&o.sim);
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
    char *log;
    server_start(&sv, "127.0.0.1:0", 1);
    log = server_stop(&sv);
    assert_null(strstr(log, "warning"));
    assert_non_null(strstr(log, "http://127.0.0.1:"));
    free(log);
    server_start(&sv, "0.0.0.0:0", 1);
    log = server_stop(&sv);
    if (strstr(log, "ttsbuf: warning: listening on 0.0.0.0, which is not a loopback address") ==
        NULL)
        fail_msg("no warning for 0.0.0.0: '%s'", log);
    free(log);
    {
        /* The default address, without starting anything: --help says it. */
        struct proc p;
        char cmd[512];
        proc_dir(&p);
        snprintf(cmd, sizeof(cmd), "'%s' serve --help", bin());
        proc_exec(&p, cmd, 0, 0, 0);
        assert_non_null(strstr(p.out, "127.0.0.1:8788"));
        proc_free(&p);
    }
}

int tb_test_fault(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matrix_against_serve),
        cmocka_unit_test(refused_and_dns),
        cmocka_unit_test(tls_self_signed),
        cmocka_unit_test(matrix_against_raw_peer),
        cmocka_unit_test(usage_zero_not_trusted),
        cmocka_unit_test(surrogate_halves_play_out),
        cmocka_unit_test(slow_drip_idle_vs_total),
        cmocka_unit_test(keepalives_do_not_hold_off_idle),
        cmocka_unit_test(full_ring_honours_timeout),
        cmocka_unit_test(total_timeout_has_a_default),
        cmocka_unit_test(bench_caps_a_flooding_stream),
        cmocka_unit_test(huge_line_bounded),
        cmocka_unit_test(redirects_never_leak_the_key),
        cmocka_unit_test(secrets_never_leak),
        cmocka_unit_test(messages_name_the_cause),
        cmocka_unit_test(short_keys_masked),
        cmocka_unit_test(sigterm_flushes_partial),
        cmocka_unit_test(sigpipe_never_kills),
        cmocka_unit_test(serve_warns_off_loopback),
        cmocka_unit_test(live_delta_cap),
    };
    signal(SIGPIPE, SIG_IGN);
    return TB_RUN_GROUP("fault", tests);
}
