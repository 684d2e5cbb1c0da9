/*
 * report_human.c - the human report of `sim` and `run` (report_human.h):
 * a table of blocks, each a function that prints one part of it (the
 * head, the settings, the outcome, the figures, the turn's wait, the
 * gaps, the pre-roll curve, the ring).
 */
#include "report_human.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report_priv.h"
#include "sim_tool.h"
#include "tts_draws.h"
#include "tts_opts.h"
#include "turn_opts.h"
#include "ttsbuf/seg.h"

/* What every block reads. */
struct human {
    const struct tb_report_src *src;
    const struct tb_sim_opts *o;
    const struct tb_sim_result *r;
    const struct tb_gap_list *gaps;
    size_t max_gaps;
    const struct tb_report_live *live;
    struct tb_cli_measured m;
    const char *ekind, *emsg;
};

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
    if (c->fail == TB_TTS_CANCELED && e != NULL && e->kind == TB_END_INTERRUPTED)
        fprintf(f, "interrupted: the speech stopped at chunk %" PRIu32 " (the stream was interrupted; "
                   "tts %s", c->chunk, tb_tts_fail_name(c->fail));
    else
        fprintf(f, "no verdict: the speech ended at chunk %" PRIu32 " (tts %s", c->chunk,
                tb_tts_fail_name(c->fail));
    if (c->status > 0)
        fprintf(f, ", HTTP %ld", c->status);
    fprintf(f, "%s%s)\n", c->message[0] ? ": " : "", c->message);
    fprintf(f,
            "  the TTS: %" PRIu32 " of %" PRIu32 " chunk%s spoken, chunk %" PRIu32 " %s, %" PRIu32
            " never sent\n",
            c->chunk - 1, closed, closed == 1 ? "" : "s", c->chunk,
            c->fail == TB_TTS_CANCELED ? "stopped" : "failed", closed > sent ? closed - sent : 0);
    if (e != NULL && strcmp(e->error, "tts") == 0)
        fprintf(f, "  the LLM: stopped when the TTS failed, at %.2f s", e->t);
    else if (e != NULL && e->error[0] != '\0')
        fprintf(f, "  the LLM: failed too (%s: %s)", e->error, e->message);
    else
        fprintf(f, "  the LLM: its whole answer arrived");
    fprintf(f, ": %zu events, %" PRIu64 " tokens (the numbers below)\n", r->content_events,
            r->content_tokens);
}

/* When a cut stream ended: its end's time, else its last event's. */
static double cut_at(const struct tb_report_src *src, const struct tb_sim_result *r)
{
    if (src->end != NULL && isfinite(src->end->t))
        return src->end->t;
    return r->last_content_t;
}

/* What became of the stream: the verdict, or why there is none (a chunk
 * that ended the speech, a failed request, a cut stream) and what the
 * numbers below then cover. */
