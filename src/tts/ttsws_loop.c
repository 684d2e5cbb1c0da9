/*
 * ttsws_loop.c - the libwebsockets context of one event-loop thread
 * (ttsws.h's struct tb_ttsws_loop), serving every WebSocket connection of
 * that thread on a libuv loop of its own, which the caller's loop embeds.
 *
 * Why libuv, not lws_service: Debian 12's libwebsockets 4.1.6 is built
 * without LWS_WITH_EXTERNAL_POLL, so it never says which descriptors it
 * watches or for what (no ADD/DEL/CHANGE_MODE_POLL_FD callbacks), and
 * lws_service(ctx, t) polls its own table: any t >= 0 blocks until the
 * next lws timer (lib/plat/unix/unix-service.c forces 23 days), t < 0
 * looks without waiting.  Stepping it beside libcurl would need the
 * events lws wants on each socket (POLLOUT while a connect or a TLS
 * handshake is under way, or a write is pending), which only its private
 * table holds; guessing them spins or stalls.  Its event-library plugins
 * do not need the guess: with LWS_SERVER_OPTION_LIBUV and a foreign loop,
 * lws registers each socket as a uv_poll_t with the exact events and its
 * timers as a uv_timer_t (lib/event-libs/libuv/libuv.c).  libuv's own
 * state is then one descriptor, uv_backend_fd (its epoll set, readable
 * when any socket lws watches is ready), and one timeout,
 * uv_backend_timeout: the caller waits on that descriptor beside its own
 * (libcurl's epoll set, an eventfd) and then runs the loop once without
 * blocking (uv_run UV_RUN_NOWAIT), which services every connection.  No
 * thread: libuv starts none for poll handles and timers, and lws 4.1
 * resolves names with getaddrinfo on the calling thread (no async DNS in
 * this build: a name that resolves slowly holds the loop meanwhile; the
 * providers' names resolve once, at a stream's connect).
 *
 * TLS: a loop made for wss has a context with OpenSSL (its client
 * SSL_CTX loads the system's CA bundle, some 40 ms); one for ws has none.
 * libwebsockets 4.1 keeps its OpenSSL ex-data indexes in globals that
 * every TLS context's creation assigns afresh (lib/tls/openssl/
 * openssl-tls.c, lws_context_init_ssl_library): with several TLS loops
 * alive at once (bench --threads N > 1 with wss), a context destroyed
 * after another was created finds no record on its client SSL_CTX and
 * leaves it allocated (one CA store per extra loop thread and level), and
 * a connection whose TLS began before another loop's context was made
 * cannot be found by lws's certificate callback, which then refuses a
 * certificate that failed verification (only --tts-insecure accepts
 * those).  A certificate that verifies never reaches that lookup.
 *
 * Teardown: with a foreign loop lws 4.1 closes its handles through the
 * loop, so destroy runs it until no handle is left, then calls
 * lws_context_destroy again for the rest (it frees the context there and
 * clears the pointer it was given in info.pcontext).
 */
#include <libwebsockets.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "ttsbuf/error.h"
#include "ttsws_loop.h"

struct tb_ttsws_loop {
    uv_loop_t uv;
    struct lws_context *ctx; /* NULL once lws_context_destroy is through */
    int tls;                 /* the context has TLS (wss) */
};

/* Passes of the loop destroy allows for lws's closes (each at most
 * 10 ms): a second at most, for connections closing. */
#define TEARDOWN_PASSES 100

int tb_ttsws_loop_open(struct tb_ttsws_loop **out, const struct lws_protocols *protocols, int tls,
                       char *err, size_t errlen)
{
    struct lws_context_creation_info ci;
    struct tb_ttsws_loop *l = calloc(1, sizeof(*l));
    void *foreign[1];
    *out = NULL;
    if (l == NULL)
        return TB_ENOMEM;
    if (uv_loop_init(&l->uv) != 0) {
        free(l);
        return tb_seterr(err, errlen, TB_EIO, "libuv: no event loop");
    }
    lws_set_log_level(0, NULL); /* the library prints nothing */
    memset(&ci, 0, sizeof(ci));
    ci.port = CONTEXT_PORT_NO_LISTEN;
    ci.protocols = protocols;
    ci.gid = -1;
    ci.uid = -1;
    ci.options = LWS_SERVER_OPTION_LIBUV | (tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
    foreign[0] = &l->uv;
    ci.foreign_loops = foreign;
    ci.pcontext = &l->ctx;
    l->tls = tls;
    l->ctx = lws_create_context(&ci);
    if (l->ctx == NULL) {
        uv_loop_close(&l->uv);
        free(l);
        return tb_seterr(err, errlen, TB_ENOMEM,
                         "libwebsockets: no context on a libuv loop (is the libuv event-loop "
                         "plugin, libwebsockets-evlib-uv, installed?)");
    }
    *out = l;
    return 0;
}

void tb_ttsws_loop_destroy(struct tb_ttsws_loop *l)
{
    if (l == NULL)
        return;
    if (l->ctx != NULL)
        lws_context_destroy(l->ctx);
    for (int i = 0; l->ctx != NULL && i < TEARDOWN_PASSES; i++) {
        if (uv_run(&l->uv, UV_RUN_NOWAIT) == 0)
            lws_context_destroy(l->ctx); /* every handle closed: the rest */
        else
            tb_ttsws_loop_wait(l, -1, 10);
    }
    uv_run(&l->uv, UV_RUN_NOWAIT);
    /* Handles still open after the passes: the loop is left allocated
     * (leaked), never freed under them. */
    if (l->ctx != NULL || uv_loop_close(&l->uv) != 0)
        return;
    free(l);
}

int tb_ttsws_loop_fd(const struct tb_ttsws_loop *l)
{
    return uv_backend_fd(&l->uv);
}

int tb_ttsws_loop_timeout(const struct tb_ttsws_loop *l)
{
    return uv_backend_timeout(&l->uv);
}

void tb_ttsws_loop_service(struct tb_ttsws_loop *l)
{
    uv_run(&l->uv, UV_RUN_NOWAIT);
}

int tb_ttsws_loop_wait(struct tb_ttsws_loop *l, int fd, int timeout_ms)
{
    struct pollfd p[2];
    int t = tb_ttsws_loop_timeout(l);
    if (t < 0 || t > timeout_ms)
        t = timeout_ms;
    if (t <= 0)
        return 0;
    p[0].fd = tb_ttsws_loop_fd(l);
    p[0].events = POLLIN;
    p[1].fd = fd;
    p[1].events = POLLIN;
    return poll(p, fd >= 0 ? 2 : 1, t) < 0 ? -1 : 0;
}

struct lws_context *tb_ttsws_loop_ctx(const struct tb_ttsws_loop *l)
{
    return l->ctx;
}

int tb_ttsws_loop_tls(const struct tb_ttsws_loop *l)
{
    return l->tls;
}
