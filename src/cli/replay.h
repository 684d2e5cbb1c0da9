/*
 * replay.h - `sim --trace` of a trace that kept what a real TTS did (its
 * "tts" lines, ttsbuf-trace(5)): the measured TTS replayed in place of a
 * model, with no network (replay.c).
 *
 * The stream is cut by the chunk policy as usual; each chunk must be the
 * recorded chunk of the same number, byte for byte (else the replay stops
 * and says which, with the recording's policy).  Chunk j plays with its
 * measured duration, first-byte latency and real-time factor
 * (tb_playout_opts_measured); a chunk whose synthesis failed ends the
 * speech there: the chunks before it play, and the report says so.  A
 * chunk stopped while its audio came ("canceled" with audio: a barge-in,
 * or the run stopped) plays the audio that came, and the speech ends
 * with it: a first audible sample in it counts when it played by the
 * chunk's stop (tb_cli_replay_heard_by).
 * Option handlers and steps answer as cli.h says.
 */
#ifndef TTSBUF_CLI_REPLAY_H
#define TTSBUF_CLI_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/playout.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/voice.h"

struct tb_cli_tts;

/* What the replay holds while sim plays. */
struct tb_cli_replay {
    int on;                            /* the measured TTS is replayed */
    const struct tb_tts_log *log;      /* the trace's (borrowed) */
    struct tb_tts_log upto;            /* a view of its first `upto.n` records: those
                                        * played, before the failed one, and it
                                        * too when spoke_cut (owns nothing) */
    const struct tb_tts_chunk *failed; /* the record that ended the speech, or NULL */
    int spoke_cut;                     /* failed was stopped while its audio came
                                        * ("canceled" with audio): what came plays */
    struct tb_stream view;             /* the stream up to the failed chunk's text
                                        * (owned; empty when nothing is cut) */
    int cut;                           /* view holds the stream played */
    struct tb_tts_measured ctx;        /* the playout hooks' context */
    struct tb_voice voice;             /* the measured durations, the texts checked */
    const char *recorded_policy;       /* the recording's --chunk, or "" */
    uint32_t seen;                     /* chunks the voice was asked for */
    char mismatch[1024];               /* the first chunk that differs, or "" */
    struct tb_tts_stats stats;         /* the whole log's */
};

/* 1 when `sim` replays s's measured TTS: the trace has "tts" lines and no
 * option sets a TTS model (--tts, --tts-latency, --tts-rtf,
 * --tts-concurrency, --tts-connect, --tts-output), which asks "what if"
 * instead. */
int tb_cli_replay_wanted(const struct tb_stream *s, const struct tb_cli_tts *t);
/* 1 when an option sets a TTS model (the list above). */
int tb_cli_replay_model_given(const struct tb_cli_tts *t);

/*
 * tb_cli_replay_prepare - when wanted, sets o (the playout hooks, the
 * voice) to replay s's log and returns the stream to play in *play (s, or
 * the view that ends before the failed chunk).  Speech output (speech
 * set: --audio, --voice-model espeak) with a measured TTS is refused: the
 * trace keeps the TTS's timings, not its audio (--html's page goes
 * without: html_report.h).  name is the trace's, for
 * messages.  0, or an error printed (TB_EINVAL, TB_EFORMAT, TB_ENOMEM).
 */
int tb_cli_replay_prepare(struct tb_cli_replay *rp, const struct tb_stream *s,
                          struct tb_sim_opts *o, int speech, const char *name,
                          const struct tb_stream **play);

/* After the run: 0 when every chunk matched its record, else the first
 * difference printed (one line, with the recording's chunk policy beside
 * this run's, policy) and TB_EFORMAT. */
int tb_cli_replay_check(struct tb_cli_replay *rp, const char *name, const char *policy);

/* When the speech ended at a failed chunk the simulator played the
 * stream up to it: r's LLM side (events, tokens, TTFT, decode rate,
 * usage) is then set from the whole stream s, which all arrived (a run
 * of the simulator without the TTS).  0, or TB_ENOMEM printed. */
int tb_cli_replay_arrived(const struct tb_cli_replay *rp, const struct tb_stream *s,
                          const struct tb_sim_opts *o, struct tb_sim_result *r);

/* A turn whose speech stopped at `stop` (the stream's clock; NAN: the
 * end of the record rp played in part, when spoke_cut, else none), its
 * playback started at ttfa: tb_turn_lat_heard_by (turnlat.h) on lat.
 * tb_cli_replay_arrived applies it. */
void tb_cli_replay_heard_by(const struct tb_cli_replay *rp, double stop, struct tb_turn_lat *lat,
                            double ttfa);

/* What the minimum TPS is not, under a time-based policy (NULL when it
 * is given): its chunks are re-cut at every rate of the search, and the
 * measured TTS is by chunk. */
const char *tb_cli_replay_whatif_reason(const struct tb_cli_replay *rp,
                                        const struct tb_sim_opts *o);

/* The one line run and sim say when a chunk of the measured TTS ended the
 * speech (rp->failed): the chunk, the kind, the HTTP status, the
 * provider's message, the TTS (its dialect and URL, which holds no key),
 * and, when s's end says the LLM transfer was stopped for it (error "tts",
 * live.h), when and after how many events.  who: "run", or the trace. */
void tb_cli_replay_error(const char *who, const struct tb_cli_replay *rp,
                         const struct tb_stream *s);

void tb_cli_replay_free(struct tb_cli_replay *rp);

#endif
