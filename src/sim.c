/*
 * sim.c - the ring-driven simulator (see sim.h).
 *
 * A discrete-event loop plays both sides of the ring on one thread, so a
 * run on the virtual clock is deterministic.  Two kinds of event:
 *   arrival  the source's next event reaches the producer: push it; the
 *            consumer reads it at once and feeds the segmenter, which may
 *            close chunks, which the playout engine schedules
 *   release  a chunk's playback needs it (s_j - L): its tokens leave the
 *            ring
 * Releases due at the same instant as an arrival go first, so a ring that
 * is exactly big enough is big enough.
 *
 * Memory: the ring (fixed), plus one record per chunk (the chunk list the
 * pre-roll curve reuses).  O(events) time; no allocation per event.
 */
#include "ttsbuf/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ring.h"
#include "ttsbuf/utf8.h"
#include "ttsbuf/voice.h"

struct rel {
    uint64_t end; /* content byte where the chunk ends */
    double u;     /* release time; NAN until playback schedules it */
};

struct sim {
    const struct tb_sim_opts *o;
    struct tb_ring *ring;
    struct tb_seg *seg;
    struct tb_playout *play;
    tb_play_fn user_fn;
    void *user_ud;
    struct tb_chunks chunks;
    struct rel *rel;
    size_t nrel, caprel, next_rel;
    double t_cur;        /* arrival of the content event being fed */
    uint64_t tok_cur;    /* its token index */
    uint64_t tokens;     /* content tokens fed */
    uint64_t released_b; /* content bytes released from the ring */
    uint64_t cps_in_ring;
    int rc;
};

void tb_sim_opts_default(struct tb_sim_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->seg.policy = TB_CHUNK_SENTENCE;
    o->seg.min_chars = 1;
    tb_playout_opts_default(&o->play);
    o->ring_slots = TB_RING_SLOTS_DEFAULT;
    o->ring_bytes = TB_RING_BYTES_DEFAULT;
}

/* Playout callback: a chunk's schedule is known; so is its release. */
static void on_play(void *ud, const struct tb_play *pl)
{
    struct sim *m = ud;
    struct rel *r = &m->rel[pl->chunk - 1];
    double c = m->chunks.v[pl->chunk - 1].c;
    double u = pl->start - m->o->play.tts_latency;
    r->u = u > c ? u : c;
    if (m->user_fn != NULL)
        m->user_fn(m->user_ud, pl);
}

/* Segmenter callback: a chunk closed at the event being fed. */
static void on_chunk(void *ud, const struct tb_chunk *ch)
{
    struct sim *m = ud;
    int rc;
    if (m->rc != 0)
        return;
    if (m->nrel == m->caprel) {
        struct rel *nr = tb_grow(m->rel, &m->caprel, sizeof(*nr), 256);
        if (nr == NULL) {
            m->rc = TB_ENOMEM;
            return;
        }
        m->rel = nr;
    }
    m->rel[m->nrel].end = ch->end;
    m->rel[m->nrel].u = NAN;
    m->nrel++;
    rc = tb_chunks_push(&m->chunks, m->t_cur, m->tok_cur, ch->cps);
    if (rc == 0)
        rc = tb_playout_add(m->play, m->t_cur, m->tok_cur, ch->cps);
    if (rc != 0)
        m->rc = rc;
}

/* Frees items from the ring's tail up to content byte `end`; reasoning
 * items in the way go with them (they are never spoken). */
static void release_upto(struct sim *m, uint64_t end)
{
    size_t n = 0, count = tb_ring_count(m->ring);
    struct tb_ring_item it;
    uint64_t b = m->released_b;
    while (n < count && tb_ring_peek(m->ring, n, &it) == 0) {
        if (it.kind == TB_KIND_CONTENT) {
            if (b + it.len > end)
                break;
            b += it.len;
            m->cps_in_ring -= tb_utf8_count(it.text, it.len);
        }
        n++;
    }
    tb_ring_release(m->ring, n);
    m->released_b = b;
}

