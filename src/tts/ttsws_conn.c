/*
 * ttsws_conn.c - the WebSocket TTS client's connection (ttsws_conn.h), on
 * libwebsockets, served by its thread's loop (ttsws_loop.c: one context
 * for every connection of the thread, no thread of its own).
 *
 * The callbacks run inside the loop's service: they write the messages
 * the client queued, each stamped on the run's clock as its write began, and
 * queue every received message (stamped when its last fragment came) for
 * the client's next step, which handles it outside libwebsockets
 * (ttsws_rx.c), so nothing a client's callback does can reach into lws.
 * A connection finds its client through its opaque user data, which
 * tb_ttsws_conn_stop clears: a connection whose client is gone only
 * closes.
 */
#include <curl/curl.h>
#include <errno.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "ttsbuf/error.h"
#include "ttsbuf/http.h"
#include "ttsbuf/ttsapi.h"
#include "ttsws_conn.h"
#include "ttsws_loop.h"

_Static_assert(TB_TTSWS_PRE >= LWS_PRE, "room for libwebsockets' header before a payload");

/* Queued for the client's next step (ttsws_rx.c), outside lws. */
static void post(struct tb_ttsws *c, struct tb_ttsws_ev *e)
{
    *c->eq_tail = e;
    c->eq_tail = &e->next;
}

static void post_kind(struct tb_ttsws *c, int kind, long status, const char *why)
{
    struct tb_ttsws_ev *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return; /* the caller's timeouts end what this would have */
    e->kind = kind;
    e->t = tb_ttscore_now(&c->k);
    e->status = status;
    if (why != NULL) {
        e->data = strdup(why);
        e->len = e->data != NULL ? strlen(e->data) : 0;
    }
    post(c, e);
}

/* The handshake's headers: the key in the dialect's header, Cartesia's
 * version.  0, or -1 when they do not fit. */
static int handshake_headers(struct tb_ttsws *c, struct lws *wsi, unsigned char **p,
                             unsigned char *end)
{
    const struct tb_ttsapi_info *in = tb_ttsapi_info(tb_ttsws_base_api(c->api));
    char name[64];
    if (c->k.key != NULL) {
        snprintf(name, sizeof(name), "%s:", in->key_header);
        if (lws_add_http_header_by_name(wsi, (const unsigned char *)name,
                                        (const unsigned char *)c->k.key, (int)strlen(c->k.key), p,
                                        end))
            return -1;
    }
    if (c->api == TB_TTSWS_CARTESIA &&
        lws_add_http_header_by_name(wsi, (const unsigned char *)"Cartesia-Version:",
                                    (const unsigned char *)TB_TTSWS_CARTESIA_VERSION,
                                    (int)strlen(TB_TTSWS_CARTESIA_VERSION), p, end))
        return -1;
    return 0;
}

/*
 * Why a connection failed before any HTTP status, in words a user acts
 * on, into buf: the socket's own error (SO_ERROR: lws 4.1 says only
 * "closed before established" for a refused or unreachable port), or a
 * TLS handshake that failed (lws passes OpenSSL's bare "connect SSL err
 * 1: error:00000001:lib(0)::reason(1)", which a plain ws:// server
 * answering a ClientHello gives).  0 when neither: lws's words stand.
 */
static int socket_reason(struct lws *wsi, const char *in, size_t len, char *buf, size_t n)
{
    int fd = lws_get_socket_fd(wsi), se = 0;
    socklen_t sl = sizeof(se);
    char text[96];
    if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &se, &sl) == 0 && se != 0) {
        if (se == ECONNREFUSED) {
            snprintf(buf, n, "connection refused (nothing listens at that address and port)");
        } else {
            if (strerror_r(se, text, sizeof(text)) != 0)
                snprintf(text, sizeof(text), "error %d", se);
            if (text[0] >= 'A' && text[0] <= 'Z')
                text[0] = (char)(text[0] - 'A' + 'a');
            snprintf(buf, n, "%s", text);
        }
        return 1;
    }
    snprintf(text, sizeof(text), "%.*s", in != NULL ? (int)(len < 95 ? len : 95) : 0,
             in != NULL ? in : "");
    if (strstr(text, "SSL") != NULL || strstr(text, "ssl") != NULL) {
        /* OpenSSL's words here ("error:00000001:lib(0)::reason(1)")
         * say nothing more. */
        snprintf(buf, n, "the TLS handshake failed (is the server plain ws://?)");
        return 1;
    }
    return 0;
}

