/*
 * cmd_sweep.c - `ttsbuf sweep`: the playout model over many streams and a
 * grid of settings; statistics across the streams per setting, the
 * smallest pre-roll and token rate for a gap-free share, and the tuning
 * picture.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_import.h"
#include "html_report.h"
#include "optdoc.h"
#include "options.h"
#include "outputs.h"
#include "sources.h"
#include "sweep_axis.h"
#include "sweep_cap.h"
#include "sweep_out.h"
#include "sweep_rec.h"
#include "sweep_tool.h"
#include "tts_opts.h"
#include "turn_opts.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/svg.h"
#include "ttsbuf/sweep.h"
#include "ttsbuf/voice.h"

enum {
    O_TRACE = 256,
    O_SYNTH,
    O_PRESET,
    O_SEEDS,
    O_IMPORT,
    O_CHUNK,
    O_MINCHARS,
    O_WPM,
    O_LAT,
    O_PREROLL,
    O_TPS,
    O_REBUFFER,
    O_TARGET,
    O_CSV,
    O_JSON,
    O_SVG,
    O_HTML,
    O_THREADS,
    O_RUN,
    O_CPT,
    O_CONC,
    O_RTF,
    O_LATP50,
    O_LATSHAPE,
    O_TARGET_V2V
};

static const struct tb_optdoc sweep_sources[] = {
    {"trace", O_TRACE, "PATH",
     "a JSONL trace, a directory (every *.jsonl in it) or a quoted glob ('runs/*.jsonl'); FILE "
     "arguments are traces too",
     "Repeatable; a directory's files are taken sorted."},
    {"synth", O_SYNTH, "SPEC", "a synthetic stream (see ttsbuf sim --help; repeatable)", NULL},
    {"preset", O_PRESET, "NAME", "a named synthetic stream (repeatable; listed below)", NULL},
    {"seeds", O_SEEDS, "A:B", "each --synth and --preset once per seed A..B (B-A < 10^6)",
     "Without it, each spec's own seed."},
    {"import", O_IMPORT, "[FMT:]FILE",
     "every request of a benchmark tool's results (formats as in ttsbuf sim --help; failed or "
     "empty requests are skipped)",
     NULL},
    {"run", O_RUN, "N", "with --import: only run N (from 1) of a file of several", NULL},
    {"chars-per-token", O_CPT, "X",
     "with --import of a file without text: characters of speech a token, 0.5 to 100 (default 4)",
     NULL},
    TB_OPTDOC_END,
};

static const struct tb_optdoc sweep_axes[] = {
    {"chunk", O_CHUNK, "LIST",
     "chunking policies (all: every one but the time-based cartesia and idle, which sweep does not "
     "take; default sentence; listed below)",
     NULL},
    {"min-chars", O_MINCHARS, "LIST", "sentence/clause minimum chunk size (default 1)", NULL},
    {"wpm", O_WPM, "LIST", "speech rates, words/min (default 150)", NULL},
    {"tts-latency", O_LAT, "LIST", "constant TTS first-byte latencies, seconds (default 0)",
     "Allowed 0..60. A distribution is swept by its median: --tts-latency-p50."},
    {"tts-latency-p50", O_LATP50, "LIST",
     "medians of a first-byte latency distribution, seconds, of the shape --tts-latency-shape "
     "gives (or --tts's)",
     "Not with --tts-latency. Each value A is the spec that --tts-latency A's shape would be in "
     "ttsbuf sim: lognormal:p50=A,p90=A x RATIO or uniform:A-W/2..A+W/2 (its ends 0..60; a "
     "log-normal's median at least 0.001); the JSON and CSV give each setting's spec, "
     "tts_latency."},
    {"tts-latency-shape", O_LATSHAPE, "SHAPE",
     "with --tts-latency-p50: lognormal:ratio=R (p90 = R x p50, R >= 1) or uniform:width=W "
     "(seconds)",
     "Without it --tts PRESET's shape is used (a log-normal's p90/p50, a uniform's width); a "
     "constant or FILE preset has none, and then it is required."},
    {"tts-concurrency", O_CONC, "LIST",
     "TTS chunks synthesized at once, whole numbers 0..1024 (default 0: unlimited)", NULL},
    {"tts-rtf", O_RTF, "LIST",
     "TTS seconds of synthesis per second of audio, 0..100 (default 0: instant)", NULL},
    {"tts-seed", TB_O_TTS_SEED, "N",
     "the seed of the latency draws, the same for every stream and setting (default 0)",
     "Allowed 0..2^64-1. Every setting draws the same latencies for the same chunk, so settings "
     "differ by their parameters, not by luck."},
    {"tts-connect", TB_O_TTS_CONNECT, "S",
     "extra first-byte latency of each stream's first chunk (default 0)", "Allowed 0..60."},
    {"tts-output", TB_O_TTS_OUTPUT, "MODE",
     "how the TTS returns a chunk's audio, at every setting: stream (default) or whole (all of "
     "it once synthesized, RTF x its duration after it starts; see ttsbuf sim --help)",
     NULL},
    {"tts", TB_O_TTS_PRESET, "PRESET",
     "a TTS engine's published figures (listed below) as the value of each TTS option not given",
     "Its latency becomes --tts-latency (a constant) or --tts-latency-p50 and its shape; a "
     "FILE latency cannot be swept (give --tts-latency or --tts-latency-p50)."},
    {"preroll", O_PREROLL, "LIST", "seconds (default 0)", NULL},
    {"tps", O_TPS, "LIST",
     "re-time every stream to a constant rate, tokens/s, from its own first-token time; 0 keeps "
     "the recorded times (default 0)",
     NULL},
    {"rebuffer", O_REBUFFER, "MODE",
     "off, on, or both (compare; default off): see ttsbuf sim --help", NULL},
    TB_OPTDOC_END,
};

static const struct tb_optdoc sweep_output[] = {
    {"target-gapless", O_TARGET, "X",
     "with 0 < X <= 1: the smallest pre-roll per setting, and the smallest constant TPS per row, "
     "for a share X gap-free",
     "Both come from exact per-stream quantities (the start chunk and the minimum TPS), not from "
     "a grid; the pre-roll to the millisecond."},
    {"target-v2v", O_TARGET_V2V, "S",
     "which chunk policy, min-chars, TTS concurrency and pre-roll keep the v2v P95 at or under S "
     "seconds with the --target-gapless share gap-free (every stream without it)",
     "Allowed 0.001..3600. Per combination of the other axes, the setting that meets both with "
     "the smallest v2v P95 (ties: the smaller mean total gap, then the first), or none."},
    {"csv", O_CSV, "FILE", "one row per setting ('-': stdout)", NULL},
    {"json", O_JSON, "FILE", "one JSON object ('-': stdout)", NULL},
    {"svg", O_SVG, "FILE",
     "the tuning picture: gap-free share against pre-roll, one line per other setting, and a "
     "heat map of two numeric axes",
     "A dashed line marks the target; the heat map is over the first two numeric axes with "
     "several values."},
    {"html", O_HTML, "FILE",
     "one self-contained HTML page: the tuning picture, the inverse answers and the table",
     "No network request, no script needed to read it; the --json object is embedded. With "
     "--eou, --tts-lead or --target-v2v each point of the picture gives its v2v P50 and P95 "
     "(the table's column)."},
    {"threads", O_THREADS, "N", "worker threads (default: the online CPUs, at most 64)",
     "Allowed 1..64."},
    {"quiet", 'q', NULL,
     "no table and no progress line: errors only (--csv, --json, --svg and --html are still "
     "written)",
     "The progress line shows only on a terminal anyway."},
    TB_OPTDOC_END,
};

_Static_assert(TB_SWEEP_THREADS_MAX == 64u, "--threads' help states the limit");

static const struct tb_optsec sweep_secs[] = {
    {"Sources (any number, mixed):", sweep_sources},
    {"Axes: a comma-separated list (0,0.5,1) or a range START:STOP:STEP (0:2:0.25),\n"
     "or both (0:1:0.25,2,4).  Every combination is a setting.",
     sweep_axes},
    {"The turn's wait (each stream i as turn i + 1, as ttsbuf sim):", tb_opt_turn},
    {"A TTS capacity shared by the streams (each stream one call's answer):", tb_opt_sweep_cap},
    {"Tool turns (bench --out's traces of their answers):", tb_opt_sweep_tool},
    {"Answers and output:", sweep_output},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

static const char *const sweep_notes[] = {
    "Percentiles interpolate linearly between the closest ranks (numpy's default). A stream is "
    "gap-free when it has no underrun (no gap over 1 ms).",
    "Streams that were cut off (interrupted, connection lost, a timeout or a cap) or failed (an "
    "HTTP or stream error, or a trace that holds no event), as their traces' end lines say, are "
    "counted and listed apart, never in a share; a trace without an end line is read as "
    "complete, and counted as of unknown end.",
    NULL,
};

static int cmd_sweep(int argc, char **argv);

/* --help's tables: the chunk policies, the stream presets and the TTS
 * presets. */