static void outcome(FILE *f, const struct human *h)
{
    const struct tb_report_src *src = h->src;
    const struct tb_sim_result *r = h->r;
    const struct tb_cli_measured *m = &h->m;
    const struct tb_playout_result *p = &r->play;
    const char *emsg = h->emsg;
    if (src->tts_fail == NULL && !m->failed && !m->cut) {
        if (!m->audio && src->tool_calls > 0)
            fprintf(f, "no verdict: the answer was %zu tool call%s, nothing to speak\n",
                    src->tool_calls, src->tool_calls == 1 ? "" : "s");
        else if (!m->audio)
            fprintf(f, "no verdict: no content arrived (nothing to play)\n");
        else
            verdict(f, p);
        return;
    }
    if (src->tts_fail != NULL)
        tts_fail_lines(f, src, r);
    else if (m->failed)
        fprintf(f, "no verdict: the request failed (%s: %s)\n", h->ekind != NULL ? h->ekind : "?",
                emsg);
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
    if (src->tts_fail != NULL && p->chunks >= src->tts_fail->chunk)
        fprintf(f,
                "  played: %" PRIu32 " chunk%s, the last the audio that came before it was "
                "stopped; ",
                p->chunks, p->chunks == 1 ? "" : "s");
    else if (src->tts_fail != NULL)
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

/* The head: which run (a live one's model, endpoint, status and notes),
 * or which stream `sim` played. */
static void head(FILE *f, const struct human *h)
{
    const struct tb_report_live *live = h->live;
    if (live == NULL) {
        fprintf(f, "ttsbuf sim: %s %s\n", h->src->kind, h->src->name);
        return;
    }
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
                live->usage_ignored, h->r->content_events);
    if (live->tool_calls > 0 && isfinite(live->tool_first_end))
        fprintf(f, "  tool calls: %llu (never spoken), the first from %.3f s to %.3f s\n",
                (unsigned long long)live->tool_calls, live->tool_first_start, live->tool_first_end);
    else if (live->tool_calls > 0)
        fprintf(f, "  tool calls: %llu (never spoken), the first from %.3f s, never ended\n",
                (unsigned long long)live->tool_calls, live->tool_first_start);
    if (live->surrogates_replaced > 0)
        fprintf(f,
                "  note: %" PRIu64 " UTF-16 surrogate half%s without a partner replaced "
                "by U+FFFD\n",
                live->surrogates_replaced, live->surrogates_replaced == 1 ? "" : "s");
    if (live->server != NULL)
        server_line(f, live->server);
}

/* How the source was read, and what of its end is worth a note. */
static void notes(FILE *f, const struct human *h)
{
    const struct tb_report_src *src = h->src;
    if (src->note != NULL)
        fprintf(f, "  note: %s\n", src->note);
    if (h->live == NULL && src->warning != NULL && src->warning[0] != '\0')
        fprintf(f, "  note: %s\n", src->warning);
    if (h->m.unknown)
        fprintf(f, "  note: the trace does not say how the stream ended (no end line: recorded "
                   "by an older ttsbuf, or cut short); it is read as a complete answer\n");
    else if (h->live == NULL && src->end != NULL && src->end->ignored_bytes > 0)
        fprintf(f, "  note: %llu bytes of data after the end marker were ignored\n",
                (unsigned long long)src->end->ignored_bytes);
}

/* The settings played with: the chunk policy, the playout, the TTS. */
static void settings(FILE *f, const struct human *h)
{
    const struct tb_report_src *src = h->src;
    const struct tb_sim_opts *o = h->o;
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
    if (!tb_cli_report_causes(src)) /* else the tts line says it */
        fprintf(f, "  tts-latency=%g s", o->play.tts_latency);
    fprintf(f, "  preroll=%g s%s  voice-model=%s\n", o->play.preroll,
            o->play.rebuffer ? "  rebuffer" : "", tb_voice_model(o->voice));
    if (tb_cli_report_causes(src) && src->tts_log == NULL)
        tb_cli_tts_line(f, src->tts);
    if (src->tts_log != NULL)
        tts_measured_line(f, src->tts_log);
}

/* The outcome, the silence by cause, and a pre-roll never reached. */
static void outcome_block(FILE *f, const struct human *h)
{
    const struct tb_playout_result *p = &h->r->play;
    fputc('\n', f);
    outcome(f, h);
    if (tb_cli_report_causes(h->src) && h->m.audio && p->underruns > 0)
        fprintf(f,
                "  silence by cause: llm %.2f s (text not yet there), tts %.2f s (text there, "
                "audio not yet)\n",
                p->gap_llm, p->gap_tts);
    if (h->m.audio && h->o->play.preroll > p->speech)
        fprintf(f,
                "warning: the pre-roll (%g s) is more than the answer's whole speech (%.2f s): "
                "never reached,\n  playback waited for the end of the stream (first audio at "
                "%.2f s); the minimum TPS and the\n  speed-up say nothing at this pre-roll (the "
                "table below has smaller ones)\n",
                h->o->play.preroll, p->speech, p->ttfa);
    fputc('\n', f);
}

