/*
 * trace.c - JSONL traces: load (validating every line); trace_write.c
 * writes them.
 *
 * Loading is one pass over the lines (of a buffer, or of a file read a
 * line at a time): validate UTF-8 over the raw bytes, hand the line to
 * cJSON, copy the few fields we need into the stream's arrays, delete the
 * cJSON tree.  No allocation per line beyond cJSON's own.  cJSON never
 * leaves this file.
 */
#include "ttsbuf/trace.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "base/numfmt.h"
#include "base/readall.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"
#include "trace_priv.h"
#include "trace_tool.h"
#include "trace_tts.h"

static int bad(struct trace_loader *L, int code, const char *what)
{
    return tb_seterr(L->err, L->errlen, code, "%s:%zu: %s", L->name, L->line, what);
}

/* A number of an options object as text an option takes ("" when it is
 * not a finite number: null, absent). */
static void num_text(char *dst, size_t cap, const cJSON *v)
{
    double d;
    dst[0] = '\0';
    if (tb_jsonfield_num(v, &d) == 0)
        snprintf(dst, cap, "%.17g", d);
}

/* A recording's constant TTS latency: options.tts_latency_s when over 0
 * (bench writes it so, as sim and run do without a TTS stage; null: not a
 * constant, or a live TTS). */
static int const_latency(const cJSON *opts)
{
    double d;
    return tb_jsonfield_num(cJSON_GetObjectItemCaseSensitive(opts, "tts_latency_s"), &d) == 0 &&
           d > 0;
}

/* The modelled TTS of a recording's options (sim's and run's options.tts
 * and options.tts_lead, their JSON's; without options.tts, a constant
 * options.tts_latency_s over 0): kept as text for sim to replay.  A seed
 * past 2^53 reads rounded (cJSON's doubles). */
static void load_model_tts(struct tb_stream_ttsmodel *m, const cJSON *opts)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(opts, "tts");
    tb_jsonfield_text(m->lead, sizeof(m->lead), cJSON_GetObjectItemCaseSensitive(opts, "tts_lead"));
    if (!cJSON_IsObject(t) && const_latency(opts)) {
        /* the shortest text that reads back: "0.15", as given */
        tb_numfmt_double(m->latency, sizeof(m->latency),
                         cJSON_GetObjectItemCaseSensitive(opts, "tts_latency_s")->valuedouble);
        m->has_tts = 1;
        return;
    }
    if (!cJSON_IsObject(t))
        return;
    tb_jsonfield_text(m->latency, sizeof(m->latency),
                      cJSON_GetObjectItemCaseSensitive(t, "latency"));
    m->has_tts = m->latency[0] != '\0';
    num_text(m->connect, sizeof(m->connect), cJSON_GetObjectItemCaseSensitive(t, "connect_s"));
    num_text(m->concurrency, sizeof(m->concurrency),
             cJSON_GetObjectItemCaseSensitive(t, "concurrency"));
    num_text(m->rtf, sizeof(m->rtf), cJSON_GetObjectItemCaseSensitive(t, "rtf"));
    tb_jsonfield_text(m->output, sizeof(m->output), cJSON_GetObjectItemCaseSensitive(t, "output"));
    tb_jsonfield_text(m->preset, sizeof(m->preset), cJSON_GetObjectItemCaseSensitive(t, "preset"));
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(t, "seed")))
        snprintf(m->seed, sizeof(m->seed), "%.0f",
                 cJSON_GetObjectItemCaseSensitive(t, "seed")->valuedouble);
}

