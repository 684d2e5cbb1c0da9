/*
 * sweep_axis.c - the value lists of `ttsbuf sweep`'s axes, as the user
 * gives them (see sweep_axis.h).
 */
#include "sweep_axis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/sweep.h"
#include "ttsbuf/ttslat.h"

int tb_cli_axis_push(struct tb_cli_axis *x, const char *flag, double v)
{
    if (x->n >= TB_SWEEP_AXIS_MAX) {
        tb_cli_error("%s: more than %u values", flag, TB_SWEEP_AXIS_MAX);
        return TB_EINVAL;
    }
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 16;
        double *nv = realloc(x->v, cap * sizeof(*nv));
        if (nv == NULL) {
            tb_cli_error("out of memory");
            return TB_ENOMEM;
        }
        x->v = nv;
        x->cap = cap;
    }
    x->v[x->n++] = v;
    return 0;
}

/* One number within lo..hi, a whole one when whole; as sim's options
 * say it. */
static int number(const char *flag, const char *s, double lo, double hi, int whole, double *out,
                  char *err, size_t errlen)
{
    size_t z;
    int rc;
    if (!whole)
        return tb_cli_number_double(flag, s, lo, hi, out, err, errlen);
    rc = tb_cli_number_size(flag, s, (size_t)lo, (size_t)hi, &z, err, errlen);
    if (rc == 0)
        *out = (double)z;
    return rc;
}

/* A number list with ranges, each value within lo..hi (whole numbers
 * when whole).  0 or an error (printed). */
int tb_cli_axis_list(struct tb_cli_axis *x, const char *flag, const char *arg, double lo, double hi,
                     int whole)
{
    char *copy = strdup(arg), *save = NULL, *item, err[256];
    int rc = 0;
    x->n = 0;
    if (copy == NULL || *arg == '\0') {
        tb_cli_error("%s: %s", flag, copy == NULL ? "out of memory" : "empty list");
        free(copy);
        return copy == NULL ? TB_ENOMEM : TB_EINVAL;
    }
    for (item = strtok_r(copy, ",", &save); item != NULL && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(item, ':'), *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
        double a, b, step;
        if (c1 == NULL) {
            rc = number(flag, item, lo, hi, whole, &a, err, sizeof(err));
            if (rc == 0)
                rc = tb_cli_axis_push(x, flag, a);
            else
                tb_cli_error("%s", err);
            continue;
        }
        if (c2 == NULL || strchr(c2 + 1, ':') != NULL) {
            tb_cli_error("%s: '%s' is not START:STOP:STEP", flag, item);
            rc = TB_EINVAL;
            break;
        }
        *c1 = *c2 = '\0';
        if ((rc = number(flag, item, lo, hi, whole, &a, err, sizeof(err))) != 0 ||
            (rc = number(flag, c1 + 1, lo, hi, whole, &b, err, sizeof(err))) != 0 ||
            (rc = number(flag, c2 + 1, 0, hi - lo, whole, &step, err, sizeof(err))) != 0) {
            tb_cli_error("%s", err);
            break;
        }
        if (!(step > 0) || b < a) {
            tb_cli_error("%s: range %s:%s:%s needs START <= STOP and STEP > 0", flag, item, c1 + 1,
                         c2 + 1);
            rc = TB_EINVAL;
            break;
        }
        if ((b - a) / step >= TB_SWEEP_AXIS_MAX) {
            tb_cli_error("%s: more than %u values", flag, TB_SWEEP_AXIS_MAX);
            rc = TB_EINVAL;
            break;
        }
        /* Values as start + i x step, rounded to 1e-9 so that 0.1 steps
         * print as 0.3, not 0.30000000000000004. */
        for (size_t i = 0; rc == 0; i++) {
            double v = a + (double)i * step;
            if (v > b + step * 1e-9)
                break;
            v = round(v * 1e9) / 1e9;
            rc = tb_cli_axis_push(x, flag, v > hi ? hi : v);
        }
    }
    free(copy);
    return rc;
}

int tb_cli_axis_numbers(struct tb_cli_axis *x, const char *flag, const char *arg, double lo,
                        double hi)
{
    return tb_cli_axis_list(x, flag, arg, lo, hi, 0);
}

/* --tts-latency: constants only; a distribution's spec is a mistake that
 * --tts-latency-p50 answers. */
