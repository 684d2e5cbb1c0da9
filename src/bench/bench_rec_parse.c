/*
 * bench_rec_parse.c - one record of a records file read back (see
 * bench_rec_parse.h): its fields as steps over tables of rows, each
 * checked (its kind, its range, null where the writer writes null).
 */
#include "bench_rec_parse.h"

#include <cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "ttsbuf/bench_slo.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/trace.h"

/* A number field: finite, or null (NaN) when null_ok. */
int tb_bench_json_num(const cJSON *o, const char *k, int null_ok, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (null_ok && (v == NULL || cJSON_IsNull(v))) {
        *out = NAN;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -1;
    *out = v->valuedouble;
    return 0;
}

/* Largest whole number a double holds exactly: counts above it cannot
 * have been written by ttsbuf. */
#define WHOLE_MAX 9007199254740992.0

/* A whole-number field in 0..max, checked as a double before any
 * conversion: casting an out-of-range double to an integer type is
 * undefined, and a wrapped value would index past arrays sized by another
 * field.  null_ok: null or absent gives NaN. */
int tb_bench_json_count(const cJSON *o, const char *k, int null_ok, double max, double *out)
{
    if (tb_bench_json_num(o, k, null_ok, out) != 0)
        return -1;
    if (isnan(*out))
        return 0;
    return *out >= 0 && *out <= max && *out == floor(*out) ? 0 : -1;
}

/* A record's message (warning 0) or warning (1) from key k of o, cut as
 * the record keeps it.  0 or TB_ENOMEM. */
static int copy_text(const cJSON *o, const char *k, struct tb_bench_rec *r, int warning)
{
    char buf[TB_BENCH_MESSAGE_MAX];
    tb_jsonfield_text(buf, warning ? TB_BENCH_WARNING_MAX : TB_BENCH_MESSAGE_MAX,
                      cJSON_GetObjectItemCaseSensitive(o, k));
    return warning ? tb_bench_rec_warning(r, "%s", buf) : tb_bench_rec_message(r, "%s", buf);
}

/* A whole-number field of a record, as a row: its key, where it goes and
 * its size, its largest value, and what null (or absence) stores: NaN
 * when the key is required.  Stored by size alone: a count's value is
 * whole and non-negative, so it has the same bits in the signed and the
 * unsigned type of a width (4 or 8 bytes); only a long long takes the -1
 * of null. */
struct count_row {
    const char *key;
    size_t off, size;
    double max, if_null;
};
#define COUNT(k, field, max, if_null)                                                              \
    {                                                                                              \
        k, offsetof(struct tb_bench_rec, field), sizeof(((struct tb_bench_rec *)0)->field), max,   \
            if_null                                                                                \
    }
#define NROWS(a) (sizeof(a) / sizeof((a)[0]))

static void store_count(struct tb_bench_rec *r, const struct count_row *row, double v)
{
    char *p = (char *)r + row->off;
    if (row->size == sizeof(uint32_t)) {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, sizeof(x));
    } else {
        int64_t x = (int64_t)v;
        memcpy(p, &x, sizeof(x));
    }
}

/* Reads the rows' counts into r, in order; 0, or -1 at the first one
 * missing (when required), negative, fractional or past its max. */
static int read_counts(const cJSON *o, const struct count_row *rows, size_t n,
                       struct tb_bench_rec *r)
{
    for (size_t i = 0; i < n; i++) {
        double v;
        if (tb_bench_json_count(o, rows[i].key, !isnan(rows[i].if_null), rows[i].max, &v) != 0)
            return -1;
        store_count(r, &rows[i], isnan(v) ? rows[i].if_null : v);
    }
    return 0;
}

/* A number of a record that may be null (NaN), as a row: its key, the
 * reason given when it is not null or a number in 0..max, where it goes. */
struct num_row {
    const char *key, *why;
    size_t off;
    double max;
};
#define NUM(k, why, field, max)                                                                    \
    {                                                                                              \
        k, why, offsetof(struct tb_bench_rec, field), max                                          \
    }

/* Reads the rows' numbers into r, in order; NULL, or the first bad one's
 * reason. */
