/*
 * common.c - options, sources and --help text shared by the subcommands
 * (see common.h).
 */
#include "common.h"
#include "audio.h"
#include "jsonout.h"
#include "request.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ttsbuf/error.h"
#include "ttsbuf/import.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/svg.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/trace.h"
#include "ttsbuf/voice.h"

void tb_cli_common_init(struct tb_cli_common *a)
{
    memset(a, 0, sizeof(*a));
    tb_sim_opts_default(&a->o);
    a->max_gaps = 10;
}

int tb_cli_common_option(struct tb_cli_common *a, int c, const char *arg)
{
    size_t z;
    switch (c) {
    case TB_O_TRACE:
        a->trace = arg;
        a->nsources++;
        return 1;
    case TB_O_SYNTH:
        a->synth = arg;
        a->nsources++;
        return 1;
    case TB_O_PRESET:
        a->preset = arg;
        a->nsources++;
        return 1;
    case TB_O_JSON: a->json = 1; return 1;
    case TB_O_RECORD: a->record = arg; return 1;
    case TB_O_FAILU: a->fail_on_underrun = 1; return 1;
    case TB_O_REBUFFER: a->o.play.rebuffer = 1; return 1;
    case TB_O_SVG: a->svg = arg; return 1;
    case TB_O_HTML: a->html = arg; return 1;
    case TB_O_CHUNK:
        if (tb_seg_policy_parse(arg, &a->o.seg.policy) != 0) {
            tb_cli_error("--chunk: unknown policy '%s' (see --help)", arg);
            return -1;
        }
        return 1;
    case TB_O_MINCHARS:
        if (tb_cli_opt_size("--min-chars", arg, 1, 100000, &z) < 0)
            return -1;
        a->o.seg.min_chars = (uint32_t)z;
        return 1;
    case TB_O_WPM: return tb_cli_opt_double("--wpm", arg, TB_WPM_MIN, TB_WPM_MAX, &a->o.play.wpm);
    case TB_O_LAT: return tb_cli_opt_double("--tts-latency", arg, 0, 60, &a->o.play.tts_latency);
    case TB_O_PREROLL: return tb_cli_opt_double("--preroll", arg, 0, 3600, &a->o.play.preroll);
    case TB_O_SLOTS:
        return tb_cli_opt_size("--ring-slots", arg, 2, (size_t)1 << 30, &a->o.ring_slots);
    case TB_O_BYTES:
        return tb_cli_opt_size("--ring-bytes", arg, 64, (size_t)1 << 30, &a->o.ring_bytes);
    case TB_O_GAPS: return tb_cli_opt_size("--gaps", arg, 0, SIZE_MAX, &a->max_gaps);
    default: return 0;
    }
}

int tb_cli_groups_option(struct tb_cli_common *a, struct tb_cli_request *q, struct tb_cli_audio *au,
                         int c, const char *arg)
{
    int rc = a != NULL ? tb_cli_common_option(a, c, arg) : 0;
    if (rc == 0 && q != NULL)
        rc = tb_cli_request_option(q, c, arg);
    if (rc == 0 && au != NULL)
        rc = tb_cli_audio_option(au, c, arg);
    return rc;
}

void tb_cli_trace_error(const char *cmd, const char *path, int rc, const char *err)
{
    enum tb_import_format fmt;
    const char *what = NULL;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = rc == TB_EFORMAT && strcmp(path, "-") != 0 ? fopen(path, "rb") : NULL;
    /* Another tool's benchmark result given as a trace is the common
     * mistake: its first 64 KiB say which tool's (as --import reads it). */
    if (f != NULL && (buf = malloc(65536)) != NULL)
        n = fread(buf, 1, 65536, f);
    if (f != NULL)
        fclose(f);
    if (n > 0 && tb_import_detect(buf, n, &fmt, &what) == 0 && what != NULL) {
        tb_cli_error("%s (this is %s, not a trace: read it with ttsbuf %s --import %s)", err, what,
                     cmd, path);
    } else {
        tb_cli_error("%s", err);
    }
    free(buf);
}

