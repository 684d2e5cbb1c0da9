/*
 * turn_opts.c - the turn's wait (see turn_opts.h): --eou and --tts-lead,
 * and the report's "where the wait went".
 */
#include "turn_opts.h"

#include <math.h>
#include <string.h>

#include <cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "tts_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/turnlat.h"

const struct tb_optdoc tb_opt_turn[TB_CLI_TURN_ROWS_N + 1] = {
    {"eou", TB_O_EOU, "SPEC",
     "the caller's end of speech to the request, seconds: end-of-turn detection and the final "
     "transcript, in --tts-latency's SPEC forms, or stt:NAME, a streaming STT's published "
     "figures (list: the presets; default 0)",
     "A constant, lognormal:p50=A,p90=B, uniform:A..B, empirical:FILE or list:FILE; drawn per "
     "turn with --tts-seed (bench: --seed) for turn k: a run's is 1, a bench request's its id + "
     "1 (list:FILE gives request id k - 1 line k). The first part of the turn's wait "
     "(ttsbuf-model(7)). The stt: presets are each STT's time to final segment (median and P95 "
     "over 1,000 turns, Pipecat's stt-benchmark, github.com/pipecat-ai/stt-benchmark at "
     "de3ab58) as a log-normal through both; an end-of-turn model that waits longer than the "
     "transcript adds its own wait."},
    {"tts-lead", TB_O_TTS_LEAD, "SPEC",
     "the leading silence of a modelled TTS's audio, seconds, before its first audible sample, "
     "in --tts-latency's SPEC forms (default 0)",
     "Drawn per chunk with --tts-seed; only the first chunk with audio adds it to the wait. A "
     "live TTS (--tts-url) or a trace's TTS records measure it on the audio instead (the first "
     "10 ms window above -50 dBFS), and then this option is refused."},
    TB_OPTDOC_END,
};

/* The end of turn of a streaming STT: its TTFS (time to final segment:
 * the caller's end of speech to the final transcript), median and P95 over
 * 1,000 turns of pipecat-ai/smart-turn-data-v3.1-train, from Pipecat's
 * stt-benchmark (github.com/pipecat-ai/stt-benchmark, README at commit
 * de3ab58, read 2026-12-05).  The preset is the log-normal through both
 * (its p90 = p50 (p95 / p50)^(z90 / z95)). */
static const struct {
    const char *name;
    double p50_ms, p95_ms;
} stt[] = {
    {"assemblyai", 256, 362},   {"aws", 1136, 1527},    {"azure", 1016, 1345},
    {"cartesia", 266, 364},     {"deepgram", 247, 298}, {"elevenlabs", 281, 348},
    {"google", 878, 1155},      {"openai", 637, 965},   {"soniox", 249, 281},
    {"speechmatics", 495, 676},
};
#define NSTT (sizeof(stt) / sizeof(stt[0]))
#define STT_SOURCE "Pipecat stt-benchmark TTFS, github.com/pipecat-ai/stt-benchmark@de3ab58"
#define Z95 1.6448536269514722 /* the standard normal's 95th percentile */

/* "stt:NAME" as a log-normal spec into out; 0, or TB_EINVAL printed. */
static int stt_spec(const char *arg, char *out, size_t len)
{
    for (size_t i = 0; i < NSTT; i++)
        if (strcmp(arg + 4, stt[i].name) == 0) {
            double a = stt[i].p50_ms / 1000.0, b = stt[i].p95_ms / 1000.0;
            snprintf(out, len, "lognormal:p50=%.6g,p90=%.6g", a,
                     a * pow(b / a, TB_TTSLAT_Z90 / Z95));
            return 0;
        }
    tb_cli_error("--eou: '%s' is not an STT preset (--eou list names them)", arg);
    return TB_EINVAL;
}

