/*
 * drain.c - the ring's consumer: segmenter + playout + releases (drain.h).
 *
 * State per chunk: where it ends in the content byte stream and when its
 * tokens may leave the ring (NAN until playback schedules it).  Releases
 * happen in chunk order, so the next one due is always rel[next_rel].
 * Memory: one record per chunk plus the chunk list the pre-roll curve
 * reuses; nothing per event.
 */
#include "ttsbuf/drain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "recut.h"
#include "ttsbuf/analyze.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/utf8.h"
#include "ttsbuf/voice.h"

struct rel {
    uint64_t end; /* content byte where the chunk ends */
    double close; /* when it closed (the segmenter's time) */
    double u;     /* release time; NAN until playback schedules it */
};

struct tb_drain {
    struct tb_sim_opts o;
    struct tb_ring *ring;
    struct tb_seg *seg;
    struct tb_playout *play;
    struct tb_recut *recut; /* a time-based policy: the events, for the search */
    int timed;              /* a time-based policy: its timer is ticked */
    int stage;              /* the options set a TTS stage */
    tb_play_fn user_fn;
    void *user_ud;
    struct tb_chunks chunks;
    struct rel *rel;
    size_t nrel, caprel, next_rel;
    size_t seen;          /* unreleased items already fed */
    double t_cur;         /* arrival of the content event being fed */
    uint64_t tok_cur;     /* its token index */
    uint64_t released_b;  /* content bytes released from the ring */
    uint64_t cps_in_ring; /* content code points waiting in the ring */
    int finished;
    int rc;
    /* stream counts */
    size_t content_events, reasoning_events;
    uint64_t content_tokens, reasoning_tokens;
    double first_t, last_content_t, last_t;
    uint32_t first_tokens;
    double hw_speech_s;
    uint32_t forced_cuts;
    int forced_start;
    /* a timed voice: the chunk's text is gathered here for it; when its
     * synthesis time counts, when the synthesizer is free again */
    double synth_free;
    char *text;
    size_t textcap;
    /* the first chunk with audio (turnlat.h's j*): its schedule */
    struct tb_play first;
};

/* Playout callback: a chunk's schedule is known; so is its release.  The
 * v1 model synthesizes just in time (the text is needed at s_j - L, which
 * is never before c_j); the TTS stage takes the text at b_j, the moment
 * its synthesis begins, whatever the playback does after. */
static void on_play(void *ud, const struct tb_play *pl)
{
    struct tb_drain *d = ud;
    struct rel *r = &d->rel[pl->chunk - 1];
    double c = d->chunks.v[pl->chunk - 1].c;
    /* with a TTS stage a chunk's text goes to the engine when its
     * synthesis begins, b_j */
    double u = d->stage ? pl->begin : pl->start - d->o.play.tts_latency;
    r->u = u > c ? u : c;
    if (d->first.chunk == 0 && pl->end > pl->start)
        d->first = *pl;
    if (d->user_fn != NULL)
        d->user_fn(d->user_ud, pl);
}

/*
 * Copies content bytes [from, to) out of the items the drain has seen and
 * not released (a chunk's text always is: releases stop at scheduled
 * chunk ends).  O(items waiting) per chunk: a timed voice costs far more
 * per chunk than this scan.
 */
static int gather(struct tb_drain *d, uint64_t from, uint64_t to, size_t *len)
{
    uint64_t b = d->released_b;
    size_t n = 0;
    struct tb_ring_item it;
    if (to - from + 1 > d->textcap) {
        size_t nc = (size_t)(to - from + 1);
        char *nt = realloc(d->text, nc < 256 ? 256 : nc);
        if (nt == NULL)
            return TB_ENOMEM;
        d->text = nt;
        d->textcap = nc < 256 ? 256 : nc;
    }
    *len = 0;
    for (size_t i = 0; i < d->seen && b < to && tb_ring_peek(d->ring, i, &it) == 0; i++) {
        if (it.kind != TB_KIND_CONTENT)
            continue;
        uint64_t lo = b > from ? b : from;
        uint64_t hi = b + it.len < to ? b + it.len : to;
        if (hi > lo) {
            memcpy(d->text + n, it.text + (lo - b), (size_t)(hi - lo));
            n += (size_t)(hi - lo);
        }
        b += it.len;
    }
    d->text[n] = '\0';
    *len = n;
    return 0;
}

