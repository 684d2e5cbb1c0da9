/*
 * request.h - the request options `run` and `bench` share: endpoint,
 * dialect, model, key, headers, body and timeouts, parsed one way for
 * both (same ranges, same messages).
 */
#ifndef TTSBUF_CLI_REQUEST_H
#define TTSBUF_CLI_REQUEST_H

#include <getopt.h>

#include "common.h"
#include "ttsbuf/api.h"
#include "ttsbuf/http.h"
#include "ttsbuf/oai.h"

#define TB_CLI_HEADERS_MAX 64
#define TB_CLI_KEY_FILE_MAX 4096
/* --timeout when not given: a run never hangs for ever (the OpenAI and
 * Anthropic SDKs' default is 10 minutes too). */
#define TB_CLI_TIMEOUT_DEFAULT 600.0

enum {
    TB_O_BASE = TB_O__COMMON_END,
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
    TB_O__REQUEST_END
};

/* clang-format off */
#define TB_REQUEST_LONGOPTS                                      \
    {"base-url", required_argument, NULL, TB_O_BASE},            \
    {"api", required_argument, NULL, TB_O_API},                  \
    {"model", required_argument, NULL, TB_O_MODEL},              \
    {"api-key-file", required_argument, NULL, TB_O_KEYFILE},     \
    {"max-tokens", required_argument, NULL, TB_O_MAXTOK},        \
    {"temperature", required_argument, NULL, TB_O_TEMP},         \
    {"body-json", required_argument, NULL, TB_O_BODYJSON},       \
    {"no-usage", no_argument, NULL, TB_O_NOUSAGE},               \
    {"idle-timeout", required_argument, NULL, TB_O_IDLE},        \
    {"timeout", required_argument, NULL, TB_O_TIMEOUT},          \
    {"connect-timeout", required_argument, NULL, TB_O_CONNTO},   \
    {"insecure", no_argument, NULL, TB_O_INSECURE}
/* clang-format on */

struct tb_cli_request {
    const char *base_url, *model, *key_file;
    const char *headers[TB_CLI_HEADERS_MAX];
    size_t nheaders;
    struct tb_oai_request req;
    double idle, timeout, connect;
    int insecure;
};

/* Defaults: chat, max_tokens as given, no temperature, usage asked,
 * idle timeout 60 s, total timeout TB_CLI_TIMEOUT_DEFAULT, connect
 * timeout 10 s. */
void tb_cli_request_init(struct tb_cli_request *r, long max_tokens);

/* One request option (-H included): 1 handled, 0 not a request option,
 * -1 a bad value (the error is printed). */
int tb_cli_request_option(struct tb_cli_request *r, int c, const char *arg);

/* The API key: the first line of --api-key-file, else the dialect's
 * variable.  Returns 0 with *key malloc'd or NULL (none), or -1 (the
 * error is printed). */
int tb_cli_request_key(const struct tb_cli_request *r, const struct tb_api_info *info, char **key);

/* Frees a key after zeroing it; NULL is a no-op. */
void tb_cli_key_free(char *key);

/* base + the dialect's path, without a doubled slash; "http://" first
 * when base has no scheme (OLLAMA_HOST is often host:port).  malloc'd, or
 * NULL (out of memory). */
char *tb_cli_request_url(const char *base, const struct tb_api_info *info);

/* Fills the transfer options from r (url and key borrowed). */
void tb_cli_request_http(const struct tb_cli_request *r, const char *url, const char *key,
                         struct tb_http_req *out);

#endif
