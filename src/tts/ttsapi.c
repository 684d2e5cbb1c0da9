/*
 * ttsapi.c - the TTS dialect table (ttsapi.h): names, rows, and the one
 * request builder every row goes through (URL through libcurl's URL API,
 * body through cJSON), and the error-body reader that tries the row's
 * own shape before the one every LLM dialect shares (reader.h).
 */
#include "ttsbuf/ttsapi.h"

#include <cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/jsontext.h"
#include "ttsapi_priv.h"
#include "ttsbuf/error.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/utf8.h"

static const struct tb_ttsapi_dialect *const rows[TB_TTSAPI__COUNT] = {
    [TB_TTSAPI_OPENAI] = &tb_ttsapi_dialect_openai,
    [TB_TTSAPI_ELEVENLABS] = &tb_ttsapi_dialect_elevenlabs,
    [TB_TTSAPI_DEEPGRAM] = &tb_ttsapi_dialect_deepgram,
    [TB_TTSAPI_CARTESIA] = &tb_ttsapi_dialect_cartesia,
};

static const struct tb_ttsapi_dialect *row(int api)
{
    return api >= 0 && api < TB_TTSAPI__COUNT ? rows[api] : NULL;
}

const char *tb_ttsapi_name(int api)
{
    return row(api) != NULL ? row(api)->info.name : "?";
}

int tb_ttsapi_parse(const char *name)
{
    for (int a = 0; name != NULL && a < TB_TTSAPI__COUNT; a++)
        if (strcmp(name, rows[a]->info.name) == 0)
            return a;
    return -1;
}

const struct tb_ttsapi_info *tb_ttsapi_info(int api)
{
    return row(api) != NULL ? &row(api)->info : NULL;
}

int tb_ttsapi_rate_ok(int api, unsigned rate)
{
    const struct tb_ttsapi_dialect *d = row(api);
    for (size_t i = 0; d != NULL && d->info.rates[i] != 0; i++)
        if (d->info.rates[i] == rate)
            return 1;
    return 0;
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7F)
            return 1;
    return 0;
}

static void zero_free(char *s)
{
    if (s == NULL)
        return;
    for (volatile char *v = s; *v; v++)
        *v = 0;
    free(s);
}

void tb_ttsapi_req_free(struct tb_ttsapi_req *r)
{
    if (r == NULL)
        return;
    free(r->url);
    free(r->body);
    for (size_t i = 0; i < r->nheaders; i++) {
        if ((int)i == r->secret)
            zero_free(r->headers[i]);
        else
            free(r->headers[i]);
    }
    memset(r, 0, sizeof(*r));
    r->secret = -1;
}

/* The rates a row takes, "8000, 16000 or 24000", for a message. */
static void rate_list(const struct tb_ttsapi_dialect *d, char *out, size_t outlen)
{
    size_t k = 0, n = 0;
    out[0] = '\0';
    while (d->info.rates[n] != 0)
        n++;
    for (size_t i = 0; i < n && k < outlen; i++)
        k += (size_t)snprintf(out + k, outlen - k, "%s%u",
                              i == 0       ? ""
                              : i + 1 == n ? " or "
                                           : ", ",
                              d->info.rates[i]);
}

/* base + the row's path + its query, through libcurl's URL API (the
 * query values escaped). */
