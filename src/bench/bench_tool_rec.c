/*
 * bench_tool_rec.c - a call's tool turn in its record (bench_rec.h, Tool
 * calls): the latency parts moved to the turn's clock, the silence around
 * the tool with and without the filler, and the keys written (read back
 * by bench_rec_parse.c).
 */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/bench_rec.h"
#include "ttsbuf/jsonline.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/utf8.h"
#include "ttsbuf/voice.h"

static const char *const windows[3] = {"before", "during", "after"};

void tb_bench_rec_tool_clear(struct tb_bench_rec *rec)
{
    rec->tool_calls = 0;
    rec->tool_start = rec->tool_end = rec->tool_s = rec->tool_head = NAN;
    rec->filler_at = rec->filler_dur = rec->filler_covered = rec->filler_delay = NAN;
    rec->filler_sent = rec->filler_fb = NAN;
    rec->tool_args_bad = 0;
    tb_tts_log_free(rec->filler_log);
    free(rec->filler_log);
    rec->filler_log = NULL;
    for (int i = 0; i < 3; i++)
        rec->tool_silence[i] = rec->filler_silence[i] = NAN;
    rec->lat.tool = NAN;
}

/* The length of [a, b) within [lo, hi). */
static double overlap(double a, double b, double lo, double hi)
{
    double v = fmin(b, hi) - fmax(a, lo);
    return v > 0 ? v : 0;
}

/* The filler's audio heard within [lo, hi), and in *end where it ends.
 * Modelled: [filler_at, filler_at + filler_dur).  Measured (filler_log):
 * its PCM as it arrived, each piece played at the later of its arrival
 * and the end of the piece before (as a barge-in's audio in flight is,
 * bench_call.c), from the first; the chunk's leading silence (lead) is
 * not heard.  A filler that brought no audio fills nothing (*end NaN). */
static double filler_in(const struct tb_bench_rec *r, double lo, double hi, double *start,
                        double *end)
{
    const struct tb_tts_chunk *c;
    double at = NAN, quiet, got = 0;
    if (r->filler_log == NULL || r->filler_log->n == 0) {
        *start = r->filler_at;
        *end = isnan(r->filler_at) ? NAN : r->filler_at + r->filler_dur;
        return isnan(r->filler_at) ? 0 : overlap(r->filler_at, *end, lo, hi);
    }
    c = &r->filler_log->c[0];
    quiet = isnan(c->lead) ? 0 : c->lead;
    *start = *end = NAN;
    for (uint32_t k = 0; k < c->narr && c->rate > 0; k++) {
        double d = tb_tts_arrival_piece_s(c, k),
               a = fmax(isnan(at) ? c->arr[k].t : at, c->arr[k].t);
        double skip = fmin(quiet, d); /* the leading silence, not heard */
        quiet -= skip;
        at = a + d;
        if (d - skip > 0) {
            got += overlap(a + skip, at, lo, hi);
            if (isnan(*start))
                *start = a + skip;
            *end = at;
        }
    }
    return got;
}

void tb_bench_rec_filler_log(struct tb_bench_rec *r)
{
    const struct tb_tts_chunk *c;
    double start, end, heard;
    if (r->filler_log == NULL || r->filler_log->n == 0)
        return;
    c = &r->filler_log->c[0];
    r->filler_sent = c->sent;
    r->filler_fb = c->first_byte;
    heard = filler_in(r, -INFINITY, INFINITY, &start, &end);
    r->filler_at = start;
    r->filler_dur = isnan(start) ? NAN : heard;
}

