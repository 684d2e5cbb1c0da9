/*
 * tts_opts.c - the TTS stage's options (see tts_opts.h): their rows, their
 * handler, the preset and spec they resolve to, and their lines in --help
 * and the report.
 */
#include "tts_opts.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttspreset.h"

_Static_assert((int)TB_TTSLAT_MAX == 60,
               "--tts-latency's and --tts-connect's help state the range");
_Static_assert(TB_CLI_TTS_CONC_MAX == 1024, "--tts-concurrency's help states the range");

const struct tb_optdoc tb_opt_tts[TB_CLI_TTS_ROWS_N + 1] = {
    {"tts-latency", TB_O_TTS_LAT, "SPEC",
     "each chunk's first-byte latency, seconds: a constant S (default 0), "
     "lognormal:p50=A,p90=B, uniform:A..B, empirical:FILE (values drawn from FILE) or list:FILE "
     "(chunk j takes line j, cycling)",
     "Values 0..60; FILE holds one value a line ('#' comments), at most 1 MiB, '-' is standard "
     "input. Draws are a pure function of (--tts-seed, chunk), so every replay of the stream sees "
     "the same latencies. See ttsbuf-model(7) for the stage's exact semantics."},
    {"tts-seed", TB_O_TTS_SEED, "N", "the seed of --tts-latency's draws (default 0)",
     "Allowed 0..2^64-1. Recorded in the report and the JSON."},
    {"tts-connect", TB_O_TTS_CONNECT, "S",
     "extra first-byte latency of the first chunk: a cold connection (default 0)",
     "Allowed 0..60."},
    {"tts-concurrency", TB_O_TTS_CONC, "N",
     "chunks synthesized at once: 1 is one streaming context, as the providers' socket APIs "
     "(default 0: unlimited; with --tts-url 1)",
     "Allowed 0..1024. With --tts-url it is how many chunks go to the real TTS at once, default "
     "1 (one request or message in flight, as one streaming context), 0 refused."},
    {"tts-rtf", TB_O_TTS_RTF, "R", "seconds of synthesis per second of audio (default 0: instant)",
     "Allowed 0..100. Above 1 the player plays 20 ms frames as they arrive and stalls when dry."},
    {"tts-output", TB_O_TTS_OUTPUT, "MODE",
     "how the TTS returns a chunk's audio: stream (from its first byte on; default) or whole "
     "(all of it once synthesized, RTF x its duration after synthesis starts)",
     "whole is an engine that answers a chunk only when all of its audio is made (Piper, most "
     "local engines, an HTTP TTS without streaming): chunk j's first audio is then d_j = f_j + "
     "R x D_j, for any --tts-rtf R, and it plays whole from there (ttsbuf-model(7)). A --tts "
     "preset says its engine's mode (whole for Piper and eSpeak NG); this overrides it."},
    {"tts", TB_O_TTS_PRESET, "PRESET",
     "a TTS engine's published figures (listed below; list: the presets with their notes): "
     "sets the options above; each given explicitly overrides the preset's",
     "A preset without a published first-byte latency refuses to run until --tts-latency is "
     "given, and one whose output is whole likewise without a real-time factor (--tts-rtf); any "
     "other figure the preset's sources do not give keeps its default, and a warning line says "
     "so. The sources, their dates and who measured are in data/tts_presets/tts_presets.json. "
     "The engine's input rule is the default --chunk: elevenlabs for the ElevenLabs presets "
     "(chunk_length_schedule), cartesia with the preset's max_buffer_delay_ms for Cartesia, "
     "sentence for Piper; the engines that take the client's chunks as they come (Deepgram, "
     "OpenAI, eSpeak NG) keep --chunk's default. An explicit --chunk overrides it; the report "
     "and the JSON (tts.chunk_from_preset) say which."},
    TB_OPTDOC_END,
};

void tb_cli_tts_init(struct tb_cli_tts *t)
{
    memset(t, 0, sizeof(*t));
    t->output = TB_TTS_STREAM;
}

const char *tb_cli_tts_output_name(int output)
{
    return output == TB_TTS_WHOLE ? "whole" : "stream";
}

void tb_cli_tts_free(struct tb_cli_tts *t)
{
    tb_ttslat_destroy(t->lat);
    t->lat = NULL;
}

