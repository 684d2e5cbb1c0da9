/*
 * cmd_sim.c - `ttsbuf sim`: play a token stream out on the simulated clock
 * and report underruns, time to first audio and the minimum TPS.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "chunks.h"
#include "cli.h"
#include "cmd_import.h"
#include "html_report.h"
#include "interrupt.h"
#include "optdoc.h"
#include "options.h"
#include "outputs.h"
#include "plays.h"
#include "replay.h"
#include "report.h"
#include "report_human.h"
#include "report_json.h"
#include "sim_tool.h"
#include "sources.h"
#include "timeline.h"
#include "ttsbuf/error.h"
#include "ttsbuf/import.h"
#include "ttsbuf/sim.h"

#define DEFAULT_PRESET "demo"

static int cmd_sim(int argc, char **argv);

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
     "line per request). With --trace (or FILE) of bench --out's traces/LEVEL.jsonl, which holds "
     "the traces of a level's requests: play the one of request N (its record's id)",
     "A file of several traces without --request is refused, naming the line where the second "
     "begins; sweep reads each of them."},
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
     "\"chunk_list\" is an array of {text, event, ready_s, start_s, duration_s} beside "
     "\"chunks\", their count",
     "With a TTS stage each chunk also says when its text was sent to the TTS and when all of "
     "its audio was there (sent_s, done_s; ready_s is its first audio): the model's b_j, f_j and "
     "d_j, or a replayed recording's own sent, first byte and end, exactly."},
    {"quiet", 'q', NULL,
     "no report and no table: errors only (--json, --record, --svg, --html and --audio are still "
     "written)",
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
    {"TTS engine:", tb_opt_tts},
    {"The turn's wait:", tb_opt_turn},
    {"A tool turn's answer (bench --out's trace of it; what if the tool took longer):",
     tb_opt_sim_tool},
    {NULL, tb_opt_tts_draws},
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
    "speech output failed (eSpeak NG, the audio device or the WAV file), --import and every "
    "request failed, a recorded TTS chunk failed (the trace's TTS record; a chunk canceled "
    "as the stream was interrupted, a barge-in, is not a failure), or the run failed (out of "
    "memory, a write that failed).",
    tb_cli_usage_playout,
    NULL,
    cmd_sim,
};

/* What the command line asked for. */
struct sim_args {
    struct tb_cli_common c;
    struct tb_cli_audio au;
    const char *import;
    struct tb_cli_import_opts io;
    int import_opt; /* the last of --run, --chars-per-token given, or 0 */
    int want_chunks;
    int quiet;                   /* -q: errors only */
    long long request;           /* --request, or -1 */
    struct tb_cli_sim_tool tool; /* a tool turn's answer: its turn */
};

/* One option of sim's own, or of the shared groups (tb_cli_parse's
 * handler). */
static int option(void *ud, int c, const char *arg)
{
    struct sim_args *a = ud;
    size_t z;
    int rc;
    switch (c) {
    case O_IMPORT: a->import = arg; return 0;
    case O_RUN:
    case O_CPT: a->import_opt = c; return tb_cli_import_option(&a->io, c == O_RUN ? 'r' : 'c', arg);
    case O_CHUNKS: a->want_chunks = 1; return 0;
    case 'q': a->quiet = 1; return 0;
    case TB_O_TOOL_LATENCY:
    case TB_O_FILLER: return tb_cli_sim_tool_option(&a->tool, c, arg);
    case O_REQUEST: /* an import's index, or a bench request's id (checked in parse) */
        rc = tb_cli_opt_size("--request", arg, 0, (size_t)9007199254740991ULL, &z);
        a->request = rc == 0 ? (long long)z : a->request;
        return rc;
    default: return tb_cli_groups_option(&a->c, NULL, &a->au, c, arg);
    }
}

/* Everything one `ttsbuf sim` holds, from its options to its verdict. */
struct sim {
    struct sim_args a;
    struct tb_stream s;
    struct tb_sim_result r;
    struct tb_report_src src;
    struct tb_cli_chunks chunks;
    struct tb_cli_plays plays;
    struct tb_cli_replay rp;      /* a trace's measured TTS, replayed */
    const struct tb_stream *play; /* what plays: s, or the replay's view */
    char label[1024];
    int verdict; /* an --import table's, when it ended the command */
};

