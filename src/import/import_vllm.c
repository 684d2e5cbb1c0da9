/*
 * import_vllm.c - vLLM `vllm bench serve --save-result --save-detailed`
 * JSON and SGLang `bench_serving --output-file --output-details` JSONL
 * (see import.h).
 *
 * Fields relied on (vllm/benchmarks/serve.py and sglang/bench_serving.py
 * build the same per-request arrays, index i for request i):
 *   ttfts[i]            seconds from sending the request to its first chunk
 *                       (0 for a failed request)
 *   itls[i]             seconds between consecutive chunks after the first
 *                       (one per chunk after the first: the clients append
 *                       one entry per streamed chunk that carried text)
 *   generated_texts[i]  the whole text (optional: synthetic text without it)
 *   output_lens[i]      output tokens (optional)
 *   errors[i]           "" or the failure (optional)
 *   model_id            the model (optional, vLLM)
 * Newer SGLang versions nest the arrays in a "details" object; both
 * layouts are read (errors then name details.itls[i][k]).
 * Everything else in the file (the summary statistics) is ignored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonscan.h"
#include "import_json.h"
#include "import_priv.h"
#include "import_reader.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

struct vctx {
    const char *name;
    size_t line;        /* 0 for a JSON document */
    unsigned run;       /* 1, 2, ...: the document or line */
    int runs;           /* several documents: names say the run */
    const char *prefix; /* "" or "details." */
    struct tb_import *out;
    char *err;
    size_t errlen;
};

/* "NAME: PATH: what" (JSON) or "NAME:LINE: PATH: what" (JSONL). */
static int bad(const struct vctx *c, const char *path, long i, long k, const char *what)
{
    char where[112];
    if (k >= 0)
        snprintf(where, sizeof(where), "%s%s[%ld][%ld]", c->prefix, path, i, k);
    else if (i >= 0)
        snprintf(where, sizeof(where), "%s%s[%ld]", c->prefix, path, i);
    else
        snprintf(where, sizeof(where), "%s%s", c->prefix, path);
    if (c->line > 0)
        return tb_seterr(c->err, c->errlen, TB_EFORMAT, "%s:%zu: %s: %s", c->name, c->line, where,
                         what);
    return tb_seterr(c->err, c->errlen, TB_EFORMAT, "%s: %s: %s", c->name, where, what);
}

/* A member of the document (or of its "details"): its value's span, or
 * none (n == 0). */
struct span {
    size_t at, n;
};

/* The members a result is read from; the first of each name, as cJSON's
 * lookup takes it. */
enum { M_MODEL, M_TTFTS, M_ITLS, M_TEXTS, M_OLENS, M_ERRS, M_DETAILS, M__COUNT };
static const char *const member_names[M__COUNT] = {
    "model_id", "ttfts", "itls", "generated_texts", "output_lens", "errors", "details"};

/* The members of the object at d[at..len) into m[] (others skipped, never
 * built).  0, or TB_EFORMAT (*bad the offset). */
static int members(const char *d, size_t len, size_t at, struct span *m, size_t *badat)
{
    struct tb_jsonscan_it it;
    size_t ks, ke, vs, ve;
    int more;
    memset(m, 0, M__COUNT * sizeof(*m));
    if (tb_jsonscan_open(&it, d, len, at) != 0) {
        *badat = it.pos;
        return TB_EFORMAT;
    }
    while ((more = tb_jsonscan_next(&it, &ks, &ke, &vs, &ve)) == 1)
        for (int k = 0; k < M__COUNT; k++)
            if (m[k].n == 0 && tb_jsonscan_key_is(d, ks, ke, member_names[k])) {
                m[k].at = vs;
                m[k].n = ve - vs;
            }
    *badat = it.pos;
    return more < 0 ? TB_EFORMAT : 0;
}

/* The first byte of a span's value. */
static char first_of(const char *d, const struct span *v)
{
    if (v->n == 0)
        return '\0';
    return d[v->at];
}

/* The items of the array at v. */
static size_t items(const char *d, const struct span *v)
{
    struct tb_jsonscan_it it;
    size_t n = 0, vs, ve;
    if (tb_jsonscan_open(&it, d, v->at + v->n, v->at) != 0)
        return 0;
    while (tb_jsonscan_next(&it, NULL, NULL, &vs, &ve) == 1)
        n++;
    return n;
}