static int load_header(struct trace_loader *L, const cJSON *root)
{
    if (L->lines_seen > 1)
        return bad(L, TB_EFORMAT, "the \"ttsbuf_trace\" header must be the first line");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "ttsbuf_trace");
    char msg[160];
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1.0 && v->valuedouble <= TB_TRACE_VERSION) ||
        v->valuedouble != floor(v->valuedouble)) {
        char num[32];
        if (cJSON_IsNumber(v))
            snprintf(msg, sizeof(msg),
                     "unsupported \"ttsbuf_trace\" version %s (this ttsbuf reads 1 to %d)",
                     tb_numfmt_double(num, sizeof(num), v->valuedouble), TB_TRACE_VERSION);
        else
            snprintf(msg, sizeof(msg),
                     "\"ttsbuf_trace\" is not a version number (this ttsbuf reads 1 to %d)",
                     TB_TRACE_VERSION);
        return bad(L, TB_EFORMAT, msg);
    }
    L->version = (int)v->valuedouble;
    /* Version 3's "tts" object: the TTS the run had (older versions'
     * unknown keys are ignored, as ever). */
    v = cJSON_GetObjectItemCaseSensitive(root, "tts");
    if (L->version >= 3 && v != NULL) {
        int rc;
        tb_tts_log_free(L->out->tts);
        free(L->out->tts);
        L->out->tts = malloc(sizeof(*L->out->tts));
        if (L->out->tts == NULL)
            return bad(L, TB_ENOMEM, "out of memory");
        tb_tts_log_init(L->out->tts);
        rc = tb_trace_tts_read_header(v, L->out->tts, msg, sizeof(msg));
        if (rc != 0)
            return bad(L, rc, msg);
    }
    /* Version 4's "tool_turn": a tool turn's answer's tool part. */
    if (L->version >= 4) {
        int rc = tb_trace_toolturn_read(cJSON_GetObjectItemCaseSensitive(root, "tool_turn"), L->out,
                                        msg, sizeof(msg));
        if (rc != 0)
            return bad(L, rc, msg);
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "request");
    if (v != NULL) {
        /* A file of several traces names each one's request (bench). */
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 9007199254740991.0) ||
            v->valuedouble != floor(v->valuedouble))
            return bad(L, TB_EFORMAT, "\"request\" is not a request's id (an integer >= 0)");
        L->out->request = (long long)v->valuedouble;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "eou_s");
    if (v != NULL) {
        /* the turn's modelled end of speech (turnlat.h) */
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 60))
            return bad(L, TB_EFORMAT, "\"eou_s\" is not a number of seconds in 0..60");
        L->out->eou_s = v->valuedouble;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "tool_s");
    if (v != NULL) {
        /* a tool turn's tool wait (bench), which the trace does not hold */
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 3600))
            return bad(L, TB_EFORMAT, "\"tool_s\" is not a number of seconds in 0..3600");
        L->out->tool_s = v->valuedouble;
    }
    tb_jsonfield_text(L->out->model, sizeof(L->out->model),
                      cJSON_GetObjectItemCaseSensitive(root, "model"));
    tb_jsonfield_text(L->out->base_url, sizeof(L->out->base_url),
                      cJSON_GetObjectItemCaseSensitive(root, "base_url"));
    tb_jsonfield_text(L->out->provider, sizeof(L->out->provider),
                      cJSON_GetObjectItemCaseSensitive(root, "provider"));
    tb_jsonfield_text(L->out->started_at, sizeof(L->out->started_at),
                      cJSON_GetObjectItemCaseSensitive(root, "started_at"));
    tb_jsonfield_text(L->out->command, sizeof(L->out->command),
                      cJSON_GetObjectItemCaseSensitive(root, "command"));
    v = cJSON_GetObjectItemCaseSensitive(root, "options");
    if (cJSON_IsObject(v)) {
        tb_jsonfield_text(L->out->chunk_policy, sizeof(L->out->chunk_policy),
                          cJSON_GetObjectItemCaseSensitive(v, "chunk"));
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(v, "tts")) ||
            cJSON_GetObjectItemCaseSensitive(v, "tts_lead") != NULL || const_latency(v)) {
            /* Allocated only then: every stream a bench run holds has a
             * tb_stream, few a recorded TTS model. */
            if (L->out->rec == NULL && (L->out->rec = calloc(1, sizeof(*L->out->rec))) == NULL)
                return bad(L, TB_ENOMEM, "out of memory");
            load_model_tts(L->out->rec, v);
        }
    }
    return 0;
}

