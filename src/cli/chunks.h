/*
 * chunks.h - `sim --chunks`: each chunk's text, the content event whose
 * arrival released it, and its schedule (ready, start, duration; with a
 * TTS stage also sent and done: b_j and d_j).
 *
 * The texts come from running the segmenter over the stream's content
 * events again (the same library code the simulator drives), paired by
 * index with the schedule the simulator reported.  A forced cut (the ring
 * too small for one chunk) makes the simulator's chunks differ from the
 * plain segmentation; the list then says so instead of pairing wrongly.
 */
#ifndef TTSBUF_CLI_CHUNKS_H
#define TTSBUF_CLI_CHUNKS_H

#include <stdio.h>

#include "plays.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"

struct tb_cli_chunk {
    uint64_t from, to; /* byte span in `text` */
    uint32_t event;    /* 0-based index among the content events */
};

struct tb_cli_chunks {
    char *text; /* the content text, concatenated (owned) */
    struct tb_cli_chunk *v;
    size_t n;
    const struct tb_gap_list *plays; /* every chunk's schedule, borrowed */
    int mismatch;                    /* the simulator's chunks are not the plain segmentation */
    int stage;                       /* a TTS stage: sent and done are shown */
};

/* Segments s's content events with opts.  Returns 0 or TB_ENOMEM (or the
 * segmenter's TB_EINVAL).  plays is borrowed until tb_cli_chunks_free;
 * stage: the run had a TTS stage (tb_playout_has_stage). */
int tb_cli_chunks_build(const struct tb_stream *s, const struct tb_seg_opts *opts,
                        const struct tb_gap_list *plays, int stage, struct tb_cli_chunks *out);
void tb_cli_chunks_free(struct tb_cli_chunks *c);

/* The human table. */
void tb_cli_chunks_print(FILE *f, const struct tb_cli_chunks *c);

/* Sets "chunks" of a JSON report object to the array of chunks (it
 * replaces the chunk count, which is the array's length) (a cJSON *, passed as
 * void * so that cJSON stays out of the headers).  Returns 0 or
 * TB_ENOMEM. */
int tb_cli_chunks_json(void *root, const struct tb_cli_chunks *c);

#endif
