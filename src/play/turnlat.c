/*
 * turnlat.c - where a turn's wait went (see turnlat.h).
 */
#include "ttsbuf/turnlat.h"

#include <math.h>
#include <stddef.h>

#include "ttsbuf/jsonline.h"

const char *const tb_turn_lat_keys[TB_TURN_LAT_PARTS] = {
    "eou_s",      "ttft_s",    "aggregation_s",     "tts_queue_s",
    "tts_ttfb_s", "preroll_s", "leading_silence_s", "v2v_s",
};

double tb_turn_lat_part(const struct tb_turn_lat *l, int i)
{
    switch (i) {
    case 0: return l->eou;
    case 1: return l->ttft;
    case 2: return l->aggregation;
    case 3: return l->tts_queue;
    case 4: return l->tts_ttfb;
    case 5: return l->preroll;
    case 6: return l->lead;
    case 7: return l->v2v;
    default: return NAN;
    }
}

void tb_turn_lat_set(struct tb_turn_lat *l, int i, double v)
{
    switch (i) {
    case 0: l->eou = v; break;
    case 1: l->ttft = v; break;
    case 2: l->aggregation = v; break;
    case 3: l->tts_queue = v; break;
    case 4: l->tts_ttfb = v; break;
    case 5: l->preroll = v; break;
    case 6: l->lead = v; break;
    case 7: l->v2v = v; break;
    default: break;
    }
}

void tb_turn_lat_clear(struct tb_turn_lat *l)
{
    l->chunk = 0;
    for (int i = 0; i < TB_TURN_LAT_PARTS; i++)
        tb_turn_lat_set(l, i, NAN);
    l->tool = NAN;
}

void tb_turn_lat_sum(struct tb_turn_lat *l)
{
    double v = 0.0;
    for (int i = 0; i < TB_TURN_LAT_PARTS - 1; i++) {
        v += tb_turn_lat_part(l, i);
        if (i == 1 && !isnan(l->tool))
            v += l->tool; /* right after ttft: the order readers sum in */
    }
    l->v2v = v; /* NAN when a part is */
}

void tb_turn_lat_play(struct tb_turn_lat *l, uint32_t chunk, double ttft, double close,
                      double begin, double ready, double start)
{
    l->chunk = chunk;
    l->ttft = ttft;
    l->aggregation = close - ttft;
    l->tts_queue = begin - close;
    l->tts_ttfb = ready - begin;
    l->preroll = start - ready;
    tb_turn_lat_sum(l);
}

void tb_turn_lat_heard_by(struct tb_turn_lat *l, double start, double stop)
{
    if (isnan(stop) || start + l->lead <= stop)
        return;
    l->lead = NAN;
    tb_turn_lat_sum(l);
}

void tb_turn_lat_json(struct cJSON *o, const struct tb_turn_lat *l)
{
    for (int i = 0; i < TB_TURN_LAT_PARTS; i++)
        tb_json_add_num(o, tb_turn_lat_keys[i], tb_turn_lat_part(l, i));
}
