/*
 * ttsapi_priv.h - private to libttsbuf: the row type of the TTS dialect
 * table (ttsapi.c) and the rows, each defined in a file of its own.
 */
#ifndef TTSBUF_TTSAPI_PRIV_H
#define TTSBUF_TTSAPI_PRIV_H

#include <cJSON.h>
#include <stddef.h>

#include "ttsbuf/ttsapi.h"

/* A request's parts once the defaults are in: never NULL, rate > 0. */
struct tb_ttsapi_parts {
    const char *model, *voice;
    unsigned rate;
    char *voice_esc; /* the voice, percent-escaped for a path segment */
};

struct tb_ttsapi_dialect {
    struct tb_ttsapi_info info;
    /* A header line every request carries beside the key
     * ("Cartesia-Version: ..."), or NULL. */
    const char *fixed_header;
    /* The path (after the base URL's own) into out, the voice put in;
     * returns the length snprintf would. */
    int (*path)(const struct tb_ttsapi_parts *p, char *out, size_t outlen);
    /* The query pairs, "name=value" unescaped, into q[0..*n) (at most 4,
     * each of at most 160 bytes); *n = 0 for none. */
    void (*query)(const struct tb_ttsapi_parts *p, char q[][160], size_t *n);
    /* Adds the body's fields to the object root, the text (len bytes,
     * valid UTF-8, NUL-terminated) included.  0 or TB_ENOMEM. */
    int (*body)(cJSON *root, const char *text, const struct tb_ttsapi_parts *p);
    /* The provider's own error shape in root, one line into out, or
     * leaves out "" (then the common reader tries). */
    void (*error)(const cJSON *root, char *out, size_t outlen);
    /* Whether the voice is a part of the request (0: the model names
     * it, and a voice given is refused). */
    int takes_voice;
};

extern const struct tb_ttsapi_dialect tb_ttsapi_dialect_openai;     /* ttsapi_openai.c */
extern const struct tb_ttsapi_dialect tb_ttsapi_dialect_elevenlabs; /* ttsapi_elevenlabs.c */
extern const struct tb_ttsapi_dialect tb_ttsapi_dialect_deepgram;   /* ttsapi_deepgram.c */
extern const struct tb_ttsapi_dialect tb_ttsapi_dialect_cartesia;   /* ttsapi_cartesia.c */

/* Adds a string field (NULL when memory runs out). */
static inline int tb_ttsapi_add_str(cJSON *o, const char *k, const char *v)
{
    return cJSON_AddStringToObject(o, k, v) != NULL ? 0 : -1;
}

#endif
