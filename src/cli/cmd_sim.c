/*
 * cmd_sim.c - `ttsbuf sim`: play a token stream out on the simulated clock
 * and report underruns, time to first audio and the minimum TPS.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "cli.h"
#include "common.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/import.h"
#include "ttsbuf/error.h"
#include "ttsbuf/sim.h"

#define DEFAULT_PRESET "demo"

static void usage(FILE *f)
{
    fprintf(f, "Usage: ttsbuf sim [SOURCE] [OPTIONS]\n"
               "Play a token stream out at speech rate on a simulated clock and report\n"
               "where the audio would run dry and how many tokens/s would have been enough.\n"
               "\nSource (one):\n");
    tb_cli_usage_sources(f, DEFAULT_PRESET);
    fprintf(f,
            "  --import FORMAT:FILE\n"
            "                     another tool's benchmark results, one stream a request:\n"
            "                     vllm (vllm bench serve --save-result --save-detailed JSON),\n"
            "                     sglang (bench_serving --output-details JSONL), genai-perf\n"
            "                     (profile_export.json), aiperf-raw (profile_export_raw.jsonl),\n"
            "                     aiperf (profile_export.jsonl).  vllm/sglang keep no per-chunk\n"
            "                     text: the request's text is cut into token-like pieces spread\n"
            "                     evenly over its chunks (chunk k at ttft + sum of the first k\n"
            "                     itls); aiperf keeps none: synthetic prose is spoken\n"
            "  --request N        with --import: play request N (from 0) with the full report;\n"
            "                     without it a file of several requests gives one line per\n"
            "                     request and P50/P95/P99/max over them (--json: one object\n"
            "                     a line per request)\n");
    fprintf(f, "\nPlayout and output:\n");
    tb_cli_usage_playout(f);
    tb_cli_audio_usage(f);
    fprintf(f, "  -h, --help         this help\n"
               "\nExit status: 0 ran, 1 --fail-on-underrun and there were underruns,\n"
               "2 bad usage or bad input.\n");
    tb_cli_usage_tables(f);
}

enum { O_IMPORT = TB_O__COMMON_END, O_REQUEST };

static const struct option longopts[] = {
    TB_SOURCE_LONGOPTS,
    {"import", required_argument, NULL, O_IMPORT},
    {"request", required_argument, NULL, O_REQUEST},
    TB_PLAYOUT_LONGOPTS,
    TB_AUDIO_LONGOPTS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int tb_cmd_sim(int argc, char **argv)
{
    struct tb_cli_common a;
    struct tb_cli_audio au;
    struct tb_stream s;
    struct tb_sim_result r;
    struct tb_report_src src = {"", ""};
    struct tb_gap_list gaps = {NULL, 0, 0};
    struct tb_cli_plays plays;
    struct tb_clock clk;
    char label[512], err[512];
    const char *import = NULL;
    long request = -1;
    size_t z;
    int c, code = -1, rc;

    tb_cli_common_init(&a);
    memset(&plays, 0, sizeof(plays));
    plays.gaps = &gaps;
    tb_cli_audio_init(&au);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return TB_EXIT_OK;
        }
        if (c == O_IMPORT) {
            import = optarg;
            continue;
        }
        if (c == O_REQUEST) {
            if (tb_opt_size("--request", optarg, 0, TB_IMPORT_REQUESTS_MAX - 1, &z, err,
                            sizeof(err)) != 0) {
                tb_cli_error("%s", err);
                return TB_EXIT_USAGE;
            }
            request = (long)z;
            continue;
        }
        rc = tb_cli_common_option(&a, c, optarg);
        if (rc == 0)
            rc = tb_cli_audio_option(&au, c, optarg);
        if (rc < 0)
            return TB_EXIT_USAGE;
        if (rc == 0)
            return tb_cli_bad_option("sim", c, argv);
    }
    if (optind < argc) {
        tb_cli_error("sim: unexpected argument '%s' (see ttsbuf sim --help)", argv[optind]);
        return TB_EXIT_USAGE;
    }
    plays.keep_all = a.svg != NULL;
    if (request >= 0 && import == NULL) {
        tb_cli_error("--request needs --import");
        return TB_EXIT_USAGE;
    }
    tb_stream_init(&s);
    code = tb_cli_outputs_check("sim", &a);
    if (code < 0)
        code = tb_cli_audio_probe(&au);
    if (code >= 0)
        goto out;
    if (import != NULL)
        code = tb_cli_import(&a, import, request, &s, &src, label, sizeof(label));
    else
        code = tb_cli_load_source(&a, DEFAULT_PRESET, &s, &src, label, sizeof(label));
    if (code < 0 && a.record != NULL)
        code = tb_cli_record(a.record, &s);
    if (code >= 0)
        goto out;

    if (tb_cli_audio_wanted(&au)) {
        tb_cli_audio_rate_model(&au, &s, &a.o);
        code = tb_cli_audio_start(&au, &a.o);
        if (code >= 0)
            goto out;
    }
    if (tb_cli_audio_realtime(&au))
        tb_clock_monotonic_init(&clk);
    else
        tb_clock_virtual_init(&clk);
    rc = tb_sim_run(&s, &a.o, &clk, tb_cli_collect_play, &plays, &r, err, sizeof(err));
    code = tb_cli_audio_finish(&au);
    if (rc != 0) {
        tb_cli_error("%s: %s", src.name, err);
        code =
            rc == TB_EEMPTY || rc == TB_ETOOBIG || rc == TB_EINVAL ? TB_EXIT_USAGE : TB_EXIT_FAILED;
        goto out;
    }
    if (code >= 0)
        goto out;
    if (a.svg != NULL) {
        code = tb_cli_svg_timeline(a.svg, &src, &a.o, &s, &plays.all, &r);
        if (code >= 0)
            goto out;
    }
    if (a.json) {
        if (tb_report_json_audio(stdout, &src, &a.o, &r, &gaps, NULL, &au) != 0) {
            tb_cli_error("out of memory writing JSON");
            code = TB_EXIT_USAGE;
            goto out;
        }
    } else {
        FILE *rf = tb_cli_report_file(&a);
        tb_report_human(rf, &src, &a.o, &r, &gaps, a.max_gaps, NULL);
        tb_cli_audio_report(rf, &au, &a.o, &r, a.max_gaps);
    }
    code = TB_EXIT_OK;
    if (a.fail_on_underrun && r.play.underruns > 0) {
        tb_cli_error("--fail-on-underrun: %u underruns, %.2f s of silence", r.play.underruns,
                     r.play.gap_total);
        code = TB_EXIT_GATE;
    }
out:
    tb_cli_audio_free(&au);
    free(gaps.v);
    free(plays.all.v);
    tb_stream_free(&s);
    return code;
}
