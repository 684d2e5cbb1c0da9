/*
 * audio.c - speech options, the speaker's life cycle and the audio report
 * (audio.h).
 */
#include "audio.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tts_opts.h"
#include "outputs.h"
#include "jsonout.h"
#include "optdoc.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/tts.h"

void tb_cli_audio_init(struct tb_cli_audio *a)
{
    memset(a, 0, sizeof(*a));
    a->sink = TB_SINK_NONE;
    a->cue = TB_PCMRING_CUE_TICK;
}

int tb_cli_audio_option(struct tb_cli_audio *a, int c, const char *arg)
{
    switch (c) {
    case TB_O_AUDIO:
        if (tb_speaker_parse_sink(arg, &a->sink, &a->target) != 0) {
            tb_cli_error("--audio: '%s' is not none, wav:FILE, portaudio or portaudio:DEVICE", arg);
            return TB_EINVAL;
        }
        a->spec = arg;
        return 0;
    case TB_O_VOICEMODEL:
        a->count_synthesis = strcmp(arg, "espeak+synthesis") == 0;
        if (strcmp(arg, "espeak") == 0 || a->count_synthesis)
            a->espeak = 1;
        else if (strcmp(arg, "rate") == 0)
            a->espeak = 0;
        else {
            tb_cli_error("--voice-model: '%s' is not rate, espeak or espeak+synthesis", arg);
            return TB_EINVAL;
        }
        return 0;
    case TB_O_VOICE: a->voice = arg; return 0;
    case TB_O_CUE:
        if (tb_pcmring_cue_parse(arg, &a->cue) != 0) {
            tb_cli_error("--stall-cue: '%s' is not none, tick or tone", arg);
            return TB_EINVAL;
        }
        return 0;
    case TB_O_PALAT: return tb_cli_opt_double("--latency", arg, 0.001, 2.0, &a->latency);
    case TB_O_AUDIOMAX:
        return tb_cli_opt_double("--audio-max", arg, 1.0, TB_AUDIO_MAX_S, &a->max_s);
    default: return TB_CLI_NOT_MINE;
    }
}

const struct tb_optdoc tb_opt_audio[] = {
    {"audio", TB_O_AUDIO, "SINK",
     "none (default: the simulated clock), wav:FILE (the run as it would be heard, rendered to a "
     "WAV file from t = 0, timed by the token arrivals), portaudio[:DEVICE] (real-time playback; "
     "DEVICE is an index or part of a name). The audio is the run's voice model: it changes no "
     "number",
     "eSpeak NG speaks each chunk; with the rate model (the default) its speech is time-stretched "
     "with sonic to exactly the model's duration, so what is heard has the report's gaps. The WAV "
     "file is 16-bit mono 22.05 kHz, leading silence, gaps and cues included, a chunk playing "
     "from its close time + --tts-latency, rendered as fast as eSpeak synthesizes. With a TTS "
     "stage (--tts, --tts-connect, --tts-concurrency, --tts-rtf, a --tts-latency distribution) "
     "a chunk plays from when the stage has its first audio, with --tts-rtf over 1 frame by "
     "frame (20 ms) as synthesized, and the WAV file from the stage's start, so its silences are "
     "the model's gaps (ttsbuf-model(7); in real time the pre-roll counts what is queued). With "
     "portaudio, sim replays the stream in real time. No device is an error suggesting --audio "
     "wav:FILE (exit 3)."},
    {"voice-model", TB_O_VOICEMODEL, "M",
     "the durations every output of the run uses: rate (default: code points x 10 / wpm), espeak "
     "(each chunk's duration as eSpeak NG speaks it) or espeak+synthesis (also eSpeak's measured "
     "synthesis time as latency, chunks synthesized one at a time; not deterministic)",
     "The report's header, the JSON (voice_model), the pictures and the --html page name it; "
     "asking for --audio or --html never changes it. With espeak, durations are cached by text, "
     "and the rate model's figures are reported beside eSpeak's, with their difference. With "
     "espeak+synthesis there is one synthesizer: chunk j is ready at max(c_j, ready_{j-1}) + its "
     "synthesis time, + --tts-latency."},
    {"voice", TB_O_VOICE, "NAME", "eSpeak NG voice name (default en)",
     "espeak-ng --voices lists them."},
    {"stall-cue", TB_O_CUE, "CUE",
     "what a gap sounds like: tick (default: a soft click at its start), tone (a quiet 441 Hz "
     "tone throughout), none (silence)",
     "The tick is a 12 ms 2 kHz click at -12 dBFS, the tone is at -22 dBFS; both generated at "
     "start-up, no asset file."},
    {"latency", TB_O_PALAT, "S",
     "PortAudio suggested output latency (default 0.1; the granted latency is reported)",
     "Allowed 0.001..2."},
    {"audio-max", TB_O_AUDIOMAX, "S",
     "the longest audio a WAV render (--audio wav:FILE, --html) may hold, from t = 0 (default "
     "3600, up to 97391: a WAV file's 4 GiB)",
     "A stream whose speech goes on past it (its last spoken event's time + --tts-latency) is "
     "refused before the file is created (exit 2); audio that reaches it anyway (a live run, "
     "a TTS that sends more than its text suggested) ends the render there, the file (or the "
     "--html page's audio) holding its first seconds with a valid header, while the run goes "
     "on: the report, --json (audio.cut_s) and the page are the whole run's and say where the "
     "audio was cut, then exit 3."},
    TB_OPTDOC_END,
};

