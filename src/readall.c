/*
 * readall.c - a whole input file in one buffer, capped (see readall.h).
 */
#include "readall.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

int tb_read_path(const char *path, size_t max, const char *cap_text, char **out, size_t *outlen,
                 const char **name, char *err, size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    int rc;

    *name = is_stdin ? "<stdin>" : path;
    if (f == NULL)
        return tb_seterr(err, errlen, TB_EIO, "%s: %s", *name, strerror(errno));
    rc = tb_read_all(f, max, out, outlen);
    if (rc == TB_EIO)
        tb_seterr(err, errlen, rc, "%s: %s", *name, strerror(errno));
    else if (rc == TB_ETOOBIG)
        tb_seterr(err, errlen, rc, "%s: over the %s cap", *name, cap_text);
    else if (rc != 0)
        tb_seterr(err, errlen, rc, "%s: out of memory", *name);
    if (!is_stdin)
        fclose(f);
    return rc;
}
