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
    TB_OPTDOC_END,
};

static const struct tb_optsec sim_secs[] = {
    {"Source (one; a FILE argument is a trace, as --trace FILE; default --preset " DEFAULT_PRESET
     "):",
     tb_opt_sources},
    {NULL, sim_rows},
    {"Playout and output:", tb_opt_playout},
    {NULL, tb_opt_report},
    {"Speech (eSpeak NG):", tb_opt_audio},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

const struct tb_cmddoc tb_doc_sim = {
    "sim",
    "[FILE | SOURCE] [OPTIONS]",
    "Play a token stream out at speech rate on a simulated clock and report\n"
    "where the audio would run dry and how many tokens/s would have been enough.\n",
    sim_secs,
    "0 ran; 1 --fail-on-underrun and there were underruns, or the stream was cut off or failed "
    "(its trace's end line says so); 2 bad usage or bad input; 3 the "
    "speech output failed (eSpeak NG, the audio device or the WAV file), or --import and every "
    "request failed.",
    tb_cli_usage_playout,
    NULL,
};

/* What the command line asked for. */
struct sim_args {
    struct tb_cli_common c;
    struct tb_cli_audio au;
    const char *import;
    struct tb_cli_import_opts io;
    int import_opt; /* the last of --run, --chars-per-token given, or 0 */
    int want_chunks;
    long request; /* --request, or -1 */
};

/* One option of sim's own, or of the shared groups (tb_cli_parse's
 * handler). */
static int option(void *ud, int c, const char *arg)
{
    struct sim_args *a = ud;
    size_t z;
    switch (c) {
    case O_IMPORT: a->import = arg; return 1;
    case O_RUN:
    case O_CPT:
        if (tb_cli_import_option(&a->io, c == O_RUN ? 'r' : 'c', arg) != 0)
            return -1;
        a->import_opt = c;
        return 1;
    case O_CHUNKS: a->want_chunks = 1; return 1;
    case O_REQUEST:
        if (tb_cli_opt_size("--request", arg, 0, TB_IMPORT_REQUESTS_MAX - 1, &z) < 0)
            return -1;
        a->request = (long)z;
        return 1;
    default: return tb_cli_groups_option(&a->c, NULL, &a->au, c, arg);
    }
}

int tb_cmd_sim(int argc, char **argv)
{
    struct sim_args a;
    struct tb_stream s;
    struct tb_sim_result r;
    struct tb_report_src src = {"", "", NULL, NULL, NULL};
    struct tb_cli_chunks chunks;
    struct tb_cli_plays plays;
    char label[1024], err[512];
    int code, rc, first;

    memset(&a, 0, sizeof(a));
    tb_cli_common_init(&a.c);
    tb_cli_import_opts_init(&a.io);
    tb_cli_audio_init(&a.au);
    a.request = -1;
    tb_cli_plays_init(&plays, 0);
    memset(&chunks, 0, sizeof(chunks));
    code = tb_cli_parse(argc, argv, &tb_doc_sim, option, &a, &first);
    if (code < 0)
        code = tb_cli_source_operand(&a.c, "sim", argc, argv, first);
    if (code >= 0)
        return code;
    plays.keep_all = a.c.svg != NULL || a.c.html != NULL || a.want_chunks;
    if ((a.request >= 0 || a.import_opt != 0) && a.import == NULL) {
        tb_cli_error("%s needs --import", a.request >= 0          ? "--request"
                                          : a.import_opt == O_RUN ? "--run"
                                                                  : "--chars-per-token");
        return TB_EXIT_USAGE;
    }
    tb_stream_init(&s);
    code = tb_cli_outputs_check("sim", &a.c);
    if (code < 0)
        code = tb_cli_audio_probe(&a.au);
    if (code >= 0)
        goto out;
    if (a.import != NULL)
        code = tb_cli_import(&a.c, a.import, &a.io, a.request, &s, &src, label, sizeof(label));
    else {
        a.c.failed_ok = 1; /* a recording of a failed request is reported */
        code = tb_cli_load_source(&a.c, DEFAULT_PRESET, &s, &src, label, sizeof(label));
        src.end = &s.end; /* a trace's, or a synthetic stream's (complete) */
    }
    if (code < 0 && a.c.record != NULL)
        code = tb_cli_record(a.c.record, "sim", &a.c.o, &s);
    if (code >= 0)
        goto out;

    /* A WAV render stops at SIGINT/SIGTERM with its header written (the
     * command then ends with exit 3); --html's has no file to leave. */
    if (a.c.html != NULL || a.au.sink == TB_SINK_WAV)
        a.au.cancel = tb_cli_catch_interrupts();
    if (a.c.html != NULL) {
        code = tb_cli_audio_for_html(&a.au, TB_HTML_AUDIO_MAX_S);
        if (code >= 0)
            goto out;
    }
    if (tb_cli_audio_wanted(&a.au)) {
        tb_cli_audio_rate_model(&a.au, &s, &a.c.o);
        code = tb_cli_audio_start(&a.au, &a.c.o, &s);
        if (code >= 0)
            goto out;
    }
    code =
        tb_cli_audio_sim(&a.au, &s, &a.c.o, tb_cli_collect_play, &plays, &r, &rc, err, sizeof(err));
    if (code >= 0)
        goto out; /* the speech output failed (printed): the run stopped there */
    if (a.au.cancel != NULL && atomic_load(a.au.cancel)) {
        tb_cli_error("sim: interrupted");
        code = TB_EXIT_FAILED;
        goto out;
    }
    if (rc != 0) {
        /* a speaker that stopped the run has said why (exit 3) */
        if (code < 0) {
            tb_cli_error("%s: %s", src.name, err);
            code = rc == TB_EEMPTY || rc == TB_ETOOBIG || rc == TB_EINVAL ? TB_EXIT_USAGE
                                                                           : TB_EXIT_FAILED;
        }
        goto out;
    }
    if (a.c.svg != NULL) {
        code = tb_cli_svg_timeline(a.c.svg, &src, &a.c.o, &s, &plays.all, &r, NULL);
        if (code >= 0)
            goto out;
    }
    if (a.c.html != NULL) {
        struct tb_html_run h = {"sim",       &src,       &a.c.o, &s,    &r,
                                &plays.gaps, &plays.all, NULL,   &a.au, a.c.max_gaps};
        code = tb_cli_html_run(a.c.html, &h);
        if (code >= 0)
            goto out;
    }
    if (a.want_chunks) {
        rc = tb_cli_chunks_build(&s, &a.c.o.seg, &plays.all, &chunks);
        if (rc != 0) {
            tb_cli_error("--chunks: %s", tb_strerror(rc));
            code = TB_EXIT_USAGE;
            goto out;
        }
    }
    if (a.c.json) {
        if (tb_report_json_chunks(stdout, &src, &a.c.o, &r, &plays.gaps, NULL, &a.au,
                                  a.want_chunks ? &chunks : NULL) != 0) {
            tb_cli_error("out of memory writing JSON");
            code = TB_EXIT_USAGE;
            goto out;
        }
    } else {
        FILE *rf = tb_cli_report_file(&a.c);
        tb_report_human(rf, &src, &a.c.o, &r, &plays.gaps, a.c.max_gaps, NULL);
        tb_cli_audio_report(rf, &a.au, &a.c.o, &r, a.c.max_gaps);
        if (a.want_chunks)
            tb_cli_chunks_print(rf, &chunks);
    }
    code = tb_cli_underrun_gate(&a.c, &r, src.end);
out:
    tb_cli_chunks_free(&chunks);
    tb_cli_audio_free(&a.au);
    tb_cli_plays_free(&plays);
    tb_stream_free(&s);
    return code;
}
