/*
 * bench_call.c - the calls of one `ttsbuf bench` level (see bench_call.h
 * and, for what a call is, bench_calls.h).
 *
 * A call holds its conversation's index, the turn in flight or next, and
 * the answers received so far (each turn's request carries them all).
 * While its answer plays and the caller speaks, a call waits in a
 * min-heap keyed by its next turn's time: the loop's wake-up asks only for
 * the heap's top (tb_bench_call_next), and a turn costs O(log calls) to
 * schedule, so ten thousand waiting calls cost nothing per wake-up.  The
 * memory a call keeps is its answers (what the next request must carry
 * anyway) and 40 bytes of state; a call's slot is reused when it ends.
 *
 * Each turn is played out when its stream ends (tb_bench_analyze, on the
 * loop's thread: O(the stream's events)), as its next turn's time depends
 * on it.
 */
#include "bench_call.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "bench_loop.h"
#include "bench_priv.h"
#include "bench_tool.h"
#include "bench_xfer.h"
#include "ttsbuf/error.h"
#include "ttsbuf/heard.h"
#include "ttsbuf/ttsmeas.h"

/* The turns call id sends: its conversation's, or the first o->turns. */
static uint32_t turns_of(const struct tb_bench_opts *o, uint64_t id)
{
    const struct tb_convo *cv = &o->convos->v[id % o->convos->n];
    return (uint32_t)(o->turns > 0 && o->turns < cv->n_turns ? o->turns : cv->n_turns);
}

/* The id of this shard's k-th call. */
static uint64_t call_id(const struct tb_bench_opts *o, size_t k)
{
    return o->shard + (uint64_t)k * (o->nshards > 0 ? o->nshards : 1);
}

int tb_bench_call_open(struct bench *b)
{
    struct calls *c = &b->calls;
    memset(c, 0, sizeof(*c));
    c->free_head = -1;
    c->target = b->target;
    c->next_arrival = 0;
    /* The turns of every call this shard runs: O(calls), once. */
    for (size_t k = 0; b->o->convos != NULL && b->o->convos->n > 0 && k < c->target; k++)
        c->turns_target += turns_of(b->o, call_id(b->o, k));
    b->calling = 1;
    b->turn_ended = tb_bench_call_ended;
    b->call_wait = tb_bench_call_wait;
    return 0;
}

static void call_clear(struct call *c)
{
    tb_bench_tool_forget(c);
    for (uint32_t i = 0; i < c->turn && c->ans != NULL; i++)
        free(c->ans[i]);
    free(c->ans);
    c->ans = NULL;
}

void tb_bench_call_close(struct bench *b)
{
    struct calls *c = &b->calls;
    if (!b->calling)
        return;
    for (size_t i = 0; i < c->n; i++)
        call_clear(&c->v[i]);
    free(c->v);
    free(c->heap);
    memset(c, 0, sizeof(*c));
}

/* The heap: parent of i is (i-1)/2, the earliest time on top. */
static int heap_push(struct calls *c, double t, uint32_t slot)
{
    size_t i;
    if (c->nheap == c->heapcap) {
        struct callwait *nh = tb_grow(c->heap, &c->heapcap, sizeof(*nh), 64);
        if (nh == NULL)
            return TB_ENOMEM;
        c->heap = nh;
    }
    i = c->nheap++;
    while (i > 0 && c->heap[(i - 1) / 2].t > t) {
        c->heap[i] = c->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    c->heap[i].t = t;
    c->heap[i].slot = slot;
    return 0;
}

static struct callwait heap_pop(struct calls *c)
{
    struct callwait top = c->heap[0], last = c->heap[--c->nheap];
    size_t i = 0;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= c->nheap)
            break;
        if (k + 1 < c->nheap && c->heap[k + 1].t < c->heap[k].t)
            k++;
        if (!(c->heap[k].t < last.t))
            break;
        c->heap[i] = c->heap[k];
        i = k;
    }
    if (c->nheap > 0)
        c->heap[i] = last;
    return top;
}

int tb_bench_call_wait(struct bench *b, uint32_t slot, double t)
{
    return heap_push(&b->calls, t, slot);
}

