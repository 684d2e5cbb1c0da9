/*
 * import.c - the import module's shared parts (see import.h): format
 * names, the request list, files, JSON and line helpers, spreading text
 * over chunks, and raw SSE bytes through the SSE parser and the OpenAI
 * event JSON.  The formats themselves are in import_vllm.c,
 * import_genai.c and import_aiperf.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "import_priv.h"
#include "readall.h"
#include "ttsbuf/error.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/utf8.h"

static const char *const format_names[TB_IMPORT__COUNT] = {"vllm", "sglang", "genai-perf",
                                                           "aiperf-raw", "aiperf"};

void tb_import_init(struct tb_import *im)
{
    memset(im, 0, sizeof(*im));
}

void tb_import_free(struct tb_import *im)
{
    if (im == NULL)
        return;
    for (size_t i = 0; i < im->n; i++)
        tb_stream_free(&im->req[i].stream);
    free(im->req);
    tb_import_init(im);
}

const char *tb_import_format_name(enum tb_import_format f)
{
    return (unsigned)f < TB_IMPORT__COUNT ? format_names[f] : "?";
}

int tb_import_spec(const char *spec, enum tb_import_format *f, const char **path, char *err,
                   size_t errlen)
{
    const char *colon = strchr(spec, ':');
    if (colon != NULL && colon[1] != '\0') {
        for (int i = 0; i < TB_IMPORT__COUNT; i++) {
            if ((size_t)(colon - spec) == strlen(format_names[i]) &&
                memcmp(spec, format_names[i], (size_t)(colon - spec)) == 0) {
                *f = (enum tb_import_format)i;
                *path = colon + 1;
                return 0;
            }
        }
    }
    return tb_seterr(err, errlen, TB_EINVAL,
                     "'%s' is not FORMAT:FILE with FORMAT one of vllm, sglang, genai-perf, "
                     "aiperf-raw, aiperf",
                     spec);
}

static int import_in(enum tb_import_format f, const struct tb_import_in *in, const char *name,
                     struct tb_import *out, char *err, size_t errlen)
{
    size_t before = out->n;
    int rc;
    switch (f) {
    case TB_IMPORT_VLLM: rc = tb_import_vllm(in, name, 0, out, err, errlen); break;
    case TB_IMPORT_SGLANG: rc = tb_import_vllm(in, name, 1, out, err, errlen); break;
    case TB_IMPORT_GENAI_PERF: rc = tb_import_genai(in->buf, in->len, name, out, err, errlen); break;
    case TB_IMPORT_AIPERF_RAW: rc = tb_import_aiperf(in, name, 1, out, err, errlen); break;
    case TB_IMPORT_AIPERF: rc = tb_import_aiperf(in, name, 0, out, err, errlen); break;
    default: return tb_seterr(err, errlen, TB_EINVAL, "unknown import format");
    }
    if (rc == 0 && out->n == before)
        rc = tb_seterr(err, errlen, TB_EEMPTY, "%s: no request in the file", name);
    return rc;
}

int tb_import_mem(enum tb_import_format f, const char *buf, size_t len, const char *name,
                  struct tb_import *out, char *err, size_t errlen)
{
    struct tb_import_in in = {buf, len, NULL};
    return import_in(f, &in, name, out, err, errlen);
}

int tb_import_file(enum tb_import_format f, const char *path, struct tb_import *out, char *err,
                   size_t errlen)
{
    const char *name;
    char *buf = NULL;
    size_t len = 0;
    int rc;
    if (f == TB_IMPORT_SGLANG || f == TB_IMPORT_AIPERF_RAW || f == TB_IMPORT_AIPERF) {
        /* JSONL: a line at a time, never the whole file in memory. */
        int is_stdin = strcmp(path, "-") == 0;
        struct tb_import_in in = {NULL, 0, is_stdin ? stdin : fopen(path, "rb")};
        name = is_stdin ? "<stdin>" : path;
        if (in.f == NULL)
            return tb_seterr(err, errlen, TB_EIO, "%s: %s", name, strerror(errno));
        rc = import_in(f, &in, name, out, err, errlen);
        if (!is_stdin)
            fclose(in.f);
        return rc;
    }
    rc = tb_read_path(path, TB_IMPORT_FILE_MAX, "1 GiB import", &buf, &len, &name, err, errlen);
    if (rc != 0)
        return rc;
    rc = tb_import_mem(f, buf, len, name, out, err, errlen);
    free(buf);
    return rc;
}

