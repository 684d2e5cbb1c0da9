/*
 * import_aiperf.c - NVIDIA AIPerf per-request exports (see import.h).
 *
 * profile_export_raw.jsonl (--export-level raw), one RawRecordInfo a line;
 * fields relied on (aiperf/common/models/record_models.py):
 *   start_perf_ns              the request's start, perf_counter ns
 *   responses[k].perf_ns       when response k arrived, same clock
 *   responses[k].packets       an SSEMessage: [{name, value}], one SSE
 *                              message's fields ("data", "event", ...)
 *   responses[k].text          a TextResponse: raw bytes (SSE when streamed)
 *   payload.model              the model (optional)
 *   metadata.session_num       the request's number (optional, for names)
 *   error                      null or {code, type, message}
 * Every response's bytes go through one SSE parser per request, so a
 * message split over responses is read whole.
 *
 * profile_export.jsonl, one MetricRecordInfo a line; fields relied on:
 *   metrics.time_to_first_token   {value, unit}: the first chunk
 *   metrics.inter_chunk_latency   {value: [...], unit}: the gaps between
 *                                 consecutive chunks after it
 *   metrics.output_token_count    {value} (else output_sequence_length)
 *   metadata.session_num, error   as above
 * Units: "ns", "us", "ms", "s" or "sec".  No text is recorded: the chunks
 * get synthetic prose (import.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_json.h"
#include "import_priv.h"
#include "import_reader.h"
#include "import_sse.h"
#include "ttsbuf/error.h"

struct actx {
    const char *name;
    int raw;
    struct tb_import *out;
    struct tb_import_sse sse;
    char *err;
    size_t errlen;
};

static int bad(const struct actx *c, int code, size_t line, const char *path, long k,
               const char *what)
{
    if (k >= 0)
        return tb_seterr(c->err, c->errlen, code, "%s:%zu: %s[%ld]: %s", c->name, line, path, k,
                         what);
    return tb_seterr(c->err, c->errlen, code, "%s:%zu: %s: %s", c->name, line, path, what);
}

static struct tb_import_request *add(struct actx *c, const cJSON *root, size_t line, int *rc)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    const cJSON *sn = cJSON_GetObjectItemCaseSensitive(md, "session_num");
    const cJSON *er = cJSON_GetObjectItemCaseSensitive(root, "error");
    struct tb_import_request *r;
    if (cJSON_IsNumber(sn))
        r = tb_import_add(c->out, rc, "line %zu (session %.0f)", line, sn->valuedouble);
    else
        r = tb_import_add(c->out, rc, "line %zu", line);
    if (r != NULL && cJSON_IsObject(er)) {
        /* The tool's own text, and its code: 499 is a cancellation
         * (--request-cancellation-rate), not a server failure. */
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(er, "message");
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(er, "code");
        char msg[200];
        tb_jsonfield_text(msg, sizeof(msg), m);
        if (cJSON_IsNumber(code))
            snprintf(r->error, sizeof(r->error), "%s (%s %.0f)", msg[0] ? msg : "failed",
                     code->valuedouble == 499 ? "cancelled, code" : "code", code->valuedouble);
        else
            snprintf(r->error, sizeof(r->error), "%s", msg[0] ? msg : "failed");
    }
    return r;
}

/* A {value, unit} time in seconds; -1 for an unknown unit. */
static int unit_scale(const cJSON *m, double *scale)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(m, "unit");
    static const struct {
        const char *name;
        double s;
    } units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"sec", 1}};
    if (!cJSON_IsString(u))
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(u->valuestring, units[i].name) == 0) {
            *scale = units[i].s;
            return 0;
        }
    return -1;
}