static const char *read_nums(const cJSON *o, const struct num_row *rows, size_t n,
                             struct tb_bench_rec *r)
{
    for (size_t i = 0; i < n; i++) {
        double v;
        if (tb_bench_json_num(o, rows[i].key, 1, &v) != 0 || v < 0 || v > rows[i].max)
            return rows[i].why;
        memcpy((char *)r + rows[i].off, &v, sizeof(v));
    }
    return NULL;
}

/* The record's level index: version 3 names the level ("c=10", as the
 * report does), version 2 gave its index. */
static const char *rec_level(const cJSON *o, const struct tb_bench_meta *m, int version,
                             struct tb_bench_rec *r)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "level");
    double level;
    if (version == 2) {
        if (tb_bench_json_count(o, "level", 0, TB_BENCH_LEVELS_MAX, &level) == 0 &&
            level < m->nlevels) {
            r->level = (uint32_t)level;
            return NULL;
        }
        return "\"level\" is missing or not one of the header's levels";
    }
    for (uint32_t i = 0; cJSON_IsString(l) && i < m->nlevels; i++) {
        char name[64];
        tb_bench_level_name(&m->levels[i], name, sizeof(name));
        if (strcmp(name, l->valuestring) == 0) {
            r->level = i;
            return NULL;
        }
    }
    return "\"level\" is missing or not the name of one of the header's levels (c=10, "
           "rate=5/s (poisson))";
}

/* What parse_rec returns when memory ran out (not the file's fault). */
const char tb_bench_rec_no_memory[] = "out of memory";

/* The array of times at key k of o (each 0..1e9 s) into *out (malloc'd,
 * never NULL) and *n; NULL, or why not: not_array, bad or tb_bench_rec_no_memory. */
static const char *read_times(const cJSON *o, const char *k, double **out, size_t *n,
                              const char *not_array, const char *bad)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, k), *v;
    size_t i = 0;
    if (!cJSON_IsArray(a))
        return not_array;
    *n = (size_t)cJSON_GetArraySize(a);
    *out = malloc((*n + 1) * sizeof(double));
    if (*out == NULL)
        return tb_bench_rec_no_memory;
    cJSON_ArrayForEach(v, a)
    {
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= TB_TIME_MAX))
            return bad;
        (*out)[i++] = v->valuedouble;
    }
    return NULL;
}

/* A sample array of "tts". */
static const char *read_samples(const cJSON *t, const char *key, double **out, size_t *n)
{
    return read_times(t, key, out, n, "\"tts\" lacks an array of samples",
                      "\"tts\" holds a sample that is negative, past 1e9 or not a number");
}

/* A real TTS's "tts" object, read back (absent: none). */
static const char *rec_tts(const cJSON *o, struct tb_bench_rec *r)
{
    static const struct count_row counts[] = {
        COUNT("chunks", tts_chunks, UINT32_MAX, NAN),
        COUNT("sent", tts_sent, UINT32_MAX, NAN),
        COUNT("skipped", tts_skipped, UINT32_MAX, 0), /* absent before it was written */
        COUNT("failed", tts_failed, UINT32_MAX, NAN),
        COUNT("canceled", tts_canceled, UINT32_MAX, NAN),
        COUNT("chars", tts_chars, WHOLE_MAX, NAN),
    };
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "tts");
    const char *why;
    if (t == NULL)
        return NULL;
    if (!cJSON_IsObject(t))
        return "\"tts\" is not an object";
    if (read_counts(t, counts, NROWS(counts), r) != 0)
        return "\"tts\" lacks a count (chunks, sent, failed, canceled, chars)";
    if (tb_bench_json_num(t, "audio_s", 1, &r->tts_audio_s) != 0 || r->tts_audio_s < 0)
        return "\"tts\" has no audio_s, or a negative one";
    r->tts = 1;
    why = read_samples(t, "first_byte_s", &r->tts_fb, &r->ntts_fb);
    if (why == NULL)
        why = read_samples(t, "rtf", &r->tts_rtf, &r->ntts_rtf);
    r->tts_cap = why == NULL && cJSON_GetObjectItemCaseSensitive(t, "capacity_wait_s") != NULL;
    return !r->tts_cap ? why : read_samples(t, "capacity_wait_s", &r->tts_cw, &r->ntts_cw);
}

