/*
 * cmd_run.c - `ttsbuf run`: stream a completion from an OpenAI-compatible
 * endpoint (or, with none configured, from the built-in mock provider over
 * real HTTP on loopback) and play it out live.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio.h"
#include "html_report.h"
#include "cli.h"
#include "common.h"
#include "optdoc.h"
#include "request.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/http.h"
#include "ttsbuf/live.h"
#include "ttsbuf/serve.h"
#include "ttsbuf/preset.h"

#define DEFAULT_PROMPT "Explain how transformer attention mechanisms work."
#define DEFAULT_MAX_TOKENS 300
#define MOCK_PRESET TB_PRESET_MOCK
#define MESSAGES_MAX (1u << 20)

_Static_assert(DEFAULT_MAX_TOKENS == 300, "--max-tokens' help states the default");

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
    {"Speech (eSpeak NG):", tb_opt_audio},
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
    "request or stream failed (the report and --record still cover everything received).",
    tb_cli_usage_playout,
    NULL,
};

struct run_args {
    struct tb_cli_common c;
    struct tb_cli_audio au;
    struct tb_cli_request q;
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

void tb_cli_status_text(char *buf, size_t len, const struct tb_live_status *st)
{
    /* Playing with nothing queued: the listener hears silence right now.
     * The playout counts that gap once the next chunk arrives; the line
     * counts it already, with its length so far. */
    int silent = st->playing && st->silent_s > 0;
    const char *state = !st->playing ? "waiting" : silent ? "SILENT " : "playing";
    uint32_t under = st->underruns + (silent ? 1u : 0u);
    snprintf(buf, len, "%6.2f s  %5zu token%s  buffer %6.2f s  %s  %u underrun%s (%.2f s)", st->t,
             st->events, st->events == 1 ? " " : "s", st->buffered_s, state, under,
             under == 1 ? "" : "s", st->gap_total + (silent ? st->silent_s : 0.0));
}

static void status_line(void *ud, const struct tb_live_status *st)
{
    char line[160];
    (void)ud;
    tb_cli_status_text(line, sizeof(line), st);
    fprintf(stderr, "\r\033[K%s", line);
}

/* One option of run's own, or of the shared groups (tb_cli_parse's
 * handler). */
static int option(void *ud, int c, const char *arg)
{
    struct run_args *a = ud;
    switch (c) {
    case 'v': a->verbose = 1; return 1;
    case 'q': a->quiet = 1; return 1;
    case O_PROMPT: a->q.req.prompt = arg; return 1;
    case O_MESSAGES: a->messages_file = arg; return 1;
    case O_FAULT: a->fault = arg; return 1;
    default: return tb_cli_groups_option(&a->c, &a->q, &a->au, c, arg);
    }
}

/* Returns -1 to go on, or an exit code. */
static int parse(int argc, char **argv, struct run_args *a)
{
    tb_cli_common_init(&a->c);
    tb_cli_audio_init(&a->au);
    tb_cli_request_init(&a->q, DEFAULT_MAX_TOKENS);
    a->q.req.prompt = DEFAULT_PROMPT;
    return tb_cli_parse(argc, argv, &tb_doc_run, option, a, NULL);
}