static void sweep_tail(FILE *f)
{
    tb_cli_usage_chunks(f);
    tb_cli_usage_presets(f);
    tb_cli_usage_tts_presets(f);
}

const struct tb_cmddoc tb_doc_sweep = {
    "sweep",
    "SOURCE... [AXES] [OPTIONS]",
    "Play many streams out under a grid of settings and report, per setting and\n"
    "across the streams: the share with no underrun, underruns and total gap (mean,\n"
    "P50, P95, max), interruptions, time to first audio and minimum TPS; and the\n"
    "smallest pre-roll and token rate that make a target share gap-free.\n",
    sweep_secs,
    "0 ran; 2 bad usage or bad input; 3 no stream to sweep (every one was cut off or failed, "
    "or an --import whose every request failed), or the run failed (out of memory, a write "
    "that failed).",
    sweep_tail,
    sweep_notes,
    cmd_sweep,
};

struct args {
    struct tb_cli_sources src;
    const char *synth[64], *preset[64], *import[64];
    size_t nsynth, npreset, nimport;
    struct tb_cli_import_opts io;
    int seeds;
    uint64_t seed_lo, seed_hi;
    struct tb_cli_axis ax[TB_AX__COUNT];
    struct tb_cli_tts tts; /* --tts-seed, --tts-connect, --tts-output, --tts */
    int lat_p50;           /* the latency axis holds medians */
    const char *lat_shape; /* --tts-latency-shape */
    double target, target_v2v;
    struct tb_cli_turn turn;       /* --eou, --tts-lead */
    struct tb_cli_sweep_cap cap;   /* --tts-capacity, --arrivals, --target-ttfa */
    struct tb_cli_sweep_tool tool; /* --tool-latency */
    const char *csv, *json, *svg, *html;
    size_t threads;
    int quiet;
};

