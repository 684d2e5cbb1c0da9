/*
 * api.c - provider dialects (see api.h): the dialect table (one row and
 * one file each: api_openai.c, api_anthropic.c, api_ollama.c; see
 * api_priv.h), a dialect by its enum or its name, a request's transfer
 * options and body through its row.  The event parser is api_parser.c.
 */
#include "ttsbuf/api.h"

#include <string.h>

#include "api_priv.h"
#include "ttsbuf/error.h"

static const struct tb_api_dialect *const dialects[TB_API__COUNT] = {
    &tb_api_dialect_chat,
    &tb_api_dialect_completions,
    &tb_api_dialect_anthropic,
    &tb_api_dialect_ollama,
};

void tb_api_request_init(struct tb_api_request *q)
{
    memset(q, 0, sizeof(*q));
    q->api = TB_API_CHAT;
    q->max_tokens = -1;
    q->temperature = -1;
}

const struct tb_api_dialect *tb_api_row(enum tb_api api)
{
    return (unsigned)api < TB_API__COUNT ? dialects[api] : NULL;
}

const struct tb_api_info *tb_api_info(enum tb_api api)
{
    return (unsigned)api < TB_API__COUNT ? &dialects[api]->info : NULL;
}

void tb_api_http_req(const struct tb_api_info *api, const struct tb_http_req *in,
                     const char **headers, struct tb_http_req *out)
{
    *out = *in;
    out->key_header = api->key_header; /* NULL: Bearer (http.c sends one or the other) */
    out->stream_type = api->stream_type;
    out->nheaders = 0;
    if (api->fixed_header != NULL)
        headers[out->nheaders++] = api->fixed_header;
    for (size_t i = 0; i < in->nheaders; i++)
        headers[out->nheaders++] = in->headers[i];
    out->headers = headers;
}

int tb_api_delta_is_data(const struct tb_api_delta *ad)
{
    const struct tb_api_delta *d = ad;
    return d->content != NULL || d->reasoning != NULL || d->tool_calls > 0 ||
           d->usage_completion >= 0 || d->finish_reason[0] != '\0' || d->done || d->error;
}

int tb_api_by_name(const char *name, enum tb_api *out)
{
    for (int i = 0; i < TB_API__COUNT; i++)
        if (strcmp(name, dialects[i]->info.name) == 0) {
            *out = (enum tb_api)i;
            return 0;
        }
    return TB_EINVAL;
}

int tb_api_request_body(const struct tb_api_request *q, char **out, char *err, size_t errlen)
{
    const struct tb_api_dialect *d = (unsigned)q->api < TB_API__COUNT ? dialects[q->api] : NULL;
    if (d == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown API");
    return d->body(q, out, err, errlen);
}
