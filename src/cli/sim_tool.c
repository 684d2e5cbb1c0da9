/*
 * sim_tool.c - `sim` of a tool turn's answer, and its what-if (see
 * sim_tool.h).  The turn is made into the record bench writes (bench_rec.h)
 * and the record's own code (tb_bench_rec_tool_lat) moves the parts to
 * the turn's clock and measures the silence, so that sim and bench agree
 * by construction.
 */
#include "sim_tool.h"

#include <cJSON.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "tts_opts.h"
#include "ttsbuf/bench_calls.h"
#include "ttsbuf/error.h"
#include "ttsbuf/jsonline.h"
#include "ttsbuf/ttslat.h"
#include "ttsbuf/turnlat.h"

const struct tb_optdoc tb_opt_sim_tool[] = {
    {"tool-latency", TB_O_TOOL_LATENCY, "SPEC",
     "with the trace of a tool turn's answer (bench --out's, of a turn whose model called a "
     "tool): the tool's wait, seconds, in --tts-latency's SPEC forms, drawn once from "
     "--tts-seed in place of the recorded tool_s; the answer's stream moves by the difference",
     "Without it the recorded wait plays, and the turn's parts are the record's.  A trace "
     "without a \"tool_turn\" header (not a tool turn's answer, or recorded before it was kept) "
     "is refused (exit 2)."},
    {"filler", TB_O_FILLER, "TEXT|builtin",
     "with the trace of a tool turn's answer: a phrase said from the tool call's start by the "
     "modelled TTS (builtin: \"" TB_FILLER_BUILTIN "\"), in place of the recorded filler; the "
     "report says how much of the silence around the tool it fills",
     "Without it a recorded filler is played as recorded: heard from its filler_at_s for its "
     "filler_s (a real TTS's audio that came with gaps counts as one span)."},
    TB_OPTDOC_END,
};

int tb_cli_sim_tool_option(struct tb_cli_sim_tool *t, int c, const char *arg)
{
    return tb_cli_tool_option(&t->opt, c, arg);
}

int tb_cli_sim_tool_prepare(struct tb_cli_sim_tool *t, const struct tb_stream *s, uint64_t seed,
                            const char *name)
{
    const struct tb_stream_toolturn *tt = &s->turn_tool;
    struct tb_ttslat *lat = NULL;
    t->on = tt->calls > 0;
    t->wait = tt->wait;
    if (t->opt.latency != NULL) {
        if (tb_cli_ttslat_create("--tool-latency", t->opt.latency, seed, &lat) != 0)
            return TB_EINVAL; /* printed */
        tb_ttslat_format(lat, t->opt.spec, sizeof(t->opt.spec));
        t->wait = tb_ttslat_at(lat, 1);
        tb_ttslat_destroy(lat);
    }
    if (!t->on && (t->opt.latency != NULL || t->opt.filler != NULL)) {
        tb_cli_error("sim: %s needs the trace of a tool turn's answer (bench --out's, with a "
                     "\"tool_turn\" header): %s has none",
                     t->opt.latency != NULL ? "--tool-latency" : "--filler", name);
        return TB_EINVAL;
    }
    return 0;
}

void tb_cli_sim_tool_play(struct tb_cli_sim_tool *t, const struct tb_stream *s,
                          const struct tb_sim_result *r, const struct tb_sim_opts *o)
{
    const struct tb_stream_toolturn *tt = &s->turn_tool;
    struct tb_bench_rec *rec = &t->rec;
    if (!t->on)
        return;
    memset(rec, 0, sizeof(*rec));
    tb_bench_rec_tool_clear(rec);
    rec->tool_calls = tt->calls;
    rec->tool_start = tt->start;
    rec->tool_end = tt->end;
    rec->tool_s = t->wait;
    rec->tool_head = tt->end + t->wait; /* the answer's request, on the turn's clock */
    rec->lat = r->lat;
    if (t->opt.filler != NULL) {
        tb_bench_rec_filler_model(rec, t->opt.filler, &o->play);
    } else if (tt->filler) {
        rec->filler = 1; /* as recorded */
        rec->filler_at = tt->filler_at;
        rec->filler_dur = tt->filler_s;
    }
    tb_bench_rec_tool_lat(rec);
}