static int raw_record(struct actx *c, const cJSON *root, size_t line)
{
    const cJSON *resp = cJSON_GetObjectItemCaseSensitive(root, "responses");
    const cJSON *payload = cJSON_GetObjectItemCaseSensitive(root, "payload");
    struct tb_import_request *r;
    double t0, pk, last = 0;
    long k = 0;
    int rc = 0;

    if (tb_jsonfield_num(cJSON_GetObjectItemCaseSensitive(root, "start_perf_ns"), &t0) != 0)
        return bad(c, TB_EFORMAT, line, "start_perf_ns", -1, "missing or not a number");
    if (!cJSON_IsArray(resp))
        return bad(c, TB_EFORMAT, line, "responses", -1, "missing or not an array");
    r = add(c, root, line, &rc);
    if (r == NULL)
        return tb_seterr(c->err, c->errlen, rc, "%s: too many requests or out of memory", c->name);
    tb_jsonfield_text(r->stream.model, sizeof(r->stream.model),
                      cJSON_GetObjectItemCaseSensitive(payload, "model"));
    tb_import_sse_begin(&c->sse, &r->stream);
    for (const cJSON *o = resp->child; o != NULL; o = o->next, k++) {
        const cJSON *packets = cJSON_GetObjectItemCaseSensitive(o, "packets");
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(o, "text");
        if (tb_jsonfield_num(cJSON_GetObjectItemCaseSensitive(o, "perf_ns"), &pk) != 0)
            return bad(c, TB_EFORMAT, line, "responses", k, "perf_ns missing or not a number");
        pk = (pk - t0) / 1e9;
        if (pk < 0)
            return bad(c, TB_EFORMAT, line, "responses", k, "perf_ns before start_perf_ns");
        if (!(pk <= TB_TIME_MAX))
            return bad(c, TB_EFORMAT, line, "responses", k, "perf_ns " TB_IMPORT_LATE);
        if (pk < last)
            return bad(c, TB_EFORMAT, line, "responses", k, "perf_ns goes backwards");
        last = pk;
        if (cJSON_IsArray(packets)) {
            /* One SSE message, rebuilt as its wire form: "name: value"
             * lines and the blank line that dispatches it. */
            long p = 0;
            for (const cJSON *f = packets->child; f != NULL && rc == 0; f = f->next, p++) {
                const cJSON *nm = cJSON_GetObjectItemCaseSensitive(f, "name");
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "value");
                const char *val = cJSON_IsString(v) ? v->valuestring : "";
                char sep[3] = ": ";
                if (!cJSON_IsString(nm) || strpbrk(nm->valuestring, "\r\n:") != NULL ||
                    strpbrk(val, "\r\n") != NULL)
                    return bad(c, TB_EFORMAT, line, "responses", k,
                               "a packet is not a one-line {name, value}");
                if (strcmp(nm->valuestring, "comment") == 0)
                    continue;
                rc = tb_import_sse_feed(&c->sse, nm->valuestring, strlen(nm->valuestring), pk);
                if (rc == 0)
                    rc = tb_import_sse_feed(&c->sse, sep, 2, pk);
                if (rc == 0)
                    rc = tb_import_sse_feed(&c->sse, val, strlen(val), pk);
                if (rc == 0)
                    rc = tb_import_sse_feed(&c->sse, "\n", 1, pk);
            }
            if (rc == 0)
                rc = tb_import_sse_feed(&c->sse, "\n", 1, pk);
        } else if (cJSON_IsString(text)) {
            rc = tb_import_sse_feed(&c->sse, text->valuestring, strlen(text->valuestring), pk);
        } else {
            return bad(c, TB_EFORMAT, line, "responses", k, "neither packets nor text");
        }
        if (rc != 0)
            return bad(c, rc, line, "responses", k, c->sse.err);
    }
    tb_import_sse_end(&c->sse, r);
    return 0;
}

/* The first of a metric's tags (they changed between versions) that the
 * record has, or NULL. */
static const cJSON *metric(const cJSON *m, const char *const *tags, const char **tag)
{
    for (; *tags != NULL; tags++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, *tags);
        if (v != NULL && !cJSON_IsNull(v)) {
            *tag = *tags;
            return v;
        }
    }
    return NULL;
}

/* A {value, unit} time in seconds: 0, or -1 with what is wrong. */
static int metric_time(const struct actx *c, size_t line, const cJSON *v, const char *tag,
                       double *out)
{
    char path[96];
    double scale;
    *out = 0;
    snprintf(path, sizeof(path), "metrics.%s", tag);
    if (unit_scale(v, &scale) != 0)
        return bad(c, TB_EFORMAT, line, path, -1, "unit missing or not ns, us, ms or s");
    if (tb_jsonfield_num(cJSON_GetObjectItemCaseSensitive(v, "value"), out) != 0 || *out < 0)
        return bad(c, TB_EFORMAT, line, path, -1, "value not a number >= 0");
    *out *= scale;
    if (!(*out <= TB_TIME_MAX))
        return bad(c, TB_EFORMAT, line, path, -1, TB_IMPORT_LATE);
    return 0;
}

