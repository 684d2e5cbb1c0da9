/*
 * serve_chunk.c - one streamed event's chunk JSON without cJSON (see
 * serve_chunk.h).
 *
 * Why: building a cJSON tree per event and printing it (numbers through
 * sprintf and sscanf, a malloc per node, strlen) was about a third of the
 * server's CPU per event at a thousand streams.  Here a response's fixed
 * bytes are rendered once, and an event costs two short memcpys and one
 * escaping pass over its text, written where it will be sent from.
 *
 * Why byte for byte like cJSON: clients (and tests/test_serve.c) see these
 * chunks next to the role, finish and usage chunks that serve_json.c still
 * prints with cJSON, and a capture of the mock must not depend on which
 * path made an event.  cJSON 1.7 escapes '"' and '\\' and the control
 * bytes below 0x20: \b \f \n \r \t by name, the rest as \u00xx in lower
 * case; everything else, DEL and every byte from 0x80 up (so UTF-8, valid
 * or not) included, passes through unchanged, and '/' is not escaped.  Its
 * strings are C strings, so text ends at the first NUL byte, and in a
 * group of events that drops the later events' text too.
 */
#include "serve_chunk.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"

/* What follows the head, by part: the delta's key and what closes it. */
static const char chat_content[] = "\"index\":0,\"delta\":{\"content\":\"";
static const char chat_reasoning[] = "\"index\":0,\"delta\":{\"reasoning_content\":\"";
static const char chat_tail[] = "\"},\"finish_reason\":null}]}";
static const char legacy_key[] = "\"text\":\"";
static const char legacy_tail[] = "\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}]}";

static const char hexdig[] = "0123456789abcdef";

/* Bytes before the first NUL. */
static size_t upto_nul(const char *s, size_t n)
{
    const char *z = memchr(s, '\0', n);
    return z != NULL ? (size_t)(z - s) : n;
}

static size_t esc_len(const unsigned char *s, size_t n)
{
    size_t len = n;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = s[i];
        if (b == '"' || b == '\\')
            len += 1;
        else if (b < 0x20)
            len += b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t' ? 1 : 5;
    }
    return len;
}

static char *esc(char *dst, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char b = s[i];
        if (b >= 0x20 && b != '"' && b != '\\') {
            *dst++ = (char)b;
            continue;
        }
        *dst++ = '\\';
        switch (b) {
        case '"': *dst++ = '"'; break;
        case '\\': *dst++ = '\\'; break;
        case '\b': *dst++ = 'b'; break;
        case '\f': *dst++ = 'f'; break;
        case '\n': *dst++ = 'n'; break;
        case '\r': *dst++ = 'r'; break;
        case '\t': *dst++ = 't'; break;
        default:
            memcpy(dst, "u00", 3);
            dst[3] = hexdig[b >> 4];
            dst[4] = hexdig[b & 15];
            dst += 5;
        }
    }
    return dst;
}

int tb_serve_chunk_init(struct tb_serve_chunk *k, const struct tb_serve_json_ctx *c)
{
    int legacy = c->api == TB_API_COMPLETIONS;
    const char *object = legacy ? "text_completion" : "chat.completion.chunk";
    size_t mlen = strlen(c->model), elen = esc_len((const unsigned char *)c->model, mlen);
    char pre[160];
    int n = snprintf(pre, sizeof(pre),
                     "{\"id\":\"%s-ttsbuf-%llu\",\"object\":\"%s\",\"created\":0,"
                     "\"model\":\"",
                     legacy ? "cmpl" : "chatcmpl", (unsigned long long)c->id, object);
    static const char post[] = "\",\"choices\":[{";
    char *h = malloc((size_t)n + elen + sizeof(post));

    memset(k, 0, sizeof(*k));
    if (h == NULL)
        return TB_ENOMEM;
    memcpy(h, pre, (size_t)n);
    esc(h + n, (const unsigned char *)c->model, mlen);
    memcpy(h + (size_t)n + elen, post, sizeof(post) - 1);
    k->head = h;
    k->head_len = (size_t)n + elen + sizeof(post) - 1;
    k->legacy = legacy;
    return 0;
}

void tb_serve_chunk_free(struct tb_serve_chunk *k)
{
    free(k->head);
    k->head = NULL;
}

/* The part's key and tail. */
static void parts(const struct tb_serve_chunk *k, const struct tb_serve_item *it, const char **key,
                  size_t *key_len, const char **tail, size_t *tail_len)
{
    if (k->legacy) {
        *key = legacy_key, *key_len = sizeof(legacy_key) - 1;
        *tail = legacy_tail, *tail_len = sizeof(legacy_tail) - 1;
    } else {
        int r = it->kind == TB_KIND_REASONING;
        *key = r ? chat_reasoning : chat_content;
        *key_len = r ? sizeof(chat_reasoning) - 1 : sizeof(chat_content) - 1;
        *tail = chat_tail, *tail_len = sizeof(chat_tail) - 1;
    }
}

size_t tb_serve_chunk_len(const struct tb_serve_chunk *k, const struct tb_serve_plan *p,
                          const struct tb_serve_item *it)
{
    const char *key, *tail, *t;
    size_t kl, tl, n, len;
    parts(k, it, &key, &kl, &tail, &tl);
    len = k->head_len + kl + tl;
    for (size_t i = 0; tb_serve_plan_piece(p, it, i, &t, &n); i++) {
        size_t m = upto_nul(t, n);
        len += esc_len((const unsigned char *)t, m);
        if (m < n)
            break;
    }
    return len;
}

size_t tb_serve_chunk_write(const struct tb_serve_chunk *k, const struct tb_serve_plan *p,
                            const struct tb_serve_item *it, char *dst)
{
    const char *key, *tail, *t;
    size_t kl, tl, n;
    char *d = dst;
    parts(k, it, &key, &kl, &tail, &tl);
    memcpy(d, k->head, k->head_len);
    d += k->head_len;
    memcpy(d, key, kl);
    d += kl;
    for (size_t i = 0; tb_serve_plan_piece(p, it, i, &t, &n); i++) {
        size_t m = upto_nul(t, n);
        d = esc(d, (const unsigned char *)t, m);
        if (m < n)
            break;
    }
    memcpy(d, tail, tl);
    return (size_t)(d + tl - dst);
}
