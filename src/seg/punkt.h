/*
 * punkt.h - Punkt's sentence-boundary decision (Kiss and Strunk 2006) with
 * NLTK's English parameters, as Pipecat's match_endofsentence uses it.
 * Internal to the segmenter.
 *
 * Texts are arrays of code points.  Case folding and the letter/digit
 * classes cover ASCII, Latin-1 and the common Latin, Greek, Cyrillic and
 * CJK blocks (Python's cover all of Unicode): text outside them can be
 * decided differently from NLTK.
 */
#ifndef TTSBUF_PUNKT_H
#define TTSBUF_PUNKT_H

#include <stddef.h>
#include <stdint.h>

/* Working memory for one text of up to TB_PUNKT_MAX code points. */
#define TB_PUNKT_MAX 4096u
struct tb_punkt;
struct tb_punkt *tb_punkt_create(void); /* NULL: out of memory */
void tb_punkt_destroy(struct tb_punkt *p);

/*
 * tb_punkt_pipecat_eos - Pipecat's match_endofsentence(text) for the n
 * code points t[] (n <= TB_PUNKT_MAX): with NLTK's sent_tokenize on the
 * text without trailing whitespace, the length of the first sentence when
 * there are two or more; the whole length when there is one and it ends
 * in sentence-ending punctuation; else the end of the first unambiguous
 * non-Latin sentence end (。！？ ...), or 0.
 */
size_t tb_punkt_pipecat_eos(struct tb_punkt *p, const uint32_t *t, size_t n);

/* Pipecat's SENTENCE_ENDING_PUNCTUATION. */
int tb_punkt_pipecat_end(uint32_t c);

#endif
