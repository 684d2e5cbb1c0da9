/*
 * report_json.c - the --json object of `sim` and `run` (report_json.h):
 * its parts (where the stream came from and how it ended, the figures,
 * the minimum TPS's account, the gaps, the pre-roll curve, the ring, the
 * TTS) each added by a function of its own, then the turn's wait, the
 * draws, the speech and the chunks.
 * cJSON is used only to build the JSON output here; nothing of it leaves
 * this file.
 */
#include "report_json.h"

#include <cJSON.h>
#include <math.h>
#include <string.h>

#include "audio.h"
#include "chunks.h"
#include "jsonout.h"
#include "outputs.h"
#include "report_priv.h"
#include "sim_tool.h"
#include "tts_opts.h"
#include "turn_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"

/* What every part reads. */
struct doc {
    cJSON *root;
    const struct tb_report_src *src;
    const struct tb_sim_opts *o;
    const struct tb_sim_result *r;
    const struct tb_gap_list *gaps;
    const struct tb_report_live *live;
    struct tb_cli_measured m;
};

static void json_num(cJSON *o, const char *key, int have, double v)
{
    if (have && isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static const char *method_name(int method)
{
    return method == TB_MIN_TPS_CLOSED   ? "closed"
           : method == TB_MIN_TPS_BISECT ? "bisection"
                                         : "scan";
}

static void server_json(cJSON *root, const struct tb_server_timing *t)
{
    cJSON *o = cJSON_AddObjectToObject(root, "server_timing");
    if (o == NULL)
        return;
#define NS_FIELD(key, v)                                                                           \
    ((v) >= 0 ? (void)cJSON_AddNumberToObject(o, key, (double)(v) / 1e9)                           \
              : (void)cJSON_AddNullToObject(o, key))
    NS_FIELD("total_s", t->total_ns);
    NS_FIELD("load_s", t->load_ns);
    NS_FIELD("prompt_eval_s", t->prompt_eval_ns);
    NS_FIELD("eval_s", t->eval_ns);
#undef NS_FIELD
    cJSON_AddNumberToObject(o, "prompt_eval_count", (double)t->prompt_eval_count);
    cJSON_AddNumberToObject(o, "eval_count", (double)t->eval_count);
}

/* The measured TTS: which provider spoke (as the trace's header names it;
 * never a key), or null (a modelled TTS). */
static void tts_provider_json(cJSON *root, const struct tb_tts_log *l)
{
    cJSON *o;
    if (l == NULL || (o = cJSON_AddObjectToObject(root, "tts_provider")) == NULL) {
        cJSON_AddNullToObject(root, "tts_provider");
        return;
    }
    {
        /* a model or voice not sent is null */
        const char *const names[][2] = {
            {"api", l->api}, {"url", l->url}, {"model", l->model}, {"voice", l->voice}};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            tb_cli_json_str_or_null(o, names[i][0], names[i][1]);
    }
    cJSON_AddNumberToObject(o, "concurrency", l->concurrency);
    cJSON_AddBoolToObject(o, "mock", l->mock != 0);
}

static void tts_stats_json(cJSON *root, const struct tb_report_src *src)
{
    const struct tb_tts_stats *t = src->tts_stats;
    const struct tb_tts_chunk *c = src->tts_fail;
    cJSON *o;
    /* Only where there is a TTS to speak of: without one the document is
     * the one before the TTS stage, byte for byte. */
    if (src->tts_source == NULL)
        return;
    cJSON_AddStringToObject(root, "tts_source", src->tts_source);
    tts_provider_json(root, src->tts_log);
    tb_cli_report_tts_json(root, t);
    if (c == NULL || (o = cJSON_AddObjectToObject(root, "tts_end")) == NULL) {
        cJSON_AddNullToObject(root, "tts_end");
        return;
    }
    cJSON_AddNumberToObject(o, "chunk", c->chunk);
    cJSON_AddStringToObject(o, "kind", tb_tts_fail_name(c->fail));
    if (c->status > 0)
        cJSON_AddNumberToObject(o, "http_status", (double)c->status);
    else
        cJSON_AddNullToObject(o, "http_status");
    cJSON_AddStringToObject(o, "message", c->message);
}

/* What a live run adds: the provider, the request's account, the
 * server's own timings. */
static void live_json(cJSON *root, const struct tb_report_live *live)
{
    cJSON_AddStringToObject(root, "provider", live->provider != NULL ? live->provider : "remote");
    cJSON_AddStringToObject(root, "model", live->model);
    cJSON_AddStringToObject(root, "base_url", live->base_url);
    cJSON_AddStringToObject(root, "api", live->api);
    cJSON_AddNumberToObject(root, "http_status", (double)live->http_status);
    cJSON_AddNumberToObject(root, "sse_events", (double)live->sse_events);
    cJSON_AddNumberToObject(root, "tool_calls", (double)live->tool_calls);
    tb_json_add_num(root, "tool_first_start_s", live->tool_first_start);
    tb_json_add_num(root, "tool_first_end_s", live->tool_first_end);
    cJSON_AddStringToObject(root, "finish_reason", live->finish_reason);
    cJSON_AddBoolToObject(root, "usage_retried", live->usage_retried);
    if (live->usage_ignored >= 0)
        cJSON_AddNumberToObject(root, "usage_ignored", (double)live->usage_ignored);
    else
        cJSON_AddNullToObject(root, "usage_ignored");
    cJSON_AddNumberToObject(root, "surrogates_replaced", (double)live->surrogates_replaced);
    if (live->server != NULL)
        server_json(root, live->server);
}

/* Where the stream came from, how it ended, and the options played
 * with. */
static void origin(const struct doc *d)
{
    const struct tb_report_src *src = d->src;
    const struct tb_report_live *live = d->live;
    const char *warning = live != NULL ? live->warning : src->warning;
    const char *ekind, *emsg;
    long estatus;
    cJSON *root = d->root, *opts, *end;
    tb_cli_report_error(src, live, &ekind, &emsg, &estatus);
    cJSON_AddStringToObject(root, "source", src->kind);
    cJSON_AddStringToObject(root, "source_name", src->name);
    if (src->note != NULL)
        cJSON_AddStringToObject(root, "note", src->note);
    if (live != NULL)
        live_json(root, live);
    if (live != NULL || src->end != NULL)
        tb_json_add_error(root, ekind, emsg, estatus); /* an import's is its tool's */
    /* How the stream ended (unknown for a trace without an end line);
     * null for an imported request, whose tool keeps its own account. */
    if (src->end == NULL) {
        cJSON_AddNullToObject(root, "end");
    } else if ((end = cJSON_AddObjectToObject(root, "end")) != NULL) {
        cJSON_AddStringToObject(end, "kind", tb_end_name(src->end->kind));
        tb_cli_json_num(end, "t_s", src->end->t);
        cJSON_AddNumberToObject(end, "ignored_bytes", (double)src->end->ignored_bytes);
    }
    if (warning != NULL && warning[0] != '\0')
        cJSON_AddStringToObject(root, "warning", warning);
    opts = cJSON_AddObjectToObject(root, "options");
    if (opts != NULL) {
        tb_cli_json_playout(opts, d->o);
        tb_cli_json_tts(opts, src->tts);
    }
}

/* The figures: first token and audio, counts, rates, the gaps' totals
 * and the what-if. */
static void figures(const struct doc *d)
{
    const struct tb_sim_result *r = d->r;
    const struct tb_playout_result *p = &r->play;
    const struct tb_cli_measured *m = &d->m;
    cJSON *root = d->root;
    json_num(root, "ttft_s", m->ttft, r->ttft);
    json_num(root, "ttfa_s", m->audio, p->ttfa);
    cJSON_AddNumberToObject(root, "events", (double)r->content_events);
    cJSON_AddNumberToObject(root, "content_tokens", (double)r->content_tokens);
    cJSON_AddNumberToObject(root, "reasoning_events", (double)r->reasoning_events);
    cJSON_AddNumberToObject(root, "reasoning_tokens", (double)r->reasoning_tokens);
    if (r->usage_tokens >= 0)
        cJSON_AddNumberToObject(root, "usage_tokens", (double)r->usage_tokens);
    else
        cJSON_AddNullToObject(root, "usage_tokens");
    cJSON_AddNumberToObject(root, "chunks", p->chunks);
    cJSON_AddNumberToObject(root, "start_chunk", p->q);
    json_num(root, "decode_tps", m->tps, r->decode_tps);
    if (r->decode_tps_usage > 0)
        cJSON_AddNumberToObject(root, "decode_tps_usage", r->decode_tps_usage);
    else
        cJSON_AddNullToObject(root, "decode_tps_usage");
    cJSON_AddNumberToObject(root, "speech_s", p->speech);
    json_num(root, "end_s", m->audio, p->end);
    json_num(root, "underruns", m->audio, p->underruns);
    json_num(root, "interruptions", m->audio, p->interruptions);
    json_num(root, "gap_total_s", m->audio, p->gap_total);
    json_num(root, "gap_max_s", m->audio, p->gap_max);
    json_num(root, "min_tps", m->whatif, p->min_tps);
    json_num(root, "speedup_needed", m->whatif, p->speedup);
    if (tb_cli_report_causes(d->src)) {
        json_num(root, "gap_llm_s", m->audio, p->gap_llm);
        json_num(root, "gap_tts_s", m->audio, p->gap_tts);
    }
}

/* How the minimum TPS was found, or why there is none: with a TTS stage,
 * and under a time-based chunk policy, whose minimum TPS is searched
 * too. */
static void min_tps_account(const struct doc *d)
{
    const struct tb_playout_result *p = &d->r->play;
    cJSON *root = d->root;
    if (!tb_cli_report_causes(d->src) && !tb_seg_policy_timed(d->o->seg.policy))
        return;
    if (d->src->min_tps_reason != NULL)
        cJSON_AddStringToObject(root, "min_tps_reason", d->src->min_tps_reason);
    else if (d->m.whatif && p->min_tps_none)
        cJSON_AddStringToObject(root, "min_tps_reason", TB_MIN_TPS_NONE_REASON);
    else
        cJSON_AddNullToObject(root, "min_tps_reason");
    if (d->m.whatif && !p->min_tps_none) {
        cJSON_AddStringToObject(root, "min_tps_method", method_name(p->min_tps_method));
        cJSON_AddBoolToObject(root, "min_tps_proven", p->min_tps_method != TB_MIN_TPS_SCAN);
    } else {
        cJSON_AddNullToObject(root, "min_tps_method");
        cJSON_AddNullToObject(root, "min_tps_proven");
    }
}

/* Every gap, with its cause when there is a TTS stage. */
static void gap_array(const struct doc *d)
{
    const struct tb_gap_list *gaps = d->gaps;
    cJSON *gl = cJSON_AddArrayToObject(d->root, "gaps");
    for (size_t i = 0; gl != NULL && i < gaps->n; i++) {
        cJSON *g = cJSON_CreateObject();
        if (g == NULL)
            break;
        cJSON_AddNumberToObject(g, "at_s", gaps->v[i].start - gaps->v[i].gap);
        cJSON_AddNumberToObject(g, "gap_s", gaps->v[i].gap);
        cJSON_AddNumberToObject(g, "chunk", gaps->v[i].chunk);
        if (tb_cli_report_causes(d->src)) {
            cJSON_AddStringToObject(g, "cause", tb_cli_gap_cause(&gaps->v[i]));
            cJSON_AddNumberToObject(g, "llm_s", gaps->v[i].gap_llm);
            cJSON_AddNumberToObject(g, "tts_s", gaps->v[i].gap_tts);
        }
        cJSON_AddItemToArray(gl, g);
    }
}

/* The pre-roll curve: the same stream at other pre-rolls. */
static void curve_array(const struct doc *d)
{
    const struct tb_sim_result *r = d->r;
    cJSON *curve = cJSON_AddArrayToObject(d->root, "preroll_curve");
    for (int i = 0; curve != NULL && i < TB_CURVE_POINTS; i++) {
        cJSON *c = cJSON_CreateObject();
        if (c == NULL)
            break;
        cJSON_AddNumberToObject(c, "preroll_s", r->curve[i].preroll);
        json_num(c, "min_tps", d->m.whatif, r->curve[i].min_tps);
        json_num(c, "underruns", d->m.audio, r->curve[i].underruns);
        json_num(c, "gap_total_s", d->m.audio, r->curve[i].gap_total);
        json_num(c, "gap_max_s", d->m.audio, r->curve[i].gap_max);
        json_num(c, "ttfa_s", d->m.audio, r->curve[i].ttfa);
        cJSON_AddItemToArray(curve, c);
    }
}

/* The ring: its capacity, high water and backpressure. */
static void ring_json(const struct doc *d)
{
    const struct tb_sim_result *r = d->r;
    cJSON *ring = cJSON_AddObjectToObject(d->root, "ring");
    if (ring == NULL)
        return;
    cJSON_AddNumberToObject(ring, "slots", (double)r->ring_slots);
    cJSON_AddNumberToObject(ring, "bytes", (double)r->ring_bytes);
    cJSON_AddNumberToObject(ring, "hw_tokens", (double)r->hw_items);
    cJSON_AddNumberToObject(ring, "hw_bytes", (double)r->hw_bytes);
    cJSON_AddNumberToObject(ring, "hw_speech_s", r->hw_speech_s);
    cJSON_AddNumberToObject(ring, "backpressure_waits", (double)r->backpressure_waits);
    cJSON_AddNumberToObject(ring, "backpressure_s", r->backpressure_s);
    cJSON_AddNumberToObject(ring, "forced_cuts", r->forced_cuts);
    cJSON_AddBoolToObject(ring, "forced_start", r->forced_start);
}

/* A measured TTS: its provider, statistics and end. */
static void tts_json(const struct doc *d)
{
    tts_stats_json(d->root, d->src);
}

/* The document's parts, in order. */
static void (*const parts[])(const struct doc *) = {
    origin, figures, min_tps_account, gap_array, curve_array, ring_json, tts_json,
};

int tb_cli_report_json(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                       const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                       const struct tb_report_live *live, const struct tb_cli_audio *audio,
                       const struct tb_cli_chunks *chunks)
{
    struct doc d = {
        .root = tb_cli_json_doc(TB_SCHEMA_RESULT, TB_SCHEMA_RESULT_V, live != NULL ? "run" : "sim"),
        .src = src,
        .o = o,
        .r = r,
        .gaps = gaps,
        .live = live,
        .m = tb_cli_report_measured(src, r, live),
    };
    if (d.root == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        parts[i](&d);
    if (src->turn != NULL && tb_cli_turn_json(d.root, src->turn, o, &r->lat) != 0)
        goto nomem;
    if (src->tool_turn != NULL && tb_cli_sim_tool_json(d.root, src->tool_turn) != 0)
        goto nomem;
    if (src->tts != NULL)
        tb_cli_json_draws(d.root, &src->tts->draws, src->tts->seed);
    if (audio != NULL)
        tb_cli_audio_json(d.root, audio, o);
    if (chunks != NULL && tb_cli_chunks_json(d.root, chunks) != 0)
        goto nomem;
    return tb_json_put_line(f, d.root);
nomem:
    cJSON_Delete(d.root);
    return TB_ENOMEM;
}