/* Where the wait went (absent: a record of an older version, every part
 * null): each part a time or null, and v2v their sum. */
static const char *read_latency(const cJSON *o, struct tb_bench_rec *r)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "latency");
    double sum = 0.0;
    tb_turn_lat_clear(&r->lat);
    if (l == NULL)
        return NULL;
    if (!cJSON_IsObject(l))
        return "\"latency\" is not an object";
    for (int i = 0; i < TB_TURN_LAT_PARTS; i++) {
        double v;
        if (tb_bench_json_num(l, tb_turn_lat_keys[i], 1, &v) != 0 ||
            !(isnan(v) || (v >= 0 && v <= TB_TIME_MAX)))
            return "a part of \"latency\" is not null or a time in 0..1e9 s";
        tb_turn_lat_set(&r->lat, i, v);
        if (i < TB_TURN_LAT_PARTS - 1)
            sum += v;
        if (i == 1) { /* a tool call's wait, right after ttft (turnlat.h) */
            if (tb_bench_json_num(l, "tool_s", 1, &r->lat.tool) != 0 ||
                !(isnan(r->lat.tool) || (r->lat.tool >= 0 && r->lat.tool <= TB_TIME_MAX)))
                return "\"latency.tool_s\" is not null or a time in 0..1e9 s";
            if (!isnan(r->lat.tool))
                sum += r->lat.tool;
        }
    }
    if (!(isnan(sum) && isnan(r->lat.v2v)) && !(fabs(sum - r->lat.v2v) <= 1e-9))
        return "\"latency.v2v_s\" is not the sum of its parts";
    return NULL;
}

/* A call's barge-in keys (bench_rec.h), when "interrupted" is there:
 * all of them, consistent.  Returns a reason or NULL. */
static const char *parse_barge(const cJSON *o, struct tb_bench_rec *r)
{
    static const struct count_row counts[] = {
        COUNT("tokens_received", tokens_received, WHOLE_MAX, NAN),
        COUNT("tokens_unheard", tokens_unheard, WHOLE_MAX, NAN),
        COUNT("chars_unplayed", chars_unplayed, WHOLE_MAX, NAN),
    };
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "interrupted");
    if (in == NULL)
        return NULL;
    if (!cJSON_IsBool(in))
        return "\"interrupted\" is not true or false";
    r->barge = 1;
    r->interrupted = cJSON_IsTrue(in);
    if (tb_bench_json_num(o, "barge_in_s", 1, &r->barge_in) != 0 ||
        tb_bench_json_num(o, "cancel_s", 1, &r->cancel_s) != 0 ||
        tb_bench_json_num(o, "cancel_mono_s", 1, &r->cancel_mono_s) != 0)
        return "\"barge_in_s\", \"cancel_s\" or \"cancel_mono_s\" is missing or not a number or "
               "null";
    if (r->interrupted != !isnan(r->barge_in) ||
        !(isnan(r->barge_in) || (r->barge_in >= 0 && r->barge_in <= TB_TIME_MAX)))
        return "\"barge_in_s\" is a time (0..1e9 s) when \"interrupted\", null otherwise";
    if (isnan(r->cancel_s) != isnan(r->cancel_mono_s) ||
        (!isnan(r->cancel_s) && (!r->interrupted || !(r->cancel_s >= 0) ||
                                 r->cancel_s > TB_TIME_MAX || !(r->cancel_mono_s >= 0))))
        return "\"cancel_s\" and \"cancel_mono_s\" are times of an interrupted turn, together";
    if (tb_bench_json_num(o, "barge_tts_close_s", 1, &r->barge_tts_close) != 0 ||
        tb_bench_json_num(o, "barge_inflight_s", 1, &r->barge_inflight) != 0 ||
        tb_bench_json_num(o, "barge_stop_s", 1, &r->barge_stop) != 0 ||
        !(isnan(r->barge_stop) || (r->interrupted && r->barge_stop >= 0 &&
                                   r->barge_inflight >= r->barge_stop && r->barge_tts_close >= 0)))
        return "\"barge_tts_close_s\", \"barge_inflight_s\" and \"barge_stop_s\" are durations "
               "(0 <= stop <= in flight) of an interrupted turn, or null";
    if (read_counts(o, counts, NROWS(counts), r) != 0)
        return "\"tokens_received\", \"tokens_unheard\" or \"chars_unplayed\" is missing, "
               "negative, fractional or out of range";
    if (r->tokens_unheard > r->tokens_received ||
        (!r->interrupted && (r->tokens_unheard > 0 || r->chars_unplayed > 0)))
        return "\"tokens_unheard\" is more than \"tokens_received\", or a turn not interrupted "
               "left something unheard";
    return NULL;
}

