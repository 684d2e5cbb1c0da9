/*
 * bench_floor.c - what a streamed event costs before ttsbuf does anything
 * with it: the floors under the client benchmark's CPU per event.
 *
 *   recv    N sockets on one epoll set (level-triggered), one recv() of
 *           up to 16 KiB per readiness report, the bytes thrown away: the
 *           kernel's share (the read, the ACK it sends back on loopback,
 *           epoll) and nothing else.
 *   libcurl the same N requests through libcurl's multi_socket API over
 *           epoll, as libcurl's ephiperfifo example drives it, with a
 *           write callback that only counts bytes: the kernel's share plus
 *           libcurl's (HTTP, chunked decoding, its timers, the poll() it
 *           makes after every read).
 *
 *   send    the server's side: one token's SSE event send() to each of N
 *           loopback connections in turn, as a burst of N streams whose
 *           events fall due together asks of the mock (bench_calls.c).
 *
 * ttsbuf's own loop adds the SSE parser, cJSON, the stream records and
 * the stamping to the libcurl floor; the SDK client adds its own stack to
 * its runtime's.  CPU: getrusage(RUSAGE_SELF) around the whole wave
 * (connects included), over the events the mock sent.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

#define FLOOR_EVENTS 1024

#define BODY_FMT                                                                                   \
    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":%d,"    \
    "\"stream\":true}"

double bench_floor_recv(int port, size_t n, int max_tokens, double *sys)
{
    struct sockaddr_in a;
    struct epoll_event evs[FLOOR_EVENTS];
    char req[512], body[160], buf[16384];
    size_t open = 0;
    double c0, s0, c1, s1;
    int ep = epoll_create1(EPOLL_CLOEXEC), len;

    if (ep < 0)
        bench_die("floor: epoll", strerror(errno));
    snprintf(body, sizeof(body), BODY_FMT, max_tokens);
    len = snprintf(req, sizeof(req),
                   "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                   port, strlen(body), body);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c0 = bench_cpu(RUSAGE_SELF, &s0);
    for (size_t i = 0; i < n; i++) {
        struct epoll_event ev;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
            send(fd, req, (size_t)len, MSG_NOSIGNAL) != len)
            bench_die("floor: recv client", strerror(errno));
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        memset(&ev, 0, sizeof(ev));
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
            bench_die("floor: epoll_ctl", strerror(errno));
        open++;
    }
    while (open > 0) {
        int k = epoll_wait(ep, evs, FLOOR_EVENTS, 30000);
        if (k <= 0)
            bench_die("floor: recv client", k == 0 ? "stalled" : strerror(errno));
        for (int i = 0; i < k; i++) {
            ssize_t r = recv(evs[i].data.fd, buf, sizeof(buf), 0);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                close(evs[i].data.fd); /* leaves the epoll set */
                open--;
            }
        }
    }
    c1 = bench_cpu(RUSAGE_SELF, &s1);
    close(ep);
    *sys = s1 - s0;
    return c1 - c0;
}

/* ---- libcurl, ephiperfifo style ---- */

struct floor_curl {
    CURLM *m;
    int ep;
    double timeout_at; /* bench_now() time; < 0: none */
};

static int fc_socket(CURL *e, curl_socket_t s, int what, void *ud, void *sockp)
{
    struct floor_curl *f = ud;
    struct epoll_event ev;
    (void)e;
    (void)sockp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(f->ep, EPOLL_CTL_DEL, s, NULL);
        return 0;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    ev.data.fd = s;
    if (epoll_ctl(f->ep, EPOLL_CTL_MOD, s, &ev) != 0)
        epoll_ctl(f->ep, EPOLL_CTL_ADD, s, &ev);
    return 0;
}

static int fc_timer(CURLM *m, long ms, void *ud)
{
    struct floor_curl *f = ud;
    (void)m;
    f->timeout_at = ms < 0 ? -1 : bench_now() + (double)ms / 1000.0;
    return 0;
}

static size_t fc_write(char *p, size_t size, size_t nmemb, void *ud)
{
    (void)p;
    *(size_t *)ud += size * nmemb;
    return size * nmemb;
}

