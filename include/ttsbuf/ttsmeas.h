/*
 * ttsmeas.h - what a real TTS did with each chunk: the measured record
 * that the TTS client (ttsnet.h) fills, a trace keeps (ttsbuf-trace(5),
 * the "tts" lines) and the playout replays in place of the model's
 * latency, real-time factor and duration.
 *
 * Times are seconds on the run's clock, the origin its events' t use
 * (the LLM request was sent at 0).  A time that was not measured is NAN
 * (no first byte came: first_byte NAN), never 0.  The audio is mono
 * signed 16-bit little-endian PCM at `rate` Hz; its duration is
 * bytes / 2 / rate.
 *
 * The model's quantities for chunk j (playout.h) come from the record:
 *   L_j = first_byte - sent, R_j = (end - first_byte) / duration (0 for
 *   duration 0), D_j = duration, b_j = sent.
 *
 * Ownership: a tb_tts_log owns its records and every string and array
 * in them; tb_tts_log_free releases them.  Threads: plain data, one
 * writer at a time.
 */
#ifndef TTSBUF_TTSMEAS_H
#define TTSBUF_TTSMEAS_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/stats.h"

/* How a chunk's synthesis ended ("none" when it completed). */
enum tb_tts_fail {
    TB_TTS_OK = 0,    /* "none": the whole body came */
    TB_TTS_HTTP,      /* "http": a status other than 2xx (status, message) */
    TB_TTS_CUT,       /* "cut": the body ended early (the connection closed
                       * or reset mid-audio, or fewer bytes than announced) */
    TB_TTS_TIMEOUT,   /* "timeout": no byte for the idle timeout, or the total */
    TB_TTS_TRANSPORT, /* "transport": refused, DNS, TLS, ... */
    TB_TTS_FORMAT,    /* "format": not audio (a JSON or HTML body with 200,
                       * an odd number of PCM bytes) */
    TB_TTS_CANCELED,  /* "canceled": not sent or stopped because the run
                       * ended (the user, or an earlier chunk failed) */
    TB_TTS_FAIL__COUNT
};

/* "none", "http", ... (above); "?" out of range.  Any thread. */
const char *tb_tts_fail_name(int kind);
/* The kind named, or -1.  Any thread. */
int tb_tts_fail_parse(const char *name);

/* Cumulative audio bytes received by time t: one point per receive, at
 * most one per TB_TTS_ARRIVAL_S of the run's clock (a later receive in the
 * same interval moves the last point), so an hour of audio costs a few
 * hundred kilobytes. */
#define TB_TTS_ARRIVAL_S 0.020
struct tb_tts_arrival {
    double t;
    uint64_t bytes;
};

#define TB_TTS_MESSAGE_MAX 256

/* Leading silence (tb_tts_chunk_pcm): the audio is read in windows of
 * TB_TTS_LEAD_WINDOW_S (rate / 100 samples, whole windows only); the first
 * window whose RMS reaches TB_TTS_AUDIBLE_DBFS (dB below a full-scale
 * square wave, 32768) holds the first audible sample, and the chunk's
 * leading silence is the audio before that window.  -50 dBFS lies above
 * digital silence, dither and the noise floor of 16-bit codecs (below -70
 * dBFS) and below a voice's onset (eSpeak NG's first voiced 10 ms: about
 * -44 dBFS; speech itself -30 to -15 dBFS).  The answer is exact to one
 * window: a sound that starts inside a window counts from its start. */
#define TB_TTS_LEAD_WINDOW_S 0.010
#define TB_TTS_AUDIBLE_DBFS (-50.0)

