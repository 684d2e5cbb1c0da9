/*
 * trace_tts.c - the TTS parts of a trace (see trace_tts.h): the header's
 * "tts" object and one {"tts": {...}} line a chunk.
 *
 * Every rule of ttsbuf-trace(5) is checked on the way in, so a loaded log
 * holds what the recorder could have written and writing it again gives
 * the same bytes: times are printed with tb_numfmt_double (they read back
 * bit for bit), whole numbers as integers, and the duration is the
 * recorder's bytes / 2 / rate, compared exactly.
 */
#include "trace_tts.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "ttsbuf/error.h"
#include "ttsbuf/jsonline.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/utf8.h"

#define RATE_MIN 8000
#define RATE_MAX 48000
#define CONC_MAX 1024
#define BYTES_MAX 9007199254740992.0 /* 2^53: every whole number a double holds */

static const char *const apis[] = {"openai",   "elevenlabs",    "deepgram",
                                   "cartesia", "elevenlabs-ws", "cartesia-ws"};

int tb_trace_tts_api_known(const char *name)
{
    for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
        if (strcmp(name, apis[i]) == 0)
            return 1;
    return 0;
}

static int fail(char *msg, size_t msglen, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int fail(char *msg, size_t msglen, int code, const char *fmt, ...)
{
    va_list ap;
    if (msg != NULL && msglen > 0) {
        va_start(ap, fmt);
        vsnprintf(msg, msglen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A string member kept as it is, or null ("" then), that fits cap bytes. */
static int opt_string(const cJSON *o, const char *key, char *dst, size_t cap, int nullable,
                      char *msg, size_t msglen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    size_t n;
    dst[0] = '\0';
    if ((v == NULL || cJSON_IsNull(v)) && nullable)
        return 0;
    if (v == NULL || !cJSON_IsString(v))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.%s\" is not a string%s", key,
                    nullable ? " or null" : "");
    n = strlen(v->valuestring);
    if (n >= cap)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.%s\" is over %zu bytes", key, cap - 1);
    if (tb_utf8_check(v->valuestring, n) != n)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.%s\" is not valid UTF-8", key);
    memcpy(dst, v->valuestring, n + 1);
    return 0;
}

int tb_trace_tts_read_header(const cJSON *v, struct tb_tts_log *l, char *msg, size_t msglen)
{
    const cJSON *c, *m;
    int rc;
    if (!cJSON_IsObject(v))
        return fail(msg, msglen, TB_EFORMAT, "the header's \"tts\" is not an object");
    rc = opt_string(v, "api", l->api, sizeof(l->api), 0, msg, msglen);
    if (rc == 0 && !tb_trace_tts_api_known(l->api))
        return fail(msg, msglen, TB_EFORMAT,
                    "\"tts.api\" is not one of openai, elevenlabs, deepgram, cartesia");
    if (rc == 0)
        rc = opt_string(v, "url", l->url, sizeof(l->url), 0, msg, msglen);
    if (rc == 0)
        rc = opt_string(v, "model", l->model, sizeof(l->model), 1, msg, msglen);
    if (rc == 0)
        rc = opt_string(v, "voice", l->voice, sizeof(l->voice), 1, msg, msglen);
    if (rc != 0)
        return rc;
    c = cJSON_GetObjectItemCaseSensitive(v, "concurrency");
    if (!cJSON_IsNumber(c) || !(c->valuedouble >= 1 && c->valuedouble <= CONC_MAX) ||
        c->valuedouble != floor(c->valuedouble))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.concurrency\" is not a whole number in 1..%d",
                    CONC_MAX);
    l->concurrency = (int)c->valuedouble;
    m = cJSON_GetObjectItemCaseSensitive(v, "mock");
    if (!cJSON_IsBool(m))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.mock\" is not true or false");
    l->mock = cJSON_IsTrue(m);
    c = cJSON_GetObjectItemCaseSensitive(v, "capacity");
    if (c != NULL && (!cJSON_IsNumber(c) || !(c->valuedouble >= 1 && c->valuedouble <= 100000) ||
                      c->valuedouble != floor(c->valuedouble)))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.capacity\" is not a whole number in 1..100000");
    l->capacity = c != NULL ? (int)c->valuedouble : 0;
    return 0;
}

