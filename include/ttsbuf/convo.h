/*
 * convo.h - conversations to drive load with: what a caller says, turn by
 * turn (convo.c).  A call sends turn k with the whole conversation so far
 * (the system prompt, the caller's turns, and what the model actually
 * answered), so only the caller's side is kept here.
 *
 * Three sources:
 *   - a JSONL file, one conversation a line (schema/conversation.schema.json,
 *     version 1; ttsbuf(1), CONVERSATIONS):
 *       {"id": "...", "system": "...", "turns": ["user turn 1", ...]}
 *     "turns" is required (1 to TB_CONVO_TURNS_MAX non-blank strings);
 *     "id" and "system" are optional non-blank strings; no other key.  A
 *     line may instead be one ShareGPT record (below).  Blank lines are
 *     skipped.
 *   - a ShareGPT-style JSON file: a top-level array of objects, each with
 *     a "conversations" list of {"from": ..., "value": ...}.  The turns
 *     are the "human" (or "user") values, the system prompt the first
 *     "system" value; every other speaker's ("gpt", ...) is ignored.  A
 *     record without a human turn, or with an empty one (datasets hold
 *     such), is skipped and counted (skipped), as the LLM benchmarks that
 *     read these files do; a value of the wrong type is an error.
 *   - the built-in set: short spoken-style conversations written for
 *     ttsbuf (data/conversations/builtin.jsonl, compiled in), read by the
 *     same JSONL reader.
 *
 * The file's kind is its first byte after blanks: '[' a ShareGPT array,
 * anything else JSONL.  Text is kept as it is (valid UTF-8; a lone
 * surrogate escape becomes U+FFFD).
 *
 * Errors (detail in err, one line): TB_EFORMAT "FILE:LINE: reason" for
 * a JSONL line ("FILE:LINE: invalid JSON near byte N", N the byte of the
 * line from 1; "FILE:LINE: turns[2] is not a string"), "FILE:LINE:
 * invalid JSON near byte N" for a ShareGPT file (N from the file's
 * start) and "FILE: [12].conversations[3].value is not a string" for its
 * records; TB_ETOOBIG for a line over TB_CONVO_LINE_MAX bytes, a
 * ShareGPT file over TB_CONVO_FILE_MAX, a ShareGPT record whose tree
 * would take over 64 MiB ("FILE: [12] would take about N MiB to read"),
 * more than TB_CONVO_MAX conversations or TB_CONVO_TURNS_MAX turns in
 * one; TB_EEMPTY when no conversation is left; TB_EIO; TB_ENOMEM.
 *
 * Memory: a JSONL file, one line and what is kept; a ShareGPT file is read
 * whole and walked a record at a time, each parsed alone (at most 64 MiB
 * as a tree): about twice the file and 64 MiB at most.
 *
 * Threads: any; ownership: the caller's (tb_convos_free).
 */
#ifndef TTSBUF_CONVO_H
#define TTSBUF_CONVO_H

#include <stddef.h>

#define TB_CONVO_MAX 100000              /* conversations in a file */
#define TB_CONVO_TURNS_MAX 1000          /* caller's turns in one conversation */
#define TB_CONVO_LINE_MAX (1u << 20)     /* bytes of a JSONL line */
#define TB_CONVO_FILE_MAX (256u << 20)   /* bytes of a ShareGPT JSON file */
#define TB_CONVO_FILE_MAX_TEXT "256 MiB" /* ... for messages */

#define TB_CONVO_TOOLS_MAX 16     /* tools one turn offers */
#define TB_CONVO_TOOL_NAME_MAX 64 /* a tool's name, NUL included */

/* One conversation: the caller's side.  A turn of the JSONL shape may be
 * an object instead of a string: {"text": "...", "tools": [...]}, its
 * tools in OpenAI's function-tool shape ({"type": "function",
 * "function": {"name", "description"?, "parameters"?}}, 1 to
 * TB_CONVO_TOOLS_MAX of them, names of A-Z a-z 0-9 _ -), which the turn's
 * request offers (bench_calls.h, Tool calls). */
struct tb_convo {
    char *id;     /* owned; NULL: none given */
    char *system; /* owned; NULL: none */
    char **turns; /* owned: n_turns non-blank strings */
    char **tools; /* owned: n_turns entries, each the turn's tools as a JSON
                   * array's text, or NULL (none); NULL when no turn */
    size_t n_turns;
};

struct tb_convos {
    struct tb_convo *v;
    size_t n;
    size_t skipped; /* ShareGPT records without a (non-empty) human turn */
};

/* The built-in set.  Returns 0, or TB_ENOMEM (or, if the compiled-in
 * data were broken, its error in err: the convo tests hold it).  Any
 * thread. */
int tb_convos_builtin(struct tb_convos *c, char *err, size_t errlen);

/* A JSONL or ShareGPT file (path "-": standard input).  Returns 0 and *c,
 * or an error above (nothing in *c). */
int tb_convos_load(const char *path, struct tb_convos *c, char *err, size_t errlen);

void tb_convos_free(struct tb_convos *c); /* NULL is a no-op */

#endif