int tb_cmd_run(int argc, char **argv)
{
    struct run_args a;
    struct tb_live_opts lo;
    struct tb_live_result r;
    struct tb_report_src src = {"live", "", NULL, NULL, NULL};
    struct tb_report_live rl;
    struct tb_cli_plays plays;
    struct tb_cli_endpoint ep;
    char label[512];
    char *messages = NULL;
    const struct tb_api_info *info;
    int code, rc, audio_code;

    memset(&a, 0, sizeof(a));
    memset(&ep, 0, sizeof(ep));
    memset(&r, 0, sizeof(r));
    tb_cli_plays_init(&plays, 0);
    code = parse(argc, argv, &a);
    if (code >= 0)
        return code;

    /* Every output can be written before the request is sent. */
    code = tb_cli_outputs_check("run", &a.c);
    if (code < 0)
        code = tb_cli_audio_probe(&a.au);
    if (code >= 0)
        goto out;
    if (tb_cli_endpoint_resolve(&a.q, "run", 1, &ep) != 0) {
        code = TB_EXIT_USAGE; /* frees on the way out */
        goto out;
    }
    info = ep.info;
    if (!ep.mock && (a.c.nsources > 0 || a.fault != NULL)) {
        tb_cli_error("run: --trace/--synth/--preset/--fault drive the built-in mock; "
                     "they do not apply with a base URL or a key (add --mock)");
        code = TB_EXIT_USAGE; /* frees on the way out */
        goto out;
    }
    if (a.messages_file != NULL) {
        messages = read_small(a.messages_file, MESSAGES_MAX);
        if (messages == NULL) {
            tb_cli_error("--messages: %s: %s", a.messages_file, strerror(errno));
            code = TB_EXIT_USAGE; /* frees on the way out */
            goto out;
        }
        a.q.req.messages_json = messages;
    }

    /* The speaker first: a sink that cannot open is the only message. */
    code = a.c.html != NULL ? tb_cli_audio_for_html(&a.au, TB_HTML_AUDIO_MAX_S) : -1;
    if (code < 0)
        code = tb_cli_audio_start(&a.au, &a.c.o, NULL);
    if (code >= 0)
        goto out;
    if (ep.mock) {
        code = tb_cli_load_source(&a.c, MOCK_PRESET, &ep.stream, &src, label, sizeof(label));
        if (code >= 0)
            goto out;
        if (tb_cli_endpoint_mock_start(&ep, a.fault) != 0) {
            code = TB_EXIT_USAGE;
            goto out;
        }
        if (!a.q.mock)
            fprintf(stderr,
                    "ttsbuf: no --base-url, %s or API key: streaming from the built-in "
                    "mock provider at %s (%s)\n",
                    info->base_env, ep.base, src.name);
    }
    a.q.req.model = a.q.model;

    memset(&lo, 0, sizeof(lo));
    lo.sim = a.c.o;
    lo.req = a.q.req;
    tb_cli_request_http(&a.q, tb_cli_request_url(ep.base, info), ep.key, &lo.http);
    if (lo.http.url == NULL) {
        tb_cli_error("out of memory");
        code = TB_EXIT_USAGE;
        goto out;
    }
    lo.http.log = a.verbose ? log_line : NULL;
    lo.http.cancel = tb_cli_catch_interrupts();
    plays.keep_all = a.c.svg != NULL || a.c.html != NULL;
    lo.play_fn = tb_cli_collect_play;
    lo.play_ud = &plays;

    rc = tb_live_run(&lo, &r, a.quiet || !isatty(STDERR_FILENO) ? NULL : status_line, NULL);
    if (!a.quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    free((char *)lo.http.url);
    /* A speech output that failed (printed; its WAV capped or cut) loses
     * nothing received: the trace is still written. */
    audio_code = tb_cli_audio_finish(&a.au);
    if (rc != 0 && audio_code >= 0) {
        code = audio_code;
        goto out;
    }
    if (rc != 0) {
        tb_cli_error("run: %s", r.message[0] ? r.message : tb_strerror(rc));
        code = TB_EXIT_USAGE;
        goto out;
    }
    if (r.usage_retried && !a.quiet)
        fprintf(stderr, "ttsbuf: the server rejected stream_options.include_usage; "
                        "retried once without it\n");

    /* Partial or not, the trace and the report are written. */
    snprintf(r.stream.model, sizeof(r.stream.model), "%s", a.q.model);
    snprintf(r.stream.base_url, sizeof(r.stream.base_url), "%s", ep.base_red);
    snprintf(r.stream.provider, sizeof(r.stream.provider), "%s", tb_cli_endpoint_provider(&ep));
    code = -1;
    if (a.c.record != NULL)
        code = tb_cli_record(a.c.record, "run", &a.c.o, &r.stream);
    if (audio_code >= 0) {
        /* The playout stopped with the speech output: no report on half
         * a run, but what was received is in the trace. */
        code = audio_code;
        goto out;
    }
    memset(&rl, 0, sizeof(rl));
    rl.model = a.q.model;
    rl.base_url = ep.base_red;
    rl.provider = tb_cli_endpoint_provider(&ep);
    rl.api = info->name;
    rl.server = r.have_server ? &r.server : NULL;
    rl.http_status = r.http_status;
    rl.error_kind = r.error ? tb_reader_error_name(r.error) : NULL;
    rl.error = r.message;
    rl.warning = r.warning;
    rl.sse_events = r.sse_events;
    rl.tool_calls = r.tool_calls;
    rl.finish_reason = r.finish_reason;
    rl.usage_retried = r.usage_retried;
    rl.usage_ignored = r.usage_ignored;
    rl.surrogates_replaced = r.surrogates_replaced;
    if (!ep.mock) {
        src.kind = "live";
        src.name = ep.base_red;
    }
    src.end = &r.stream.end;
    if (a.c.svg != NULL && r.sim.play.chunks > 0 && code < 0)
        code = tb_cli_svg_timeline(a.c.svg, &src, &a.c.o, &r.stream, &plays.all, &r.sim, &rl);
    else if (a.c.svg != NULL && code < 0)
        fprintf(stderr, "ttsbuf: --svg: no timeline written: no chunk was complete\n");
    if (a.au.sp != NULL)
        tb_cli_audio_rate_model(&a.au, &r.stream, &a.c.o);
    /* A failed run's page is written too, headed by what failed. */
    if (a.c.html != NULL && code < 0) {
        struct tb_html_run h = {"run",       &src,       &a.c.o, &r.stream, &r.sim,
                                &plays.gaps, &plays.all, &rl,    &a.au,     a.c.max_gaps};
        code = tb_cli_html_run(a.c.html, &h);
    }
    if (a.c.json) {
        tb_report_json_audio(stdout, &src, &a.c.o, &r.sim, &plays.gaps, &rl, &a.au);
    } else if (!a.quiet) {
        FILE *rf = tb_cli_report_file(&a.c);
        tb_report_human(rf, &src, &a.c.o, &r.sim, &plays.gaps, a.c.max_gaps, &rl);
        tb_cli_audio_report(rf, &a.au, &a.c.o, &r.sim, a.c.max_gaps);
    }
    fflush(stdout); /* errors and gates after the report */
    if (r.error != 0) {
        char hint[400];
        tb_cli_error("%s%s", r.message,
                     tb_cli_endpoint_hint(&ep, r.http_status, hint, sizeof(hint)));
        code = TB_EXIT_FAILED;
    } else if (code < 0) {
        code = tb_cli_underrun_gate(&a.c, &r.sim, &r.stream.end);
    }
out:
    tb_cli_audio_free(&a.au);
    tb_cli_endpoint_free(&ep);
    tb_live_result_free(&r);
    tb_cli_plays_free(&plays);
    free(messages);
    return code;
}
