/*
 * secrets.h - the secrets of a run (API keys, secret header values, keys
 * in a URL), and the one function that masks them in any text on its way
 * out: error messages, warnings, finish reasons, verbose log lines,
 * records.
 *
 * What counts as an echo of a secret: the secret itself, or any
 * TB_SECRETS_PART or more of its consecutive characters (a server that
 * quotes "sk-proj-abc..." or the first 14 characters), also when the
 * echo is cut by whitespace or control characters ("sk-SEC\nRET", a
 * newline a one-line message turned into a space) or written with
 * escapes: \uXXXX, \xHH, %HH and &#NN; / &#xHH; stand for the character
 * they encode, and \n \r \t \b \f are whitespace, so an escape that
 * reaches output undecoded hides nothing.  A secret shorter than
 * TB_SECRETS_PART is masked only whole (and then anywhere, even inside a
 * word).  Each echo, with the whitespace and escapes inside it, becomes
 * "***" (one under 3 bytes: as many stars), so the text never grows and
 * valid UTF-8 stays valid.  Pieces shorter than TB_SECRETS_PART that
 * stand apart (split by other text) are left: they are too short to tell
 * from ordinary text.  The mask is '*': a secret that itself holds '*'
 * (no API key does) may be left readable where masks complete it.
 *
 * Cost: O(text length x 8) per scrub, and a binary search among the
 * secrets' 8-character windows; the set is built once.
 *
 * Ownership and threads: the caller creates the set, adds every secret,
 * and only then shares it; from then on it is read-only and any number of
 * threads may scrub with it at once (tb_secrets_add must not run
 * concurrently with anything).  tb_secrets_destroy zeroes what it held.
 */
#ifndef TTSBUF_SECRETS_H
#define TTSBUF_SECRETS_H

#include <stddef.h>

/* Consecutive characters of a secret that count as an echo of it. */
#define TB_SECRETS_PART 8

struct tb_secrets;

/* An empty set.  Returns 0 or TB_ENOMEM.  Any thread. */
int tb_secrets_create(struct tb_secrets **out);

/* Frees the set, zeroing what it held; NULL is a no-op. */
void tb_secrets_destroy(struct tb_secrets *s);

/*
 * tb_secrets_add - adds secret[0..len) (copied; whitespace in it is
 * ignored, escapes are read as above; one that is empty then is not
 * added).  Returns 0 or TB_ENOMEM (the set is unchanged).  Only while
 * the set is being built, on one thread.
 */
int tb_secrets_add(struct tb_secrets *s, const char *secret, size_t len);

/* How many secrets the set holds; 0 for NULL.  Any thread. */
size_t tb_secrets_count(const struct tb_secrets *s);

/*
 * tb_secrets_scrub - masks, in the NUL-terminated text, every echo of
 * every secret of s (above), in place.  Returns the text's new length.
 * s NULL or empty: the text is left as it is.  Never fails, allocates
 * nothing.  Any thread, concurrently with other scrubs.
 */
size_t tb_secrets_scrub(const struct tb_secrets *s, char *text);

#endif