/* The consumer reads the item just pushed (the newest). */
static void consume_newest(struct sim *m)
{
    struct tb_ring_item it;
    size_t count = tb_ring_count(m->ring);
    tb_ring_peek(m->ring, count - 1, &it);
    if (it.kind != TB_KIND_CONTENT) {
        if (count == 1)
            tb_ring_release(m->ring, 1); /* nothing before it waits */
        return;
    }
    m->tokens += it.tokens;
    m->t_cur = it.t;
    m->tok_cur = m->tokens - 1;
    m->cps_in_ring += tb_utf8_count(it.text, it.len);
    tb_seg_feed(m->seg, it.text, it.len, on_chunk, m);
}

static double next_release(const struct sim *m)
{
    if (m->next_rel < m->nrel && !isnan(m->rel[m->next_rel].u))
        return m->rel[m->next_rel].u;
    return INFINITY;
}

/* The ring is full and nothing is due to leave it: make room the way a
 * bounded pipeline must (cut the open chunk; start playback). */
static int unjam(struct sim *m, double now, struct tb_sim_result *r)
{
    if (tb_seg_fed(m->seg) > (m->nrel ? m->rel[m->nrel - 1].end : 0)) {
        m->t_cur = now; /* the chunk is handed over now, not at its last token */
        tb_seg_cut(m->seg, on_chunk, m);
        r->forced_cuts++;
        if (m->rc != 0)
            return m->rc;
    }
    if (!tb_playout_started(m->play, NULL) && m->nrel > 0) {
        int rc = tb_playout_force_start(m->play, now);
        if (rc != 0)
            return rc;
        r->forced_start = 1;
    }
    return isinf(next_release(m)) ? TB_EFULL : 0;
}

static void summarize(const struct tb_stream *s, const double *eff,
                      struct tb_sim_result *r)
{
    size_t first = SIZE_MAX, last = 0, n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct tb_event *e = &s->ev[i];
        if (e->kind == TB_KIND_CONTENT) {
            if (first == SIZE_MAX)
                first = i;
            last = i;
            n++;
            r->content_tokens += e->tokens;
        } else {
            r->reasoning_events++;
            r->reasoning_tokens += e->tokens;
        }
    }
    r->events = s->n;
    r->content_events = n;
    r->usage_tokens = s->usage_tokens;
    r->last_t = s->n ? eff[s->n - 1] : 0.0;
    if (n > 0) {
        r->ttft = eff[first];
        if (n > 1 && eff[last] > eff[first])
            r->decode_tps = (double)(n - 1) / (eff[last] - eff[first]);
    }
}

static int curve(struct sim *m, struct tb_sim_result *r)
{
    for (int i = 0; i < TB_CURVE_POINTS; i++) {
        struct tb_playout_opts po = m->o->play;
        struct tb_playout_result pr;
        struct tb_playout *p;
        int rc;
        po.preroll = tb_curve_prerolls[i];
        rc = tb_playout_create(&po, NULL, NULL, &p);
        if (rc != 0)
            return rc;
        rc = tb_analyze_playout(&m->chunks, p, &po, &pr);
        tb_playout_destroy(p);
        if (rc != 0)
            return rc;
        r->curve[i].preroll = po.preroll;
        r->curve[i].min_tps = pr.min_tps;
        r->curve[i].ttfa = pr.ttfa;
        r->curve[i].gap_total = pr.gap_total;
        r->curve[i].gap_max = pr.gap_max;
        r->curve[i].underruns = pr.underruns;
    }
    return 0;
}

int tb_sim_run(const struct tb_stream *s, const struct tb_sim_opts *o,
               struct tb_clock *clk, tb_play_fn fn, void *ud,
               struct tb_sim_result *r, char *err, size_t errlen)
{
    struct sim m;
    struct tb_ring_stats st;
    double *eff = NULL; /* effective arrival times (after backpressure) */
    size_t k = 0, ncontent = 0;
    int finished = 0, blocked = 0, delayed = 0, rc;