/* The steps of parse_rec, in the order a record's faults are named. */

static const char *rec_ids(const cJSON *o, struct tb_bench_rec *r)
{
    static const struct count_row ids[] = {
        COUNT("id", id, WHOLE_MAX, NAN),
        COUNT("prompt", prompt, UINT32_MAX, NAN),
    };
    return read_counts(o, ids, NROWS(ids), r) != 0
               ? "\"id\" or \"prompt\" is missing or not a whole number in range"
               : NULL;
}

/* A call's turn: both keys or neither, then when it finished playing and
 * its barge-in. */
static const char *rec_call(const cJSON *o, struct tb_bench_rec *r)
{
    static const struct count_row ids[] = {
        COUNT("call", call, WHOLE_MAX, NAN),
        COUNT("turn", turn, INT32_MAX, NAN),
    };
    static const struct num_row play_end =
        NUM("play_end_s", "\"play_end_s\" is negative, past 1e9 s or not a number", play_end,
            TB_TIME_MAX);
    const cJSON *call = cJSON_GetObjectItemCaseSensitive(o, "call");
    const cJSON *turn = cJSON_GetObjectItemCaseSensitive(o, "turn");
    const char *why;
    if ((call != NULL) != (turn != NULL))
        return "\"call\" and \"turn\" come together";
    if (call == NULL)
        return NULL;
    if (read_counts(o, ids, NROWS(ids), r) != 0)
        return "\"call\" or \"turn\" is not a whole number in range";
    why = read_nums(o, &play_end, 1, r);
    return why != NULL ? why : parse_barge(o, r);
}

static const char *rec_times(const cJSON *o, struct tb_bench_rec *r)
{
    static const char *const keys[] = {"t_sched", "t_start", "t_end"};
    double *t[] = {&r->t_sched, &r->t_start, &r->t_end};
    for (size_t i = 0; i < NROWS(keys); i++)
        if (tb_bench_json_num(o, keys[i], 0, t[i]) != 0)
            return "\"t_sched\", \"t_start\" or \"t_end\" is missing";
    for (size_t i = 0; i < NROWS(keys); i++)
        if (!(*t[i] >= 0 && *t[i] <= TB_TIME_MAX))
            return "\"t_sched\", \"t_start\" or \"t_end\" is negative or past 1e9 s";
    return NULL;
}

static const char *rec_counts(const cJSON *o, struct tb_bench_rec *r)
{
    static const struct count_row counts[] = {
        COUNT("http_status", http_status, 999, NAN),
        COUNT("events", events, WHOLE_MAX, NAN),
        COUNT("content_tokens", content_tokens, WHOLE_MAX, NAN),
        COUNT("underruns", underruns, UINT32_MAX, 0), /* null: no audio played (ttfa_s null) */
        COUNT("usage_tokens", usage_tokens, WHOLE_MAX, -1),
        COUNT("usage_ignored", usage_ignored, WHOLE_MAX, -1),
        COUNT("surrogates_replaced", surrogates_replaced, WHOLE_MAX, 0),
    };
    return read_counts(o, counts, NROWS(counts), r) != 0
               ? "a count is missing, negative, fractional or out of range"
               : NULL;
}

/* Refusals (bench --retry): "refusals" and "retry_waits_s" together,
 * or neither (none met). */
