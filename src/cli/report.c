/*
 * report.c - what `sim` and `run` print (see report.h): the human report,
 * the --json object, the --fail-on-underrun verdict, and run's status
 * line.
 * cJSON is used only to build the JSON output here; nothing of it leaves
 * this file.
 */
#include "report.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "audio.h"
#include "chunks.h"
#include "cli.h"
#include "jsonout.h"
#include "outputs.h"
#include "tts_opts.h"
#include "turn_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/live.h"
#include "ttsbuf/seg.h"

/* Which numbers were measured.  A stream that failed or was cut off has
 * no verdict and no what-if for the whole answer (minimum TPS, speed-up,
 * the pre-roll curve's minimum TPS); a stream without a content event has
 * no TTFT, one with fewer than two no decode rate, one without a chunk no
 * first audio, no playback end and no gaps (nothing was played).  What was
 * not measured is null in JSON and "-" in the human report, never 0.  A
 * stream whose end is not known (a trace without an end line) is read as
 * complete, and the report says so. */
struct measured {
    int failed, cut, unknown, ttft, tps, audio, whatif;
};

static struct measured measured_of(const struct tb_report_src *src, const struct tb_sim_result *r,
                                   const struct tb_report_live *live)
{
    struct measured m;
    int cls = src->end != NULL ? tb_end_class(src->end->kind) : TB_END_CLASS_COMPLETE;
    m.cut = cls == TB_END_CLASS_INCOMPLETE;
    m.failed = !m.cut && (cls == TB_END_CLASS_FAILED ||
                          (live != NULL && live->error_kind != NULL) || src->tts_fail != NULL);
    m.unknown = cls == TB_END_CLASS_UNKNOWN;
    m.ttft = r->content_events > 0;
    m.tps = r->content_events > 1 && r->decode_tps > 0;
    m.audio = r->play.chunks > 0;
    m.whatif = !m.failed && !m.cut && m.audio && src->min_tps_reason == NULL;
    return m;
}

/* The error of the stream: a live run's, else the one its end records. */
static void error_of(const struct tb_report_src *src, const struct tb_report_live *live,
                     const char **kind, const char **msg, long *status)
{
    *kind = NULL;
    *msg = "";
    *status = 0;
    if (live != NULL) {
        *kind = live->error_kind;
        *msg = live->error;
        *status = live->http_status;
    } else if (src->end != NULL && src->end->error[0] != '\0') {
        *kind = src->end->error;
        *msg = src->end->message;
        *status = src->end->http_status;
    }
}

/* When a cut stream ended: its end's time, else its last event's. */
static double cut_at(const struct tb_report_src *src, const struct tb_sim_result *r)
{
    if (src->end != NULL && isfinite(src->end->t))
        return src->end->t;
    return r->last_content_t;
}

int tb_cli_report_whatif_measured(const struct tb_report_src *src, const struct tb_sim_result *r,
                                  const struct tb_report_live *live)
{
    return measured_of(src, r, live).whatif;
}

/* v with prec decimals, or "-" when not measured ("none": a minimum TPS
 * that no rate reaches). */
static const char *num(char *buf, size_t len, int have, int prec, double v)
{
    if (!have)
        return "-";
    if (isnan(v))
        return "none";
    snprintf(buf, len, "%.*f", prec, v);
    return buf;
}

