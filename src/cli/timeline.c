/*
 * timeline.c - one run's timeline picture (see timeline.h), titled and
 * captioned as the report reads: --svg, and the figure of the --html
 * page.
 */
#include "timeline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "outputs.h"
#include "tts_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/svg.h"
#include "ttsbuf/voice.h"

/* A measured TTS as the subtitle says it: the provider, its model and
 * voice, and the first-byte latencies it had (never the model's
 * --tts-latency, which did not apply). */
static void measured_lat(char *out, size_t len, const struct tb_report_src *src)
{
    const struct tb_tts_log *l = src->tts_log;
    const struct tb_stats *fb = src->tts_stats != NULL ? &src->tts_stats->first_byte : NULL;
    int n = snprintf(out, len, "TTS %s%s%.100s%s%.100s", l->api, l->model[0] ? " " : "", l->model,
                     l->voice[0] ? ", voice " : "", l->voice);
    if (n < 0 || (size_t)n >= len)
        return;
    if (fb != NULL && fb->count > 0)
        snprintf(out + n, len - (size_t)n, " (measured: first byte p50 %.3f s, max %.3f s)",
                 fb->p50, fb->max);
    else
        snprintf(out + n, len - (size_t)n, " (measured: no first byte)");
}

int tb_cli_timeline_svg(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                        const struct tb_stream *s, const struct tb_gap_list *all,
                        const struct tb_sim_result *r, const struct tb_report_live *live)
{
    struct tb_svg_timeline t;
    char title[600], sub[1024], tps[64], lat[512];
    int cls = src->end != NULL ? tb_end_class(src->end->kind) : TB_END_CLASS_COMPLETE;
    int failed = cls == TB_END_CLASS_FAILED || (live != NULL && live->error_kind != NULL);
    int cut = cls == TB_END_CLASS_INCOMPLETE;
    /* the what-if is the report's: absent where it says "-" */
    if (tb_cli_report_whatif_measured(src, r, live) && r->play.min_tps_none)
        snprintf(tps, sizeof(tps), "minimum TPS none: the TTS stage alone leaves gaps");
    else if (tb_cli_report_whatif_measured(src, r, live))
        snprintf(tps, sizeof(tps), "minimum TPS %.1f%s", r->play.min_tps,
                 r->play.min_tps_method == TB_MIN_TPS_SCAN ? " (a scan: not proven)" : "");
    else
        snprintf(tps, sizeof(tps), "minimum TPS not measured");
    if (failed || cut)
        /* A cut-off or failed stream: what arrived, no verdict, no what-if. */
        snprintf(title, sizeof(title), "%s: %u gap%s before it %s; first audio at %.2f s; %s",
                 failed ? "Failed" : "Incomplete", r->play.underruns,
                 r->play.underruns == 1 ? "" : "s", failed ? "failed" : "was cut off", r->play.ttfa,
                 tps);
    else if (r->play.underruns == 0)
        snprintf(title, sizeof(title), "No gaps: first audio at %.2f s; %s", r->play.ttfa, tps);
    else
        snprintf(title, sizeof(title), "%u gap%s, %.2f s of silence; first audio at %.2f s; %s",
                 r->play.underruns, r->play.underruns == 1 ? "" : "s", r->play.gap_total,
                 r->play.ttfa, tps);
    if (src->tts_log != NULL) /* a real TTS spoke: which, and what it measured */
        measured_lat(lat, sizeof(lat), src);
    else if (src->tts != NULL && src->tts->any) /* the stage as the report's tts line says it */
        snprintf(lat, sizeof(lat),
                 "TTS latency %.200s%s, connect %g s, concurrency %d%s, RTF %g%s%.40s",
                 src->tts->spec, src->tts->seeded ? " (seeded)" : "", src->tts->connect,
                 src->tts->concurrency, src->tts->concurrency == 0 ? " (unlimited)" : "",
                 src->tts->rtf, src->tts->preset != NULL ? ", preset " : "",
                 src->tts->preset != NULL ? src->tts->preset : "");
    else
        snprintf(lat, sizeof(lat), "TTS latency %g s", o->play.tts_latency);
    snprintf(sub, sizeof(sub),
             "%s %.80s%s | chunk %s, %g wpm, %.400s, pre-roll %g s%s, voice model %s", src->kind,
             src->name, strlen(src->name) > 80 ? "..." : "", tb_seg_policy_name(o->seg.policy),
             o->play.wpm, lat, o->play.preroll, o->play.rebuffer ? ", rebuffer" : "",
             tb_voice_model(o->voice));
    if (isfinite(r->lat.v2v) && (r->lat.eou > 0 || r->lat.lead > 0)) {
        /* the caller's wait, when it is more than the first audio */
        size_t n = strlen(title);
        snprintf(title + n, sizeof(title) - n, "; %.2f s from the caller's last word to sound",
                 r->lat.v2v);
    }
    t.title = title;
    t.subtitle = sub;
    t.s = s;
    t.play = all->v;
    t.nplay = all->n;
    t.ttft = r->ttft;
    t.ttfa = r->play.ttfa;
    t.audible = r->lat.chunk > 0 && isfinite(r->lat.lead) ? r->lat.v2v - r->lat.eou : NAN;
    t.eou = r->lat.eou;
    t.causes = (src->tts != NULL && src->tts->any) || src->tts_log != NULL;
    if (all->n != r->play.chunks)
        return TB_ENOMEM;
    return tb_svg_timeline(f, &t);
}

int tb_cli_timeline_write(const char *path, const struct tb_report_src *src,
                          const struct tb_sim_opts *o, const struct tb_stream *s,
                          const struct tb_gap_list *all, const struct tb_sim_result *r,
                          const struct tb_report_live *live)
{
    FILE *f;
    int rc;
    if (all->n != r->play.chunks) {
        tb_cli_error("--svg: out of memory keeping the schedule");
        return TB_ENOMEM;
    }
    f = tb_cli_output_open("--svg", path, &rc);
    if (f == NULL)
        return rc;
    rc = tb_cli_timeline_svg(f, src, o, s, all, r, live);
    return tb_cli_out_close("--svg", path, f, rc);
}