/* An optional per-request array: none when absent or null, else it must
 * be an array of n items (*walk set on its items). */
static int opt_array(const struct vctx *c, const char *d, const struct span *v, const char *key,
                     size_t n, struct tb_jsonscan_it *walk, int *have)
{
    char what[96];
    size_t k;
    *have = 0;
    if (v->n == 0 || (v->n == 4 && memcmp(d + v->at, "null", 4) == 0))
        return 0;
    if (first_of(d, v) != '[')
        return bad(c, key, -1, -1, "not an array");
    if ((k = items(d, v)) != n) {
        snprintf(what, sizeof(what), "%zu items, but ttfts has %zu", k, n);
        return bad(c, key, -1, -1, what);
    }
    *have = 1;
    return tb_jsonscan_open(walk, d, v->at + v->n, v->at);
}

static int one_request(const struct vctx *c, int i, const cJSON *ttft, const cJSON *itl,
                       const cJSON *text, const cJSON *olen, const cJSON *errv)
{
    struct tb_import_request *r;
    double t0, *t = NULL, d, lens;
    long long tokens = -1;
    const char *s = NULL;
    size_t slen = 0, n;
    int rc = 0, k;

    if (tb_jsonfield_num(ttft, &t0) != 0 || t0 < 0)
        return bad(c, "ttfts", i, -1, "not a number >= 0");
    if (t0 > TB_TIME_MAX)
        return bad(c, "ttfts", i, -1, TB_IMPORT_LATE);
    if (!cJSON_IsArray(itl))
        return bad(c, "itls", i, -1, "not an array");
    if (text != NULL && !cJSON_IsNull(text) && !cJSON_IsString(text))
        return bad(c, "generated_texts", i, -1, "not a string");
    if (olen != NULL && !cJSON_IsNull(olen)) {
        if (tb_jsonfield_num(olen, &lens) != 0 || lens < 0 || lens > 1e12)
            return bad(c, "output_lens", i, -1, "not a token count");
        tokens = (long long)lens;
    }
    if (c->line > 0)
        r = tb_import_add(c->out, &rc, "line %zu request %d", c->line, i);
    else if (c->runs)
        r = tb_import_add(c->out, &rc, "run %u request %d", c->run, i);
    else
        r = tb_import_add(c->out, &rc, "request %d", i);
    if (r == NULL)
        return tb_seterr(c->err, c->errlen, rc, "%s: too many requests or out of memory", c->name);
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): cJSON_IsString(NULL) is false */
    if (cJSON_IsString(errv) && errv->valuestring[0] != '\0')
        tb_jsonfield_text(r->error, sizeof(r->error), errv);
    if (cJSON_IsString(text)) {
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): cJSON_IsString(NULL) is false */
        s = text->valuestring;
        slen = strlen(s);
        if (tb_utf8_check(s, slen) != slen)
            return bad(c, "generated_texts", i, -1, "not valid UTF-8");
    }
    n = (size_t)cJSON_GetArraySize(itl) + 1;
    r->run = c->run;
    if (t0 == 0 && n == 1 && slen == 0) {
        /* What the clients record for a request that failed. */
        if (r->error[0] == '\0')
            snprintf(r->error, sizeof(r->error), "no output recorded");
        return 0;
    }
    t = malloc(n * sizeof(*t));
    if (t == NULL)
        return tb_seterr(c->err, c->errlen, TB_ENOMEM, "%s: out of memory", c->name);
    t[0] = t0;
    k = 0;
    for (const cJSON *v = itl->child; v != NULL; v = v->next, k++) {
        if (tb_jsonfield_num(v, &d) != 0 || d < 0) {
            free(t);
            return bad(c, "itls", i, k, "not a number >= 0");
        }
        t[k + 1] = t[k] + d;
        if (!(t[k + 1] <= TB_TIME_MAX)) {
            /* 1e308 + 1e308 is infinity: unchecked, the stream would
             * hold a chunk at "inf s" and a trace "t": null. */
            free(t);
            return bad(c, "itls", i, k, "the gaps add up " TB_IMPORT_LATE);
        }
    }
    if (s == NULL)
        c->out->estimated++;
    rc = tb_import_spread(c->out, &r->stream, t, n, s, slen, tokens, TB_KIND_CONTENT);
    free(t);
    if (rc != 0)
        return tb_seterr(c->err, c->errlen, rc, "%s: request %d: %s", c->name, i,
                         rc == TB_ENOMEM ? "out of memory" : TB_IMPORT_OVER_CAP);
    return 0;
}