int tb_cli_audio_wanted(const struct tb_cli_audio *a)
{
    return a->espeak || a->sink != TB_SINK_NONE;
}

void tb_cli_audio_rate_model(struct tb_cli_audio *a, const struct tb_stream *s,
                             const struct tb_sim_opts *o)
{
    struct tb_sim_opts ro = *o;
    struct tb_clock vc;
    char err[256];
    if (!a->espeak || a->pcm_rate != 0)
        return;      /* the run is the rate model's, or a real TTS's, measured */
    ro.voice = NULL; /* the speaker's voice would speak it again */
    tb_clock_virtual_init(&vc);
    a->have_rate = s->n > 0 && tb_sim_run(s, &ro, &vc, NULL, NULL, &a->rate, err, sizeof(err)) == 0;
}

int tb_cli_audio_for_html(struct tb_cli_audio *a, double keep_s)
{
    if (a->sink == TB_SINK_WAV)
        return 0;
    if (a->sink == TB_SINK_PORTAUDIO) {
        tb_cli_error("--html: the page embeds the audio as a WAV file; use --audio wav:FILE or no "
                     "--audio, not --audio %s",
                     a->spec);
        return TB_EINVAL;
    }
    /* A file without a name (removed at its creation): nothing is left
     * behind however the run ends, SIGKILL included.  The sink keeps only
     * what the page embeds (keep_s x 44100 bytes: 26 MB for 600 s) while
     * the clock runs on. */
    a->html_f = tmpfile();
    if (a->html_f == NULL) {
        tb_cli_error("--html: cannot create a temporary file: %s", strerror(errno));
        return TB_EIO;
    }
    a->keep_s = keep_s;
    a->sink = TB_SINK_WAV;
    a->target = "the --html page's audio";
    a->spec = "wav (embedded in the --html page)";
    return 0;
}

FILE *tb_cli_audio_wav_open(const struct tb_cli_audio *a, const char **what)
{
    *what = a->target;
    if (a->sink != TB_SINK_WAV)
        return NULL;
    if (a->html_f == NULL)
        return fopen(a->target, "rb");
    return fseek(a->html_f, 0, SEEK_SET) == 0 ? a->html_f : NULL;
}

void tb_cli_audio_wav_close(const struct tb_cli_audio *a, FILE *w)
{
    if (w != NULL && w != a->html_f)
        fclose(w);
}

int tb_cli_audio_realtime(const struct tb_cli_audio *a)
{
    return a->sink == TB_SINK_PORTAUDIO;
}

int tb_cli_audio_probe(const struct tb_cli_audio *a)
{
    return a->sink == TB_SINK_WAV ? tb_cli_output_probe("--audio wav", a->target) : 0;
}

/* A WAV render of s that would pass --audio-max is refused before the
 * file is created.  The bound is exact from below (the last spoken event
 * plays no earlier than its arrival + L), so nothing that fits is
 * refused; what overshoots it anyway stops at the sink's own cap. */
static int audio_bound(const struct tb_cli_audio *a, const struct tb_sim_opts *o,
                       const struct tb_stream *s)
{
    double max = a->max_s > 0 ? a->max_s : TB_AUDIO_MAX_DEFAULT_S, until;
    if (a->sink != TB_SINK_WAV || s == NULL || (until = tb_seg_spoken_until(s)) < 0)
        return 0;
    if (until + o->play.tts_latency <= max)
        return 0;
    tb_cli_error("%s: the audio would last at least %.1f s (speech until t = %g s, + %g s of "
                 "TTS latency), over the %.0f s cap; --audio-max raises it (at most %.0f s, a "
                 "WAV file's 4 GiB)",
                 a->html_f != NULL ? "--html" : "--audio wav", until + o->play.tts_latency, until,
                 o->play.tts_latency, max, TB_AUDIO_MAX_S);
    return TB_ETOOBIG;
}