struct tb_tts_chunk {
    uint32_t chunk;             /* j, 1-based, as the playout numbers chunks */
    uint32_t chars;             /* code points of the text sent */
    uint64_t text;              /* offset of the text in the log's arena */
    uint32_t len;               /* its length in bytes */
    double sent;                /* the request was handed to the transport */
    double first_byte;          /* the first audio byte; NAN when none came */
    double end;                 /* the transfer ended (complete or not); NAN: never sent */
    uint64_t bytes;             /* audio bytes received (whole frames) */
    unsigned rate;              /* sample rate, Hz */
    double duration;            /* bytes / 2 / rate, seconds */
    struct tb_tts_arrival *arr; /* owned; narr points, t non-decreasing */
    uint32_t narr;
    /* Leading silence: seconds of the chunk's audio before its first
     * audible window (above); NAN while none has come, when all of its
     * audio was quiet, or in a record that did not measure it (a trace
     * of an older version). */
    double lead;
    uint64_t lead_win;  /* the detector: whole windows read, all quiet */
    uint32_t lead_n;    /* samples of the window being read */
    double lead_sq;     /* their sum of squares */
    int lead_done;      /* 1 once the audible window was found */
    /* A capacity shared by the run's streams (bench --tts-capacity,
     * capq.h): when the chunk joined the shared queue (the stream's clock)
     * and how long it waited there for a slot, its grant less its entry;
     * NAN without a capacity, for a blank chunk (no request) and for one
     * never queued. */
    double cap_ready, cap_wait;
    int fail;                         /* enum tb_tts_fail */
    long status;                      /* the HTTP status; 0: none came */
    char message[TB_TTS_MESSAGE_MAX]; /* the provider's message, one safe
                                       * line with secrets scrubbed, or "" */
};

/* The records of one stream, in chunk order, with the provider they came
 * from (never a key). */
struct tb_tts_log {
    struct tb_tts_chunk *c;
    size_t n, cap;
    char *arena; /* every chunk's text */
    uint64_t arena_len, arena_cap;
    char api[16];    /* "openai", "elevenlabs", "deepgram", "cartesia" */
    char url[256];   /* the endpoint, secrets masked */
    char model[128]; /* the model sent (the dialect's default when none
                      * was given), or "" */
    char voice[128]; /* the voice sent, likewise, or "" */
    int concurrency; /* chunks in flight at most (the client's N) */
    int capacity;    /* the run's shared capacity (capq.h), 0: none */
    int mock;        /* 1 when ttsbuf's own mock answered */
};

/* Empty log; allocates nothing. */
void tb_tts_log_init(struct tb_tts_log *l);
/* Releases everything and re-initialises; NULL is a no-op. */
void tb_tts_log_free(struct tb_tts_log *l);

/*
 * tb_tts_log_add - appends chunk l->n + 1 with its text (copied; valid
 * UTF-8 is the caller's to check) and every time NAN, fail TB_TTS_OK,
 * rate as given.  *out points at the record until the next add.
 * Returns 0, TB_ETOOBIG (text over TB_EVENT_TEXT_MAX) or TB_ENOMEM.
 */
int tb_tts_log_add(struct tb_tts_log *l, const char *text, size_t len, uint32_t chars,
                   unsigned rate, struct tb_tts_chunk **out);

/*
 * tb_tts_chunk_received - n more audio bytes arrived at t: sets
 * first_byte on the first, adds to bytes, records the arrival point (see
 * TB_TTS_ARRIVAL_S) and updates duration.  Returns 0 or TB_ENOMEM (the
 * byte count is still updated).
 */
int tb_tts_chunk_received(struct tb_tts_chunk *c, double t, uint64_t n);

/*
 * tb_tts_chunk_pcm - as tb_tts_chunk_received for n bytes of PCM at pcm
 * (whole samples: n even), which are also read for the leading silence
 * until its first audible window (above) sets c->lead.  Returns as
 * tb_tts_chunk_received.
 */
int tb_tts_chunk_pcm(struct tb_tts_chunk *c, double t, const char *pcm, uint64_t n);

