/*
 * ttscore.h - private to src/tts: the engine both TTS clients share, the
 * HTTP one (ttshttp.c) and the WebSocket one (ttsws.c), so that they
 * differ only in the wire.  It holds what a client does with a stream's
 * chunks whatever carries them: the options every client takes (clock,
 * callbacks, key, secrets, N), the log and each chunk's state, a text
 * checked and recorded, the window of N chunks in flight, a chunk's end
 * (the callback, the first failure), a record's message with every
 * secret masked, the PCM handed on in whole samples, the chunks not sent
 * canceled, and finish, cancel and the log taken.  The wire comes in
 * through struct tb_ttscore_ops: how it stops what is in flight, and its
 * step.
 *
 * Everything here runs on the caller's thread (the one that owns the
 * client), but tb_ttscore_now, which any thread may call (the clock is a
 * pure read).
 */
#ifndef TTSBUF_TTS_TTSCORE_H
#define TTSBUF_TTS_TTSCORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/capq.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/secrets.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsnet.h"

/* A chunk's state. */
enum { TB_TTSCORE_QUEUED = 0, TB_TTSCORE_FLYING, TB_TTSCORE_ENDED };

/* The odd byte of a chunk's PCM, held until its pair comes. */
struct tb_ttscore_carry {
    unsigned char odd;
    unsigned char has; /* odd holds a byte */
};

/* What the engine asks of the wire.  `c` is the client (ops_ud). */
struct tb_ttscore_ops {
    /* Sends chunk index i, the engine's next already past it: marks it
     * FLYING, and a chunk that cannot go (a blank one, a request not
     * made) ends at once.  0, or < 0 (TB_ENOMEM). */
    int (*send)(void *c, size_t i);
    /* Every chunk in flight ends now as kind, why (the message is
     * "why, after N bytes"). */
    void (*stop_flying)(void *c, int kind, const char *why);
    /* One step of the client (its tb_*_step): what is left, or < 0. */
    int (*step)(void *c, int timeout_ms);
    /* Before each step of finish, or NULL: 0, or < 0 to return. */
    int (*finishing)(void *c);
};

struct tb_ttscore {
    const struct tb_ttscore_ops *ops;
    void *ops_ud;
    unsigned rate;
    int n; /* concurrency */
    struct tb_clock own_clock, *clk;
    double origin;
    char *key;                    /* the key, or NULL; zeroed when freed */
    struct tb_secrets *own;       /* the key's own set (and the URL's secrets) */
    const struct tb_secrets *run; /* the run's, or NULL */
    tb_ttsnet_audio_fn on_audio;
    tb_ttsnet_end_fn on_end;
    void *ud;
    const atomic_int *cancel;
    /* The shared capacity (ttsnet.h), or NULL; with it, one slot for each
     * of the N chunks that may be in flight (chunk j uses slot (j-1) % N:
     * chunk j goes only once chunk j - N has ended and left its slot),
     * the chunk each slot is for (0: none; owner-only, never read by
     * another thread), and the chunk in the queue not yet granted (1-based;
     * 0: none). */
    struct tb_capq *cap;
    struct tb_capq_slot *slots;
    uint32_t *slot_of;
    uint32_t entered;

    struct tb_tts_log log;
    unsigned char *state; /* per chunk: QUEUED, FLYING, ENDED */
    size_t state_cap;
    size_t next;       /* index of the next chunk to send */
    size_t ended;      /* chunks ended */
    uint32_t failed;   /* first failed chunk, or 0 */
    uint32_t last_end; /* the last chunk that ended complete, or 0 */
    int stopping;      /* no more sends: a failure, or canceled */
    int closed;        /* finish, cancel or take_log: no more submits */
};

/*
 * tb_ttscore_check - the options every client checks alike: N from 1 to
 * 1024 (0: 1), no negative timeout.  0 or TB_EINVAL (why in err).
 */
int tb_ttscore_check(const struct tb_ttsnet_opts *o, char *err, size_t errlen);

/*
 * tb_ttscore_init - k from o: the rate, N, the clock, the callbacks, the
 * run's secrets, a copy of the key and an empty set of its own (the
 * client adds to it), the log empty; ops called with ops_ud.  0 or
 * TB_ENOMEM (then tb_ttscore_free releases what was made).  k must be
 * zeroed first.
 */
int tb_ttscore_init(struct tb_ttscore *k, const struct tb_ttsnet_opts *o,
                    const struct tb_ttscore_ops *ops, void *ops_ud);