/* A time: null (NAN) or a number in 0..TB_TIME_MAX. */
static int read_time(const cJSON *o, const char *key, double *out, char *msg, size_t msglen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NAN;
    if (v == NULL || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= TB_TIME_MAX))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.%s\" is not null or a number in 0..1e9", key);
    *out = v->valuedouble;
    return 0;
}

/* A whole number in lo..hi. */
static int read_whole(const cJSON *o, const char *key, double lo, double hi, double *out, char *msg,
                      size_t msglen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
        v->valuedouble != floor(v->valuedouble))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.%s\" is not a whole number in %.0f..%.0f", key,
                    lo, hi);
    *out = v->valuedouble;
    return 0;
}

/* The times in order: sent <= first_byte <= end where present. */
static int check_order(const struct tb_tts_chunk *c, char *msg, size_t msglen)
{
    char a[32], b[32];
    if (!isnan(c->first_byte) && !isnan(c->sent) && c->first_byte < c->sent)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.first_byte\" (%s) is before \"tts.sent\" (%s)",
                    tb_numfmt_double(a, sizeof(a), c->first_byte),
                    tb_numfmt_double(b, sizeof(b), c->sent));
    if (!isnan(c->first_byte) && isnan(c->sent))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.first_byte\" without \"tts.sent\"");
    if (!isnan(c->end) && !isnan(c->first_byte) && c->end < c->first_byte)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.end\" (%s) is before \"tts.first_byte\" (%s)",
                    tb_numfmt_double(a, sizeof(a), c->end),
                    tb_numfmt_double(b, sizeof(b), c->first_byte));
    if (!isnan(c->end) && !isnan(c->sent) && c->end < c->sent)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.end\" (%s) is before \"tts.sent\" (%s)",
                    tb_numfmt_double(a, sizeof(a), c->end),
                    tb_numfmt_double(b, sizeof(b), c->sent));
    if (!isnan(c->end) && isnan(c->sent))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.end\" without \"tts.sent\"");
    return 0;
}

/*
 * The arrival points: [t, bytes] pairs, t and bytes non-decreasing, thinned
 * as the recorder thins them (a point is at least TB_TTS_ARRIVAL_S after
 * the one before its predecessor), within first_byte..end, the last at
 * the chunk's bytes.  There is one when any byte came, none otherwise.
 */
