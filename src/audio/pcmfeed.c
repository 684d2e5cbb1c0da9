/*
 * pcmfeed.c - a provider's PCM put in chunk order and timed for a sink
 * (pcmfeed.h).
 *
 * Bytes of a chunk that is not playing yet wait as records (chunk, time,
 * where in one byte arena) in arrival order; its end waits as a record of
 * no bytes.  When the playing chunk ends, one pass over the records feeds
 * the next chunk's in order and compacts the others' down (each record's
 * bytes move only towards the arena's start, so the pass never overwrites
 * bytes it has still to read).
 *
 * The playing chunk's samples are cut into 20 ms frames (timed mode):
 * frames a call completes are due at its time, the rest waits in `fr`.
 * Whole frames within one call share a due time and go out as one piece.
 */
#include "pcmfeed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "pcmhold.h"
#include "ttsbuf/error.h"

/* Bytes of a chunk waiting for its turn, or (end) its end. */
struct rec {
    uint32_t j;
    int end;
    double t;
    size_t off, n;
};

struct tb_pcmfeed {
    struct tb_pcmfeed_opts o;
    size_t frame;       /* samples in a 20 ms frame */
    uint64_t preroll_b; /* the pre-roll, bytes */
    uint32_t cur;       /* the chunk playing (every one before it ended) */
    uint32_t last;      /* a failed chunk: the last that plays */
    int over;
    /* the playing chunk */
    int has_odd;
    unsigned char odd;
    int16_t *fr; /* its open frame (timed) */
    size_t frn;
    double fr_t;  /* when its last byte came */
    int16_t *tmp; /* bytes to samples */
    size_t tmpcap;
    /* chunks waiting */
    struct rec *rec;
    size_t nrec, reccap;
    unsigned char *hb;
    size_t hbn, hbcap;
    /* the start (timed) */
    uint64_t arrived; /* bytes, every chunk */
    double t_last;    /* the latest arrival */
    double t_reach;   /* when arrived reached the pre-roll; NAN: not yet */
    int have_first, started;
    double h1, s1;
    struct tb_pcmhold hold; /* frames waiting for the start */
};

int tb_pcmfeed_create(const struct tb_pcmfeed_opts *o, struct tb_pcmfeed **out)
{
    struct tb_pcmfeed *f;
    *out = NULL;
    if (o->rate == 0 || !(o->preroll >= 0.0) || o->preroll > 3600.0 || o->max_held == 0 ||
        o->out == NULL)
        return TB_EINVAL;
    f = calloc(1, sizeof(*f));
    if (f == NULL)
        return TB_ENOMEM;
    f->o = *o;
    f->frame = (size_t)llround(TB_PCMFEED_FRAME_S * o->rate);
    if (f->frame == 0)
        f->frame = 1;
    f->fr = malloc(f->frame * sizeof(*f->fr));
    if (f->fr == NULL) {
        free(f);
        return TB_ENOMEM;
    }
    f->preroll_b = 2 * (uint64_t)llround(o->preroll * o->rate);
    f->cur = 1;
    f->last = UINT32_MAX;
    f->t_last = 0.0;
    f->t_reach = f->preroll_b == 0 ? -INFINITY : NAN;
    *out = f;
    return 0;
}

void tb_pcmfeed_destroy(struct tb_pcmfeed *f)
{
    if (f == NULL)
        return;
    free(f->fr);
    free(f->tmp);
    free(f->rec);
    free(f->hb);
    tb_pcmhold_free(&f->hold);
    free(f);
}

int tb_pcmfeed_over(const struct tb_pcmfeed *f)
{
    return f->over;
}

static size_t held(const struct tb_pcmfeed *f)
{
    return f->hbn / 2 + tb_pcmhold_frames(&f->hold);
}

static int too_big(const struct tb_pcmfeed *f, char *err, size_t errlen)
{
    return tb_seterr(err, errlen, TB_ETOOBIG,
                     "more than %.0f s of audio waiting (for an earlier chunk's end, or for the "
                     "pre-roll)",
                     (double)f->o.max_held / f->o.rate);
}

/* A held frame out (pcmhold.h's fn, ud the feed). */
static int held_out(void *ud, double c, double due, const int16_t *pcm, size_t n)
{
    const struct tb_pcmfeed *f = ud;
    (void)c;
    return f->o.out(f->o.ud, due, pcm, n);
}

/* The start is known: the pieces held go out, none before s_1. */
static int try_start(struct tb_pcmfeed *f)
{
    if (f->started || !f->have_first || isnan(f->t_reach))
        return 0;
    f->started = 1;
    f->s1 = f->t_reach > f->h1 ? f->t_reach : f->h1;
    return tb_pcmhold_release(&f->hold, f->s1, held_out, f);
}

