/*
 * playout.c - the v1 playout model, online (see playout.h for the maths).
 *
 * State is O(1): the running speech total S (kept as an integer count of
 * code points, so S_{j-1} in the minimum-TPS ratio is exact up to one
 * division), the end of the last scheduled chunk, and the start chunk q.
 * Chunks before playback starts cannot underrun (each is ready by
 * c_q + L <= its start), so they need no individual bookkeeping unless a
 * caller asked for the schedule.
 *
 * Options with a TTS stage hand every call to tts_stage.c, which keeps
 * the chunk list; without one this file's v1 code runs untouched, so the
 * defaults give today's numbers exactly.
 */
#include "ttsbuf/playout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tts_stage.h"
#include "ttsbuf/error.h"
#include "ttsbuf/voice.h"

struct pend {
    double c;
    uint32_t cps;
    double dur;
};

struct tb_playout {
    struct tb_playout_opts o;
    tb_play_fn fn;
    void *ud;
    int started;
    uint32_t m, q;
    uint64_t cps_sum;
    double dur_sum; /* the same total in seconds, from the chunks' durations */
    int timed;      /* a chunk came with its own duration (a timed voice) */
    double s1, e_prev, c_q;
    uint64_t tok_q;
    double last_c;
    uint64_t last_tok;
    struct tb_playout_result r;
    struct pend *pend;
    size_t npend, cap;
    /* Rebuffering (opts.rebuffer): after a counted underrun at chunk rb_j,
     * playback waits until rb_cps code points are buffered (>= P). */
    int rebuffering;
    uint32_t rb_j;
    uint64_t rb_cps;
    double rb_dur;
    struct tb_tts_stage *ts; /* the TTS stage, allocated once options set one */
    int tts;                 /* the current options set one */
};

void tb_playout_opts_default(struct tb_playout_opts *o)
{
    o->wpm = TB_WPM_DEFAULT;
    o->tts_latency = 0.0;
    o->preroll = 0.0;
    o->rebuffer = 0;
    o->tts_connect = 0.0;
    o->tts_concurrency = 0;
    o->tts_rtf = 0.0;
    o->tts_latency_at = NULL;
    o->tts_latency_ud = NULL;
    o->tts_rtf_at = NULL;
    o->tts_rtf_ud = NULL;
    o->tts_output = TB_TTS_STREAM;
    o->tts_times_at = NULL;
    o->tts_times_ud = NULL;
    o->no_search = 0;
    o->no_speedup = 0;
}

int tb_playout_has_stage(const struct tb_playout_opts *o)
{
    return tb_tts_stage_wanted(o);
}

static int opts_ok(const struct tb_playout_opts *o)
{
    if (!(o->wpm > 0.0 && o->tts_latency >= 0.0 && o->preroll >= 0.0))
        return 0;
    if (!(o->tts_connect >= 0.0) || isinf(o->tts_connect) || !(o->tts_rtf >= 0.0) ||
        isinf(o->tts_rtf) || o->tts_concurrency < 0 ||
        (o->tts_output != TB_TTS_STREAM && o->tts_output != TB_TTS_WHOLE))
        return 0;
    return !(o->rebuffer && tb_tts_stage_wanted(o));
}

int tb_playout_create(const struct tb_playout_opts *o, tb_play_fn fn, void *ud,
                      struct tb_playout **out)
{
    struct tb_playout *p;
    *out = NULL;
    if (!opts_ok(o))
        return TB_EINVAL;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return TB_ENOMEM;
    p->fn = fn;
    p->ud = ud;
    if (tb_playout_reset(p, o) != 0) {
        free(p);
        return TB_ENOMEM;
    }
    *out = p;
    return 0;
}

void tb_playout_destroy(struct tb_playout *p)
{
    if (p == NULL)
        return;
    free(p->pend);
    tb_tts_stage_destroy(p->ts);
    free(p);
}

int tb_playout_reset(struct tb_playout *p, const struct tb_playout_opts *o)
{
    struct tb_playout_opts keep = o != NULL ? *o : p->o;
    struct tb_tts_stage *ts = p->ts;
    if (!opts_ok(&keep))
        return TB_EINVAL;
    if (tb_tts_stage_wanted(&keep) && ts == NULL &&
        (ts = tb_tts_stage_create(p->fn, p->ud)) == NULL)
        return TB_ENOMEM;
    /* All but the callback and the buffers start again. */
    *p = (struct tb_playout){
        .o = keep, .fn = p->fn, .ud = p->ud, .pend = p->pend, .cap = p->cap, .ts = ts};
    p->tts = tb_tts_stage_wanted(&keep);
    if (p->tts)
        tb_tts_stage_reset(ts, &keep);
    return 0;
}

