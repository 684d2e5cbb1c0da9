/*
 * request.c - the request options `run` and `bench` share (see
 * request.h).
 */
#include "request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "optdoc.h"
#include "ttsbuf/error.h"
#include "ttsbuf/http.h"

_Static_assert(TB_CLI_HEADERS_MAX == 64, "-H's help states the limit");
_Static_assert((int)TB_CLI_TIMEOUT_DEFAULT == 600, "--timeout's help states the default");

const struct tb_optdoc tb_opt_request[] = {
    {"base-url", TB_O_BASE, "URL",
     "the API root, e.g. https://api.openai.com/v1 (else the dialect's variable: "
     "$OPENAI_BASE_URL, $ANTHROPIC_BASE_URL or $OLLAMA_HOST by --api; else, with an API key, the "
     "vendor's API; else, for run only, the built-in mock)",
     "A key without a base URL goes to the vendor's API (https://api.openai.com/v1, "
     "https://api.anthropic.com/v1, http://127.0.0.1:11434 by --api), as the official SDKs do; "
     "the mock is never chosen because a variable is missing when a key is set."},
    {"mock", TB_O_MOCK, NULL,
     "the built-in mock provider on loopback, whatever the environment holds (reports, JSON and "
     "traces say \"mock\"; bench: its default stream)",
     NULL},
    {"api", TB_O_API, "API",
     "chat: POST {base}/chat/completions (default); completions: {base}/completions; anthropic: "
     "{base}/messages (Messages streaming, e.g. base https://api.anthropic.com/v1); ollama: "
     "{base}/api/chat (NDJSON, e.g. base http://localhost:11434; its server-side durations are "
     "reported). Reasoning and thinking deltas are recorded as reasoning, never spoken",
     "Anthropic's stream has no [DONE]: it ends with message_stop. Ollama's final line's "
     "total_duration, load_duration, prompt_eval_duration, eval_count and eval_duration are "
     "reported and recorded."},
    {"model", TB_O_MODEL, "NAME",
     "the model (else $OPENAI_MODEL for chat/completions; required for real endpoints)", NULL},
    {"api-key-file", TB_O_KEYFILE, "F",
     "read the API key from F (else $OPENAI_API_KEY, or $ANTHROPIC_API_KEY for anthropic); sent "
     "as Authorization: Bearer (anthropic: x-api-key, with anthropic-version), never printed or "
     "written",
     "The key is the file's first line (ollama needs none). A server that quotes it back (whole, "
     "or 8 characters of it or more, even cut or escaped) sees it masked in every output, "
     "whatever its length. Redirects are followed up "
     "to 3 times, http and https only; once a redirect leaves the first URL's origin (scheme, "
     "host, port), neither the key nor any -H header is sent there."},
    {NULL, 'H', "'Name: value'", "an extra request header (repeatable, up to 64)", NULL},
    {"max-tokens", TB_O_MAXTOK, "N", "default 300", NULL},
    {"temperature", TB_O_TEMP, "T", "0..2; not sent unless given", NULL},
    {"body-json", TB_O_BODYJSON, "JSON", "an object merged into the request body", "Its keys win."},
    {"no-usage", TB_O_NOUSAGE, NULL,
     "do not ask for stream_options.include_usage (chat, completions; the others always report "
     "usage)",
     "It is asked by default, and retried once without when the server rejects it."},
    {"idle-timeout", TB_O_IDLE, "S",
     "give up on a stream after S seconds without a data event; SSE comments and keep-alives do "
     "not count as data (default 60; 0: never)",
     "The wait for the first byte is included; checked about once a second. A data event is "
     "content, reasoning, a tool call, usage, a finish reason, the end or an error; a gateway "
     "that sends keep-alives while its model is stuck trips it (error kind idle_timeout). While "
     "a full ring holds the stream back, the idle clock is paused: the server is not silent."},
    {"timeout", TB_O_TIMEOUT, "S",
     "give up on a request after S seconds in all (default 600, as the official SDKs; 0: never)",
     "Redirects included, and honoured while a full ring holds the stream back (error kind "
     "timeout)."},
    {"connect-timeout", TB_O_CONNTO, "S", "default 10", NULL},
    {"insecure", TB_O_INSECURE, NULL, "do not verify TLS certificates (off by default)",
     "For a local test server with a self-signed certificate; never for a real key."},
    TB_OPTDOC_END,
};

void tb_cli_request_init(struct tb_cli_request *r, long max_tokens)
{
    memset(r, 0, sizeof(*r));
    tb_api_request_init(&r->req);
    r->req.max_tokens = max_tokens;
    r->req.include_usage = 1;
    r->idle = 60;
    r->timeout = TB_CLI_TIMEOUT_DEFAULT;
    r->connect = 10;
}