/* One piece, due at `due`: out now, or held for the start. */
static int emit(struct tb_pcmfeed *f, double due, const int16_t *pcm, size_t n, char *err,
                size_t errlen)
{
    if (n == 0)
        return 0;
    if (!f->o.timed)
        return f->o.out(f->o.ud, due, pcm, n);
    if (!f->have_first) {
        f->have_first = 1;
        f->h1 = due;
    }
    if (f->started)
        return f->o.out(f->o.ud, due > f->s1 ? due : f->s1, pcm, n);
    if (held(f) + n > f->o.max_held)
        return too_big(f, err, errlen);
    if (tb_pcmhold_add(&f->hold, 0.0, due, pcm, n) != 0)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    return try_start(f);
}

/* The playing chunk's bytes, arrived at t. */
static int feed_cur(struct tb_pcmfeed *f, double t, const unsigned char *b, size_t n, char *err,
                    size_t errlen)
{
    size_t k = 0, want = (n + 1) / 2 + 1;
    int16_t *s;
    int rc;
    if (n == 0)
        return 0;
    if (want > f->tmpcap) {
        int16_t *nt = realloc(f->tmp, want * sizeof(*nt));
        if (nt == NULL)
            return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
        f->tmp = nt;
        f->tmpcap = want;
    }
    s = f->tmp;
    if (f->has_odd) {
        s[k++] = (int16_t)(uint16_t)(f->odd | (unsigned)b[0] << 8);
        b++;
        n--;
        f->has_odd = 0;
    }
    for (; n >= 2; b += 2, n -= 2)
        s[k++] = (int16_t)(uint16_t)(b[0] | (unsigned)b[1] << 8);
    if (n == 1) {
        f->has_odd = 1;
        f->odd = b[0];
    }
    if (!f->o.timed)
        return emit(f, t, s, k, err, errlen);
    while (k > 0) {
        if (f->frn > 0 || k < f->frame) {
            size_t m = f->frame - f->frn < k ? f->frame - f->frn : k;
            memcpy(f->fr + f->frn, s, m * sizeof(*s));
            f->frn += m;
            f->fr_t = t;
            s += m;
            k -= m;
            if (f->frn == f->frame) {
                f->frn = 0;
                if ((rc = emit(f, t, f->fr, f->frame, err, errlen)) != 0)
                    return rc;
            }
        } else {
            size_t whole = k / f->frame * f->frame;
            if ((rc = emit(f, t, s, whole, err, errlen)) != 0)
                return rc;
            s += whole;
            k -= whole;
        }
    }
    return 0;
}

/* Keeps held record r as the w-th, its bytes packed to hb[wb..): the
 * step of every pass that drops some records and closes the gaps. */
static void keep_rec(struct tb_pcmfeed *f, struct rec r, size_t *w, size_t *wb)
{
    if (r.n > 0 && *wb != r.off)
        memmove(f->hb + *wb, f->hb + r.off, r.n);
    r.off = *wb;
    *wb += r.n;
    f->rec[(*w)++] = r;
}

/* Chunk cur has all its audio: its last frame goes out, and the chunks
 * after it that were held play in turn (those that ended, and the first
 * that has not, so far as it came). */
static int chunk_ended(struct tb_pcmfeed *f, char *err, size_t errlen)
{
    int rc = 0, ended;
    for (;;) {
        size_t w = 0, wb = 0;
        if (f->frn > 0) {
            size_t n = f->frn;
            f->frn = 0;
            if ((rc = emit(f, f->fr_t, f->fr, n, err, errlen)) != 0)
                return rc;
        }
        f->has_odd = 0; /* half a sample: not audio */
        if (f->cur >= f->last) {
            f->over = 1;
            f->nrec = f->hbn = 0;
            return 0;
        }
        f->cur++;
        ended = 0;
        for (size_t i = 0; i < f->nrec; i++) {
            struct rec r = f->rec[i];
            if (r.j == f->cur) {
                if (r.end)
                    ended = 1;
                else if (rc == 0)
                    rc = feed_cur(f, r.t, f->hb + r.off, r.n, err, errlen);
                continue;
            }
            keep_rec(f, r, &w, &wb);
        }
        f->nrec = w;
        f->hbn = wb;
        if (rc != 0 || !ended)
            return rc;
    }
}

/* Whether a record says chunk j ended. */
static int held_end(const struct tb_pcmfeed *f, uint32_t j)
{
    for (size_t i = 0; i < f->nrec; i++)
        if (f->rec[i].j == j && f->rec[i].end)
            return 1;
    return 0;
}