/* The options, the operand, and what goes with what. */
static int parse(struct sim *x, int argc, char **argv)
{
    struct sim_args *a = &x->a;
    int first, rc;
    tb_cli_common_init(&a->c);
    tb_cli_import_opts_init(&a->io);
    tb_cli_audio_init(&a->au);
    a->request = -1;
    rc = tb_cli_parse(argc, argv, &tb_doc_sim, option, a, &first);
    if (rc == 0)
        rc = tb_cli_source_operand(&a->c, "sim", argc, argv, first);
    if (rc != 0)
        return rc;
    x->plays.keep_all = a->c.svg != NULL || a->c.html != NULL || a->want_chunks;
    if (a->request >= 0 && a->import == NULL && a->c.trace == NULL) {
        tb_cli_error("--request needs --import or --trace");
        return TB_EINVAL;
    }
    if (a->import_opt != 0 && a->import == NULL) {
        tb_cli_error("%s needs --import", a->import_opt == O_RUN ? "--run" : "--chars-per-token");
        return TB_EINVAL;
    }
    if (a->import != NULL && a->request >= (long long)TB_IMPORT_REQUESTS_MAX) {
        tb_cli_error("--request: %lld is over an import's %u requests", a->request,
                     TB_IMPORT_REQUESTS_MAX);
        return TB_EINVAL;
    }
    if (a->import == NULL)
        a->c.request = a->request;
    rc = tb_cli_outputs_check("sim", &a->c);
    return rc != 0 ? rc : tb_cli_audio_probe(&a->au);
}

/* A recording's modelled TTS and leading silence (a sim's or run's
 * --record; bench's constant --tts-latency), replayed as if given when no option sets a TTS model
 * (the seed: when --tts-seed is not given) and no --tts-lead: `sim` of the recording plays what the
 * recording did.  0, or the option's error. */
static int adopt_recorded(struct tb_cli_common *c, const struct tb_stream *s)
{
    static const struct tb_stream_ttsmodel none;
    const struct tb_stream_ttsmodel *m = s->rec != NULL ? s->rec : &none;
    struct tb_cli_tts *t = &c->tts;
    int rc = 0;
    if (m->has_tts && t->latency == NULL && t->preset == NULL && !t->conc_set && !t->rtf_set &&
        !t->connect_set && !t->output_set) {
        const struct {
            int opt;
            const char *v;
        } row[] = {
            {TB_O_TTS_PRESET, m->preset},
            {TB_O_TTS_LAT, m->latency},
            {TB_O_TTS_SEED, t->seed_set ? "" : m->seed},
            {TB_O_TTS_CONNECT, m->connect},
            {TB_O_TTS_CONC, m->concurrency},
            {TB_O_TTS_RTF, m->rtf},
            {TB_O_TTS_OUTPUT, m->output},
        };
        for (size_t i = 0; rc == 0 && i < sizeof(row) / sizeof(row[0]); i++)
            if (row[i].v[0] != '\0')
                rc = tb_cli_tts_option(t, row[i].opt, row[i].v);
        c->turn.latency_recorded = m->latency[0] != '\0'; /* the report names its source */
        snprintf(c->turn.latency_spec, sizeof(c->turn.latency_spec), "%s", m->latency);
    }
    if (rc == 0 && c->turn.lead == NULL && m->lead[0] != '\0') {
        rc = tb_cli_turn_option(&c->turn, TB_O_TTS_LEAD, m->lead);
        c->turn.lead_recorded = 1; /* the report names its source */
    }
    return rc;
}

/* The stream: an import's request (or its table of several, which ends
 * the command), or the source; its recorded TTS model adopted, the TTS
 * and turn options applied; recorded with --record. */
static int load(struct sim *x)
{
    struct sim_args *a = &x->a;
    int rc;
    if (a->import != NULL) {
        a->io.quiet = a->quiet;
        rc = tb_cli_import(&a->c, a->import, &a->io, (long)a->request, &x->s, &x->src, x->label,
                           sizeof(x->label), &x->verdict);
    } else {
        a->c.failed_ok = 1; /* a recording of a failed request is reported */
        rc = tb_cli_load_source(&a->c, DEFAULT_PRESET, &x->s, &x->src, x->label, sizeof(x->label));
        x->src.end = &x->s.end; /* a trace's, or a synthetic stream's (complete) */
    }
    if (rc == 0)
        rc = adopt_recorded(&a->c, &x->s);
    if (rc == 0) /* a trace with the turn's tool part (tool_turn) replays it: sim_tool.h */
        tb_cli_turn_tool_warn("sim", isfinite(x->s.tool_s) && x->s.turn_tool.calls == 0, 1,
                              x->s.tool_s);
    x->src.tool_calls = x->s.ntools;
    if (rc == 0)
        rc = tb_cli_tts_apply(&a->c.tts, &a->c.o.seg, &a->c.o.play);
    if (rc == 0)
        rc = tb_cli_turn_apply(&a->c.turn, a->c.tts.seed, a->c.tts.seed, &a->c.o);
    if (rc == 0)
        tb_cli_turn_stream(&a->c.turn, &x->s, &a->c.o);
    if (rc == 0 && x->s.request >= 0 && strcmp(x->s.command, "bench") == 0)
        tb_sim_opts_turn_draws(&a->c.o, (uint32_t)(x->s.request + 1)); /* bench's own */
    if (rc == 0)
        rc = tb_cli_sim_tool_prepare(&a->tool, &x->s, a->c.tts.seed, x->src.name);
    if (rc == 0 && a->c.record != NULL)
        rc = tb_cli_record(a->c.record, "sim", &a->c.o, &a->c.tts, &a->c.turn, &x->s);
    return rc;
}

