/*
 * sim.c - what playing a stream out is told and what it finds (see
 * sim.h): the options at their defaults, and the decode rate a result's
 * usage implies.  The simulator itself, which the drain serves as it
 * serves a live run, is sim_run.c.
 */
#include "ttsbuf/sim.h"

#include <string.h>

void tb_sim_opts_default(struct tb_sim_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->seg.policy = TB_CHUNK_SENTENCE;
    o->seg.min_chars = 1;
    tb_playout_opts_default(&o->play);
    o->ring_slots = TB_RING_SLOTS_DEFAULT;
    o->ring_bytes = TB_RING_BYTES_DEFAULT;
}

void tb_sim_opts_turn(struct tb_sim_opts *o, uint32_t k)
{
    if (o->eou_at != NULL)
        o->eou_s = o->eou_at(o->eou_ud, k);
}

void tb_sim_result_set_usage(struct tb_sim_result *r, long long usage_tokens)
{
    double span = r->last_content_t - r->ttft;
    r->usage_tokens = usage_tokens;
    r->decode_tps_usage = 0.0;
    if (usage_tokens > (long long)r->first_tokens && r->content_events > 1 && span > 0)
        r->decode_tps_usage = (double)(usage_tokens - r->first_tokens) / span;
}
