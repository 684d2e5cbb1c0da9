/*
 * cli.c - the CLI's conventions in code (see cli.h): the exit status of a
 * failure, the one-line error, and strict number parsing for options.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "cli.h"
#include "ttsbuf/error.h"

int tb_cli_number_double(const char *flag, const char *s, double lo, double hi, double *out,
                         char *err, size_t errlen)
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

int tb_cli_number_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out,
                       char *err, size_t errlen)
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
    if (end == s && s[0] == '-' && s[1] != '\0' && strspn(s + 1, "0123456789") == strlen(s + 1))
        return tb_seterr(err, errlen, TB_ERANGE, "%s: '%s' is negative (allowed %zu..%zu)", flag,
                         s, lo, hi); /* a whole number, below the range */
    if (end == s || *end != '\0' || errno == ERANGE)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "%s: '%s' is not a whole number (allowed %zu..%zu)", flag, s, lo, hi);
    if (v < lo || v > hi)
        return tb_seterr(err, errlen, TB_ERANGE, "%s: '%s' is outside %zu..%zu", flag, s, lo, hi);
    *out = (size_t)v;
    return 0;
}

/* A parser's rc as a helper's: its message printed. */
static int printed(int rc, const char *err)
{
    if (rc != 0)
        tb_cli_error("%s", err);
    return rc;
}

int tb_cli_opt_double(const char *flag, const char *s, double lo, double hi, double *out)
{
    char err[256];
    return printed(tb_cli_number_double(flag, s, lo, hi, out, err, sizeof(err)), err);
}

int tb_cli_opt_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out)
{
    char err[256];
    return printed(tb_cli_number_size(flag, s, lo, hi, out, err, sizeof(err)), err);
}

int tb_cli_opt_threads(const char *flag, const char *s, size_t hi, size_t *out)
{
    char err[256];
    int rc;
    if (strcmp(s, "auto") == 0) {
        *out = 0;
        return 0;
    }
    rc = tb_cli_number_size(flag, s, 1, hi, out, err, sizeof(err));
    if (rc != 0)
        tb_cli_error("%s: '%s' is not auto or a whole number in 1..%zu", flag, s, hi);
    return rc;
}

int tb_cli_opt_share(const char *flag, const char *s, double *out)
{
    char err[256], pcterr[256];
    double pct = 0;
    int rc = tb_cli_number_double(flag, s, 0, 1, out, err, sizeof(err));
    if (rc != 0) {
        /* A percentage is the common mistake: say what it is as a share. */
        if (tb_cli_number_double(flag, s, 1, 100, &pct, pcterr, sizeof(pcterr)) == 0)
            tb_cli_error("%s: '%s' is outside 0..1 (a share: %g%% is %g)", flag, s, pct, pct / 100);
        else
            tb_cli_error("%s", err);
        return rc;
    }
    if (*out <= 0) {
        tb_cli_error("%s: '%s' is not above 0 (a share, 0 < X <= 1)", flag, s);
        return TB_EINVAL;
    }
    return 0;
}

int tb_cli_exit(int rc)
{
    switch (rc) {
    case 0:
    case TB_CLI_DONE: return TB_EXIT_OK;
    case TB_EINVAL:
    case TB_ERANGE:
    case TB_EFORMAT:
    case TB_EEMPTY:
    case TB_ETOOBIG: return TB_EXIT_USAGE;
    default: return TB_EXIT_FAILED; /* TB_ENOMEM, TB_EIO, TB_EDEVICE, TB_EBUSY, ... */
    }
}

void tb_cli_error(const char *fmt, ...)
{
    char raw[4096], line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    /* What it quotes (a name the user typed, a path, a server's words)
     * goes through the one sanitizer the streams' text does: one line of
     * valid UTF-8, no terminal escapes. */
    tb_jsonfield_line_of(raw, strlen(raw), line, sizeof(line));
    fprintf(stderr, "ttsbuf: %s\n", line);
}
