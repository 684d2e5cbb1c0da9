/*
 * punkt_tab.h - NLTK's English Punkt parameters as tables: abbreviations,
 * collocations, sentence starters and orthographic contexts.  Internal to
 * the segmenter: punkt_break.c decides with them; data/punkt_tab/gen.sh
 * writes them (gen/punkt_en.c in the build directory) from the data
 * files beside it.
 */
#ifndef TTSBUF_PUNKT_TAB_H
#define TTSBUF_PUNKT_TAB_H

#include <stddef.h>

struct tb_punkt_ortho {
    const char *type;
    int flags;
};

/* The tables, generated from data/punkt_tab/english/ by gen.sh into the
 * build directory (gen/punkt_en.c), each sorted bytewise (strcmp). */
extern const char *const tb_punkt_abbrev[];
extern const size_t tb_punkt_abbrev_n;
extern const char *const tb_punkt_colloc[]; /* "first\tsecond" */
extern const size_t tb_punkt_colloc_n;
extern const char *const tb_punkt_starters[];
extern const size_t tb_punkt_starters_n;
extern const struct tb_punkt_ortho tb_punkt_ortho[];
extern const size_t tb_punkt_ortho_n;

#endif
