/*
 * readall.h - private to libttsbuf: a whole input file in one buffer, or
 * its lines one at a time, with a hard cap (the trace loader, the bench
 * records reader and the importers share it).
 */
#ifndef TTSBUF_READALL_H
#define TTSBUF_READALL_H

#include <stddef.h>
#include <stdio.h>

/*
 * tb_read_all - reads f to its end into a malloc'd buffer (*out, caller
 * frees; not NUL-terminated, though one spare byte past *outlen is
 * allocated).  Returns 0; TB_ETOOBIG past max bytes (a regular file
 * larger than max before any read); TB_EFORMAT at a NUL byte, its offset
 * in *outlen (checked as the bytes arrive: no text holds one); TB_EIO
 * (errno kept); TB_ENOMEM.  A regular file is read into one buffer of its
 * size; pipes grow geometrically.
 */
int tb_read_all(FILE *f, size_t max, char **out, size_t *outlen);

/*
 * tb_read_path - tb_read_all on the file at path ("-": standard input),
 * with the detail in err: "NAME: <strerror>", "NAME: over the <cap_text>
 * cap", "NAME: a NUL byte at byte N (not a text file)", "NAME: out of
 * memory".  *name is "<stdin>" or path, for the
 * caller's own messages.  Same returns as tb_read_all.
 */
int tb_read_path(const char *path, size_t max, const char *cap_text, char **out, size_t *outlen,
                 const char **name, char *err, size_t errlen);

/*
 * Lines of a stream with a cap enforced as the bytes arrive: memory stays
 * below the cap plus one read block, whatever the input (/dev/zero, a
 * sparse file of gigabytes without a newline).  The caller owns the
 * struct; tb_lines_free releases what it holds, not f.
 */
struct tb_lines {
    FILE *f;
    size_t max;    /* longest line, in bytes without its '\n' */
    size_t lineno; /* 1-based number of the line last returned */
    char *line;    /* the line last returned, NUL-terminated, no '\n' */
    size_t len;
    size_t cap;
    char *blk; /* read-ahead: blk[pos..end) not yet consumed */
    size_t pos, end;
    int eof;
};

void tb_lines_init(struct tb_lines *l, FILE *f, size_t max);

/*
 * tb_lines_next - the next line in l->line / l->len (valid until the next
 * call).  Returns 1 with a line, 0 at the end of the input, TB_ETOOBIG
 * when line l->lineno is over l->max (nothing past max + one block was
 * read), TB_EIO (errno kept), TB_ENOMEM.
 */
int tb_lines_next(struct tb_lines *l);

void tb_lines_free(struct tb_lines *l);

/*
 * tb_lines_fail - the one-line message of a tb_lines_next failure got
 * (< 0) on the input called name, into err: "NAME:LINE: line is over the
 * CAP-byte cap" (TB_ETOOBIG; cap: the limit the caller documents, which
 * may be a little under l->max), "NAME: <strerror(errno)>" (TB_EIO),
 * "NAME: out of memory".  Returns got.  Every reader of lines reports
 * through it, so that they say the same.
 */
int tb_lines_fail(const struct tb_lines *l, int got, const char *name, size_t cap, char *err,
                  size_t errlen);

#endif
