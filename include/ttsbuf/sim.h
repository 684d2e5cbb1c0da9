/*
 * sim.h - the simulator: a token stream flows through the ring buffer to a
 * speech-rate consumer, on a clock the caller passes in.
 *
 * Producer: each event is pushed into the ring when the clock reaches its
 * arrival time (later, when the ring is full: backpressure delays it, and
 * the delayed time is what the consumer sees).  Consumer: reads new items
 * as they arrive, feeds the segmenter, hands closed chunks to the playout
 * engine, and releases a chunk's tokens from the ring when its playback
 * needs them (s_j - L; with a TTS stage, when its synthesis begins, b_j).
 * The ring's high-water mark is therefore the
 * largest amount of received-but-unspoken text: the buffer a pipeline
 * must hold.
 *
 * With a virtual clock the run is deterministic and as fast as the CPU
 * allows; with a monotonic clock it paces itself in real time.  Results
 * equal tb_analyze_* on the same stream whenever the ring never fills.
 *
 * Bounded capacity: if the open chunk alone fills the ring, it is cut
 * there (a forced cut); if the ring fills before pre-roll is reached,
 * playback is started at once (a forced start).  Both are counted and
 * make the result depend on the ring size: the report says so.
 *
 * Threads: one thread (both roles are driven by the event loop, so the
 * run is deterministic).  Ownership: caller owns stream, options, clock
 * and result; the simulator frees everything it allocates.
 */
#ifndef TTSBUF_SIM_H
#define TTSBUF_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/analyze.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttslat.h"
#include "ttsbuf/turnlat.h"
#include "ttsbuf/voice.h"

#define TB_RING_SLOTS_DEFAULT 65536u
#define TB_RING_BYTES_DEFAULT (4u << 20)

struct tb_sim_opts {
    struct tb_seg_opts seg;
    struct tb_playout_opts play;
    size_t ring_slots;            /* default TB_RING_SLOTS_DEFAULT */
    size_t ring_bytes;            /* default TB_RING_BYTES_DEFAULT */
    const struct tb_voice *voice; /* borrowed; NULL (default): the rate model */
    /* The turn's wait (turnlat.h): the caller's end of speech before the
     * request, seconds (default 0), and chunk j's leading silence: the
     * hook (playout.h's latency signature: >= 0, pure in j; NAN: not
     * measured), or, when NULL, lead_s (default 0: the model's audio is
     * audible from its first byte).  eou_at (NULL: none) is the end of
     * turn of turn k (k >= 1, pure in k), for a caller that plays many
     * turns under these options (bench: the request's id + 1 sets eou_s);
     * tb_sim_run itself reads eou_s only. */
    double eou_s;
    tb_tts_latency_fn eou_at;
    void *eou_ud;
    tb_tts_latency_fn lead_at;
    void *lead_ud;
    double lead_s;
    /* Turn k's own draws (tb_sim_opts_turn): a drawn TTS latency or
     * leading silence (tb_ttslat_at) seeded for the turn. */
    struct tb_ttslat_seeded turn_lat, turn_lead;
};

void tb_sim_opts_default(struct tb_sim_opts *o);

/* Sets o for turn k (k >= 1) of a caller that plays many turns: eou_s =
 * eou_at(k) when eou_at is set, and a drawn TTS latency (play's
 * tts_latency_at) and leading silence (lead_at) of tb_ttslat_at get the
 * turn's own draws: chunk j's of the k-th seed derived from theirs
 * (tb_ttslat_draw_seed), so that turns do not all draw the same; the
 * hooks then point into o, which must outlive the run.  Else o is left as
 * it is.  Bench plays request id as turn id + 1 (and sim --trace of its
 * trace the same): its records, its page and its replay agree. */
void tb_sim_opts_turn(struct tb_sim_opts *o, uint32_t k);
/* The same for the TTS draws alone (eou_s left as it is): sim --trace of
 * a bench turn, whose end of turn its trace records. */
void tb_sim_opts_turn_draws(struct tb_sim_opts *o, uint32_t k);

struct tb_curve_point {
    double preroll, min_tps, ttfa, gap_total, gap_max;
    uint32_t underruns;
};

struct tb_sim_result {
    struct tb_playout_result play;
    size_t events; /* all non-empty events */
    size_t content_events, reasoning_events;
    uint64_t content_tokens, reasoning_tokens;
    long long usage_tokens;  /* from the stream, -1 when unknown */
    double ttft;             /* first content event's arrival */
    double last_t;           /* last event's arrival */
    double last_content_t;   /* last content event's arrival */
    uint32_t first_tokens;   /* tokens of the first content event */
    double decode_tps;       /* (n-1)/(a_{n-1}-a_0), content events */
    double decode_tps_usage; /* (usage - first_tokens)/(a_{n-1}-a_0), or 0
                              * when usage is unknown: servers that batch
                              * tokens into events are not under-counted */
    /* ring */
    size_t ring_slots, ring_bytes; /* capacities used */
    size_t hw_items, hw_bytes;
    double hw_speech_s;
    uint64_t backpressure_waits;
    double backpressure_s;
    uint32_t forced_cuts;
    int forced_start;
    struct tb_curve_point curve[TB_CURVE_POINTS];
    struct tb_turn_lat lat; /* where the wait went (turnlat.h) */
};

/* Records usage.completion_tokens (-1: unknown) and the decode rate it
 * implies.  Call after the counts are filled.  Any thread. */
void tb_sim_result_set_usage(struct tb_sim_result *r, long long usage_tokens);

/*
 * tb_sim_run - simulates the stream.  fn (may be NULL) receives each
 * chunk's schedule.  Returns 0; TB_EEMPTY when the stream has no content
 * event (unless its end says it was cut off or failed, or it holds tool
 * calls, an answer with nothing to speak: then the result is that of
 * nothing played); TB_ETOOBIG when one event's text exceeds the
 * ring's byte capacity; TB_EINVAL for bad options; TB_ENOMEM.  Detail in
 * err.
 */
int tb_sim_run(const struct tb_stream *s, const struct tb_sim_opts *o, struct tb_clock *clk,
               tb_play_fn fn, void *ud, struct tb_sim_result *r, char *err, size_t errlen);

#endif
