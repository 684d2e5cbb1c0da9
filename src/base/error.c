/* error.c - names for TB_E* codes and the detail-buffer helper. */
#include "ttsbuf/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *tb_strerror(int err)
{
    switch (err) {
    case TB_OK: return "success";
    case TB_ENOMEM: return "out of memory";
    case TB_EINVAL: return "invalid argument";
    case TB_EIO: return "input/output error";
    case TB_EFORMAT: return "bad format";
    case TB_EFULL: return "buffer full";
    case TB_EEMPTY: return "empty";
    case TB_ETOOBIG: return "too big";
    case TB_ERANGE: return "out of range";
    case TB_EBUSY: return "busy";
    case TB_EDEVICE: return "audio device unavailable";
    case TB_ECANCELED: return "cancelled";
    default: return "unknown error";
    }
}

int tb_seterr(char *buf, size_t len, int code, const char *fmt, ...)
{
    if (buf != NULL && len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
    }
    return code;
}
