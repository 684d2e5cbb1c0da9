/*
 * serve_priv.h - private to libttsbuf: the mock server's state, which its
 * files share (the server and connection structs, the limits), and
 * serve.c's buffers under the memory budget.  The files, in the order a
 * request meets them, each with its header:
 *
 *   serve_server.c   the server: its address, its loops on threads, the
 *                    statistics added up, the public functions of serve.h
 *   serve_accept.c   accepting connections, each handed to a loop
 *   serve_loop.c     one loop: its epoll set, the timerfd, deadlines
 *   serve_heap.h     the deadline heap
 *   serve_read.c     a connection's events, reading its request
 *   serve_route.c    routing a complete request
 *   serve_stream.c   a streamed response: items when they are due
 *   serve_body.c     a non-streamed response, sent when its last token is due
 *   serve_reply.c    responses written whole: errors, refusals
 *   serve_conn.c     sending, finishing, lingering, closing
 *   serve_log.c      the request log: each request's line when it ends
 *   serve_oai.c      OpenAI (chat and legacy completions) stream events
 *   serve_dialect.c  Anthropic events and Ollama lines
 *   serve_tool.c     tool-call turns: a request's tools, a call in its dialect
 *   serve_frame.c    HTTP chunks carrying SSE events or NDJSON lines
 *   serve_tts.c      the TTS routes: a request, its speech, its PCM on time
 *   serve_speech.c   the TTS's synthesis thread (eSpeak NG, libsamplerate)
 *   serve.c          buffers, the memory budget, lateness
 *
 * with the pure parts beside them: serve_http.c (request heads),
 * serve_plan.c (what to send and when), serve_json.c and serve_chunk.c
 * (the bodies), serve_ttsreq.c (the TTS dialects' requests and errors).
 * A connection, and everything done with it, belongs to one loop and
 * runs on that loop's thread; struct tb_serve says what the loops share.
 */
#ifndef TTSBUF_SERVE_PRIV_H
#define TTSBUF_SERVE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "serve_chunk.h"
#include "serve_heap.h"
#include "serve_http.h"
#include "serve_json.h"
#include "serve_plan.h"
#include "serve_speech.h"
#include "ttsbuf/serve.h"

#define NS 1000000000LL
#define NEVER INT64_MAX
#define ARM_STALE INT64_MIN        /* no deadline equals it: arm() re-arms */
#define LATE_BUCKET_NS 10000LL     /* 10 us */
#define LATE_BUCKETS 100000        /* up to 1 s, then one overflow bucket */
#define READ_TIMEOUT_NS (30 * NS)  /* to send a whole request */
#define FLUSH_TIMEOUT_NS (30 * NS) /* without reading any of a finished response */
#define LINGER_NS (2 * NS)
#define ACCEPT_RETRY_NS (NS / 10) /* after running out of descriptors */
#define EPOLL_BATCH 256
#define ACCEPT_BATCH 64
#define IN_FIRST 4096
#define SEND_EARLY (64u << 10)         /* send mid-batch once this much is queued */
#define PASS_BYTES (64u << 10)         /* a connection's share of one loop pass */
#define PASS_ITEMS 16384               /* ... of items walked without output */
#define REFUSALS_MAX(n) ((n) / 8 + 64) /* open 503s over the cap (serve.h) */
#define FDS_OWN 64                     /* the server's own and the process's */
#define BUF_FREE 4096                  /* bytes a buffer may hold outside the memory budget */

enum cstate { C_READ, C_STREAM, C_WAIT, C_TTS, C_FLUSH, C_LINGER };
enum ending { END_BODY, END_DROP, END_ERROR }; /* how a non-streamed response ends */

/* A growing text; its capacity counts against the memory budget. */
struct tb_serve_sbuf {
    char *p;
    size_t len, cap;
};

struct tb_serve_conn {
    struct tb_serve_heap_node hn; /* its one deadline (CLOCK_MONOTONIC ns); first member */
    struct tb_serve_loop *s;      /* its server (the memory budget) */
    int fd;
    enum cstate st;
    uint32_t events; /* registered with epoll */
    struct tb_serve_conn *prev, *next;

    /* Request. */
    char *in;
    size_t in_len, in_cap, scan, need;
    int have_head;
    struct tb_serve_http_head head; /* offsets into in */

