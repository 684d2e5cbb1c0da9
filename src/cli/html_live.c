/*
 * html_live.c - a live TTS's page parts, without its audio (html_live.h).
 *
 * The waterfall is drawn from the records' parts of the wait, never from
 * a model of the TTS: each record's lat was measured (its TTS's first
 * byte from the arrivals, its leading silence from the PCM as it came)
 * and split by the replay of its measured TTS (bench_tts.c).  A figure
 * replays that same log again (replay.h), so its timeline and its wait
 * repeat the record's numbers; what needs the PCM (the audio, the gaps a
 * listener heard) is left out and the page says so.
 */
#include "html_live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "bench_wait.h"
#include "cli.h"
#include "html_report.h"
#include "plays.h"
#include "replay.h"
#include "report.h"
#include "ttsbuf/error.h"
#include "ttsbuf/svg.h"

const struct tb_tts_log *tb_cli_html_live_log(const struct tb_bench_recs *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].stream != NULL && r->v[i].stream->tts != NULL)
            return r->v[i].stream->tts;
    return NULL;
}

/* Whether a record measured any part of its wait. */
static int has_wait(const struct tb_bench_rec *x)
{
    for (int i = 0; i < TB_TURN_LAT_PARTS; i++)
        if (isfinite(tb_turn_lat_part(&x->lat, i)))
            return 1;
    return 0;
}

/* A turn's bar's label: its call and turn (a call's ids are global, so
 * unique over the levels), or its request's id; short, as the picture's
 * margin is. */
static void turn_label(const struct tb_bench_rec *x, char *out, size_t len)
{
    if (x->call >= 0)
        snprintf(out, len, "call %lld turn %d", (long long)x->call, (int)x->turn);
    else
        snprintf(out, len, "request %llu", (unsigned long long)x->id);
}

int tb_cli_html_live_turns(FILE *f, const struct tb_bench_recs *r)
{
    struct tb_svg_wait *w = calloc(TB_CLI_HTML_TURN_BARS, sizeof(*w));
    char(*label)[48] = calloc(TB_CLI_HTML_TURN_BARS, sizeof(*label));
    size_t n = 0, more = 0, totals = 0;
    int rc = w == NULL || label == NULL ? TB_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < r->n; i++) {
        const struct tb_bench_rec *x = &r->v[i];
        if (!has_wait(x))
            continue;
        if (n == TB_CLI_HTML_TURN_BARS) {
            more++;
            continue;
        }
        turn_label(x, label[n], sizeof(label[0]));
        tb_cli_wait_bar(&w[n], label[n], &x->lat);
        totals += isfinite(w[n].total);
        n++;
    }
    if (rc == 0 && totals > 0) { /* else tb_cli_html_wait draws nothing */
        fputs("<h2 id=\"turns-wait\">Where each turn's wait went (measured)</h2>\n"
              "<p class=\"note\">One bar a turn, its parts from its record's "
              "<code>latency</code>: the end of turn, the first token, a tool call's wait when "
              "it made one, the chunk's aggregation, the TTS queue, the TTS's first byte as it "
              "arrived, the pre-roll and the leading silence measured on its audio; the tick is "
              "its <code>v2v_s</code>. A part not measured is left out, not drawn as 0.",
              f);
        if (more > 0)
            fprintf(f, " The first %zu turns of %zu.", n, n + more);
        fputs("</p>\n", f);
        rc = tb_cli_html_wait(
            f, NULL, "Each turn, from the caller's last word to the first audible sound", w, n);
    }
    free(w);
    free(label);
    return rc;
}

int tb_cli_html_live_figure(FILE *f, const struct tb_sim_opts *base, const struct tb_bench_rec *x,
                            const char *name, const char *suffix, size_t max_gaps)
{
    struct tb_sim_opts o = *base;
    struct tb_cli_replay rp;
    struct tb_cli_audio au; /* none: a page without audio */
    struct tb_cli_plays plays;
    struct tb_sim_result r;
    struct tb_report_src src = {.kind = "bench", .name = name};
    const struct tb_stream *play;
    char err[512];
    int rc, simrc = 0;

    tb_cli_audio_init(&au);
    tb_cli_plays_init(&plays, 1);
    o.voice = NULL;
    o.play.tts_concurrency = 0;                  /* measured, not modelled (bench_tts.c) */
    tb_sim_opts_turn(&o, (uint32_t)(x->id + 1)); /* its own end of turn, as its record's */
    rc = tb_cli_replay_prepare(&rp, x->stream, &o, 0, name, &play);
    if (rc == 0)
        rc = tb_cli_audio_sim(&au, play, &o, tb_cli_collect_play, &plays, &r, &simrc, err,
                              sizeof(err));
    if (rc == 0 && simrc != 0) {
        tb_cli_error("--html: %s: %s", name, err);
        rc = simrc == TB_ENOMEM ? TB_ENOMEM : TB_EIO;
    }
    if (rc == 0)
        rc = tb_cli_replay_arrived(&rp, x->stream, &o, &r);
    if (rc == 0) {
        struct tb_cli_html_run_info h = {"bench",     &src,       &o,   x->stream, &r,
                                         &plays.gaps, &plays.all, NULL, &au,       max_gaps};
        src.tts_source = "measured";
        src.tts_log = x->stream->tts;
        src.tts_stats = &rp.stats;
        src.tts_fail = rp.failed;
        src.min_tps_reason = tb_cli_replay_whatif_reason(&rp, &o);
        src.end = &x->stream->end;
        rc = tb_cli_html_run_figure(f, &h, suffix, err, sizeof(err));
        if (rc != 0)
            tb_cli_error("--html: %s: %s", name, err);
    }
    tb_cli_replay_free(&rp);
    tb_cli_audio_free(&au);
    tb_cli_plays_free(&plays);
    return rc == 0 || rc == TB_ENOMEM ? rc : TB_EIO;
}
