/*
 * punkt_break.h - Punkt's decision for one candidate sentence end, as
 * NLTK's PunktSentenceTokenizer.text_contains_sentbreak takes it on the
 * context of a candidate: the word before it, the candidate and the token
 * that follows.  Internal to the segmenter; punkt.c finds the candidates.
 */
#ifndef TTSBUF_PUNKT_BREAK_H
#define TTSBUF_PUNKT_BREAK_H

#include <stddef.h>
#include <stdint.h>

/* A word of the context: code points [a, b), and its annotations. */
struct tb_punkt_tok {
    size_t a, b;
    int sentbreak, abbr, ellipsis;
};

#define TB_PUNKT_MAX_TOKS 512 /* words read from one decision context */

/*
 * tb_punkt_break - 1 when the n code points s[] contain a sentence break,
 * else 0: s is split into words line by line ('\n') as
 * PunktLanguageVars.word_tokenize does, the words are annotated in NLTK's
 * two passes (first: sentence-end characters, ellipses, known
 * abbreviations; second: collocations, the orthographic heuristic,
 * frequent sentence starters, initials and numbers) with the English
 * tables of punkt.h, and a word other than the last is a break.
 * toks is the caller's scratch of TB_PUNKT_MAX_TOKS entries (so that no
 * decision allocates); words past that many are not read.  Errors: none.
 * O(n).  Any thread, each with its own toks.
 */
int tb_punkt_break(const uint32_t *s, size_t n, struct tb_punkt_tok *toks);

#endif
