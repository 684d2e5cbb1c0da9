/*
 * cmd_sim.c - `ttsbuf sim`: play a token stream out on the simulated clock
 * and report underruns, time to first audio and the minimum TPS.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/segment.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/trace.h"
#include "ttsbuf/voice.h"

#define DEFAULT_PRESET "demo"

static void usage(FILE *f)
{
    size_t np;
    const struct tb_preset *ps = tb_preset_all(&np);
    fprintf(f,
            "Usage: ttsbuf sim [SOURCE] [OPTIONS]\n"
            "Play a token stream out at speech rate on a simulated clock and report\n"
            "where the audio would run dry and how many tokens/s would have been enough.\n"
            "\n"
            "Source (one; default: --preset " DEFAULT_PRESET "):\n"
            "  --trace FILE       a JSONL trace ('-' reads standard input)\n"
            "  --synth SPEC       a synthetic stream, e.g.\n"
            "                     tps=80,ttft=0.3,tokens=400,jitter=0.3,stall=0.02:1.5,burst=1,seed=7\n"
            "                     (tps: mean tokens/s; ttft: s to first token; jitter: CV of\n"
            "                     inter-token times; stall=P:S adds S s to a gap with\n"
            "                     probability P; burst: tokens per event)\n"
            "  --preset NAME      a named synthetic stream (below)\n"
            "\n"
            "Playout:\n"
            "  --chunk POLICY     how the TTS takes text (default sentence; below)\n"
            "  --min-chars N      sentence/clause: a chunk needs N code points (default 1)\n"
            "  --wpm W            speech rate, words/min; a word is 6 code points\n"
            "                     (default 150, allowed 20..1000)\n"
            "  --tts-latency S    seconds from a chunk's completion to its audio (default 0)\n"
            "  --preroll S        start playback once S seconds of audio are ready (default 0)\n"
            "  --ring-slots N     ring capacity in tokens (default %u)\n"
            "  --ring-bytes N     ring capacity in bytes of text (default %u)\n"
            "\n"
            "Output:\n"
            "  --json             one JSON object on stdout instead of the report\n"
            "  --gaps N           list at most N gaps in the report (default 10)\n"
            "  --record FILE      also write the source stream as a JSONL trace\n"
            "  --fail-on-underrun exit 1 when the stream has any underrun\n"
            "  -h, --help         this help\n"
            "\n"
            "Exit status: 0 ran, 1 --fail-on-underrun and there were underruns,\n"
            "2 bad usage or bad input.\n"
            "\nChunk policies:\n",
            TB_RING_SLOTS_DEFAULT, TB_RING_BYTES_DEFAULT);
    for (int i = 0; i < TB_CHUNK__COUNT; i++)
        fprintf(f, "  %-14s %s\n", tb_seg_policy_name((enum tb_chunk_policy)i),
                tb_seg_policy_about((enum tb_chunk_policy)i));
    fprintf(f, "\nPresets (published figures, not measurements; see README):\n");
    for (size_t i = 0; i < np; i++)
        fprintf(f, "  %-17s %s\n", ps[i].name, ps[i].about);
}

enum {
    O_TRACE = 256, O_SYNTH, O_PRESET, O_CHUNK, O_MINCHARS, O_WPM, O_LAT, O_PREROLL,
    O_SLOTS, O_BYTES, O_JSON, O_GAPS, O_RECORD, O_FAILU
};

static const struct option longopts[] = {
    {"trace", required_argument, NULL, O_TRACE},
    {"synth", required_argument, NULL, O_SYNTH},
    {"preset", required_argument, NULL, O_PRESET},
    {"chunk", required_argument, NULL, O_CHUNK},
    {"min-chars", required_argument, NULL, O_MINCHARS},
    {"wpm", required_argument, NULL, O_WPM},
    {"tts-latency", required_argument, NULL, O_LAT},
    {"preroll", required_argument, NULL, O_PREROLL},
    {"ring-slots", required_argument, NULL, O_SLOTS},
    {"ring-bytes", required_argument, NULL, O_BYTES},
    {"json", no_argument, NULL, O_JSON},
    {"gaps", required_argument, NULL, O_GAPS},
    {"record", required_argument, NULL, O_RECORD},
    {"fail-on-underrun", no_argument, NULL, O_FAILU},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct sim_args {
    struct tb_sim_opts o;
    const char *trace, *synth, *preset, *record;
    int nsources, json, fail_on_underrun;
    size_t max_gaps;
};

static void on_play(void *ud, const struct tb_play *pl)
{
    struct tb_gap_list *g = ud;
    if (pl->gap <= 0.0)
        return;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        struct tb_play *v = realloc(g->v, cap * sizeof(*v));
        if (v == NULL)
            return; /* the list is a convenience; counts stay exact */
        g->v = v;
        g->cap = cap;
    }
    g->v[g->n++] = *pl;
}