/* A free slot (grown as needed), or -1: no memory. */
static int64_t slot_get(struct calls *c)
{
    if (c->free_head >= 0) {
        int32_t s = c->free_head;
        c->free_head = c->v[s].next;
        return s;
    }
    if (c->n == c->cap) {
        struct call *nv = tb_grow(c->v, &c->cap, sizeof(*nv), 16);
        if (nv == NULL)
            return -1;
        c->v = nv;
    }
    memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
    return (int64_t)c->n++;
}

static void slot_put(struct calls *c, uint32_t s)
{
    call_clear(&c->v[s]);
    c->v[s].next = c->free_head;
    c->free_head = (int32_t)s;
}

static int add_msg(cJSON *arr, const char *role, const char *text)
{
    cJSON *m = cJSON_CreateObject();
    if (m == NULL || !cJSON_AddItemToArray(arr, m))
        return cJSON_Delete(m), -1;
    return cJSON_AddStringToObject(m, "role", role) != NULL &&
                   cJSON_AddStringToObject(m, "content", text != NULL ? text : "") != NULL
               ? 0
               : -1;
}

/* The chat messages of call c's turn c->turn (bench_calls.h), malloc'd;
 * NULL: no memory. */
static char *messages(const struct tb_convo *cv, const struct call *c)
{
    cJSON *arr = cJSON_CreateArray();
    char *out = NULL;
    int bad = arr == NULL;
    if (!bad && cv->system != NULL)
        bad = add_msg(arr, "system", cv->system) != 0;
    for (uint32_t k = 0; !bad && k <= c->turn; k++) {
        bad = add_msg(arr, "user", cv->turns[k]) != 0;
        if (!bad && k < c->turn)
            bad = add_msg(arr, "assistant", c->ans[k]) != 0;
    }
    if (!bad && c->tool != 0)
        bad = tb_bench_tool_exchange(arr, c) != 0; /* the second request of a tool turn */
    if (!bad)
        out = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    return out;
}

