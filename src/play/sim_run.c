/*
 * sim_run.c - the simulator, tb_sim_run: a stream's events pushed into the
 * ring at their arrival times, drained by the speech-rate consumer (see
 * sim.h).
 *
 * One thread plays both sides, as a discrete-event loop over two kinds of
 * event, so a run on the virtual clock is deterministic:
 *   arrival  the next event reaches the producer: push it, and let the
 *            drain read it at once
 *   release  a chunk's playback needs it (s_j - L): the drain frees it
 * Releases due at the same instant as an arrival go first, so a ring that
 * is exactly big enough is big enough.  The consumer logic is the drain's
 * (drain.c), the same code a live run steps on the wall clock.
 */
#include <math.h>
#include <string.h>

#include "ttsbuf/drain.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ring.h"
#include "ttsbuf/sim.h"

/* Steps the drain at every release due up to and including time t. */
static int drain_until(struct tb_drain *d, struct tb_clock *clk, double t, double *next)
{
    int rc = 0;
    while (rc == 0 && !isinf(*next) && *next <= t) {
        clk->sleep_until(clk, *next);
        rc = tb_drain_step(d, clk->now(clk), next);
    }
    return rc;
}

/* Pushes event e, waiting out backpressure.  Returns 0 or an error. */
static int produce(const struct tb_stream *s, size_t k, struct tb_ring *ring, struct tb_drain *d,
                   struct tb_clock *clk, double *next, struct tb_sim_result *r, char *err,
                   size_t errlen)
{
    const struct tb_event *e = &s->ev[k];
    int delayed = 0, rc;
    for (;;) {
        /* Releases due before the arrival happen first. */
        rc = drain_until(d, clk, delayed ? clk->now(clk) : e->t, next);
        if (rc != 0)
            return rc;
        if (!delayed)
            clk->sleep_until(clk, e->t);
        /* Delayed by backpressure, the consumer sees the later time;
         * otherwise the stream's own time (a real-time clock wakes a little
         * late, and that lateness is not the stream's). */
        double t = delayed ? clk->now(clk) : e->t;
        rc = tb_ring_push(ring, t, s->text + e->off, e->len, e->tokens, e->kind);
        if (rc == 0) {
            if (t > e->t) {
                r->backpressure_waits++;
                r->backpressure_s += t - e->t;
            }
            return tb_drain_step(d, clk->now(clk), next);
        }
        if (rc == TB_ETOOBIG)
            return tb_seterr(err, errlen, rc,
                             "event %zu: %u bytes of text exceed the ring's %zu bytes "
                             "(--ring-bytes)",
                             k + 1, e->len, tb_ring_byte_capacity(ring));
        /* Full: let the drain see the waiting producer (it makes room if
         * nothing is due), then wait for the next release. */
        delayed = 1;
        size_t held = tb_ring_count(ring);
        rc = tb_drain_step(d, clk->now(clk), next);
        if (rc != 0)
            return rc;
        /* The drain saw the waiting producer and made room if it could.  If
         * nothing left the ring and nothing is scheduled to, waiting would
         * never end (whether slots or bytes are what ran out). */
        if (isinf(*next) && tb_ring_count(ring) >= held)
            return tb_seterr(err, errlen, TB_EFULL, "the ring cannot make room");
        if (!isinf(*next))
            clk->sleep_until(clk, *next);
    }
}

int tb_sim_run(const struct tb_stream *s, const struct tb_sim_opts *o, struct tb_clock *clk,
               tb_play_fn fn, void *ud, struct tb_sim_result *r, char *err, size_t errlen)
{
    struct tb_ring *ring = NULL;
    struct tb_drain *d = NULL;
    double next = INFINITY;
    size_t ncontent = 0;
    int rc;

    memset(r, 0, sizeof(*r));
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    for (size_t i = 0; i < s->n; i++)
        ncontent += s->ev[i].kind == TB_KIND_CONTENT;
    if (ncontent == 0 && tb_end_class(s->end.kind) < TB_END_CLASS_INCOMPLETE && s->ntools == 0)
        return tb_seterr(err, errlen, TB_EEMPTY, "the stream has no content event");
    rc = tb_ring_create(o->ring_slots, o->ring_bytes, &ring);
    if (rc == 0)
        rc = tb_drain_create(o, ring, fn, ud, &d);
    if (rc != 0) {
        tb_seterr(err, errlen, rc, "%s",
                  rc == TB_EINVAL ? "bad simulation options" : "out of memory");
        goto out;
    }
    for (size_t k = 0; k < s->n && rc == 0; k++)
        rc = produce(s, k, ring, d, clk, &next, r, err, errlen);
    if (rc == 0)
        rc = tb_drain_finish(d);
    if (rc == 0)
        rc = tb_drain_step(d, clk->now(clk), &next);
    if (rc == 0)
        rc = drain_until(d, clk, INFINITY, &next);
    if (rc == 0)
        rc = tb_drain_result(d, r);
    tb_sim_result_set_usage(r, s->usage_tokens);
    if (rc == TB_ENOMEM)
        tb_seterr(err, errlen, rc, "out of memory");
    else if (rc != 0 && err != NULL && errlen > 0 && err[0] == '\0')
        tb_seterr(err, errlen, rc, "the voice stopped the run: %s", tb_strerror(rc));
out:
    tb_drain_destroy(d);
    tb_ring_destroy(ring);
    return rc;
}