    memset(r, 0, sizeof(*r));
    memset(&m, 0, sizeof(m));
    m.o = o;
    m.user_fn = fn;
    m.user_ud = ud;
    tb_chunks_init(&m.chunks);
    for (size_t i = 0; i < s->n; i++)
        ncontent += s->ev[i].kind == TB_KIND_CONTENT;
    if (ncontent == 0)
        return tb_seterr(err, errlen, TB_EEMPTY, "the stream has no content event");

    rc = tb_ring_create(o->ring_slots, o->ring_bytes, &m.ring);
    if (rc == 0)
        rc = tb_seg_create(&o->seg, &m.seg);
    if (rc == 0)
        rc = tb_playout_create(&o->play, on_play, &m, &m.play);
    if (rc == 0 && (eff = malloc(s->n * sizeof(*eff))) == NULL)
        rc = TB_ENOMEM;
    if (rc != 0) {
        tb_seterr(err, errlen, rc, "%s", rc == TB_EINVAL ? "bad simulation options"
                                                         : "out of memory");
        goto out;
    }
    r->ring_slots = tb_ring_slot_capacity(m.ring);
    r->ring_bytes = tb_ring_byte_capacity(m.ring);

    for (;;) {
        double now = clk->now(clk);
        double t_rel = next_release(&m);
        double t_arr = INFINITY;
        if (k < s->n && !blocked)
            t_arr = s->ev[k].t > now ? s->ev[k].t : now;
        if (k == s->n && !finished) {
            tb_seg_finish(m.seg, on_chunk, &m);
            if (m.rc == 0)
                m.rc = tb_playout_finish(m.play);
            finished = 1;
            if ((rc = m.rc) != 0)
                break;
            continue;
        }
        if (isinf(t_arr) && isinf(t_rel)) {
            if (!blocked)
                break; /* everything played */
            rc = unjam(&m, now, r);
            if (rc != 0) {
                tb_seterr(err, errlen, rc, "the ring cannot make room");
                break;
            }
            continue;
        }
        if (t_rel <= t_arr) {
            clk->sleep_until(clk, t_rel);
            release_upto(&m, m.rel[m.next_rel].end);
            m.next_rel++;
            blocked = 0;
            continue;
        }
        clk->sleep_until(clk, t_arr);
        {
            const struct tb_event *e = &s->ev[k];
            /* Delayed by backpressure, the consumer sees the later time;
             * otherwise the stream's own time (a real-time clock wakes a
             * little late, and that lateness is not the stream's). */
            double t = delayed && t_arr > e->t ? t_arr : e->t;
            rc = tb_ring_push(m.ring, t, s->text + e->off, e->len, e->tokens, e->kind);
            if (rc == TB_EFULL) {
                blocked = delayed = 1;
                continue;
            }
            delayed = 0;
            if (rc == TB_ETOOBIG) {
                tb_seterr(err, errlen, rc,
                          "event %zu: %u bytes of text exceed the ring's %zu bytes "
                          "(--ring-bytes)",
                          k + 1, e->len, r->ring_bytes);
                break;
            }
            if (t > e->t) {
                r->backpressure_waits++;
                r->backpressure_s += t - e->t;
            }
            eff[k++] = t;
            consume_newest(&m);
            if (m.rc != 0) {
                rc = m.rc;
                tb_seterr(err, errlen, rc, "out of memory");
                break;
            }
            double speech = tb_voice_seconds(m.cps_in_ring, o->play.wpm);
            if (speech > r->hw_speech_s)
                r->hw_speech_s = speech;
        }
    }
    if (rc == 0) {
        tb_playout_result(m.play, &r->play);
        summarize(s, eff, r);
        tb_ring_stats(m.ring, &st);
        r->hw_items = st.hw_items;
        r->hw_bytes = st.hw_bytes;
        rc = curve(&m, r);
        if (rc != 0)
            tb_seterr(err, errlen, rc, "out of memory");
    }
out:
    free(eff);
    free(m.rel);
    tb_chunks_free(&m.chunks);
    tb_playout_destroy(m.play);
    tb_seg_destroy(m.seg);
    tb_ring_destroy(m.ring);
    return rc;
}