/* Sends the call's turn c->turn, scheduled at t_sched. */
static int send_turn(struct bench *b, uint32_t slot, double t_sched, char *err, size_t errlen)
{
    struct call *c = &b->calls.v[slot];
    const struct tb_convo *cv = &b->o->convos->v[c->convo];
    char *msgs = messages(cv, c);
    int rc;
    if (msgs == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    if (c->tool == 1)
        c->tool = 2; /* the tool's result is sent now */
    rc = tb_bench_xf_start_turn(b, slot, msgs, cv->tools != NULL ? cv->tools[c->turn] : NULL,
                                t_sched, err, errlen);
    free(msgs);
    return rc;
}

/* Starts this shard's next call at level time t: its turn 0. */
static int start_call(struct bench *b, double t, char *err, size_t errlen)
{
    const struct tb_bench_opts *o = b->o;
    struct calls *cs = &b->calls;
    int64_t s = slot_get(cs);
    struct call *c;
    if (s < 0)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    c = &cs->v[s];
    c->id = call_id(o, cs->started);
    c->convo = (uint32_t)(c->id % o->convos->n);
    c->nturns = turns_of(o, c->id);
    c->turn = 0;
    c->tool = 0;
    c->ans = calloc(c->nturns, sizeof(char *));
    c->next = -1;
    if (c->ans == NULL) {
        slot_put(cs, (uint32_t)s);
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    }
    cs->started++;
    cs->active++;
    return send_turn(b, (uint32_t)s, t, err, errlen);
}

int tb_bench_call_schedule(struct bench *b, double now, char *err, size_t errlen)
{
    const struct tb_bench_opts *o = b->o;
    struct calls *c = &b->calls;
    int rc = 0;
    if (b->stopped)
        return 0;
    /* Each start asks epoll again when REPOLL_S has passed, as a burst of
     * requests does (bench_loop.h): the streams already running keep
     * their stamps while a thousand calls start. */
    if (o->level.mode == TB_BENCH_CALLS) {
        while (rc == 0 && c->active < b->cap && c->started < c->target) {
            rc = start_call(b, now, err, errlen);
            (void)tb_bench_loop_watch(b);
        }
    } else {
        while (rc == 0 && c->next_arrival <= now && c->started < c->target) {
            double t = c->next_arrival;
            c->next_arrival += tb_bench_expo(&b->rng) / b->rate;
            rc = start_call(b, t, err, errlen);
            (void)tb_bench_loop_watch(b);
        }
    }
    while (rc == 0 && c->nheap > 0 && c->heap[0].t <= now) {
        struct callwait w = heap_pop(c);
        rc = send_turn(b, w.slot, w.t, err, errlen);
        (void)tb_bench_loop_watch(b);
    }
    return rc;
}

/* The call in slot ends; its turn's record says how. */
static void end_call(struct bench *b, uint32_t slot, const struct tb_bench_rec *rec, int last)
{
    struct calls *c = &b->calls;
    int cls = rec->interrupted ? TB_END_CLASS_COMPLETE : tb_end_class(rec->end);
    if (rec->error == 0 && cls != TB_END_CLASS_INCOMPLETE && cls != TB_END_CLASS_FAILED && last)
        c->completed++;
    else if (cls == TB_END_CLASS_INCOMPLETE)
        c->cut++;
    else
        c->failed++;
    c->ended++;
    c->active--;
    /* the turns it will not send are no longer to run */
    c->turns_target -= c->v[slot].nturns - (c->v[slot].turn + 1);
    slot_put(c, slot);
}

/* Barge-in with a real TTS (bench_rec.h): from the turn's TTS log, the
 * audio received by T and not played then (the log's PCM played in chunk
 * order, each arrival once it came and what was before it ended, from
 * the turn's first audio, ttfa; after an arrival later than T nothing
 * more plays by T), the end of its last stream after T, and the stop. */
static void barge_tts(struct tb_bench_rec *rec, const struct tb_tts_log *l)
{
    double T = rec->barge_in, at = NAN, left = 0, last = -INFINITY;
    int blocked = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct tb_tts_chunk *c = &l->c[i];
        if (isfinite(c->end) && c->end > last)
            last = c->end;
        for (uint32_t k = 0; k < c->narr && c->rate > 0; k++) {
            double dur = tb_tts_arrival_piece_s(c, k), start, played;
            if (c->arr[k].t > T) {
                blocked = 1; /* what comes after it waits for it */
                continue;
            }
            start = fmax(isnan(at) ? rec->ttfa : at, c->arr[k].t);
            played = blocked ? 0 : fmin(fmax(T - start, 0), dur);
            left += dur - played;
            at = start + dur;
        }
    }
    rec->barge_inflight = left;
    rec->barge_stop = fmin(left, TB_BARGE_OUTBUF_S);
    rec->barge_tts_close = fmax(last - T, 0);
}

/* Barge-in (bench.h), once the turn's record is played out: whether the
 * caller interrupted it (closed in flight at T, or its playback going on
 * past T), and what was heard by T.  An interrupted answer has no
 * what-if (min_tps, speedup: the whole answer was never wanted).
 * Returns 0 or tb_heard_at's error (err says). */
static int barge_settle(struct bench *b, struct tb_bench_rec *rec, char *err, size_t errlen)
{
    const struct tb_bench_opts *o = b->o;
    struct tb_heard h;
    int rc;
    rec->barge = 1;
    rec->tokens_received = rec->content_tokens;
    if (!rec->interrupted && rec->error == 0 && !isnan(rec->ttfa) && !isnan(rec->play_end)) {
        double bb = tb_barge_draw(o->barge_in, &o->barge_at, o->seed, (uint64_t)rec->call,
                                  (uint32_t)rec->turn);
        if (!isnan(bb) && rec->ttfa + bb < rec->play_end) {
            rec->interrupted = 1;
            rec->barge_in = rec->ttfa + bb;
        }
    }
    if (!rec->interrupted)
        return 0;
    /* a first audible sample after T was never heard (turnlat.h) */
    tb_turn_lat_heard_by(&rec->lat, rec->ttfa, rec->barge_in);
    rc = tb_heard_at(rec->stream, &o->sim, rec->barge_in, &h, err, errlen);
    if (rc != 0)
        return rc;
    rec->tokens_received = h.tokens;
    rec->tokens_unheard = h.tokens_unheard;
    rec->chars_unplayed = h.chars_unplayed;
    /* judged on what was played before T: the gaps the caller heard */
    rec->underruns = h.underruns_before;
    rec->gap_total = h.gap_total_before;
    rec->gap_max = h.gap_max_before;
    if (rec->staged) {
        rec->gap_llm = h.gap_llm_before;
        rec->gap_tts = h.gap_tts_before;
    }
    rec->min_tps = rec->speedup = NAN;
    if (rec->stream != NULL && rec->stream->tts != NULL)
        barge_tts(rec, rec->stream->tts);
    return 0;
}

