/*
 * faults.c - the mock server's fault specs (see faults.h): "stall@40:1.5+crlf".
 *
 * The parser works on a copy of the caller's struct and commits only when
 * every item parsed, so a bad spec leaves *f as it was; the error names
 * the item and says what was expected.  Numbers are strict: digits only
 * for counts (no sign, no blanks), a plain decimal for seconds (no "inf",
 * "nan" or hex).
 */
#include "ttsbuf/faults.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"

/* Longest stall accepted: long enough to outlast any client timeout, short
 * enough that nanosecond arithmetic on it cannot overflow. */
#define STALL_MAX_S 1e6
#define COUNT_MAX 1000000L /* burst@N and reasoning@N */

void tb_faults_init(struct tb_faults *f)
{
    memset(f, 0, sizeof(*f));
    f->stall_at = -1;
    f->drop_at = -1;
    f->malformed_at = -1;
    f->error_at = -1;
}

/* A whole number in [lo, hi] written as digits only, filling [p, end). */
static int whole(const char *p, const char *end, long lo, long hi, long *out)
{
    long v = 0;
    if (p == end)
        return -1;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        if (v > (hi - (*p - '0')) / 10)
            return -1; /* over hi (and so never overflows) */
        v = v * 10 + (*p - '0');
    }
    if (v < lo)
        return -1;
    *out = v;
    return 0;
}

/* Seconds: a plain decimal in [0, STALL_MAX_S], filling [p, end). */
static int seconds(const char *p, const char *end, double *out)
{
    char buf[64], *e;
    size_t n = (size_t)(end - p);
    double v;
    if (n == 0 || n >= sizeof(buf))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || p[i] == '.'))
            return -1; /* keeps out signs, exponents, "inf", hex */
    memcpy(buf, p, n);
    buf[n] = '\0';
    errno = 0;
    v = strtod(buf, &e);
    if (e != buf + n || errno != 0 || !isfinite(v) || v > STALL_MAX_S)
        return -1;
    *out = v;
    return 0;
}

static int item_is(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(p, word, n) == 0;
}

/* One item [p, p+n); returns NULL or what was wrong with it. */
static const char *parse_item(const char *p, size_t n, void *into)
{
    struct tb_faults *f = into;
    const char *end = p + n, *at = memchr(p, '@', n), *arg = at != NULL ? at + 1 : end;
    size_t name = (size_t)((at != NULL ? at : end) - p);
    long v;

    if (at == NULL) {
        if (item_is(p, n, "html"))
            f->html = 1;
        else if (item_is(p, n, "crlf"))
            f->crlf = 1;
        else if (item_is(p, n, "comments"))
            f->comments = 1;
        else if (item_is(p, n, "nodone"))
            f->nodone = 1;
        else if (item_is(p, n, "reject-usage"))
            f->reject_usage = 1;
        else if (item_is(p, n, "stall") || item_is(p, n, "drop") || item_is(p, n, "status") ||
                 item_is(p, n, "malformed") || item_is(p, n, "error") || item_is(p, n, "burst") ||
                 item_is(p, n, "reasoning"))
            return "needs an '@' argument";
        else
            return "unknown fault (stall@K:S, drop@K, status@N[:html], html, malformed@K, "
                   "error@K, burst@N, reasoning@N, crlf, comments, nodone, reject-usage)";
        return NULL;
    }
    if (item_is(p, name, "stall")) {
        const char *colon = memchr(arg, ':', (size_t)(end - arg));
        double s;
        if (colon == NULL)
            return "expected stall@K:S (pause S seconds before token K)";
        if (whole(arg, colon, 0, LONG_MAX, &v) != 0)
            return "K must be a whole number >= 0";
        if (seconds(colon + 1, end, &s) != 0)
            return "S must be a number of seconds in 0..1000000";
        f->stall_at = v;
        f->stall_s = s;
    } else if (item_is(p, name, "status")) {
        const char *colon = memchr(arg, ':', (size_t)(end - arg));
        if (colon != NULL && !item_is(colon + 1, (size_t)(end - colon - 1), "html"))
            return "expected status@N or status@N:html";
        if (whole(arg, colon != NULL ? colon : end, 400, 599, &v) != 0)
            return "N must be an HTTP error status in 400..599";
        f->status = (int)v;
        f->status_html = colon != NULL;
    } else if (item_is(p, name, "drop") || item_is(p, name, "malformed") ||
               item_is(p, name, "error")) {
        if (whole(arg, end, 0, LONG_MAX, &v) != 0)
            return "K must be a whole number >= 0";
        if (p[0] == 'd')
            f->drop_at = v;
        else if (p[0] == 'm')
            f->malformed_at = v;
        else
            f->error_at = v;
    } else if (item_is(p, name, "burst")) {
        if (whole(arg, end, 1, COUNT_MAX, &v) != 0)
            return "N must be a whole number in 1..1000000";
        f->burst = (uint32_t)v;
    } else if (item_is(p, name, "reasoning")) {
        if (whole(arg, end, 0, COUNT_MAX, &v) != 0)
            return "N must be a whole number in 0..1000000";
        f->reasoning = (uint32_t)v;
    } else if (item_is(p, name, "html") || item_is(p, name, "crlf") ||
               item_is(p, name, "comments") || item_is(p, name, "nodone") ||
               item_is(p, name, "reject-usage")) {
        return "takes no '@' argument";
    } else {
        return "unknown fault (stall@K:S, drop@K, status@N[:html], html, malformed@K, "
               "error@K, burst@N, reasoning@N, crlf, comments, nodone, reject-usage)";
    }
    return NULL;
}