/* The chunk's duration from the timed voice, and its synthesis time. */
static int voice_dur(struct tb_drain *d, const struct tb_chunk *ch, double *dur, double *busy)
{
    uint64_t from = d->nrel > 1 ? d->rel[d->nrel - 2].end : 0;
    size_t len;
    int rc = gather(d, from, ch->end, &len);
    if (rc == 0)
        rc = d->o.voice->chunk(d->o.voice->ud, (uint32_t)d->nrel, d->t_cur, d->text, len, ch->cps,
                               dur, busy);
    return rc;
}

/* With a TTS stage: whether the chunk just closed has nothing to say
 * (ttsmeas.h's tb_tts_blank), kept in its entry of the chunk list.  0 or
 * TB_ENOMEM. */
static int mark_blank(struct tb_drain *d, const struct tb_chunk *ch)
{
    uint64_t from = d->nrel > 1 ? d->rel[d->nrel - 2].end : 0;
    size_t len;
    int rc = gather(d, from, ch->end, &len);
    if (rc == 0)
        d->chunks.v[d->chunks.n - 1].blank = tb_tts_blank(d->text, len);
    return rc;
}

/* Segmenter callback: a chunk closed at the event being fed. */
static void on_chunk(void *ud, const struct tb_chunk *ch)
{
    struct tb_drain *d = ud;
    int rc;
    if (d->rc != 0)
        return;
    if (d->timed && !isnan(tb_seg_close_time(d->seg)))
        d->t_cur = tb_seg_close_time(d->seg); /* a timed close: at its deadline */
    if (d->nrel == d->caprel) {
        struct rel *nr = tb_grow(d->rel, &d->caprel, sizeof(*nr), 256);
        if (nr == NULL) {
            d->rc = TB_ENOMEM;
            return;
        }
        d->rel = nr;
    }
    d->rel[d->nrel].end = ch->end;
    d->rel[d->nrel].close = d->t_cur;
    d->rel[d->nrel].u = NAN;
    d->nrel++;
    rc = tb_analyze_chunks_push(&d->chunks, d->t_cur, d->tok_cur, ch->cps);
    if (rc == 0 && d->stage)
        rc = mark_blank(d, ch);
    if (rc == 0 && d->stage && d->chunks.v[d->chunks.n - 1].blank) {
        /* nothing to say: no TTS request, as live (the voice still sees it) */
        double dur = 0.0, busy = 0.0;
        if (d->o.voice != NULL)
            rc = voice_dur(d, ch, &dur, &busy);
        if (rc == 0)
            rc = tb_playout_add_blank(d->play, d->t_cur, d->tok_cur, ch->cps);
    } else if (rc == 0 && d->o.voice != NULL && d->o.voice->follows_rate) {
        /* the voice renders the rate model's duration; the schedule is the
         * rate model's, as without a voice */
        double dur = tb_voice_seconds(ch->cps, d->o.play.wpm), busy = 0.0;
        rc = voice_dur(d, ch, &dur, &busy);
        if (rc == 0)
            rc = tb_playout_add(d->play, d->t_cur, d->tok_cur, ch->cps);
    } else if (rc == 0 && d->o.voice != NULL) {
        double dur = 0.0, busy = 0.0, c = d->t_cur;
        rc = voice_dur(d, ch, &dur, &busy);
        if (busy > 0.0 || d->synth_free > c) {
            /* one synthesizer: this chunk waits for the previous one */
            c = (c > d->synth_free ? c : d->synth_free) + busy;
            d->synth_free = c;
        }
        if (rc == 0) {
            d->chunks.v[d->chunks.n - 1].c = c;
            d->chunks.v[d->chunks.n - 1].dur = dur;
            rc = tb_playout_add_timed(d->play, c, d->tok_cur, ch->cps, dur);
        }
    } else if (rc == 0) {
        rc = tb_playout_add(d->play, d->t_cur, d->tok_cur, ch->cps);
    }
    /* With a stage the text leaves when synthesis begins, known now, while
     * the schedule may be reported only once the start is final. */
    if (rc == 0 && d->stage && isnan(d->rel[d->nrel - 1].u)) {
        double b, c = d->chunks.v[d->chunks.n - 1].c;
        rc = tb_playout_last_begin(d->play, &b);
        d->rel[d->nrel - 1].u = b > c ? b : c;
    }
    if (rc != 0)
        d->rc = rc;
}