int tb_cli_source_operand(struct tb_cli_common *a, const char *cmd, int argc, char **argv,
                          int first)
{
    if (first >= argc)
        return -1;
    if (first + 1 < argc) {
        tb_cli_error("%s: unexpected argument '%s' (one source: see ttsbuf %s --help)", cmd,
                     argv[first + 1], cmd);
        return TB_EXIT_USAGE;
    }
    /* What sweep does with its FILE arguments: a bare name is a trace. */
    a->trace = argv[first];
    a->nsources++;
    return -1;
}

int tb_cli_load_source(const struct tb_cli_common *a, const char *default_preset,
                       struct tb_stream *s, struct tb_report_src *src, char *label, size_t labellen)
{
    char err[512];
    struct tb_synth_spec spec;
    int rc;

    if (a->nsources > 1) {
        tb_cli_error("give one source: a FILE (or --trace FILE), --synth or --preset");
        return TB_EXIT_USAGE;
    }
    if (a->trace != NULL) {
        src->kind = "trace";
        src->name = strcmp(a->trace, "-") == 0 ? "<stdin>" : a->trace;
        rc = tb_trace_load_file(a->trace, s, err, sizeof(err));
        if (rc == TB_EEMPTY && a->failed_ok && tb_end_class(s->end.kind) >= TB_END_CLASS_INCOMPLETE)
            return -1; /* a recording of a request that never got an event */
        if (rc != 0) {
            tb_cli_trace_error("sim", a->trace, rc, err);
            return TB_EXIT_USAGE;
        }
        return -1;
    }
    tb_synth_default(&spec);
    if (a->synth != NULL) {
        rc = tb_synth_parse(a->synth, &spec, err, sizeof(err));
        if (rc != 0) {
            tb_cli_error("--synth: %s", err);
            return TB_EXIT_USAGE;
        }
        src->kind = "synth";
        tb_synth_format(&spec, label, labellen);
        src->name = label;
    } else {
        const char *name = a->preset != NULL ? a->preset : default_preset;
        const struct tb_preset *p = tb_preset_find(name);
        if (p == NULL) {
            tb_cli_error("--preset: unknown preset '%s' (see --help)", name);
            return TB_EXIT_USAGE;
        }
        rc = tb_synth_parse(p->spec, &spec, err, sizeof(err));
        if (rc != 0) {
            tb_cli_error("preset %s: %s", name, err);
            return TB_EXIT_USAGE;
        }
        src->kind = "preset";
        snprintf(label, labellen, "%s (%s)", name, p->spec);
        src->name = label;
    }
    if (tb_synth_generate(&spec, s) != 0) {
        tb_cli_error("out of memory generating the stream");
        return TB_EXIT_USAGE;
    }
    return -1;
}

int tb_cli_output_probe(const char *opt, const char *path)
{
    struct stat st;
    int fd;
    if (strcmp(path, "-") == 0)
        return -1;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            tb_cli_error("%s: %s: %s", opt, path, strerror(EISDIR));
            return TB_EXIT_USAGE;
        }
        if (access(path, W_OK) != 0) {
            tb_cli_error("%s: %s: %s", opt, path, strerror(errno));
            return TB_EXIT_USAGE;
        }
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
        tb_cli_error("%s: %s: %s", opt, path, strerror(errno));
        return TB_EXIT_USAGE;
    }
    close(fd);
    unlink(path);
    return -1;
}

int tb_cli_outputs_check(const char *cmd, const struct tb_cli_common *a)
{
    int code = -1;
    if (a->json && a->record != NULL && strcmp(a->record, "-") == 0) {
        tb_cli_error("%s: --json and --record - would both write to stdout; give --record a file",
                     cmd);
        return TB_EXIT_USAGE;
    }
    if (a->record != NULL)
        code = tb_cli_output_probe("--record", a->record);
    if (code < 0 && a->svg != NULL)
        code = tb_cli_output_probe("--svg", a->svg);
    return code;
}

FILE *tb_cli_report_file(const struct tb_cli_common *a)
{
    return a->record != NULL && strcmp(a->record, "-") == 0 ? stderr : stdout;
}

int tb_cli_stdout_gone(void)
{
    /* errno may have been overwritten since the write that failed; a
     * pipe whose reader has gone reports POLLERR on its write end. */
    struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};
    if (!ferror(stdout))
        return 0;
    return errno == EPIPE || (poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0);
}

