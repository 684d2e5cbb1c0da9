/*
 * cmd_run.c - `ttsbuf run`: stream a completion from an OpenAI-compatible
 * endpoint (or, with none configured, from the built-in mock provider over
 * real HTTP on loopback) and play it out live.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio.h"
#include "cli.h"
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
#include "request.h"
#include "sources.h"
#include "timeline.h"
#include "tts_live.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/http.h"
#include "ttsbuf/live.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/ttsnet.h"

#define DEFAULT_PROMPT "Explain how transformer attention mechanisms work."
#define DEFAULT_MAX_TOKENS 300
#define MOCK_PRESET TB_PRESET_MOCK
#define MESSAGES_MAX (1u << 20)

_Static_assert(DEFAULT_MAX_TOKENS == 300, "--max-tokens' help states the default");

static int cmd_run(int argc, char **argv);

enum { O_PROMPT = TB_O__REQUEST_END, O_MESSAGES, O_FAULT };

static const struct tb_optdoc run_rows[] = {
    {"prompt", O_PROMPT, "TEXT", "the user message (default: \"" DEFAULT_PROMPT "\")",
     "The default is the example prompt of What Is Tokens Per Second (TPS)?"},
    {"messages", O_MESSAGES, "FILE", "a JSON array of chat messages instead of --prompt", NULL},
    {"verbose", 'v', NULL, "log HTTP exchanges to stderr (keys masked as ***)", NULL},
    {"quiet", 'q', NULL,
     "no report and no status line: errors only (--json, --record, --svg and --html are still "
     "written)",
     NULL},
    TB_OPTDOC_END,
};

static const struct tb_optdoc run_mock_rows[] = {
    {"fault", O_FAULT, "SPEC", "mock faults, e.g. stall@40:1.5+crlf (see ttsbuf serve --help)",
     NULL},
    TB_OPTDOC_END,
};

static const struct tb_optsec run_secs[] = {
    {"Endpoint:", tb_opt_request},
    {NULL, run_rows},
    {"Built-in mock (--mock, or neither a base URL nor a key; default --preset " MOCK_PRESET "):",
     tb_opt_sources},
    {NULL, run_mock_rows},
    {"Playout and output:", tb_opt_playout},
    {NULL, tb_opt_report},
    {"TTS engine:", tb_opt_tts},
    {"The turn's wait:", tb_opt_turn},
    {NULL, tb_opt_tts_draws},
    {"A real TTS in the loop:", tb_opt_tts_live},
    {"Speech (eSpeak NG, or the real TTS's voice with --tts-url):", tb_opt_audio},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

const struct tb_cmddoc tb_doc_run = {
    "run",
    "[OPTIONS]",
    "Stream a completion from an OpenAI-compatible endpoint and play it out live at\n"
    "speech rate: a status line shows the buffer and underruns as they happen, and\n"
    "the report has the same numbers `ttsbuf sim --trace` gives on the recording.\n"
    "With no base URL, it streams from the built-in mock provider on loopback.\n",
    run_secs,
    "0 the stream completed; 1 --fail-on-underrun and there were underruns; 2 bad usage; 3 the "
    "request or stream failed (the report and --record still cover everything received), or the "
    "run failed (out of memory, a write that failed).",
    tb_cli_usage_playout,
    NULL,
    cmd_run,
};

struct run_args {
    struct tb_cli_common c;
    struct tb_cli_audio au;
    struct tb_cli_request q;
    struct tb_cli_tts_live tl;
    const char *messages_file, *fault;
    int verbose, quiet;
};

/* Reads a whole small file (NUL-terminated, malloc'd); NULL on error with
 * errno set.  Caps at max bytes. */