int tb_cli_tts_option(struct tb_cli_tts *t, int c, const char *arg)
{
    size_t z;
    int rc;
    switch (c) {
    case TB_O_TTS_LAT: t->latency = arg; return 0;
    case TB_O_TTS_PRESET:
        if (strcmp(arg, "list") == 0) {
            tb_cli_tts_presets_print(stdout);
            return TB_CLI_DONE;
        }
        t->preset = arg;
        return 0;
    case TB_O_TTS_OUTPUT:
        if (strcmp(arg, "stream") != 0 && strcmp(arg, "whole") != 0) {
            tb_cli_error("--tts-output: '%s' is not stream or whole", arg);
            return TB_EINVAL;
        }
        t->output = strcmp(arg, "whole") == 0 ? TB_TTS_WHOLE : TB_TTS_STREAM;
        t->output_set = 1;
        return 0;
    case TB_O_TTS_SEED:
        rc = tb_cli_opt_size("--tts-seed", arg, 0, SIZE_MAX, &z);
        t->seed = rc == 0 ? (uint64_t)z : t->seed;
        t->seed_set = rc == 0;
        return rc;
    case TB_O_TTS_CONNECT:
        t->connect_set = 1;
        return tb_cli_opt_double("--tts-connect", arg, 0, TB_TTSLAT_MAX, &t->connect);
    case TB_O_TTS_RTF:
        t->rtf_set = 1;
        return tb_cli_opt_double("--tts-rtf", arg, 0, TB_CLI_TTS_RTF_MAX, &t->rtf);
    case TB_O_TTS_CONC:
        rc = tb_cli_opt_size("--tts-concurrency", arg, 0, TB_CLI_TTS_CONC_MAX, &z);
        t->concurrency = rc == 0 ? (int)z : t->concurrency;
        t->conc_set = 1;
        return rc;
    default: return tb_cli_draws_option(&t->draws, c, arg);
    }
}

/* What an unknown figure's note adds to "no published X": " (the note)",
 * or nothing when the note only says so again ("not published"). */
static const char *fig_why(const struct tb_ttspreset_fig *f, char *buf, size_t len)
{
    if (f->note == NULL || strcmp(f->note, "not published") == 0)
        return "";
    snprintf(buf, len, " (%s)", f->note);
    return buf;
}

/* A preset figure the user did not override: its value, or the default
 * kept with a warning line when no source gives it. */
static int preset_fig(const char *preset, const char *what, const struct tb_ttspreset_fig *f,
                      int given, double *v)
{
    char why[512];
    if (given)
        return 0;
    if (!f->known) {
        tb_cli_error("warning: --tts %s: no published %s%s; the default is used", preset, what,
                     fig_why(f, why, sizeof(why)));
        return 0;
    }
    *v = f->value;
    return 1;
}

/* The figures the model cannot do without, which preset p must give
 * unless an option does: the first-byte latency, and with a whole output
 * the real-time factor (its first audio is R x a chunk's duration).  A
 * default there would model an instant TTS: 0, or TB_EINVAL printed,
 * naming the option to give. */
static int preset_needs(const struct tb_cli_tts *t, const struct tb_ttspreset *p)
{
    char why[512];
    if (t->latency == NULL && !(p->latency.known && p->latency.spec != NULL)) {
        tb_cli_error("--tts %s needs --tts-latency: no published first-byte figure%s", t->preset,
                     fig_why(&p->latency, why, sizeof(why)));
        return TB_EINVAL;
    }
    if (t->output == TB_TTS_WHOLE && !t->rtf_set && !p->rtf.known) {
        tb_cli_error("--tts %s needs --tts-rtf: its output is whole, so its first audio is RTF x a "
                     "chunk's duration, and no real-time factor is published%s",
                     t->preset, fig_why(&p->rtf, why, sizeof(why)));
        return TB_EINVAL;
    }
    return 0;
}

/* The chunk policy preset p implies, where --chunk does not say: 1 and
 * seg set, or 0 (the client chooses the chunks: the user's default). */
