/*
 * cmd_serve.c - `ttsbuf serve`: the mock OpenAI-compatible provider.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "optdoc.h"
#include "options.h"
#include "report.h"
#include "request.h"
#include "serve_fds.h"
#include "serve_log.h"
#include "sources.h"
#include "ttsbuf/error.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/serve.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/ttslat.h"

#define DEFAULT_PRESET TB_PRESET_MOCK

static struct tb_serve *running; /* for the signal handler */

static void on_signal(int sig)
{
    (void)sig;
    if (running != NULL)
        tb_serve_stop(running); /* async-signal-safe */
}

enum {
    O_LISTEN = TB_O__COMMON_END,
    O_FAULT,
    O_PREFILL,
    O_TOOL_RATE,
    O_MAX_CONNS,
    O_THREADS,
    O_MEM_BUDGET,
    O_LOG,
    O_TTS_LAT,
    O_TTS_SEED,
    O_TTS_RTF,
    O_TTS_LEAD,
    O_TTS_FAULT,
    O_TTS_KEY,
    O_SAME_STREAM,
    O_MAX_INFLIGHT,
    O_TTS_MAX_INFLIGHT,
    O_RETRY_AFTER
};

#define TTS_RTF_MAX 100.0           /* --tts-rtf's upper bound, as run's */
#define MEM_BUDGET_MAX_MIB 1048576u /* --memory-budget's: 1 TiB */

_Static_assert(TB_SERVE_PORT_DEFAULT == 8788, "--listen's help states the default");

