/*
 * bench_serve.c - the concurrency figure: N chat-completion streams at
 * once against the mock provider (in its own process), all from one
 * client thread on libcurl's multi interface (curl_multi_poll, HTTP/1.1).
 *
 * Every stream is the same synthetic one: STREAM_TOKENS events of one
 * token, 50 tokens/s, no jitter.  Each transfer feeds its own SSE parser;
 * each event goes through tb_api_parse_event, and each content delta is
 * checked against the stream the server was given (same text, in order)
 * and stamped with its arrival time.  Reported per N:
 *   - streams completed ([DONE], HTTP 200, clean end) and events expected,
 *     received and lost (the goal needs lost = 0);
 *   - the server's own emission lateness (tb_serve_stats: send() time
 *     minus schedule; the goal is P99 within 2 ms at N = 1000);
 *   - client-observed lateness: arrival minus (request sent + t_k), where
 *     "request sent" is libcurl's pre-request callback on a connected
 *     socket; it includes the request's trip, the server's read and this
 *     thread's own delay in getting to the socket;
 *   - CPU per event on each side (getrusage: the child's time inside
 *     tb_serve_run; this process's whole time, which is this thread's,
 *     handle setup included) with the kernel's share (which Linux samples
 *     at ticks, so it is left out below 0.1 s), cores busy (CPU time over
 *     wall time: two cores are all there is), and wall time.
 * The goal row starts all N at once, so every stream's event k falls due
 * at about the same instant; the "~" row spreads the starts over one
 * token interval, which tells a burst apart from a lack of CPU.
 * One run per N, not a best of several: a level takes the stream's length
 * (about 5 s), the figures are percentiles over many events already, and
 * a best-of would flatter a goal stated as a percentile.
 *
 * Limits: curl_multi_poll polls every socket on each wake-up and
 * curl_multi_perform (libcurl 7.x) visits every transfer, so the client's
 * cost per event grows with N; that is libcurl's, and the reason a serious
 * many-stream client uses curl_multi_socket_action and epoll.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "ttsbuf.h"

#define STREAM_TPS 50.0
#define STREAM_TOKENS 250
#define FD_MARGIN 64
#define GOAL_N 1000
#define GOAL_P99 0.002

struct level {
    const struct tb_stream *s;    /* what the server streams: the schedule */
    struct tb_api_parser *parser; /* one parser for all: one thread */
};

struct xfer {
    const struct level *lv;
    CURL *h;
    struct tb_sse *sse;
    double t_add, t_req; /* added; request about to be sent (0: not yet) */
    double t_now;        /* arrival time of the bytes being parsed */
    double *late;        /* lv->s->n slots */
    size_t k;            /* content events received */
    int done_seen, bad;  /* [DONE]; a parse error or a wrong delta */
    int result;          /* CURLcode */
    long status;
};

static int on_prereq(void *ud, char *ip, char *local_ip, int port, int local_port)
{
    struct xfer *x = ud;
    (void)ip, (void)local_ip, (void)port, (void)local_port;
    x->t_req = bench_now();
    return CURL_PREREQFUNC_OK;
}

static int on_event(void *ud, const struct tb_sse_event *ev)
{
    struct xfer *x = ud;
    const struct tb_stream *s = x->lv->s;
    struct tb_api_delta d;
    char err[160];
    if (tb_api_parse_event(x->lv->parser, NULL, 0, ev->data, ev->data_len, &d, err, sizeof(err)) !=
        0) {
        x->bad = 1;
        return 1;
    }
    if (d.done) {
        x->done_seen = 1;
        return 0;
    }
    if (d.content == NULL || d.content_len == 0)
        return 0; /* the role chunk, the finish chunk */
    if (x->k >= s->n || d.content_len != s->ev[x->k].len ||
        memcmp(d.content, tb_stream_text(s, x->k), d.content_len) != 0) {
        x->bad = 1; /* extra, or not the delta that was due: counts as lost */
        return 1;
    }
    x->late[x->k] = x->t_now - ((x->t_req > 0 ? x->t_req : x->t_add) + s->ev[x->k].t);
    x->k++;
    return 0;
}

