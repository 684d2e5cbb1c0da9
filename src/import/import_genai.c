/*
 * import_genai.c - NVIDIA GenAI-Perf profile_export.json (see import.h).
 *
 * Fields relied on (Perf Analyzer's export, as GenAI-Perf's
 * LLMProfileDataParser reads it):
 *   experiments[e].experiment.mode / .value   e.g. "concurrency", 10 (names)
 *   experiments[e].requests[r].timestamp       request start, ns
 *   experiments[e].requests[r].response_timestamps[k]   ns, one per response
 *   experiments[e].requests[r].response_outputs[k].response
 *       raw SSE bytes of response k (service_kind "openai"): an entry may
 *       hold several events or part of one, so a request's entries go
 *       through one SSE parser as one byte stream, each event stamped
 *       with the time of the entry that completed it
 *   experiments[e].requests[r].response_outputs[k].text_output
 *       plain text (service_kind "triton"): one chunk each
 *       or, in a run without --streaming, the whole JSON body (plain_body)
 * A request with no response is kept, marked failed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/jsonscan.h"
#include "import_json.h"
#include "import_priv.h"
#include "import_reader.h"
#include "import_sse.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

struct gctx {
    const char *name;
    struct tb_import *out;
    struct tb_import_sse sse;
    char *err;
    size_t errlen;
};

static int bad(const struct gctx *c, int code, int e, int r, const char *tail, long k,
               const char *what)
{
    char where[160];
    int n = snprintf(where, sizeof(where), "experiments[%d]", e);
    if (r >= 0)
        n += snprintf(where + n, sizeof(where) - (size_t)n, ".requests[%d]", r);
    if (tail != NULL)
        n += snprintf(where + n, sizeof(where) - (size_t)n, ".%s", tail);
    if (k >= 0)
        snprintf(where + n, sizeof(where) - (size_t)n, "[%ld]", k);
    return tb_seterr(c->err, c->errlen, code, "%s: %s: %s", c->name, where, what);
}

/*
 * A run without --streaming: the response is the whole body, a JSON
 * chat.completion (choices[0].message) or text_completion
 * (choices[0].text).  Its text is one event at the response's time,
 * carrying usage.completion_tokens (one when absent).
 */
static int plain_body(struct gctx *c, int e, int ri, int k, struct tb_import_request *r,
                      const char *body, double tk)
{
    char msg[96];
    cJSON *root = tb_import_parse(body, strlen(body), msg, sizeof(msg));
    const cJSON *ch0, *msgo, *txt, *rsn = NULL, *usage, *er;
    double ct = 1;
    int rc = 0;
    if (root == NULL)
        return bad(c, TB_EFORMAT, e, ri, "response_outputs", k, msg);
    er = cJSON_GetObjectItemCaseSensitive(root, "error");
    ch0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0);
    msgo = cJSON_GetObjectItemCaseSensitive(ch0, "message");
    txt = cJSON_IsObject(msgo) ? cJSON_GetObjectItemCaseSensitive(msgo, "content")
                               : cJSON_GetObjectItemCaseSensitive(ch0, "text");
    if (cJSON_IsObject(msgo)) {
        rsn = cJSON_GetObjectItemCaseSensitive(msgo, "reasoning_content");
        if (!cJSON_IsString(rsn))
            rsn = cJSON_GetObjectItemCaseSensitive(msgo, "reasoning");
    }
    usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (er != NULL && !cJSON_IsNull(er)) {
        const cJSON *m = cJSON_IsObject(er) ? cJSON_GetObjectItemCaseSensitive(er, "message") : er;
        char text[200];
        tb_jsonfield_text(text, sizeof(text), m);
        snprintf(r->error, sizeof(r->error), "error response: %s", text[0] ? text : "(no message)");
        goto out;
    }
    if (tb_jsonfield_num(cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens"), &ct) == 0 &&
        ct >= 0 && ct <= 1e12)
        r->stream.usage_tokens = (long long)ct;
    else
        ct = 1;
    c->out->not_streamed++;
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): cJSON_IsString(NULL) is false */
    if (cJSON_IsString(rsn) && rsn->valuestring[0] != '\0') {
        size_t n = strlen(rsn->valuestring);
        if (tb_utf8_check(rsn->valuestring, n) != n)
            rc = bad(c, TB_EFORMAT, e, ri, "response_outputs", k, "not valid UTF-8");
        else if (tb_stream_append(&r->stream, tk, rsn->valuestring, n, 1, TB_KIND_REASONING) != 0)
            rc = bad(c, TB_ETOOBIG, e, ri, "response_outputs", k, "over a cap");
    }
    if (rc == 0 && cJSON_IsString(txt) && txt->valuestring[0] != '\0') {
        size_t n = strlen(txt->valuestring);
        uint32_t tok = ct < 1 ? 1 : ct > TB_EVENT_TOKENS_MAX ? TB_EVENT_TOKENS_MAX : (uint32_t)ct;
        if (tb_utf8_check(txt->valuestring, n) != n)
            rc = bad(c, TB_EFORMAT, e, ri, "response_outputs", k, "not valid UTF-8");
        else if (tb_stream_append(&r->stream, tk, txt->valuestring, n, tok, TB_KIND_CONTENT) != 0)
            rc = bad(c, TB_ETOOBIG, e, ri, "response_outputs", k, "over a cap");
    }
