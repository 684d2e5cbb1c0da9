/*
 * ttspreset.h - TTS engine presets: the first-byte latency, concurrency,
 * real-time factor, connect latency, output mode and input policy of the
 * engines voice agents use, each figure with its source.
 *
 * The presets are data/tts_presets/tts_presets.json, compiled into the
 * library (no data file is read at run time).  Every figure is either
 * known, with the source it comes from (a URL or a file of ttsbuf's
 * tree, the source's date when it has one, who measured it), or unknown,
 * with a note saying why; nothing is guessed.  Latencies are ttslat.h
 * specs.  The file's "about" states how a p90 is derived from a published
 * median and interquartile range.
 *
 * Ownership: tb_ttspreset_load returns a set the caller destroys; every
 * string in it lives as long as the set.  A set is read-only once loaded:
 * any thread may read it.
 */
#ifndef TTSBUF_TTSPRESET_H
#define TTSBUF_TTSPRESET_H

#include <stddef.h>

#include "ttsbuf/playout.h"

#define TB_TTSPRESET_SCHEDULE_MAX 8 /* entries of a chunk_length_schedule */

struct tb_ttspreset_source {
    const char *id;
    const char *url;         /* NULL when the source is a file of ttsbuf's tree */
    const char *file;        /* that file, or NULL */
    const char *date;        /* the source's date (YYYY, YYYY-MM-DD), or NULL: undated */
    const char *measured_by; /* who measured, and what */
};

/* One figure.  known = 0: no source gives it, note says so. */
struct tb_ttspreset_fig {
    int known;
    double value;                             /* latency: unused (see spec); others: the figure */
    const char *spec;                         /* latency only: a ttslat.h spec, or NULL */
    const struct tb_ttspreset_source *source; /* NULL when unknown */
    const char *note;                         /* never NULL for an unknown figure */
};

/* The input policy the engine implies (its documented default). */
enum tb_ttspreset_policy {
    TB_TTSPRESET_NONE = 0,  /* the client's chunks as they are */
    TB_TTSPRESET_SCHEDULE,  /* characters buffered per chunk (ElevenLabs) */
    TB_TTSPRESET_MAX_DELAY, /* buffered until enough context or a delay (Cartesia) */
    TB_TTSPRESET_FLUSH,     /* the client flushes (Deepgram) */
    TB_TTSPRESET_SENTENCE   /* one sentence at a time (Piper) */
};

struct tb_ttspreset {
    const char *name;
    const char *engine; /* what it is, in a line */
    const char *note;   /* what the preset models and lacks, in a line */
    struct tb_ttspreset_fig latency, connect, concurrency, rtf;
    /* How the engine returns a chunk's audio: always given, with its
     * source (output.value is an enum tb_tts_output, output.known 1). */
    struct tb_ttspreset_fig output;
    enum tb_ttspreset_policy policy;
    unsigned schedule[TB_TTSPRESET_SCHEDULE_MAX]; /* SCHEDULE: characters */
    size_t schedule_n;
    double max_delay_s;                              /* MAX_DELAY: seconds */
    const struct tb_ttspreset_source *policy_source; /* NULL when none */
    const char *policy_note;
};

struct tb_ttspreset_set;

/*
 * tb_ttspreset_load - the compiled-in presets.  Returns 0 and *out (caller
 * destroys); TB_EFORMAT when the data breaks a rule above (a figure
 * without its source or note, a source without a URL or file, a repeated
 * name, a spec ttslat.h refuses, an output that is not "stream" or
 * "whole" or has no source, no one-line note; a build error, which the
 * tests catch),
 * with the preset and key in err; TB_ENOMEM.  Any thread.
 */
int tb_ttspreset_load(struct tb_ttspreset_set **out, char *err, size_t errlen);

/*
 * tb_ttspreset_parse - the same from a JSON text of the same form
 * (text[0..len), not NUL-terminated).  For tests and fuzzing.
 */
int tb_ttspreset_parse(const char *text, size_t len, struct tb_ttspreset_set **out, char *err,
                       size_t errlen);

void tb_ttspreset_destroy(struct tb_ttspreset_set *s);

/* The presets; *n receives the count. */
const struct tb_ttspreset *tb_ttspreset_all(const struct tb_ttspreset_set *s, size_t *n);

/* The preset called name, or NULL. */
const struct tb_ttspreset *tb_ttspreset_find(const struct tb_ttspreset_set *s, const char *name);

/* The policy's name as the data file writes it. */
const char *tb_ttspreset_policy_name(enum tb_ttspreset_policy p);

#endif