void tb_bench_call_ended(struct bench *b, uint32_t slot, size_t rec_index)
{
    struct calls *cs = &b->calls;
    struct tb_bench_rec *rec = &b->out->v[rec_index];
    struct call *c = &cs->v[slot];
    const struct tb_convo *cv = &b->o->convos->v[c->convo];
    int cls = tb_end_class(rec->end);
    double play, t;
    int rc;
    tb_bench_tool_rec(b, c, rec); /* before the playout, which reads it */
    /* with a real TTS the turn plays as its TTS measured it */
    rc = b->o->tts_replay != NULL && rec->stream != NULL && rec->stream->tts != NULL
             ? b->o->tts_replay(b->o->tts_replay_ud, rec)
             : tb_bench_analyze(rec, &b->o->sim, cs->err, sizeof(cs->err));
    cs->turns_done++;
    if (rc == 0 && b->o->barge_in > 0)
        rc = barge_settle(b, rec, cs->err, sizeof(cs->err));
    if (rc != 0 && cs->rc == 0)
        cs->rc = rc;
    if (rec->interrupted)
        cls = TB_END_CLASS_COMPLETE; /* the caller ended it: the call goes on */
    if (rc != 0 || rec->error != 0 || cls == TB_END_CLASS_INCOMPLETE ||
        cls == TB_END_CLASS_FAILED || c->turn + 1 >= c->nturns) {
        end_call(b, slot, rec, rc == 0 && c->turn + 1 >= c->nturns);
        return;
    }
    c->ans[c->turn] = tb_stream_content_text(rec->stream);
    if (c->ans[c->turn] == NULL) {
        if (cs->rc == 0)
            cs->rc = tb_seterr(cs->err, sizeof(cs->err), TB_ENOMEM, "out of memory");
        end_call(b, slot, rec, 0);
        return;
    }
    c->turn++;
    c->tool = 0;
    tb_bench_tool_forget(c);
    /* Nothing played (no content): the answer is over when its stream is. */
    play = !isnan(rec->play_end) ? rec->play_end : rec->t_end - rec->t_start;
    if (rec->interrupted)
        play = rec->barge_in; /* the caller speaks from T on */
    c->speak_end = rec->t_start + play;
    t = c->speak_end +
        tb_uturn_draw(&b->o->user_turn, b->o->seed, c->id, c->turn, cv->turns[c->turn]);
    if (heap_push(cs, t, slot) != 0) {
        if (cs->rc == 0)
            cs->rc = tb_seterr(cs->err, sizeof(cs->err), TB_ENOMEM, "out of memory");
        end_call(b, slot, rec, 0);
    }
}

double tb_bench_call_next(const struct bench *b)
{
    const struct calls *c = &b->calls;
    double at = c->nheap > 0 ? c->heap[0].t : INFINITY;
    if (b->o->level.mode == TB_BENCH_CALLS_POISSON && c->started < c->target &&
        c->next_arrival < at)
        at = c->next_arrival;
    return at;
}

void tb_bench_call_progress(const struct bench *b, double now, struct tb_bench_progress *p)
{
    const struct calls *c = &b->calls;
    p->calls = 1;
    p->speaking = p->listening = 0;
    for (size_t i = 0; i < c->nheap; i++) {
        if (now < c->v[c->heap[i].slot].speak_end)
            p->speaking++;
        else
            p->listening++;
    }
    /* a call started and not ended waits in the heap or has a turn in
     * flight */
    p->waiting_model = c->active - c->nheap;
    p->turns_done = c->turns_done;
    p->turns_target = c->turns_target;
}

int tb_bench_call_done(const struct bench *b)
{
    const struct calls *c = &b->calls;
    if (b->stopped)
        return 1; /* the waiting calls are not sent */
    return c->ended >= c->target && c->active == 0;
}
