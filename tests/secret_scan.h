/*
 * secret_scan.h - what the end-to-end secrecy tests share: the ways a
 * hostile server quotes back the key it was sent, and the search of every
 * output for the key or any 8 characters of it, as written or put back
 * together (whitespace and escapes dropped).  Failures end the current
 * case.
 */
#ifndef TTSBUF_TESTS_SECRET_SCAN_H
#define TTSBUF_TESTS_SECRET_SCAN_H

#include <stddef.h>

/* key quoted every way into out: whole, its first 14 characters, cut into
 * pieces of 7 by a newline and a space, with every '-' escaped as \u002d,
 * and base64-encoded ("Basic " of "user:KEY", and the key alone).  json:
 * as the text of a JSON string (the newline escaped); else raw text,
 * where a tab and a literal \n cut it. */
void secret_echo_forms(const char *key, int json, char *out, size_t len);

/* Fails when text[0..n) holds key, or any 8 characters of it, as written
 * or rejoined, or 8 characters of its base64 (either alphabet, any
 * alignment) that come from its bits alone; where names it. */
void secret_assert_unquoted(const char *where, const char *text, size_t n, const char *key);

/* Every file under dir (recursively; a .jsonl's "text" strings also
 * joined), checked; *files counts them. */
void secret_assert_dir_unquoted(const char *dir, const char *key, int *files);

#endif