int tb_cli_out_close(const char *flag, const char *path, FILE *f, int rc)
{
    /* A writer that returns TB_EIO stopped at a failed write, whose errno
     * is still here; a failed close sets its own. */
    int e = rc == TB_EIO ? errno : 0;
    errno = 0;
    if (f == stdout ? fflush(f) != 0 : fclose(f) != 0) {
        if (rc == 0 || errno != 0)
            e = errno;
        if (rc == 0)
            rc = TB_EIO;
    }
    if (rc == 0)
        return -1;
    if (f == stdout) {
        errno = e;
        if (tb_cli_stdout_gone())
            return -1; /* the reader went away: quietly (main.c) */
    }
    tb_cli_error("%s: writing %s failed: %s", flag, path,
                 rc == TB_EIO && e != 0 ? strerror(e) : tb_strerror(rc));
    return TB_EXIT_USAGE;
}

int tb_cli_record(const char *path, const char *command, const struct tb_sim_opts *o,
                  const struct tb_stream *s)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    struct tb_stream h = *s; /* a view with this run's head; owns nothing */
    cJSON *opts = cJSON_CreateObject();
    char *otext = NULL;
    int rc;
    if (f == NULL) {
        cJSON_Delete(opts);
        tb_cli_error("--record: %s: %s", path, strerror(errno));
        return TB_EXIT_USAGE;
    }
    if (h.started_at[0] == '\0') {
        snprintf(h.started_at, sizeof(h.started_at), "%s", tb_cli_started_at());
        snprintf(h.command, sizeof(h.command), "%s", command);
    }
    /* A trace that came with its own head keeps it: the options are this
     * command's only when this command made the recording. */
    if (opts != NULL && strcmp(h.command, command) == 0) {
        tb_cli_json_playout(opts, o);
        otext = cJSON_PrintUnformatted(opts);
    }
    cJSON_Delete(opts);
    rc = otext != NULL ? tb_trace_write_opts(f, &h, otext) : tb_trace_write(f, &h);
    cJSON_free(otext);
    return tb_cli_out_close("--record", path, f, rc);
}

/* Appends a schedule to a list; on no memory the list just stops growing
 * (it is a convenience: the counts stay exact). */
static void play_push(struct tb_gap_list *g, const struct tb_play *pl)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        struct tb_play *v = realloc(g->v, cap * sizeof(*v));
        if (v == NULL)
            return;
        g->v = v;
        g->cap = cap;
    }
    g->v[g->n++] = *pl;
}

void tb_cli_collect_gap(void *ud, const struct tb_play *pl)
{
    if (pl->gap > 0.0)
        play_push(ud, pl);
}

int tb_cli_underrun_gate(const struct tb_cli_common *a, const struct tb_sim_result *r,
                         const struct tb_stream_end *end)
{
    int cls = end != NULL ? tb_end_class(end->kind) : TB_END_CLASS_COMPLETE;
    if (!a->fail_on_underrun)
        return TB_EXIT_OK;
    if (cls == TB_END_CLASS_INCOMPLETE || cls == TB_END_CLASS_FAILED) {
        tb_cli_error("--fail-on-underrun: no verdict: the stream %s (%s%s%s)",
                     cls == TB_END_CLASS_FAILED ? "failed" : "was cut off", tb_end_name(end->kind),
                     end->message[0] ? ": " : "", end->message);
        return TB_EXIT_GATE;
    }
    if (r->play.underruns == 0)
        return TB_EXIT_OK;
    fflush(stdout); /* after the report, on one terminal or log */
    tb_cli_error("--fail-on-underrun: %u underruns, %.2f s of silence", r->play.underruns,
                 r->play.gap_total);
    return TB_EXIT_GATE;
}

void tb_cli_plays_init(struct tb_cli_plays *p, int keep_all)
{
    memset(p, 0, sizeof(*p));
    p->keep_all = keep_all;
}

void tb_cli_plays_free(struct tb_cli_plays *p)
{
    free(p->gaps.v);
    free(p->all.v);
    tb_cli_plays_init(p, p->keep_all);
}

