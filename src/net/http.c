/*
 * http.c - what every request of http.h shares: libcurl's global state,
 * requests and responses at their defaults, and a request's secrets: what
 * must be masked in a logged line (tb_http_redact) and what a server may
 * quote back (tb_http_secrets).  The transfer itself is http_xfer.c.
 */
#include "ttsbuf/http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ttsbuf/error.h"
#include "ttsbuf/secrets.h"

int tb_http_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : TB_EIO;
}

void tb_http_req_init(struct tb_http_req *q)
{
    memset(q, 0, sizeof(*q));
    q->max_redirects = -1;
}

void tb_http_global_cleanup(void)
{
    curl_global_cleanup();
}

void tb_http_resp_free(struct tb_http_resp *r)
{
    if (r == NULL)
        return;
    free(r->body);
    r->body = NULL;
    r->body_len = 0;
}

static int prefix_ci(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    if (n < k)
        return 0;
    for (size_t i = 0; i < k; i++)
        if (tolower((unsigned char)s[i]) != p[i])
            return 0;
    return 1;
}

/* Header lines whose value is a secret; for the Authorization family
 * the scheme word ("Bearer", "Basic") is kept, it says nothing. */
static const struct {
    const char *name;
    int keep_scheme;
} hdrs[] = {
    {"authorization:", 1}, {"proxy-authorization:", 1}, {"x-api-key:", 0},
    {"api-key:", 0},       {"x-goog-api-key:", 0},      {"xi-api-key:", 0},
};
/* Query parameters whose value is a secret. */
static const char *const params[] = {"key=", "api_key=", "apikey=", "access_token=", "token="};

static void put(char *out, size_t *k, size_t outlen, char c)
{
    if (*k + 1 < outlen)
        out[(*k)++] = c;
}

void tb_http_redact(const char *s, size_t n, char *out, size_t outlen)
{
    size_t k = 0, i = 0;
    if (outlen == 0)
        return;
        /* The argument is evaluated once, whether or not it fits: callers
         * advance their input inside it. */
#define PUT(c) put(out, &k, outlen, (c))
    while (i < n) {
        int masked = 0;
        /* At a line start: a secret-bearing header? */
        for (size_t h = 0; (i == 0 || s[i - 1] == '\n') && h < sizeof(hdrs) / sizeof(hdrs[0]);
             h++) {
            size_t e;
            if (!prefix_ci(s + i, n - i, hdrs[h].name))
                continue;
            e = i + strlen(hdrs[h].name);
            if (hdrs[h].keep_scheme) {
                while (e < n && s[e] == ' ')
                    e++;
                while (e < n && s[e] != ' ' && s[e] != '\r' && s[e] != '\n')
                    e++;
            }
            while (i < e)
                PUT(s[i++]);
            PUT(' ');
            masked = 1;
            break;
        }
        /* A query parameter carrying a key? */
        if (!masked && (s[i] == '?' || s[i] == '&')) {
            PUT(s[i++]);
            for (size_t p = 0; p < sizeof(params) / sizeof(params[0]); p++) {
                if (prefix_ci(s + i, n - i, params[p])) {
                    size_t e = i + strlen(params[p]);
                    while (i < e)
                        PUT(s[i++]);
                    masked = 2;
                    break;
                }
            }
            if (!masked)
                continue;
        }
        /* A URL's userinfo password ("://user:PASS@host")? */
        if (!masked && n - i >= 3 && memcmp(s + i, "://", 3) == 0) {
            size_t e = i + 3, at = 0, colon = 0;
            for (; e < n && strchr("/?# \r\n", s[e]) == NULL; e++)
                if (s[e] == '@')
                    at = e;
            for (size_t c = i + 3; at > 0 && colon == 0 && c < at; c++)
                if (s[c] == ':')
                    colon = c;
            if (colon > 0) {
                while (i <= colon)
                    PUT(s[i++]);
                PUT('*');
                PUT('*');
                PUT('*');
                i = at;
                continue;
            }
        }
        if (!masked) {
            PUT(s[i++]);
            continue;
        }
        PUT('*');
        PUT('*');
        PUT('*');
        /* Skip the secret: to the end of the line, or of the parameter. */
        while (i < n && s[i] != '\r' && s[i] != '\n' &&
               (masked == 1 || (s[i] != '&' && s[i] != '#' && s[i] != ' ')))
            i++;
    }
#undef PUT
    out[k] = '\0';
}

/* Adds v[0..n) to the set. */
static int add(struct tb_secrets *set, const char *v, size_t n)
{
    return n > 0 ? tb_secrets_add(set, v, n) : 0;
}

/* The password of a URL's userinfo ("https://user:PASS@host/"): its
 * offset and length, or 0. */
static size_t url_password(const char *url, size_t *at)
{
    const char *p = strstr(url, "://"), *end, *colon, *atsign;
    if (p == NULL)
        return 0;
    p += 3;
    end = p + strcspn(p, "/?#");
    atsign = NULL;
    for (const char *c = p; c < end; c++)
        if (*c == '@')
            atsign = c; /* the last '@' ends the userinfo */
    if (atsign == NULL)
        return 0;
    colon = memchr(p, ':', (size_t)(atsign - p));
    if (colon == NULL)
        return 0;
    *at = (size_t)(colon + 1 - url);
    return (size_t)(atsign - (colon + 1));
}

int tb_http_secrets(const struct tb_http_req *q, struct tb_secrets *set)
{
    int rc = 0;
    size_t at = 0, n;
    if (q->bearer != NULL)
        rc = add(set, q->bearer, strlen(q->bearer));
    for (size_t i = 0; rc == 0 && i < q->nheaders; i++) {
        const char *h = q->headers[i], *v;
        for (size_t k = 0; rc == 0 && k < sizeof(hdrs) / sizeof(hdrs[0]); k++) {
            if (!prefix_ci(h, strlen(h), hdrs[k].name))
                continue;
            v = h + strlen(hdrs[k].name);
            while (*v == ' ')
                v++;
            if (hdrs[k].keep_scheme && strchr(v, ' ') != NULL)
                v = strrchr(v, ' ') + 1; /* "Bearer KEY": the key */
            rc = add(set, v, strlen(v));
        }
    }
    for (const char *u = q->url; rc == 0 && u != NULL && *u != '\0'; u++) {
        if (*u != '?' && *u != '&')
            continue;
        for (size_t k = 0; rc == 0 && k < sizeof(params) / sizeof(params[0]); k++) {
            const char *v = u + 1;
            if (!prefix_ci(v, strlen(v), params[k]))
                continue;
            v += strlen(params[k]);
            rc = add(set, v, strcspn(v, "&#"));
        }
    }
    if (rc == 0 && q->url != NULL && (n = url_password(q->url, &at)) > 0)
        rc = add(set, q->url + at, n);
    return rc;
}

int tb_http_nofd_text(int err, char *out, size_t outlen)
{
    char lim[64] = "";
    struct rlimit rl;
    if (err != EMFILE && err != ENFILE)
        return 0;
    if (err == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(lim, sizeof(lim), ", its limit of %llu (ulimit -n)",
                 (unsigned long long)rl.rlim_cur);
    if (outlen == 0)
        return 1;
    snprintf(out, outlen, "out of file descriptors (%s: %s%s)", err == EMFILE ? "EMFILE" : "ENFILE",
             err == EMFILE ? "this process has them all open" : "the system's table is full", lim);
    return 1;
}