static double speech(const struct tb_playout *p, uint64_t cps)
{
    return tb_voice_seconds(cps, p->o.wpm);
}

/* S so far: exact from the code-point count under the rate model, the sum
 * of the given durations once a timed voice is in use. */
static double spoken(const struct tb_playout *p)
{
    return p->timed ? p->dur_sum : speech(p, p->cps_sum);
}

/* Whether cps code points / dur seconds reach the pre-roll: compared as
 * cps x 10 >= P x wpm under the rate model, to stay exact. */
static int reaches_preroll(const struct tb_playout *p, uint64_t cps, double dur)
{
    return p->timed ? dur >= p->o.preroll : (double)cps * 10.0 >= p->o.preroll * p->o.wpm;
}

/* Speech of cps code points, or dur seconds once a timed voice is in use. */
static double span(const struct tb_playout *p, uint64_t cps, double dur)
{
    return p->timed ? dur : speech(p, cps);
}

/* Playback starts at s_1 = c + L; chunks 1..m so far play back to back. */
static void start(struct tb_playout *p, double c, uint64_t tok)
{
    p->started = 1;
    p->q = p->m;
    p->c_q = c;
    p->tok_q = tok;
    p->s1 = c + p->o.tts_latency;
    p->e_prev = p->s1 + spoken(p);
    if (p->fn != NULL) {
        uint64_t before = 0;
        double before_s = 0.0;
        for (size_t i = 0; i < p->npend; i++) {
            struct tb_play pl;
            pl.chunk = (uint32_t)i + 1;
            pl.cps = p->pend[i].cps;
            pl.ready = p->pend[i].c + p->o.tts_latency;
            pl.start = p->s1 + span(p, before, before_s);
            before += p->pend[i].cps;
            before_s += p->pend[i].dur;
            pl.end = p->s1 + span(p, before, before_s);
            pl.gap = pl.gap_llm = pl.gap_tts = 0.0;
            pl.begin = p->pend[i].c;
            pl.done = pl.ready;
            p->fn(p->ud, &pl);
        }
        p->npend = 0;
    }
}

/* Keeps a chunk that waits for playback, for the schedule callback. */
static int pend_push(struct tb_playout *p, double c, uint32_t cps, double dur)
{
    if (p->fn == NULL)
        return 0;
    if (p->npend == p->cap) {
        struct pend *np = tb_grow(p->pend, &p->cap, sizeof(*np), 64);
        if (np == NULL)
            return TB_ENOMEM;
        p->pend = np;
    }
    p->pend[p->npend].c = c;
    p->pend[p->npend].cps = cps;
    p->pend[p->npend].dur = dur;
    p->npend++;
    return 0;
}

/* The part of a gap before chunk j's text arrived (at c): c - e_{j-1},
 * within [0, gap]; the rest is the TTS stage's. */
static double llm_part(double gap, double c, double e_prev)
{
    double x = c - e_prev;
    return x < 0.0 ? 0.0 : x > gap ? gap : x;
}

/* Counts one underrun of length gap, llm of it the text's. */
static void count_gap(struct tb_playout *p, double gap, double llm)
{
    p->r.gap_llm += llm;
    p->r.gap_tts += gap - llm;
    p->r.underruns++;
    if (gap >= TB_INTERRUPT_S)
        p->r.interruptions++;
    p->r.gap_total += gap;
    if (gap > p->r.gap_max)
        p->r.gap_max = gap;
}

/*
 * Rebuffering ends: the chunks rb_j..m, buffered since the underrun, play
 * back to back from t (the moment the last of them is ready).  Their audio
 * was all ready by then, so none of them can underrun; the one silence is
 * t - e_{rb_j - 1}, counted now.
 */
static void resume(struct tb_playout *p, double t, double c)
{
    double gap = t - p->e_prev;
    double llm = llm_part(gap, c, p->e_prev);
    uint64_t before = 0;
    double before_s = 0.0;
    count_gap(p, gap, llm);
    p->rebuffering = 0;
    if (p->fn != NULL) {
        for (size_t i = 0; i < p->npend; i++) {
            struct tb_play pl;
            pl.chunk = p->rb_j + (uint32_t)i;
            pl.cps = p->pend[i].cps;
            pl.ready = p->pend[i].c + p->o.tts_latency;
            pl.start = t + span(p, before, before_s);
            before += p->pend[i].cps;
            before_s += p->pend[i].dur;
            pl.end = t + span(p, before, before_s);
            pl.gap = i == 0 ? gap : 0.0;
            pl.gap_llm = i == 0 ? llm : 0.0;
            pl.gap_tts = pl.gap - pl.gap_llm;
            pl.begin = p->pend[i].c;
            pl.done = pl.ready;
            p->fn(p->ud, &pl);
        }
        p->npend = 0;
    }
    p->e_prev = t + span(p, p->rb_cps, p->rb_dur);
}