static int read_arrivals(const cJSON *o, struct tb_tts_chunk *c, char *msg, size_t msglen)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "arrivals"), *p;
    int n, k = 0;
    char x[32], y[32];
    if (!cJSON_IsArray(a))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.arrivals\" is not an array");
    n = cJSON_GetArraySize(a);
    if ((n > 0) != (c->bytes > 0))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.arrivals\" is %s while \"tts.bytes\" is %s",
                    n > 0 ? "not empty" : "empty", c->bytes > 0 ? "not 0" : "0");
    if (n > 0 && isnan(c->first_byte))
        return fail(msg, msglen, TB_EFORMAT,
                    "audio came (\"tts.bytes\") but \"tts.first_byte\" "
                    "is null");
    if (n == 0 && !isnan(c->first_byte))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.first_byte\" is set but no audio came");
    if (n == 0)
        return 0;
    c->arr = calloc((size_t)n, sizeof(*c->arr));
    if (c->arr == NULL)
        return TB_ENOMEM;
    for (p = a->child; p != NULL; p = p->next, k++) {
        const cJSON *t = cJSON_GetArrayItem(p, 0), *b = cJSON_GetArrayItem(p, 1);
        struct tb_tts_arrival *r = &c->arr[k];
        if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2 || !cJSON_IsNumber(t) ||
            !cJSON_IsNumber(b) || !(t->valuedouble >= 0 && t->valuedouble <= TB_TIME_MAX) ||
            !(b->valuedouble >= 1 && b->valuedouble <= BYTES_MAX) ||
            b->valuedouble != floor(b->valuedouble))
            return fail(msg, msglen, TB_EFORMAT,
                        "\"tts.arrivals[%d]\" is not [t, bytes] (t in 0..1e9, bytes a whole "
                        "number >= 1)",
                        k);
        r->t = t->valuedouble;
        r->bytes = (uint64_t)b->valuedouble;
        c->narr = (uint32_t)k + 1;
        if (k > 0 && r->t < c->arr[k - 1].t)
            return fail(msg, msglen, TB_EFORMAT, "\"tts.arrivals[%d]\" goes back in time (%s < %s)",
                        k, tb_numfmt_double(x, sizeof(x), r->t),
                        tb_numfmt_double(y, sizeof(y), c->arr[k - 1].t));
        if (k > 0 && r->bytes < c->arr[k - 1].bytes)
            return fail(msg, msglen, TB_EFORMAT,
                        "\"tts.arrivals[%d]\" has fewer bytes than the point before", k);
        if (k >= 2 && r->t - c->arr[k - 2].t < TB_TTS_ARRIVAL_S)
            return fail(msg, msglen, TB_EFORMAT,
                        "\"tts.arrivals[%d]\" is within %g s of [%d] (the recorder keeps one "
                        "point per %g s)",
                        k, TB_TTS_ARRIVAL_S, k - 2, TB_TTS_ARRIVAL_S);
        if (r->t < c->first_byte || (!isnan(c->end) && r->t > c->end))
            return fail(msg, msglen, TB_EFORMAT,
                        "\"tts.arrivals[%d]\" (%s) is outside \"tts.first_byte\"..\"tts.end\"", k,
                        tb_numfmt_double(x, sizeof(x), r->t));
    }
    if (c->arr[0].t != c->first_byte)
        return fail(msg, msglen, TB_EFORMAT,
                    "\"tts.arrivals[0]\" is not at \"tts.first_byte\" (the first audio byte)");
    if (c->arr[n - 1].bytes != c->bytes)
        return fail(msg, msglen, TB_EFORMAT,
                    "the last of \"tts.arrivals\" has %" PRIu64
                    " bytes, not \"tts.bytes\" (%" PRIu64 ")",
                    c->arr[n - 1].bytes, c->bytes);
    return 0;
}

/* How the chunk ended: fail, status, message. */
static int read_failure(const cJSON *o, struct tb_tts_chunk *c, char *msg, size_t msglen)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "fail");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "status");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
    size_t n;
    c->fail = cJSON_IsString(f) ? tb_tts_fail_parse(f->valuestring) : -1;
    if (c->fail < 0)
        return fail(msg, msglen, TB_EFORMAT,
                    "\"tts.fail\" is not one of none, http, cut, timeout, transport, format, "
                    "canceled");
    if (s != NULL && !cJSON_IsNull(s)) {
        if (!cJSON_IsNumber(s) || !(s->valuedouble >= 100 && s->valuedouble <= 599) ||
            s->valuedouble != floor(s->valuedouble))
            return fail(msg, msglen, TB_EFORMAT, "\"tts.status\" is not null or a status 100..599");
        c->status = (long)s->valuedouble;
    }
    c->message[0] = '\0';
    if (m == NULL || cJSON_IsNull(m))
        return 0;
    if (!cJSON_IsString(m))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.message\" is not a string or null");
    n = strlen(m->valuestring);
    if (n == 0 || n >= sizeof(c->message))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.message\" is not 1..%zu bytes (null: none)",
                    sizeof(c->message) - 1);
    if (tb_utf8_check(m->valuestring, n) != n)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.message\" is not valid UTF-8");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)m->valuestring[i];
        if (ch < 0x20 || ch == 0x7f)
            return fail(msg, msglen, TB_EFORMAT,
                        "\"tts.message\" is not one line (a control character at byte %zu)", i + 1);
    }
    memcpy(c->message, m->valuestring, n + 1);
    return 0;
}