static int preset_chunk(const struct tb_ttspreset *p, struct tb_cli_tts *t, struct tb_seg_opts *seg)
{
    static const unsigned el[4] = {120, 160, 250, 290};
    if (t->chunk_set)
        return 0;
    switch (p->policy) {
    case TB_TTSPRESET_SCHEDULE:
        if (p->schedule_n != 4 || memcmp(p->schedule, el, sizeof(el)) != 0) {
            tb_cli_error("warning: --tts %s: no chunk policy for its schedule; --chunk's default "
                         "is used",
                         t->preset);
            return 0;
        }
        seg->policy = TB_CHUNK_ELEVENLABS;
        return 1;
    case TB_TTSPRESET_MAX_DELAY:
        seg->policy = TB_CHUNK_CARTESIA;
        if (!t->delay_set && p->max_delay_s > 0)
            seg->max_delay_s = p->max_delay_s;
        return 1;
    case TB_TTSPRESET_SENTENCE: seg->policy = TB_CHUNK_SENTENCE; return 1;
    default: return 0;
    }
}

/* --tts PRESET's figures, where no option overrides them.  Its spec is
 * copied into spec (the set dies here). */
static int apply_preset(struct tb_cli_tts *t, struct tb_seg_opts *seg, char *spec, size_t len)
{
    struct tb_ttspreset_set *set = NULL;
    const struct tb_ttspreset *p;
    char err[512];
    double v;
    int rc = tb_ttspreset_load(&set, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("--tts: the compiled-in presets: %s", err);
        return rc == TB_ENOMEM ? rc : TB_EINVAL;
    }
    p = tb_ttspreset_find(set, t->preset);
    if (p == NULL) {
        tb_cli_error("--tts: unknown preset '%s' (--tts list lists them)", t->preset);
        tb_ttspreset_destroy(set);
        return TB_EINVAL;
    }
    if (!t->output_set)
        t->output = (int)p->output.value;
    rc = preset_needs(t, p);
    if (rc == 0 && t->latency == NULL)
        snprintf(spec, len, "%s", p->latency.spec);
    if (rc == 0) {
        preset_fig(t->preset, "connect latency", &p->connect, t->connect_set, &t->connect);
        if (preset_fig(t->preset, "concurrency", &p->concurrency, t->conc_set, &v))
            t->concurrency = (int)v;
        preset_fig(t->preset, "real-time factor", &p->rtf, t->rtf_set, &t->rtf);
        t->chunk_from_preset = preset_chunk(p, t, seg);
    }
    tb_ttspreset_destroy(set);
    return rc;
}

int tb_cli_ttslat_create(const char *opt, const char *spec, uint64_t seed, struct tb_ttslat **out)
{
    char err[512];
    int rc = tb_ttslat_create(spec, seed, out, err, sizeof(err));
    if (rc != 0) {
        const char *e = strncmp(err, "tts latency: ", 13) == 0 ? err + 13 : err;
        tb_cli_error("%s: %s", opt, e);
        return rc == TB_EIO ? TB_EINVAL : rc;
    }
    return 0;
}

int tb_cli_tts_apply(struct tb_cli_tts *t, struct tb_seg_opts *seg, struct tb_playout_opts *o)
{
    char spec[TB_TTSLAT_SPEC_MAX + 64];
    struct tb_ttslat_info info;
    int rc;
    double v;
    snprintf(spec, sizeof(spec), "%s", t->latency != NULL ? t->latency : "0");
    /* A bare number is today's option, with today's message. */
    if (t->latency != NULL && strchr(t->latency, ':') == NULL &&
        (rc = tb_cli_opt_double("--tts-latency", t->latency, 0, TB_TTSLAT_MAX, &v)) != 0)
        return rc;
    if (t->preset != NULL && (rc = apply_preset(t, seg, spec, sizeof(spec))) != 0)
        return rc;
    if (t->delay_set && seg->policy != TB_CHUNK_CARTESIA) {
        tb_cli_error("--max-buffer-delay: only with --chunk cartesia (the policy is %s)",
                     tb_seg_policy_name(seg->policy));
        return TB_EINVAL;
    }
    if (t->idle_set && seg->policy != TB_CHUNK_IDLE) {
        tb_cli_error("--idle-flush: only with --chunk idle (the policy is %s)",
                     tb_seg_policy_name(seg->policy));
        return TB_EINVAL;
    }
    rc = tb_cli_ttslat_create("--tts-latency", spec, t->seed, &t->lat);
    if (rc != 0)
        return rc;
    tb_ttslat_info(t->lat, &info);
    tb_ttslat_format(t->lat, t->spec, sizeof(t->spec));
    t->seeded = info.seeded;
    if (info.kind == TB_TTSLAT_CONST) {
        /* today's constant: the v1 model unless another option is given */
        o->tts_latency = info.p50;
        tb_ttslat_destroy(t->lat);
        t->lat = NULL;
    } else {
        o->tts_latency = 0.0;
        o->tts_latency_at = tb_ttslat_at;
        o->tts_latency_ud = t->lat;
    }
    o->tts_connect = t->connect;
    o->tts_concurrency = t->concurrency;
    o->tts_rtf = t->rtf;
    o->tts_output = t->output;
    t->any = t->lat != NULL || t->preset != NULL || t->seed_set || t->connect_set || t->conc_set ||
             t->rtf_set || t->output_set;
    if ((rc = tb_cli_draws_check(&t->draws, t->seeded, t->spec)) != 0)
        return rc;
    if (o->rebuffer && tb_playout_has_stage(o)) {
        tb_cli_error("--rebuffer: not modelled with a TTS stage (--tts, --tts-connect, "
                     "--tts-concurrency, --tts-rtf, --tts-output whole, a --tts-latency "
                     "distribution)");
        return TB_EINVAL;
    }
    return 0;
}

