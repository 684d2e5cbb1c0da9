/*
 * sink.h - private to libttsbuf: the interface the speaker's sinks share
 * (sink_wav.h, sink_pa.h make them).
 *
 * A sink takes each chunk's PCM with the time it becomes playable, and
 * plays it through a player (pcmring.h) on its own audio clock: the WAV
 * sink on a virtual clock it advances itself, the PortAudio sink on the
 * sound card's.  Every call comes from the speaker's (the drain's) thread.
 */
#ifndef TTSBUF_SINK_H
#define TTSBUF_SINK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/pcmring.h"

struct tb_sink {
    const struct tb_sink_ops *ops;
    struct tb_pcmring *player;
    unsigned rate;
    double latency;                     /* output latency granted (PortAudio), s */
    double offset;                      /* stream seconds at the audio clock's frame 0 */
    double capped_at;                   /* the render reached its cap: its audio ends
                                         * at this stream time, s (what comes after
                                         * is dropped, the run goes on); NAN: not */
    _Atomic uint64_t device_underflows; /* PortAudio: paOutputUnderflow seen */
};

struct tb_sink_ops {
    /* PCM playable from `due` (stream seconds, non-decreasing: the virtual
     * clock's sinks), or `delay` seconds after this call (real-time sinks).
     * The sink copies it.  Returns 0 or a TB_E* code with detail in err. */
    int (*chunk)(struct tb_sink *s, double due, double delay, const int16_t *pcm, size_t n,
                 char *err, size_t errlen);
    /* No more PCM (a fed provider's speech failed before the stream
     * ended): the player ends once what was handed over has played, so
     * the silence until finish is the tail, not a gap.  NULL: the sink
     * needs no word (the WAV sink's clock only moves when asked). */
    void (*end)(struct tb_sink *s);
    /* End of stream: play out, close.  Returns 0 or a TB_E* code. */
    int (*finish)(struct tb_sink *s, char *err, size_t errlen);
    void (*destroy)(struct tb_sink *s);
};

#endif