struct tb_import_request *tb_import_add(struct tb_import *im, int *rc, const char *fmt, ...)
{
    struct tb_import_request *r;
    va_list ap;
    if (im->n >= TB_IMPORT_REQUESTS_MAX) {
        *rc = TB_ETOOBIG;
        return NULL;
    }
    if (im->n == im->cap) {
        void *v = tb_grow(im->req, &im->cap, sizeof(*im->req), 16);
        if (v == NULL) {
            *rc = TB_ENOMEM;
            return NULL;
        }
        im->req = v;
    }
    r = &im->req[im->n++];
    memset(r, 0, sizeof(*r));
    tb_stream_init(&r->stream);
    va_start(ap, fmt);
    vsnprintf(r->name, sizeof(r->name), fmt, ap);
    va_end(ap);
    *rc = 0;
    return r;
}

/* ---- JSON and lines ---------------------------------------------------- */

int tb_import_num(const cJSON *v, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -1;
    *out = v->valuedouble;
    return 0;
}

void tb_import_str(char *dst, size_t cap, const cJSON *v)
{
    dst[0] = '\0';
    if (cJSON_IsString(v) && v->valuestring != NULL)
        tb_utf8_copy(dst, cap, v->valuestring);
}

cJSON *tb_import_parse(const char *buf, size_t len, char *err, size_t errlen)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    if (root != NULL) {
        while (end < buf + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
            end++;
        if (end == buf + len)
            return root;
        cJSON_Delete(root);
    }
    tb_seterr(err, errlen, TB_EFORMAT, "invalid JSON near byte %zu",
              (end != NULL && end >= buf ? (size_t)(end - buf) : 0) + 1);
    return NULL;
}

/* A line's bytes are all blank. */
static int blank(const char *p, size_t n)
{
    size_t k = 0;
    while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
        k++;
    return k == n;
}

static int lines_of_stream(FILE *f, const char *name, char *err, size_t errlen,
                           int (*fn)(void *ud, const char *line, size_t n, size_t lineno),
                           void *ud)
{
    struct tb_lines in;
    int rc = 0, got;
    tb_lines_init(&in, f, TB_IMPORT_LINE_MAX);
    while ((got = tb_lines_next(&in)) == 1)
        if (!blank(in.line, in.len) && (rc = fn(ud, in.line, in.len, in.lineno)) != 0)
            break;
    if (rc == 0 && got == TB_ETOOBIG)
        rc = tb_seterr(err, errlen, got, "%s:%zu: line is over the %zu MiB cap", name,
                       in.lineno, TB_IMPORT_LINE_MAX >> 20);
    else if (rc == 0 && got == TB_EIO)
        rc = tb_seterr(err, errlen, got, "%s: %s", name, strerror(errno));
    else if (rc == 0 && got < 0)
        rc = tb_seterr(err, errlen, got, "%s: out of memory", name);
    tb_lines_free(&in);
    return rc;
}

int tb_import_lines(const struct tb_import_in *in, const char *name, char *err, size_t errlen,
                    int (*fn)(void *ud, const char *line, size_t n, size_t lineno), void *ud)
{
    const char *buf = in->buf;
    size_t lineno = 0, i = 0, len = in->len;
    if (in->f != NULL)
        return lines_of_stream(in->f, name, err, errlen, fn, ud);
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t e = nl != NULL ? (size_t)(nl - buf) : len, n = e - i;
        int rc;
        lineno++;
        if (!blank(buf + i, n) && (rc = fn(ud, buf + i, n, lineno)) != 0)
            return rc;
        i = e + 1;
    }
    return 0;
}

/* ---- Spreading text over chunks --------------------------------------- */

static int word_byte(unsigned char c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '\'';
}

/* Unit boundaries of text: token-like pieces when there are at least n of
 * them, else code points.  b[0..*nb] holds the start of each unit and
 * the end; the caller frees b. */
static size_t *units(const char *s, size_t len, size_t n, size_t *nb)
{
    size_t *b = malloc((len + 2) * sizeof(*b)), k = 0, i = 0;
    if (b == NULL)
        return NULL;
    while (i < len) {
        b[k++] = i;
        if (s[i] == '\n') {
            i++;
            continue;
        }
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i < len && word_byte((unsigned char)s[i])) {
            while (i < len && word_byte((unsigned char)s[i]))
                i++;
        } else if (i < len && s[i] != '\n') {
            i++;
        }
    }
    if (k < n) { /* too few pieces: one unit per code point */
        k = 0;
        for (i = 0; i < len; i++)
            if (((unsigned char)s[i] & 0xC0) != 0x80)
                b[k++] = i;
    }
    b[k] = len;
    *nb = k;
    return b;
}

