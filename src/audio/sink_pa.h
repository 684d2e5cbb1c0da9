/*
 * sink_pa.h - private to libttsbuf: the PortAudio sink (sink_pa.c),
 * real-time playback on the sound card's clock.
 */
#ifndef TTSBUF_SINK_PA_H
#define TTSBUF_SINK_PA_H

#include "sink.h"

/* Returns 0 and *out, or a TB_E* code with detail in err.  device: an
 * index ("3") or part of a device's name, NULL or "" for the default
 * output; latency: the output latency asked for, s. */
int tb_sink_pa_create(const char *device, double latency, const struct tb_pcmring_opts *po,
                      struct tb_sink **out, char *err, size_t errlen);

#endif
