/*
 * import.h - benchmark results people already have, turned into token
 * streams: one struct tb_stream per request, named, ready for the
 * simulator (`ttsbuf sim --import FORMAT:FILE`, and `sweep`).
 *
 * Formats (fields relied on are cited in each src/import/import_*.c):
 *   vllm        `vllm bench serve --save-result --save-detailed` JSON: one
 *               object with per-request arrays ttfts[i] (s), itls[i][k]
 *               (s), generated_texts[i], output_lens[i], errors[i].
 *               Chunk 0 arrives at ttfts[i], chunk k at
 *               ttfts[i] + sum(itls[i][0..k)).  With --append-result
 *               each run adds one such object on a line of its own: every
 *               run is read, its requests tagged with the run (1, 2, ...).
 *   sglang      `python -m sglang.bench_serving --output-file F
 *               --output-details`: JSONL, one such object per line (each
 *               run appends a line; the line is the run); same arrays.
 *   genai-perf  NVIDIA GenAI-Perf profile_export.json: experiments[e].
 *               requests[r] with timestamp (ns), response_timestamps[k]
 *               (ns) and response_outputs[k].response (raw SSE bytes: one
 *               entry may hold several events or part of one, so they go
 *               through the SSE parser as one byte stream), or
 *               response_outputs[k].text_output (Triton: plain text).
 *   aiperf-raw  NVIDIA AIPerf profile_export_raw.jsonl (--export-level
 *               raw): one record a line, start_perf_ns and responses[k]
 *               with perf_ns and either packets [{name, value}] (one SSE
 *               message) or text (raw SSE bytes).
 *               A run without --streaming keeps one plain JSON body per
 *               request: one event at the response time (not_streamed).
 *   aiperf      NVIDIA AIPerf profile_export.jsonl: one record a line,
 *               metrics.time_to_first_token (ttft before 2025-10-10) and
 *               metrics.inter_chunk_latency ({value, unit}),
 *               metrics.output_token_count; with a reasoning model
 *               time_to_first_output_token and reasoning_token_count.
 *   auto        any of the above, told apart by its content
 *               (tb_import_detect).
 * The event JSON inside SSE payloads is read by the stream reader
 * (reader.h) in the OpenAI dialect (api.h): content spoken, reasoning
 * recorded as reasoning, usage kept.
 *
 * Approximations (also in ttsbuf(1) and --help):
 *  - vllm/sglang record no per-chunk text: generated_texts[i] is cut into
 *    token-like pieces (a word with its leading space, punctuation alone)
 *    and the pieces are spread evenly over the chunks (code points when
 *    there are fewer pieces than chunks; chunks left without text are
 *    dropped and counted in empty_chunks); output_lens[i] tokens are
 *    spread the same way (at least one per chunk) and become the usage.
 *  - aiperf records (and vllm/sglang files without generated_texts) carry
 *    no text: speech time is estimated from each chunk's tokens, which get
 *    chars_per_token characters each of ttsbuf's synthetic prose (the
 *    same prose for every request, so the result does not depend on a
 *    request's place in the file); `estimated` counts these requests.
 *  - aiperf with a reasoning model: the chunks before
 *    time_to_first_output_token are reasoning (counted, never spoken) and
 *    carry reasoning_token_count; the rest carry output_token_count, which
 *    is also the usage.
 * Times are seconds from the request's start.
 *
 * Errors name the place: "FILE:LINE: ..." for JSONL, "FILE: PATH: ..."
 * with a JSON path like itls[3][7] for JSON documents.  A request the
 * tool itself recorded as failed is kept, with its error text and
 * whatever it received.
 *
 * Ownership: the caller owns the struct tb_import (tb_import_free).
 * Threads: any thread; no shared state.  Parsing is a pure function of
 * the bytes (tb_import_mem), for fuzzing.
 */
#ifndef TTSBUF_IMPORT_H
#define TTSBUF_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/stream.h"

enum tb_import_format {
    TB_IMPORT_VLLM = 0,
    TB_IMPORT_SGLANG,
    TB_IMPORT_GENAI_PERF,
    TB_IMPORT_AIPERF_RAW,
    TB_IMPORT_AIPERF,
    TB_IMPORT_AUTO, /* tell the format from the content */
    TB_IMPORT__COUNT
};

/* Memory: a JSON document is read whole (at most TB_IMPORT_FILE_MAX) and
 * walked, never parsed at once; each piece read (a request, one request's
 * itls, a JSONL line) is parsed alone and refused, named, when its tree
 * would take over 64 MiB (cJSON's node for "0," is 80 bytes for 2).  So an
 * import takes the file, what it builds from it, and at most 64 MiB more,
 * whatever the file holds. */