/* One option (tb_cli_parse's handler). */
static int option(void *ud, int c, const char *arg)
{
    struct args *a = ud;
    size_t z;
    int rc;
    switch (c) {
    case O_TRACE: return tb_cli_sources_add_path(&a->src, arg);
    case TB_O_SWEEP_TOOL_LATENCY: return tb_cli_sweep_tool_option(&a->tool, arg);
    case O_SYNTH:
    case O_PRESET:
        if ((c == O_SYNTH ? a->nsynth : a->npreset) >= 64) {
            tb_cli_error("sweep: at most 64 --synth and 64 --preset");
            return TB_EINVAL;
        }
        if (c == O_SYNTH)
            a->synth[a->nsynth++] = arg;
        else
            a->preset[a->npreset++] = arg;
        return 0;
    case O_SEEDS: a->seeds = 1; return tb_cli_axis_seeds(arg, &a->seed_lo, &a->seed_hi);
    case O_IMPORT:
        if (a->nimport >= 64) {
            tb_cli_error("sweep: at most 64 --import");
            return TB_EINVAL;
        }
        a->import[a->nimport++] = arg;
        return 0;
    case O_RUN: return (tb_cli_import_option(&a->io, 'r', arg));
    case O_CPT: return (tb_cli_import_option(&a->io, 'c', arg));
    case O_CHUNK: return (tb_cli_axis_chunks(&a->ax[TB_AX_CHUNK], arg));
    case O_MINCHARS:
        return (tb_cli_axis_numbers(&a->ax[TB_AX_MINCHARS], "--min-chars", arg, 1, 100000));
    case O_WPM:
        return (tb_cli_axis_numbers(&a->ax[TB_AX_WPM], "--wpm", arg, TB_WPM_MIN, TB_WPM_MAX));
    case O_LAT:
    case O_LATP50:
        if (a->ax[TB_AX_LAT].n > 0 && a->lat_p50 != (c == O_LATP50)) {
            tb_cli_error("%s: not with %s (constants, or a distribution's medians: one latency "
                         "axis)",
                         c == O_LAT ? "--tts-latency" : "--tts-latency-p50",
                         c == O_LAT ? "--tts-latency-p50" : "--tts-latency");
            return TB_EINVAL;
        }
        a->lat_p50 = c == O_LATP50;
        return c == O_LAT ? tb_cli_axis_latency(&a->ax[TB_AX_LAT], arg)
                          : tb_cli_axis_numbers(&a->ax[TB_AX_LAT], "--tts-latency-p50", arg, 0, 60);
    case O_LATSHAPE: a->lat_shape = arg; return 0;
    case O_CONC:
        return (tb_cli_axis_list(&a->ax[TB_AX_CONC], "--tts-concurrency", arg, 0,
                                 TB_CLI_TTS_CONC_MAX, 1));
    case O_RTF:
        return (tb_cli_axis_numbers(&a->ax[TB_AX_RTF], "--tts-rtf", arg, 0, TB_CLI_TTS_RTF_MAX));
    case TB_O_TTS_SEED:
    case TB_O_TTS_CONNECT:
    case TB_O_TTS_OUTPUT:
    case TB_O_TTS_PRESET: return (tb_cli_tts_option(&a->tts, c, arg));
    case O_PREROLL: return (tb_cli_axis_numbers(&a->ax[TB_AX_PREROLL], "--preroll", arg, 0, 3600));
    case O_TPS: return (tb_cli_axis_numbers(&a->ax[TB_AX_TPS], "--tps", arg, 0, 100000));
    case O_REBUFFER:
        a->ax[TB_AX_REBUFFER].n = 0;
        if (strcmp(arg, "off") != 0 && strcmp(arg, "on") != 0 && strcmp(arg, "both") != 0) {
            tb_cli_error("--rebuffer: '%s' is not off, on or both", arg);
            return TB_EINVAL;
        }
        rc = strcmp(arg, "on") != 0 ? tb_cli_axis_push(&a->ax[TB_AX_REBUFFER], "--rebuffer", 0) : 0;
        if (rc == 0 && strcmp(arg, "off") != 0)
            rc = tb_cli_axis_push(&a->ax[TB_AX_REBUFFER], "--rebuffer", 1);
        return rc;
    case O_TARGET: return tb_cli_opt_share("--target-gapless", arg, &a->target);
    case O_TARGET_V2V: return tb_cli_opt_double("--target-v2v", arg, 0.001, 3600, &a->target_v2v);
    case O_CSV: a->csv = arg; return 0;
    case O_JSON: a->json = arg; return 0;
    case O_SVG: a->svg = arg; return 0;
    case O_HTML: a->html = arg; return 0;
    case O_THREADS:
        rc = tb_cli_opt_size("--threads", arg, 1, TB_SWEEP_THREADS_MAX, &z);
        a->threads = rc == 0 ? z : a->threads;
        return rc;
    case 'q': a->quiet = 1; return 0;
    default:
        rc = tb_cli_sweep_cap_option(&a->cap, c, arg);
        return rc != TB_CLI_NOT_MINE ? rc : tb_cli_turn_option(&a->turn, c, arg);
    }
}

