/*
 * sink_wav.c - the WAV sink: the player pulled on a virtual audio clock.
 *
 * Frame k of the file is stream time k / rate.  Before a chunk that is
 * playable at `due` goes into the player, the clock advances to due (the
 * player hands out what a listener would hear until then: silence before
 * playback, queued speech, concealment when dry), so gaps land in the file
 * where and as long as they would be heard, to the sample.  When the ring
 * is full the clock advances a block at a time until the chunk fits: audio
 * keeps playing while synthesis waits, as in real time.
 *
 * The clock never passes the cap (max frames): a chunk due after it ends
 * the render before the silence up to it is written (a stream with a last
 * event at t = 1e9 s stops at once instead of writing for a day), and
 * audio that runs into it stops there.  Reaching the cap is no failure of
 * the run: the sink says where its audio ends (base.capped_at), drops
 * what comes after, and the clock of the playout and the report go on
 * (the caller says the audio was cut, and where).  `due` is compared
 * with the cap as a double, before it becomes a frame count: a time
 * beyond any integer cannot be converted at all.  The file keeps the
 * first `keep` frames (the --html page: the clock and the report go on,
 * the page's audio stops there).
 *
 * The file is 16-bit mono PCM WAV; its sizes are patched in when the
 * render ends, whether it finished, reached the cap or was cancelled
 * (the cancel flag is looked at once a block): the header then describes
 * exactly the frames written.  Only an I/O error leaves it unpatched.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"
#include "sink_wav.h"
#include "ttsbuf/error.h"

#define BLOCK 1024
#define HEADER 44
/* A RIFF file's size field is 32 bits and counts the 36 header bytes after
 * it: at most this many 16-bit frames (4 GiB of data). */
#define WAV_FRAMES_MAX ((0xffffffffull - 36) / 2)

struct wav_sink {
    struct tb_sink base;
    FILE *f;
    int own;          /* f is ours to close */
    const char *path; /* for messages */
    uint64_t pos;     /* frames the clock has advanced */
    uint64_t max;     /* the cap, frames */
    uint64_t keep;    /* frames kept in the file (<= max) */
    double max_s;     /* the cap, s */
    const atomic_int *cancel;
    int failed;  /* an I/O error: the file is given up */
    int stopped; /* the cap or the cancel flag ended the render */
    int capped;  /* ... the cap (base.capped_at says where) */
    int16_t block[BLOCK];
};