int tb_cli_request_option(struct tb_cli_request *r, int c, const char *arg)
{
    size_t z;
    int rc;
    switch (c) {
    case 'H':
        if (r->nheaders == TB_CLI_HEADERS_MAX) {
            tb_cli_error("-H: at most %d headers", TB_CLI_HEADERS_MAX);
            return TB_EINVAL;
        }
        if (strchr(arg, ':') == NULL || strpbrk(arg, "\r\n") != NULL) {
            tb_cli_error("-H: '%s' is not 'Name: value' on one line", arg);
            return TB_EINVAL;
        }
        r->headers[r->nheaders++] = arg;
        return 0;
    case TB_O_BASE: r->base_url = arg; return 0;
    case TB_O_MODEL: r->model = arg; return 0;
    case TB_O_KEYFILE: r->key_file = arg; return 0;
    case TB_O_BODYJSON: r->req.extra_json = arg; return 0;
    case TB_O_NOUSAGE: r->req.include_usage = 0; return 0;
    case TB_O_INSECURE: r->insecure = 1; return 0;
    case TB_O_MOCK: r->mock = 1; return 0;
    case TB_O_API:
        if (tb_api_by_name(arg, &r->req.api) != 0) {
            tb_cli_error("--api: '%s' is not chat, completions, anthropic or ollama", arg);
            return TB_EINVAL;
        }
        return 0;
    case TB_O_MAXTOK:
        rc = tb_cli_opt_size("--max-tokens", arg, 1, 10000000, &z);
        if (rc == 0)
            r->req.max_tokens = (long)z;
        return rc;
    case TB_O_TEMP: return tb_cli_opt_double("--temperature", arg, 0, 2, &r->req.temperature);
    case TB_O_IDLE: return tb_cli_opt_double("--idle-timeout", arg, 0, 86400, &r->idle);
    case TB_O_TIMEOUT: return tb_cli_opt_double("--timeout", arg, 0, 86400, &r->timeout);
    case TB_O_CONNTO: return tb_cli_opt_double("--connect-timeout", arg, 0.001, 3600, &r->connect);
    default: return TB_CLI_NOT_MINE;
    }
}

int tb_cli_key_load(const char *file, const char *opt, const char *env, char **key)
{
    FILE *f;
    size_t n;
    *key = NULL;
    if (file == NULL) {
        const char *v = env != NULL ? getenv(env) : NULL;
        if (v != NULL && v[0] != '\0' && (*key = strdup(v)) == NULL) {
            tb_cli_error("out of memory");
            return TB_ENOMEM;
        }
        return 0;
    }
    f = fopen(file, "rb");
    *key = calloc(1, TB_CLI_KEY_FILE_MAX + 2);
    if (f == NULL || *key == NULL) {
        tb_cli_error("%s: %s: %s", opt, file, strerror(f == NULL ? errno : ENOMEM));
        if (f != NULL)
            fclose(f);
        free(*key);
        *key = NULL;
        return f == NULL ? TB_EINVAL : TB_ENOMEM;
    }
    n = fread(*key, 1, TB_CLI_KEY_FILE_MAX + 1, f);
    fclose(f);
    if (n > TB_CLI_KEY_FILE_MAX) {
        tb_cli_error("%s: %s: %s", opt, file, strerror(EFBIG));
        tb_cli_key_free(*key);
        *key = NULL;
        return TB_ETOOBIG;
    }
    /* The first line, without trailing whitespace. */
    (*key)[strcspn(*key, "\r\n")] = '\0';
    n = strlen(*key);
    while (n > 0 && ((*key)[n - 1] == ' ' || (*key)[n - 1] == '\t'))
        (*key)[--n] = '\0';
    return 0;
}

int tb_cli_request_key(const struct tb_cli_request *r, const struct tb_api_info *info, char **key)
{
    return tb_cli_key_load(r->key_file, "--api-key-file", info->key_env, key);
}

void tb_cli_key_free(char *key)
{
    if (key != NULL) {
        volatile char *p = key;
        while (*p)
            *p++ = 0;
        free(key);
    }
}

char *tb_cli_request_url(const char *base, const struct tb_api_info *info)
{
    /* The path goes before any query: a "?key=" stays a query parameter. */
    size_t bl = strlen(base), pl = strcspn(base, "?#"), n = bl + strlen(info->path) + 8;
    char *url = malloc(n);
    if (url != NULL)
        snprintf(url, n, "%s%.*s%s%s", strstr(base, "://") == NULL ? "http://" : "",
                 (int)(pl > 0 && base[pl - 1] == '/' ? pl - 1 : pl), base, info->path, base + pl);
    return url;
}

void tb_cli_request_http(const struct tb_cli_request *r, const char *url, const char *key,
                         struct tb_http_req *out)
{
    tb_http_req_init(out);
    out->url = url;
    out->bearer = key;
    out->headers = r->headers;
    out->nheaders = r->nheaders;
    out->idle_timeout = r->idle;
    out->total_timeout = r->timeout;
    out->connect_timeout = r->connect;
    out->insecure = r->insecure;
}