/* The progress line: on a terminal only, at most ten times a second. */
struct progress {
    struct tb_clock clk;
    double last;
    int on;
};

static void on_progress(void *ud, size_t done, size_t total)
{
    struct progress *p = ud;
    double now = p->clk.now(&p->clk);
    if (!p->on || (now - p->last < 0.1 && done < total))
        return;
    p->last = now;
    fprintf(stderr, "\rttsbuf sweep: %3.0f%% (%zu of %zu units) %.1f s",
            100.0 * (double)done / (double)total, done, total, now);
    fflush(stderr);
}

/* Everything one `ttsbuf sweep` holds, from its options to its outputs. */
struct sweep {
    struct args a;
    struct tb_sweep *sw;
    struct tb_sweep_input *in;
    struct tb_cli_sweep_info ri;
    struct tb_cli_sweep_rec rec; /* what the recordings' models gave */
    FILE *out[4];                /* --csv, --json, --svg, --html, opened before the work */
};

static const char *const out_flag[4] = {"--csv", "--json", "--svg", "--html"};

static const char *out_path(const struct args *a, int i)
{
    return i == 0 ? a->csv : i == 1 ? a->json : i == 2 ? a->svg : a->html;
}

/* The options and the FILE operands (traces), then the sources the
 * options name (--synth, --preset over --seeds, --import). */
