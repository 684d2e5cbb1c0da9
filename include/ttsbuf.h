/*
 * ttsbuf.h - the whole public API of libttsbuf in one include.
 * Each module's header states its own contract.
 */
#ifndef TTSBUF_H
#define TTSBUF_H

#include "ttsbuf/analyze.h"
#include "ttsbuf/heard.h"
#include "ttsbuf/api.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/bench_prompts.h"
#include "ttsbuf/bench_rec.h"
#include "ttsbuf/bench_stats.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/drain.h"
#include "ttsbuf/draws.h"
#include "ttsbuf/error.h"
#include "ttsbuf/faults.h"
#include "ttsbuf/http.h"
#include "ttsbuf/import.h"
#include "ttsbuf/jsonline.h"
#include "ttsbuf/live.h"
#include "ttsbuf/pcmring.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/preset.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/ring.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/serve.h"
#include "ttsbuf/secrets.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/speaker.h"
#include "ttsbuf/sse.h"
#include "ttsbuf/stats.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/svg.h"
#include "ttsbuf/sweep.h"
#include "ttsbuf/synth.h"
#include "ttsbuf/trace.h"
#include "ttsbuf/tts.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsnet.h"
#include "ttsbuf/utf8.h"
#include "ttsbuf/version.h"
#include "ttsbuf/voice.h"

#endif
