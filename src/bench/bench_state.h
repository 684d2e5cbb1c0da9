/*
 * bench_state.h - private to libttsbuf: the state of one load level of
 * `ttsbuf bench`, which its parts share: the schedule (bench.c), the event
 * loop with its sockets and clock (bench_loop.c) and each stream's own
 * handling (bench_xfer.c: starting a transfer, reading it, turning it into
 * a record).  Types only.
 *
 * Threads: everything here runs on the thread that called tb_bench_run.
 */
#ifndef TTSBUF_BENCH_STATE_H
#define TTSBUF_BENCH_STATE_H

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "net/http_xfer.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/capq.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/ttsnet.h"

/* Sockets taken per epoll_wait: enough for a whole burst of a thousand
 * streams, so every socket ready at a wake-up gets that wake-up's stamp
 * (12 KiB). */
#define EVENTS_PER_WAIT 1024
/* While the FIFO is worked through, epoll is asked again this often. */
#define REPOLL_S 0.0002
/* A transfer this long without a byte is handed to libcurl at each scan. */
#define SILENT_S 1.0

/* A socket libcurl watches, indexed by its descriptor. */
struct fdq {
    double seen;    /* level time the loop first saw it ready */
    double last;    /* ... and last saw new bytes come in, before handling it */
    uint64_t hpoll; /* the poll count when it was last handled */
    uint32_t ev;    /* epoll events seen and not yet handled; 0: none */
    int32_t next;   /* the FIFO's next descriptor, or -1 */
    uint8_t queued;
    uint8_t test;  /* events unknown: libcurl tests the socket itself */
    uint8_t stale; /* seen in the first poll after a handling: see run_ready */
};

struct xf {
    struct bench *b;
    struct tb_http_xfer hx;
    struct tb_http_resp hr;
    struct tb_http_req q; /* the options' request, with this body */
    struct tb_reader rd;  /* records into stream */
    struct tb_stream stream;
    char *body;
    uint64_t id;
    uint32_t prompt;
    double t_sched, t_start; /* level time */
    int warm;
    int fd;          /* its socket, once libcurl has said; else -1 */
    int running;     /* in the multi handle */
    struct xf *next; /* free list / in-flight list */
    struct xf *prev;
    /* A real TTS (bench.h): the segmenter, the client, the content not yet
     * in a chunk (pend[0..npend) starts at content byte seg_from), and the
     * events fed so far. */
    struct tb_seg *seg;
    struct tb_ttsnet *tts;
    char *pend;
    size_t npend, pendcap, fed;
    uint64_t seg_from;
    int tts_rc; /* the client failed (TB_ENOMEM, TB_EIO), or 0 */
    /* bench --filler with a real TTS (bench_filler.c): the client saying
     * the filler since the stream's first tool call began, or NULL; and
     * whether it was tried (once a stream). */
    struct tb_ttsnet *ftts;
    int filler_tried;
    int tts_dead; /* its TTS is dead: the LLM transfer is to stop (bench.h) */
    /* A call's turn (bench_call.c): its call's slot, id and turn; call -1
     * for a one-shot request. */
    uint32_t slot;
    int64_t call;
    int32_t turn;
    /* The turn's request id header (bench.h) and the header list that
     * carries it (the level's, then this one). */
    char rid[64];
    const char **hdrs;
    size_t hdrcap;
    /* Barge-in (bench_barge_rt.c): the seconds of playback before the
     * interruption (NAN: none drawn), its level time T (INFINITY until
     * s_1 is known), the stream's own segmenter and playout engine, what
     * was fed to them (events, tokens, the event being fed), the pending
     * list's links, and whether and when the stream was closed at T. */
    double barge_b, barge_t;
    struct tb_seg *bseg;
    struct tb_playout *bplay;
    size_t bfed;
    uint64_t btokens, btok;
    double bt;
    int brc; /* the engine failed (TB_ENOMEM, TB_EINVAL): no barge-in */
    int bpending;
    struct xf *bnext, *bprev;
    int barged;
    double cancel_s;
    /* Retries (bench.h): the waits so far, and while waiting (not in the
     * multi handle, still in flight), when the next attempt is due. */
    uint32_t nretries;
    double retry_wait[TB_BENCH_RETRIES_MAX];
    int waiting;
    double retry_at;
    /* --llm-capacity (bench.h): its slot of the shared capacity; queued
     * (waiting, retry_at INFINITY, not yet sent) until granted; the wait. */
    struct tb_capq_slot llm_slot;
    int llm_queued, llm_held;
    double llm_wait;
};

/* A call in progress (bench_call.c): its conversation, the next turn to
 * send (or the one in flight), and the answers received so far. */
struct call {
    uint64_t id;      /* global call id */
    uint32_t convo;   /* its conversation's index */
    uint32_t turn;    /* the turn in flight, or the next to send */
    uint32_t nturns;  /* turns this call sends */
    double speak_end; /* level time its last answer's playback ends */
    char **ans;       /* answers 0..turn-1, owned */
    int32_t next;     /* the free list's next slot, or -1 */
    /* A tool turn (bench_tool.c): 0 none; 1 the turn's first request made
     * a tool call and the call waits to send its result; 2 sent.  Its
     * first request's send (level time), the calls' count, the first
     * call's start and the last's end (s from that send), the first
     * call's id and name. */
    uint8_t tool;
    uint32_t tool_calls;
    double tool_t0, tool_start, tool_end;
    char tool_id[64], tool_name[64];
    /* The first call's arguments as the model streamed them (owned,
     * at most TB_TOOL_ARGS_KEEP bytes), or NULL: none came, or too many
     * (sent as {}); tool_args_bad: 1 when they are not a JSON object or
     * were too long to keep (bench_tool.c). */
    char *tool_args;
    int tool_args_bad;
};

