/*
 * bench_fair.c - the mock's fairness: a normal request's time to its first
 * event, alone and while two clients read a flood (a million reasoning
 * deltas each, all due within 0.2 s) as fast as they can.  The mock in its
 * own process; the hogs on threads of this one; the normal request over a
 * bare socket, timed from its send to the arrival of its first event
 * (schedule: 0.2 s).  The ratio of the two times says how much the hogs
 * cost everyone else (1.00: nothing).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define FIRST_T 0.2 /* the stream's first event */
#define ROUNDS 5
#define HOGS_MAX 10 /* non-streamed hogs */

static int dial(int port)
{
    struct sockaddr_in a;
    struct timeval tv = {10, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        bench_die("socket", "failed");
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        bench_die("connect", "the mock does not answer");
    return fd;
}

static void post(int fd, const char *model, int stream)
{
    char body[128], req[512];
    int bl = snprintf(body, sizeof(body), "{\"model\":\"%s\",\"stream\":%s}", model,
                      stream ? "true" : "false");
    int rl = snprintf(req, sizeof(req),
                      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                      bl, body);
    if (send(fd, req, (size_t)rl, MSG_NOSIGNAL) != rl)
        bench_die("send", "short");
}

/* Seconds from the request's send to the arrival of its first event
 * (the text "first"). */
static double first_event(int port)
{
    char buf[8192];
    size_t n = 0;
    int fd = dial(port);
    double t0 = bench_now();
    post(fd, "m", 1);
    for (;;) {
        ssize_t k = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
        if (k <= 0)
            bench_die("fair", "the normal stream ended before its first event");
        n += (size_t)k;
        buf[n] = '\0';
        if (strstr(buf, "first") != NULL)
            break;
        if (n > sizeof(buf) / 2)
            bench_die("fair", "no first event in the first 4 KB");
    }
    close(fd);
    return bench_now() - t0;
}

struct hog {
    int port;
    int stream; /* 0: a non-streamed body */
    atomic_int stop;
    pthread_t th;
};

static void *hog_main(void *arg)
{
    struct hog *h = arg;
    static char junk[1 << 16];
    int fd = dial(h->port);
    post(fd, "m+reasoning@1000000", h->stream);
    while (!atomic_load(&h->stop) && recv(fd, junk, sizeof(junk), 0) > 0) {
    }
    close(fd);
    return NULL;
}

static double median(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

/* The median time to a normal request's first event while `nhog`
 * clients read mock+reasoning@1000000 (streamed or not) at full speed. */
static double beside(int port, int nhog, int stream)
{
    double t[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        struct hog h[HOGS_MAX];
        memset(h, 0, sizeof(h));
        for (int k = 0; k < nhog; k++) {
            h[k].port = port;
            h[k].stream = stream;
            atomic_init(&h[k].stop, 0);
            if (pthread_create(&h[k].th, NULL, hog_main, &h[k]) != 0)
                bench_die("pthread_create", "failed");
        }
        {
            struct timespec ts = {0, 50000000}; /* their backlog builds up */
            nanosleep(&ts, NULL);
        }
        t[i] = first_event(port);
        for (int k = 0; k < nhog; k++) {
            atomic_store(&h[k].stop, 1);
            pthread_join(h[k].th, NULL);
        }
    }
    return median(t, ROUNDS);
}

void bench_fair(void)
{
    struct tb_stream s;
    struct bench_mock m;
    struct bench_mock_result r;
    double alone[ROUNDS], a, w, nb;
    tb_stream_init(&s);
    if (tb_stream_append(&s, FIRST_T, "first", 5, 1, TB_KIND_CONTENT) != 0 ||
        tb_stream_append(&s, FIRST_T + 0.01, " second", 7, 1, TB_KIND_CONTENT) != 0)
        bench_die("fair", "out of memory");
    bench_mock_start(&s, &m);
    for (int i = 0; i < ROUNDS; i++)
        alone[i] = first_event(m.port);
    a = median(alone, ROUNDS);
    w = beside(m.port, 2, 1);
    nb = beside(m.port, HOGS_MAX, 0);
    bench_mock_stop(&m, &r);
    printf("fair: a normal request's first event (schedule %.0f ms), median of %d, alone and\n"
           "  beside clients reading mock+reasoning@1000000 at full speed (the mock in its own\n"
           "  process); ratio: to the time alone.\n",
           FIRST_T * 1e3, ROUNDS);
    printf("  alone %.1f ms (late %.1f ms)\n", a * 1e3, (a - FIRST_T) * 1e3);
    printf("  beside 2 streaming hogs %.1f ms (late %.1f ms); ratio %.2f\n", w * 1e3,
           (w - FIRST_T) * 1e3, w / a);
    printf("  beside %d non-streamed hogs %.1f ms (late %.1f ms); ratio %.2f\n", HOGS_MAX, nb * 1e3,
           (nb - FIRST_T) * 1e3, nb / a);
    tb_stream_free(&s);
}