static int load_usage(struct trace_loader *L, const cJSON *usage)
{
    const cJSON *ct;
    if (!cJSON_IsObject(usage))
        return bad(L, TB_EFORMAT, "\"usage\" is not an object");
    ct = cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens");
    if (ct == NULL)
        return 0;
    if (!cJSON_IsNumber(ct) || !(ct->valuedouble >= 0) || ct->valuedouble > 1e15 ||
        ct->valuedouble != floor(ct->valuedouble))
        return bad(L, TB_EFORMAT, "\"usage.completion_tokens\" is not a whole number >= 0");
    L->out->usage_tokens = (long long)ct->valuedouble;
    return 0;
}

/* The provider's own timings (Ollama's final line): whole numbers >= 0,
 * each optional. */
static int load_server(struct trace_loader *L, const cJSON *srv)
{
    static const char *const names[] = {"total_ns",       "load_ns",    "prompt_eval_count",
                                        "prompt_eval_ns", "eval_count", "eval_ns"};
    long long *dst[] = {&L->out->server.total_ns,          &L->out->server.load_ns,
                        &L->out->server.prompt_eval_count, &L->out->server.prompt_eval_ns,
                        &L->out->server.eval_count,        &L->out->server.eval_ns};
    char msg[96];
    if (!cJSON_IsObject(srv))
        return bad(L, TB_EFORMAT, "\"server\" is not an object");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(srv, names[i]);
        if (v == NULL)
            continue;
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 9e18 ||
            v->valuedouble != floor(v->valuedouble)) {
            snprintf(msg, sizeof(msg), "\"server.%s\" is not a whole number >= 0", names[i]);
            return bad(L, TB_EFORMAT, msg);
        }
        *dst[i] = (long long)v->valuedouble;
    }
    return 0;
}

/* The end line (version 2): {"end": {"kind": K, "t": T, "error": E,
 * "ignored_bytes": N, "finish_reason": F}}, every key but kind optional. */
static int load_end_error(struct trace_loader *L, const cJSON *e, struct tb_stream_end *end)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(e, "http_status");
    if (e == NULL || cJSON_IsNull(e))
        return 0;
    if (!cJSON_IsObject(e) || !cJSON_IsString(k) || k->valuestring[0] == '\0' ||
        (m != NULL && !cJSON_IsString(m)))
        return bad(L, TB_EFORMAT,
                   "\"end.error\" is not null or {\"kind\": \"...\", \"message\": \"...\"}");
    if (h != NULL && !cJSON_IsNull(h) &&
        (!cJSON_IsNumber(h) || !(h->valuedouble >= 0 && h->valuedouble <= 999) ||
         h->valuedouble != floor(h->valuedouble)))
        return bad(L, TB_EFORMAT, "\"end.error.http_status\" is not null or a status 0..999");
    /* One safe line each: they go into messages and reports. */
    tb_jsonfield_line(end->error, sizeof(end->error), k);
    tb_jsonfield_line(end->message, sizeof(end->message), m);
    if (h != NULL && cJSON_IsNumber(h))
        end->http_status = (long)h->valuedouble;
    return 0;
}