int tb_cli_sim_tool_json(cJSON *root, const struct tb_cli_sim_tool *t)
{
    cJSON *o = cJSON_AddObjectToObject(root, "tool_turn"), *l;
    if (o == NULL || (l = cJSON_AddObjectToObject(o, "latency")) == NULL)
        return TB_ENOMEM;
    tb_turn_lat_json(l, &t->rec.lat);
    tb_bench_rec_tool_json(o, l, &t->rec);
    cJSON_DeleteItemFromObjectCaseSensitive(o, "tool_args_bad"); /* a trace does not keep it */
    if (t->opt.latency != NULL)
        cJSON_AddStringToObject(o, "tool_latency", t->opt.spec);
    else
        cJSON_AddNullToObject(o, "tool_latency"); /* the recorded wait */
    if (t->opt.filler != NULL)
        cJSON_AddStringToObject(o, "filler", t->opt.filler);
    else
        cJSON_AddNullToObject(o, "filler"); /* the recorded one, or none */
    return 0;
}

/* "0.123 s", or "-" for NaN. */
static const char *secs(char *b, size_t n, double v)
{
    if (isnan(v))
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%.3f s", v);
    return b;
}

void tb_cli_sim_tool_human(FILE *f, const struct tb_cli_sim_tool *t)
{
    const struct tb_bench_rec *r = &t->rec;
    char a[32], b[32], c[32];
    fprintf(f, "\n  the tool turn (%u call%s, on the turn's clock from its first request):\n",
            r->tool_calls, r->tool_calls == 1 ? "" : "s");
    fprintf(f, "    tool call          %.3f s to %.3f s\n", r->tool_start, r->tool_end);
    fprintf(f, "    tool's wait        %s   (%s%s)\n", secs(a, sizeof(a), r->tool_s),
            t->opt.latency != NULL ? "--tool-latency " : "recorded",
            t->opt.latency != NULL ? t->opt.spec : "");
    fprintf(f, "    voice to voice     %s   (first token %s with the call, tool %s)\n",
            secs(a, sizeof(a), r->lat.v2v), secs(b, sizeof(b), r->lat.ttft),
            secs(c, sizeof(c), r->lat.tool));
    fprintf(f, "    silence            before %s, during %s, ",
            secs(a, sizeof(a), r->tool_silence[0]), secs(b, sizeof(b), r->tool_silence[1]));
    fprintf(f, "after %s\n", secs(c, sizeof(c), r->tool_silence[2]));
    if (!r->filler)
        return;
    fprintf(f, "    filler             heard from %s for %s   (%s)\n",
            secs(a, sizeof(a), r->filler_at), secs(b, sizeof(b), r->filler_dur),
            t->opt.filler != NULL ? "--filler, modelled TTS" : "recorded");
    fprintf(f, "    with the filler    before %s, during %s, ",
            secs(a, sizeof(a), r->filler_silence[0]), secs(b, sizeof(b), r->filler_silence[1]));
    fprintf(f, "after %s\n", secs(c, sizeof(c), r->filler_silence[2]));
    if (isnan(r->filler_covered))
        fprintf(f, "    covered            -");
    else
        fprintf(f, "    covered            %.0f%%", 100 * r->filler_covered);
    fprintf(f, "   (the answer waits %s for the filler to end)\n",
            secs(a, sizeof(a), r->filler_delay));
}

void tb_cli_sim_tool_free(struct tb_cli_sim_tool *t)
{
    tb_cli_tool_free(&t->opt);
    if (t->on)
        tb_bench_rec_tool_clear(&t->rec);
}
