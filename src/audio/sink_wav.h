/*
 * sink_wav.h - private to libttsbuf: the WAV sink (sink_wav.c), the player
 * pulled on a virtual audio clock into a file.
 */
#ifndef TTSBUF_SINK_WAV_H
#define TTSBUF_SINK_WAV_H

#include <stdatomic.h>
#include <stdio.h>

#include "sink.h"

/* Where and how much the WAV sink writes. */
struct tb_sink_wav_opts {
    const char *path;         /* the file (created), or NULL with stream */
    FILE *stream;             /* or a seekable file, borrowed (not closed) */
    double max_s;             /* the clock stops here: TB_ERANGE (> 0) */
    double keep_s;            /* the file keeps the first keep_s s (0: all) */
    const atomic_int *cancel; /* non-zero: stop (TB_ECANCELED); may be NULL */
};

/* Returns 0 and *out, or a TB_E* code with detail in err (TB_ERANGE for a
 * cap over what a WAV file holds). */
int tb_sink_wav_create(const struct tb_sink_wav_opts *o, const struct tb_pcmring_opts *po,
                       struct tb_sink **out, char *err, size_t errlen);

#endif