static int load_end(struct trace_loader *L, const cJSON *e)
{
    struct tb_stream_end *end = &L->out->end;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "t");
    const cJSON *ig = cJSON_GetObjectItemCaseSensitive(e, "ignored_bytes");
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(e, "finish_reason");
    int kind;
    if (L->version == 1)
        return bad(L, TB_EFORMAT,
                   "an \"end\" line needs a version-2 header (\"ttsbuf_trace\": 2), not 1");
    if (!cJSON_IsObject(e))
        return bad(L, TB_EFORMAT, "\"end\" is not an object");
    kind = cJSON_IsString(k) ? tb_end_parse(k->valuestring) : -1;
    if (kind < 0)
        return bad(L, TB_EFORMAT,
                   "\"end.kind\" is not one of unknown, complete, no_end_marker, interrupted, "
                   "connection_lost, error, timeout, cap");
    if (t != NULL && !cJSON_IsNull(t) &&
        (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0))
        return bad(L, TB_EFORMAT, "\"end.t\" is not null or a number >= 0");
    if (ig != NULL && (!cJSON_IsNumber(ig) || !(ig->valuedouble >= 0) || ig->valuedouble > 9e15 ||
                       ig->valuedouble != floor(ig->valuedouble)))
        return bad(L, TB_EFORMAT, "\"end.ignored_bytes\" is not a whole number >= 0");
    if (fr != NULL && !cJSON_IsString(fr))
        return bad(L, TB_EFORMAT, "\"end.finish_reason\" is not a string");
    tb_stream_end_init(end);
    end->kind = kind;
    if (t != NULL && cJSON_IsNumber(t))
        end->t = t->valuedouble;
    if (ig != NULL && cJSON_IsNumber(ig))
        end->ignored_bytes = (uint64_t)ig->valuedouble;
    tb_jsonfield_line(end->finish_reason, sizeof(end->finish_reason), fr);
    L->ended = 1;
    return load_end_error(L, cJSON_GetObjectItemCaseSensitive(e, "error"), end);
}

/* The keys of one line, found in a single walk over the object (a lookup
 * per key would compare every key again: measurable over a million lines). */
struct keys {
    const cJSON *hdr, *t, *text, *kind, *tokens, *usage, *server, *end, *tts, *tool;
};

static void find_keys(const cJSON *root, struct keys *k)
{
    memset(k, 0, sizeof(*k));
    for (const cJSON *c = root->child; c != NULL; c = c->next) {
        const char *n = c->string;
        if (n == NULL)
            continue;
        if (n[0] == 't' && n[1] == '\0')
            k->t = c;
        else if (strcmp(n, "text") == 0)
            k->text = c;
        else if (strcmp(n, "kind") == 0)
            k->kind = c;
        else if (strcmp(n, "tokens") == 0)
            k->tokens = c;
        else if (strcmp(n, "usage") == 0)
            k->usage = c;
        else if (strcmp(n, "server") == 0)
            k->server = c;
        else if (strcmp(n, "ttsbuf_trace") == 0)
            k->hdr = c;
        else if (strcmp(n, "end") == 0)
            k->end = c;
        else if (strcmp(n, "tts") == 0)
            k->tts = c;
        else if (strcmp(n, "tool") == 0)
            k->tool = c;
    }
}

