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

void tb_cli_request_init(struct tb_cli_request *r, long max_tokens)
{
    memset(r, 0, sizeof(*r));
    r->req.api = TB_API_CHAT;
    r->req.max_tokens = max_tokens;
    r->req.temperature = -1;
    r->req.include_usage = 1;
    r->idle = 60;
    r->timeout = TB_CLI_TIMEOUT_DEFAULT;
    r->connect = 10;
}

int tb_cli_request_option(struct tb_cli_request *r, int c, const char *arg)
{
    char err[256];
    size_t z;
    int rc = 0;
    switch (c) {
    case 'H':
        if (r->nheaders == TB_CLI_HEADERS_MAX) {
            tb_cli_error("-H: at most %d headers", TB_CLI_HEADERS_MAX);
            return -1;
        }
        if (strchr(arg, ':') == NULL || strpbrk(arg, "\r\n") != NULL) {
            tb_cli_error("-H: '%s' is not 'Name: value' on one line", arg);
            return -1;
        }
        r->headers[r->nheaders++] = arg;
        return 1;
    case TB_O_BASE: r->base_url = arg; return 1;
    case TB_O_MODEL: r->model = arg; return 1;
    case TB_O_KEYFILE: r->key_file = arg; return 1;
    case TB_O_BODYJSON: r->req.extra_json = arg; return 1;
    case TB_O_NOUSAGE: r->req.include_usage = 0; return 1;
    case TB_O_INSECURE: r->insecure = 1; return 1;
    case TB_O_API:
        if (tb_api_by_name(arg, &r->req.api) != 0) {
            tb_cli_error("--api: '%s' is not chat, completions, anthropic or ollama", arg);
            return -1;
        }
        return 1;
    case TB_O_MAXTOK:
        rc = tb_opt_size("--max-tokens", arg, 1, 10000000, &z, err, sizeof(err));
        r->req.max_tokens = (long)z;
        break;
    case TB_O_TEMP:
        rc = tb_opt_double("--temperature", arg, 0, 2, &r->req.temperature, err, sizeof(err));
        break;
    case TB_O_IDLE:
        rc = tb_opt_double("--idle-timeout", arg, 0, 86400, &r->idle, err, sizeof(err));
        break;
    case TB_O_TIMEOUT:
        rc = tb_opt_double("--timeout", arg, 0, 86400, &r->timeout, err, sizeof(err));
        break;
    case TB_O_CONNTO:
        rc = tb_opt_double("--connect-timeout", arg, 0.001, 3600, &r->connect, err, sizeof(err));
        break;
    default: return 0;
    }
    if (rc != 0) {
        tb_cli_error("%s", err);
        return -1;
    }
    return 1;
}

int tb_cli_request_key(const struct tb_cli_request *r, const struct tb_api_info *info, char **key)
{
    FILE *f;
    size_t n;
    *key = NULL;
    if (r->key_file == NULL) {
        const char *v = info->key_env != NULL ? getenv(info->key_env) : NULL;
        if (v != NULL && v[0] != '\0' && (*key = strdup(v)) == NULL) {
            tb_cli_error("out of memory");
            return -1;
        }
        return 0;
    }
    f = fopen(r->key_file, "rb");
    *key = calloc(1, TB_CLI_KEY_FILE_MAX + 2);
    if (f == NULL || *key == NULL) {
        tb_cli_error("--api-key-file: %s: %s", r->key_file, strerror(f == NULL ? errno : ENOMEM));
        if (f != NULL)
            fclose(f);
        free(*key);
        *key = NULL;
        return -1;
    }
    n = fread(*key, 1, TB_CLI_KEY_FILE_MAX + 1, f);
    fclose(f);
    if (n > TB_CLI_KEY_FILE_MAX) {
        tb_cli_error("--api-key-file: %s: %s", r->key_file, strerror(EFBIG));
        tb_cli_key_free(*key);
        *key = NULL;
        return -1;
    }
    /* The first line, without trailing whitespace. */
    (*key)[strcspn(*key, "\r\n")] = '\0';
    n = strlen(*key);
    while (n > 0 && ((*key)[n - 1] == ' ' || (*key)[n - 1] == '\t'))
        (*key)[--n] = '\0';
    return 0;
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
    memset(out, 0, sizeof(*out));
    out->url = url;
    out->bearer = key;
    out->headers = r->headers;
    out->nheaders = r->nheaders;
    out->idle_timeout = r->idle;
    out->total_timeout = r->timeout;
    out->connect_timeout = r->connect;
    out->insecure = r->insecure;
    out->max_redirects = -1;
}