/* Which TTS the run plays: a trace's measured one (replay.h) unless an
 * option sets a model ("what if"), the model, or none. */
static int choose_tts(struct sim *x)
{
    struct sim_args *a = &x->a;
    const struct tb_cli_tts *t = &a->c.tts;
    int rc = 0;
    x->play = &x->s;
    /* A model is said where the stage is set, or where it stands in for a
     * measured TTS; today's constant latency alone is no TTS stage. */
    x->src.tts_source =
        t->any || (x->s.tts != NULL && x->s.tts->n > 0 && tb_cli_replay_model_given(t)) ? "model"
                                                                                        : NULL;
    if (a->import == NULL && tb_cli_replay_wanted(&x->s, t)) {
        int speech = tb_cli_audio_wanted(&a->au); /* --html draws it without audio */
        rc = tb_cli_turn_measured(&a->c.turn, "a trace with TTS records");
        if (rc == 0)
            rc = tb_cli_replay_prepare(&x->rp, &x->s, &a->c.o, speech, x->src.name, &x->play);
        if (rc != 0)
            return rc;
        x->src.tts_source = "measured";
        x->src.tts_log = x->s.tts;
        x->src.tts_stats = &x->rp.stats;
        x->src.tts_fail = x->rp.failed;
        x->src.min_tps_reason = tb_cli_replay_whatif_reason(&x->rp, &a->c.o);
    }
    return rc;
}

/* The speaker, when any speech is asked for (--html renders its audio,
 * but for a replayed measured TTS, whose audio the trace does not keep).
 * A WAV render stops at SIGINT/SIGTERM with its header written (the
 * command then ends with exit 3); --html's has no file to leave. */
static int start_speech(struct sim *x)
{
    struct sim_args *a = &x->a;
    int html = a->c.html != NULL && !x->rp.on, rc = 0;
    if (html || a->au.sink == TB_SINK_WAV)
        a->au.cancel = tb_cli_catch_interrupts();
    if (html)
        rc = tb_cli_audio_for_html(&a->au, TB_HTML_AUDIO_MAX_S);
    if (rc == 0 && tb_cli_audio_wanted(&a->au)) {
        tb_cli_audio_rate_model(&a->au, &x->s, &a->c.o);
        rc = tb_cli_audio_start(&a->au, &a->c.o, &x->s);
    }
    return rc;
}

/* Plays the stream out (and ends the speaker).  The simulator's error is
 * bad input when the stream cannot be played (empty, an event over the
 * ring, bad options), else the run's. */
static int play(struct sim *x)
{
    struct sim_args *a = &x->a;
    char err[512];
    int simrc, rc = tb_cli_audio_sim(&a->au, x->play, &a->c.o, tb_cli_collect_play, &x->plays,
                                     &x->r, &simrc, err, sizeof(err));
    if (rc != 0)
        return rc; /* the speech output failed (printed): the run stopped there */
    rc = tb_cli_replay_check(&x->rp, x->src.name, tb_seg_policy_name(a->c.o.seg.policy));
    if (rc != 0)
        return rc;
    if (simrc == 0)
        rc = tb_cli_replay_arrived(&x->rp, &x->s, &a->c.o, &x->r);
    if (rc != 0)
        return rc;
    if (simrc == 0)
        tb_cli_sim_tool_play(&a->tool, &x->s, &x->r, &a->c.o);
    if (a->au.cancel != NULL && atomic_load(a->au.cancel)) {
        tb_cli_error("sim: interrupted");
        return TB_ECANCELED;
    }
    if (simrc == 0)
        return 0;
    tb_cli_error("%s: %s", x->src.name, err);
    return simrc == TB_EEMPTY || simrc == TB_ETOOBIG || simrc == TB_EINVAL || simrc == TB_ENOMEM
               ? simrc
               : TB_EIO;
}