/* The connection failed (or the upgrade was refused): why, posted. */
static void connection_error(struct tb_ttsws *c, struct lws *wsi, const char *in, size_t len)
{
    /* errno first: lws says only "Unable to connect" when socket() found
     * no descriptor free. */
    int e = errno;
    long st = (long)lws_http_client_http_response(wsi);
    char why[200];
    if (st != 0 ||
        !(tb_http_nofd_text(e, why, sizeof(why)) || socket_reason(wsi, in, len, why, sizeof(why))))
        snprintf(why, sizeof(why), "%.*s", in != NULL && len > 0 ? (int)len : 13,
                 in != NULL && len > 0 ? (const char *)in : "no connection");
    c->wsi = NULL;
    post_kind(c, TB_TTSWS_EV_REFUSED, st, why);
}

/* The peer's close frame: its code and words, kept for EV_CLOSED. */
static void peer_close(struct tb_ttsws *c, const unsigned char *b, size_t len)
{
    size_t k;
    if (len < 2)
        return;
    k = len - 2 < sizeof(c->close_why) - 1 ? len - 2 : sizeof(c->close_why) - 1;
    c->close_code = (long)((b[0] << 8) | b[1]);
    memcpy(c->close_why, b + 2, k);
    c->close_why[k] = '\0';
}

/* A fragment received: held (up to TB_TTSWS_MSG_MAX) until the message
 * is whole, then posted, stamped when its last fragment came. */
static void receive(struct tb_ttsws *c, struct lws *wsi, const void *in, size_t len)
{
    struct tb_ttsws_ev *e;
    if (lws_is_first_fragment(wsi)) {
        c->rx_len = 0;
        c->rx_binary = lws_frame_is_binary(wsi);
        c->rx_toobig = 0;
    }
    if (!c->rx_toobig && c->rx_len + len + 1 > c->rx_cap) {
        size_t nc = c->rx_cap ? c->rx_cap : 4096;
        unsigned char *nb;
        while (nc < c->rx_len + len + 1)
            nc *= 2;
        nb = nc <= TB_TTSWS_MSG_MAX ? realloc(c->rx, nc) : NULL;
        if (nb == NULL)
            c->rx_toobig = 1;
        else {
            c->rx = nb;
            c->rx_cap = nc;
        }
    }
    if (!c->rx_toobig) {
        memcpy(c->rx + c->rx_len, in, len);
        c->rx_len += len;
    }
    if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi) != 0)
        return;
    e = calloc(1, sizeof(*e));
    if (e == NULL)
        return;
    e->t = tb_ttscore_now(&c->k);
    e->kind = c->rx_toobig   ? TB_TTSWS_EV_TOOBIG
              : c->rx_binary ? TB_TTSWS_EV_BINARY
                             : TB_TTSWS_EV_TEXT;
    if (e->kind == TB_TTSWS_EV_TEXT) {
        c->rx[c->rx_len] = '\0';
        e->data = (char *)c->rx;
        e->len = c->rx_len;
        c->rx = NULL;
        c->rx_cap = 0;
    } else {
        e->len = c->rx_len;
    }
    c->rx_len = 0;
    post(c, e);
}

/* Writable: the next queued message written (a chunk's text posted as
 * EV_SENT), or the close once the queue is empty and a close was asked.
 * 0, or -1 to close. */
static int writeable(struct tb_ttsws *c, struct lws *wsi)
{
    struct tb_ttsws_out *o = c->oq;
    double t;
    if (o != NULL) {
        c->oq = o->next;
        if (c->oq == NULL)
            c->oq_tail = &c->oq;
    }
    if (o == NULL && c->want_close) {
        lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
        return -1;
    }
    if (o == NULL)
        return 0;
    /* Stamped as the write begins: a thread descheduled between the write
     * and the stamp would date the send after the peer could answer it. */
    t = tb_ttscore_now(&c->k);
    if (lws_write(wsi, o->buf + TB_TTSWS_PRE, o->len, LWS_WRITE_TEXT) < (int)o->len) {
        free(o);
        return -1;
    }
    if (o->j != 0) {
        struct tb_ttsws_ev *e = calloc(1, sizeof(*e));
        if (e != NULL) {
            e->kind = TB_TTSWS_EV_SENT;
            e->t = t;
            e->j = o->j;
            post(c, e);
        }
    }
    free(o);
    if (c->oq != NULL || c->want_close)
        lws_callback_on_writable(wsi);
    return 0;
}

