/*
 * readall.h - private to libttsbuf: a whole input file in one buffer, with
 * a hard cap (the trace loader and the importers share it).
 */
#ifndef TTSBUF_READALL_H
#define TTSBUF_READALL_H

#include <stddef.h>
#include <stdio.h>

/*
 * tb_read_all - reads f to its end into a malloc'd buffer (*out, caller
 * frees; not NUL-terminated, though one spare byte past *outlen is
 * allocated).  Returns 0; TB_ETOOBIG past max bytes; TB_EIO (errno kept);
 * TB_ENOMEM.  A regular file is read into one buffer of its size; pipes
 * grow geometrically.
 */
int tb_read_all(FILE *f, size_t max, char **out, size_t *outlen);

/*
 * tb_read_path - tb_read_all on the file at path ("-": standard input),
 * with the detail in err: "NAME: <strerror>", "NAME: over the <cap_text>
 * cap", "NAME: out of memory".  *name is "<stdin>" or path, for the
 * caller's own messages.  Same returns as tb_read_all.
 */
int tb_read_path(const char *path, size_t max, const char *cap_text, char **out, size_t *outlen,
                 const char **name, char *err, size_t errlen);

#endif