static const char *rec_retry(const cJSON *o, struct tb_bench_rec *r)
{
    static const struct count_row row = COUNT("refusals", refusals, TB_BENCH_RETRIES_MAX + 1, 0);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "retry_waits_s"), *e;
    if ((w != NULL) != (cJSON_GetObjectItemCaseSensitive(o, "refusals") != NULL))
        return "\"refusals\" and \"retry_waits_s\" come together";
    if (w == NULL)
        return NULL;
    if (read_counts(o, &row, 1, r) != 0 || !cJSON_IsArray(w) ||
        cJSON_GetArraySize(w) > TB_BENCH_RETRIES_MAX ||
        (uint32_t)cJSON_GetArraySize(w) > r->refusals ||
        r->refusals > (uint32_t)cJSON_GetArraySize(w) + 1)
        return "\"refusals\" is not a count in range, or \"retry_waits_s\" not an array of "
               "refusals or refusals - 1 waits";
    cJSON_ArrayForEach(e, w)
    {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble <= TB_TIME_MAX))
            return "\"retry_waits_s\" holds a negative number, one past 1e9 s or a non-number";
        r->retry_wait[r->nretries++] = e->valuedouble;
    }
    return NULL;
}

/* bench --llm-capacity: "llm_capacity_wait_s", a time (absent: none). */
static const char *rec_llm(const cJSON *o, struct tb_bench_rec *r)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "llm_capacity_wait_s");
    r->llm_wait = NAN;
    if (w == NULL)
        return NULL;
    if (!cJSON_IsNumber(w) || !(w->valuedouble >= 0 && w->valuedouble <= TB_TIME_MAX))
        return "\"llm_capacity_wait_s\" is not a number in 0..1e9";
    r->llm_wait = w->valuedouble;
    return NULL;
}

/* Every metric is a time, a rate or a ratio: none can be negative (a
 * summary of them would be quietly wrong). */
static const char *rec_metrics(const cJSON *o, struct tb_bench_rec *r)
{
#define TIME(k, field)                                                                             \
    NUM(k, "\"" k "\" is negative or past 1e9 s, or not a number or null", field, TB_TIME_MAX)
#define RATE(k, field) NUM(k, "\"" k "\" is negative, or not a number or null", field, HUGE_VAL)
    static const struct num_row metrics[] = {
        TIME("ttft_s", ttft),           TIME("ttfa_s", ttfa),
        RATE("decode_tps", decode_tps), RATE("decode_tps_usage", decode_tps_usage),
        TIME("gap_total_s", gap_total), TIME("gap_max_s", gap_max),
        RATE("min_tps", min_tps),       RATE("speedup_needed", speedup),
    };
#undef TIME
#undef RATE
    const char *why = read_nums(o, metrics, NROWS(metrics), r);
    if (why == NULL && isnan(r->ttfa))
        r->underruns = 0; /* no audio played: none counted (written null) */
    return why;
}

/* What went wrong: "error" (null, or a kind and its message) and the
 * "warning" (a string, when there). */
static const char *rec_error(const cJSON *o, struct tb_bench_rec *r)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "warning");
    if (cJSON_IsObject(e)) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
        r->error = -1;
        for (int i = 1; cJSON_IsString(k) && i < TB_READER__COUNT; i++)
            if (strcmp(k->valuestring, tb_reader_error_name(i)) == 0)
                r->error = i;
        if (r->error < 0)
            return "\"error.kind\" is not a known kind";
        if (copy_text(e, "message", r, 0) != 0)
            return tb_bench_rec_no_memory;
    } else if (e != NULL && !cJSON_IsNull(e)) {
        return "\"error\" is neither null nor an object";
    }
    if (w != NULL && !cJSON_IsString(w))
        return "\"warning\" is not a string";
    return NULL;
}

/* How the stream ended; records written before the key derive it from
 * the error, as the stream reader would have. */