static int gather(struct sweep *x, int argc, char **argv)
{
    struct args *a = &x->a;
    int first, rc = tb_cli_parse(argc, argv, &tb_doc_sweep, option, a, &first);
    for (int i = first; rc == 0 && i < argc; i++)
        rc = tb_cli_sources_add_path(&a->src, argv[i]);
    for (size_t i = 0; rc == 0 && i < a->nsynth; i++)
        rc = tb_cli_sources_add_synth(&a->src, a->synth[i], 0, a->seeds, a->seed_lo, a->seed_hi);
    for (size_t i = 0; rc == 0 && i < a->npreset; i++)
        rc = tb_cli_sources_add_synth(&a->src, a->preset[i], 1, a->seeds, a->seed_lo, a->seed_hi);
    for (size_t i = 0; rc == 0 && i < a->nimport; i++)
        rc = tb_cli_sources_add_import(&a->src, a->import[i], &a->io);
    if (rc != 0)
        return rc;
    if (a->src.n == 0) {
        tb_cli_error("sweep: give at least one source (--trace, --synth, --preset or FILE)");
        return TB_EINVAL;
    }
    if (a->seeds && a->nsynth + a->npreset == 0) {
        tb_cli_error("sweep: --seeds applies to --synth and --preset; there is neither");
        return TB_EINVAL;
    }
    return 0;
}

/* The TTS options into the sweep's: the shape, the seed, the connect
 * latency, and --tts PRESET's figures as the default of each TTS axis. */
