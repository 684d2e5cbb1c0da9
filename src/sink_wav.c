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
 * The file is 16-bit mono PCM WAV; its sizes are patched in at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"
#include "ttsbuf/error.h"

#define BLOCK 1024

struct wav_sink {
    struct tb_sink base;
    FILE *f;
    const char *path;
    uint64_t pos; /* frames written */
    int failed;
    int16_t block[BLOCK];
};

static void put_le(unsigned char *b, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static int write_header(struct wav_sink *w, uint64_t frames)
{
    unsigned char h[44];
    uint64_t bytes = frames * 2;
    uint32_t data = bytes > 0xffffffd3u ? 0xffffffd3u : (uint32_t)bytes;
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

/* Pulls n <= BLOCK frames and writes them. */
static int step(struct wav_sink *w, size_t n)
{
    unsigned char out[BLOCK * 2];
    tb_pcmring_pull(w->base.player, w->block, n);
    for (size_t i = 0; i < n; i++)
        put_le(out + 2 * i, (uint16_t)w->block[i], 2);
    /* out[0..2n) is set just above; n == 0 reads nothing (cppcheck cannot
     * tell). */
    /* cppcheck-suppress uninitvar */
    if (fwrite(out, 2, n, w->f) != n)
        return TB_EIO;
    w->pos += n;
    return 0;
}

static int advance_to(struct wav_sink *w, uint64_t target)
{
    while (w->pos < target) {
        uint64_t left = target - w->pos;
        int rc = step(w, left < BLOCK ? (size_t)left : BLOCK);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int io_error(struct wav_sink *w, char *err, size_t errlen)
{
    w->failed = 1;
    return tb_seterr(err, errlen, TB_EIO, "%s: %s", w->path, strerror(errno));
}

static int wav_chunk(struct tb_sink *s, double due, double delay, const int16_t *pcm, size_t n,
                     char *err, size_t errlen)
{
    struct wav_sink *w = (struct wav_sink *)s;
    double f = due * s->rate + 0.5;
    uint64_t target = f > 0 ? (uint64_t)f : 0;
    (void)delay; /* the virtual clock goes by due */
    if (w->failed)
        return TB_EIO;
    if (advance_to(w, target) != 0)
        return io_error(w, err, errlen);
    while (n > 0) {
        size_t k = tb_pcmring_write(s->player, pcm, n);
        pcm += k;
        n -= k;
        if (n > 0 && step(w, BLOCK) != 0)
            return io_error(w, err, errlen);
    }
    return 0;
}

static int wav_finish(struct tb_sink *s, char *err, size_t errlen)
{
    struct wav_sink *w = (struct wav_sink *)s;
    if (w->f == NULL)
        return w->failed ? TB_EIO : 0;
    tb_pcmring_end(s->player);
    while (!w->failed && !tb_pcmring_done(s->player)) {
        if (step(w, BLOCK) != 0)
            return io_error(w, err, errlen);
    }
    if (w->failed || fseek(w->f, 0, SEEK_SET) != 0 || write_header(w, w->pos) != 0)
        return io_error(w, err, errlen);
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0)
        return io_error(w, err, errlen);
    return 0;
}

static void wav_destroy(struct tb_sink *s)
{
    struct wav_sink *w = (struct wav_sink *)s;
    if (w->f != NULL)
        fclose(w->f);
    tb_pcmring_destroy(s->player);
    free(w);
}

static const struct tb_sink_ops wav_ops = {wav_chunk, wav_finish, wav_destroy};

int tb_sink_wav_create(const char *path, const struct tb_pcmring_opts *po, struct tb_sink **out,
                       char *err, size_t errlen)
{
    struct wav_sink *w = calloc(1, sizeof(*w));
    int rc;
    *out = NULL;
    if (w == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    w->base.ops = &wav_ops;
    w->base.rate = po->rate;
    w->path = path;
    rc = tb_pcmring_create(po, &w->base.player);
    if (rc != 0) {
        free(w);
        return tb_seterr(err, errlen, rc, "audio ring: %s", tb_strerror(rc));
    }
    w->f = fopen(path, "wb");
    if (w->f == NULL || write_header(w, 0) != 0) {
        rc = tb_seterr(err, errlen, TB_EIO, "%s: %s", path, strerror(errno));
        wav_destroy(&w->base);
        return rc;
    }
    *out = &w->base;
    return 0;
}