static void json_num(cJSON *o, const char *key, int have, double v)
{
    if (have && isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

/* Whether the report says which side caused each gap: a TTS option was
 * given (without one, every output is as before the stage). */
static int causes(const struct tb_report_src *src)
{
    return (src->tts != NULL && src->tts->any) ||
           (src->tts_source != NULL && strcmp(src->tts_source, "measured") == 0);
}

static const char *cause_name(double llm, double tts)
{
    return llm > 0.0 && tts > 0.0 ? "both" : llm > 0.0 ? "llm" : "tts";
}

const char *tb_cli_gap_cause(const struct tb_play *g)
{
    return cause_name(g->gap_llm, g->gap_tts);
}

static const char *method_name(int method)
{
    return method == TB_MIN_TPS_CLOSED   ? "closed"
           : method == TB_MIN_TPS_BISECT ? "bisection"
                                         : "scan";
}

static void verdict(FILE *f, const struct tb_playout_result *p)
{
    if (p->underruns == 0) {
        fprintf(f, "verdict: no gaps\n");
        return;
    }
    fprintf(f, "verdict: %" PRIu32 " underrun%s, %.2f s of silence, longest %.2f s", p->underruns,
            p->underruns == 1 ? "" : "s", p->gap_total, p->gap_max);
    if (p->interruptions > 0)
        fprintf(f, " (%" PRIu32 " audible interruption%s >= 150 ms)", p->interruptions,
                p->interruptions == 1 ? "" : "s");
    fputc('\n', f);
}

/* The provider's own account of the request (Ollama's final line). */
static void server_line(FILE *f, const struct tb_server_timing *t)
{
    fprintf(f, "  server says:");
    if (t->total_ns >= 0)
        fprintf(f, " total %.3f s", (double)t->total_ns / 1e9);
    if (t->load_ns >= 0)
        fprintf(f, ", load %.3f s", (double)t->load_ns / 1e9);
    if (t->prompt_eval_ns >= 0)
        fprintf(f, ", prompt %lld tokens in %.3f s", t->prompt_eval_count,
                (double)t->prompt_eval_ns / 1e9);
    if (t->eval_ns >= 0) {
        fprintf(f, ", eval %lld tokens in %.3f s", t->eval_count, (double)t->eval_ns / 1e9);
        if (t->eval_ns > 0 && t->eval_count > 0)
            fprintf(f, " (%.1f tokens/s)", (double)t->eval_count * 1e9 / (double)t->eval_ns);
    }
    fputc('\n', f);
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

/* The measured TTS: which provider (never a key). */
static void tts_measured_line(FILE *f, const struct tb_tts_log *l)
{
    fprintf(f, "  tts: measured, %s%s at %s",
            l->mock ? "the built-in MOCK TTS (not a real one), " : "", l->api, l->url);
    if (l->model[0])
        fprintf(f, ", model %s", l->model);
    if (l->voice[0])
        fprintf(f, ", voice %s", l->voice);
    fprintf(f, ", concurrency %d\n", l->concurrency);
}

/* Where a failed chunk ended the speech, and how far each side got: the
 * TTS's chunks, and the LLM's stream (whole, failed too, or stopped when
 * the TTS died: its end's error "tts", live.h). */
static void tts_fail_lines(FILE *f, const struct tb_report_src *src, const struct tb_sim_result *r)
{
    const struct tb_tts_chunk *c = src->tts_fail;
    const struct tb_stream_end *e = src->end;
    uint32_t closed = src->tts_log != NULL ? (uint32_t)src->tts_log->n : c->chunk;
    uint32_t sent = src->tts_stats != NULL ? src->tts_stats->sent : c->chunk;
    fprintf(f, "no verdict: the speech ended at chunk %" PRIu32 " (tts %s", c->chunk,
            tb_tts_fail_name(c->fail));
    if (c->status > 0)
        fprintf(f, ", HTTP %ld", c->status);
    fprintf(f, "%s%s)\n", c->message[0] ? ": " : "", c->message);
    fprintf(f,
            "  the TTS: %" PRIu32 " of %" PRIu32 " chunk%s spoken, chunk %" PRIu32
            " failed, %" PRIu32 " never sent\n",
            c->chunk - 1, closed, closed == 1 ? "" : "s", c->chunk,
            closed > sent ? closed - sent : 0);
    if (e != NULL && strcmp(e->error, "tts") == 0)
        fprintf(f, "  the LLM: stopped when the TTS failed, at %.2f s", e->t);
    else if (e != NULL && e->error[0] != '\0')
        fprintf(f, "  the LLM: failed too (%s: %s)", e->error, e->message);
    else
        fprintf(f, "  the LLM: its whole answer arrived");
    fprintf(f, ": %zu events, %" PRIu64 " tokens (the numbers below)\n", r->content_events,
            r->content_tokens);
}

/* What became of the stream: the verdict, or why there is none (a chunk
 * that ended the speech, a failed request, a cut stream) and what the
 * numbers below then cover. */
static void outcome(FILE *f, const struct tb_report_src *src, const struct tb_sim_result *r,
                    const struct measured *m, const char *ekind, const char *emsg)
{
    const struct tb_playout_result *p = &r->play;
    if (src->tts_fail == NULL && !m->failed && !m->cut) {
        if (!m->audio)
            fprintf(f, "no verdict: no content arrived (nothing to play)\n");
        else
            verdict(f, p);
        return;
    }
    if (src->tts_fail != NULL)
        tts_fail_lines(f, src, r);
    else if (m->failed)
        fprintf(f, "no verdict: the request failed (%s: %s)\n", ekind != NULL ? ekind : "?", emsg);
    else if (p->underruns == 0)
        fprintf(f, "incomplete: no gap before it was cut at %.2f s (%s%s%s)\n", cut_at(src, r),
                tb_end_name(src->end->kind), emsg[0] ? ": " : "", emsg);
    else
        fprintf(f, "incomplete: %" PRIu32 " gap%s before it was cut at %.2f s (%s%s%s)\n",
                p->underruns, p->underruns == 1 ? "" : "s", cut_at(src, r),
                tb_end_name(src->end->kind), emsg[0] ? ": " : "", emsg);
    if (src->tts_fail != NULL && !m->audio) {
        fprintf(f, "  played: nothing (no chunk before the failed one)\n");
        return;
    }
    if (src->tts_fail != NULL)
        fprintf(f, "  played: the %" PRIu32 " chunk%s before it; ", p->chunks,
                p->chunks == 1 ? "" : "s");
    else
        fprintf(f,
                "  what arrived (the numbers below): %zu events, %" PRIu64 " tokens, %" PRIu32
                " chunks; ",
                r->content_events, r->content_tokens, p->chunks);
    if (!m->audio)
        fprintf(f, "nothing was played\n");
    else if (p->underruns == 0)
        fprintf(f, "no gaps among them\n");
    else
        fprintf(f, "%" PRIu32 " underrun%s among them, %.2f s of silence\n", p->underruns,
                p->underruns == 1 ? "" : "s", p->gap_total);
}

/* The TTS statistics, "-" where nothing was measured. */
void tb_cli_report_tts_lines(FILE *f, const struct tb_tts_stats *t)
{
    char b1[32], b2[32], b3[32];
    int l = t->first_byte.count > 0, r = t->rtf.count > 0;
    fprintf(f, "  tts first byte   p50 %s s, p95 %s s, max %s s   (%zu chunk%s with audio)\n",
            num(b1, sizeof(b1), l, 3, t->first_byte.p50),
            num(b2, sizeof(b2), l, 3, t->first_byte.p95),
            num(b3, sizeof(b3), l, 3, t->first_byte.max), t->first_byte.count,
            t->first_byte.count == 1 ? "" : "s");
    fprintf(f, "  tts real time    p50 %s, max %s   (seconds of synthesis per second of audio)\n",
            num(b1, sizeof(b1), r, 2, t->rtf.p50), num(b2, sizeof(b2), r, 2, t->rtf.max));
    fprintf(f,
            "  tts sent         %" PRIu32 " of %" PRIu32 " chunk%s (%" PRIu32
            " blank, skipped), %" PRIu64 " characters; %" PRIu32 " failed, %" PRIu32
            " canceled; %s s of audio received\n",
            t->sent, t->chunks, t->chunks == 1 ? "" : "s", t->skipped, t->chars, t->failed,
            t->canceled, num(b1, sizeof(b1), !isnan(t->audio_s), 2, t->audio_s));
}

void tb_cli_report_tts_json(struct cJSON *root, const struct tb_tts_stats *t)
{
    cJSON *o;
    if (t == NULL || (o = cJSON_AddObjectToObject(root, "tts_stats")) == NULL) {
        cJSON_AddNullToObject(root, "tts_stats");
        return;
    }
    cJSON_AddNumberToObject(o, "chunks", t->chunks);
    cJSON_AddNumberToObject(o, "sent", t->sent);
    cJSON_AddNumberToObject(o, "skipped", t->skipped);
    cJSON_AddNumberToObject(o, "failed", t->failed);
    cJSON_AddNumberToObject(o, "canceled", t->canceled);
    cJSON_AddNumberToObject(o, "chars", (double)t->chars);
    tb_cli_json_num(o, "audio_s", t->audio_s);
    tb_cli_json_stats(o, "first_byte_s", &t->first_byte);
    tb_cli_json_stats(o, "rtf", &t->rtf);
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

void tb_cli_report_human(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                         const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                         size_t max_gaps, const struct tb_report_live *live)
{
    const struct tb_playout_result *p = &r->play;
    struct measured m = measured_of(src, r, live);
    const char *ekind, *emsg;
    long estatus;
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    error_of(src, live, &ekind, &emsg, &estatus);
    if (live != NULL) {
        int mock = live->provider != NULL && strcmp(live->provider, "mock") == 0;
        char status[32];
        if (live->http_status > 0)
            snprintf(status, sizeof(status), "HTTP %ld", live->http_status);
        else
            snprintf(status, sizeof(status), "no HTTP response");
        fprintf(f, "ttsbuf run: %smodel %s at %s (%s API), %s\n",
                mock ? "the built-in MOCK provider (not a real model)\n  " : "", live->model,
                live->base_url, live->api, status);
        if (live->warning != NULL && live->warning[0] != '\0')
            fprintf(f, "  note: %s\n", live->warning);
        if (live->usage_ignored >= 0)
            fprintf(f,
                    "  note: the server's usage said %lld tokens for %zu content events: not "
                    "trusted; the events are counted instead\n",
                    live->usage_ignored, r->content_events);
        if (live->surrogates_replaced > 0)
            fprintf(f,
                    "  note: %" PRIu64 " UTF-16 surrogate half%s without a partner replaced "
                    "by U+FFFD\n",
                    live->surrogates_replaced, live->surrogates_replaced == 1 ? "" : "s");
        if (live->server != NULL)
            server_line(f, live->server);
    } else {
        fprintf(f, "ttsbuf sim: %s %s\n", src->kind, src->name);
    }
    if (src->note != NULL)
        fprintf(f, "  note: %s\n", src->note);
    if (live == NULL && src->warning != NULL && src->warning[0] != '\0')
        fprintf(f, "  note: %s\n", src->warning);
    if (m.unknown)
        fprintf(f, "  note: the trace does not say how the stream ended (no end line: recorded "
                   "by an older ttsbuf, or cut short); it is read as a complete answer\n");
    else if (live == NULL && src->end != NULL && src->end->ignored_bytes > 0)
        fprintf(f, "  note: %llu bytes of data after the end marker were ignored\n",
                (unsigned long long)src->end->ignored_bytes);
    fprintf(f, "  chunk=%s", tb_seg_policy_name(o->seg.policy));
    if (src->tts != NULL && src->tts->chunk_from_preset)
        fprintf(f, " (the --tts preset's)");
    if (o->seg.policy == TB_CHUNK_CARTESIA)
        fprintf(f, " max-buffer-delay=%g ms",
                1000.0 * (o->seg.max_delay_s > 0 ? o->seg.max_delay_s : TB_SEG_CARTESIA_DELAY_S));
    if (o->seg.policy == TB_CHUNK_IDLE)
        fprintf(f, " idle-flush=%g s", o->seg.idle_s > 0 ? o->seg.idle_s : TB_SEG_IDLE_S);
    if (o->seg.min_chars > 1)
        fprintf(f, " min-chars=%" PRIu32, o->seg.min_chars);
    fprintf(f, "  wpm=%g", o->play.wpm);
    if (!causes(src)) /* else the tts line says it */
        fprintf(f, "  tts-latency=%g s", o->play.tts_latency);
    fprintf(f, "  preroll=%g s%s  voice-model=%s\n", o->play.preroll,
            o->play.rebuffer ? "  rebuffer" : "", tb_voice_model(o->voice));
    if (causes(src) && src->tts_log == NULL)
        tb_cli_tts_line(f, src->tts);
    if (src->tts_log != NULL)
        tts_measured_line(f, src->tts_log);
    fputc('\n', f);
    outcome(f, src, r, &m, ekind, emsg);
    if (causes(src) && m.audio && p->underruns > 0)
        fprintf(f,
                "  silence by cause: llm %.2f s (text not yet there), tts %.2f s (text there, "
                "audio not yet)\n",
                p->gap_llm, p->gap_tts);
    if (m.audio && o->play.preroll > p->speech)
        fprintf(f,
                "warning: the pre-roll (%g s) is more than the answer's whole speech (%.2f s): "
                "never reached,\n  playback waited for the end of the stream (first audio at "
                "%.2f s); the minimum TPS and the\n  speed-up say nothing at this pre-roll (the "
                "table below has smaller ones)\n",
                o->play.preroll, p->speech, p->ttfa);
    fputc('\n', f);
    fprintf(f, "  time to first token  %8s s\n", num(b1, sizeof(b1), m.ttft, 3, r->ttft));
    if (m.audio)
        fprintf(f, "  time to first audio  %8s s   (after chunk %" PRIu32 " of %" PRIu32 ")\n",
                num(b1, sizeof(b1), m.audio, 3, p->ttfa), p->q, p->chunks);
    else
        fprintf(f, "  time to first audio         - s   (no chunk was played)\n");
    fprintf(f, "  decode rate          %8s tokens/s   (%zu events, %" PRIu64 " tokens",
            num(b1, sizeof(b1), m.tps, 1, r->decode_tps), r->content_events, r->content_tokens);
    if (r->usage_tokens >= 0)
        fprintf(f, "; usage says %lld", r->usage_tokens);
    if (r->decode_tps_usage > 0 && r->usage_tokens != (long long)r->content_tokens)
        fprintf(f, ": %.1f tokens/s by usage", r->decode_tps_usage);
    if (r->reasoning_events > 0)
        fprintf(f, "; +%zu reasoning events, not spoken", r->reasoning_events);
    fprintf(f, ")\n");
    fprintf(f, "  speech               %8.2f s   (playback ends at %s s)\n", p->speech,
            num(b1, sizeof(b1), m.audio, 2, p->end));
    {
        int unreached = m.audio && o->play.preroll > p->speech;
        int none = m.whatif && p->min_tps_none;
        fprintf(f, "  minimum TPS          %8s %s   %s%s\n",
                num(b1, sizeof(b1), m.whatif, 1, p->min_tps), none ? "        " : "tokens/s",
                src->min_tps_reason != NULL ? src->min_tps_reason
                : none                      ? TB_MIN_TPS_NONE_REASON ": no LLM rate removes them"
                : unreached ? "(pre-roll never reached: any rate plays without a gap)"
                            : "to play with no gap at this pre-roll",
                m.whatif && !none && p->min_tps_method == TB_MIN_TPS_SCAN
                    ? " (found by a scan: not proven)"
                    : "");
        fprintf(f, "  speed-up needed      %8s%s   %s\n",
                num(b1, sizeof(b1), m.whatif, 2, p->speedup), m.whatif && !none ? "x" : " ",
                src->min_tps_reason != NULL ? "(see the minimum TPS)"
                : !m.whatif                 ? "(no complete answer)"
                : none                      ? "(no speed-up removes the TTS stage's gaps)"
                : unreached                 ? "(the pre-roll is never reached)"
                : p->speedup <= 1.0         ? "(below 1: headroom)"
                                            : "(this stream, sped up, would be gapless)");
    }
    if (src->tts_stats != NULL)
        tb_cli_report_tts_lines(f, src->tts_stats);
    if (src->turn != NULL)
        tb_cli_turn_lines(f, src->turn, o, &r->lat);

    if (gaps->n > 0) {
        fprintf(f, "\n  gaps (audio ran dry):\n");
        for (size_t i = 0; i < gaps->n && i < max_gaps; i++) {
            const struct tb_play *g = &gaps->v[i];
            fprintf(f, "    at %8.3f s   %6.3f s of silence%s   before chunk %" PRIu32,
                    g->start - g->gap, g->gap, g->gap >= 0.150 ? " (interruption)" : "", g->chunk);
            if (causes(src))
                fprintf(f, "   %s (llm %.3f s, tts %.3f s)", cause_name(g->gap_llm, g->gap_tts),
                        g->gap_llm, g->gap_tts);
            fputc('\n', f);
        }
        if (gaps->n > max_gaps)
            fprintf(f, "    ... %zu more (--gaps N lists more)\n", gaps->n - max_gaps);
    }

    fprintf(f, "\n  pre-roll   min TPS   underruns   silence   longest   first audio\n");
    for (int i = 0; i < TB_CURVE_POINTS; i++) {
        const struct tb_curve_point *c = &r->curve[i];
        snprintf(b3, sizeof(b3), "%" PRIu32, c->underruns);
        fprintf(f, "  %6.2f s  %8s  %10s  %6s s  %6s s  %9s s\n", c->preroll,
                num(b1, sizeof(b1), m.whatif, 1, c->min_tps), m.audio ? b3 : "-",
                num(b4, sizeof(b4), m.audio, 2, c->gap_total),
                num(b5, sizeof(b5), m.audio, 2, c->gap_max),
                num(b2, sizeof(b2), m.audio, 3, c->ttfa));
    }
    fprintf(f,
            "\n  ring: high water %zu tokens, %zu bytes, %.2f s of speech waiting\n"
            "        (capacity %zu tokens, %zu bytes)\n",
            r->hw_items, r->hw_bytes, r->hw_speech_s, r->ring_slots, r->ring_bytes);
    if (r->backpressure_waits > 0)
        fprintf(f, "  ring full: %" PRIu64 " events delayed, %.3f s in all\n",
                r->backpressure_waits, r->backpressure_s);
    if (r->forced_cuts > 0 || r->forced_start)
        fprintf(f,
                "  warning: the ring was too small: %" PRIu32 " forced cut%s%s; "
                "results depend on --ring-slots/--ring-bytes\n",
                r->forced_cuts, r->forced_cuts == 1 ? "" : "s",
                r->forced_start ? ", playback forced to start" : "");
    if (src->tts != NULL)
        tb_cli_draws_human(f, &src->tts->draws, src->tts->seed);
}

int tb_cli_report_json(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                       const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                       const struct tb_report_live *live, const struct tb_cli_audio *audio,
                       const struct tb_cli_chunks *chunks)
{
    const struct tb_playout_result *p = &r->play;
    struct measured m = measured_of(src, r, live);
    cJSON *root =
        tb_cli_json_doc(TB_SCHEMA_RESULT, TB_SCHEMA_RESULT_V, live != NULL ? "run" : "sim");
    const char *warning = live != NULL ? live->warning : src->warning;
    const char *ekind, *emsg;
    long estatus;
    cJSON *opts, *curve, *gl, *ring, *end;
    if (root == NULL)
        return TB_ENOMEM;
    error_of(src, live, &ekind, &emsg, &estatus);
    cJSON_AddStringToObject(root, "source", src->kind);
    cJSON_AddStringToObject(root, "source_name", src->name);
    if (src->note != NULL)
        cJSON_AddStringToObject(root, "note", src->note);
    if (live != NULL) {
        cJSON_AddStringToObject(root, "provider",
                                live->provider != NULL ? live->provider : "remote");
        cJSON_AddStringToObject(root, "model", live->model);
        cJSON_AddStringToObject(root, "base_url", live->base_url);
        cJSON_AddStringToObject(root, "api", live->api);
        cJSON_AddNumberToObject(root, "http_status", (double)live->http_status);
        cJSON_AddNumberToObject(root, "sse_events", (double)live->sse_events);
        cJSON_AddNumberToObject(root, "tool_calls", (double)live->tool_calls);
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
        tb_cli_json_playout(opts, o);
        tb_cli_json_tts(opts, src->tts);
    }
    json_num(root, "ttft_s", m.ttft, r->ttft);
    json_num(root, "ttfa_s", m.audio, p->ttfa);
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
    json_num(root, "decode_tps", m.tps, r->decode_tps);
    if (r->decode_tps_usage > 0)
        cJSON_AddNumberToObject(root, "decode_tps_usage", r->decode_tps_usage);
    else
        cJSON_AddNullToObject(root, "decode_tps_usage");
    cJSON_AddNumberToObject(root, "speech_s", p->speech);
    json_num(root, "end_s", m.audio, p->end);
    json_num(root, "underruns", m.audio, p->underruns);
    json_num(root, "interruptions", m.audio, p->interruptions);
    json_num(root, "gap_total_s", m.audio, p->gap_total);
    json_num(root, "gap_max_s", m.audio, p->gap_max);
    json_num(root, "min_tps", m.whatif, p->min_tps);
    json_num(root, "speedup_needed", m.whatif, p->speedup);
    if (causes(src)) {
        json_num(root, "gap_llm_s", m.audio, p->gap_llm);
        json_num(root, "gap_tts_s", m.audio, p->gap_tts);
    }
    /* A time-based chunk policy's minimum TPS is searched too. */
    if (causes(src) || tb_seg_policy_timed(o->seg.policy)) {
        if (src->min_tps_reason != NULL)
            cJSON_AddStringToObject(root, "min_tps_reason", src->min_tps_reason);
        else if (m.whatif && p->min_tps_none)
            cJSON_AddStringToObject(root, "min_tps_reason", TB_MIN_TPS_NONE_REASON);
        else
            cJSON_AddNullToObject(root, "min_tps_reason");
        if (m.whatif && !p->min_tps_none) {
            cJSON_AddStringToObject(root, "min_tps_method", method_name(p->min_tps_method));
            cJSON_AddBoolToObject(root, "min_tps_proven", p->min_tps_method != TB_MIN_TPS_SCAN);
        } else {
            cJSON_AddNullToObject(root, "min_tps_method");
            cJSON_AddNullToObject(root, "min_tps_proven");
        }
    }
    gl = cJSON_AddArrayToObject(root, "gaps");
    for (size_t i = 0; gl != NULL && i < gaps->n; i++) {
        cJSON *g = cJSON_CreateObject();
        if (g == NULL)
            break;
        cJSON_AddNumberToObject(g, "at_s", gaps->v[i].start - gaps->v[i].gap);
        cJSON_AddNumberToObject(g, "gap_s", gaps->v[i].gap);
        cJSON_AddNumberToObject(g, "chunk", gaps->v[i].chunk);
        if (causes(src)) {
            cJSON_AddStringToObject(g, "cause", cause_name(gaps->v[i].gap_llm, gaps->v[i].gap_tts));
            cJSON_AddNumberToObject(g, "llm_s", gaps->v[i].gap_llm);
            cJSON_AddNumberToObject(g, "tts_s", gaps->v[i].gap_tts);
        }
        cJSON_AddItemToArray(gl, g);
    }
    curve = cJSON_AddArrayToObject(root, "preroll_curve");
    for (int i = 0; curve != NULL && i < TB_CURVE_POINTS; i++) {
        cJSON *c = cJSON_CreateObject();
        if (c == NULL)
            break;
        cJSON_AddNumberToObject(c, "preroll_s", r->curve[i].preroll);
        json_num(c, "min_tps", m.whatif, r->curve[i].min_tps);
        json_num(c, "underruns", m.audio, r->curve[i].underruns);
        json_num(c, "gap_total_s", m.audio, r->curve[i].gap_total);
        json_num(c, "gap_max_s", m.audio, r->curve[i].gap_max);
        json_num(c, "ttfa_s", m.audio, r->curve[i].ttfa);
        cJSON_AddItemToArray(curve, c);
    }
    ring = cJSON_AddObjectToObject(root, "ring");
    if (ring != NULL) {
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
    tts_stats_json(root, src);
    if (src->turn != NULL && tb_cli_turn_json(root, src->turn, o, &r->lat) != 0) {
        cJSON_Delete(root);
        return TB_ENOMEM;
    }
    if (src->tts != NULL)
        tb_cli_json_draws(root, &src->tts->draws, src->tts->seed);
    if (audio != NULL)
        tb_cli_audio_json(root, audio, o);
    if (chunks != NULL && tb_cli_chunks_json(root, chunks) != 0) {
        cJSON_Delete(root);
        return TB_ENOMEM;
    }
    return tb_json_put_line(f, root);
}

int tb_cli_underrun_verdict(int fail_on_underrun, const struct tb_sim_result *r,
                            const struct tb_stream_end *end)
{
    int cls = end != NULL ? tb_end_class(end->kind) : TB_END_CLASS_COMPLETE;
    if (!fail_on_underrun)
        return TB_EXIT_OK;
    if (cls == TB_END_CLASS_INCOMPLETE || cls == TB_END_CLASS_FAILED) {
        tb_cli_error("--fail-on-underrun: no verdict: the stream %s (%s%s%s)",
                     cls == TB_END_CLASS_FAILED ? "failed" : "was cut off", tb_end_name(end->kind),
                     end->message[0] ? ": " : "", end->message);
        return TB_EXIT_GATE;
    }
    if (r->play.underruns == 0)
        return TB_EXIT_OK;
    (void)tb_cli_flush_stdout(); /* after the report, on one terminal or log */
    tb_cli_error("--fail-on-underrun: %u underruns, %.2f s of silence", r->play.underruns,
                 r->play.gap_total);
    return TB_EXIT_GATE;
}

void tb_cli_report_status(char *buf, size_t len, const struct tb_live_status *st)
{
    /* Playing with nothing queued: the listener hears silence right now.
     * The playout counts that gap once the next chunk arrives; the line
     * counts it already, with its length so far. */
    int silent = st->playing && st->silent_s > 0;
    const char *state = !st->playing ? "waiting" : silent ? "SILENT " : "playing";
    uint32_t under = st->underruns + (silent ? 1u : 0u);
    snprintf(buf, len, "%6.2f s  %5zu token%s  buffer %6.2f s  %s  %u underrun%s (%.2f s)", st->t,
             st->events, st->events == 1 ? " " : "s", st->buffered_s, state, under,
             under == 1 ? "" : "s", st->gap_total + (silent ? st->silent_s : 0.0));
}