int tb_cli_audio_start(struct tb_cli_audio *a, struct tb_sim_opts *o, const struct tb_stream *s)
{
    struct tb_speaker_opts so;
    char err[512];
    int rc;
    if (!tb_cli_audio_wanted(a))
        return 0;
    if (tb_seg_policy_timed(o->seg.policy) && a->pcm_rate == 0) {
        /* Its minimum TPS re-cuts the stream at every rate: eSpeak would
         * have to render every re-cut chunk again. */
        const char *who = a->html_f != NULL         ? "--html (the page embeds the speech)"
                          : a->sink != TB_SINK_NONE ? "--audio"
                                                    : "--voice-model espeak";
        tb_cli_error("--chunk %s with %s: the minimum TPS of a time-based policy is modelled with "
                     "the rate voice only (--voice-model rate, no speech output)%s",
                     tb_seg_policy_name(o->seg.policy), who,
                     a->html_f != NULL ? "; use --svg or --json for this policy" : "");
        return TB_EINVAL;
    }
    rc = audio_bound(a, o, s);
    if (rc != 0)
        return rc;
    memset(&so, 0, sizeof(so));
    so.sink = a->sink;
    so.target = a->target;
    so.voice = a->voice;
    so.play = o->play; /* one voice-and-TTS struct for the playout and the speaker */
    so.cue = a->cue;
    so.latency = a->latency;
    so.count_synthesis = a->count_synthesis;
    so.max_audio_s = a->max_s;
    so.keep_s = a->keep_s;
    so.stream = a->html_f;
    so.cancel = a->cancel;
    so.rate_model = !a->espeak;
    so.pcm_rate = a->pcm_rate;
    rc = tb_speaker_create(&so, &a->sp, err, sizeof(err));
    if (rc == TB_EDEVICE) {
        tb_cli_error("--audio %s: %s; no sound card? try --audio wav:FILE", a->spec, err);
        return TB_EDEVICE;
    }
    if (rc != 0) {
        tb_cli_error("%s%s%s", rc == TB_ERANGE ? "--wpm: " : "", err,
                     rc == TB_EIO && a->sink == TB_SINK_WAV ? " (--audio wav:FILE)" : "");
        return rc == TB_EIO || rc == TB_ENOMEM ? rc : TB_EINVAL;
    }
    o->voice = tb_speaker_voice(a->sp);
    return 0;
}

int tb_cli_audio_finish(struct tb_cli_audio *a)
{
    char err[512];
    int rc;
    if (a->sp == NULL)
        return 0;
    rc = tb_speaker_finish(a->sp, &a->res, err, sizeof(err));
    a->ngaps = tb_speaker_gaps(a->sp, NULL, 0);
    free(a->gaps);
    a->gaps = a->ngaps ? malloc(a->ngaps * sizeof(*a->gaps)) : NULL;
    if (a->gaps == NULL)
        a->ngaps = 0;
    tb_speaker_gaps(a->sp, a->gaps, a->ngaps);
    if (rc == TB_ECANCELED && a->html_f != NULL) {
        tb_cli_error("--html: interrupted; no page written");
        return TB_ECANCELED;
    }
    if (rc != 0) {
        tb_cli_error("--audio %s: %s", a->spec ? a->spec : "none", err);
        return rc == TB_ENOMEM || rc == TB_EDEVICE || rc == TB_ECANCELED ? rc : TB_EIO;
    }
    return 0;
}

/* Whether the audio reached --audio-max (its render was cut). */
static int audio_cut(const struct tb_cli_audio *a)
{
    return a->sp != NULL && !isnan(a->res.cut_s);
}

/* The cap the render had. */
static double audio_cap(const struct tb_cli_audio *a)
{
    return a->max_s > 0 ? a->max_s : TB_AUDIO_MAX_DEFAULT_S;
}