void tb_cli_collect_play(void *ud, const struct tb_play *pl)
{
    struct tb_cli_plays *p = ud;
    if (pl->gap > 0.0)
        play_push(&p->gaps, pl);
    if (p->keep_all)
        play_push(&p->all, pl);
}

int tb_cli_svg_timeline_to(FILE *f, const struct tb_report_src *src, const struct tb_sim_opts *o,
                           const struct tb_stream *s, const struct tb_gap_list *all,
                           const struct tb_sim_result *r, const struct tb_report_live *live)
{
    struct tb_svg_timeline t;
    char title[600], sub[320], tps[64];
    int cls = src->end != NULL ? tb_end_class(src->end->kind) : TB_END_CLASS_COMPLETE;
    int failed = cls == TB_END_CLASS_FAILED || (live != NULL && live->error_kind != NULL);
    int cut = cls == TB_END_CLASS_INCOMPLETE;
    /* the what-if is the report's: absent where it says "-" */
    if (tb_report_whatif_measured(src, r, live))
        snprintf(tps, sizeof(tps), "minimum TPS %.1f", r->play.min_tps);
    else
        snprintf(tps, sizeof(tps), "minimum TPS not measured");
    if (failed || cut)
        /* A cut-off or failed stream: what arrived, no verdict, no what-if. */
        snprintf(title, sizeof(title), "%s: %u gap%s before it %s; first audio at %.2f s; %s",
                 failed ? "Failed" : "Incomplete", r->play.underruns,
                 r->play.underruns == 1 ? "" : "s", failed ? "failed" : "was cut off",
                 r->play.ttfa, tps);
    else if (r->play.underruns == 0)
        snprintf(title, sizeof(title), "No gaps: first audio at %.2f s; %s", r->play.ttfa, tps);
    else
        snprintf(title, sizeof(title), "%u gap%s, %.2f s of silence; first audio at %.2f s; %s",
                 r->play.underruns, r->play.underruns == 1 ? "" : "s", r->play.gap_total,
                 r->play.ttfa, tps);
    snprintf(sub, sizeof(sub),
             "%s %.80s%s | chunk %s, %g wpm, TTS latency %g s, pre-roll %g s%s, voice model %s",
             src->kind, src->name, strlen(src->name) > 80 ? "..." : "",
             tb_seg_policy_name(o->seg.policy), o->play.wpm, o->play.tts_latency, o->play.preroll,
             o->play.rebuffer ? ", rebuffer" : "", tb_voice_model(o->voice));
    t.title = title;
    t.subtitle = sub;
    t.s = s;
    t.play = all->v;
    t.nplay = all->n;
    t.ttft = r->ttft;
    t.ttfa = r->play.ttfa;
    if (all->n != r->play.chunks)
        return TB_ENOMEM;
    return tb_svg_timeline(f, &t);
}

int tb_cli_svg_timeline(const char *path, const struct tb_report_src *src,
                        const struct tb_sim_opts *o, const struct tb_stream *s,
                        const struct tb_gap_list *all, const struct tb_sim_result *r,
                        const struct tb_report_live *live)
{
    FILE *f;
    int rc;
    if (all->n != r->play.chunks) {
        tb_cli_error("--svg: out of memory keeping the schedule");
        return TB_EXIT_USAGE;
    }
    f = fopen(path, "w");
    if (f == NULL) {
        tb_cli_error("--svg: cannot write %s", path);
        return TB_EXIT_USAGE;
    }
    rc = tb_cli_svg_timeline_to(f, src, o, s, all, r, live);
    return tb_cli_out_close("--svg", path, f, rc);
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
    {"wpm", TB_O_WPM, "W",
     "speech rate, words/min; a word is 6 code points (default 150, allowed 20..1000; with "
     "--voice-model espeak, eSpeak's rate: 80..450, and up to 900 through sonic)",
     NULL},
    {"tts-latency", TB_O_LAT, "S", "seconds from a chunk's completion to its audio (default 0)",
     "Allowed 0..60."},
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
     "portaudio."},
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
}

static atomic_int interrupted;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store_explicit(&interrupted, 1, memory_order_relaxed);
}

atomic_int *tb_cli_catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &interrupted;
}