int tb_import_spread(struct tb_stream *s, const double *t, size_t n, const char *text, size_t tlen,
                     long long tokens, uint64_t seed, size_t *empty)
{
    struct tb_stream syn;
    size_t *b = NULL, nu = 0;
    int rc = 0;

    tb_stream_init(&syn);
    if (n == 0)
        goto out;
    if (text == NULL) {
        /* Synthetic prose: one corpus piece per token (at least one per
         * chunk), cut exactly like --synth. */
        struct tb_synth_spec sp;
        long long want = tokens > (long long)n ? tokens : (long long)n;
        tb_synth_default(&sp);
        sp.tokens = want > 10000000 ? 10000000 : (uint32_t)want;
        sp.seed = seed;
        rc = tb_synth_generate(&sp, &syn);
        if (rc != 0)
            goto out;
        b = malloc((syn.n + 1) * sizeof(*b));
        if (b == NULL) {
            rc = TB_ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < syn.n; i++)
            b[i] = (size_t)syn.ev[i].off;
        b[syn.n] = (size_t)syn.text_len;
        nu = syn.n;
        text = syn.text;
    } else {
        b = units(text, tlen, n, &nu);
        if (b == NULL) {
            rc = TB_ENOMEM;
            goto out;
        }
    }
    for (size_t k = 0; k < n && rc == 0; k++) {
        /* Chunk k takes units [k*nu/n, (k+1)*nu/n): even, in order. */
        size_t u0 = (size_t)((uint64_t)k * nu / n);
        size_t u1 = (size_t)((uint64_t)(k + 1) * nu / n);
        uint64_t tok = 1;
        if (tokens > (long long)n)
            tok = (uint64_t)tokens / n + ((uint64_t)k < (uint64_t)tokens % n);
        if (tok > TB_EVENT_TOKENS_MAX) {
            rc = TB_ETOOBIG;
            break;
        }
        if (u1 == u0) {
            (*empty)++;
            continue;
        }
        rc = tb_stream_append(s, t[k], text + b[u0], b[u1] - b[u0], (uint32_t)tok, TB_KIND_CONTENT);
    }
    if (rc == 0 && tokens >= 0)
        s->usage_tokens = tokens;
out:
    free(b);
    tb_stream_free(&syn);
    return rc;
}

/* ---- Raw SSE bytes ----------------------------------------------------- */

int tb_import_sse_open(struct tb_import_sse *x)
{
    memset(x, 0, sizeof(*x));
    if (tb_sse_create(0, 0, &x->sse) != 0 || tb_oai_create(&x->oai) != 0) {
        tb_import_sse_close(x);
        return TB_ENOMEM;
    }
    return 0;
}

void tb_import_sse_close(struct tb_import_sse *x)
{
    tb_sse_destroy(x->sse);
    tb_oai_destroy(x->oai);
    x->sse = NULL;
    x->oai = NULL;
}

void tb_import_sse_begin(struct tb_import_sse *x, struct tb_stream *s)
{
    tb_sse_reset(x->sse);
    x->s = s;
    x->rc = 0;
    x->err[0] = '\0';
    x->failed[0] = '\0';
}

static int on_event(void *ud, const struct tb_sse_event *ev)
{
    struct tb_import_sse *x = ud;
    struct tb_oai_delta d;
    char e[200];
    int rc;
    if (ev->data_len == 0)
        return 0;
    rc = tb_oai_parse_event(x->oai, ev->data, ev->data_len, &d, e, sizeof(e));
    if (rc != 0) {
        x->rc = rc;
        snprintf(x->err, sizeof(x->err), "%s", e);
        return 1;
    }
    if (d.error) {
        snprintf(x->failed, sizeof(x->failed), "error event: %.200s",
                 d.error_message[0] ? d.error_message : "(no message)");
        return 0;
    }
    if (d.usage_completion >= 0)
        x->s->usage_tokens = d.usage_completion;
    rc = 0;
    if (d.reasoning != NULL)
        rc = tb_stream_append(x->s, x->t, d.reasoning, d.reasoning_len, 1, TB_KIND_REASONING);
    if (rc == 0 && d.content != NULL)
        rc = tb_stream_append(x->s, x->t, d.content, d.content_len, 1, TB_KIND_CONTENT);
    if (rc != 0) {
        x->rc = rc;
        snprintf(x->err, sizeof(x->err), "%s",
                 rc == TB_ENOMEM ? "out of memory" : "event over a cap");
        return 1;
    }
    return 0;
}

int tb_import_sse_feed(struct tb_import_sse *x, const char *buf, size_t len, double t)
{
    char e[200];
    int rc;
    x->t = t;
    rc = tb_sse_feed(x->sse, buf, len, on_event, x, e, sizeof(e));
    if (rc == 1)
        return x->rc;
    if (rc != 0) {
        x->rc = rc;
        snprintf(x->err, sizeof(x->err), "event stream: %s", e);
    }
    return rc;
}
