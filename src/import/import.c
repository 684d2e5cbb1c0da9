/*
 * import.c - the import module's shared parts (see import.h): format
 * names, the request list, files, spreading text over chunks, and raw SSE
 * bytes through the SSE parser and the OpenAI event JSON.  JSON and line
 * helpers are in import_json.c, telling the formats apart in
 * import_detect.c, the formats themselves in import_vllm.c,
 * import_genai.c and import_aiperf.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/grow.h"
#include "import_priv.h"
#include "base/readall.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/utf8.h"

static const char *const format_names[TB_IMPORT__COUNT] = {"vllm",       "sglang", "genai-perf",
                                                           "aiperf-raw", "aiperf", "auto"};

void tb_import_init(struct tb_import *im)
{
    memset(im, 0, sizeof(*im));
    im->chars_per_token = TB_IMPORT_CPT_DEFAULT;
    im->format = TB_IMPORT_AUTO;
}

void tb_import_free(struct tb_import *im)
{
    if (im == NULL)
        return;
    double cpt = im->chars_per_token;
    for (size_t i = 0; i < im->n; i++)
        tb_stream_free(&im->req[i].stream);
    free(im->req);
    tb_import_init(im);
    im->chars_per_token = cpt;
}

const char *tb_import_format_name(enum tb_import_format f)
{
    return (unsigned)f < TB_IMPORT__COUNT ? format_names[f] : "?";
}

int tb_import_spec(const char *spec, enum tb_import_format *f, const char **path, char *err,
                   size_t errlen)
{
    const char *colon = strchr(spec, ':');
    *f = TB_IMPORT_AUTO;
    *path = spec;
    if (colon != NULL) {
        for (int i = 0; i < TB_IMPORT__COUNT; i++) {
            if ((size_t)(colon - spec) == strlen(format_names[i]) &&
                memcmp(spec, format_names[i], (size_t)(colon - spec)) == 0) {
                *f = (enum tb_import_format)i;
                *path = colon + 1;
                break;
            }
        }
    }
    if (**path == '\0')
        return tb_seterr(err, errlen, TB_EINVAL,
                         "'%s' is not [FORMAT:]FILE with FORMAT one of vllm, sglang, genai-perf, "
                         "aiperf-raw, aiperf, auto",
                         spec);
    return 0;
}

/* Turns TB_IMPORT_AUTO into the format that buf[0..len) (a file's start,
 * or all of it) looks like, and refuses a named format that the content
 * contradicts, saying what the file looks like instead. */
static int resolve_format(enum tb_import_format *f, const char *buf, size_t len, const char *name,
                          char *err, size_t errlen)
{
    const char *what = NULL;
    if (*f == TB_IMPORT_AUTO) {
        if (tb_import_detect(buf, len, f, &what) != 0) {
            if (what != NULL)
                return tb_seterr(err, errlen, TB_EFORMAT, "%s: this looks like %s", name, what);
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "%s: not a benchmark result ttsbuf knows (vllm, sglang, genai-perf, "
                             "aiperf-raw, aiperf); name the format as FORMAT:FILE",
                             name);
        }
    } else if ((unsigned)*f < TB_IMPORT_AUTO && tb_import_mismatch(*f, buf, len, &what)) {
        enum tb_import_format d;
        if (tb_import_detect(buf, len, &d, NULL) != 0)
            return tb_seterr(err, errlen, TB_EFORMAT, "%s: not %s: this looks like %s", name,
                             format_names[*f], what);
        return tb_seterr(err, errlen, TB_EFORMAT, "%s: not %s: this looks like %s; try %s:%s", name,
                         format_names[*f], what, format_names[d], name);
    }
    return 0;
}

static int import_in(enum tb_import_format f, const struct tb_import_in *in, const char *name,
                     struct tb_import *out, char *err, size_t errlen)
{
    size_t before = out->n;
    int rc;
    out->format = f;
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
    int rc = resolve_format(&f, buf, len, name, err, errlen);
    return rc != 0 ? rc : import_in(f, &in, name, out, err, errlen);
}