static int build_url(const struct tb_ttsapi_dialect *d, const char *base,
                     const struct tb_ttsapi_parts *p, char **out, char *err, size_t errlen)
{
    CURLU *u = curl_url();
    char *bpath = NULL, *url = NULL, path[1024], q[4][160];
    size_t nq = 0, bl;
    int rc = TB_ENOMEM, n;
    if (u == NULL)
        return TB_ENOMEM;
    if (curl_url_set(u, CURLUPART_URL, base, 0) != CURLUE_OK) {
        rc =
            tb_seterr(err, errlen, TB_EINVAL, "--tts-url %s: not a URL (http://HOST[:PORT])", base);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_PATH, &bpath, 0) != CURLUE_OK)
        goto out;
    bl = strlen(bpath);
    while (bl > 0 && bpath[bl - 1] == '/')
        bl--;
    n = snprintf(path, sizeof(path), "%.*s", (int)bl, bpath);
    if (n < 0 || (size_t)n >= sizeof(path) ||
        (size_t)d->path(p, path + n, sizeof(path) - (size_t)n) >= sizeof(path) - (size_t)n) {
        rc = tb_seterr(err, errlen, TB_EINVAL, "the TTS URL's path is too long");
        goto out;
    }
    if (curl_url_set(u, CURLUPART_PATH, path, 0) != CURLUE_OK)
        goto out;
    d->query(p, q, &nq);
    for (size_t i = 0; i < nq; i++) {
        /* The value percent-escaped (a space is %20, never the form's
         * '+', which not every server reads as a space). */
        char *eq = strchr(q[i], '='), *v, pair[600];
        int ok;
        if (eq == NULL)
            goto out;
        v = curl_easy_escape(NULL, eq + 1, 0);
        if (v == NULL)
            goto out;
        snprintf(pair, sizeof(pair), "%.*s=%s", (int)(eq - q[i]), q[i], v);
        curl_free(v);
        ok = curl_url_set(u, CURLUPART_QUERY, pair, CURLU_APPENDQUERY) == CURLUE_OK;
        if (!ok)
            goto out;
    }
    if (curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK)
        goto out;
    *out = strdup(url);
    rc = *out != NULL ? 0 : TB_ENOMEM;
out:
    curl_free(url);
    curl_free(bpath);
    curl_url_cleanup(u);
    return rc;
}

static int build_body(const struct tb_ttsapi_dialect *d, const char *text, size_t len,
                      const struct tb_ttsapi_parts *p, char **out)
{
    cJSON *root = cJSON_CreateObject();
    char *t = malloc(len + 1);
    int rc = TB_ENOMEM;
    if (root != NULL && t != NULL) {
        memcpy(t, text, len);
        t[len] = '\0';
        if (d->body(root, t, p) == 0) {
            *out = cJSON_PrintUnformatted(root);
            rc = *out != NULL ? 0 : TB_ENOMEM;
        }
    }
    free(t);
    cJSON_Delete(root);
    return rc;
}

/* Appends the header line a b c d e (the pieces joined). */
static int add_header(struct tb_ttsapi_req *r, const char *a, const char *b, const char *c,
                      const char *d, const char *e)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + strlen(d) + strlen(e) + 1;
    char *h = malloc(n);
    if (h == NULL)
        return TB_ENOMEM;
    snprintf(h, n, "%s%s%s%s%s", a, b, c, d, e);
    r->headers[r->nheaders++] = h;
    return 0;
}

int tb_ttsapi_build(int api, const struct tb_ttsapi_params *p, const char *text, size_t len,
                    struct tb_ttsapi_req *r, char *err, size_t errlen)
{
    const struct tb_ttsapi_dialect *d = row(api);
    struct tb_ttsapi_parts parts;
    char rates[96];
    size_t bad;
    int rc;