static int check(const struct tb_pcmfeed *f, uint32_t j, double t, char *err, size_t errlen)
{
    if (j == 0)
        return tb_seterr(err, errlen, TB_EINVAL, "chunk 0: chunks count from 1");
    if (!(t >= 0.0) || !isfinite(t))
        return tb_seterr(err, errlen, TB_EINVAL,
                         "chunk %u: the time %g is not a finite number >= 0", (unsigned)j, t);
    if (j < f->cur || (j > f->cur && held_end(f, j)))
        return tb_seterr(err, errlen, TB_EINVAL, "chunk %u has ended already", (unsigned)j);
    return 0;
}

/* Appends a record (bytes merge into the last record of the same chunk
 * and time). */
static int hold(struct tb_pcmfeed *f, uint32_t j, int end, double t, const void *pcm, size_t n,
                char *err, size_t errlen)
{
    struct rec *last = f->nrec > 0 ? &f->rec[f->nrec - 1] : NULL;
    if ((f->hbn + n) / 2 + tb_pcmhold_frames(&f->hold) > f->o.max_held)
        return too_big(f, err, errlen);
    while (f->hbn + n > f->hbcap) {
        unsigned char *nb = tb_grow(f->hb, &f->hbcap, 1, (size_t)1 << 16);
        if (nb == NULL)
            return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
        f->hb = nb;
    }
    if (n > 0)
        memcpy(f->hb + f->hbn, pcm, n);
    if (!end && last != NULL && last->j == j && !last->end && last->t == t &&
        last->off + last->n == f->hbn) {
        last->n += n;
    } else {
        if (f->nrec == f->reccap) {
            struct rec *nr = tb_grow(f->rec, &f->reccap, sizeof(*nr), 64);
            if (nr == NULL)
                return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
            f->rec = nr;
        }
        f->rec[f->nrec++] = (struct rec){j, end, t, f->hbn, n};
    }
    f->hbn += n;
    return 0;
}

int tb_pcmfeed_data(struct tb_pcmfeed *f, uint32_t j, double t, const void *pcm, size_t n,
                    char *err, size_t errlen)
{
    int rc = check(f, j, t, err, errlen);
    if (rc != 0)
        return rc;
    if (pcm == NULL && n > 0)
        return tb_seterr(err, errlen, TB_EINVAL, "chunk %u: no bytes", (unsigned)j);
    if (f->over || j > f->last || n == 0)
        return 0;
    /* The pre-roll counts every chunk's audio as it arrives. */
    if (t > f->t_last)
        f->t_last = t;
    f->arrived += n;
    if (isnan(f->t_reach) && f->arrived >= f->preroll_b) {
        f->t_reach = f->t_last;
        if ((rc = try_start(f)) != 0)
            return rc;
    }
    if (j == f->cur)
        return feed_cur(f, t, pcm, n, err, errlen);
    return hold(f, j, 0, t, pcm, n, err, errlen);
}

int tb_pcmfeed_end(struct tb_pcmfeed *f, uint32_t j, double t, int failed, char *err, size_t errlen)
{
    int rc = check(f, j, t, err, errlen);
    if (rc != 0)
        return rc;
    if (f->over || j > f->last)
        return 0;
    if (failed) {
        size_t w = 0, wb = 0;
        f->last = j;
        for (size_t i = 0; i < f->nrec; i++) { /* later chunks: dropped */
            struct rec r = f->rec[i];
            if (r.j > j)
                continue;
            keep_rec(f, r, &w, &wb);
        }
        f->nrec = w;
        f->hbn = wb;
    }
    if (j == f->cur)
        return chunk_ended(f, err, errlen);
    return hold(f, j, 1, t, NULL, 0, err, errlen);
}

int tb_pcmfeed_finish(struct tb_pcmfeed *f, char *err, size_t errlen)
{
    int rc = 0;
    while (!f->over && rc == 0) {
        uint32_t lo = UINT32_MAX;
        for (size_t i = 0; i < f->nrec; i++)
            lo = f->rec[i].j < lo ? f->rec[i].j : lo;
        if (f->nrec == 0)
            f->last = f->cur; /* nothing after it: the speech ends with it */
        else
            f->cur = lo - 1; /* the chunks between never came */
        rc = chunk_ended(f, err, errlen);
    }
    f->over = 1;
    if (rc == 0 && f->o.timed && !f->started && f->have_first) {
        if (isnan(f->t_reach))
            f->t_reach = f->t_last; /* the stream's end: all its audio */
        rc = try_start(f);
    }
    return rc;
}
