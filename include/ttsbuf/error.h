/*
 * error.h - ttsbuf's error codes.
 *
 * Every fallible library function returns 0 on success or one of the
 * negative TB_E* codes below.  Functions that can say more take an optional
 * caller buffer (char *err, size_t errlen) and write a one-line,
 * NUL-terminated detail into it, e.g. "trace.jsonl:12: \"t\" goes backwards".
 * The library never prints and never exits; the CLI decides what to show.
 */
#ifndef TTSBUF_ERROR_H
#define TTSBUF_ERROR_H

#include <stddef.h>

enum {
    TB_OK = 0,
    TB_ENOMEM = -1,    /* an allocation failed */
    TB_EINVAL = -2,    /* a bad argument or option value */
    TB_EIO = -3,       /* reading or writing a file failed (errno is kept) */
    TB_EFORMAT = -4,   /* input does not follow its format */
    TB_EFULL = -5,     /* the ring has no room now (backpressure, not a fault) */
    TB_EEMPTY = -6,    /* nothing to read now, or an empty input */
    TB_ETOOBIG = -7,   /* input exceeds a documented cap */
    TB_ERANGE = -8,    /* a number outside its allowed range */
    TB_EBUSY = -9,     /* a process-wide resource is in use */
    TB_EDEVICE = -10,  /* no audio device, or it cannot be opened */
    TB_ECANCELED = -11 /* stopped on the caller's request (a cancel flag) */
};

/*
 * tb_strerror - a short English name for an error code.
 * Returns a static string; never NULL.  Any thread.
 */
const char *tb_strerror(int err);

/*
 * tb_seterr - format a detail message into an optional caller buffer.
 * Does nothing when buf is NULL or len is 0.  Returns code, so callers can
 * write `return tb_seterr(err, errlen, TB_EINVAL, "...")`.  Any thread.
 */
int tb_seterr(char *buf, size_t len, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
