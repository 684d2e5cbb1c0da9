/*
 * measured.c - a measured TTS replayed by the playout model (playout.h):
 * the latency and real-time-factor hooks over a log of records
 * (ttsmeas.h), and each chunk's duration.
 *
 * The hooks recompute a record's quantities on every call rather than
 * keeping a copy: tb_tts_chunk_model is a few subtractions, and the log
 * stays the one place the numbers live.  The times hook hands the
 * recorded sent, first byte and end themselves, so a replay at the
 * stream's own times shows them exactly (b + L would round).
 */
#include <math.h>

#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/ttsmeas.h"

/* Record j's model quantities; 0, or TB_EINVAL when it has none to
 * replay (absent, unmeasured, or a value the playout would refuse). */
static int record(const struct tb_tts_log *log, uint32_t j, double *lat, double *rtf, double *dur)
{
    const struct tb_tts_chunk *c;
    if (j == 0 || j > log->n)
        return TB_EINVAL;
    c = &log->c[j - 1];
    if (c->chunk != j || tb_tts_chunk_model(c, lat, rtf, dur) != 0)
        return TB_EINVAL;
    /* The bounds tb_playout_add_timed and the hooks hold values to. */
    if (!(*lat >= 0.0) || isinf(*lat) || !(*rtf >= 0.0) || isinf(*rtf) || !(*dur >= 0.0) ||
        *dur > 1e9)
        return TB_EINVAL;
    return 0;
}

static double latency_at(void *ud, uint32_t j)
{
    const struct tb_tts_measured *m = ud;
    double lat, rtf, dur;
    return record(m->log, j, &lat, &rtf, &dur) == 0 ? lat : NAN;
}

static double rtf_at(void *ud, uint32_t j)
{
    const struct tb_tts_measured *m = ud;
    double lat, rtf, dur;
    return record(m->log, j, &lat, &rtf, &dur) == 0 ? rtf : NAN;
}

/* Record j's times: sent, first audio (the end when no audio came: a
 * chunk complete with nothing to say is ready when it ended, as
 * tb_tts_chunk_model says) and end. */
static int times_at(void *ud, uint32_t j, double *b, double *f, double *d)
{
    const struct tb_tts_measured *m = ud;
    const struct tb_tts_chunk *c;
    double lat, rtf, dur;
    if (record(m->log, j, &lat, &rtf, &dur) != 0)
        return TB_EINVAL;
    c = &m->log->c[j - 1];
    *b = c->sent;
    *f = isnan(c->first_byte) ? c->end : c->first_byte;
    *d = c->end;
    return 0;
}

double tb_playout_measured_duration(const struct tb_tts_measured *ctx, uint32_t j)
{
    double lat, rtf, dur;
    return record(ctx->log, j, &lat, &rtf, &dur) == 0 ? dur : NAN;
}

double tb_playout_measured_lead(void *ud, uint32_t j)
{
    const struct tb_tts_measured *ctx = ud;
    return j >= 1 && j <= ctx->log->n ? ctx->log->c[j - 1].lead : NAN;
}

int tb_playout_opts_measured(struct tb_playout_opts *o, struct tb_tts_measured *ctx,
                             const struct tb_tts_log *log)
{
    ctx->log = log;
    ctx->bad = 0;
    if (log->concurrency < 0)
        return TB_EINVAL;
    for (size_t i = 0; i < log->n; i++) {
        double lat, rtf, dur;
        if (i >= UINT32_MAX || record(log, (uint32_t)i + 1, &lat, &rtf, &dur) != 0) {
            ctx->bad = i >= UINT32_MAX ? UINT32_MAX : (uint32_t)i + 1;
            return TB_EINVAL;
        }
    }
    o->tts_connect = 0.0;
    o->tts_latency = 0.0;
    o->tts_rtf = 0.0;
    o->tts_concurrency = log->concurrency;
    o->tts_latency_at = latency_at;
    o->tts_latency_ud = ctx;
    o->tts_rtf_at = rtf_at;
    o->tts_rtf_ud = ctx;
    o->tts_times_at = times_at;
    o->tts_times_ud = ctx;
    o->tts_output = TB_TTS_STREAM; /* the arrivals say how it came (R_j) */
    return 0;
}