int tb_drain_create(const struct tb_sim_opts *o, struct tb_ring *ring, tb_play_fn fn, void *ud,
                    struct tb_drain **out)
{
    struct tb_drain *d = calloc(1, sizeof(*d));
    int rc;
    *out = NULL;
    if (d == NULL)
        return TB_ENOMEM;
    d->o = *o;
    d->ring = ring;
    d->user_fn = fn;
    d->user_ud = ud;
    d->first_t = NAN;
    d->stage = tb_playout_has_stage(&o->play);
    d->timed = tb_seg_policy_timed(o->seg.policy);
    tb_analyze_chunks_init(&d->chunks);
    rc = tb_seg_create(&o->seg, &d->seg);
    if (rc == 0 && d->timed) {
        /* the minimum TPS re-cuts the stream at each rate (recut.h) */
        d->o.play.no_search = 1;
        rc = tb_recut_create(&o->seg, &d->recut);
    }
    if (rc == 0)
        rc = tb_playout_create(&d->o.play, on_play, d, &d->play);
    if (rc != 0) {
        tb_drain_destroy(d);
        return rc;
    }
    *out = d;
    return 0;
}

void tb_drain_destroy(struct tb_drain *d)
{
    if (d == NULL)
        return;
    free(d->rel);
    free(d->text);
    tb_analyze_chunks_free(&d->chunks);
    tb_playout_destroy(d->play);
    tb_recut_destroy(d->recut);
    tb_seg_destroy(d->seg);
    free(d);
}

/* Frees items from the ring's tail up to content byte `end`; reasoning
 * items in the way go with them (they are never spoken). */
static void release_upto(struct tb_drain *d, uint64_t end)
{
    size_t n = 0;
    struct tb_ring_item it;
    uint64_t b = d->released_b;
    while (n < d->seen && tb_ring_peek(d->ring, n, &it) == 0) {
        if (it.kind == TB_KIND_CONTENT) {
            if (b + it.len > end)
                break;
            b += it.len;
            d->cps_in_ring -= tb_utf8_count(it.text, it.len);
        }
        n++;
    }
    tb_ring_release(d->ring, n);
    d->seen -= n;
    d->released_b = b;
}

/* Feeds one newly visible item. */
static void consume(struct tb_drain *d, const struct tb_ring_item *it)
{
    uint64_t cps0;
    d->last_t = it->t;
    if (it->kind != TB_KIND_CONTENT) {
        d->reasoning_events++;
        d->reasoning_tokens += it->tokens;
        if (d->seen == 0)
            tb_ring_release(d->ring, 1); /* nothing before it waits */
        else
            d->seen++;
        return;
    }
    d->seen++;
    /* A time-based policy's deadline before this event closes the chunk
     * with the tokens fed so far (t_cur and tok_cur still theirs). */
    if (d->timed)
        tb_seg_tick(d->seg, it->t, on_chunk, d);
    if (d->content_events == 0) {
        d->first_t = it->t; /* ttft: the first content event */
        d->first_tokens = it->tokens;
    }
    d->content_events++;
    d->content_tokens += it->tokens;
    d->last_content_t = it->t;
    d->t_cur = it->t;
    d->tok_cur = d->content_tokens - 1;
    cps0 = tb_seg_fed_cps(d->seg);
    if (!d->timed) {
        tb_seg_feed(d->seg, it->text, it->len, on_chunk, d);
    } else {
        tb_seg_feed_at(d->seg, it->t, it->text, it->len, on_chunk, d);
        if (d->rc == 0) /* kept for the re-cut only under a timed policy */
            d->rc = tb_recut_add(d->recut, it->t, d->tok_cur, it->text, it->len);
    }
    d->cps_in_ring += tb_seg_fed_cps(d->seg) - cps0; /* the event's, counted by the feed */
    double speech = tb_voice_seconds(d->cps_in_ring, d->o.play.wpm);
    if (speech > d->hw_speech_s)
        d->hw_speech_s = speech;
}