int tb_cli_axis_latency(struct tb_cli_axis *x, const char *arg)
{
    static const char *const kinds[] = {"lognormal:", "uniform:", "empirical:", "list:"};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strncmp(arg, kinds[i], strlen(kinds[i])) == 0) {
            tb_cli_error("--tts-latency: sweep takes constants here ('%s' is a distribution); "
                         "sweep a distribution's median with --tts-latency-p50 LIST and "
                         "--tts-latency-shape",
                         arg);
            return TB_EINVAL;
        }
    return tb_cli_axis_numbers(x, "--tts-latency", arg, 0, 60);
}

int tb_cli_axis_chunks(struct tb_cli_axis *x, const char *arg)
{
    char *copy = strdup(arg), *save = NULL, *item;
    int rc = 0;
    x->n = 0;
    if (copy == NULL) {
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    for (item = strtok_r(copy, ",", &save); item != NULL && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        enum tb_chunk_policy p;
        if (strcmp(item, "all") == 0) {
            for (int i = 0; i < TB_CHUNK__COUNT && rc == 0; i++)
                if (!tb_seg_policy_timed((enum tb_chunk_policy)i))
                    rc = tb_cli_axis_push(x, "--chunk", i);
        } else if (tb_seg_policy_parse(item, &p) == 0 && tb_seg_policy_timed(p)) {
            /* The sweep re-times a stream's chunks, which these re-cut. */
            tb_cli_error("--chunk: %s is time-based: sweep re-times each stream's chunks, which "
                         "%s would cut again at each rate; use ttsbuf sim",
                         item, item);
            rc = TB_EINVAL;
        } else if (tb_seg_policy_parse(item, &p) == 0) {
            rc = tb_cli_axis_push(x, "--chunk", p);
        } else {
            tb_cli_error("--chunk: unknown policy '%s' (see ttsbuf sweep --help)", item);
            rc = TB_EINVAL;
        }
    }
    free(copy);
    if (rc == 0 && x->n == 0) {
        tb_cli_error("--chunk: empty list");
        rc = TB_EINVAL;
    }
    return rc;
}

/* --tts-latency-shape SHAPE: lognormal:ratio=R or uniform:width=W. */
int tb_cli_axis_shape(const char *arg, struct tb_sweep_tts *t)
{
    char err[256];
    int rc;
    if (strncmp(arg, "lognormal:ratio=", 16) == 0) {
        t->shape = TB_LAT_LOGNORMAL;
        rc = tb_cli_number_double("--tts-latency-shape: ratio", arg + 16, 1, 1e6, &t->param, err,
                                  sizeof(err));
    } else if (strncmp(arg, "uniform:width=", 14) == 0) {
        t->shape = TB_LAT_UNIFORM;
        rc = tb_cli_number_double("--tts-latency-shape: width", arg + 14, 0, 2 * TB_TTSLAT_MAX,
                                  &t->param, err, sizeof(err));
    } else {
        tb_cli_error("--tts-latency-shape: '%s' is not lognormal:ratio=R or uniform:width=W", arg);
        return TB_EINVAL;
    }
    if (rc != 0)
        tb_cli_error("%s", err);
    return rc;
}

/* The shape of a preset's latency distribution (and its median in *p50):
 * 0, or 1 when it has none to sweep (a constant or a FILE's values). */
int tb_cli_axis_preset_shape(const struct tb_ttslat *lat, struct tb_sweep_tts *t, double *p50)
{
    struct tb_ttslat_info info;
    if (lat == NULL)
        return 1;
    tb_ttslat_info(lat, &info);
    if (info.kind == TB_TTSLAT_LOGNORMAL) {
        t->shape = TB_LAT_LOGNORMAL;
        t->param = info.p90 / info.p50;
        *p50 = info.p50;
        return 0;
    }
    if (info.kind == TB_TTSLAT_UNIFORM) {
        t->shape = TB_LAT_UNIFORM;
        t->param = info.hi - info.lo;
        *p50 = (info.lo + info.hi) / 2;
        return 0;
    }
    return 1;
}

int tb_cli_axis_seeds(const char *arg, uint64_t *lo, uint64_t *hi)
{
    char *end;
    const char *b;
    unsigned long long l, h;
    l = strtoull(arg, &end, 10);
    if (end == arg || *end != ':' || arg[0] == '-' || arg[0] == '+' || arg[0] == ' ')
        goto bad;
    b = end + 1;
    h = strtoull(b, &end, 10);
    if (end == b || *end != '\0' || b[0] == '-' || b[0] == '+' || h < l || h - l >= 1000000)
        goto bad;
    *lo = l;
    *hi = h;
    return 0;
bad:
    tb_cli_error("--seeds: '%s' is not A:B with A <= B and B - A < 1000000", arg);
    return TB_EINVAL;
}
