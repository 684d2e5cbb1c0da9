/*
 * bench_tts.h - `ttsbuf bench --tts-url`: the TTS client's options from
 * --tts-*, and each stream's measured TTS replayed in place of the model
 * for its record's numbers (bench_tts.c), as run and sim --trace do
 * (replay.h).  Steps answer as cli.h says.
 */
#ifndef TTSBUF_CLI_BENCH_TTS_H
#define TTSBUF_CLI_BENCH_TTS_H

#include <stddef.h>

#include "bench_opts.h"
#include "ttsbuf/bench.h"
#include "ttsbuf/ttsnet.h"

/* The client's options (*o) from a's --tts-* (base: the built-in mock's
 * root for --tts-url mock); the streams' model options (*sim) lose the
 * model's TTS stage. */
void tb_cli_bench_tts_opts(const struct tb_cli_bench *a, const char *base, struct tb_ttsnet_opts *o,
                           struct tb_sim_opts *sim);

/* The run's options (m->options, JSON) say the TTS was measured, not
 * modelled: voice_model "measured", tts_latency_s null, and "tts_live"
 * the TTS asked for (api, url redacted or "mock" for the built-in
 * mock's, whose port differs by shard, model, voice, sample_rate,
 * concurrency, mock), so merge refuses shards of another TTS and compare
 * names it.  base as above.  0, or an error printed. */
int tb_cli_bench_tts_meta(struct tb_bench_meta *m, const struct tb_cli_bench *a, const char *base);

/* Every record from `from` on with a measured TTS (stream.tts), but a
 * call's turn (played as its TTS ended: below), analysed
 * again with it replayed (replay.h, on the options o), the LLM side
 * (TTFT, decode rates) from the whole stream as it arrived, whatever part
 * of it played (a chunk failed, or the caller interrupted the turn).  0,
 * or an error printed. */
int tb_cli_bench_tts_replay(struct tb_bench_recs *r, size_t from, const struct tb_sim_opts *o);

/* A call's turn played with its measured TTS as its TTS ends (bench.h's
 * tts_replay; ud the level's struct tb_sim_opts *): as above, one record.
 * On a loop's thread. */
int tb_cli_bench_tts_replay_turn(void *ud, struct tb_bench_rec *rec);

#endif