/* When the next chunk may leave the ring; INFINITY while none is
 * scheduled.  Never compared with <= against INFINITY: see due(). */
static double next_release(const struct tb_drain *d)
{
    if (d->next_rel < d->nrel && !isnan(d->rel[d->next_rel].u))
        return d->rel[d->next_rel].u;
    return INFINITY;
}

/* Whether a scheduled release is due at now. */
static int due(const struct tb_drain *d, double now)
{
    double u = next_release(d);
    return !isinf(u) && u <= now;
}

/* The producer waits on a full ring and nothing is due to leave it: make
 * room the way a bounded pipeline must (cut the open chunk; start). */
static void unjam(struct tb_drain *d, double now)
{
    if (tb_seg_fed(d->seg) > (d->nrel ? d->rel[d->nrel - 1].end : 0)) {
        d->t_cur = now; /* the chunk is handed over now, not at its last token */
        tb_seg_cut(d->seg, on_chunk, d);
        d->forced_cuts++;
    }
    /* Also resumes a rebuffering playout (force_start refuses otherwise). */
    if (d->rc == 0 && d->nrel > 0 && tb_playout_force_start(d->play, now) == 0)
        d->forced_start = 1;
}

int tb_drain_step(struct tb_drain *d, double now, double *next)
{
    struct tb_ring_item it;
    while (d->rc == 0 && tb_ring_peek(d->ring, d->seen, &it) == 0)
        consume(d, &it);
    if (d->timed && d->rc == 0 && !d->finished && !isinf(now))
        tb_seg_tick(d->seg, now, on_chunk, d);
    while (d->rc == 0 && due(d, now)) {
        release_upto(d, d->rel[d->next_rel].end);
        d->next_rel++;
    }
    if (d->rc == 0 && !d->finished && isinf(next_release(d)) && tb_ring_waiting(d->ring)) {
        unjam(d, now);
        while (d->rc == 0 && due(d, now)) {
            release_upto(d, d->rel[d->next_rel].end);
            d->next_rel++;
        }
    }
    *next = next_release(d);
    if (d->timed && !d->finished && tb_seg_deadline(d->seg) < *next)
        *next = tb_seg_deadline(d->seg); /* a time-based policy's timer */
    return d->rc;
}

int tb_drain_finish(struct tb_drain *d)
{
    struct tb_ring_item it;
    while (d->rc == 0 && tb_ring_peek(d->ring, d->seen, &it) == 0)
        consume(d, &it);
    if (d->rc == 0 && !d->finished) {
        d->finished = 1;
        if (d->content_events > 0)
            tb_seg_finish(d->seg, on_chunk, d);
        if (d->rc == 0)
            d->rc = tb_playout_finish(d->play);
    }
    return d->rc;
}

void tb_drain_status(const struct tb_drain *d, double now, struct tb_drain_status *st)
{
    struct tb_playout_result pr;
    double s1, end;
    tb_playout_result(d->play, &pr);
    st->events = d->content_events;
    st->underruns = pr.underruns;
    st->gap_total = pr.gap_total;
    st->silent_s = 0.0;
    if (!tb_playout_started(d->play, &s1)) {
        st->playing = 0;
        st->buffered_s = pr.speech; /* all of it waits for the start */
        return;
    }
    /* Queued ahead of the playhead, which sits at s1 until playback starts. */
    double head = now > s1 ? now : s1;
    end = tb_playout_end(d->play);
    st->playing = now >= s1;
    st->buffered_s = end > head ? end - head : 0.0;
    /* Played out with more to come: the listener hears silence since end. */
    if (st->playing && !d->finished && now > end)
        st->silent_s = now - end;
}