static void stt_print(FILE *f)
{
    fprintf(f,
            "STT presets for --eou stt:NAME: each STT's time to final segment (the caller's\n"
            "end of speech to the final transcript), a log-normal through its median and\n"
            "P95 over 1,000 turns (%s):\n",
            STT_SOURCE);
    for (size_t i = 0; i < NSTT; i++)
        fprintf(f, "  stt:%-14s p50 %5.0f ms   p95 %5.0f ms\n", stt[i].name, stt[i].p50_ms,
                stt[i].p95_ms);
}

void tb_cli_turn_init(struct tb_cli_turn *t)
{
    memset(t, 0, sizeof(*t));
}

void tb_cli_turn_free(struct tb_cli_turn *t)
{
    tb_ttslat_destroy(t->eou_lat);
    tb_ttslat_destroy(t->lead_lat);
    t->eou_lat = t->lead_lat = NULL;
}

int tb_cli_turn_option(struct tb_cli_turn *t, int c, const char *arg)
{
    switch (c) {
    case TB_O_EOU:
        if (strcmp(arg, "list") == 0) {
            stt_print(stdout);
            return TB_CLI_DONE;
        }
        t->eou = arg;
        return 0;
    case TB_O_TTS_LEAD: t->lead = arg; return 0;
    default: return TB_CLI_NOT_MINE;
    }
}

/* One spec read into *lat and its canonical text. */
static int make(const char *opt, const char *spec, uint64_t seed, struct tb_ttslat **lat,
                char *canon, size_t len)
{
    int rc = tb_cli_ttslat_create(opt, spec != NULL ? spec : "0", seed, lat);
    if (rc == 0)
        tb_ttslat_format(*lat, canon, len);
    return rc;
}

int tb_cli_turn_apply(struct tb_cli_turn *t, uint64_t seed, struct tb_sim_opts *o)
{
    char preset[128];
    const char *eou = t->eou;
    int rc =
        eou != NULL && strncmp(eou, "stt:", 4) == 0 ? stt_spec(eou, preset, sizeof(preset)) : 0;
    if (rc != 0)
        return rc;
    if (eou != NULL && strncmp(eou, "stt:", 4) == 0)
        eou = preset;
    rc = make("--eou", eou, seed, &t->eou_lat, t->eou_spec, sizeof(t->eou_spec));
    if (rc == 0 && eou == preset) { /* the report names the preset, then its spec */
        size_t n = strlen(t->eou) < 40 ? strlen(t->eou) : 40, m = strlen(t->eou_spec);
        if (n + 3 + m < sizeof(t->eou_spec)) {
            memmove(t->eou_spec + n + 3, t->eou_spec, m + 1);
            memcpy(t->eou_spec, t->eou, n);
            memcpy(t->eou_spec + n, " = ", 3);
        }
    }
    if (rc == 0)
        rc = make("--tts-lead", t->lead, seed, &t->lead_lat, t->lead_spec, sizeof(t->lead_spec));
    if (rc != 0)
        return rc;
    o->eou_at = tb_ttslat_at;
    o->eou_ud = t->eou_lat;
    o->eou_s = tb_ttslat_at(t->eou_lat, 1);
    o->lead_at = tb_ttslat_at;
    o->lead_ud = t->lead_lat;
    return 0;
}

/* Each part's line: its label and what it covers. */
static const char *const labels[TB_TURN_LAT_PARTS] = {
    "end of turn",    "first token", "chunk aggregation", "TTS queue",
    "TTS first byte", "pre-roll",    "leading silence",   "voice to voice",
};

void tb_cli_turn_stream(struct tb_cli_turn *t, struct tb_stream *s, struct tb_sim_opts *o)
{
    if (t->eou == NULL && isfinite(s->eou_s)) {
        o->eou_s = s->eou_s;
        snprintf(t->eou_spec, sizeof(t->eou_spec), "recorded");
    } else if (t->eou_lat != NULL) {
        uint32_t k = s->request >= 0 && s->request < UINT32_MAX ? (uint32_t)s->request + 1 : 1;
        o->eou_s = tb_ttslat_at(t->eou_lat, k);
        if (t->eou != NULL)
            s->eou_s = o->eou_s; /* without --eou the trace says nothing */
    }
}