/* The fields that say what audio came: bytes, rate, duration. */
static int read_audio(const cJSON *o, struct tb_tts_chunk *c, char *msg, size_t msglen)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "duration");
    double x = 0.0, want;
    char a[32], b[32];
    int rc = read_whole(o, "bytes", 0, BYTES_MAX, &x, msg, msglen);
    if (rc != 0)
        return rc;
    c->bytes = (uint64_t)x;
    if (c->bytes % 2 != 0)
        return fail(msg, msglen, TB_EFORMAT,
                    "\"tts.bytes\" is odd (16-bit PCM comes in whole frames of 2 bytes)");
    rc = read_whole(o, "rate", RATE_MIN, RATE_MAX, &x, msg, msglen);
    if (rc != 0)
        return rc;
    c->rate = (unsigned)x;
    want = (double)(c->bytes / 2) / (double)c->rate;
    if (!cJSON_IsNumber(d) || d->valuedouble != want)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.duration\" (%s) is not bytes / 2 / rate (%s)",
                    cJSON_IsNumber(d) ? tb_numfmt_double(a, sizeof(a), d->valuedouble) : "?",
                    tb_numfmt_double(b, sizeof(b), want));
    c->duration = want;
    return 0;
}

/* "lead" (absent or null: not measured): the leading silence, 0..duration. */
static int read_lead(const cJSON *o, struct tb_tts_chunk *c, char *msg, size_t msglen)
{
    char a[32], b[32];
    int rc = read_time(o, "lead", &c->lead, msg, msglen);
    if (rc == 0 && !isnan(c->lead) && c->lead > c->duration)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.lead\" (%s) is longer than the audio (%s s)",
                    tb_numfmt_double(a, sizeof(a), c->lead),
                    tb_numfmt_double(b, sizeof(b), c->duration));
    c->lead_done = !isnan(c->lead);
    return rc;
}

int tb_trace_tts_read_line(const cJSON *v, struct tb_tts_log *l, size_t events, char *msg,
                           size_t msglen)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(v, "text");
    struct tb_tts_chunk *c;
    double j = 0.0, chars = 0.0;
    size_t len, cps;
    int rc;

    if (!cJSON_IsObject(v))
        return fail(msg, msglen, TB_EFORMAT, "\"tts\" is not an object");
    if (l->n >= events)
        return fail(msg, msglen, TB_ETOOBIG,
                    "more \"tts\" lines than events (%zu): a chunk holds at least one", events);
    rc = read_whole(v, "chunk", 1, 4294967295.0, &j, msg, msglen);
    if (rc != 0)
        return rc;
    if (j != (double)(l->n + 1))
        return fail(msg, msglen, TB_EFORMAT,
                    "\"tts.chunk\" is %.0f, expected %zu (chunks are "
                    "numbered 1, 2, ... in order)",
                    j, l->n + 1);
    if (!cJSON_IsString(text))
        return fail(msg, msglen, TB_EFORMAT, "\"tts.text\" is not a string");
    len = strlen(text->valuestring);
    if (tb_utf8_check(text->valuestring, len) != len)
        return fail(msg, msglen, TB_EFORMAT, "\"tts.text\" is not valid UTF-8 after unescaping");
    if (len > TB_EVENT_TEXT_MAX)
        return fail(msg, msglen, TB_ETOOBIG, "\"tts.text\" is over the 1 MiB cap");
    rc = read_whole(v, "chars", 0, 4294967295.0, &chars, msg, msglen);
    if (rc != 0)
        return rc;
    cps = tb_utf8_count(text->valuestring, len);
    if (chars != (double)cps)
        return fail(msg, msglen, TB_EFORMAT,
                    "\"tts.chars\" is %.0f, not the text's %zu code points", chars, cps);
    rc = tb_tts_log_add(l, text->valuestring, len, (uint32_t)cps, RATE_MIN, &c);
    if (rc != 0)
        return rc == TB_ENOMEM ? rc : fail(msg, msglen, rc, "too many \"tts\" lines");
    rc = read_time(v, "sent", &c->sent, msg, msglen);
    if (rc == 0)
        rc = read_time(v, "first_byte", &c->first_byte, msg, msglen);
    if (rc == 0)
        rc = read_time(v, "end", &c->end, msg, msglen);
    if (rc == 0)
        rc = check_order(c, msg, msglen);
    if (rc == 0)
        rc = read_audio(v, c, msg, msglen);
    if (rc == 0)
        rc = read_lead(v, c, msg, msglen);
    if (rc == 0)
        rc = read_time(v, "capacity_ready", &c->cap_ready, msg, msglen);
    if (rc == 0)
        rc = read_time(v, "capacity_wait", &c->cap_wait, msg, msglen);
    if (rc == 0)
        rc = read_arrivals(v, c, msg, msglen);
    if (rc == 0)
        rc = read_failure(v, c, msg, msglen);
    return rc;
}

