/*
 * preset.c - named synthetic streams from published figures (preset.h).
 *
 * Figures: the provider table of "What Is Tokens Per Second (TPS)?" (per
 * request, P50, Llama 4 8B and 70B) and its voice-AI section.  The P95
 * variants take the middle of the article's "40-60% lower".  Response
 * length 300 tokens (its example max_tokens), TTFT 150 ms (its voice
 * target), jitter CV 0.3 (ttsbuf's assumption; the article gives none).
 */
#include "ttsbuf/preset.h"

#include <string.h>

#define COMMON ",ttft=0.15,tokens=300,jitter=0.3,seed=1"

static const struct tb_preset presets[] = {
    {"gc-8b", "tps=210" COMMON, "General Compute, Llama 4 8B: 210 TPS (published P50)"},
    {"groq-8b", "tps=175" COMMON, "Groq, Llama 4 8B: 175 TPS (published P50)"},
    {"together-8b", "tps=125" COMMON, "Together AI, Llama 4 8B: 125 TPS (published P50)"},
    {"gc-70b", "tps=85" COMMON, "General Compute, Llama 4 70B: 85 TPS (published P50)"},
    {"groq-70b", "tps=62" COMMON, "Groq, Llama 4 70B: 62 TPS (published P50)"},
    {"together-70b", "tps=42" COMMON, "Together AI, Llama 4 70B: 42 TPS (published P50)"},
    {"gc-8b-p95", "tps=105" COMMON, "gc-8b under load: P95 50% lower (article: 40-60%)"},
    {"groq-8b-p95", "tps=87.5" COMMON, "groq-8b under load: P95 50% lower"},
    {"together-8b-p95", "tps=62.5" COMMON, "together-8b under load: P95 50% lower"},
    {"gc-70b-p95", "tps=42.5" COMMON, "gc-70b under load: P95 50% lower"},
    {"groq-70b-p95", "tps=31" COMMON, "groq-70b under load: P95 50% lower"},
    {"together-70b-p95", "tps=21" COMMON, "together-70b under load: P95 50% lower"},
    {"voice-60", "tps=60" COMMON, "the article's claim: voice needs 60-80 TPS (low end)"},
    {"voice-80", "tps=80" COMMON, "the article's claim: voice needs 60-80 TPS (high end)"},
    {"mock", "tps=16,ttft=0.3,tokens=120,jitter=0.6,stall=0.03:1.5,seed=37",
     "the built-in mock provider's default stream (16 TPS, CV 0.6, 3% chance of a 1.5 s "
     "stall; about 10 s); made up"},
    {"demo", "tps=7,ttft=0.4,tokens=300,jitter=0.6,stall=0.02:1.5,seed=30",
     "the demo: a slow, jittery stream (7 TPS, CV 0.6, 2% chance of a 1.5 s stall); made up"},
};

const struct tb_preset *tb_preset_find(const char *name)
{
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

const struct tb_preset *tb_preset_all(size_t *n)
{
    *n = sizeof(presets) / sizeof(presets[0]);
    return presets;
}