static const struct tb_optdoc serve_rows[] = {
    {"listen", O_LISTEN, "HOST:PORT",
     "address to bind (default 127.0.0.1:8788; port 0: any free port, printed); a non-loopback "
     "address draws a warning",
     "HOST is a numeric address."},
    {"fault", O_FAULT, "SPEC", "faults for every request (below)", NULL},
    {"prefill-per-token", O_PREFILL, "S",
     "seconds of prefill per input token, added before a completion's first token (default 0)",
     "Allowed 0..1. The input tokens P are the bytes of the request's text (every message's "
     "content, Anthropic's system, or the legacy prompt) over 4, rounded up, as usage reports "
     "them; every item of the response is due S x P later. Each completion response's head "
     "carries X-Ttsbuf-Prompt-Tokens: P and X-Ttsbuf-Prefill: S x P (seconds). TTS requests never "
     "pay it."},
    {"tool-call-rate", O_TOOL_RATE, "P",
     "the fraction of streamed requests offering tools answered with a tool call first (default "
     "0)",
     "Allowed 0..1, drawn from the stream's seed (--synth's seed=N; 0 otherwise), call by call in "
     "the order requests come. The call is written at once, whole (not after the stream's ttft: "
     "a tool call's own timing is not modelled). A chat, Anthropic or Ollama request with a non-empty "
     "\"tools\" and no tool result is answered with a call of its first tool, {\"query\": WORD}, "
     "in the dialect's documented shape (OpenAI tool_calls deltas, Anthropic tool_use with "
     "input_json_delta, Ollama message.tool_calls); a request carrying the result (role "
     "\"tool\", or a tool_result block) gets speech."},
    {"max-connections", O_MAX_CONNS, "N",
     "connections served at once (default 4096); one more is answered 503 at once",
     "Allowed 1..1000000. A connection past N gets 503 with an error body naming the cap and "
     "Retry-After: 1 before its request is read; with N/8 + 64 such refusals open, new "
     "connections wait in the kernel's backlog. Descriptors: each connection holds one, the "
     "server 5 more (its listener, a stop signal, 3 while eSpeak NG reads its voice data) and 4 "
     "a loop (--threads), besides those the process has open when it starts (its standard "
     "streams, --log's file): N + 12 with one loop, the three standard streams and no file. The "
     "soft descriptor limit (ulimit -n) is raised toward the hard one for them, and for "
     "N/8 + 64 refusals over the cap, which take only what the limit leaves (past it, new "
     "connections wait in the backlog). An N the hard limit cannot hold is refused, the message "
     "giving the count and the largest N that fits; the default is lowered to what it holds, "
     "with a warning."},
    {"threads", O_THREADS, "N|auto",
     "event loops, a thread each, that share the connections (default 1; auto: one per CPU, at "
     "most 8)",
     "Allowed 1..16. The first loop accepts every connection and hands it to the loop with the "
     "fewest open; a connection stays on its loop. The loops share --max-connections, "
     "--memory-budget, the numbering of requests, draws and TTS requests, and --log, whose lines "
     "are written one at a time in the order of their seq."},
    {"max-inflight", O_MAX_INFLIGHT, "N",
     "completion requests in flight at once (default: no cap); one more is answered 429 with "
     "Retry-After",
     "Allowed 1..1000000: a provider's concurrency limit. A completion request (any dialect) read "
     "while N are in flight gets 429 at once, Retry-After: --retry-after and the dialect's "
     "rate-limit error (OpenAI type requests, code rate_limit_exceeded; Anthropic "
     "rate_limit_error; Ollama {\"error\"}). A request is in flight until its last byte is sent "
     "or its connection closes. Shared by every --threads loop; counted in the stop summary, and "
     "--log's line says refused_over and retry_after_s."},
    {"retry-after", O_RETRY_AFTER, "S",
     "the seconds a 429 over --max-inflight or --tts-max-inflight says in Retry-After (default 1)",
     "Allowed 1..3600; refused without --max-inflight or --tts-max-inflight."},
    {"memory-budget", O_MEM_BUDGET, "MIB",
     "mebibytes of request and output buffers, over all connections (default 256)",
     "Allowed 1..1048576. Past it a new request gets 503 with Retry-After: 1, and a streaming "
     "client too far behind is dropped."},
    {"log", O_LOG, "FILE",
     "write a JSON line per request as it ends (- : stdout): route, request id, times, how it "
     "ended, tokens sent and unsent",
     "Schema ttsbuf.serve_log version 2: a header line (the source with its seed), then per "
     "request seq, route, stream, "
     "request_id (its X-Ttsbuf-Request-Id), end (complete, client_closed, fault, error, dropped, "
     "stopped), http_status, received_s, first_byte_s, end_s, closed_s (CLOCK_MONOTONIC "
     "seconds), late_max_s (the largest lateness of its timed writes against the schedule, as "
     "the server measured it), prompt_tokens, tokens_sent, tokens_planned, tokens_unsent, its "
     "stream's seed, the TTS's tts_chars "
     "and audio bytes, bytes_sent, refused_over and retry_after_s (a 429 over --max-inflight "
     "or --tts-max-inflight, else null), tool_call, tool_result and tool_args (--tool-call-rate: "
     "answered with a call; a tool result carried in its dialect's shape; the call's arguments "
     "it was called with or carried back). Each line is flushed as "
     "written; no header but the request "
     "id is logged. A FILE that cannot be written is a usage error."},
    TB_OPTDOC_END,
};

static const struct tb_optdoc serve_stream_rows[] = {
    {"same-stream", O_SAME_STREAM, NULL,
     "every completion request streams the source's one stream (default with --synth or a "
     "preset: each its own, drawn from the source's seed and the request)",
     "Without it, a synthetic source gives each completion request a stream of its own: the "
     "source's spec with the seed mixed from the source's seed and the request's "
     "X-Ttsbuf-Request-Id (bench names every request and call turn), or, without one, its number "
     "among such requests; the first of those streams the source itself, byte for byte. So the "
     "requests of a bench level, or the turns of its calls, have a real distribution, and the "
     "same seed gives the same set again. A trace is one recording: every request streams it. "
     "--log's header names the seed and whether streams differ, and each request's line its "
     "stream's seed (sim --synth SPEC,seed=N gives that stream)."},
    TB_OPTDOC_END,
};