int tb_cli_audio_verdict(const struct tb_cli_audio *a)
{
    if (!audio_cut(a))
        return TB_EXIT_OK;
    if (a->html_f != NULL)
        tb_cli_error("--html: the audio reached its cap of %.0f s: the page plays its first "
                     "%.3f s, and says so (--audio-max raises the cap)",
                     audio_cap(a), a->res.cut_s);
    else
        tb_cli_error("--audio %s: the audio reached its cap of %.0f s: the file holds its first "
                     "%.3f s (--audio-max raises the cap)",
                     a->spec, audio_cap(a), a->res.cut_s);
    return TB_EXIT_FAILED;
}

int tb_cli_audio_sim(struct tb_cli_audio *a, const struct tb_stream *s, const struct tb_sim_opts *o,
                     tb_play_fn fn, void *ud, struct tb_sim_result *r, int *rc, char *err,
                     size_t errlen)
{
    struct tb_clock clk;
    if (tb_cli_audio_realtime(a))
        tb_clock_monotonic_init(&clk);
    else
        tb_clock_virtual_init(&clk);
    *rc = tb_sim_run(s, o, &clk, fn, ud, r, err, errlen);
    return tb_cli_audio_finish(a);
}

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

void tb_cli_audio_report(FILE *f, const struct tb_cli_audio *a, const struct tb_sim_opts *o,
                         const struct tb_sim_result *r, size_t max_gaps)
{
    const struct tb_audio_result *x = &a->res;
    if (a->sp == NULL)
        return;
    if (a->pcm_rate != 0) /* the TTS's PCM as it came: no eSpeak NG, no sonic */
        fprintf(f, "\n  the TTS's own audio (%s, model %s, voice %s): %" PRIu64
                   " chunks, %.2f s of audio at %u Hz, played as it arrived",
                a->tts_log != NULL ? a->tts_log->api : "?",
                a->tts_log != NULL && a->tts_log->model[0] ? a->tts_log->model : "-",
                a->tts_log != NULL && a->tts_log->voice[0] ? a->tts_log->voice : "-", x->chunks,
                x->audio_s, a->pcm_rate);
    else
        fprintf(f,
                "\n  eSpeak NG, voice %s at %g wpm: %" PRIu64 " chunks, %.2f s of audio in %.3f s"
                " of synthesis (%.0fx real time)%s",
                a->voice ? a->voice : "en", o->play.wpm, x->chunks, x->audio_s, x->synth_s,
                x->synth_s > 0 ? x->audio_s / x->synth_s : 0.0,
                a->espeak ? "" : ", each chunk stretched to the rate model's duration (sonic)");
    if (x->cache_hits > 0)
        fprintf(f, "; %" PRIu64 " from the cache", x->cache_hits);
    fprintf(f, "\n");
    if (a->have_rate) {
        const struct tb_playout_result *p = &a->rate.play, *q = &r->play;
        fprintf(f,
                "  voice models      rate: %.2f s of speech, %u underrun%s, %.2f s silent, "
                "min TPS %.1f\n"
                "                  eSpeak: %.2f s of speech, %u underrun%s, %.2f s silent, "
                "min TPS %.1f   (speech %+.1f%%)\n",
                p->speech, p->underruns, plural(p->underruns), p->gap_total, p->min_tps, q->speech,
                q->underruns, plural(q->underruns), q->gap_total, q->min_tps,
                p->speech > 0 ? 100.0 * (q->speech - p->speech) / p->speech : 0.0);
    }
    if (a->sink == TB_SINK_NONE)
        return;
    if (audio_cut(a))
        fprintf(f,
                "  audio cut at %.3f s: it reached its cap of %.0f s (--audio-max); the numbers "
                "above are the whole run's\n",
                a->res.cut_s, audio_cap(a));
    fprintf(f, "  audio clock (%s", a->spec);
    if (a->sink == TB_SINK_PORTAUDIO)
        fprintf(f, ", output latency %.0f ms", x->latency * 1000.0);
    fprintf(f, "): %u underrun%s, %.3f s silent, longest %.3f s, %u interruption%s\n", x->underruns,
            plural(x->underruns), x->gap_total, x->gap_max, x->interruptions,
            plural(x->interruptions));
    fprintf(f,
            "    first audio %.3f s, %.2f s of speech played, %.3f s concealed in %" PRIu64
            " event%s, stall cue %s\n",
            x->first_audio, x->speech, x->concealed, x->concealment_events,
            plural(x->concealment_events), tb_pcmring_cue_name(a->cue));
    if (x->device_underflows > 0)
        fprintf(f,
                "    warning: the device itself ran dry %" PRIu64 " time%s (PortAudio output "
                "underflow: this machine was too slow); timings are off by the device's refill\n",
                x->device_underflows, plural(x->device_underflows));
    for (size_t i = 0, shown = 0; i < a->ngaps && shown < max_gaps; i++) {
        if (a->gaps[i].len <= TB_GAP_MIN_S)
            continue;
        fprintf(f, "    at %9.3f s   %.3f s of silence%s\n", a->gaps[i].at, a->gaps[i].len,
                a->gaps[i].len >= TB_INTERRUPT_S ? " (interruption)" : "");
        shown++;
    }
}