static const char *rec_end(const cJSON *o, struct tb_bench_rec *r)
{
    const cJSON *end = cJSON_GetObjectItemCaseSensitive(o, "end");
    if (end != NULL) {
        r->end = cJSON_IsString(end) ? tb_end_parse(end->valuestring) : -1;
        if (r->end < 0)
            return "\"end\" is not a stream end (complete, connection_lost, error, ...)";
    } else {
        r->end = tb_reader_end_kind(r->error, 1, r->events > 0);
    }
    /* a real TTS that failed fails a stream that came whole */
    /* ... and a stream the caller closed at its barge-in ended
     * "interrupted" with no error */
    if ((r->error == 0 || r->error == TB_READER_TTS) !=
            (tb_end_class(r->end) == TB_END_CLASS_COMPLETE) &&
        !(r->error == 0 && r->end == TB_END_INTERRUPTED && !isnan(r->cancel_s)))
        return "\"end\" contradicts \"error\" (a complete end has no error but tts, and only "
               "it)";
    /* A what-if needs the whole answer: a failed request has none, as the
     * writer says (whatever the file holds). */
    if (r->error != 0)
        r->min_tps = r->speedup = NAN;
    return NULL;
}

/* A TTS stage's keys come together, or not at all. */
static const char *rec_staged(const cJSON *o, struct tb_bench_rec *r)
{
    static const char gaps_why[] =
        "\"gap_llm_s\" or \"gap_tts_s\" is missing, negative or past 1e9 s";
    static const struct num_row gaps[] = {
        NUM("gap_llm_s", gaps_why, gap_llm, TB_TIME_MAX),
        NUM("gap_tts_s", gaps_why, gap_tts, TB_TIME_MAX),
    };
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(o, "min_tps_reason");
    if (why == NULL)
        return NULL;
    if (!cJSON_IsNull(why) &&
        !(cJSON_IsString(why) && strcmp(why->valuestring, TB_MIN_TPS_NONE_REASON) == 0))
        return "\"min_tps_reason\" is neither null nor \"" TB_MIN_TPS_NONE_REASON "\"";
    if (read_nums(o, gaps, NROWS(gaps), r) != NULL)
        return gaps_why;
    r->staged = 1;
    r->min_tps_none = r->error == 0 && cJSON_IsString(why);
    if (r->min_tps_none && !isnan(r->min_tps))
        return "\"min_tps\" is a number beside a reason why there is none";
    return NULL;
}

static const char *rec_warning(const cJSON *o, struct tb_bench_rec *r)
{
    return copy_text(o, "warning", r, 1) != 0 ? tb_bench_rec_no_memory : NULL;
}

/* "good" is derived: it must be what the fields and the header's SLOs
 * give (a file edited by hand, or another definition). */
static const char *rec_good(const cJSON *o, const struct tb_bench_meta *m,
                            const struct tb_bench_rec *r)
{
    const cJSON *good = cJSON_GetObjectItemCaseSensitive(o, "good");
    if (m->slo.set == 0 && good != NULL)
        return "\"good\" without SLOs in the header (\"slo\")";
    if (m->slo.set != 0 && !cJSON_IsBool(good))
        return "\"good\" (true or false) is missing: the header has SLOs";
    if (m->slo.set != 0 && cJSON_IsTrue(good) != tb_bench_slo_good(&m->slo, r))
        return cJSON_IsTrue(good) ? "\"good\" is true, but the record misses the header's "
                                    "SLOs (or failed, or did not measure one)"
                                  : "\"good\" is false, but the record meets the header's "
                                    "SLOs";
    return NULL;
}

static const char *rec_itl(const cJSON *o, struct tb_bench_rec *r)
{
    return read_times(o, "itl_s", &r->itl, &r->nitl, "\"itl_s\" is not an array",
                      "\"itl_s\" holds a negative number, one past 1e9 s or a non-number");
}

static const char *const tool_windows[3] = {"before", "during", "after"};

/* A time key: null (NaN) or in 0..TB_TIME_MAX.  0 or -1. */
static int time_key(const cJSON *o, const char *k, double *out)
{
    return tb_bench_json_num(o, k, 1, out) == 0 &&
                   (isnan(*out) || (*out >= 0 && *out <= TB_TIME_MAX))
               ? 0
               : -1;
}