static size_t on_write(char *buf, size_t size, size_t nmemb, void *ud)
{
    struct xfer *x = ud;
    char err[160];
    x->t_now = bench_now();
    if (tb_sse_feed(x->sse, buf, size * nmemb, on_event, x, err, sizeof(err)) != 0) {
        x->bad = 1;
        return 0; /* aborts the transfer */
    }
    return size * nmemb;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank q-quantile of sorted v[0..n). */
static double quantile(const double *v, size_t n, double q)
{
    size_t r = (size_t)(q * (double)n + 0.999999);
    if (n == 0)
        return 0;
    if (r < 1)
        r = 1;
    return v[(r > n ? n : r) - 1];
}

/* Raises the soft descriptor limit to the hard one; returns the result. */
static rlim_t raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        bench_die("getrlimit", strerror(errno));
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl) != 0)
            bench_die("getrlimit", strerror(errno));
    }
    return rl.rlim_cur;
}

struct figures {
    size_t completed;
    uint64_t expected, received;
    double c_p50, c_p99;
    double client_cpu, client_sys, wall;
    struct bench_mock_result srv;
};

static void xfer_add(CURLM *m, struct xfer *x, const char *url, struct curl_slist *hdr)
{
    static const char body[] = "{\"model\":\"ttsbuf-mock\",\"stream\":true,"
                               "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    x->h = curl_easy_init();
    if (x->h == NULL || tb_sse_create(0, 0, &x->sse) != 0)
        bench_die("serve", "out of memory");
    curl_easy_setopt(x->h, CURLOPT_URL, url);
    curl_easy_setopt(x->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(x->h, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(x->h, CURLOPT_PREREQDATA, x);
    curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
    curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(x->h, CURLOPT_TIMEOUT, 30L); /* a stuck level still ends */
    x->t_add = bench_now();
    if (curl_multi_add_handle(m, x->h) != CURLM_OK)
        bench_die("serve", "curl_multi_add_handle failed");
}

/* Runs n streams, the i-th started at spread * i / n s (all at once for
 * spread 0), to their end. */
static void run_level(const struct tb_stream *s, size_t n, double spread, struct figures *f)
{
    struct level lv = {s, NULL};
    struct bench_mock mock;
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    struct xfer *x = calloc(n, sizeof(*x));
    double *late = malloc(n * s->n * sizeof(*late));
    CURLM *m;
    char url[64];
    int running = 0;
    double c0, s0, s1, t0;
    size_t added = 0, nl = 0;

    memset(f, 0, sizeof(*f));
    bench_mock_start(s, &mock); /* first: the child inherits no libcurl state */
    m = curl_multi_init();
    if (hdr == NULL || x == NULL || late == NULL || m == NULL ||
        tb_api_parser_create(TB_API_CHAT, &lv.parser) != 0)
        bench_die("serve", "out of memory");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", mock.port);

    c0 = bench_cpu(RUSAGE_SELF, &s0);
    t0 = bench_now();
    for (;;) {
        CURLMsg *msg;
        int q, ms = 1000;
        while (added < n && bench_now() >= t0 + spread * (double)added / (double)n) {
            x[added].lv = &lv;
            x[added].late = late + added * s->n;
            xfer_add(m, &x[added], url, hdr);
            added++;
        }
        if (curl_multi_perform(m, &running) != CURLM_OK)
            bench_die("serve", "curl_multi_perform failed");
        while ((msg = curl_multi_info_read(m, &q)) != NULL) {
            struct xfer *xi;
            if (msg->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&xi);
            xi->result = (int)msg->data.result;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &xi->status);
        }
        if (running == 0 && added == n)
            break;
        if (added < n) {
            double wait = t0 + spread * (double)added / (double)n - bench_now();
            ms = wait <= 0 ? 0 : (int)(wait * 1e3) + 1;
        }
        if (curl_multi_poll(m, NULL, 0, ms, NULL) != CURLM_OK)
            bench_die("serve", "curl_multi_poll failed");
    }
    f->wall = bench_now() - t0;
    f->client_cpu = bench_cpu(RUSAGE_SELF, &s1) - c0;
    f->client_sys = s1 - s0;
    bench_mock_stop(&mock, &f->srv);

    for (size_t i = 0; i < n; i++) {
        f->completed += x[i].result == CURLE_OK && x[i].status == 200 && x[i].done_seen &&
                        !x[i].bad && tb_sse_pending(x[i].sse) == 0;
        f->received += x[i].k;
        memmove(late + nl, x[i].late, x[i].k * sizeof(*late)); /* compact */
        nl += x[i].k;
        curl_multi_remove_handle(m, x[i].h);
        curl_easy_cleanup(x[i].h);
        tb_sse_destroy(x[i].sse);
    }
    f->expected = (uint64_t)n * s->n;
    qsort(late, nl, sizeof(*late), cmp_double);
    f->c_p50 = quantile(late, nl, 0.50);
    f->c_p99 = quantile(late, nl, 0.99);
    curl_multi_cleanup(m);
    curl_slist_free_all(hdr);
    tb_api_parser_destroy(lv.parser);
    free(late);
    free(x);
}

/* "16.8  61%": CPU per event, us, and the system (kernel) share. */
static const char *per_event(char *buf, size_t len, double cpu, double sys, uint64_t events)
{
    if (events == 0 || cpu <= 0)
        snprintf(buf, len, "-");
    else if (cpu < 0.1) /* the kernel's split is sampled at ticks: noise */
        snprintf(buf, len, "%5.1f    -", cpu / (double)events * 1e6);
    else
        snprintf(buf, len, "%5.1f %3.0f%%", cpu / (double)events * 1e6, sys / cpu * 100);
    return buf;
}

void bench_serve(void)
{
    /* N, and the window the starts are spread over (0: all at once).  The
     * last row is a diagnostic, not the goal: starts spread evenly over
     * one token interval, so the streams' events do not all fall due in
     * the same instant. */
    static const struct {
        size_t n;
        double spread;
    } levels[] = {{1, 0}, {100, 0}, {GOAL_N, 0}, {GOAL_N, 1.0 / STREAM_TPS}};
    struct tb_stream s;
    struct figures f;
    rlim_t nofile = raise_nofile();
    char sb[32], cb[32];

    tb_stream_init(&s);
    bench_synth(STREAM_TPS, 1.0 / STREAM_TPS, STREAM_TOKENS, &s);
    printf("serve: N concurrent chat streams of %zu events at %.0f tokens/s (%.1f s each) from\n"
           "  one libcurl multi thread; the mock in its own process; one run per N.\n"
           "  Lateness, ms: server = send() minus schedule (tb_serve_stats); client =\n"
           "  arrival minus (request sent + t_k).  CPU: us per event, then the kernel's\n"
           "  share; cores: CPU time / wall time, server + client.\n"
           "  RLIMIT_NOFILE %llu per process (each needs N + %d).\n",
           s.n, STREAM_TPS, s.ev[s.n - 1].t, (unsigned long long)nofile, FD_MARGIN);
    printf("  %6s %5s %7s %4s | %-20s | %-12s | %-10s %-10s | %-9s | %4s\n", "N", "done", "events",
           "lost", "server P50  P99  max", "client P50  P99", "server CPU", "client CPU",
           "cores s+c", "wall");
    for (size_t li = 0; li < sizeof(levels) / sizeof(levels[0]); li++) {
        size_t n = levels[li].n;
        uint64_t lost;
        char label[16];
        snprintf(label, sizeof(label), "%zu%s", n, levels[li].spread > 0 ? "~" : "");
        if (nofile < n + FD_MARGIN) {
            printf("  %6s skipped: RLIMIT_NOFILE %llu < %zu\n", label, (unsigned long long)nofile,
                   n + FD_MARGIN);
            continue;
        }
        run_level(&s, n, levels[li].spread, &f);
        lost = f.expected - f.received;
        printf("  %6s %5zu %7llu %4llu | %5.2f %5.2f %6.2f | %5.2f %6.2f | %-10s %-10s | "
               "%4.2f+%4.2f | %4.1f\n",
               label, f.completed, (unsigned long long)f.received, (unsigned long long)lost,
               f.srv.st.late_p50 * 1e3, f.srv.st.late_p99 * 1e3, f.srv.st.late_max * 1e3,
               f.c_p50 * 1e3, f.c_p99 * 1e3,
               per_event(sb, sizeof(sb), f.srv.cpu_s, f.srv.sys_s, f.srv.st.events),
               per_event(cb, sizeof(cb), f.client_cpu, f.client_sys, f.received),
               f.srv.cpu_s / f.wall, f.client_cpu / f.wall, f.wall);
        if (f.srv.st.dropped > 0 || f.srv.st.events != f.expected)
            printf("         server: %llu events sent, %llu connections dropped\n",
                   (unsigned long long)f.srv.st.events, (unsigned long long)f.srv.st.dropped);
        if (n == GOAL_N && levels[li].spread == 0)
            printf("  goal (%d streams started at once, server P99 <= %.0f ms, none lost): %s\n",
                   GOAL_N, GOAL_P99 * 1e3,
                   lost == 0 && f.completed == n && f.srv.st.late_p99 <= GOAL_P99 ? "met"
                                                                                  : "goal missed");
    }
    printf("  %zu~: the same, starts spread evenly over one token interval (%.0f ms)\n",
           (size_t)GOAL_N, 1e3 / STREAM_TPS);
    tb_stream_free(&s);
}