/* A spec's items joined by '+', each handed to item(p, n, into) in turn;
 * kind names the spec in messages ("fault", "TTS fault").  Returns 0, or
 * TB_EINVAL with the item and why in err. */
typedef const char *(*item_fn)(const char *p, size_t n, void *into);

static int split_items(const char *spec, item_fn item, void *into, const char *kind, char *err,
                       size_t errlen)
{
    const char *p = spec;
    for (;;) {
        const char *plus = strchr(p, '+');
        size_t n = plus != NULL ? (size_t)(plus - p) : strlen(p);
        const char *why;
        if (n == 0)
            return tb_seterr(err, errlen, TB_EINVAL, "%s spec \"%s\": empty item", kind, spec);
        why = item(p, n, into);
        if (why != NULL)
            return tb_seterr(err, errlen, TB_EINVAL, "%s \"%.*s\": %s", kind,
                             (int)(n > 200 ? 200 : n), p, why);
        if (plus == NULL)
            return 0;
        p = plus + 1;
    }
}

int tb_faults_parse(const char *spec, struct tb_faults *f, char *err, size_t errlen)
{
    struct tb_faults g = *f;
    int rc;
    if (spec == NULL || *spec == '\0')
        return 0;
    rc = split_items(spec, parse_item, &g, "fault", err, errlen);
    if (rc == 0)
        *f = g;
    return rc;
}

/* ---- The mock TTS's faults -------------------------------------------- */

#define DRIP_MAX 100000000L

void tb_tts_faults_init(struct tb_tts_faults *f)
{
    memset(f, 0, sizeof(*f));
}

static const char *tts_item(const char *p, size_t n, void *into)
{
    struct tb_tts_faults *f = into;
    const char *end = p + n, *at = memchr(p, '@', n), *arg = at != NULL ? at + 1 : end;
    size_t name = (size_t)((at != NULL ? at : end) - p);
    static const char known[] = "unknown TTS fault (status@N, cut@F, stall, drip@BPS)";
    long v;
    double x;

    if (item_is(p, name, "stall")) {
        if (at != NULL)
            return "takes no '@' argument";
        f->stall = 1;
    } else if (at == NULL) {
        return item_is(p, n, "status") || item_is(p, n, "cut") || item_is(p, n, "drip")
                   ? "needs an '@' argument"
                   : known;
    } else if (item_is(p, name, "status")) {
        if (whole(arg, end, 400, 599, &v) != 0)
            return "N must be an HTTP error status in 400..599";
        f->status = (int)v;
    } else if (item_is(p, name, "cut")) {
        if (seconds(arg, end, &x) != 0 || x >= 1)
            return "F must be a share of the audio bytes, 0 <= F < 1";
        f->cut = x;
        f->has_cut = 1;
    } else if (item_is(p, name, "drip")) {
        if (whole(arg, end, 1, DRIP_MAX, &v) != 0)
            return "BPS must be a whole number of bytes a second in 1..100000000";
        f->drip_bps = (double)v;
    } else {
        return known;
    }
    return NULL;
}

int tb_tts_faults_parse(const char *spec, struct tb_tts_faults *f, char *err, size_t errlen)
{
    struct tb_tts_faults g = *f;
    int rc;
    if (spec == NULL || *spec == '\0')
        return 0;
    rc = split_items(spec, tts_item, &g, "TTS fault", err, errlen);
    if (rc == 0)
        *f = g;
    return rc;
}