int tb_cli_endpoint_resolve(struct tb_cli_request *r, const char *cmd, int mock_default,
                            struct tb_cli_endpoint *ep)
{
    const char *base = NULL;
    int rc;
    memset(ep, 0, sizeof(*ep));
    tb_stream_init(&ep->stream);
    ep->info = tb_api_info(r->req.api);
    if (r->mock && r->base_url != NULL) {
        tb_cli_error("%s: --mock and --base-url exclude each other", cmd);
        return TB_EINVAL;
    }
    if (!r->mock) {
        base = r->base_url != NULL ? r->base_url : getenv(ep->info->base_env);
        if (base != NULL && base[0] == '\0')
            base = NULL;
        rc = tb_cli_request_key(r, ep->info, &ep->key);
        if (rc != 0)
            return rc;
        if (base == NULL && ep->key != NULL)
            base = ep->info->default_base;
        if (base == NULL && !mock_default) {
            tb_cli_error("%s: no endpoint: give --base-url (or set %s), an API key (the "
                         "default is then %s), or --mock",
                         cmd, ep->info->base_env, ep->info->default_base);
            return TB_EINVAL;
        }
    }
    if (r->model == NULL && ep->info->usage_option)
        r->model = getenv("OPENAI_MODEL"); /* the OpenAI pair */
    if (r->model != NULL && r->model[0] == '\0')
        r->model = NULL;
    if (base == NULL) {
        ep->mock = 1;
        tb_cli_key_free(ep->key); /* the mock never sees a key */
        ep->key = NULL;
        if (r->model == NULL)
            r->model = "ttsbuf-mock";
        return 0;
    }
    if (r->model == NULL) {
        tb_http_redact(base, strlen(base), ep->base_red, sizeof(ep->base_red)); /* ?key= */
        tb_cli_error("%s: --model is required for %s%s", cmd, ep->base_red,
                     ep->info->usage_option ? " (or set OPENAI_MODEL)" : "");
        return TB_EINVAL;
    }
    snprintf(ep->buf, sizeof(ep->buf), "%s%s", strstr(base, "://") == NULL ? "http://" : "", base);
    ep->base = ep->buf;
    tb_http_redact(ep->base, strlen(ep->base), ep->base_red, sizeof(ep->base_red));
    return 0;
}

const char *tb_cli_endpoint_hint(const struct tb_cli_endpoint *ep, long status, char *buf,
                                 size_t len)
{
    const char *b = ep->base_red;
    size_t n = strcspn(b, "?#");
    buf[0] = '\0';
    /* A 404 from an API root without its version: the paths the dialects
     * add (/chat/completions, /messages) sit under /v1; Ollama's start at
     * the root. */
    if (status != 404 || ep->mock || ep->info->framing == TB_API_NDJSON)
        return buf;
    while (n > 0 && b[n - 1] == '/')
        n--;
    if (n >= 3 && strncmp(b + n - 3, "/v1", 3) == 0)
        return buf;
    snprintf(buf, len, " (the API root usually ends in /v1: try --base-url %.*s/v1)", (int)n, b);
    return buf;
}

const char *tb_cli_endpoint_provider(const struct tb_cli_endpoint *ep)
{
    return ep->mock ? "mock" : "remote";
}

static void *mock_main(void *arg)
{
    tb_serve_run(arg);
    return NULL;
}

int tb_cli_endpoint_mock_start(struct tb_cli_endpoint *ep, const char *fault_spec)
{
    struct tb_serve_opts so;
    char err[256];
    int rc;
    memset(&so, 0, sizeof(so));
    tb_faults_init(&so.faults);
    if (fault_spec != NULL && tb_faults_parse(fault_spec, &so.faults, err, sizeof(err)) != 0) {
        tb_cli_error("--fault: %s", err);
        return TB_EINVAL;
    }
    so.host = "127.0.0.1";
    so.port = 0;
    so.stream = &ep->stream;
    rc = tb_serve_create(&so, &ep->srv, err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("mock provider: %s", err);
        return rc == TB_ENOMEM ? TB_ENOMEM : TB_EIO;
    }
    if (pthread_create(&ep->th, NULL, mock_main, ep->srv) != 0) {
        tb_cli_error("mock provider: cannot start a thread");
        return TB_EIO;
    }
    ep->running = 1;
    /* Ollama's paths start at the root. */
    snprintf(ep->buf, sizeof(ep->buf), "http://127.0.0.1:%d%s", tb_serve_port(ep->srv),
             ep->info->framing == TB_API_NDJSON ? "" : "/v1");
    ep->base = ep->buf;
    tb_http_redact(ep->base, strlen(ep->base), ep->base_red, sizeof(ep->base_red));
    return 0;
}

void tb_cli_endpoint_free(struct tb_cli_endpoint *ep)
{
    if (ep->running) {
        tb_serve_stop(ep->srv);
        pthread_join(ep->th, NULL);
        ep->running = 0;
    }
    tb_serve_destroy(ep->srv);
    ep->srv = NULL;
    tb_stream_free(&ep->stream);
    tb_cli_key_free(ep->key);
    ep->key = NULL;
}