/* Releases what k holds (the key zeroed first).  A zeroed k: nothing. */
void tb_ttscore_free(struct tb_ttscore *k);

/* Seconds on the run's clock.  Any thread. */
static inline double tb_ttscore_now(const struct tb_ttscore *k)
{
    return k->clk->now(k->clk) - k->origin;
}

/* Record of chunk j (1-based). */
static inline struct tb_tts_chunk *tb_ttscore_rec(struct tb_ttscore *k, uint32_t j)
{
    return &k->log.c[j - 1];
}

/* What is left to end (the steps' return). */
static inline int tb_ttscore_left(const struct tb_ttscore *k)
{
    return (int)(k->log.n - k->ended);
}

/* Whether the next chunk may go now: one is queued and chunk next - N
 * has ended (at most N in flight, sent in order); the shared capacity is
 * asked apart (tb_ttscore_send_ready). */
int tb_ttscore_may_send(const struct tb_ttscore *k);

/*
 * tb_ttscore_text - whether text[0..len) may be submitted (*text "" when
 * NULL): 0; TB_EINVAL closed, NULL with a length, not UTF-8 or a NUL in
 * it; TB_ETOOBIG over TB_EVENT_TEXT_MAX.
 */
int tb_ttscore_text(const struct tb_ttscore *k, const char **text, size_t len);

/* Records a checked text as the next chunk, queued.  0 or TB_ENOMEM. */
int tb_ttscore_add(struct tb_ttscore *k, const char *text, size_t len);

/*
 * tb_ttscore_ended - chunk j ended (its record complete): its state, the
 * count, a failure (not a cancel) stops the run's sending, the callback.
 * Once per chunk: a chunk already ended is left alone.
 */
void tb_ttscore_ended(struct tb_ttscore *k, uint32_t j);

/* r->message from fmt and its arguments: every secret of k's two sets
 * masked, then one sanitized line (base/jsonfield.h), cut to its size. */
void tb_ttscore_say(const struct tb_ttscore *k, struct tb_tts_chunk *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*
 * tb_ttscore_pcm - PCM bytes buf[0..len) of chunk j, which arrived at t:
 * whole samples counted in r (tb_tts_chunk_received) and handed to
 * on_audio (or none: NULL), an odd trailing byte held in *cy until its
 * pair comes.  Non-zero: on_audio asked to stop (what followed in buf is
 * not handed on).
 */
int tb_ttscore_pcm(struct tb_tts_chunk *r, struct tb_ttscore_carry *cy, const char *buf, size_t len,
                   double t, tb_ttsnet_audio_fn on_audio, void *ud, uint32_t j);

/*
 * tb_ttscore_cap_ready - whether the next chunk (one that may go) holds a
 * slot of the shared capacity, entering the queue the first time it is
 * asked (its record's cap_ready then, cap_wait once granted): 1 yes, or
 * no capacity, or a blank chunk (no request, no slot); 0 it waits.  Every
 * path that sends asks it after tb_ttscore_may_send.
 */
int tb_ttscore_cap_ready(struct tb_ttscore *k);

/*
 * tb_ttscore_send_ready - sends, in order, every chunk now allowed (chunk
 * j once chunk j - N has ended, and with a shared capacity once it holds
 * a slot of it: it enters the queue the first time it may go, and goes at
 * a later call once granted) through ops->send; after a failure
 * nothing more is sent, and what is in flight or queued ends "canceled".
 * 0, or the first send's error.
 */
int tb_ttscore_send_ready(struct tb_ttscore *k);

/* Every chunk not sent yet ends "canceled" (never sent: times NAN). */
void tb_ttscore_cancel_queued(struct tb_ttscore *k);

/* What is in flight ends as kind, why; what is not sent, canceled. */
void tb_ttscore_halt(struct tb_ttscore *k, int kind, const char *why);

/* The cancel flag is up and nothing is stopping yet. */
int tb_ttscore_cancel_asked(const struct tb_ttscore *k);

/* Cancel's bookkeeping: closed, stopping, everything ended "canceled". */
void tb_ttscore_cancel(struct tb_ttscore *k);

/*
 * tb_ttscore_finish - no more submits; steps until every chunk has ended
 * or the deadline (run's clock) passed, when what is left ends "timeout"
 * (in flight) or "canceled" (not sent).  0, or a step's error.
 */
int tb_ttscore_finish(struct tb_ttscore *k, double deadline);

/* Moves the log out (the client sends nothing more). */
void tb_ttscore_take_log(struct tb_ttscore *k, struct tb_tts_log *out);

#endif
