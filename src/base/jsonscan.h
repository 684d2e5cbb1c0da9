/*
 * jsonscan.h - private to libttsbuf: a JSON document walked without
 * building it, so a reader parses it a piece at a time.
 *
 * cJSON builds a whole document as a tree of 64-byte nodes, a node and
 * its allocation for every value: "[0,0,0,...]" takes about 40 times its
 * size (a 255 MiB file, 10 GB).  The readers of whole files (the
 * conversations' ShareGPT arrays, the importers' JSON documents) walk
 * the top levels here instead, skip what they do not read, and hand
 * cJSON one piece at a time (a conversation, a request, one member),
 * each first priced by tb_jsonscan_cost and refused over
 * TB_JSON_PIECE_MAX.  So a reader holds the file, what it builds from
 * it, and at most one piece's tree: TB_JSON_PIECE_MAX more than the file
 * and its result, whatever the file holds.
 *
 * The walk checks the structure (brackets that match, strings that end,
 * commas and colons where they belong, nesting at most
 * TB_JSON_DEPTH_MAX, cJSON's limit) and takes a scalar as cJSON's parser
 * would read it (a run of number characters, or null, true, false, and
 * Python's NaN, Infinity and -Infinity, which the importers rewrite):
 * what it accepts, cJSON then reads or refuses in the piece, with the
 * offset.  Linear, no allocation.  Any thread.
 */
#ifndef TTSBUF_JSONSCAN_H
#define TTSBUF_JSONSCAN_H

#include <stddef.h>

/* The most memory one piece's cJSON tree may take (tb_jsonscan_cost). */
#define TB_JSON_PIECE_MAX ((size_t)64 << 20)
#define TB_JSON_PIECE_MAX_TEXT "64 MiB"
/* Nesting, as cJSON's CJSON_NESTING_LIMIT. */
#define TB_JSON_DEPTH_MAX 1000

/*
 * tb_jsonscan_skip - the JSON value at s[*pos..len) (blanks before it
 * skipped): *pos just after it.  Returns 0, or TB_EFORMAT with *pos at
 * the byte that is wrong (or len for a text that ends inside it).
 */
int tb_jsonscan_skip(const char *s, size_t len, size_t *pos);

/*
 * tb_jsonscan_cost - what cJSON would allocate to parse s[0..len), a
 * valid value, in bytes: 80 for each value (a node and its malloc
 * header), and each string's and key's bytes plus 32.  An estimate from
 * above for glibc's allocator; linear.
 */
size_t tb_jsonscan_cost(const char *s, size_t len);

/* An array's items or an object's members, in order. */
struct tb_jsonscan_it {
    const char *s;
    size_t len;
    size_t pos;   /* where the next item is looked for */
    size_t index; /* items returned so far */
    char close;   /* ']' or '}' */
    int done;
};

/*
 * tb_jsonscan_open - a walk of the array or object at s[pos..len)
 * (blanks before it skipped).  Returns 0, or TB_EFORMAT when no '[' or
 * '{' is there (it->pos at that byte).
 */
int tb_jsonscan_open(struct tb_jsonscan_it *it, const char *s, size_t len, size_t pos);

/*
 * tb_jsonscan_next - the next item: returns 1 with its value at
 * s[*vs..*ve) and, for an object, its key's text between the quotes at
 * s[*ks..*ke) (escapes as written; NULL key arguments for an array); 0
 * after the last (it->pos just after the closing bracket); TB_EFORMAT
 * with it->pos at the byte that is wrong.
 */
int tb_jsonscan_next(struct tb_jsonscan_it *it, size_t *ks, size_t *ke, size_t *vs, size_t *ve);

/* Whether the key s[ks..ke) (as tb_jsonscan_next gives it) is name, an
 * ASCII name without escapes; a key written with escapes is compared
 * decoded. */
int tb_jsonscan_key_is(const char *s, size_t ks, size_t ke, const char *name);

#endif