/* A waiting call in the heap: when its next turn is due. */
struct callwait {
    double t;
    uint32_t slot;
};

/* The calls of a level (bench_call.c). */
struct calls {
    struct call *v; /* slots */
    size_t n, cap;
    int32_t free_head;     /* free slots, -1: none */
    struct callwait *heap; /* waiting calls, a min-heap by t */
    size_t nheap, heapcap;
    size_t target; /* calls this shard runs */
    size_t started, ended, active;
    size_t completed, cut, failed;   /* how the ended calls ended */
    size_t turns_done, turns_target; /* turns ended, and to run in all */
    double next_arrival;             /* open loop: level time of the next call */
    int rc;                          /* an error a turn's end met (TB_ENOMEM, the
                                      * playout's), err[] says; 0: none */
    char err[256];
};

/* A stream whose LLM transfer ended while its TTS still speaks: the
 * client and the index of its record. */
struct ttsjob {
    struct tb_ttsnet *tts;
    size_t rec;
    int rc;
    int64_t slot; /* a call's turn: its call's slot, ended when the TTS is;
                   * -1: a one-shot request */
    /* Barge-in (bench.h): the seconds of playback before the caller
     * interrupts (NAN: none, or already done) and the stream's start. */
    double barge_b, t_start;
    struct ttsjob *next;
};

struct bench {
    const struct tb_bench_opts *o;
    struct tb_bench_recs *out;
    uint32_t level;
    CURLM *m;
    int ep;
    struct tb_clock clk;  /* the transfers' clock: stamp_now */
    unsigned reads;       /* clk.now() calls since the last stamp */
    int handling;         /* a socket is being handed to libcurl */
    double later;         /* ... its fdq.last */
    struct tb_clock mono; /* level time: origin at the level's start */
    double timeout_at;    /* libcurl's timer, level time; < 0: none */
    struct fdq *fds;      /* by descriptor */
    size_t nfds;
    int32_t rq_head, rq_tail; /* the FIFO of ready sockets; -1: empty */
    double polled;            /* level time of the last epoll_wait */
    uint64_t polls;           /* epoll_wait calls so far */
    struct epoll_event evs[EVENTS_PER_WAIT];
    struct tb_http_req http; /* the options' request, with the dialect's auth */
    /* Its secrets (tb_http_secrets), which the readers mask. */
    struct tb_secrets *secrets;
    const char **headers; /* the dialect's fixed header, then the caller's */
    struct xf *free_list, *inflight;
    size_t ninflight, cap;
    /* the schedule */
    uint64_t next_local; /* local index of the next request (warm-up first) */
    size_t warm_left;
    size_t target; /* measured requests this shard runs (SIZE_MAX: --duration) */
    size_t started, done, errors;
    uint64_t events;
    double next_arrival; /* open loop: level time of the next arrival */
    double *queue;       /* open loop: arrivals waiting for the cap */
    size_t qhead, qn, qcap;
    double rate;  /* this shard's */
    uint64_t rng; /* xorshift state */
    int measuring;
    int stopped;               /* cancel seen */
    uint64_t held, held_max;   /* bytes of streams kept, in flight and recorded
                                * (tb_bench_held), and their cap */
    struct ttsjob *jobs;       /* a real TTS: the streams still speaking */
    struct fillerjob *fillers; /* ... the fillers of calls waiting for a tool
                                * (bench_filler.c) */
    size_t njobs;
    size_t ntts; /* TTS clients open (in flight and jobs) */
    /* A WebSocket TTS (--tts-api *-ws): the loop that serves every client
     * of this level's thread (ttsws.h), made by the first, destroyed by
     * level_close after the last client; NULL: none. */
    struct tb_ttsws_loop *wsl;
    size_t tts_dead; /* streams in flight flagged tts_dead */
    int calling;     /* the level runs calls (bench_call.c) */
    /* Calls: called by bench_xfer.c when a turn's record is made (the
     * call's slot, the record's index), so that the stream's handling
     * does not include the calls' module. */
    void (*turn_ended)(struct bench *b, uint32_t slot, size_t rec_index);
    /* Calls: sends the call in slot's turn again at level time t (a tool
     * turn's second request, bench_tool.c): tb_bench_call_wait. */
    int (*call_wait)(struct bench *b, uint32_t slot, double t);
    struct calls calls;
    /* drop_streams (bench.h): the playout's error for a stream played
     * out as its request ended, or "" (the error returned is its code). */
    char play_err[256];
    size_t nwaiting;       /* streams waiting to retry (bench_retry.c) or for an LLM slot */
    size_t nllmq;          /* of them, those waiting for an LLM slot (llm_queued) */
    struct xf *barge_head; /* streams with a barge-in pending */
    double barge_next;     /* the earliest known T among them, or INFINITY */
};

#endif
