/*
 * readall.c - a whole input file in one buffer, or its lines one at a
 * time, capped (see readall.h).
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
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        /* Over the cap before a byte is read (a sparse file of gigabytes). */
        if ((uint64_t)st.st_size > max)
            return TB_ETOOBIG;
        cap = (size_t)st.st_size + 1;
    }
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
        /* Text never holds a NUL byte: /dev/zero and binary files stop at
         * the first block, not at the cap. */
        if (n > 0 && memchr(buf + len, '\0', n) != NULL) {
            *outlen = len + (size_t)((char *)memchr(buf + len, '\0', n) - (buf + len));
            free(buf);
            return TB_EFORMAT;
        }
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
    else if (rc == TB_EFORMAT)
        tb_seterr(err, errlen, rc, "%s: a NUL byte at byte %zu (not a text file)", *name,
                  *outlen + 1);
    else if (rc != 0)
        tb_seterr(err, errlen, rc, "%s: out of memory", *name);
    if (!is_stdin)
        fclose(f);
    return rc;
}

/* One read block: large enough that fread's cost per byte is small. */
#define LINES_BLOCK ((size_t)1 << 16)

void tb_lines_init(struct tb_lines *l, FILE *f, size_t max)
{
    memset(l, 0, sizeof(*l));
    l->f = f;
    l->max = max;
}

void tb_lines_free(struct tb_lines *l)
{
    free(l->line);
    free(l->blk);
    l->line = l->blk = NULL;
    l->len = l->cap = l->pos = l->end = 0;
}

/* Appends n bytes to the line, growing it geometrically up to max + 1. */
static int lines_put(struct tb_lines *l, const char *p, size_t n)
{
    if (n > l->max - l->len)
        return TB_ETOOBIG;
    if (l->len + n + 1 > l->cap) {
        size_t cap = l->cap ? l->cap : 256;
        char *nb;
        while (cap < l->len + n + 1)
            cap *= 2;
        if (cap > l->max + 1)
            cap = l->max + 1;
        nb = realloc(l->line, cap);
        if (nb == NULL)
            return TB_ENOMEM;
        l->line = nb;
        l->cap = cap;
    }
    memcpy(l->line + l->len, p, n);
    l->len += n;
    return 0;
}

int tb_lines_next(struct tb_lines *l)
{
    int any = 0, rc;
    l->len = 0;
    if (l->blk == NULL && (l->blk = malloc(LINES_BLOCK)) == NULL)
        return TB_ENOMEM;
    l->lineno++;
    for (;;) {
        if (l->pos == l->end) {
            if (l->eof)
                break;
            l->pos = 0;
            l->end = fread(l->blk, 1, LINES_BLOCK, l->f);
            if (l->end == 0) {
                if (ferror(l->f))
                    return TB_EIO;
                l->eof = 1;
                break;
            }
        }
        {
            const char *s = l->blk + l->pos;
            const char *nl = memchr(s, '\n', l->end - l->pos);
            size_t n = nl != NULL ? (size_t)(nl - s) : l->end - l->pos;
            any = 1;
            if ((rc = lines_put(l, s, n)) != 0)
                return rc;
            l->pos += n;
            if (nl != NULL) {
                l->pos++;
                break;
            }
        }
    }
    if (!any) {
        l->lineno--;
        return 0;
    }
    if (l->line == NULL && (rc = lines_put(l, "", 0)) != 0)
        return rc;
    l->line[l->len] = '\0';
    return 1;
}

int tb_lines_fail(const struct tb_lines *l, int got, const char *name, size_t cap, char *err,
                  size_t errlen)
{
    if (got == TB_ETOOBIG)
        return tb_seterr(err, errlen, got, "%s:%zu: line is over the %zu-byte cap", name, l->lineno,
                         cap);
    if (got == TB_EIO)
        return tb_seterr(err, errlen, got, "%s: %s", name, strerror(errno));
    return tb_seterr(err, errlen, got, "%s: out of memory", name);
}
