/*
 * readall.c - a whole input file in one buffer, capped (see readall.h).
 */
#include "readall.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "ttsbuf/error.h"

int tb_read_all(FILE *f, size_t max, char **out, size_t *outlen)
{
    struct stat st;
    size_t cap = 1 << 16, len = 0;
    char *buf;
    /* A regular file: one buffer of the right size (+1 so EOF is seen
     * without growing).  Pipes grow geometrically. */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < max)
        cap = (size_t)st.st_size + 1;
    buf = malloc(cap);
    if (buf == NULL)
        return TB_ENOMEM;
    for (;;) {
        size_t n;
        if (len == cap) {
            char *nb;
            if (cap >= max) {
                free(buf);
                return TB_ETOOBIG;
            }
            cap = cap > max / 2 ? max : cap * 2;
            nb = realloc(buf, cap + 1);
            if (nb == NULL) {
                free(buf);
                return TB_ENOMEM;
            }
            buf = nb;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                free(buf);
                return TB_EIO;
            }
            break;
        }
    }
    *out = buf;
    *outlen = len;
    return 0;
}
