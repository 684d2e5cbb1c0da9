/* numfmt.c - round-trip formatting of doubles (see numfmt.h). */
#include "numfmt.h"

#include <stdio.h>
#include <stdlib.h>

const char *tb_numfmt_double(char *buf, size_t len, double d)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    return buf;
}