/*
 * Raises *max to num / den when that is larger (den > 0, *max >= 0),
 * dividing only when it can be: fl(num / den) > *max needs num above
 * *max x den less three roundings, so a test of the product against
 * num, short of it by 2^-50, skips only chunks that cannot raise it.
 * The maximum is the one every chunk's quotient gives, to the bit, for
 * a division on the few chunks that may raise it instead of two on each
 * (the sweep plays millions).
 */
static inline void raise_ratio(double *max, double num, double den)
{
    if (num >= *max * den * (1.0 - 0x1p-50)) {
        double q = num / den;
        if (q > *max)
            *max = q;
    }
}

/* A chunk while playback runs (rebuffering aside): no silence before it
 * unless its audio is late, counted when over TB_GAP_MIN_S; reported to
 * the callback when there is one. */
static void play_next(struct tb_playout *p, double c, uint32_t cps, double d, double ready,
                      double gap)
{
    double llm = 0.0, start_t = ready > p->e_prev ? ready : p->e_prev;
    int counted = gap > TB_GAP_MIN_S;
    if (counted) {
        llm = llm_part(gap, c, p->e_prev);
        count_gap(p, gap, llm);
    }
    p->e_prev = start_t + d;
    p->cps_sum += cps;
    p->dur_sum += d;
    if (p->fn != NULL) {
        struct tb_play pl;
        pl.chunk = p->m;
        pl.cps = cps;
        pl.ready = ready;
        pl.begin = c;
        pl.done = ready;
        pl.start = start_t;
        pl.end = p->e_prev;
        pl.gap = counted ? gap : 0.0;
        pl.gap_llm = llm;
        pl.gap_tts = counted ? gap - llm : 0.0;
        p->fn(p->ud, &pl);
    }
}

/* dur is the chunk's duration, or NAN for the rate model's. */
static inline int add(struct tb_playout *p, double c, uint64_t tok, uint32_t cps, double dur)
{
    double d = dur;
    if (isnan(d))
        d = speech(p, cps);
    else
        p->timed = 1;
    p->m++;
    p->last_c = c;
    p->last_tok = tok;
    if (!p->started) {
        p->cps_sum += cps;
        p->dur_sum += d;
        if (pend_push(p, c, cps, d) != 0)
            return TB_ENOMEM;
        if (reaches_preroll(p, p->cps_sum, p->dur_sum))
            start(p, c, tok);
        return 0;
    }

    /* j = m > q: S_{j-1} is the speech before this chunk.  A timed voice
     * can give a chunk no sound at all (only spaces or punctuation): with
     * nothing spoken yet there is no rate to need. */
    double s_prev = spoken(p);
    double ready = c + p->o.tts_latency;
    double gap = ready - p->e_prev;
    if (gap > p->r.silence_max)
        p->r.silence_max = gap;
    if (s_prev > 0.0) {
        raise_ratio(&p->r.min_tps, (double)(tok - p->tok_q), s_prev);
        raise_ratio(&p->r.speedup, c - p->c_q, s_prev);
    }
    if (p->o.rebuffer && (p->rebuffering || gap > TB_GAP_MIN_S)) {
        /* Wait for P seconds of audio, compared exactly as the pre-roll. */
        if (!p->rebuffering) {
            p->rebuffering = 1;
            p->rb_j = p->m;
            p->rb_cps = 0;
            p->rb_dur = 0.0;
        }
        p->cps_sum += cps;
        p->dur_sum += d;
        p->rb_cps += cps;
        p->rb_dur += d;
        if (pend_push(p, c, cps, d) != 0)
            return TB_ENOMEM;
        if (reaches_preroll(p, p->rb_cps, p->rb_dur))
            resume(p, ready, c);
        return 0;
    }
    play_next(p, c, cps, d, ready, gap);
    return 0;
}

int tb_playout_add(struct tb_playout *p, double c, uint64_t tok, uint32_t cps)
{
    if (p->tts)
        return tb_tts_stage_add(p->ts, c, tok, cps, speech(p, cps), 0);
    return add(p, c, tok, cps, NAN);
}

