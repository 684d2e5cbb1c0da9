/*
 * options.c - the options every command that plays a stream shares
 * (see options.h): their rows, their handler, the checks on the outputs
 * they name, and the tables after their --help.
 */
#include "options.h"

#include <string.h>

#include "audio.h"
#include "cli.h"
#include "outputs.h"
#include "request.h"
#include "ttsbuf/error.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/voice.h"

void tb_cli_common_init(struct tb_cli_common *a)
{
    memset(a, 0, sizeof(*a));
    tb_sim_opts_default(&a->o);
    tb_cli_tts_init(&a->tts);
    tb_cli_turn_init(&a->turn);
    a->max_gaps = 10;
    a->request = -1;
}

int tb_cli_common_option(struct tb_cli_common *a, int c, const char *arg)
{
    size_t z;
    switch (c) {
    case TB_O_TRACE:
        a->trace = arg;
        a->nsources++;
        return 0;
    case TB_O_SYNTH:
        a->synth = arg;
        a->nsources++;
        return 0;
    case TB_O_PRESET:
        a->preset = arg;
        a->nsources++;
        return 0;
    case TB_O_JSON: a->json = 1; return 0;
    case TB_O_RECORD: a->record = arg; return 0;
    case TB_O_FAILU: a->fail_on_underrun = 1; return 0;
    case TB_O_REBUFFER: a->o.play.rebuffer = 1; return 0;
    case TB_O_SVG: a->svg = arg; return 0;
    case TB_O_HTML: a->html = arg; return 0;
    case TB_O_CHUNK:
        if (tb_seg_policy_parse(arg, &a->o.seg.policy) != 0) {
            tb_cli_error("--chunk: unknown policy '%s' (see --help)", arg);
            return TB_EINVAL;
        }
        a->tts.chunk_set = 1;
        return 0;
    case TB_O_MAXDELAY: {
        double ms = 0;
        int rc = tb_cli_opt_double("--max-buffer-delay", arg, 1, 5000, &ms);
        a->o.seg.max_delay_s = rc == 0 ? ms / 1000.0 : a->o.seg.max_delay_s;
        a->tts.delay_set = rc == 0;
        return rc;
    }
    case TB_O_IDLEFLUSH: {
        int rc = tb_cli_opt_double("--idle-flush", arg, 0.001, 60, &a->o.seg.idle_s);
        a->tts.idle_set = rc == 0;
        return rc;
    }
    case TB_O_MINCHARS: {
        int rc = tb_cli_opt_size("--min-chars", arg, 1, 100000, &z);
        a->o.seg.min_chars = rc == 0 ? (uint32_t)z : a->o.seg.min_chars;
        return rc;
    }
    case TB_O_WPM: return tb_cli_opt_double("--wpm", arg, TB_WPM_MIN, TB_WPM_MAX, &a->o.play.wpm);
    case TB_O_PREROLL: return tb_cli_opt_double("--preroll", arg, 0, 3600, &a->o.play.preroll);
    case TB_O_SLOTS:
        return tb_cli_opt_size("--ring-slots", arg, 2, (size_t)1 << 30, &a->o.ring_slots);
    case TB_O_BYTES:
        return tb_cli_opt_size("--ring-bytes", arg, 64, (size_t)1 << 30, &a->o.ring_bytes);
    case TB_O_GAPS: return tb_cli_opt_size("--gaps", arg, 0, SIZE_MAX, &a->max_gaps);
    default: {
        int rc = tb_cli_tts_option(&a->tts, c, arg);
        return rc == TB_CLI_NOT_MINE ? tb_cli_turn_option(&a->turn, c, arg) : rc;
    }
    }
}

void tb_cli_common_free(struct tb_cli_common *a)
{
    tb_cli_tts_free(&a->tts);
    tb_cli_turn_free(&a->turn);
}

int tb_cli_groups_option(struct tb_cli_common *a, struct tb_cli_request *q, struct tb_cli_audio *au,
                         int c, const char *arg)
{
    int rc = a != NULL ? tb_cli_common_option(a, c, arg) : TB_CLI_NOT_MINE;
    if (rc == TB_CLI_NOT_MINE && q != NULL)
        rc = tb_cli_request_option(q, c, arg);
    if (rc == TB_CLI_NOT_MINE && au != NULL)
        rc = tb_cli_audio_option(au, c, arg);
    return rc;
}

int tb_cli_outputs_check(const char *cmd, const struct tb_cli_common *a)
{
    int rc = 0;
    if (a->json && a->record != NULL && strcmp(a->record, "-") == 0) {
        tb_cli_error("%s: --json and --record - would both write to stdout; give --record a file",
                     cmd);
        return TB_EINVAL;
    }
    if (a->record != NULL)
        rc = tb_cli_output_probe("--record", a->record);
    if (rc == 0 && a->svg != NULL)
        rc = tb_cli_output_probe("--svg", a->svg);
    return rc;
}

FILE *tb_cli_report_file(const struct tb_cli_common *a)
{
    return a->record != NULL && strcmp(a->record, "-") == 0 ? stderr : stdout;
}

const struct tb_optdoc tb_opt_sources[] = {
    {"trace", TB_O_TRACE, "FILE", "a JSONL trace ('-' reads standard input)",
     "One object per line, {\"t\": SECONDS, \"text\": \"...\"}: see ttsbuf-trace(5)."},
    {"synth", TB_O_SYNTH, "SPEC",
     "a synthetic stream, e.g. tps=80,ttft=0.3,tokens=400,jitter=0.3,stall=0.02:1.5,burst=1,seed=7 "
     "(tps: mean tokens/s; ttft: s to first token; jitter: CV of inter-token times; stall=P:S "
     "adds S s to a gap with probability P; burst: tokens per event)",
     "The same spec and seed give the same stream, byte for byte."},
    {"preset", TB_O_PRESET, "NAME", "a named synthetic stream (listed below)",
     "Presets are published figures, not measurements."},
    TB_OPTDOC_END,
};

