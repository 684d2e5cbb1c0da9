/*
 * bench_slo.c - a bench run's SLOs and whether a record meets them (see
 * bench_slo.h).  The bounds are kept as given and printed so that they
 * read back bit-identical: a records file's header and its "good" flags
 * agree after any number of merges.
 */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "ttsbuf/bench_rec.h"
#include "ttsbuf/bench_slo.h"
#include "ttsbuf/error.h"
#include "ttsbuf/jsonline.h"

static const struct {
    const char *name;
    int at_least, whole;
} keys[TB_SLO__COUNT] = {
    {"ttft_s", 0, 0},         {"ttfa_s", 0, 0},     {"gap_total_s", 0, 0},      {"gap_max_s", 0, 0},
    {"underruns", 0, 1},      {"decode_tps", 1, 0}, {"decode_tps_usage", 1, 0}, {"min_tps", 0, 0},
    {"speedup_needed", 0, 0}, {"v2v_s", 0, 0},       {"gapless", 0, 0},
};

#define KEY_LIST                                                                                   \
    "ttft_s, ttfa_s, gap_total_s, gap_max_s, underruns, decode_tps, decode_tps_usage, min_tps, "   \
    "speedup_needed, v2v_s, gapless"

const char *tb_bench_slo_name(enum tb_slo_key k)
{
    return (unsigned)k < TB_SLO__COUNT ? keys[k].name : "?";
}

int tb_bench_slo_at_least(enum tb_slo_key k)
{
    return (unsigned)k < TB_SLO__COUNT ? keys[k].at_least : 0;
}

static int key_of(const char *name, size_t len)
{
    for (int k = 0; k < TB_SLO__COUNT; k++)
        if (strlen(keys[k].name) == len && strncmp(keys[k].name, name, len) == 0)
            return k;
    return -1;
}

/* A bound: a finite number >= 0 (whole: an integer), up to 1e12. */
static int bound_ok(double v, int whole)
{
    return isfinite(v) && v >= 0 && v <= 1e12 && (!whole || v == floor(v));
}

int tb_bench_slo_add(struct tb_bench_slo *s, const char *spec, char *err, size_t errlen)
{
    const char *eq = strchr(spec, '=');
    size_t len = eq != NULL ? (size_t)(eq - spec) : strlen(spec);
    int k = key_of(spec, len);
    double v = 1;
    if (k < 0)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "'%.*s' is not a quantity with an SLO (" KEY_LIST ")", (int)len, spec);
    if (k == TB_SLO_GAPLESS) {
        if (eq != NULL && strcmp(eq + 1, "true") != 0 && strcmp(eq + 1, "1") != 0)
            return tb_seterr(err, errlen, TB_EINVAL,
                             "gapless takes no value (gapless: no underrun), not '%s'", eq + 1);
    } else {
        char *end;
        if (eq == NULL)
            return tb_seterr(err, errlen, TB_EINVAL, "%s needs a bound: %s=VALUE", keys[k].name,
                             keys[k].name);
        errno = 0;
        v = strtod(eq + 1, &end);
        if (eq[1] == '\0' || *end != '\0' || errno != 0 || !bound_ok(v, keys[k].whole))
            return tb_seterr(err, errlen, TB_EINVAL, "%s=%s: the bound must be %s in 0..1e12",
                             keys[k].name, eq + 1, keys[k].whole ? "a whole number" : "a number");
    }
    if (s->set & (1u << k))
        return tb_seterr(err, errlen, TB_EINVAL, "%s is given twice", keys[k].name);
    s->set |= 1u << k;
    s->limit[k] = v;
    return 0;
}

int tb_bench_slo_equal(const struct tb_bench_slo *a, const struct tb_bench_slo *b)
{
    if (a->set != b->set)
        return 0;
    for (int k = 0; k < TB_SLO__COUNT; k++)
        if ((a->set & (1u << k)) && a->limit[k] != b->limit[k])
            return 0;
    return 1;
}

void tb_bench_slo_text(const struct tb_bench_slo *s, char *buf, size_t len)
{
    size_t n = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    if (s->set == 0) {
        snprintf(buf, len, "none");
        return;
    }
    for (int k = 0; k < TB_SLO__COUNT && n < len; k++) {
        char num[32];
        if (!(s->set & (1u << k)))
            continue;
        if (k == TB_SLO_GAPLESS)
            n += (size_t)snprintf(buf + n, len - n, "%sgapless", n > 0 ? " " : "");
        else
            n += (size_t)snprintf(
                buf + n, len - n, "%s%s%s%s", n > 0 ? " " : "", keys[k].name,
                keys[k].at_least ? ">=" : "<=", tb_numfmt_double(num, sizeof(num), s->limit[k]));
    }
}

cJSON *tb_bench_slo_json(const struct tb_bench_slo *s)
{
    cJSON *o;
    if (s->set == 0)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    for (int k = 0; o != NULL && k < TB_SLO__COUNT; k++) {
        cJSON *v;
        if (!(s->set & (1u << k)))
            continue;
        v = k == TB_SLO_GAPLESS ? cJSON_CreateTrue() : tb_json_num(s->limit[k]);
        if (v == NULL) {
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(o, keys[k].name, v);
    }
    return o;
}

int tb_bench_slo_from_json(const cJSON *o, struct tb_bench_slo *s)
{
    const cJSON *it;
    memset(s, 0, sizeof(*s));
    if (!cJSON_IsObject(o))
        return -1;
    cJSON_ArrayForEach(it, o)
    {
        int k = it->string != NULL ? key_of(it->string, strlen(it->string)) : -1;
        if (k < 0 || (s->set & (1u << k)))
            return -1;
        if (k == TB_SLO_GAPLESS) {
            if (!cJSON_IsTrue(it))
                return -1;
            s->limit[k] = 1;
        } else {
            if (!cJSON_IsNumber(it) || !bound_ok(it->valuedouble, keys[k].whole))
                return -1;
            s->limit[k] = it->valuedouble;
        }
        s->set |= 1u << k;
    }
    return s->set != 0 ? 0 : -1;
}

/* The record's value of key k (NaN: not measured). */
static double value(const struct tb_bench_rec *r, int k)
{
    switch (k) {
    case TB_SLO_TTFT: return r->ttft;
    case TB_SLO_TTFA: return r->ttfa;
    case TB_SLO_GAP_TOTAL: return r->gap_total;
    case TB_SLO_GAP_MAX: return r->gap_max;
    /* underruns are counted by a playout: none without first audio */
    case TB_SLO_UNDERRUNS:
    case TB_SLO_GAPLESS: return isnan(r->ttfa) ? NAN : (double)r->underruns;
    case TB_SLO_DECODE_TPS: return r->decode_tps;
    case TB_SLO_DECODE_TPS_USAGE: return r->decode_tps_usage;
    case TB_SLO_MIN_TPS: return r->min_tps;
    case TB_SLO_SPEEDUP: return r->speedup;
    case TB_SLO_V2V: return r->lat.v2v;
    default: return NAN;
    }
}

int tb_bench_slo_good(const struct tb_bench_slo *s, const struct tb_bench_rec *r)
{
    if (r->error != 0)
        return 0;
    for (int k = 0; k < TB_SLO__COUNT; k++) {
        double v;
        if (!(s->set & (1u << k)))
            continue;
        v = value(r, k);
        if (isnan(v))
            return 0; /* not measured: not shown to hold */
        if (k == TB_SLO_GAPLESS ? v != 0
            : keys[k].at_least  ? !(v >= s->limit[k])
                                : !(v <= s->limit[k]))
            return 0;
    }
    return 1;
}