/* --tts-draws: the stream again under each draw of the latency. */
static int draws(struct sim *x)
{
    struct tb_cli_tts *t = &x->a.c.tts;
    return tb_cli_draws_run(&t->draws, "sim", &x->s, &x->a.c.o, t->lat, t->seed, &x->r,
                            tb_cli_report_whatif_measured(&x->src, &x->r, NULL), x->a.quiet);
}

/* --svg's picture, --html's page, --chunks' list. */
static int write_outputs(struct sim *x)
{
    struct sim_args *a = &x->a;
    int rc = 0;
    if (a->c.svg != NULL)
        rc = tb_cli_timeline_write(a->c.svg, &x->src, &a->c.o, x->play, &x->plays.all, &x->r, NULL);
    if (rc == 0 && a->c.html != NULL) {
        struct tb_cli_html_run_info h = {"sim",  &x->src,        &a->c.o,       &x->s,
                                         &x->r,  &x->plays.gaps, &x->plays.all, NULL,
                                         &a->au, a->c.max_gaps};
        rc = tb_cli_html_run(a->c.html, &h);
    }
    if (rc == 0 && a->want_chunks) {
        rc = tb_cli_chunks_build(x->play, &a->c.o.seg, &x->plays.all,
                                 tb_playout_has_stage(&a->c.o.play), &x->chunks);
        if (rc != 0)
            tb_cli_error("--chunks: %s", tb_strerror(rc));
    }
    return rc;
}

/* The report: --json's object, or the human one (with the speech part and
 * --chunks' list). */
static int report(struct sim *x)
{
    struct sim_args *a = &x->a;
    FILE *rf;
    if (a->c.json) {
        int rc = tb_cli_report_json(stdout, &x->src, &a->c.o, &x->r, &x->plays.gaps, NULL, &a->au,
                                    a->want_chunks ? &x->chunks : NULL);
        if (rc == TB_ENOMEM)
            tb_cli_error("out of memory writing JSON");
        return rc == TB_ENOMEM ? rc : 0; /* a write error: main.c's, at exit */
    }
    if (a->quiet)
        return 0; /* errors only */
    rf = tb_cli_report_file(&a->c);
    tb_cli_report_human(rf, &x->src, &a->c.o, &x->r, &x->plays.gaps, a->c.max_gaps, NULL);
    tb_cli_audio_report(rf, &a->au, &a->c.o, &x->r, a->c.max_gaps);
    if (a->want_chunks)
        tb_cli_chunks_print(rf, &x->chunks);
    return 0;
}

/* A replayed TTS whose chunk failed: a failed stream, as run's verdict
 * says, after the report. */
static int tts_verdict(const struct sim *x)
{
    (void)tb_cli_flush_stdout();
    tb_cli_replay_error(x->src.name, &x->rp, &x->s);
    return TB_EXIT_FAILED;
}

/* ttsbuf sim: parse, load, choose the TTS, start the speech, play, draw, write, report;
 * the verdict. */
static int cmd_sim(int argc, char **argv)
{
    struct sim x;
    int rc, code;
    memset(&x, 0, sizeof(x));
    tb_stream_init(&x.s);
    tb_cli_plays_init(&x.plays, 0);
    x.src.kind = x.src.name = "";
    rc = parse(&x, argc, argv);
    if (rc == 0)
        rc = load(&x);
    x.src.tts = &x.a.c.tts;
    x.src.turn = &x.a.c.turn;
    x.src.tool_turn = x.a.tool.on ? &x.a.tool : NULL;
    if (rc == 0)
        rc = choose_tts(&x);
    if (rc == 0)
        rc = start_speech(&x);
    if (rc == 0)
        rc = play(&x);
    if (rc == 0)
        rc = draws(&x);
    if (rc == 0)
        rc = write_outputs(&x);
    if (rc == 0)
        rc = report(&x);
    if (rc == TB_CLI_DONE)
        code = x.verdict;
    else if (rc != 0)
        code = tb_cli_exit(rc);
    else if (x.rp.failed != NULL && !(x.rp.failed->fail == TB_TTS_CANCELED &&
                                        x.s.end.kind == TB_END_INTERRUPTED))
        code = tts_verdict(&x); /* a chunk canceled as the caller interrupted is not a failure */
    else if ((code = tb_cli_audio_verdict(&x.a.au)) == TB_EXIT_OK)
        code = tb_cli_underrun_verdict(x.a.c.fail_on_underrun, &x.r, x.src.end);
    tb_cli_sim_tool_free(&x.a.tool);
    tb_cli_replay_free(&x.rp);
    tb_cli_chunks_free(&x.chunks);
    tb_cli_audio_free(&x.a.au);
    tb_cli_common_free(&x.a.c);
    tb_cli_plays_free(&x.plays);
    tb_stream_free(&x.s);
    return code;
}