static int resolve_tts(struct args *a, struct tb_sweep_tts *t)
{
    struct tb_cli_tts *x = &a->tts;
    struct tb_playout_opts po;
    struct tb_seg_opts seg = {.policy = TB_CHUNK_SENTENCE, .min_chars = 1};
    double p50 = 0.0, v;
    int rc, no_shape;
    memset(t, 0, sizeof(*t));
    t->on = a->lat_p50 || a->lat_shape != NULL || a->ax[TB_AX_CONC].n > 0 ||
            a->ax[TB_AX_RTF].n > 0 || x->seed_set || x->connect_set || x->output_set ||
            x->preset != NULL;
    if (!t->on)
        return 0;
    if (a->lat_shape != NULL && (rc = tb_cli_axis_shape(a->lat_shape, t)) != 0)
        return rc;
    if (a->lat_shape != NULL && a->ax[TB_AX_LAT].n > 0 && !a->lat_p50) {
        tb_cli_error("--tts-latency-shape: not with --tts-latency (constants have no shape; "
                     "--tts-latency-p50 takes medians)");
        return TB_EINVAL;
    }
    /* The preset's figures, where no option gives one (tts_opts.c warns
     * of a figure no source gives). */
    x->conc_set |= a->ax[TB_AX_CONC].n > 0;
    x->rtf_set |= a->ax[TB_AX_RTF].n > 0;
    x->latency = a->ax[TB_AX_LAT].n > 0 ? "0" : NULL;
    tb_playout_opts_default(&po);
    /* The chunk policies are sweep's own axis (--chunk): a preset's
     * policy does not replace it. */
    x->chunk_set = 1;
    if ((rc = tb_cli_tts_apply(x, &seg, &po)) != 0)
        return rc;
    t->seed = x->seed;
    t->connect = x->connect;
    t->output = x->output;
    if (a->ax[TB_AX_CONC].n == 0 &&
        (rc = tb_cli_axis_push(&a->ax[TB_AX_CONC], "--tts-concurrency", x->concurrency)) != 0)
        return rc;
    if (a->ax[TB_AX_RTF].n == 0 &&
        (rc = tb_cli_axis_push(&a->ax[TB_AX_RTF], "--tts-rtf", x->rtf)) != 0)
        return rc;
    if (a->ax[TB_AX_LAT].n > 0 && !a->lat_p50)
        return 0; /* constants */
    if (a->ax[TB_AX_LAT].n == 0 && x->preset == NULL) {
        if (a->lat_shape != NULL) {
            tb_cli_error("--tts-latency-shape: give the medians with --tts-latency-p50");
            return TB_EINVAL;
        }
        return 0; /* the default constant, 0 */
    }
    {
        struct tb_sweep_tts ps = *t;
        no_shape = tb_cli_axis_preset_shape(x->lat, &ps, &p50);
        if (a->lat_shape == NULL && !no_shape) {
            t->shape = ps.shape;
            t->param = ps.param;
        }
    }
    if (a->ax[TB_AX_LAT].n == 0) {
        /* The preset's latency: its median (with its shape or the one
         * given), or its constant. */
        if (no_shape && x->lat != NULL) {
            tb_cli_error("--tts %s: its latency (%s) is a FILE's values, which cannot be swept; "
                         "give --tts-latency or --tts-latency-p50",
                         x->preset, x->spec);
            return TB_EINVAL;
        }
        if (no_shape && a->lat_shape != NULL) {
            tb_cli_error("--tts-latency-shape: --tts %s has a constant latency (%s); give the "
                         "medians with --tts-latency-p50",
                         x->preset, x->spec);
            return TB_EINVAL;
        }
        v = no_shape ? po.tts_latency : p50;
        return tb_cli_axis_push(&a->ax[TB_AX_LAT], "--tts-latency", v);
    }
    if (t->shape == TB_LAT_CONST) {
        tb_cli_error("--tts-latency-p50: give its shape with --tts-latency-shape "
                     "(lognormal:ratio=R or uniform:width=W)%s",
                     x->preset != NULL ? " (the preset's latency has none)" : "");
        return TB_EINVAL;
    }
    return 0;
}

/* Output files first: a path that cannot be written fails before the
 * work, not after it; one of them at most on stdout. */
static int open_outputs(struct sweep *x)
{
    int to_stdout = 0, rc = 0;
    for (int i = 0; i < 4; i++)
        to_stdout += out_path(&x->a, i) != NULL && strcmp(out_path(&x->a, i), "-") == 0;
    if (to_stdout > 1) {
        tb_cli_error("sweep: only one of --csv, --json, --svg and --html can write to stdout");
        return TB_EINVAL;
    }
    for (int i = 0; i < 4 && rc == 0; i++)
        if (out_path(&x->a, i) != NULL)
            x->out[i] = tb_cli_output_open(out_flag[i], out_path(&x->a, i), &rc);
    return rc;
}