/* What was measured: first token, first audio, decode rate, speech. */
static void figures(FILE *f, const struct human *h)
{
    const struct tb_sim_result *r = h->r;
    const struct tb_playout_result *p = &r->play;
    char b1[32];
    fprintf(f, "  time to first token  %8s s\n",
            tb_cli_report_num(b1, sizeof(b1), h->m.ttft, 3, r->ttft));
    if (h->m.audio) {
        /* The first chunk with audio, numbered as the wait's block numbers
         * it (turnlat.h's j*, blank chunks counted); playback may have
         * waited for later chunks to close (pre-roll, a TTS stage). */
        uint32_t j = r->lat.chunk > 0 ? r->lat.chunk : p->q;
        fprintf(f, "  time to first audio  %8s s   (chunk %" PRIu32 " of %" PRIu32,
                tb_cli_report_num(b1, sizeof(b1), h->m.audio, 3, p->ttfa), j, p->chunks);
        if (p->q > j)
            fprintf(f, ", played when %" PRIu32 " had closed", p->q);
        fputs(")\n", f);
    } else
        fprintf(f, "  time to first audio         - s   (no chunk was played)\n");
    fprintf(f, "  decode rate          %8s tokens/s   (%zu events, %" PRIu64 " tokens",
            tb_cli_report_num(b1, sizeof(b1), h->m.tps, 1, r->decode_tps), r->content_events,
            r->content_tokens);
    if (r->usage_tokens >= 0)
        fprintf(f, "; usage says %lld", r->usage_tokens);
    if (r->decode_tps_usage > 0 && r->usage_tokens != (long long)r->content_tokens)
        fprintf(f, ": %.1f tokens/s by usage", r->decode_tps_usage);
    if (r->reasoning_events > 0)
        fprintf(f, "; +%zu reasoning events, not spoken", r->reasoning_events);
    fprintf(f, ")\n");
    fprintf(f, "  speech               %8.2f s   (playback ends at %s s)\n", p->speech,
            tb_cli_report_num(b1, sizeof(b1), h->m.audio, 2, p->end));
}

/* The what-if: the minimum TPS and the speed-up, then a measured TTS's
 * statistics. */
static void whatif(FILE *f, const struct human *h)
{
    const struct tb_report_src *src = h->src;
    const struct tb_playout_result *p = &h->r->play;
    const struct tb_cli_measured *m = &h->m;
    int unreached = m->audio && h->o->play.preroll > p->speech;
    int none = m->whatif && p->min_tps_none;
    char b1[32];
    fprintf(f, "  minimum TPS          %8s %s   %s%s\n",
            tb_cli_report_num(b1, sizeof(b1), m->whatif, 1, p->min_tps),
            none ? "        " : "tokens/s",
            src->min_tps_reason != NULL ? src->min_tps_reason
            : none                      ? TB_MIN_TPS_NONE_REASON ": no LLM rate removes them"
            : unreached                 ? "(pre-roll never reached: any rate plays without a gap)"
                                        : "to play with no gap at this pre-roll",
            m->whatif && !none && p->min_tps_method == TB_MIN_TPS_SCAN
                ? " (found by a scan: not proven)"
                : "");
    fprintf(f, "  speed-up needed      %8s%s   %s\n",
            tb_cli_report_num(b1, sizeof(b1), m->whatif, 2, p->speedup),
            m->whatif && !none ? "x" : " ",
            src->min_tps_reason != NULL ? "(see the minimum TPS)"
            : !m->whatif                ? "(no complete answer)"
            : none                      ? "(no speed-up removes the TTS stage's gaps)"
            : unreached                 ? "(the pre-roll is never reached)"
            : p->speedup <= 1.0         ? "(below 1: headroom)"
                                        : "(this stream, sped up, would be gapless)");
    if (src->tts_stats != NULL)
        tb_cli_report_tts_lines(f, src->tts_stats);
}

