/*
 * preset.h - named synthetic streams, from published figures.
 *
 * The provider presets carry the per-request decode rates of the provider
 * table in the article ttsbuf set out to check ("What Is Tokens Per Second
 * (TPS)?"): published figures, not measurements.  "-p95" variants are 50%
 * lower (the article says P95 under load is 40-60% lower than P50).  The
 * "voice-60" and "voice-80" presets are the article's "voice needs 60-80
 * TPS" claim.  All use the article's example response length (300 tokens)
 * and voice TTFT target (150 ms); the jitter (CV 0.3) is ttsbuf's
 * assumption, stated in the about text.
 *
 * Static, read-only data: any thread.
 */
#ifndef TTSBUF_PRESET_H
#define TTSBUF_PRESET_H

#include <stddef.h>

struct tb_preset {
    const char *name;
    const char *spec;  /* a tb_synth spec */
    const char *about; /* one line: where the figure comes from */
};

/* The mock provider's stream when none is given: `ttsbuf serve`, and the
 * built-in mock of `run` and `bench`, stream the same answer. */
#define TB_PRESET_MOCK "mock"

/* The preset called name, or NULL. */
const struct tb_preset *tb_preset_find(const char *name);

/* All presets; *n receives the count. */
const struct tb_preset *tb_preset_all(size_t *n);

#endif
