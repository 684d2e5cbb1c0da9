/* opt.c - the CLI's shared helpers: error lines and strict number parsing
 * for options (see cli.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>

#include "cli.h"
#include "ttsbuf/error.h"

int tb_opt_double(const char *flag, const char *s, double lo, double hi, double *out, char *err,
                  size_t errlen)
{
    char *end;
    double d = 0;
    errno = 0;
    /* strtod skips leading blanks (a "\r5" would pass): the whole text
     * must be the number. */
    if (isspace((unsigned char)*s))
        end = (char *)s;
    else
        d = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(d))
        return tb_seterr(err, errlen, TB_EINVAL, "%s: '%s' is not a number (allowed %g..%g)", flag,
                         s, lo, hi);
    if (d < lo || d > hi)
        return tb_seterr(err, errlen, TB_ERANGE, "%s: '%s' is outside %g..%g", flag, s, lo, hi);
    *out = d;
    return 0;
}

int tb_opt_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out, char *err,
                size_t errlen)
{
    char *end;
    unsigned long long v = 0;
    errno = 0;
    /* strtoull skips blanks and negates a '-': digits only, from the
     * first byte (a fuzzer found "\r1" accepted as 1). */
    if (!isdigit((unsigned char)*s))
        end = (char *)s;
    else
        v = strtoull(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "%s: '%s' is not a whole number (allowed %zu..%zu)", flag, s, lo, hi);
    if (v < lo || v > hi)
        return tb_seterr(err, errlen, TB_ERANGE, "%s: '%s' is outside %zu..%zu", flag, s, lo, hi);
    *out = (size_t)v;
    return 0;
}

/* A parser's rc as an option handler's answer, its error printed. */
static int answer(int rc, const char *err)
{
    if (rc == 0)
        return 1;
    tb_cli_error("%s", err);
    return -1;
}

int tb_cli_opt_double(const char *flag, const char *s, double lo, double hi, double *out)
{
    char err[256];
    return answer(tb_opt_double(flag, s, lo, hi, out, err, sizeof(err)), err);
}

int tb_cli_opt_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out)
{
    char err[256];
    return answer(tb_opt_size(flag, s, lo, hi, out, err, sizeof(err)), err);
}

void tb_cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("ttsbuf: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