static int load_event(struct trace_loader *L, const struct keys *ks)
{
    const cJSON *t = ks->t, *text = ks->text, *kind = ks->kind, *tok = ks->tokens;
    enum tb_kind k = TB_KIND_CONTENT;
    uint32_t tokens = 1;
    size_t len;
    int rc;
    char msg[160];

    if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble))
        return bad(L, TB_EFORMAT, "\"t\" is not a number");
    if (t->valuedouble < 0) {
        snprintf(msg, sizeof(msg), "\"t\" is negative (%g)", t->valuedouble);
        return bad(L, TB_EFORMAT, msg);
    }
    if (t->valuedouble > TB_TIME_MAX) {
        snprintf(msg, sizeof(msg), "\"t\" is past 1e9 s, the latest time ttsbuf takes (%g)",
                 t->valuedouble);
        return bad(L, TB_EFORMAT, msg);
    }
    if (L->tts_lines)
        return bad(L, TB_EFORMAT,
                   "an event after the \"tts\" or \"tool\" lines (they follow the events)");
    if (L->have_event && t->valuedouble < L->last_t) {
        snprintf(msg, sizeof(msg), "\"t\" goes backwards (%g < %g)", t->valuedouble, L->last_t);
        return bad(L, TB_EFORMAT, msg);
    }
    if (text == NULL)
        return bad(L, TB_EFORMAT, "missing \"text\"");
    if (!cJSON_IsString(text) || text->valuestring == NULL)
        return bad(L, TB_EFORMAT, "\"text\" is not a string");
    if (kind != NULL) {
        if (cJSON_IsString(kind) && strcmp(kind->valuestring, "content") == 0)
            k = TB_KIND_CONTENT;
        else if (cJSON_IsString(kind) && strcmp(kind->valuestring, "reasoning") == 0)
            k = TB_KIND_REASONING;
        else
            return bad(L, TB_EFORMAT, "\"kind\" must be \"content\" or \"reasoning\"");
    }
    if (tok != NULL) {
        double d = cJSON_IsNumber(tok) ? tok->valuedouble : -1;
        if (!(d >= 1 && d <= TB_EVENT_TOKENS_MAX && d == floor(d))) {
            snprintf(msg, sizeof(msg), "\"tokens\" must be a whole number in 1..%u",
                     TB_EVENT_TOKENS_MAX);
            return bad(L, TB_EFORMAT, msg);
        }
        tokens = (uint32_t)d;
    }
    L->have_event = 1;
    L->last_t = t->valuedouble;
    len = strlen(text->valuestring);
    /* cJSON decodes \u escapes; what it produced must be UTF-8 too. */
    if (tb_utf8_check(text->valuestring, len) != len)
        return bad(L, TB_EFORMAT, "\"text\" is not valid UTF-8 after unescaping");
    if (len > TB_EVENT_TEXT_MAX)
        return bad(L, TB_ETOOBIG, "\"text\" is over the 1 MiB event cap");
    rc = tb_stream_append(L->out, t->valuedouble, text->valuestring, len, tokens, k);
    if (rc == TB_ENOMEM)
        return bad(L, rc, "out of memory");
    if (rc != 0)
        return bad(L, rc, "too many events");
    return 0;
}

/* One chunk's {"tts": {...}} line (version 3, after the events). */
static int load_tts(struct trace_loader *L, const cJSON *v)
{
    char msg[200];
    int rc;
    if (L->version < 3)
        return bad(L, TB_EFORMAT, "a \"tts\" line needs a version-3 header (\"ttsbuf_trace\": 3)");
    if (L->out->tts == NULL)
        return bad(L, TB_EFORMAT, "a \"tts\" line needs the header's \"tts\" object");
    L->tts_lines = 1;
    rc = tb_trace_tts_read_line(v, L->out->tts, L->out->n, msg, sizeof(msg));
    if (rc == TB_ENOMEM)
        return bad(L, rc, "out of memory");
    return rc != 0 ? bad(L, rc, msg) : 0;
}

/* One {"t": T, "tool": {...}} line (version 4, after the events). */
static int load_tool(struct trace_loader *L, const struct keys *ks)
{
    char msg[200];
    int rc;
    if (L->version < 4)
        return bad(L, TB_EFORMAT, "a \"tool\" line needs a version-4 header (\"ttsbuf_trace\": 4)");
    L->tts_lines = 1; /* no event may follow */
    rc = tb_trace_tool_read(ks->t, ks->tool, L->out, msg, sizeof(msg));
    if (rc == TB_ENOMEM)
        return bad(L, rc, "out of memory");
    return rc != 0 ? bad(L, rc, msg) : 0;
}

