/*
 * tcp_peer.c - the raw TCP peer of the end-to-end tests (see tcp_peer.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tclock.h"
#include "tcp_peer.h"
#include "tests.h"

int peer_send(int fd, const void *p, size_t n)
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

int peer_send_str(int fd, const char *s)
{
    return peer_send(fd, s, strlen(s));
}

/* Reads one request: the head, then Content-Length bytes of body. */
static char *read_request(int fd)
{
    size_t cap = 1 << 16, n = 0, need = 0;
    char *buf = malloc(cap + 1);
    double t0 = tclock_now();
    assert_non_null(buf);
    while (n < cap && tclock_now() - t0 < 5) {
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
void peer_hold(struct peer *pe, int fd)
{
    char c[256];
    atomic_store(&pe->holding, 1);
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
int peer_listen(const char *host, int *port)
{
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, host, &a.sin_addr), 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

void peer_bind(struct peer *pe, const char *host, peer_fn fn)
{
    memset(pe, 0, sizeof(*pe));
    snprintf(pe->host, sizeof(pe->host), "%s", host);
    pe->fn = fn;
    pe->lfd = peer_listen(host, &pe->port);
}

void peer_go(struct peer *pe)
{
    assert_int_equal(pthread_create(&pe->th, NULL, peer_main, pe), 0);
}

void peer_start(struct peer *pe, const char *host, peer_fn fn)
{
    peer_bind(pe, host, fn);
    peer_go(pe);
}

/* Stops the peer; its requests stay readable until peer_free. */
void peer_halt(struct peer *pe)
{
    atomic_store(&pe->stop, 1);
    pthread_join(pe->th, NULL);
    close(pe->lfd);
}

void peer_free(struct peer *pe)
{
    for (int i = 0; i < PEER_REQS; i++)
        free(pe->req[i]);
}

void peer_stop(struct peer *pe)
{
    peer_halt(pe);
    peer_free(pe);
}

const char *peer_req(const struct peer *pe, int i)
{
    return i < pe->conns && i < PEER_REQS && pe->req[i] != NULL ? pe->req[i] : "";
}