static const struct tb_optdoc serve_tts_rows[] = {
    {"tts-latency", O_TTS_LAT, "SPEC",
     "first-byte latency of the mock TTS's i-th request (default 0): S, lognormal:p50=A,p90=B, "
     "uniform:A..B, empirical:FILE or list:FILE, as run's --tts-latency",
     "Request i (from 1, in the order the valid TTS requests were read) draws L_i from the spec "
     "with --tts-seed, as run's chunk j draws L_j: a client that recomputes the draws knows when "
     "each first byte is due (request time + L_i)."},
    {"tts-seed", O_TTS_SEED, "N", "the seed of --tts-latency's draws (default 0)", NULL},
    {"tts-rtf", O_TTS_RTF, "R",
     "seconds the mock TTS takes per second of audio after the first byte (default 0: all of it "
     "at once)",
     "Allowed 0..100. The audio goes in 20 ms pieces: the piece after a seconds of audio is due "
     "at the first byte + R x a."},
    {"tts-lead", O_TTS_LEAD, "S",
     "seconds of digital silence that start each TTS answer's audio (default 0: eSpeak NG's own)",
     "Allowed 0..10. The audio is S seconds of zero samples (rounded to whole samples) and then "
     "eSpeak NG's speech from its first non-zero sample: a client that measures leading silence "
     "(run's latency.leading_silence_s) should find S. The first byte is still due at L_i."},
    {"tts-max-inflight", O_TTS_MAX_INFLIGHT, "N",
     "TTS requests in flight at once (default: no cap); one more is answered 429 as "
     "--max-inflight",
     "Allowed 1..1000000; each TTS dialect's error shape."},
    {"tts-fault", O_TTS_FAULT, "SPEC", "faults for every TTS request (below)", NULL},
    {"tts-api-key-file", O_TTS_KEY, "F",
     "require the key in F's first line in each TTS dialect's key header (else any key, or none, "
     "is accepted); never printed",
     "A missing or wrong key gets 401 in the dialect's error shape."},
    TB_OPTDOC_END,
};

static const struct tb_optsec serve_secs[] = {
    {"Source (one; a FILE argument is a trace, as --trace FILE; default --preset " DEFAULT_PRESET
     "):",
     tb_opt_sources},
    {NULL, serve_stream_rows},
    {"Server:", serve_rows},
    {"Text to speech (a mock: eSpeak NG's voice, whatever the request names):", serve_tts_rows},
    {NULL, tb_opt_help},
    {NULL, NULL},
};

static void serve_tail(FILE *f)
{
    fprintf(f, "\nFaults: items joined by '+', for every request with --fault, or per request\n"
               "in the model name after a '+', e.g. model \"mock+stall@40:1.5+crlf\":\n"
               "  stall@K:S      pause S seconds before token K (0-based)\n"
               "  drop@K         close the connection before token K\n"
               "  status@N       answer HTTP N with an OpenAI-style JSON error\n"
               "  status@N:html  ... with an HTML body\n"
               "  html           answer 200 with Content-Type text/html\n"
               "  malformed@K    token K's event carries truncated JSON\n"
               "  error@K        an error event instead of token K, then the end\n"
               "  burst@N        N tokens per event\n"
               "  reasoning@N    N reasoning deltas before the content\n"
               "  crlf           CRLF line endings;  comments: ': keep-alive' lines\n"
               "  nodone         never send [DONE] (anthropic: message_stop; ollama: the\n"
               "                 final done line)\n"
               "  reject-usage   answer 400 to requests with stream_options\n"
               "\nTTS faults: items joined by '+', for every TTS request with --tts-fault, or per\n"
               "request in the model name after a '+' (OpenAI model, ElevenLabs and Cartesia\n"
               "model_id, Deepgram ?model=), e.g. \"tts-1+cut@0.5\":\n"
               "  status@N       answer HTTP N with the dialect's JSON error\n"
               "  cut@F          close mid-audio once a share F (0..1) of its bytes is sent\n"
               "  stall          send nothing until the client gives up\n"
               "  drip@BPS       send the audio at BPS bytes a second\n");
    tb_cli_usage_presets(f);
}

