/*
 * synth.h - deterministic synthetic token streams.
 *
 * A spec is comma-separated key=value pairs, e.g.
 *   tps=80,ttft=0.3,tokens=400,jitter=0.3,stall=0.02:1.5,burst=1,seed=7
 *   tps     mean decode rate, tokens/s                  (0.001 .. 100000)
 *   ttft    time to the first token, s                  (0 <= ttft <= 3600)
 *   tokens  how many tokens                             (1 .. 10000000)
 *   jitter  coefficient of variation of inter-token times (0 .. 10);
 *           inter-token times are log-normal with that CV
 *   stall   P:S - each inter-token gap, with probability P, gets S more
 *           seconds (0 <= P <= 1, 0 <= S <= 3600)
 *   burst   tokens per event, the last event may carry fewer (1 .. 1000);
 *           the first event arrives at ttft, each later one a token gap
 *           per token it carries after the one before
 *   seed    64-bit seed
 * The text is English prose from a built-in corpus, split into token-sized
 * pieces (a word with its leading space, long words in parts, punctuation
 * alone).  Same spec and seed => identical stream, byte for byte.
 *
 * Threads: any; no shared state.  Ownership: caller owns spec and stream.
 */
#ifndef TTSBUF_SYNTH_H
#define TTSBUF_SYNTH_H

#include <stdint.h>

#include "ttsbuf/stream.h"

struct tb_synth_spec {
    double tps, ttft, jitter, stall_p, stall_s;
    uint32_t tokens, burst;
    uint64_t seed;
};

/* Defaults: tps=80, ttft=0.3, tokens=300, jitter=0.3, stall=0:0,
 * burst=1, seed=1. */
void tb_synth_default(struct tb_synth_spec *spec);

/*
 * tb_synth_parse - parses `text` over the values already in *spec (so a
 * spec may override only some keys).  Returns 0, or TB_EINVAL/TB_ERANGE
 * with a message naming the key and its allowed range.
 */
int tb_synth_parse(const char *text, struct tb_synth_spec *spec, char *err, size_t errlen);

/* Formats a spec back into its canonical text.  Returns snprintf's count. */
int tb_synth_format(const struct tb_synth_spec *spec, char *buf, size_t len);

/* Appends the stream described by spec to out.  Returns 0, TB_EINVAL for
 * a spec outside the ranges above, or TB_ENOMEM. */
int tb_synth_generate(const struct tb_synth_spec *spec, struct tb_stream *out);

#endif