    memset(r, 0, sizeof(*r));
    r->secret = -1;
    memset(&parts, 0, sizeof(parts));
    if (d == NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown TTS API %d", api);
    if (p == NULL || p->base == NULL || p->base[0] == '\0')
        return tb_seterr(err, errlen, TB_EINVAL, "no TTS URL (the provider's base URL)");
    parts.rate = p->rate != 0 ? p->rate : TB_TTSAPI_RATE;
    if (!tb_ttsapi_rate_ok(api, parts.rate)) {
        rate_list(d, rates, sizeof(rates));
        return tb_seterr(err, errlen, TB_EINVAL, "%s gives PCM at %s Hz, not %u", d->info.name,
                         rates, parts.rate);
    }
    parts.model = p->model != NULL && p->model[0] != '\0' ? p->model : d->info.model;
    parts.voice = p->voice != NULL && p->voice[0] != '\0' ? p->voice : d->info.voice;
    if (!d->takes_voice && p->voice != NULL && p->voice[0] != '\0')
        return tb_seterr(err, errlen, TB_EINVAL,
                         "%s has no voice apart from the model: name it in the model "
                         "(\"aura-2-thalia-en\")",
                         d->info.name);
    if (has_control(parts.model) || has_control(parts.voice) || strlen(parts.model) > 120 ||
        strlen(parts.voice) > 120)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "the TTS model or voice holds a control character or is over 120 bytes");
    if (text == NULL && len > 0)
        return tb_seterr(err, errlen, TB_EINVAL, "no text");
    if ((bad = tb_utf8_check(text != NULL ? text : "", len)) != len)
        return tb_seterr(err, errlen, TB_EINVAL, "the text is not valid UTF-8 at byte %zu", bad);
    if (len > 0 && memchr(text, '\0', len) != NULL)
        return tb_seterr(err, errlen, TB_EINVAL, "the text holds a NUL byte");
    parts.voice_esc = curl_easy_escape(NULL, parts.voice, 0);
    if (parts.voice_esc == NULL)
        return TB_ENOMEM;

    rc = build_url(d, p->base, &parts, &r->url, err, errlen);
    if (rc == 0)
        rc = build_body(d, text != NULL ? text : "", len, &parts, &r->body);
    if (rc == 0 && p->key != NULL && p->key[0] != '\0') {
        /* "Authorization: Bearer KEY", "xi-api-key: KEY" */
        rc = d->info.key_scheme != NULL
                 ? add_header(r, d->info.key_header, ": ", d->info.key_scheme, " ", p->key)
                 : add_header(r, d->info.key_header, ": ", p->key, "", "");
        if (rc == 0)
            r->secret = (int)r->nheaders - 1;
    }
    if (rc == 0 && d->fixed_header != NULL)
        rc = add_header(r, d->fixed_header, "", "", "", "");
    curl_free(parts.voice_esc);
    if (rc != 0)
        tb_ttsapi_req_free(r);
    return rc;
}

/* The path's segments: starts and lengths of the non-empty pieces between
 * '/' in p[0..n), at most max of them (more: returns max + 1). */
static size_t segments(const char *p, size_t n, const char **at, size_t *len, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && p[j] != '/')
            j++;
        if (j > i) {
            if (k == max)
                return max + 1;
            at[k] = p + i;
            len[k++] = j - i;
        }
        i = j + 1;
    }
    return k;
}

int tb_ttsapi_http_scheme(const char *url, char *err, size_t errlen)
{
    const char *auth = url != NULL ? strstr(url, "://") : NULL;
    size_t n = auth != NULL ? (size_t)(auth - url) : 0;
    if (auth == NULL)
        return 0; /* not a URL: tb_ttsapi_base says so */
    if ((n == 2 && strncasecmp(url, "ws", 2) == 0) || (n == 3 && strncasecmp(url, "wss", 3) == 0))
        return tb_seterr(err, errlen, TB_EINVAL,
                         "--tts-url %s: a WebSocket URL, for a WebSocket dialect (--tts-api "
                         "elevenlabs-ws or cartesia-ws); this dialect takes http:// or https://",
                         url);
    if (!(n == 4 && strncasecmp(url, "http", 4) == 0) &&
        !(n == 5 && strncasecmp(url, "https", 5) == 0))
        return tb_seterr(err, errlen, TB_EINVAL,
                         "--tts-url %s: scheme '%.*s' (an HTTP dialect takes http or https)", url,
                         (int)(n < 16 ? n : 16), url);
    return 0;
}

#define SEGS_MAX 32