#define TB_IMPORT_FILE_MAX ((size_t)1 << 30)  /* bytes of one input file */
#define TB_IMPORT_LINE_MAX ((size_t)64 << 20) /* one line of a JSONL file, read as a stream */
#define TB_IMPORT_REQUESTS_MAX 10000000u      /* requests in one file */
/* What an import builds from counts rather than reads: the events and the
 * estimated text of requests recorded without text, whose size comes
 * from a token count, not from the bytes of the file.  A request may
 * estimate as much text as a live stream may hold (TB_READER_TEXT_MAX,
 * 256 MiB), and all of them together take at most this many bytes (events
 * at 32 bytes each, plus their text: about 30 million tokens at 4
 * characters a token).  Past either, the request's place is named and
 * the import fails (TB_ETOOBIG). */
#define TB_IMPORT_ESTIMATED_MAX ((uint64_t)1 << 30)

struct tb_import_request {
    char name[128];          /* e.g. "request 3", "line 7 (session 6)" */
    struct tb_stream stream; /* may be empty when error is set */
    char error[256];         /* "" or the failure the tool recorded */
    int stream_error;        /* enum tb_reader_error (reader.h): how a stream read
                                from raw SSE bytes ended; 0 otherwise */
    char warning[256];       /* "" or the stream reader's warning on a stream
                                read from raw SSE bytes that still ended well
                                (a finish reason but no end marker) */
    unsigned run;            /* vllm/sglang: its run, 1, 2, ...: the vllm document,
                                or the sglang result line (non-blank lines counted) */
};

#define TB_IMPORT_CPT_DEFAULT 4.0 /* characters a token, text-less imports */

struct tb_import {
    struct tb_import_request *req;
    size_t n, cap;
    size_t empty_chunks;          /* vllm/sglang: chunks left without text */
    double chars_per_token;       /* in: set before reading (init: 4) */
    enum tb_import_format format; /* out: the format read (auto: the one found) */
    unsigned runs;                /* out: vllm/sglang runs (documents) read */
    size_t estimated;             /* out: requests with no text: speech time estimated */
    uint64_t estimated_bytes;     /* out: what they take (TB_IMPORT_ESTIMATED_MAX) */
    size_t not_streamed;          /* out: genai-perf requests that were not streamed */
};

/* Empty, chars_per_token TB_IMPORT_CPT_DEFAULT. */
void tb_import_init(struct tb_import *im);
void tb_import_free(struct tb_import *im); /* NULL is a no-op */

/* "vllm", "sglang", "genai-perf", "aiperf-raw", "aiperf", "auto". */
const char *tb_import_format_name(enum tb_import_format f);

/* Parses "FORMAT:FILE", "auto:FILE" or a bare FILE (auto): 0 with *f and
 * *path (pointing into spec); TB_EINVAL for an empty file name.  A prefix
 * that is no format's name is part of the file name ("a:b.json"). */
int tb_import_spec(const char *spec, enum tb_import_format *f, const char **path, char *err,
                   size_t errlen);

/*
 * tb_import_mem - parses buf[0..len) (need not be NUL-terminated) in
 * format f (TB_IMPORT_AUTO: the one tb_import_detect finds), `name`
 * naming it in messages; appends one request per request in the input
 * and sets out->format.  A named format that the content contradicts
 * fails with what the file looks like ("NAME: this looks like an SGLang
 * bench_serving result; try sglang:NAME").  Returns 0; TB_EFORMAT (that,
 * a file of no known format under auto, invalid JSON, a missing
 * or mistyped field, a time that is negative or goes backwards, bad
 * UTF-8, bad event JSON in an SSE payload); TB_ETOOBIG (a cap); TB_EEMPTY
 * (no request at all); TB_ENOMEM.  Detail in err.  On error *out holds
 * the requests read before the bad one.
 */
int tb_import_mem(enum tb_import_format f, const char *buf, size_t len, const char *name,
                  struct tb_import *out, char *err, size_t errlen);

/*
 * tb_import_detect - what buf[0..len) looks like, from the keys of its
 * first JSON object.  Returns 0 with *f (a format) when it is a file one
 * of the formats reads; TB_EFORMAT when it is recognised but unreadable
 * (*f is TB_IMPORT__COUNT, e.g. an AIPerf summary) or not recognised (*what
 * NULL).  *what, when not NULL, describes it ("an SGLang bench_serving
 * result"): a static string.  Pure; any thread.
 */
int tb_import_detect(const char *buf, size_t len, enum tb_import_format *f, const char **what);

/* Keeps only the requests of run `run` (1-based), renumbering nothing.
 * Returns 0, or TB_EINVAL when the file has no such run. */
int tb_import_keep_run(struct tb_import *im, unsigned run);

/* tb_import_mem on a file ("-": standard input).  The format is told
 * (TB_IMPORT_AUTO) or checked from the file's first 64 KiB.  The JSONL
 * formats (sglang, aiperf-raw, aiperf) are read a line at a time from a
 * file, each line capped at TB_IMPORT_LINE_MAX as its bytes arrive; the
 * JSON documents (vllm, genai-perf) and standard input whole, capped at
 * TB_IMPORT_FILE_MAX (a larger regular file fails before it is read; a NUL
 * byte stops the read with TB_EFORMAT).  Adds TB_EIO with strerror in err. */
int tb_import_file(enum tb_import_format f, const char *path, struct tb_import *out, char *err,
                   size_t errlen);

#endif