/* The next item of an array being walked, parsed alone (priced first);
 * NULL when the walk has none (have 0) or the item is not JSON (said). */
static cJSON *next_item(const struct vctx *c, struct tb_jsonscan_it *w, int have, const char *key,
                        long i, int *rc)
{
    size_t vs, ve;
    char e[96];
    cJSON *v;
    if (!have || tb_jsonscan_next(w, NULL, NULL, &vs, &ve) != 1)
        return NULL;
    v = tb_import_parse(w->s + vs, ve - vs, e, sizeof(e));
    if (v == NULL)
        *rc = bad(c, key, i, -1, e);
    return v;
}

/* The requests, item i of every array at once, each parsed alone. */
static int requests(struct vctx *c, struct tb_jsonscan_it *w, const int *have, size_t n)
{
    static const char *const keys[5] = {"ttfts", "itls", "generated_texts", "output_lens",
                                        "errors"};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        cJSON *v[5] = {NULL, NULL, NULL, NULL, NULL};
        for (int k = 0; k < 5 && rc == 0; k++)
            v[k] = next_item(c, &w[k], have[k], keys[k], (long)i, &rc);
        if (rc == 0)
            rc = one_request(c, (int)i, v[0], v[1], v[2], v[3], v[4]);
        for (int k = 0; k < 5; k++)
            cJSON_Delete(v[k]);
    }
    return rc;
}

/* One result, the document d[0..len) (its shape checked): walked, its
 * arrays read an item at a time, whatever else it holds never built. */
static int one_result(struct vctx *c, const char *d, size_t len)
{
    struct span root[M__COUNT], det[M__COUNT];
    const struct span *a = root;
    struct tb_jsonscan_it w[5];
    int have[5] = {1, 1, 0, 0, 0}, rc;
    size_t n, k, at = 0, first = c->out->n;
    char e[96];
    c->out->runs = c->run;
    while (at < len && (d[at] == ' ' || d[at] == '\t' || d[at] == '\r' || d[at] == '\n'))
        at++;
    if (at >= len || d[at] != '{')
        return bad(c, "(document)", -1, -1, "not a JSON object");
    if (members(d, len, at, root, &k) != 0) {
        snprintf(e, sizeof(e), "invalid JSON near byte %zu", k + 1);
        return bad(c, "(document)", -1, -1, e);
    }
    c->prefix = "";
    if (root[M_TTFTS].n == 0 && first_of(d, &root[M_DETAILS]) == '{') {
        if (members(d, len, root[M_DETAILS].at, det, &k) != 0)
            return bad(c, "details", -1, -1, "invalid JSON");
        a = det;
        c->prefix = "details.";
    }
    if (first_of(d, &a[M_TTFTS]) != '[')
        return bad(c, "ttfts", -1, -1,
                   a[M_TTFTS].n == 0 ? "missing: no per-request data (was the benchmark run with "
                                       "--save-detailed / --output-details?)"
                                     : "not an array");
    n = items(d, &a[M_TTFTS]);
    if (first_of(d, &a[M_ITLS]) != '[')
        return bad(c, "itls", -1, -1, a[M_ITLS].n == 0 ? "missing" : "not an array");
    if ((k = items(d, &a[M_ITLS])) != n) {
        snprintf(e, sizeof(e), "%zu items, but ttfts has %zu", k, n);
        return bad(c, "itls", -1, -1, e);
    }
    if (tb_jsonscan_open(&w[0], d, a[M_TTFTS].at + a[M_TTFTS].n, a[M_TTFTS].at) != 0 ||
        tb_jsonscan_open(&w[1], d, a[M_ITLS].at + a[M_ITLS].n, a[M_ITLS].at) != 0)
        return bad(c, "ttfts", -1, -1, "not an array");
    if ((rc = opt_array(c, d, &a[M_TEXTS], "generated_texts", n, &w[2], &have[2])) != 0 ||
        (rc = opt_array(c, d, &a[M_OLENS], "output_lens", n, &w[3], &have[3])) != 0 ||
        (rc = opt_array(c, d, &a[M_ERRS], "errors", n, &w[4], &have[4])) != 0)
        return rc;
    rc = requests(c, w, have, n);
    if (root[M_MODEL].n > 0) {
        cJSON *model = tb_import_parse(d + root[M_MODEL].at, root[M_MODEL].n, e, sizeof(e));
        for (size_t j = first; j < c->out->n; j++)
            tb_jsonfield_text(c->out->req[j].stream.model, sizeof(c->out->req[j].stream.model),
                              model);
        cJSON_Delete(model);
    }
    return rc;
}