void tb_cli_audio_json(void *rootp, const struct tb_cli_audio *a, const struct tb_sim_opts *o)
{
    cJSON *root = rootp, *au, *gl;
    const struct tb_audio_result *x = &a->res;
    if (a->sp == NULL) {
        cJSON_AddNullToObject(root, "audio");
        return;
    }
    au = cJSON_AddObjectToObject(root, "audio");
    if (au == NULL)
        return;
    cJSON_AddStringToObject(au, "sink",
                            a->sink == TB_SINK_WAV         ? "wav"
                            : a->sink == TB_SINK_PORTAUDIO ? "portaudio"
                                                           : "none");
    if (a->target != NULL && a->html_f == NULL)
        cJSON_AddStringToObject(au, "target", a->target);
    cJSON_AddStringToObject(au, "voice_model", tb_voice_model(o->voice));
    /* The voice that spoke: the real TTS's (its synthesis not timed
     * here: null), or eSpeak NG's. */
    cJSON_AddStringToObject(au, "voice",
                            a->pcm_rate == 0        ? (a->voice ? a->voice : "en")
                            : a->tts_log != NULL ? a->tts_log->voice
                                                 : "");
    const struct tb_cli_json_field synth[] = {
        {"wpm", o->play.wpm},
        {"rate_hz", x->rate},
        {"chunks", (double)x->chunks},
        {"audio_s", x->audio_s},
        {"synth_s", a->pcm_rate == 0 ? x->synth_s : NAN},
        {"cache_hits", (double)x->cache_hits},
    };
    const struct tb_cli_json_field rate[] = {
        {"speech_s", a->rate.play.speech},       {"underruns", a->rate.play.underruns},
        {"gap_total_s", a->rate.play.gap_total}, {"min_tps", a->rate.play.min_tps},
        {"ttfa_s", a->rate.play.ttfa},
    };
    const struct tb_cli_json_field played[] = {
        {"output_latency_s", x->latency}, {"first_audio_s", x->first_audio},
        {"end_audio_s", x->end_audio},    {"speech_played_s", x->speech},
        {"concealed_s", x->concealed},    {"concealment_events", (double)x->concealment_events},
        {"underruns", x->underruns},      {"interruptions", x->interruptions},
        {"gap_total_s", x->gap_total},    {"gap_max_s", x->gap_max},
    };
    tb_cli_json_nums(au, synth, sizeof(synth) / sizeof(synth[0]));
    if (a->have_rate) {
        cJSON *rm = cJSON_AddObjectToObject(au, "rate_model");
        if (rm != NULL)
            tb_cli_json_nums(rm, rate, sizeof(rate) / sizeof(rate[0]));
    }
    if (a->sink == TB_SINK_NONE)
        return;
    cJSON_AddStringToObject(au, "stall_cue", tb_pcmring_cue_name(a->cue));
    if (audio_cut(a))
        cJSON_AddNumberToObject(au, "cut_s", a->res.cut_s);
    else
        cJSON_AddNullToObject(au, "cut_s");
    tb_cli_json_nums(au, played, sizeof(played) / sizeof(played[0]));
    cJSON_AddBoolToObject(au, "forced_start", x->forced_start);
    cJSON_AddNumberToObject(au, "device_underflows", (double)x->device_underflows);
    gl = cJSON_AddArrayToObject(au, "gaps");
    for (size_t i = 0; gl != NULL && i < a->ngaps; i++) {
        const struct tb_cli_json_field gap[] = {{"at_s", a->gaps[i].at}, {"gap_s", a->gaps[i].len}};
        cJSON *g = cJSON_CreateObject();
        if (g == NULL)
            break;
        tb_cli_json_nums(g, gap, 2);
        cJSON_AddItemToArray(gl, g);
    }
}

void tb_cli_audio_free(struct tb_cli_audio *a)
{
    tb_speaker_destroy(a->sp);
    a->sp = NULL;
    free(a->gaps);
    a->gaps = NULL;
    if (a->html_f != NULL)
        fclose(a->html_f);
    a->html_f = NULL;
}
