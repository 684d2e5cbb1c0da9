/*
 * report.c - what `sim` and `run` print (see report.h): what the human
 * report (report_human.c) and the --json object (report_json.c) share,
 * the TTS statistics' lines and object, the --fail-on-underrun verdict,
 * and run's status line.
 * cJSON is used only to build the JSON output here; nothing of it leaves
 * this file.
 */
#include "report.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "outputs.h"
#include "report_priv.h"
#include "tts_opts.h"
#include "ttsbuf/live.h"

struct tb_cli_measured tb_cli_report_measured(const struct tb_report_src *src,
                                              const struct tb_sim_result *r,
                                              const struct tb_report_live *live)
{
    struct tb_cli_measured m;
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

void tb_cli_report_error(const struct tb_report_src *src, const struct tb_report_live *live,
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

int tb_cli_report_whatif_measured(const struct tb_report_src *src, const struct tb_sim_result *r,
                                  const struct tb_report_live *live)
{
    return tb_cli_report_measured(src, r, live).whatif;
}

const char *tb_cli_report_num(char *buf, size_t len, int have, int prec, double v)
{
    if (!have)
        return "-";
    if (isnan(v))
        return "none";
    snprintf(buf, len, "%.*f", prec, v);
    return buf;
}

int tb_cli_report_causes(const struct tb_report_src *src)
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

/* The TTS statistics, "-" where nothing was measured. */
void tb_cli_report_tts_lines(FILE *f, const struct tb_tts_stats *t)
{
    char b1[32], b2[32], b3[32];
    int l = t->first_byte.count > 0, r = t->rtf.count > 0;
    fprintf(f, "  tts first byte   p50 %s s, p95 %s s, max %s s   (%zu chunk%s with audio)\n",
            tb_cli_report_num(b1, sizeof(b1), l, 3, t->first_byte.p50),
            tb_cli_report_num(b2, sizeof(b2), l, 3, t->first_byte.p95),
            tb_cli_report_num(b3, sizeof(b3), l, 3, t->first_byte.max), t->first_byte.count,
            t->first_byte.count == 1 ? "" : "s");
    fprintf(f, "  tts real time    p50 %s, max %s   (seconds of synthesis per second of audio)\n",
            tb_cli_report_num(b1, sizeof(b1), r, 2, t->rtf.p50),
            tb_cli_report_num(b2, sizeof(b2), r, 2, t->rtf.max));
    if (t->capacity) /* a shared capacity (bench --tts-capacity) */
        fprintf(f, "  tts capacity     wait p50 %s s, p95 %s s, max %s s   (%zu chunk%s queued)\n",
                tb_cli_report_num(b1, sizeof(b1), t->cap_wait.count > 0, 3, t->cap_wait.p50),
                tb_cli_report_num(b2, sizeof(b2), t->cap_wait.count > 0, 3, t->cap_wait.p95),
                tb_cli_report_num(b3, sizeof(b3), t->cap_wait.count > 0, 3, t->cap_wait.max),
                t->cap_wait.count, t->cap_wait.count == 1 ? "" : "s");
    /* the blank chunks (nothing to speak) only when there were some */
    snprintf(b2, sizeof(b2), " (%" PRIu32 " blank, skipped)", t->skipped);
    fprintf(f,
            "  tts sent         %" PRIu32 " of %" PRIu32 " chunk%s%s, %" PRIu64
            " characters; %" PRIu32 " failed, %" PRIu32 " canceled; %s s of audio received\n",
            t->sent, t->chunks, t->chunks == 1 ? "" : "s", t->skipped > 0 ? b2 : "", t->chars,
            t->failed, t->canceled,
            tb_cli_report_num(b1, sizeof(b1), !isnan(t->audio_s), 2, t->audio_s));
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
    if (t->capacity) /* only with a shared capacity: outputs as before without */
        tb_cli_json_stats(o, "capacity_wait_s", &t->cap_wait);
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