/* The swept streams; one that kept a real TTS's timings refused without a
 * TTS model (sweep_rec.h); the recordings' models adopted where no option
 * gives them, as sim does. */
static int inputs(struct sweep *x)
{
    struct args *a = &x->a;
    int model = a->ax[TB_AX_LAT].n > 0 || a->ax[TB_AX_CONC].n > 0 || a->ax[TB_AX_RTF].n > 0 ||
                a->tts.preset != NULL || a->tts.connect_set || a->tts.output_set;
    int rc;
    x->ri.src = &a->src;
    x->ri.rec = &x->rec;
    x->in = tb_cli_sources_inputs(&a->src, &x->ri.st);
    if (x->in == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    if ((rc = tb_cli_sweep_rec_measured(x->in, x->ri.st.swept, model)) != 0)
        return rc;
    rc = tb_cli_sweep_rec_adopt(&x->rec, x->in, x->ri.st.swept, &a->turn, &a->ax[TB_AX_LAT],
                                model || a->lat_p50 || a->lat_shape != NULL);
    /* --tool-latency's table replays the tool waits (sweep_tool.h) */
    tb_cli_turn_tool_warn("sweep", a->tool.ax.n > 0 ? 0 : x->rec.tool, x->ri.st.swept, NAN);
    return rc;
}

/* The grid over every complete stream.  Cut-off and failed streams are
 * listed, not swept: no share counts them as gap-free, and one failed
 * recording does not stop the rest; with none left, there is nothing to
 * measure (TB_CLI_EFAILED). */
static int run_sweep(struct sweep *x)
{
    struct args *a = &x->a;
    struct tb_sweep_opts so;
    struct progress pr;
    char err[512];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int rc;
    tb_sweep_opts_default(&so);
    for (int i = 0; i < TB_AX__COUNT; i++) {
        so.axis[i] = a->ax[i].v;
        so.n[i] = a->ax[i].n;
    }
    so.target = a->target;
    so.target_v2v = a->target_v2v;
    if ((rc = inputs(x)) != 0 || (rc = resolve_tts(a, &so.tts)) != 0)
        return rc;
    {
        /* the turn's wait: sim's models, drawn per stream and chunk */
        struct tb_sim_opts turn = {0};
        if ((rc = tb_cli_turn_apply(&a->turn, a->tts.seed, a->tts.seed, &turn)) != 0)
            return rc;
        so.eou_at = x->rec.eou > 0 ? tb_cli_sweep_rec_eou : turn.eou_at;
        so.eou_ud = x->rec.eou > 0 ? (void *)&x->rec : turn.eou_ud;
        so.lead_at = turn.lead_at;
        so.lead_ud = turn.lead_ud;
    }
    for (int i = TB_AX_CONC; i <= TB_AX_RTF; i++) {
        so.axis[i] = a->ax[i].v;
        so.n[i] = a->ax[i].n;
    }
    so.axis[TB_AX_LAT] = a->ax[TB_AX_LAT].v;
    so.n[TB_AX_LAT] = a->ax[TB_AX_LAT].n;
    x->ri.tts_preset = a->tts.preset;
    x->ri.wait = a->turn.eou != NULL || a->turn.lead != NULL || a->target_v2v > 0 || x->rec.eou;
    x->ri.cap = &a->cap;
    if (x->ri.st.swept == 0) {
        tb_cli_sweep_print_not_swept(stderr, &x->ri, 20);
        tb_cli_error("sweep: no complete stream to sweep (%zu cut off, %zu failed)",
                     x->ri.st.incomplete, x->ri.st.failed);
        return TB_CLI_EFAILED;
    }
    if ((rc = tb_cli_sweep_cap_apply(&a->cap, a->tts.seed, x->ri.st.swept, &so)) != 0)
        return rc;
    rc = tb_sweep_create(&so, x->in, x->ri.st.swept, &x->sw, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("sweep: %s", err);
        return rc;
    }
    x->ri.threads = a->threads ? (unsigned)a->threads
                               : (unsigned)(ncpu < 1                      ? 1
                                            : ncpu > TB_SWEEP_THREADS_MAX ? TB_SWEEP_THREADS_MAX
                                                                          : ncpu);
    tb_clock_monotonic_init(&pr.clk);
    pr.last = -1.0;
    pr.on = !a->quiet && isatty(STDERR_FILENO);
    rc = tb_sweep_run(x->sw, x->ri.threads, on_progress, &pr);
    x->ri.seconds = pr.clk.now(&pr.clk);
    if (pr.on)
        fprintf(stderr, "\r\033[K");
    if (rc != 0)
        tb_cli_error("sweep: %s", tb_strerror(rc));
    else
        rc = tb_cli_sweep_cap_search(&a->cap, &so, x->in, x->ri.st.swept, x->ri.threads);
    return rc != 0 ? rc
                   : tb_cli_sweep_tool_run(&a->tool, &so, x->in, x->ri.st.swept, x->ri.threads,
                                           &x->ri.tool);
}

/* The table (unless an output holds stdout), then each output, in order;
 * the first that fails stops the rest. */
static int write_outputs(struct sweep *x)
{
    struct args *a = &x->a;
    int rc = 0, wrc;
    if (!(x->out[0] == stdout || x->out[1] == stdout || x->out[2] == stdout ||
          x->out[3] == stdout) &&
        !a->quiet)
        tb_cli_sweep_print_table(stdout, x->sw, &x->ri);
    if (!a->quiet && x->out[1] != stdout && x->out[0] != stdout)
        tb_cli_sweep_cap_print(stdout, &a->cap, x->sw);
    for (int i = 0; i < 4; i++) {
        FILE *f = x->out[i];
        if (f == NULL)
            continue;
        x->out[i] = NULL;
        if (rc != 0) {
            if (f != stdout)
                fclose(f);
            continue;
        }
        wrc = i == 0   ? tb_cli_sweep_write_csv(f, x->sw, &x->ri)
              : i == 1 ? tb_cli_sweep_write_json(f, x->sw, &x->ri)
              : i == 2 ? tb_svg_sweep(f, x->sw, "ttsbuf sweep: how much buffer?", x->ri.wait)
                       : tb_cli_html_sweep(f, x->sw, &x->ri);
        rc = tb_cli_out_close(out_flag[i], out_path(a, i), f, wrc);
    }
    return rc;
}

/* ttsbuf sweep: gather the sources, open the outputs, sweep, write. */
static int cmd_sweep(int argc, char **argv)
{
    struct sweep x;
    int rc;
    memset(&x, 0, sizeof(x));
    tb_cli_sources_init(&x.a.src);
    tb_cli_import_opts_init(&x.a.io);
    tb_cli_tts_init(&x.a.tts);
    tb_cli_turn_init(&x.a.turn);
    rc = gather(&x, argc, argv);
    if (rc == 0)
        rc = open_outputs(&x);
    if (rc == 0)
        rc = run_sweep(&x);
    if (rc == 0)
        rc = write_outputs(&x);
    for (int i = 0; i < 4; i++)
        if (x.out[i] != NULL && x.out[i] != stdout)
            fclose(x.out[i]);
    tb_sweep_destroy(x.sw);
    free(x.in);
    tb_cli_sources_free(&x.a.src);
    tb_cli_tts_free(&x.a.tts);
    tb_cli_turn_free(&x.a.turn);
    tb_cli_sweep_cap_free(&x.a.cap);
    tb_cli_sweep_tool_free(&x.a.tool);
    for (int i = 0; i < TB_AX__COUNT; i++)
        free(x.a.ax[i].v);
    return tb_cli_exit(rc);
}