/* Where the turn's wait went (--eou, --tts-lead), when asked. */
static void turn(FILE *f, const struct human *h)
{
    if (h->src->turn != NULL)
        tb_cli_turn_lines(f, h->src->turn, h->o, &h->r->lat);
}

/* The gaps, the first max_gaps of them, each with its cause. */
static void gap_list(FILE *f, const struct human *h)
{
    const struct tb_gap_list *gaps = h->gaps;
    if (gaps->n == 0)
        return;
    fprintf(f, "\n  gaps (audio ran dry):\n");
    for (size_t i = 0; i < gaps->n && i < h->max_gaps; i++) {
        const struct tb_play *g = &gaps->v[i];
        fprintf(f, "    at %8.3f s   %6.3f s of silence%s   before chunk %" PRIu32,
                g->start - g->gap, g->gap, g->gap >= 0.150 ? " (interruption)" : "", g->chunk);
        if (tb_cli_report_causes(h->src))
            fprintf(f, "   %s (llm %.3f s, tts %.3f s)", tb_cli_gap_cause(g), g->gap_llm,
                    g->gap_tts);
        fputc('\n', f);
    }
    if (gaps->n > h->max_gaps)
        fprintf(f, "    ... %zu more (--gaps N lists more)\n", gaps->n - h->max_gaps);
}

/* The pre-roll curve: the same stream at other pre-rolls. */
static void curve(FILE *f, const struct human *h)
{
    int audio = h->m.audio;
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    fprintf(f, "\n  pre-roll   min TPS   underruns   silence   longest   first audio\n");
    for (int i = 0; i < TB_CURVE_POINTS; i++) {
        const struct tb_curve_point *c = &h->r->curve[i];
        snprintf(b3, sizeof(b3), "%" PRIu32, c->underruns);
        fprintf(f, "  %6.2f s  %8s  %10s  %6s s  %6s s  %9s s\n", c->preroll,
                tb_cli_report_num(b1, sizeof(b1), h->m.whatif, 1, c->min_tps), audio ? b3 : "-",
                tb_cli_report_num(b4, sizeof(b4), audio, 2, c->gap_total),
                tb_cli_report_num(b5, sizeof(b5), audio, 2, c->gap_max),
                tb_cli_report_num(b2, sizeof(b2), audio, 3, c->ttfa));
    }
}

/* The ring: its high water and whether it was too small; then the
 * --tts-draws report. */
static void ring(FILE *f, const struct human *h)
{
    const struct tb_sim_result *r = h->r;
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
    if (h->src->tts != NULL)
        tb_cli_draws_human(f, &h->src->tts->draws, h->src->tts->seed);
}

/* sim of a tool turn's answer: the turn (sim_tool.h). */
static void tool_turn(FILE *f, const struct human *h)
{
    if (h->src->tool_turn != NULL)
        tb_cli_sim_tool_human(f, h->src->tool_turn);
}

/* The report's blocks, in order. */
static void (*const blocks[])(FILE *, const struct human *) = {
    head, notes, settings, outcome_block, figures, whatif, turn, tool_turn, gap_list, curve, ring,
};

void tb_cli_report_human(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                         const struct tb_sim_result *r, const struct tb_gap_list *gaps,
                         size_t max_gaps, const struct tb_report_live *live)
{
    struct human h = {.src = src,
                      .o = o,
                      .r = r,
                      .gaps = gaps,
                      .max_gaps = max_gaps,
                      .live = live,
                      .m = tb_cli_report_measured(src, r, live)};
    long estatus;
    tb_cli_report_error(src, live, &h.ekind, &h.emsg, &estatus);
    for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
        blocks[i](f, &h);
}
