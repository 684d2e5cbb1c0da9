/*
 * trace_priv.h - private to src/source (trace.c's): the trace loader's state and its
 * line step, shared by the buffer reader (trace.c) and the file reader
 * (trace_file.c: one trace, or each trace of a file of several).
 *
 * Threads: any, no shared state.  The loader points into the caller's
 * stream and error buffer; it owns nothing.
 */
#ifndef TTSBUF_SOURCE_TRACE_PRIV_H
#define TTSBUF_SOURCE_TRACE_PRIV_H

#include <stddef.h>

#include "ttsbuf/stream.h"

/* tb_trace_load_line's return when the line is a header after an end
 * line: the next trace of a file of several begins there (the line is
 * not consumed: load it into the next trace). */
#define TB_TRACE_NEXT 1

struct trace_loader {
    const char *name;
    size_t line;
    double last_t;
    int have_event; /* an event line was seen (its t orders the next) */
    int lines_seen; /* non-blank lines so far */
    int version;    /* the header's "ttsbuf_trace"; 0: no header */
    int ended;      /* the end line was read: it is the last */
    int tts_lines;  /* a "tts" line was read: no event may follow */
    struct tb_stream *out;
    char *err;
    size_t errlen;
};

/* One line (no '\n') at L->line: 0, TB_TRACE_NEXT, or an error
 * (trace.h's, "NAME:LINE: reason" in L->err). */
int tb_trace_load_line(struct trace_loader *L, const char *p, size_t len);

/* 0, or TB_EEMPTY (said in L->err) when no event was appended since the
 * stream held n0. */
int tb_trace_load_done(const struct trace_loader *L, size_t n0);

/* The error for a second trace (its header at LINE) where one was asked
 * for: TB_EFORMAT, "NAME:LINE: ..." in err. */
int tb_trace_several(const char *name, size_t line, char *err, size_t errlen);

#endif
