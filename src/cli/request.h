/*
 * request.h - the request options `run` and `bench` share: endpoint,
 * dialect, model, key, headers, body and timeouts, parsed one way for
 * both (same ranges, same messages).
 */
#ifndef TTSBUF_CLI_REQUEST_H
#define TTSBUF_CLI_REQUEST_H

#include <getopt.h>
#include <pthread.h>

#include "ttsbuf/api.h"
#include "ttsbuf/http.h"
#include "ttsbuf/serve.h"
#include "ttsbuf/stream.h"

#define TB_CLI_HEADERS_MAX 64
#define TB_CLI_KEY_FILE_MAX 4096
/* --timeout when not given: a run never hangs for ever (the OpenAI and
 * Anthropic SDKs' default is 10 minutes too). */
#define TB_CLI_TIMEOUT_DEFAULT 600.0

enum {
    /* after the common options' keys (options.h), before the speech's
     * (audio.h) */
    TB_O_BASE = 300,
    TB_O_API,
    TB_O_MODEL,
    TB_O_KEYFILE,
    TB_O_MAXTOK,
    TB_O_TEMP,
    TB_O_BODYJSON,
    TB_O_NOUSAGE,
    TB_O_IDLE,
    TB_O_TIMEOUT,
    TB_O_CONNTO,
    TB_O_INSECURE,
    TB_O_MOCK,
    TB_O__REQUEST_END
};

/* Their rows: tb_opt_request (optdoc.h); -H is the key 'H'. */

struct tb_cli_request {
    const char *base_url, *model, *key_file;
    const char *headers[TB_CLI_HEADERS_MAX];
    size_t nheaders;
    struct tb_api_request req;
    double idle, timeout, connect;
    int insecure;
    int mock; /* --mock: the built-in mock provider, whatever the environment */
};

/* Defaults: chat, max_tokens as given, no temperature, usage asked,
 * idle timeout 60 s, total timeout TB_CLI_TIMEOUT_DEFAULT, connect
 * timeout 10 s. */
void tb_cli_request_init(struct tb_cli_request *r, long max_tokens);

/* One request option (-H included): an option handler (cli.h). */
int tb_cli_request_option(struct tb_cli_request *r, int c, const char *arg);

/* The API key: the first line of --api-key-file, else the dialect's
 * variable.  Returns 0 with *key malloc'd or NULL (none), or (printed)
 * TB_EINVAL / TB_ETOOBIG for a key file that cannot be read or is over
 * TB_CLI_KEY_FILE_MAX, TB_ENOMEM. */
int tb_cli_request_key(const struct tb_cli_request *r, const struct tb_api_info *info, char **key);

/* A key: the first line of file (without trailing blanks; opt names the
 * option in messages), else the variable env when set and not empty.
 * Returns 0 with *key malloc'd or NULL (none), or (printed) TB_EINVAL / TB_ETOOBIG
 * for a file that cannot be read or is over TB_CLI_KEY_FILE_MAX,
 * TB_ENOMEM. */
int tb_cli_key_load(const char *file, const char *opt, const char *env, char **key);

/* Frees a key after zeroing it; NULL is a no-op. */
void tb_cli_key_free(char *key);

/* base + the dialect's path, without a doubled slash; "http://" first
 * when base has no scheme (OLLAMA_HOST is often host:port).  malloc'd, or
 * NULL (out of memory). */
char *tb_cli_request_url(const char *base, const struct tb_api_info *info);

/*
 * Where a request goes, resolved one way for run and bench:
 *   --mock                 the built-in mock provider (no key is read;
 *                          with --base-url: a usage error);
 *   --base-url, else the dialect's variable ($OPENAI_BASE_URL...);
 *   else, with a key       the dialect's default root (the vendor SDKs'
 *                          convention: https://api.openai.com/v1 for chat
 *                          and completions);
 *   else                   the mock when mock_default, else a usage error.
 * A base without a scheme gets "http://" (OLLAMA_HOST is often host:port).
 * The model: --model, else $OPENAI_MODEL (chat, completions), else
 * "ttsbuf-mock" for the mock; a real endpoint without one is a usage
 * error.  The mock is started by tb_cli_endpoint_mock_start.
 */
struct tb_cli_endpoint {
    const struct tb_api_info *info;
    const char *base;   /* the API root; NULL until the mock has started */
    char *key;          /* malloc'd, or NULL (never for the mock) */
    int mock;           /* the built-in mock provider answers */
    char base_red[256]; /* base, redacted, for reports and traces */
    /* private */
    char buf[2048];
    struct tb_stream stream; /* what the mock streams */
    struct tb_serve *srv;
    pthread_t th;
    int running;
};

/* Resolves r into ep (above; r->model is filled in).  0, or an error
 * (printed): TB_EINVAL for the command line (no endpoint, no model, --mock
 * with --base-url), or tb_cli_request_key's.  cmd names the command in
 * messages.  ep is freed with tb_cli_endpoint_free either way. */
int tb_cli_endpoint_resolve(struct tb_cli_request *r, const char *cmd, int mock_default,
                            struct tb_cli_endpoint *ep);

/* What to try after an HTTP error: for a 404 from a base URL whose path
 * does not end in /v1 (where the OpenAI and Anthropic dialects' paths
 * live), " (the API root usually ends in /v1: try --base-url BASE/v1)";
 * else "".  Written to buf (len bytes), which is returned. */
const char *tb_cli_endpoint_hint(const struct tb_cli_endpoint *ep, long status, char *buf,
                                 size_t len);

/* "mock" or "remote", as reports, JSON and trace headers say it. */
const char *tb_cli_endpoint_provider(const struct tb_cli_endpoint *ep);

/* Starts the mock on a loopback port on its own thread, streaming
 * ep->stream (filled by the caller) with the faults of spec (or none);
 * sets ep->base and ep->base_red.  0, or (printed) TB_EINVAL for a bad
 * --fault, TB_EIO when the server cannot start, TB_ENOMEM. */
int tb_cli_endpoint_mock_start(struct tb_cli_endpoint *ep, const char *fault_spec);

/* Stops the mock, frees the key and the stream.  Zeroed storage is fine. */
void tb_cli_endpoint_free(struct tb_cli_endpoint *ep);

/* Fills the transfer options from r (url and key borrowed). */
void tb_cli_request_http(const struct tb_cli_request *r, const char *url, const char *key,
                         struct tb_http_req *out);

#endif
