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

/* A drawn hook (*at, *ud) given turn k's own seed in v: from a
 * tb_ttslat_at hook, or from one an earlier call seeded. */
static void turn_draws(tb_tts_latency_fn *at, void **ud, struct tb_ttslat_seeded *v, uint32_t k)
{
    const struct tb_ttslat *t = *at == tb_ttslat_at ? (const struct tb_ttslat *)*ud
                                : *at == tb_ttslat_seeded_at
                                    ? ((const struct tb_ttslat_seeded *)*ud)->t
                                    : NULL;
    struct tb_ttslat_info info;
    if (t == NULL)
        return;
    tb_ttslat_info(t, &info);
    tb_ttslat_seeded_init(v, t, tb_ttslat_draw_seed(info.seed, k));
    *at = tb_ttslat_seeded_at;
    *ud = v;
}

void tb_sim_opts_turn_draws(struct tb_sim_opts *o, uint32_t k)
{
    turn_draws(&o->play.tts_latency_at, &o->play.tts_latency_ud, &o->turn_lat, k);
    turn_draws(&o->lead_at, &o->lead_ud, &o->turn_lead, k);
}

void tb_sim_opts_turn(struct tb_sim_opts *o, uint32_t k)
{
    if (o->eou_at != NULL)
        o->eou_s = o->eou_at(o->eou_ud, k);
    tb_sim_opts_turn_draws(o, k);
}

void tb_sim_result_set_usage(struct tb_sim_result *r, long long usage_tokens)
{
    double span = r->last_content_t - r->ttft;
    r->usage_tokens = usage_tokens;
    r->decode_tps_usage = 0.0;
    if (usage_tokens > (long long)r->first_tokens && r->content_events > 1 && span > 0)
        r->decode_tps_usage = (double)(usage_tokens - r->first_tokens) / span;
}
