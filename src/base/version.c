/*
 * version.c - the version of the library linked (see version.h).
 */
#include "ttsbuf/version.h"

const char *tb_version(void)
{
    return TB_VERSION;
}