out:
    cJSON_Delete(root);
    return rc;
}

/* Whether a response entry is a plain JSON body rather than SSE bytes. */
static int is_plain(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    return *s == '{';
}

static int one_request(struct gctx *c, int e, int ri, const cJSON *req, const char *label)
{
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(req, "response_timestamps");
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(req, "response_outputs");
    const cJSON *t, *o;
    struct tb_import_request *r;
    double t0, tk, last = 0;
    int rc = 0, k = 0;

    if (!cJSON_IsObject(req))
        return bad(c, TB_EFORMAT, e, ri, NULL, -1, "not an object");
    if (tb_jsonfield_num(cJSON_GetObjectItemCaseSensitive(req, "timestamp"), &t0) != 0)
        return bad(c, TB_EFORMAT, e, ri, "timestamp", -1, "missing or not a number");
    if (!cJSON_IsArray(ts))
        return bad(c, TB_EFORMAT, e, ri, "response_timestamps", -1, "missing or not an array");
    if (!cJSON_IsArray(outs))
        return bad(c, TB_EFORMAT, e, ri, "response_outputs", -1, "missing or not an array");
    if (cJSON_GetArraySize(ts) != cJSON_GetArraySize(outs))
        return bad(c, TB_EFORMAT, e, ri, "response_outputs", -1,
                   "not as many items as response_timestamps");
    r = tb_import_add(c->out, &rc, "experiments[%d].requests[%d]%s", e, ri, label);
    if (r == NULL)
        return tb_seterr(c->err, c->errlen, rc, "%s: too many requests or out of memory", c->name);
    tb_import_sse_begin(&c->sse, &r->stream);
    for (t = ts->child, o = outs->child; t != NULL; t = t->next, o = o->next, k++) {
        const cJSON *sse = cJSON_GetObjectItemCaseSensitive(o, "response");
        const cJSON *txt = cJSON_GetObjectItemCaseSensitive(o, "text_output");
        if (tb_jsonfield_num(t, &tk) != 0)
            return bad(c, TB_EFORMAT, e, ri, "response_timestamps", k, "not a number");
        tk = (tk - t0) / 1e9;
        if (tk < 0)
            return bad(c, TB_EFORMAT, e, ri, "response_timestamps", k, "before the request");
        if (!(tk <= TB_TIME_MAX))
            return bad(c, TB_EFORMAT, e, ri, "response_timestamps", k, TB_IMPORT_LATE);
        if (tk < last)
            return bad(c, TB_EFORMAT, e, ri, "response_timestamps", k, "goes backwards");
        last = tk;
        if (cJSON_IsString(sse) && k == 0 && is_plain(sse->valuestring)) {
            rc = plain_body(c, e, ri, k, r, sse->valuestring, tk);
            if (rc != 0)
                return rc;
        } else if (cJSON_IsString(sse)) {
            size_t n = strlen(sse->valuestring);
            rc = tb_import_sse_feed(&c->sse, sse->valuestring, n, tk);
            if (rc != 0)
                return bad(c, rc, e, ri, "response_outputs", k, c->sse.err);
        } else if (cJSON_IsString(txt)) {
            size_t n = strlen(txt->valuestring);
            if (tb_utf8_check(txt->valuestring, n) != n)
                return bad(c, TB_EFORMAT, e, ri, "response_outputs", k, "not valid UTF-8");
            rc = tb_stream_append(&r->stream, tk, txt->valuestring, n, 1, TB_KIND_CONTENT);
            if (rc != 0)
                return bad(c, rc, e, ri, "response_outputs", k, "over a cap");
        } else if (!cJSON_IsNull(o)) {
            return bad(c, TB_EFORMAT, e, ri, "response_outputs", k,
                       "neither a \"response\" nor a \"text_output\" string");
        }
    }
    tb_import_sse_end(&c->sse, r);
    if (r->error[0] == '\0' && k == 0)
        snprintf(r->error, sizeof(r->error), "no response recorded");
    return 0;
}