/* A {value} token count: 0 with *out (-1 when absent), or an error. */
static int metric_count(const struct actx *c, size_t line, const cJSON *v, const char *tag,
                        long long *out)
{
    char path[96];
    double tok;
    *out = -1;
    if (v == NULL)
        return 0;
    snprintf(path, sizeof(path), "metrics.%s.value", tag);
    if (tb_jsonfield_num(cJSON_GetObjectItemCaseSensitive(v, "value"), &tok) != 0 || tok < 0 ||
        tok > 1e12)
        return bad(c, TB_EFORMAT, line, path, -1, "not a token count");
    *out = (long long)tok;
    return 0;
}

/*
 * The chunk times of a record.  With inter_chunk_latency: the first at
 * TTFT, each next one gap later.  Without it (releases before 2025-09-24
 * record only TTFT, TTST and the request latency): one chunk a token, the
 * first at TTFT, the second at TTST, the rest evenly up to the request
 * latency, so the decode rate is the file's own (its inter_token_latency);
 * stalls after the second token are not in such a file.
 */
static int chunk_times(const struct actx *c, size_t line, const cJSON *m, double t0,
                       long long tokens, double **tp, size_t *np)
{
    static const char *const ttst_tags[] = {"time_to_second_token", "ttst", NULL};
    static const char *const icl_tags[] = {"inter_chunk_latency", NULL};
    static const char *const lat_tags[] = {"request_latency", NULL};
    const char *tag = NULL;
    const cJSON *icl = metric(m, icl_tags, &tag), *v;
    double scale, d, t1 = -1, end = -1;
    size_t n = 1;
    long k = 0;
    double *t;

    if (icl != NULL) {
        v = cJSON_GetObjectItemCaseSensitive(icl, "value");
        if (!cJSON_IsArray(v))
            return bad(c, TB_EFORMAT, line, "metrics.inter_chunk_latency.value", -1,
                       "not an array");
        if (unit_scale(icl, &scale) != 0)
            return bad(c, TB_EFORMAT, line, "metrics.inter_chunk_latency.unit", -1,
                       "missing or not ns, us, ms or s");
        n += (size_t)cJSON_GetArraySize(v);
    } else {
        const cJSON *ttst = metric(m, ttst_tags, &tag);
        if (ttst != NULL && metric_time(c, line, ttst, tag, &t1) != 0)
            return TB_EFORMAT;
        v = metric(m, lat_tags, &tag);
        if (v != NULL && metric_time(c, line, v, tag, &end) != 0)
            return TB_EFORMAT;
        if (t1 >= t0) {
            n = tokens > 2 && end >= t1 ? (size_t)(tokens > 1000000 ? 1000000 : tokens) : 2;
        }
    }
    t = calloc(n, sizeof(*t)); /* zeroed: every slot is set below, which the analyzer cannot see */
    if (t == NULL)
        return tb_seterr(c->err, c->errlen, TB_ENOMEM, "%s: out of memory", c->name);
    t[0] = t0;
    if (icl != NULL) {
        for (const cJSON *x = v->child; x != NULL; x = x->next, k++) {
            if (tb_jsonfield_num(x, &d) != 0 || d < 0) {
                free(t);
                return bad(c, TB_EFORMAT, line, "metrics.inter_chunk_latency.value", k,
                           "not a number >= 0");
            }
            t[k + 1] = t[k] + d * scale;
            if (!(t[k + 1] <= TB_TIME_MAX)) {
                free(t);
                return bad(c, TB_EFORMAT, line, "metrics.inter_chunk_latency.value", k,
                           "the gaps add up " TB_IMPORT_LATE);
            }
        }
    } else if (n >= 2) {
        t[1] = t1;
        for (size_t i = 2; i < n; i++) {
            /* t1 + (end - t1) can round past end (and past TB_TIME_MAX). */
            t[i] = t1 + (end - t1) * (double)(i - 1) / (double)(n - 2);
            if (t[i] > end)
                t[i] = end;
        }
    }
    *tp = t;
    *np = n;
    return 0;
}