_Static_assert(TB_RING_SLOTS_DEFAULT == 65536u, "--ring-slots' help states the default");
_Static_assert(TB_RING_BYTES_DEFAULT == 4194304u, "--ring-bytes' help states the default");
_Static_assert((int)TB_WPM_MIN == 20 && (int)TB_WPM_MAX == 1000, "--wpm's help states the range");

const struct tb_optdoc tb_opt_playout[] = {
    {"chunk", TB_O_CHUNK, "POLICY", "how the TTS takes text (default sentence; listed below)",
     NULL},
    {"min-chars", TB_O_MINCHARS, "N", "sentence/clause: a chunk needs N code points (default 1)",
     "Allowed 1..100000."},
    {"max-buffer-delay", TB_O_MAXDELAY, "MS",
     "the longest Cartesia holds a chunk's first text, ms (max_buffer_delay_ms; --chunk "
     "cartesia; default 3000, its documented default)",
     "Allowed 1..5000 (Cartesia's range is 0..5000; 0 turns its buffering off, so the client's "
     "chunks go as they are: use the client's own --chunk). Only with --chunk cartesia, or a --tts "
     "preset that implies it."},
    {"idle-flush", TB_O_IDLEFLUSH, "S",
     "a chunk closes once S seconds pass with no new event (--chunk idle; default 0.5)",
     "Allowed 0.001..60. Only with --chunk idle."},
    {"wpm", TB_O_WPM, "W",
     "speech rate, words/min; a word is 6 code points (default 150, allowed 20..1000; with "
     "--voice-model espeak, eSpeak's rate: 80..450, and up to 900 through sonic)",
     NULL},
    {"preroll", TB_O_PREROLL, "S", "start playback once S seconds of audio are ready (default 0)",
     "Allowed 0..3600."},
    {"rebuffer", TB_O_REBUFFER, NULL,
     "after an underrun, resume only once --preroll seconds are buffered again (fewer, longer "
     "gaps; default off)",
     "As video players and jitter buffers do. A stream with no underrun plays the same either "
     "way, so the minimum TPS does not change."},
    {"ring-slots", TB_O_SLOTS, "N", "ring capacity in tokens (default 65536)",
     "Allowed 2..2^30, rounded up to a power of two."},
    {"ring-bytes", TB_O_BYTES, "N", "ring capacity in bytes of text (default 4194304, 4 MiB)",
     "Allowed 64..2^30, a power of two; an event's text must fit."},
    {"json", TB_O_JSON, NULL, "one JSON object on stdout instead of the report", NULL},
    {"fail-on-underrun", TB_O_FAILU, NULL,
     "exit 1 when the stream has any underrun, or gives no verdict (it was cut off or failed)",
     "A CI gate; in bench, the gate gapless_share=1."},
    TB_OPTDOC_END,
};

const struct tb_optdoc tb_opt_report[] = {
    {"gaps", TB_O_GAPS, "N", "list at most N gaps in the report (default 10)", NULL},
    {"record", TB_O_RECORD, "FILE", "also write the stream as a JSONL trace ('-': stdout)",
     "With -, the human report goes to standard error and --json is refused (two outputs on one "
     "stream). This path, --svg's and --audio wav:'s are checked before any work (before run's "
     "request): an existing file must be writable, a new one is created and removed again; one "
     "that cannot be written is bad usage (exit 2)."},
    {"svg", TB_O_SVG, "FILE", "also draw the timeline (tokens, chunks, buffer, gaps) as SVG",
     "A standalone SVG: token arrivals, buffered audio over time, chunks as spoken, gaps shaded "
     "red with their length, first-token and first-audio markers."},
    {"html", TB_O_HTML, "FILE",
     "also write one self-contained HTML page: the report, the timeline, the audio a listener "
     "would have heard (eSpeak NG, as --audio wav:) with a play head, and the gaps to click; "
     "every number is the run's, as without --html",
     "The page makes no network request (a Content-Security-Policy meta tag says so) and reads "
     "without scripts. The audio is embedded as a base64 16-bit mono 22.05 kHz WAV (about 3.5 MB "
     "a minute), cut after 600 s. Keys: space or k play/pause, n the next gap, p the previous "
     "one. The audio is rendered at the run's voice model (--voice-model); not with --audio "
     "portaudio. With a real TTS, run --tts-url embeds its own audio; sim --trace of a trace "
     "that kept a real TTS's timings (not its audio) draws the measured arrivals, without audio."},
    TB_OPTDOC_END,
};

void tb_cli_usage_chunks(FILE *f)
{
    fprintf(f, "\nChunk policies:\n");
    for (int i = 0; i < TB_CHUNK__COUNT; i++) {
        fprintf(f, "  %-14s ", tb_seg_policy_name((enum tb_chunk_policy)i));
        tb_cli_wrap(f, tb_seg_policy_about((enum tb_chunk_policy)i), 17, 17);
    }
}

void tb_cli_usage_presets(FILE *f)
{
    size_t np;
    const struct tb_preset *ps = tb_preset_all(&np);
    fprintf(f, "\nPresets (published figures, not measurements; see ttsbuf(1)):\n");
    for (size_t i = 0; i < np; i++) {
        fprintf(f, "  %-17s ", ps[i].name);
        tb_cli_wrap(f, ps[i].about, 20, 20);
    }
}

void tb_cli_usage_playout(FILE *f)
{
    tb_cli_usage_chunks(f);
    tb_cli_usage_presets(f);
    tb_cli_usage_tts_presets(f);
}