/* The silence in each window, and the filler's share of it. */
static void silences(struct tb_bench_rec *r)
{
    /* the answer's first audible sample on the turn's clock: v2v from the
     * first request (eou is before it) */
    double heard = r->lat.v2v - r->lat.eou, sum = 0, filled = 0, start, end = NAN;
    double lo[3] = {r->tool_start, r->tool_end, r->tool_head};
    double hi[3] = {r->tool_end, r->tool_head, heard};
    for (int i = 0; i < 3; i++) {
        r->tool_silence[i] = hi[i] - lo[i]; /* NaN after when nothing was heard */
        if (r->filler && !isnan(r->tool_silence[i])) {
            double f = filler_in(r, lo[i], hi[i], &start, &end);
            r->filler_silence[i] = r->tool_silence[i] - f;
            filled += f;
        }
        sum += r->tool_silence[i];
    }
    if (!r->filler)
        return;
    r->filler_covered = sum > 0 ? filled / sum : NAN; /* NaN: no answer, or no silence */
    /* a filler with no audio holds nothing up */
    r->filler_delay = isnan(heard) ? NAN : isnan(end) ? 0 : fmax(end - heard, 0);
}

void tb_bench_rec_tool_lat(struct tb_bench_rec *rec)
{
    if (rec->tool_calls == 0)
        return;
    rec->lat.ttft += rec->tool_end; /* the first request's time to its call's end */
    rec->lat.tool = rec->tool_s;
    if (rec->stream != NULL)
        rec->stream->tool_s = rec->tool_s; /* its trace says it: sim warns of it */
    tb_turn_lat_sum(&rec->lat);
    silences(rec);
}

void tb_bench_rec_tool_stream(struct tb_bench_rec *rec)
{
    struct tb_stream_toolturn *t;
    if (rec->stream == NULL)
        return;
    t = &rec->stream->turn_tool;
    tb_stream_toolturn_init(t);
    if (rec->tool_calls == 0)
        return;
    t->calls = rec->tool_calls;
    t->start = rec->tool_start;
    t->end = rec->tool_end;
    t->wait = rec->tool_s;
    t->filler = rec->filler;
    t->filler_at = rec->filler_at;
    t->filler_s = rec->filler_dur;
}

void tb_bench_rec_filler_model(struct tb_bench_rec *rec, const char *text,
                               const struct tb_playout_opts *p)
{
    rec->filler = 1;
    rec->filler_sent = rec->tool_start;
    rec->filler_at =
        rec->tool_start + p->tts_connect +
        (p->tts_latency_at != NULL ? p->tts_latency_at(p->tts_latency_ud, 1) : p->tts_latency);
    rec->filler_dur = tb_voice_seconds(tb_utf8_count(text, strlen(text)), p->wpm);
    rec->filler_fb = rec->filler_at;
}

void tb_bench_rec_tool_json(cJSON *o, cJSON *l, const struct tb_bench_rec *r)
{
    char key[48];
    if (l != NULL)
        tb_json_add_num(l, "tool_s", r->lat.tool);
    cJSON_AddNumberToObject(o, "tool_calls", r->tool_calls);
    tb_json_add_num(o, "tool_start_s", r->tool_start);
    tb_json_add_num(o, "tool_end_s", r->tool_end);
    tb_json_add_num(o, "tool_s", r->tool_s);
    cJSON_AddBoolToObject(o, "tool_args_bad", r->tool_args_bad);
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof(key), "tool_silence_%s_s", windows[i]);
        tb_json_add_num(o, key, r->tool_silence[i]);
    }
    if (!r->filler)
        return; /* only with --filler, so that records without one are as before */
    tb_json_add_num(o, "filler_sent_s", r->filler_sent);
    tb_json_add_num(o, "filler_first_byte_s", r->filler_fb);
    tb_json_add_num(o, "filler_at_s", r->filler_at);
    tb_json_add_num(o, "filler_s", r->filler_dur);
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof(key), "filler_silence_%s_s", windows[i]);
        tb_json_add_num(o, key, r->filler_silence[i]);
    }
    tb_json_add_num(o, "filler_covered", r->filler_covered);
    tb_json_add_num(o, "filler_delay_s", r->filler_delay);
}