int tb_trace_tts_add_header(cJSON *o, const struct tb_tts_log *l)
{
    cJSON *t = cJSON_AddObjectToObject(o, "tts");
    if (t == NULL)
        return TB_ENOMEM;
    cJSON_AddStringToObject(t, "api", l->api);
    cJSON_AddStringToObject(t, "url", l->url);
    if (l->model[0])
        cJSON_AddStringToObject(t, "model", l->model);
    else
        cJSON_AddNullToObject(t, "model");
    if (l->voice[0])
        cJSON_AddStringToObject(t, "voice", l->voice);
    else
        cJSON_AddNullToObject(t, "voice");
    cJSON_AddNumberToObject(t, "concurrency", l->concurrency);
    if (l->capacity > 0) /* only with a shared capacity: older traces as before */
        cJSON_AddNumberToObject(t, "capacity", l->capacity);
    cJSON_AddBoolToObject(t, "mock", l->mock != 0);
    return 0;
}

static void add_u64(cJSON *o, const char *key, uint64_t v)
{
    char num[32];
    snprintf(num, sizeof(num), "%" PRIu64, v);
    cJSON_AddRawToObject(o, key, num);
}

static int write_one(FILE *f, const struct tb_tts_log *l, size_t i)
{
    const struct tb_tts_chunk *c = &l->c[i];
    cJSON *o = cJSON_CreateObject(), *t, *arr;
    char *text = malloc((size_t)c->len + 1), num[32];
    if (o == NULL || text == NULL || (t = cJSON_AddObjectToObject(o, "tts")) == NULL) {
        free(text);
        cJSON_Delete(o);
        return TB_ENOMEM;
    }
    memcpy(text, tb_tts_log_text(l, i), c->len);
    text[c->len] = '\0';
    add_u64(t, "chunk", c->chunk);
    cJSON_AddStringToObject(t, "text", text);
    free(text);
    add_u64(t, "chars", c->chars);
    tb_json_add_num(t, "sent", c->sent); /* a time as it reads back bit for bit, or null */
    tb_json_add_num(t, "first_byte", c->first_byte);
    tb_json_add_num(t, "end", c->end);
    add_u64(t, "bytes", c->bytes);
    add_u64(t, "rate", c->rate);
    cJSON_AddRawToObject(t, "duration", tb_numfmt_double(num, sizeof(num), c->duration));
    tb_json_add_num(t, "lead", c->lead);
    if (l->capacity > 0) {
        tb_json_add_num(t, "capacity_ready", c->cap_ready);
        tb_json_add_num(t, "capacity_wait", c->cap_wait);
    }
    arr = cJSON_AddArrayToObject(t, "arrivals");
    for (uint32_t k = 0; arr != NULL && k < c->narr; k++) {
        char b[32];
        cJSON *p = cJSON_CreateArray();
        snprintf(b, sizeof(b), "%" PRIu64, c->arr[k].bytes);
        if (p == NULL || !cJSON_AddItemToArray(arr, p)) {
            cJSON_Delete(p);
            cJSON_Delete(o);
            return TB_ENOMEM;
        }
        cJSON_AddItemToArray(p, cJSON_CreateRaw(tb_numfmt_double(num, sizeof(num), c->arr[k].t)));
        cJSON_AddItemToArray(p, cJSON_CreateRaw(b));
    }
    cJSON_AddStringToObject(t, "fail", tb_tts_fail_name(c->fail));
    if (c->status > 0)
        cJSON_AddNumberToObject(t, "status", (double)c->status);
    else
        cJSON_AddNullToObject(t, "status");
    if (c->message[0])
        cJSON_AddStringToObject(t, "message", c->message);
    else
        cJSON_AddNullToObject(t, "message");
    return tb_json_put_line(f, o);
}

int tb_trace_tts_write(FILE *f, const struct tb_tts_log *l)
{
    int rc = 0;
    for (size_t i = 0; i < l->n && rc == 0; i++)
        rc = write_one(f, l, i);
    return rc;
}
