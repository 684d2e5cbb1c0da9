/*
 * trace.h - the JSONL trace format (ttsbuf-trace(5)): read and write.
 *
 * One JSON object per line, UTF-8:
 *   {"ttsbuf_trace": 2, "model": "...", ...}    optional header, first line
 *                                               ("provider": "mock" when the
 *                                               built-in mock answered)
 *   {"t": 0.8123, "text": " Hello"}             an event
 *   {"t": 0.9, "text": "x", "kind": "reasoning", "tokens": 3}
 *   {"usage": {"completion_tokens": 412}}       optional, usually last
 *   {"usage": {...}, "server": {"total_ns": 2100000000, "eval_count": 120,
 *    "eval_ns": 1900000000, ...}}               the provider's own timings
 *                                               (Ollama), keys optional
 *   {"tts": {"chunk": 1, "text": "Hello.", ...}} what a real TTS did with
 *                                               chunk 1 (version 3, after
 *                                               the events; the header
 *                                               then has a "tts" object)
 *   {"end": {"kind": "complete", "t": 2.31, "error": null,
 *            "ignored_bytes": 0}}               how the stream ended
 *                                               (version 2; the last line)
 * Unknown keys are ignored; events with empty text are ignored; blank lines
 * are skipped.  Errors name the place as "NAME:LINE: reason".
 *
 * Versions: the writer writes version 2 (the end line), or 3 when the
 * stream has a TTS log (stream.h's tts: the header's "tts" object and
 * the "tts" lines); the reader reads 1, 2 and 3, and traces without a
 * header, and puts a version-3 trace's TTS log in the stream.  A trace without an end line
 * (version 1, one cut short, a hand-made one) reads with an unknown end
 * (stream.h), which every command says; version 1 has no end line.
 *
 * Threads: any thread, no shared state.  Ownership: the caller owns the
 * stream; on error it holds every event read before the bad line.
 */
#ifndef TTSBUF_TRACE_H
#define TTSBUF_TRACE_H

#include <stdio.h>

#include "ttsbuf/stream.h"

/* The newest format version this ttsbuf reads and writes: 4, the "tool"
 * lines, written only when the stream has tool calls; 3, the "tts" lines,
 * when it has a TTS log (and no tool call); other streams are written as
 * version 2 (TB_TRACE_VERSION_BASE), which older ttsbufs read.  It reads
 * 1 to 4. */
#define TB_TRACE_VERSION 4
#define TB_TRACE_VERSION_TTS 3
#define TB_TRACE_VERSION_BASE 2

/* Longest line accepted, in bytes (ttsbuf(1) LIMITS). */
#define TB_TRACE_LINE_MAX (4u << 20)

/*
 * tb_trace_load_mem - parses buf[0..len) (need not be NUL-terminated) as a
 * trace named `name` in messages, appending to `out`.
 * Returns 0; TB_EFORMAT for invalid JSON, a missing or non-numeric or
 * negative "t", "t" going backwards, a bad "kind" or "tokens", invalid
 * UTF-8, a bad end line or a line after it, a bad "tts" object or line
 * (every rule of ttsbuf-trace(5), the key named); TB_ETOOBIG for a line over
 * TB_TRACE_LINE_MAX; TB_EEMPTY when the trace holds no event (the stream
 * then holds the header and the end, which a recording of a request that
 * failed has: the message says how it ended); TB_ENOMEM.  Detail in err.
 */
int tb_trace_load_mem(const char *buf, size_t len, const char *name, struct tb_stream *out,
                      char *err, size_t errlen);

/* Like tb_trace_load_mem on a file; path "-" reads standard input.  The
 * file is read a line at a time (memory holds the events, not the file;
 * a line over the cap stops the read there).  Adds TB_EIO (with strerror
 * in err) for files that cannot be read; a file of several traces (below)
 * is TB_EFORMAT, naming the line where the second begins. */
int tb_trace_load_file(const char *path, struct tb_stream *out, char *err, size_t errlen);

/*
 * A file of several traces: `bench --out DIR` writes each level's traces
 * into one file, DIR/traces/LEVEL.jsonl, one after another; each opens
 * with its header, which names its request ("request": the id of its
 * record), and closes with its end line.  A header right after an end
 * line begins the next trace; any other line there is an error, as in a
 * file of one trace.
 *
 * tb_trace_file_open: path "-" reads standard input; 0, TB_EIO (strerror
 * in err), TB_ENOMEM.  tb_trace_file_next: the next trace, appended to
 * out (an empty stream, usually): 1 with a trace, 0 after the last; as
 * tb_trace_load_file's errors otherwise, after which the file is done,
 * except TB_EEMPTY: a trace with no event (a failed request's: out holds
 * its header and end), and the next call reads on.  An empty file is one
 * trace with no event.  tb_trace_file_close: NULL is a no-op.  One thread
 * at a time per file.
 */
struct tb_trace_file;
int tb_trace_file_open(const char *path, struct tb_trace_file **out, char *err, size_t errlen);
int tb_trace_file_next(struct tb_trace_file *tf, struct tb_stream *out, char *err, size_t errlen);
void tb_trace_file_close(struct tb_trace_file *tf);
/* After tb_trace_file_next returned a trace (1 or TB_EEMPTY): TB_EFORMAT
 * when another trace follows it ("NAME:LINE: a second trace begins here:
 * ..." in err, the line of its header), else 0 (err untouched).  What
 * tb_trace_load_file refuses a file of several with. */
int tb_trace_file_more(const struct tb_trace_file *tf, char *err, size_t errlen);

/*
 * tb_trace_load_request - the trace of request `id` (its header's
 * "request") in the file at path, into out (an empty stream): as
 * tb_trace_load_file, and TB_EINVAL when no trace there names it ("NAME:
 * no trace of request ID (it holds N, of requests A to B)").
 */
int tb_trace_load_request(const char *path, long long id, struct tb_stream *out, char *err,
                          size_t errlen);

/*
 * tb_trace_write - writes the stream as a trace (version
 * TB_TRACE_VERSION_BASE, or TB_TRACE_VERSION with a TTS log): a header
 * line (with model/base_url when set, and the TTS), one line per event, a
 * usage line when known, a "tts" line per TTS record, and the end line.
 * Numbers are printed so that they read back bit-identical.
 * Returns 0, TB_ENOMEM, or TB_EIO when the FILE reports an error.
 */
int tb_trace_write(FILE *f, const struct tb_stream *s);

/*
 * tb_trace_write_opts - tb_trace_write with the recording command's
 * options in the header: options is a JSON object's text (the caller's,
 * not kept), or NULL for none.  TB_EINVAL when it is not an object.
 */
int tb_trace_write_opts(FILE *f, const struct tb_stream *s, const char *options);

#endif