void tb_cli_turn_json_opts(struct cJSON *opts, const struct tb_cli_turn *t)
{
    if (t->eou != NULL)
        cJSON_AddStringToObject(opts, "eou", t->eou_spec);
    if (t->lead != NULL)
        cJSON_AddStringToObject(opts, "tts_lead", t->lead_spec);
}

int tb_cli_turn_measured(const struct tb_cli_turn *t, const char *what)
{
    if (t->lead == NULL)
        return 0;
    tb_cli_error("--tts-lead: %s measures the leading silence on its audio", what);
    return TB_EINVAL;
}

/* What the leading silence came from. */
static const char *lead_from(const struct tb_cli_turn *t, const struct tb_sim_opts *o)
{
    return o->lead_at == tb_playout_measured_lead ? "measured" : t->lead_spec;
}

void tb_cli_turn_lines(FILE *f, const struct tb_cli_turn *t, const struct tb_sim_opts *o,
                       const struct tb_turn_lat *l)
{
    fprintf(f, "\n  where the wait went (the caller's last word to the first audible sound):\n");
    for (int i = 0; i < TB_TURN_LAT_PARTS; i++) {
        double v = tb_turn_lat_part(l, i);
        if (i == TB_TURN_LAT_PARTS - 1)
            fprintf(f, "    %-18s %7s\n", "", "-------");
        if (isnan(v))
            fprintf(f, "    %-18s     --", labels[i]);
        else
            fprintf(f, "    %-18s %7.3f s", labels[i], v);
        if (i == 0)
            fprintf(f, "   (--eou %s)", t->eou_spec);
        else if (i == 2 && l->chunk > 0)
            fprintf(f, "   (to chunk %u's close)", (unsigned)l->chunk);
        else if (i == 4 && t->latency_recorded)
            fprintf(f, "   (the recording's --tts-latency %s)", t->latency_spec);
        else if (i == 6)
            fprintf(f,
                    o->lead_at == tb_playout_measured_lead
                        ? isnan(v) ? "   (not measured: no audible audio, or a trace without it)"
                                   : "   (measured on the audio)"
                    : t->lead_recorded ? "   (the recording's --tts-lead %s)"
                                       : "   (--tts-lead %s)",
                    t->lead_spec);
        fputc('\n', f);
    }
}

int tb_cli_turn_json(struct cJSON *root, const struct tb_cli_turn *t, const struct tb_sim_opts *o,
                     const struct tb_turn_lat *l)
{
    cJSON *j = cJSON_AddObjectToObject(root, "latency");
    if (j == NULL)
        return TB_ENOMEM;
    if (l->chunk > 0)
        cJSON_AddNumberToObject(j, "chunk", l->chunk);
    else
        cJSON_AddNullToObject(j, "chunk");
    tb_turn_lat_json(j, l);
    tb_cli_json_num(j, "tool_s", l->tool); /* never 0: a replay has no tool wait */
    cJSON_AddStringToObject(j, "eou_model", t->eou_spec);
    cJSON_AddStringToObject(j, "lead_model", lead_from(t, o));
    return 0;
}

void tb_cli_turn_tool_warn(const char *cmd, size_t ntool, size_t n, double tool_s)
{
    char was[64] = "";
    if (ntool == 0)
        return;
    if (isfinite(tool_s))
        snprintf(was, sizeof(was), " (the recording's tool_s %.3f s)", tool_s);
    tb_cli_error("%s: warning: %zu of %zu turn%s had a tool call%s: %s tool wait is not replayed, "
                 "so v2v here leaves it out%s",
                 cmd, ntool, n, n == 1 ? "" : "s", was, ntool == 1 ? "its" : "their",
                 isfinite(tool_s) ? " (latency.tool_s null)" : "");
}