    /* Response. */
    int64_t t0; /* T */
    struct tb_serve_json_req rq;
    struct tb_serve_json_ctx ctx;
    struct tb_serve_chunk chunk; /* a streamed event's fixed bytes */
    struct tb_faults f;
    struct tb_serve_plan plan;
    struct tb_serve_item item; /* the next item, when have_item */
    int have_item;
    uint64_t sent_tokens;
    enum ending ending;
    int body_malformed;
    int block;                   /* anthropic: the open content block, -1 none */
    int block_reasoning;         /* ... and whether it is a thinking block */
    int64_t first_due, last_due; /* ollama: due times of the first and last items */
    /* A non-streamed body, gathered over loop passes (body_send). */
    struct tb_serve_plan walk; /* a copy of the plan, walked to find the end */
    int walking;
    int64_t body_due; /* when the body is due, after the request */
    struct tb_serve_sbuf content, reasoning;
    uint64_t body_tokens, body_events;

    /* Output. */
    char *out;
    size_t out_off, out_len, out_cap;
    int final;      /* close once out drains */
    int hard_close; /* ... at once, without lingering (drop@K) */
    int refusal;    /* answered 503 over max_conns: not counted against it */
    int broken;     /* an output step failed: drop the connection */
    atomic_size_t *slot; /* the in-flight count it holds a place in, or NULL */
    int yielded;    /* its share of a pass ran out: due again at once */

    /* What the request log says of it (serve_log.c). */
    struct {
        const char *route;                    /* NULL: none yet */
        char rid[TB_SERVE_RID_MAX + 1];       /* X-Ttsbuf-Request-Id, "" none */
        int64_t received, first_byte, closed; /* CLOCK_MONOTONIC ns; -1 none */
        int64_t late_max;                     /* its timed writes' largest lateness, ns; -1 none */
        int64_t prompt_tokens, tts_chars;     /* -1: none */
        uint64_t seed;                        /* its stream's seed, when seeded */
        int seeded;                           /* its stream was drawn for it */
        int64_t audio_sent, audio_planned;    /* the TTS's PCM bytes; -1 none */
        uint64_t bytes;                       /* response bytes handed to send() */
        int status;                           /* the response's, 0 none */
        int stream;                           /* 1, 0, -1 unknown */
        int planned;                          /* the plan is the request's (tokens apply) */
        int fault;                            /* a fault ended or answered it */
        int done;                             /* its line was made */
        const char *over;                     /* refused over this cap, or NULL */
        int tool_call;       /* offered tools: 1 answered with a call, 0 not; -1 none */
        int tool_result;     /* carried a tool result: 1 in its dialect's shape, 0
                              * not; -1 none */
        char tool_args[256]; /* the call's arguments it answered with, or
                              * those its result's call carried; "" none */
    } lg;

    struct tb_serve_tts_conn *tts; /* a TTS request's state (serve_tts.c); NULL otherwise */
    struct tb_stream *own;         /* the stream drawn for it (serve.h's Streams), or NULL */
    size_t own_bytes;              /* ... counted against the memory budget */
    /* Frees a route's own state when the connection closes (set by the
     * route, so serve_conn.c need not know it); NULL: none. */
    void (*on_close)(struct tb_serve_loop *s, struct tb_serve_conn *c);
};

/* The server: what its loops share.  Set by tb_serve_create and read
 * only after, but for the counters (atomics, or under log_mu). */
struct tb_serve {
    const struct tb_stream *stream;
    int (*stream_for)(void *ud, uint64_t seed, struct tb_stream *out); /* serve.h's Streams */
    void *stream_for_ud;
    uint64_t seed;
    struct tb_faults faults;
    size_t max_conns;
    size_t max_inflight, tts_max_inflight; /* 0: none (serve.h's Capacity) */
    unsigned retry_after;
    atomic_size_t inflight, tts_inflight;  /* requests in flight now */
    double prefill; /* s per input token */
    double tool_rate;                 /* requests with tools answered with a call (serve_tool.h) */
    atomic_uint_fast64_t tool_draws; /* ... drawn so far */
    size_t budget;  /* bytes of request and output buffers, over all connections */
    int lfd, stopfd, port;
    /* The mock TTS (serve_tts.c). */
    struct tb_serve_speech *speech; /* its thread, started by the first job */
    double (*tts_latency_at)(void *ud, uint32_t i);
    void *tts_latency_ud;
    double tts_rtf;
    double tts_lead;
    struct tb_tts_faults tts_faults;
    const char *tts_key;
    /* The request log (serve_log.c): one line at a time, seq in order. */
    void (*request_log)(void *ud, const struct tb_serve_request *r);
    void *request_log_ud;
    pthread_mutex_t log_mu;
    uint64_t log_seq; /* under log_mu */
    /* Counted over every loop. */
    atomic_uint_fast64_t draws;    /* completion requests without an id so far */
    atomic_uint_fast64_t next_id;  /* responses numbered so far (their ids) */
    atomic_uint_fast64_t tts_next; /* TTS requests numbered so far */
    atomic_size_t mem;             /* buffer bytes held now (capacities), under budget */
    atomic_size_t mem_peak;        /* ... the most */
    atomic_size_t nconns;          /* open connections, refusals included */
    /* The loops (serve_loop.c); loops[0] accepts and hands connections
     * on (serve_accept.c). */
    struct tb_serve_loop *loops;
    size_t nloops;
};

