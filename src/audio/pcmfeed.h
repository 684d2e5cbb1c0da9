/*
 * pcmfeed.h - private to libttsbuf: a TTS provider's PCM as it arrives,
 * put in chunk order and timed for a sink (pcmfeed.c).  The speaker
 * (speaker.h, tb_speaker_pcm) owns one when it plays a provider's audio
 * instead of eSpeak NG's.
 *
 * Input: chunk j's next bytes (mono s16le, any split, odd ones included)
 * with their arrival time t, and chunk j's end.  Chunks may arrive
 * interleaved (a client with several in flight): chunk j+1's bytes and
 * end are held until chunk j has ended, then released in their order.  A
 * chunk that ends failed is the last: what came of it plays, later chunks
 * are dropped.
 *
 * Output: pieces of PCM, in chunk order, through the out callback, with a
 * time each becomes playable:
 *   live   (real-time sink) each call's whole samples at once, due at the
 *          arrival time (the sink plays them as they come);
 *   timed  (virtual clock) in 20 ms frames counted from each chunk's first
 *          byte: a frame is due at the arrival of the byte that completes
 *          it (a chunk's last, shorter frame at its last byte); and
 *          nothing goes out before the start s_1 = max(the first frame's
 *          due, the first t when the audio arrived, every chunk counted,
 *          reaches the pre-roll), or at finish (the pre-roll not reached)
 *          max(the first frame's due, the last arrival), the playout
 *          model's rule (ttsbuf-model(7)).  Pieces due earlier go out at
 *          s_1; the player then plays frame i at max(the end of frame
 *          i-1, its due).
 *
 * Memory: bytes held for later chunks, and pieces held for the start,
 * together at most max_held frames (TB_ETOOBIG past it).  Holding costs
 * O(held records) per call for a chunk that is not playing, and a chunk's
 * end compacts the records: fine for the few chunks a client has in
 * flight.
 *
 * Ownership: create/destroy.  Threads: one (the speaker's).
 */
#ifndef TTSBUF_AUDIO_PCMFEED_H
#define TTSBUF_AUDIO_PCMFEED_H

#include <stddef.h>
#include <stdint.h>

#define TB_PCMFEED_FRAME_S 0.020

/* One piece out: n frames playable from due (stream seconds,
 * non-decreasing in timed mode).  Returns 0 or a TB_E* code, which the
 * feed returns to its caller (the detail is the callback's to keep). */
typedef int (*tb_pcmfeed_out_fn)(void *ud, double due, const int16_t *pcm, size_t n);

struct tb_pcmfeed_opts {
    unsigned rate;   /* Hz (> 0) */
    int timed;       /* timed (1) or live (0), above */
    double preroll;  /* timed: seconds arrived before the start (>= 0) */
    size_t max_held; /* frames held at most (> 0) */
    tb_pcmfeed_out_fn out;
    void *ud;
};

struct tb_pcmfeed;

/* Returns 0 and *out, TB_EINVAL (options) or TB_ENOMEM. */
int tb_pcmfeed_create(const struct tb_pcmfeed_opts *o, struct tb_pcmfeed **out);
void tb_pcmfeed_destroy(struct tb_pcmfeed *f); /* NULL is a no-op */

/*
 * tb_pcmfeed_data - chunk j (from 1) received n more bytes at t (>= 0).
 * Returns 0 (also when the speech has ended and they are dropped),
 * TB_EINVAL (j 0, t not finite and >= 0, pcm NULL, chunk j already
 * ended), TB_ETOOBIG (past max_held), TB_ENOMEM, or the out callback's
 * code.  Detail in err, except the callback's.
 */
int tb_pcmfeed_data(struct tb_pcmfeed *f, uint32_t j, double t, const void *pcm, size_t n,
                    char *err, size_t errlen);

/*
 * tb_pcmfeed_end - chunk j has all its audio (t, the end's time, is
 * checked only); failed: it is the last chunk that plays.  An odd byte
 * left over is dropped.  Returns as tb_pcmfeed_data.
 */
int tb_pcmfeed_end(struct tb_pcmfeed *f, uint32_t j, double t, int failed, char *err,
                   size_t errlen);

/*
 * tb_pcmfeed_finish - the stream ended: chunks that have not ended end
 * now, in order (a chunk never heard of is skipped), and the start is
 * made (timed).  Idempotent.  Returns 0, TB_ETOOBIG, TB_ENOMEM (detail in
 * err) or the out callback's code.
 */
int tb_pcmfeed_finish(struct tb_pcmfeed *f, char *err, size_t errlen);

/* Whether the speech is over (a failed chunk ended, or finish): nothing
 * more goes out. */
int tb_pcmfeed_over(const struct tb_pcmfeed *f);

#endif