static int cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    struct tb_ttsws *c = lws_get_opaque_user_data(wsi);
    (void)user;
    if (c == NULL) /* its client is gone (or not a connection of ours) */
        return reason == LWS_CALLBACK_CLIENT_WRITEABLE || reason == LWS_CALLBACK_CLIENT_RECEIVE ||
                       reason == LWS_CALLBACK_CLIENT_ESTABLISHED
                   ? -1
                   : 0;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
        unsigned char **p = in;
        return handshake_headers(c, wsi, p, *p + len);
    }
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        c->open = 1;
        post_kind(c, TB_TTSWS_EV_UP, 101, NULL);
        lws_callback_on_writable(wsi);
        break;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: connection_error(c, wsi, in, len); break;
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: peer_close(c, in, len); break;
    case LWS_CALLBACK_CLIENT_CLOSED:
        c->wsi = NULL;
        c->open = 0;
        post_kind(c, TB_TTSWS_EV_CLOSED, c->close_code, c->close_why);
        break;
    case LWS_CALLBACK_CLIENT_RECEIVE: receive(c, wsi, in, len); break;
    case LWS_CALLBACK_CLIENT_WRITEABLE: return writeable(c, wsi);
    case LWS_CALLBACK_WSI_DESTROY:
        if (c->wsi == wsi)
            c->wsi = NULL; /* closed without a close callback (a connect that failed) */
        break;
    default: break;
    }
    return 0;
}