static char *read_small(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    if (f == NULL)
        return NULL;
    buf = malloc(max + 1);
    if (buf == NULL) {
        fclose(f);
        return NULL;
    }
    n = fread(buf, 1, max + 1, f);
    fclose(f);
    if (n > max) {
        free(buf);
        errno = EFBIG;
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static void log_line(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "%s\n", line);
}

static void status_line(void *ud, const struct tb_live_status *st)
{
    char line[160];
    (void)ud;
    tb_cli_report_status(line, sizeof(line), st);
    fprintf(stderr, "\r\033[K%s", line);
}

/* One option of run's own, or of the shared groups (tb_cli_parse's
 * handler). */
static int option(void *ud, int c, const char *arg)
{
    struct run_args *a = ud;
    switch (c) {
    case 'v': a->verbose = 1; return 0;
    case 'q': a->quiet = 1; return 0;
    case O_PROMPT: a->q.req.prompt = arg; return 0;
    case O_MESSAGES: a->messages_file = arg; return 0;
    case O_FAULT: a->fault = arg; return 0;
    default: {
        int rc = tb_cli_tts_live_option(&a->tl, c, arg);
        return rc != TB_CLI_NOT_MINE ? rc : tb_cli_groups_option(&a->c, &a->q, &a->au, c, arg);
    }
    }
}

/* Everything one `ttsbuf run` holds, from its options to its verdict. */
struct run {
    struct run_args a;
    struct tb_cli_endpoint ep;
    struct tb_live_opts lo;
    struct tb_live_result r;
    struct tb_report_src src;
    struct tb_report_live rl;
    struct tb_cli_plays plays;
    char label[512];
    char *messages;
    int audio_rc; /* the speech output's end: it stops the report, not the trace */
    /* A real TTS (--tts-url): the client's options, its base, the feed of
     * its audio to the speaker, the replay of what it did. */
    struct tb_ttsnet_opts to;
    char tts_base[256];
    double tts_last_t; /* the latest time the speaker was told */
    struct tb_cli_replay rp;
};

/* With --tts-url the TTS is measured, not modelled: the model's options
 * and the draws go with sim --trace of the recording, and eSpeak NG's
 * durations are not the provider's. */
static int tts_live_check(const struct run_args *a)
{
    if (a->au.espeak && a->au.sink == TB_SINK_NONE) {
        tb_cli_error("run: --voice-model espeak models a TTS; with --tts-url the TTS is measured "
                     "(ask \"what if\" with sim --trace on the recording)");
        return TB_EINVAL;
    }
    return tb_cli_tts_live_no_model(&a->c.tts, "run");
}

/* The options, every output checked before the request is sent, the
 * endpoint, and --messages. */
static int parse(struct run *x, int argc, char **argv)
{
    struct run_args *a = &x->a;
    int rc;
    tb_cli_common_init(&a->c);
    tb_cli_audio_init(&a->au);
    tb_cli_request_init(&a->q, DEFAULT_MAX_TOKENS);
    a->q.req.prompt = DEFAULT_PROMPT;
    tb_cli_tts_live_init(&a->tl);
    rc = tb_cli_parse(argc, argv, &tb_doc_run, option, a, NULL);
    if (rc == 0)
        rc = tb_cli_tts_apply(&a->c.tts, &a->c.o.seg, &a->c.o.play);
    if (rc == 0)
        rc = tb_cli_turn_apply(&a->c.turn, a->c.tts.seed, a->c.tts.seed, &a->c.o);
    if (rc == 0)
        rc = tb_cli_tts_live_resolve(&a->tl, "run");
    if (rc == 0 && a->tl.url != NULL)
        rc = tb_cli_turn_measured(&a->c.turn, "--tts-url");
    if (rc == 0 && a->tl.url != NULL)
        rc = tts_live_check(a);
    if (rc == 0)
        rc = tb_cli_outputs_check("run", &a->c);
    if (rc == 0)
        rc = tb_cli_audio_probe(&a->au);
    if (rc == 0)
        rc = tb_cli_endpoint_resolve(&a->q, "run", 1, &x->ep);
    if (rc != 0)
        return rc;
    if (!x->ep.mock && (a->c.nsources > 0 || a->fault != NULL)) {
        tb_cli_error("run: --trace/--synth/--preset/--fault drive the built-in mock; "
                     "they do not apply with a base URL or a key (add --mock)");
        return TB_EINVAL;
    }
    if (a->messages_file != NULL && a->q.req.api == TB_API_COMPLETIONS) {
        tb_cli_error("run: --messages needs a chat API (--api completions sends one prompt: "
                     "give --prompt)");
        return TB_EINVAL;
    }
    if (a->messages_file != NULL) {
        x->messages = read_small(a->messages_file, MESSAGES_MAX);
        if (x->messages == NULL) {
            tb_cli_error("--messages: %s: %s", a->messages_file, strerror(errno));
            return errno == ENOMEM ? TB_ENOMEM : TB_EINVAL;
        }
        a->q.req.messages_json = x->messages;
    }
    if (a->tl.url != NULL && strcmp(a->tl.url, "mock") == 0 && !x->ep.mock) {
        tb_cli_error("run: --tts-url mock is the built-in mock's TTS: it goes with the built-in "
                     "mock provider (--mock); else give the TTS's URL");
        return TB_EINVAL;
    }
    return 0;
}

/* The speaker first (a sink that cannot open is the only message), then
 * the mock with its stream when it is the endpoint. */
static int prepare(struct run *x)
{
    struct run_args *a = &x->a;
    int rc = a->c.html != NULL ? tb_cli_audio_for_html(&a->au, TB_HTML_AUDIO_MAX_S) : 0;
    if (a->tl.url != NULL)
        a->au.pcm_rate = a->tl.rate != 0 ? a->tl.rate : TB_TTSAPI_RATE;
    if (rc == 0)
        rc = tb_cli_audio_start(&a->au, &a->c.o, NULL);
    if (rc != 0 || !x->ep.mock)
        return rc;
    rc = tb_cli_load_source(&a->c, MOCK_PRESET, &x->ep.stream, &x->src, x->label, sizeof(x->label));
    if (rc == 0)
        rc = tb_cli_endpoint_mock_start(&x->ep, a->fault);
    if (rc == 0 && a->tl.url != NULL && strcmp(a->tl.url, "mock") == 0) {
        /* the built-in mock's TTS: its routes are at the server's root */
        const char *h = strstr(x->ep.base, "://");
        size_t root =
            h != NULL ? (size_t)(h + 3 - x->ep.base) + strcspn(h + 3, "/") : strlen(x->ep.base);
        snprintf(x->tts_base, sizeof(x->tts_base), "%.*s", (int)root, x->ep.base);
    }
    if (rc == 0 && !a->q.mock)
        fprintf(stderr,
                "ttsbuf: no --base-url, %s or API key: streaming from the built-in "
                "mock provider at %s (%s)\n",
                x->ep.info->base_env, x->ep.base, x->src.name);
    return rc;
}

/* The TTS's audio, to the speaker (on the drain's thread).  A speech
 * output that fails stops the TTS too: the run ends there. */
static int tts_audio(void *ud, uint32_t j, const char *pcm, size_t n, double t)
{
    struct run *x = ud;
    x->tts_last_t = t;
    return x->a.au.sp != NULL ? tb_speaker_pcm(x->a.au.sp, j, t, pcm, n) : 0;
}

static void tts_end(void *ud, uint32_t j, const struct tb_tts_chunk *c)
{
    struct run *x = ud;
    if (c->end >= x->tts_last_t) /* NAN (never sent): the latest time */
        x->tts_last_t = c->end;
    if (x->a.au.sp != NULL)
        (void)tb_speaker_pcm_end(x->a.au.sp, j, x->tts_last_t, c->fail != TB_TTS_OK);
}

/* The TTS client's options from --tts-*: the drain runs on the rate
 * model meanwhile (the model's stage is not this run's). */
static void tts_opts(struct run *x)
{
    struct run_args *a = &x->a;
    struct tb_ttsnet_opts *o = &x->to;
    tb_cli_tts_live_net_opts(&a->tl, &a->c.tts, x->tts_base, a->q.connect, a->q.insecure, o);
    o->rate = a->au.pcm_rate;
    o->cancel = x->lo.http.cancel;
    o->on_audio = tts_audio;
    o->on_end = tts_end;
    o->ud = x;
    o->log = x->lo.http.log;
    x->lo.sim.play.tts_concurrency = 0;
    x->lo.tts = o;
}

/* The live run: the request, the stream through the ring played out on
 * the wall clock (a status line on a terminal), the speaker ended. */
static int stream(struct run *x)
{
    struct run_args *a = &x->a;
    int status = !a->quiet && isatty(STDERR_FILENO), rc;
    a->q.req.model = a->q.model;
    tb_cli_request_http(&a->q, tb_cli_request_url(x->ep.base, x->ep.info), x->ep.key, &x->lo.http);
    if (x->lo.http.url == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    x->lo.sim = a->c.o;
    x->lo.req = a->q.req;
    x->lo.http.log = a->verbose ? log_line : NULL;
    x->lo.http.cancel = tb_cli_catch_interrupts();
    x->plays.keep_all = a->c.svg != NULL || a->c.html != NULL;
    x->lo.play_fn = tb_cli_collect_play;
    x->lo.play_ud = &x->plays;
    if (a->tl.url != NULL)
        tts_opts(x);
    rc = tb_live_run(&x->lo, &x->r, status ? status_line : NULL, NULL);
    if (rc != 0 && x->r.tts_error != 0 && x->r.tts_message[0] != '\0') {
        const char *m = x->r.tts_message;
        tb_cli_error("%s%s", strncmp(m, "--tts-url", 9) == 0 ? "" : "--tts-url: ",
                     strncmp(m, "TTS URL: ", 9) == 0 ? m + 9 : m);
        free((char *)x->lo.http.url);
        x->audio_rc = tb_cli_audio_finish(&a->au);
        return rc == TB_ENOMEM ? rc : TB_EINVAL;
    }
    if (status)
        fprintf(stderr, "\r\033[K");
    free((char *)x->lo.http.url);
    /* A speech output that failed (printed; its WAV capped or cut) loses
     * nothing received: the trace is still written. */
    x->audio_rc = tb_cli_audio_finish(&a->au);
    if (rc != 0 && x->audio_rc != 0)
        return x->audio_rc;
    if (rc != 0) {
        tb_cli_error("run: %s", x->r.message[0] ? x->r.message : tb_strerror(rc));
        return rc == TB_ENOMEM ? rc : TB_EIO;
    }
    if (x->r.usage_retried && !a->quiet)
        fprintf(stderr, "ttsbuf: the server rejected stream_options.include_usage; "
                        "retried once without it\n");
    return 0;
}

/* What the report says of the live run (never the API key). */
static void account(struct run *x)
{
    const struct tb_live_result *r = &x->r;
    x->rl = (struct tb_report_live){
        .model = x->a.q.model,
        .base_url = x->ep.base_red,
        .provider = tb_cli_endpoint_provider(&x->ep),
        .api = x->ep.info->name,
        .server = r->have_server ? &r->server : NULL,
        .http_status = r->http_status,
        .error_kind = r->error ? tb_reader_error_name(r->error) : NULL,
        .error = r->message,
        .warning = r->warning,
        .sse_events = r->sse_events,
        .tool_calls = r->tool_calls,
        .tool_first_start = r->stream.ntools > 0 ? r->stream.tools[0].t_start : NAN,
        .tool_first_end = r->stream.ntools > 0 ? r->stream.tools[0].t_end : NAN,
        .finish_reason = r->finish_reason,
        .usage_retried = r->usage_retried,
        .usage_ignored = r->usage_ignored,
        .surrogates_replaced = r->surrogates_replaced,
    };
    if (!x->ep.mock) {
        x->src.kind = "live";
        x->src.name = x->ep.base_red;
    }
    x->src.end = &x->r.stream.end;
    x->src.tts = &x->a.c.tts;
    x->src.turn = &x->a.c.turn;
}

/* A real TTS spoke: the run's numbers are the measured TTS replayed over
 * the stream (replay.h), as `sim --trace` does with the recording, so the
 * two agree by construction; the gap list and the chunks come from it
 * too.  What only the live run measured (the ring's backpressure) stays. */
static int tts_replay(struct run *x)
{
    struct run_args *a = &x->a;
    struct tb_live_result *r = &x->r;
    struct tb_sim_opts o = a->c.o;
    struct tb_sim_result sr;
    const struct tb_stream *play;
    struct tb_clock clk;
    char err[512];
    int rc;
    o.voice = NULL;
    /* What the run measured itself: a record it cannot replay is the
     * peer's or the run's fault, never bad usage (exit 3). */
    rc = tb_cli_replay_prepare(&x->rp, &r->stream, &o, 0, "run", &play);
    if (rc != 0)
        return rc == TB_ENOMEM ? rc : TB_EIO;
    tb_cli_plays_free(&x->plays);
    tb_cli_plays_init(&x->plays, a->c.svg != NULL || a->c.html != NULL);
    tb_clock_virtual_init(&clk);
    rc = tb_sim_run(play, &o, &clk, tb_cli_collect_play, &x->plays, &sr, err, sizeof(err));
    if (rc == TB_EEMPTY)
        return 0; /* nothing to play (no content, or chunk 1 failed): the live result stands */
    if (rc != 0) {
        tb_cli_error("run: replaying the measured TTS: %s", err);
        return rc == TB_ENOMEM ? rc : TB_EIO;
    }
    rc = tb_cli_replay_check(&x->rp, "run", tb_seg_policy_name(o.seg.policy));
    if (rc == 0 && x->rp.failed != NULL)
        rc = tb_cli_replay_arrived(&x->rp, &r->stream, &o, &sr);
    if (rc != 0)
        return rc == TB_ENOMEM ? rc : TB_EIO;
    sr.backpressure_waits = r->sim.backpressure_waits;
    sr.backpressure_s = r->sim.backpressure_s;
    tb_sim_result_set_usage(&sr, r->usage_completion);
    r->sim = sr;
    x->src.tts_source = "measured";
    x->src.tts_log = r->stream.tts;
    x->src.tts_stats = &x->rp.stats;
    x->src.tts_fail = x->rp.failed;
    x->src.min_tps_reason = tb_cli_replay_whatif_reason(&x->rp, &o);
    a->c.o = o; /* the pictures and the page play what was measured */
    return 0;
}

/* Partial or not, the trace and the report are written: --record first;
 * after a speech output that stopped the playout, nothing more (no report
 * on half a run); else --svg, --html (a failed run's page too, headed by
 * what failed) and the report. */
static int write_outputs(struct run *x)
{
    struct run_args *a = &x->a;
    struct tb_live_result *r = &x->r;
    int rc = 0;
    snprintf(r->stream.model, sizeof(r->stream.model), "%s", a->q.model);
    snprintf(r->stream.base_url, sizeof(r->stream.base_url), "%s", x->ep.base_red);
    snprintf(r->stream.provider, sizeof(r->stream.provider), "%s",
             tb_cli_endpoint_provider(&x->ep));
    if (a->c.turn.eou != NULL)
        r->stream.eou_s = a->c.o.eou_s; /* the turn's modelled end of speech */
    if (a->c.record != NULL)
        rc = tb_cli_record(a->c.record, "run", &a->c.o, &a->c.tts, &a->c.turn, &r->stream);
    if (x->audio_rc != 0)
        return x->audio_rc;
    account(x);
    if (rc == 0 && r->stream.tts != NULL)
        rc = tts_replay(x);
    a->au.tts_log = r->stream.tts; /* the voice the reports name */
    if (rc == 0)
        rc = tb_cli_draws_run(&a->c.tts.draws, "run", &r->stream, &a->c.o, a->c.tts.lat,
                              a->c.tts.seed, &r->sim,
                              tb_cli_report_whatif_measured(&x->src, &r->sim, &x->rl), a->quiet);
    if (a->c.svg != NULL && r->sim.play.chunks > 0 && rc == 0)
        rc = tb_cli_timeline_write(a->c.svg, &x->src, &a->c.o, &r->stream, &x->plays.all, &r->sim,
                                   &x->rl);
    else if (a->c.svg != NULL && rc == 0)
        fprintf(stderr, "ttsbuf: --svg: no timeline written: no chunk was complete\n");
    if (a->au.sp != NULL)
        tb_cli_audio_rate_model(&a->au, &r->stream, &a->c.o);
    if (a->c.html != NULL && rc == 0) {
        struct tb_cli_html_run_info h = {"run",   &x->src,        &a->c.o,       &r->stream,
                                         &r->sim, &x->plays.gaps, &x->plays.all, &x->rl,
                                         &a->au,  a->c.max_gaps};
        rc = tb_cli_html_run(a->c.html, &h);
    }
    if (a->c.json) {
        tb_cli_report_json(stdout, &x->src, &a->c.o, &r->sim, &x->plays.gaps, &x->rl, &a->au, NULL);
    } else if (!a->quiet) {
        FILE *rf = tb_cli_report_file(&a->c);
        tb_cli_report_human(rf, &x->src, &a->c.o, &r->sim, &x->plays.gaps, a->c.max_gaps, &x->rl);
        tb_cli_audio_report(rf, &a->au, &a->c.o, &r->sim, a->c.max_gaps);
    }
    (void)tb_cli_flush_stdout(); /* errors and gates after the report */
    return rc;
}

/* The verdict (cli.h): a stream that failed is 3, its error last; else
 * --fail-on-underrun's. */
static int run_verdict(struct run *x)
{
    char hint[400];
    if (x->rp.failed != NULL && (x->r.error == 0 || x->r.error == TB_READER_TTS)) {
        tb_cli_replay_error("run", &x->rp, &x->r.stream);
        return TB_EXIT_FAILED;
    }
    if (x->r.error != 0) {
        tb_cli_error("%s%s", x->r.message,
                     tb_cli_endpoint_hint(&x->ep, x->r.http_status, hint, sizeof(hint)));
        return TB_EXIT_FAILED;
    }
    if (tb_cli_audio_verdict(&x->a.au) != TB_EXIT_OK)
        return TB_EXIT_FAILED; /* the audio was cut at its cap (said) */
    return tb_cli_underrun_verdict(x->a.c.fail_on_underrun, &x->r.sim, &x->r.stream.end);
}

/* ttsbuf run: parse, prepare (speaker, mock), stream, write (trace,
 * pictures, report); the verdict. */
static int cmd_run(int argc, char **argv)
{
    struct run x;
    int rc, code;
    memset(&x, 0, sizeof(x));
    tb_cli_plays_init(&x.plays, 0);
    x.src.kind = "live";
    x.src.name = "";
    rc = parse(&x, argc, argv);
    if (rc == 0)
        rc = prepare(&x);
    if (rc == 0)
        rc = stream(&x);
    if (rc == 0)
        rc = write_outputs(&x);
    if (rc != 0 && x.r.error != 0 && x.audio_rc == 0)
        rc = 0; /* a write that failed is said; the stream's failure is the verdict */
    code = rc != 0 ? tb_cli_exit(rc) : run_verdict(&x);
    tb_cli_audio_free(&x.a.au);
    tb_cli_replay_free(&x.rp);
    tb_cli_tts_live_free(&x.a.tl);
    tb_cli_common_free(&x.a.c);
    tb_cli_endpoint_free(&x.ep);
    tb_live_result_free(&x.r);
    tb_cli_plays_free(&x.plays);
    free(x.messages);
    return code;
}