/* The shape of the document at d[0..len): 0 with *end after it, or the
 * message "invalid JSON near byte N" (from d). */
static int shape(const char *d, size_t len, size_t *end, char *e, size_t elen)
{
    *end = 0;
    if (tb_jsonscan_skip(d, len, end) == 0)
        return 0;
    snprintf(e, elen, "invalid JSON near byte %zu", *end + 1);
    return TB_EFORMAT;
}

static int one_line(void *ud, const char *line, size_t n, size_t lineno)
{
    struct vctx *c = ud;
    char e[96];
    size_t end;
    c->line = lineno;
    c->run++;
    if (shape(line, n, &end, e, sizeof(e)) != 0)
        return bad(c, "(document)", -1, -1, e);
    while (end < n && (line[end] == ' ' || line[end] == '\t' || line[end] == '\r'))
        end++;
    if (end != n) {
        snprintf(e, sizeof(e), "invalid JSON near byte %zu", end + 1);
        return bad(c, "(document)", -1, -1, e);
    }
    return one_result(c, line, n);
}

/* vllm: one JSON document, or (--append-result, JSONL records) several,
 * each a run.  Names say "run N" when there are several; an error in
 * document N > 1 names its line.  Each document's shape is walked (linear
 * whatever its layout: a line or pretty-printed), then its result read. */
static int documents(struct vctx *c, const char *buf, size_t len)
{
    size_t pos = 0;
    int rc = 0;
    while (pos < len &&
           (buf[pos] == ' ' || buf[pos] == '\t' || buf[pos] == '\r' || buf[pos] == '\n'))
        pos++;
    while (rc == 0 && (pos < len || c->run == 0)) {
        char e[96];
        size_t used = 0;
        c->run++;
        if (shape(buf + pos, len - pos, &used, e, sizeof(e)) != 0) {
            if (c->run > 1) {
                size_t line = 1;
                for (size_t k = 0; k < pos; k++)
                    line += buf[k] == '\n';
                c->line = line;
            }
            return bad(c, "(document)", -1, -1, e);
        }
        {
            size_t next = pos + used;
            while (next < len && (buf[next] == ' ' || buf[next] == '\t' || buf[next] == '\r' ||
                                  buf[next] == '\n'))
                next++;
            if (c->run == 1 && next < len)
                c->runs = 1; /* more follows: name the runs */
            rc = one_result(c, buf + pos, used);
            pos = next;
        }
    }
    return rc;
}

/* vLLM's JSON documents, or SGLang's JSONL (one result a line). */
static int read_results(const struct tb_import_in *in, const char *name, int jsonl,
                        struct tb_import *out, char *err, size_t errlen)
{
    struct vctx c = {name, 0, 0, 0, "", out, err, errlen};
    if (jsonl)
        return tb_import_lines(in, name, err, errlen, one_line, &c);
    return documents(&c, in->buf, in->len);
}

static int read_vllm(const struct tb_import_in *in, const char *name, struct tb_import *out,
                     char *err, size_t errlen)
{
    return read_results(in, name, 0, out, err, errlen);
}

static int read_sglang(const struct tb_import_in *in, const char *name, struct tb_import *out,
                       char *err, size_t errlen)
{
    return read_results(in, name, 1, out, err, errlen);
}

const struct tb_import_reader tb_import_reader_vllm = {0, read_vllm};
const struct tb_import_reader tb_import_reader_sglang = {1, read_sglang};