static const struct lws_protocols protocols[] = {
    {"ttsbuf-tts", cb, 0, 1 << 16, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

const struct lws_protocols *tb_ttsws_conn_protocols(void)
{
    return protocols;
}

/* The request's path and query (c->path) under the base URL's path
 * bpath: the dialect's endpoint, its voice and model escaped.  0 or
 * TB_ENOMEM. */
static int request_path(struct tb_ttsws *c, const char *bpath)
{
    char *ev = NULL, *em = NULL, base_path[512];
    size_t bl;
    snprintf(base_path, sizeof(base_path), "/%s", bpath != NULL ? bpath : "");
    bl = strlen(base_path);
    while (bl > 0 && base_path[bl - 1] == '/')
        base_path[--bl] = '\0';
    ev = curl_easy_escape(NULL, c->voice, 0);
    em = curl_easy_escape(NULL, c->model, 0);
    if (ev == NULL || em == NULL) {
        curl_free(ev);
        curl_free(em);
        return TB_ENOMEM;
    }
    {
        size_t need = bl + strlen(ev) + strlen(em) + 160;
        c->path = malloc(need);
        if (c->path != NULL) {
            if (c->api == TB_TTSWS_ELEVENLABS)
                snprintf(c->path, need,
                         "%s/v1/text-to-speech/%s/stream-input?model_id=%s&output_format=pcm_%u"
                         "&inactivity_timeout=180",
                         base_path, ev, em, c->k.rate);
            else
                snprintf(c->path, need, "%s/tts/websocket?cartesia_version=%s", base_path,
                         TB_TTSWS_CARTESIA_VERSION);
        }
    }
    curl_free(ev);
    curl_free(em);
    return c->path == NULL ? TB_ENOMEM : 0;
}

/*
 * The URL's authority (after "scheme://", up to the path) checked before
 * lws_parse_uri, which takes "host:99999" (the port wraps) and
 * "host:1:5" (a second colon) alike: a host, or an IPv6 address in
 * brackets, then at most one ":PORT" of 1..65535.  0, or TB_EINVAL (why
 * in err).
 */
static int authority_ok(const char *url, char *err, size_t errlen)
{
    const char *a = strstr(url, "://"), *end, *colon;
    long port;
    char *pe;
    if (a == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: not a URL (no scheme://)");
    a += 3;
    end = a + strcspn(a, "/");
    if (*a == '[') {
        const char *rb = memchr(a, ']', (size_t)(end - a));
        if (rb == NULL || rb == a + 1)
            return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: an IPv6 host without its ']'");
        colon = rb + 1 < end ? rb + 1 : NULL;
        if (colon != NULL && *colon != ':')
            return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: not a URL (text after ']')");
    } else {
        colon = memchr(a, ':', (size_t)(end - a));
        if (colon != NULL && memchr(colon + 1, ':', (size_t)(end - colon - 1)) != NULL)
            return tb_seterr(err, errlen, TB_EINVAL,
                             "TTS URL: not a URL (two ':' after the host; an IPv6 address "
                             "goes in [brackets])");
    }
    if (colon == NULL)
        return 0;
    errno = 0;
    port = strtol(colon + 1, &pe, 10);
    if (pe != end || colon + 1 == end || colon[1] < '0' || colon[1] > '9' || errno != 0 ||
        port < 1 || port > 65535)
        return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: port '%.*s': from 1 to 65535",
                         (int)(end - colon - 1 < 16 ? end - colon - 1 : 16), colon + 1);
    return 0;
}

int tb_ttsws_url_check(const char *url, char *err, size_t errlen)
{
    const char *a = strstr(url, "://");
    size_t n = a != NULL ? (size_t)(a - url) : 0;
    if (a != NULL && memchr(a + 3, '@', strcspn(a + 3, "/")) != NULL)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "TTS URL: credentials in the URL (the key goes in its variable)");
    if (authority_ok(url, err, errlen) != 0)
        return TB_EINVAL;
    if (!((n == 2 && strncasecmp(url, "ws", 2) == 0) || (n == 3 && strncasecmp(url, "wss", 3) == 0) ||
          (n == 4 && strncasecmp(url, "http", 4) == 0) ||
          (n == 5 && strncasecmp(url, "https", 5) == 0)))
        return tb_seterr(err, errlen, TB_EINVAL,
                         "TTS URL: scheme '%.*s' (a WebSocket dialect takes ws, wss, http or https)",
                         (int)(n < 16 ? n : 16), url);
    if (strchr(url, '?') != NULL || strchr(url, '#') != NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: a query or fragment in the base URL");
    return 0;
}

int tb_ttsws_conn_start(struct tb_ttsws *c, const char *url, int insecure, char *err, size_t errlen)
{
    struct lws_client_connect_info cc;
    const char *prot = NULL, *ads = NULL, *bpath = NULL;
    int port = 0, tls;

    if (authority_ok(url, err, errlen) != 0)
        return TB_EINVAL;
    c->conn_url = strdup(url);
    if (c->conn_url == NULL)
        return TB_ENOMEM;
    if (lws_parse_uri(c->conn_url, &prot, &ads, &port, &bpath) != 0 || ads == NULL ||
        ads[0] == '\0')
        return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: not a URL");
    if (strcmp(prot, "wss") == 0 || strcmp(prot, "https") == 0)
        tls = 1;
    else if (strcmp(prot, "ws") == 0 || strcmp(prot, "http") == 0)
        tls = 0;
    else
        return tb_seterr(err, errlen, TB_EINVAL,
                         "TTS URL: scheme '%s' (a WebSocket dialect takes ws, wss, http or https)",
                         prot);
    if (strchr(url + strlen(prot) + 3, '@') != NULL)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "TTS URL: credentials in the URL (the key goes in its variable)");
    if (strchr(url, '?') != NULL || strchr(url, '#') != NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "TTS URL: a query or fragment in the base URL");
    if (strcmp(prot, "http") == 0 || strcmp(prot, "ws") == 0)
        port = port == 0 ? 80 : port;
    if (tls && !tb_ttsws_loop_tls(c->loop))
        return tb_seterr(err, errlen, TB_EINVAL,
                         "TTS URL: a wss URL on a WebSocket loop made without TLS");
    if (request_path(c, bpath) != 0)
        return TB_ENOMEM;
    /* The log's url: scheme, host (an IPv6 address in its brackets,
     * which lws_parse_uri took off), path, no secret (none is in it). */
    {
        const char *lb = strchr(ads, ':') != NULL ? "[" : "", *rb = lb[0] ? "]" : "";
        if (port != 0 && port != (tls ? 443 : 80))
            snprintf(c->k.log.url, sizeof(c->k.log.url), "%s://%s%s%s:%d%s", tls ? "wss" : "ws", lb,
                     ads, rb, port, c->path);
        else
            snprintf(c->k.log.url, sizeof(c->k.log.url), "%s://%s%s%s%s", tls ? "wss" : "ws", lb,
                     ads, rb, c->path);
    }
    tb_secrets_scrub(c->k.own, c->k.log.url);
    tb_secrets_scrub(c->k.run, c->k.log.url);
    if (port == 0)
        port = tls ? 443 : 80;

    memset(&cc, 0, sizeof(cc));
    cc.context = tb_ttsws_loop_ctx(c->loop);
    cc.address = ads;
    cc.port = port;
    cc.path = c->path;
    cc.host = ads;
    cc.origin = ads;
    cc.protocol = NULL;
    cc.ietf_version_or_minus_one = -1;
    cc.local_protocol_name = protocols[0].name;
    cc.ssl_connection = tls ? LCCSCF_USE_SSL : 0;
    if (tls && insecure)
        cc.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK |
                             LCCSCF_ALLOW_INSECURE | LCCSCF_ALLOW_EXPIRED;
    cc.opaque_user_data = c;
    cc.pwsi = &c->wsi;
    c->created = tb_ttscore_now(&c->k);
    if (lws_client_connect_via_info(&cc) == NULL && c->wsi == NULL && c->eq == NULL)
        /* Failed at once (its error callback may have queued why). */
        post_kind(c, TB_TTSWS_EV_REFUSED, 0, "the connection could not be started");
    return 0;
}

void tb_ttsws_conn_stop(struct tb_ttsws *c)
{
    if (c->wsi == NULL)
        return;
    /* Closed at the loop's next service: an open connection's next
     * callback returns -1 (it has no client); one still connecting times
     * out at once (lws runs its timers after its next socket event). */
    lws_set_opaque_user_data(c->wsi, NULL);
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
    if (c->open)
        lws_callback_on_writable(c->wsi);
    c->wsi = NULL;
    c->open = 0;
}

void tb_ttsws_conn_wake(struct tb_ttsws *c)
{
    if (c->wsi != NULL && c->open)
        lws_callback_on_writable(c->wsi);
}