/* The value of the member `key` of the object at d[at..len) (the first
 * of that name): 1 with its span, 0 when there is none or d[at] is no
 * object. */
static int member(const char *d, size_t len, size_t at, const char *key, size_t *vs, size_t *ve)
{
    struct tb_jsonscan_it it;
    size_t ks, ke;
    if (tb_jsonscan_open(&it, d, len, at) != 0 || it.close != '}')
        return 0;
    while (tb_jsonscan_next(&it, &ks, &ke, vs, ve) == 1)
        if (tb_jsonscan_key_is(d, ks, ke, key))
            return 1;
    return 0;
}

/* Experiment e at d[xs..xe): its label, then its requests, each parsed
 * alone (priced first). */
static int experiment(struct gctx *c, const char *d, size_t xs, size_t xe, int ei)
{
    struct tb_jsonscan_it it;
    size_t rs, re, vs, ve;
    char label[64] = "", e[96];
    int rc = 0, ri = 0;
    if (!member(d, xe, xs, "requests", &rs, &re) || d[rs] != '[')
        return bad(c, TB_EFORMAT, ei, -1, "requests", -1, "missing or not an array");
    if (member(d, xe, xs, "experiment", &vs, &ve)) {
        cJSON *ex = tb_import_parse(d + vs, ve - vs, e, sizeof(e));
        const cJSON *mode = cJSON_GetObjectItemCaseSensitive(ex, "mode");
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(ex, "value");
        if (cJSON_IsString(mode) && cJSON_IsNumber(val))
            snprintf(label, sizeof(label), " (%.24s %g)", mode->valuestring, val->valuedouble);
        cJSON_Delete(ex);
    }
    tb_jsonscan_open(&it, d, re, rs);
    while (rc == 0 && tb_jsonscan_next(&it, NULL, NULL, &vs, &ve) == 1) {
        cJSON *q = tb_import_parse(d + vs, ve - vs, e, sizeof(e));
        rc = q != NULL ? one_request(c, ei, ri, q, label) : bad(c, TB_EFORMAT, ei, ri, NULL, -1, e);
        cJSON_Delete(q);
        ri++;
    }
    return rc;
}

/* The export walked (base/jsonscan.h): each request parsed alone, so
 * memory is the file, the streams, and one request's tree. */
static int read_genai(const struct tb_import_in *in, const char *name, struct tb_import *out,
                      char *err, size_t errlen)
{
    struct gctx c = {.name = name, .out = out, .err = err, .errlen = errlen};
    struct tb_jsonscan_it it;
    const char *d = in->buf;
    size_t len = in->len, end = 0, xs, xe;
    int rc, ei = 0;
    if (tb_jsonscan_skip(d, len, &end) == 0)
        while (end < len && (d[end] == ' ' || d[end] == '\t' || d[end] == '\r' || d[end] == '\n'))
            end++;
    if (end != len)
        return tb_seterr(err, errlen, TB_EFORMAT, "%s: invalid JSON near byte %zu", name, end + 1);
    if (!member(d, len, 0, "experiments", &xs, &xe) || d[xs] != '[')
        return tb_seterr(err, errlen, TB_EFORMAT, "%s: experiments: missing or not an array", name);
    rc = tb_import_sse_open(&c.sse);
    tb_jsonscan_open(&it, d, xe, xs);
    while (rc == 0 && tb_jsonscan_next(&it, NULL, NULL, &xs, &xe) == 1)
        rc = experiment(&c, d, xs, xe, ei++);
    tb_import_sse_close(&c.sse);
    return rc;
}

const struct tb_import_reader tb_import_reader_genai = {0, read_genai};