static int cmd_serve(int argc, char **argv);

const struct tb_cmddoc tb_doc_serve = {
    "serve",
    "[FILE | SOURCE] [OPTIONS]",
    "A mock OpenAI-compatible provider: every request streams the source's tokens\n"
    "with the source's own timing (event k at request time + t_k); a synthetic\n"
    "source gives each its own draw (--same-stream: the source itself).\n"
    "  POST /v1/chat/completions, POST /v1/completions (stream true or false),\n"
    "  POST /v1/messages (Anthropic Messages: message_start, ping, thinking and\n"
    "  text blocks, message_delta usage, message_stop), POST /api/chat (Ollama\n"
    "  NDJSON, a final line with the server's durations), GET /v1/models.\n"
    "  Any model name is accepted; every route has the same timing and faults.\n"
    "And a mock text-to-speech provider speaking eSpeak NG's voice as raw 16-bit PCM:\n"
    "  POST /v1/audio/speech (OpenAI, response_format pcm), POST\n"
    "  /v1/text-to-speech/VOICE[/stream] (ElevenLabs, output_format pcm_R), POST\n"
    "  /v1/speak (Deepgram, encoding=linear16&container=none), POST /tts/bytes\n"
    "  (Cartesia, raw pcm_s16le), each checked as its provider documents it.\n",
    serve_secs,
    "0 stopped by SIGINT or SIGTERM (it prints what it served and the lateness of its "
    "emissions); 2 bad usage, a bad source, or the address cannot be bound; 3 the server failed "
    "while running, or out of memory.",
    serve_tail,
    NULL,
    cmd_serve,
};