int tb_trace_load_line(struct trace_loader *L, const char *p, size_t len)
{
    const char *end = NULL;
    cJSON *root;
    struct keys ks;
    int rc = 0;
    size_t badb, lead = 0;
    char msg[96];

    while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
        len--;
    while (len > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        len--;
        lead++; /* byte positions in messages count from the line's start */
    }
    if (len == 0)
        return 0; /* blank lines are allowed */
    L->lines_seen++;
    if (len > TB_TRACE_LINE_MAX) {
        snprintf(msg, sizeof(msg), "line of %zu bytes is over the %u-byte cap", len,
                 TB_TRACE_LINE_MAX);
        return bad(L, TB_ETOOBIG, msg);
    }
    badb = tb_utf8_check(p, len);
    if (badb != len) {
        snprintf(msg, sizeof(msg), "invalid UTF-8 at byte %zu of the line", lead + badb + 1);
        return bad(L, TB_EFORMAT, msg);
    }
    root = cJSON_ParseWithLengthOpts(p, len, &end, 0);
    if (root == NULL) {
        size_t at = end != NULL && end >= p ? (size_t)(end - p) : 0;
        snprintf(msg, sizeof(msg), "invalid JSON near byte %zu", lead + at + 1);
        return bad(L, TB_EFORMAT, msg);
    }
    if ((size_t)(end - p) != len) {
        size_t at = (size_t)(end - p);
        while (at < len && (p[at] == ' ' || p[at] == '\t' || p[at] == '\r'))
            at++; /* point at the garbage, not at the blank before it */
        snprintf(msg, sizeof(msg), "unexpected data after the JSON object at byte %zu",
                 lead + at + 1);
        rc = bad(L, TB_EFORMAT, msg);
    } else if (!cJSON_IsObject(root)) {
        rc = bad(L, TB_EFORMAT, "not a JSON object");
    } else {
        find_keys(root, &ks);
        if (L->ended && ks.hdr != NULL)
            rc = TB_TRACE_NEXT; /* the next trace of a file of several */
        else if (L->ended)
            rc = bad(L, TB_EFORMAT, "a line after the \"end\" line (it must be the last)");
        else if (ks.hdr != NULL)
            rc = load_header(L, root);
        else if (ks.end != NULL && ks.t == NULL)
            rc = load_end(L, ks.end);
        else if (ks.tts != NULL && ks.t == NULL)
            rc = load_tts(L, ks.tts);
        else if (ks.tool != NULL)
            rc = load_tool(L, &ks);
        else if (ks.t != NULL)
            rc = load_event(L, &ks);
        else if (ks.usage != NULL || ks.server != NULL) {
            rc = ks.usage != NULL ? load_usage(L, ks.usage) : 0;
            if (rc == 0 && ks.server != NULL)
                rc = load_server(L, ks.server);
        } else
            rc = bad(L, TB_EFORMAT, "missing \"t\"");
    }
    cJSON_Delete(root);
    return rc;
}

int tb_trace_several(const char *name, size_t line, char *err, size_t errlen)
{
    return tb_seterr(err, errlen, TB_EFORMAT,
                     "%s:%zu: a second trace begins here: the file holds several, a trace "
                     "per request (as bench --out writes them)",
                     name, line);
}

/* Events with empty text are not stored, so count what was appended.
 * A recording of a request that failed before any event says how. */
int tb_trace_load_done(const struct trace_loader *L, size_t n0)
{
    const struct tb_stream_end *e = &L->out->end;
    if (L->out->n != n0)
        return 0;
    if (L->ended && e->kind != TB_END_UNKNOWN)
        return tb_seterr(L->err, L->errlen, TB_EEMPTY,
                         "%s: the trace holds no event (the stream ended: %s%s%s)", L->name,
                         tb_end_name(e->kind), e->message[0] ? ", " : "", e->message);
    return tb_seterr(L->err, L->errlen, TB_EEMPTY, "%s: the trace holds no event", L->name);
}

int tb_trace_load_mem(const char *buf, size_t len, const char *name, struct tb_stream *out,
                      char *err, size_t errlen)
{
    struct trace_loader L = {name, 0, 0.0, 0, 0, 0, 0, 0, out, err, errlen};
    size_t pos = tb_utf8_bom_len(buf, len), n0 = out->n;
    int rc;

    /* Rough pre-size: real traces run 30-40 bytes a line. */
    rc = tb_stream_reserve(out, out->n + len / 40 + 1, out->text_len + len / 8 + 1);
    if (rc != 0)
        return tb_seterr(err, errlen, rc, "%s: out of memory", name);
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t ll = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;
        L.line++;
        rc = tb_trace_load_line(&L, buf + pos, ll);
        if (rc == TB_TRACE_NEXT)
            return tb_trace_several(name, L.line, err, errlen);
        if (rc != 0)
            return rc;
        pos += ll + 1;
    }
    return tb_trace_load_done(&L, n0);
}
