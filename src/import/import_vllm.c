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

/* An optional per-request array: NULL when absent or null, else it must be
 * an array of n items. */
static int opt_array(const struct vctx *c, const cJSON *root, const char *key, int n,
                     const cJSON **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    char what[96];
    *out = NULL;
    if (v == NULL || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsArray(v))
        return bad(c, key, -1, -1, "not an array");
    if (cJSON_GetArraySize(v) != n) {
        snprintf(what, sizeof(what), "%d items, but ttfts has %d", cJSON_GetArraySize(v), n);
        return bad(c, key, -1, -1, what);
    }
    *out = v;
    return 0;
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

static int one_result(struct vctx *c, cJSON *root)
{
    char e[96];
    const cJSON *ttfts, *itls, *texts, *olens, *errs, *model, *arrays;
    int rc = 0, n, i = 0;
    c->out->runs = c->run;
    if (!cJSON_IsObject(root)) {
        rc = bad(c, "(document)", -1, -1, "not a JSON object");
        goto out;
    }
    model = cJSON_GetObjectItemCaseSensitive(root, "model_id");
    arrays = root;
    c->prefix = "";
    if (cJSON_GetObjectItemCaseSensitive(root, "ttfts") == NULL &&
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "details"))) {
        arrays = cJSON_GetObjectItemCaseSensitive(root, "details");
        c->prefix = "details.";
    }
    ttfts = cJSON_GetObjectItemCaseSensitive(arrays, "ttfts");
    if (!cJSON_IsArray(ttfts)) {
        rc = bad(c, "ttfts", -1, -1,
                 ttfts == NULL ? "missing: no per-request data (was the benchmark run with "
                                 "--save-detailed / --output-details?)"
                               : "not an array");
        goto out;
    }
    n = cJSON_GetArraySize(ttfts);
    itls = cJSON_GetObjectItemCaseSensitive(arrays, "itls");
    if (!cJSON_IsArray(itls)) {
        rc = bad(c, "itls", -1, -1, itls == NULL ? "missing" : "not an array");
        goto out;
    }
    if (cJSON_GetArraySize(itls) != n) {
        snprintf(e, sizeof(e), "%d items, but ttfts has %d", cJSON_GetArraySize(itls), n);
        rc = bad(c, "itls", -1, -1, e);
        goto out;
    }
    if ((rc = opt_array(c, arrays, "generated_texts", n, &texts)) != 0 ||
        (rc = opt_array(c, arrays, "output_lens", n, &olens)) != 0 ||
        (rc = opt_array(c, arrays, "errors", n, &errs)) != 0)
        goto out;
    {
        const cJSON *tt = ttfts->child, *it = itls->child;
        const cJSON *tx = texts ? texts->child : NULL, *ol = olens ? olens->child : NULL;
        const cJSON *er = errs ? errs->child : NULL;
        size_t first = c->out->n;
        for (; tt != NULL && rc == 0; i++) {
            rc = one_request(c, i, tt, it, tx, ol, er);
            tt = tt->next;
            it = it->next;
            tx = tx ? tx->next : NULL;
            ol = ol ? ol->next : NULL;
            er = er ? er->next : NULL;
        }
        for (size_t j = first; j < c->out->n; j++)
            tb_jsonfield_text(c->out->req[j].stream.model, sizeof(c->out->req[j].stream.model),
                              model);
    }
out:
    cJSON_Delete(root);
    return rc;
}

static int one_line(void *ud, const char *line, size_t n, size_t lineno)
{
    struct vctx *c = ud;
    char e[96];
    cJSON *root = tb_import_parse(line, n, e, sizeof(e));
    c->line = lineno;
    c->run++;
    if (root == NULL)
        return bad(c, "(document)", -1, -1, e);
    return one_result(c, root);
}

/* vllm: one JSON document, or (--append-result, JSONL records) several,
 * each a run.  Names say "run N" when there are several; an error in
 * document N > 1 names its line. */
static int documents(struct vctx *c, const char *buf, size_t len)
{
    size_t pos = 0, used = 0;
    int rc = 0;
    while (pos < len &&
           (buf[pos] == ' ' || buf[pos] == '\t' || buf[pos] == '\r' || buf[pos] == '\n'))
        pos++;
    while (rc == 0 && (pos < len || c->run == 0)) {
        char e[96];
        const char *nl = memchr(buf + pos, '\n', len - pos);
        cJSON *root = NULL;
        /* The tools write a document a line: parse the line alone, so the
         * cost stays O(file) however many runs; only a document that goes
         * on past its first line (pretty-printed) is parsed from the rest
         * of the file. */
        if (nl != NULL)
            root = tb_import_parse_next(buf + pos, (size_t)(nl - buf) - pos, &used, e, sizeof(e));
        if (root != NULL && pos + used == (size_t)(nl - buf))
            used++; /* the newline */
        else if (root == NULL)
            root = tb_import_parse_next(buf + pos, len - pos, &used, e, sizeof(e));
        c->run++;
        if (root == NULL) {
            if (c->run > 1) {
                size_t line = 1;
                for (size_t k = 0; k < pos; k++)
                    line += buf[k] == '\n';
                c->line = line;
            }
            return bad(c, "(document)", -1, -1, e);
        }
        if (c->run == 1 && pos + used < len)
            c->runs = 1; /* more follows: name the runs */
        rc = one_result(c, root);
        pos += used;
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