static void put_le(unsigned char *b, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static int write_header(struct wav_sink *w, uint64_t frames)
{
    unsigned char h[HEADER];
    uint32_t data = (uint32_t)(frames * 2); /* frames <= WAV_FRAMES_MAX */
    memcpy(h, "RIFF", 4);
    put_le(h + 4, 36 + data, 4);
    memcpy(h + 8, "WAVEfmt ", 8);
    put_le(h + 16, 16, 4);
    put_le(h + 20, 1, 2); /* PCM */
    put_le(h + 22, 1, 2); /* mono */
    put_le(h + 24, w->base.rate, 4);
    put_le(h + 28, w->base.rate * 2, 4);
    put_le(h + 32, 2, 2);
    put_le(h + 34, 16, 2);
    memcpy(h + 36, "data", 4);
    put_le(h + 40, data, 4);
    return fwrite(h, 1, sizeof(h), w->f) == sizeof(h) ? 0 : TB_EIO;
}

static int io_error(struct wav_sink *w, char *err, size_t errlen)
{
    w->failed = 1;
    return tb_seterr(err, errlen, TB_EIO, "%s: %s", w->path, strerror(errno));
}

/* The cap: the render ends here, the run goes on (the file's head). */
static int over_cap(struct wav_sink *w)
{
    w->stopped = 1;
    w->capped = 1;
    w->base.capped_at = w->base.offset + (double)w->pos / w->base.rate;
    return 0;
}

static int cancelled(struct wav_sink *w, char *err, size_t errlen)
{
    w->stopped = 1;
    return tb_seterr(err, errlen, TB_ECANCELED, "interrupted; the file holds the first %.3f s",
                     (double)w->pos / w->base.rate);
}

/* Pulls n <= BLOCK frames and writes what the file keeps of them. */
static int step(struct wav_sink *w, size_t n, char *err, size_t errlen)
{
    unsigned char out[BLOCK * 2];
    size_t k, want = n;
    if (w->cancel != NULL && atomic_load_explicit(w->cancel, memory_order_relaxed) != 0)
        return cancelled(w, err, errlen);
    if (n > w->max - w->pos)
        n = (size_t)(w->max - w->pos); /* up to the cap, then stop: the file holds max_s */
    tb_pcmring_pull(w->base.player, w->block, n);
    k = w->pos >= w->keep ? 0 : w->keep - w->pos < n ? (size_t)(w->keep - w->pos) : n;
    for (size_t i = 0; i < k; i++)
        put_le(out + 2 * i, (uint16_t)w->block[i], 2);
    /* out[0..2k) is set just above; k == 0 reads nothing (cppcheck cannot
     * tell). */
    /* cppcheck-suppress uninitvar */
    if (k > 0 && fwrite(out, 2, k, w->f) != k)
        return io_error(w, err, errlen);
    w->pos += n;
    return n == want ? 0 : over_cap(w);
}

static int wav_chunk(struct tb_sink *s, double due, double delay, const int16_t *pcm, size_t n,
                     char *err, size_t errlen)
{
    struct wav_sink *w = (struct wav_sink *)s;
    uint64_t target;
    int rc;
    (void)delay; /* the virtual clock goes by due */
    if (w->failed || w->stopped)
        return w->failed ? TB_EIO : w->capped ? 0 : TB_ECANCELED;
    /* Compared as a double first: past the cap (or NaN), due * rate may
     * not fit the integer it becomes. */
    if (!(due <= w->max_s))
        return over_cap(w);
    target = due > 0 ? (uint64_t)(due * s->rate + 0.5) : 0;
    while (w->pos < target) {
        uint64_t left = target - w->pos;
        rc = step(w, left < BLOCK ? (size_t)left : BLOCK, err, errlen);
        if (rc != 0 || w->stopped)
            return rc;
    }
    while (n > 0 && !w->stopped) {
        size_t k = tb_pcmring_write(s->player, pcm, n);
        pcm += k;
        n -= k;
        if (n > 0 && (rc = step(w, BLOCK, err, errlen)) != 0)
            return rc;
    }
    return 0;
}

/* Writes the header for the frames in the file. */
static int patch_header(struct wav_sink *w)
{
    uint64_t kept = w->pos < w->keep ? w->pos : w->keep;
    if (fflush(w->f) != 0 || fseek(w->f, 0, SEEK_SET) != 0 || write_header(w, kept) != 0)
        return TB_EIO;
    return fflush(w->f) != 0 ? TB_EIO : 0;
}

static int wav_finish(struct tb_sink *s, char *err, size_t errlen)
{
    struct wav_sink *w = (struct wav_sink *)s;
    int rc = 0;
    if (w->f == NULL)
        return w->failed ? TB_EIO : 0;
    tb_pcmring_end(s->player);
    while (!w->failed && !w->stopped && !tb_pcmring_done(s->player))
        rc = step(w, BLOCK, err, errlen);
    /* After the cap or a cancel the header still says what was written. */
    if (!w->failed && patch_header(w) != 0)
        rc = io_error(w, err, errlen);
    if (w->own) {
        FILE *f = w->f;
        w->f = NULL;
        if (fclose(f) != 0 && rc == 0)
            rc = io_error(w, err, errlen);
    } else {
        w->f = NULL;
    }
    return rc;
}

static void wav_destroy(struct tb_sink *s)
{
    struct wav_sink *w = (struct wav_sink *)s;
    if (w->f != NULL && w->own)
        fclose(w->f);
    tb_pcmring_destroy(s->player);
    free(w);
}

static const struct tb_sink_ops wav_ops = {
    .chunk = wav_chunk, .end = NULL, .finish = wav_finish, .destroy = wav_destroy};

int tb_sink_wav_create(const struct tb_sink_wav_opts *o, const struct tb_pcmring_opts *po,
                       struct tb_sink **out, char *err, size_t errlen)
{
    struct wav_sink *w;
    double frames = o->max_s * po->rate;
    int rc;
    *out = NULL;
    if (!(o->max_s > 0) || !(o->keep_s >= 0) || po->rate == 0)
        return tb_seterr(err, errlen, TB_EINVAL, "bad audio cap");
    if (frames > (double)WAV_FRAMES_MAX)
        return tb_seterr(err, errlen, TB_ERANGE,
                         "an audio cap of %.0f s is over what a WAV file holds (%.0f s at %u Hz)",
                         o->max_s, (double)WAV_FRAMES_MAX / po->rate, po->rate);
    w = calloc(1, sizeof(*w));
    if (w == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    w->base.ops = &wav_ops;
    w->base.rate = po->rate;
    w->base.capped_at = NAN;
    w->path = o->path != NULL ? o->path : "the WAV stream";
    w->max_s = o->max_s;
    w->max = (uint64_t)frames;
    w->keep =
        o->keep_s > 0 && o->keep_s * po->rate < frames ? (uint64_t)(o->keep_s * po->rate) : w->max;
    w->cancel = o->cancel;
    rc = tb_pcmring_create(po, &w->base.player);
    if (rc != 0) {
        free(w);
        return tb_seterr(err, errlen, rc, "audio ring: %s", tb_strerror(rc));
    }
    w->own = o->stream == NULL;
    w->f = w->own ? fopen(o->path, "wb") : o->stream;
    if (w->f == NULL || write_header(w, 0) != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "%s: %s", w->path, strerror(errno));
        wav_destroy(&w->base);
        return rc;
    }
    *out = &w->base;
    return 0;
}