double bench_floor_curl(int port, size_t n, int max_tokens, double *sys)
{
    struct floor_curl f;
    struct epoll_event evs[FLOOR_EVENTS];
    struct curl_slist *hl = NULL;
    CURL **h = calloc(n, sizeof(*h));
    char url[96], body[160];
    size_t bytes = 0;
    double c0, s0, c1, s1;
    int running = 1;

    f.ep = epoll_create1(EPOLL_CLOEXEC);
    f.m = curl_multi_init();
    f.timeout_at = -1;
    hl = curl_slist_append(hl, "Content-Type: application/json");
    hl = curl_slist_append(hl, "Accept: text/event-stream");
    if (h == NULL || f.ep < 0 || f.m == NULL || hl == NULL)
        bench_die("floor: libcurl client", "set-up failed");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions", port);
    snprintf(body, sizeof(body), BODY_FMT, max_tokens);
    curl_multi_setopt(f.m, CURLMOPT_SOCKETFUNCTION, fc_socket);
    curl_multi_setopt(f.m, CURLMOPT_SOCKETDATA, &f);
    curl_multi_setopt(f.m, CURLMOPT_TIMERFUNCTION, fc_timer);
    curl_multi_setopt(f.m, CURLMOPT_TIMERDATA, &f);
    c0 = bench_cpu(RUSAGE_SELF, &s0);
    for (size_t i = 0; i < n; i++) {
        h[i] = curl_easy_init();
        if (h[i] == NULL)
            bench_die("floor: libcurl client", "curl_easy_init failed");
        curl_easy_setopt(h[i], CURLOPT_URL, url);
        curl_easy_setopt(h[i], CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h[i], CURLOPT_HTTPHEADER, hl);
        curl_easy_setopt(h[i], CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, fc_write);
        curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &bytes);
        curl_multi_add_handle(f.m, h[i]);
    }
    while (running > 0) {
        double now = bench_now();
        int ms = f.timeout_at < 0 ? 1000 : (int)((f.timeout_at - now) * 1000.0 + 0.999);
        int k = epoll_wait(f.ep, evs, FLOOR_EVENTS, ms < 0 ? 0 : ms);
        if (k < 0 && errno != EINTR)
            bench_die("floor: epoll_wait", strerror(errno));
        for (int i = 0; i < k; i++) {
            int fl = ((evs[i].events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
                     ((evs[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                     ((evs[i].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(f.m, evs[i].data.fd, fl, &running);
        }
        if (f.timeout_at >= 0 && bench_now() >= f.timeout_at) {
            f.timeout_at = -1;
            curl_multi_socket_action(f.m, CURL_SOCKET_TIMEOUT, 0, &running);
        }
    }
    for (size_t i = 0; i < n; i++) {
        curl_multi_remove_handle(f.m, h[i]);
        curl_easy_cleanup(h[i]);
    }
    c1 = bench_cpu(RUSAGE_SELF, &s1);
    curl_multi_cleanup(f.m);
    curl_slist_free_all(hl);
    close(f.ep);
    free(h);
    if (bytes == 0)
        bench_die("floor: libcurl client", "no bytes received");
    *sys = s1 - s0;
    return c1 - c0;
}

/* ---- the server's side: one event's send() ---- */

/* One chat.completion.chunk as the mock frames a token (about its size). */
static const char floor_event[] =
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":0,"
    "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w12\"},"
    "\"finish_reason\":null}]}\n\n";

double bench_floor_send(size_t n, int rounds, size_t *event_len)
{
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    int *c = calloc(n, sizeof(int)), *s = calloc(n, sizeof(int));
    double c0, c1, s0, s1;
    size_t len = sizeof(floor_event) - 1;

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lfd < 0 || c == NULL || s == NULL || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(lfd, 4096) != 0 || getsockname(lfd, (struct sockaddr *)&a, &al) != 0)
        bench_die("floor: send listener", strerror(errno));
    for (size_t i = 0; i < n; i++) {
        c[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c[i] < 0 || connect(c[i], (struct sockaddr *)&a, sizeof(a)) != 0 ||
            (s[i] = accept(lfd, NULL, NULL)) < 0)
            bench_die("floor: send connect", strerror(errno));
        setsockopt(s[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* as serve does */
    }
    /* rounds x len stays far below a socket's buffer: no reader needed. */
    c0 = bench_cpu(RUSAGE_SELF, &s0);
    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < n; i++)
            if (send(s[i], floor_event, len, MSG_NOSIGNAL) != (ssize_t)len)
                bench_die("floor: send", strerror(errno));
    c1 = bench_cpu(RUSAGE_SELF, &s1);
    for (size_t i = 0; i < n; i++) {
        close(c[i]);
        close(s[i]);
    }
    close(lfd);
    free(c);
    free(s);
    *event_len = len;
    return (c1 - c0) / ((double)n * rounds);
}
