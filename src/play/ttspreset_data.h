/*
 * ttspreset_data.h - the TTS presets' JSON text, compiled in.  Internal
 * to ttspreset.c; data/tts_presets/gen.sh writes it (gen/tts_presets.c in
 * the build directory) from data/tts_presets/tts_presets.json.
 */
#ifndef TTSBUF_TTSPRESET_DATA_H
#define TTSBUF_TTSPRESET_DATA_H

/* The file's text, NUL-terminated. */
extern const char tb_ttspreset_json[];

#endif