/* One event loop: its thread's epoll set, timerfd, deadlines and
 * connections, and its own statistics.  Only its thread touches it, but
 * for the inbox (under inbox_mu) and nopen (read by the acceptor). */
struct tb_serve_loop {
    struct tb_serve *srv;
    size_t index;
    int epfd, tfd;
    int inbox_fd; /* eventfd: connections handed to this loop */
    pthread_mutex_t inbox_mu;
    int *inbox; /* ... their descriptors, under inbox_mu */
    size_t ninbox, inbox_cap;
    pthread_t th; /* loops[1..]: their threads, while running */
    int started, rc;
    atomic_size_t nopen; /* its open connections (the acceptor's choice) */
    uint64_t taken;      /* connections it opened (tb_serve_stats) */
    /* Accepting (loops[0] only). */
    size_t nrefusals;  /* open connections refused over max_conns */
    int refusals_full; /* accept paused: REFUSALS_MAX refusals open */
    int accept_paused;
    int64_t accept_retry;
    size_t next_loop; /* round robin among the least loaded */
    int64_t armed;    /* the timerfd's deadline, NEVER when disarmed */
    struct tb_serve_heap heap;
    struct tb_serve_conn *conns; /* every open connection */
    char *text;                  /* an item's text */
    size_t text_cap;
    uint64_t *late; /* LATE_BUCKETS + 1 counts */
    int64_t late_max;
    struct tb_serve_stats st;
    int stopping; /* closing what is open: the requests in flight stopped */
};

/* Counts one lateness of c's (write time minus schedule, ns) in the
 * server's histogram and in c's own largest (its log line's late_max). */
void tb_serve_late_record(struct tb_serve_loop *s, struct tb_serve_conn *c, int64_t late);

/* The memory budget, shared by the loops (serve.c): takes n bytes, when
 * check only if they fit (0, or 1: over it, nothing taken); gives them
 * back; the bytes held now.  Any loop. */
int tb_serve_mem_take(struct tb_serve *srv, size_t n, int check);
void tb_serve_mem_give(struct tb_serve *srv, size_t n);
size_t tb_serve_mem_held(struct tb_serve *srv);

/* A connection handed to s has gone (closed, or never opened): the
 * counts the acceptor chooses by (serve_accept.c) drop.  Any thread. */
void tb_serve_conn_gone(struct tb_serve_loop *s);

/* Buffers.  Every request and output buffer counts against the memory
 * budget by its capacity (tb_serve_buf_resize). */
int tb_serve_buf_resize(struct tb_serve_loop *s, char **p, size_t *have, size_t cap);
void tb_serve_buf_free(struct tb_serve_loop *s, char **p, size_t *have);
void tb_serve_in_free(struct tb_serve_conn *c);
int tb_serve_sbuf_put(struct tb_serve_loop *s, struct tb_serve_sbuf *b, const char *p, size_t n);
void tb_serve_sbuf_free(struct tb_serve_loop *s, struct tb_serve_sbuf *b);
int tb_serve_out_room(struct tb_serve_conn *c, size_t n);
void tb_serve_out_put(struct tb_serve_conn *c, const char *p, size_t n);

/* Appends into room tb_serve_out_room made. */
static inline void tb_serve_out_add(struct tb_serve_conn *c, const char *p, size_t n)
{
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
}

/* Gives back c's place among the requests in flight (serve.h's
 * Capacity; serve_reply.c takes it): when its response's last byte is
 * sent, or it closes; again is a no-op. */
static inline void tb_serve_slot_give(struct tb_serve_conn *c)
{
    if (c->slot != NULL)
        atomic_fetch_sub(c->slot, 1);
    c->slot = NULL;
}

/* Whether c speaks Anthropic's or Ollama's dialect (serve_dialect.c),
 * not OpenAI's (serve_oai.c). */
static inline int tb_serve_is_dialect(const struct tb_serve_conn *c)
{
    return c->ctx.api == TB_API_ANTHROPIC || c->ctx.api == TB_API_OLLAMA;
}

#endif