/* A time-based policy: the minimum TPS and speed-up re-cut at each rate,
 * with the rate model's durations (a voice that times its own chunks
 * would have to render every re-cut chunk again: the CLI refuses it). */
static int recut_search(struct tb_drain *d, const struct tb_playout_opts *o,
                        struct tb_playout_result *pr)
{
    if (d->recut == NULL)
        return 0;
    return tb_recut_search(d->recut, o, pr);
}

static int curve(struct tb_drain *d, struct tb_sim_result *r)
{
    struct tb_playout *p;
    int rc = tb_playout_create(&d->o.play, NULL, NULL, &p);
    for (int i = 0; rc == 0 && i < TB_CURVE_POINTS; i++) {
        struct tb_playout_opts po = d->o.play;
        struct tb_playout_result pr;
        po.preroll = tb_curve_prerolls[i];
        rc = tb_analyze_playout(&d->chunks, p, &po, &pr);
        if (rc == 0)
            rc = recut_search(d, &po, &pr);
        r->curve[i].preroll = po.preroll;
        r->curve[i].min_tps = pr.min_tps;
        r->curve[i].ttfa = pr.ttfa;
        r->curve[i].gap_total = pr.gap_total;
        r->curve[i].gap_max = pr.gap_max;
        r->curve[i].underruns = pr.underruns;
    }
    tb_playout_destroy(p);
    return rc;
}

/* Where the wait went: chunk j*'s schedule, the options' end of turn and
 * its leading silence. */
static void turn_lat(const struct tb_drain *d, struct tb_sim_result *r)
{
    const struct tb_play *p = &d->first;
    tb_turn_lat_clear(&r->lat);
    if (p->chunk == 0 || d->content_events == 0)
        return;
    r->lat.eou = d->o.eou_s;
    r->lat.lead =
        d->o.lead_at != NULL ? d->o.lead_at(d->o.lead_ud, p->chunk) : d->o.lead_s;
    tb_turn_lat_play(&r->lat, p->chunk, d->first_t, d->rel[p->chunk - 1].close, p->begin,
                     p->ready, p->start);
}

int tb_drain_result(struct tb_drain *d, struct tb_sim_result *r)
{
    struct tb_ring_stats st;
    tb_playout_result(d->play, &r->play);
    if (recut_search(d, &d->o.play, &r->play) != 0)
        return TB_ENOMEM;
    r->events = d->content_events + d->reasoning_events;
    r->content_events = d->content_events;
    r->reasoning_events = d->reasoning_events;
    r->content_tokens = d->content_tokens;
    r->reasoning_tokens = d->reasoning_tokens;
    r->ttft = d->content_events > 0 ? d->first_t : 0.0;
    r->last_t = d->last_t;
    r->last_content_t = d->content_events > 0 ? d->last_content_t : 0.0;
    r->first_tokens = d->first_tokens;
    r->decode_tps = 0.0;
    if (d->content_events > 1 && d->last_content_t > d->first_t)
        r->decode_tps = (double)(d->content_events - 1) / (d->last_content_t - d->first_t);
    tb_ring_stats(d->ring, &st);
    r->ring_slots = tb_ring_slot_capacity(d->ring);
    r->ring_bytes = tb_ring_byte_capacity(d->ring);
    r->hw_items = st.hw_items;
    r->hw_bytes = st.hw_bytes;
    r->hw_speech_s = d->hw_speech_s;
    r->forced_cuts = d->forced_cuts;
    r->forced_start = d->forced_start;
    turn_lat(d, r);
    return curve(d, r);
}
