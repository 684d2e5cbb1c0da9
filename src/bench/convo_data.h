/*
 * convo_data.h - the built-in conversations' JSONL text, compiled in.
 * Internal to convo.c; data/conversations/gen.sh writes it
 * (gen/convo_builtin.c in the build directory) from
 * data/conversations/builtin.jsonl.
 */
#ifndef TTSBUF_CONVO_DATA_H
#define TTSBUF_CONVO_DATA_H

/* The file's text, NUL-terminated. */
extern const char tb_convo_builtin_jsonl[];

#endif
