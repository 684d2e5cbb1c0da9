/*
 * cmd_sim.c - `ttsbuf sim`: play a token stream out on the simulated clock
 * and report underruns, time to first audio and the minimum TPS.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "chunks.h"
#include "html_report.h"
#include "cli.h"
#include "common.h"
#include "optdoc.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/import.h"
#include "ttsbuf/error.h"
#include "ttsbuf/sim.h"

#define DEFAULT_PRESET "demo"

enum { O_IMPORT = TB_O__COMMON_END, O_REQUEST, O_RUN, O_CPT, O_CHUNKS };

static const struct tb_optdoc sim_rows[] = {
    {"import", O_IMPORT, "[FORMAT:]FILE",
     "another tool's benchmark results, one stream a request (no FORMAT, or auto: told from the "
     "content, and named): vllm (vllm bench serve "
     "--save-result --save-detailed JSON), sglang (bench_serving --output-details JSONL), "
     "genai-perf (profile_export.json), aiperf-raw (profile_export_raw.jsonl), aiperf "
     "(profile_export.jsonl). vllm/sglang keep no per-chunk text: the request's text is cut into "
     "token-like pieces spread evenly over its chunks (chunk k at ttft + sum of the first k "
     "itls); aiperf keeps none: speech time is estimated from each chunk's tokens "
     "(--chars-per-token)",
     "genai-perf's and aiperf-raw's raw SSE go through the stream reader run and bench use: a "
     "request ends at an error event, and one with neither [DONE] nor a finish reason is marked "
     "truncated. Errors name the place: FILE:LINE or a "
     "JSON path such as itls[3][7]."},
    {"request", O_REQUEST, "N",
     "with --import: play request N (from 0) with the full report; without it a file of several "
     "requests gives one line per request and mean/p50/p95/p99/max over them (--json: one object a "
     "line per request)",
     NULL},
    {"run", O_RUN, "N",
     "with --import: only run N (from 1) of a file that holds several (vllm --append-result, "
     "sglang lines); without it every run's requests are read, named by their run",
     NULL},
    {"chars-per-token", O_CPT, "X",
     "with --import of a file without text: characters of speech a token, 0.5 to 100 (default 4)",
     "The report and the JSON say that speech time was estimated."},
    {"chunks", O_CHUNKS, NULL,
     "also list each chunk: its text, the content event (from 0) whose arrival released it (the "
     "last event for the chunk flushed at the end), ready, start and duration; with --json "
     "\"chunks\" is an array of {text, event, ready_s, start_s, duration_s} instead of the count",
     NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static const struct tb_optsec sim_secs[] = {
    {"Source (one; default --preset " DEFAULT_PRESET "):", tb_opt_sources},
    {NULL, sim_rows},
    {"Playout and output:", tb_opt_playout},
    {NULL, tb_opt_report},
    {"Speech (eSpeak NG):", tb_opt_audio},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

static void sim_tail(FILE *f)
{
    tb_cli_usage_chunks(f);
    tb_cli_usage_presets(f);
}

const struct tb_cmddoc tb_doc_sim = {
    "sim",
    "[SOURCE] [OPTIONS]",
    "Play a token stream out at speech rate on a simulated clock and report\n"
    "where the audio would run dry and how many tokens/s would have been enough.\n",
    sim_secs,
    "0 ran; 1 --fail-on-underrun and there were underruns; 2 bad usage or bad input; 3 the "
    "speech output failed (eSpeak NG, the audio device or the WAV file), or --import and every "
    "request failed.",
    sim_tail,
    NULL,
};

int tb_cmd_sim(int argc, char **argv)
{
    struct tb_cli_common a;
    struct tb_cli_audio au;
    struct tb_stream s;
    struct tb_sim_result r;
    struct tb_report_src src = {"", "", NULL, NULL};
    struct tb_cli_chunks chunks;
    struct tb_gap_list gaps = {NULL, 0, 0};
    struct tb_cli_plays plays;
    struct tb_clock clk;
    char label[1024], err[512];
    const char *import = NULL;
    struct tb_cli_import_opts io;
    int import_opt = 0;
    long request = -1;
    size_t z;
    int c, code = -1, rc, want_chunks = 0;
    struct tb_cli_getopt g;

    if (tb_cli_getopt_init(&g, &tb_doc_sim) != 0)
        return TB_EXIT_USAGE;
    tb_cli_common_init(&a);
    tb_cli_import_opts_init(&io);
    memset(&plays, 0, sizeof(plays));
    memset(&chunks, 0, sizeof(chunks));
    plays.gaps = &gaps;
    tb_cli_audio_init(&au);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, g.so, g.lo, NULL)) != -1) {
        if (c == 'h') {
            tb_cli_help(stdout, &tb_doc_sim);
            return TB_EXIT_OK;
        }
        if (c == O_IMPORT) {
            import = optarg;
            continue;
        }
        if (c == O_RUN || c == O_CPT) {
            if (tb_cli_import_option(&io, c == O_RUN ? 'r' : 'c', optarg) != 0)
                return TB_EXIT_USAGE;
            import_opt = c;
            continue;
        }
        if (c == O_CHUNKS) {
            want_chunks = 1;
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
    plays.keep_all = a.svg != NULL || a.html != NULL || want_chunks;
    if ((request >= 0 || import_opt != 0) && import == NULL) {
        tb_cli_error("%s needs --import", request >= 0          ? "--request"
                                          : import_opt == O_RUN ? "--run"
                                                                : "--chars-per-token");
        return TB_EXIT_USAGE;
    }
    tb_stream_init(&s);
    code = tb_cli_outputs_check("sim", &a);
    if (code < 0)
        code = tb_cli_audio_probe(&au);
    if (code >= 0)
        goto out;
    if (import != NULL)
        code = tb_cli_import(&a, import, &io, request, &s, &src, label, sizeof(label));
    else
        code = tb_cli_load_source(&a, DEFAULT_PRESET, &s, &src, label, sizeof(label));
    if (code < 0 && a.record != NULL)
        code = tb_cli_record(a.record, "sim", &a.o, &s);
    if (code >= 0)
        goto out;

    if (a.html != NULL) {
        code = tb_cli_audio_for_html(&au);
        if (code >= 0)
            goto out;
    }
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
    if (a.html != NULL) {
        struct tb_html_run h = {"sim", &src,       &a.o, &s,  &r,
                                &gaps, &plays.all, NULL, &au, a.max_gaps};
        code = tb_cli_html_run(a.html, &h);
        if (code >= 0)
            goto out;
    }
    if (want_chunks) {
        rc = tb_cli_chunks_build(&s, &a.o.seg, &plays.all, &chunks);
        if (rc != 0) {
            tb_cli_error("--chunks: %s", tb_strerror(rc));
            code = TB_EXIT_USAGE;
            goto out;
        }
    }
    if (a.json) {
        if (tb_report_json_chunks(stdout, &src, &a.o, &r, &gaps, NULL, &au,
                                  want_chunks ? &chunks : NULL) != 0) {
            tb_cli_error("out of memory writing JSON");
            code = TB_EXIT_USAGE;
            goto out;
        }
    } else {
        FILE *rf = tb_cli_report_file(&a);
        tb_report_human(rf, &src, &a.o, &r, &gaps, a.max_gaps, NULL);
        tb_cli_audio_report(rf, &au, &a.o, &r, a.max_gaps);
        if (want_chunks)
            tb_cli_chunks_print(rf, &chunks);
    }
    code = TB_EXIT_OK;
    if (a.fail_on_underrun && r.play.underruns > 0) {
        tb_cli_error("--fail-on-underrun: %u underruns, %.2f s of silence", r.play.underruns,
                     r.play.gap_total);
        code = TB_EXIT_GATE;
    }
out:
    tb_cli_chunks_free(&chunks);
    tb_cli_audio_free(&au);
    free(gaps.v);
    free(plays.all.v);
    tb_stream_free(&s);
    return code;
}