/* Splits HOST:PORT (or [v6]:PORT, or a bare PORT) in place. */
static int split_listen(char *s, const char **host, int *port)
{
    char *colon = strrchr(s, ':');
    char *end;
    long p;
    *host = "127.0.0.1";
    if (colon != NULL) {
        *colon = '\0';
        if (s[0] == '[' && colon > s + 1 && colon[-1] == ']') {
            colon[-1] = '\0';
            s++;
        }
        if (*s != '\0')
            *host = s;
        s = colon + 1;
    }
    p = strtol(s, &end, 10);
    if (end == s || *end != '\0' || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

static int is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return 0;
}

/* What the command line asked for. */
struct serve_args {
    struct tb_cli_common c;
    struct tb_serve_opts so;
    char listen[300];        /* --listen, split in place */
    const char *tts_latency; /* --tts-latency SPEC */
    uint64_t tts_seed;
    const char *tts_key_file;
    struct tb_ttslat *lat; /* the spec's latency */
    char *key;             /* --tts-api-key-file's key */
    int max_conns_set;     /* --max-connections given */
    const char *log_path;  /* --log FILE */
    struct tb_cli_serve_log log;
    int same_stream;           /* --same-stream */
    int synthetic;             /* the source is a spec (spec below), not a trace */
    struct tb_synth_spec spec; /* ... from which each request draws its stream */
};

#define KEY_FILE_MAX 4096

/* The key: F's first line, without the blanks after it. */
static int read_key(struct serve_args *a)
{
    FILE *f = fopen(a->tts_key_file, "rb");
    size_t n;
    if (f == NULL || (a->key = calloc(1, KEY_FILE_MAX + 2)) == NULL) {
        tb_cli_error("--tts-api-key-file: %s: %s", a->tts_key_file,
                     strerror(f == NULL ? errno : ENOMEM));
        if (f != NULL)
            fclose(f);
        return f == NULL ? TB_EINVAL : TB_ENOMEM;
    }
    n = fread(a->key, 1, KEY_FILE_MAX + 1, f);
    fclose(f);
    if (n > KEY_FILE_MAX) {
        tb_cli_error("--tts-api-key-file: %s: over %d bytes", a->tts_key_file, KEY_FILE_MAX);
        return TB_EINVAL;
    }
    a->key[strcspn(a->key, "\r\n")] = '\0';
    n = strlen(a->key);
    while (n > 0 && (a->key[n - 1] == ' ' || a->key[n - 1] == '\t'))
        a->key[--n] = '\0';
    if (n == 0) {
        tb_cli_error("--tts-api-key-file: %s: the first line is empty", a->tts_key_file);
        return TB_EINVAL;
    }
    a->so.tts_key = a->key;
    return 0;
}

/* The TTS options that need all of them: the latency (with the seed),
 * the key. */
static int tts_apply(struct serve_args *a)
{
    char err[512];
    int rc;
    if (a->tts_latency != NULL) {
        rc = tb_ttslat_create(a->tts_latency, a->tts_seed, &a->lat, err, sizeof(err));
        if (rc != 0) {
            tb_cli_error("--tts-latency: %s", err);
            return rc == TB_ENOMEM ? rc : TB_EINVAL;
        }
        a->so.tts_latency_at = tb_ttslat_at;
        a->so.tts_latency_ud = a->lat;
    }
    return a->tts_key_file != NULL ? read_key(a) : 0;
}

/* One option of serve's own, or a source (tb_cli_parse's handler). */
static int option(void *ud, int c, const char *arg)
{
    struct serve_args *a = ud;
    char err[256];
    switch (c) {
    case O_LISTEN:
        snprintf(a->listen, sizeof(a->listen), "%s", arg);
        if (split_listen(a->listen, &a->so.host, &a->so.port) != 0) {
            tb_cli_error("--listen: '%s' is not HOST:PORT with PORT in 0..65535", arg);
            return TB_EINVAL;
        }
        return 0;
    case O_FAULT:
        if (tb_faults_parse(arg, &a->so.faults, err, sizeof(err)) != 0) {
            tb_cli_error("--fault: %s", err);
            return TB_EINVAL;
        }
        return 0;
    case O_PREFILL:
        return tb_cli_opt_double("--prefill-per-token", arg, 0, TB_SERVE_PREFILL_MAX,
                                 &a->so.prefill_per_token);
    case O_TOOL_RATE:
        return tb_cli_opt_double("--tool-call-rate", arg, 0, 1, &a->so.tool_call_rate);
    case O_MAX_CONNS:
        a->max_conns_set = 1;
        return tb_cli_opt_size("--max-connections", arg, 1, TB_SERVE_CONNS_MAX, &a->so.max_conns);
    case O_THREADS: {
        size_t n = 1;
        int rc = tb_cli_opt_threads("--threads", arg, TB_SERVE_THREADS_MAX, &n);
        a->so.threads = n > 0 ? (unsigned)n : tb_serve_threads_auto();
        return rc;
    }
    case O_MEM_BUDGET: {
        size_t mib = 0;
        int rc = tb_cli_opt_size("--memory-budget", arg, 1, MEM_BUDGET_MAX_MIB, &mib);
        a->so.mem_budget = mib << 20;
        return rc;
    }
    case O_MAX_INFLIGHT:
        return tb_cli_opt_size("--max-inflight", arg, 1, TB_SERVE_INFLIGHT_MAX,
                               &a->so.max_inflight);
    case O_TTS_MAX_INFLIGHT:
        return tb_cli_opt_size("--tts-max-inflight", arg, 1, TB_SERVE_INFLIGHT_MAX,
                               &a->so.tts_max_inflight);
    case O_RETRY_AFTER: {
        size_t v = 1;
        int rc = tb_cli_opt_size("--retry-after", arg, 1, TB_SERVE_RETRY_AFTER_MAX, &v);
        a->so.retry_after = (unsigned)v;
        return rc;
    }
    case O_LOG: a->log_path = arg; return 0;
    case O_TTS_LAT: a->tts_latency = arg; return 0;
    case O_TTS_SEED: {
        char *end;
        unsigned long long v;
        errno = 0;
        v = strtoull(arg, &end, 10);
        if (end == arg || *end != '\0' || errno != 0 || arg[0] == '-' || arg[0] == '+') {
            tb_cli_error("--tts-seed: '%s' is not a whole number in 0..18446744073709551615", arg);
            return TB_EINVAL;
        }
        a->tts_seed = (uint64_t)v;
        return 0;
    }
    case O_TTS_RTF: {
        char *end;
        double v;
        errno = 0;
        v = strtod(arg, &end);
        if (end == arg || *end != '\0' || errno != 0 || !isfinite(v) || v < 0 || v > TTS_RTF_MAX) {
            tb_cli_error("--tts-rtf: '%s' is not a number in 0..100", arg);
            return TB_EINVAL;
        }
        a->so.tts_rtf = v;
        return 0;
    }
    case O_TTS_LEAD: return tb_cli_opt_double("--tts-lead", arg, 0, 10, &a->so.tts_lead);
    case O_TTS_FAULT:
        if (tb_tts_faults_parse(arg, &a->so.tts_faults, err, sizeof(err)) != 0) {
            tb_cli_error("--tts-fault: %s", err);
            return TB_EINVAL;
        }
        return 0;
    case O_TTS_KEY: a->tts_key_file = arg; return 0;
    case O_SAME_STREAM: a->same_stream = 1; return 0;
    default: return tb_cli_groups_option(&a->c, NULL, NULL, c, arg);
    }
}

/* A request's own stream (serve.h's Streams): the source's spec with the
 * request's seed. */
static int draw_stream(void *ud, uint64_t seed, struct tb_stream *out)
{
    struct tb_synth_spec spec = *(const struct tb_synth_spec *)ud;
    spec.seed = seed;
    return tb_synth_generate(&spec, out);
}

/* The options, the source operand, the stream to serve. */
static int prepare(struct serve_args *a, int argc, char **argv, struct tb_stream *s,
                   struct tb_report_src *src, char *label, size_t labellen)
{
    int first, rc;
    tb_cli_common_init(&a->c);
    tb_faults_init(&a->so.faults);
    tb_tts_faults_init(&a->so.tts_faults);
    a->so.host = "127.0.0.1";
    a->so.port = TB_SERVE_PORT_DEFAULT;
    rc = tb_cli_parse(argc, argv, &tb_doc_serve, option, a, &first);
    if (rc == 0 && a->so.retry_after > 0 && a->so.max_inflight == 0 &&
        a->so.tts_max_inflight == 0) {
        tb_cli_error("serve: --retry-after is what a 429 over --max-inflight or "
                     "--tts-max-inflight says: give one of them");
        rc = TB_EINVAL;
    }
    if (rc == 0)
        rc = tts_apply(a);
    if (rc == 0)
        rc = tb_cli_source_operand(&a->c, "serve", argc, argv, first);
    if (rc == 0)
        rc = tb_cli_load_source(&a->c, DEFAULT_PRESET, s, src, label, labellen);
    a->so.stream = s;
    if (rc == 0)
        a->synthetic = tb_cli_source_spec(&a->c, DEFAULT_PRESET, &a->spec);
    if (rc == 0 && a->synthetic && !a->same_stream) {
        a->so.stream_for = draw_stream;
        a->so.stream_for_ud = &a->spec;
        a->so.seed = a->spec.seed;
    }
    return rc;
}

/* Binds the address: one that cannot be bound is the command line's. */
static int listen_on(struct tb_serve_opts *so, int explicit_cap)
{
    char err[256];
    int rc = tb_cli_serve_fd_limit(so, explicit_cap);
    if (rc != 0)
        return rc;
    rc = tb_serve_create(so, &running, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("%s", err);
        return rc == TB_ENOMEM ? rc : TB_EINVAL;
    }
    if (!is_loopback(so->host))
        fprintf(stderr,
                "ttsbuf: warning: listening on %s, which is not a loopback address: "
                "anyone who can reach it can use this server\n",
                so->host);
    return 0;
}

/* --log: a request's line; a log that cannot be written stops the
 * server (the run fails, exit 3). */
static void log_request(void *ud, const struct tb_serve_request *r)
{
    if (tb_cli_serve_log_write(ud, r) != 0 && running != NULL)
        tb_serve_stop(running);
}

/* --log FILE opened before the address is bound (a file that cannot be
 * made is the command line's), its requests passed to it. */
static int log_open(struct serve_args *a)
{
    int rc;
    if (a->log_path == NULL)
        return 0;
    rc = tb_cli_serve_log_open(&a->log, a->log_path);
    if (rc == 0) {
        a->so.request_log = log_request;
        a->so.request_log_ud = &a->log;
    }
    return rc;
}

/* Serves until SIGINT or SIGTERM, then says what it served and how late
 * its emissions were. */
static int serve(const struct serve_args *a, const struct tb_report_src *src,
                 struct tb_cli_serve_log *log)
{
    const struct tb_serve_opts *so = &a->so;
    struct tb_serve_stats st;
    struct sigaction sa;
    char url[320];
    int rc;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    snprintf(url, sizeof(url), "http://%s%s%s:%d/v1", strchr(so->host, ':') ? "[" : "", so->host,
             strchr(so->host, ':') ? "]" : "", tb_serve_port(running));
    if (tb_cli_serve_log_header(log, src, a->synthetic ? &a->spec.seed : NULL,
                                so->stream_for != NULL, url) != 0) {
        tb_cli_error("%s", log->err);
        return log->rc;
    }
    fprintf(stderr, "ttsbuf serve: listening on %s  (%s %s)\n", url, src->kind, src->name);
    if (so->stream_for != NULL)
        fprintf(stderr,
                "ttsbuf serve: each completion request streams its own draw of it (seed %llu, "
                "mixed with the request; --same-stream: one stream for all)\n",
                (unsigned long long)so->seed);
    rc = tb_serve_run(running);
    tb_serve_stats(running, &st);
    tb_cli_serve_summary(&st, so);
    if (rc != 0)
        tb_cli_error("serve: %s", tb_strerror(rc));
    else if (log->rc != 0)
        tb_cli_error("%s", log->err);
    if (rc == 0)
        rc = log->rc;
    return rc == 0 || rc == TB_ENOMEM ? rc : TB_EIO;
}

/* ttsbuf serve: prepare, listen, serve. */
static int cmd_serve(int argc, char **argv)
{
    struct serve_args a;
    struct tb_stream s;
    struct tb_report_src src = {.kind = "", .name = ""};
    char label[512];
    int rc;
    memset(&a, 0, sizeof(a));
    tb_stream_init(&s);
    rc = prepare(&a, argc, argv, &s, &src, label, sizeof(label));
    if (rc == 0)
        rc = log_open(&a);
    if (rc == 0)
        rc = listen_on(&a.so, a.max_conns_set);
    if (rc == 0)
        rc = serve(&a, &src, &a.log);
    tb_serve_destroy(running);
    running = NULL;
    if (tb_cli_serve_log_close(&a.log) != 0 && rc == 0) {
        tb_cli_error("%s", a.log.err);
        rc = TB_EIO;
    }
    tb_stream_free(&s);
    tb_ttslat_destroy(a.lat);
    tb_cli_key_free(a.key);
    return tb_cli_exit(rc);
}