void tb_cli_tts_line(FILE *f, const struct tb_cli_tts *t)
{
    if (!t->any)
        return;
    fprintf(f, "  tts: latency=%s", t->spec);
    if (t->seeded || t->seed_set)
        fprintf(f, " seed=%llu", (unsigned long long)t->seed);
    fprintf(f, "  connect=%g s  concurrency=", t->connect);
    if (t->concurrency > 0)
        fprintf(f, "%d", t->concurrency);
    else
        fprintf(f, "unlimited");
    fprintf(f, "  rtf=%g  output=%s", t->rtf, tb_cli_tts_output_name(t->output));
    if (t->preset != NULL)
        fprintf(f, "  preset=%s", t->preset);
    fputc('\n', f);
}

/* A figure for the table: its value, or "-" when no source gives it. */
static const char *fig(char *buf, size_t len, const struct tb_ttspreset_fig *f, int latency)
{
    if (!f->known)
        return "-";
    if (latency)
        return f->spec != NULL ? f->spec : "-";
    snprintf(buf, len, "%g", f->value);
    return buf;
}

/* The presets' table, a row and the latency's source a preset; with
 * notes, its engine and note too. */
static void presets_table(FILE *f, int notes)
{
    struct tb_ttspreset_set *set = NULL;
    const struct tb_ttspreset *ps;
    char err[256], b1[32], b2[32];
    size_t n;
    if (tb_ttspreset_load(&set, err, sizeof(err)) != 0) {
        fprintf(f, "\nTTS presets: not available (%s)\n", err);
        return;
    }
    ps = tb_ttspreset_all(set, &n);
    fprintf(f, "\nTTS presets (--tts; published figures; '-' none published: a latency must\n"
               "then be given, another figure keeps its default; --tts list adds notes):\n");
    fprintf(f, "  %-27s %-32s %5s %8s  %s\n", "name", "first-byte latency (s)", "conc.", "RTF",
            "output");
    for (size_t i = 0; i < n; i++) {
        const struct tb_ttspreset_source *src = ps[i].latency.source;
        char line[1024];
        fprintf(f, "  %-27s %-32s %5s %8s  %s\n", ps[i].name, fig(NULL, 0, &ps[i].latency, 1),
                fig(b1, sizeof(b1), &ps[i].concurrency, 0), fig(b2, sizeof(b2), &ps[i].rtf, 0),
                tb_cli_tts_output_name((int)ps[i].output.value));
        if (notes) {
            snprintf(line, sizeof(line), "%s: %s", ps[i].engine, ps[i].note);
            fprintf(f, "    ");
            tb_cli_wrap(f, line, 4, 6);
        }
        if (src == NULL)
            snprintf(line, sizeof(line), "latency: none published");
        else
            snprintf(line, sizeof(line), "latency: %s (%s)",
                     src->url != NULL ? src->url : src->file,
                     src->date != NULL ? src->date : "undated");
        fprintf(f, "    ");
        tb_cli_wrap(f, line, 4, 6);
    }
    tb_ttspreset_destroy(set);
}

void tb_cli_usage_tts_presets(FILE *f)
{
    presets_table(f, 0);
}

void tb_cli_tts_presets_print(FILE *f)
{
    presets_table(f, 1);
}