/*
 * tb_tts_blank - whether text[0..len) holds nothing to speak: only white
 * space (ASCII's, and the Unicode spaces U+0085, U+00A0, U+1680,
 * U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), or nothing.
 * A blank chunk ("\n\n" between paragraphs) is skipped by every TTS path
 * alike: never sent to the provider, never counted as sent; its record
 * ends complete with no audio at its turn (sent and end that time, the
 * model's b_j, a latency of 0) and counts as skipped.  Any thread.
 */
int tb_tts_blank(const char *text, size_t len);

/* The seconds of audio that came with arrival point k of c (k <
 * c->narr): the points are cumulative, so its piece is the bytes since
 * point k - 1 (all of them for k 0), at c->rate; 0 when c has no rate.
 * Any thread. */
double tb_tts_arrival_piece_s(const struct tb_tts_chunk *c, uint32_t k);

/* Text of record i (not NUL-terminated; length l->c[i].len; "" while
 * every text so far was empty and the arena holds nothing). */
static inline const char *tb_tts_log_text(const struct tb_tts_log *l, size_t i)
{
    return l->arena != NULL ? l->arena + l->c[i].text : "";
}

/*
 * tb_tts_log_dead - whether the TTS of l is dead, so that the run stops
 * its LLM stream (live.h, bench.h): its first failed record ("canceled"
 * is not a failure) failed for want of a connection ("transport"), or
 * before any record had audio.  Returns that record's chunk (j >= 1) with
 * the LLM stream's message in msg (one line, as bench words a chunk's
 * failure, bench.h: "TTS chunk J: KIND[ STATUS][: MESSAGE] (the TTS: API
 * at URL); the LLM stream was stopped"; the log's url and messages hold
 * no key), or 0 (not dead; msg as it was).  Any thread.
 */
uint32_t tb_tts_log_dead(const struct tb_tts_log *l, char *msg, size_t msglen);

/*
 * tb_tts_chunk_model - the model's quantities (top of this file): *lat
 * = L_j, *rtf = R_j, *dur = D_j.  A chunk that completed with no audio
 * (blank text, not sent; or, in a record of an older version, text the
 * provider answered with no audio, now a "format" failure) has
 * no first byte: L_j = end - sent, R_j = 0, D_j = 0.  Returns 0, or
 * TB_EINVAL when the record has no end, or failed without a first byte
 * (the playout has nothing to replay for it).
 */
int tb_tts_chunk_model(const struct tb_tts_chunk *c, double *lat, double *rtf, double *dur);

/*
 * The TTS statistics of a log (the run and sim reports' "tts" block):
 *   chunks      records in the log
 *   sent        records whose text was sent to the provider (sent not
 *               NAN, the text not blank)
 *   skipped     blank records (tb_tts_blank): nothing to send
 *   failed      records that failed (fail other than "none" and
 *               "canceled"); canceled: those the run's end stopped
 *   first_byte  first-byte latency L_j = first_byte - sent, seconds, over
 *               the chunks with a first byte (stats.h's block)
 *   rtf         the real-time factor R_j (ttsmeas.h's mapping) over the
 *               chunks tb_tts_chunk_model takes with a duration > 0
 *   chars       code points sent (the sent chunks' chars)
 *   audio_s     seconds of audio received (every chunk's duration, a
 *               cut chunk's part too)
 * A block over no sample is NAN throughout (count 0); audio_s is NAN
 * when no chunk was sent.
 */
struct tb_tts_stats {
    uint32_t chunks, sent, skipped, failed, canceled;
    struct tb_stats first_byte;
    struct tb_stats rtf;
    /* With a shared capacity (capacity > 0): each queued chunk's wait
     * for a slot (cap_wait); count 0 without. */
    int capacity;
    struct tb_stats cap_wait;
    uint64_t chars;
    double audio_s;
};

/* Fills *out from l (not changed).  Returns 0 or TB_ENOMEM (two arrays
 * of l->n doubles).  Any thread. */
int tb_tts_stats_of(const struct tb_tts_log *l, struct tb_tts_stats *out);

#endif
