/*
 * punkt_class.h - the character classes Punkt's regular expressions use
 * (Python's, for the blocks punkt.h names), shared by the word tokenizer
 * (punkt_break.c) and the sentence splitter (punkt.c).  Internal to the
 * segmenter.
 *
 * Pure functions of one code point, inline because the tokenizer calls
 * them for every code point of every decision context.
 */
#ifndef TTSBUF_PUNKT_CLASS_H
#define TTSBUF_PUNKT_CLASS_H

#include <stdint.h>

#include "seg_livekit.h"

/* Python's str.isspace. */
static inline int tb_punkt_space(uint32_t c)
{
    return tb_seg_py_space(c);
}

/* Latin Extended-A pairs: capital at the even (or, in 0x139-0x148 and
 * 0x179-0x17E, the odd) code point, small letter right after it. */
static inline int tb_punkt_latin_a_upper(uint32_t c)
{
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
        return (c & 1u) != 0;
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
        return (c & 1u) == 0;
    return c == 0x130 || c == 0x178;
}

static inline int tb_punkt_latin_a_lower(uint32_t c)
{
    return c >= 0x100 && c <= 0x17F && !tb_punkt_latin_a_upper(c);
}

static inline int tb_punkt_is_upper(uint32_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) ||
           tb_punkt_latin_a_upper(c) || c == 0x386 ||
           (c >= 0x388 && c <= 0x38F && c != 0x38B && c != 0x38D) ||
           (c >= 0x391 && c <= 0x3AB && c != 0x3A2) || (c >= 0x400 && c <= 0x42F) || c == 0x2126;
}

static inline int tb_punkt_is_lower(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || c == 0xAA || c == 0xB5 || c == 0xBA ||
           (c >= 0xDF && c <= 0xFF && c != 0xF7) || tb_punkt_latin_a_lower(c) || c == 0x390 ||
           (c >= 0x3AC && c <= 0x3CE) || (c >= 0x430 && c <= 0x45F) || (c >= 0xFB00 && c <= 0xFB06);
}

static inline uint32_t tb_punkt_fold(uint32_t c)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) ||
        (c >= 0x391 && c <= 0x3AB && c != 0x3A2) || (c >= 0x410 && c <= 0x42F))
        return c + 32;
    if (c >= 0x400 && c <= 0x40F)
        return c + 80;
    if (c == 0x386)
        return 0x3AC;
    if (c >= 0x388 && c <= 0x38A)
        return c + 37;
    if (c == 0x38C)
        return 0x3CC;
    if (c == 0x38E || c == 0x38F)
        return c + 63;
    if (c == 0x178)
        return 0xFF;
    if (c == 0x2126)
        return 0x3C9;
    if (tb_punkt_latin_a_upper(c) && c != 0x130)
        return c + 1;
    return c;
}

/* [^\W\d]: a letter (or '_'). */
static inline int tb_punkt_letter(uint32_t c)
{
    return tb_punkt_is_upper(c) || tb_punkt_is_lower(c) || c == '_' || c == 0xAA || c == 0xB5 ||
           c == 0xBA || (c >= 0x180 && c <= 0x24F) || (c >= 0x3040 && c <= 0x30FF) ||
           (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
           (c >= 0xAC00 && c <= 0xD7AF);
}

static inline int tb_punkt_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

/* NonWord: ) " ; } ] * : @ ' ( { [ ? ! */
static inline int tb_punkt_nonword(uint32_t c)
{
    return c == ')' || c == '"' || c == ';' || c == '}' || c == ']' || c == '*' || c == ':' ||
           c == '@' || c == '\'' || c == '(' || c == '{' || c == '[' || c == '?' || c == '!';
}

/* WordStart excludes ( " ` { [ : ; & # * @ ) } ] - , */
static inline int tb_punkt_wordstart(uint32_t c)
{
    return !(c == '(' || c == '"' || c == '`' || c == '{' || c == '[' || c == ':' || c == ';' ||
             c == '&' || c == '#' || c == '*' || c == '@' || c == ')' || c == '}' || c == ']' ||
             c == '-' || c == ',');
}

static inline int tb_punkt_sent_end(uint32_t c)
{
    return c == '.' || c == '?' || c == '!';
}

static inline int tb_punkt_closer(uint32_t c)
{
    return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}';
}

#endif
