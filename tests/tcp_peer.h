/*
 * tcp_peer.h - a raw TCP peer for the end-to-end tests: a loopback
 * listener with an accept() loop on its own thread that reads each request
 * (head and Content-Length body, kept for the test to inspect) and hands
 * the connection to a script that writes exact bytes (fn), one
 * connection at a time.  Failures end the current case.
 */
#ifndef TTSBUF_TESTS_TCP_PEER_H
#define TTSBUF_TESTS_TCP_PEER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct peer;
typedef void (*peer_fn)(struct peer *pe, int fd, int conn);

#define PEER_REQS 8

struct peer {
    int lfd, port;
    char host[32];
    pthread_t th;
    peer_fn fn;
    int conns;            /* accepted so far */
    char *req[PEER_REQS]; /* each request as received (head + body) */
    char location[256];   /* for the redirecting scripts */
    const char *script;   /* a script for fn to follow */
    const char *x;        /* bytes for the script, xlen of them */
    size_t xlen;
    _Atomic uint64_t sent; /* bytes a filling script got out */
    atomic_int holding;    /* peer_hold has begun on a connection */
    atomic_int stop;
};

/* A listening TCP socket on host (a dotted IPv4 address) at an ephemeral
 * port, *port set; asserts on failure. */
int peer_listen(const char *host, int *port);

/* Binds host on an ephemeral port and listens (the port is then known);
 * peer_go starts the thread, after which only it touches the peer until
 * peer_halt.  peer_start: both. */
void peer_bind(struct peer *pe, const char *host, peer_fn fn);
void peer_go(struct peer *pe);
void peer_start(struct peer *pe, const char *host, peer_fn fn);

/* Stops the peer; its requests stay readable until peer_free.
 * peer_stop: both. */
void peer_halt(struct peer *pe);
void peer_free(struct peer *pe);
void peer_stop(struct peer *pe);

/* Request i as received, or "" when there was none. */
const char *peer_req(const struct peer *pe, int i);

/* For scripts: sends all of p (0, or -1 when the client has gone). */
int peer_send(int fd, const void *p, size_t n);
int peer_send_str(int fd, const char *s);
/* Holds the connection open until the client closes it or the test ends. */
void peer_hold(struct peer *pe, int fd);

#endif