static int metric_record(struct actx *c, const cJSON *root, size_t line)
{
    static const char *const ttft_tags[] = {"time_to_first_token", "ttft", NULL};
    static const char *const ttfo_tags[] = {"time_to_first_output_token", "time_to_first_output",
                                            NULL};
    static const char *const out_tags[] = {"output_token_count", NULL};
    static const char *const osl_tags[] = {"output_sequence_length", NULL};
    static const char *const rsn_tags[] = {"reasoning_token_count", NULL};
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "metrics");
    const cJSON *ttft, *ttfo;
    const char *tag = NULL;
    struct tb_import_request *r;
    double t0 = 0, to = -1;
    double *t = NULL;
    long long tokens = -1, rtokens = -1;
    size_t n = 0, nr = 0;
    int rc = 0;

    if (!cJSON_IsObject(m))
        return bad(c, TB_EFORMAT, line, "metrics", -1,
                   "missing or not an object: not an AIPerf record export line");
    r = add(c, root, line, &rc);
    if (r == NULL)
        return tb_seterr(c->err, c->errlen, rc, "%s: too many requests or out of memory", c->name);
    ttft = metric(m, ttft_tags, &tag);
    if (ttft == NULL) {
        if (r->error[0] == '\0')
            snprintf(r->error, sizeof(r->error),
                     "no time_to_first_token (or ttft) recorded: was the run streamed?");
        return 0;
    }
    if (metric_time(c, line, ttft, tag, &t0) != 0)
        return TB_EFORMAT;
    if (metric_count(c, line, metric(m, out_tags, &tag), tag, &tokens) != 0 ||
        metric_count(c, line, metric(m, rsn_tags, &tag), tag, &rtokens) != 0)
        return TB_EFORMAT;
    if (tokens < 0) {
        /* Older records: the sequence length counts reasoning too. */
        if (metric_count(c, line, metric(m, osl_tags, &tag), tag, &tokens) != 0)
            return TB_EFORMAT;
        if (tokens >= 0 && rtokens > 0)
            tokens = tokens > rtokens ? tokens - rtokens : 0;
    }
    ttfo = metric(m, ttfo_tags, &tag);
    if (ttfo != NULL && metric_time(c, line, ttfo, tag, &to) != 0)
        return TB_EFORMAT;
    rc =
        chunk_times(c, line, m, t0, tokens < 0 ? -1 : tokens + (rtokens > 0 ? rtokens : 0), &t, &n);
    if (rc != 0)
        return rc;
    /* Chunks before the first output token are reasoning (a little slack
     * for the unit conversions the tool did). */
    if (to > t0)
        while (nr < n && t[nr] < to - 1e-9)
            nr++;
    c->out->estimated++;
    rc = tb_import_spread(c->out, &r->stream, t, nr, NULL, 0, nr > 0 ? rtokens : -1,
                          TB_KIND_REASONING);
    if (rc == 0)
        rc = tb_import_spread(c->out, &r->stream, t + nr, n - nr, NULL, 0, tokens, TB_KIND_CONTENT);
    r->stream.usage_tokens = tokens;
    free(t);
    if (rc != 0)
        return bad(c, rc, line, "metrics", -1,
                   rc == TB_ENOMEM ? "out of memory" : TB_IMPORT_OVER_CAP);
    return 0;
}

static int one_line(void *ud, const char *buf, size_t n, size_t line)
{
    struct actx *c = ud;
    char e[96];
    cJSON *root = tb_import_parse(buf, n, e, sizeof(e));
    int rc;
    if (root == NULL)
        return tb_seterr(c->err, c->errlen, TB_EFORMAT, "%s:%zu: %s", c->name, line, e);
    if (!cJSON_IsObject(root))
        rc = tb_seterr(c->err, c->errlen, TB_EFORMAT, "%s:%zu: not a JSON object", c->name, line);
    else
        rc = c->raw ? raw_record(c, root, line) : metric_record(c, root, line);
    cJSON_Delete(root);
    return rc;
}

/* AIPerf's records, one a line: raw (with the SSE bytes) or metrics. */
static int read_records(const struct tb_import_in *in, const char *name, int raw,
                        struct tb_import *out, char *err, size_t errlen)
{
    struct actx c = {.name = name, .raw = raw, .out = out, .err = err, .errlen = errlen};
    int rc = tb_import_sse_open(&c.sse);
    if (rc != 0)
        return tb_seterr(err, errlen, rc, "out of memory");
    rc = tb_import_lines(in, name, err, errlen, one_line, &c);
    tb_import_sse_close(&c.sse);
    return rc;
}

static int read_aiperf_raw(const struct tb_import_in *in, const char *name, struct tb_import *out,
                           char *err, size_t errlen)
{
    return read_records(in, name, 1, out, err, errlen);
}

static int read_aiperf(const struct tb_import_in *in, const char *name, struct tb_import *out,
                       char *err, size_t errlen)
{
    return read_records(in, name, 0, out, err, errlen);
}

const struct tb_import_reader tb_import_reader_aiperf_raw = {1, read_aiperf_raw};
const struct tb_import_reader tb_import_reader_aiperf = {1, read_aiperf};
