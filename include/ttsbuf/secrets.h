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
 * word).  A secret of TB_SECRETS_PART characters or more is also echoed
 * base64-encoded (RFC 4648's alphabet or its URL-safe one, padded or not,
 * as a server quoting an "Authorization: Basic" header or a key it
 * encoded does): its bytes as given, blanks left out, encoded after 0, 1
 * or 2 bytes of something else, and of each such encoding the characters
 * made of the secret's bits alone; TB_SECRETS_PART or more consecutive of
 * those are an echo (the one or two characters at either end that mix in
 * a neighbour's bits are left).  Each echo, with the whitespace and
 * escapes inside it, becomes
 * "***" (one under 3 bytes: as many stars), so the text never grows and
 * valid UTF-8 stays valid.  Pieces shorter than TB_SECRETS_PART that
 * stand apart (split by other text) are left: they are too short to tell
 * from ordinary text.  The mask is '*': a secret that itself holds '*'
 * (no API key does) may be left readable where masks complete it.
 *
 * The scrubber has a second mode for the streamed answer, whose numbers
 * must not change (tb_secrets_mask, tb_secrets_masker_*): the same echoes,
 * found by the same rules, masked in place at equal length.  Each letter
 * and digit of an echo (raw or escaped: every byte of the escape) becomes
 * '*', each character outside ASCII one of as many bytes (U+00D7, U+2217
 * or U+1F7B1 for 2, 3 or 4 bytes); its whitespace, controls and ASCII
 * punctuation stay as they are, unless an echo is made of punctuation
 * alone, which is then all '*'.  So the text keeps its bytes, code
 * points, words and lines, and the punctuation every chunking policy cuts
 * at: the rate model's durations and the chunks of the policies that cut
 * on counts, whitespace or punctuation are those of the text unmasked.
 * Policies that also read the words around a sentence end (pipecat's
 * Punkt, livekit: abbreviations, initials, numbers, case) may cut
 * differently next to a masked echo.  What it shows of a secret is where
 * its punctuation was, never one of its letters or digits, and never
 * TB_SECRETS_PART characters of it.
 *
 * Cost: O(text length x 8) per scrub, and a binary search among the
 * secrets' 8-character windows; the set is built once.  The equal-length
 * mode reads each byte once: a window is looked up in a 4 KiB bit filter of
 * the windows first (a miss, the common case, costs a multiply and a
 * load), so scanning a streamed delta costs a few ns a byte.
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
 * added).  Returns 0 or TB_ENOMEM (some of its windows may then be in the
 * set, which is not to be used: give up).  Only while
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

/*
 * tb_secrets_mask - masks, in text[0..len) (no NUL needed), every echo of
 * every secret of s at equal length (above), in place.  Returns how many
 * bytes it changed (0: none).  s NULL or empty: nothing.  Never fails,
 * allocates nothing.  Any thread, concurrently with other masks.
 */
size_t tb_secrets_mask(const struct tb_secrets *s, char *text, size_t len);

/*
 * A masker: tb_secrets_mask over a text that arrives in pieces (a
 * stream's deltas), with the same result as one tb_secrets_mask over the
 * whole text: an echo cut across pieces is found when its last character
 * arrives, and then masked in the pieces before too.  It remembers the
 * last TB_SECRETS_PART characters it read (where they are, and what they
 * were before masking), never the text: the caller keeps the whole text
 * in one buffer, each piece appended, and passes the buffer each time (it
 * may move between calls).  What the caller has already handed on of an
 * earlier piece (played it, say) is beyond reach: the characters of an
 * echo that came in pieces before the one that brought its 8th character
 * (a short secret: its last) may have been handed on as they were; every
 * byte still in the buffer is masked.  A unit the piece ends in the
 * middle of (an escape, a UTF-8 sequence) is read with the next piece
 * (at most 9 bytes, handed on unmasked).
 *
 * Ownership: the caller's, one per text.  Threads: one thread at a time
 * per masker; the set is shared read-only.
 */
struct tb_secrets_masker;

/* A masker at offset 0.  Returns 0 or TB_ENOMEM.  Any thread. */
int tb_secrets_masker_create(struct tb_secrets_masker **out);

/* Frees it; NULL is a no-op. */
void tb_secrets_masker_destroy(struct tb_secrets_masker *m);

/* Starts a new text, whose bytes from offset `from` on are to be read
 * (those before are not the masker's). */
void tb_secrets_masker_reset(struct tb_secrets_masker *m, size_t from);

/*
 * tb_secrets_masker_feed - text[0..len) is the text so far (every byte
 * fed before still where it was, the new piece appended): masks, in
 * place, every echo of s that ends in the new bytes, in them and in the
 * bytes before.  final: the text ends here (a unit cut at the end is read
 * as it is).  Returns how many bytes it changed.  s NULL or empty:
 * nothing (the masker skips the bytes).  Never fails, allocates nothing.
 */
size_t tb_secrets_masker_feed(struct tb_secrets_masker *m, const struct tb_secrets *s, char *text,
                              size_t len, int final);

#endif
