/*
 * jsonout.c - the shared parts of ttsbuf's JSON documents (jsonout.h).
 */
#include "jsonout.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "tts_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/version.h"

const char *tb_cli_started_at(void)
{
    static char buf[32];
    if (buf[0] == '\0') {
        time_t t = time(NULL);
        struct tm tm;
        if (gmtime_r(&t, &tm) == NULL || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
            snprintf(buf, sizeof(buf), "1970-01-01T00:00:00Z");
    }
    return buf;
}

cJSON *tb_cli_json_doc(const char *schema, int version, const char *command)
{
    cJSON *o = cJSON_CreateObject(), *s;
    if (o == NULL)
        return NULL;
    s = cJSON_AddObjectToObject(o, "schema");
    if (s == NULL) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddStringToObject(s, "name", schema);
    cJSON_AddNumberToObject(s, "version", version);
    cJSON_AddStringToObject(o, "ttsbuf_version", tb_version());
    cJSON_AddStringToObject(o, "started_at", tb_cli_started_at());
    cJSON_AddStringToObject(o, "command", command);
    return o;
}

void tb_cli_json_playout(cJSON *opts, const struct tb_sim_opts *o)
{
    cJSON_AddStringToObject(opts, "chunk", tb_seg_policy_name(o->seg.policy));
    cJSON_AddNumberToObject(opts, "min_chars", o->seg.min_chars);
    if (o->seg.policy == TB_CHUNK_CARTESIA)
        cJSON_AddNumberToObject(
            opts, "max_buffer_delay_ms",
            1000.0 * (o->seg.max_delay_s > 0 ? o->seg.max_delay_s : TB_SEG_CARTESIA_DELAY_S));
    if (o->seg.policy == TB_CHUNK_IDLE)
        cJSON_AddNumberToObject(opts, "idle_flush_s",
                                o->seg.idle_s > 0 ? o->seg.idle_s : TB_SEG_IDLE_S);
    cJSON_AddNumberToObject(opts, "wpm", o->play.wpm);
    if (o->play.tts_latency_at != NULL)
        cJSON_AddNullToObject(opts, "tts_latency_s"); /* not a constant: see "tts" */
    else
        cJSON_AddNumberToObject(opts, "tts_latency_s", o->play.tts_latency);
    cJSON_AddNumberToObject(opts, "preroll_s", o->play.preroll);
    cJSON_AddBoolToObject(opts, "rebuffer", o->play.rebuffer);
    cJSON_AddStringToObject(opts, "voice_model", tb_voice_model(o->voice));
}

void tb_cli_json_tts(cJSON *opts, const struct tb_cli_tts *t)
{
    cJSON *o;
    if (t == NULL || !t->any || (o = cJSON_AddObjectToObject(opts, "tts")) == NULL)
        return;
    cJSON_AddStringToObject(o, "latency", t->spec);
    if (t->seeded) {
        char seed[32]; /* exact: a double would round seeds past 2^53 */
        snprintf(seed, sizeof(seed), "%llu", (unsigned long long)t->seed);
        cJSON_AddRawToObject(o, "seed", seed);
    } else
        cJSON_AddNullToObject(o, "seed");
    cJSON_AddNumberToObject(o, "connect_s", t->connect);
    if (t->concurrency > 0)
        cJSON_AddNumberToObject(o, "concurrency", t->concurrency);
    else
        cJSON_AddNullToObject(o, "concurrency");
    cJSON_AddNumberToObject(o, "rtf", t->rtf);
    cJSON_AddStringToObject(o, "output", tb_cli_tts_output_name(t->output));
    if (t->preset != NULL)
        cJSON_AddStringToObject(o, "preset", t->preset);
    else
        cJSON_AddNullToObject(o, "preset");
    cJSON_AddBoolToObject(o, "chunk_from_preset", t->chunk_from_preset);
}

void tb_cli_json_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

cJSON *tb_cli_json_str_or_null(cJSON *o, const char *key, const char *v)
{
    return v != NULL && v[0] != '\0' ? cJSON_AddStringToObject(o, key, v)
                                     : cJSON_AddNullToObject(o, key);
}

void tb_cli_json_nums(cJSON *o, const struct tb_cli_json_field *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cJSON_AddNumberToObject(o, rows[i].key, rows[i].v);
}

void tb_cli_json_stats(cJSON *o, const char *key, const struct tb_stats *s)
{
    cJSON *b = cJSON_AddObjectToObject(o, key);
    if (b == NULL)
        return;
    cJSON_AddNumberToObject(b, "count", (double)s->count);
    for (int i = 0; tb_stats_fields[i] != NULL; i++)
        tb_cli_json_num(b, tb_stats_fields[i], s->count > 0 ? tb_stats_field(s, i) : NAN);
}

/* A seed as an exact JSON integer: a double would round it past 2^53. */
static void add_seed(cJSON *o, const char *key, uint64_t seed)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRIu64, seed);
    cJSON_AddRawToObject(o, key, buf);
}

void tb_cli_json_draws(cJSON *root, const struct tb_cli_draws *d, uint64_t seed)
{
    const struct tb_draws_result *r = &d->res;
    cJSON *o, *w;
    if (d->draws == 0)
        return;
    if (!d->ran || (o = cJSON_AddObjectToObject(root, "tts_draws")) == NULL) {
        cJSON_AddNullToObject(root, "tts_draws");
        return;
    }
    cJSON_AddNumberToObject(o, "draws", (double)r->draws);
    add_seed(o, "seed", seed);
    cJSON_AddNumberToObject(o, "target_gapless", r->target);
    cJSON_AddNumberToObject(o, "gapless_share", (double)r->gapless / (double)r->draws);
    tb_cli_json_stats(o, "underruns", &r->underruns);
    tb_cli_json_stats(o, "gap_total_s", &r->gap_total);
    tb_cli_json_stats(o, "ttfa_s", &r->ttfa);
    if (r->v2v.count > 0) /* only with the turn model: the v1 object stays as it was */
        tb_cli_json_stats(o, "v2v_s", &r->v2v);
    tb_cli_json_stats(o, "min_tps", &r->min_tps);
    cJSON_AddNumberToObject(o, "min_tps_none", (double)r->min_tps_none);
    cJSON_AddNumberToObject(o, "min_tps_none_share", (double)r->min_tps_none / (double)r->draws);
    cJSON_AddNumberToObject(o, "min_tps_unproven", (double)r->min_tps_scan);
    tb_cli_json_stats(o, "preroll_gapless_s", &r->preroll);
    cJSON_AddNumberToObject(o, "preroll_for_target_s", r->preroll_for_target);
    w = cJSON_AddObjectToObject(o, "worst");
    if (w != NULL) {
        cJSON_AddNumberToObject(w, "draw", (double)r->worst);
        add_seed(w, "seed", r->worst_seed);
        cJSON_AddNumberToObject(w, "gap_total_s", r->worst_gap_total);
    }
}