/* Returns -1 to go on, or an exit code. */
static int parse(int argc, char **argv, struct sim_args *a)
{
    char err[256];
    int c, rc = 0;
    double d;
    size_t z;

    tb_sim_opts_default(&a->o);
    a->max_gaps = 10;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        err[0] = '\0';
        switch (c) {
        case 'h':
            usage(stdout);
            return TB_EXIT_OK;
        case O_TRACE: a->trace = optarg; a->nsources++; break;
        case O_SYNTH: a->synth = optarg; a->nsources++; break;
        case O_PRESET: a->preset = optarg; a->nsources++; break;
        case O_CHUNK:
            if (tb_seg_policy_parse(optarg, &a->o.seg.policy) != 0) {
                tb_cli_error("--chunk: unknown policy '%s' (see ttsbuf sim --help)", optarg);
                return TB_EXIT_USAGE;
            }
            break;
        case O_MINCHARS:
            rc = tb_opt_size("--min-chars", optarg, 1, 100000, &z, err, sizeof(err));
            a->o.seg.min_chars = (uint32_t)z;
            break;
        case O_WPM:
            rc = tb_opt_double("--wpm", optarg, TB_WPM_MIN, TB_WPM_MAX, &a->o.play.wpm, err,
                               sizeof(err));
            break;
        case O_LAT:
            rc = tb_opt_double("--tts-latency", optarg, 0, 60, &a->o.play.tts_latency, err,
                               sizeof(err));
            break;
        case O_PREROLL:
            rc = tb_opt_double("--preroll", optarg, 0, 3600, &a->o.play.preroll, err,
                               sizeof(err));
            break;
        case O_SLOTS:
            rc = tb_opt_size("--ring-slots", optarg, 2, (size_t)1 << 30, &a->o.ring_slots,
                             err, sizeof(err));
            break;
        case O_BYTES:
            rc = tb_opt_size("--ring-bytes", optarg, 64, (size_t)1 << 30, &a->o.ring_bytes,
                             err, sizeof(err));
            break;
        case O_JSON: a->json = 1; break;
        case O_GAPS:
            rc = tb_opt_size("--gaps", optarg, 0, SIZE_MAX, &a->max_gaps, err, sizeof(err));
            break;
        case O_RECORD: a->record = optarg; break;
        case O_FAILU: a->fail_on_underrun = 1; break;
        case ':':
            tb_cli_error("sim: %s needs a value", argv[optind - 1]);
            return TB_EXIT_USAGE;
        default:
            tb_cli_error("sim: unknown option '%s' (see ttsbuf sim --help)", argv[optind - 1]);
            return TB_EXIT_USAGE;
        }
        (void)d;
        if (rc != 0) {
            tb_cli_error("%s", err);
            return TB_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tb_cli_error("sim: unexpected argument '%s' (see ttsbuf sim --help)", argv[optind]);
        return TB_EXIT_USAGE;
    }
    if (a->nsources > 1) {
        tb_cli_error("sim: give one source: --trace, --synth or --preset");
        return TB_EXIT_USAGE;
    }
    return -1;
}

/* Loads the chosen source; returns -1 to go on, or an exit code. */
static int load(struct sim_args *a, struct tb_stream *s, struct tb_report_src *src,
                char *label, size_t labellen)
{
    char err[512];
    struct tb_synth_spec spec;
    int rc;

    if (a->trace != NULL) {
        src->kind = "trace";
        src->name = strcmp(a->trace, "-") == 0 ? "<stdin>" : a->trace;
        rc = tb_trace_load_file(a->trace, s, err, sizeof(err));
        if (rc != 0) {
            tb_cli_error("%s", err);
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
        const char *name = a->preset != NULL ? a->preset : DEFAULT_PRESET;
        const struct tb_preset *p = tb_preset_find(name);
        if (p == NULL) {
            tb_cli_error("--preset: unknown preset '%s' (see ttsbuf sim --help)", name);
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

static int record(const char *path, const struct tb_stream *s)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    int rc;
    if (f == NULL) {
        tb_cli_error("--record: cannot write %s", path);
        return TB_EXIT_USAGE;
    }
    rc = tb_trace_write(f, s);
    if (f != stdout && fclose(f) != 0)
        rc = TB_EIO;
    if (rc != 0) {
        tb_cli_error("--record: writing %s failed: %s", path, tb_strerror(rc));
        return TB_EXIT_USAGE;
    }
    return -1;
}

int tb_cmd_sim(int argc, char **argv)
{
    struct sim_args a;
    struct tb_stream s;
    struct tb_sim_result r;
    struct tb_report_src src = {"", ""};
    struct tb_gap_list gaps = {NULL, 0, 0};
    struct tb_clock clk;
    char label[512], err[512];
    int code, rc;

    memset(&a, 0, sizeof(a));
    code = parse(argc, argv, &a);
    if (code >= 0)
        return code;
    tb_stream_init(&s);
    code = load(&a, &s, &src, label, sizeof(label));
    if (code < 0 && a.record != NULL)
        code = record(a.record, &s);
    if (code >= 0)
        goto out;

    tb_clock_virtual_init(&clk);
    rc = tb_sim_run(&s, &a.o, &clk, on_play, &gaps, &r, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("%s: %s", src.name, err);
        code = TB_EXIT_USAGE;
        goto out;
    }
    if (a.json) {
        if (tb_report_json(stdout, &src, &a.o, &r, &gaps) != 0) {
            tb_cli_error("out of memory writing JSON");
            code = TB_EXIT_USAGE;
            goto out;
        }
    } else {
        tb_report_human(stdout, &src, &a.o, &r, &gaps, a.max_gaps);
    }
    code = TB_EXIT_OK;
    if (a.fail_on_underrun && r.play.underruns > 0) {
        tb_cli_error("--fail-on-underrun: %u underruns, %.2f s of silence", r.play.underruns,
                     r.play.gap_total);
        code = TB_EXIT_GATE;
    }
out:
    free(gaps.v);
    tb_stream_free(&s);
    return code;
}
