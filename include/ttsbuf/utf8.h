/*
 * utf8.h - the two UTF-8 facts ttsbuf needs: is it valid, how many code
 * points.  Pure functions; any thread; no allocation.
 */
#ifndef TTSBUF_UTF8_H
#define TTSBUF_UTF8_H

#include <stddef.h>

/*
 * tb_utf8_check - validates s[0..len) as UTF-8 (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF).  Returns len when valid, else the
 * byte offset of the first invalid sequence.
 */
size_t tb_utf8_check(const char *s, size_t len);

/* tb_utf8_count - code points in s[0..len); assumes valid UTF-8 (counts
 * bytes that are not continuation bytes). */
size_t tb_utf8_count(const char *s, size_t len);

/*
 * tb_utf8_copy - copies the C string src into dst[0..cap) (cap > 0),
 * NUL-terminated, cut at a character boundary when it does not fit (a cut
 * inside a character would make invalid UTF-8).  Returns the bytes copied.
 */
size_t tb_utf8_copy(char *dst, size_t cap, const char *src);

/* tb_utf8_bom_len - 3 when p[0..len) starts with a UTF-8 byte order mark
 * (EF BB BF, which some editors write at a text file's start), else 0. */
size_t tb_utf8_bom_len(const char *p, size_t len);

#endif