int tb_playout_add_blank(struct tb_playout *p, double c, uint64_t tok, uint32_t cps)
{
    if (p->tts)
        return tb_tts_stage_add(p->ts, c, tok, cps, 0.0, 1);
    return add(p, c, tok, cps, NAN);
}

int tb_playout_add_timed(struct tb_playout *p, double c, uint64_t tok, uint32_t cps, double dur)
{
    if (!(dur >= 0.0) || dur > 1e9)
        return TB_EINVAL;
    if (p->tts)
        return tb_tts_stage_add(p->ts, c, tok, cps, dur, 0);
    return add(p, c, tok, cps, dur);
}

int tb_playout_last_begin(const struct tb_playout *p, double *b)
{
    double v = p->tts ? tb_tts_stage_last_begin(p->ts) : p->m > 0 ? p->last_c : NAN;
    if (isnan(v))
        return TB_EINVAL;
    *b = v;
    return 0;
}

int tb_playout_force_start(struct tb_playout *p, double t)
{
    if (p->tts)
        return tb_tts_stage_force_start(p->ts, t);
    if (p->rebuffering) {
        resume(p, t + p->o.tts_latency, t);
        return 0;
    }
    if (p->started || p->m == 0)
        return TB_EINVAL;
    start(p, t, p->last_tok);
    return 0;
}

int tb_playout_finish(struct tb_playout *p)
{
    if (p->tts)
        return tb_tts_stage_finish(p->ts);
    if (!p->started && p->m > 0)
        start(p, p->last_c, p->last_tok);
    if (p->rebuffering)
        resume(p, p->last_c + p->o.tts_latency, p->last_c);
    return 0;
}

int tb_playout_finish_schedule(struct tb_playout *p)
{
    if (p->tts)
        return tb_tts_stage_finish_schedule(p->ts);
    return tb_playout_finish(p);
}

/* Whether the stage's chunks play gap-free at ms milliseconds of pre-roll. */
static int gapless_ms(struct tb_tts_stage *ts, uint64_t ms)
{
    return tb_tts_stage_gapless_at(ts, (double)ms / 1000.0, NULL) == 1;
}

int tb_playout_gapless_preroll(struct tb_playout *p, double *out)
{
    struct tb_playout_result r;
    uint64_t lo = 0, hi, top;
    double gap = 0.0;
    int yes;
    if (!p->tts)
        return TB_EINVAL;
    tb_tts_stage_result(p->ts, &r);
    yes = tb_tts_stage_gapless_at(p->ts, 0.0, &gap);
    if (yes < 0 || r.chunks == 0)
        return TB_EINVAL;
    if (yes) {
        *out = 0.0;
        return 0;
    }
    /* From top = ceil(1000 S_m) ms every chunk is synthesized before the
     * start: gap-free.  Gap-free is monotone in the pre-roll (sweep.h), so
     * the answer, the smallest gap-free ms, is found from any bracket:
     * lo with a gap, hi without.  A probe costs more the more chunks wait
     * for the start, so the bracket grows from the silence at 0 (usually
     * near the answer) by doubling, rather than halving down from top. */
    top = (uint64_t)ceil(r.speech * 1000.0);
    hi = (uint64_t)ceil(gap * 1000.0);
    hi = hi < 1 ? 1 : hi > top ? top : hi;
    while (hi < top && !gapless_ms(p->ts, hi)) {
        lo = hi;
        hi = hi > top / 2 ? top : 2 * hi;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (gapless_ms(p->ts, mid))
            hi = mid;
        else
            lo = mid;
    }
    *out = (double)hi / 1000.0;
    return 0;
}

int tb_playout_started(const struct tb_playout *p, double *s1)
{
    if (p->tts)
        return tb_tts_stage_started(p->ts, s1);
    if (s1 != NULL)
        *s1 = p->s1;
    return p->started;
}

double tb_playout_end(const struct tb_playout *p)
{
    if (p->tts)
        return tb_tts_stage_end(p->ts);
    return p->started ? p->e_prev : 0.0;
}

void tb_playout_result(const struct tb_playout *p, struct tb_playout_result *out)
{
    if (p->tts) {
        tb_tts_stage_result(p->ts, out);
        return;
    }
    *out = p->r;
    if (p->o.no_search)
        out->min_tps = out->speedup = NAN;
    if (p->o.no_speedup)
        out->speedup = NAN;
    out->chunks = p->m;
    out->q = p->q;
    out->ttfa = p->started ? p->s1 : 0.0;
    out->speech = spoken(p);
    out->end = p->started ? p->e_prev : 0.0;
}