int tb_ttsapi_base(const char *path, const char *url, const char *voice_opt, char **base,
                   char **voice, char *err, size_t errlen)
{
    const char *us[SEGS_MAX], *ps[SEGS_MAX], *auth, *p0, *p1;
    size_t ul[SEGS_MAX], pl[SEGS_MAX], nu, np, keep, cut = 0, vseg = SIZE_MAX;
    char *named = NULL;
    *base = *voice = NULL;
    auth = url != NULL ? strstr(url, "://") : NULL;
    if (auth == NULL || auth == url || auth[3] == '\0')
        return tb_seterr(err, errlen, TB_EINVAL, "--tts-url %s: not a URL (http://HOST[:PORT])",
                         url != NULL ? url : "(none)");
    p0 = auth + 3 + strcspn(auth + 3, "/?#");
    p1 = p0 + strcspn(p0, "?#");
    nu = segments(p0, (size_t)(p1 - p0), us, ul, SEGS_MAX);
    np = segments(path, strlen(path), ps, pl, SEGS_MAX);
    if (nu > SEGS_MAX || np > SEGS_MAX)
        return tb_seterr(err, errlen, TB_EINVAL, "--tts-url %s: over %d path segments", url,
                         SEGS_MAX);
    /* The longest tail of the URL's path that is a head of the dialect's. */
    for (size_t k = nu < np ? nu : np; k > 0 && cut == 0; k--) {
        size_t i = 0, v = SIZE_MAX;
        for (; i < k; i++) {
            const char *a = us[nu - k + i];
            if (pl[i] == 7 && memcmp(ps[i], "{voice}", 7) == 0)
                v = nu - k + i;
            else if (ul[nu - k + i] != pl[i] || memcmp(a, ps[i], pl[i]) != 0)
                break;
        }
        if (i == k) {
            cut = k;
            vseg = v;
        }
    }
    /* A last "v1" is the version OpenAI-style base URLs end in (serve
     * prints one): a dialect whose path has none (Cartesia) drops it too. */
    if (cut == 0 && nu > 0 && ul[nu - 1] == 2 && memcmp(us[nu - 1], "v1", 2) == 0 &&
        !(np > 0 && pl[0] == 2 && memcmp(ps[0], "v1", 2) == 0))
        cut = 1;
    if (vseg != SIZE_MAX) {
        named = curl_easy_unescape(NULL, us[vseg], (int)ul[vseg], NULL);
        if (named == NULL)
            return TB_ENOMEM;
    }
    if (named != NULL && voice_opt != NULL && voice_opt[0] != '\0' &&
        strcmp(named, voice_opt) != 0) {
        int rc = tb_seterr(err, errlen, TB_EINVAL,
                           "--tts-url names the voice '%s' and --tts-voice '%s': give one", named,
                           voice_opt);
        curl_free(named);
        return rc;
    }
    /* The base: the URL up to the part cut, then what followed the path. */
    keep = cut > 0 ? (size_t)(us[nu - cut] - url) : (size_t)(p1 - url);
    while (cut > 0 && keep > (size_t)(auth + 3 - url) && url[keep - 1] == '/')
        keep--;
    *base = malloc(keep + strlen(p1) + 1);
    if (*base != NULL) {
        memcpy(*base, url, keep);
        memcpy(*base + keep, p1, strlen(p1) + 1); /* the query and fragment, as they were */
    }
    {
        const char *v = voice_opt != NULL && voice_opt[0] != '\0' ? voice_opt : named;
        int lost = v != NULL && (*voice = strdup(v)) == NULL;
        curl_free(named);
        if (*base == NULL || lost) {
            free(*base);
            free(*voice);
            *base = *voice = NULL;
            return TB_ENOMEM;
        }
    }
    return 0;
}

void tb_ttsapi_error_text(int api, const char *body, size_t len, char *out, size_t outlen)
{
    const struct tb_ttsapi_dialect *d = row(api);
    cJSON *root;
    if (outlen == 0)
        return;
    out[0] = '\0';
    if (body == NULL || len == 0)
        return;
    root = d != NULL ? tb_jsontext_parse(body, len, NULL) : NULL;
    if (root != NULL) {
        if (cJSON_IsObject(root))
            d->error(root, out, outlen);
        cJSON_Delete(root);
        if (out[0] != '\0')
            return;
    }
    tb_reader_error_text(body, len, out, outlen);
}