int tb_import_keep_run(struct tb_import *im, unsigned run)
{
    size_t k = 0;
    for (size_t i = 0; i < im->n; i++)
        if (im->req[i].run == run)
            k++;
    if (k == 0)
        return TB_EINVAL;
    k = 0;
    for (size_t i = 0; i < im->n; i++) {
        if (im->req[i].run == run)
            im->req[k++] = im->req[i];
        else
            tb_stream_free(&im->req[i].stream);
    }
    im->n = k;
    return 0;
}

static int jsonl_format(enum tb_import_format f)
{
    return f == TB_IMPORT_SGLANG || f == TB_IMPORT_AIPERF_RAW || f == TB_IMPORT_AIPERF;
}

int tb_import_file(enum tb_import_format f, const char *path, struct tb_import *out, char *err,
                   size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    char *buf = NULL;
    size_t len = 0;
    struct stat st;
    int rc = 0, streamed = 0;
    FILE *fp = is_stdin ? stdin : fopen(path, "rb");
    if (fp != NULL && fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) {
        /* A regular file: its first 64 KiB say (or check) the format; a
         * JSONL one is then read a line at a time from the start, never
         * whole. */
        char head[65536];
        size_t n = fread(head, 1, sizeof(head), fp);
        rc = ferror(fp) ? tb_seterr(err, errlen, TB_EIO, "%s: %s", name, strerror(errno))
                        : resolve_format(&f, head, n, name, err, errlen);
        if (rc == 0 && jsonl_format(f) && fseek(fp, 0, SEEK_SET) != 0)
            rc = tb_seterr(err, errlen, TB_EIO, "%s: %s", name, strerror(errno));
        streamed = rc != 0 || jsonl_format(f);
    } else if (fp != NULL) {
        /* A pipe: a named JSONL format is read a line at a time as it
         * comes (unchecked: what was read cannot be read again); anything
         * else whole, under the cap. */
        streamed = jsonl_format(f);
    }
    if (streamed && rc == 0) {
        struct tb_import_in in = {NULL, 0, fp};
        rc = import_in(f, &in, name, out, err, errlen);
    }
    if (fp != NULL && !is_stdin)
        fclose(fp);
    if (streamed)
        return rc;
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

/* Tokens chunk k of n gets when `tokens` are spread evenly (at least one
 * each; tokens < 0: one each). */
static uint64_t chunk_tokens(size_t k, size_t n, long long tokens)
{
    if (tokens > (long long)n)
        return (uint64_t)tokens / n + ((uint64_t)k < (uint64_t)tokens % n);
    return 1;
}

/*
 * No text: chunk k gets round(tokens_k * cpt) characters (at least one) of
 * the synthetic prose, taken in order from its start (wrapping round), so
 * its speech time follows its token count and two requests with the same
 * chunks get the same text wherever they are in the file.
 */
static int spread_estimated(struct tb_import *im, struct tb_stream *s, const double *t, size_t n,
                            long long tokens, enum tb_kind kind)
{
    struct tb_stream prose;
    struct tb_synth_spec sp;
    double cpt = im->chars_per_token;
    uint64_t total = 0, pos = 0, cost;
    int rc;
    /* The size comes from a count, not from the file's bytes: it is
     * checked against the caps before anything is built (a 300-byte
     * record claiming 10^12 tokens would otherwise build a terabyte). */
    for (size_t k = 0; k < n; k++) {
        uint64_t tok = chunk_tokens(k, n, tokens);
        double c = (double)tok * cpt + 0.5;
        if (tok > TB_EVENT_TOKENS_MAX)
            return TB_ETOOBIG;
        total += c < 1 ? 1 : c > TB_EVENT_TEXT_MAX ? TB_EVENT_TEXT_MAX : (uint64_t)c;
    }
    cost = total + (uint64_t)n * sizeof(struct tb_event);
    if (total > TB_READER_TEXT_MAX || cost > TB_IMPORT_ESTIMATED_MAX - im->estimated_bytes)
        return TB_ETOOBIG;
    im->estimated_bytes += cost;
    tb_stream_init(&prose);
    tb_synth_default(&sp);
    sp.tokens = total / 2 + 16 > 100000 ? 100000 : (uint32_t)(total / 2 + 16);
    sp.seed = 1;
    rc = tb_synth_generate(&sp, &prose);
    for (size_t k = 0; k < n && rc == 0; k++) {
        uint64_t tok = chunk_tokens(k, n, tokens);
        double c = (double)tok * cpt + 0.5;
        size_t want = c < 1 ? 1 : c > TB_EVENT_TEXT_MAX ? TB_EVENT_TEXT_MAX : (size_t)c;
        size_t take;
        if (tok > TB_EVENT_TOKENS_MAX) {
            rc = TB_ETOOBIG;
            break;
        }
        if (pos >= prose.text_len)
            pos = 0;
        take = prose.text_len - pos < want ? (size_t)(prose.text_len - pos) : want;
        while (pos + take < prose.text_len &&
               ((unsigned char)prose.text[pos + take] & 0xC0) == 0x80)
            take++; /* end on a character boundary */
        rc = tb_stream_append(s, t[k], prose.text + pos, take, (uint32_t)tok, kind);
        pos += take;
    }
    tb_stream_free(&prose);
    return rc;
}

int tb_import_spread(struct tb_import *im, struct tb_stream *s, const double *t, size_t n,
                     const char *text, size_t tlen, long long tokens, enum tb_kind kind)
{
    size_t *b = NULL, nu = 0;
    int rc = 0;

    if (n == 0)
        goto out;
    if (text == NULL) {
        rc = spread_estimated(im, s, t, n, tokens, kind);
        goto out;
    }
    b = units(text, tlen, n, &nu);
    if (b == NULL) {
        rc = TB_ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < n && rc == 0; k++) {
        /* Chunk k takes units [k*nu/n, (k+1)*nu/n): even, in order. */
        size_t u0 = (size_t)((uint64_t)k * nu / n);
        size_t u1 = (size_t)((uint64_t)(k + 1) * nu / n);
        uint64_t tok = chunk_tokens(k, n, tokens);
        if (tok > TB_EVENT_TOKENS_MAX) {
            rc = TB_ETOOBIG;
            break;
        }
        if (u1 == u0) {
            im->empty_chunks++;
            continue;
        }
        rc = tb_stream_append(s, t[k], text + b[u0], b[u1] - b[u0], (uint32_t)tok, kind);
    }
out:
    if (rc == 0 && tokens >= 0)
        s->usage_tokens = tokens;
    free(b);
    return rc;
}

/* ---- Raw SSE bytes ----------------------------------------------------- */

int tb_import_sse_open(struct tb_import_sse *x)
{
    memset(x, 0, sizeof(*x));
    if (tb_reader_init(&x->rd, TB_API_CHAT) != 0) {
        tb_import_sse_close(x);
        return TB_ENOMEM;
    }
    tb_reader_recorded(&x->rd); /* the tools record chat and completions alike */
    return 0;
}

void tb_import_sse_close(struct tb_import_sse *x)
{
    tb_reader_free(&x->rd);
}

void tb_import_sse_begin(struct tb_import_sse *x, struct tb_stream *s)
{
    tb_reader_begin(&x->rd, s, 0);
    x->fed = 0;
    x->err[0] = '\0';
}

int tb_import_sse_feed(struct tb_import_sse *x, const char *buf, size_t len, double t)
{
    int kind;
    x->fed = 1;
    if (x->rd.error != 0 || tb_reader_feed(&x->rd, buf, len, t) == 0)
        return 0; /* a stream that ended in an error event reads no further */
    kind = x->rd.error;
    snprintf(x->err, sizeof(x->err), "%s", x->rd.message);
    switch (kind) {
    case TB_READER_JSON:
        return TB_EFORMAT;
    case TB_READER_SSE:
    case TB_READER_TOO_LONG:
        return TB_ETOOBIG;
    case TB_READER_NOMEM:
        return TB_ENOMEM;
    default:
        return 0; /* an error event: the request's own conclusion */
    }
}

void tb_import_sse_end(struct tb_import_sse *x, struct tb_import_request *r)
{
    if (!x->fed)
        return;
    r->stream_error = tb_reader_end(&x->rd);
    if (x->rd.usage_completion >= 0)
        r->stream.usage_tokens = x->rd.usage_completion;
    if (r->stream_error != 0 && r->error[0] == '\0')
        snprintf(r->error, sizeof(r->error), "%.*s", (int)sizeof(r->error) - 1, x->rd.message);
    if (r->stream_error == 0)
        snprintf(r->warning, sizeof(r->warning), "%.*s", (int)sizeof(r->warning) - 1,
                 x->rd.warning);
}
