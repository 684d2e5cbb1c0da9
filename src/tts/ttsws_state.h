/*
 * ttsws_state.h - private to src/tts: the WebSocket TTS client's state
 * (ttsws.h), which its three files share (types only):
 *
 *   ttsws.c       the caller's side: chunks submitted, sent in order at
 *                 most N at once, the timeouts, finish, create, destroy;
 *   ttsws_conn.c  the connection, on the thread's loop (ttsws_loop.c):
 *                 libwebsockets, the messages written and read, each
 *                 received one queued as a struct ev;
 *   ttsws_rx.c    what came back, taken from that queue: each message
 *                 decoded, its audio attributed to the chunk the protocol
 *                 names (never to another), the chunks' ends.
 *
 * Their functions: ttsws_priv.h (ttsws.c's), ttsws_conn.h, ttsws_rx.h.
 * What the HTTP client does alike (the chunks' records and states, their
 * ends, messages, PCM, cancel, finish) is the engine's, struct
 * tb_ttscore (ttscore.h), the first member.
 */
#ifndef TTSBUF_TTS_TTSWS_STATE_H
#define TTSBUF_TTS_TTSWS_STATE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsnet.h"
#include "ttsbuf/ttsws.h"
#include "ttscore.h"

/* Cartesia's version: the HTTP row's (ttsapi_cartesia.c). */
#define TB_TTSWS_CARTESIA_VERSION "2026-03-01"
/* A received message larger than this fails the chunk ("format"). */
#define TB_TTSWS_MSG_MAX (16u << 20)
/* The bytes libwebsockets wants before a payload it writes (LWS_PRE,
 * checked against it in ttsws_conn.c). */
#define TB_TTSWS_PRE 16

/* What the connection's callbacks (inside the loop's service) queue for
 * the client's step, which handles them outside libwebsockets. */
enum tb_ttsws_ev_kind {
    TB_TTSWS_EV_UP = 1,  /* the upgrade completed */
    TB_TTSWS_EV_SENT,    /* chunk j's text was written */
    TB_TTSWS_EV_TEXT,    /* a text message */
    TB_TTSWS_EV_BINARY,  /* a binary message (its length only) */
    TB_TTSWS_EV_TOOBIG,  /* a message over TB_TTSWS_MSG_MAX */
    TB_TTSWS_EV_REFUSED, /* no connection, or the upgrade refused */
    TB_TTSWS_EV_CLOSED   /* the connection closed */
};

struct tb_ttsws_ev {
    struct tb_ttsws_ev *next;
    int kind;
    double t;    /* on the run's clock */
    uint32_t j;  /* EV_SENT: the chunk */
    long status; /* EV_REFUSED: the HTTP status (0: none); EV_CLOSED: the close code */
    char *data;  /* EV_TEXT: the message, NUL-terminated; EV_REFUSED / EV_CLOSED: why */
    size_t len;
};

/* A message to write: TB_TTSWS_PRE bytes, then the payload. */
struct tb_ttsws_out {
    struct tb_ttsws_out *next;
    uint32_t j; /* the chunk whose text this is (its "sent"), or 0 */
    size_t len;
    unsigned char buf[];
};

struct lws;

struct tb_ttsws {
    struct tb_ttscore k; /* the chunks, their records, the callbacks, the key */
    int api;
    char model[128], voice[128];
    double connect_timeout, idle_timeout, total_timeout;
    double created;

    /* The connection; loop NULL: detached, no connection. */
    struct tb_ttsws_loop *loop; /* the thread's loop (ttsws.h) */
    int own_loop;               /* made for this client: destroyed with it */
    struct lws *wsi;            /* NULL: not connected, or closed */
    int open;                   /* the upgrade completed, not closed yet */
    char *conn_url;             /* the parse buffer lws_parse_uri cut up */
    char *path;                 /* the request's path and query */
    unsigned char *rx;          /* the message being received */
    size_t rx_len, rx_cap;
    int rx_binary, rx_toobig;
    long close_code;
    char close_why[124];

    /* Between the client and its connection's callbacks. */
    struct tb_ttsws_out *oq, **oq_tail; /* to write, in order */
    struct tb_ttsws_ev *eq, **eq_tail;  /* received, for the next step */
    int want_close;                     /* close once the queue is written */

    /* Per chunk, beside the engine's state (cap of them). */
    size_t cap;
    double *last;                /* per chunk: its send or its last audio (idle) */
    uint32_t *counted;           /* per chunk (ElevenLabs): non-blank characters spoken */
    uint32_t *need;              /* per chunk (ElevenLabs): its non-blank characters */
    struct tb_ttscore_carry *cy; /* per chunk: a byte waiting for its pair */
    /* The chunks on the wire, in the order sent: wire[k] is the chunk (its
     * j) whose text went k-th, so Cartesia's flush_id k + 1 names it.
     * Blank chunks are never sent, so a position in the log is not a wire
     * id. */
    uint32_t *wire;
    size_t nwire;
    int up, down, end_sent;
    int fail_kind; /* the connection failed, or the peer broke the protocol
                    * with no chunk in flight: how every chunk sent later
                    * ends */
    long fail_status;
    char fail_msg[TB_TTS_MESSAGE_MAX];
    char context_id[40];
};

#endif