/* The filler's keys, when "filler_s" is there. */
static const char *filler_parse(const cJSON *o, struct tb_bench_rec *r)
{
    char key[48];
    if (cJSON_GetObjectItemCaseSensitive(o, "filler_s") == NULL)
        return NULL;
    r->filler = 1;
    if (time_key(o, "filler_at_s", &r->filler_at) != 0 ||
        time_key(o, "filler_s", &r->filler_dur) != 0 ||
        time_key(o, "filler_delay_s", &r->filler_delay) != 0 ||
        time_key(o, "filler_sent_s", &r->filler_sent) != 0 ||
        time_key(o, "filler_first_byte_s", &r->filler_fb) != 0)
        return "\"filler_at_s\", \"filler_s\", \"filler_delay_s\", \"filler_sent_s\" or "
               "\"filler_first_byte_s\" is not null or a time";
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof(key), "filler_silence_%s_s", tool_windows[i]);
        if (time_key(o, key, &r->filler_silence[i]) != 0 ||
            (!isnan(r->filler_silence[i]) && !(r->filler_silence[i] <= r->tool_silence[i])))
            return "a \"filler_silence_*_s\" is not null or a time at most the silence without "
                   "the filler";
    }
    if (tb_bench_json_num(o, "filler_covered", 1, &r->filler_covered) != 0 ||
        !(isnan(r->filler_covered) || (r->filler_covered >= 0 && r->filler_covered <= 1)))
        return "\"filler_covered\" is not null or a share in 0..1";
    return NULL;
}

/* A call's tool keys (bench_rec.h, Tool calls), when "tool_calls" is
 * there: all of them, consistent with latency.tool_s (read first into
 * r->lat.tool).  Returns a reason or NULL. */
static const char *rec_tool(const cJSON *o, struct tb_bench_rec *r)
{
    const cJSON *bad;
    double n;
    char key[48];
    double lat_tool = r->lat.tool; /* read with the latency object */
    tb_bench_rec_tool_clear(r);
    r->lat.tool = lat_tool;
    if (cJSON_GetObjectItemCaseSensitive(o, "tool_calls") == NULL)
        return NULL;
    if (tb_bench_json_count(o, "tool_calls", 0, 1024, &n) != 0)
        return "\"tool_calls\" is not a whole number in 0..1024";
    r->tool_calls = (uint32_t)n;
    if (time_key(o, "tool_start_s", &r->tool_start) != 0 ||
        time_key(o, "tool_end_s", &r->tool_end) != 0 || time_key(o, "tool_s", &r->tool_s) != 0)
        return "\"tool_start_s\", \"tool_end_s\" or \"tool_s\" is not null or a time";
    if ((r->tool_calls > 0) != !isnan(r->tool_s) ||
        !(isnan(r->tool_s) ? isnan(lat_tool) : r->tool_s == lat_tool))
        return "\"tool_s\" is a time when \"tool_calls\" is not 0 (and latency.tool_s the same), "
               "null otherwise";
    r->tool_head = r->tool_end + r->tool_s;
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof(key), "tool_silence_%s_s", tool_windows[i]);
        if (time_key(o, key, &r->tool_silence[i]) != 0)
            return "a \"tool_silence_*_s\" is not null or a time";
    }
    bad = cJSON_GetObjectItemCaseSensitive(o, "tool_args_bad"); /* absent: an older record */
    if (bad != NULL && !cJSON_IsBool(bad))
        return "\"tool_args_bad\" is not true or false";
    r->tool_args_bad = cJSON_IsTrue(bad);
    return filler_parse(o, r);
}

/* Fills a record from one line's object, step by step (the first fault
 * found is the one named); returns a reason or NULL. */
const char *tb_bench_rec_parse(const cJSON *o, const struct tb_bench_meta *m, int version,
                               struct tb_bench_rec *r)
{
    static const char *(*const steps[])(const cJSON *, struct tb_bench_rec *) = {
        rec_ids,    rec_call,    rec_times, rec_counts,   rec_metrics, rec_error, rec_end,
        rec_staged, rec_warning, rec_tts,   read_latency, rec_retry,   rec_tool,   rec_llm,
    };
    const char *why = rec_level(o, m, version, r);
    for (size_t i = 0; why == NULL && i < NROWS(steps); i++)
        why = steps[i](o, r);
    if (why == NULL)
        why = rec_good(o, m, r);
    return why != NULL ? why : rec_itl(o, r);
}
